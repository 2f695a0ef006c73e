//! `memoria-harness serve-fake`: the simulator's fake sibling over loopback until Ctrl-C, its URL, tokens and control command printed.

use std::process::ExitCode;

use memoria_gates::conform;

use super::{this_exe, usage};

/// Serves the fake seeded from `manifest` on `addr`; exit 0 on Ctrl-C, 2
/// when it cannot serve.
pub fn serve_fake(manifest: Option<&std::path::Path>, addr: std::net::SocketAddr) -> ExitCode {
    let manifest = match conform::cli::load_manifest(manifest) {
        Ok(m) => m,
        Err(e) => return usage("serve-fake", &e.to_string()),
    };
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => return usage("serve-fake", &e.to_string()),
    };
    rt.block_on(async move {
        let served = match conform::fake::serve(&manifest, addr).await {
            Ok(s) => s,
            Err(e) => return usage("serve-fake", &e.to_string()),
        };
        let exe = this_exe();
        outln!("url {}", served.url);
        outln!("token {}", conform::fake::FAKE_TOKEN);
        outln!("second-token {}", conform::fake::FAKE_SECOND_TOKEN);
        outln!("control {exe} fake-control --url {}", served.url);
        let _ = tokio::signal::ctrl_c().await;
        ExitCode::SUCCESS
    })
}
