//! `a2a mcp` driven by the official MCP Python SDK's client (PyPI `mcp`, pinned by
//! `tests/interop/requirements-mcp.txt`, installed by `tests/interop/setup.sh`;
//! `tests/interop/py_mcp_client.py`), over stdio (the SDK starts the binary) and over
//! streamable HTTP (`a2a mcp URL --http 127.0.0.1:0`), against the demo agent: the tools, ordered
//! progress notifications, an elicitation answered by the SDK's callback, an unknown tool's error.
//! Each transport is driven by both of the SDK's client APIs: `mcp.ClientSession` (the initialize
//! handshake, 2025-11-25, where the bridge elicits with an `elicitation/create` request) and the
//! high-level `mcp.Client(mode="auto")` (`server/discover`, stateless 2026-07-28, where the bridge
//! elicits with an `input_required` result that the client answers and retries by itself).
//!
//! A missing Python environment that cannot be installed fails the test with setup.sh's message
//! (what to install); nothing is skipped silently.

mod common;

use common::TestServer;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt as _, BufReader};

/// How long the Python client may run (it gives up by itself after 60 s).
const CLIENT_TIMEOUT: Duration = Duration::from_secs(90);

/// How long `a2a mcp --http` may take to say where it listens.
const LISTEN_TIMEOUT: Duration = Duration::from_secs(30);

/// The protocol version `mcp.ClientSession.initialize()` offers (the SDK's newest
/// initialize-handshake version), which the bridge accepts.
const HANDSHAKE_VERSION: &str = "2025-11-25";

/// The protocol version `mcp.Client(mode="auto")` reaches through `server/discover` (the SDK's
/// newest, stateless revision). The client silently falls back to the handshake when the probe
/// fails, so asserting it catches a bridge that stopped answering `server/discover`.
const DISCOVER_VERSION: &str = "2026-07-28";

/// Which of the SDK's client APIs `py_mcp_client.py` uses (its first argument).
#[derive(Clone, Copy)]
enum Mode {
    /// `mcp.ClientSession`: the initialize handshake.
    Session,
    /// `mcp.Client(mode="auto")`: `server/discover`, then 2026-07-28.
    Auto,
}

impl Mode {
    fn arg(self) -> &'static str {
        match self {
            Mode::Session => "session",
            Mode::Auto => "auto",
        }
    }

    fn protocol_version(self) -> &'static str {
        match self {
            Mode::Session => HANDSHAKE_VERSION,
            Mode::Auto => DISCOVER_VERSION,
        }
    }
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("a2a-client/ has a parent")
        .to_path_buf()
}

/// The Python of the venv with the MCP SDK, installed (or checked) once per test binary by
/// `tests/interop/setup.sh`. Panics with the script's output, which names what to install, when
/// that fails.
fn python() -> &'static Path {
    static PYTHON: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match PYTHON.get_or_init(set_up) {
        Ok(python) => python,
        Err(message) => panic!("{message}"),
    }
}

fn set_up() -> Result<PathBuf, String> {
    let root = repo_root();
    let script = root.join("tests/interop/setup.sh");
    let out = std::process::Command::new("bash")
        .arg(&script)
        .current_dir(&root)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run `bash {}`: {e} (install bash)", script.display()))?;
    if !out.status.success() {
        return Err(format!(
            "this test needs the official MCP Python SDK, and `bash tests/interop/setup.sh` could \
             not install it ({}). Install what it names below, then run it again.\n\
             --- setup.sh stdout ---\n{}\n--- setup.sh stderr ---\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let python = root.join(".scratch/interop/pymcp/bin/python");
    if !python.exists() {
        return Err(format!(
            "setup.sh succeeded but {} is missing; delete .scratch/interop and rerun it",
            python.display()
        ));
    }
    Ok(python)
}

/// Runs `py_mcp_client.py MODE args…` to the end and returns the JSON report it printed on
/// stdout. Panics (with its stderr, where the stdio bridge's logs go too) if it fails, hangs, or
/// prints no JSON.
async fn run_client(mode: Mode, args: &[&str]) -> Value {
    let what = format!("py_mcp_client.py {} {} (mcp 2.3.0)", mode.arg(), args[0]);
    let python = tokio::task::spawn_blocking(python)
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
    let script = repo_root().join("tests/interop/py_mcp_client.py");
    let child = tokio::process::Command::new(python)
        .arg(&script)
        .arg(mode.arg())
        .args(args)
        .current_dir(repo_root())
        .env("PYTHONUNBUFFERED", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what} ({}): {e}", python.display()));
    let out = tokio::time::timeout(CLIENT_TIMEOUT, child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within {CLIENT_TIMEOUT:?}"))
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{what} failed ({}).\n--- stderr ---\n{stderr}\n--- stdout ---\n{stdout}",
        out.status
    );
    serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!("{what} printed no JSON report ({e}).\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}")
    })
}

fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// What the SDK's client saw: the same as rmcp's client does in tests/mcp.rs, at `mode`'s
/// protocol version.
fn assert_report(mode: Mode, report: &Value) {
    assert_eq!(
        report["protocolVersion"],
        mode.protocol_version(),
        "negotiated: {report:#}"
    );
    assert_eq!(
        strings(&report["tools"]),
        ["echo", "countdown", "greet", "send_message"],
        "{report:#}"
    );

    let countdown = &report["countdown"];
    assert_eq!(countdown["isError"], false, "{report:#}");
    assert_eq!(strings(&countdown["text"]), ["3\n2\n1\n"], "{report:#}");
    let counted: Vec<&str> = strings(&countdown["progress"])
        .into_iter()
        .filter(|p| p.ends_with("..."))
        .collect();
    assert_eq!(counted, ["3...", "2...", "1..."], "{report:#}");

    let greet = &report["greet"];
    assert_eq!(greet["isError"], false, "{report:#}");
    assert_eq!(strings(&greet["text"]), ["Hello, Ada!"], "{report:#}");
    assert_eq!(
        strings(&greet["elicited"]),
        ["What is your name?"],
        "{report:#}"
    );

    let unknown = report["unknown_tool"].as_str().unwrap_or_else(|| {
        panic!("calling an unknown tool raised no MCP error: {report:#}");
    });
    assert!(unknown.contains("unknown tool"), "{report:#}");
}

/// The SDK starts `a2a mcp AGENT_URL` itself and talks over its stdin/stdout.
async fn over_stdio(mode: Mode) {
    let server = TestServer::demo().await;
    let report = run_client(mode, &["stdio", env!("CARGO_BIN_EXE_a2a"), &server.url]).await;
    assert_report(mode, &report);
}

/// The SDK talks to a running `a2a mcp AGENT_URL --http 127.0.0.1:0`.
async fn over_streamable_http(mode: Mode) {
    let server = TestServer::demo().await;
    let mut bridge = tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a"))
        .args(["mcp", &server.url, "--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("a2a mcp --http starts");
    let mut lines = BufReader::new(bridge.stderr.take().expect("stderr")).lines();
    let line = tokio::time::timeout(LISTEN_TIMEOUT, lines.next_line())
        .await
        .unwrap_or_else(|_| panic!("a2a mcp --http said nothing within {LISTEN_TIMEOUT:?}"))
        .expect("stderr")
        .expect("a line");
    let url = line
        .strip_prefix("a2a mcp: listening on ")
        .unwrap_or_else(|| panic!("not the listening line: {line:?}"))
        .to_owned();
    // The rest of the bridge's stderr (its logs) goes to the test's, shown when it fails.
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            eprintln!("a2a mcp --http: {line}");
        }
    });
    let report = run_client(mode, &["http", &url]).await;
    assert_report(mode, &report);
}

#[tokio::test(flavor = "multi_thread")]
async fn python_sdk_client_session_over_stdio() {
    over_stdio(Mode::Session).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn python_sdk_client_session_over_streamable_http() {
    over_streamable_http(Mode::Session).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn python_sdk_auto_client_over_stdio() {
    over_stdio(Mode::Auto).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn python_sdk_auto_client_over_streamable_http() {
    over_streamable_http(Mode::Auto).await;
}
