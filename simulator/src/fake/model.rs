//! The state a fake sibling answers from: people, items with revision logs and rungs, and the S1 event log (§4.1, §6.1).
//!
//! Size: one model, the sibling's whole truth (people, items, rungs, the event
//! log, announces and S2/S3/S6 answers), kept in one file so every call reads
//! the same state; its cell model is `sheet.rs`.
//!
//! One predicate bounds custody: an item is *team-visible* when its rung is
//! [`Rung::Team`] and it is neither deleted, link-shared-not-team nor
//! guest-only. S3 and S1a serve only team-visible items; S1 emits a row only
//! when an item's team-visible state or its revision changes; S2 answers
//! `VISIBLE` only for the intersection of custody and the grants join.
//!
//! Spreadsheets (their cells, reformatting, and S6 over them) are in the
//! child module `cells` (`model/cells.rs`), which shares this model's
//! custody predicate and grants join.
//!
//! Size: over 700 lines because it is one state model (rungs, grants,
//! revision log, event log, restores) whose rules refer to each other; 33
//! recorded mutations of the fake sibling target it by its current layout.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, PoisonError};

use crate::fake::sheet::{Sheet, SheetError};
use crate::fake::trace::Clock;
use crate::fake::wire::{
    MediaType, Pair, S1Response, S1Row, S1aPage, S1aRecord, S2Result, S2Value, S3Response,
    SubjectKind,
};

mod cells;
pub use cells::Revise;

/// Rows per S1 page, the rest waiting behind `more: true`. The schema's
/// `maxItems` is 500 (`s1-response.schema.json`); a smaller page makes
/// `more` easy to exercise.
pub const S1_ROWS_PER_PAGE: usize = 100;

/// Records per S1a page unless [`Model::set_announce_page_records`] says
/// otherwise (`s1a-page.schema.json` allows up to 500; §6.1).
pub const S1A_RECORDS_PER_PAGE: usize = 50;

/// The instant simulated millisecond 0 stands for, as Unix seconds:
/// 2026-11-30T09:00:00Z (the contract examples' first `touched_at`).
pub const EPOCH_UNIX_SECONDS: i64 = 1_796_029_200;

/// The contract's time shape: RFC 3339 in UTC, whole seconds, `Z`
/// (`defs.schema.json#/$defs/time`).
const CONTRACT_TIME: &[time::format_description::BorrowedFormatItem<'_>] =
    time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");

/// RFC 3339 UTC (`YYYY-MM-DDTHH:MM:SSZ`) for `ms` simulated milliseconds
/// after [`EPOCH_UNIX_SECONDS`], whole seconds only (`defs.schema.json#/$defs/time`).
/// Past year 9999 it reads 9999-12-31T23:59:59Z, the latest the shape can say.
#[must_use]
pub fn rfc3339(ms: u64) -> String {
    let secs = EPOCH_UNIX_SECONDS.saturating_add(i64::try_from(ms / 1000).unwrap_or(i64::MAX));
    time::OffsetDateTime::from_unix_timestamp(secs)
        .unwrap_or(time::PrimitiveDateTime::MAX.assume_utc())
        .format(CONTRACT_TIME)
        .expect("a UTC date-time of year 0..=9999 fills every component")
}

/// Whether a person is a team member or a guest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// A member of the team: sees team items.
    Member,
    /// A guest: sees only what is shared with them, never team items.
    Guest,
}

/// Someone the sibling knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    /// The address, e.g. `ana@acme.test`: the person's key.
    pub address: String,
    /// An opaque person reference, e.g. `prs_ana`, if the sibling has one.
    pub person_ref: Option<String>,
    /// Member or guest.
    pub role: Role,
    /// A stable, content-free label for traces: `member-1`, `guest-2`.
    pub label: String,
}

/// Who may see an item under the sibling's own sharing (§4.1's grants join).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rung {
    /// Only the owner (an address).
    Private {
        /// The owner's address.
        owner: String,
    },
    /// Individually granted to these addresses. Never team-visible.
    Granted {
        /// Grantees' addresses.
        to: BTreeSet<String>,
    },
    /// Every team member.
    Team,
}

/// One revision of an item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revision {
    /// Opaque revision token, e.g. `r3`.
    pub revision: String,
    /// Title (content: never traced).
    pub title: String,
    /// Body (content: never traced).
    pub body: String,
    /// Markdown, plain, or a sheet.
    pub media_type: MediaType,
    /// The cells, for a spreadsheet (media type [`MediaType::Sheet`]);
    /// `body` is then always their S3 rendering (content: never traced).
    pub sheet: Option<Sheet>,
}

/// One item and its history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// Opaque item id.
    pub item_id: String,
    /// Revisions, oldest first; the last is current. Never empty.
    pub log: Vec<Revision>,
    /// Sharing rung.
    pub rung: Rung,
    /// Reachable by link but not shared with the team: not team-visible.
    pub link_shared: bool,
    /// Shared only with guests: not team-visible.
    pub guest_only: bool,
    /// Deleted: not team-visible.
    pub deleted: bool,
    /// Addresses removed from this item ("minus rows I have been removed from").
    pub removed: BTreeSet<String>,
    /// Simulated ms of the last change.
    pub touched_ms: u64,
    next_revision: u64,
}

impl Item {
    /// The current revision (the last in the log).
    ///
    /// # Panics
    /// Never: the log is never empty.
    #[must_use]
    pub fn current(&self) -> &Revision {
        self.log.last().expect("an item's log is never empty")
    }

    /// The custody predicate (§4.1): rung Team, not deleted, not
    /// link-shared-not-team, not guest-only.
    #[must_use]
    pub fn team_visible(&self) -> bool {
        matches!(self.rung, Rung::Team) && !self.deleted && !self.link_shared && !self.guest_only
    }

    fn mint_revision(&mut self) -> String {
        self.next_revision += 1;
        format!("r{}", self.next_revision)
    }
}

/// One S1 event: the item's revision and whether it left team-visibility.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// Opaque item id.
    pub item_id: String,
    /// Revision at this event.
    pub revision: String,
    /// Deleted or left team-visibility (indistinguishable on the wire).
    pub gone: bool,
    /// Simulated ms of the event.
    pub at_ms: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct State {
    people: BTreeMap<String, Person>,
    items: BTreeMap<String, Item>,
    events: Vec<Event>,
}

/// A whole-sibling snapshot, for [`Model::restore_whole`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot(State);

/// Why a mutation could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// No item has this id.
    #[error("no such item")]
    UnknownItem,
    /// An item with this id already exists.
    #[error("the item already exists")]
    DuplicateItem,
    /// The item's log holds no such revision.
    #[error("no such revision in the item's log")]
    UnknownRevision,
    /// The item is not a spreadsheet.
    #[error("the item is not a sheet")]
    NotASheet,
    /// The sheet refused the change (no such tab or cell).
    #[error("{0}")]
    Sheet(#[from] SheetError),
}

/// Why an S1 or S1a read cannot be answered with rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FeedError {
    /// The cursor or page token is unknown, from an older log epoch (a
    /// whole-log restore), or past the log head: `410 reannounce_required`.
    #[error("reannounce required")]
    ReannounceRequired,
}

/// The sibling's state. Mutate it through a [`ModelHandle`].
#[derive(Debug)]
pub struct Model {
    clock: Clock,
    state: State,
    epoch: u64,
    announce_page_records: usize,
    /// Rows per S1 page: [`S1_ROWS_PER_PAGE`] unless
    /// [`Model::set_feed_page_rows`] says fewer.
    feed_page_rows: usize,
    announces: Vec<Vec<S1aRecord>>,
    guests: u64,
    members: u64,
    /// Items a restore took away (a whole-log restore to a snapshot
    /// without their row, or a partial restore that lost it), by id, as
    /// they last stood. Outside the restored state: the sibling once held
    /// them, whatever it holds now. S1, S1a, S2 and S3 never read it; the
    /// oracle's provenance does ([`Model::lost_items`]).
    lost: BTreeMap<String, Item>,
}

/// Who an S2 subject resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Asker {
    Known(Person),
    Stranger,
}

impl Model {
    /// An empty sibling at log epoch 1, stamping changes with `clock`.
    #[must_use]
    pub fn new(clock: Clock) -> Self {
        Self {
            clock,
            state: State::default(),
            epoch: 1,
            announce_page_records: S1A_RECORDS_PER_PAGE,
            feed_page_rows: S1_ROWS_PER_PAGE,
            announces: Vec::new(),
            guests: 0,
            members: 0,
            lost: BTreeMap::new(),
        }
    }

    fn now(&self) -> u64 {
        self.clock.now_ms()
    }

    /// S2 (§4.1) for one subject: one result per pair, in order, and the
    /// asker's trace label. `keys_on` is the kind this sibling keys on: a
    /// subject of the other kind gets `UNKNOWN` for every pair.
    ///
    /// `VISIBLE` iff the item is team-visible AND the grants join admits the
    /// asker, at the current revision; `STALE` for an older revision in the
    /// log; `AHEAD` for a revision not in the log of an item so admitted;
    /// `NOT_VISIBLE` for everything else, including no row at all.
    ///
    /// The label is the person's (`member-N`, `guest-N`), `stranger` for a
    /// subject the sibling does not know, or `not-keyed` for the other kind.
    #[must_use]
    pub fn check(
        &self,
        keys_on: SubjectKind,
        kind: SubjectKind,
        value: &str,
        pairs: &[Pair],
    ) -> (String, Vec<S2Result>) {
        let answer = |pair: &Pair, result: S2Value| S2Result {
            item_id: pair.item_id.clone(),
            revision: pair.revision.clone(),
            result,
        };
        if kind != keys_on {
            return (
                "not-keyed".to_owned(),
                pairs.iter().map(|p| answer(p, S2Value::Unknown)).collect(),
            );
        }
        let asker = self.resolve(kind, value);
        let label = match &asker {
            Asker::Known(p) => p.label.clone(),
            Asker::Stranger => "stranger".to_owned(),
        };
        let results = pairs
            .iter()
            .map(|pair| {
                let value = match self.state.items.get(&pair.item_id) {
                    Some(item) if item.team_visible() && Self::grants_join(item, &asker) => {
                        if item.current().revision == pair.revision {
                            S2Value::Visible
                        } else if item.log.iter().any(|r| r.revision == pair.revision) {
                            S2Value::Stale
                        } else {
                            S2Value::Ahead
                        }
                    }
                    _ => S2Value::NotVisible,
                };
                answer(pair, value)
            })
            .collect();
        (label, results)
    }

    /// Adds a team member keyed by `address`, optionally with a person ref.
    /// Returns their trace label (`member-N`).
    pub fn add_member(&mut self, address: &str, person_ref: Option<&str>) -> String {
        self.members += 1;
        let label = format!("member-{}", self.members);
        self.add_person(address, person_ref, Role::Member, label)
    }

    /// The person keyed by `address`, if the sibling knows them.
    #[must_use]
    pub fn person(&self, address: &str) -> Option<&Person> {
        self.state.people.get(address)
    }

    /// Forgets the person keyed by `address`: a stranger to this sibling
    /// from now on (S2 answers NOT_VISIBLE for them).
    pub fn forget_person(&mut self, address: &str) {
        self.state.people.remove(address);
    }

    /// Every item the sibling has a row for, deleted ones included, by id.
    pub fn items(&self) -> impl Iterator<Item = &Item> {
        self.state.items.values()
    }

    /// Adds a guest keyed by `address`. Returns their trace label (`guest-N`).
    pub fn add_guest(&mut self, address: &str, person_ref: Option<&str>) -> String {
        self.guests += 1;
        let label = format!("guest-{}", self.guests);
        self.add_person(address, person_ref, Role::Guest, label)
    }

    fn add_person(
        &mut self,
        address: &str,
        person_ref: Option<&str>,
        role: Role,
        label: String,
    ) -> String {
        self.state.people.insert(
            address.to_owned(),
            Person {
                address: address.to_owned(),
                person_ref: person_ref.map(str::to_owned),
                role,
                label: label.clone(),
            },
        );
        label
    }

    /// Adds an item at its first revision (`r1`), Markdown. Team-visible
    /// items append a `gone: false` event.
    ///
    /// # Errors
    /// [`ModelError::DuplicateItem`] if `item_id` exists.
    pub fn add_item(
        &mut self,
        item_id: &str,
        rung: Rung,
        title: &str,
        body: &str,
    ) -> Result<String, ModelError> {
        if self.state.items.contains_key(item_id) {
            return Err(ModelError::DuplicateItem);
        }
        let now = self.now();
        let mut item = Item {
            item_id: item_id.to_owned(),
            log: Vec::new(),
            rung,
            link_shared: false,
            guest_only: false,
            deleted: false,
            removed: BTreeSet::new(),
            touched_ms: now,
            next_revision: 0,
        };
        let revision = item.mint_revision();
        item.log.push(Revision {
            revision: revision.clone(),
            title: title.to_owned(),
            body: body.to_owned(),
            media_type: MediaType::Markdown,
            sheet: None,
        });
        if item.team_visible() {
            self.state.events.push(Event {
                item_id: item_id.to_owned(),
                revision: revision.clone(),
                gone: false,
                at_ms: now,
            });
        }
        self.state.items.insert(item_id.to_owned(), item);
        Ok(revision)
    }

    /// Applies `change` to one item and appends the S1 event it implies:
    /// entering or staying team-visible at a new revision → `gone: false`;
    /// leaving team-visibility → `gone: true`; otherwise nothing.
    fn mutate(
        &mut self,
        item_id: &str,
        change: impl FnOnce(&mut Item),
    ) -> Result<String, ModelError> {
        let now = self.now();
        let item = self
            .state
            .items
            .get_mut(item_id)
            .ok_or(ModelError::UnknownItem)?;
        let before = (item.team_visible(), item.current().revision.clone());
        change(item);
        item.touched_ms = now;
        let after = (item.team_visible(), item.current().revision.clone());
        let event = match (before.0, after.0) {
            (true, true) if before.1 != after.1 => Some(false),
            (false, true) => Some(false),
            (true, false) => Some(true),
            _ => None,
        };
        if let Some(gone) = event {
            self.state.events.push(Event {
                item_id: item_id.to_owned(),
                revision: after.1.clone(),
                gone,
                at_ms: now,
            });
        }
        Ok(after.1)
    }

    /// Appends a new revision with this title and body; returns its token.
    /// A sheet keeps its cells (and so its body) at the new revision: a
    /// revision bump with the same content.
    ///
    /// # Errors
    /// [`ModelError::UnknownItem`].
    pub fn revise(&mut self, item_id: &str, title: &str, body: &str) -> Result<String, ModelError> {
        self.mutate(item_id, |item| {
            let revision = item.mint_revision();
            let current = item.current();
            let sheet = current.sheet.clone();
            item.log.push(Revision {
                revision,
                title: title.to_owned(),
                body: sheet
                    .as_ref()
                    .map_or_else(|| body.to_owned(), Sheet::body_json),
                media_type: current.media_type,
                sheet,
            });
        })
    }

    /// Sets the sharing rung.
    ///
    /// # Errors
    /// [`ModelError::UnknownItem`].
    pub fn set_rung(&mut self, item_id: &str, rung: Rung) -> Result<(), ModelError> {
        self.mutate(item_id, |item| item.rung = rung).map(drop)
    }

    /// Grants `address` individually. A `Private` or `Team` item becomes
    /// `Granted` to the owner (if any) plus `address`.
    ///
    /// # Errors
    /// [`ModelError::UnknownItem`].
    pub fn grant(&mut self, item_id: &str, address: &str) -> Result<(), ModelError> {
        self.mutate(item_id, |item| match &mut item.rung {
            Rung::Granted { to } => {
                to.insert(address.to_owned());
            }
            Rung::Private { owner } => {
                item.rung = Rung::Granted {
                    to: [owner.clone(), address.to_owned()].into(),
                };
            }
            Rung::Team => {
                item.rung = Rung::Granted {
                    to: [address.to_owned()].into(),
                };
            }
        })
        .map(drop)
    }

    /// Removes an individual grant (no effect on other rungs).
    ///
    /// # Errors
    /// [`ModelError::UnknownItem`].
    pub fn ungrant(&mut self, item_id: &str, address: &str) -> Result<(), ModelError> {
        self.mutate(item_id, |item| {
            if let Rung::Granted { to } = &mut item.rung {
                to.remove(address);
            }
        })
        .map(drop)
    }

    /// Removes (`true`) or restores (`false`) `address` from an item: the
    /// "minus rows I have been removed from" half of the grants join.
    ///
    /// # Errors
    /// [`ModelError::UnknownItem`].
    pub fn set_removed(
        &mut self,
        item_id: &str,
        address: &str,
        removed: bool,
    ) -> Result<(), ModelError> {
        self.mutate(item_id, |item| {
            if removed {
                item.removed.insert(address.to_owned());
            } else {
                item.removed.remove(address);
            }
        })
        .map(drop)
    }

    /// Sets link-shared-not-team (which withdraws team-visibility).
    ///
    /// # Errors
    /// [`ModelError::UnknownItem`].
    pub fn set_link_shared(&mut self, item_id: &str, on: bool) -> Result<(), ModelError> {
        self.mutate(item_id, |item| item.link_shared = on).map(drop)
    }

    /// Sets guest-only (which withdraws team-visibility).
    ///
    /// # Errors
    /// [`ModelError::UnknownItem`].
    pub fn set_guest_only(&mut self, item_id: &str, on: bool) -> Result<(), ModelError> {
        self.mutate(item_id, |item| item.guest_only = on).map(drop)
    }

    /// Deletes an item (its row stays, flagged deleted).
    ///
    /// # Errors
    /// [`ModelError::UnknownItem`].
    pub fn delete(&mut self, item_id: &str) -> Result<(), ModelError> {
        self.mutate(item_id, |item| item.deleted = true).map(drop)
    }

    /// Partial restore: rewinds one item's log so `revision` is current
    /// again, dropping every later revision, WITHOUT touching the event log.
    /// S2 then answers `AHEAD` for the lost revisions; S1 cursors stay valid.
    ///
    /// # Errors
    /// [`ModelError::UnknownItem`], [`ModelError::UnknownRevision`].
    pub fn restore_item_to(&mut self, item_id: &str, revision: &str) -> Result<(), ModelError> {
        let item = self
            .state
            .items
            .get_mut(item_id)
            .ok_or(ModelError::UnknownItem)?;
        let at = item
            .log
            .iter()
            .position(|r| r.revision == revision)
            .ok_or(ModelError::UnknownRevision)?;
        item.log.truncate(at + 1);
        Ok(())
    }

    /// Partial restore that lost an item's row entirely (§4.1, gate 27):
    /// the item vanishes WITHOUT a `gone` event, so S1 says nothing, S2
    /// answers `NOT_VISIBLE` exactly as for a private item, S3 404s and
    /// S1a omits it.
    ///
    /// # Errors
    /// [`ModelError::UnknownItem`].
    pub fn forget_item(&mut self, item_id: &str) -> Result<(), ModelError> {
        let item = self
            .state
            .items
            .remove(item_id)
            .ok_or(ModelError::UnknownItem)?;
        self.lost.insert(item.item_id.clone(), item);
        Ok(())
    }

    /// A snapshot of people, items and the event log.
    #[must_use]
    pub fn snapshot(&self) -> Snapshot {
        Snapshot(self.state.clone())
    }

    /// Whole-log restore: rewinds people, items and the event log to
    /// `snapshot` and moves to a new log epoch, so every cursor issued
    /// before gets `410 reannounce_required`.
    pub fn restore_whole(&mut self, snapshot: &Snapshot) {
        for (id, item) in &self.state.items {
            if !snapshot.0.items.contains_key(id) {
                self.lost.insert(id.clone(), item.clone());
            }
        }
        self.state = snapshot.0.clone();
        self.epoch += 1;
    }

    /// Every item a restore took away and the sibling does not hold now,
    /// by id, as it last stood ([`Model::restore_whole`],
    /// [`Model::forget_item`]): what the sibling once held, for the
    /// oracle's provenance (an item memoria pulled before the restore and
    /// has not yet learnt is gone).
    pub fn lost_items(&self) -> impl Iterator<Item = &Item> {
        self.lost
            .values()
            .filter(|i| !self.state.items.contains_key(&i.item_id))
    }

    /// The current log epoch (starts at 1, +1 per whole-log restore).
    #[must_use]
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The cursor at the log head.
    #[must_use]
    pub fn head_cursor(&self) -> String {
        self.cursor(self.state.events.len())
    }

    /// One item, for assertions.
    #[must_use]
    pub fn item(&self, item_id: &str) -> Option<&Item> {
        self.state.items.get(item_id)
    }

    /// The event log, oldest first.
    #[must_use]
    pub fn events(&self) -> &[Event] {
        &self.state.events
    }

    /// The ids of every team-visible item, in id order.
    #[must_use]
    pub fn team_visible_ids(&self) -> Vec<String> {
        self.state
            .items
            .values()
            .filter(|i| i.team_visible())
            .map(|i| i.item_id.clone())
            .collect()
    }

    /// Sets how many records one S1a page holds (at least 1; the
    /// conformance kit's fake uses a few, so an announce spans pages).
    pub fn set_announce_page_records(&mut self, records: usize) {
        self.announce_page_records = records.max(1);
    }

    /// Sets the rows per S1 page (at least one): a feed read in pages of
    /// a row or two, so a row has more behind it (gate 27).
    pub fn set_feed_page_rows(&mut self, rows: usize) {
        self.feed_page_rows = rows.max(1);
    }

    /// The log position `cursor` stands at (0 for none), if it is valid.
    #[must_use]
    pub fn feed_position(&self, cursor: Option<&str>) -> Option<usize> {
        cursor.map_or(Ok(0), |c| self.parse_cursor(c)).ok()
    }

    fn cursor(&self, position: usize) -> String {
        format!("c{}-{position:04}", self.epoch)
    }

    fn parse_cursor(&self, cursor: &str) -> Result<usize, FeedError> {
        let (epoch, position) = cursor
            .strip_prefix('c')
            .and_then(|rest| rest.split_once('-'))
            .ok_or(FeedError::ReannounceRequired)?;
        let epoch: u64 = epoch.parse().map_err(|_| FeedError::ReannounceRequired)?;
        let position: usize = position
            .parse()
            .map_err(|_| FeedError::ReannounceRequired)?;
        if epoch != self.epoch || position > self.state.events.len() {
            return Err(FeedError::ReannounceRequired);
        }
        Ok(position)
    }

    /// S1 (§6.1): rows after `cursor` (from the log's start when `None`),
    /// at most [`S1_ROWS_PER_PAGE`] (or what [`Model::set_feed_page_rows`]
    /// set).
    ///
    /// # Errors
    /// [`FeedError::ReannounceRequired`] for a cursor of another epoch,
    /// past the head, or not issued by this sibling.
    pub fn feed(&self, cursor: Option<&str>) -> Result<S1Response, FeedError> {
        let from = cursor.map_or(Ok(0), |c| self.parse_cursor(c))?;
        let events = &self.state.events;
        let to = events.len().min(from + self.feed_page_rows);
        Ok(S1Response {
            cursor: self.cursor(to),
            more: to < events.len(),
            rows: events[from..to]
                .iter()
                .map(|e| S1Row {
                    item_id: e.item_id.clone(),
                    revision: e.revision.clone(),
                    gone: e.gone,
                    touched_at: rfc3339(e.at_ms),
                })
                .collect(),
        })
    }

    /// S1a (§6.1, §4.1 rule 2): `None` opens an announce of every
    /// team-visible item as of now (close cursor = log head now); a page
    /// token continues it. Pages hold [`S1A_RECORDS_PER_PAGE`] records, or
    /// what [`Model::set_announce_page_records`] set.
    ///
    /// # Errors
    /// [`FeedError::ReannounceRequired`] for a page token this sibling did not issue.
    pub fn announce(&mut self, page: Option<&str>) -> Result<S1aPage, FeedError> {
        let (announce, index) = match page {
            None => {
                let mut records = vec![S1aRecord::Open];
                for item in self.state.items.values().filter(|i| i.team_visible()) {
                    records.push(S1aRecord::Item {
                        item_id: item.item_id.clone(),
                        revision: item.current().revision.clone(),
                        touched_at: rfc3339(item.touched_ms),
                    });
                }
                let count = u64::try_from(records.len() - 1).unwrap_or(u64::MAX);
                records.push(S1aRecord::Close {
                    count,
                    cursor: self.head_cursor(),
                });
                self.announces.push(records);
                (self.announces.len() - 1, 0)
            }
            Some(token) => token
                .strip_prefix('p')
                .and_then(|rest| rest.split_once('.'))
                .and_then(|(a, i)| Some((a.parse().ok()?, i.parse().ok()?)))
                .ok_or(FeedError::ReannounceRequired)?,
        };
        let records = self
            .announces
            .get(announce)
            .ok_or(FeedError::ReannounceRequired)?;
        let per_page = self.announce_page_records;
        let start = index * per_page;
        if start >= records.len() {
            return Err(FeedError::ReannounceRequired);
        }
        let end = records.len().min(start + per_page);
        Ok(S1aPage {
            records: records[start..end].to_vec(),
            next_page: (end < records.len()).then(|| format!("p{announce}.{}", index + 1)),
        })
    }

    fn resolve(&self, kind: SubjectKind, value: &str) -> Asker {
        let found = match kind {
            SubjectKind::Address => self.state.people.get(value),
            SubjectKind::PersonRef => self
                .state
                .people
                .values()
                .find(|p| p.person_ref.as_deref() == Some(value)),
        };
        found.map_or(Asker::Stranger, |p| Asker::Known(p.clone()))
    }

    /// The grants join (§4.1): may `asker` see `item` under the sibling's
    /// own sharing, ignoring custody?
    fn grants_join(item: &Item, asker: &Asker) -> bool {
        let Asker::Known(person) = asker else {
            return false;
        };
        if item.removed.contains(&person.address) || item.deleted {
            return false;
        }
        match &item.rung {
            Rung::Private { owner } => *owner == person.address,
            Rung::Granted { to } => to.contains(&person.address),
            Rung::Team => person.role == Role::Member,
        }
    }

    /// S3 (§6.1): the body of `pair` if the item is team-visible now and
    /// the revision is in its log; `None` (→ 404) otherwise. No person.
    #[must_use]
    pub fn fetch(&self, pair: &Pair) -> Option<S3Response> {
        let item = self.state.items.get(&pair.item_id)?;
        if !item.team_visible() {
            return None;
        }
        let revision = item.log.iter().find(|r| r.revision == pair.revision)?;
        Some(S3Response {
            item_id: item.item_id.clone(),
            revision: revision.revision.clone(),
            title: revision.title.clone(),
            media_type: revision.media_type,
            body: revision.body.clone(),
        })
    }
}

/// A cloneable handle on one [`Model`]; scenarios mutate through it while
/// the fake serves from it.
#[derive(Debug, Clone)]
pub struct ModelHandle(Arc<Mutex<Model>>);

impl ModelHandle {
    /// An empty model stamping changes with `clock`.
    #[must_use]
    pub fn new(clock: Clock) -> Self {
        Self(Arc::new(Mutex::new(Model::new(clock))))
    }

    /// Runs `f` with the model locked: every [`Model`] method is reachable
    /// this way, e.g. `handle.with(|m| m.revise("sh-1", "t", "b"))`.
    pub fn with<R>(&self, f: impl FnOnce(&mut Model) -> R) -> R {
        f(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// See [`Model::add_member`].
    pub fn add_member(&self, address: &str, person_ref: Option<&str>) -> String {
        self.with(|m| m.add_member(address, person_ref))
    }

    /// See [`Model::add_guest`].
    pub fn add_guest(&self, address: &str, person_ref: Option<&str>) -> String {
        self.with(|m| m.add_guest(address, person_ref))
    }

    /// See [`Model::add_item`].
    ///
    /// # Errors
    /// [`ModelError::DuplicateItem`].
    pub fn add_item(
        &self,
        item_id: &str,
        rung: Rung,
        title: &str,
        body: &str,
    ) -> Result<String, ModelError> {
        self.with(|m| m.add_item(item_id, rung, title, body))
    }

    /// See [`Model::revise`].
    ///
    /// # Errors
    /// [`ModelError::UnknownItem`].
    pub fn revise(&self, item_id: &str, title: &str, body: &str) -> Result<String, ModelError> {
        self.with(|m| m.revise(item_id, title, body))
    }

    /// See [`Model::set_rung`].
    ///
    /// # Errors
    /// [`ModelError::UnknownItem`].
    pub fn set_rung(&self, item_id: &str, rung: Rung) -> Result<(), ModelError> {
        self.with(|m| m.set_rung(item_id, rung))
    }

    /// See [`Model::grant`].
    ///
    /// # Errors
    /// [`ModelError::UnknownItem`].
    pub fn grant(&self, item_id: &str, address: &str) -> Result<(), ModelError> {
        self.with(|m| m.grant(item_id, address))
    }

    /// See [`Model::ungrant`].
    ///
    /// # Errors
    /// [`ModelError::UnknownItem`].
    pub fn ungrant(&self, item_id: &str, address: &str) -> Result<(), ModelError> {
        self.with(|m| m.ungrant(item_id, address))
    }

    /// See [`Model::set_removed`].
    ///
    /// # Errors
    /// [`ModelError::UnknownItem`].
    pub fn set_removed(
        &self,
        item_id: &str,
        address: &str,
        removed: bool,
    ) -> Result<(), ModelError> {
        self.with(|m| m.set_removed(item_id, address, removed))
    }

    /// See [`Model::set_link_shared`].
    ///
    /// # Errors
    /// [`ModelError::UnknownItem`].
    pub fn set_link_shared(&self, item_id: &str, on: bool) -> Result<(), ModelError> {
        self.with(|m| m.set_link_shared(item_id, on))
    }

    /// See [`Model::set_guest_only`].
    ///
    /// # Errors
    /// [`ModelError::UnknownItem`].
    pub fn set_guest_only(&self, item_id: &str, on: bool) -> Result<(), ModelError> {
        self.with(|m| m.set_guest_only(item_id, on))
    }

    /// See [`Model::delete`].
    ///
    /// # Errors
    /// [`ModelError::UnknownItem`].
    pub fn delete(&self, item_id: &str) -> Result<(), ModelError> {
        self.with(|m| m.delete(item_id))
    }

    /// See [`Model::restore_item_to`].
    ///
    /// # Errors
    /// [`ModelError::UnknownItem`], [`ModelError::UnknownRevision`].
    pub fn restore_item_to(&self, item_id: &str, revision: &str) -> Result<(), ModelError> {
        self.with(|m| m.restore_item_to(item_id, revision))
    }

    /// See [`Model::forget_item`].
    ///
    /// # Errors
    /// [`ModelError::UnknownItem`].
    pub fn forget_item(&self, item_id: &str) -> Result<(), ModelError> {
        self.with(|m| m.forget_item(item_id))
    }

    /// See [`Model::snapshot`].
    #[must_use]
    pub fn snapshot(&self) -> Snapshot {
        self.with(|m| m.snapshot())
    }

    /// See [`Model::restore_whole`].
    pub fn restore_whole(&self, snapshot: &Snapshot) {
        self.with(|m| m.restore_whole(snapshot));
    }

    /// See [`Model::head_cursor`].
    #[must_use]
    pub fn head_cursor(&self) -> String {
        self.with(|m| m.head_cursor())
    }
}
