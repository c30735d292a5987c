//! A deliberately non-conformant A2A agent, the target of conformance-checker tests.
//!
//! [`BrokenAgent::start`] serves it on `127.0.0.1:0`; the card and a JSON-RPC endpoint at
//! `<url>/rpc` look plausible, but each of the following faults is deliberate (a test pins a
//! checker's findings against exactly this list, so keep it in step with the code):
//!
//! **Agent card** (`GET /.well-known/agent-card.json`, always 200, `application/json`):
//! - the card lacks the REQUIRED `description` and `version` fields, and has no `skills` key
//!   (it has `name: "broken agent"`, `capabilities: {"streaming": true}`, text/plain default
//!   modes and one JSONRPC `supportedInterfaces` entry at `<url>/rpc`, protocol version 1.0);
//! - no `Cache-Control` and no `ETag` header;
//! - `If-None-Match` is ignored (always a full 200, never 304).
//!
//! (`GET /.well-known/agent.json` is a 404, which is not a fault.)
//!
//! **JSON-RPC** (`POST /rpc`, every non-streaming answer HTTP 200 `application/json`):
//! - a body that is not JSON gets `-32600` Invalid Request (should be `-32700` Parse error),
//!   with `id: null`;
//! - an unknown method in a valid envelope gets `-32603` Internal error (should be `-32601`
//!   Method not found), echoing the id;
//! - any `A2A-Version` header is accepted, e.g. `9.9` (should be `-32009` Version not
//!   supported);
//! - `GetTask` / `CancelTask` / `SubscribeToTask` on an unknown task id get `-32001`
//!   "Task not found" without any `data` (the `google.rpc.ErrorInfo` is missing);
//! - invalid params get `{"code": -32602, "message": "Invalid params"}` without any `data`
//!   (the ErrorInfo is missing);
//! - `GetTask` ignores `historyLength`: with `historyLength: 0` the task still carries its
//!   history;
//! - `ListTasks` is "not implemented": `-32601` Method not found;
//! - `SendStreamingMessage` streams `task` (SUBMITTED), `statusUpdate` (WORKING),
//!   `artifactUpdate`, `statusUpdate` (COMPLETED), and then never closes the stream: it sends a
//!   `: keep-alive` comment every second until the client goes away (or the agent is dropped);
//! - `SubscribeToTask` on a known task, which is always in a terminal state (COMPLETED),
//!   streams the task snapshot and closes (should be `-32004` Unsupported operation).
//!
//! What it does right: `"jsonrpc": "1.0"` or a missing `method` get `-32600` (echoing the
//! id); `SendMessage` answers `{"task": T}` with T COMPLETED, one artifact `a1` whose text is
//! `echo: <text of the message's first part>`, and the message (with `taskId`/`contextId`
//! set) as history; `GetTask` returns that same task; `CancelTask` on a known (completed)
//! task gets `-32002` with the correct ErrorInfo (`TASK_NOT_CANCELABLE`, `a2a-protocol.org`).

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header::CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use chrono::{SecondsFormat, Utc};
use futures::StreamExt;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// A running broken agent on `127.0.0.1` (an OS-chosen port). Dropping it stops the server,
/// including any never-ending stream it is still sending.
#[derive(Debug)]
pub struct BrokenAgent {
    /// `http://127.0.0.1:PORT`; the JSON-RPC endpoint is `<url>/rpc`.
    pub url: String,
    shutdown: CancellationToken,
    serving: JoinHandle<()>,
}

#[derive(Debug)]
struct Shared {
    url: String,
    tasks: Mutex<HashMap<String, Value>>,
    shutdown: CancellationToken,
}

impl BrokenAgent {
    /// Binds `127.0.0.1:0` and serves the broken agent in a background task.
    pub async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        let url = format!("http://{addr}");
        let shutdown = CancellationToken::new();
        let shared = Arc::new(Shared {
            url: url.clone(),
            tasks: Mutex::new(HashMap::new()),
            shutdown: shutdown.clone(),
        });
        let app = Router::new()
            .route("/.well-known/agent-card.json", get(card))
            .route("/rpc", post(rpc))
            .with_state(shared);
        let serving = tokio::spawn(async move {
            // Serving only ends with an accept error, which there is nobody to report to.
            let _ = axum::serve(listener, app).await;
        });
        Self {
            url,
            shutdown,
            serving,
        }
    }
}

impl Drop for BrokenAgent {
    fn drop(&mut self) {
        // Ends the endless streams (their connections then close gracefully) and the accept
        // loop; aborting it tells the idle connections to close too.
        self.shutdown.cancel();
        self.serving.abort();
    }
}

fn json_response(body: &Value) -> Response {
    (
        StatusCode::OK,
        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        body.to_string(),
    )
        .into_response()
}

fn sse_response(body: Body) -> Response {
    (
        StatusCode::OK,
        [(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"))],
        body,
    )
        .into_response()
}

async fn card(State(shared): State<Arc<Shared>>) -> Response {
    json_response(&json!({
        "name": "broken agent",
        "supportedInterfaces": [{
            "url": format!("{}/rpc", shared.url),
            "protocolBinding": "JSONRPC",
            "protocolVersion": "1.0",
        }],
        "capabilities": {"streaming": true},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
    }))
}

fn error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn success(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn now() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn status(state: &str) -> Value {
    json!({"state": state, "timestamp": now()})
}

/// An SSE `data:` frame carrying a JSON-RPC success response.
fn frame(id: &Value, result: Value) -> Bytes {
    Bytes::from(format!("data: {}\n\n", success(id, result)))
}

/// The `id` of a GetTask / CancelTask / SubscribeToTask params object, if well-formed.
fn task_id(params: Option<&Value>) -> Option<String> {
    params?.get("id")?.as_str().map(str::to_owned)
}

/// A SendMessage / SendStreamingMessage message, if well-formed: an object with a non-empty
/// `parts` array.
fn message(params: Option<&Value>) -> Option<Map<String, Value>> {
    let m = params?.get("message")?.as_object()?;
    let parts = m.get("parts")?.as_array()?;
    if parts.is_empty() {
        return None;
    }
    Some(m.clone())
}

/// The completed task for `message`: (task id, context id, echo artifact, task).
fn completed_task(mut message: Map<String, Value>) -> (String, String, Value, Value) {
    let task_id = uuid::Uuid::new_v4().to_string();
    let context_id = message
        .get("contextId")
        .and_then(Value::as_str)
        .map_or_else(|| uuid::Uuid::new_v4().to_string(), str::to_owned);
    let text = message
        .get("parts")
        .and_then(|p| p.get(0))
        .and_then(|p| p.get("text"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    message.insert("taskId".into(), json!(task_id));
    message.insert("contextId".into(), json!(context_id));
    let artifact = json!({"artifactId": "a1", "parts": [{"text": format!("echo: {text}")}]});
    let task = json!({
        "id": task_id,
        "contextId": context_id,
        "status": status("TASK_STATE_COMPLETED"),
        "artifacts": [artifact],
        "history": [Value::Object(message)],
    });
    (task_id, context_id, artifact, task)
}

impl Shared {
    fn remember(&self, id: &str, task: &Value) {
        let mut tasks = self.tasks.lock().unwrap_or_else(|e| e.into_inner());
        tasks.insert(id.to_owned(), task.clone());
    }

    fn lookup(&self, id: &str) -> Option<Value> {
        let tasks = self.tasks.lock().unwrap_or_else(|e| e.into_inner());
        tasks.get(id).cloned()
    }
}

// Any A2A-Version header is accepted: the handler does not even look at the headers.
async fn rpc(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        // Fault: should be -32700 Parse error.
        return json_response(&error(&Value::Null, -32600, "Invalid Request"));
    };
    let Some(envelope) = request.as_object() else {
        return json_response(&error(&Value::Null, -32600, "Invalid Request"));
    };
    let id = envelope.get("id").cloned().unwrap_or(Value::Null);
    let method = envelope.get("method").and_then(Value::as_str);
    let (Some("2.0"), Some(method)) = (envelope.get("jsonrpc").and_then(Value::as_str), method)
    else {
        return json_response(&error(&id, -32600, "Invalid Request"));
    };
    let params = envelope.get("params");
    let invalid_params = || json_response(&error(&id, -32602, "Invalid params"));
    // Fault: no ErrorInfo in `data`.
    let not_found = || json_response(&error(&id, -32001, "Task not found"));
    match method {
        "SendMessage" => {
            let Some(message) = message(params) else {
                return invalid_params();
            };
            let (task_id, _, _, task) = completed_task(message);
            shared.remember(&task_id, &task);
            json_response(&success(&id, json!({"task": task})))
        }
        "SendStreamingMessage" => {
            let Some(message) = message(params) else {
                return invalid_params();
            };
            let (task_id, context_id, artifact, task) = completed_task(message);
            shared.remember(&task_id, &task);
            let submitted = json!({
                "id": task_id,
                "contextId": context_id,
                "status": status("TASK_STATE_SUBMITTED"),
                "history": task["history"].clone(),
            });
            let update = |state: &str| {
                json!({"statusUpdate": {
                    "taskId": task_id,
                    "contextId": context_id,
                    "status": status(state),
                }})
            };
            let frames = vec![
                frame(&id, json!({"task": submitted})),
                frame(&id, update("TASK_STATE_WORKING")),
                frame(
                    &id,
                    json!({"artifactUpdate": {
                        "taskId": task_id,
                        "contextId": context_id,
                        "artifact": artifact,
                    }}),
                ),
                frame(&id, update("TASK_STATE_COMPLETED")),
            ];
            // Fault: the stream never ends after the final event. Hyper drops it (and with it
            // the interval) when the client goes away; the agent's drop ends it too.
            let start = tokio::time::Instant::now() + Duration::from_secs(1);
            let keep_alive = futures::stream::unfold(
                tokio::time::interval_at(start, Duration::from_secs(1)),
                |mut interval| async move {
                    interval.tick().await;
                    Some((Bytes::from_static(b": keep-alive\n\n"), interval))
                },
            );
            let stream = futures::stream::iter(frames)
                .chain(keep_alive)
                .map(Ok::<Bytes, Infallible>)
                .take_until(shared.shutdown.clone().cancelled_owned());
            sse_response(Body::from_stream(stream))
        }
        "GetTask" => {
            let Some(task_id) = task_id(params) else {
                return invalid_params();
            };
            // Fault: historyLength is ignored.
            match shared.lookup(&task_id) {
                Some(task) => json_response(&success(&id, task)),
                None => not_found(),
            }
        }
        "CancelTask" => {
            let Some(task_id) = task_id(params) else {
                return invalid_params();
            };
            match shared.lookup(&task_id) {
                Some(_) => json_response(&json!({
                    "jsonrpc": "2.0",
                    "id": id,
                    "error": {
                        "code": -32002,
                        "message": "Task cannot be canceled",
                        "data": [{
                            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                            "reason": "TASK_NOT_CANCELABLE",
                            "domain": "a2a-protocol.org",
                        }],
                    },
                })),
                None => not_found(),
            }
        }
        "SubscribeToTask" => {
            let Some(task_id) = task_id(params) else {
                return invalid_params();
            };
            match shared.lookup(&task_id) {
                // Fault: a terminal task should get -32004 UnsupportedOperation.
                Some(task) => {
                    let snapshot = frame(&id, json!({"task": task}));
                    let stream = futures::stream::iter([Ok::<Bytes, Infallible>(snapshot)]);
                    sse_response(Body::from_stream(stream))
                }
                None => not_found(),
            }
        }
        // It "doesn't implement" ListTasks.
        "ListTasks" => json_response(&error(&id, -32601, "Method not found")),
        // Fault: should be -32601 Method not found.
        _ => json_response(&error(&id, -32603, "Internal error")),
    }
}
