//! What an operator or a disk does to memoria's files while it is down, driven from a scenario (issue 26, gate 10, §7.4): its tombstone log swapped for another and put back, a snapshot generation deleted or damaged.
//!
//! The acts themselves run in memoria's host, between a stop and the next
//! wake ([`Operator`](super::boot::Operator), applied by the world's boot);
//! these are the handles a scenario holds on them.

use super::Memoria;
use super::boot::{Operator, OperatorOutcome};

impl Memoria {
    /// The path of memoria's tombstone log.
    pub fn tombstone_log_path(&self) -> std::path::PathBuf {
        memoria::TombstoneLog::path_in(&self.tombstone_dir)
    }

    /// The bytes of memoria's tombstone log now (empty if it has none).
    pub fn tombstone_log_bytes(&self) -> Vec<u8> {
        std::fs::read(self.tombstone_log_path()).unwrap_or_default()
    }

    /// The copy of the tombstone log taken with backup `name`, if any.
    pub fn tombstone_log_backup(&self, name: &str) -> Option<Vec<u8>> {
        std::fs::read(self.backups_dir.join(format!("{name}.tombstones"))).ok()
    }

    /// Stops memoria, puts `bytes` in place of its tombstone log, starts it
    /// on them, then puts its own log back and wakes it again, as an
    /// operator who read the refusal would (§7.4). Returns what the start
    /// on `bytes` came to: woken, or refused with memoria's error.
    ///
    /// # Errors
    /// If the world did not try the start.
    pub async fn start_on_log(
        &mut self,
        bytes: Vec<u8>,
    ) -> Result<Result<(), memoria::Error>, String> {
        match self.operate(Operator::StartOnLog(bytes)).await? {
            OperatorOutcome::Started(r) => Ok(r),
            other => Err(format!("the log's start came to {other:?}")),
        }
    }

    /// Stops memoria, deletes (`delete`) or damages the blob of the newest
    /// generation in its snapshot bucket, and wakes it (§7.4). Returns the
    /// generation, if the bucket held one.
    ///
    /// # Errors
    /// If the world did not apply it.
    pub async fn damage_bucket(&mut self, delete: bool) -> Result<Option<i64>, String> {
        let act = if delete {
            Operator::DeleteGeneration
        } else {
            Operator::DamageBlob
        };
        match self.operate(act).await? {
            OperatorOutcome::Bucket(g) => Ok(g),
            other => Err(format!("the bucket's fault came to {other:?}")),
        }
    }

    async fn operate(&mut self, act: Operator) -> Result<OperatorOutcome, String> {
        *self.operator.lock().map_err(|_| "operator")? = Some(act);
        self.restart().await;
        self.outcome
            .lock()
            .map_err(|_| "outcome")?
            .take()
            .ok_or_else(|| "memoria woke before the operator acted".to_string())
    }
}
