//! Gate 8 (§10, §8.1): the refusal breaker at §8.1's predicate, its S3 twin, and "cannot determine".
//!
//! Size: over 700 lines because gate 8's cases share one rig (a hand clock
//! across UTC days, a fake Sheets behind an in-memory dialer, the
//! sources-page reader) and one step language; split, a case would sit apart
//! from the steps and the fixture it asserts about.
//!
//! In-process, over the real path: memoria's web app ([`TestApp`]) with a
//! clock the gate moves across UTC days, ruling every search through S2 to
//! a fake Sheets ([`FakeSibling`], its real grants model) reached over an
//! in-memory duplex stream. The counters are written by the S2 call path
//! the results page runs, and read only by the owner's `GET /sources`.
//! Each silent case first proves the counters it relies on were written
//! (presence before absence). The S3 cases use the real sync for the prior
//! success and the store's S3 tally API, the one `sync` itself calls, for
//! the window's 404s; the S3 outage is real syncs whose fetches the gate's
//! dialer answers 503 in front of the fake while the feed answers. The
//! gate computes UTC day numbers itself (`unix_s / 86400`), never with the
//! product's function, and moves the clock across midnight where the day
//! boundary matters. A second sibling's counters are written through the
//! store API the S2 path calls.
//!
//! Most cases are a table of steps ([`Step`]), one per line, read by one
//! interpreter ([`walk`]): a world with its baseline, refusals, tallies,
//! tampering, restarts, and the claims about counter rows and the sources
//! page. The six cases whose claims are about a page's own shape (the
//! reader's page unchanged when the breaker fires, the document page's
//! 404, the answers S2 gave) begin with a walk and go on in code.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use memoria::Clock as MemoriaClock;
use memoria::Dek;
use memoria::testkit::TestApp;
use memoria::{Connection, DialFuture, Dialer};
use memoria::{S2Tally, S3_BREAKER_FETCHES_MIN, S3Tally};
use memoria::{SiblingClient, SiblingConfig};
use memoria_simulator::{
    CallDetail, CallKind, Clock, FakeConfig, FakeSibling, ModelHandle, Outage, Rung, SubjectKind,
    Trace,
};

use crate::rigs::clock::HandClock;
use crate::rigs::page::Page;
use crate::rigs::sim::tagged_body;
use crate::rigs::support::{block_on, dek};
use crate::{Case, Ctx, Failure, Gate, ensure};

/// Gate 8.
pub static GATE: Gate = Gate {
    id: "8",
    title: "Circuit breakers at §8.1's predicate",
    gates_md: &[
        "Refusal breaker, five cases (fires; silent for Docs-only members; silent for a 24 h outage; silent below the 3-asker floor; \"cannot determine\"), durable across restart; S3 breaker same shape (20 fetches, all 404, one prior success)",
    ],
    sections: &["§10", "§8.1", "§3.2"],
    requirement: "The refusal breaker fires when at least 3 baseline askers (VISIBLE in the 7 UTC days before today) each have VISIBLE = 0 and NOT_VISIBLE >= 1 today, on the owner's sources page only, purging nothing; it stays silent for Docs-only members, a 24-hour outage and 2 refused baseline askers; missing, unreadable or short counters say \"cannot determine\" and name the window or the baseline; the counters survive a restart. The S3 breaker gets the same treatment at 20 fetches, all 404, with one prior success.",
    cases: &[
        Case {
            id: "8/fires",
            desc: "Ana, Bea and Cai are shown Sheets passages on two baseline days; today Sheets removes them and each searches once: the sources page says the refusal breaker fired for 3 people, and nothing was purged; Dan's and Ana's results pages have the same elements and text before and after it fired.",
            run: fires,
        },
        Case {
            id: "8/silent-docs-only-members",
            desc: "Ana uses Sheets in the baseline and does not search today; Dan, Eli and Fay, never shown a Sheets passage, are refused in the baseline and search 50 times each today, Sheets answering NOT_VISIBLE to every pair: the counters hold their refusals and the breaker says no refusal anomaly.",
            run: silent_docs_only,
        },
        Case {
            id: "8/silent-outage",
            desc: "Three baseline askers search today while Sheets answers 503 to everything: their pages carry the did-not-answer line, no window counter is written, and the breaker says no refusal anomaly.",
            run: silent_outage,
        },
        Case {
            id: "8/silent-below-floor",
            desc: "Two baseline askers are refused every Sheets pair today: the counters hold both refusals and the breaker says no refusal anomaly.",
            run: silent_below_floor,
        },
        Case {
            id: "8/silent-visible-today",
            desc: "Three baseline askers are each refused one Sheets item today and shown the others: VISIBLE and NOT_VISIBLE are both counted, and the breaker says no refusal anomaly (VISIBLE = 0 is part of the predicate).",
            run: silent_visible_today,
        },
        Case {
            id: "8/silent-refused-in-the-baseline",
            desc: "Three baseline askers are each refused one Sheets item and shown the others on a baseline day, and ask nothing today: the baseline day's counters hold their refusals and the breaker says no refusal anomaly (NOT_VISIBLE counts in the window only).",
            run: silent_refused_in_the_baseline,
        },
        Case {
            id: "8/silent-stale-or-ahead",
            desc: "Three baseline askers are answered only STALE (Sheets moved past memoria's revisions) or only AHEAD (Sheets restored behind them) today: no window counter is written and the breaker says no refusal anomaly.",
            run: silent_stale_or_ahead,
        },
        Case {
            id: "8/baseline-is-seven-utc-days",
            desc: "Three askers shown Sheets only on day W-7 and refused today fire the breaker; a history beginning on day W-6 says cannot determine and names the baseline.",
            run: baseline_seven_days,
        },
        Case {
            id: "8/window-is-the-utc-day",
            desc: "Passages shown at 23:30 UTC yesterday and refusals at 00:30 UTC today land on those UTC days (unix seconds / 86400, computed by the gate) and fire the breaker, still fired at 23:30 UTC today.",
            run: window_utc_day,
        },
        Case {
            id: "8/counters-kept-eight-days",
            desc: "S2 and S3 counters written on days W-8 and W-7 are held; today's write prunes W-8's and keeps W-7's, and the breaker fires on W-7's baseline.",
            run: kept_eight_days,
        },
        Case {
            id: "8/per-sibling",
            desc: "A second sibling counts the same three askers as shown its passages in the baseline and today, while Sheets refuses them: Sheets' breaker fires for 3 people and the second sibling's stays silent.",
            run: per_sibling,
        },
        Case {
            id: "8/s3-silent-through-an-s3-outage",
            desc: "Today S3 answers 503 to every fetch while the feed answers: 21 failed fetches through real syncs, none a 404, write today's S3 counters and the S3 breaker says no S3 anomaly.",
            run: s3_silent_outage,
        },
        Case {
            id: "8/cannot-determine",
            desc: "One day of history says cannot determine and names the baseline; deleting the durable counters names the window and the baseline; a tampered window row names the window; a tampered baseline row names the baseline and does not fire on the rest; none says no anomaly, none is silent.",
            run: cannot_determine,
        },
        Case {
            id: "8/survives-restart",
            desc: "The baseline is written, the app is dropped and a new one wakes on the same data directory: before today's refusals it already reads the baseline (no anomaly, not cannot determine), and after them it fires.",
            run: survives_restart,
        },
        Case {
            id: "8/s3-fires-and-survives-restart",
            desc: "A real sync succeeds three days ago; the app restarts; today 20 fetches all answer 404: the S3 breaker fires on the sources page; with 19 it is silent.",
            run: s3_fires,
        },
        Case {
            id: "8/s3-silent",
            desc: "20 fetches today with one success among them is silent; 20 fetches all 404 with no success in the 7 days before (only 404s) is silent.",
            run: s3_silent,
        },
        Case {
            id: "8/s3-cannot-determine",
            desc: "A first sync today says cannot determine naming the baseline; deleting the S3 counters names the window and the baseline; neither says no anomaly.",
            run: s3_cannot_determine,
        },
        Case {
            id: "8/fires-from-document-pages",
            desc: "Ana, Bea and Cai are shown Sheets passages on two baseline days; today Sheets removes them and each opens a Sheets document page once, searching nothing: each page is the plain 404 while Dee, never removed, opening it just after, is shown it, four window counter rows (the three refused readers' and Dee's) are written on that path, and the sources page says the refusal breaker fired for 3 people.",
            run: fires_from_document_pages,
        },
    ],
};

const APP: &str = "sheets";
const HOST: &str = "acme.sheets.oficina.works";
const TOKEN: &str = "tok-gate8";
const PEOPLE: [&str; 7] = [
    "ana@acme.test",
    "bea@acme.test",
    "cai@acme.test",
    "dan@acme.test",
    "eli@acme.test",
    "fay@acme.test",
    "gus@acme.test",
];
const ITEMS: usize = 3;
/// Today, the window: 2026-11-30T09:00:00Z in Unix seconds.
const TODAY_S: i64 = 1_796_029_200;
/// Seconds in one UTC day: POSIX time has no leap seconds, so the UTC day
/// of a Unix time is `unix_s / DAY_S` (§8.1's windows are UTC days). The
/// gate computes days itself, never with the product's own function.
const DAY_S: i64 = 86_400;
/// Seconds in one hour.
const HOUR_S: i64 = 3_600;
/// A second sibling's app, with counters of its own (§8.1: per sibling).
const OTHER_APP: &str = "docs";
/// The owner's sources page section for Sheets (§8.1).
const SHEETS_SECTION: &str = "section.source[data-app=\"Sheets\"]";
const NO_ANOMALY: &str = "Refusal breaker: no refusal anomaly.";
const FIRED: &str = "Refusal breaker: fired.";
const CANNOT: &str = "Refusal breaker: cannot determine.";

/// Dials a fake's router over an in-memory duplex stream. While `s3_down`
/// is set, every S3 fetch is answered 503 in front of the fake (an S3-only
/// outage: the feed still answers), and every other call goes through.
struct DuplexDialer {
    fakes: BTreeMap<String, FakeSibling>,
    s3_down: Arc<AtomicBool>,
}

/// The path of an S3 fetch (§6.1).
const S3_PATH: &str = "/s3/fetch";
/// Bytes of buffer in each in-memory connection.
const DUPLEX_BYTES: usize = 256 * 1024;

impl Dialer for DuplexDialer {
    fn dial<'a>(&'a self, host: &'a str, _port: u16) -> DialFuture<'a> {
        Box::pin(async move {
            let fake = self.fakes.get(host).cloned().ok_or_else(|| {
                std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "no such host")
            })?;
            let (client, server) = tokio::io::duplex(DUPLEX_BYTES);
            if self.s3_down.load(Ordering::SeqCst) {
                tokio::spawn(s3_down_in_front(server, fake));
            } else {
                tokio::spawn(memoria_simulator::serve_connection(server, fake.router()));
            }
            Ok(Box::new(client) as Box<dyn Connection>)
        })
    }
}

/// Reads one request's head; answers an S3 fetch 503 after reading its
/// body, and hands any other call, bytes already read included, to the fake.
async fn s3_down_in_front(mut server: tokio::io::DuplexStream, fake: FakeSibling) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut read = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = memchr::memmem::find(&read, b"\r\n\r\n") {
            break at + 4;
        }
        match server.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => read.extend_from_slice(&buf[..n]),
        }
    };
    let head = String::from_utf8_lossy(&read[..head_end]).to_ascii_lowercase();
    let is_s3 = head
        .lines()
        .next()
        .is_some_and(|l| l.split(' ').nth(1) == Some(S3_PATH));
    if is_s3 {
        let body_len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        while read.len() < head_end + body_len {
            match server.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => read.extend_from_slice(&buf[..n]),
            }
        }
        let body = br#"{"error":"unavailable"}"#;
        let answer = format!(
            "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        );
        let _ = server.write_all(answer.as_bytes()).await;
        let _ = server.write_all(body).await;
        let _ = server.shutdown().await;
        return;
    }
    let (mut to_fake, fake_side) = tokio::io::duplex(DUPLEX_BYTES);
    tokio::spawn(memoria_simulator::serve_connection(
        fake_side,
        fake.router(),
    ));
    if to_fake.write_all(&read).await.is_ok() {
        let _ = tokio::io::copy_bidirectional(&mut server, &mut to_fake).await;
    }
}

/// One world: a data directory, a DEK, a hand clock, a fake Sheets, and
/// memoria awake over them.
struct Rig {
    dir: std::path::PathBuf,
    dek: Dek,
    clock: HandClock,
    fake: FakeSibling,
    s3_down: Arc<AtomicBool>,
    app: Option<TestApp>,
    query: String,
}

impl Rig {
    /// A rig in the case's scratch directory `name`.
    fn new(ctx: &mut Ctx, name: &str) -> Rig {
        let canary = ctx.canary();
        let (fake_clock, _) = Clock::manual();
        let model = ModelHandle::new(fake_clock.clone());
        model.with(|m| {
            for p in PEOPLE {
                m.add_member(p, None);
            }
            for i in 0..ITEMS {
                m.add_item(
                    &format!("sh-{i}"),
                    Rung::Team,
                    "Ledger",
                    &tagged_body(&canary, &format!("tagledger{i}")),
                )
                .expect("an item");
            }
        });
        let fake = FakeSibling::new(
            FakeConfig {
                team: "acme".into(),
                app: APP.into(),
                keys_on: SubjectKind::Address,
                tokens: vec![("memoria".into(), TOKEN.into())],
            },
            model,
            Trace::new(),
            fake_clock,
        );
        let mut rig = Rig {
            dir: ctx.dir(name),
            dek: dek(ctx.rng()),
            clock: HandClock::at(TODAY_S),
            fake,
            s3_down: Arc::new(AtomicBool::new(false)),
            app: None,
            query: canary,
        };
        rig.wake();
        rig
    }

    /// Wakes memoria on the rig's data directory (again, after [`Rig::sleep`]).
    fn wake(&mut self) {
        let client = SiblingClient::new(
            "acme",
            &[SiblingConfig {
                url: format!("http://{HOST}:80"),
                token: TOKEN.into(),
            }],
            Arc::new(DuplexDialer {
                fakes: BTreeMap::from([(HOST.to_string(), self.fake.clone())]),
                s3_down: self.s3_down.clone(),
            }),
        )
        .expect("a same-team sibling");
        let app = TestApp::with_clock(
            &self.dir,
            &self.dek,
            &PEOPLE.join(","),
            Arc::new(self.clock.clone()),
        )
        .expect("memoria wakes")
        .with_siblings(client);
        self.app = Some(app);
    }

    /// Drops memoria: everything in memory goes.
    fn sleep(&mut self) {
        self.app = None;
    }

    fn app(&mut self) -> &mut TestApp {
        self.app.as_mut().expect("memoria is awake")
    }

    /// Sets the clock to 09:00 UTC, `days` days before today.
    fn day(&self, days_before_today: i64) {
        self.at(TODAY_S - days_before_today * DAY_S);
    }

    /// Sets the clock to `unix_s`.
    fn at(&self, unix_s: i64) {
        self.clock.set(unix_s);
    }

    /// Polls Sheets' S1 and fetches through S3: the real sync.
    fn sync(&mut self) -> memoria::SyncReport {
        let app = self.app();
        let mut reports = block_on(app.state().warm_up());
        reports.pop().expect("one sibling synced")
    }

    /// Searches as `who` through the results page; returns its body.
    fn search(&mut self, who: &str) -> String {
        let q = format!("/?q={}", memoria::testkit::form_encode(&self.query));
        let app = self.app();
        block_on(async {
            app.sign_in(who).await;
            app.get(&q).await.body
        })
    }

    /// Opens `path` as `who`; returns the status and body.
    fn open(&mut self, who: &str, path: &str) -> (u16, String) {
        let app = self.app();
        block_on(async {
            app.sign_in(who).await;
            let r = app.get(path).await;
            (r.status.as_u16(), r.body)
        })
    }

    /// The document id memoria holds for Sheets' item `sh-{i}`.
    fn document_id(&mut self, i: usize) -> Result<String, Failure> {
        let found = self
            .app()
            .state()
            .instance()
            .lock()
            .expect("lock")
            .store()
            .sibling_document(APP, &format!("sh-{i}"));
        match found {
            Ok(Some(d)) => Ok(d.id),
            other => Err(Failure::new(
                format!("memoria holds Sheets' sh-{i}"),
                format!("{:?}", other.map(|d| d.is_some())),
            )),
        }
    }

    /// Sheets removes (or restores) `who` from every item.
    fn removed(&self, who: &str, on: bool) {
        for i in 0..ITEMS {
            self.removed_from(i, who, on);
        }
    }

    /// Sheets removes (or restores) `who` from item `i` only.
    fn removed_from(&self, i: usize, who: &str, on: bool) {
        self.fake.model().with(|m| {
            m.set_removed(&format!("sh-{i}"), who, on).expect("removed");
        });
    }

    /// Sheets revises every item; returns the new revisions.
    fn revise_all(&self, body: &str) -> Vec<String> {
        self.fake.model().with(|m| {
            (0..ITEMS)
                .map(|i| {
                    m.revise(&format!("sh-{i}"), "Ledger", body)
                        .expect("revise")
                })
                .collect()
        })
    }

    /// Searches as `who` and returns the page and the S2 values Sheets
    /// answered for that search, read from the fake's trace.
    fn search_answered(&mut self, who: &str) -> (String, Vec<String>) {
        let trace = self.fake.trace();
        trace.clear();
        let page = self.search(who);
        let answered = trace
            .events()
            .into_iter()
            .filter(|e| e.call == CallKind::S2)
            .flat_map(|e| match e.detail {
                CallDetail::S2 { pairs, .. } => pairs.into_iter().map(|p| p.result).collect(),
                _ => vec![],
            })
            .collect();
        (page, answered)
    }

    /// The Sheets section of the owner's sources page, as text.
    fn sources(&mut self) -> Result<String, Failure> {
        let app = self.app();
        let r = block_on(async {
            app.sign_in(PEOPLE[0]).await;
            app.get("/sources").await
        });
        let section = crate::rigs::page::of(&r).section(SHEETS_SECTION);
        ensure(
            r.status == 200 && section.is_some(),
            "GET /sources answers 200 with a Sheets section",
            format!("status {}", r.status),
        )?;
        Ok(section.unwrap_or_default())
    }

    fn db(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(self.dir.join(memoria::DB_FILE_NAME)).expect("db")
    }

    /// Sheets' S2 counter rows (one per asker) for the UTC day `days`
    /// days before today's.
    fn s2_rows(&self, days_before_today: i64) -> i64 {
        self.rows("breaker_s2", APP, TODAY_S / DAY_S - days_before_today)
    }

    /// Rows of `table` for `app` on the UTC day number `day`.
    fn rows(&self, table: &str, app: &str, day: i64) -> i64 {
        self.db()
            .query_row(
                &format!("SELECT count(*) FROM {table} WHERE app = ?1 AND day = ?2"),
                rusqlite::params![app, day],
                |r| r.get(0),
            )
            .expect("count")
    }

    /// Each of `who` searches once on each day in `days` and sees Sheets passages.
    fn baseline(&mut self, who: &[&str], days: &[i64]) -> Result<(), Failure> {
        for d in days {
            self.day(*d);
            for p in who {
                let page = self.search(p);
                ensure(
                    page.contains("tagledger"),
                    format!("{p} is shown a Sheets passage {d} days before today (VISIBLE)"),
                    "the page shows none",
                )?;
            }
        }
        Ok(())
    }
}

fn says(section: &str, want: &str) -> Result<(), Failure> {
    ensure(
        section.contains(want),
        format!("the sources page says {want:?}"),
        format!("it says {section:?}"),
    )
}

fn no_breaker_on(page: &str, who: &str) -> Result<(), Failure> {
    ensure(
        !page.contains("breaker") && !page.contains("anomaly"),
        format!("{who}'s results page carries no breaker notice"),
        "it does",
    )
}

/// A page's shape: its elements in order (name and class, no other
/// attribute: a form's CSRF token differs per session) and its text.
fn page_shape(html: &str) -> (Vec<String>, String) {
    let page = Page::parse(html);
    (page.shape(), page.text())
}

/// The results page before and after the breaker fired has the same
/// elements and the same text (§8.1: no notice on a reader's page).
fn same_page(before: &str, after: &str, whose: &str) -> Result<(), Failure> {
    let (b, a) = (page_shape(before), page_shape(after));
    let first_text_diff =
        b.1.chars()
            .zip(a.1.chars())
            .position(|(x, y)| x != y)
            .unwrap_or(b.1.len().min(a.1.len()));
    ensure(
        b == a,
        format!(
            "{whose}'s results page has the same elements and text before and after the breaker fired"
        ),
        format!(
            "elements {} then {}; text {} then {} chars, first difference at char {first_text_diff}",
            b.0.len(),
            a.0.len(),
            b.1.len(),
            a.1.len()
        ),
    )
}

/// Sheets removes each of `who` from every item, and each searches once,
/// at the rig's current time.
fn refuse_now(rig: &mut Rig, who: &[&str]) -> Result<(), Failure> {
    for p in who {
        rig.removed(p, true);
        let page = rig.search(p);
        ensure(
            !page.contains("tagledger") && Page::parse(&page).withheld().is_empty(),
            format!("{p}'s page omits every Sheets passage silently (NOT_VISIBLE)"),
            "it renders one or carries a withheld line",
        )?;
        no_breaker_on(&page, p)?;
    }
    Ok(())
}

/// Ana, Bea and Cai: the three baseline askers of most cases (§8.1's floor).
const TRIO: &[&str] = PEOPLE.as_slice().split_at(3).0;
/// Ana and Bea: one short of the floor.
const PAIR: &[&str] = PEOPLE.as_slice().split_at(2).0;
/// What the S3 breaker's fired line says of the window; the walks are
/// `const`, so the number is written here and held to the limit below.
const ALL_TODAYS_FETCHES: &str = "All 20 of today's fetches";
const _: () = assert!(S3_BREAKER_FETCHES_MIN == 20);
/// The breakers' no-anomaly words: never on the page while it cannot determine.
const NO_REFUSAL_ANOMALY: &str = "no refusal anomaly";
const NO_S3_ANOMALY: &str = "no S3 anomaly";
/// Counter tables (§8.1), one row per asker (S2) or per app (S3) and UTC day.
const S2_ROWS: &str = "breaker_s2";
const S3_ROWS: &str = "breaker_s3";

/// One step of a case's walk: an act on the world, or a claim about it
/// that fails the case. A case is a table of these read by [`walk`], so a
/// case is its row of steps and nothing else.
#[derive(Clone, Copy)]
enum Step {
    /// A fresh world in the case's scratch directory of this name; the
    /// walk's later steps act on it.
    World(&'static str),
    /// The clock at 09:00 UTC, this many days before today.
    Day(i64),
    /// The clock this many seconds after today's UTC midnight (before it
    /// when negative).
    FromMidnight(i64),
    /// The real sync (S1, then S3), fetching this many items when given.
    Sync(Option<usize>),
    /// A fresh world whose Sheets memoria syncs on the first of the days
    /// (days before today), and on each of them each person searches once
    /// and is shown a Sheets passage (VISIBLE): the baseline.
    History(&'static str, &'static [&'static str], &'static [i64]),
    /// Each person searches once now and is shown a Sheets passage.
    Shown(&'static [&'static str]),
    /// Sheets removes each person from every item and each searches once
    /// now: the page omits every Sheets passage silently (NOT_VISIBLE).
    Refused(&'static [&'static str]),
    /// [`Step::Refused`] at 09:00 UTC today.
    RefusedToday(&'static [&'static str]),
    /// Sheets answers every call 503 from now on.
    Outage,
    /// Each person searches once now: the page says Sheets did not answer.
    DidNotAnswer(&'static [&'static str]),
    /// `table` holds `n` rows for `app` on the UTC day `days` before today's.
    Rows {
        table: &'static str,
        app: &'static str,
        days: i64,
        n: i64,
        what: &'static str,
    },
    /// The Sheets section of the owner's sources page says each of `says`
    /// and none of `not`.
    Sources {
        says: &'static [&'static str],
        not: &'static [&'static str],
    },
    /// memoria dropped, then woken on the same data directory.
    Restart,
    /// A real sync seven days ago and a revision fetched three days ago:
    /// the S3 history and its prior success.
    S3History,
    /// A tally added to today's S3 counters through the store API `sync` uses.
    S3Counted {
        fetches: u64,
        not_found: u64,
        successes: u64,
    },
    /// An S2 tally added for each person at `app` through the store API
    /// the S2 path uses.
    S2Counted {
        app: &'static str,
        who: &'static [&'static str],
        visible: u64,
        not_visible: u64,
    },
    /// SQL run on the store's database, `?1` bound to the UTC day `days`
    /// before today's; it must change `rows` rows.
    Tamper {
        sql: &'static str,
        days: i64,
        rows: usize,
    },
    /// SQL statements run on the store's database as one batch.
    Delete(&'static str),
    /// The second sibling's refusal breaker is silent.
    OtherSiblingSilent,
    /// The person's results page carries no breaker notice.
    NoNotice(&'static str),
}

use Step::*;

/// Walks `steps` from their first world ([`Step::World`], [`Step::History`]); returns the last world
/// for a case that goes on in code.
fn walk(ctx: &mut Ctx, steps: &[Step]) -> Result<Rig, Failure> {
    let mut rig: Option<Rig> = None;
    for step in steps {
        match *step {
            World(name) => {
                rig = Some(Rig::new(ctx, name));
                continue;
            }
            History(name, who, days) => {
                let mut fresh = Rig::new(ctx, name);
                fresh.day(days[0]);
                act(&mut fresh, &Sync(Some(ITEMS)))?;
                fresh.baseline(who, days)?;
                rig = Some(fresh);
                continue;
            }
            _ => {}
        }
        let Some(rig) = rig.as_mut() else {
            return Err(Failure::new(
                "a walk begins with a world",
                "a step before it",
            ));
        };
        act(rig, step)?;
    }
    rig.ok_or_else(|| Failure::new("a walk begins with a world", "no world"))
}

/// One step on the rig.
fn act(rig: &mut Rig, step: &Step) -> Result<(), Failure> {
    let today = TODAY_S / DAY_S;
    match *step {
        World(_) | History(..) => Ok(()),
        Day(days) => {
            rig.day(days);
            Ok(())
        }
        FromMidnight(s) => {
            rig.at(today * DAY_S + s);
            Ok(())
        }
        Sync(fetched) => {
            let report = rig.sync();
            ensure(
                fetched.is_none_or(|n| report.fetched == n),
                format!("the sync fetched {fetched:?} items through S3"),
                format!("{report:?}"),
            )
        }

        Shown(who) => {
            for p in who {
                ensure(
                    rig.search(p).contains("tagledger"),
                    format!("{p} is shown a Sheets passage now (VISIBLE)"),
                    "the page shows none",
                )?;
            }
            Ok(())
        }
        Refused(who) => refuse_now(rig, who),
        RefusedToday(who) => {
            rig.day(0);
            refuse_now(rig, who)
        }
        Outage => {
            rig.fake.faults().set_outage(Some(Outage::Status(503)));
            Ok(())
        }
        DidNotAnswer(who) => {
            for p in who {
                let page = rig.search(p);
                let withheld = Page::parse(&page).withheld();
                ensure(
                    withheld.iter().any(|l| l.contains("did not answer")),
                    format!("{p}'s page says Sheets did not answer (the partial-page notice)"),
                    format!("withheld lines {withheld:?}"),
                )?;
                no_breaker_on(&page, p)?;
            }
            Ok(())
        }
        Rows {
            table,
            app,
            days,
            n,
            what,
        } => {
            let rows = rig.rows(table, app, today - days);
            ensure(
                rows == n,
                format!("{what}: {n} {table} rows for {app} {days} days before today"),
                format!("{rows} rows"),
            )
        }
        Sources { says: want, not } => {
            let s = rig.sources()?;
            for w in want {
                says(&s, w)?;
            }
            for n in not {
                ensure(
                    !s.contains(n),
                    format!("the sources page does not say {n:?}"),
                    "it does",
                )?;
            }
            Ok(())
        }
        Restart => {
            rig.sleep();
            rig.wake();
            Ok(())
        }
        S3History => s3_history(rig),
        S3Counted {
            fetches,
            not_found,
            successes,
        } => {
            s3_tally(rig, fetches, not_found, successes);
            Ok(())
        }
        S2Counted {
            app,
            who,
            visible,
            not_visible,
        } => {
            for p in who {
                s2_tally(rig, app, p, visible, not_visible);
            }
            Ok(())
        }
        Tamper { sql, days, rows } => {
            let changed = rig
                .db()
                .execute(sql, rusqlite::params![today - days])
                .expect("tamper");
            ensure(
                changed == rows,
                format!(
                    "{rows} counter rows {days} days before today were tampered with (presence)"
                ),
                format!("{changed} rows"),
            )
        }
        Delete(sql) => {
            rig.db().execute_batch(sql).expect("delete the counters");
            Ok(())
        }
        OtherSiblingSilent => {
            let state = other_app_state(rig);
            ensure(
                state == memoria::BreakerState::Silent,
                "Sheets' refusals leave the other sibling's refusal breaker silent",
                format!("{state:?}"),
            )
        }
        NoNotice(who) => {
            let page = rig.search(who);
            no_breaker_on(&page, who)
        }
    }
}

/// Sheets' S2 counter rows on the UTC day `days` before today's: `n`.
const fn s2_rows(days: i64, n: i64, what: &'static str) -> Step {
    Rows {
        table: S2_ROWS,
        app: APP,
        days,
        n,
        what,
    }
}

/// Sheets' S3 counter rows on the UTC day `days` before today's: `n`.
const fn s3_rows(days: i64, n: i64, what: &'static str) -> Step {
    Rows {
        table: S3_ROWS,
        app: APP,
        days,
        n,
        what,
    }
}

/// The sources page says each of `says` and none of `not`.
const fn sources(says: &'static [&'static str], not: &'static [&'static str]) -> Step {
    Sources { says, not }
}

/// Today's S3 tally.
const fn s3(fetches: u64, not_found: u64, successes: u64) -> Step {
    S3Counted {
        fetches,
        not_found,
        successes,
    }
}

/// The refusal breaker fired for three people.
const FIRED_FOR_THREE: Step = sources(&[FIRED, "3 people"], &[]);

fn silent_outage(ctx: &mut Ctx) -> Result<(), Failure> {
    walk(
        ctx,
        &[
            History("data3", TRIO, &[7, 1]),
            s2_rows(
                1,
                3,
                "the three baseline askers were counted in the baseline (presence)",
            ),
            Outage,
            Day(0),
            DidNotAnswer(TRIO),
            s2_rows(0, 0, "UNKNOWN wrote no window counter"),
            sources(&[NO_ANOMALY], &[]),
        ],
    )
    .map(drop)
}

fn silent_below_floor(ctx: &mut Ctx) -> Result<(), Failure> {
    walk(
        ctx,
        &[
            History("data4", PAIR, &[7, 1]),
            RefusedToday(PAIR),
            s2_rows(0, 2, "both refusals were counted today (presence)"),
            sources(&[NO_ANOMALY], &[]),
        ],
    )
    .map(drop)
}

fn cannot_determine(ctx: &mut Ctx) -> Result<(), Failure> {
    walk(
        ctx,
        &[
            // One day of history.
            History("data5", TRIO, &[1]),
            RefusedToday(TRIO),
            sources(&[CANNOT, "lack the baseline"], &[NO_REFUSAL_ANOMALY]),
            // A full history, then the counters deleted.
            History("data6", TRIO, &[7, 1]),
            RefusedToday(TRIO),
            FIRED_FOR_THREE,
            Delete("DELETE FROM breaker_s2; DELETE FROM breaker_since;"),
            sources(
                &[CANNOT, "lack both the window (today) and the baseline"],
                &[NO_REFUSAL_ANOMALY],
            ),
            // A full history, then today's rows tampered with.
            History("data7", TRIO, &[7, 1]),
            RefusedToday(TRIO),
            Tamper {
                sql: "UPDATE breaker_s2 SET counts = zeroblob(40) WHERE day = ?1",
                days: 0,
                rows: 3,
            },
            sources(&[CANNOT, "lack the window (today)"], &[NO_REFUSAL_ANOMALY]),
            // A full history, then yesterday's (a baseline day's) rows tampered
            // with: an unreadable baseline row is not read as zero, so the
            // breaker does not fire on the rest.
            History("data7b", TRIO, &[7, 1]),
            RefusedToday(TRIO),
            FIRED_FOR_THREE,
            Tamper {
                sql: "UPDATE breaker_s2 SET counts = zeroblob(40) WHERE day = ?1",
                days: 1,
                rows: 3,
            },
            sources(&[CANNOT, "lack the baseline"], &[NO_REFUSAL_ANOMALY, FIRED]),
        ],
    )
    .map(drop)
}

fn survives_restart(ctx: &mut Ctx) -> Result<(), Failure> {
    walk(
        ctx,
        &[
            History("data8", TRIO, &[7, 1]),
            Restart,
            Day(0),
            sources(&[NO_ANOMALY], &[]),
            Refused(TRIO),
            Restart,
            FIRED_FOR_THREE,
        ],
    )
    .map(drop)
}

fn s3_fires(ctx: &mut Ctx) -> Result<(), Failure> {
    walk(
        ctx,
        &[
            World("data9"),
            S3History,
            Restart,
            Day(0),
            s3(S3_BREAKER_FETCHES_MIN - 1, S3_BREAKER_FETCHES_MIN - 1, 0),
            sources(&[S3_SILENT], &[]),
            s3(1, 1, 0),
            sources(&[S3_FIRED, ALL_TODAYS_FETCHES], &[]),
            NoNotice(PEOPLE[0]),
        ],
    )
    .map(drop)
}

fn s3_silent(ctx: &mut Ctx) -> Result<(), Failure> {
    walk(
        ctx,
        &[
            // One success among today's fetches.
            World("data10"),
            S3History,
            Day(0),
            s3(S3_BREAKER_FETCHES_MIN, S3_BREAKER_FETCHES_MIN - 1, 1),
            sources(&[S3_SILENT], &[]),
            // No success in the 7 days before: only 404s were ever seen.
            World("data11"),
            Day(7),
            s3(5, 5, 0),
            Day(0),
            s3(S3_BREAKER_FETCHES_MIN, S3_BREAKER_FETCHES_MIN, 0),
            sources(&[S3_SILENT], &[]),
        ],
    )
    .map(drop)
}

fn s3_cannot_determine(ctx: &mut Ctx) -> Result<(), Failure> {
    walk(
        ctx,
        &[
            World("data12"),
            Day(0),
            Sync(Some(ITEMS)),
            sources(&[S3_CANNOT, "lack the baseline"], &[NO_S3_ANOMALY]),
            World("data13"),
            S3History,
            Day(0),
            s3(S3_BREAKER_FETCHES_MIN, S3_BREAKER_FETCHES_MIN, 0),
            sources(&[S3_FIRED], &[]),
            Delete("DELETE FROM breaker_s3; DELETE FROM breaker_since;"),
            sources(
                &[S3_CANNOT, "lack both the window (today) and the baseline"],
                &[NO_S3_ANOMALY],
            ),
        ],
    )
    .map(drop)
}

fn baseline_seven_days(ctx: &mut Ctx) -> Result<(), Failure> {
    walk(
        ctx,
        &[
            // Shown Sheets only on the baseline's first day, W-7.
            History("data16", TRIO, &[7]),
            s2_rows(
                7,
                3,
                "the three askers were counted seven days before today (presence)",
            ),
            RefusedToday(TRIO),
            FIRED_FOR_THREE,
            // Six days of history are short of the baseline.
            History("data17", TRIO, &[6, 1]),
            RefusedToday(TRIO),
            sources(&[CANNOT, "lack the baseline"], &[NO_REFUSAL_ANOMALY]),
        ],
    )
    .map(drop)
}

fn window_utc_day(ctx: &mut Ctx) -> Result<(), Failure> {
    walk(
        ctx,
        &[
            History("data18", TRIO, &[7]),
            // Shown Sheets at 23:30 UTC yesterday: the baseline's last day.
            FromMidnight(-HOUR_S / 2),
            Shown(TRIO),
            // Refused at 00:30 UTC today: the window.
            FromMidnight(HOUR_S / 2),
            Refused(TRIO),
            s2_rows(
                0,
                3,
                "the refusals at 00:30 UTC are counted on today's UTC day (unix seconds / 86400)",
            ),
            s2_rows(
                1,
                3,
                "the passages at 23:30 UTC are counted on yesterday's UTC day",
            ),
            FIRED_FOR_THREE,
            // Still today at 23:30 UTC.
            FromMidnight(DAY_S - HOUR_S / 2),
            sources(&[FIRED], &[]),
        ],
    )
    .map(drop)
}

fn kept_eight_days(ctx: &mut Ctx) -> Result<(), Failure> {
    walk(
        ctx,
        &[
            History("data19", TRIO, &[8, 7]),
            Day(7),
            s3(1, 0, 1),
            s2_rows(
                8,
                3,
                "S2 counters were written eight days before today (presence)",
            ),
            s3_rows(
                8,
                1,
                "S3 counters were written eight days before today (presence)",
            ),
            s2_rows(
                7,
                3,
                "S2 counters were written seven days before today (presence)",
            ),
            s3_rows(
                7,
                1,
                "S3 counters were written seven days before today (presence)",
            ),
            RefusedToday(TRIO),
            s2_rows(
                8,
                0,
                "today's write pruned the S2 counters older than the 8 retained UTC days",
            ),
            s3_rows(
                8,
                0,
                "today's write pruned the S3 counters older than the 8 retained UTC days",
            ),
            s2_rows(
                7,
                3,
                "the baseline's first day, seven days before today, is kept (S2)",
            ),
            s3_rows(
                7,
                1,
                "the baseline's first day, seven days before today, is kept (S3)",
            ),
            sources(&[FIRED], &[]),
        ],
    )
    .map(drop)
}

fn per_sibling(ctx: &mut Ctx) -> Result<(), Failure> {
    walk(
        ctx,
        &[
            History("data20", TRIO, &[7, 1]),
            // A second sibling: the same three are shown its passages on the same
            // days, and again today, while Sheets refuses them.
            Day(7),
            OTHER_SHOWN,
            Day(1),
            OTHER_SHOWN,
            Day(0),
            OTHER_SHOWN,
            Refused(TRIO),
            Rows {
                table: S2_ROWS,
                app: OTHER_APP,
                days: 0,
                n: 3,
                what: "the other sibling holds today's counters for the three (presence)",
            },
            s2_rows(
                0,
                3,
                "Sheets holds today's counters for the three (presence)",
            ),
            FIRED_FOR_THREE,
            OtherSiblingSilent,
        ],
    )
    .map(drop)
}

/// The trio shown two of the second sibling's passages each.
const OTHER_SHOWN: Step = S2Counted {
    app: OTHER_APP,
    who: TRIO,
    visible: 2,
    not_visible: 0,
};

const S3_FIRED: &str = "S3 breaker: fired.";
const S3_SILENT: &str = "S3 breaker: no S3 anomaly.";
const S3_CANNOT: &str = "S3 breaker: cannot determine.";

fn fires(ctx: &mut Ctx) -> Result<(), Failure> {
    let mut rig = walk(ctx, &[History("data1", TRIO, &[7, 1])])?;
    let trio = TRIO;
    let before = rig
        .app()
        .state()
        .instance()
        .lock()
        .expect("lock")
        .store()
        .counts();
    // Before the breaker fires: Dan (shown Sheets, never refused) and Ana
    // (refused, one of three) search; their pages are the reference.
    let dan = PEOPLE[3];
    rig.day(0);
    let dan_before = rig.search(dan);
    rig.day(0);
    refuse_now(&mut rig, &trio[..1])?;
    let ana_before = rig.search(trio[0]);
    says(&rig.sources()?, NO_ANOMALY)?;
    refuse_now(&mut rig, &trio[1..])?;
    ensure(
        rig.s2_rows(0) == 4,
        "four window counter rows were written on the S2 path (three refused, Dan shown)",
        format!("{} rows", rig.s2_rows(0)),
    )?;
    let s = rig.sources()?;
    says(&s, FIRED)?;
    says(&s, "3 people")?;
    says(&s, "Nothing was purged.")?;
    // After it fired, the same searches render the same pages: no line,
    // notice or element anywhere on a results page moved with the breaker.
    same_page(&dan_before, &rig.search(dan), "Dan (shown Sheets)")?;
    same_page(&ana_before, &rig.search(trio[0]), "Ana (refused)")?;
    let after = rig
        .app()
        .state()
        .instance()
        .lock()
        .expect("lock")
        .store()
        .counts();
    ensure(
        before.is_ok() && before.as_ref().ok() == after.as_ref().ok(),
        "the breaker purged nothing: the same documents and chunks are held",
        format!("before {before:?}, after {after:?}"),
    )
}

fn fires_from_document_pages(ctx: &mut Ctx) -> Result<(), Failure> {
    let mut rig = walk(ctx, &[History("data-document-pages", TRIO, &[7, 1])])?;
    let trio = TRIO;
    let path = format!("/documents/{}", rig.document_id(0)?);
    // Presence: on the last baseline day the document page renders for each.
    rig.day(1);
    for p in trio {
        let (status, body) = rig.open(p, &path);
        ensure(
            status == 200 && body.contains("tagledger0"),
            format!("{p} is shown the Sheets document page a day before today"),
            format!("status {status}"),
        )?;
    }
    rig.day(0);
    ensure(
        rig.s2_rows(0) == 0,
        "no counter row for today before anyone opens a page today",
        format!("{} rows", rig.s2_rows(0)),
    )?;
    let bystander = PEOPLE[3];
    for p in trio {
        rig.removed(p, true);
        let (status, body) = rig.open(p, &path);
        ensure(
            status == 404
                && !body.contains("tagledger")
                && Page::parse(&body).withheld().is_empty(),
            format!("{p}'s document page is the plain 404 (NOT_VISIBLE)"),
            format!(
                "status {status}, withheld {:?}",
                Page::parse(&body).withheld()
            ),
        )?;
        // The ruling is this reader's: Dee, never removed, opens the same
        // page just after and is shown it (a page that asked S2 as anyone
        // else would refuse her too, or show the removed reader the page).
        let (status, body) = rig.open(bystander, &path);
        ensure(
            status == 200 && body.contains("tagledger0"),
            format!("{bystander}, never removed, is shown the page {p} was just refused"),
            format!("status {status}"),
        )?;
    }
    ensure(
        rig.s2_rows(0) == 4,
        "the document pages wrote today's counter rows on the S2 path: the three refused readers' and Dee's",
        format!("{} rows", rig.s2_rows(0)),
    )?;
    let s = rig.sources()?;
    says(&s, FIRED)?;
    says(&s, "3 people")
}

fn silent_docs_only(ctx: &mut Ctx) -> Result<(), Failure> {
    let mut rig = walk(ctx, &[History("data2", TRIO.split_at(1).0, &[7, 1])])?;
    let members = &PEOPLE[3..6];
    for p in members {
        rig.removed(p, true);
    }
    // They asked in the baseline too, and were refused: askers, but not
    // baseline askers (never shown a passage).
    for d in [7, 1] {
        rig.day(d);
        for p in members {
            let (page, answered) = rig.search_answered(p);
            ensure(
                !page.contains("tagledger")
                    && !answered.is_empty()
                    && answered.iter().all(|a| a == "NOT_VISIBLE"),
                format!("Sheets answers {p} only NOT_VISIBLE {d} days before today"),
                format!("answers {answered:?}"),
            )?;
        }
    }
    ensure(
        rig.s2_rows(1) == 4,
        "the baseline refusals were counted (presence): Ana and the three members",
        format!("{} rows", rig.s2_rows(1)),
    )?;
    rig.day(0);
    for _ in 0..50 {
        for p in members {
            let page = rig.search(p);
            ensure(
                !page.contains("tagledger"),
                format!("Sheets answers NOT_VISIBLE to {p}"),
                "a passage rendered",
            )?;
            no_breaker_on(&page, p)?;
        }
    }
    ensure(
        rig.s2_rows(0) == 3,
        "the three Docs-only members' refusals were counted today (presence)",
        format!("{} rows", rig.s2_rows(0)),
    )?;
    let s = rig.sources()?;
    says(&s, NO_ANOMALY)
}

/// `p` searches when Sheets shows them `tagledger1` and not `tagledger0`:
/// Sheets must answer both VISIBLE and NOT_VISIBLE (`when`), and the page
/// show only the visible passages. Returns the page.
fn asks_mixed(rig: &mut Rig, p: &str, when: &str) -> Result<String, Failure> {
    let (page, answered) = rig.search_answered(p);
    ensure(
        answered.iter().any(|a| a == "VISIBLE")
            && answered.iter().any(|a| a == "NOT_VISIBLE")
            && page.contains("tagledger1")
            && !page.contains("tagledger0"),
        format!(
            "Sheets answers {p} both VISIBLE and NOT_VISIBLE {when}, and the page shows only the visible passages"
        ),
        format!("answers {answered:?}"),
    )?;
    Ok(page)
}

fn silent_visible_today(ctx: &mut Ctx) -> Result<(), Failure> {
    let mut rig = walk(ctx, &[History("data14", TRIO, &[7, 1])])?;
    let trio = TRIO;
    rig.day(0);
    for p in trio {
        rig.removed_from(0, p, true);
        let page = asks_mixed(&mut rig, p, "today")?;
        no_breaker_on(&page, p)?;
    }
    ensure(
        rig.s2_rows(0) == 3,
        "the three baseline askers' mixed answers were counted today (presence)",
        format!("{} rows", rig.s2_rows(0)),
    )?;
    says(&rig.sources()?, NO_ANOMALY)
}

fn silent_refused_in_the_baseline(ctx: &mut Ctx) -> Result<(), Failure> {
    let mut rig = walk(ctx, &[History("data22", TRIO, &[7])])?;
    rig.day(1);
    for p in TRIO {
        rig.removed_from(0, p, true);
        asks_mixed(&mut rig, p, "a day before today")?;
        rig.removed_from(0, p, false);
    }
    ensure(
        rig.s2_rows(1) == 3,
        "the three baseline askers' refusals were counted a day before today (presence)",
        format!("{} rows", rig.s2_rows(1)),
    )?;
    rig.day(0);
    says(&rig.sources()?, NO_ANOMALY)
}

fn silent_stale_or_ahead(ctx: &mut Ctx) -> Result<(), Failure> {
    let mut rig = walk(ctx, &[History("data15", TRIO, &[7])])?;
    let trio = TRIO;
    let first: Vec<String> = rig.fake.model().with(|m| {
        (0..ITEMS)
            .map(|i| {
                m.item(&format!("sh-{i}"))
                    .expect("an item")
                    .current()
                    .revision
                    .clone()
            })
            .collect()
    });
    rig.day(1);
    rig.revise_all(&tagged_body(&rig.query, "tagledgerb"));
    let r = rig.sync();
    ensure(
        r.fetched == ITEMS,
        "yesterday's sync fetched every revised item",
        format!("{r:?}"),
    )?;
    rig.baseline(trio, &[1])?;
    ensure(
        rig.s2_rows(7) == 3 && rig.s2_rows(1) == 3,
        "the three baseline askers were counted on both baseline days (presence)",
        format!("{} and {} rows", rig.s2_rows(7), rig.s2_rows(1)),
    )?;
    rig.day(0);
    // Ana and Bea: Sheets moved past memoria's revisions (STALE).
    for p in &trio[..2] {
        rig.revise_all(&tagged_body(&rig.query, "tagledgerc"));
        let (page, answered) = rig.search_answered(p);
        ensure(
            !answered.is_empty() && answered.iter().all(|a| a == "STALE"),
            format!("Sheets answers {p} only STALE today"),
            format!("answers {answered:?}"),
        )?;
        no_breaker_on(&page, p)?;
    }
    // Cai: Sheets was restored behind memoria's revisions (AHEAD).
    rig.fake.model().with(|m| {
        for (i, rev) in first.iter().enumerate() {
            m.restore_item_to(&format!("sh-{i}"), rev).expect("restore");
        }
    });
    let (page, answered) = rig.search_answered(trio[2]);
    ensure(
        !answered.is_empty() && answered.iter().all(|a| a == "AHEAD"),
        format!("Sheets answers {} only AHEAD today", trio[2]),
        format!("answers {answered:?}"),
    )?;
    no_breaker_on(&page, trio[2])?;
    ensure(
        rig.s2_rows(0) == 0,
        "STALE and AHEAD wrote no window counter (neither is NOT_VISIBLE)",
        format!("{} rows", rig.s2_rows(0)),
    )?;
    says(&rig.sources()?, NO_ANOMALY)
}

fn s3_silent_outage(ctx: &mut Ctx) -> Result<(), Failure> {
    let mut rig = walk(ctx, &[World("data21"), S3History, Day(0)])?;
    rig.revise_all("A ledger body revised today.");
    rig.s3_down.store(true, Ordering::SeqCst);
    let mut failed = 0;
    while failed < S3_BREAKER_FETCHES_MIN as usize {
        let r = rig.sync();
        ensure(
            r.fetch_failed == ITEMS && r.not_found == 0 && r.fetched == 0,
            "each sync today reads the feed and every S3 fetch fails (503), none is a 404",
            format!("{r:?}"),
        )?;
        failed += r.fetch_failed;
    }
    ensure(
        rig.rows("breaker_s3", APP, TODAY_S / DAY_S) == 1,
        "today's S3 counters were written by the failed fetches (presence)",
        "no row for today",
    )?;
    let s = rig.sources()?;
    says(&s, S3_SILENT)?;
    rig.s3_down.store(false, Ordering::SeqCst);
    let r = rig.sync();
    ensure(
        r.fetched == ITEMS,
        "once S3 answers again, the same sync fetches every item",
        format!("{r:?}"),
    )
}

/// Adds a tally to today's S3 counters through the store API `sync` uses.
fn s3_tally(rig: &mut Rig, fetches: u64, not_found: u64, successes: u64) {
    let now = rig.clock.now_unix_s();
    let app = rig.app();
    let instance = app.state().instance();
    let guard = instance.lock().expect("lock");
    guard
        .store()
        .record_s3_tally(
            APP,
            S3Tally {
                fetches,
                not_found,
                successes,
            },
            now,
        )
        .expect("tally");
}

/// A real sync seven and three days ago: the S3 history and a prior success.
fn s3_history(rig: &mut Rig) -> Result<(), Failure> {
    rig.day(7);
    let r = rig.sync();
    ensure(
        r.fetched == ITEMS,
        "the first sync fetched every item through S3 (a success)",
        format!("{r:?}"),
    )?;
    rig.day(3);
    rig.fake.model().with(|m| {
        m.revise("sh-0", "Ledger", "A revised ledger body.")
            .expect("revise")
    });
    let r = rig.sync();
    ensure(
        r.fetched == 1,
        "a later sync fetched the revision (a success three days ago)",
        format!("{r:?}"),
    )
}

/// Adds one S2 tally for `who` at `app` through the store API the S2 path uses.
fn s2_tally(rig: &mut Rig, app: &str, who: &str, visible: u64, not_visible: u64) {
    let now = rig.clock.now_unix_s();
    let state = rig.app().state();
    let instance = state.instance();
    let guard = instance.lock().expect("lock");
    guard
        .store()
        .record_s2_tally(
            app,
            who,
            S2Tally {
                visible,
                not_visible,
            },
            now,
        )
        .expect("tally");
}

fn other_app_state(rig: &mut Rig) -> memoria::BreakerState {
    let now = rig.clock.now_unix_s();
    let state = rig.app().state();
    let instance = state.instance();
    let guard = instance.lock().expect("lock");
    guard
        .store()
        .refusal_breaker(OTHER_APP, now)
        .expect("the other sibling's state")
}
