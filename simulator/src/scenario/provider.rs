//! The embedding provider in an AI-on scenario: its faults as the timeline switches them, and the oracle's liveness check that memoria's embedding queue drains once they stop (§7, §8.3).
//!
//! A scenario with `ai = true` runs memoria as `memoria serve` runs with AI
//! on: the stub provider embeds every passage and query and answers chat,
//! and memoria's own embedding loop drains its queue beside the server,
//! on its interval (`memoria::EMBED_DRAIN_INTERVAL_S`), with no hook that
//! production lacks. A `provider` event sets the stub's faults
//! ([`ProviderState`]); memoria is never told.
//!
//! What the oracle asserts, once the faults stop (`expect-converged`):
//! within [`EMBED_DRAIN_WAIT_MAX_S`] of simulated time, the owner's
//! sources page says every passage has its vector. It reads the page, as
//! an owner would, never memoria's queue. The safety oracle needs nothing
//! new for AI on: a fused ranking is still judged passage by passage.

use std::time::Duration;

use memoria_page::Page;

use super::checks::Check;
use super::parse::{PROVIDER_RATE_LIMITED_CALLS, PROVIDER_SLOW_MS, ProviderState};
use crate::fake::provider::{Down, StubProvider};
use crate::world::Memoria;

/// A queue left undrained after the faults stopped (§7: every passage is
/// embedded by the one provider while AI is on).
pub const LIVENESS_EMBEDDINGS: &str = "[liveness:embeddings]";

/// The longest the oracle lets simulated time run for memoria's embedding
/// loop to drain its queue after the faults stop, in seconds: three of the
/// loop's intervals (`memoria::EMBED_DRAIN_INTERVAL_S`, 60 s), so a drain
/// that failed just before the faults stopped is retried twice, plus a
/// slow call's deadline.
pub const EMBED_DRAIN_WAIT_MAX_S: u64 =
    3 * memoria::EMBED_DRAIN_INTERVAL_S + memoria::EMBED_INGEST_DEADLINE_MS / 1_000;

/// How often the oracle reads the sources page while it waits, in simulated s.
const EMBED_DRAIN_POLL_S: u64 = 10;

/// How the sources page's Embeddings line begins once every passage has
/// its vector (`reference/src/web/sources.rs`).
const EVERY_VECTOR: &str = "Every passage has its vector";

/// Sets the stub's faults, for its embeddings and its chat alike.
pub(super) fn apply(stub: &StubProvider, state: ProviderState) {
    stub.clear_faults();
    stub.clear_chat_faults();
    match state {
        ProviderState::Down => {
            stub.set_down(Some(Down::Status(503)));
            stub.set_chat_down(Some(Down::Status(503)));
        }
        ProviderState::Refused => {
            stub.set_down(Some(Down::Refuse));
            stub.set_chat_down(Some(Down::Refuse));
        }
        ProviderState::Slow => {
            stub.set_slow(Some(PROVIDER_SLOW_MS));
            stub.set_chat_slow(Some(PROVIDER_SLOW_MS));
        }
        ProviderState::RateLimited => {
            stub.rate_limit_next(PROVIDER_RATE_LIMITED_CALLS);
            stub.chat_rate_limit_next(PROVIDER_RATE_LIMITED_CALLS);
        }
        ProviderState::Answering => {}
    }
}

/// Liveness, once the faults have stopped: lets simulated time run, reading
/// `owner`'s sources page every [`EMBED_DRAIN_POLL_S`], until it says every
/// passage has its vector, for at most [`EMBED_DRAIN_WAIT_MAX_S`]. Returns
/// the one check, held or not.
pub(super) async fn await_embedded(m: &mut Memoria, owner: &str) -> Check {
    let mut said = String::new();
    for _ in 0..=EMBED_DRAIN_WAIT_MAX_S / EMBED_DRAIN_POLL_S {
        let page = m.get(owner, "/sources").await;
        // The sources page's Embeddings section, read as a person reads it.
        let line = Page::parse(&page.response.body)
            .texts("section.embeddings p.meta")
            .join(" ");
        if page.response.status == http::StatusCode::OK && line.starts_with(EVERY_VECTOR) {
            return Check {
                expected: expected(),
                actual: "every passage has its vector".into(),
                ok: true,
            };
        }
        said = format!(
            "status {}, {}",
            page.response.status.as_u16(),
            if line.contains("await their vectors") {
                "passages still await their vectors"
            } else if line.is_empty() {
                "no embeddings line"
            } else {
                "an embeddings line that says neither"
            }
        );
        tokio::time::sleep(Duration::from_secs(EMBED_DRAIN_POLL_S)).await;
    }
    Check {
        expected: expected(),
        actual: format!("after {EMBED_DRAIN_WAIT_MAX_S} s the sources page says: {said}"),
        ok: false,
    }
}

fn expected() -> String {
    format!(
        "{LIVENESS_EMBEDDINGS} once the provider answers again, memoria's embedding loop gives every passage its vector within {EMBED_DRAIN_WAIT_MAX_S} s, as the owner's sources page says (§7, §8.3)"
    )
}
