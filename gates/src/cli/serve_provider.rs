//! `memoria-harness serve-provider`: the stub embedding provider over loopback until Ctrl-C, its URL, paths, models and `fake-control` commands printed.

use std::process::ExitCode;

use super::{ModelChoice, before_serving, this_exe, usage};

/// Serves the stub provider on `addr` (loopback only), answering `model`'s
/// vectors when one is named; exit 0 on Ctrl-C, 2 when it cannot serve.
pub fn serve_provider(addr: std::net::SocketAddr, model: Option<ModelChoice>) -> ExitCode {
    let (model, rt) = match before_serving("serve-provider", "the stub provider", addr, model) {
        Ok(ready) => ready,
        Err(code) => return code,
    };
    rt.block_on(async move {
        let stub = match model {
            Some(m) => memoria_simulator::StubProvider::new().with_model(m),
            None => memoria_simulator::StubProvider::new(),
        };
        let (local, _served) = match memoria_simulator::serve_loopback(stub.router(), addr).await
        {
            Ok(s) => s,
            Err(e) => return usage("serve-provider", &format!("cannot listen on {addr}: {e}")),
        };
        let exe = this_exe();
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
