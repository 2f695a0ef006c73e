//! What a mutation run reports: each mutation's outcome, as text and JSON (the harness renders its JUnit with the kit's writer).

use serde::{Deserialize, Serialize};

use super::parse::Author;

/// What happened to one mutation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The gate went red: the required outcome.
    Killed,
    /// The gate stayed green.
    Survived,
    /// The diff no longer applies.
    Stale,
    /// The mutated code does not compile.
    Unviable,
    /// The gate did not finish in time.
    Timeout,
    /// The file is malformed or touches a gate.
    Invalid,
    /// A conformance mutation failed other cases than exactly the named ones.
    Imprecise,
}

/// One mutation's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MutantReport {
    /// The mutation file, workspace-relative.
    pub file: String,
    /// The gate that must kill it.
    pub gate: String,
    /// The case, if named.
    pub case: Option<String>,
    /// author or adversary.
    pub author: Option<Author>,
    /// What it breaks.
    pub breaks: String,
    /// The outcome.
    pub status: Outcome,
    /// Why, in a line (which case went red, the build error's first line...).
    pub detail: String,
    /// Wall time in milliseconds, build included.
    pub time_ms: u64,
    /// Of which the build, in milliseconds (0 if it never got that far).
    pub build_ms: u64,
    /// Of which the gate, kit or replay run, in milliseconds.
    pub run_ms: u64,
    /// Judged in the shared schema build (`schema.rs`): killed there, with
    /// no build of its own (`build_ms` is 0).
    #[serde(default)]
    pub schema: bool,
}

/// The whole mutation run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MutantsRun {
    /// The seed passed to every gate run.
    pub seed: u64,
    /// Each mutation.
    pub mutants: Vec<MutantReport>,
    /// Counts by outcome.
    pub summary: std::collections::BTreeMap<String, usize>,
    /// Wall time of the whole run in seconds.
    pub wall_s: u64,
    /// Median wall time of one mutation in milliseconds, build and gate
    /// included: what one mutation costs its worker.
    pub median_ms: u64,
    /// Workers that built side by side.
    #[serde(default = "one")]
    pub jobs: usize,
    /// Wall time of the mutation phase divided by the mutations that were
    /// built, in milliseconds: what one mutation adds to the run with
    /// [`MutantsRun::jobs`] workers (0 if none was built).
    #[serde(default)]
    pub throughput_ms: u64,
    /// Mutations killed in the shared schema build (`schema.rs`).
    #[serde(default)]
    pub schema_killed: usize,
    /// Wall time of the schema pass (writing, building and running the
    /// schema tree), in milliseconds.
    #[serde(default)]
    pub schema_ms: u64,
}

fn one() -> usize {
    1
}

impl MutantsRun {
    /// True if every mutation was killed (and there was at least one).
    pub fn all_killed(&self) -> bool {
        !self.mutants.is_empty() && self.mutants.iter().all(|m| m.status == Outcome::Killed)
    }

    /// A text table.
    pub fn to_text(&self) -> String {
        let mut s = format!("seed {}\n\n", self.seed);
        for m in &self.mutants {
            let who = match m.author {
                Some(Author::Author) => "author",
                Some(Author::Adversary) => "adversary",
                None => "?",
            };
            s.push_str(&format!(
                "  {:<9} gate {:<4} {:<10} {}  ({} s)\n      breaks: {}\n      {}\n",
                format!("{:?}", m.status).to_lowercase(),
                m.gate,
                who,
                m.file,
                m.time_ms / 1000,
                m.breaks,
                m.detail
            ));
        }
        let counts: Vec<String> = self
            .summary
            .iter()
            .map(|(k, v)| format!("{v} {k}"))
            .collect();
        s.push_str(&format!(
            "\n{} in {} s ({} worker{}; per mutation median {}, {} of the run's wall time each)\n",
            counts.join(", "),
            self.wall_s,
            self.jobs,
            if self.jobs == 1 { "" } else { "s" },
            secs(self.median_ms),
            secs(self.throughput_ms)
        ));
        s
    }
}

/// The median of `ms`, 0 for none.
pub(super) fn median_ms(mut ms: Vec<u64>) -> u64 {
    ms.sort_unstable();
    match ms.len() {
        0 => 0,
        n if n % 2 == 1 => ms[n / 2],
        n => (ms[n / 2 - 1] + ms[n / 2]) / 2,
    }
}

pub(super) fn secs(ms: u64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(median_ms(vec![]), 0);
        assert_eq!(median_ms(vec![9, 1, 5]), 5);
        assert_eq!(median_ms(vec![9, 1, 5, 3]), 4);
    }
}
