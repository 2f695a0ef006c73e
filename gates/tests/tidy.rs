//! Tidy checks over the whole workspace: every Rust file opens with a `//!` doc line and says there why it is long if it is, every count README.md and ARCHITECTURE.md state is generated from the registry, the harness alone resolves the features the workspace build does, the conformance kit builds without memoria, the simulator or the harness, the mutation runner without any crate of the workspace, the TLS crate and the page reader depend on nothing of the workspace, every gate has recorded mutations (an adversary's among them) whose replacements name modules that exist, and quotes its GATES.md row, every conformance case is named by a recorded broken fake, no gate scans HTML or keeps a clock of its own, S2 is called on one path, the reference's files import each other without a circle and its rooms down one layer order, the shipped build has the reference's dependencies, and cargo-mutants' configuration names files that exist, and no tracked file is a symbolic link.
//!
//! Size: about 1,500 lines because each check is one test with its own
//! reader of the tree (the `syn` visitors, the import graph and its layer
//! order, the GATES.md reader), kept in one test binary to spare a link on
//! a 2-core machine; splitting the readers out by concern is the next step.

use std::path::Path;

/// Every Rust file of the workspace, outside `target/` and hidden folders:
/// its path from the workspace root and its text.
fn workspace_rust_files() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    walkdir::WalkDir::new(&root)
        .into_iter()
        .filter_entry(|e| {
            let n = e.file_name().to_string_lossy();
            !(n == "target" || n.starts_with('.') && n != "." && n != "..")
        })
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "rs"))
        .map(|e| {
            let p = e.path();
            let rel = p.strip_prefix(&root).unwrap_or(p).display().to_string();
            (rel, std::fs::read_to_string(p).unwrap_or_default())
        })
        .collect()
}

#[test]
fn every_rust_file_in_the_workspace_starts_with_a_module_doc_comment() {
    let files = workspace_rust_files();
    let missing: Vec<&String> = files
        .iter()
        .filter(|(_, text)| !text.starts_with("//!"))
        .map(|(rel, _)| rel)
        .collect();
    assert!(
        files.len() >= 30,
        "the walk found the workspace's sources ({})",
        files.len()
    );
    assert!(
        missing.is_empty(),
        "files without a leading //! line: {missing:?}"
    );
}

/// The mode `git ls-files -s` gives a symbolic link.
const GIT_SYMLINK_MODE: &str = "120000";
/// The fewest files git must list for the listing to be the workspace's
/// (it tracks well over a thousand): fewer, and git read some other tree
/// or none, so finding no link there would mean nothing.
const TRACKED_FILES_MIN: usize = 100;

/// A worktree links the fetched corpora in (`fixtures/corpus/rust-book`
/// and the rest, ignored as directories); a link committed by mistake
/// replaces the real, ignored directory of every checkout it is merged
/// into, and a clean clone gets a link to a path of someone else's disk.
#[test]
fn no_tracked_file_is_a_symbolic_link() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(&root)
        .args(["ls-files", "-s"])
        .output()
        .unwrap_or_else(|e| panic!("git ls-files -s in {}: {e}", root.display()));
    assert!(
        out.status.success(),
        "git ls-files -s in {}: {}",
        root.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let listing = String::from_utf8_lossy(&out.stdout);
    let tracked = listing.lines().count();
    assert!(
        tracked >= TRACKED_FILES_MIN,
        "git lists the workspace's tracked files ({tracked})"
    );
    let links: Vec<&str> = listing
        .lines()
        .filter(|l| l.starts_with(GIT_SYMLINK_MODE))
        .filter_map(|l| l.split('\t').nth(1))
        .collect();
    assert!(links.is_empty(), "tracked symbolic links: {links:?}");
}

/// The length past which a source file says at its top why it is that long
/// (issue 29: "every source file under about 700 lines or saying at its top
/// why not").
const SOURCE_LINES_MAX: usize = 700;

/// The paragraph of a file's leading `//!` block that says why it is long.
const SIZE_NOTE: &str = "//! Size:";

#[test]
fn every_rust_file_over_700_lines_says_at_its_top_why_and_no_shorter_one_keeps_the_note() {
    let mut long = 0;
    let (mut unexplained, mut stale, mut overstated) = (Vec::new(), Vec::new(), Vec::new());
    for (rel, text) in workspace_rust_files() {
        let lines = text.lines().count();
        let head: Vec<&str> = text.lines().take_while(|l| l.starts_with("//!")).collect();
        let note = head.iter().position(|l| l.starts_with(SIZE_NOTE)).map(|i| {
            head[i..]
                .iter()
                .take_while(|l| l.trim() != "//!")
                .map(|l| l.trim_start_matches("//!").trim())
                .collect::<Vec<_>>()
                .join(" ")
        });
        if lines > SOURCE_LINES_MAX {
            long += 1;
        }
        match note {
            None if lines > SOURCE_LINES_MAX => unexplained.push(format!("{rel} ({lines} lines)")),
            Some(_) if lines <= SOURCE_LINES_MAX => stale.push(format!("{rel} ({lines} lines)")),
            Some(note) => {
                // A length the note states ("over 800 lines") is one the file has.
                let words: Vec<&str> = note.split_whitespace().collect();
                let claimed = words.windows(3).find_map(|w| {
                    (w[0] == "over" && w[2].starts_with("line"))
                        .then(|| w[1].replace(',', "").parse::<usize>().ok())
                        .flatten()
                });
                if claimed.is_some_and(|n| n >= lines) {
                    overstated.push(format!("{rel} ({lines} lines): {note}"));
                }
            }
            None => {}
        }
    }
    assert!(
        long > 0,
        "the walk found a file over {SOURCE_LINES_MAX} lines, so the check has something to hold"
    );
    assert!(
        unexplained.is_empty() && stale.is_empty() && overstated.is_empty(),
        "files over {SOURCE_LINES_MAX} lines with no `{SIZE_NOTE}` paragraph in their leading //! block: {unexplained:#?}\nfiles at or under it that keep one (remove it): {stale:#?}\nnotes that state more lines than the file has: {overstated:#?}"
    );
}

/// Recorded mutations every registered gate needs at least: a gate is only
/// a gate once it has been seen to fail, and one mutation can be luck.
const MUTATIONS_PER_GATE_MIN: usize = 2;

#[test]
fn every_registered_gate_has_two_recorded_mutations_and_one_by_an_adversary() {
    use memoria_gates::mutants::{self, Author};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../mutants");
    let files = mutants::discover(&dir);
    let mut unparsed = vec![];
    // gate id -> (mutations, adversary mutations)
    let mut counts = std::collections::BTreeMap::<String, (usize, usize)>::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        match mutants::parse(f, &text) {
            Ok(m) => {
                let c = counts.entry(m.gate).or_default();
                c.0 += 1;
                c.1 += usize::from(m.author == Author::Adversary);
            }
            Err(e) => unparsed.push(format!("{}: {e}", f.display())),
        }
    }
    let registry = memoria_gates::registry();
    // The presence that makes a shortfall mean something: the registry and
    // the recorded mutations were both found, and the headers were read.
    assert!(
        registry.len() >= 16,
        "the registry holds {} gates",
        registry.len()
    );
    assert!(
        files.len() >= 50,
        "found {} mutations in {}",
        files.len(),
        dir.display()
    );
    assert!(
        unparsed.is_empty(),
        "mutation headers that do not parse: {unparsed:#?}"
    );
    let short: Vec<String> = registry
        .iter()
        .filter_map(|g| {
            let (all, adversary) = counts.get(g.id).copied().unwrap_or_default();
            (all < MUTATIONS_PER_GATE_MIN || adversary == 0).then(|| {
                format!(
                    "gate {}: {all} mutations, {adversary} by an adversary",
                    g.id
                )
            })
        })
        .collect();
    assert!(
        short.is_empty(),
        "gates short of {MUTATIONS_PER_GATE_MIN} recorded mutations with one `author: adversary`: {short:#?}"
    );
}

#[test]
fn every_recorded_mutation_resolves_against_the_tree_and_sits_in_its_gates_folder() {
    use memoria_gates::mutants::{self, convert::folder_of};
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .expect("the workspace");
    let dir = workspace.join("mutants");
    let files = mutants::discover(&dir);
    let (mut anchored, mut edits) = (0, 0);
    let mut wrong = vec![];
    for f in &files {
        let name = f.strip_prefix(&dir).unwrap_or(f).display().to_string();
        let text = std::fs::read_to_string(f).unwrap_or_default();
        let mut m = match mutants::parse(f, &text) {
            Ok(m) => m,
            Err(e) => {
                wrong.push(format!("{name}: {e}"));
                continue;
            }
        };
        let folder = f
            .parent()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if folder != folder_of(&m.gate) {
            wrong.push(format!(
                "{name}: gate {} lives in mutants/{}/ (memoria-harness mutants convert moves it)",
                m.gate,
                folder_of(&m.gate)
            ));
        }
        if m.edits.is_empty() {
            if m.kept_as_diff.is_none() {
                wrong.push(format!(
                    "{name}: a diff without a `kept-as-diff:` line (run memoria-harness mutants convert {name})"
                ));
            }
            continue;
        }
        anchored += 1;
        edits += m.edits.len();
        if let Err(e) = m.resolve(&workspace) {
            wrong.push(format!(
                "{name}: no longer resolves: {e} (move the edit with its code)"
            ));
        } else if !m.diff.starts_with("--- a/") {
            wrong.push(format!("{name}: resolved to no diff"));
        }
    }
    // The presence that makes "none wrong" mean something: the recorded set
    // was found, and most of it is item-anchored and was made against the tree.
    assert!(
        anchored >= 400 && edits >= anchored,
        "{anchored} item-anchored mutations with {edits} edits among {} files in {}",
        files.len(),
        dir.display()
    );
    assert!(wrong.is_empty(), "recorded mutations: {wrong:#?}");
}

/// The `crate::` and `super::` paths written in `text`, as segments from
/// that first word on: `crate::page::Withheld::one` is
/// `["crate", "page", "Withheld", "one"]`. A replacement is a fragment of
/// code, often not whole tokens, so it is read as text.
fn crate_paths_in(text: &str) -> Vec<Vec<String>> {
    let ident = |c: char| c == '_' || c.is_ascii_alphanumeric();
    let mut out = Vec::new();
    for start in ["crate::", "super::"] {
        for (at, _) in text.match_indices(start) {
            if text[..at].chars().next_back().is_some_and(ident) {
                continue; // part of a longer word, such as `my_crate::`
            }
            let mut segments = vec![start.trim_end_matches(':').to_owned()];
            let mut rest = &text[at + start.len()..];
            loop {
                let end = rest.find(|c: char| !ident(c)).unwrap_or(rest.len());
                if end == 0 {
                    break;
                }
                segments.push(rest[..end].to_owned());
                match rest[end..].strip_prefix("::") {
                    Some(more) if more.starts_with(ident) => rest = more,
                    _ => break,
                }
            }
            out.push(segments);
        }
    }
    out
}

/// Whether module `path` of the crate whose sources are under `src`
/// exists: a file of its own (`a/b.rs`, `a/b/mod.rs`), or a name its
/// parent's file declares (`mod b`) or brings in (`use …b…`).
fn module_exists(src: &Path, path: &[String]) -> bool {
    let Some((name, parent)) = path.split_last() else {
        return true;
    };
    let joined = path.join("/");
    if src.join(format!("{joined}.rs")).is_file() || src.join(&joined).join("mod.rs").is_file() {
        return true;
    }
    let parent_file = if parent.is_empty() {
        ["lib.rs", "main.rs"]
            .iter()
            .map(|f| src.join(f))
            .find(|f| f.is_file())
    } else {
        let p = parent.join("/");
        [src.join(format!("{p}.rs")), src.join(&p).join("mod.rs")]
            .into_iter()
            .find(|f| f.is_file())
    };
    let text = parent_file
        .and_then(|f| std::fs::read_to_string(f).ok())
        .unwrap_or_default();
    let word = |line: &str| {
        line.split(|c: char| c != '_' && !c.is_ascii_alphanumeric())
            .any(|w| w == name)
    };
    text.lines().map(str::trim_start).any(|line| {
        let line = line
            .trim_start_matches("pub(crate) ")
            .trim_start_matches("pub(super) ")
            .trim_start_matches("pub ");
        (line.starts_with("mod ") || line.starts_with("use ")) && word(line)
    })
}

#[test]
fn every_module_a_recorded_mutation_s_replacement_names_exists() {
    use memoria_gates::mutants;
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .expect("the workspace");
    let dir = workspace.join("mutants");
    let (mut checked, mut wrong) = (0, vec![]);
    for f in mutants::discover(&dir) {
        let name = f.strip_prefix(&dir).unwrap_or(&f).display().to_string();
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        let Ok(m) = mutants::parse(&f, &text) else {
            continue; // the resolving test reports a file that does not parse
        };
        for edit in &m.edits {
            let Some((crate_dir, in_src)) = edit.file.split_once("/src/") else {
                continue;
            };
            let src = workspace.join(crate_dir).join("src");
            let replaced = [&edit.replace, &edit.replace_item];
            for path in replaced
                .into_iter()
                .flatten()
                .flat_map(|r| crate_paths_in(r))
            {
                let mut module = if path[0] == "crate" {
                    Vec::new()
                } else {
                    let mut own = module_path(in_src);
                    own.pop();
                    own
                };
                // Every lower-case segment before the last is a module; the
                // first with a capital is a type, and the walk stops there.
                for segment in &path[1..path.len().saturating_sub(1)] {
                    if segment.chars().any(|c| c.is_ascii_uppercase()) {
                        break;
                    }
                    module.push(segment.clone());
                    checked += 1;
                    if !module_exists(&src, &module) {
                        wrong.push(format!(
                            "{name}: its replacement names `{}`, and {crate_dir}/src has no module `{}`",
                            path.join("::"),
                            module.join("::")
                        ));
                        break;
                    }
                }
            }
        }
    }
    // The presence that makes "none wrong" mean something: replacements do
    // name modules (`crate::page::…`, `crate::net::wire::…`).
    assert!(
        checked >= 60,
        "only {checked} module segments read in the replacements under {}",
        dir.display()
    );
    assert!(wrong.is_empty(), "recorded mutations: {wrong:#?}");
}

/// What a gate file must leave to the rigs: markup scanned by hand (the
/// page reader, `rigs/page.rs`, parses pages) and a clock of its own (the
/// hand clock is `rigs/clock.rs`).
const LEFT_TO_THE_RIGS: &[&str] = &[
    "find(\"<",
    "split(\"<",
    "matches(\"<",
    "\"<p class",
    "\"<li class",
    "Clock for ",
];

#[test]
fn no_gate_scans_html_by_hand_or_keeps_a_clock_of_its_own() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/gates");
    let mut files = 0;
    let mut found = vec![];
    for entry in std::fs::read_dir(&dir).expect("src/gates reads") {
        let p = entry.expect("an entry").path();
        if p.extension().is_none_or(|x| x != "rs") {
            continue;
        }
        files += 1;
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        for (n, line) in text.lines().enumerate() {
            for pat in LEFT_TO_THE_RIGS.iter().filter(|pat| line.contains(*pat)) {
                let name = p.file_name().unwrap_or_default().to_string_lossy();
                found.push(format!("{name}:{}: {pat}", n + 1));
            }
        }
    }
    // The presence that makes the absence meaningful: the walk read the gates.
    assert!(files >= 17, "read {files} files under {}", dir.display());
    assert!(
        found.is_empty(),
        "gate code the rigs should do (rigs/page.rs, rigs/clock.rs): {found:#?}"
    );
}

/// The S2 calls (`check`, `check_all` on the sibling client) in one file of
/// `reference/src`, as `(method, line)`.
fn s2_calls(text: &str) -> Vec<(String, usize)> {
    use syn::visit::Visit;
    struct Calls(Vec<(String, usize)>);
    impl<'a> Visit<'a> for Calls {
        fn visit_expr_method_call(&mut self, call: &'a syn::ExprMethodCall) {
            let name = call.method.to_string();
            // `check` with the client's three arguments (app, subject, pairs).
            if name == "check_all" || (name == "check" && call.args.len() == 3) {
                self.0.push((name, call.method.span().start().line));
            }
            syn::visit::visit_expr_method_call(self, call);
        }
    }
    let Ok(file) = syn::parse_file(text) else {
        return vec![("<unparsable file>".into(), 0)];
    };
    let mut calls = Calls(vec![]);
    calls.visit_file(&file);
    calls.0
}

/// Every Rust file of `reference/src`, as (its path below `src/`, its text).
fn reference_sources() -> Vec<(String, String)> {
    workspace_rust_files()
        .into_iter()
        .filter_map(|(rel, text)| Some((rel.strip_prefix("reference/src/")?.to_owned(), text)))
        .collect()
}

#[test]
fn no_surface_of_the_reference_calls_s2_except_through_sibling_ruled() {
    // Where S2 is allowed: the client that makes the call, and the one path.
    let allowed = ["sibling/client.rs", "sibling/ruled.rs"];
    let mut in_ruled = 0;
    let mut elsewhere = Vec::new();
    for (rel, text) in reference_sources() {
        for (method, line) in s2_calls(&text) {
            if rel == "sibling/ruled.rs" {
                in_ruled += 1;
            } else if !allowed.contains(&rel.as_str()) {
                elsewhere.push(format!("{rel}:{line} calls {method}"));
            }
        }
    }
    // The presence that makes the absence meaningful: the walk sees the one path's call.
    assert_eq!(
        in_ruled, 1,
        "sibling/ruled.rs makes exactly one S2 call (check_all)"
    );
    assert!(
        elsewhere.is_empty(),
        "S2 called outside sibling::ruled: {elsewhere:?}"
    );
}

/// The S6 calls (`aggregate` on the sibling client, its four arguments:
/// app, subject, function, cells) in one file of `reference/src`, as lines.
fn s6_calls(text: &str) -> Vec<usize> {
    use syn::visit::Visit;
    struct Calls(Vec<usize>);
    impl<'a> Visit<'a> for Calls {
        fn visit_expr_method_call(&mut self, call: &'a syn::ExprMethodCall) {
            if call.method == "aggregate" && call.args.len() == 4 {
                self.0.push(call.method.span().start().line);
            }
            syn::visit::visit_expr_method_call(self, call);
        }
    }
    let Ok(file) = syn::parse_file(text) else {
        return vec![0];
    };
    let mut calls = Calls(vec![]);
    calls.visit_file(&file);
    calls.0
}

#[test]
fn no_surface_of_the_reference_calls_s6_except_through_sibling_ruled() {
    let mut in_ruled = 0;
    let mut elsewhere = Vec::new();
    for (rel, text) in reference_sources() {
        for line in s6_calls(&text) {
            if rel == "sibling/ruled.rs" {
                in_ruled += 1;
            } else {
                elsewhere.push(format!("{rel}:{line} calls aggregate"));
            }
        }
    }
    // The presence that makes the absence meaningful: the one path's call.
    assert_eq!(in_ruled, 1, "sibling/ruled.rs makes exactly one S6 call");
    assert!(
        elsewhere.is_empty(),
        "S6 called outside sibling::ruled (§8.7): {elsewhere:?}"
    );
}

/// The calls that pull a sibling in one file of `reference/src`, as
/// `(what, line)`: `sync(instance, client, app)` (a pull), and the client's
/// `feed` (S1) and `announce` (S1a).
fn pull_calls(text: &str) -> Vec<(String, usize)> {
    use syn::visit::Visit;
    struct Calls(Vec<(String, usize)>);
    impl<'a> Visit<'a> for Calls {
        fn visit_expr_call(&mut self, call: &'a syn::ExprCall) {
            if let syn::Expr::Path(p) = &*call.func
                && p.path.segments.last().is_some_and(|s| s.ident == "sync")
                && call.args.len() == 3
            {
                let line = p.path.segments[0].ident.span().start().line;
                self.0.push(("sync".into(), line));
            }
            syn::visit::visit_expr_call(self, call);
        }
        fn visit_expr_method_call(&mut self, call: &'a syn::ExprMethodCall) {
            let name = call.method.to_string();
            if (name == "feed" && call.args.len() == 2)
                || (name == "announce" && call.args.len() == 1)
            {
                self.0.push((name, call.method.span().start().line));
            }
            syn::visit::visit_expr_method_call(self, call);
        }
    }
    let Ok(file) = syn::parse_file(text) else {
        return vec![("<unparsable file>".into(), 0)];
    };
    let mut calls = Calls(vec![]);
    calls.visit_file(&file);
    calls.0
}

#[test]
fn every_sibling_pull_starts_in_the_puller_and_nothing_pulls_on_a_timer() {
    // §6.1: "memoria pulls on its own wake and on each question. It runs no
    // timers." A pull (`sibling::sync::sync`) is started only by
    // `sibling/pull.rs`; S1 and S1a are read only by the pull itself.
    let mut in_puller = 0;
    let mut reads_in_sync = 0;
    let mut elsewhere = Vec::new();
    for (rel, text) in reference_sources() {
        for (what, line) in pull_calls(&text) {
            match (what.as_str(), rel.as_str()) {
                ("sync", "sibling/pull.rs") => in_puller += 1,
                ("feed" | "announce", "sibling/sync.rs") => reads_in_sync += 1,
                _ => elsewhere.push(format!("{rel}:{line} calls {what}")),
            }
        }
    }
    // The presence that makes the absence meaningful.
    assert!(in_puller >= 1, "sibling/pull.rs starts the pulls");
    assert_eq!(
        reads_in_sync, 2,
        "sibling/sync.rs reads S1 (feed) and S1a (announce) once each"
    );
    assert!(
        elsewhere.is_empty(),
        "a sibling pulled outside sibling::pull: {elsewhere:?}"
    );
}

#[test]
fn every_conformance_case_is_named_by_a_recorded_broken_fake() {
    use memoria_gates::{conform, mutants};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../mutants");
    let files = mutants::discover(&dir);
    let mut named = std::collections::BTreeSet::new();
    let mut kit_mutations = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        if let Ok(m) = mutants::parse(f, &text)
            && m.gate == "conform"
        {
            kit_mutations += 1;
            named.extend(m.conform);
        }
    }
    let cases = conform::cases::all();
    // The presence that makes a missing case mean something: the kit's
    // cases and its recorded broken fakes were both found.
    assert!(cases.len() >= 50, "the kit holds {} cases", cases.len());
    assert!(
        kit_mutations >= 50,
        "found {kit_mutations} gC mutations in {}",
        dir.display()
    );
    let bare: Vec<&str> = cases
        .iter()
        .map(|c| c.id)
        .filter(|id| !named.contains(*id))
        .collect();
    assert!(
        bare.is_empty(),
        "kit cases no recorded broken fake is expected to turn red (a case never seen failing): {bare:?}"
    );
}

/// The documents whose counts are generated, and the blocks each must hold
/// at least (the presence that makes "no stale count" mean something).
const GENERATED_DOCS: &[(&str, &[&str])] = &[
    (
        "README.md",
        &["gates", "gate-count", "gates-to-come", "conform-count"],
    ),
    ("ARCHITECTURE.md", &["gate-count"]),
];

#[test]
fn every_generated_block_in_the_readme_and_architecture_is_what_the_registry_says_now() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut stale = String::new();
    for (doc, blocks) in GENERATED_DOCS {
        let path = root.join(doc);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        for b in *blocks {
            assert!(
                text.contains(&format!("<!-- generated: {b} -->")),
                "{doc} holds no generated block {b:?}"
            );
        }
        let fresh = memoria_gates::listing::refresh(&text).unwrap_or_else(|e| panic!("{doc}: {e}"));
        if fresh != text {
            stale.push_str(&format!("{doc}:\n"));
            let (old, new): (Vec<&str>, Vec<&str>) =
                (text.lines().collect(), fresh.lines().collect());
            for l in old.iter().filter(|l| !new.contains(l)) {
                stale.push_str(&format!("  - {l}\n"));
            }
            for l in new.iter().filter(|l| !old.contains(l)) {
                stale.push_str(&format!("  + {l}\n"));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "generated blocks are stale; refresh them with\n  {}\n(after cargo test --workspace --all-targets --no-run)\n{stale}",
        memoria_gates::listing::REFRESH_COMMAND
    );
}

/// `cargo tree`'s crates with their features, one `name vX [f,g]` per
/// line, for `selection` over the edge kinds `edges`.
fn crates_with_features(selection: &[&str], edges: &str) -> std::collections::BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = std::process::Command::new(&cargo)
        .current_dir(&root)
        .args(["tree", "--frozen", "--prefix", "none", "--no-dedupe"])
        .args(["-e", edges, "-f", "{p} [{f}]"])
        .args(selection)
        .output()
        .unwrap_or_else(|e| panic!("running {cargo} tree: {e}"));
    assert!(
        out.status.success(),
        "cargo tree {selection:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.starts_with("memoria"))
        .map(|l| {
            // `name vX (source) [features] (*)`: the source and marks dropped.
            let l = l.trim_end_matches(" (*)").replace(" (proc-macro)", "");
            match (l.find(" ("), l.find(" [")) {
                (Some(open), Some(feat)) if open < feat => {
                    format!("{}{}", &l[..open], &l[feat..])
                }
                _ => l,
            }
        })
        .collect()
}

#[test]
fn the_harness_alone_resolves_every_shared_crate_with_the_features_of_the_workspace_build() {
    // One build (README): `cargo run -p memoria-gates` reuses the units of
    // `cargo test --workspace` only if no crate it shares is resolved with
    // other features; gates/Cargo.toml asks for the dev-dependencies' ones.
    let harness = crates_with_features(&["-p", "memoria-gates"], "normal,build");
    let workspace = crates_with_features(&["--workspace"], "normal,build,dev");
    assert!(
        harness.iter().any(|c| c.starts_with("tokio v")) && harness.len() > 100,
        "cargo tree listed the harness's crates: {} lines",
        harness.len()
    );
    let differing: Vec<&String> = harness.difference(&workspace).collect();
    assert!(
        differing.is_empty(),
        "the harness alone resolves these crates with features the workspace build does not; add the workspace's features to gates/Cargo.toml's alignment block (compare `cargo tree --workspace -e features -i NAME`):\n{differing:#?}"
    );
}

/// The conformance kit's whole `[dependencies]` list (`gates/kit/Cargo.toml`):
/// the contract crate and an HTTP client, so that a sibling implementer's
/// `cargo install --path gates/kit` builds the kit and nothing else (issue
/// 29, "One job per crate"). A new entry is a decision: add it here too.
const KIT_DEPENDENCIES: &[&str] = &[
    "bytes",
    "clap",
    "glob",
    "http",
    "http-body-util",
    "hyper",
    "hyper-util",
    "jsonschema",
    "memoria-contract",
    "memoria-tls",
    "percent-encoding",
    "quick-xml",
    "serde",
    "serde_json",
    "thiserror",
    "tokio",
    "wait-timeout",
];

/// Crates the kit's build must never reach, directly or through another:
/// the reference, the simulator, the harness (and its probe), and what only
/// they bring (turmoil, the harness's `syn` users).
const KIT_NEVER: &[&str] = &[
    "memoria",
    "memoria-simulator",
    "memoria-gates",
    "memoria-probe",
    "turmoil",
    "axum",
    "rusqlite",
];

/// The `[dependencies]` names of the package manifest at `file` (relative
/// to the workspace root), sorted, and whether it has build dependencies.
fn direct_dependencies(file: &str) -> (Vec<String>, bool) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let path = root.join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let manifest: toml::Table =
        toml::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()));
    let mut direct: Vec<String> = manifest
        .get("dependencies")
        .and_then(toml::Value::as_table)
        .map(|t| t.keys().cloned().collect())
        .unwrap_or_default();
    direct.sort_unstable();
    (direct, manifest.contains_key("build-dependencies"))
}

/// Every crate `package`'s own build reaches (normal and build edges), by
/// name, as `cargo tree` lists it.
fn reached_by(package: &str) -> std::collections::BTreeSet<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = std::process::Command::new(&cargo)
        .current_dir(&root)
        .args(["tree", "--frozen", "--prefix", "none", "-e", "normal,build"])
        .args(["-f", "{p}", "-p", package])
        .output()
        .unwrap_or_else(|e| panic!("running {cargo} tree: {e}"));
    assert!(
        out.status.success(),
        "cargo tree -p {package}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

/// Holds one crate to its dependency lists: `manifest`'s `[dependencies]`
/// are exactly `listed`, it has no build script's dependencies, and the
/// crates `cargo tree` reaches from `package` include each of `present`
/// (so the listing is seen to work) and none of `never`.
fn holds_its_dependencies(
    manifest: &str,
    package: &str,
    listed: &[&str],
    present: &[&str],
    never: &[&str],
) {
    let (direct, build) = direct_dependencies(manifest);
    assert_eq!(
        direct, listed,
        "{manifest}'s [dependencies] differ from its list in this test"
    );
    assert!(!build, "{package} has no build script's dependencies");
    let reached = reached_by(package);
    assert!(
        present.iter().all(|n| reached.contains(*n)),
        "cargo tree listed {package}'s crates: {reached:?}"
    );
    let forbidden: Vec<&&str> = never.iter().filter(|n| reached.contains(**n)).collect();
    assert!(
        forbidden.is_empty(),
        "{package}'s build reaches {forbidden:?}, which it must build without"
    );
}

#[test]
fn the_conformance_kit_depends_on_the_contract_and_an_http_client_never_on_memoria_the_simulator_or_the_gates()
 {
    holds_its_dependencies(
        "gates/kit/Cargo.toml",
        "memoria-kit",
        KIT_DEPENDENCIES,
        &["memoria-contract", "hyper"],
        KIT_NEVER,
    );
}

/// The mutation runner's whole `[dependencies]` list
/// (`gates/mutants/Cargo.toml`): syn for the items it anchors and compares,
/// serde for the mutation files and the reports it reads back by their
/// shape, and the process plumbing of its scratch builds (issue 29, "One job
/// per crate"). A new entry is a decision: add it here too.
const MUTANTS_DEPENDENCIES: &[&str] = &[
    "indicatif",
    "proc-macro2",
    "quote",
    "serde",
    "serde_json",
    "syn",
    "tempfile",
    "thiserror",
    "toml",
    "wait-timeout",
    "walkdir",
];

/// Crates the mutation runner's build must never reach: any crate of the
/// workspace. It runs the harness as a child and reads its reports by their
/// shape, so nothing it judges is compiled into it.
const MUTANTS_NEVER: &[&str] = &[
    "memoria",
    "memoria-simulator",
    "memoria-gates",
    "memoria-kit",
    "memoria-contract",
    "memoria-page",
    "memoria-probe",
    "memoria-tls",
    "memoria-gcm",
    "memoria-embed-wire",
    "turmoil",
];

#[test]
fn the_mutation_runner_depends_on_its_listed_crates_and_on_no_crate_of_the_workspace() {
    holds_its_dependencies(
        "gates/mutants/Cargo.toml",
        "memoria-mutants",
        MUTANTS_DEPENDENCIES,
        &["memoria-mutants", "syn"],
        MUTANTS_NEVER,
    );
}

/// The shared TLS crate's whole `[dependencies]` list
/// (`reference/tls/Cargo.toml`): rustls and what it runs over, so that the
/// reference and the conformance kit can both depend on it and the kit
/// still builds without the reference. A new entry is a decision.
const TLS_DEPENDENCIES: &[&str] = &[
    "rustls",
    "thiserror",
    "tokio",
    "tokio-rustls",
    "webpki-roots",
];

/// The page reader's whole `[dependencies]` list (`fixtures/page/Cargo.toml`):
/// an HTML parser, so that the reference's tests, the simulator and the
/// gates can all read pages with it and it reads a page as a person would,
/// knowing nothing of how the reference renders one.
const PAGE_DEPENDENCIES: &[&str] = &["scraper"];

#[test]
fn the_tls_crate_and_the_page_reader_depend_on_their_listed_crates_and_nothing_of_the_workspace() {
    let workspace = [
        "memoria",
        "memoria-simulator",
        "memoria-gates",
        "memoria-kit",
        "memoria-contract",
        "memoria-page",
        "memoria-tls",
    ];
    for (manifest, package, want, needs) in [
        (
            "reference/tls/Cargo.toml",
            "memoria-tls",
            TLS_DEPENDENCIES,
            "rustls",
        ),
        (
            "fixtures/page/Cargo.toml",
            "memoria-page",
            PAGE_DEPENDENCIES,
            "scraper",
        ),
    ] {
        let (direct, build) = direct_dependencies(manifest);
        assert_eq!(
            direct, want,
            "{manifest}'s [dependencies] differ from its list in this test"
        );
        assert!(!build, "{manifest} has no build script's dependencies");
        let reached = reached_by(package);
        // The presence that makes the absence below mean something.
        assert!(
            reached.contains(package) && reached.contains(needs),
            "cargo tree listed {package}'s crates: {reached:?}"
        );
        let inside: Vec<&&str> = workspace
            .iter()
            .filter(|n| **n != package && reached.contains(**n))
            .collect();
        assert!(
            inside.is_empty(),
            "{package}'s build reaches {inside:?} of the workspace; it must depend on none of it"
        );
    }
}

#[test]
fn the_shipped_build_of_the_reference_has_exactly_the_reference_s_dependencies() {
    // reference/ship/ compiles reference/src without `testkit` for
    // its no-crash-point test: it is memoria as shipped only while it builds
    // against what `memoria` builds against.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let deps = |file: &str| -> toml::Table {
        let path = root.join(file);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        let manifest: toml::Table =
            toml::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()));
        manifest
            .get("dependencies")
            .and_then(toml::Value::as_table)
            .cloned()
            .unwrap_or_else(|| panic!("{} has no [dependencies]", path.display()))
    };
    let reference = deps("reference/Cargo.toml");
    let shipped = deps("reference/ship/Cargo.toml");
    assert!(
        reference.contains_key("tokio") && reference.len() > 20,
        "reference/Cargo.toml's dependencies were read: {} of them",
        reference.len()
    );
    let only = |a: &toml::Table, b: &toml::Table| -> Vec<String> {
        a.iter()
            .filter(|(k, v)| b.get(*k) != Some(v))
            .map(|(k, v)| format!("{k} = {v}"))
            .collect()
    };
    let (missing, extra) = (only(&reference, &shipped), only(&shipped, &reference));
    assert!(
        missing.is_empty() && extra.is_empty(),
        "reference/ship/Cargo.toml's [dependencies] must be reference/Cargo.toml's, exactly:\n  missing or different there: {missing:?}\n  only there: {extra:?}"
    );
}

/// A file of `reference/src`'s module path: `access/admission.rs` is
/// `access::admission`, `access/mod.rs` is `access`, `lib.rs` the root.
fn module_path(rel: &str) -> Vec<String> {
    let rel = rel.trim_end_matches(".rs");
    let mut parts: Vec<String> = rel.split('/').map(str::to_owned).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// Every path `text` names outside `#[cfg(test)]` items, as segments: the
/// `use` trees flattened, and the paths of expressions and types.
fn named_paths(text: &str) -> Vec<Vec<String>> {
    use syn::visit::Visit;
    fn is_test(attrs: &[syn::Attribute]) -> bool {
        attrs.iter().any(|a| {
            a.path().is_ident("cfg")
                && a.meta
                    .require_list()
                    .is_ok_and(|l| l.tokens.to_string().split_whitespace().any(|t| t == "test"))
        })
    }
    fn flatten(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                flatten(&p.tree, prefix, out);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let mut p = prefix.clone();
                p.push(n.ident.to_string());
                out.push(p);
            }
            syn::UseTree::Rename(r) => {
                let mut p = prefix.clone();
                p.push(r.ident.to_string());
                out.push(p);
            }
            syn::UseTree::Glob(_) => out.push(prefix.clone()),
            syn::UseTree::Group(g) => g.items.iter().for_each(|t| flatten(t, prefix, out)),
        }
    }
    struct Paths(Vec<Vec<String>>);
    impl<'a> Visit<'a> for Paths {
        fn visit_item_use(&mut self, u: &'a syn::ItemUse) {
            if !is_test(&u.attrs) {
                flatten(&u.tree, &mut Vec::new(), &mut self.0);
            }
        }
        fn visit_item_mod(&mut self, m: &'a syn::ItemMod) {
            if !is_test(&m.attrs) {
                syn::visit::visit_item_mod(self, m);
            }
        }
        fn visit_item_fn(&mut self, f: &'a syn::ItemFn) {
            if !is_test(&f.attrs) {
                syn::visit::visit_item_fn(self, f);
            }
        }
        fn visit_item_impl(&mut self, i: &'a syn::ItemImpl) {
            if !is_test(&i.attrs) {
                syn::visit::visit_item_impl(self, i);
            }
        }
        // `pub(crate)` and `pub(super)` name a scope, not an item.
        fn visit_visibility(&mut self, _: &'a syn::Visibility) {}
        fn visit_path(&mut self, p: &'a syn::Path) {
            self.0
                .push(p.segments.iter().map(|s| s.ident.to_string()).collect());
            syn::visit::visit_path(self, p);
        }
        fn visit_macro(&mut self, m: &'a syn::Macro) {
            macro_paths(m.tokens.clone(), &mut self.0);
            syn::visit::visit_macro(self, m);
        }
    }
    /// The `a::b::c` paths written inside a macro's tokens (maud's
    /// `html!` calls functions of other files in its body), nested groups
    /// included: a macro's body is tokens to `syn`, so its paths are read
    /// here, as runs of identifiers joined by `::`.
    fn macro_paths(tokens: proc_macro2::TokenStream, out: &mut Vec<Vec<String>>) {
        use proc_macro2::TokenTree;
        let mut run: Vec<String> = Vec::new();
        let mut colons = 0;
        let end = |run: &mut Vec<String>, out: &mut Vec<Vec<String>>| {
            if run.len() > 1 {
                out.push(std::mem::take(run));
            }
            run.clear();
        };
        for tt in tokens {
            match tt {
                TokenTree::Ident(i) if run.is_empty() || colons == 2 => {
                    run.push(i.to_string());
                    colons = 0;
                }
                TokenTree::Punct(p) if p.as_char() == ':' && !run.is_empty() && colons < 2 => {
                    colons += 1;
                }
                TokenTree::Group(g) => {
                    end(&mut run, out);
                    colons = 0;
                    macro_paths(g.stream(), out);
                }
                other => {
                    end(&mut run, out);
                    colons = 0;
                    if let TokenTree::Ident(i) = other {
                        run.push(i.to_string());
                    }
                }
            }
        }
        end(&mut run, out);
    }
    let Ok(file) = syn::parse_file(text) else {
        return Vec::new();
    };
    let mut paths = Paths(Vec::new());
    paths.visit_file(&file);
    paths.0
}

/// The reference's import graph between files: an arrow from a file to each
/// file whose module a `crate::`, `super::` or `self::` path of it names,
/// outside tests. A module's own file naming its children (declaring or
/// re-exporting them) is not an arrow; a path through the crate root's
/// re-exports (`crate::Error`) is an arrow to `lib.rs`, which stands above
/// every room it re-exports, so no room reaches a higher one through the
/// facade.
fn reference_imports() -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    let sources: Vec<(String, String)> = reference_sources()
        .into_iter()
        .filter(|(rel, _)| rel != "main.rs")
        .collect();
    let files: std::collections::BTreeMap<Vec<String>, String> = sources
        .iter()
        .map(|(rel, _)| (module_path(rel), rel.clone()))
        .collect();
    let mut graph = std::collections::BTreeMap::new();
    for (rel, text) in &sources {
        let here = module_path(rel);
        let mut to = std::collections::BTreeSet::new();
        for path in named_paths(text) {
            let mut module: Vec<String> = match path.first().map(String::as_str) {
                Some("crate") => Vec::new(),
                Some("self") => here.clone(),
                Some("super") => here.clone(),
                _ => continue,
            };
            let mut rest = path.iter().skip(1).peekable();
            if path[0] == "super" {
                module.pop();
                while rest.peek().is_some_and(|s| *s == "super") {
                    rest.next();
                    module.pop();
                }
            }
            module.extend(rest.cloned());
            while !module.is_empty() && !files.contains_key(&module) {
                module.pop();
            }
            let Some(target) = files.get(&module) else {
                continue;
            };
            // A path that stops at the crate's root names `lib.rs`: an item
            // the facade re-exports (`crate::Error`) is an arrow to it, so
            // a room cannot reach one above it through the facade.
            let own_child = module.starts_with(&here) && rel.ends_with("mod.rs");
            if target != rel && !own_child {
                to.insert(target.clone());
            }
        }
        graph.insert(rel.clone(), to);
    }
    graph
}

/// The strongly connected components of `graph` with more than one file
/// (Tarjan's algorithm), each sorted.
fn circles(
    graph: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
) -> Vec<Vec<String>> {
    struct Tarjan<'g> {
        graph: &'g std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
        index: std::collections::BTreeMap<&'g str, (usize, usize)>,
        stack: Vec<&'g str>,
        on_stack: std::collections::BTreeSet<&'g str>,
        out: Vec<Vec<String>>,
    }
    impl<'g> Tarjan<'g> {
        fn visit(&mut self, v: &'g str) {
            let n = self.index.len();
            self.index.insert(v, (n, n));
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.graph.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.index[w].1.min(self.index[v].1);
                    if let Some(e) = self.index.get_mut(v) {
                        e.1 = low;
                    }
                } else if self.on_stack.contains(w) {
                    let low = self.index[w].0.min(self.index[v].1);
                    if let Some(e) = self.index.get_mut(v) {
                        e.1 = low;
                    }
                }
            }
            if self.index[v].0 == self.index[v].1 {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    component.push(w.to_owned());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.out.push(component);
                }
            }
        }
    }
    let mut t = Tarjan {
        graph,
        index: Default::default(),
        stack: Vec::new(),
        on_stack: Default::default(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v.as_str()) {
            t.visit(v);
        }
    }
    t.out.sort();
    t.out
}

#[test]
fn the_reference_s_files_import_each_other_without_a_circle() {
    // Issue 29: the import circles inside the reference go to zero, and a
    // tidy test holds the picture.
    let graph = reference_imports();
    let arrows: usize = graph.values().map(|t| t.len()).sum();
    assert!(
        graph.len() > 100 && arrows > 200,
        "the import graph was read: {} files, {arrows} arrows",
        graph.len()
    );
    assert!(
        graph["web/search.rs"].contains("page.rs"),
        "the graph sees an import it must: web/search.rs -> page.rs"
    );
    assert!(
        graph["web/search.rs"].contains("web/facts.rs"),
        "the graph sees an import written inside a macro's body: web/search.rs -> web/facts.rs (html!)"
    );
    assert!(
        graph["testkit.rs"].contains("lib.rs"),
        "the graph sees an item named through the facade: testkit.rs -> lib.rs (crate::Connectors)"
    );
    let found = circles(&graph);
    let describe = |c: &Vec<String>| -> String {
        c.iter()
            .map(|f| {
                let inside: Vec<&String> = graph[f].iter().filter(|t| c.contains(t)).collect();
                format!("  {f} -> {inside:?}")
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(
        found.is_empty(),
        "the reference's files import each other in circles; each is its files and the arrows inside it:\n{}",
        found.iter().map(describe).collect::<Vec<_>>().join("\n\n")
    );
}

/// The reference's rooms (a top-level folder or file of `reference/src`)
/// from the ground floor up, as ARCHITECTURE.md's layer order gives them: a
/// room imports only rooms on its own floor or below. Rooms on one floor
/// import each other only one way (the file-level circle test holds that).
const FLOORS: &[&[&str]] = &[
    &["error"],
    &["clock"],
    &["crashpoint"],
    &["policy"],
    &["date"],
    &["net"],
    &["dense"],
    &["ai"],
    &["search"],
    &["storage"],
    &["numeric"],
    &["ingest"],
    &["access"],
    &["config"],
    &["artefact"],
    &["page"],
    &["brief"],
    &["answer"],
    &["instance"],
    &["offload"],
    &["sibling"],
    &["app"],
    &["web"],
    &["mcp"],
    &["demo"],
    &["lib"],
    &["testkit"],
    &["limits"],
];

#[test]
fn the_reference_s_rooms_import_only_down_the_layer_order() {
    // Issue 29: the layer order is written in ARCHITECTURE.md as an
    // invariant and held here, beside the circle test.
    let graph = reference_imports();
    let room = |rel: &str| -> String {
        rel.split('/')
            .next()
            .unwrap_or(rel)
            .trim_end_matches(".rs")
            .to_owned()
    };
    let mut arrows: std::collections::BTreeMap<(String, String), usize> = Default::default();
    for (from, tos) in &graph {
        for to in tos {
            let (a, b) = (room(from), room(to));
            if a != b {
                *arrows.entry((a, b)).or_default() += 1;
            }
        }
    }
    let rooms: std::collections::BTreeSet<String> = graph.keys().map(|f| room(f)).collect();
    let floor_of: std::collections::BTreeMap<&str, usize> = FLOORS
        .iter()
        .enumerate()
        .flat_map(|(i, f)| f.iter().map(move |r| (*r, i)))
        .collect();
    let unplaced: Vec<&String> = rooms
        .iter()
        .filter(|r| !floor_of.contains_key(r.as_str()))
        .collect();
    assert!(
        arrows.len() > 50 && unplaced.is_empty(),
        "every room of the reference has a floor ({} arrows between rooms read); these have none: {unplaced:?}\n{arrows:#?}",
        arrows.len()
    );
    let upward: std::collections::BTreeSet<(&str, &str)> = arrows
        .keys()
        .filter(|(a, b)| floor_of[b.as_str()] > floor_of[a.as_str()])
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let architecture =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../ARCHITECTURE.md"))
            .expect("ARCHITECTURE.md reads");
    let stated: Vec<&str> = architecture
        .split_once("stand in one layer order, from the ground up:")
        .and_then(|(_, rest)| rest.split_once("A room imports"))
        .map(|(order, _)| order.split('`').skip(1).step_by(2).collect())
        .unwrap_or_default();
    let held: Vec<&str> = FLOORS.iter().flat_map(|f| f.iter().copied()).collect();
    assert_eq!(
        stated, held,
        "ARCHITECTURE.md states the layer order this test holds"
    );
    for (from, to) in [
        ("storage", "search"),
        ("page", "artefact"),
        ("page", "numeric"),
    ] {
        assert!(
            arrows.contains_key(&(from.to_owned(), to.to_owned())),
            "the test reads an arrow whose direction the order decides: {from} -> {to}"
        );
    }
    assert!(
        upward.is_empty(),
        "arrows that run up the layer order (from, to): {upward:?}"
    );
}

/// Where GATES.md is looked for: `MEMORIA_SPEC_DIR`, else `shared/spec/`
/// beside the workspace (where the spec sits next to a checkout).
fn gates_md_path() -> std::path::PathBuf {
    std::env::var_os("MEMORIA_SPEC_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/spec"))
        .join("GATES.md")
}

/// GATES.md's words for gate `id`, read from its tables: the numbered
/// row whose number or range (`35-37`) holds it, the suite row named
/// `suite N`, or, for this project's numbers above 39, every brief check
/// whose source is the brief paper the gate holds.
fn gates_md_words(md: &str, id: &str) -> Vec<String> {
    const BRIEF_PAPERS: [(&str, &str); 3] = [
        ("40", "brief-repeats.md"),
        ("41", "brief-organisation-read.md"),
        ("42", "brief-material.md"),
    ];
    let rows: Vec<Vec<&str>> = md
        .lines()
        .filter(|l| l.starts_with('|') && !l.starts_with("|---"))
        .map(|l| {
            l.trim()
                .trim_matches('|')
                .split('|')
                .map(str::trim)
                .collect()
        })
        .collect();
    let holds = |first: &str| -> bool {
        let (a, b) = first.split_once('-').unwrap_or((first, first));
        match (a.parse::<u32>(), b.parse::<u32>(), id.parse::<u32>()) {
            (Ok(a), Ok(b), Ok(n)) => a <= n && n <= b,
            _ => first == id,
        }
    };
    if let Some((_, paper)) = BRIEF_PAPERS.iter().find(|(g, _)| *g == id) {
        return rows
            .iter()
            .filter(|r| r.len() == 2 && r[1].starts_with(paper))
            .map(|r| r[0].to_owned())
            .collect();
    }
    rows.iter()
        .filter(|r| r.len() >= 2 && holds(r[0]))
        .map(|r| r[1].to_owned())
        .collect()
}

#[test]
fn every_gate_quotes_its_gates_md_row_verbatim() {
    // Issue 29: each gate quotes GATES.md's row rather than a second
    // paraphrase, checked against the spec wherever it is found.
    for g in memoria_gates::registry() {
        assert!(
            !g.gates_md.is_empty() && g.gates_md.iter().all(|r| !r.trim().is_empty()),
            "gate {} quotes GATES.md",
            g.id
        );
    }
    let path = gates_md_path();
    let Ok(md) = std::fs::read_to_string(&path) else {
        eprintln!(
            "GATES.md not found at {}: the quotes were not compared (set MEMORIA_SPEC_DIR)",
            path.display()
        );
        return;
    };
    assert!(
        gates_md_words(&md, "5")
            == ["Two people get different answers, decided by the sibling's own grants join"],
        "GATES.md's rows are read ({})",
        path.display()
    );
    for g in memoria_gates::registry() {
        assert_eq!(
            g.gates_md,
            gates_md_words(&md, g.id),
            "gate {} quotes {} verbatim",
            g.id,
            path.display()
        );
    }
}

#[test]
fn every_glob_of_the_cargo_mutants_configuration_names_a_file_that_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let path = root.join(".cargo/mutants.toml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let config: toml::Table = text
        .parse()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut read = 0;
    let mut stale = Vec::new();
    for key in ["examine_globs", "exclude_globs"] {
        for g in config
            .get(key)
            .and_then(toml::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(toml::Value::as_str)
        {
            read += 1;
            let pattern = root.join(g).display().to_string();
            let found = glob::glob(&pattern)
                .unwrap_or_else(|e| panic!("{key} `{g}`: {e}"))
                .filter_map(Result::ok)
                .any(|p| p.is_file());
            if !found {
                stale.push(format!("{key} `{g}`"));
            }
        }
    }
    assert!(read > 0, "{} names no glob to examine", path.display());
    assert!(
        stale.is_empty(),
        "globs in {} that match no file: {stale:?}",
        path.display()
    );
}
