//! `memoria-harness demo`: memoria with the embedded corpus beside fake siblings on loopback until Ctrl-C, its URL, sign-in links and `fake-control` commands printed.

use std::process::ExitCode;

use super::{ModelChoice, before_serving, this_exe, usage};

/// Serves the demo on `addr` (loopback only), AI on with `ai`; exit 0 on
/// Ctrl-C, 2 when it cannot serve.
pub fn demo(addr: std::net::SocketAddr, ai: bool, model: Option<ModelChoice>) -> ExitCode {
    let (model, rt) = match before_serving("demo", "the demo", addr, model) {
        Ok(ready) => ready,
        Err(code) => return code,
    };
    rt.block_on(async move {
        let demo = match memoria_gates::demo::start_with_model(addr, true, ai, model).await {
            Ok(d) => d,
            Err(e) => return usage("demo", &e),
        };
        let exe = this_exe();
        outln!(
            "demo: memoria with the embedded Almendra Studio corpus and {} fake siblings, on {}",
            demo.siblings.len(),
            demo.url
        );
        let egress = if ai {
            memoria::EgressMode::AiOn
        } else {
            memoria::EgressMode::AiOff
        };
        outln!("demo: egress: {}", egress.footer());
        demo.deliver_sign_in_links();
        out!("{}", demo.instructions(&exe));
        let _ = tokio::signal::ctrl_c().await;
        ExitCode::SUCCESS
    })
}
