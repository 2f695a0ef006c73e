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
//! sources page says every passage has its vector, or, when the truth
//! holds passages the stub always refuses (a live upload whose words
//! carry [`REFUSED_MARKER`]), that every other passage has its vector and
//! exactly that many are set aside. The spec's reading (`app/queue.rs`):
//! such a passage keeps §8.1's floor, "Lexical only, since embeddings need
//! a provider", and is counted loudly, never folded into "every passage";
//! one refused passage must not keep the rest from their vectors. It reads
//! the page, as an owner would, never memoria's queue. The safety oracle
//! needs nothing new for AI on: a fused ranking is still judged passage by
//! passage, and a refused passage is still found by its words.

use std::time::Duration;

use memoria_page::Page;

use super::checks::Check;
use super::parse::{PROVIDER_LAG_MS, PROVIDER_RATE_LIMITED_CALLS, PROVIDER_SLOW_MS, ProviderState};
use crate::fake::provider::{Down, REFUSED_MARKER, StubProvider};
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

/// How it begins once every passage but the set-aside ones has its vector.
const EVERY_OTHER_VECTOR: &str = "Every other passage has its vector";

/// Sets the stub's faults, for its embeddings and its chat alike; with
/// `rate-limited`, `retry_after_s` is the `Retry-After` the embeddings 429s
/// carry, in seconds.
pub(super) fn apply(stub: &StubProvider, state: ProviderState, retry_after_s: Option<u64>) {
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
            stub.set_retry_after(retry_after_s);
            stub.chat_rate_limit_next(PROVIDER_RATE_LIMITED_CALLS);
        }
        ProviderState::Lagging => {
            stub.set_slow(Some(PROVIDER_LAG_MS));
            stub.set_chat_slow(Some(PROVIDER_LAG_MS));
        }
        ProviderState::Answering => {}
    }
}

/// Liveness, once the faults have stopped: lets simulated time run, reading
/// `owner`'s sources page every [`EMBED_DRAIN_POLL_S`], until it says every
/// passage has its vector, or, with `refused` passages the stub always
/// refuses, every other one and `refused` set aside, for at most
/// [`EMBED_DRAIN_WAIT_MAX_S`]. Returns the one check, held or not.
pub(super) async fn await_embedded(m: &mut Memoria, owner: &str, refused: usize) -> Check {
    let mut said = String::new();
    let set_aside = format!("{} set aside", counted(refused, "passage", "passages"));
    for _ in 0..=EMBED_DRAIN_WAIT_MAX_S / EMBED_DRAIN_POLL_S {
        let page = m.get(owner, "/sources").await;
        // The sources page's Embeddings section, read as a person reads it.
        let parsed = Page::parse(&page.response.body);
        let line = parsed.texts("section.embeddings p.meta").join(" ");
        let aside = parsed.texts("section.embeddings p.set-aside").join(" ");
        let drained = if refused == 0 {
            line.starts_with(EVERY_VECTOR) && aside.is_empty()
        } else {
            line.starts_with(EVERY_OTHER_VECTOR) && aside.starts_with(&set_aside)
        };
        if page.response.status == http::StatusCode::OK && drained {
            return Check {
                expected: expected(refused),
                actual: if refused == 0 {
                    "every passage has its vector".into()
                } else {
                    format!("every other passage has its vector, and {set_aside}")
                },
                ok: true,
            };
        }
        said = format!(
            "status {}, {}{}",
            page.response.status.as_u16(),
            if line.contains("await their vectors") {
                "passages still await their vectors"
            } else if line.starts_with(EVERY_VECTOR) {
                "every passage has its vector"
            } else if line.starts_with(EVERY_OTHER_VECTOR) {
                "every other passage has its vector"
            } else if line.is_empty() {
                "no embeddings line"
            } else {
                "an embeddings line that says neither"
            },
            if aside.is_empty() {
                ", nothing set aside".to_string()
            } else {
                // The count only: the sentence names no passage.
                format!(
                    ", set aside: {}",
                    aside.split(" set aside").next().unwrap_or_default()
                )
            }
        );
        tokio::time::sleep(Duration::from_secs(EMBED_DRAIN_POLL_S)).await;
    }
    Check {
        expected: expected(refused),
        actual: format!("after {EMBED_DRAIN_WAIT_MAX_S} s the sources page says: {said}"),
        ok: false,
    }
}

/// "1 passage", "2 passages", as the sources page counts.
fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn expected(refused: usize) -> String {
    if refused == 0 {
        format!(
            "{LIVENESS_EMBEDDINGS} once the provider answers again, memoria's embedding loop gives every passage its vector within {EMBED_DRAIN_WAIT_MAX_S} s, as the owner's sources page says (§7, §8.3)"
        )
    } else {
        format!(
            "{LIVENESS_EMBEDDINGS} once the provider answers again, memoria's embedding loop gives every passage but the {} the provider refuses ({REFUSED_MARKER}) its vector within {EMBED_DRAIN_WAIT_MAX_S} s, and the owner's sources page says so and counts them set aside (§7, §8.1, §8.3)",
            counted(refused, "passage", "passages")
        )
    }
}
