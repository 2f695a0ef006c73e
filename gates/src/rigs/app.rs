//! The one in-process app: the reference memoria behind its router ([`TestApp`]), woken in the case's scratch directory under a DEK from the case's stream, on a [`HandClock`] rather than the wall clock.

use std::sync::Arc;

use memoria::testkit::TestApp;
use memoria::{Admission, EgressMode, Instance, InstanceConfig, Sealer};

use super::clock::HandClock;
use super::support::dek;
use crate::{Ctx, Failure};

/// The instant an in-process app's clock reads, Unix seconds (2026-09-21 14:13:20 UTC).
pub const APP_T0_S: i64 = 1_790_000_000;

/// memoria in process for `owners` (comma-separated addresses, §4.3), its
/// data under the case's `data` scratch directory, its DEK drawn from the
/// case's stream, its clock a [`HandClock`] at [`APP_T0_S`].
///
/// # Errors
/// A [`Failure`] if memoria does not wake.
pub fn app(ctx: &mut Ctx, owners: &str) -> Result<TestApp, Failure> {
    TestApp::with_clock(
        &ctx.dir("data"),
        &dek(ctx.rng()),
        owners,
        Arc::new(HandClock::at(APP_T0_S)),
    )
    .map_err(|e| Failure::new("memoria wakes in process", e.to_string()))
}

/// As [`app`], in egress mode `egress` (§8.3: AI on or off), its data under
/// the scratch directory `dir` (so one case can wake one app per mode).
/// Only the mode differs: an AI-on app here builds no provider client and
/// sends nothing; what it changes is what every page says.
///
/// # Errors
/// A [`Failure`] if memoria does not wake.
pub fn app_in_mode(
    ctx: &mut Ctx,
    owners: &str,
    egress: EgressMode,
    dir: &str,
) -> Result<TestApp, Failure> {
    let wake = |e: memoria::Error| Failure::new("memoria wakes in process", e.to_string());
    let instance = Instance::wake(
        InstanceConfig {
            data_dir: ctx.dir(dir),
            admission: Admission::parse(owners).map_err(wake)?,
            egress,
        },
        Sealer::new(&dek(ctx.rng())),
        Arc::new(HandClock::at(APP_T0_S)),
    )
    .map_err(wake)?;
    Ok(TestApp::from_instance(instance))
}

/// The owners file an in-process app admits from (§4.3): a case rewrites,
/// removes or spoils it while memoria runs, and memoria reads it again on
/// every request.
#[derive(Debug, Clone)]
pub struct OwnersFile {
    path: std::path::PathBuf,
}

impl OwnersFile {
    /// An owners file naming `owners`, under the case's `owners` scratch directory.
    ///
    /// # Panics
    /// If the file cannot be written: a case without its owners has nothing to assert.
    pub fn new(ctx: &mut Ctx, owners: &[&str]) -> OwnersFile {
        let file = OwnersFile {
            path: ctx.dir("owners").join("owners"),
        };
        file.write(owners);
        file
    }

    /// The file's path.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Rewrites the file to name exactly `owners`, one a line, as an
    /// operator would: a new file renamed over the old one.
    ///
    /// # Panics
    /// If the file cannot be written.
    pub fn write(&self, owners: &[&str]) {
        self.clear();
        let next = self.path.with_extension("next");
        std::fs::write(&next, owners.join("\n") + "\n").expect("the owners file is written");
        std::fs::rename(&next, &self.path).expect("the owners file is replaced");
    }

    /// Replaces the file, as [`OwnersFile::write`] does, with one naming
    /// `owners` that carries the old file's modification time: with a list
    /// of the same length, a rewrite that a stat of the path cannot see.
    ///
    /// # Panics
    /// If the file cannot be read, written or replaced.
    pub fn write_keeping_mtime(&self, owners: &[&str]) {
        let modified = std::fs::metadata(&self.path)
            .and_then(|m| m.modified())
            .expect("the owners file has a modification time");
        let next = self.path.with_extension("next");
        std::fs::write(&next, owners.join("\n") + "\n").expect("the owners file is written");
        std::fs::File::options()
            .write(true)
            .open(&next)
            .and_then(|f| f.set_modified(modified))
            .expect("the new file takes the old one's modification time");
        std::fs::rename(&next, &self.path).expect("the owners file is replaced");
    }

    /// Removes whatever is at the path (a file or a directory).
    fn clear(&self) {
        let _ = std::fs::remove_file(&self.path);
        let _ = std::fs::remove_dir_all(&self.path);
    }

    /// Spoils the source in one of [`OwnersFile::SPOILS`]' ways, by name.
    ///
    /// # Panics
    /// If `how` is not one of them, or the path cannot be changed.
    pub fn spoil(&self, how: &str, owners: &[&str]) {
        self.clear();
        match how {
            "removed" => {}
            "a directory in its place" => {
                std::fs::create_dir(&self.path).expect("a directory at the owners path");
            }
            "a line that is not an address" => {
                std::fs::write(&self.path, owners.join("\n") + "\nnot an address\n")
                    .expect("written");
            }
            "not UTF-8" => {
                let mut bytes = (owners.join("\n") + "\n").into_bytes();
                bytes.extend_from_slice(b"\xff\xfe\n");
                std::fs::write(&self.path, bytes).expect("written");
            }
            "over its size cap" => {
                let mut text = owners.join("\n") + "\n";
                while text.len() <= memoria::OWNERS_FILE_BYTES_MAX {
                    text.push('\n');
                }
                std::fs::write(&self.path, text).expect("written");
            }
            other => panic!("no way to spoil the owners file called {other:?}"),
        }
    }

    /// Every way [`OwnersFile::spoil`] makes the source unusable while the
    /// owners it named are still in it where it has any text at all.
    pub const SPOILS: &[&str] = &[
        "removed",
        "a directory in its place",
        "a line that is not an address",
        "not UTF-8",
        "over its size cap",
    ];
}

/// memoria in process, as [`app`], admitting from an owners file naming
/// `owners` ([`memoria::Admission::file`]), which the case may change while
/// the app runs.
///
/// # Errors
/// A [`Failure`] if memoria does not wake.
pub fn app_with_owners_file(
    ctx: &mut Ctx,
    owners: &[&str],
) -> Result<(TestApp, OwnersFile), Failure> {
    let file = OwnersFile::new(ctx, owners);
    let wake = |e: memoria::Error| Failure::new("memoria wakes in process", e.to_string());
    let admission = Admission::file(file.path()).map_err(wake)?;
    let app = TestApp::with_admission(
        &ctx.dir("data"),
        &dek(ctx.rng()),
        admission,
        Arc::new(HandClock::at(APP_T0_S)),
    )
    .map_err(wake)?;
    Ok((app, file))
}
