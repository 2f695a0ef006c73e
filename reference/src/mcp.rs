//! `memoria mcp`: briefs and searches for an agent over the Model Context Protocol on stdio, admitted on every call and ruled on the one S2 path (§4.3, §8.1; `brief-material.md`).
//!
//! Size: over 700 lines because the three tools, their argument schemas and
//! their text are one protocol surface over one `rmcp` server; what each
//! tool does is `app/` and `sibling/ruled.rs`, which the web page calls too.
//!
//! An agent's client starts `memoria mcp --as PERSON` as a child process and
//! speaks JSON-RPC on its stdin and stdout (MCP's stdio transport, through
//! the official SDK, `rmcp`). The server offers three tools:
//!
//! - `search` (`query`, `page`): one ruled page, as `memoria search` prints it
//!   ([`crate::SearchPage::to_text`]);
//! - `brief` (`task`, `scope`, `budget`, `team`): one brief, as `memoria
//!   brief` prints it ([`crate::brief::Brief::to_text`]);
//! - `document` (`id`): a document, or one passage of it, named as a result's
//!   link or a brief's citation names it, ruled as the document page rules it
//!   ([`crate::sibling::ruled::ruled_document`]): a sibling's document is
//!   shown only on S2's VISIBLE, asked in this call; NOT_VISIBLE answers
//!   exactly what an id never held answers; STALE, AHEAD and UNKNOWN are
//!   refused with the search page's sentence.
//!
//! A passage is numbered from 1 in every label and every link (`passage 2`
//! is `#p2`, [`crate::page::passage_anchor`]). With
//! [`PUBLIC_URL_ENV`] set, every link a result carries is absolute, that
//! URL followed by `/documents/{id}#p{n}`, so an agent can open it;
//! without it, links are relative to the instance, as the CLI prints them.
//!
//! Each result's content is that text form, byte for byte what the CLI
//! prints for the same request (with [`PUBLIC_URL_ENV`] unset). To a client that negotiated protocol
//! revision [`STRUCTURED_CONTENT_SINCE`] or later, the result also carries
//! the page or brief as JSON in `structuredContent` (the shape `--format
//! json` prints). The JSON is not repeated as a second text block, as the
//! specification's backwards-compatibility advice suggests, because an
//! agent would then read the brief twice against its own budget.
//!
//! Admission is applied to the configured person on every tool call, never
//! decided at `initialize` and held: the call asks the instance's owners
//! list (§4.3) before anything is read, and the ruling path asks it again.
//! A refused call is a tool error (`isError: true`) whose text says why;
//! so is every refusal of bad input (an empty task, a budget out of range,
//! an unknown scope), never an empty brief. A store that fails is a tool
//! error too: the agent reads the sentence, the server serves on.
//!
//! The server logs one line per call with the tool's name and the
//! outcome's kind, and the ruling path's counts; never a query, a task, a
//! scope's name or a result. The SDK's own log lines (which carry whole
//! requests and results at debug level) are silenced by `memoria`'s log
//! filter. Follow-up syncs a ruling asks for (STALE's refetch, AHEAD's
//! re-announce, §4.1) start beside the call, as the web page starts them.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::{
    ErrorData, RoleServer, ServerHandler, ServiceExt as _, tool, tool_handler, tool_router,
};
use serde::Deserialize;

use crate::ai::embed::EmbedClient;
use crate::brief::{BUDGET_CHARS_DEFAULT, BUDGET_CHARS_MAX, BriefError, BriefRequest, Scopes};
use crate::error::{Error, ErrorKind};
use crate::offload::SharedInstance;
use crate::page::{PAGE_MAX, SearchError, passage_link, passage_number};
use crate::search::query::QUERY_BYTES_MAX;
use crate::sibling::ruled::{DocumentRuling, FollowUps};
use crate::sibling::{Puller, SiblingClient};
use crate::storage::store::{DocumentSummary, Passage, is_document_id};

/// The first MCP revision whose tool results carry `structuredContent`
/// (the specification's 2025-06-18 changelog: "structured tool output").
/// Revisions are dated `YYYY-MM-DD`, so they order as strings.
pub const STRUCTURED_CONTENT_SINCE: &str = "2025-06-18";
/// The name the server gives in `initialize`'s `serverInfo`.
pub const MCP_SERVER_NAME: &str = "memoria";
/// The `search` tool's name.
pub const SEARCH_TOOL: &str = "search";
/// The `brief` tool's name.
pub const BRIEF_TOOL: &str = "brief";
/// The `document` tool's name.
pub const DOCUMENT_TOOL: &str = "document";
/// The setting that names the instance's public base URL, e.g.
/// `https://memoria.acme.example`: with it, every link `mcp` answers is
/// absolute (issue 31).
pub const PUBLIC_URL_ENV: &str = "MEMORIA_PUBLIC_URL";
/// The longest public base URL accepted, in bytes: a URL over it is
/// refused at start (a browser's practical limit is 2,000 characters;
/// the links built on it must fit).
pub const PUBLIC_URL_BYTES_MAX: usize = 1_024;
/// The longest `id` the `document` tool reads, in bytes: a result's
/// absolute link ([`PUBLIC_URL_BYTES_MAX`] plus `/documents/`, 32 hex
/// digits and `#p` with a number) fits well inside it.
pub const DOCUMENT_ID_ARG_BYTES_MAX: usize = 2_048;

/// An operator's public base URL for the instance ([`PUBLIC_URL_ENV`]):
/// `http://` or `https://`, a host, an optional port and path, no query,
/// no fragment, no whitespace; kept without a trailing `/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicUrl(String);

impl PublicUrl {
    /// Reads `raw` as a public base URL.
    ///
    /// # Errors
    /// [`ErrorKind::Config`] naming [`PUBLIC_URL_ENV`] and what is wrong: a
    /// scheme other than `http://` or `https://`, no host, a query or a
    /// fragment, whitespace or a control character, or more than
    /// [`PUBLIC_URL_BYTES_MAX`] bytes.
    pub fn parse(raw: &str) -> Result<PublicUrl, Error> {
        let refuse = |why: &str| {
            Err(Error::new(
                ErrorKind::Config,
                format!(
                    "{PUBLIC_URL_ENV} {why}; it is the base every link starts with, e.g. https://memoria.example.org"
                ),
            ))
        };
        let trimmed = raw.trim();
        if trimmed.len() > PUBLIC_URL_BYTES_MAX {
            return refuse(&format!("is over {PUBLIC_URL_BYTES_MAX} bytes"));
        }
        let Some(rest) = trimmed
            .strip_prefix("https://")
            .or_else(|| trimmed.strip_prefix("http://"))
        else {
            return refuse("does not start with https:// or http://");
        };
        if trimmed.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return refuse("holds whitespace or a control character");
        }
        if trimmed.contains(['?', '#']) {
            return refuse("holds a query or a fragment");
        }
        let host = rest.split('/').next().unwrap_or("");
        if host.is_empty() || host.starts_with(':') || host.contains('@') {
            return refuse("names no host (or names a user)");
        }
        Ok(PublicUrl(trimmed.trim_end_matches('/').to_string()))
    }

    /// The base, without a trailing `/`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `link` (relative to the instance, from `/`) made absolute on this base.
    pub fn absolute(&self, link: &str) -> String {
        format!("{}{link}", self.0)
    }
}

/// The `search` tool's arguments.
#[derive(Debug, Clone, Deserialize, rmcp::schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct SearchArgs {
    /// The query, searched as words: at most 1,024 bytes (QUERY_BYTES_MAX;
    /// an accented letter is two bytes) and 64 different words.
    #[schemars(length(max = QUERY_BYTES_MAX))]
    pub query: String,
    /// The page of results, 1 to 50 (PAGE_MAX), twenty results a page; 1 when absent.
    #[schemars(range(min = 1, max = PAGE_MAX))]
    pub page: Option<u32>,
}

/// The `document` tool's arguments.
#[derive(Debug, Clone, Deserialize, rmcp::schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct DocumentArgs {
    /// What to open: a document's id (32 hex digits), a passage as a brief
    /// cites it (`{id}#p{n}`, n from 1), or a search result's link
    /// (`…/documents/{id}#p{n}`). With a passage named, that passage alone
    /// is answered; otherwise the whole document.
    #[schemars(length(min = 1, max = DOCUMENT_ID_ARG_BYTES_MAX))]
    pub id: String,
}

/// What the `document` tool was asked to open: a document, and a passage of
/// it by number (from 1) when one was named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentTarget {
    /// The document's id, 32 lowercase hex digits.
    pub id: String,
    /// The passage's number, from 1, when one was named.
    pub passage: Option<i64>,
}

impl DocumentTarget {
    /// Reads `raw` as [`DocumentArgs::id`] describes: `{id}`, `{id}#p{n}`,
    /// or a link ending `/documents/{id}` or `/documents/{id}#p{n}`.
    /// `None` for anything else (a number of 0, an id not 32 hex digits).
    pub fn parse(raw: &str) -> Option<DocumentTarget> {
        let raw = raw.trim();
        if raw.len() > DOCUMENT_ID_ARG_BYTES_MAX {
            return None;
        }
        let tail = raw.rsplit_once("/documents/").map_or(raw, |(_, t)| t);
        let (id, passage) = match tail.split_once('#') {
            None => (tail, None),
            Some((id, anchor)) => {
                let n = anchor.strip_prefix('p')?;
                if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                let n = n.parse::<i64>().ok().filter(|n| *n >= 1)?;
                (id, Some(n))
            }
        };
        let id = id.to_ascii_lowercase();
        is_document_id(&id).then_some(DocumentTarget { id, passage })
    }
}

/// One tool call's outcome as the server answers it: the kind its log line
/// names, the text the agent reads, whether it is a refusal (`isError`),
/// and the JSON a client on [`STRUCTURED_CONTENT_SINCE`] also receives.
#[derive(Debug, Clone)]
pub struct ToolOutcome {
    /// The outcome's kind, as the call's log line names it (`answered`,
    /// `refused`, `not_admitted`, `withheld`, `store` ...): never content.
    pub kind: &'static str,
    /// The text the agent reads.
    pub text: String,
    /// True for a refusal or failure (`isError: true`).
    pub is_error: bool,
    /// The result as JSON; `None` for a refusal.
    pub json: Option<serde_json::Value>,
}

impl ToolOutcome {
    fn refused(kind: &'static str, sentence: impl Into<String>) -> ToolOutcome {
        ToolOutcome {
            kind,
            text: sentence.into(),
            is_error: true,
            json: None,
        }
    }

    /// As the SDK sends it: the text, and the JSON when `structured`.
    fn into_result(self, structured: bool) -> CallToolResult {
        if self.is_error {
            return refused(self.text);
        }
        let json = self.json.ok_or_else(|| {
            <serde_json::Error as serde::de::Error>::custom("the outcome carried no JSON")
        });
        answered(self.text, json, structured)
    }
}

/// The sentence the `document` tool answers for an id memoria does not
/// hold, has deleted, or holds for a sibling that answered NOT_VISIBLE:
/// one sentence for all three, so the refusal reveals nothing (§4.1).
pub const DOCUMENT_ABSENT_SENTENCE: &str =
    "No document with that id can be shown: memoria holds none you may read now.";

/// A shown document as the `document` tool answers it (JSON).
#[derive(Debug, Clone, serde::Serialize)]
pub struct DocumentAnswer {
    /// The document's id.
    pub document_id: String,
    /// Its title.
    pub title: String,
    /// Its app of record.
    pub app: String,
    /// Its path or file name.
    pub path: String,
    /// Its revision.
    pub revision: i64,
    /// The document's own date, ISO (issue 31): the source's where it
    /// gives one, else the import date.
    pub date: String,
    /// Where `date` came from, in words: "edited 3 March 2026 in Docs",
    /// "file modified …", "imported …".
    pub dated: String,
    /// How many passages the document holds.
    pub passage_count: usize,
    /// The passages answered, in order: all of them, or the one named.
    pub passages: Vec<DocumentPassage>,
}

/// One passage the `document` tool answers.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DocumentPassage {
    /// Its number, from 1: the number its link's anchor names.
    pub number: i64,
    /// Its heading trail, outermost first.
    pub trail: Vec<String>,
    /// Its deep link: absolute with [`PUBLIC_URL_ENV`] set.
    pub link: String,
    /// Its text.
    pub text: String,
}

impl DocumentAnswer {
    /// The answer as text: the title, a line of coordinates, then each
    /// passage's label and link and its text.
    pub fn to_text(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        let _ = writeln!(out, "{}", self.title);
        let _ = writeln!(
            out,
            "{} · {} · revision {} · {} · {}",
            self.app,
            self.path,
            self.revision,
            self.dated,
            crate::page::counted(self.passage_count, "passage", "passages")
        );
        for p in &self.passages {
            let trail = if p.trail.is_empty() {
                String::new()
            } else {
                format!(" › {}", p.trail.join(" › "))
            };
            let _ = writeln!(out, "\npassage {}{trail} · {}", p.number, p.link);
            let _ = writeln!(out, "{}", p.text.trim_end());
        }
        out
    }
}

/// The `brief` tool's arguments.
#[derive(Debug, Clone, Deserialize, rmcp::schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct BriefArgs {
    /// The task, in the agent's words: at most 1,024 bytes (QUERY_BYTES_MAX)
    /// and 64 different words.
    #[schemars(length(min = 1, max = QUERY_BYTES_MAX))]
    pub task: String,
    /// The scope to read: a project's name (MEMORIA_PROJECTS), `team`, or
    /// `organisation` when MEMORIA_ORGANISATION is set.
    pub scope: String,
    /// The material's budget, in characters, 1 to 16,000 (BUDGET_CHARS_MAX); 2,000 when absent.
    #[schemars(range(min = 1, max = BUDGET_CHARS_MAX))]
    pub budget: Option<usize>,
    /// Read the team beside the scope (and the organisation); false when absent.
    pub team: Option<bool>,
}

/// The MCP server for one configured person: the instance it reads, the
/// siblings it rules through, the provider with AI on, and the scopes a
/// brief may name.
#[derive(Clone)]
pub struct McpServer {
    instance: SharedInstance,
    siblings: Option<Arc<SiblingClient>>,
    /// Starts every sibling pull: on each call, and as a ruling's
    /// follow-up (§6.1, [`Puller`]), as the page does.
    puller: Option<Puller>,
    embedder: Option<Arc<EmbedClient>>,
    asker: String,
    scopes: Arc<Scopes>,
    /// Makes every link absolute ([`PUBLIC_URL_ENV`]); `None`: relative.
    public_url: Option<PublicUrl>,
    tool_router: ToolRouter<McpServer>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("siblings", &self.siblings.is_some())
            .field("embedder", &self.embedder.is_some())
            .finish_non_exhaustive()
    }
}

/// A tool's refusal or failure: the sentence the agent reads, with
/// `isError` set.
fn refused(sentence: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(sentence.into())])
}

/// `text` as the result's content and, to a client on
/// [`STRUCTURED_CONTENT_SINCE`] or later, `json` as its structured content.
fn answered(
    text: String,
    json: Result<serde_json::Value, serde_json::Error>,
    structured: bool,
) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    if structured {
        match json {
            Ok(value) => result.structured_content = Some(value),
            Err(e) => tracing::error!(error = %e, "a result could not be serialised as JSON"),
        }
    }
    result
}

/// True if the client negotiated a revision that carries `structuredContent`.
fn structured(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= STRUCTURED_CONTENT_SINCE)
}

/// The sentence a refused asker reads: the CLI's, word for word.
fn not_admitted(asker: &str) -> String {
    format!("{asker} is not an owner of this memoria (MEMORIA_OWNERS or MEMORIA_OWNERS_FILE)")
}

#[tool_router]
impl McpServer {
    /// A server that answers as `asker`, who is checked against the owners
    /// list on every call. `siblings` rules sibling passages through S2
    /// (without it each is UNKNOWN and withheld loudly); `embedder` is the
    /// provider with AI on; `scopes` are what `brief`'s `scope` may name.
    pub fn new(
        instance: SharedInstance,
        siblings: Option<SiblingClient>,
        embedder: Option<EmbedClient>,
        asker: impl Into<String>,
        scopes: Scopes,
    ) -> McpServer {
        let siblings = siblings.map(Arc::new);
        let puller = siblings.as_ref().map(|client| {
            let clock = instance
                .instance()
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clock()
                .clone();
            Puller::new(instance.clone(), client.clone(), clock)
        });
        McpServer {
            instance,
            siblings,
            puller,
            embedder: embedder.map(Arc::new),
            asker: asker.into(),
            scopes: Arc::new(scopes),
            public_url: None,
            tool_router: McpServer::tool_router(),
        }
    }

    /// The same server starting its pulls through `puller`, the one a
    /// served page of the same instance already runs ([`crate::AppState::puller`]),
    /// so that one process pulls each sibling through one puller.
    pub fn with_puller(mut self, puller: Puller) -> McpServer {
        self.puller = Some(puller);
        self
    }

    /// The same server, its links made absolute on `url` ([`PUBLIC_URL_ENV`]).
    pub fn with_public_url(mut self, url: PublicUrl) -> McpServer {
        self.public_url = Some(url);
        self
    }

    /// `link` as this server answers it: absolute on the public URL when
    /// one is set.
    fn link(&self, link: String) -> String {
        match &self.public_url {
            Some(base) => base.absolute(&link),
            None => link,
        }
    }

    /// Asks the instance's owners list now: the per-call admission check.
    async fn admitted(&self) -> Result<bool, Error> {
        let who = self.asker.clone();
        self.instance.run(move |i| i.admit(&who).is_some()).await
    }

    /// Starts the syncs `follow_ups` names, beside the call
    /// ([`Puller::follow_up`]).
    fn start_follow_ups(&self, follow_ups: &FollowUps) {
        if let Some(p) = &self.puller {
            p.follow_up(follow_ups.apps());
        }
    }

    /// A call asked a question: starts, beside it, the pull of every
    /// sibling that is due (§6.1, [`Puller::question`]).
    fn questioned(&self) {
        if let Some(p) = &self.puller {
            p.question();
        }
    }

    /// The wake's pull of every sibling (§6.5), beside the server: what
    /// [`serve_stdio`] starts before it answers the first call.
    pub fn wake_siblings(&self) {
        if let Some(p) = self.puller.clone() {
            tokio::spawn(async move { p.wake().await });
        }
    }

    /// Searches as the configured person and answers the page as text.
    #[tool(
        name = "search",
        description = "Search the team's memoria as words. Answers one page of ranked passages, each cited with its app, title, passage, date, revision and deep link; sibling passages withheld from this person are counted aloud, never shown."
    )]
    async fn search(
        &self,
        Parameters(args): Parameters<SearchArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let (kind, result) = self.search_call(args, structured(&context)).await;
        tracing::info!(tool = SEARCH_TOOL, outcome = kind, "tool call");
        Ok(result)
    }

    /// Opens a document or one passage as the configured person, ruled as
    /// the document page rules it, and answers it as text.
    #[tool(
        name = "document",
        description = "Open a document, or one passage of it, by what a search result's link or a brief's citation names: a document id, {id}#p{n}, or the link itself. Answers the title, app, revision and date, then each passage numbered from 1 with its link and text. A sibling's document is shown only if its app says now that this person may read it; otherwise the tool says it cannot be shown (and why, when the app did not answer or holds another version)."
    )]
    async fn document(
        &self,
        Parameters(args): Parameters<DocumentArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let outcome = self.document_call(args).await;
        tracing::info!(tool = DOCUMENT_TOOL, outcome = outcome.kind, "tool call");
        Ok(outcome.into_result(structured(&context)))
    }

    /// Builds a brief as the configured person and answers it as text.
    #[tool(
        name = "brief",
        description = "Brief an agent on a task from one scope: the first line is the status (resolved, choose or none), then the resolved document, its description, excerpts quoted whole with their passages, relations and the grounds, within the budget. Every sentence is quoted from a passage this person may read now; nothing is generated."
    )]
    async fn brief(
        &self,
        Parameters(args): Parameters<BriefArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let (kind, result) = self.brief_call(args, structured(&context)).await;
        tracing::info!(tool = BRIEF_TOOL, outcome = kind, "tool call");
        Ok(result)
    }
}

impl McpServer {
    /// The `document` call (the tool's whole work, without the transport):
    /// admission, then the one S2 path's ruling of the document
    /// ([`crate::sibling::ruled::ruled_document`]), then the document or
    /// the passage named. Every refusal is an outcome with `is_error`; a
    /// NOT_VISIBLE document answers [`DOCUMENT_ABSENT_SENTENCE`], as an id
    /// never held does.
    pub async fn document_call(&self, args: DocumentArgs) -> ToolOutcome {
        match self.admitted().await {
            Ok(true) => {}
            Ok(false) => return ToolOutcome::refused("not_admitted", not_admitted(&self.asker)),
            Err(e) => return ToolOutcome::refused("store", format!("the store failed: {e}")),
        }
        let Some(target) = DocumentTarget::parse(&args.id) else {
            return ToolOutcome::refused(
                "refused",
                "The id names no document: give a document id (32 hex digits), {id}#p{n} with n from 1, or a result's link.",
            );
        };
        let ruled = crate::sibling::ruled::ruled_document(
            &self.instance,
            self.siblings.as_deref(),
            &self.asker,
            &target.id,
        )
        .await;
        let ruled = match ruled {
            Ok(r) => r,
            Err(e) if e.kind() == ErrorKind::NotAdmitted => {
                return ToolOutcome::refused("not_admitted", not_admitted(&self.asker));
            }
            Err(e) => return ToolOutcome::refused("store", format!("the store failed: {e}")),
        };
        self.start_follow_ups(&ruled.follow_ups);
        self.questioned();
        match ruled.ruling {
            DocumentRuling::Shown { doc, passages } => self.shown(&doc, &passages, target.passage),
            DocumentRuling::Absent => ToolOutcome::refused("absent", DOCUMENT_ABSENT_SENTENCE),
            DocumentRuling::Withheld(w) => ToolOutcome::refused("withheld", w.sentence()),
        }
    }

    /// A document the ruling showed, or its passage number `passage`.
    fn shown(
        &self,
        doc: &DocumentSummary,
        passages: &[Passage],
        passage: Option<i64>,
    ) -> ToolOutcome {
        let chosen: Vec<&Passage> = match passage {
            None => passages.iter().collect(),
            Some(n) => passages
                .iter()
                .filter(|p| passage_number(p.ordinal) == n)
                .collect(),
        };
        if let (Some(n), true) = (passage, chosen.is_empty()) {
            return ToolOutcome::refused(
                "refused",
                format!(
                    "This document has {}; there is no passage {n}.",
                    crate::page::counted(passages.len(), "passage", "passages")
                ),
            );
        }
        let answer = DocumentAnswer {
            document_id: doc.id.clone(),
            title: doc.title.clone(),
            app: doc.app.clone(),
            path: doc.path.clone(),
            revision: doc.revision,
            date: doc.date.iso(),
            dated: doc.date.phrase(&crate::page::app_display_name(&doc.app)),
            passage_count: passages.len(),
            passages: chosen
                .into_iter()
                .map(|p| DocumentPassage {
                    number: passage_number(p.ordinal),
                    trail: crate::page::trail_below(&doc.title, &p.trail).to_vec(),
                    link: self.link(passage_link(&doc.id, p.ordinal)),
                    text: p.body.clone(),
                })
                .collect(),
        };
        ToolOutcome {
            kind: "answered",
            text: answer.to_text(),
            is_error: false,
            json: serde_json::to_value(&answer).ok(),
        }
    }

    /// The `search` call (the tool's whole work, without the transport,
    /// as [`McpServer::document_call`]): admission, the one S2 path's
    /// ruled page, its follow-ups started; its outcome's kind (for the
    /// log) and its result, the page's JSON in `structuredContent` when
    /// `structured` (§8.1).
    pub async fn search_call(
        &self,
        args: SearchArgs,
        structured: bool,
    ) -> (&'static str, CallToolResult) {
        match self.admitted().await {
            Ok(true) => {}
            Ok(false) => return ("not_admitted", refused(not_admitted(&self.asker))),
            Err(e) => return ("store", refused(format!("the store failed: {e}"))),
        }
        let page_number = args.page.unwrap_or(1);
        if page_number == 0 || page_number > PAGE_MAX {
            return (
                "refused",
                refused(format!(
                    "page {page_number}: pages run from 1 to {PAGE_MAX}, twenty results a page"
                )),
            );
        }
        let ruled = crate::sibling::ruled::ruled_search_embedded(
            &self.instance,
            self.siblings.as_deref(),
            self.embedder.as_deref(),
            &self.asker,
            &args.query,
            page_number,
        )
        .await;
        match ruled {
            Ok(r) => {
                self.start_follow_ups(&r.follow_ups);
                let mut page = r.page;
                if let Some(p) = &self.puller {
                    page.freshness = p.freshness().await;
                }
                for result in &mut page.results {
                    result.link = self.link(std::mem::take(&mut result.link));
                }
                self.questioned();
                let json = serde_json::to_value(&page);
                ("answered", answered(page.to_text(), json, structured))
            }
            Err(SearchError::NotAdmitted) => ("not_admitted", refused(not_admitted(&self.asker))),
            Err(e @ (SearchError::TooLong { .. } | SearchError::TooManyWords { .. })) => {
                ("refused", refused(e.to_string()))
            }
            Err(SearchError::Engine(e)) => {
                ("engine", refused(format!("the search engine failed: {e}")))
            }
            Err(SearchError::Store(e)) => ("store", refused(format!("the store failed: {e}"))),
        }
    }

    /// The `brief` call: its outcome's kind (for the log) and its result.
    async fn brief_call(
        &self,
        args: BriefArgs,
        structured: bool,
    ) -> (&'static str, CallToolResult) {
        match self.admitted().await {
            Ok(true) => {}
            Ok(false) => return ("not_admitted", refused(not_admitted(&self.asker))),
            Err(e) => return ("store", refused(format!("the store failed: {e}"))),
        }
        let request = BriefRequest {
            task: args.task,
            scope: args.scope,
            budget_chars: args.budget.unwrap_or(BUDGET_CHARS_DEFAULT),
            with_team: args.team.unwrap_or(false),
        };
        let ruled = crate::sibling::ruled::ruled_brief(
            &self.instance,
            self.siblings.as_deref(),
            self.embedder.as_deref(),
            &self.asker,
            &request,
            &self.scopes,
        )
        .await;
        match ruled {
            Ok(r) => {
                self.start_follow_ups(&r.follow_ups);
                self.questioned();
                let json = serde_json::to_value(&r.brief);
                (
                    r.brief.status.word(),
                    answered(r.brief.to_text(), json, structured),
                )
            }
            Err(BriefError::NotAdmitted) => ("not_admitted", refused(not_admitted(&self.asker))),
            Err(e @ BriefError::UnknownScope) => (
                "refused",
                refused(format!(
                    "{e}; the scopes here are: {}",
                    crate::web::scope_names(&self.scopes)
                )),
            ),
            Err(e @ (BriefError::Engine(_) | BriefError::Store(_))) => {
                ("failed", refused(e.to_string()))
            }
            Err(e) => ("refused", refused(e.to_string())),
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                MCP_SERVER_NAME,
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(
                "memoria: the team's documents, searched and briefed as the configured person. Call brief before starting a task in a project; call search to find a passage by its words; call document to open a result's link or a brief's citation. Every passage returned is one this person may read now, cited; passages are numbered from 1 in labels and links alike.",
            )
    }
}

/// Serves `server` on this process's stdin and stdout until the client
/// closes stdin (or the handshake fails).
///
/// # Errors
/// [`ErrorKind::Io`] if the handshake fails or the transport breaks.
pub async fn serve_stdio(server: McpServer) -> Result<(), Error> {
    server.wake_siblings();
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| Error::with_source(ErrorKind::Io, "the MCP handshake on stdio failed", e))?;
    running
        .waiting()
        .await
        .map_err(|e| Error::with_source(ErrorKind::Io, "the MCP server on stdio stopped", e))?;
    Ok(())
}
