//! Every shipped incident scenario (`scenarios/*.toml`) parses and replays green: the same check `memoria-harness replay` makes in CI.

use std::path::PathBuf;

use memoria_simulator::scenario;

fn scenarios() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("scenarios/ exists")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_shipped_scenario_replays_with_every_expectation_holding() {
    let files = scenarios();
    assert!(files.len() >= 4, "only {} scenarios shipped", files.len());
    let mut failed = vec![];
    for f in &files {
        let text = std::fs::read_to_string(f).expect("reads");
        let s = scenario::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let r = scenario::replay(&s, None).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let checks: usize = r.entries.iter().map(|e| e.checks.len()).sum();
        assert!(checks > 0, "{} checks nothing", f.display());
        if !r.passed() {
            failed.push(format!(
                "{}\n{}replay: cargo run -p memoria-gates --bin memoria-harness -- replay {} --seed {}",
                f.display(),
                r.render_text(),
                f.display(),
                r.seed
            ));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

/// The head every inline scenario here starts with, lines 1 to 4: one
/// reader, Ana, and one sibling, docs.
const HEAD: &str = "title = \"t\"\nreaders = [\"ana\"]\n[[sibling]]\napp = \"docs\"\n";

/// docs's one item, holding the words "heron ledger" (three lines).
const HERON: &str = "[[sibling.item]]\nid = \"d1\"\nwords = \"heron ledger\"\n";

/// The warm-up event (two lines).
const WARMED_UP: &str = "[[event]]\ndo = \"warmed-up\"\n";

/// A query event by `reader` for `q`, with `expect` its expectation's
/// table when there is one (four lines, five with it).
fn query(reader: &str, q: &str, expect: Option<&str>) -> String {
    let expect = expect
        .map(|e| format!("expect = {e}\n"))
        .unwrap_or_default();
    format!("[[event]]\ndo = \"query\"\nreader = \"{reader}\"\nq = \"{q}\"\n{expect}")
}

/// The scenario [`HEAD`] then `parts`, parsed.
fn parsed(parts: &[&str]) -> Result<scenario::Scenario, String> {
    scenario::parse(&format!("{HEAD}{}", parts.concat())).map_err(|e| e.to_string())
}

#[test]
fn a_scenario_naming_an_undeclared_reader_is_refused_with_a_reason() {
    let err = parsed(&[&query("zed", "x", Some("{ results = 0 }"))]).unwrap_err();
    assert!(err.contains("zed"), "{err}");
    assert!(err.contains("event #0 (line 5)"), "{err}");
}

#[test]
fn a_scenario_with_a_misspelt_field_is_refused_not_half_read() {
    assert!(parsed(&[&query("ana", "x", Some("{ result = 3 }"))]).is_err());
}

#[test]
fn shrinking_a_failing_scenario_keeps_the_failure_and_drops_what_it_does_not_need() {
    let s = parsed(&[
        HERON,
        WARMED_UP,
        "[[event]]\ndo = \"advance-days\"\ndays = 1\n",
        &query("ana", "heron ledger", Some("{ results = 7 }")),
    ])
    .unwrap();
    let scenario::Shrunk::Failing {
        minimal: small,
        replay: r,
        kept,
        ..
    } = scenario::shrink(&s, Some(3)).unwrap()
    else {
        panic!("the scenario fails, so it shrinks");
    };
    assert!(!r.passed());
    assert!(small.events.len() < s.events.len(), "nothing was dropped");
    assert!(matches!(
        small.events.last(),
        Some(scenario::Event::Query { .. })
    ));
    assert_eq!(kept.last(), Some(&2), "the query is the file's event #2");
    assert!(
        r.entries.iter().all(|e| kept.contains(&e.index)),
        "the shrunk replay's entries carry the file's own event indices"
    );
}

#[test]
fn shrinking_a_passing_scenario_says_it_passes_and_drops_nothing() {
    let s = parsed(&[
        HERON,
        WARMED_UP,
        &query("ana", "heron ledger", Some("{ results = 1 }")),
    ])
    .unwrap();
    match scenario::shrink(&s, Some(3)).unwrap() {
        scenario::Shrunk::Passes(r) => assert!(r.passed()),
        scenario::Shrunk::Failing { replay, .. } => {
            panic!("a passing scenario was shrunk:\n{}", replay.render_text())
        }
    }
}

#[test]
fn an_event_s_details_carry_its_parameters_and_never_its_query_text() {
    let s = parsed(&[
        "[[event]]\nat_ms = 2500\ndo = \"fault\"\napp = \"docs\"\nfault = { kind = \"slow\", latency_ms = 900 }\n",
        &query("ana", "heron ledger", Some("{ results = 7 }")),
    ])
    .unwrap();
    let fault = s.events[0].details();
    for part in [
        "do = \"fault\"",
        "at_ms = 2500",
        "fault = { kind = \"slow\", all = false, latency_ms = 900 }",
    ] {
        assert!(fault.contains(part), "{part} missing from {fault}");
    }
    let query = s.events[1].details();
    assert!(query.contains("q = (2 words)"), "{query}");
    assert!(query.contains("expect = { results = 7 }"), "{query}");
    assert!(!query.contains("heron"), "the query text leaked: {query}");
}

/// The `line N, column M` a parse error names.
fn where_of(err: &str) -> (usize, usize) {
    let at = err
        .find("line ")
        .unwrap_or_else(|| panic!("no line in {err}"));
    let rest = &err[at + "line ".len()..];
    let line: usize = rest[..rest.find(',').expect("a comma")]
        .parse()
        .expect("a line number");
    let col_at = rest.find("column ").expect("a column") + "column ".len();
    let col: String = rest[col_at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    (line, col.parse().expect("a column number"))
}

#[test]
fn a_typo_in_a_later_event_is_reported_at_its_own_line_and_column() {
    let head = [WARMED_UP, &query("ana", "x", None)].concat();
    // Line 11 in each: a misspelt field, a misspelt expectation, a misspelt
    // event kind, a misspelt fault kind.
    let cases = [
        ("qq = \"x\"\n", (11, 1)),
        ("expect = { result = 3 }\n", (11, 12)),
        ("[[event]]\ndo = \"quer\"\n", (12, 6)),
        (
            "[[event]]\ndo = \"fault\"\napp = \"docs\"\nfault = { kind = \"slo\", latency_ms = 1 }\n",
            (14, 18),
        ),
    ];
    for (tail, want) in cases {
        let err = parsed(&[&head, tail]).unwrap_err();
        assert_eq!(where_of(&err), want, "{tail:?}: {err}");
    }
}

#[test]
fn an_event_without_do_is_reported_at_its_own_table() {
    let text = "title = \"t\"\nreaders = [\"ana\"]\n[[event]]\ndo = \"warmed-up\"\n[[event]]\nreader = \"ana\"\n";
    let err = scenario::parse(text).unwrap_err().to_string();
    assert!(err.contains("has no `do`"), "{err}");
    assert_eq!(where_of(&err).0, 5, "{err}");
}

#[test]
fn a_scenario_whose_timeline_checks_nothing_is_refused_not_passed_vacuously() {
    let err = parsed(&[WARMED_UP, &query("ana", "x", None)]).unwrap_err();
    assert!(err.contains("checks nothing"), "{err}");
}

/// Lower-cased alphanumeric words of `text`.
fn words_of(text: &str) -> std::collections::BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

#[test]
fn no_scenario_word_occurs_in_any_corpus_the_fakes_may_read() {
    // A scenario's counts must not depend on which corpus is present: the
    // mutants runner's scratch copy has only `fixtures/team`, a developer
    // may have nodejs-doc, CI has the Rust book.
    let mut corpus_words = std::collections::BTreeSet::new();
    let team = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/team");
    let mut team_files = 0;
    for e in std::fs::read_dir(&team).expect("fixtures/team exists") {
        let p = e.expect("entry").path();
        if p.extension().is_some_and(|x| x == "md") {
            corpus_words.extend(words_of(&std::fs::read_to_string(&p).expect("reads")));
            team_files += 1;
        }
    }
    assert!(
        team_files > 0,
        "fixtures/team holds no Markdown to check against"
    );
    let present = memoria_simulator::load_corpus(usize::MAX);
    assert!(
        !present.items.is_empty(),
        "the present corpus loaded no items"
    );
    for (title, body) in &present.items {
        corpus_words.extend(words_of(title));
        corpus_words.extend(words_of(body));
    }
    let mut clashes = vec![];
    for f in scenarios() {
        let s = scenario::parse(&std::fs::read_to_string(&f).expect("reads")).expect("parses");
        // A scenario whose fakes read no corpus (the worked-example sheets
        // alone, §8.7) cannot meet one: its questions are ordinary words.
        if s.siblings.iter().all(|x| x.corpus == 0 && x.worked_example) {
            continue;
        }
        let mut mine = std::collections::BTreeSet::new();
        for sib in &s.siblings {
            for item in &sib.items {
                mine.extend(words_of(&item.words));
            }
        }
        for e in &s.events {
            match e {
                scenario::Event::Query { q, .. } => mine.extend(words_of(q)),
                scenario::Event::Create { words, .. } => mine.extend(words_of(words)),
                _ => {}
            }
        }
        assert!(!mine.is_empty(), "{} declares no words", f.display());
        for w in mine.intersection(&corpus_words) {
            clashes.push(format!("{}: {w}", f.display()));
        }
    }
    assert!(
        clashes.is_empty(),
        "scenario words that also occur in a corpus (pick words no corpus holds): {clashes:?}"
    );
}
