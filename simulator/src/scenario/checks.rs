//! Checks: the assertions a scenario states, judged against what the run saw; a results page is read into counts and notice lines first, with the workspace's page reader.
//!
//! A [`Check`] holds what was expected, what was seen and whether it held.
//! A page is summarised ([`summarise_page`]) without its content: results
//! per app, withheld, reconciling and freshness lines, "No passage matched.".
//! [`page_checks`] judges a query's page against its `expect`; [`expect`]
//! judges the `expect-*` events: calls in the trace, items held, the
//! re-announce mark, the owner's sources page.

use std::collections::BTreeMap;

use memoria_page::Page;
use serde::Serialize;

use super::parse::{Event, PageExpect};
use super::replay::address;
use super::validate::call_kind;
use crate::fake::trace::Trace;
use crate::world::{Memoria, TEAM};

/// A page, by counts and notice lines only.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PageSummary {
    /// HTTP status.
    pub status: u16,
    /// Simulated ms the page took.
    pub elapsed_ms: u64,
    /// Results on the page.
    pub results: usize,
    /// Results per app.
    pub by_app: BTreeMap<String, usize>,
    /// Withheld lines.
    pub withheld: Vec<String>,
    /// Reconciling lines.
    pub reconciling: Vec<String>,
    /// Freshness lines: a sibling whose content may be behind (§8.1).
    pub freshness: Vec<String>,
    /// Whether it said "No passage matched.".
    pub says_no_match: bool,
    /// Derived artefacts shown (§5.2).
    pub artefacts: usize,
    /// Lines withholding derived artefacts (§5.2).
    pub artefacts_withheld: Vec<String>,
    /// The numeric answer's outcome (`VALUE`, `MIXED_UNITS`,
    /// `REFORMATTED`, ...; §8.7), when the page showed one.
    pub numeric: Option<String>,
}

/// One checked expectation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// What was expected.
    pub expected: String,
    /// What was seen.
    pub actual: String,
    /// Whether it held.
    pub ok: bool,
}

/// The text of each line of `page` that names an app with class `class`.
fn app_line_texts(page: &Page, class: &str) -> Vec<String> {
    page.app_lines(class).into_iter().map(|l| l.text).collect()
}

/// Reads a results page into counts and notice lines, with the workspace's
/// page reader (`memoria-page`).
pub fn summarise_page(status: u16, elapsed_ms: u64, body: &str) -> PageSummary {
    let page = Page::parse(body);
    let results = page.results();
    let mut by_app: BTreeMap<String, usize> = BTreeMap::new();
    for r in &results {
        *by_app.entry(r.app.clone()).or_default() += 1;
    }
    PageSummary {
        status,
        elapsed_ms,
        results: results.len(),
        by_app,
        withheld: app_line_texts(&page, "withheld"),
        reconciling: app_line_texts(&page, "reconciling"),
        freshness: app_line_texts(&page, "freshness"),
        says_no_match: page.text().contains("No passage matched."),
        artefacts: page.artefacts(),
        artefacts_withheld: page.artefacts_withheld(),
        numeric: page.numeric().map(|n| n.outcome),
    }
}

fn check(expected: String, actual: String, ok: bool) -> Check {
    Check {
        expected,
        actual,
        ok,
    }
}

fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

pub(super) fn page_checks(p: &PageSummary, e: &PageExpect) -> Vec<Check> {
    let mut out = vec![];
    if let Some(n) = e.results {
        out.push(check(
            plural(n, "result"),
            format!("{}", p.results),
            p.results == n,
        ));
    }
    if let Some(m) = &e.results_by_app {
        for (app, n) in m {
            let got = p.by_app.get(app).copied().unwrap_or(0);
            out.push(check(
                format!("{} from {app}", plural(*n, "result")),
                got.to_string(),
                got == *n,
            ));
        }
    }
    if let Some(w) = &e.withheld {
        out.push(check(
            format!("withheld lines {w:?}"),
            format!("{:?}", p.withheld),
            &p.withheld == w,
        ));
    }
    if let Some(r) = &e.reconciling {
        out.push(check(
            format!("reconciling lines {r:?}"),
            format!("{:?}", p.reconciling),
            &p.reconciling == r,
        ));
    }
    if let Some(f) = &e.freshness {
        out.push(check(
            format!("freshness lines {f:?}"),
            format!("{:?}", p.freshness),
            &p.freshness == f,
        ));
    }
    if let Some(b) = e.says_no_match {
        out.push(check(
            format!(
                "{}says \"No passage matched.\"",
                if b { "" } else { "never " }
            ),
            p.says_no_match.to_string(),
            p.says_no_match == b,
        ));
    }
    if let Some(n) = e.artefacts {
        out.push(check(
            format!("{} shown", plural(n, "derived artefact")),
            p.artefacts.to_string(),
            p.artefacts == n,
        ));
    }
    if let Some(w) = &e.artefacts_withheld {
        out.push(check(
            format!("artefact withheld lines {w:?}"),
            format!("{:?}", p.artefacts_withheld),
            &p.artefacts_withheld == w,
        ));
    }
    if let Some(want) = &e.numeric {
        out.push(check(
            format!("the numeric answer is {want}"),
            format!("{:?}", p.numeric),
            p.numeric.as_deref() == Some(want.as_str()),
        ));
    }
    if let Some(ms) = e.within_ms {
        out.push(check(
            format!("within {ms} ms"),
            format!("{} ms", p.elapsed_ms),
            p.elapsed_ms <= ms,
        ));
    }
    out
}

/// Checks an `expect-*` event against the run as it stands: the calls a
/// sibling received since `since` (an index into `trace`, or the start),
/// what memoria's store holds, what the owner's sources page says. Any
/// other event checks nothing here.
///
/// # Errors
/// A message if memoria's state cannot be read.
pub(super) async fn expect(
    m: &mut Memoria,
    event: &Event,
    trace: &Trace,
    since: usize,
) -> Result<Vec<Check>, String> {
    let mut checks = vec![];
    match event {
        Event::ExpectCalls {
            app,
            call,
            min,
            max,
            since_start,
            ..
        } => {
            let kind = call_kind(call).ok_or("unknown call")?;
            let host = format!("{TEAM}.{app}.oficina.works");
            let from = if *since_start { 0 } else { since };
            let n = trace.with(|all| {
                all[from..]
                    .iter()
                    .filter(|e| e.callee == host && e.call == kind)
                    .count()
            });
            if let Some(lo) = min {
                checks.push(check(
                    format!("at least {lo} {call} calls at {app}"),
                    n.to_string(),
                    n >= *lo,
                ));
            }
            if let Some(hi) = max {
                checks.push(check(
                    format!("at most {hi} {call} calls at {app}"),
                    n.to_string(),
                    n <= *hi,
                ));
            }
        }
        Event::ExpectHeld {
            app, item, held, ..
        } => {
            let got = m
                .state()
                .instance()
                .lock()
                .map_err(|_| "instance lock")?
                .store()
                .sibling_document(app, item)
                .map_err(|e| e.to_string())?
                .is_some();
            checks.push(check(
                format!("{app}:{item} {}", if *held { "held" } else { "not held" }),
                (if got { "held" } else { "not held" }).to_string(),
                got == *held,
            ));
        }
        Event::ExpectSources {
            app,
            refusal,
            s3,
            reader,
            ..
        } => {
            let page = m.get(&address(reader), "/sources").await;
            let page = Page::parse(&page.response.body);
            let name = memoria::app_display_name(app);
            let line = |class: &str| {
                page.texts(&format!("section[data-app=\"{name}\"] p.breaker.{class}"))
                    .join(" ")
            };
            for (class, want) in [("refusal-breaker", refusal), ("s3-breaker", s3)] {
                if let Some(want) = want {
                    let got = line(class);
                    checks.push(check(
                        format!("{app}'s {class} line says \"{want}\""),
                        if got.is_empty() {
                            "no such line".to_string()
                        } else {
                            got.clone()
                        },
                        got.contains(want.as_str()),
                    ));
                }
            }
        }
        Event::ExpectReannounce { app, marked, .. } => {
            let got = m
                .state()
                .instance()
                .lock()
                .map_err(|_| "instance lock")?
                .store()
                .sibling_state(app)
                .map_err(|e| e.to_string())?
                .reannounce;
            checks.push(check(
                format!(
                    "{app} {}marked for re-announce",
                    if *marked { "" } else { "not " }
                ),
                (if got { "marked" } else { "not marked" }).to_string(),
                got == *marked,
            ));
        }
        // Actions and queries: a query's page is checked by `page_checks`.
        _ => {}
    }
    Ok(checks)
}
