//! The document page, the MCP `document` tool and the owner's sources page, as the explorer opens them and the oracle judges them (§4.1, §4.2, §7.4, §8.1).
//!
//! A person opens a document by its link (`open-document`): a sibling's
//! item by the id the last page that linked it gave ([`Links`], learnt from
//! the pages people were shown, as a colleague passes a link on), or
//! memoria's own document by the id its upload got. The page
//! (`GET /documents/{id}`) or the MCP `document` tool, called as the MCP
//! server calls it ([`memoria::McpServer::document_call`]), is read into
//! a [`Rendered`] ([`super::surfaces::from_document`]) and judged as every
//! surface is ([`super::oracle::judge_page`]: `[safety:visible]`,
//! `[safety:counted]`, `[safety:admitted]`, `[safety:owned]`), and then by
//! what only a document's answer can break ([`judge_document`],
//! [`SAFETY_DOCUMENT`]): it is the link's own document, never an empty page,
//! always one of shown, absent, withheld or the sign-in page; a 404 only
//! where the sibling refused (NOT_VISIBLE) or memoria asked nobody;
//! memoria's own document, stored, opens for every person admitted; and a
//! document not shown names no tag of its titles (withheld is an app and a
//! count).
//!
//! The owner's sources page (`open-sources`) is judged by
//! [`judge_sources`]: it names every configured sibling (the presence) and
//! no document, nor anything a document's title holds (§8.1: breakers,
//! polls and counts only), and it is refused to a person no longer admitted.

use std::collections::BTreeMap;

use memoria_page::Page;

use super::checks::{Check, PageSummary, summarise_page};
use super::document_answer::{
    Anchor, NEVER_HELD_ID, judge_absent_alike, judge_answer, page_anchors, refused, tool_anchors,
};
use super::oracle::judge_page;
use super::parse::{Event, Surface};
use super::replay::Entry;
use super::surfaces::{APP_MEMORIA, Owned, Rendered};
use crate::fake::server::FakeSibling;
use crate::fake::trace::{CallDetail, CallKind, Trace, TraceEvent};
use crate::world::{MEMORIA_CONSUMER, Memoria};

/// A document opened wrongly: another document than its link's, an empty
/// page, an answer that is none of shown, absent, withheld or the sign-in
/// page, a silent 404 where the sibling did not refuse, or memoria's own
/// stored document refused to a person admitted.
pub const SAFETY_DOCUMENT: &str = "[safety:document]";
/// The owner's sources page missing a configured sibling, or naming a document.
pub const SAFETY_SOURCES: &str = "[safety:sources]";

/// What an `open-document` event opens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Target {
    /// A sibling's item, by app and item id.
    Sibling {
        /// The app.
        app: String,
        /// The sibling's item id.
        item: String,
    },
    /// memoria's own document, by its name in the scenario.
    Owned {
        /// The document's name.
        doc: String,
    },
}

/// The document ids memoria's pages linked, by the (app, item id) whose
/// title the link carried: the last link seen wins.
#[derive(Debug, Clone, Default)]
pub(super) struct Links(BTreeMap<(String, String), String>);

impl Links {
    /// Reads every `/documents/{id}` link of an HTML `body` whose text is a
    /// sibling item's title (one of its revisions') in `fakes`.
    pub(super) fn learn(&mut self, body: &str, fakes: &BTreeMap<String, FakeSibling>) {
        for link in Page::parse(body).links("a[href^=\"/documents/\"]") {
            let rest = &link.href["/documents/".len()..];
            let id: String = rest.chars().take_while(char::is_ascii_hexdigit).collect();
            // The delete form's link names the document it deletes.
            if id.is_empty() || rest[id.len()..].starts_with('/') {
                continue;
            }
            let title = link.text;
            for (app, fake) in fakes {
                let item = fake.model().with(|m| {
                    m.items()
                        .find(|i| i.log.iter().any(|v| v.title == title))
                        .map(|i| i.item_id.clone())
                });
                if let Some(item) = item {
                    self.0.insert((app.clone(), item), id.clone());
                }
            }
        }
    }

    /// The id last linked for `app`'s `item`.
    pub(super) fn get(&self, app: &str, item: &str) -> Option<&String> {
        self.0.get(&(app.to_string(), item.to_string()))
    }
}

/// One document opened: the answer's status (the page's, or for the MCP
/// tool 200 answered, 404 absent, 503 withheld, 401 not admitted, 500
/// anything else), what it showed, how many passages, and the timeline's
/// summary.
#[derive(Debug, Clone)]
pub(super) struct Opened {
    pub(super) status: u16,
    pub(super) seen: Rendered,
    pub(super) passages: usize,
    pub(super) summary: PageSummary,
    /// The answer as the person got it (the page's bytes, or the tool's
    /// text and structured content), read for what a document not shown
    /// may not name; never logged.
    pub(super) text: String,
    /// The page's headers, by lowercase name, in order; empty for the MCP
    /// tool. Read only to compare two absent answers.
    pub(super) headers: Vec<(String, String)>,
    /// Each passage shown, in order: the number its label shows and the
    /// anchors that name it (the page's `section.passage` id and its
    /// label's `#p{n}` link, or the tool's link's fragment).
    pub(super) anchors: Vec<Anchor>,
}

/// The MCP server for `who`, built as `memoria mcp` builds it: the
/// instance, its sibling client and puller, no provider (AI off), the
/// scopes.
pub(super) fn mcp_server(state: &memoria::AppState, who: &str) -> memoria::McpServer {
    let server = memoria::McpServer::new(
        state.shared_instance().clone(),
        state.siblings().map(|c| (*c).clone()),
        None,
        who,
        state.scopes().clone(),
    );
    match state.puller() {
        Some(p) => server.with_puller(p.clone()),
        None => server,
    }
}

/// Opens document `id` as `who`: the document page with `cookie` (the
/// session a removed person held) or a fresh session, or with `mcp` the
/// MCP `document` tool.
///
/// # Errors
/// If memoria cannot be reached.
pub(super) async fn open(
    m: &mut Memoria,
    cookie: Option<String>,
    who: &str,
    id: &str,
    mcp: bool,
) -> Result<Opened, String> {
    let start = tokio::time::Instant::now();
    if mcp {
        let out = mcp_server(&m.state(), who)
            .document_call(memoria::DocumentArgs { id: id.to_string() })
            .await;
        let status = match out.kind {
            "answered" => 200,
            "absent" => 404,
            "withheld" => 503,
            "not_admitted" => 401,
            _ => 500,
        };
        let seen = super::surfaces::from_document_tool(out.kind, &out.text, out.json.as_ref());
        let passages = out
            .json
            .as_ref()
            .and_then(|j| j.get("passages"))
            .and_then(|p| p.as_array())
            .map_or(0, Vec::len);
        let mut summary = PageSummary {
            status,
            elapsed_ms: start.elapsed().as_millis() as u64,
            ..PageSummary::default()
        };
        if out.kind == "withheld" {
            summary.withheld = vec![out.text.clone()];
        }
        count_shown(&mut summary, &seen);
        let text = format!(
            "{}{}",
            out.text,
            out.json
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default()
        );
        return Ok(Opened {
            status,
            anchors: tool_anchors(out.json.as_ref()),
            seen,
            passages,
            summary,
            text,
            headers: vec![],
        });
    }
    let uri = format!("/documents/{id}");
    let page = match cookie {
        Some(c) => m.get_with(&c, &uri).await?,
        None => m.get(who, &uri).await,
    };
    let status = page.response.status.as_u16();
    let body = &page.response.body;
    let seen = super::surfaces::from_document(status, body);
    let mut summary = summarise_page(status, page.elapsed.as_millis() as u64, body);
    count_shown(&mut summary, &seen);
    Ok(Opened {
        status,
        passages: Page::parse(body).tags("section.passage").len(),
        anchors: page_anchors(body),
        seen,
        summary,
        text: body.clone(),
        headers: page
            .response
            .headers
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_ascii_lowercase(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
    })
}

fn count_shown(summary: &mut PageSummary, seen: &Rendered) {
    summary.results = seen.shown.len();
    summary.by_app = BTreeMap::new();
    for r in &seen.shown {
        *summary.by_app.entry(r.app.clone()).or_default() += 1;
    }
}

fn fail(invariant: &str, what: String, saw: String) -> Check {
    Check {
        expected: format!("{invariant} {what}"),
        actual: saw,
        ok: false,
    }
}

/// Judges a document `address` opened (`target`, answered `opened`) while
/// `window` (the S-calls the siblings received during it) happened: as
/// every surface ([`super::oracle::judge_page`]), then the document's own rules (module
/// docs). `admitted` is false for a person the owners file no longer
/// names; `sure` is false while a roster reader's standing may lag the
/// home's roster. Returns the failed checks, plus one passing summary.
#[allow(clippy::too_many_arguments)]
pub(super) fn judge_document(
    address: &str,
    target: &Target,
    opened: &Opened,
    window: &[TraceEvent],
    fakes: &BTreeMap<String, FakeSibling>,
    admitted: bool,
    sure: bool,
    owned: &Owned,
    unasked: &std::collections::BTreeSet<String>,
) -> Vec<Check> {
    let mut out: Vec<Check> = judge_page(
        address,
        &opened.seen,
        window,
        fakes,
        admitted,
        owned,
        unasked,
    )
    .into_iter()
    .filter(|c| !c.ok)
    .collect();
    let shown = opened.seen.shown.first();
    if let Some(r) = shown {
        let its_own = match target {
            Target::Sibling { app, item } => {
                r.app == *app
                    && fakes.get(app).is_some_and(|f| {
                        f.model().with(|m| {
                            m.item(item)
                                .is_some_and(|i| i.log.iter().any(|v| v.title == r.title))
                        })
                    })
            }
            Target::Owned { doc } => {
                r.app == APP_MEMORIA
                    && owned
                        .docs
                        .get(doc)
                        .is_some_and(|d| r.title.ends_with(&d.tag))
            }
        };
        if !its_own {
            out.push(fail(
                SAFETY_DOCUMENT,
                "a link opens its own document".into(),
                format!("a document of {:?}", r.app),
            ));
        }
    }
    if opened.status == 200 && (shown.is_none() || opened.passages == 0) {
        out.push(fail(
            SAFETY_DOCUMENT,
            "a document shown shows its passages, never a silent empty page (§8.1)".into(),
            format!("{} passages", opened.passages),
        ));
    }
    // Withheld, absent or refused, the answer names nothing of the
    // document: no tag of any title it had (§4.1: a withheld passage is its
    // app and a count; §8.1).
    if opened.status != 200 {
        let tags: Vec<String> = match target {
            Target::Sibling { app, item } => fakes
                .get(app)
                .and_then(|f| {
                    f.model().with(|m| {
                        m.item(item).map(|i| {
                            i.log
                                .iter()
                                .filter_map(|v| v.title.split_whitespace().last())
                                .map(str::to_owned)
                                .collect()
                        })
                    })
                })
                .unwrap_or_default(),
            Target::Owned { doc } => owned
                .docs
                .get(doc)
                .map(|d| vec![d.tag.clone()])
                .unwrap_or_default(),
        };
        if let Some(tag) = tags
            .iter()
            .find(|t| !t.is_empty() && opened.text.contains(t.as_str()))
        {
            out.push(fail(
                SAFETY_DOCUMENT,
                format!(
                    "a document not shown (status {}) names nothing of it, no word of its title (§4.1, §8.1)",
                    opened.status
                ),
                format!("its tag, {} letters, in the answer", tag.len()),
            ));
        }
    }
    out.extend(judge_answer(target, opened));
    if ![200, 401, 404, 503].contains(&opened.status) {
        out.push(fail(
            SAFETY_DOCUMENT,
            "a document is shown (200), absent (404), withheld (503) or asks for a sign-in (401)"
                .into(),
            format!("status {}", opened.status),
        ));
    }
    match target {
        Target::Sibling { app, item } if opened.status == 404 => {
            let label = fakes.get(app).and_then(|f| {
                f.model()
                    .with(|m| m.person(address).map(|p| p.label.clone()))
            });
            let asked: Vec<&TraceEvent> = window
                .iter()
                .filter(|e| {
                    e.call == CallKind::S2
                        && e.caller == MEMORIA_CONSUMER
                        && e.callee.split('.').nth(1) == Some(app.as_str())
                })
                .filter(|e| match (&e.detail, &label) {
                    (CallDetail::S2 { subject, .. }, Some(l)) => {
                        subject.is_none() || subject.as_deref() == Some(l.as_str())
                    }
                    _ => true,
                })
                .collect();
            if !asked.is_empty() && !asked.iter().all(|e| refused(e, item, fakes)) {
                out.push(fail(
                    SAFETY_DOCUMENT,
                    format!(
                        "{app}:{item}, asked of {app} in this request and not refused (NOT_VISIBLE), is shown or withheld loudly, never a 404 that says nothing (§4.1, §8.1)"
                    ),
                    format!("a 404 after {} S2 calls", asked.len()),
                ));
            }
        }
        Target::Owned { doc } => {
            if let Some(d) = owned.docs.get(doc)
                && d.live
                && admitted
                && sure
                && shown.is_none()
            {
                out.push(fail(
                    SAFETY_DOCUMENT,
                    format!(
                        "memoria's own document {doc}, stored, opens for every person admitted (§4.2)"
                    ),
                    format!("status {}", opened.status),
                ));
            }
        }
        Target::Sibling { .. } => {}
    }
    if out.is_empty() {
        out.push(Check {
            expected: format!(
                "oracle: the document {}, as its answer allows",
                match (opened.status, shown.is_some()) {
                    (_, true) => "shown",
                    (404, _) => "absent",
                    (503, _) => "withheld loudly",
                    _ => "refused",
                }
            ),
            actual: "held".into(),
            ok: true,
        });
    }
    out
}

/// Judges the owner's sources page as a person got it (`status`, `body`):
/// refused to a person no longer admitted (`admitted` false), and shown to
/// one admitted (`sure`: certainly, not a roster reader whose copy may
/// lag); shown,
/// a section for every sibling in `fakes` (the presence), and no tag of any
/// item any sibling ever held nor of memoria's own documents in `owned`
/// (§8.1: the page states breakers, polls and counts, never content).
/// Returns the failed checks, plus one passing summary.
pub(super) fn judge_sources(
    status: u16,
    body: &str,
    fakes: &BTreeMap<String, FakeSibling>,
    owned: &Owned,
    admitted: bool,
    sure: bool,
) -> Vec<Check> {
    let mut out = vec![];
    if status != 200 {
        // A 503 is the standing page (suite shape, a roster that cannot
        // establish anybody's standing, §4.3): loud, and no refusal.
        if admitted && sure && status != 503 {
            out.push(fail(
                SAFETY_SOURCES,
                "the sources page opens for a person admitted (§8.1)".into(),
                format!("status {status}"),
            ));
        } else if !admitted {
            out.push(Check {
                expected: format!(
                    "{} a person no longer admitted is refused the sources page",
                    super::oracle::SAFETY_ADMITTED
                ),
                actual: format!("status {status}"),
                ok: true,
            });
        }
        return out;
    }
    if !admitted {
        out.push(fail(
            super::oracle::SAFETY_ADMITTED,
            "a person no longer admitted is refused the sources page (§4.3)".into(),
            "it was shown".into(),
        ));
    }
    let sections = Page::parse(body).tags("section[data-app]");
    let missing: Vec<&String> = fakes
        .keys()
        .filter(|app| {
            let name = memoria::app_display_name(app);
            !sections
                .iter()
                .any(|t| t.attrs.iter().any(|(k, v)| k == "data-app" && *v == name))
        })
        .collect();
    if !missing.is_empty() {
        out.push(fail(
            SAFETY_SOURCES,
            "the sources page has a section for every configured sibling (§8.1)".into(),
            format!("none for {missing:?}"),
        ));
    }
    let mut tags: Vec<String> = fakes
        .values()
        .flat_map(|f| {
            f.model().with(|m| {
                m.items()
                    .flat_map(|i| i.log.iter())
                    .filter_map(|v| v.title.split_whitespace().last().map(str::to_string))
                    .collect::<Vec<_>>()
            })
        })
        .chain(owned.docs.values().map(|d| d.tag.clone()))
        .filter(|t| t.starts_with("qx"))
        .collect();
    tags.sort();
    tags.dedup();
    let named = tags.iter().filter(|t| body.contains(t.as_str())).count();
    if named > 0 {
        out.push(fail(
            SAFETY_SOURCES,
            "the owner's sources page names no document: breakers, polls and counts only (§8.1)"
                .into(),
            format!("{named} documents' tags on it"),
        ));
    }
    if out.is_empty() {
        out.push(Check {
            expected: format!(
                "oracle: the sources page names {} siblings and none of {} documents",
                fakes.len(),
                tags.len()
            ),
            actual: "held".into(),
            ok: true,
        });
    }
    out
}

/// How the person opening something stands, as the replay knows it.
#[derive(Debug, Clone)]
pub(super) struct Standing {
    /// The session they ask with when they cannot sign in again.
    pub(super) cookie: Option<String>,
    /// The owners file still names them.
    pub(super) admitted: bool,
    /// Suite shape: the home removed them and memoria has pulled it.
    pub(super) refused: bool,
    /// Their standing is certain: not a roster reader whose copy may lag.
    pub(super) sure: bool,
    /// Suite shape: a roster that cannot establish anybody's standing
    /// answers everybody with the sign-in or the standing page (§4.3).
    pub(super) suite: bool,
    /// The apps memoria has no token for now (`token_file.rs`).
    pub(super) unasked: std::collections::BTreeSet<String>,
}

impl Standing {
    /// Whether an answer of `status` certainly came to a person admitted:
    /// in suite shape a 401 or a 503 may be the roster's, not theirs.
    fn sure_for(&self, status: u16) -> bool {
        self.sure && !(self.suite && matches!(status, 401 | 503))
    }
}

/// Applies an `open-document` or `open-sources` event by `who`, judging
/// the answer when `oracle`, into `entry`. Returns what a document's answer
/// showed (for the roster's judgement), `None` for the sources page or a
/// document no page has linked yet (not opened, and the entry says so).
///
/// # Errors
/// If memoria cannot be reached, or the event names no document.
#[allow(clippy::too_many_arguments)]
pub(super) async fn apply(
    m: &mut Memoria,
    who: &str,
    standing: &Standing,
    event: &Event,
    links: &Links,
    owned: &Owned,
    fakes: &BTreeMap<String, FakeSibling>,
    trace: &Trace,
    oracle: bool,
    breakers: &super::breaker::BreakerTruth,
    entry: &mut Entry,
) -> Result<Option<Rendered>, String> {
    let (app, item, doc, surface, beside_never_held) = match event {
        Event::OpenSources { .. } => {
            let page = match &standing.cookie {
                Some(c) => m.get_with(c, "/sources").await?,
                None => m.get(who, "/sources").await,
            };
            let status = page.response.status.as_u16();
            let body = &page.response.body;
            if oracle {
                entry.checks.extend(judge_sources(
                    status,
                    body,
                    fakes,
                    owned,
                    standing.admitted && !standing.refused,
                    standing.sure_for(status),
                ));
                // §8.1's breakers, from the fakes' trace (`breaker.rs`).
                if status == 200 && standing.admitted && !standing.refused {
                    let (now_ms, calendar_s) = (super::roster::now_ms(), m.calendar_unix_s());
                    entry.checks.extend(trace.with(|all| {
                        super::breaker::judge_breakers(
                            breakers, body, all, fakes, now_ms, calendar_s,
                        )
                    }));
                }
            }
            entry.page = Some(summarise_page(
                status,
                page.elapsed.as_millis() as u64,
                body,
            ));
            return Ok(None);
        }
        Event::OpenDocument {
            app,
            item,
            doc,
            surface,
            beside_never_held,
            ..
        } => (app, item, doc, surface, *beside_never_held),
        _ => return Ok(None),
    };
    let target = match (app, item, doc) {
        (Some(app), Some(item), _) => Target::Sibling {
            app: app.clone(),
            item: item.clone(),
        },
        (_, _, Some(doc)) => Target::Owned { doc: doc.clone() },
        _ => return Err("an open-document names no document".into()),
    };
    let id = match &target {
        Target::Sibling { app, item } => links.get(app, item).cloned(),
        Target::Owned { doc } => owned.docs.get(doc).and_then(|d| d.id.clone()),
    };
    let Some(id) = id else {
        entry.event.push_str(" (no page has linked it: not opened)");
        return Ok(None);
    };
    let before = trace.len();
    let mcp = *surface == Some(Surface::Mcp);
    let opened = open(m, standing.cookie.clone(), who, &id, mcp).await?;
    if oracle {
        entry.checks.extend(judge_document(
            who,
            &target,
            &opened,
            &trace.since(before),
            fakes,
            standing.admitted,
            standing.sure_for(opened.status),
            owned,
            &standing.unasked,
        ));
    }
    // Absent: the same person asks at once for an id never held.
    if beside_never_held && matches!(target, Target::Sibling { .. }) && opened.status == 404 {
        let never = open(m, standing.cookie.clone(), who, NEVER_HELD_ID, mcp).await?;
        if oracle {
            entry.checks.extend(judge_absent_alike(&opened, &never));
        }
    }
    entry.page = Some(opened.summary);
    Ok(Some(opened.seen))
}
