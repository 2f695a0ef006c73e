//! The brief page: a scriptless GET form that asks for a brief, and the brief it answers, every sibling passage in it ruled in the request (`brief-material.md`; §8.1, §9.1).
//!
//! `GET /brief` with no `task` shows the form. With one it builds the
//! brief through [`AppState::ruled_brief`] (the one S2 path) and renders
//! it as a reader needs it: the status first, the notices boxed apart
//! (withheld and reconciling lines, the lexical-only ranking), the item,
//! its description, the excerpts quoted whole with a deep link to the
//! passage each is quoted from, the relations and the grounds; then the
//! text form `memoria brief` prints and the MCP tool answers, in a
//! `<details>` a person opens to copy it. Bad input (an empty task, a task
//! over the limits, a budget out of range or not a number, an unknown
//! scope) is a 400 page that says why and keeps the form filled in; no
//! empty brief is ever shown for it.
//!
//! The page is HTML only: `memoria brief --format json` and the MCP tool's
//! structured content are the JSON forms.

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use maud::{Markup, html};

use super::AppState;
use super::envelope::{layout, page};
use super::extract::SignedIn;
use crate::brief::scope::{ORGANISATION_SCOPE, TEAM_SCOPE};
use crate::brief::{
    BUDGET_CHARS_DEFAULT, BUDGET_CHARS_MAX, Brief, BriefError, BriefRequest, Scopes, Seat, Shrink,
    Status,
};
use crate::page::{SemanticRanking, counted};

/// The form's and the link's query parameters.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct BriefParams {
    pub(crate) task: Option<String>,
    pub(crate) scope: Option<String>,
    pub(crate) budget: Option<String>,
    pub(crate) team: Option<String>,
}

/// The budget the form asked for: absent or blank is
/// [`BUDGET_CHARS_DEFAULT`]; anything not a whole number is `None` (the
/// range itself is checked by the brief).
fn parse_budget(b: &Option<String>) -> Option<usize> {
    match b.as_deref().map(str::trim) {
        None | Some("") => Some(BUDGET_CHARS_DEFAULT),
        Some(s) => s.parse::<usize>().ok(),
    }
}

/// `/documents/{id}#p{n}` for a passage cited as `{id}#p{n}`, and its
/// number as a reader counts, `n` (from 1, as the anchor counts).
fn passage_link(passage: &str) -> (String, String) {
    let number = passage
        .rsplit_once("#p")
        .and_then(|(_, n)| n.parse::<i64>().ok())
        .map_or_else(|| passage.to_string(), |n| n.to_string());
    (format!("/documents/{passage}"), number)
}

/// One document the brief stands on, as its grounds list it: its title
/// (when the brief names it), revision and the passages cited.
struct Ground<'a> {
    id: &'a str,
    title: Option<&'a str>,
    revision: Option<&'a str>,
    passages: Vec<&'a str>,
}

/// The brief's grounds (`{id}@{revision}` and `{id}#p{n}`, in the brief's
/// order) grouped by document, each with the title the brief gives it.
fn grounds_of(b: &Brief) -> Vec<Ground<'_>> {
    let mut titles: std::collections::HashMap<&str, &str> = std::collections::HashMap::new();
    for i in b.item.iter().chain(&b.candidates) {
        titles.insert(&i.document_id, &i.title);
    }
    for e in &b.excerpts {
        titles.insert(&e.document_id, &e.title);
    }
    for r in &b.relations {
        titles.insert(&r.target_id, &r.target_title);
    }
    let mut out: Vec<Ground<'_>> = Vec::new();
    for g in &b.grounds {
        let (id, revision, passage) = match (g.split_once('@'), g.split_once("#p")) {
            (Some((id, rev)), _) => (id, Some(rev), None),
            (None, Some((id, n))) => (id, None, Some(n)),
            (None, None) => (g.as_str(), None, None),
        };
        let at = match out.iter().position(|o| o.id == id) {
            Some(at) => at,
            None => {
                out.push(Ground {
                    id,
                    title: titles.get(id).copied(),
                    revision: None,
                    passages: Vec::new(),
                });
                out.len() - 1
            }
        };
        if revision.is_some() {
            out[at].revision = revision;
        }
        out[at].passages.extend(passage);
    }
    out
}

/// The grounds as a reader follows them: each document by its title,
/// linked, with its revision and the passages cited, each linked to its
/// anchor; the ids themselves stay in the brief's text below (issue 31).
fn grounds(b: &Brief) -> Markup {
    let docs = grounds_of(b);
    html! {
        div.meta.grounds {
            p { "Grounds: " (counted(docs.len(), "document", "documents")) ", "
                (counted(b.grounds.len(), "id", "ids")) ", every one the material stands on before the budget:" }
            ul {
                @for d in &docs {
                    li data-id=(d.id) {
                        a href=(format!("/documents/{}", d.id)) {
                            @if let Some(t) = d.title { (t) } @else { "document " (d.id.get(..8).unwrap_or(d.id)) }
                        }
                        @if let Some(r) = d.revision { " · revision " (r) }
                        @if !d.passages.is_empty() {
                            " · " (if d.passages.len() == 1 { "passage " } else { "passages " })
                            @for (i, n) in d.passages.iter().enumerate() {
                                @if i > 0 { ", " }
                                a href=(format!("/documents/{}#p{n}", d.id)) { (n) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The form, filled in with what was asked: a GET to `/brief`.
fn ask_form(state: &AppState, params: &BriefParams) -> Markup {
    let scopes = state.scopes();
    let chosen = params.scope.as_deref().unwrap_or(TEAM_SCOPE);
    let mut names: Vec<(String, String)> = vec![(TEAM_SCOPE.into(), "the team".into())];
    names.extend(
        scopes
            .project_names()
            .map(|n| (n.to_string(), format!("project {n}"))),
    );
    if scopes.has_organisation() {
        names.push((ORGANISATION_SCOPE.into(), "the organisation".into()));
    }
    let budget = params
        .budget
        .clone()
        .unwrap_or_else(|| BUDGET_CHARS_DEFAULT.to_string());
    html! {
        form.ask method="get" action="/brief" {
            label for="task" { "The task, in your words" }
            textarea #task name="task" rows="3" required { (params.task.as_deref().unwrap_or("")) }
            label for="scope" { "Scope" }
            select #scope name="scope" {
                @for (value, label) in &names {
                    option value=(value) selected[value == chosen] { (label) }
                }
            }
            label {
                input type="checkbox" name="team" value="on" checked[params.team.is_some()];
                " Read the team beside the scope"
            }
            label for="budget" { "Budget, in characters (1 to " (BUDGET_CHARS_MAX) ")" }
            input #budget type="text" inputmode="numeric" name="budget" value=(budget);
            button type="submit" { "Brief" }
        }
    }
}

/// The scopes `scopes` lets a brief name, comma-separated: `team`, each
/// project in the order configured, and `organisation` when configured.
pub fn scope_names(scopes: &Scopes) -> String {
    let mut names = vec![TEAM_SCOPE.to_string()];
    names.extend(scopes.project_names().map(str::to_string));
    if scopes.has_organisation() {
        names.push(ORGANISATION_SCOPE.to_string());
    }
    names.join(", ")
}

/// The sentence a refusal page shows, and its status.
fn refusal(e: &BriefError, state: &AppState) -> (StatusCode, String) {
    match e {
        BriefError::NotAdmitted => (
            StatusCode::FORBIDDEN,
            "You are not admitted to this memoria.".into(),
        ),
        BriefError::UnknownScope => (
            StatusCode::BAD_REQUEST,
            format!(
                "No brief was built: {e}. The scopes here are: {}.",
                scope_names(state.scopes())
            ),
        ),
        BriefError::Engine(_) => (
            StatusCode::BAD_REQUEST,
            "The search engine could not read for this task. This is not a \"none\" brief: nothing was read. Try fewer or simpler words.".into(),
        ),
        BriefError::Store(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "The store could not be read, so no brief was built.".into(),
        ),
        _ => (StatusCode::BAD_REQUEST, format!("No brief was built: {e}.")),
    }
}

/// What the budget took, as the text form says it.
fn shrink_sentence(s: &Shrink) -> String {
    let e = counted(s.excerpts_left_out, "excerpt", "excerpts");
    let r = counted(s.relations_left_out, "relation", "relations");
    let what = match (s.excerpts_left_out, s.relations_left_out) {
        (_, 0) => e,
        (0, _) => r,
        _ => format!("{e} and {r}"),
    };
    format!(
        "The brief shrank: {what} left out to fit the budget{}; every ground is kept.",
        if s.still_over {
            ", and the description alone is over it"
        } else {
            ""
        }
    )
}

/// The brief, rendered for a reader.
pub(crate) fn brief_region(b: &Brief) -> Markup {
    let reads = b
        .reads
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    html! {
        section #brief .brief {
            p.status { strong { (b.status.word()) } }
            p.meta {
                "Scope: " (b.scope) " · read: " (reads)
                @if b.organisation_read { "; and the organisation's own read" }
                " · budget " (b.budget_chars) " characters, material " (b.material_chars)
            }
            @if b.semantic == SemanticRanking::Unavailable {
                p.withheld.semantic role="status" { (SemanticRanking::UNAVAILABLE_SENTENCE) }
            }
            @for app in &b.reconciling {
                p.reconciling role="status" data-app=(app) {
                    (crate::page::app_display_name(app))
                    " is re-announcing: its passages are temporarily out of this brief."
                }
            }
            @for w in &b.withheld {
                p.withheld role="status" data-app=(w.app) { (w.sentence()) }
            }
            @if let Some(note) = &b.note { p.notice { (note) } }
            @if b.status == Status::Choose {
                ul.candidates {
                    @for c in &b.candidates {
                        li {
                            a href=(format!("/documents/{}", c.document_id)) { (c.title) }
                            span.meta { " · " (c.app) " · revision " (c.revision) " · " (c.scope) " · score " (format!("{:.3}", c.score)) }
                        }
                    }
                }
            }
            @if let Some(item) = &b.item {
                h2 { a href=(format!("/documents/{}", item.document_id)) { (item.title) } }
                p.meta { (item.app) " · revision " (item.revision) " · " (item.scope) }
                @match &b.description {
                    Some(d) => {
                        @let (link, n) = passage_link(&d.passage);
                        blockquote.description { (d.text) }
                        p.meta { "Its description: the lead sentence of " a href=(link) { "passage " (n) } "." }
                    }
                    None => {
                        p.meta { "No description: no lead sentence of the document shares a word with its title." }
                    }
                }
            }
            @if !b.excerpts.is_empty() {
                h3 { "Excerpts" }
                ol.excerpts {
                    @for e in &b.excerpts {
                        @let (link, n) = passage_link(&e.passage);
                        li {
                            blockquote { (e.text) }
                            p.meta {
                                a href=(link) { (e.title) }
                                @if !e.section.is_empty() { " › " (e.section.join(" › ")) }
                                " · passage " (n) " · " (e.scope) " · score " (format!("{:.3}", e.score))
                                @if e.seat == Seat::Organisation { " · organisation seat" }
                            }
                        }
                    }
                }
            }
            @if !b.relations.is_empty() {
                h3 { "Relations" }
                ul.relations {
                    @for r in &b.relations {
                        @let (link, n) = passage_link(&r.evidence_passage);
                        li {
                            "Links to " a href=(format!("/documents/{}", r.target_id)) { (r.target_title) } ": "
                            q { (r.evidence) }
                            span.meta { " · " a href=(link) { "passage " (n) } " · " (r.confidence) }
                        }
                    }
                }
            }
            @if let Some(s) = &b.shrink { p.notice { (shrink_sentence(s)) } }
            (grounds(b))
            details {
                summary { "The brief as text (what " code { "memoria brief" } " prints and the MCP tool answers)" }
                pre.text { (b.to_text()) }
            }
        }
    }
}

/// `GET /brief`: the form, or the brief it asked for, or the refusal.
pub(crate) async fn brief_page(
    State(state): State<AppState>,
    SignedIn(session): SignedIn,
    Query(params): Query<BriefParams>,
) -> Response {
    let footer = state.egress().footer();
    let csrf = Some(session.csrf.as_str());
    let intro = html! {
        h1 { "Brief an agent" }
        p { "A brief is a bounded, cited body of material about one task, read from one scope: its first line says whether one document was "
            em { "resolved" } ", the leading candidates tie (" em { "choose" } "), or nothing matched (" em { "none" } "). Every sentence is quoted from a passage you may read now; nothing is generated." }
    };
    let Some(task) = params.task.clone() else {
        let body = html! { (intro) (ask_form(&state, &params)) };
        return page(
            StatusCode::OK,
            layout("Brief", footer, true, csrf, "", body),
        );
    };
    let Some(budget_chars) = parse_budget(&params.budget) else {
        let body = html! {
            (intro)
            p.refusal { "No brief was built: the budget is a whole number of characters, 1 to " (BUDGET_CHARS_MAX) "." }
            (ask_form(&state, &params))
        };
        return page(
            StatusCode::BAD_REQUEST,
            layout("Brief", footer, true, csrf, "", body),
        );
    };
    let request = BriefRequest {
        task,
        scope: params
            .scope
            .clone()
            .unwrap_or_else(|| TEAM_SCOPE.to_string()),
        budget_chars,
        with_team: params.team.is_some(),
    };
    match state.ruled_brief(session.owner.address(), &request).await {
        Ok(brief) => {
            let body = html! { (intro) (ask_form(&state, &params)) (brief_region(&brief)) };
            page(
                StatusCode::OK,
                layout("Brief", footer, true, csrf, "", body),
            )
        }
        Err(e) => {
            let (status, sentence) = refusal(&e, &state);
            let body = html! { (intro) p.refusal { (sentence) } (ask_form(&state, &params)) };
            page(status, layout("Brief", footer, true, csrf, "", body))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blank_budget_is_the_default_and_anything_but_a_whole_number_is_refused() {
        assert_eq!(parse_budget(&None), Some(BUDGET_CHARS_DEFAULT));
        assert_eq!(parse_budget(&Some(" ".into())), Some(BUDGET_CHARS_DEFAULT));
        assert_eq!(parse_budget(&Some("300".into())), Some(300));
        for bad in ["-1", "2k", "1.5", "99999999999999999999999"] {
            assert_eq!(parse_budget(&Some(bad.into())), None, "{bad}");
        }
    }

    #[test]
    fn a_cited_passage_links_to_its_anchor_and_is_numbered_from_one() {
        let (link, n) = passage_link("0123456789abcdef0123456789abcdef#p1");
        assert_eq!(link, "/documents/0123456789abcdef0123456789abcdef#p1");
        assert_eq!(n, "1", "the number the anchor names");
    }
}
