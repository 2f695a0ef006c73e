//! The roster coordinates at rest: per team, the generation and epoch of the home's roster memoria last adopted, so that a restart still knows which generation is familiar and which epoch is behind (§4.3, suite gate 5).
//!
//! Only coordinates are kept: the generation (opaque, compared for
//! equality only, like a revision) and the epoch (a counter). No member
//! address is ever written: after a restart the copy is pulled again and
//! nobody is admitted from the roster until a pull succeeds. What the row
//! buys is the check across the restart: a home answering another
//! generation (restored or re-provisioned while memoria was down) waits
//! for an owner's confirmation, and one answering an older epoch (a
//! lagging replica) is a failed pull, as they would be without a restart.

use rusqlite::{OptionalExtension, params};

use super::*;

impl Store {
    /// The roster generation and epoch last adopted for `team`, if any.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure, or a stored epoch that is
    /// negative (the row was not written by this store).
    pub fn roster_held(&self, team: &str) -> Result<Option<(String, u64)>, Error> {
        let row: Option<(String, i64)> = self
            .conn
            .query_row(
                "SELECT generation, epoch FROM roster_held WHERE team = ?1",
                params![team],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        row.map(|(g, e)| {
            u64::try_from(e)
                .map(|e| (g, e))
                .map_err(|_| Error::new(ErrorKind::Storage, "a stored roster epoch is negative"))
        })
        .transpose()
    }

    /// Records `generation` at `epoch` as the roster last adopted for `team`.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a write failure, or an epoch past `i64::MAX`.
    pub fn set_roster_held(&self, team: &str, generation: &str, epoch: u64) -> Result<(), Error> {
        let epoch = i64::try_from(epoch)
            .map_err(|_| Error::new(ErrorKind::Storage, "a roster epoch past i64::MAX"))?;
        self.conn.execute(
            "INSERT INTO roster_held(team, generation, epoch) VALUES (?1, ?2, ?3) \
             ON CONFLICT(team) DO UPDATE SET generation = excluded.generation, epoch = excluded.epoch",
            params![team, generation, epoch],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_roster_coordinates_survive_a_reopen_and_a_later_adoption_replaces_them() {
        let dir = tempfile::tempdir().unwrap();
        let sealer = Sealer::new(&crate::storage::seal::Dek::from_bytes([7; 32]));
        {
            let s = Store::open(dir.path(), sealer.clone()).unwrap();
            assert_eq!(s.roster_held("acme").unwrap(), None);
            s.set_roster_held("acme", "g1", 3).unwrap();
            s.set_roster_held("acme", "g1", 4).unwrap();
        }
        let s = Store::open(dir.path(), sealer).unwrap();
        assert_eq!(s.roster_held("acme").unwrap(), Some(("g1".into(), 4)));
        assert_eq!(s.roster_held("other").unwrap(), None);
    }
}
