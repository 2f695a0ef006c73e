//! The owner's sources page: each sibling's breakers and last poll, and with AI on the passages awaiting vectors, read here and nowhere on the query path (§8.1, §7.2).

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use maud::html;

use super::AppState;
use super::envelope::{error_page, layout, page};
use super::extract::SignedIn;
use crate::error::Error;

/// The owner's sources page (§8.1): per configured sibling, the refusal
/// breaker, the S3 breaker and the last S1 poll. Admitted owners only;
/// these notices never appear on a results page. The breakers' counters
/// are read here and nowhere on the query path.
pub(crate) async fn sources_page(
    State(state): State<AppState>,
    SignedIn(session): SignedIn,
) -> Response {
    let apps = state.siblings().map(|c| c.apps()).unwrap_or_default();
    let footer = state.egress().footer();
    // The counters' reads run off the async worker threads (issue 10).
    let embeds = state.egress().embeds();
    let aside = state.embeddings_set_aside().ids();
    // It only reads: on a read handle, beside searches and any write (issue 30).
    let rows = state.read(move |view| {
        let store = view.store;
        // With AI on: how many passages still await their vector (issue
        // 12), and how many of them the provider refuses (issue 26).
        let awaiting = embeds.then(|| {
            let all = store.count_awaiting_vectors()?;
            let refused = store.still_awaiting_vectors(&aside)?.len() as u64;
            Ok::<_, Error>((all.saturating_sub(refused), refused))
        });
        let awaiting = awaiting.map(|a| a.map_err(|e| e.kind()));
        let now = view.clock.now_unix_s();
        let cannot_read = |e: Error| crate::policy::breaker::BreakerState::CannotDetermine {
            lacking: crate::policy::breaker::Lacking::WindowAndBaseline,
            why: crate::policy::breaker::Undetermined::Unreadable(e.kind()),
        };
        let rows = apps
            .iter()
            .map(|app| {
                let name = crate::page::app_display_name(app);
                let refusal = store.refusal_breaker(app, now).unwrap_or_else(cannot_read);
                let s3 = store.s3_breaker(app, now).unwrap_or_else(cannot_read);
                let polled = match store.sibling_state(app).ok().and_then(|s| s.polled_at) {
                    Some(t) => format!("Last polled {} UTC.", crate::clock::iso_date_time(t)),
                    None => "Never polled.".to_string(),
                };
                (
                    name.clone(),
                    super::sentences::refusal_sentence(&name, &refusal),
                    super::sentences::s3_sentence(&name, &s3),
                    polled,
                )
            })
            .collect::<Vec<(String, String, String, String)>>();
        (rows, awaiting)
    });
    let (rows, awaiting) = match rows.await {
        Ok(read) => read,
        Err(e) => {
            tracing::error!(kind = ?e.kind(), "sources page failed");
            return error_page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "The sources could not be read.",
                footer,
                true,
            );
        }
    };
    let canary = state.canary();
    let embeddings = awaiting.map(|a| match a {
        Ok((0, 0)) => {
            "Every passage has its vector: search ranks by words and meaning.".to_string()
        }
        Ok((0, _)) => "Every other passage has its vector: search ranks by words and meaning."
            .to_string(),
        Ok((n, _)) => format!(
            "{} await their vectors from the embedding provider; until then they are found by their words alone.",
            crate::page::counted(n as usize, "passage", "passages")
        ),
        Err(kind) => format!("How many passages await their vectors cannot be read ({kind:?})."),
    });
    // §8.1's loud rule: a passage the provider refuses is counted, never
    // named or quoted, and never folded into "every passage".
    let set_aside = match awaiting {
        Some(Ok((_, n))) if n > 0 => Some(format!(
            "{} set aside: the embedding provider refuses to embed {}, so {} found by {} words alone; memoria asks again now and then, at most once a day.",
            crate::page::counted(n as usize, "passage", "passages"),
            if n == 1 { "it" } else { "them" },
            if n == 1 { "it is" } else { "they are" },
            if n == 1 { "its" } else { "their" },
        )),
        _ => None,
    };
    let body = html! {
        h1 { "Sources" }
        @if let Some(line) = &embeddings {
            section.source.embeddings {
                h2 { "Embeddings" }
                p.meta { (line) }
                @if let Some(aside) = &set_aside {
                    p.meta.set-aside.breaker { (aside) }
                }
                // §8.2: a drifted canary is stated, never silent.
                p.canary.breaker[canary.is_anomaly()] { (canary.sentence()) }
            }
        }
        @if rows.is_empty() { p { "No sibling is configured." } }
        @for (name, refusal, s3, polled) in &rows {
            section.source data-app=(name) {
                h2 { (name) }
                p.breaker.refusal-breaker { (refusal) }
                p.breaker.s3-breaker { (s3) }
                p.meta { (polled) }
            }
        }
    };
    page(
        StatusCode::OK,
        layout("Sources", footer, true, Some(&session.csrf), "", body),
    )
}
