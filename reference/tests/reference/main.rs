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
