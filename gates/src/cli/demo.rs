//! `memoria-harness demo`: memoria with the embedded corpus beside fake siblings on loopback until Ctrl-C, its URL, sign-in links and `fake-control` commands printed.

use std::process::ExitCode;

use super::{EXIT_USAGE, ModelChoice, start_model};

/// Serves the demo on `addr` (loopback only), AI on with `ai`; exit 0 on
/// Ctrl-C, 2 when it cannot serve.
pub fn demo(addr: std::net::SocketAddr, ai: bool, model: Option<ModelChoice>) -> ExitCode {
    let usage = |msg: String| {
        eprintln!("memoria-harness demo: {msg}");
        ExitCode::from(EXIT_USAGE)
    };
    let model = match start_model(model) {
        Ok(m) => m,
        Err(e) => return usage(e),
    };
    if !addr.ip().is_loopback() {
        return usage(format!(
            "{addr} is not a loopback address; the demo binds loopback only"
        ));
    }
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => return usage(format!("a runtime: {e}")),
    };
    rt.block_on(async move {
        let demo = match memoria_gates::demo::start_with_model(addr, true, ai, model).await {
            Ok(d) => d,
            Err(e) => return usage(e),
        };
        let exe = std::env::current_exe()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| "memoria-harness".into());
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
