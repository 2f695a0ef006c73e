//! The conformance kit: proves a sibling's S1, S1a, S2, S3 and (for Sheets) S6 against the wire contract, one command against host:port (§4.1, §6.1, §6.2, GATES.md suite gates).
//!
//! Its own crate so that a sibling implementer builds the kit and nothing
//! else: it depends on the contract crate (`memoria-contract`, the JSON
//! Schemas) and an HTTP client (hyper over tokio, rustls for `https://`),
//! never on the reference, the simulator or the harness (`cargo install
//! --path gates/kit` installs the `memoria-kit` binary). The harness's
//! `memoria-harness conform` is a thin caller of [`cli::main`] that adds
//! `--fake`, its in-process fake sibling.
//!
//! Cases live in [`cases`], each with a stable id grouped by section
//! (`s2/…`, `suite3/…`), a level (MUST or SHOULD), its requirement and spec
//! section. A case that needs a state transition the implementer cannot
//! drive ([`control`]) or a second consumer token is *skipped*, never
//! passed. A known-failing list lets listed cases fail without failing the
//! run, and fails the run when a listed case passes.
//!
//! The server must hold the state of [`manifest`] before the run; the kit
//! returns it there between transition cases with the hook's `reset`.

#![deny(missing_docs)]

pub mod cases;
pub mod cli;
pub mod client;
pub mod control;
pub mod junit;
pub mod manifest;
pub mod report;
pub mod schema;

use std::time::Instant;

use serde::Serialize;

use client::{Client, Target};
use control::{Controlled, Hook};
use manifest::Manifest;
/// What an `https://` target is trusted by and why a handshake refused
/// it: `memoria-tls` (`reference/tls/`), the rules `memoria serve` dials a
/// sibling by, shared rather than copied.
pub use memoria_tls as tls;
pub use memoria_tls::{TlsRefusal, TlsTrust};
use report::{CaseResult, ConformReport};

/// What a case required and what was seen instead (a kit case, or a gate
/// case of the harness, which re-exports it): ids, revisions,
/// statuses and values, never a title, a body or a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// What the contract requires.
    pub expected: String,
    /// What the target did.
    pub actual: String,
}

impl Failure {
    /// Builds a failure.
    pub fn new(expected: impl Into<String>, actual: impl Into<String>) -> Failure {
        Failure {
            expected: expected.into(),
            actual: actual.into(),
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "expected: {}\n  actual: {}", self.expected, self.actual)
    }
}

/// MUST cases always run; SHOULD cases only with `--strict`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Level {
    /// Required for conformance.
    Must,
    /// Recommended; run with `--strict`.
    Should,
}

impl Level {
    /// `MUST` or `SHOULD`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Must => "MUST",
            Level::Should => "SHOULD",
        }
    }
}

/// What a case needs beyond the target and one token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// Nothing more.
    Nothing,
    /// The control hook (the runner resets before and after the case).
    Control,
    /// `--second-token`.
    SecondToken,
}

/// Why a case did not pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotPassed {
    /// The requirement did not hold.
    Fail(Failure),
    /// The case could not be run here (no hook, hook cannot, no second token).
    Skip(String),
}

impl From<Failure> for NotPassed {
    fn from(f: Failure) -> Self {
        NotPassed::Fail(f)
    }
}

/// A case body.
pub type ConformFn = fn(&mut Ctx<'_>) -> Result<(), NotPassed>;

/// One conformance case.
#[derive(Debug, Clone)]
pub struct ConformCase {
    /// Stable id, `<section group>/<slug>`.
    pub id: &'static str,
    /// MUST or SHOULD.
    pub level: Level,
    /// Spec sections, e.g. `§4.1, suite gate 3`.
    pub section: &'static str,
    /// What the sibling must do.
    pub requirement: &'static str,
    /// What else it needs.
    pub needs: Needs,
    /// The body.
    pub run: ConformFn,
}

/// What a case body reaches: the client, tokens, hook and manifest.
#[derive(Debug)]
pub struct Ctx<'a> {
    /// The HTTP client.
    pub client: &'a Client,
    /// The consumer token (`--token`).
    pub token: &'a str,
    /// A second consumer's token (`--second-token`).
    pub second_token: Option<&'a str>,
    /// The control hook.
    pub hook: &'a Hook,
    /// The state the server was seeded with.
    pub manifest: &'a Manifest,
}

impl Ctx<'_> {
    /// Runs a control action; no hook or exit 3 skips the case, any other
    /// failure fails it.
    ///
    /// # Errors
    /// [`NotPassed::Skip`] or [`NotPassed::Fail`] as above.
    pub fn control(&self, action: &str, args: &[&str]) -> Result<Option<String>, NotPassed> {
        match self.hook.call(action, args) {
            Controlled::Done(v) => Ok(v),
            Controlled::Cannot(why) => Err(NotPassed::Skip(why)),
            Controlled::Failed(why) => Err(NotPassed::Fail(Failure::new(
                format!("the control hook performs {action} and exits 0"),
                why,
            ))),
        }
    }
}

impl Ctx<'_> {
    /// `n` new revisions of `item`, oldest first: one `bump-revisions ITEM
    /// N` call, or, when the hook cannot drive that (exit 3), `n`
    /// `bump-revision ITEM` calls (§6.1; the kit's hook contract).
    ///
    /// # Errors
    /// As [`Ctx::control`]; a failure when the hook prints a different
    /// number of revisions than asked.
    pub fn bump_revisions(&self, item: &str, n: usize) -> Result<Vec<String>, NotPassed> {
        let count = n.to_string();
        let made = match self.hook.call_lines("bump-revisions", &[item, &count]) {
            Ok(lines) => lines,
            Err(Controlled::Cannot(_)) => {
                let mut made = Vec::with_capacity(n);
                for _ in 0..n {
                    made.push(self.control("bump-revision", &[item])?.ok_or_else(|| {
                        NotPassed::Fail(Failure::new(
                            "bump-revision prints the new revision",
                            "it printed nothing",
                        ))
                    })?);
                }
                made
            }
            Err(Controlled::Failed(why) | Controlled::Done(Some(why))) => {
                return Err(NotPassed::Fail(Failure::new(
                    "the control hook performs bump-revisions and exits 0",
                    why,
                )));
            }
            Err(Controlled::Done(None)) => Vec::new(),
        };
        if made.len() == n {
            Ok(made)
        } else {
            Err(NotPassed::Fail(Failure::new(
                format!("bump-revisions {n} prints {n} revisions, one a line"),
                format!("{} lines", made.len()),
            )))
        }
    }
}

/// Everything one run needs.
#[derive(Debug)]
pub struct Options {
    /// The server, `http://` or `https://`.
    pub target: Target,
    /// What an `https://` target's certificate is verified against:
    /// Mozilla's roots, plus a private CA (`--ca-file`, §6.1).
    pub trust: TlsTrust,
    /// The consumer token.
    pub token: String,
    /// A second consumer's token.
    pub second_token: Option<String>,
    /// The control hook.
    pub hook: Hook,
    /// The seeded state.
    pub manifest: Manifest,
    /// Case ids to run (globs); empty means every case of the level.
    pub run: Vec<String>,
    /// Case ids to leave out (globs).
    pub skip: Vec<String>,
    /// Include SHOULD cases.
    pub strict: bool,
    /// Case ids that may fail (exact ids).
    pub known_failing: Vec<String>,
    /// Print every exchange to stderr.
    pub trace: bool,
}

/// Why a run produced no report.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// Bad selection or known-failing list (exit 2).
    #[error("{0}")]
    Usage(String),
    /// No TCP connection to the target (exit 3): which URL, and why
    /// (connection refused, the name does not resolve, no answer in time).
    #[error("the target {url} cannot be reached: {cause}")]
    Unreachable {
        /// The target as `http://host:port`.
        url: String,
        /// Why no connection opened.
        cause: client::Unreachable,
    },
    /// An `https://` target's TLS handshake refused it (exit 3): which
    /// URL, and why (e.g. a certificate no trusted CA signed).
    #[error("the target {url} refused TLS: {refusal}")]
    Tls {
        /// The target as `https://host:port`.
        url: String,
        /// Why the handshake ended.
        refusal: TlsRefusal,
    },
}

fn patterns(globs: &[String]) -> Result<Vec<glob::Pattern>, RunError> {
    globs
        .iter()
        .map(|g| glob::Pattern::new(g).map_err(|e| RunError::Usage(format!("bad glob {g:?}: {e}"))))
        .collect()
}

/// The cases a run selects, in list order.
///
/// # Errors
/// [`RunError::Usage`] for a bad glob, a `--run` glob matching no case, or a
/// selection that leaves no case to run (every one skipped, or only SHOULD
/// cases picked without `--strict`): a run of nothing is never a pass.
pub fn select(
    run: &[String],
    skip: &[String],
    strict: bool,
) -> Result<Vec<&'static ConformCase>, RunError> {
    let run_p = patterns(run)?;
    let skip_p = patterns(skip)?;
    for (g, p) in run.iter().zip(&run_p) {
        if !cases::all().iter().any(|c| p.matches(c.id)) {
            return Err(RunError::Usage(format!("--run {g:?} matches no case")));
        }
    }
    let picked = |c: &&ConformCase| run_p.is_empty() || run_p.iter().any(|p| p.matches(c.id));
    let chosen: Vec<&'static ConformCase> = cases::all()
        .iter()
        .filter(|c| strict || c.level == Level::Must)
        .filter(picked)
        .filter(|c| !skip_p.iter().any(|p| p.matches(c.id)))
        .collect();
    if chosen.is_empty() {
        let only_should = !strict
            && cases::all()
                .iter()
                .filter(picked)
                .all(|c| c.level == Level::Should);
        return Err(RunError::Usage(if only_should {
            "the selection runs no case: every case it picks is a SHOULD case; add --strict".into()
        } else {
            "the selection runs no case: --skip leaves nothing of it".into()
        }));
    }
    Ok(chosen)
}

/// Parses a known-failing file: one case id per line, `#` comments.
///
/// # Errors
/// [`RunError::Usage`] for an id that names no case (a stale list).
pub fn parse_known_failing(text: &str) -> Result<Vec<String>, RunError> {
    let mut ids = Vec::new();
    for line in text.lines() {
        let id = line.split('#').next().unwrap_or("").trim();
        if id.is_empty() {
            continue;
        }
        if !cases::all().iter().any(|c| c.id == id) {
            return Err(RunError::Usage(format!(
                "known-failing names {id:?}, which is no case id"
            )));
        }
        ids.push(id.to_owned());
    }
    Ok(ids)
}

/// Runs the selected cases against the target.
///
/// # Errors
/// [`RunError`] for a bad selection, an unreachable target, or an
/// `https://` target whose handshake fails.
pub fn run(opts: &Options) -> Result<ConformReport, RunError> {
    let selected = select(&opts.run, &opts.skip, opts.strict)?;
    let client = Client::new(opts.target.clone(), opts.trace).with_trust(opts.trust.clone());
    if let Err(cause) = client.connect() {
        return Err(RunError::Unreachable {
            url: opts.target.to_string(),
            cause,
        });
    }
    if let Err(refusal) = client.handshake() {
        return Err(RunError::Tls {
            url: opts.target.to_string(),
            refusal,
        });
    }
    let began = Instant::now();
    let mut ctx = Ctx {
        client: &client,
        token: &opts.token,
        second_token: opts.second_token.as_deref(),
        hook: &opts.hook,
        manifest: &opts.manifest,
    };
    let mut results = Vec::new();
    for case in selected {
        let t0 = Instant::now();
        let outcome = run_one(case, &mut ctx);
        let time_ms = u64::try_from(t0.elapsed().as_millis()).unwrap_or(u64::MAX);
        let known = opts.known_failing.iter().any(|k| k == case.id);
        results.push(CaseResult::new(case, outcome, known, time_ms));
    }
    let wall_ms = u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX);
    Ok(ConformReport::new(results, wall_ms))
}

fn run_one(case: &ConformCase, ctx: &mut Ctx<'_>) -> Result<(), NotPassed> {
    match case.needs {
        Needs::Nothing => (case.run)(ctx),
        Needs::SecondToken => {
            if ctx.second_token.is_none() {
                return Err(NotPassed::Skip("needs --second-token".into()));
            }
            (case.run)(ctx)
        }
        Needs::Control => {
            if !ctx.hook.present() {
                return Err(NotPassed::Skip("needs a --control hook".into()));
            }
            ctx.control("reset", &[])?;
            let outcome = (case.run)(ctx);
            let after = ctx.control("reset", &[]);
            match (outcome, after) {
                (Ok(()), Err(e)) => Err(e),
                (outcome, _) => outcome,
            }
        }
    }
}
