//! `memoria-harness conform`: the conformance kit's own command line, with `--fake` serving the simulator's fake sibling on loopback.

use std::process::ExitCode;

use memoria_gates::conform;

use crate::ConformArgs;

/// `conform`: the kit's own command line, with `--fake` serving the
/// simulator's fake sibling on loopback for the run's duration.
pub fn conform(args: ConformArgs) -> ExitCode {
    let fake = conform::cli::Fake {
        asked: args.fake,
        start: &serve_fake_for_conform,
    };
    conform::cli::main("memoria-harness conform", args.kit, Some(fake))
}

/// The fake seeded from `manifest` on an ephemeral loopback port, its
/// control hook this executable's `fake-control`, and both its tokens.
fn serve_fake_for_conform(
    manifest: &conform::manifest::Manifest,
) -> Result<conform::cli::StandIn, String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| format!("a runtime for the fake: {e}"))?;
    let served = rt.block_on(conform::fake::serve(manifest, ([127, 0, 0, 1], 0).into()))?;
    let exe = std::env::current_exe()
        .map_err(|e| format!("this executable's path: {e}"))?
        .display()
        .to_string();
    let hook = conform::control::Hook::from_argv(vec![
        exe,
        "fake-control".into(),
        "--url".into(),
        served.url.clone(),
    ]);
    Ok(conform::cli::StandIn {
        url: served.url,
        token: conform::fake::FAKE_TOKEN.to_owned(),
        second_token: Some(conform::fake::FAKE_SECOND_TOKEN.to_owned()),
        hook,
        keep: Box::new(rt),
    })
}
