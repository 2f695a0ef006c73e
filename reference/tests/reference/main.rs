//! The reference's integration tests as one binary, a module per surface or concern: one link against the whole dependency tree instead of ten (issue 29 §5, as turmoil's `tests/net/main.rs`).
//!
//! `cargo test --workspace --test reference -- web::` runs one module.
//! Every module shares this process, so none sets process-global state: no
//! environment variable, no current directory, no global subscriber
//! (`provider` scopes its subscriber to its own thread with `set_default`),
//! and the children `cli`, `crash` and `mcp` spawn get their environment
//! on their own `Command`.

mod cli;
mod connectors;
mod contract;
// SIGKILL and exit signals are unix's.
#[cfg(unix)]
mod crash;
mod facts;
mod mcp;
mod offload;
mod provider;
mod real_text;
mod web;

use std::path::Path;
use std::process::{Command, Stdio};

use memoria::Dek;

/// The owner `cli` and `mcp` run `memoria` as.
const OWNER: &str = "ana@example.org";

/// The `memoria` binary for `data`, with `dek` as its DEK and nothing inherited.
pub(crate) fn memoria(data: &Path, dek: &Dek) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_memoria"));
    cmd.arg("--data")
        .arg(data)
        .env("MEMORIA_DEK", dek.to_base64())
        .env("MEMORIA_OWNERS", OWNER)
        .env("MEMORIA_LOG", "warn")
        .env_remove("MEMORIA_DEK_FILE")
        .env_remove("MEMORIA_DATA")
        .env_remove("MEMORIA_TOMBSTONES")
        .env_remove("MEMORIA_SIBLINGS")
        .env_remove("MEMORIA_AI")
        .env_remove("MEMORIA_PROVIDER_KEY")
        .env_remove("MEMORIA_PROVIDER_KEY_FILE")
        .env_remove("MEMORIA_PROJECTS")
        .env_remove("MEMORIA_ORGANISATION")
        .stdin(Stdio::null());
    cmd
}
