//! The control hook: an executable the kit runs as `CMD <action> <args...>` to move the server between the manifest's states (§4.1, §6.2).
//!
//! Exit 0 means done (stdout's first line, if any, is the action's value:
//! the new revision for `bump-revision`, the new token for `rotate-begin`;
//! `bump-revisions` prints one new revision a line); exit
//! [`CONTROL_EXIT_CANNOT`] means "this server cannot be driven that way",
//! and every case needing the action is skipped, never passed; any other
//! exit fails the case. Actions: `reset`, `downgrade-to-granted ITEM
//! ADDRESS`, `bump-revision ITEM`, `bump-revisions ITEM N` (optional: the
//! kit falls back to N `bump-revision` calls on exit 3), `delete ITEM`,
//! `set-link-shared ITEM`, `set-guest-only ITEM`, `empty-team-set`,
//! `partial-restore ITEM REVISION`, `whole-log-restore`, `rotate-begin`,
//! `rotate-retire`, and for a Sheets server `reformat-cell ITEM TAB ROW COL
//! FORMAT same|new` (§8.7). `fixtures/conformance/README.md` says what each must do.

use std::process::{Command, Stdio};
use std::time::Duration;

use wait_timeout::ChildExt as _;

/// The hook's exit code for "cannot drive this action".
pub const CONTROL_EXIT_CANNOT: i32 = 3;

/// How long one hook call may take, in seconds.
pub const CONTROL_TIMEOUT_S: u64 = 30;

/// What a hook call came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Controlled {
    /// Done; the value printed, if any.
    Done(Option<String>),
    /// The hook cannot drive it (exit 3), or there is no hook.
    Cannot(String),
    /// The hook failed: a message without content.
    Failed(String),
}

/// A control hook: the argv prefix the kit appends an action and its arguments to.
#[derive(Debug, Clone, Default)]
pub struct Hook {
    argv: Vec<String>,
}

impl Hook {
    /// A hook from `--control CMD`, split on whitespace (use a script for
    /// anything that needs quoting). `None` or an empty string: no hook.
    #[must_use]
    pub fn from_command_line(cmd: Option<&str>) -> Hook {
        Hook {
            argv: cmd
                .map(|c| c.split_whitespace().map(str::to_owned).collect())
                .unwrap_or_default(),
        }
    }

    /// A hook from an explicit argv prefix.
    #[must_use]
    pub fn from_argv(argv: Vec<String>) -> Hook {
        Hook { argv }
    }

    /// Whether a hook was given.
    #[must_use]
    pub fn present(&self) -> bool {
        !self.argv.is_empty()
    }

    /// Runs `CMD action args...`; the value is stdout's first line.
    #[must_use]
    pub fn call(&self, action: &str, args: &[&str]) -> Controlled {
        match self.call_lines(action, args) {
            Ok(lines) => Controlled::Done(lines.into_iter().next()),
            Err(c) => c,
        }
    }

    /// Runs `CMD action args...`; every non-empty line of stdout, trimmed.
    ///
    /// # Errors
    /// [`Controlled::Cannot`] or [`Controlled::Failed`], as for [`Hook::call`].
    pub fn call_lines(&self, action: &str, args: &[&str]) -> Result<Vec<String>, Controlled> {
        let Some((program, prefix)) = self.argv.split_first() else {
            return Err(Controlled::Cannot("no --control hook was given".into()));
        };
        let child = Command::new(program)
            .args(prefix)
            .arg(action)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn();
        let mut child = match child {
            Ok(c) => c,
            Err(e) => return Err(Controlled::Failed(format!("the hook did not start: {e}"))),
        };
        let stdout = child.stdout.take().expect("piped");
        let reader =
            std::thread::spawn(move || std::io::read_to_string(stdout).unwrap_or_default());
        let status = match child.wait_timeout(Duration::from_secs(CONTROL_TIMEOUT_S)) {
            Ok(Some(s)) => s,
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(Controlled::Failed(format!(
                    "the hook ran past {CONTROL_TIMEOUT_S} s on {action}"
                )));
            }
            Err(e) => return Err(Controlled::Failed(format!("waiting for the hook: {e}"))),
        };
        let out = reader.join().unwrap_or_default();
        match status.code() {
            Some(0) => Ok(out
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_owned)
                .collect()),
            Some(CONTROL_EXIT_CANNOT) => Err(Controlled::Cannot(format!(
                "the hook cannot drive {action} (exit 3)"
            ))),
            Some(c) => Err(Controlled::Failed(format!(
                "the hook exited {c} on {action}"
            ))),
            None => Err(Controlled::Failed(format!(
                "the hook was killed by a signal on {action}"
            ))),
        }
    }
}
