//! What memoria holds, as a person reads it without a query: one bounded page of the memoria-owned documents and their count, and one document, read on a read handle (issue 30, §4.2).
//!
//! The home page listed every memoria-owned document: on the 90k store,
//! 8,513 titles opened and 2.1 MB of HTML a request, under the instance
//! lock, about 60 ms each, which was the whole p99 tail of the load bench.
//! A page is now [`HOME_DOCUMENTS_PER_PAGE`] documents, most recently
//! updated first; only its titles are opened, and the total is a count
//! (`Store::owned_documents_count`) taken by the same rule as the list, in
//! the same read transaction. Both are [`ReadView`] methods, so the web
//! surface reads them beside the writer (`SharedInstance::read`).

use super::{Instance, ReadView};
use crate::error::{Error, ErrorKind};
use crate::storage::store::{DocumentSummary, Passage};

/// How many documents one page of the home page's list shows (issue 30:
/// the list was every document). 50 titles is a screen or two; a page
/// opens 50 sealed titles and paths where the whole list opened 8,513.
pub const HOME_DOCUMENTS_PER_PAGE: usize = 50;

/// One page of the memoria-owned documents (§4.2: a sibling's title is
/// content only S2 may let be spoken, so siblings are never listed; nor is
/// a derived artefact, whose authority is its roots, §5.2).
#[derive(Debug, Clone)]
pub struct DocumentsPage {
    /// The page, from 1, as asked: a page past the last is an empty page.
    pub page: u32,
    /// Every live memoria-owned document, counted, none opened.
    pub total: u64,
    /// This page's documents, most recently updated first, then by id.
    pub documents: Vec<DocumentSummary>,
}

impl DocumentsPage {
    /// How many pages the list has (at least 1: an empty list is one empty page).
    pub fn pages(&self) -> u64 {
        self.total.div_ceil(HOME_DOCUMENTS_PER_PAGE as u64).max(1)
    }

    /// True if a later page lists more documents.
    pub fn has_next(&self) -> bool {
        u64::from(self.page) < self.pages()
    }

    /// True if the page is past the last one (nothing on it, more than
    /// one page asked for).
    pub fn past_last(&self) -> bool {
        u64::from(self.page) > self.pages()
    }

    /// The position in the whole list of this page's first document, from 1.
    pub fn first_position(&self) -> u64 {
        u64::from(self.page.max(1) - 1) * HOME_DOCUMENTS_PER_PAGE as u64 + 1
    }
}

impl ReadView<'_> {
    /// Page `page` (from 1; 0 reads as 1) of the live memoria-owned
    /// documents, for `asker`: the count and the page read in one read
    /// transaction, so a document deleted before the request started is in
    /// neither (§7.4), and only the page's titles opened.
    ///
    /// # Errors
    /// [`ErrorKind::NotAdmitted`] if the asker is not an owner; store errors otherwise.
    pub fn documents_page(&self, asker: &str, page: u32) -> Result<DocumentsPage, Error> {
        if self.admission.admit(asker).is_none() {
            return Err(Error::new(ErrorKind::NotAdmitted, "not admitted"));
        }
        let page = page.max(1);
        let _read = self.store.read_together()?;
        let total = self.store.owned_documents_count()?;
        let offset = u64::from(page - 1) * HOME_DOCUMENTS_PER_PAGE as u64;
        let documents = if offset < total {
            self.store
                .owned_documents(HOME_DOCUMENTS_PER_PAGE, offset)?
        } else {
            vec![]
        };
        Ok(DocumentsPage {
            page,
            total,
            documents,
        })
    }

    /// A live document and its passages, for `asker` (§4.2), read in one
    /// read transaction.
    ///
    /// # Errors
    /// [`ErrorKind::NotAdmitted`] if the asker is not an owner; store errors otherwise.
    pub fn document(
        &self,
        asker: &str,
        id: &str,
    ) -> Result<Option<(DocumentSummary, Vec<Passage>)>, Error> {
        if self.admission.admit(asker).is_none() {
            return Err(Error::new(ErrorKind::NotAdmitted, "not admitted"));
        }
        let _read = self.store.read_together()?;
        let Some(doc) = self.store.document(id)? else {
            return Ok(None);
        };
        // A derived artefact has no document page: its authority is its
        // roots (§5.2), which the search page rules.
        if doc.app == crate::storage::store::APP_ARTEFACT {
            return Ok(None);
        }
        let passages = self.store.passages(id)?;
        Ok(Some((doc, passages)))
    }
}

impl Instance {
    /// As [`ReadView::documents_page`], on the writer's own view.
    ///
    /// # Errors
    /// As [`ReadView::documents_page`].
    pub fn documents_page(&self, asker: &str, page: u32) -> Result<DocumentsPage, Error> {
        self.view().documents_page(asker, page)
    }

    /// As [`ReadView::document`], on the writer's own view.
    ///
    /// # Errors
    /// As [`ReadView::document`].
    pub fn document(
        &self,
        asker: &str,
        id: &str,
    ) -> Result<Option<(DocumentSummary, Vec<Passage>)>, Error> {
        self.view().document(asker, id)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::artefact::{ArtefactRecord, Root};
    use crate::offload::{Offload, SharedInstance};
    use crate::storage::store::{APP_MEMORIA, NewDocument, Provenance};

    const ANA: &str = "ana@example.org";

    /// Uploads `n` small documents titled `Note 1` to `Note n`; their ids.
    fn notes(instance: &mut Instance, n: usize) -> Vec<String> {
        (1..=n)
            .map(|k| {
                crate::app::import::ingest_bytes(
                    instance,
                    &format!("upload:note-{k}.md"),
                    &format!("note-{k}.md"),
                    format!("# Note {k}\n\nThe kettle is descaled on day {k}.").as_bytes(),
                    None,
                )
                .unwrap()
                .0
                .id
            })
            .collect()
    }

    fn titles(page: &DocumentsPage) -> Vec<String> {
        page.documents.iter().map(|d| d.title.clone()).collect()
    }

    #[test]
    fn a_page_holds_at_most_the_named_limit_and_the_pages_together_list_each_document_once() {
        let tmp = tempfile::tempdir().unwrap();
        let mut instance = crate::instance::instance_for_tests(tmp.path());
        let all = notes(&mut instance, 2 * HOME_DOCUMENTS_PER_PAGE + 3);
        // (page asked, the page it reads as, documents listed, next page, past the last)
        let table: &[(u32, u32, usize, bool, bool)] = &[
            (0, 1, HOME_DOCUMENTS_PER_PAGE, true, false),
            (1, 1, HOME_DOCUMENTS_PER_PAGE, true, false),
            (2, 2, HOME_DOCUMENTS_PER_PAGE, true, false),
            (3, 3, 3, false, false),
            (4, 4, 0, false, true),
            (u32::MAX, u32::MAX, 0, false, true),
        ];
        let mut seen = Vec::new();
        for &(asked, page, listed, next, past) in table {
            let p = instance.documents_page(ANA, asked).unwrap();
            assert_eq!(p.page, page, "page {asked}");
            assert_eq!(p.total, all.len() as u64, "page {asked}: the whole count");
            assert_eq!(p.pages(), 3, "page {asked}");
            assert_eq!(p.documents.len(), listed, "page {asked}");
            assert_eq!(p.has_next(), next, "page {asked}");
            assert_eq!(p.past_last(), past, "page {asked}");
            if (1..=3).contains(&asked) {
                seen.extend(p.documents.iter().map(|d| d.id.clone()));
            }
        }
        assert_eq!(seen.len(), all.len(), "no document on two pages");
        assert_eq!(
            seen.iter().collect::<BTreeSet<_>>(),
            all.iter().collect::<BTreeSet<_>>(),
            "every document on one page"
        );
    }

    #[test]
    fn an_empty_list_is_one_empty_page_with_no_next_and_page_two_is_past_it() {
        let tmp = tempfile::tempdir().unwrap();
        let instance = crate::instance::instance_for_tests(tmp.path());
        let first = instance.documents_page(ANA, 1).unwrap();
        assert_eq!((first.total, first.pages()), (0, 1));
        assert!(!first.has_next() && !first.past_last());
        assert!(instance.documents_page(ANA, 2).unwrap().past_last());
    }

    #[test]
    fn the_list_and_its_count_hold_memoria_owned_documents_never_a_siblings_nor_an_artefact() {
        let tmp = tempfile::tempdir().unwrap();
        let mut instance = crate::instance::instance_for_tests(tmp.path());
        let owned = notes(&mut instance, 2);
        let body = |title: &str| NewDocument {
            source_key: format!("key:{title}"),
            title: title.to_string(),
            path: format!("{title}.md"),
            body: format!("The {title} words."),
            date: None,
        };
        instance
            .ingest_sibling(
                &body("Sibling budget"),
                &Provenance {
                    app: "sheets".into(),
                    item_id: "sh-1".into(),
                    revision: "r1".into(),
                },
            )
            .unwrap();
        instance
            .ingest_artefact(
                &body("Artefact summary"),
                &ArtefactRecord {
                    model: "m".into(),
                    roots: vec![Root {
                        owner: APP_MEMORIA.into(),
                        id: owned[0].clone(),
                        revision: "1".into(),
                    }],
                    built_from: vec![],
                },
            )
            .unwrap();
        assert_eq!(
            instance.store().documents().unwrap().len(),
            4,
            "presence: the sibling's and the artefact are stored"
        );
        let p = instance.documents_page(ANA, 1).unwrap();
        let mut listed = titles(&p);
        listed.sort();
        assert_eq!(listed, ["Note 1", "Note 2"]);
        assert_eq!(p.total, 2, "the count is what the pages list");
    }

    #[test]
    fn a_person_not_admitted_is_refused_the_list_and_every_document() {
        let tmp = tempfile::tempdir().unwrap();
        let mut instance = crate::instance::instance_for_tests(tmp.path());
        let ids = notes(&mut instance, 1);
        // Presence: the owner reads both.
        assert_eq!(instance.documents_page(ANA, 1).unwrap().total, 1);
        assert!(instance.document(ANA, &ids[0]).unwrap().is_some());
        let stranger = "eve@example.org";
        assert_eq!(
            instance.documents_page(stranger, 1).unwrap_err().kind(),
            ErrorKind::NotAdmitted
        );
        assert_eq!(
            instance.document(stranger, &ids[0]).unwrap_err().kind(),
            ErrorKind::NotAdmitted
        );
    }

    /// A deletion, done under the instance lock.
    type Delete = fn(&mut Instance, &str);

    #[test]
    fn a_document_deleted_before_a_list_is_read_is_gone_from_the_list_and_the_count_at_once() {
        // As `offload`'s search test: the second row leaves the published
        // image as it was, so the handle that read the list before the
        // deletion is reused, and its request reads a fresh transaction.
        let rows: [(&str, Delete); 2] = [
            ("deleted through the instance", |i, id| {
                i.delete(id).unwrap();
            }),
            ("deleted in the store alone", |i, id| {
                let revision = i.store().live_revision(id).unwrap().unwrap();
                let t = crate::storage::tombstone::Tombstone {
                    seq: 1,
                    doc_id: id.to_string(),
                    revision,
                    at: 1_000,
                };
                assert!(i.store_mut().apply_tombstone(&t).unwrap().deleted);
            }),
        ];
        for (row, delete) in rows {
            let tmp = tempfile::tempdir().unwrap();
            let mut instance = crate::instance::instance_for_tests(tmp.path());
            let ids = notes(&mut instance, 3);
            instance.write_snapshot().unwrap();
            let m = SharedInstance::new(instance, Offload::Inline);
            let rt = tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap();
            let list = || {
                rt.block_on(m.read(|v| v.documents_page(ANA, 1)))
                    .unwrap()
                    .unwrap()
            };
            let before = list();
            assert_eq!(before.total, 3, "{row}: presence");
            assert!(titles(&before).contains(&"Note 2".to_string()), "{row}");
            let gone = ids[1].clone();
            rt.block_on(m.run(move |i| delete(i, &gone))).unwrap();
            let after = list();
            assert_eq!(after.total, 2, "{row}: the count");
            assert_eq!(after.documents.len(), 2, "{row}: the list");
            assert!(!titles(&after).contains(&"Note 2".to_string()), "{row}");
            assert_eq!(m.reads(), 2, "{row}: both read on a read handle");
        }
    }
}
