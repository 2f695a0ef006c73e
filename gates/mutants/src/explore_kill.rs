//! The explorer as the killer: every recorded mutation of the schema build run under `explore` seeds, with no gate, to measure what the explorer's oracle sees on its own (issue 26).
//!
//! `memoria-harness mutants --explore-seeds K` takes the same scratch
//! copies and the same schema build as a gate run (`schema_run.rs`), then:
//! 1. runs the K seeds unmutated on the schema build (a seed red there
//!    kills nothing, so the run stops); the slowest sets each seed's limit;
//! 2. runs each mutation of the schema, selected by its number, one seed
//!    after another (`explore --seeds 1 --from S --no-shrink`), and stops it
//!    at the first seed that fails: killed by that seed, with the invariant
//!    the explorer printed; green through all K: survived;
//! 3. gives every copy its original files back.
//!
//! A mutation that is not in the schema (a raw diff that no longer applies,
//! a changed signature, a file that is not Rust) is reported "not in the
//! schema" and counted apart: it was not run, and a count that was not run
//! is not zero. This is a measurement, not a gate: a survivor is a finding
//! about the oracle or the fault model, not a failed run.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::parse::Author;
use super::report::secs;
use super::scratch::{Ended, Ran, Scratch};
use super::{Options, Read, prepare, progress, sayer, schema_run};

/// A seed's time limit on a mutant, as a multiple of the slowest seed of
/// the unmutated baseline (at least [`EXPLORE_SEED_TIMEOUT_MIN_S`], at most
/// the run's own limit): a mutation that makes a run spin is stopped there.
pub const EXPLORE_SEED_TIMEOUT_FACTOR: u32 = 5;
/// The least time limit of one seed on a mutant, in seconds.
pub const EXPLORE_SEED_TIMEOUT_MIN_S: u64 = 30;
/// What the explorer prints before the invariant that broke
/// (`cli/explore.rs`: `  invariant [safety:visible]`).
const INVARIANT_PREFIX: &str = "  invariant ";

/// What the explorer did with one mutation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Seen {
    /// A seed failed: the oracle saw it (or the run crashed).
    Killed,
    /// Every seed of the budget held.
    Survived,
    /// A seed ran past its limit; the seeds after it were not run.
    Timeout,
    /// Not in the schema build, so not run: counted apart.
    NotInSchema,
    /// The file does not parse or resolve.
    Invalid,
}

/// One mutation's result under the explorer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExploreMutant {
    /// The mutation file, workspace-relative.
    pub file: String,
    /// The gate that kills it (for the per-gate table only: no gate runs).
    pub gate: String,
    /// author or adversary.
    pub author: Option<Author>,
    /// What it breaks.
    pub breaks: String,
    /// The outcome.
    pub seen: Seen,
    /// The seed that killed it.
    pub seed: Option<u64>,
    /// The invariant that broke (`[safety:visible]`, `[liveness]`, …), or
    /// `crash (…)` if the run did not end in a verdict.
    pub invariant: Option<String>,
    /// Seeds run on it.
    pub seeds_run: u64,
    /// Wall time in milliseconds.
    pub time_ms: u64,
    /// Why, in a line: what the explorer printed, or why it was not run.
    pub detail: String,
}

/// One gate's line of the table.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct GateRow {
    /// The gate (`5`, `suite 5`, `conform`, `scenario`).
    pub gate: String,
    /// Its recorded mutations in the run.
    pub mutations: usize,
    /// Of which in the schema build (run).
    pub in_schema: usize,
    /// Killed by a seed.
    pub killed: usize,
    /// Every seed held.
    pub survived: usize,
    /// A seed ran past its limit.
    pub timeout: usize,
    /// How many were killed first by each seed.
    pub first_seed: BTreeMap<u64, usize>,
    /// How many were killed by each invariant.
    pub invariants: BTreeMap<String, usize>,
}

/// The whole run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExploreRun {
    /// The first seed.
    pub from: u64,
    /// Seeds per mutation, at most.
    pub seeds: u64,
    /// Workers.
    pub jobs: usize,
    /// Wall time in seconds.
    pub wall_s: u64,
    /// Every mutation, in the order given.
    pub mutants: Vec<ExploreMutant>,
    /// Per gate, in gate order.
    pub gates: Vec<GateRow>,
}

/// Sorts gates as the spec numbers them: numbers, then `suite N`, then the rest.
fn gate_order(g: &str) -> (u8, u64, String) {
    if let Ok(n) = g.parse::<u64>() {
        (0, n, String::new())
    } else if let Some(n) = g.strip_prefix("suite ").and_then(|n| n.parse().ok()) {
        (1, n, String::new())
    } else {
        (2, 0, g.to_string())
    }
}

/// The per-gate table of `mutants`.
pub fn table(mutants: &[ExploreMutant]) -> Vec<GateRow> {
    let mut rows: BTreeMap<(u8, u64, String), GateRow> = BTreeMap::new();
    for m in mutants {
        let row = rows.entry(gate_order(&m.gate)).or_insert_with(|| GateRow {
            gate: m.gate.clone(),
            ..GateRow::default()
        });
        row.mutations += 1;
        match m.seen {
            Seen::Killed => {
                row.killed += 1;
                if let Some(s) = m.seed {
                    *row.first_seed.entry(s).or_default() += 1;
                }
                if let Some(i) = &m.invariant {
                    *row.invariants.entry(i.clone()).or_default() += 1;
                }
            }
            Seen::Survived => row.survived += 1,
            Seen::Timeout => row.timeout += 1,
            Seen::NotInSchema | Seen::Invalid => {}
        }
        if matches!(m.seen, Seen::Killed | Seen::Survived | Seen::Timeout) {
            row.in_schema += 1;
        }
    }
    rows.into_values().collect()
}

/// `k:n` pairs, space separated; `—` for none.
fn counts<K: std::fmt::Display>(m: &BTreeMap<K, usize>) -> String {
    if m.is_empty() {
        return "—".into();
    }
    m.iter()
        .map(|(k, n)| format!("{k}×{n}"))
        .collect::<Vec<_>>()
        .join(" ")
}

impl ExploreRun {
    /// The per-gate table as Markdown, then every mutation that was run and not killed.
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "explorer over {} recorded mutations, seeds {}..{} each (stopping at the first that kills), {} worker{}, {} s\n\n",
            self.mutants.len(),
            self.from,
            self.from + self.seeds,
            self.jobs,
            if self.jobs == 1 { "" } else { "s" },
            self.wall_s
        );
        out.push_str("| gate | mutations | in schema | killed | survived | timeout | first seed × kills | invariant × kills |\n|---|---|---|---|---|---|---|---|\n");
        let mut total = GateRow {
            gate: "all".into(),
            ..GateRow::default()
        };
        for r in &self.gates {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
                r.gate,
                r.mutations,
                r.in_schema,
                r.killed,
                r.survived,
                r.timeout,
                counts(&r.first_seed),
                counts(&r.invariants)
            ));
            total.mutations += r.mutations;
            total.in_schema += r.in_schema;
            total.killed += r.killed;
            total.survived += r.survived;
            total.timeout += r.timeout;
        }
        out.push_str(&format!(
            "| all | {} | {} | {} | {} | {} | | |\n",
            total.mutations, total.in_schema, total.killed, total.survived, total.timeout
        ));
        let left: Vec<&ExploreMutant> = self
            .mutants
            .iter()
            .filter(|m| m.seen != Seen::Killed)
            .collect();
        if !left.is_empty() {
            out.push_str("\nNot killed:\n");
            for m in left {
                out.push_str(&format!(
                    "  {} ({}): {} — {}\n",
                    m.file,
                    serde_json::to_value(m.seen)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default(),
                    m.detail,
                    m.breaks
                ));
            }
        }
        out
    }
}

/// How one seed ended on a mutant (or unmutated).
enum SeedEnd {
    /// The oracle held.
    Held,
    /// It failed: the invariant (or the crash) and the explorer's line.
    Failed(String, String),
    /// It ran past its limit.
    TimedOut,
}

/// Reads a seed's run: exit 0 held; exit 1 with the invariant the explorer
/// printed; any other end is a crash, which the explorer shows too.
fn seed_end(ran: &Ran) -> SeedEnd {
    match ran.ended {
        Ended::Code(0) => SeedEnd::Held,
        Ended::TimedOut => SeedEnd::TimedOut,
        Ended::Code(1) => {
            let invariant = ran
                .stdout
                .lines()
                .find_map(|l| l.strip_prefix(INVARIANT_PREFIX))
                .unwrap_or("exit 1 without an invariant line")
                .trim()
                .to_string();
            let at = ran
                .stdout
                .lines()
                .find(|l| l.trim_start().starts_with("at event"))
                .unwrap_or_default()
                .trim()
                .to_string();
            SeedEnd::Failed(invariant, at)
        }
        other => {
            let said = ran
                .stderr
                .lines()
                .rev()
                .find(|l| l.contains("panicked") || l.starts_with("memoria-harness:"))
                .unwrap_or_default()
                .trim()
                .to_string();
            SeedEnd::Failed(format!("crash ({other:?})"), said)
        }
    }
}

/// Runs every mutation of `opts.files` under `seeds` explorer seeds from
/// `from` (see the module's doc).
///
/// # Errors
/// A scratch copy cannot be made, restored or read, or a seed fails
/// unmutated on the schema build.
pub fn run(opts: &Options, from: u64, seeds: u64) -> Result<ExploreRun, String> {
    let began = Instant::now();
    let say = sayer(opts);
    let (scratches, parsed, _bar) = prepare(opts, &say)?;
    let jobs = scratches.len();
    let built = schema_run::build(&scratches, &parsed, &say)?;
    let mut reports: Vec<(usize, ExploreMutant)> = Vec::new();
    let not_run = |i: usize, seen: Seen, why: String| {
        let (rel, m) = &parsed[i];
        let m = m.as_ref().ok();
        if opts.progress {
            progress::line(&format!("{rel}: not in the schema, skipped: {why}"));
            progress::finished(&format!("{rel}: skipped"));
        }
        ExploreMutant {
            file: rel.clone(),
            gate: m.map(|m| m.gate.clone()).unwrap_or_default(),
            author: m.map(|m| m.author),
            breaks: m.map(|m| m.breaks.clone()).unwrap_or_default(),
            seen,
            seed: None,
            invariant: None,
            seeds_run: 0,
            time_ms: 0,
            detail: why,
        }
    };
    for (i, (_, m)) in parsed.iter().enumerate() {
        if let Err(e) = m {
            reports.push((i, not_run(i, Seen::Invalid, e.clone())));
        }
    }
    let Some(built) = built else {
        for (i, (_, m)) in parsed.iter().enumerate() {
            if m.is_ok() {
                reports.push((i, not_run(i, Seen::NotInSchema, "no schema build".into())));
            }
        }
        return Ok(finish(from, seeds, jobs, began, reports));
    };
    for (&i, why) in &built.out {
        reports.push((i, not_run(i, Seen::NotInSchema, why.to_string())));
    }
    let judged = baseline_and_judge(&scratches, &parsed, &built, opts, (from, seeds), &say);
    schema_run::restore(&scratches, &built.originals)?;
    reports.extend(judged?);
    Ok(finish(from, seeds, jobs, began, reports))
}

/// Steps 1 and 2 of the module's doc, on the schema build in `scratches`.
///
/// # Errors
/// A seed fails unmutated.
fn baseline_and_judge(
    scratches: &[Scratch],
    parsed: &Read,
    built: &schema_run::Built,
    opts: &Options,
    (from, seeds): (u64, u64),
    say: &(dyn Fn(String) + Sync),
) -> Result<Vec<(usize, ExploreMutant)>, String> {
    let budget: Vec<u64> = (from..from.saturating_add(seeds)).collect();
    let t0 = Instant::now();
    let base = schema_run::on_workers(scratches, budget.clone(), |s, &seed| {
        let t = Instant::now();
        let ran = s.explore(seed, opts.run_timeout, None);
        (seed, ran, t.elapsed())
    });
    let mut slowest = Duration::ZERO;
    for (seed, ran, took) in base {
        let ran = ran.map_err(|e| format!("explore seed {seed} did not run: {e}"))?;
        match seed_end(&ran) {
            SeedEnd::Held => slowest = slowest.max(took),
            SeedEnd::Failed(inv, at) => {
                return Err(format!(
                    "explore seed {seed} fails unmutated on the schema build ({inv} {at}); a red seed kills nothing"
                ));
            }
            SeedEnd::TimedOut => {
                return Err(format!(
                    "explore seed {seed} ran past {} s unmutated on the schema build",
                    opts.run_timeout.as_secs()
                ));
            }
        }
    }
    let limit = (slowest * EXPLORE_SEED_TIMEOUT_FACTOR)
        .max(Duration::from_secs(EXPLORE_SEED_TIMEOUT_MIN_S))
        .min(opts.run_timeout);
    say(format!(
        "explore: seeds {from}..{} hold unmutated on the schema build ({} in all, the slowest {}); a seed on a mutant stops after {}",
        from + seeds,
        secs(t0.elapsed().as_millis() as u64),
        secs(slowest.as_millis() as u64),
        secs(limit.as_millis() as u64),
    ));
    let total = built.members.len();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let judged = schema_run::on_workers(
        scratches,
        built.members.iter().map(|m| (m.index, m.number)).collect(),
        |s, &(i, k)| {
            let (rel, m) = &parsed[i];
            let m = m.as_ref().ok()?;
            let t = Instant::now();
            let mut end = (Seen::Survived, None, None, String::new());
            let mut run = 0;
            for &seed in &budget {
                run += 1;
                let ran = match s.explore(seed, limit, Some(k)) {
                    Ok(r) => r,
                    Err(e) => {
                        end = (
                            Seen::Invalid,
                            None,
                            None,
                            format!("the harness did not run: {e}"),
                        );
                        break;
                    }
                };
                match seed_end(&ran) {
                    SeedEnd::Held => {}
                    SeedEnd::Failed(inv, at) => {
                        end = (Seen::Killed, Some(seed), Some(inv), at);
                        break;
                    }
                    SeedEnd::TimedOut => {
                        end = (
                            Seen::Timeout,
                            Some(seed),
                            None,
                            format!("seed {seed} ran past {}", secs(limit.as_millis() as u64)),
                        );
                        break;
                    }
                }
            }
            let (seen, seed, invariant, mut detail) = end;
            if seen == Seen::Survived {
                detail = format!("survived {run} seeds ({from}..{})", from + run);
            }
            let ms = t.elapsed().as_millis() as u64;
            let n = done.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            if opts.progress {
                let verdict = match (&seen, seed, &invariant) {
                    (Seen::Killed, Some(s), Some(inv)) => format!("killed by seed {s} with {inv}"),
                    _ => detail.clone(),
                };
                progress::line(&format!(
                    "[explore {n}/{total}] {rel}: {verdict} in {}",
                    secs(ms)
                ));
                progress::finished(&format!("{rel}: {verdict}"));
            }
            Some((
                i,
                ExploreMutant {
                    file: rel.clone(),
                    gate: m.gate.clone(),
                    author: Some(m.author),
                    breaks: m.breaks.clone(),
                    seen,
                    seed,
                    invariant,
                    seeds_run: run,
                    time_ms: ms,
                    detail,
                },
            ))
        },
    );
    Ok(judged.into_iter().flatten().collect())
}

/// The run's report, mutations in the order given.
fn finish(
    from: u64,
    seeds: u64,
    jobs: usize,
    began: Instant,
    mut reports: Vec<(usize, ExploreMutant)>,
) -> ExploreRun {
    reports.sort_by_key(|(i, _)| *i);
    let mutants: Vec<ExploreMutant> = reports.into_iter().map(|(_, m)| m).collect();
    ExploreRun {
        from,
        seeds,
        jobs,
        wall_s: began.elapsed().as_secs(),
        gates: table(&mutants),
        mutants,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mutant(gate: &str, seen: Seen, seed: Option<u64>) -> ExploreMutant {
        ExploreMutant {
            file: format!("mutants/{gate}.toml"),
            gate: gate.into(),
            author: None,
            breaks: String::new(),
            seen,
            seed,
            invariant: seed.map(|_| "[safety:visible]".into()),
            seeds_run: 0,
            time_ms: 0,
            detail: String::new(),
        }
    }

    #[test]
    fn the_table_counts_what_was_not_run_apart_and_orders_gates_as_the_spec_numbers_them() {
        let run = [
            mutant("suite 5", Seen::Killed, Some(0)),
            mutant("10", Seen::Killed, Some(2)),
            mutant("10", Seen::Survived, None),
            mutant("10", Seen::NotInSchema, None),
            mutant("5", Seen::Killed, Some(2)),
            mutant("conform", Seen::Timeout, Some(1)),
        ];
        let rows: Vec<String> = table(&run)
            .iter()
            .map(|r| {
                format!(
                    "{} {}/{} k{} s{} t{} {}",
                    r.gate,
                    r.in_schema,
                    r.mutations,
                    r.killed,
                    r.survived,
                    r.timeout,
                    counts(&r.first_seed)
                )
            })
            .collect();
        expect_test::expect![[r#"
            [
                "5 1/1 k1 s0 t0 2×1",
                "10 2/3 k1 s1 t0 2×1",
                "suite 5 1/1 k1 s0 t0 0×1",
                "conform 1/1 k0 s0 t1 —",
            ]
        "#]]
        .assert_debug_eq(&rows);
    }
}
