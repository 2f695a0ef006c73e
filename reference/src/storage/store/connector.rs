//! A connector's rows: which items of a source memoria holds, when each was last seen, and the last attempt (§5.1, gate 7).

use rusqlite::{OptionalExtension, params};

use super::*;

impl Store {
    pub(super) fn connector_fp(&self, connector: &str) -> Vec<u8> {
        self.sealer
            .fingerprint(
                Purpose::PathFingerprint,
                format!("connector\0{connector}").as_bytes(),
            )
            .to_vec()
    }

    /// Every item `connector`'s enumerations have recorded (§5.1).
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn connector_items(&self, connector: &str) -> Result<Vec<HeldItem>, Error> {
        let mut stmt = self.conn.prepare(
            "SELECT key_fp, version_fp FROM connector_items WHERE connector_fp = ?1 ORDER BY key_fp",
        )?;
        let rows = stmt
            .query_map(params![self.connector_fp(connector)], |r| {
                Ok(HeldItem {
                    key_fp: r.get(0)?,
                    version_fp: r.get(1)?,
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(rows)
    }

    /// Records that an enumeration of `connector` listed `key_fp` at `now`
    /// (`last_seen_at`, §4.2), and the version ingested if `version_fp` is given.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a write failure.
    pub fn connector_seen(
        &self,
        connector: &str,
        key_fp: &[u8],
        version_fp: Option<&[u8]>,
        now: i64,
    ) -> Result<(), Error> {
        self.conn.execute(
            "INSERT INTO connector_items(connector_fp, key_fp, version_fp, last_seen_at) \
             VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT(connector_fp, key_fp) DO UPDATE SET \
             version_fp = coalesce(excluded.version_fp, connector_items.version_fp), \
             last_seen_at = excluded.last_seen_at",
            params![self.connector_fp(connector), key_fp, version_fp, now],
        )?;
        Ok(())
    }

    /// The `last_seen_at` of one item of `connector`, in unix seconds, if recorded.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn connector_item_seen_at(
        &self,
        connector: &str,
        key_fp: &[u8],
    ) -> Result<Option<i64>, Error> {
        Ok(self
            .conn
            .query_row(
                "SELECT last_seen_at FROM connector_items WHERE connector_fp = ?1 AND key_fp = ?2",
                params![self.connector_fp(connector), key_fp],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Forgets one item of `connector` after a complete enumeration omitted it.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a write failure.
    pub fn connector_forget(&self, connector: &str, key_fp: &[u8]) -> Result<(), Error> {
        self.conn.execute(
            "DELETE FROM connector_items WHERE connector_fp = ?1 AND key_fp = ?2",
            params![self.connector_fp(connector), key_fp],
        )?;
        Ok(())
    }

    /// Records one enumeration attempt of `connector` at `now`: `failure`
    /// is `None` for a complete enumeration, else its kind (gate 7).
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a write failure.
    pub fn connector_attempt(
        &self,
        connector: &str,
        now: i64,
        failure: Option<&str>,
    ) -> Result<(), Error> {
        let complete_at = if failure.is_none() { Some(now) } else { None };
        self.conn.execute(
            "INSERT INTO connector_sources(connector_fp, last_attempt_at, last_complete_at, last_failure) \
             VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT(connector_fp) DO UPDATE SET \
             last_attempt_at = excluded.last_attempt_at, \
             last_complete_at = coalesce(excluded.last_complete_at, connector_sources.last_complete_at), \
             last_failure = excluded.last_failure",
            params![self.connector_fp(connector), now, complete_at, failure],
        )?;
        Ok(())
    }

    /// `connector`'s durable record (default: never attempted).
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn connector_state(&self, connector: &str) -> Result<ConnectorState, Error> {
        Ok(self
            .conn
            .query_row(
                "SELECT last_attempt_at, last_complete_at, last_failure FROM connector_sources \
                 WHERE connector_fp = ?1",
                params![self.connector_fp(connector)],
                |r| {
                    Ok(ConnectorState {
                        last_attempt_at: r.get(0)?,
                        last_complete_at: r.get(1)?,
                        last_failure: r.get(2)?,
                    })
                },
            )
            .optional()?
            .unwrap_or_default())
    }
}
