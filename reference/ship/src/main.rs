//! `memoria-ship`: the `memoria` command built from the reference's sources without the `testkit` feature, as `cargo build --release -p memoria` ships it.
//!
//! `tests/no_crash_point.rs` looks for the crash points' arming variable in
//! this binary, and CI's real-corpus step imports and searches with it. It is the
//! reference's own `main.rs`, included as a module, over the reference's own
//! library compiled as this package's lib (`Cargo.toml` says why). Its test
//! build (`--all-targets` asks for one) is empty: `memoria`'s tests are
//! these sources' tests.

#[cfg(not(test))]
extern crate memoria_ship as memoria;

#[cfg(not(test))]
#[path = "../../src/main.rs"]
mod command;

#[cfg(not(test))]
fn main() -> std::process::ExitCode {
    command::main()
}
