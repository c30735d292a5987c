//! Shared by the interop tests (`interop_*.rs`): the pinned official SDKs that
//! `tests/interop/setup.sh` installs under `.scratch/interop/`, our demo server in-process, the
//! peer programs of `tests/interop/` run as child processes, and readers of their JSON reports.
//!
//! A missing SDK environment that cannot be installed fails the test with setup.sh's message
//! (what to install); nothing is skipped silently.

#![allow(dead_code)] // each test binary uses a different part

pub(crate) mod h2_watch;

use a2a_server::Server;
use a2a_server::demo::DemoAgent;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::task::JoinHandle;

/// How long a peer program may run (each of them gives up by itself after 90 s).
pub(crate) const PEER_TIMEOUT: Duration = Duration::from_secs(120);

/// Where the pinned SDKs live.
#[derive(Debug)]
pub(crate) struct Env {
    /// `tests/interop/`: the peer programs.
    pub(crate) programs: PathBuf,
    /// The Python of the venv with a2a-sdk 1.3.0 (+ server extra, uvicorn).
    pub(crate) python_v1: PathBuf,
    /// The Python of the venv with a2a-sdk 0.3.26.
    pub(crate) python_v03: PathBuf,
    /// The npm project holding @a2a-js/sdk 1.3.0.
    pub(crate) js: PathBuf,
}

/// The repository root.
pub(crate) fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// The SDK environment, installed (or checked) once per test binary by `tests/interop/setup.sh`.
/// Panics with the script's output, which names what to install, when that fails.
pub(crate) fn env() -> &'static Env {
    static ENV: OnceLock<Result<Env, String>> = OnceLock::new();
    match ENV.get_or_init(set_up) {
        Ok(env) => env,
        Err(message) => panic!("{message}"),
    }
}

fn set_up() -> Result<Env, String> {
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
            "the interop tests need the official A2A SDKs, and `bash tests/interop/setup.sh` could \
             not install them ({}). Install what it names below, then run it again.\n\
             --- setup.sh stdout ---\n{}\n--- setup.sh stderr ---\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let scratch = root.join(".scratch/interop");
    let env = Env {
        programs: root.join("tests/interop"),
        python_v1: scratch.join("py1/bin/python"),
        python_v03: scratch.join("py03/bin/python"),
        js: scratch.join("js"),
    };
    for path in [&env.python_v1, &env.python_v03, &env.js] {
        if !path.exists() {
            return Err(format!(
                "setup.sh succeeded but {} is missing; delete .scratch/interop and rerun it",
                path.display()
            ));
        }
    }
    Ok(env)
}

/// Our demo agent (echo, `countdown N`, `greet`) served in-process on 127.0.0.1 with a memory
/// store; stopped when dropped.
#[derive(Debug)]
pub(crate) struct OurServer {
    /// `http://127.0.0.1:<port>`, also the card's interface URL.
    pub(crate) url: String,
    serve: JoinHandle<()>,
}

impl OurServer {
    pub(crate) async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let url = format!("http://{}", listener.local_addr().expect("local addr"));
        let server = Server::builder(DemoAgent)
            .agent_card(DemoAgent::card())
            .public_url(&url)
            .build()
            .expect("the demo server builds");
        let serve = tokio::spawn(async move {
            server.serve(listener).await.expect("serve");
        });
        Self { url, serve }
    }
}

impl Drop for OurServer {
    fn drop(&mut self) {
        self.serve.abort();
    }
}

/// Runs a peer program to the end and returns the JSON report it printed on stdout. Panics
/// (with its stderr) if it fails, hangs, or prints no JSON.
pub(crate) async fn run_peer(what: &str, program: &Path, args: &[&str]) -> Value {
    let env = env();
    let child = tokio::process::Command::new(program)
        .args(args)
        .current_dir(repo_root())
        .env("A2A_INTEROP_JS", &env.js)
        .env("PYTHONUNBUFFERED", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what} ({}): {e}", program.display()));
    let out = tokio::time::timeout(PEER_TIMEOUT, child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within {PEER_TIMEOUT:?}"))
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

/// A peer's A2A server (a child process), killed when dropped.
#[derive(Debug)]
pub(crate) struct PeerServer {
    /// `http://127.0.0.1:<port>`.
    pub(crate) base: String,
    child: tokio::process::Child,
    stderr: Arc<Mutex<String>>,
}

impl PeerServer {
    /// Starts `program args…`, which must print `LISTENING <port>` on stdout once it listens on
    /// 127.0.0.1.
    pub(crate) async fn start(what: &str, program: &Path, args: &[&str]) -> Self {
        let mut child = tokio::process::Command::new(program)
            .args(args)
            .current_dir(repo_root())
            .env("A2A_INTEROP_JS", &env().js)
            .env("PYTHONUNBUFFERED", "1")
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {what} ({}): {e}", program.display()));
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut pipe = child.stderr.take().expect("stderr piped");
        let sink = stderr.clone();
        tokio::spawn(async move {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .expect("stderr buffer")
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let mut lines = BufReader::new(child.stdout.take().expect("stdout piped")).lines();
        let first = tokio::time::timeout(Duration::from_secs(60), lines.next_line()).await;
        let port = match first {
            Ok(Ok(Some(ref line))) => line
                .strip_prefix("LISTENING ")
                .and_then(|p| p.trim().parse::<u16>().ok()),
            _ => None,
        };
        let Some(port) = port else {
            let _ = child.kill().await;
            tokio::time::sleep(Duration::from_millis(100)).await;
            panic!(
                "{what} did not start (expected `LISTENING <port>` on stdout, got {first:?}).\n\
                 --- stderr ---\n{}",
                stderr.lock().expect("stderr buffer")
            );
        };
        // Keep draining stdout so the child never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Self {
            base: format!("http://127.0.0.1:{port}"),
            child,
            stderr,
        }
    }

    /// What the server wrote on stderr so far (for failure messages).
    pub(crate) fn stderr(&self) -> String {
        self.stderr.lock().expect("stderr buffer").clone()
    }
}

/// The JS SDK's echo agent (`tests/interop/js_server.mjs`, @a2a-js/sdk 1.3.0 on express) on a
/// free port: its card at `<base>/echo/.well-known/agent-card.json`, JSON-RPC at
/// `<base>/echo/jsonrpc`, HTTP+JSON at `<base>/echo/rest`.
pub(crate) async fn js_server() -> PeerServer {
    let script = env().programs.join("js_server.mjs");
    PeerServer::start(
        "js_server.mjs (@a2a-js/sdk 1.3.0)",
        Path::new("node"),
        &[script.to_str().expect("utf-8 path"), "0"],
    )
    .await
}

impl Drop for PeerServer {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

/// The result of one scenario of a peer's report; panics with the peer's own error if the
/// scenario raised there.
pub(crate) fn scenario<'r>(report: &'r Value, name: &str) -> &'r Value {
    let value = report
        .get(name)
        .unwrap_or_else(|| panic!("the peer's report has no scenario {name:?}:\n{report:#}"));
    if let Some(error) = value.get("error") {
        let trace = value
            .get("trace")
            .or_else(|| value.get("stack"))
            .cloned()
            .unwrap_or_default();
        panic!("scenario {name:?} raised in the peer SDK: {error}\n{trace:#}");
    }
    value
}

/// A string field of a report object.
pub(crate) fn s<'v>(value: &'v Value, key: &str) -> &'v str {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no string {key:?} in {value:#}"))
}

/// The array of a report value.
pub(crate) fn arr(value: &Value) -> &Vec<Value> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("expected an array, got {value:#}"))
}

/// The artifact texts of a task summary.
pub(crate) fn artifacts(task: &Value) -> Vec<&str> {
    arr(&task["artifacts"])
        .iter()
        .map(|a| a.as_str().expect("artifact text"))
        .collect()
}

/// Whether an event summary is an artifact update (v1.0 or v0.3 spelling).
pub(crate) fn is_artifact_update(event: &Value) -> bool {
    matches!(
        event["kind"].as_str(),
        Some("artifactUpdate" | "artifact-update")
    )
}

/// Whether an event summary is a status update (v1.0 or v0.3 spelling).
pub(crate) fn is_status_update(event: &Value) -> bool {
    matches!(
        event["kind"].as_str(),
        Some("statusUpdate" | "status-update")
    )
}

/// Folds summarized stream events (a task snapshot, then artifact chunks) into the artifact
/// text a client ends up with: `append: true` adds to the artifact, anything else restarts it.
pub(crate) fn assembled_artifact(events: &[Value]) -> String {
    let mut text = String::new();
    for event in events {
        if event["kind"] == "task" {
            text = artifacts(event).concat();
        } else if is_artifact_update(event) {
            if event["append"] == Value::Bool(true) {
                text.push_str(s(event, "text"));
            } else {
                text = s(event, "text").to_owned();
            }
        }
    }
    text
}

/// The state an event summary reports (task snapshot or status update), if any.
pub(crate) fn event_state(event: &Value) -> Option<&str> {
    event.get("state").and_then(Value::as_str)
}

/// Checks a summarized stream of the demo agent's countdown for one task: it starts with the
/// task, every event belongs to it, the chunks assemble to `expected_artifact`, and it ends
/// with the terminal `completed` status update ("Liftoff!") and nothing after it.
pub(crate) fn assert_countdown_stream(
    events: &[Value],
    expected_artifact: &str,
    completed: &str,
    active: [&str; 2],
) {
    assert!(!events.is_empty(), "empty stream");
    let first = &events[0];
    assert_eq!(
        first["kind"], "task",
        "the first event must be the task: {first:#}"
    );
    let id = s(first, "id");
    for event in &events[1..] {
        assert_eq!(
            s(event, "taskId"),
            id,
            "an event of another task: {event:#}"
        );
        assert!(
            is_artifact_update(event) || is_status_update(event),
            "unexpected event after the task: {event:#}"
        );
    }
    assert_eq!(assembled_artifact(events), expected_artifact, "{events:#?}");
    let last = events.last().expect("non-empty");
    assert!(
        is_status_update(last),
        "the stream must end with a status update: {last:#}"
    );
    assert_eq!(event_state(last), Some(completed), "{last:#}");
    assert_eq!(last["text"], "Liftoff!", "{last:#}");
    for event in &events[..events.len() - 1] {
        if let Some(state) = event_state(event) {
            assert!(
                active.contains(&state),
                "only {active:?} before the end: {event:#}"
            );
        }
    }
}

/// Task state names as a peer reports them: v1.0 enum names or v0.3 lowercase values.
#[derive(Clone, Copy, Debug)]
pub(crate) struct States {
    pub(crate) submitted: &'static str,
    pub(crate) working: &'static str,
    pub(crate) completed: &'static str,
    pub(crate) canceled: &'static str,
    pub(crate) input_required: &'static str,
}

/// v1.0 state names.
pub(crate) const V1: States = States {
    submitted: "TASK_STATE_SUBMITTED",
    working: "TASK_STATE_WORKING",
    completed: "TASK_STATE_COMPLETED",
    canceled: "TASK_STATE_CANCELED",
    input_required: "TASK_STATE_INPUT_REQUIRED",
};

/// v0.3 state names.
pub(crate) const V03: States = States {
    submitted: "submitted",
    working: "working",
    completed: "completed",
    canceled: "canceled",
    input_required: "input-required",
};

impl States {
    fn active(self) -> [&'static str; 2] {
        [self.submitted, self.working]
    }
}

/// `send_blocking`: a default (blocking) send of `text` came back as the completed task with
/// the artifact `echo: <text>`.
pub(crate) fn assert_send_blocking(v: &Value, text: &str, st: States) {
    assert_eq!(v["kind"], "task", "{v:#}");
    assert!(
        !s(v, "id").is_empty() && !s(v, "contextId").is_empty(),
        "{v:#}"
    );
    assert_eq!(
        s(v, "state"),
        st.completed,
        "a blocking send returns the finished task: {v:#}"
    );
    assert_eq!(artifacts(v), [format!("echo: {text}")], "{v:#}");
}

/// `send_return_immediately` / `send_non_blocking` of `countdown 2`: the first answer is the
/// task still active; polling GetTask later sees it completed with the merged artifact.
pub(crate) fn assert_return_immediately(v: &Value, st: States) {
    let first = &v["first"];
    let last = &v["final"];
    assert!(
        st.active().contains(&s(first, "state")),
        "return-immediately must not wait for the countdown: {first:#}"
    );
    assert!(
        last.is_object(),
        "the task never completed while polled: {v:#}"
    );
    assert_eq!(s(last, "id"), s(first, "id"), "{v:#}");
    assert_eq!(s(last, "contextId"), s(first, "contextId"), "{v:#}");
    assert_eq!(s(last, "state"), st.completed, "{v:#}");
    assert_eq!(
        artifacts(last),
        ["2\n1\n"],
        "chunks merged in the stored task: {v:#}"
    );
    assert_eq!(last["statusText"], "Liftoff!", "{v:#}");
}

/// `cancel_running`: `countdown 20` started with return-immediately, canceled: the cancel
/// answer and a later GetTask both say CANCELED.
pub(crate) fn assert_cancel_running(v: &Value, st: States) {
    let id = s(&v["started"], "id");
    assert!(st.active().contains(&s(&v["started"], "state")), "{v:#}");
    for key in ["cancel", "after"] {
        assert_eq!(s(&v[key], "id"), id, "{key}: {v:#}");
        assert_eq!(s(&v[key], "state"), st.canceled, "{key}: {v:#}");
    }
}

/// `subscribe_running`: a subscription to a running `countdown 10` starts with the task
/// snapshot and follows it to COMPLETED, the artifact assembling to `10\n9\n…1\n`.
pub(crate) fn assert_subscribe_running(v: &Value, st: States) {
    let events = arr(&v["events"]);
    assert_eq!(s(&events[0], "id"), s(v, "taskId"), "{v:#}");
    let expected: String = (1..=10).rev().map(|i| format!("{i}\n")).collect();
    assert_countdown_stream(events, &expected, st.completed, st.active());
}

/// `multi_turn`: `greet` stops at INPUT_REQUIRED with the question; the answer `Ada` sent in
/// the same task completes it with `Hello, Ada!`.
pub(crate) fn assert_multi_turn(v: &Value, st: States) {
    let asked = &v["asked"];
    let answered = &v["answered"];
    assert_eq!(s(asked, "state"), st.input_required, "{v:#}");
    assert_eq!(asked["statusText"], "What is your name?", "{v:#}");
    assert_eq!(
        s(answered, "id"),
        s(asked, "id"),
        "the answer continues the task: {v:#}"
    );
    assert_eq!(s(answered, "contextId"), s(asked, "contextId"), "{v:#}");
    assert_eq!(s(answered, "state"), st.completed, "{v:#}");
    assert_eq!(answered["statusText"], "Hello, Ada!", "{v:#}");
}

/// A v0.3 stream (`message/stream`, `tasks/resubscribe`): its last status-update, and only
/// that one, carries `final: true`.
pub(crate) fn assert_v03_final_flags(events: &[Value]) {
    let finals: Vec<bool> = events
        .iter()
        .filter(|e| is_status_update(e))
        .map(|e| e["final"] == true)
        .collect();
    assert_eq!(
        finals.last(),
        Some(&true),
        "the last status-update has final: true: {events:#?}"
    );
    assert!(
        finals[..finals.len() - 1].iter().all(|f| !f),
        "only the last status-update is final: {events:#?}"
    );
    assert!(
        is_status_update(events.last().expect("events")),
        "nothing after the final status-update: {events:#?}"
    );
}

/// The scenarios a v0.3 client report shares (py03_client.py, js03_client.mjs): blocking and
/// non-blocking sends, get, cancel, resubscribe, multi-turn, all with v0.3 state names.
pub(crate) fn assert_v03_common(report: &Value, hello: &str) {
    assert_send_blocking(scenario(report, "send_blocking"), hello, V03);
    assert_return_immediately(scenario(report, "send_non_blocking"), V03);
    let v = scenario(report, "get");
    assert_eq!(s(&v["got"], "id"), s(&v["sent"], "id"), "{v:#}");
    assert_eq!(s(&v["got"], "kind"), "task", "{v:#}");
    assert_eq!(s(&v["got"], "state"), V03.completed, "{v:#}");
    assert_eq!(artifacts(&v["got"]), ["echo: get me"], "{v:#}");
    assert_cancel_running(scenario(report, "cancel_running"), V03);
    let v = scenario(report, "subscribe_running");
    assert_subscribe_running(v, V03);
    assert_v03_final_flags(arr(&v["events"]));
    assert_multi_turn(scenario(report, "multi_turn"), V03);
}

/// `a2a check` (the library call behind it) run against a peer's agent at `url`: unpaced (a
/// local agent), with a deadline far above a run's length. Returns its failures, one
/// `Finding::line` each, and the report's table for assertion messages.
pub(crate) async fn check_failures(url: &str) -> (Vec<String>, String) {
    let mut options = a2a_client::check::Options::default();
    options.rate = 200.0;
    options.deadline = Duration::from_secs(90);
    let report = a2a_client::check::run(url, &options).await;
    assert!(report.complete(), "{}", report.table());
    (report.failures(), report.table())
}
