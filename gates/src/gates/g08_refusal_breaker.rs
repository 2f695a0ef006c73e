//! Gate 8 (§10, §8.1): the refusal breaker at §8.1's predicate, its S3 twin, and "cannot determine".
//!
//! In-process, over the real path: memoria's web app ([`TestApp`]) with a
//! clock the gate moves across UTC days, ruling every search through S2 to
//! a fake Sheets ([`FakeSibling`], its real grants model) reached over an
//! in-memory duplex stream. The counters are written by the S2 call path
//! the results page runs, and read only by the owner's `GET /sources`.
//! Each silent case first proves the counters it relies on were written
//! (presence before absence). The S3 cases use the real sync for the prior
//! success and the store's S3 tally API, the one `sync` itself calls, for
//! the window's 404s.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use memoria::breaker::{S3_BREAKER_FETCHES_MIN, S3Tally, SECONDS_PER_DAY, utc_day};
use memoria::clock::Clock as MemoriaClock;
use memoria::seal::Dek;
use memoria::sibling::transport::{Connection, DialFuture, Dialer};
use memoria::sibling::{SiblingClient, SiblingConfig};
use memoria::testkit::TestApp;
use memoria_simulator::fake::{
    Clock, FakeConfig, FakeSibling, ModelHandle, Outage, Rung, SubjectKind, Trace,
};

use crate::sim::{tagged_body, withheld_lines};
use crate::support::{block_on, dek};
use crate::{Case, Ctx, Failure, Gate, ensure};

/// Gate 8.
pub static GATE: Gate = Gate {
    id: "8",
    title: "Circuit breakers at §8.1's predicate",
    sections: &["§10", "§8.1", "§3.2"],
    requirement: "The refusal breaker fires when at least 3 baseline askers (VISIBLE in the 7 UTC days before today) each have VISIBLE = 0 and NOT_VISIBLE >= 1 today, on the owner's sources page only, purging nothing; it stays silent for Docs-only members, a 24-hour outage and 2 refused baseline askers; missing, unreadable or short counters say \"cannot determine\" and name the window or the baseline; the counters survive a restart. The S3 breaker gets the same treatment at 20 fetches, all 404, with one prior success.",
    cases: &[
        Case {
            id: "8/fires",
            desc: "Ana, Bea and Cai are shown Sheets passages on two baseline days; today Sheets removes them and each searches once: the sources page says the refusal breaker fired for 3 people, no results page mentions it, and nothing was purged.",
            run: fires,
        },
        Case {
            id: "8/silent-docs-only-members",
            desc: "Ana uses Sheets in the baseline and does not search today; Dan, Eli and Fay, never shown a Sheets passage, search 50 times each and Sheets answers NOT_VISIBLE to every pair: the counters hold their refusals and the breaker says no refusal anomaly.",
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
            id: "8/cannot-determine",
            desc: "One day of history says cannot determine and names the baseline; deleting the durable counters names the window and the baseline; a tampered window row names the window; none says no anomaly, none is silent.",
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
const NO_ANOMALY: &str = "Refusal breaker: no refusal anomaly.";
const FIRED: &str = "Refusal breaker: fired.";
const CANNOT: &str = "Refusal breaker: cannot determine.";

/// A memoria clock the gate moves by hand, in Unix seconds.
#[derive(Debug, Clone)]
struct HandClock(Arc<AtomicI64>);

impl MemoriaClock for HandClock {
    fn now_unix_s(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// Dials a fake's router over an in-memory duplex stream.
struct DuplexDialer(BTreeMap<String, FakeSibling>);

impl Dialer for DuplexDialer {
    fn dial<'a>(&'a self, host: &'a str, _port: u16) -> DialFuture<'a> {
        Box::pin(async move {
            let router = self.0.get(host).map(FakeSibling::router).ok_or_else(|| {
                std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "no such host")
            })?;
            let (client, server) = tokio::io::duplex(256 * 1024);
            tokio::spawn(memoria_simulator::net::serve_connection(server, router));
            Ok(Box::new(client) as Box<dyn Connection>)
        })
    }
}

/// One world: a data directory, a DEK, a hand clock, a fake Sheets, and
/// memoria awake over them.
struct Rig {
    dir: std::path::PathBuf,
    dek: Dek,
    clock: Arc<AtomicI64>,
    fake: FakeSibling,
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
            clock: Arc::new(AtomicI64::new(TODAY_S)),
            fake,
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
            Arc::new(DuplexDialer(BTreeMap::from([(
                HOST.to_string(),
                self.fake.clone(),
            )]))),
        )
        .expect("a same-team sibling");
        let app = TestApp::with_clock(
            &self.dir,
            &self.dek,
            &PEOPLE.join(","),
            Arc::new(HandClock(self.clock.clone())),
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
        self.clock.store(
            TODAY_S - days_before_today * SECONDS_PER_DAY,
            Ordering::SeqCst,
        );
    }

    /// Polls Sheets' S1 and fetches through S3: the real sync.
    fn sync(&mut self) -> memoria::sibling::sync::SyncReport {
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

    /// Sheets removes (or restores) `who` from every item.
    fn removed(&self, who: &str, on: bool) {
        self.fake.model().with(|m| {
            for i in 0..ITEMS {
                m.set_removed(&format!("sh-{i}"), who, on).expect("removed");
            }
        });
    }

    /// The Sheets section of the owner's sources page, as text.
    fn sources(&mut self) -> Result<String, Failure> {
        let app = self.app();
        let r = block_on(async {
            app.sign_in(PEOPLE[0]).await;
            app.get("/sources").await
        });
        ensure(
            r.status == 200 && r.body.contains("data-app=\"Sheets\""),
            "GET /sources answers 200 with a Sheets section",
            format!("status {}", r.status),
        )?;
        let at = r.body.find("data-app=\"Sheets\"").unwrap_or(0);
        let rest = &r.body[at..];
        Ok(rest[..rest.find("</section>").unwrap_or(rest.len())].to_string())
    }

    fn db(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(self.dir.join(memoria::store::DB_FILE_NAME)).expect("db")
    }

    /// Counter rows for the given UTC day: (rows, distinct askers).
    fn s2_rows(&self, days_before_today: i64) -> i64 {
        let day = utc_day(TODAY_S) - days_before_today;
        self.db()
            .query_row(
                "SELECT count(*) FROM breaker_s2 WHERE app = ?1 AND day = ?2",
                rusqlite::params![APP, day],
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
        format!("it says {:?}", strip_tags(section)),
    )
}

fn strip_tags(html: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in html.chars() {
        match c {
            '<' => inside = true,
            '>' => {
                inside = false;
                out.push(' ');
            }
            c if !inside => out.push(c),
            _ => {}
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn no_breaker_on(page: &str, who: &str) -> Result<(), Failure> {
    ensure(
        !page.contains("breaker") && !page.contains("anomaly"),
        format!("{who}'s results page carries no breaker notice"),
        "it does",
    )
}

fn refuse_today(rig: &mut Rig, who: &[&str]) -> Result<(), Failure> {
    rig.day(0);
    for p in who {
        rig.removed(p, true);
        let page = rig.search(p);
        ensure(
            !page.contains("tagledger") && withheld_lines(&page).is_empty(),
            format!("{p}'s page omits every Sheets passage silently (NOT_VISIBLE)"),
            "it renders one or carries a withheld line",
        )?;
        no_breaker_on(&page, p)?;
    }
    Ok(())
}

fn fires(ctx: &mut Ctx) -> Result<(), Failure> {
    let mut rig = Rig::new(ctx, "data1");
    rig.day(7);
    let report = rig.sync();
    ensure(
        report.fetched == ITEMS,
        "the sync ingests the Sheets items",
        format!("{report:?}"),
    )?;
    let trio = &PEOPLE[..3];
    rig.baseline(trio, &[7, 1])?;
    let before = rig
        .app()
        .state()
        .instance()
        .lock()
        .expect("lock")
        .store()
        .counts();
    refuse_today(&mut rig, trio)?;
    ensure(
        rig.s2_rows(0) == 3,
        "three window counter rows were written on the S2 path",
        format!("{} rows", rig.s2_rows(0)),
    )?;
    let s = rig.sources()?;
    says(&s, FIRED)?;
    says(&s, "3 people")?;
    says(&s, "Nothing was purged.")?;
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

fn silent_docs_only(ctx: &mut Ctx) -> Result<(), Failure> {
    let mut rig = Rig::new(ctx, "data2");
    rig.day(7);
    rig.sync();
    rig.baseline(&[PEOPLE[0]], &[7, 1])?;
    rig.day(0);
    let members = &PEOPLE[3..6];
    for p in members {
        rig.removed(p, true);
    }
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

fn silent_outage(ctx: &mut Ctx) -> Result<(), Failure> {
    let mut rig = Rig::new(ctx, "data3");
    rig.day(7);
    rig.sync();
    let trio = &PEOPLE[..3];
    rig.baseline(trio, &[7, 1])?;
    ensure(
        rig.s2_rows(1) == 3,
        "the three baseline askers were counted in the baseline (presence)",
        format!("{} rows", rig.s2_rows(1)),
    )?;
    rig.fake.faults().set_outage(Some(Outage::Status(503)));
    rig.day(0);
    for p in trio {
        let page = rig.search(p);
        ensure(
            withheld_lines(&page)
                .iter()
                .any(|l| l.contains("did not answer")),
            format!("{p}'s page says Sheets did not answer (the partial-page notice)"),
            format!("withheld lines {:?}", withheld_lines(&page)),
        )?;
        no_breaker_on(&page, p)?;
    }
    ensure(
        rig.s2_rows(0) == 0,
        "UNKNOWN wrote no window counter",
        format!("{} rows", rig.s2_rows(0)),
    )?;
    let s = rig.sources()?;
    says(&s, NO_ANOMALY)
}

fn silent_below_floor(ctx: &mut Ctx) -> Result<(), Failure> {
    let mut rig = Rig::new(ctx, "data4");
    rig.day(7);
    rig.sync();
    let pair = &PEOPLE[..2];
    rig.baseline(pair, &[7, 1])?;
    refuse_today(&mut rig, pair)?;
    ensure(
        rig.s2_rows(0) == 2,
        "both refusals were counted today (presence)",
        format!("{} rows", rig.s2_rows(0)),
    )?;
    let s = rig.sources()?;
    says(&s, NO_ANOMALY)
}

/// The breaker's own line never says no anomaly while it cannot determine.
fn never_no_anomaly(s: &str, breaker: &str) -> Result<(), Failure> {
    let words = if breaker == "s3" {
        "no S3 anomaly"
    } else {
        "no refusal anomaly"
    };
    ensure(
        !s.contains(words),
        format!("the sources page never says {words:?} when it cannot determine"),
        "it does",
    )
}

fn cannot_determine(ctx: &mut Ctx) -> Result<(), Failure> {
    let mut rig = Rig::new(ctx, "data5");
    rig.day(1);
    rig.sync();
    let trio = &PEOPLE[..3];
    rig.baseline(trio, &[1])?;
    refuse_today(&mut rig, trio)?;
    let s = rig.sources()?;
    says(&s, CANNOT)?;
    says(&s, "lack the baseline")?;
    never_no_anomaly(&s, "refusal")?;

    // A full history, then the counters deleted.
    let mut rig = Rig::new(ctx, "data6");
    rig.day(7);
    rig.sync();
    rig.baseline(trio, &[7, 1])?;
    refuse_today(&mut rig, trio)?;
    says(&rig.sources()?, FIRED)?;
    rig.db()
        .execute_batch("DELETE FROM breaker_s2; DELETE FROM breaker_since;")
        .expect("delete the counters");
    let s = rig.sources()?;
    says(&s, CANNOT)?;
    says(&s, "lack both the window (today) and the baseline")?;
    never_no_anomaly(&s, "refusal")?;

    // A full history, then today's row tampered with.
    let mut rig = Rig::new(ctx, "data7");
    rig.day(7);
    rig.sync();
    rig.baseline(trio, &[7, 1])?;
    refuse_today(&mut rig, trio)?;
    let today = utc_day(TODAY_S);
    rig.db()
        .execute(
            "UPDATE breaker_s2 SET counts = zeroblob(40) WHERE day = ?1",
            rusqlite::params![today],
        )
        .expect("tamper");
    let s = rig.sources()?;
    says(&s, CANNOT)?;
    says(&s, "lack the window (today)")?;
    never_no_anomaly(&s, "refusal")
}

fn survives_restart(ctx: &mut Ctx) -> Result<(), Failure> {
    let mut rig = Rig::new(ctx, "data8");
    rig.day(7);
    rig.sync();
    let trio = &PEOPLE[..3];
    rig.baseline(trio, &[7, 1])?;
    rig.sleep();
    rig.wake();
    rig.day(0);
    says(&rig.sources()?, NO_ANOMALY)?;
    refuse_today(&mut rig, trio)?;
    rig.sleep();
    rig.wake();
    let s = rig.sources()?;
    says(&s, FIRED)?;
    says(&s, "3 people")
}

const S3_FIRED: &str = "S3 breaker: fired.";
const S3_SILENT: &str = "S3 breaker: no S3 anomaly.";
const S3_CANNOT: &str = "S3 breaker: cannot determine.";

/// Adds a tally to today's S3 counters through the store API `sync` uses.
fn s3_tally(rig: &mut Rig, fetches: u64, not_found: u64, successes: u64) {
    let now = rig.clock.load(Ordering::SeqCst);
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

fn s3_fires(ctx: &mut Ctx) -> Result<(), Failure> {
    let mut rig = Rig::new(ctx, "data9");
    s3_history(&mut rig)?;
    rig.sleep();
    rig.wake();
    rig.day(0);
    s3_tally(
        &mut rig,
        S3_BREAKER_FETCHES_MIN - 1,
        S3_BREAKER_FETCHES_MIN - 1,
        0,
    );
    says(&rig.sources()?, S3_SILENT)?;
    s3_tally(&mut rig, 1, 1, 0);
    let s = rig.sources()?;
    says(&s, S3_FIRED)?;
    says(
        &s,
        &format!("All {S3_BREAKER_FETCHES_MIN} of today's fetches"),
    )?;
    let page = rig.search(PEOPLE[0]);
    no_breaker_on(&page, PEOPLE[0])
}

fn s3_silent(ctx: &mut Ctx) -> Result<(), Failure> {
    let mut rig = Rig::new(ctx, "data10");
    s3_history(&mut rig)?;
    rig.day(0);
    s3_tally(
        &mut rig,
        S3_BREAKER_FETCHES_MIN,
        S3_BREAKER_FETCHES_MIN - 1,
        1,
    );
    says(&rig.sources()?, S3_SILENT)?;

    // No success in the 7 days before: only 404s were ever seen.
    let mut rig = Rig::new(ctx, "data11");
    rig.day(7);
    s3_tally(&mut rig, 5, 5, 0);
    rig.day(0);
    s3_tally(&mut rig, S3_BREAKER_FETCHES_MIN, S3_BREAKER_FETCHES_MIN, 0);
    says(&rig.sources()?, S3_SILENT)
}

fn s3_cannot_determine(ctx: &mut Ctx) -> Result<(), Failure> {
    let mut rig = Rig::new(ctx, "data12");
    rig.day(0);
    let r = rig.sync();
    ensure(
        r.fetched == ITEMS,
        "today's first sync fetched every item (counters written)",
        format!("{r:?}"),
    )?;
    let s = rig.sources()?;
    says(&s, S3_CANNOT)?;
    says(&s, "lack the baseline")?;
    never_no_anomaly(&s, "s3")?;

    let mut rig = Rig::new(ctx, "data13");
    s3_history(&mut rig)?;
    rig.day(0);
    s3_tally(&mut rig, S3_BREAKER_FETCHES_MIN, S3_BREAKER_FETCHES_MIN, 0);
    says(&rig.sources()?, S3_FIRED)?;
    rig.db()
        .execute_batch("DELETE FROM breaker_s3; DELETE FROM breaker_since;")
        .expect("delete the counters");
    let s = rig.sources()?;
    says(&s, S3_CANNOT)?;
    says(&s, "lack both the window (today) and the baseline")?;
    never_no_anomaly(&s, "s3")
}
