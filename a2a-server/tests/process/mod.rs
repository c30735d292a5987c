//! A real `a2a-server` process (the binary, with the `cli` feature), and a small SSE reader
//! over reqwest, for the tests that kill servers.

#![allow(dead_code, unreachable_pub)]

use futures::StreamExt as _;
use serde_json::Value;
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use tokio::time::timeout;

const WAIT: Duration = Duration::from_secs(20);

/// A running server process, killed when dropped.
pub struct Process {
    pub child: Child,
    pub url: String,
}

impl Process {
    /// Starts the server binary on `dir`, on a port it picks itself (no race with other
    /// processes for a port), and waits for its "listening on" line.
    pub fn start(dir: &std::path::Path) -> Process {
        Self::with_args(&["--data-dir", dir.to_str().unwrap()])
    }

    /// Starts the server binary with these arguments (and `--listen 127.0.0.1:0
    /// --retention-hours 0`), and waits for its "listening on" line.
    pub fn with_args(args: &[&str]) -> Process {
        // A2A_TEST_SERVER_LOGS=1 shows the servers' logs (to debug a failing test).
        let stderr = if std::env::var_os("A2A_TEST_SERVER_LOGS").is_some() {
            Stdio::inherit()
        } else {
            Stdio::null()
        };
        Self::spawn(args, stderr)
    }

    /// [`Process::with_args`], its stderr kept for the test to read (`child.stderr`).
    pub fn with_stderr(args: &[&str]) -> Process {
        Self::spawn(args, Stdio::piped())
    }

    /// [`Process::start`] with these variables added to its environment (a fault to inject).
    pub fn with_env(dir: &std::path::Path, env: &[(&str, &str)]) -> Process {
        Self::spawn_with(&["--data-dir", dir.to_str().unwrap()], Stdio::null(), env)
    }

    /// [`Process::with_args`] with these variables added to its environment (a fault to
    /// inject).
    pub fn with_args_env(args: &[&str], env: &[(&str, &str)]) -> Process {
        Self::spawn_with(args, Stdio::null(), env)
    }

    /// Waits for the process to exit by itself; returns its status.
    pub async fn exited(&mut self) -> std::process::ExitStatus {
        timeout(WAIT, async {
            loop {
                if let Some(status) = self.child.try_wait().expect("the child's status") {
                    return status;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
        .expect("the server process exits")
    }

    fn spawn(args: &[&str], stderr: Stdio) -> Process {
        Self::spawn_with(args, stderr, &[])
    }

    fn spawn_with(args: &[&str], stderr: Stdio, env: &[(&str, &str)]) -> Process {
        use std::io::BufRead as _;
        let mut child = Command::new(env!("CARGO_BIN_EXE_a2a-server"))
            .args(args)
            .args(["--listen", "127.0.0.1:0"])
            .args(["--retention-hours", "0"])
            .env("RUST_LOG", "warn")
            .envs(env.iter().copied())
            // The machine's own trace export settings are not the test's.
            .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
            .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("the a2a-server binary starts");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("a2a-server listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_owned();
        Process { child, url }
    }

    pub async fn ready(&self, http: &reqwest::Client) {
        let card = format!("{}/.well-known/agent-card.json", self.url);
        timeout(WAIT, async {
            loop {
                if http
                    .get(&card)
                    .send()
                    .await
                    .is_ok_and(|r| r.status().is_success())
                {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
        .expect("the server comes up");
    }

    pub fn kill9(&mut self) {
        self.child.kill().expect("SIGKILL"); // Child::kill is SIGKILL on Unix
        self.child.wait().expect("reaped");
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One SSE event: its `id:` and its `data:` JSON.
#[derive(Clone, Debug, PartialEq)]
pub struct Sse {
    pub id: u64,
    pub data: Value,
}

/// Sends `body` as a SendMessage to `server`, which has a fault set (`A2A_FAULT`) that aborts
/// it before it answers, and sees it abort.
pub async fn aborts_before_answering(mut server: Process, http: &reqwest::Client, body: &Value) {
    server.ready(http).await;
    let first = http
        .post(format!("{}/message:send", server.url))
        .json(body)
        .send()
        .await;
    assert!(
        first.is_err(),
        "the server aborts before it answers: {first:?}"
    );
    assert!(!server.exited().await.success(), "the server aborted");
}

/// Reads SSE events from a response until it ends or breaks; returns what arrived.
pub async fn read_sse(response: reqwest::Response, into: &mut Vec<Sse>) {
    read_sse_until(response, into, usize::MAX).await;
}

/// Reads SSE events from a response until `into` holds `n` events, or the stream ends or
/// breaks (then drops the stream).
pub async fn read_sse_until(response: reqwest::Response, into: &mut Vec<Sse>, n: usize) {
    let mut body = response.bytes_stream();
    let mut buf = String::new();
    let (mut id, mut data) = (0u64, String::new());
    while let Some(Ok(chunk)) = body.next().await {
        buf.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(pos) = buf.find('\n') {
            let line: String = buf.drain(..=pos).collect();
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                if !data.is_empty() {
                    into.push(Sse {
                        id,
                        data: serde_json::from_str(&data).expect("SSE data is JSON"),
                    });
                    if into.len() >= n {
                        return;
                    }
                }
                (id, data) = (0, String::new());
            } else if let Some(v) = line.strip_prefix("id:") {
                id = v.trim().parse().unwrap_or(0);
            } else if let Some(v) = line.strip_prefix("data:") {
                data.push_str(v.trim_start());
            }
        }
    }
}

/// The whole log of a task, replayed with `Last-Event-ID: 0`.
pub async fn full_log(http: &reqwest::Client, url: &str, task: &str) -> Vec<Sse> {
    let response = http
        .get(format!("{url}/tasks/{task}:subscribe"))
        .header("Last-Event-ID", "0")
        .send()
        .await
        .unwrap();
    assert!(
        response.status().is_success(),
        "replay of {task}: {}",
        response.status()
    );
    let mut events = Vec::new();
    timeout(WAIT, read_sse(response, &mut events))
        .await
        .expect("a finished task's replay ends");
    events
}

pub fn task_id_of(events: &[Sse]) -> Option<String> {
    events
        .first()
        .and_then(|e| e.data["task"]["id"].as_str())
        .map(str::to_owned)
}
