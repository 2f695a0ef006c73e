//! `memoria-harness serve-provider`: the stub embedding provider over loopback until Ctrl-C, its URL, paths, models and `fake-control` commands printed.

use std::process::ExitCode;

use super::{EXIT_USAGE, ModelChoice, start_model};

/// Serves the stub provider on `addr` (loopback only), answering `model`'s
/// vectors when one is named; exit 0 on Ctrl-C, 2 when it cannot serve.
pub fn serve_provider(addr: std::net::SocketAddr, model: Option<ModelChoice>) -> ExitCode {
    let usage = |msg: String| {
        eprintln!("memoria-harness serve-provider: {msg}");
        ExitCode::from(EXIT_USAGE)
    };
    let model = match start_model(model) {
        Ok(m) => m,
        Err(e) => return usage(e),
    };
    if !addr.ip().is_loopback() {
        return usage(format!(
            "{addr} is not a loopback address; the stub provider binds loopback only"
        ));
    }
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => return usage(format!("a runtime: {e}")),
    };
    rt.block_on(async move {
        let stub = match model {
            Some(m) => memoria_simulator::StubProvider::new().with_model(m),
            None => memoria_simulator::StubProvider::new(),
        };
        let (local, _served) = match memoria_simulator::serve_loopback(stub.router(), addr).await
        {
            Ok(s) => s,
            Err(e) => return usage(format!("cannot listen on {addr}: {e}")),
        };
        let exe = std::env::current_exe()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| "memoria-harness".into());
        let url = format!("http://{local}");
        outln!("url {url}");
        outln!("path {}", memoria_simulator::STUB_EMBED_PATH);
        outln!("model {}", memoria::EMBED_MODEL);
        outln!("chat-path {}", memoria_simulator::STUB_CHAT_PATH);
        outln!(
            "chat-models {} {}",
            memoria::MODEL_CHEAP,
            memoria::MODEL_FRONTIER
        );
        outln!("sentinel-marker {}", memoria_simulator::SENTINEL_MARKER);
        outln!(
            "note: vectors are deterministic hashed word features (texts sharing words score higher); they are NOT semantic"
        );
        for (action, what) in memoria_simulator::PROVIDER_ACTIONS {
            outln!("control {exe} fake-control --url {url} {action}    # {what}");
        }
        let _ = tokio::signal::ctrl_c().await;
        ExitCode::SUCCESS
    })
}
