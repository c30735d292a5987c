//! Metrics count exactly the traffic they saw (scraped over HTTP, as Prometheus does), and the
//! binary's telemetry configuration never costs a request: an unreachable collector or an
//! endpoint that does not parse gets a warning, and the server serves.

use a2a_core::{Artifact, Error};
use a2a_server::auth::BearerTokens;
use a2a_server::push::PushSettings;
use a2a_server::{Agent, Metrics, RequestContext, Server, TaskEvents};
use axum::http::StatusCode;
use futures::StreamExt as _;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::{BufRead as _, Read as _};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

mod process;
use process::Process;

const WAIT: Duration = Duration::from_secs(20);

/// Answers `echo: <text>` as an artifact, then completes.
struct Echo;

impl Agent for Echo {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        let text = format!("echo: {}", cx.message.text());
        events.artifact(Artifact::text("echo", text)).await?;
        events.complete(None).await
    }
}

/// The samples of a scrape: `name{labels}` → value (labels as written).
fn samples(text: &str) -> HashMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| {
            let (key, value) = l.rsplit_once(' ')?;
            Some((key.to_owned(), value.parse().ok()?))
        })
        .collect()
}

static NEXT: AtomicU64 = AtomicU64::new(1);

fn send(method: &str, text: &str, push: Option<&str>) -> Value {
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let mut params = json!({
        "message": {"role": "ROLE_USER", "parts": [{"text": text}], "messageId": format!("m-{n}")},
    });
    if let Some(url) = push {
        params["configuration"] = json!({"taskPushNotificationConfig": {"url": url}});
    }
    json!({"jsonrpc": "2.0", "id": n, "method": method, "params": params})
}

/// A webhook that always answers 200.
async fn webhook() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let app = axum::Router::new().route("/hook", axum::routing::post(|| async { StatusCode::OK }));
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

/// A URL nothing listens on.
async fn refused() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    drop(listener);
    url
}

#[tokio::test]
async fn metrics_count_exactly_the_traffic_they_saw() {
    let metrics = Metrics::new();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = Server::builder(Echo)
        .public_url(&base)
        .authenticator(BearerTokens::each_its_own(["right"]))
        .push_notifications(
            PushSettings::default()
                .allow("127.0.0.1")
                .unwrap()
                .max_attempts(2)
                .backoff(Duration::from_millis(10), Duration::from_millis(10)),
        )
        .metrics(metrics.clone())
        .build()
        .unwrap();
    tokio::spawn(server.serve(listener));
    let scrape_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let scrape_url = format!("http://{}/metrics", scrape_listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(scrape_listener, metrics.router()).await });
    let http = reqwest::Client::new();
    let post = |body: Value, token: &str| {
        http.post(&base)
            .header("A2A-Version", "1.0")
            .bearer_auth(token)
            .json(&body)
            .send()
    };

    // Three sends (one with a webhook that takes everything, one with a webhook that refuses
    // everything), a GetTask of an unknown task and one over HTTP+JSON of a known task, one
    // stream read to its end, and two calls without valid credentials.
    let hook = webhook().await;
    let dead = refused().await;
    let mut task_id = String::new();
    for push in [None, Some(hook.as_str()), Some(dead.as_str())] {
        let answer: Value = post(send("SendMessage", "hi", push), "right")
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(
            answer["result"]["task"]["status"]["state"],
            "TASK_STATE_COMPLETED"
        );
        task_id = answer["result"]["task"]["id"].as_str().unwrap().to_owned();
    }
    let unknown =
        json!({"jsonrpc": "2.0", "id": 99, "method": "GetTask", "params": {"id": "nope"}});
    let answer: Value = post(unknown, "right").await.unwrap().json().await.unwrap();
    assert_eq!(answer["error"]["code"], -32001);
    let known = http
        .get(format!("{base}/tasks/{task_id}"))
        .bearer_auth("right")
        .send()
        .await
        .unwrap();
    assert_eq!(known.status(), StatusCode::OK);
    let stream = post(send("SendStreamingMessage", "hi", None), "right")
        .await
        .unwrap();
    let body: Vec<_> = stream.bytes_stream().collect().await;
    assert!(body.iter().all(Result::is_ok));
    let missing = http
        .post(&base)
        .header("A2A-Version", "1.0")
        .json(&send("SendMessage", "x", None))
        .send();
    assert_eq!(missing.await.unwrap().status(), StatusCode::UNAUTHORIZED);
    let invalid = post(send("SendMessage", "x", None), "wrong").await.unwrap();
    assert_eq!(invalid.status(), StatusCode::UNAUTHORIZED);

    // The webhooks settle (two events delivered; the refused one retried once, then given
    // up), and the stream's body is gone.
    let scrape = || async {
        let response = http.get(&scrape_url).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let content_type = response.headers()["content-type"]
            .to_str()
            .unwrap()
            .to_owned();
        assert!(
            content_type.starts_with("application/openmetrics-text"),
            "{content_type}"
        );
        samples(&response.text().await.unwrap())
    };
    let settled = tokio::time::timeout(WAIT, async {
        loop {
            let s = scrape().await;
            if s.get("a2a_push_deliveries_total") == Some(&2.0)
                && s.get("a2a_push_dead_letters_total") == Some(&1.0)
                && s.get(
                    r#"a2a_server_open_streams{method="SendStreamingMessage",binding="JSONRPC"}"#,
                ) == Some(&0.0)
            {
                return s;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the webhooks and the stream settle");

    let expected = [
        (
            r#"a2a_server_requests_total{method="SendMessage",binding="JSONRPC",outcome="ok"}"#,
            3.0,
        ),
        (
            r#"a2a_server_requests_total{method="SendStreamingMessage",binding="JSONRPC",outcome="ok"}"#,
            1.0,
        ),
        (
            r#"a2a_server_requests_total{method="GetTask",binding="JSONRPC",outcome="TASK_NOT_FOUND"}"#,
            1.0,
        ),
        (
            r#"a2a_server_requests_total{method="GetTask",binding="HTTP+JSON",outcome="ok"}"#,
            1.0,
        ),
        (
            r#"a2a_server_requests_total{method="unknown",binding="JSONRPC",outcome="UNAUTHENTICATED"}"#,
            2.0,
        ),
        (
            r#"a2a_server_request_duration_seconds_count{method="SendMessage",binding="JSONRPC"}"#,
            3.0,
        ),
        (r#"a2a_server_auth_failures_total{reason="missing"}"#, 1.0),
        (r#"a2a_server_auth_failures_total{reason="invalid"}"#, 1.0),
        (
            r#"a2a_task_transitions_total{state="TASK_STATE_SUBMITTED"}"#,
            4.0,
        ),
        (
            r#"a2a_task_transitions_total{state="TASK_STATE_COMPLETED"}"#,
            4.0,
        ),
        (r#"a2a_tasks_active{state="TASK_STATE_SUBMITTED"}"#, 0.0),
        (
            r#"a2a_task_duration_seconds_count{state="TASK_STATE_COMPLETED"}"#,
            4.0,
        ),
        (r#"a2a_events_appended_total{kind="task"}"#, 4.0),
        (r#"a2a_events_appended_total{kind="status"}"#, 4.0),
        (
            r#"a2a_store_operation_duration_seconds_count{operation="create"}"#,
            4.0,
        ),
        ("a2a_push_deliveries_total", 2.0),
        ("a2a_push_retries_total", 1.0),
        ("a2a_push_dead_letters_total", 1.0),
    ];
    for (sample, value) in expected {
        assert_eq!(settled.get(sample), Some(&value), "{sample}");
    }
    // Nothing else was counted as a request.
    let requests: f64 = settled
        .iter()
        .filter(|(k, _)| k.starts_with("a2a_server_requests_total{"))
        .map(|(_, v)| v)
        .sum();
    assert_eq!(requests, 8.0);

    // This traffic touched every family: the dashboard shows them all, and nothing else.
    let text = http
        .get(&scrape_url)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(text.matches("# TYPE ").count(), 12, "{text}");
    check_dashboard(&text);
}

/// Twenty sends, each answered completed within a second; then SIGTERM, and the process
/// ends within `exit`. Its stderr.
async fn serves_then_stops(mut server: Process, exit: Duration) -> String {
    let url = server.url.clone();
    let http = reqwest::Client::new();
    for _ in 0..20 {
        let started = Instant::now();
        let answer: Value = http
            .post(&url)
            .header("A2A-Version", "1.0")
            .json(&send("SendMessage", "hi", None))
            .timeout(Duration::from_secs(1))
            .send()
            .await
            .expect("answered in time")
            .json()
            .await
            .unwrap();
        assert_eq!(
            answer["result"]["task"]["status"]["state"],
            "TASK_STATE_COMPLETED"
        );
        assert!(started.elapsed() < Duration::from_secs(1));
    }
    let pid = server.child.id().to_string();
    Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    let started = Instant::now();
    loop {
        if server.child.try_wait().unwrap().is_some() {
            break;
        }
        assert!(started.elapsed() < exit, "the server stops in time");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut stderr = String::new();
    server
        .child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    stderr
}

#[tokio::test]
async fn an_unreachable_collector_costs_no_request() {
    let closed = refused().await;
    let collector = closed.trim_end_matches("/hook");
    let server = Process::with_stderr(&[
        "--memory",
        "--otlp-endpoint",
        collector,
        "--log-format",
        "json",
    ]);
    // The spans of twenty requests are queued for a collector that refuses connections: the
    // requests do not wait, and the exit waits a bounded time for them.
    serves_then_stops(server, Duration::from_secs(10)).await;
}

#[tokio::test]
async fn an_endpoint_that_does_not_parse_gets_a_warning_and_the_server_serves() {
    let server = Process::with_stderr(&["--memory", "--otlp-endpoint", "not a url"]);
    let stderr = serves_then_stops(server, Duration::from_secs(10)).await;
    assert!(
        stderr.contains("traces are not exported") && stderr.contains("not a url"),
        "a warning naming the endpoint, in {stderr}"
    );
}

#[tokio::test]
async fn the_binary_serves_its_metrics_on_their_own_listener() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_a2a-server"))
        .args([
            "--memory",
            "--listen",
            "127.0.0.1:0",
            "--metrics-listen",
            "127.0.0.1:0",
        ])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the a2a-server binary starts");
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut urls = HashMap::new();
    for _ in 0..2 {
        let line = lines.next().unwrap().unwrap();
        let url = line.rsplit(' ').next().unwrap().to_owned();
        urls.insert(
            if line.contains("metrics") {
                "metrics"
            } else {
                "a2a"
            },
            url,
        );
    }
    let http = reqwest::Client::new();
    let answer = http
        .post(&urls["a2a"])
        .header("A2A-Version", "1.0")
        .json(&send("SendMessage", "hi", None))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), StatusCode::OK);
    let text = http
        .get(&urls["metrics"])
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let s = samples(&text);
    assert_eq!(
        s.get(r#"a2a_server_requests_total{method="SendMessage",binding="JSONRPC",outcome="ok"}"#),
        Some(&1.0),
        "{text}"
    );
    let _ = child.kill();
    let _ = child.wait();
}

/// The Grafana dashboard in the repository names only metrics of `text` (a scrape in which
/// every family has samples), and every family of it.
fn check_dashboard(text: &str) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/grafana/a2a-dashboard.json"
    );
    let dashboard: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    // Every metric family the server has, with the series names it writes.
    let families: Vec<(&str, &str)> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split_once(' '))
        .collect();
    let series = |family: &str, kind: &str| -> Vec<String> {
        match kind {
            "counter" => vec![format!("{family}_total")],
            "histogram" => ["_bucket", "_sum", "_count"]
                .iter()
                .map(|s| format!("{family}{s}"))
                .collect(),
            _ => vec![family.to_owned()],
        }
    };
    let known: Vec<String> = families.iter().flat_map(|(f, k)| series(f, k)).collect();
    let mut named = 0;
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            let expr = target["expr"].as_str().unwrap();
            let names = expr
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .filter(|w| w.starts_with("a2a_"));
            for name in names {
                assert!(
                    known.iter().any(|k| k == name),
                    "{name} (in {expr:?}) is not exported"
                );
                named += 1;
            }
        }
    }
    assert!(named >= 10);
    // And every family the server exports is on the dashboard.
    let exprs = dashboard.to_string();
    for (family, _) in &families {
        assert!(
            exprs.contains(family),
            "{family} is missing from the dashboard"
        );
    }
}
