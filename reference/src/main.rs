//! The `memoria` command: serve the search page, import files, search, brief and delete from the shell, and serve an agent over MCP.
//!
//! Size: over 800 lines because every command's configuration, exit
//! code and output format is read in one place, as the README's table lists them.
//!
//! Exit codes are fixed:
//!
//! | code | meaning |
//! |---|---|
//! | 0 | success |
//! | 1 | partial: some files were refused, an entry of a walked directory could not be read, the document was not found, or `sync-folder`'s enumeration failed (nothing was deleted) |
//! | 2 | usage or configuration error: a data directory that does not exist for a command that only reads (`search`, `list`, `brief`, `mcp`, `delete`, `serve` without `--init`; nothing is created), a `--data` that names something other than a directory, a path to import that does not exist, a `MEMORIA_DEK_FILE` that cannot be read, a DEK that does not open the existing store (nothing is changed), missing owners, a `MEMORIA_OWNERS_FILE` that cannot be read or does not hold a list, both `MEMORIA_OWNERS` and `MEMORIA_OWNERS_FILE` set, a `MEMORIA_SIBLING_TOKEN_<APP>_FILE` that cannot be read or holds no token, both it and `MEMORIA_SIBLING_TOKEN_<APP>` set, a malformed `MEMORIA_PROJECTS`, a tombstone log behind the database (restored, replaced or lost: memoria refuses to serve rather than serve what was deleted, and changes nothing); a refused query or brief: a query or task over its limits, a task with no word to read for, a budget out of range, a scope that names nothing configured (clap's own usage errors are 2 as well) |
//! | 3 | not admitted: `--as` names no owner now, or the owners file cannot be read now (`mcp` answers each call with the refusal instead, and exits 0 when its client closes stdin) |
//! | 4 | storage, seal or server failure, an I/O error (each names its path) |
//!
//! Logs go to stderr through `tracing` and never carry content (§3.2): no
//! query text, titles, passages, paths or tokens. What the command prints on
//! stdout is its answer to the person who ran it (for `mcp`, the protocol's
//! messages and nothing else). An error is printed on stderr with its whole
//! chain of causes (`memoria: waking the store: …: …`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use clap::parser::ValueSource;
use clap::{CommandFactory as _, FromArgMatches as _, Parser, Subcommand, ValueEnum};

use memoria::Admission;
use memoria::EgressMode;
use memoria::ErrorKind;
use memoria::IngestStatus;
use memoria::SystemClock;
use memoria::brief::{BUDGET_CHARS_DEFAULT, BriefError, BriefRequest, Scopes};
use memoria::{AppState, TerminalDelivery};
use memoria::{Config, DATA_DIR_DEFAULT, DATA_ENV};
use memoria::{Dek, Sealer};
use memoria::{Instance, InstanceConfig, SearchError};

/// The address `serve` binds when none is given: loopback only.
const ADDR_DEFAULT: &str = "127.0.0.1:7878";

const EXIT_PARTIAL: u8 = 1;
const EXIT_USAGE: u8 = 2;
const EXIT_NOT_ADMITTED: u8 = 3;
const EXIT_FAILURE: u8 = 4;

#[derive(Debug, Parser)]
#[command(
    name = "memoria",
    version,
    about = "A per-team search index that seals everything it stores (the reference memoria, AI off).",
    after_help = "Environment: MEMORIA_OWNERS (comma-separated owner addresses), MEMORIA_DEK or MEMORIA_DEK_FILE (base64 DEK), MEMORIA_DATA, MEMORIA_TOMBSTONES (the tombstone log's directory, default beside the data directory: back it up apart, never restore it with the data), MEMORIA_LOG (tracing filter, default info), MEMORIA_TEAM and MEMORIA_SIBLINGS (comma-separated sibling URLs, each with MEMORIA_SIBLING_TOKEN_<APP>, or MEMORIA_SIBLING_TOKEN_<APP>_FILE: a file read on every call), MEMORIA_PROJECTS (the projects a brief's --scope names: name=PATH,… import roots) MEMORIA_ORGANISATION (the organisation's shared collection: a PATH), MEMORIA_PUBLIC_URL (the instance's public base URL: `mcp` makes every link absolute on it) and MEMORIA_CONNECTORS (the connector ingest surface: name=SHA256HEX[;ORIGIN…],…)."
)]
struct Cli {
    /// The data directory: database file and sealed snapshots.
    #[arg(long, global = true, env = DATA_ENV, default_value = DATA_DIR_DEFAULT)]
    data: PathBuf,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the search page on loopback; prints one-time sign-in links on stdout.
    Serve {
        /// Address to bind. Loopback by default; anything else needs --allow-remote.
        #[arg(long, default_value = ADDR_DEFAULT)]
        addr: SocketAddr,
        /// Allow binding a non-loopback address.
        #[arg(long)]
        allow_remote: bool,
        /// Create the data directory (and, with no DEK configured, its
        /// development key) if it does not exist; without it, `serve`
        /// refuses a data directory that does not exist.
        #[arg(long)]
        init: bool,
    },
    /// Serve the embedded Almendra Studio corpus, then import any PATHs while serving.
    ///
    /// The data directory is a throwaway one, removed on Ctrl-C, unless
    /// --data names one on the command line (MEMORIA_DATA is not read):
    /// then it is created if absent and reused by the next run, which
    /// imports nothing twice.
    Demo {
        /// Extra files or directories to import beside the serving page, e.g. a fetched public corpus.
        paths: Vec<PathBuf>,
        /// Address to bind (loopback).
        #[arg(long, default_value = ADDR_DEFAULT)]
        addr: SocketAddr,
    },
    /// Import Markdown, plain-text and HTML files or directory trees.
    Import {
        /// Files or directories.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Keep a directory in sync: ingest new and changed files, delete what a complete walk no longer finds (§5.1).
    ///
    /// A subfolder that cannot be read makes the walk incomplete, and then
    /// nothing is deleted. Prints counts only.
    SyncFolder {
        /// The directory.
        path: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Search as an owner and print ranked results with citations.
    Search {
        /// The owner to search as; must be on MEMORIA_OWNERS.
        #[arg(long = "as", value_name = "OWNER")]
        asker: String,
        /// The query, searched as words.
        query: String,
        /// Page number, from 1.
        #[arg(long, default_value_t = 1)]
        page: u32,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Brief an agent on a task: the status first (resolved, choose or none), then material quoted from one scope, cited.
    ///
    /// The scope is a project named in MEMORIA_PROJECTS, `team`, or
    /// `organisation` when MEMORIA_ORGANISATION is set. Every sibling
    /// passage is ruled through S2 as the page rules it. A task the brief
    /// cannot read, a budget out of range or an unknown scope is refused
    /// (exit 2), never answered with an empty brief.
    Brief {
        /// The owner to brief as; must be on MEMORIA_OWNERS.
        #[arg(long = "as", value_name = "OWNER")]
        asker: String,
        /// The scope to read: a project's name, `team` or `organisation`.
        #[arg(long)]
        scope: String,
        /// Read the team beside the scope (and the organisation).
        #[arg(long)]
        team: bool,
        /// The material's budget, in characters (1 to 16000).
        #[arg(long, default_value_t = BUDGET_CHARS_DEFAULT)]
        budget: usize,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
        /// The task, in the agent's words.
        task: String,
    },
    /// Serve an agent over the Model Context Protocol on stdin and stdout: the tools `search`, `brief` and `document`, as OWNER.
    ///
    /// An MCP client starts this as a child process. Each call is admitted
    /// against the owners list when it is made (MEMORIA_OWNERS_FILE is read
    /// again on every call), and answers what `memoria search` or `memoria
    /// brief` prints for the same request.
    Mcp {
        /// The owner every call is made as; checked on every call.
        #[arg(long = "as", value_name = "OWNER")]
        asker: String,
    },
    /// Delete a document by id, through a tombstone.
    Delete {
        /// The document id (32 hex digits, as `list` shows).
        id: String,
    },
    /// List live documents.
    List {
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
}

/// Log targets silenced whatever `MEMORIA_LOG` asks: the MCP SDK's
/// (`rmcp`), which logs whole requests (a task, a query) and results (a
/// brief's passages) at debug level and its client's details at info (§3.2).
const SILENCED_LOG_TARGETS: &[&str] = &["rmcp"];

fn init_logging() {
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let filter = tracing_subscriber::EnvFilter::try_from_env("MEMORIA_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    // A filter of its own beside the EnvFilter: a more specific directive
    // in MEMORIA_LOG (`rmcp::service=debug`) cannot turn these back on.
    let silenced = tracing_subscriber::filter::filter_fn(|meta| {
        !SILENCED_LOG_TARGETS
            .iter()
            .any(|t| meta.target() == *t || meta.target().starts_with(&format!("{t}::")))
    });
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .finish()
        .with(silenced)
        .init();
}

/// An error that carries its exit code.
#[derive(Debug)]
struct Exit(u8, anyhow::Error);

impl<E: Into<anyhow::Error>> From<E> for Exit {
    fn from(e: E) -> Exit {
        let e: anyhow::Error = e.into();
        let code = match e.downcast_ref::<memoria::Error>().map(|e| e.kind()) {
            Some(
                ErrorKind::Config
                | ErrorKind::WrongDek
                | ErrorKind::TombstonesBehind
                | ErrorKind::Usage,
            ) => EXIT_USAGE,
            Some(ErrorKind::NotAdmitted) => EXIT_NOT_ADMITTED,
            Some(ErrorKind::NotFound) => EXIT_PARTIAL,
            _ => EXIT_FAILURE,
        };
        Exit(code, e)
    }
}

pub(crate) fn main() -> ExitCode {
    let matches = Cli::command().get_matches();
    // `demo` uses a data directory only when one is named on its command
    // line; MEMORIA_DATA (set for `serve`) never receives the fixtures.
    let data_given = matches.value_source("data") == Some(ValueSource::CommandLine);
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    init_logging();
    match run(cli, data_given) {
        Ok(code) => ExitCode::from(code),
        Err(Exit(code, err)) => {
            eprintln!("memoria: {err:#}");
            ExitCode::from(code)
        }
    }
}

fn load_config(data: &std::path::Path) -> Result<Config, Exit> {
    let config = memoria::resolve_config(data, &|k| std::env::var(k).ok())?;
    for w in config.warnings() {
        eprintln!("warning: {w}");
    }
    Ok(config)
}

fn wake(config: &Config) -> Result<Instance, Exit> {
    // §7.4: the tombstone log lives in its own directory, apart from the data.
    let instance =
        Instance::wake_from(config, Arc::new(SystemClock)).context("waking the store")?;
    if let memoria::WakeKind::Rebuilt { reason } = &instance.wake_report().kind {
        eprintln!("note: the index was rebuilt from sealed chunks because {reason}");
    }
    if let Some(why) = &instance.wake_report().restore {
        eprintln!(
            "note: a restore was found at wake ({why}): {} deletions replayed, and every sibling this store knows is marked for re-announce",
            instance.wake_report().tombstones_replayed
        );
    }
    Ok(instance)
}

fn run(cli: Cli, data_given: bool) -> Result<u8, Exit> {
    match cli.command {
        Command::Serve {
            addr,
            allow_remote,
            init,
        } => {
            if !addr.ip().is_loopback() && !allow_remote {
                return Err(Exit(
                    EXIT_USAGE,
                    anyhow::anyhow!(
                        "{addr} is not a loopback address; pass --allow-remote to bind it"
                    ),
                ));
            }
            check_data_dir(
                &cli.data,
                if init { Absent::Create } else { Absent::Refuse },
            )?;
            let config = load_config(&cli.data)?;
            let instance = wake(&config)?;
            let key = config.provider_key().cloned();
            let home = config.home.clone();
            serve(addr, move || Ok((instance, vec![], key, home)))
        }
        Command::Demo { paths, addr } => {
            memoria::check_import_paths(&paths)?;
            if data_given {
                check_data_dir(&cli.data, Absent::Create)?;
            }
            let throwaway = if data_given {
                None
            } else {
                Some(
                    tempfile::Builder::new()
                        .prefix("memoria-demo-")
                        .tempdir()
                        .context("creating the demo data directory")?,
                )
            };
            let throwaway_dir = throwaway.as_ref().map(|d| d.path().to_path_buf());
            // `serve` binds first and only then wakes and seeds: a person who
            // opens the address early is queued by the kernel, never refused.
            let code = serve(addr, move || {
                let mut key = None;
                let mut instance = match throwaway_dir {
                    None => {
                        std::fs::create_dir_all(&cli.data).with_context(|| {
                            format!("creating the data directory {}", cli.data.display())
                        })?;
                        let config = load_config(&cli.data)?;
                        eprintln!(
                            "demo: the data directory {}; a second run reuses it",
                            cli.data.display()
                        );
                        key = config.provider_key().cloned();
                        wake(&config)?
                    }
                    Some(dir) => {
                        let instance = Instance::wake(
                            InstanceConfig {
                                data_dir: dir.clone(),
                                admission: Admission::dev_default(),
                                egress: EgressMode::AiOff,
                            },
                            Sealer::new(&Dek::generate()),
                            Arc::new(SystemClock),
                        )
                        .context("waking the demo store")?;
                        eprintln!(
                            "demo: a throwaway data directory {} with a random DEK, removed on Ctrl-C; the one owner is {}",
                            dir.display(),
                            memoria::DEV_OWNER
                        );
                        instance
                    }
                };
                let seeded = memoria::demo::seed(&mut instance)?;
                println!(
                    "demo: the embedded Almendra Studio corpus: {} created, {} unchanged",
                    seeded.count(IngestStatus::Created) + seeded.count(IngestStatus::Restored),
                    seeded.count(IngestStatus::Unchanged)
                );
                // The demo is lone shape: its owners only, no home.
                Ok((instance, paths, key, None))
            });
            drop(throwaway);
            code
        }
        Command::Import { paths, format } => {
            // A path that does not exist is refused before the store is touched.
            memoria::check_import_paths(&paths)?;
            check_data_dir(&cli.data, Absent::Create)?;
            let config = load_config(&cli.data)?;
            let mut instance = wake(&config)?;
            let report = memoria::import(&mut instance, &paths)?;
            match format {
                Format::Json => println!("{}", serde_json::to_string_pretty(&report)?),
                Format::Text => print_import_text(&report),
            }
            // A walk error is a partial import; a symlink left unfollowed is the rule.
            let unreadable = report.skipped_total
                - report
                    .skipped
                    .iter()
                    .filter(|s| s.reason == memoria::SkipReason::Symlink)
                    .count();
            Ok(if report.refused() > 0 || unreadable > 0 {
                EXIT_PARTIAL
            } else {
                0
            })
        }
        Command::SyncFolder { path, format } => {
            check_data_dir(&cli.data, Absent::Create)?;
            let config = load_config(&cli.data)?;
            let mut instance = wake(&config)?;
            let report = memoria::connector::sync_folder(&mut instance, &path)?;
            match format {
                Format::Json => println!("{}", serde_json::to_string_pretty(&report)?),
                Format::Text => {
                    match report.failure {
                        None => println!("the walk was complete"),
                        Some(kind) => println!(
                            "the walk was incomplete ({}); nothing was deleted",
                            kind.as_str()
                        ),
                    }
                    println!(
                        "{} listed, {} created, {} revised, {} unchanged, {} refused, {} deleted",
                        report.listed,
                        report.created,
                        report.revised,
                        report.unchanged,
                        report.refused,
                        report.deleted
                    );
                }
            }
            Ok(if report.failure.is_some() || report.refused > 0 {
                EXIT_PARTIAL
            } else {
                0
            })
        }
        Command::Search {
            asker,
            query,
            page,
            format,
        } => {
            check_data_dir(&cli.data, Absent::Refuse)?;
            let config = load_config(&cli.data)?;
            if config.admission.admit(&asker).is_none() {
                return Err(not_an_owner(&asker));
            }
            // Store work runs off the runtime's thread, as `serve`'s does.
            let instance = memoria::SharedInstance::new(wake(&config)?, memoria::Offload::Pool);
            let client = sibling_client_from_env()?;
            // The one S2 path (§8.1): the CLI rules sibling passages as the page does.
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .context("starting the runtime")?;
            // AI on: the query is embedded and the ranking fused, as on the page.
            let embedder = config.provider_key().map(|key| {
                memoria::EmbedClient::tensorx(Arc::new(memoria::TcpDialer), key.clone())
            });
            let ruled = runtime.block_on(memoria::ruled_search_embedded(
                &instance,
                client.as_ref(),
                embedder.as_ref(),
                &asker,
                &query,
                page,
            ));
            let result = match ruled.map(|r| r.page) {
                Ok(mut p) => {
                    // §8.7: the numeric route, as on the page; its
                    // follow-ups are the next pull's (the CLI starts none).
                    if page == 1 {
                        p.numeric = runtime
                            .block_on(memoria::numeric_answer(
                                &instance,
                                client.as_ref(),
                                &asker,
                                &query,
                            ))
                            .0;
                    }
                    p
                }
                Err(SearchError::NotAdmitted) => {
                    return Err(Exit(EXIT_NOT_ADMITTED, anyhow::anyhow!("not admitted")));
                }
                Err(e @ SearchError::TooLong { .. }) => {
                    return Err(Exit(EXIT_USAGE, anyhow::anyhow!("{e}")));
                }
                Err(e @ SearchError::TooManyWords { .. }) => {
                    return Err(Exit(EXIT_USAGE, anyhow::anyhow!("{e}")));
                }
                Err(SearchError::Engine(e) | SearchError::Store(e)) => {
                    return Err(Exit(
                        EXIT_FAILURE,
                        anyhow::Error::from(e).context("searching"),
                    ));
                }
            };
            match format {
                Format::Json => println!("{}", serde_json::to_string_pretty(&result)?),
                Format::Text => print!("{}", result.to_text()),
            }
            Ok(0)
        }
        Command::Brief {
            asker,
            scope,
            team,
            budget,
            format,
            task,
        } => {
            check_data_dir(&cli.data, Absent::Refuse)?;
            let config = load_config(&cli.data)?;
            if config.admission.admit(&asker).is_none() {
                return Err(not_an_owner(&asker));
            }
            let scopes = Scopes::from_env()?;
            let request = BriefRequest {
                task,
                scope,
                budget_chars: budget,
                with_team: team,
            };
            // Bad input is refused before the store is woken (the brief
            // checks again, on the one path).
            memoria::brief::check_request(&request).map_err(|e| brief_refusal(e, &scopes))?;
            if scopes.named(&request.scope).is_none() {
                return Err(brief_refusal(BriefError::UnknownScope, &scopes));
            }
            let instance = memoria::SharedInstance::new(wake(&config)?, memoria::Offload::Pool);
            let client = sibling_client_from_env()?;
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .context("starting the runtime")?;
            let embedder = config.provider_key().map(|key| {
                memoria::EmbedClient::tensorx(Arc::new(memoria::TcpDialer), key.clone())
            });
            // The one S2 path (§8.1): the brief rules sibling passages as the page does.
            let ruled = runtime
                .block_on(memoria::ruled_brief(
                    &instance,
                    client.as_ref(),
                    embedder.as_ref(),
                    &asker,
                    &request,
                    &scopes,
                ))
                .map_err(|e| brief_refusal(e, &scopes))?;
            match format {
                Format::Json => println!("{}", serde_json::to_string_pretty(&ruled.brief)?),
                Format::Text => print!("{}", ruled.brief.to_text()),
            }
            Ok(0)
        }
        Command::Mcp { asker } => {
            check_data_dir(&cli.data, Absent::Refuse)?;
            // An operator's public base URL makes every link absolute
            // (issue 31); a malformed one refuses to start, before any wake.
            let public_url = std::env::var(memoria::PUBLIC_URL_ENV)
                .ok()
                .map(|raw| memoria::PublicUrl::parse(&raw))
                .transpose()?;
            let config = load_config(&cli.data)?;
            let scopes = Scopes::from_env()?;
            let instance = memoria::SharedInstance::new(wake(&config)?, memoria::Offload::Pool);
            let client = sibling_client_from_env()?;
            let embedder = config.provider_key().map(|key| {
                memoria::EmbedClient::tensorx(Arc::new(memoria::TcpDialer), key.clone())
            });
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .context("starting the runtime")?;
            let mut server = memoria::McpServer::new(instance, client, embedder, asker, scopes);
            if let Some(url) = public_url {
                server = server.with_public_url(url);
            }
            runtime
                .block_on(memoria::serve_mcp(server))
                .context("serving MCP on stdio")?;
            Ok(0)
        }
        Command::Delete { id } => {
            check_data_dir(&cli.data, Absent::Refuse)?;
            let config = load_config(&cli.data)?;
            let mut instance = wake(&config)?;
            let d = instance.delete(&id)?;
            println!(
                "deleted {} ({} passages); tombstone {}",
                d.id,
                d.removed.len(),
                d.tombstone_seq
            );
            Ok(0)
        }
        Command::List { format } => {
            check_data_dir(&cli.data, Absent::Refuse)?;
            let config = load_config(&cli.data)?;
            let instance = wake(&config)?;
            let docs = instance.store().documents()?;
            match format {
                Format::Json => println!("{}", serde_json::to_string_pretty(&docs)?),
                Format::Text => {
                    for d in &docs {
                        println!(
                            "{}  rev {:>3}  {:>4} passages  {}",
                            d.id, d.revision, d.chunk_count, d.title
                        );
                    }
                    let (n, c) = instance.store().counts()?;
                    println!("{n} documents, {c} passages");
                }
            }
            Ok(0)
        }
    }
}

/// What a command does with a data directory that does not exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Absent {
    /// Create it, with its development key when no DEK is configured
    /// (`import`, `sync-folder`, `serve --init`, `demo --data`).
    Create,
    /// Refuse, creating nothing: a command that only reads (`search`,
    /// `list`, `brief`, `mcp`, `delete`, `serve`) would otherwise answer
    /// from a new, empty store under a new key, as if the data were lost.
    Refuse,
}

/// Checks the data directory before anything is read or created: a path
/// that is not a directory is refused whatever the command (exit 2), a
/// missing one is refused unless the command may create it (exit 2), and
/// one whose metadata cannot be read is a storage failure (exit 4). Every
/// message names the path.
fn check_data_dir(data: &std::path::Path, absent: Absent) -> Result<(), Exit> {
    match std::fs::metadata(data) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(Exit(
            EXIT_USAGE,
            anyhow::anyhow!(
                "the data directory {} is not a directory; --data (or {DATA_ENV}) must name a directory, or a path where one may be created",
                data.display()
            ),
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => match absent {
            Absent::Create => Ok(()),
            Absent::Refuse => Err(Exit(
                EXIT_USAGE,
                anyhow::anyhow!(
                    "the data directory {} does not exist; nothing was created. Check --data (or {DATA_ENV}); a new store is made by `memoria import`, `memoria serve --init` or `memoria demo --data DIR`",
                    data.display()
                ),
            )),
        },
        Err(e) => Err(Exit(
            EXIT_FAILURE,
            anyhow::Error::new(e).context(format!(
                "the data directory {} cannot be read",
                data.display()
            )),
        )),
    }
}

/// `asker` is not on the owners list: exit 3, saying so.
fn not_an_owner(asker: &str) -> Exit {
    Exit(
        EXIT_NOT_ADMITTED,
        anyhow::anyhow!(
            "{asker} is not an owner of this memoria (MEMORIA_OWNERS or MEMORIA_OWNERS_FILE)"
        ),
    )
}

/// A brief that was not built, with its exit code: a refusal of the
/// request is a usage error (2) carrying the brief's own sentence (an
/// unknown scope also lists the scopes there are), a store or index
/// failure is 4.
fn brief_refusal(e: BriefError, scopes: &Scopes) -> Exit {
    match e {
        BriefError::NotAdmitted => Exit(EXIT_NOT_ADMITTED, anyhow::anyhow!("not admitted")),
        BriefError::Engine(err) | BriefError::Store(err) => {
            Exit(EXIT_FAILURE, anyhow::Error::from(err).context("briefing"))
        }
        e @ BriefError::UnknownScope => Exit(
            EXIT_USAGE,
            anyhow::anyhow!("{e}; the scopes here are: {}", memoria::scope_names(scopes)),
        ),
        e => Exit(EXIT_USAGE, anyhow::anyhow!("{e}")),
    }
}

fn print_import_text(report: &memoria::ImportReport) {
    print_import_files(report, true);
    print_import_skips(report);
    println!("{}", import_summary(report));
}

/// One line per entry a walk left unread, with why, and a count of those
/// past the listed ones.
fn print_import_skips(report: &memoria::ImportReport) {
    for s in &report.skipped {
        match &s.detail {
            Some(d) => println!("skipped    {}: {} ({d})", s.path, s.reason.as_str()),
            None => println!("skipped    {}: {}", s.path, s.reason.as_str()),
        }
    }
    let unlisted = report.skipped_total - report.skipped.len();
    if unlisted > 0 {
        println!("skipped    {unlisted} more entries, not listed");
    }
}

/// One line per file (`all`), or only the refused ones.
fn print_import_files(report: &memoria::ImportReport, all: bool) {
    for f in report.files.iter().filter(|f| all || f.refused.is_some()) {
        match (&f.status, &f.refused) {
            (_, Some(why)) => println!("refused    {}: {why}", f.path),
            (Some(s), None) => {
                let s = match s {
                    IngestStatus::Created => "created",
                    IngestStatus::Revised => "revised",
                    IngestStatus::Unchanged => "unchanged",
                    IngestStatus::Restored => "restored",
                };
                println!("{s:<10} {} ({} passages)", f.path, f.chunks);
            }
            (None, None) => {}
        }
    }
}

fn import_summary(report: &memoria::ImportReport) -> String {
    let of = |reason| report.skipped.iter().filter(|s| s.reason == reason).count();
    let symlinks = of(memoria::SkipReason::Symlink);
    let unreadable = of(memoria::SkipReason::Unreadable);
    // Entries past the listed ones are counted with the unreadable: the
    // total is exact, the split is by what was listed.
    let unlisted = report.skipped_total - report.skipped.len();
    format!(
        "{} created, {} revised, {} unchanged, {} refused, {} skipped by extension, {} symlinks skipped, {} unreadable skipped",
        report.count(IngestStatus::Created),
        report.count(IngestStatus::Revised) + report.count(IngestStatus::Restored),
        report.count(IngestStatus::Unchanged),
        report.refused(),
        report.skipped_by_extension,
        symlinks,
        unreadable + unlisted
    )
}

/// Sibling configuration (§6): `MEMORIA_TEAM` is memoria's team label;
/// `MEMORIA_SIBLINGS` lists base URLs, comma-separated; each app's token is
/// `MEMORIA_SIBLING_TOKEN_<APP>` (e.g. `MEMORIA_SIBLING_TOKEN_SHEETS`), given
/// at start, or `MEMORIA_SIBLING_TOKEN_<APP>_FILE`, a file read on every
/// call to that sibling, so a rotated token is sent with no restart (§6.2).
/// One of the two, not both; a token file that cannot be used at start
/// refuses to start. Unset `MEMORIA_SIBLINGS` means no siblings. An
/// `https://` URL is dialled with TLS, trusting Mozilla's roots and the
/// private CA file `MEMORIA_SIBLING_CA_FILE` names (§6.1); a file that
/// cannot be used refuses to start.
fn sibling_client_from_env() -> Result<Option<memoria::SiblingClient>, Exit> {
    let Ok(list) = std::env::var("MEMORIA_SIBLINGS") else {
        return Ok(None);
    };
    let team = std::env::var("MEMORIA_TEAM").map_err(|_| {
        Exit(
            EXIT_USAGE,
            anyhow::anyhow!("MEMORIA_SIBLINGS needs MEMORIA_TEAM"),
        )
    })?;
    let mut configs = vec![];
    for url in list.split(',').map(str::trim).filter(|u| !u.is_empty()) {
        let parsed = memoria::SiblingUrl::parse(url, &team)
            .map_err(|e| Exit(EXIT_USAGE, anyhow::anyhow!("sibling {url}: {e}")))?;
        let var = format!(
            "{}{}",
            memoria::SIBLING_TOKEN_ENV_PREFIX,
            parsed.app().to_ascii_uppercase()
        );
        let file_var = format!("{var}{}", memoria::SIBLING_TOKEN_FILE_SUFFIX);
        let usage = |why: String| Exit(EXIT_USAGE, anyhow::anyhow!("sibling {url}: {why}"));
        let fixed = std::env::var(&var).ok();
        let file = std::env::var(&file_var)
            .ok()
            .filter(|f| !f.trim().is_empty());
        let token = match (fixed, file) {
            (Some(_), Some(_)) => {
                return Err(usage(format!(
                    "{var} and {file_var} are both set: give the token in one of them"
                )));
            }
            (Some(token), None) => memoria::SiblingToken::Fixed(token),
            (None, Some(path)) => {
                let source = memoria::SiblingToken::File(PathBuf::from(path));
                // Read once now, so that a start with no usable token is
                // refused rather than served withholding that sibling.
                source
                    .current()
                    .map_err(|why| usage(format!("{file_var}: {why}")))?;
                source
            }
            (None, None) => return Err(usage(format!("needs {var} or {file_var}"))),
        };
        configs.push(memoria::SiblingConfig {
            url: url.to_string(),
            token,
        });
    }
    // §3.5: Calendar's bodies are kept only when the owner turns them on.
    let calendar_bodies = memoria::resolve_calendar_bodies(&|k| std::env::var(k).ok())
        .map_err(|e| Exit(EXIT_USAGE, anyhow::anyhow!("{e:#}")))?;
    let trust = memoria::resolve_sibling_trust(&|k| std::env::var(k).ok())
        .map_err(|e| Exit(EXIT_USAGE, anyhow::anyhow!("{e:#}")))?;
    memoria::SiblingClient::new(&team, &configs, Arc::new(memoria::TcpDialer))
        .map(|client| {
            let client = client.with_trust(trust);
            Some(match calendar_bodies {
                Some(on) => client.with_calendar_bodies(on),
                None => client,
            })
        })
        .map_err(|e| Exit(EXIT_USAGE, anyhow::anyhow!("{e}")))
}

/// Binds `addr`, then takes the instance to serve and the PATHs to import
/// from `prepare` (the demo wakes and seeds there, after the bind), and
/// serves until Ctrl-C; the PATHs are imported beside the serving page,
/// after the address and the sign-in links are printed.
fn serve(
    addr: SocketAddr,
    prepare: impl FnOnce() -> Result<
        (
            Instance,
            Vec<PathBuf>,
            Option<memoria::ProviderKey>,
            Option<memoria::HomeClient>,
        ),
        Exit,
    >,
) -> Result<u8, Exit> {
    // A malformed MEMORIA_PROJECTS is refused before anything is bound or woken.
    let scopes = Scopes::from_env()?;
    // So is a malformed MEMORIA_CONNECTORS, and a connector holding a sibling's token (§9.1).
    let connectors = memoria::Connectors::from_env()?;
    let listener = std::net::TcpListener::bind(addr).with_context(|| format!("binding {addr}"))?;
    listener
        .set_nonblocking(true)
        .with_context(|| format!("binding {addr}"))?;
    let (instance, import, provider_key, home) = prepare()?;
    let egress = instance.egress();
    // Counted before the runtime starts: no SQLite on an async worker thread.
    let (documents, chunks) = instance.store().counts().context("counting the store")?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the runtime")?;
    runtime.block_on(async move {
        let listener =
            tokio::net::TcpListener::from_std(listener).context("serving the bound address")?;
        let local = listener.local_addr().context("reading the bound address")?;
        // Store work runs on the blocking pool, off the worker threads (issue 10).
        let mut state = AppState::new(
            instance,
            Arc::new(TerminalDelivery),
            format!("http://{local}"),
            memoria::Offload::Pool,
        );
        if let Some(client) = sibling_client_from_env()? {
            println!("memoria: siblings: {}", client.apps().join(", "));
            connectors.disjoint_from(&client.token_hashes())?;
            state = state.with_siblings(client);
        }
        // Suite shape (§4.3): the roster is pulled from the home on wake.
        if let Some(home) = home {
            println!(
                "memoria: admission: the owners, then the roster of {}",
                home.host()
            );
            state = state.with_home(home);
        }
        // The connectors the ingest surface admits (/connectors/…, §9.1).
        state = state.with_connectors(connectors);
        // §3.5: the decrypted index leaves memory after an idle spell.
        let idle = memoria::resolve_idle_evict(&|k| std::env::var(k).ok())
            .map_err(|e| Exit(EXIT_USAGE, anyhow::anyhow!("{e:#}")))?;
        state = state.with_idle_evict(idle);
        // The projects and the organisation a brief may name (/brief).
        state = state.with_scopes(scopes);
        // AI on (§8.3): the one provider, dialed like the siblings; its
        // embedding loop starts with `serve`.
        if let (true, Some(key)) = (egress.embeds(), provider_key) {
            state = state
                .with_embedder(memoria::EmbedClient::tensorx(
                    Arc::new(memoria::TcpDialer),
                    key.clone(),
                ))
                .with_chat(memoria::ChatClient::tensorx(
                    Arc::new(memoria::TcpDialer),
                    key,
                ));
        }
        println!(
            "memoria: serving {} documents ({} passages) on http://{local}",
            documents, chunks
        );
        println!("memoria: egress: {}", egress.footer());
        state.deliver_sign_in_links();
        if !import.is_empty() {
            tokio::spawn(import_while_serving(state.clone(), import));
        }
        // §6.5: `web::serve` polls every sibling's S1 before the first request.
        memoria::serve(listener, state, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .context("serving")?;
        Ok::<u8, Exit>(0)
    })
}

/// The most progress lines one import beside the page prints: one per tenth
/// of its files.
const IMPORT_PROGRESS_LINES: usize = 10;

/// The demo's import of `paths` beside the serving page, reported on stdout:
/// the file count first, progress by tenths, then what `memoria import`
/// would print for the whole run (refused files named).
async fn import_while_serving(state: AppState, paths: Vec<PathBuf>) {
    match import_beside(&state, paths).await {
        Ok(report) => {
            print_import_files(&report, false);
            print_import_skips(&report);
            println!("demo: import done: {}", import_summary(&report));
        }
        Err(e) => eprintln!("memoria: the demo's import stopped: {e:#}"),
    }
}

/// Reads each file with no lock held and ingests it in a store step of its
/// own, so a page waits for one document at most; one snapshot at the end.
async fn import_beside(
    state: &AppState,
    paths: Vec<PathBuf>,
) -> anyhow::Result<memoria::ImportReport> {
    let collected =
        tokio::task::spawn_blocking(move || memoria::collect_import_paths_reporting(&paths))
            .await
            .context("listing the files to import")??;
    let files = collected.files;
    let total = files.len();
    println!("demo: importing {total} files while serving; a search finds what is in so far");
    let mut report = memoria::ImportReport {
        skipped_by_extension: collected.skipped_by_extension,
        skipped: collected.skipped,
        skipped_total: collected.skipped_total,
        ..memoria::ImportReport::default()
    };
    let mut reported_tenths = 0;
    for (n, file) in files.into_iter().enumerate() {
        let bytes = tokio::fs::read(&file).await;
        let outcome = state
            .blocking(move |i| memoria::demo::ingest_file(i, &file, bytes))
            .await?;
        report.files.push(outcome);
        let done = n + 1;
        let tenths = done * IMPORT_PROGRESS_LINES / total;
        if tenths > reported_tenths && done < total {
            reported_tenths = tenths;
            println!("demo: imported {done} of {total} files");
        }
    }
    if report
        .files
        .iter()
        .any(|f| f.status.is_some_and(|s| s != IngestStatus::Unchanged))
    {
        let header = state.blocking(|i| i.write_snapshot()).await??;
        report.snapshot_generation = Some(header.generation);
    }
    Ok(report)
}
