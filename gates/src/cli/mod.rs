//! The bodies of `memoria-harness`'s subcommands, one module each; `main.rs` holds the arguments and the dispatch.
//!
//! What every subcommand shares is here: the exit codes, the workspace a
//! command works on, the shell quoting of replay commands, the real model
//! the stub provider can answer with, and [`out!`] and [`outln!`], which
//! print to stdout as `print!` and `println!` do except that a closed
//! stdout (`memoria-harness guards PATH | head`) ends the program quietly
//! with exit 0, as ripgrep and cargo do.

use std::path::PathBuf;

/// `print!` to stdout; a closed stdout ends the program with exit 0
/// ([`memoria_gates::conform::cli::print_stdout`]).
macro_rules! out {
    ($($arg:tt)*) => {
        memoria_gates::conform::cli::print_stdout(format_args!($($arg)*))
    };
}

/// `println!` to stdout; a closed stdout ends the program with exit 0
/// ([`memoria_gates::conform::cli::print_stdout`]).
macro_rules! outln {
    () => {
        memoria_gates::conform::cli::print_stdout(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        memoria_gates::conform::cli::print_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub mod conform;
pub mod demo;
pub mod explore;
pub mod fake_control;
pub mod guards;
pub mod list;
pub mod mutants;
pub mod quality;
pub mod replay;
pub mod run;
pub mod serve_fake;
pub mod serve_provider;
pub mod sweep;

/// Exit code: a gate failed, a mutation was not killed, an expectation failed.
pub const EXIT_FAIL: u8 = 1;
/// Exit code: a usage or harness error, including a run of nothing.
pub const EXIT_USAGE: u8 = 2;

/// The workspace a command works on: `--workspace`, else this binary's own,
/// canonical.
///
/// # Errors
/// It does not exist (the message names it).
pub fn workspace_root(workspace: Option<PathBuf>) -> Result<PathBuf, String> {
    let w = workspace.unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/..")));
    w.canonicalize()
        .map_err(|e| format!("workspace {}: {e}", w.display()))
}

/// `s` as one POSIX shell word (`shlex`), for the replay commands a failure
/// prints: a glob (`g05/*`), a space or a quote comes back quoted. A NUL,
/// which no argument or path can hold, is the one thing shlex refuses; such
/// a string is printed as it is.
pub fn shell_quote(s: &str) -> String {
    shlex::try_quote(s).map_or_else(|_| s.to_owned(), std::borrow::Cow::into_owned)
}

/// A real model the stub can answer with (`--model`).
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ModelChoice {
    /// all-MiniLM-L6-v2, as `fixtures/corpus/fetch-minilm` brings it.
    Minilm,
}

/// `memoria-harness <cmd>: <why>` on stderr, and the usage exit code.
pub fn usage(cmd: &str, why: &str) -> std::process::ExitCode {
    eprintln!("memoria-harness {cmd}: {why}");
    std::process::ExitCode::from(EXIT_USAGE)
}

/// What a subcommand that serves on loopback until Ctrl-C does before it
/// serves: `choice`'s model started, `addr` checked to be loopback (`what`
/// names the server in the refusal), and a runtime.
///
/// # Errors
/// The usage exit code, its reason printed ([`usage`]), if the model does
/// not start, `addr` is not loopback, or no runtime starts.
pub fn before_serving(
    cmd: &str,
    what: &str,
    addr: std::net::SocketAddr,
    choice: Option<ModelChoice>,
) -> Result<
    (
        Option<memoria_simulator::ModelEmbedder>,
        tokio::runtime::Runtime,
    ),
    std::process::ExitCode,
> {
    let model = start_model(choice).map_err(|e| usage(cmd, &e))?;
    if !addr.ip().is_loopback() {
        return Err(usage(
            cmd,
            &format!("{addr} is not a loopback address; {what} binds loopback only"),
        ));
    }
    let rt = tokio::runtime::Runtime::new().map_err(|e| usage(cmd, &format!("a runtime: {e}")))?;
    Ok((model, rt))
}

/// This binary's path, for the commands a serving subcommand prints.
pub fn this_exe() -> String {
    std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "memoria-harness".into())
}

/// Starts `choice`'s model from this workspace's fixtures.
pub fn start_model(
    choice: Option<ModelChoice>,
) -> Result<Option<memoria_simulator::ModelEmbedder>, String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    match choice {
        None => Ok(None),
        Some(ModelChoice::Minilm) => memoria_simulator::ModelEmbedder::start(&root)
            .map(Some)
            .map_err(|e| e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replay_selector_is_quoted_only_when_the_shell_would_change_it() {
        assert_eq!(shell_quote("g05"), "g05");
        assert_eq!(shell_quote("mutants/g05-a.diff"), "mutants/g05-a.diff");
        assert_eq!(shell_quote("g05/*"), "'g05/*'");
        assert_eq!(shell_quote("g05/?"), "'g05/?'", "? globs too");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote(""), "''");
        let quoted = shell_quote("it's $HOME");
        assert_eq!(shlex::split(&quoted), Some(vec!["it's $HOME".to_owned()]));
    }
}
