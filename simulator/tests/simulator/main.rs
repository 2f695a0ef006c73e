//! The simulator's integration tests as one binary, a module per fake, client or world: one link against the whole dependency tree instead of eight (issue 29 §5, as turmoil's `tests/net/main.rs`).
//!
//! `cargo test --workspace --test simulator -- determinism::` runs one
//! module (`MEMORIA_SEED=N` picks the seed of `determinism` and `chat`).
//! Every module shares this process, so none sets process-global state:
//! the seed is read from the environment, never written.

mod chat;
mod client;
mod determinism;
mod fake_contract;
mod fake_home;
mod fake_sheets;
mod provider;
mod world;
