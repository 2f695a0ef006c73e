//! The schema pass: writes, builds and runs one schema tree (`schema.rs`) before any mutation is built on its own.
//!
//! Size: about 860 lines: the pass is one sequence (choose, write, build,
//! run, judge), and each step's refusals sit beside it.
//!
//! The pass, in the scratch copies the runner made:
//! 1. each mutation's diff is applied, the files it touches are read and
//!    compared with the originals ([`schema::body_changes`]), and the diff
//!    is reversed; a mutation that is not function bodies alone stays out;
//! 2. the schema tree is written and built in the first copy; the functions
//!    its compile errors fall in send their mutations out, and it is written
//!    again, at most [`SCHEMA_BUILD_ATTEMPTS_MAX`] times;
//! 3. the tree is written and built in every other copy;
//! 4. every copy's source goes back to the original (the binaries are
//!    built), and every gate, case, kit run and scenario the schema's
//!    mutations name is run once with no mutation selected, on the schema
//!    build: a red one sends its mutations out (to be built on their own,
//!    against the plain baseline), never fails the run;
//! 5. each mutation runs with its number in [`SCHEMA_ENV`] and its own diff
//!    applied to the source on disk (reversed after), so that a gate that
//!    reads the source (15's dialer, 17's routes) reads what the mutation
//!    built on its own would show; a kill is reported, anything else goes
//!    out to be built on its own and judged there;
//! 6. every copy gets its original files back.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Mutex;
use std::time::Instant;

use super::consts;
use super::judge::failed_case_ids;
use super::report::secs;
use super::schema::{
    self, BodyChange, FileVariant, Inserted, Refusal, RefusalKind, SCHEMA_BUILD_ATTEMPTS_MAX,
    SchemaFile,
};
use super::scratch::{BuildError, Ended, Scratch, git_apply};
use super::{
    CONFORM_GATE, MutantReport, Mutation, Options, Outcome, SCENARIO_GATE, judged_run, report_of,
};

/// A schema run's time limit, as a multiple of its baseline's run time on
/// the schema build (at least [`SCHEMA_RUN_TIMEOUT_MIN_S`], at most the run's
/// own limit): four g08 and g27 mutations ran into the full 300 s limit here
/// on a loaded machine, 20 minutes of two workers' time for no verdict.
const SCHEMA_RUN_TIMEOUT_FACTOR: u32 = 5;
/// The least time limit of a schema run, in seconds.
const SCHEMA_RUN_TIMEOUT_MIN_S: u64 = 30;

/// One mutation that joins the schema: its index in the run, its number in
/// the schema, and its body changes per workspace-relative file.
pub(super) struct Member {
    pub index: usize,
    pub number: u32,
    files: Vec<FileChanges>,
    /// Items it adds, per workspace-relative file.
    inserted: BTreeMap<String, Vec<Inserted>>,
    /// The names those items define, renamed per mutation in the tree.
    names: Vec<String>,
}

/// What [`member`] finds for a mutation that joins the schema.
struct Joins {
    files: Vec<FileChanges>,
    inserted: BTreeMap<String, Vec<Inserted>>,
    names: Vec<String>,
}

/// A file's workspace-relative path and a mutation's body changes in it.
type FileChanges = (String, Vec<BodyChange>);

/// What [`pass`] returns: the kills it saw, with their indices, and the
/// indices of every mutation left to build on its own.
pub(super) type Passed = (Vec<(usize, MutantReport)>, Vec<usize>);

/// The schema tree, built in every scratch copy: the mutations in it, the
/// original files it rewrote, and why each mutation left out stayed out
/// (by index into the run).
pub(super) struct Built {
    pub members: Vec<Member>,
    pub originals: BTreeMap<String, String>,
    pub out: BTreeMap<usize, Refusal>,
}

/// Steps 1 to 3: finds the mutations of function bodies alone in `parsed`,
/// writes the schema tree and builds it in every copy. `None`: no schema
/// (no member, or it does not build), every copy holds its originals again.
/// On `Some`, the copies hold the schema tree until [`restore`].
///
/// # Errors
/// A scratch copy's files cannot be read or written back, or a diff cannot
/// be reversed.
pub(super) fn build(
    scratches: &[Scratch],
    parsed: &[(String, Result<Mutation, String>)],
    say: &(dyn Fn(String) + Sync),
) -> Result<Option<Built>, String> {
    let first = &scratches[0];
    // Read while no diff is applied: the originals a const mutation's
    // declaration is spread through (`consts.rs`).
    let sources = consts::Sources::read(&first.work)?;
    let mut originals: BTreeMap<String, String> = BTreeMap::new();
    let mut members: Vec<Member> = Vec::new();
    let mut why_out: BTreeMap<RefusalKind, usize> = BTreeMap::new();
    let mut out: BTreeMap<usize, Refusal> = BTreeMap::new();
    for (i, (_, m)) in parsed.iter().enumerate() {
        let Ok(m) = m else { continue };
        match member(first, m, &sources, &mut originals)? {
            Ok(j) => members.push(Member {
                index: i,
                number: u32::try_from(i + 1).unwrap_or(u32::MAX),
                files: j.files,
                inserted: j.inserted,
                names: j.names,
            }),
            Err(why) => {
                *why_out.entry(why.kind).or_default() += 1;
                out.insert(i, why);
            }
        }
    }
    say(format!(
        "schema: {} of {} mutations rewrite function bodies only{}",
        members.len(),
        parsed.len(),
        if why_out.is_empty() {
            String::new()
        } else {
            format!(
                "; the rest build on their own: {}",
                why_out
                    .iter()
                    .map(|(w, n)| format!("{n} × {}", w.label()))
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        }
    ));
    for (i, why) in &out {
        say(format!("schema: {} builds on its own: {why}", parsed[*i].0));
    }
    if members.is_empty() {
        return Ok(None);
    }

    // 2. Write and build in the first copy until it compiles. The first
    // attempt builds every copy side by side: it usually compiles, and the
    // other copies are then ready too.
    let t_build = Instant::now();
    let rest = &scratches[1..];
    let mut built = false;
    let mut others_ready = false;
    for attempt in 1..=SCHEMA_BUILD_ATTEMPTS_MAX {
        let files = write_tree(first, &members, &originals)?;
        let result = if attempt == 1 && !rest.is_empty() {
            for s in rest {
                write_tree(s, &members, &originals)?;
            }
            let (mine, theirs) = std::thread::scope(|sc| {
                let handles: Vec<_> = rest.iter().map(|s| sc.spawn(|| s.build())).collect();
                let mine = first.build_diagnosed(true);
                let theirs: Vec<Result<(), BuildError>> = handles
                    .into_iter()
                    .map(|h| {
                        h.join()
                            .unwrap_or_else(|_| Err(BuildError::not_run("the build panicked")))
                    })
                    .collect();
                (mine, theirs)
            });
            others_ready = theirs.iter().all(Result::is_ok);
            mine
        } else {
            first.build_diagnosed(true)
        };
        match result {
            Ok(()) => {
                built = true;
                say(format!(
                    "schema: {} mutations built as one at attempt {attempt} in {}",
                    members.len(),
                    secs(t_build.elapsed().as_millis() as u64)
                ));
                break;
            }
            Err(BuildError {
                first: first_error,
                messages,
                ..
            }) => {
                let blamed = blame(&messages, &files);
                if blamed.is_empty() {
                    say(format!(
                        "schema: the tree does not build and no error falls in a rewritten function ({first_error}); every mutation builds on its own"
                    ));
                    break;
                }
                say(format!(
                    "schema: attempt {attempt} does not build; {} mutation{} whose functions the errors fall in leave the schema",
                    blamed.len(),
                    if blamed.len() == 1 { "" } else { "s" }
                ));
                for m in members.iter().filter(|m| blamed.contains(&m.number)) {
                    say(format!(
                        "schema: {} builds on its own: it does not compile in the schema",
                        parsed[m.index].0
                    ));
                    out.insert(
                        m.index,
                        Refusal::new(
                            RefusalKind::DoesNotCompile,
                            "it does not compile in the schema",
                        ),
                    );
                }
                members.retain(|m| !blamed.contains(&m.number));
                if members.is_empty() {
                    break;
                }
            }
        }
    }
    if !built || members.is_empty() {
        restore(scratches, &originals)?;
        return Ok(None);
    }

    // 3. The same tree in every other copy, unless the first attempt built it there.
    for s in rest {
        write_tree(s, &members, &originals)?;
    }
    let others: Vec<Result<(), BuildError>> = if others_ready {
        Vec::new()
    } else {
        std::thread::scope(|sc| {
            let handles: Vec<_> = rest.iter().map(|s| sc.spawn(|| s.build())).collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(BuildError::not_run("the build panicked")))
                })
                .collect()
        })
    };
    if let Some(e) = others.into_iter().find_map(Result::err) {
        say(format!(
            "schema: a second copy does not build the tree the first built ({e}); every mutation builds on its own"
        ));
        restore(scratches, &originals)?;
        return Ok(None);
    }
    Ok(Some(Built {
        members,
        originals,
        out,
    }))
}

/// Runs the schema pass over `parsed` in `scratches`.
///
/// # Errors
/// A scratch copy's files cannot be read or written back, or a diff cannot
/// be reversed: the copy is then no longer the workspace.
pub(super) fn pass(
    scratches: &[Scratch],
    parsed: &[(String, Result<Mutation, String>)],
    opts: &Options,
    say: &(dyn Fn(String) + Sync),
) -> Result<Passed, String> {
    let everyone: Vec<usize> = (0..parsed.len()).collect();
    let Built {
        mut members,
        originals,
        ..
    } = match build(scratches, parsed, say)? {
        Some(b) => b,
        None => return Ok((Vec::new(), everyone)),
    };

    // The binaries are built: the source on disk goes back to the original,
    // and during a mutation's run it is the original plus that mutation's own
    // diff (step 5). A gate that reads the source (15's dialer, 17's routes,
    // 4's prints) so sees what it would see with the mutation built on its
    // own, never the other mutations' bodies.
    restore(scratches, &originals)?;

    // 4. Baselines on the schema build, nothing selected.
    let selectors: BTreeSet<String> = members
        .iter()
        .filter_map(|m| parsed[m.index].1.as_ref().ok())
        .map(baseline_key)
        .collect();
    // A gate whose baseline has red cases on the schema build (none is
    // expected since the source beside the build is the original) still
    // judges its mutations by its other cases: only a case green in the
    // baseline and red in the mutation's run counts as a kill there.
    let baselined: BTreeMap<String, (BTreeSet<String>, std::time::Duration)> = on_workers(
        scratches,
        selectors.into_iter().collect(),
        |s, sel| {
            let t0 = Instant::now();
            let m = members
                .iter()
                .filter_map(|m| parsed[m.index].1.as_ref().ok())
                .find(|m| baseline_key(m) == *sel)?;
            let red = match m.gate.as_str() {
                CONFORM_GATE => s
                    .conform(opts.run_timeout, None)
                    .ok()
                    .filter(|r| matches!(r.ended, Ended::Code(0)))
                    .map(|_| BTreeSet::new()),
                SCENARIO_GATE => s
                    .replay(m.scenario.as_deref().unwrap_or_default(), opts.run_timeout, None)
                    .ok()
                    .filter(|r| matches!(r.ended, Ended::Code(0)))
                    .map(|_| BTreeSet::new()),
                _ => s
                    .gate(sel, opts.seed, opts.run_timeout, None)
                    .ok()
                    .and_then(|r| match r.ended {
                        Ended::Code(0) => Some(BTreeSet::new()),
                        Ended::Code(1) => failed_case_ids(&r.stdout)
                            .ok()
                            .filter(|(red, cases)| !red.is_empty() && red.len() < *cases)
                            .map(|(red, _)| red),
                        _ => None,
                    }),
            };
            match &red {
                None => say(format!(
                    "schema: baseline {sel} is not green on the schema build; its mutations build on their own"
                )),
                Some(red) if !red.is_empty() => say(format!(
                    "schema: baseline {sel} has {} red case{} on the schema build ({}); its other cases judge its mutations there",
                    red.len(),
                    if red.len() == 1 { "" } else { "s" },
                    red.iter().cloned().collect::<Vec<_>>().join(", ")
                )),
                Some(_) => {}
            }
            red.map(|r| (sel.clone(), (r, t0.elapsed())))
        },
    )
    .into_iter()
    .flatten()
    .collect();
    members.retain(|m| {
        parsed[m.index]
            .1
            .as_ref()
            .is_ok_and(|mu| baselined.contains_key(&baseline_key(mu)))
    });

    // 5. Each mutation, selected by its number, its diff applied on disk.
    let total = members.len();
    let broken: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let judged: Vec<(usize, Option<MutantReport>)> = on_workers(
        scratches,
        members.iter().map(|m| (m.index, m.number)).collect(),
        |s, &(i, k)| {
            let (rel, m) = &parsed[i];
            let m = m.as_ref().ok()?;
            if broken.get().is_some() {
                return Some((i, None));
            }
            let t0 = Instant::now();
            let (red_before, took) = baselined
                .get(&baseline_key(m))
                .map(|(r, t)| (Some(r).filter(|r| !r.is_empty()), *t))
                .unwrap_or_default();
            // A schema run past several times its baseline is sent to be
            // built on its own, where the full limit applies: a timeout here
            // is never a verdict, so waiting it out would only cost time.
            let opts = &Options {
                run_timeout: (took * SCHEMA_RUN_TIMEOUT_FACTOR)
                    .max(std::time::Duration::from_secs(SCHEMA_RUN_TIMEOUT_MIN_S))
                    .min(opts.run_timeout),
                ..opts.clone()
            };
            if let Err(e) = git_apply(&s.work, &m.diff, &[]) {
                // Not a verdict: it is built on its own, where its diff is
                // applied (or judged stale) again.
                if opts.progress {
                    super::progress::line(&format!(
                        "[schema] {rel}: its diff does not apply to the source beside the schema build ({e}); it is built on its own next"
                    ));
                }
                return Some((i, None));
            }
            let (status, detail) = match red_before {
                None => judged_run(s, m, opts, Some(k)),
                Some(red_before) => judged_past(s, m, opts, k, red_before),
            };
            if let Err(e) = git_apply(&s.work, &m.diff, &["-R"]) {
                // The copy no longer holds the workspace's source: no later
                // run may judge there, and the pass fails.
                let _ = broken.set(format!(
                    "undoing {} in {} after its schema run: {e}",
                    m.file.display(),
                    s.work.display()
                ));
            }
            let ms = t0.elapsed().as_millis() as u64;
            let n = done.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            if opts.progress {
                let verdict = format!("{status:?}").to_lowercase();
                super::progress::line(&format!(
                    "[schema {n}/{total}] {rel}: {verdict} in {}{}",
                    secs(ms),
                    if status == Outcome::Killed {
                        ""
                    } else {
                        "; it is built on its own next"
                    }
                ));
                if status == Outcome::Killed {
                    super::progress::finished(&format!("{rel}: {verdict}"));
                }
            }
            Some((
                i,
                (status == Outcome::Killed)
                    .then(|| report_of(rel, m, (status, detail), (ms, 0, ms), true)),
            ))
        },
    )
    .into_iter()
    .flatten()
    .collect();

    if let Some(e) = broken.into_inner() {
        return Err(e);
    }
    // 6. The originals back, in every copy.
    restore(scratches, &originals)?;
    let killed: Vec<(usize, MutantReport)> = judged
        .iter()
        .filter_map(|(i, r)| r.clone().map(|r| (*i, r)))
        .collect();
    let kept: BTreeSet<usize> = killed.iter().map(|(i, _)| *i).collect();
    say(format!(
        "schema: {} killed on the schema build; {} mutation{} build{} on {} own",
        killed.len(),
        parsed.len() - killed.len(),
        if parsed.len() - killed.len() == 1 {
            ""
        } else {
            "s"
        },
        if parsed.len() - killed.len() == 1 {
            "s"
        } else {
            ""
        },
        if parsed.len() - killed.len() == 1 {
            "its"
        } else {
            "their"
        },
    ));
    Ok((
        killed,
        everyone.into_iter().filter(|i| !kept.contains(i)).collect(),
    ))
}

/// A gate mutation run on the schema build when its baseline there has red
/// cases: killed only if a case outside `red_before` failed; anything else
/// (no new red case, a crash, a timeout) goes to be built on its own.
fn judged_past(
    s: &Scratch,
    m: &Mutation,
    opts: &Options,
    k: u32,
    red_before: &BTreeSet<String>,
) -> (Outcome, String) {
    let sel = m.case.clone().unwrap_or_else(|| m.gate.clone());
    let ran = match s.gate(&sel, opts.seed, opts.run_timeout, Some(k)) {
        Ok(r) => r,
        Err(e) => return (Outcome::Invalid, format!("the harness did not run: {e}")),
    };
    if !matches!(ran.ended, Ended::Code(1)) {
        return (
            Outcome::Survived,
            format!("gate {sel} did not fail as the schema baseline did"),
        );
    }
    match failed_case_ids(&ran.stdout) {
        Ok((red, _)) => {
            let new: Vec<String> = red.difference(red_before).cloned().collect();
            if new.is_empty() {
                (
                    Outcome::Survived,
                    format!("no case of {sel} beyond the schema baseline's red ones went red"),
                )
            } else {
                (
                    Outcome::Killed,
                    format!("{} red (green in the schema baseline)", new.join(", ")),
                )
            }
        }
        Err(e) => (Outcome::Invalid, e.to_string()),
    }
}

/// What a mutation's baseline is keyed by: its case or gate, the kit, or
/// its scenario file.
fn baseline_key(m: &Mutation) -> String {
    match m.gate.as_str() {
        SCENARIO_GATE => format!("scenario {}", m.scenario.as_deref().unwrap_or_default()),
        _ => m.case.clone().unwrap_or_else(|| m.gate.clone()),
    }
}

/// A mutation's body changes per file, read by applying its diff in
/// `scratch`, reading, and reversing; the originals it touches are added to
/// `originals`.
///
/// The inner error is why it stays out of the schema.
///
/// # Errors
/// The diff applied but cannot be reversed: the copy is no longer the
/// workspace.
fn member(
    scratch: &Scratch,
    m: &Mutation,
    sources: &consts::Sources,
    originals: &mut BTreeMap<String, String>,
) -> Result<Result<Joins, Refusal>, String> {
    if m.touches.is_empty() || m.touches.iter().any(|t| !t.ends_with(".rs")) {
        return Ok(Err(Refusal::new(
            RefusalKind::NotRust,
            "it touches a file that is not Rust",
        )));
    }
    if git_apply(&scratch.work, &m.diff, &["--check"]).is_err() {
        return Ok(Err(Refusal::new(
            RefusalKind::Stale,
            "its diff does not apply (it is judged stale on its own)",
        )));
    }
    let read = |rel: &str| std::fs::read_to_string(scratch.work.join(rel)).ok();
    let before: Vec<Option<String>> = m.touches.iter().map(|t| read(t)).collect();
    if git_apply(&scratch.work, &m.diff, &[]).is_err() {
        return Ok(Err(Refusal::new(
            RefusalKind::Stale,
            "its diff does not apply",
        )));
    }
    let after: Vec<Option<String>> = m.touches.iter().map(|t| read(t)).collect();
    git_apply(&scratch.work, &m.diff, &["-R"]).map_err(|e| {
        format!(
            "undoing {} in {} after reading it: {e}",
            m.file.display(),
            scratch.work.display()
        )
    })?;
    let mut own: BTreeMap<String, Vec<BodyChange>> = BTreeMap::new();
    let mut inserted: BTreeMap<String, Vec<Inserted>> = BTreeMap::new();
    let mut names: Vec<String> = Vec::new();
    let mut mine: BTreeMap<String, String> = BTreeMap::new();
    let mut changed_consts: Vec<schema::ConstChange> = Vec::new();
    let mut defining: Option<String> = None;
    for ((rel, o), a) in m.touches.iter().zip(before).zip(after) {
        let (Some(o), Some(a)) = (o, a) else {
            return Ok(Err(Refusal::new(
                RefusalKind::NotRust,
                "it adds or removes a file",
            )));
        };
        match schema::body_changes(&o, &a) {
            Ok(found) => {
                if !found.consts.is_empty() {
                    if defining.is_some() {
                        return Ok(Err(Refusal::new(
                            RefusalKind::Const,
                            "it changes consts in two files",
                        )));
                    }
                    defining = Some(rel.clone());
                    changed_consts.extend(found.consts);
                }
                own.insert(rel.clone(), found.bodies);
                if !found.inserted.is_empty() {
                    inserted.insert(rel.clone(), found.inserted);
                }
                names.extend(found.names);
                mine.insert(rel.clone(), o);
            }
            Err(e) => return Ok(Err(e.within(rel))),
        }
    }
    if let Err(e) = added_names_are_new(&mine, sources, &names) {
        return Ok(Err(e));
    }
    // Names added in one file are renamed in the others' texts too.
    let texts = own.values().flatten().map(|b| b.text.as_str());
    for text in texts.chain(inserted.values().flatten().map(|i| i.text.as_str())) {
        if let Err(e) = schema::named_in_macro(text, &names) {
            return Ok(Err(e));
        }
    }
    if defining.is_some() && !names.is_empty() {
        return Ok(Err(Refusal::new(
            RefusalKind::Const,
            "it changes a const and adds an item",
        )));
    }
    let files: Vec<FileChanges> = match defining {
        None => own.into_iter().collect(),
        Some(defining) => {
            if mine
                .iter()
                .any(|(rel, o)| sources.get(rel) != Some(o.as_str()))
            {
                return Ok(Err(Refusal::new(
                    RefusalKind::Const,
                    "a file it touches differs from the sources read for its consts",
                )));
            }
            match consts::spread(sources, &defining, &changed_consts, &own) {
                Ok(spread) => spread.into_iter().collect(),
                Err(e) => {
                    return Ok(Err(Refusal::new(
                        RefusalKind::Const,
                        format!("{defining}: const: {e}"),
                    )));
                }
            }
        }
    };
    for (rel, _) in &files {
        let text = mine
            .get(rel)
            .map(String::as_str)
            .or_else(|| sources.get(rel))
            .ok_or_else(|| format!("{rel}: neither touched nor among the sources"))?;
        originals
            .entry(rel.clone())
            .or_insert_with(|| text.to_string());
    }
    for rel in inserted.keys() {
        if !files.iter().any(|(r, _)| r == rel) {
            originals
                .entry(rel.clone())
                .or_insert_with(|| mine[rel].clone());
        }
    }
    Ok(Ok(Joins {
        files,
        inserted,
        names,
    }))
}

/// Whether the items a mutation adds (`names`) are named nowhere yet: an
/// added item is renamed per mutation wherever the mutation's texts name it,
/// which is the same program only if no original text names it already,
/// in the files it touches or anywhere else in the workspace (`sources`):
/// built alone, an added inherent method shadows a trait method of its name
/// at every call, and an added fn shadows a glob import or the prelude in
/// every child module that reads the module by `use super::*`.
///
/// # Errors
/// The file and the name, when an original text names one.
fn added_names_are_new(
    mine: &BTreeMap<String, String>,
    sources: &consts::Sources,
    names: &[String],
) -> Result<(), Refusal> {
    if names.is_empty() {
        return Ok(());
    }
    let texts = mine.iter().map(|(r, t)| (r.as_str(), t.as_str()));
    for (rel, o) in texts.chain(sources.files()) {
        if !names.iter().any(|n| o.contains(n.as_str())) {
            continue;
        }
        let Ok(tokens) = consts::flat_tokens(o) else {
            return Err(Refusal::new(
                RefusalKind::Unparsable,
                format!("{rel}: the original does not tokenize"),
            ));
        };
        for t in &tokens {
            // A format string's `{Limit}` names it as an identifier does.
            let named = names.iter().find(|n| {
                if t.ident {
                    t.text == **n
                } else {
                    consts::captures(&t.text, n)
                }
            });
            if let Some(n) = named {
                return Err(Refusal::new(
                    RefusalKind::Added,
                    format!("{rel}: an added item's name `{n}` is already named there"),
                ));
            }
        }
    }
    Ok(())
}

/// Writes the schema tree of `members` into `scratch`: every original file
/// a member touches, rewritten or (if no member touches it any longer)
/// restored. Returns each written file's schema.
///
/// # Errors
/// A file cannot be written.
fn write_tree(
    scratch: &Scratch,
    members: &[Member],
    originals: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, SchemaFile>, String> {
    let mut by_file: BTreeMap<&str, Vec<FileVariant>> = BTreeMap::new();
    for m in members {
        for (rel, changes) in &m.files {
            by_file.entry(rel).or_default().push(FileVariant {
                mutant: m.number,
                changes: changes.clone(),
                inserted: m.inserted.get(rel).cloned().unwrap_or_default(),
                names: m.names.clone(),
            });
        }
    }
    let mut out = BTreeMap::new();
    for (rel, original) in originals {
        let file = schema::write_schema(
            original,
            by_file.get(rel.as_str()).map_or(&[][..], Vec::as_slice),
        );
        write_if_changed(scratch, rel, &file.text)?;
        out.insert(rel.clone(), file);
    }
    Ok(out)
}

/// Every original back in every copy.
///
/// # Errors
/// A file cannot be written.
pub(super) fn restore(
    scratches: &[Scratch],
    originals: &BTreeMap<String, String>,
) -> Result<(), String> {
    for s in scratches {
        for (rel, text) in originals {
            write_if_changed(s, rel, text)?;
        }
    }
    Ok(())
}

fn write_if_changed(scratch: &Scratch, rel: &str, text: &str) -> Result<(), String> {
    let path = scratch.work.join(rel);
    if std::fs::read_to_string(&path).ok().as_deref() == Some(text) {
        return Ok(());
    }
    std::fs::write(&path, text).map_err(|e| format!("writing {}: {e}", path.display()))
}

/// The schema numbers whose rewritten functions the build's errors fall
/// in, from cargo's JSON messages.
fn blame(messages: &str, files: &BTreeMap<String, SchemaFile>) -> BTreeSet<u32> {
    let mut out = BTreeSet::new();
    for line in messages.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if v["reason"] != "compiler-message" || v["message"]["level"] != "error" {
            continue;
        }
        let spans = v["message"]["spans"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for span in spans {
            let (Some(file), Some(line)) =
                (span["file_name"].as_str(), span["line_start"].as_u64())
            else {
                continue;
            };
            let Some(schema) = files
                .iter()
                .find(|(rel, _)| file.ends_with(rel.as_str()))
                .map(|(_, f)| f)
            else {
                continue;
            };
            let line = usize::try_from(line).unwrap_or(usize::MAX);
            for (lines, numbers) in &schema.units {
                if lines.start <= line && line <= lines.end {
                    out.extend(numbers);
                }
            }
        }
    }
    out
}

/// Runs `f` over `items` on one thread per scratch copy, each taking the
/// next item from a shared queue; results in no particular order.
pub(super) fn on_workers<T: Sync, R: Send>(
    scratches: &[Scratch],
    items: Vec<T>,
    f: impl Fn(&Scratch, &T) -> R + Sync,
) -> Vec<R> {
    let queue = Mutex::new(items.iter().collect::<VecDeque<&T>>());
    let out = Mutex::new(Vec::new());
    std::thread::scope(|sc| {
        for s in scratches {
            let (queue, out, f) = (&queue, &out, &f);
            sc.spawn(move || {
                while let Some(item) = queue.lock().ok().and_then(|mut q| q.pop_front()) {
                    let r = f(s, item);
                    if let Ok(mut v) = out.lock() {
                        v.push(r);
                    }
                }
            });
        }
    });
    out.into_inner().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_added_name_that_an_untouched_file_already_names_stays_out() {
        // An inherent `len` on `S` shadows the trait method `b.rs` calls,
        // and an added `helper` shadows what `a/child.rs` reads through
        // `use super::*`: built alone, both change what the untouched file runs.
        let a = "//! A.\npub struct S;\nimpl S {\n    pub fn get(&self) -> u8 { 1 }\n}\n";
        let mine = BTreeMap::from([("r/src/a.rs".to_string(), a.to_string())]);
        for (other, name) in [
            (
                "//! B.\nfn f(s: &crate::a::S) -> usize { s.len() }\n",
                "len",
            ),
            (
                "//! C.\nuse super::*;\nfn g() -> u8 { helper() }\n",
                "helper",
            ),
            (
                "//! D.\nuse dep::*;\nfn h() -> String { format!(\"{Limit}\") }\n",
                "Limit",
            ),
        ] {
            let sources = consts::Sources::from_files([
                ("r/src/a.rs".to_string(), a.to_string()),
                ("r/src/a/child.rs".to_string(), other.to_string()),
            ]);
            let err = added_names_are_new(&mine, &sources, &[name.to_string()]).unwrap_err();
            assert_eq!(err.kind, RefusalKind::Added, "{err}");
            assert!(err.detail.contains("r/src/a/child.rs"), "{err}");
        }
        let sources = consts::Sources::from_files(mine.clone());
        assert_eq!(
            added_names_are_new(&mine, &sources, &["helper".to_string()]),
            Ok(())
        );
    }

    #[test]
    fn an_added_name_that_is_only_part_of_a_longer_name_or_string_is_new() {
        let a = "//! A.
pub fn s3_person_field() -> u8 { 1 }
";
        let mine = BTreeMap::from([("r/src/a.rs".to_string(), a.to_string())]);
        let other = "//! B.
use super::*;
fn g() -> String { format!(\"{s3_person_field} {}\", \"s3_person\") }
";
        let sources = consts::Sources::from_files([
            ("r/src/a.rs".to_string(), a.to_string()),
            ("r/src/a/child.rs".to_string(), other.to_string()),
        ]);
        assert_eq!(
            added_names_are_new(&mine, &sources, &["s3_person".to_string()]),
            Ok(())
        );
    }

    #[test]
    fn an_error_in_a_rewritten_function_blames_its_mutations_only() {
        let original = "fn a() -> u8 {\n    1\n}\n\nfn b() -> u8 {\n    2\n}\n";
        let change = |from: &str, to: &str| {
            schema::body_changes(original, &original.replace(from, to))
                .unwrap()
                .bodies
        };
        let file = schema::write_schema(
            original,
            &[
                FileVariant {
                    mutant: 4,
                    changes: change("1", "x"),
                    inserted: Vec::new(),
                    names: Vec::new(),
                },
                FileVariant {
                    mutant: 9,
                    changes: change("2", "3"),
                    inserted: Vec::new(),
                    names: Vec::new(),
                },
            ],
        );
        let line_of_x = file.text.lines().position(|l| l.trim() == "x").unwrap() + 1;
        let files = BTreeMap::from([("reference/src/a.rs".to_string(), file)]);
        let message = serde_json::json!({
            "reason": "compiler-message",
            "message": {"level": "error", "spans": [
                {"file_name": "reference/src/a.rs", "line_start": line_of_x}
            ]}
        });
        assert_eq!(blame(&message.to_string(), &files), BTreeSet::from([4]));
        let warning = message.to_string().replace("\"error\"", "\"warning\"");
        assert!(blame(&warning, &files).is_empty());
    }
}
