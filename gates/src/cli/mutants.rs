//! `memoria-harness mutants`: run the recorded mutations (each killed by its gate, or by the explorer with `--explore-seeds`), `mutants show` and `mutants convert`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use memoria_gates::mutants;

use super::{EXIT_FAIL, EXIT_USAGE, shell_quote, workspace_root};
use crate::{Format, MutantsArgs};

/// `mutants show`: each file's diff against the tree as it is now; exit 1 if
/// one does not resolve.
pub fn show_mutants(files: &[PathBuf], workspace: Option<PathBuf>) -> ExitCode {
    let workspace = match workspace_root(workspace) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("memoria-harness: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let mut failed = false;
    for f in files {
        let made = std::fs::read_to_string(f)
            .map_err(|e| format!("{}: {e}", f.display()))
            .and_then(|t| mutants::parse(f, &t))
            .and_then(|mut m| m.resolve(&workspace).map(|()| m));
        match made {
            Ok(m) => out!("# {}: {}\n{}", f.display(), m.breaks, m.diff),
            Err(e) => {
                failed = true;
                eprintln!("memoria-harness: {}: {e}", f.display());
            }
        }
    }
    if failed {
        ExitCode::from(EXIT_FAIL)
    } else {
        ExitCode::SUCCESS
    }
}

/// `mutants convert`: recorded diffs to item-anchored TOML, each proved to
/// make the same files; exit 1 if one could not be converted.
pub fn convert_mutants(files: Vec<PathBuf>, workspace: Option<PathBuf>, check: bool) -> ExitCode {
    let workspace = match workspace_root(workspace) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("memoria-harness: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let dir = workspace.join("mutants");
    let files: Vec<PathBuf> = if files.is_empty() {
        mutants::discover(&dir)
            .into_iter()
            .filter(|f| f.extension().is_some_and(|x| x == "diff"))
            .filter(|f| {
                std::fs::read_to_string(f)
                    .is_ok_and(|t| !t.lines().any(|l| l.starts_with("kept-as-diff:")))
            })
            .collect()
    } else {
        files
    };
    let (mut converted, mut kept, mut failed) = (0, 0, 0);
    let mut why_kept: std::collections::BTreeMap<String, usize> = Default::default();
    for f in &files {
        match mutants::convert::convert(&workspace, &dir, f) {
            Ok(c) => {
                let to =
                    c.to.strip_prefix(&workspace)
                        .unwrap_or(&c.to)
                        .display()
                        .to_string();
                match &c.kept {
                    None => {
                        converted += 1;
                        outln!(
                            "{} -> {to}: the same files as its diff ({})",
                            f.display(),
                            c.anchors.join("; ")
                        );
                    }
                    Some(why) => {
                        kept += 1;
                        *why_kept.entry(why.clone()).or_default() += 1;
                        outln!("{} -> {to}: kept as a diff: {why}", f.display());
                    }
                }
                if !check {
                    let written =
                        c.to.parent()
                            .map_or(Ok(()), std::fs::create_dir_all)
                            .and_then(|()| std::fs::write(&c.to, &c.text))
                            .and_then(|()| {
                                let same = std::fs::canonicalize(f).ok()
                                    == std::fs::canonicalize(&c.to).ok();
                                if same {
                                    Ok(())
                                } else {
                                    std::fs::remove_file(f)
                                }
                            });
                    if let Err(e) = written {
                        eprintln!("memoria-harness: writing {to}: {e}");
                        return ExitCode::from(EXIT_USAGE);
                    }
                }
            }
            Err(e) => {
                failed += 1;
                outln!("{}: not converted: {e}", f.display());
            }
        }
    }
    outln!(
        "{converted} converted to item-anchored TOML, {kept} kept as diffs, {failed} not converted{}",
        if check {
            " (--check: nothing written)"
        } else {
            ""
        }
    );
    for (why, n) in why_kept {
        outln!("  kept: {n} × {why}");
    }
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FAIL)
    }
}

/// `mutants`: the selected mutations run, each required killed; exit 1 if
/// one was not, 2 on a usage error or a selection of nothing.
pub fn run_mutants(a: MutantsArgs) -> ExitCode {
    let MutantsArgs {
        gate,
        files,
        workspace,
        seed,
        timeout,
        jobs,
        no_schema,
        shard,
        explore_seeds,
        format,
        ..
    } = a;
    if jobs == Some(0) {
        eprintln!("memoria-harness: --jobs 0 runs nothing; give at least 1");
        return ExitCode::from(EXIT_USAGE);
    }
    if explore_seeds == Some(0) {
        eprintln!("memoria-harness: --explore-seeds 0 runs nothing; give at least 1");
        return ExitCode::from(EXIT_USAGE);
    }
    let shard = match shard.as_deref().map(parse_shard) {
        None => None,
        Some(Some(kn)) => Some(kn),
        Some(None) => {
            eprintln!("memoria-harness: --shard takes K/N with K < N, e.g. 0/4");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let workspace = match workspace_root(workspace) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("memoria-harness: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let mut files: Vec<PathBuf> = if files.is_empty() {
        mutants::discover(&workspace.join("mutants"))
    } else {
        files
            .into_iter()
            .map(|f| std::fs::canonicalize(&f).unwrap_or(f))
            .collect()
    };
    if let Some(g) = &gate {
        files.retain(|f| {
            std::fs::read_to_string(f)
                .ok()
                .and_then(|t| mutants::parse(f, &t).ok())
                .is_some_and(|m| &m.gate == g)
        });
    }
    if let Some((k, n)) = shard {
        files = mutants::shard(files, k, n);
    }
    if files.is_empty() {
        eprintln!("memoria-harness: no recorded mutation selected");
        return ExitCode::from(EXIT_USAGE);
    }
    let opts = mutants::Options {
        workspace,
        files,
        seed: seed.unwrap_or_default(),
        run_timeout: Duration::from_secs(timeout),
        progress: true,
        jobs: jobs.unwrap_or_else(mutants::default_jobs),
        schema: !no_schema,
        conform_cases: mutants::conform_case_ids(),
    };
    if let Some(k) = explore_seeds {
        return explore_mutants(&opts, seed.unwrap_or(0), k, format);
    }
    let seed = seed.unwrap_or_else(rand::random);
    let opts = mutants::Options { seed, ..opts };
    let files = &opts.files;
    eprintln!("memoria-harness: seed {seed}, {} mutations", files.len());
    let run = match mutants::run(&opts) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("memoria-harness: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    match format {
        Format::Text => out!("{}", run.to_text()),
        Format::Json => outln!(
            "{}",
            serde_json::to_string_pretty(&run).expect("serialises")
        ),
        Format::Junit => out!("{}", mutants::to_junit(&run)),
    }
    if run.all_killed() {
        ExitCode::SUCCESS
    } else {
        for m in run
            .mutants
            .iter()
            .filter(|m| m.status != mutants::Outcome::Killed)
        {
            eprintln!(
                "memoria-harness: {} was {:?}; replay with:\n  cargo run -p memoria-gates --bin memoria-harness -- mutants {} --seed {seed}",
                m.file,
                m.status,
                shell_quote(&m.file)
            );
        }
        ExitCode::from(EXIT_FAIL)
    }
}

/// `K/N` with K < N.
fn parse_shard(s: &str) -> Option<(usize, usize)> {
    let (k, n) = s.split_once('/')?;
    let (k, n): (usize, usize) = (k.parse().ok()?, n.parse().ok()?);
    (n > 0 && k < n).then_some((k, n))
}

/// `mutants --explore-seeds K`: the explorer as the killer, `k` seeds from
/// `from`; a table per gate as text (JUnit reads as text) or JSON.
fn explore_mutants(opts: &mutants::Options, from: u64, k: u64, format: Format) -> ExitCode {
    eprintln!(
        "memoria-harness: explorer seeds {from}..{} over {} mutations, no gate",
        from + k,
        opts.files.len()
    );
    let run = match mutants::explore_kill::run(opts, from, k) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("memoria-harness: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    match format {
        Format::Json => outln!(
            "{}",
            serde_json::to_string_pretty(&run).expect("serialises")
        ),
        Format::Text | Format::Junit => out!("{}", run.to_text()),
    }
    ExitCode::SUCCESS
}
