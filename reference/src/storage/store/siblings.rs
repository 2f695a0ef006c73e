//! What memoria remembers about each sibling between polls: the cursor and the re-announce mark (§4.1, §6.5); its breaker counters are `breaker.rs`'s.

use rusqlite::{OptionalExtension, params};

use super::*;

impl Store {
    /// The live document holding `app`'s item `item_id`, if any.
    ///
    /// # Errors
    /// As [`Store::document`].
    pub fn sibling_document(
        &self,
        app: &str,
        item_id: &str,
    ) -> Result<Option<DocumentSummary>, Error> {
        let fp = self.sealer.fingerprint(
            Purpose::PathFingerprint,
            Store::sibling_source_key(app, item_id).as_bytes(),
        );
        let id: Option<String> = self
            .conn
            .query_row(
                "SELECT id FROM documents WHERE source_fp = ?1 AND deleted_at IS NULL",
                params![&fp[..]],
                |r| r.get(0),
            )
            .optional()?;
        match id {
            Some(id) => self.document(&id),
            None => Ok(None),
        }
    }

    /// What memoria remembers about `app` (default: never polled).
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn sibling_state(&self, app: &str) -> Result<SiblingState, Error> {
        Ok(self
            .conn
            .prepare_cached("SELECT cursor, reannounce, polled_at FROM siblings WHERE app = ?1")?
            .query_row(params![app], |r| {
                Ok(SiblingState {
                    cursor: r.get(0)?,
                    reannounce: r.get::<_, i64>(1)? != 0,
                    polled_at: r.get(2)?,
                })
            })
            .optional()?
            .unwrap_or_default())
    }

    /// Records the S1 cursor after applying a page polled at `now`.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a write failure.
    pub fn set_sibling_cursor(&self, app: &str, cursor: &str, now: i64) -> Result<(), Error> {
        self.conn
            .prepare_cached(
                "INSERT INTO siblings(app, cursor, polled_at) VALUES (?1, ?2, ?3) \
                 ON CONFLICT(app) DO UPDATE SET cursor = excluded.cursor, polled_at = excluded.polled_at",
            )?
            .execute(params![app, cursor, now])?;
        Ok(())
    }

    /// Marks `app` for re-announce (§4.1). Durable; nothing is deleted.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a write failure.
    pub fn mark_reannounce(&self, app: &str) -> Result<(), Error> {
        self.conn.execute(
            "INSERT INTO siblings(app, reannounce) VALUES (?1, 1) \
             ON CONFLICT(app) DO UPDATE SET reannounce = 1",
            params![app],
        )?;
        Ok(())
    }

    /// Completes a re-announce of `app` (§4.1 rules 2–4): stores the close
    /// marker's `cursor` as the S1 cursor and clears the mark, in one write.
    /// Call it only after every retirement and refetch has been applied.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a write failure; the mark then stands.
    pub fn complete_reannounce(&self, app: &str, cursor: &str, now: i64) -> Result<(), Error> {
        self.conn.execute(
            "INSERT INTO siblings(app, cursor, reannounce, polled_at) VALUES (?1, ?2, 0, ?3) \
             ON CONFLICT(app) DO UPDATE SET cursor = excluded.cursor, reannounce = 0, \
             polled_at = excluded.polled_at",
            params![app, cursor, now],
        )?;
        Ok(())
    }

    /// The apps marked for re-announce, sorted: the sources out of the
    /// ranking until their re-announce completes (§4.1 rule 1).
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn reannouncing_apps(&self) -> Result<Vec<String>, Error> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT app FROM siblings WHERE reannounce = 1 ORDER BY app")?;
        let apps = stmt
            .query_map([], |r| r.get(0))?
            .collect::<Result<Vec<String>, _>>()?;
        Ok(apps)
    }

    /// Every sibling app this database knows, sorted: each one it has
    /// polled or holds an item of. What a restore marks for re-announce
    /// (§7.4); a configured sibling it has never polled has nothing to
    /// reconcile and reads its feed from the start.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn known_sibling_apps(&self) -> Result<Vec<String>, Error> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT app FROM siblings UNION SELECT app FROM documents \
             WHERE item_id IS NOT NULL ORDER BY 1",
        )?;
        let apps = stmt
            .query_map([], |r| r.get(0))?
            .collect::<Result<Vec<String>, _>>()?;
        Ok(apps)
    }

    /// Ids of every live chunk of `app`'s sibling documents, ascending: what
    /// a search leaves out while `app` is reconciling (§4.1 rule 1). Reads
    /// no sealed cell.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn sibling_chunk_ids(&self, app: &str) -> Result<Vec<i64>, Error> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT c.id FROM chunks c JOIN documents d ON d.id = c.doc_id \
             WHERE d.app = ?1 AND d.item_id IS NOT NULL AND d.deleted_at IS NULL \
             AND c.revision = d.revision ORDER BY c.id",
        )?;
        let ids = stmt
            .query_map(params![app], |r| r.get(0))?
            .collect::<Result<Vec<i64>, _>>()?;
        Ok(ids)
    }

    /// Every live document held from `app`, each with its provenance: what a
    /// completed re-announce is compared against (§4.1 rules 3–4).
    ///
    /// # Errors
    /// As [`Store::documents`].
    pub fn sibling_documents(&self, app: &str) -> Result<Vec<DocumentSummary>, Error> {
        Ok(self
            .documents()?
            .into_iter()
            .filter(|d| d.provenance.as_ref().is_some_and(|p| p.app == app))
            .collect())
    }
}
