//! The harness's integration tests as one binary, a module per command or surface: one link against the whole dependency tree instead of four (issue 29 §5, as turmoil's `tests/net/main.rs`).
//!
//! `cargo test --workspace --test harness -- demo::` runs one module.
//! `gates.rs` (`harness = false`, one trial per registered case) and
//! `tidy.rs` (named by its binary, `target/debug/deps/tidy-*`) stay
//! binaries of their own. Every module here shares this process, so none
//! sets process-global state: the children `cli` and `conform` spawn get
//! their environment on their own `Command`, and `demo` reads `PATH`,
//! never writes it.

mod cli;
mod conform;
mod demo;
mod scenarios;
