//! `memoria-harness fake-control`: one action posted to a served fake's `/_control` route, its value printed.

use std::path::Path;
use std::process::ExitCode;

use memoria_gates::conform;

use super::{EXIT_FAIL, EXIT_USAGE};

/// Posts `action` to the fake at `url`; exit 0 done, 1 refused or
/// unreachable, 2 on a usage error, 3 the fake cannot drive the action.
pub fn fake_control(url: &str, ca_file: Option<&Path>, action: &[String]) -> ExitCode {
    let cannot = ExitCode::from(conform::control::CONTROL_EXIT_CANNOT as u8);
    let target = match conform::client::Target::parse(url) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("memoria-harness fake-control: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let (name, args) = action.split_first().expect("clap requires an action");
    let body = serde_json::to_vec(&serde_json::json!({"action": name, "args": args}))
        .expect("JSON serialises");
    let trust = match ca_file.map(conform::TlsTrust::from_ca_file) {
        None => conform::TlsTrust::public(),
        Some(Ok(trust)) => trust,
        Some(Err(e)) => {
            eprintln!("memoria-harness fake-control: --ca-file: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let client = conform::client::Client::new(target, false).with_trust(trust);
    match client.post(
        memoria_simulator::CONTROL_PATH,
        body,
        conform::client::Auth::Missing,
    ) {
        Ok(r) if r.status == 200 => {
            let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap_or_default();
            if let Some(value) = v["value"].as_str() {
                outln!("{value}");
            }
            ExitCode::SUCCESS
        }
        Ok(r) if r.status == 404 => {
            eprintln!("memoria-harness fake-control: the fake cannot drive {name}");
            cannot
        }
        Ok(r) => {
            eprintln!(
                "memoria-harness fake-control: {name} refused with status {}",
                r.status
            );
            ExitCode::from(EXIT_FAIL)
        }
        Err(e) => {
            eprintln!("memoria-harness fake-control: {e}");
            ExitCode::from(EXIT_FAIL)
        }
    }
}
