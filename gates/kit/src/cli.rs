//! The kit's command line, shared by `memoria-kit` and `memoria-harness conform`: the flags, the run, the report printed, the exit code.
//!
//! Exit codes: 0 every selected case passed (or was known-failing), 1 a
//! case failed (or a known-failing case passed), 2 a usage error (a bad
//! flag, manifest, known-failing list or selection), 3 the target cannot be
//! reached or refused TLS, printed with its URL and the cause.
//!
//! The harness adds `--fake`: it serves its in-process fake sibling and
//! hands the kit a [`StandIn`] for the target; the kit itself never starts
//! a server.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::client::Target;
use crate::control::Hook;
use crate::manifest::Manifest;
use crate::{Needs, Options, RunError, cases, parse_known_failing};
use memoria_tls::TlsTrust;

/// Exit code: a case failed, or a known-failing case passed.
pub const EXIT_FAIL: u8 = 1;
/// Exit code: a usage error.
pub const EXIT_USAGE: u8 = 2;
/// Exit code: the target cannot be reached, or refused TLS.
pub const EXIT_UNREACHABLE: u8 = 3;

/// Writes `args` to stdout as `print!` does, except that a closed stdout (a
/// reader such as `head` that stopped reading) ends the program quietly
/// with exit 0, as ripgrep and cargo do: what was asked for was printed as
/// far as anyone reads it. Any other write error ends it with
/// [`EXIT_USAGE`], naming the program and the cause on stderr.
pub fn print_stdout(args: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let written = std::io::stdout().lock().write_fmt(args);
    match written {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => {
            let program = std::env::args_os()
                .next()
                .map(std::path::PathBuf::from)
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_default();
            eprintln!("{program}: writing to stdout: {e}");
            std::process::exit(i32::from(EXIT_USAGE));
        }
    }
}

/// How the report is printed: `text`, a table grouped by section with
/// expected and actual under each failure; `json`, stable JSON; `junit`,
/// JUnit XML with one suite per section. (The variants carry no doc
/// comment: clap would print it as help, and `--help` is the harness's
/// `conform --help`, unchanged.)
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, clap::ValueEnum, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Junit,
}

/// The flags of a run.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The server, `http://host:port` or `https://host:port`.
    #[arg(long)]
    pub target: Option<String>,
    /// For an `https://` target: a PEM file of a private CA to trust beside
    /// Mozilla's roots (as `memoria serve`'s MEMORIA_SIBLING_CA_FILE).
    #[arg(long)]
    pub ca_file: Option<PathBuf>,
    /// The consumer's bearer token (or env MEMORIA_CONFORM_TOKEN).
    #[arg(long, env = "MEMORIA_CONFORM_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// A second consumer's token: enables the isolation case.
    #[arg(long, env = "MEMORIA_CONFORM_SECOND_TOKEN", hide_env_values = true)]
    pub second_token: Option<String>,
    /// The control hook, run as `CMD <action> <args...>` (split on whitespace).
    #[arg(long)]
    pub control: Option<String>,
    /// Print every case with its id, level, spec section and requirement.
    #[arg(long)]
    pub list: bool,
    /// Run only cases whose id matches this glob (repeatable).
    #[arg(long)]
    pub run: Vec<String>,
    /// Leave out cases whose id matches this glob (repeatable).
    #[arg(long)]
    pub skip: Vec<String>,
    /// Add the SHOULD cases.
    #[arg(long)]
    pub strict: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Case ids that may fail without failing the run (one per line, # comments).
    #[arg(long)]
    pub known_failing: Option<PathBuf>,
    /// Print every HTTP exchange to stderr (no tokens, subjects, titles or bodies).
    #[arg(long)]
    pub trace: bool,
    /// The fixture manifest the server was seeded with (default: the shipped one).
    #[arg(long)]
    pub manifest: Option<PathBuf>,
}

/// A server the caller started for the run in place of `--target`: the
/// harness's fake sibling on loopback.
pub struct StandIn {
    /// Its URL.
    pub url: String,
    /// The consumer token it accepts.
    pub token: String,
    /// A second consumer's token it accepts.
    pub second_token: Option<String>,
    /// Its control hook.
    pub hook: Hook,
    /// Whatever keeps it serving (a runtime), dropped after the run.
    pub keep: Box<dyn std::any::Any>,
}

/// A caller's `--fake`: whether it was asked for, and how to start the
/// [`StandIn`] from the run's manifest.
pub struct Fake<'a> {
    /// `--fake` was given.
    pub asked: bool,
    /// Starts the stand-in.
    pub start: &'a dyn Fn(&Manifest) -> Result<StandIn, String>,
}

/// The manifest at `path`, or the shipped one.
///
/// # Errors
/// A message naming `path` when it cannot be read, or why it is not a
/// manifest.
pub fn load_manifest(path: Option<&Path>) -> Result<Manifest, String> {
    match path {
        None => Ok(Manifest::builtin()),
        Some(p) => {
            let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
            Manifest::parse(&text)
        }
    }
}

/// `--list`: every case with its id, level, section, needs and requirement.
fn list(format: Format) -> ExitCode {
    let all = cases::all();
    if format == Format::Json {
        let v: Vec<serde_json::Value> = all
            .iter()
            .map(|c| {
                serde_json::json!({
                    "id": c.id,
                    "level": c.level.as_str(),
                    "section": c.section,
                    "requirement": c.requirement,
                    "needs": format!("{:?}", c.needs).to_lowercase(),
                })
            })
            .collect();
        print_stdout(format_args!(
            "{}\n",
            serde_json::to_string_pretty(&v).expect("list serialises")
        ));
    } else {
        for c in all {
            let needs = match c.needs {
                Needs::Nothing => "",
                Needs::Control => "  [needs --control]",
                Needs::SecondToken => "  [needs --second-token]",
            };
            print_stdout(format_args!(
                "{:<44} {:<6} {}{needs}\n    {}\n",
                c.id,
                c.level.as_str(),
                c.section,
                c.requirement
            ));
        }
    }
    ExitCode::SUCCESS
}

/// Runs the kit as `program` (the prefix of every message on stderr) with
/// `args`. A caller that offers `--fake` passes it: when asked for, its
/// stand-in is the target instead of `--target`.
#[must_use]
pub fn main(program: &str, args: Args, fake: Option<Fake<'_>>) -> ExitCode {
    let usage = |msg: String| {
        eprintln!("{program}: {msg}");
        ExitCode::from(EXIT_USAGE)
    };
    if args.list {
        return list(args.format);
    }
    let manifest = match load_manifest(args.manifest.as_deref()) {
        Ok(m) => m,
        Err(e) => return usage(e),
    };
    let known_failing = match &args.known_failing {
        None => Vec::new(),
        Some(p) => match std::fs::read_to_string(p)
            .map_err(|e| format!("{}: {e}", p.display()))
            .and_then(|t| parse_known_failing(&t).map_err(|e| e.to_string()))
        {
            Ok(k) => k,
            Err(e) => return usage(e),
        },
    };
    // The stand-in serves until `_keep` drops, after the report is printed.
    let mut _keep = None;
    let offers_fake = fake.is_some();
    let (target, token, second_token, hook) = if let Some(fake) = fake.filter(|f| f.asked) {
        let served = match (fake.start)(&manifest) {
            Ok(s) => s,
            Err(e) => return usage(e),
        };
        _keep = Some(served.keep);
        (served.url, served.token, served.second_token, served.hook)
    } else {
        let (Some(target), Some(token)) = (args.target, args.token) else {
            let or = if offers_fake {
                "or --fake, or --list"
            } else {
                "or --list"
            };
            return usage(format!("--target URL and --token T are required ({or})"));
        };
        (
            target,
            token,
            args.second_token,
            Hook::from_command_line(args.control.as_deref()),
        )
    };
    let target = match Target::parse(&target) {
        Ok(t) => t,
        Err(e) => return usage(e),
    };
    let trust = match args.ca_file.as_deref().map(TlsTrust::from_ca_file) {
        None => TlsTrust::public(),
        Some(Ok(trust)) => trust,
        Some(Err(e)) => return usage(format!("--ca-file: {e}")),
    };
    let opts = Options {
        target,
        trust,
        token,
        second_token,
        hook,
        manifest,
        run: args.run,
        skip: args.skip,
        strict: args.strict,
        known_failing,
        trace: args.trace,
    };
    let report = match crate::run(&opts) {
        Ok(r) => r,
        Err(e @ (RunError::Unreachable { .. } | RunError::Tls { .. })) => {
            eprintln!("{program}: {e}");
            return ExitCode::from(EXIT_UNREACHABLE);
        }
        Err(e) => return usage(e.to_string()),
    };
    match args.format {
        Format::Text => print_stdout(format_args!("{}", report.to_text())),
        Format::Json => print_stdout(format_args!("{}\n", report.to_json())),
        Format::Junit => print_stdout(format_args!("{}", report.to_junit())),
    }
    if report.failed() {
        let ids = report.failing_ids();
        eprintln!(
            "{program}: {} failed; rerun them with{}",
            ids.len(),
            ids.iter()
                .map(|i| format!(" --run {i}"))
                .collect::<String>()
        );
        ExitCode::from(EXIT_FAIL)
    } else {
        ExitCode::SUCCESS
    }
}
