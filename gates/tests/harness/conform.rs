//! The conformance kit against the simulator's fake sibling over real loopback TCP: every case passes, none is skipped, and every case is proven able to fail (§4.1, §6.1, §6.2).
//!
//! Real sockets are allowed here (the kit is for real servers); simulated
//! runs never use them. The control hook is the built `memoria-harness
//! fake-control`, the same executable an implementer would be told to use.

use memoria_gates::conform::{
    self, Options,
    client::Target,
    control::Hook,
    fake::{self, FAKE_SECOND_TOKEN, FAKE_TOKEN},
    manifest::Manifest,
    report::Status,
};

fn options(url: &str, hook: Hook) -> Options {
    Options {
        target: Target::parse(url).expect("the fake's URL parses"),
        trust: conform::TlsTrust::public(),
        token: FAKE_TOKEN.into(),
        second_token: Some(FAKE_SECOND_TOKEN.into()),
        hook,
        manifest: Manifest::builtin(),
        run: vec![],
        skip: vec![],
        strict: true,
        known_failing: vec![],
        trace: false,
    }
}

fn serve() -> (tokio::runtime::Runtime, String) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    let served = rt
        .block_on(fake::serve(
            &Manifest::builtin(),
            ([127, 0, 0, 1], 0).into(),
        ))
        .expect("the fake serves the shipped manifest");
    (rt, served.url)
}

fn hook(url: &str) -> Hook {
    Hook::from_argv(vec![
        env!("CARGO_BIN_EXE_memoria-harness").into(),
        "fake-control".into(),
        "--url".into(),
        url.into(),
    ])
}

/// Every case of the kit ran and passed: none failed, none was skipped.
fn every_case_passed(report: &conform::report::ConformReport) {
    let not_passed: Vec<String> = report
        .cases
        .iter()
        .filter(|c| c.status != Status::Pass)
        .map(|c| format!("{} {:?} {:?} {:?}", c.id, c.status, c.actual, c.skipped))
        .collect();
    assert!(not_passed.is_empty(), "{not_passed:#?}");
    assert_eq!(report.cases.len(), conform::cases::all().len());
}

#[test]
fn every_case_must_and_should_passes_against_the_fake_over_loopback_with_none_skipped() {
    let (_rt, url) = serve();
    let report = conform::run(&options(&url, hook(&url))).expect("the fake is reachable");
    every_case_passed(&report);
}

/// The fake over TLS on loopback, its certificate signed by a throwaway CA
/// for `localhost`; the CA's PEM is written to a file, as an operator's
/// private CA would be.
struct ServedTls {
    url: String,
    pem: std::path::PathBuf,
    _dir: tempfile::TempDir,
    _served: fake::TlsServed,
    _rt: tokio::runtime::Runtime,
}

fn serve_tls() -> ServedTls {
    let ca = fake::ThrowawayCa::new("conform test CA").expect("a CA");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let pem = dir.path().join("team-ca.pem");
    std::fs::write(&pem, ca.pem()).expect("the CA's PEM is written");
    let config = ca
        .server_config(&["localhost", "127.0.0.1"])
        .expect("a server certificate");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    let (url, served) = rt
        .block_on(fake::serve_tls(&Manifest::builtin(), config))
        .expect("the fake serves over TLS");
    ServedTls {
        url,
        pem,
        _dir: dir,
        _served: served,
        _rt: rt,
    }
}

#[test]
fn every_case_passes_against_the_fake_over_https_when_its_private_ca_is_given() {
    let served = serve_tls();
    let (url, pem) = (served.url.clone(), &served.pem);
    let hook = Hook::from_argv(vec![
        env!("CARGO_BIN_EXE_memoria-harness").into(),
        "fake-control".into(),
        "--url".into(),
        url.clone(),
        "--ca-file".into(),
        pem.display().to_string(),
    ]);
    let mut opts = options(&url, hook);
    opts.trust = conform::TlsTrust::from_ca_file(pem).expect("the CA file is taken");
    assert!(opts.target.tls, "{url} is an https:// target");
    let report = conform::run(&opts).expect("the fake is reachable over TLS");
    every_case_passed(&report);
}

#[test]
fn an_https_target_signed_by_no_trusted_ca_is_refused_as_untrusted_not_run() {
    let served = serve_tls();
    let err = conform::run(&options(&served.url, Hook::default())).unwrap_err();
    assert_eq!(
        err,
        conform::RunError::Tls {
            url: served.url.clone(),
            refusal: conform::TlsRefusal::UntrustedCertificate,
        }
    );
}

#[test]
fn every_case_is_named_by_a_recorded_broken_sibling_that_must_turn_it_red() {
    // The run itself is `memoria-harness mutants --gate conform` (CI); this
    // checks that no case is left without a variant to prove it can fail.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../mutants");
    let mut named = std::collections::BTreeSet::new();
    let mut variants = 0;
    for f in memoria_gates::mutants::discover(&dir) {
        let text = std::fs::read_to_string(&f).expect("reads");
        let m = memoria_gates::mutants::parse(&f, &text).expect("parses");
        if m.gate == memoria_gates::mutants::CONFORM_GATE {
            variants += 1;
            named.extend(m.conform);
        }
    }
    assert!(
        variants > 0,
        "no conformance variants were found under mutants/"
    );
    let unproven: Vec<&str> = conform::cases::all()
        .iter()
        .map(|c| c.id)
        .filter(|id| !named.contains(*id))
        .collect();
    assert!(
        unproven.is_empty(),
        "cases no broken sibling turns red: {unproven:?}"
    );
}

#[test]
fn without_a_hook_or_a_second_token_the_dependent_cases_are_skipped_never_passed() {
    let (_rt, url) = serve();
    let mut opts = options(&url, Hook::default());
    opts.second_token = None;
    let report = conform::run(&opts).expect("reachable");
    for c in &report.cases {
        let needs_more = conform::cases::all()
            .iter()
            .any(|k| k.id == c.id && k.needs != conform::Needs::Nothing);
        if needs_more {
            assert_eq!(c.status, Status::Skip, "{}", c.id);
        } else {
            assert_eq!(c.status, Status::Pass, "{}", c.id);
        }
    }
    assert!(!report.failed());
}

/// The control actions the kit gained for issue 15's cases; a hook
/// written before them answers exit 3 ("cannot drive that") to each.
const NEWER_ACTIONS: [&str; 5] = [
    "bump-revisions",
    "set-link-shared",
    "set-guest-only",
    "empty-team-set",
    "rotate-retire",
];

#[test]
fn a_hook_without_the_newer_actions_skips_only_the_cases_that_need_them_and_never_passes_them() {
    let (_rt, url) = serve();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let script = dir.path().join("older-hook");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncase \"$1\" in\n  {}) exit 3 ;;\nesac\nexec \"{}\" fake-control --url \"{url}\" \"$@\"\n",
            NEWER_ACTIONS.join("|"),
            env!("CARGO_BIN_EXE_memoria-harness"),
        ),
    )
    .expect("the hook script is written");
    let older = Hook::from_argv(vec!["sh".into(), script.display().to_string()]);
    let report = conform::run(&options(&url, older)).expect("the fake is reachable");
    let skipped: Vec<&str> = report
        .cases
        .iter()
        .filter(|c| c.status == Status::Skip)
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(
        skipped,
        [
            "suite3/link-shared-after-ingest-leaves-custody",
            "suite3/guest-only-after-ingest-leaves-custody",
            "s1a/empty-team-set-closes-with-zero",
            "tokens/rotation-retired-token-refused",
        ],
        "only the cases needing set-link-shared, set-guest-only, empty-team-set or rotate-retire skip; s1/pages-lose-no-row falls back to bump-revision"
    );
    for c in report.cases.iter().filter(|c| c.status == Status::Skip) {
        let why = c.skipped.as_deref().unwrap_or_default();
        assert!(
            NEWER_ACTIONS
                .iter()
                .any(|a| why.contains(&format!("cannot drive {a}"))),
            "{}: {why}",
            c.id
        );
    }
    let not_passed: Vec<String> = report
        .cases
        .iter()
        .filter(|c| !matches!(c.status, Status::Pass | Status::Skip))
        .map(|c| format!("{} {:?} {:?}", c.id, c.status, c.actual))
        .collect();
    assert!(not_passed.is_empty(), "{not_passed:#?}");
    assert!(!report.failed());
}

#[test]
fn the_implementers_readme_lists_every_case_in_order_with_its_level_and_requirement() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/conformance/README.md");
    let text = std::fs::read_to_string(&path).expect("the kit's README reads");
    let listed: Vec<&str> = text
        .lines()
        .skip_while(|l| *l != "## The cases")
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| l.starts_with("| `"))
        .collect();
    let want: Vec<String> = conform::cases::all()
        .iter()
        .map(|c| {
            let needs = match c.needs {
                conform::Needs::Nothing => "",
                conform::Needs::Control => "hook",
                conform::Needs::SecondToken => "second token",
            };
            format!(
                "| `{}` | {} | {needs} | {} | {} |",
                c.id,
                c.level.as_str(),
                c.section,
                c.requirement.replace('|', "\\|")
            )
        })
        .collect();
    assert_eq!(
        listed, want,
        "fixtures/conformance/README.md's table of cases differs from the kit's (regenerate it from `conform --list`)"
    );
}

#[test]
fn a_known_failing_case_that_passes_fails_the_run() {
    let (_rt, url) = serve();
    let mut opts = options(&url, hook(&url));
    opts.run = vec!["s1/four-fields".into()];
    opts.known_failing = vec!["s1/four-fields".into()];
    let report = conform::run(&opts).expect("reachable");
    assert_eq!(report.cases[0].status, Status::Fixed);
    assert!(report.failed());
}

#[test]
fn an_unreachable_target_is_reported_with_its_url_and_cause_not_as_failed_cases() {
    // Bind then drop a listener: its port is closed now.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let err = conform::run(&options(&url, Hook::default())).unwrap_err();
    assert_eq!(
        err,
        conform::RunError::Unreachable {
            url: url.clone(),
            cause: conform::client::Unreachable::Refused { port },
        }
    );
    let said = err.to_string();
    assert!(said.contains(&url), "{said}");
    assert!(said.contains("connection refused"), "{said}");
}

#[test]
fn a_target_whose_name_does_not_resolve_is_reported_as_a_dns_failure() {
    // `.invalid` never resolves (RFC 6761 §6.4).
    let opts = options("http://no-such-sibling.invalid:8080", Hook::default());
    match conform::run(&opts).unwrap_err() {
        conform::RunError::Unreachable {
            url,
            cause: conform::client::Unreachable::Dns { host, .. },
        } => {
            assert_eq!(url, "http://no-such-sibling.invalid:8080");
            assert_eq!(host, "no-such-sibling.invalid");
        }
        other => panic!("not a DNS failure: {other:?}"),
    }
}

#[test]
fn a_selection_that_runs_no_case_is_a_usage_error_not_an_empty_pass() {
    let all = vec!["*".to_string()];
    assert!(matches!(
        conform::select(&[], &all, true),
        Err(conform::RunError::Usage(_))
    ));
    let should: Vec<String> = conform::cases::all()
        .iter()
        .filter(|c| c.level == conform::Level::Should)
        .map(|c| c.id.to_string())
        .take(1)
        .collect();
    if let [id] = should.as_slice() {
        match conform::select(std::slice::from_ref(id), &[], false) {
            Err(conform::RunError::Usage(why)) => assert!(why.contains("--strict"), "{why}"),
            other => panic!("{id} without --strict: {other:?}"),
        }
    }
}

#[test]
fn junit_output_has_one_suite_per_section_and_marks_skips() {
    let (_rt, url) = serve();
    let mut opts = options(&url, Hook::default());
    opts.second_token = None;
    let xml = conform::run(&opts).expect("reachable").to_junit();
    assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"));
    for g in ["suite2", "suite3", "s1", "s1a", "s2", "s3", "tokens"] {
        assert!(xml.contains(&format!("name=\"conform {g}\"")), "{g}");
    }
    assert!(xml.contains("<skipped message=\"needs a --control hook\"/>"));
}
