//! `memoria mcp`: briefs and searches for an agent over the Model Context Protocol on stdio, admitted on every call and ruled on the one S2 path (§4.3, §8.1; `brief-material.md`).
//!
//! An agent's client starts `memoria mcp --as PERSON` as a child process and
//! speaks JSON-RPC on its stdin and stdout (MCP's stdio transport, through
//! the official SDK, `rmcp`). The server offers two tools:
//!
//! - `search` (`query`, `page`): one ruled page, as `memoria search` prints it
//!   ([`crate::SearchPage::to_text`]);
//! - `brief` (`task`, `scope`, `budget`, `team`): one brief, as `memoria
//!   brief` prints it ([`crate::brief::Brief::to_text`]).
//!
//! Each result's content is that text form, byte for byte what the CLI
//! prints for the same request. To a client that negotiated protocol
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
use crate::brief::{BUDGET_CHARS_DEFAULT, BriefError, BriefRequest, Scopes};
use crate::error::{Error, ErrorKind};
use crate::offload::SharedInstance;
use crate::search::page::SearchError;
use crate::sibling::ruled::FollowUps;
use crate::sibling::{Puller, SiblingClient};

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

/// The `search` tool's arguments.
#[derive(Debug, Clone, Deserialize, rmcp::schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct SearchArgs {
    /// The query, searched as words: at most 1,024 bytes and 64 different words.
    pub query: String,
    /// The page of results, from 1 (twenty results a page); 1 when absent.
    pub page: Option<u32>,
}

/// The `brief` tool's arguments.
#[derive(Debug, Clone, Deserialize, rmcp::schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct BriefArgs {
    /// The task, in the agent's words: at most 1,024 bytes and 64 different words.
    pub task: String,
    /// The scope to read: a project's name (MEMORIA_PROJECTS), `team`, or
    /// `organisation` when MEMORIA_ORGANISATION is set.
    pub scope: String,
    /// The material's budget, in characters, 1 to 16,000; 2,000 when absent.
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
            tool_router: McpServer::tool_router(),
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
    /// The `search` call: its outcome's kind (for the log) and its result.
    async fn search_call(
        &self,
        args: SearchArgs,
        structured: bool,
    ) -> (&'static str, CallToolResult) {
        match self.admitted().await {
            Ok(true) => {}
            Ok(false) => return ("not_admitted", refused(not_admitted(&self.asker))),
            Err(e) => return ("store", refused(format!("the store failed: {e}"))),
        }
        let ruled = crate::sibling::ruled::ruled_search_embedded(
            &self.instance,
            self.siblings.as_deref(),
            self.embedder.as_deref(),
            &self.asker,
            &args.query,
            args.page.unwrap_or(1),
        )
        .await;
        match ruled {
            Ok(r) => {
                self.start_follow_ups(&r.follow_ups);
                let mut page = r.page;
                if let Some(p) = &self.puller {
                    page.freshness = p.freshness().await;
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
                "memoria: the team's documents, searched and briefed as the configured person. Call brief before starting a task in a project; call search to find a passage by its words. Every passage returned is one this person may read now, cited.",
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
