//! `memoria-kit`: the conformance kit's binary, for a sibling implementer to point at their own server (§4.1, §6.1, §6.2).
//!
//! The same flags, report and exit codes as `memoria-harness conform`,
//! without `--fake` (the harness's in-process fake sibling): install it
//! with `cargo install --locked --path gates/kit` and run it against your
//! server.

use std::process::ExitCode;

use clap::Parser;

#[derive(Debug, Parser)]
#[command(
    name = "memoria-kit",
    version,
    about = "Prove a sibling server's S1, S1a, S2 and S3 conform: exit 0 pass, 1 a case failed, 2 usage, 3 the target cannot be reached.",
    after_help = "Example: memoria-kit --target http://127.0.0.1:8080 --token \"$TOKEN\" --control ./control-hook --strict\n\nThe cases, the fixture manifest your server must hold and the control hook's actions: fixtures/conformance/README.md."
)]
struct Cli {
    #[command(flatten)]
    args: memoria_kit::cli::Args,
}

fn main() -> ExitCode {
    memoria_kit::cli::main("memoria-kit", Cli::parse().args, None)
}
