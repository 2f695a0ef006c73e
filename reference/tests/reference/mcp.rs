//! `memoria mcp` as an agent's client meets it: JSON-RPC over the child's stdin and stdout, three tools, search and brief answering what the CLI prints for the same request, every call admitted, no content in its log; and the official MCP Python SDK following a result's link through the document tool.
//!
//! Each test imports files with the real binary, then spawns `memoria mcp`
//! and speaks the protocol by hand, one JSON message a line (MCP's stdio
//! transport), with a deadline on every read.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use memoria::Dek;
use serde_json::{Value, json};
use wait_timeout::ChildExt as _;

use crate::{OWNER, memoria};
/// How long one answer may take, in seconds: a wake, a brief and a
/// search on a loaded 2-core machine fit well inside it.
const ANSWER_DEADLINE_S: u64 = 60;
/// The MCP revision the tests' client asks for: the first with structured
/// tool output.
const CLIENT_PROTOCOL: &str = "2025-06-18";

/// A store under `dir` with two notes imported, and its DEK.
fn imported(dir: &Path) -> (PathBuf, Dek) {
    let docs = dir.join("docs");
    std::fs::create_dir_all(&docs).expect("mkdir");
    std::fs::write(
        docs.join("kettle.md"),
        "# Kettle\n\nDescale the office kettle every month with citric acid.\n",
    )
    .expect("writes");
    std::fs::write(
        docs.join("budget.md"),
        "# Budget\n\nThe travel budget for 2026 is frozen until March.\n",
    )
    .expect("writes");
    let data = dir.join("data");
    let dek = Dek::generate();
    let out = memoria(&data, &dek)
        .arg("import")
        .arg(&docs)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (data, dek)
}

/// What `memoria ARGS` prints on stdout, asserting it succeeds.
fn cli_stdout(data: &Path, dek: &Dek, args: &[&str]) -> String {
    let out = memoria(data, dek).args(args).output().expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// A running `memoria mcp` and the client's end of its pipes.
struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    next_id: u64,
}

impl Session {
    fn start(mut cmd: Command, asker: &str) -> Session {
        let mut child = cmd
            .args(["mcp", "--as", asker])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("memoria mcp starts");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Session {
            child,
            stdin,
            lines,
            next_id: 1,
        }
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").expect("writes");
        stdin.flush().expect("flushes");
    }

    /// Sends request `method` and returns its response, skipping any
    /// notification the server sends first.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(ANSWER_DEADLINE_S))
                .unwrap_or_else(|_| panic!("{method}: no answer in {ANSWER_DEADLINE_S} s"));
            let message: Value = serde_json::from_str(&line).expect("each line is JSON");
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    /// `initialize` at `version`, then `notifications/initialized`.
    fn initialize(&mut self, version: &str) -> Value {
        let response = self.request(
            "initialize",
            json!({
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "memoria-tests", "version": "0"}
            }),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        response
    }

    /// Calls tool `name` and returns the call's `result`.
    fn call(&mut self, name: &str, arguments: Value) -> Value {
        let response = self.request("tools/call", json!({"name": name, "arguments": arguments}));
        assert!(
            response.get("error").is_none(),
            "{name}: a result, not a protocol error: {response}"
        );
        response["result"].clone()
    }

    /// Closes stdin and returns the exit code and everything on stderr.
    fn finish(mut self) -> (Option<i32>, String) {
        drop(self.stdin.take());
        let status = self
            .child
            .wait_timeout(Duration::from_secs(ANSWER_DEADLINE_S))
            .expect("waits")
            .unwrap_or_else(|| {
                let _ = self.child.kill();
                panic!("memoria mcp did not exit when stdin closed");
            });
        let mut stderr = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut e, &mut stderr);
        }
        (status.code(), stderr)
    }
}

/// The text of a tool result's first content block.
fn text_of(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

#[test]
fn an_agent_lists_the_three_tools_and_search_and_brief_answer_what_the_cli_prints_for_the_same_request()
 {
    let dir = tempfile::tempdir().expect("tempdir");
    let (data, dek) = imported(dir.path());
    let cli_brief = cli_stdout(
        &data,
        &dek,
        &[
            "brief",
            "--as",
            OWNER,
            "--scope",
            "team",
            "--budget",
            "900",
            "descale the office kettle",
        ],
    );
    let cli_search = cli_stdout(&data, &dek, &["search", "--as", OWNER, "travel budget"]);
    assert_eq!(cli_brief.lines().next(), Some("resolved"), "{cli_brief}");

    let mut s = Session::start(memoria(&data, &dek), OWNER);
    let init = s.initialize(CLIENT_PROTOCOL);
    assert_eq!(init["result"]["protocolVersion"], CLIENT_PROTOCOL, "{init}");
    assert_eq!(init["result"]["serverInfo"]["name"], "memoria", "{init}");
    assert!(
        init["result"]["capabilities"]["tools"].is_object(),
        "{init}"
    );

    let list = s.request("tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().expect("tools");
    let mut names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["brief", "document", "search"], "{list}");
    let brief_tool = tools.iter().find(|t| t["name"] == "brief").expect("brief");
    let required = &brief_tool["inputSchema"]["required"];
    assert!(
        required
            .as_array()
            .is_some_and(|r| r.contains(&json!("task")) && r.contains(&json!("scope"))),
        "{brief_tool}"
    );

    let brief = s.call(
        "brief",
        json!({"task": "descale the office kettle", "scope": "team", "budget": 900}),
    );
    assert_eq!(brief["isError"], false, "{brief}");
    assert_eq!(
        text_of(&brief),
        cli_brief,
        "the brief's text is the CLI's, byte for byte"
    );
    assert_eq!(brief["structuredContent"]["status"], "resolved", "{brief}");
    assert_eq!(
        brief["structuredContent"]["item"]["title"], "Kettle",
        "{brief}"
    );

    let search = s.call("search", json!({"query": "travel budget"}));
    assert_eq!(search["isError"], false, "{search}");
    assert_eq!(
        text_of(&search),
        cli_search,
        "the page's text is the CLI's, byte for byte"
    );
    assert_eq!(
        search["structuredContent"]["results"][0]["title"], "Budget",
        "{search}"
    );

    let (code, stderr) = s.finish();
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn a_call_it_cannot_read_is_a_tool_error_saying_why_and_the_server_serves_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (data, dek) = imported(dir.path());
    let mut s = Session::start(memoria(&data, &dek), OWNER);
    s.initialize(CLIENT_PROTOCOL);
    for (args, says) in [
        (
            json!({"task": "", "scope": "team"}),
            "the task holds no word to read for",
        ),
        (
            json!({"task": "kettle", "scope": "team", "budget": 0}),
            "a brief's budget is 1 to 16000 characters",
        ),
        (
            json!({"task": "kettle", "scope": "nowhere"}),
            "the scopes here are: team",
        ),
    ] {
        let r = s.call("brief", args.clone());
        assert_eq!(r["isError"], true, "{args}: {r}");
        assert!(text_of(&r).contains(says), "{args}: {r}");
        assert!(
            r.get("structuredContent").is_none(),
            "{args}: no brief: {r}"
        );
    }
    let long = "a".repeat(memoria::QUERY_BYTES_MAX + 1);
    let r = s.call("search", json!({"query": long}));
    assert_eq!(r["isError"], true, "{r}");
    // Still serving: the next call is answered.
    let ok = s.call(
        "brief",
        json!({"task": "descale the office kettle", "scope": "team"}),
    );
    assert_eq!(text_of(&ok).lines().next(), Some("resolved"), "{ok}");
    let (code, stderr) = s.finish();
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn a_person_not_on_the_owners_list_is_refused_on_every_call() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (data, dek) = imported(dir.path());
    let mut s = Session::start(memoria(&data, &dek), "eve@example.org");
    s.initialize(CLIENT_PROTOCOL);
    for _ in 0..2 {
        let brief = s.call(
            "brief",
            json!({"task": "descale the office kettle", "scope": "team"}),
        );
        assert_eq!(brief["isError"], true, "{brief}");
        assert_eq!(
            text_of(&brief),
            "eve@example.org is not an owner of this memoria (MEMORIA_OWNERS or MEMORIA_OWNERS_FILE)"
        );
        let search = s.call("search", json!({"query": "kettle"}));
        assert_eq!(search["isError"], true, "{search}");
        assert!(!search.to_string().contains("Kettle"), "{search}");
    }
    let (code, stderr) = s.finish();
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn an_older_client_gets_the_text_without_structured_content() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (data, dek) = imported(dir.path());
    let mut s = Session::start(memoria(&data, &dek), OWNER);
    let init = s.initialize("2025-03-26");
    assert_eq!(init["result"]["protocolVersion"], "2025-03-26", "{init}");
    let brief = s.call(
        "brief",
        json!({"task": "descale the office kettle", "scope": "team"}),
    );
    assert_eq!(text_of(&brief).lines().next(), Some("resolved"), "{brief}");
    assert!(brief.get("structuredContent").is_none(), "{brief}");
    s.finish();
}

#[test]
fn at_trace_level_the_log_holds_the_calls_and_no_task_query_or_passage() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (data, dek) = imported(dir.path());
    let mut cmd = memoria(&data, &dek);
    cmd.env("MEMORIA_LOG", "trace");
    let mut s = Session::start(cmd, OWNER);
    s.initialize(CLIENT_PROTOCOL);
    let brief = s.call(
        "brief",
        json!({"task": "descale the office kettle zqxcanary", "scope": "team"}),
    );
    assert!(text_of(&brief).contains("citric acid"), "{brief}");
    let search = s.call("search", json!({"query": "travel budget wqvcanary"}));
    assert!(text_of(&search).contains("Budget"), "{search}");
    let (code, stderr) = s.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("tool call") && stderr.contains("brief assembled"),
        "the calls were logged: {stderr}"
    );
    for content in [
        "zqxcanary",
        "wqvcanary",
        "citric",
        "Kettle",
        "travel",
        "memoria-tests",
    ] {
        assert!(
            !stderr.contains(content),
            "{content} reached the log: {stderr}"
        );
    }
}

/// The official MCP Python SDK's interpreter, as `fixtures/mcp-sdk/fetch`
/// installs it.
fn sdk_python() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/mcp-sdk/venv/bin/python")
}

/// The public base URL the SDK test sets: every link must start with it.
const PUBLIC_URL: &str = "https://memoria.example.org";

#[test]
fn an_agent_on_the_official_python_sdk_follows_absolute_links_numbered_as_labelled_through_the_document_tool()
 {
    let python = sdk_python();
    assert!(
        python.exists(),
        "the official MCP Python SDK is not installed at {}: run fixtures/mcp-sdk/fetch (about 10 MB from PyPI) and test again. \
         This test does not pass without it: it is the one client from the ecosystem that drives memoria mcp.",
        python.display()
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let docs = dir.path().join("docs");
    std::fs::create_dir_all(&docs).expect("mkdir");
    std::fs::write(
        docs.join("kettle.md"),
        "# Kettle\n\nDescale the office kettle every month with citric acid.\n\n## Filter\n\nThe kettle filter is rinsed weekly under the tap, never with soap.\n",
    )
    .expect("writes");
    let data = dir.path().join("data");
    let dek = Dek::generate();
    let out = memoria(&data, &dek)
        .arg("import")
        .arg(&docs)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/mcp-sdk/drive.py");
    let mut child = Command::new(&python)
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_memoria"))
        .arg(&data)
        .arg(OWNER)
        .arg("kettle filter")
        .arg("rinsed weekly")
        .env("MEMORIA_DEK", dek.to_base64())
        .env("MEMORIA_OWNERS", OWNER)
        .env("MEMORIA_LOG", "warn")
        .env("MEMORIA_PUBLIC_URL", format!("{PUBLIC_URL}/"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the SDK's python starts");
    let status = child
        .wait_timeout(Duration::from_secs(ANSWER_DEADLINE_S * 2))
        .expect("waits")
        .unwrap_or_else(|| {
            let _ = child.kill();
            panic!(
                "the SDK client did not finish in {} s",
                ANSWER_DEADLINE_S * 2
            );
        });
    let mut stdout = String::new();
    let mut stderr = String::new();
    if let Some(mut o) = child.stdout.take() {
        let _ = std::io::Read::read_to_string(&mut o, &mut stdout);
    }
    if let Some(mut e) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut stderr);
    }
    assert!(
        status.success() && stdout.contains("all checks passed"),
        "the SDK client's checks failed:\n{stdout}\n{stderr}"
    );
    // Presence of what was checked: the labels and links were compared.
    assert!(
        stdout.contains("links to #p") && stdout.contains("absolute on the public URL"),
        "{stdout}"
    );
}

#[test]
fn a_public_url_is_read_whole_or_refused_naming_the_setting() {
    for (raw, want) in [
        (
            "https://memoria.example.org",
            Some("https://memoria.example.org"),
        ),
        (
            "https://memoria.example.org/",
            Some("https://memoria.example.org"),
        ),
        (
            "http://10.0.0.5:8080/team/",
            Some("http://10.0.0.5:8080/team"),
        ),
        ("  https://m.example.org  ", Some("https://m.example.org")),
        ("memoria.example.org", None),
        ("ftp://memoria.example.org", None),
        ("https://", None),
        ("https://:443", None),
        ("https://user@memoria.example.org", None),
        ("https://memoria.example.org/?a=b", None),
        ("https://memoria.example.org/#x", None),
        ("https://memoria example.org", None),
    ] {
        match (memoria::PublicUrl::parse(raw), want) {
            (Ok(url), Some(w)) => assert_eq!(url.as_str(), w, "{raw:?}"),
            (Err(e), None) => assert!(
                e.to_string().contains(memoria::PUBLIC_URL_ENV),
                "{raw:?}: {e}"
            ),
            (got, want) => panic!("{raw:?}: {got:?}, wanted {want:?}"),
        }
    }
    let long = format!(
        "https://{}.example.org",
        "a".repeat(memoria::PUBLIC_URL_BYTES_MAX)
    );
    assert!(memoria::PublicUrl::parse(&long).is_err());
}

#[test]
fn the_document_tool_reads_an_id_a_citation_or_a_link_and_nothing_else() {
    let id = "0123456789abcdef0123456789abcdef";
    for (raw, want) in [
        (id.to_string(), Some(None)),
        (format!("{id}#p2"), Some(Some(2))),
        (format!("/documents/{id}#p1"), Some(Some(1))),
        (
            format!("https://m.example.org/documents/{id}#p12"),
            Some(Some(12)),
        ),
        (format!("https://m.example.org/documents/{id}"), Some(None)),
        (format!("{id}#p0"), None),
        (format!("{id}#x2"), None),
        (format!("{id}#p"), None),
        ("0123".to_string(), None),
        (String::new(), None),
    ] {
        let got = memoria::DocumentTarget::parse(&raw);
        match want {
            Some(passage) => assert_eq!(
                got,
                Some(memoria::DocumentTarget {
                    id: id.to_string(),
                    passage
                }),
                "{raw:?}"
            ),
            None => assert_eq!(got, None, "{raw:?}"),
        }
    }
}
