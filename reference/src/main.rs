//! The `memoria` command: serve the search page, import files, search and delete from the shell.
//!
//! Exit codes are fixed:
//!
//! | code | meaning |
//! |---|---|
//! | 0 | success |
//! | 1 | partial: some files were refused, the document was not found, or `sync-folder`'s enumeration failed (nothing was deleted) |
//! | 2 | usage or configuration error: a path to import that does not exist, a `MEMORIA_DEK_FILE` that cannot be read, a DEK that does not open the existing store (nothing is changed), missing owners (clap's own usage errors are 2 as well) |
//! | 3 | not admitted: `--as` names no owner |
//! | 4 | storage, seal or server failure |
//!
//! Logs go to stderr through `tracing` and never carry content (§3.2): no
//! query text, titles, passages, paths or tokens. What the command prints on
//! stdout is its answer to the person who ran it. An error is printed on
//! stderr with its whole chain of causes (`memoria: waking the store: …: …`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use clap::{Parser, Subcommand, ValueEnum};

use memoria::Admission;
use memoria::EgressMode;
use memoria::ErrorKind;
use memoria::IngestStatus;
use memoria::SystemClock;
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
    after_help = "Environment: MEMORIA_OWNERS (comma-separated owner addresses), MEMORIA_DEK or MEMORIA_DEK_FILE (base64 DEK), MEMORIA_DATA, MEMORIA_LOG (tracing filter, default info), MEMORIA_TEAM and MEMORIA_SIBLINGS (comma-separated sibling URLs, each with MEMORIA_SIBLING_TOKEN_<APP>)."
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
    },
    /// Serve the embedded Almendra Studio corpus (plus any PATHs) from a throwaway data directory.
    Demo {
        /// Extra files or directories to import, e.g. a fetched public corpus.
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

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("MEMORIA_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .init();
}

/// An error that carries its exit code.
#[derive(Debug)]
struct Exit(u8, anyhow::Error);

impl<E: Into<anyhow::Error>> From<E> for Exit {
    fn from(e: E) -> Exit {
        let e: anyhow::Error = e.into();
        let code = match e.downcast_ref::<memoria::Error>().map(|e| e.kind()) {
            Some(ErrorKind::Config | ErrorKind::WrongDek | ErrorKind::Usage) => EXIT_USAGE,
            Some(ErrorKind::NotAdmitted) => EXIT_NOT_ADMITTED,
            Some(ErrorKind::NotFound) => EXIT_PARTIAL,
            _ => EXIT_FAILURE,
        };
        Exit(code, e)
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging();
    match run(cli) {
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
    let instance = Instance::wake(
        InstanceConfig {
            data_dir: config.data_dir.clone(),
            admission: config.admission.clone(),
            egress: EgressMode::AiOff,
        },
        Sealer::new(&config.dek),
        Arc::new(SystemClock),
    )
    .context("waking the store")?;
    if let memoria::WakeKind::Rebuilt { reason } = &instance.wake_report().kind {
        eprintln!("note: the index was rebuilt from sealed chunks because {reason}");
    }
    Ok(instance)
}

fn run(cli: Cli) -> Result<u8, Exit> {
    match cli.command {
        Command::Serve { addr, allow_remote } => {
            if !addr.ip().is_loopback() && !allow_remote {
                return Err(Exit(
                    EXIT_USAGE,
                    anyhow::anyhow!(
                        "{addr} is not a loopback address; pass --allow-remote to bind it"
                    ),
                ));
            }
            let config = load_config(&cli.data)?;
            let instance = wake(&config)?;
            serve(instance, addr)
        }
        Command::Demo { paths, addr } => {
            memoria::check_import_paths(&paths)?;
            let dir = tempfile::Builder::new()
                .prefix("memoria-demo-")
                .tempdir()
                .context("creating the demo data directory")?;
            let mut instance = Instance::wake(
                InstanceConfig {
                    data_dir: dir.path().to_path_buf(),
                    admission: Admission::dev_default(),
                    egress: EgressMode::AiOff,
                },
                Sealer::new(&Dek::generate()),
                Arc::new(SystemClock),
            )
            .context("waking the demo store")?;
            eprintln!(
                "demo: a throwaway data directory under {} with a random DEK; the one owner is {}",
                std::env::temp_dir().display(),
                memoria::DEV_OWNER
            );
            let seeded = memoria::demo::seed(&mut instance)?;
            println!(
                "demo: {} fixture documents from the embedded Almendra Studio corpus",
                seeded.files.len() - seeded.refused()
            );
            if !paths.is_empty() {
                let report = memoria::import(&mut instance, &paths)?;
                print_import_text(&report);
            }
            let code = serve(instance, addr);
            drop(dir);
            code
        }
        Command::Import { paths, format } => {
            // A path that does not exist is refused before the store is touched.
            memoria::check_import_paths(&paths)?;
            let config = load_config(&cli.data)?;
            let mut instance = wake(&config)?;
            let report = memoria::import(&mut instance, &paths)?;
            match format {
                Format::Json => println!("{}", serde_json::to_string_pretty(&report)?),
                Format::Text => print_import_text(&report),
            }
            Ok(if report.refused() > 0 {
                EXIT_PARTIAL
            } else {
                0
            })
        }
        Command::SyncFolder { path, format } => {
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
            let config = load_config(&cli.data)?;
            if config.admission.admit(&asker).is_none() {
                return Err(Exit(
                    EXIT_NOT_ADMITTED,
                    anyhow::anyhow!("{asker} is not an owner of this memoria (MEMORIA_OWNERS)"),
                ));
            }
            // Store work runs off the runtime's thread, as `serve`'s does.
            let instance = memoria::SharedInstance::new(wake(&config)?, memoria::Offload::Pool);
            let client = sibling_client_from_env()?;
            // The one S2 path (§8.1): the CLI rules sibling passages as the page does.
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .context("starting the runtime")?;
            let ruled = runtime.block_on(memoria::ruled_search(
                &instance,
                client.as_ref(),
                &asker,
                &query,
                page,
            ));
            let result = match ruled.map(|r| r.page) {
                Ok(p) => p,
                Err(SearchError::NotAdmitted) => {
                    return Err(Exit(EXIT_NOT_ADMITTED, anyhow::anyhow!("not admitted")));
                }
                Err(SearchError::TooLong) => {
                    return Err(Exit(
                        EXIT_USAGE,
                        anyhow::anyhow!(
                            "the query is longer than {} bytes",
                            memoria::QUERY_BYTES_MAX
                        ),
                    ));
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
                Format::Text => {
                    if result.query_words == 0 {
                        println!("The query holds no words to search for.");
                    } else if result.results.is_empty() {
                        println!("No passage matched.");
                    }
                    for r in &result.results {
                        let trail = if r.trail_below_title().is_empty() {
                            String::new()
                        } else {
                            format!(" › {}", r.trail_below_title().join(" › "))
                        };
                        println!("{:>3}. {}{trail}", r.rank, r.title);
                        println!(
                            "     {} · passage {} · {} · {} · revision {} · {}",
                            r.app, r.ordinal, r.marker, r.date, r.revision, r.link
                        );
                        println!("     {}", r.snippet.to_marked_text());
                    }
                    if result.has_next {
                        println!("More results: --page {}", result.page + 1);
                    }
                }
            }
            Ok(0)
        }
        Command::Delete { id } => {
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

fn print_import_text(report: &memoria::ImportReport) {
    for f in &report.files {
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
    println!(
        "{} created, {} revised, {} unchanged, {} refused, {} skipped by extension",
        report.count(IngestStatus::Created),
        report.count(IngestStatus::Revised) + report.count(IngestStatus::Restored),
        report.count(IngestStatus::Unchanged),
        report.refused(),
        report.skipped_by_extension
    );
}

/// Sibling configuration (§6): `MEMORIA_TEAM` is memoria's team label;
/// `MEMORIA_SIBLINGS` lists base URLs, comma-separated; each app's token is
/// `MEMORIA_SIBLING_TOKEN_<APP>` (e.g. `MEMORIA_SIBLING_TOKEN_SHEETS`).
/// Unset `MEMORIA_SIBLINGS` means no siblings.
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
            "MEMORIA_SIBLING_TOKEN_{}",
            parsed.app().to_ascii_uppercase()
        );
        let token = std::env::var(&var)
            .map_err(|_| Exit(EXIT_USAGE, anyhow::anyhow!("sibling {url} needs {var}")))?;
        configs.push(memoria::SiblingConfig {
            url: url.to_string(),
            token,
        });
    }
    memoria::SiblingClient::new(&team, &configs, Arc::new(memoria::TcpDialer))
        .map(Some)
        .map_err(|e| Exit(EXIT_USAGE, anyhow::anyhow!("{e}")))
}

fn serve(instance: Instance, addr: SocketAddr) -> Result<u8, Exit> {
    // Counted before the runtime starts: no SQLite on an async worker thread.
    let (documents, chunks) = instance.store().counts().context("counting the store")?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding {addr}"))?;
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
            state = state.with_siblings(client);
        }
        println!(
            "memoria: serving {} documents ({} passages) on http://{local}",
            documents, chunks
        );
        println!("memoria: egress: {}", EgressMode::AiOff.footer());
        state.deliver_sign_in_links();
        // §6.5: `web::serve` polls every sibling's S1 before the first request.
        memoria::serve(listener, state, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .context("serving")?;
        Ok::<u8, Exit>(0)
    })
}
