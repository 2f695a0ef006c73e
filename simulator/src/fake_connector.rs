//! A paginated fake connector: an external source with page tokens and fault knobs, driving the reference's connector in simulated time (§5.1, gate 7).
//!
//! [`FakeConnector`] holds items in named collections (a Drive's folders)
//! and answers [`memoria::connector::Source`] in process: the reference's
//! transport is a trait, so no socket is opened. Pages hold
//! [`FakeConnector::page_size`] items in key order, carry a token to the
//! next page, and the last carries the complete marker. An empty source
//! answers one empty page with the marker: an authoritative empty.
//!
//! Each page is first answered as a status code, as a real API would
//! ([`Answer`]), and the knobs in [`ConnectorFaults`] bend it:
//!
//! | knob | answer | the reference reads |
//! |---|---|---|
//! | `hang_from_page` | never answers | a timeout, in tokio time |
//! | `rate_limit_from_page` | 429 | rate limited |
//! | `partial_last_page` | the last page cut in half, no end marker | a partial page |
//! | `credential_expired` | 401 on every call | an expired credential |
//! | `forbidden_collection` | 403 on a page listing that collection | a permission error |
//! | `over_cap` | a first page of [`FLOOD_ENTRIES`] copies of one key, then the real pages | too large |
//!
//! [`simulate`] runs a scenario on a turmoil host, where every timer is
//! simulated, and [`wake_memoria`] gives it an instance on [`SimClock`].

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use memoria::Admission;
use memoria::EgressMode;
use memoria::connector::{Entry, FailureKind, Fetched, Page, PageEnd, Source};
use memoria::{Dek, Sealer};
use memoria::{Instance, InstanceConfig};

use crate::world::{EPOCH_UNIX_S, OWNERS, SIMULATION_DURATION_S, SimClock};

/// The fake connector's durable name, as memoria records it.
pub const FAKE_CONNECTOR_NAME: &str = "fake:drive";
/// The prefix of every source key the fake lists: `fake:<item key>`.
pub const FAKE_KEY_PREFIX: &str = "fake:";
/// Items per page unless set otherwise.
pub const FAKE_PAGE_SIZE_DEFAULT: usize = 2;
/// One turmoil tick in [`simulate`], in simulated ms. Coarser than the
/// world's: nothing here is a network latency.
pub const CONNECTOR_TICK_MS: u64 = 10;

/// The fault knobs. All off by default; switchable between syncs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnectorFaults {
    /// Pages from this 0-based index on never answer (a timeout).
    pub hang_from_page: Option<usize>,
    /// Pages from this 0-based index on answer 429.
    pub rate_limit_from_page: Option<usize>,
    /// The last page loses the second half of its entries and its end marker.
    pub partial_last_page: bool,
    /// Every call answers 401.
    pub credential_expired: bool,
    /// A page that would list an item of this collection answers 403.
    pub forbidden_collection: Option<String>,
    /// A listing past the cap: the first page repeats one key that is not
    /// held [`FLOOD_ENTRIES`] times and points on to the real pages.
    pub over_cap: bool,
}

/// Entries of an over-cap flood page: one past memoria's cap
/// ([`memoria::connector::CONNECTOR_ENTRIES_MAX`]).
pub const FLOOD_ENTRIES: usize = memoria::connector::CONNECTOR_ENTRIES_MAX + 1;
/// The key a flood page repeats: no item holds it, so fetching it answers 404.
pub const FLOOD_KEY: &str = "~flood";

/// What one list call answered, before it is read as a [`Page`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// 200 with a page.
    Page(Page),
    /// A non-200 status.
    Status(u16),
    /// No answer at all.
    Hang,
}

/// One call the fake received: content-free (page index, status).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectorCall {
    /// `list` or `fetch`.
    pub call: &'static str,
    /// The page index asked for (`list` only).
    pub page: Option<usize>,
    /// The status answered; 0 for no answer.
    pub status: u16,
}

#[derive(Debug, Clone)]
struct Item {
    collection: String,
    version: u64,
    modified_unix_s: i64,
    title: String,
    body: String,
}

#[derive(Debug, Default)]
struct State {
    items: BTreeMap<String, Item>,
    page_size: usize,
    faults: ConnectorFaults,
    calls: Vec<ConnectorCall>,
    next_version: u64,
}

/// The fake connector. Cloning shares the state.
#[derive(Debug, Clone)]
pub struct FakeConnector {
    state: Arc<Mutex<State>>,
}

impl Default for FakeConnector {
    fn default() -> FakeConnector {
        FakeConnector::new(FAKE_PAGE_SIZE_DEFAULT)
    }
}

impl FakeConnector {
    /// An empty source answering `page_size` items per page (at least 1).
    pub fn new(page_size: usize) -> FakeConnector {
        FakeConnector {
            state: Arc::new(Mutex::new(State {
                page_size: page_size.max(1),
                ..State::default()
            })),
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        f(&mut self.state.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Items per page.
    pub fn page_size(&self) -> usize {
        self.with(|s| s.page_size)
    }

    /// Adds or changes the item `key` in `collection`; a change bumps its version.
    pub fn put(&self, key: &str, collection: &str, title: &str, body: &str) {
        self.with(|s| {
            s.next_version += 1;
            let item = Item {
                collection: collection.to_string(),
                version: s.next_version,
                modified_unix_s: EPOCH_UNIX_S + s.next_version as i64,
                title: title.to_string(),
                body: body.to_string(),
            };
            s.items.insert(key.to_string(), item);
        });
    }

    /// Removes the item `key` from the source.
    pub fn remove(&self, key: &str) {
        self.with(|s| s.items.remove(key));
    }

    /// Removes every item: the source is now authoritatively empty.
    pub fn clear(&self) {
        self.with(|s| s.items.clear());
    }

    /// Replaces the fault knobs.
    pub fn set_faults(&self, faults: ConnectorFaults) {
        self.with(|s| s.faults = faults);
    }

    /// Every call so far, in order.
    pub fn calls(&self) -> Vec<ConnectorCall> {
        self.with(|s| s.calls.clone())
    }

    /// The source key memoria stores the item `key` under.
    pub fn source_key(key: &str) -> String {
        format!("{FAKE_KEY_PREFIX}{key}")
    }

    /// How many pages a complete enumeration takes now.
    pub fn page_count(&self) -> usize {
        self.with(|s| s.items.len().div_ceil(s.page_size).max(1))
    }

    /// The answer to `list(token)`, with the faults applied, recorded as a call.
    pub fn answer(&self, token: Option<&str>) -> Answer {
        self.with(|s| {
            if s.faults.over_cap && token.is_none() && !s.faults.credential_expired {
                let entry = Entry {
                    key: FakeConnector::source_key(FLOOD_KEY),
                    version: "v0".into(),
                    modified_unix_s: EPOCH_UNIX_S,
                };
                s.calls.push(ConnectorCall {
                    call: "list",
                    page: None,
                    status: 200,
                });
                return Answer::Page(Page {
                    entries: vec![entry; FLOOD_ENTRIES],
                    end: PageEnd::Next("page-0".into()),
                });
            }
            let index = match token {
                None => Some(0),
                Some(t) => t
                    .strip_prefix("page-")
                    .and_then(|n| n.parse::<usize>().ok()),
            };
            let answer = match index {
                None => Answer::Status(400),
                Some(index) => s.page(index),
            };
            s.calls.push(ConnectorCall {
                call: "list",
                page: index,
                status: match &answer {
                    Answer::Page(_) => 200,
                    Answer::Status(code) => *code,
                    Answer::Hang => 0,
                },
            });
            answer
        })
    }
}

impl State {
    fn page(&self, index: usize) -> Answer {
        let f = &self.faults;
        if f.credential_expired {
            return Answer::Status(401);
        }
        if f.hang_from_page.is_some_and(|p| index >= p) {
            return Answer::Hang;
        }
        if f.rate_limit_from_page.is_some_and(|p| index >= p) {
            return Answer::Status(429);
        }
        let keys: Vec<&String> = self.items.keys().collect();
        let pages = keys.len().div_ceil(self.page_size).max(1);
        if index >= pages {
            return Answer::Status(400);
        }
        let on_page: Vec<&String> = keys
            .iter()
            .skip(index * self.page_size)
            .take(self.page_size)
            .copied()
            .collect();
        if let Some(forbidden) = &f.forbidden_collection
            && on_page
                .iter()
                .any(|k| &self.items[*k].collection == forbidden)
        {
            return Answer::Status(403);
        }
        let mut entries: Vec<Entry> = on_page
            .iter()
            .map(|k| {
                let item = &self.items[*k];
                Entry {
                    key: FakeConnector::source_key(k),
                    version: format!("v{}", item.version),
                    modified_unix_s: item.modified_unix_s,
                }
            })
            .collect();
        let last = index + 1 == pages;
        let end = if !last {
            PageEnd::Next(format!("page-{}", index + 1))
        } else if f.partial_last_page {
            entries.truncate(entries.len() / 2);
            PageEnd::Missing
        } else {
            PageEnd::Complete
        };
        Answer::Page(Page { entries, end })
    }
}

impl Source for FakeConnector {
    fn name(&self) -> &str {
        FAKE_CONNECTOR_NAME
    }

    fn list<'a>(&'a self, token: Option<&'a str>) -> BoxFuture<'a, Result<Page, FailureKind>> {
        Box::pin(async move {
            match self.answer(token) {
                Answer::Page(page) => Ok(page),
                Answer::Hang => futures::future::pending().await,
                Answer::Status(401) => Err(FailureKind::CredentialExpired),
                Answer::Status(403) => Err(FailureKind::PermissionDenied),
                Answer::Status(404) => Err(FailureKind::NotFound),
                Answer::Status(429) => Err(FailureKind::RateLimited),
                Answer::Status(_) => Err(FailureKind::Unavailable),
            }
        })
    }

    fn fetch<'a>(&'a self, entry: &'a Entry) -> BoxFuture<'a, Result<Fetched, FailureKind>> {
        Box::pin(async move {
            self.with(|s| {
                let status;
                let out = if s.faults.credential_expired {
                    status = 401;
                    Err(FailureKind::CredentialExpired)
                } else {
                    match entry
                        .key
                        .strip_prefix(FAKE_KEY_PREFIX)
                        .and_then(|k| s.items.get(k).map(|i| (k, i)))
                    {
                        Some((k, item)) => {
                            status = 200;
                            Ok(Fetched {
                                name: format!("{k}.md"),
                                bytes: format!("# {}\n\n{}\n", item.title, item.body).into_bytes(),
                            })
                        }
                        None => {
                            status = 404;
                            Err(FailureKind::NotFound)
                        }
                    }
                };
                s.calls.push(ConnectorCall {
                    call: "fetch",
                    page: None,
                    status,
                });
                out
            })
        })
    }
}

/// A fresh memoria for a connector scenario: data in `data_dir`, the
/// world's owners, a fixed DEK, and [`SimClock`] (so `last_seen_at` is
/// simulated time).
///
/// # Errors
/// As [`Instance::wake`].
pub fn wake_memoria(data_dir: &Path) -> Result<Instance, memoria::Error> {
    Instance::wake(
        InstanceConfig {
            data_dir: data_dir.to_path_buf(),
            admission: Admission::parse(&OWNERS.join(","))?,
            egress: EgressMode::AiOff,
        },
        Sealer::new(&Dek::from_bytes([7u8; 32])),
        Arc::new(SimClock::default()),
    )
}

/// Runs `scenario` on one turmoil host seeded by `seed`: tokio time is
/// simulated, so a hanging page times out without anyone waiting.
///
/// # Errors
/// The scenario's error, or the simulation's own failure, as text.
pub fn simulate<F, Fut>(seed: u64, scenario: F) -> Result<(), String>
where
    F: FnOnce() -> Fut + 'static,
    Fut: std::future::Future<Output = Result<(), String>> + 'static,
{
    let mut sim = turmoil::Builder::new()
        .rng_seed(seed)
        .simulation_duration(Duration::from_secs(SIMULATION_DURATION_S))
        .tick_duration(Duration::from_millis(CONNECTOR_TICK_MS))
        .build();
    let outcome: Arc<Mutex<Option<Result<(), String>>>> = Arc::default();
    let slot = outcome.clone();
    sim.client("memoria", async move {
        let r = scenario().await;
        *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
        Ok(())
    });
    sim.run().map_err(|e| e.to_string())?;
    let taken = outcome.lock().unwrap_or_else(|p| p.into_inner()).take();
    taken.unwrap_or_else(|| Err("the scenario did not finish".to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_source_answers_one_empty_page_with_the_complete_marker() {
        let fake = FakeConnector::new(2);
        assert_eq!(
            fake.answer(None),
            Answer::Page(Page {
                entries: vec![],
                end: PageEnd::Complete
            })
        );
    }

    #[test]
    fn pages_chain_by_token_and_only_the_last_is_complete() {
        let fake = FakeConnector::new(2);
        for k in ["a", "b", "c"] {
            fake.put(k, "root", "T", "body words");
        }
        let Answer::Page(first) = fake.answer(None) else {
            panic!("a page");
        };
        assert_eq!(first.entries.len(), 2);
        assert_eq!(first.end, PageEnd::Next("page-1".into()));
        let Answer::Page(second) = fake.answer(Some("page-1")) else {
            panic!("a page");
        };
        assert_eq!(second.entries.len(), 1);
        assert_eq!(second.end, PageEnd::Complete);
    }

    #[test]
    fn a_partial_last_page_loses_its_tail_and_its_end_marker() {
        let fake = FakeConnector::new(4);
        for k in ["a", "b", "c", "d"] {
            fake.put(k, "root", "T", "body words");
        }
        fake.set_faults(ConnectorFaults {
            partial_last_page: true,
            ..ConnectorFaults::default()
        });
        let Answer::Page(page) = fake.answer(None) else {
            panic!("a page");
        };
        assert_eq!(page.entries.len(), 2);
        assert_eq!(page.end, PageEnd::Missing);
    }

    #[test]
    fn a_forbidden_collection_answers_403_only_on_the_page_that_lists_it() {
        let fake = FakeConnector::new(1);
        fake.put("a", "root", "T", "body words");
        fake.put("b", "private", "T", "body words");
        fake.set_faults(ConnectorFaults {
            forbidden_collection: Some("private".into()),
            ..ConnectorFaults::default()
        });
        assert!(matches!(fake.answer(None), Answer::Page(_)));
        assert_eq!(fake.answer(Some("page-1")), Answer::Status(403));
    }
}
