//! `memoria-harness serve-fake`: the simulator's fake sibling over loopback until Ctrl-C, its URL, tokens and control command printed.

use std::process::ExitCode;

use memoria_gates::conform;

use super::EXIT_USAGE;

/// Serves the fake seeded from `manifest` on `addr`; exit 0 on Ctrl-C, 2
/// when it cannot serve.
pub fn serve_fake(manifest: Option<&std::path::Path>, addr: std::net::SocketAddr) -> ExitCode {
    let manifest = match conform::cli::load_manifest(manifest) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("memoria-harness serve-fake: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("memoria-harness serve-fake: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    rt.block_on(async move {
        let served = match conform::fake::serve(&manifest, addr).await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("memoria-harness serve-fake: {e}");
                return ExitCode::from(EXIT_USAGE);
            }
        };
        let exe = std::env::current_exe()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| "memoria-harness".into());
        outln!("url {}", served.url);
        outln!("token {}", conform::fake::FAKE_TOKEN);
        outln!("second-token {}", conform::fake::FAKE_SECOND_TOKEN);
        outln!("control {exe} fake-control --url {}", served.url);
        let _ = tokio::signal::ctrl_c().await;
        ExitCode::SUCCESS
    })
}
