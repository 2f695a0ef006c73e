//! Checks: the assertions a scenario states, judged against what the run saw; a results page is read into counts and notice lines first.
//!
//! A [`Check`] holds what was expected, what was seen and whether it held.
//! A page is summarised ([`summarise_page`]) without its content: results
//! per app, withheld and reconciling lines, "No passage matched.".

use std::collections::BTreeMap;

use serde::Serialize;

use super::parse::PageExpect;

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
    /// Whether it said "No passage matched.".
    pub says_no_match: bool,
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

pub(super) fn lines_with_class(body: &str, class: &str) -> Vec<String> {
    let needle = format!("<p class=\"{class}\"");
    let mut out = vec![];
    let mut rest = body;
    while let Some(at) = rest.find(&needle) {
        rest = &rest[at..];
        let (Some(open_end), Some(close)) = (rest.find('>'), rest.find("</p>")) else {
            break;
        };
        out.push(rest[open_end + 1..close].to_string());
        rest = &rest[close..];
    }
    out
}

/// Reads a results page into counts and notice lines.
pub fn summarise_page(status: u16, elapsed_ms: u64, body: &str) -> PageSummary {
    let mut by_app: BTreeMap<String, usize> = BTreeMap::new();
    let mut rest = body;
    let mut results = 0;
    while let Some(at) = rest.find("<li class=\"result\"") {
        rest = &rest[at + 1..];
        results += 1;
        if let Some(a) = rest.find("<span class=\"app\">") {
            let tail = &rest[a + "<span class=\"app\">".len()..];
            if let Some(end) = tail.find('<') {
                *by_app.entry(tail[..end].to_string()).or_default() += 1;
            }
        }
    }
    PageSummary {
        status,
        elapsed_ms,
        results,
        by_app,
        withheld: lines_with_class(body, "withheld"),
        reconciling: lines_with_class(body, "reconciling"),
        says_no_match: body.contains("No passage matched."),
    }
}

pub(super) fn check(expected: String, actual: String, ok: bool) -> Check {
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
    if let Some(ms) = e.within_ms {
        out.push(check(
            format!("within {ms} ms"),
            format!("{} ms", p.elapsed_ms),
            p.elapsed_ms <= ms,
        ));
    }
    out
}
