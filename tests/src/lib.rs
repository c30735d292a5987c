//! The end-to-end harness of the A2A server: every test talks to a real server over a real
//! socket, with raw HTTP, so that it checks the exact JSON on the wire.
//!
//! - [`TestServer`] binds `127.0.0.1:0`, builds a [`Server`] whose public URL is the bound
//!   address, and serves it with `Server::serve`.
//! - [`TestServer::call`] runs one operation in any [`Binding`] (JSON-RPC; HTTP+JSON, with
//!   the `/{tenant}` prefix taken from `params.tenant`; gRPC, with the params protobuf-encoded)
//!   and returns the result or an [`ApiError`], after checking the envelope (JSON-RPC
//!   `jsonrpc`/`id`, REST status body, gRPC status with its `google.rpc.Status`).
//! - [`SseStream`] reads `text/event-stream` responses (`id:`, `event:`, `data:`, comments),
//!   and gRPC streams as the same events (`id` from the resumable-streams metadata).
//! - [`agents`] holds the test agents; [`shape`] the wire-shape assertions applied to every
//!   successful v1.0 response and stream event.
//!
//! Every await that could hang is wrapped in [`within`] (a `tokio::time::timeout`); tests never
//! sleep to wait for something.

pub mod agents;
mod answer;
pub mod broken;
pub mod broken_generations;
pub mod doc_shell;
mod grpc;
#[cfg(doctest)]
mod guide;
pub mod issuer;
pub mod keys;
pub mod shape;
pub mod sse;

pub use answer::{ApiError, Kind, Reply, header_str};
pub use shape::{assert_v1_shape, is_millis_utc};
pub use sse::{SseEvent, SseStream};

use a2a_server::{Agent, Server, ServerBuilder};
use reqwest::header::CONTENT_TYPE;
use serde_json::{Map, Value, json};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// How long any single await of a test may take before the test fails.
pub const TIMEOUT: Duration = Duration::from_secs(15);

/// Awaits `f`, failing the test with `what` if it takes longer than [`TIMEOUT`].
pub async fn within<F: Future>(what: &str, f: F) -> F::Output {
    match tokio::time::timeout(TIMEOUT, f).await {
        Ok(v) => v,
        Err(_) => panic!("timed out after {TIMEOUT:?}: {what}"),
    }
}

/// The three bindings of A2A.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binding {
    /// JSON-RPC 2.0 at `POST /`.
    JsonRpc,
    /// HTTP+JSON (REST) routes.
    Rest,
    /// gRPC (`lf.a2a.v1.A2AService`) on the same port.
    Grpc,
}

/// The two HTTP bindings, for tests of what only they have (HTTP statuses, SSE framing).
pub const BOTH: [Binding; 2] = [Binding::JsonRpc, Binding::Rest];

/// Every binding, for the behaviour that all three must share.
pub const ALL: [Binding; 3] = [Binding::JsonRpc, Binding::Rest, Binding::Grpc];

/// An A2A operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `SendMessage` / `POST /message:send`.
    SendMessage,
    /// `SendStreamingMessage` / `POST /message:stream`.
    SendStreamingMessage,
    /// `GetTask` / `GET /tasks/{id}`.
    GetTask,
    /// `ListTasks` / `GET /tasks`.
    ListTasks,
    /// `CancelTask` / `POST /tasks/{id}:cancel`.
    CancelTask,
    /// `SubscribeToTask` / `GET /tasks/{id}:subscribe`.
    SubscribeToTask,
    /// `CreateTaskPushNotificationConfig` / `POST /tasks/{taskId}/pushNotificationConfigs`.
    CreatePushConfig,
    /// `GetTaskPushNotificationConfig` / `GET /tasks/{taskId}/pushNotificationConfigs/{id}`.
    GetPushConfig,
    /// `ListTaskPushNotificationConfigs` / `GET /tasks/{taskId}/pushNotificationConfigs`.
    ListPushConfigs,
    /// `DeleteTaskPushNotificationConfig` / `DELETE /tasks/{taskId}/pushNotificationConfigs/{id}`.
    DeletePushConfig,
    /// `GetExtendedAgentCard` / `GET /extendedAgentCard`.
    GetExtendedAgentCard,
}

impl Op {
    /// Every operation.
    pub const ALL: [Op; 11] = [
        Op::SendMessage,
        Op::SendStreamingMessage,
        Op::GetTask,
        Op::ListTasks,
        Op::CancelTask,
        Op::SubscribeToTask,
        Op::CreatePushConfig,
        Op::GetPushConfig,
        Op::ListPushConfigs,
        Op::DeletePushConfig,
        Op::GetExtendedAgentCard,
    ];

    /// The JSON-RPC method name.
    pub fn method(self) -> &'static str {
        match self {
            Op::SendMessage => "SendMessage",
            Op::SendStreamingMessage => "SendStreamingMessage",
            Op::GetTask => "GetTask",
            Op::ListTasks => "ListTasks",
            Op::CancelTask => "CancelTask",
            Op::SubscribeToTask => "SubscribeToTask",
            Op::CreatePushConfig => "CreateTaskPushNotificationConfig",
            Op::GetPushConfig => "GetTaskPushNotificationConfig",
            Op::ListPushConfigs => "ListTaskPushNotificationConfigs",
            Op::DeletePushConfig => "DeleteTaskPushNotificationConfig",
            Op::GetExtendedAgentCard => "GetExtendedAgentCard",
        }
    }

    /// Whether the operation answers with an SSE stream.
    pub fn is_streaming(self) -> bool {
        matches!(self, Op::SendStreamingMessage | Op::SubscribeToTask)
    }
}

/// A fresh message id.
pub fn message_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!(
        "m-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// A user message with one text part.
pub fn user_message(text: &str) -> Value {
    json!({"messageId": message_id(), "role": "ROLE_USER", "parts": [{"text": text}]})
}

/// SendMessage params with a user text message.
pub fn send_params(text: &str) -> Value {
    json!({"message": user_message(text)})
}

/// SendMessage params continuing task `task_id` with a user text message.
pub fn reply_params(task_id: &str, text: &str) -> Value {
    let mut m = user_message(text);
    m["taskId"] = json!(task_id);
    json!({"message": m})
}

/// The string at `v[key]`, panicking with context if absent.
#[track_caller]
pub fn str_at<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("`{key}` is not a string in {v:#}"))
}

/// The texts of a list of parts.
pub fn texts(parts: &Value) -> Vec<String> {
    parts
        .as_array()
        .map(|ps| {
            ps.iter()
                .filter_map(|p| p["text"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Percent-encodes a path segment.
pub fn encode_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn query_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A running test server.
#[derive(Debug)]
pub struct TestServer {
    /// The bound address.
    pub addr: SocketAddr,
    /// `http://127.0.0.1:<port>`, also the public URL in the card.
    pub base: String,
    /// The HTTP client the helpers use.
    pub http: reqwest::Client,
    /// The gRPC channel the helpers use (to the same port).
    grpc: tonic::transport::Channel,
    handler: std::sync::Arc<a2a_server::RequestHandler>,
    shutdown: CancellationToken,
    serving: JoinHandle<()>,
    next_id: AtomicU64,
}

impl TestServer {
    /// Serves `agent` with the test card and an in-memory store.
    pub async fn start<A: Agent>(agent: A) -> Self {
        Self::start_with(agent, |b| b).await
    }

    /// Serves `agent` with the test card and an in-memory store, after `configure` adjusted the
    /// builder (store, card, body limit, …). The public URL is the bound address.
    pub async fn start_with<A: Agent>(
        agent: A,
        configure: impl FnOnce(ServerBuilder) -> ServerBuilder,
    ) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        let base = format!("http://{addr}");
        let builder = Server::builder(agent)
            .agent_card(agents::test_card())
            .public_url(&base);
        let server = configure(builder).build().expect("a valid server");
        let shutdown = server.shutdown_token();
        let handler = server.handler();
        let serving = tokio::spawn(async move {
            // Stops when `shutdown` is cancelled.
            server.serve(listener).await.expect("the server runs");
        });
        let http = reqwest::Client::builder().build().expect("an HTTP client");
        Self {
            addr,
            base,
            http,
            grpc: grpc::channel(addr),
            handler,
            shutdown,
            serving,
            next_id: AtomicU64::new(1),
        }
    }

    /// Shuts the server down as its binary does: closes streams, stops accepting, waits for
    /// the HTTP server to end, and flushes the store.
    pub async fn stop(self) {
        let Self {
            handler,
            shutdown,
            serving,
            http,
            ..
        } = self;
        drop(http);
        shutdown.cancel();
        within("the HTTP server stops", serving)
            .await
            .expect("the server task ends cleanly");
        within("the store flushes", handler.flush())
            .await
            .expect("the store flushes");
    }

    /// The agent card, fetched as a 1.0 client would.
    pub async fn card(&self) -> Value {
        let card = self.http.get(self.url("/.well-known/agent-card.json"));
        card.header("A2A-Version", "1.0")
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// `base` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// A fresh JSON-RPC id.
    pub fn next_id(&self) -> Value {
        json!(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Builds the HTTP request of `op` in `binding`: JSON-RPC puts everything in `params`;
    /// REST moves `tenant` to the path prefix, ids to the path, GET parameters to the query.
    /// Sends `A2A-Version: 1.0` unless `headers` name a version.
    pub fn request(
        &self,
        binding: Binding,
        op: Op,
        params: &Value,
        headers: &[(&str, &str)],
    ) -> (reqwest::RequestBuilder, Option<Value>) {
        self.request_ext(binding, op, params, headers, &[])
    }

    /// Like [`Self::request`], with extra URL query parameters (a version there stands for the
    /// header).
    pub fn request_ext(
        &self,
        binding: Binding,
        op: Op,
        params: &Value,
        headers: &[(&str, &str)],
        query: &[(&str, &str)],
    ) -> (reqwest::RequestBuilder, Option<Value>) {
        let (mut rb, rpc_id) = match binding {
            Binding::JsonRpc => {
                let id = self.next_id();
                let body =
                    json!({"jsonrpc": "2.0", "id": id, "method": op.method(), "params": params});
                (self.http.post(self.url("/")).json(&body), Some(id))
            }
            Binding::Rest => (self.rest_request(op, params), None),
            Binding::Grpc => panic!("gRPC calls have no HTTP request: use call or open_stream"),
        };
        let versioned = query
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("a2a-version"));
        let headers = if versioned {
            headers.to_vec()
        } else {
            with_version(headers)
        };
        for (k, v) in headers {
            rb = rb.header(k, v);
        }
        if !query.is_empty() {
            rb = rb.query(query);
        }
        (rb, rpc_id)
    }

    fn rest_request(&self, op: Op, params: &Value) -> reqwest::RequestBuilder {
        let mut rest: Map<String, Value> = params.as_object().cloned().unwrap_or_default();
        let prefix = match rest.remove("tenant") {
            Some(Value::String(t)) => format!("/{}", encode_segment(&t)),
            _ => String::new(),
        };
        let mut take = |k: &str| -> String {
            match rest.remove(k) {
                Some(Value::String(s)) => encode_segment(&s),
                Some(other) => panic!("`{k}` must be a string, got {other}"),
                None => panic!("REST {op:?} needs `{k}` in params"),
            }
        };
        enum Send {
            Body,
            Query,
        }
        let (method, path, send) = match op {
            Op::SendMessage => (
                reqwest::Method::POST,
                "/message:send".to_owned(),
                Send::Body,
            ),
            Op::SendStreamingMessage => (
                reqwest::Method::POST,
                "/message:stream".to_owned(),
                Send::Body,
            ),
            Op::GetTask => (
                reqwest::Method::GET,
                format!("/tasks/{}", take("id")),
                Send::Query,
            ),
            Op::ListTasks => (reqwest::Method::GET, "/tasks".to_owned(), Send::Query),
            Op::CancelTask => (
                reqwest::Method::POST,
                format!("/tasks/{}:cancel", take("id")),
                Send::Body,
            ),
            Op::SubscribeToTask => (
                reqwest::Method::GET,
                format!("/tasks/{}:subscribe", take("id")),
                Send::Query,
            ),
            Op::CreatePushConfig => (
                reqwest::Method::POST,
                format!("/tasks/{}/pushNotificationConfigs", take("taskId")),
                Send::Body,
            ),
            Op::GetPushConfig => {
                let task = take("taskId");
                (
                    reqwest::Method::GET,
                    format!("/tasks/{task}/pushNotificationConfigs/{}", take("id")),
                    Send::Query,
                )
            }
            Op::ListPushConfigs => (
                reqwest::Method::GET,
                format!("/tasks/{}/pushNotificationConfigs", take("taskId")),
                Send::Query,
            ),
            Op::DeletePushConfig => {
                let task = take("taskId");
                (
                    reqwest::Method::DELETE,
                    format!("/tasks/{task}/pushNotificationConfigs/{}", take("id")),
                    Send::Query,
                )
            }
            Op::GetExtendedAgentCard => (
                reqwest::Method::GET,
                "/extendedAgentCard".to_owned(),
                Send::Query,
            ),
        };
        let rb = self
            .http
            .request(method, self.url(&format!("{prefix}{path}")));
        match send {
            Send::Body => rb
                .header(CONTENT_TYPE, "application/a2a+json")
                .body(Value::Object(rest).to_string()),
            Send::Query => {
                let pairs: Vec<(String, String)> = rest
                    .iter()
                    .map(|(k, v)| (k.clone(), query_value(v)))
                    .collect();
                rb.query(&pairs)
            }
        }
    }

    /// Sends `op` and returns the raw answer (body parsed as JSON).
    pub async fn raw(
        &self,
        binding: Binding,
        op: Op,
        params: &Value,
        headers: &[(&str, &str)],
    ) -> Reply {
        if binding == Binding::Grpc {
            let outcome = grpc::call(&self.grpc, op, params, headers).await;
            let (headers, body) = match &outcome {
                Ok((value, headers)) => (headers.clone(), value.clone()),
                Err(e) => ((*e.headers).clone(), (*e.body).clone()),
            };
            return Reply {
                binding,
                status: 200,
                headers,
                body,
                rpc_id: None,
                grpc: Some(Box::new(outcome.map(|(value, _)| value))),
            };
        }
        let (rb, rpc_id) = self.request(binding, op, params, headers);
        let mut reply = send_json(rb, &format!("{binding:?} {op:?}")).await;
        reply.binding = binding;
        reply.rpc_id = rpc_id;
        reply
    }

    /// Runs a unary `op`: the result (wire-shape checked) or the error.
    pub async fn call(&self, binding: Binding, op: Op, params: Value) -> Result<Value, ApiError> {
        self.call_with(binding, op, params, &[]).await
    }

    /// Like [`Self::call`], with extra request headers.
    pub async fn call_with(
        &self,
        binding: Binding,
        op: Op,
        params: Value,
        headers: &[(&str, &str)],
    ) -> Result<Value, ApiError> {
        self.call_ext(binding, op, params, headers, &[]).await
    }

    /// Like [`Self::call`], with extra request headers and extra URL query parameters.
    pub async fn call_ext(
        &self,
        binding: Binding,
        op: Op,
        params: Value,
        headers: &[(&str, &str)],
        query: &[(&str, &str)],
    ) -> Result<Value, ApiError> {
        assert!(!op.is_streaming(), "use open_stream for {op:?}");
        if binding == Binding::Grpc {
            assert!(query.is_empty(), "gRPC calls have no query string");
            let (value, _) = grpc::call(&self.grpc, op, &params, headers).await?;
            assert_v1_shape(&value);
            return Ok(value);
        }
        let (rb, rpc_id) = self.request_ext(binding, op, &params, headers, query);
        let mut reply = send_json(rb, &format!("{binding:?} {op:?}")).await;
        reply.binding = binding;
        reply.rpc_id = rpc_id;
        let outcome = reply.outcome();
        if let Ok(v) = &outcome {
            assert_v1_shape(v);
        }
        outcome
    }

    /// Runs a unary `op` that must succeed.
    pub async fn ok(&self, binding: Binding, op: Op, params: Value) -> Value {
        match self.call(binding, op, params).await {
            Ok(v) => v,
            Err(e) => panic!("{binding:?} {op:?} failed: {:#}", e.body),
        }
    }

    /// Runs a unary `op` that must fail.
    pub async fn err(&self, binding: Binding, op: Op, params: Value) -> ApiError {
        match self.call(binding, op, params).await {
            Ok(v) => panic!("{binding:?} {op:?} should have failed, got {v:#}"),
            Err(e) => e,
        }
    }

    /// Opens a streaming `op`: the SSE stream, or the plain (non-SSE) error.
    pub async fn open_stream(
        &self,
        binding: Binding,
        op: Op,
        params: Value,
        headers: &[(&str, &str)],
    ) -> Result<SseStream, ApiError> {
        self.open_stream_ext(binding, op, params, headers, &[])
            .await
    }

    /// Like [`Self::open_stream`], with extra URL query parameters.
    pub async fn open_stream_ext(
        &self,
        binding: Binding,
        op: Op,
        params: Value,
        headers: &[(&str, &str)],
        query: &[(&str, &str)],
    ) -> Result<SseStream, ApiError> {
        assert!(op.is_streaming(), "{op:?} is not a streaming operation");
        if binding == Binding::Grpc {
            assert!(query.is_empty(), "gRPC calls have no query string");
            let (stream, headers) = grpc::open(&self.grpc, op, &params, headers).await?;
            return Ok(SseStream::grpc(stream, headers));
        }
        let (rb, rpc_id) = self.request_ext(binding, op, &params, headers, query);
        let response = within(
            &format!("{binding:?} {op:?} answers"),
            rb.header("accept", "text/event-stream").send(),
        )
        .await
        .expect("the request is sent");
        let is_sse =
            header_str(response.headers(), "content-type").starts_with("text/event-stream");
        if is_sse {
            return Ok(SseStream::new(response, binding, rpc_id));
        }
        let mut reply = reply_of(response, &format!("{binding:?} {op:?}")).await;
        reply.binding = binding;
        reply.rpc_id = rpc_id;
        match reply.outcome() {
            Ok(v) => panic!("a streaming call answered a non-SSE result: {v:#}"),
            Err(e) => Err(e),
        }
    }

    /// Opens a streaming `op` that must succeed.
    pub async fn stream(&self, binding: Binding, op: Op, params: Value) -> SseStream {
        match self.open_stream(binding, op, params, &[]).await {
            Ok(s) => s,
            Err(e) => panic!("{binding:?} {op:?} failed: {:#}", e.body),
        }
    }

    /// Sends `text` as a new message (blocking) and returns the task of the result.
    pub async fn send_task(&self, binding: Binding, text: &str) -> Value {
        let result = self.ok(binding, Op::SendMessage, send_params(text)).await;
        result
            .get("task")
            .unwrap_or_else(|| panic!("a task result expected, got {result:#}"))
            .clone()
    }

    /// Creates a task in `state` (a full `TASK_STATE_*` name) on a [`agents::Kitchen`] server:
    /// COMPLETED (echo), FAILED, REJECTED, INPUT_REQUIRED (greet), WORKING (slow, returned
    /// immediately) or CANCELED (slow, then canceled). Returns the task as last answered.
    pub async fn make_task(&self, binding: Binding, state: &str) -> Value {
        let (text, immediately) = match state {
            "TASK_STATE_COMPLETED" => ("hello", false),
            "TASK_STATE_FAILED" => ("fail", false),
            "TASK_STATE_REJECTED" => ("reject", false),
            "TASK_STATE_INPUT_REQUIRED" => ("greet", false),
            "TASK_STATE_WORKING" | "TASK_STATE_CANCELED" => ("slow", true),
            other => panic!("make_task cannot make {other}"),
        };
        let mut params = send_params(text);
        if immediately {
            params["configuration"] = json!({"returnImmediately": true});
        }
        let mut task = self.ok(binding, Op::SendMessage, params).await["task"].clone();
        if state == "TASK_STATE_CANCELED" {
            let id = str_at(&task, "id").to_owned();
            task = self.ok(binding, Op::CancelTask, json!({"id": id})).await;
        }
        assert_eq!(task["status"]["state"], state, "make_task: {task:#}");
        task
    }

    /// GetTask over JSON-RPC.
    pub async fn get_task(&self, id: &str) -> Value {
        self.ok(Binding::JsonRpc, Op::GetTask, json!({"id": id}))
            .await
    }

    /// The state of task `id`, read with GetTask.
    pub async fn state_of(&self, id: &str) -> String {
        str_at(&self.get_task(id).await["status"], "state").to_owned()
    }

    /// A JSON-RPC call with a raw body; returns the raw answer.
    pub async fn post_raw(
        &self,
        path: &str,
        body: impl Into<reqwest::Body>,
        headers: &[(&str, &str)],
    ) -> Reply {
        let mut rb = self.http.post(self.url(path)).body(body);
        for (k, v) in headers {
            rb = rb.header(*k, *v);
        }
        send_json(rb, &format!("POST {path}")).await
    }

    /// A JSON-RPC call of `method` with `params`, returning the whole response object after
    /// checking HTTP 200, the content type, `jsonrpc` and the id echo.
    pub async fn rpc(&self, method: &str, params: Value, headers: &[(&str, &str)]) -> Value {
        let id = self.next_id();
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let reply = self
            .post_raw(
                "/",
                body.to_string(),
                &[&[("content-type", "application/json")], headers].concat(),
            )
            .await;
        assert_eq!(reply.status, 200, "{method}: {:#}", reply.body);
        assert!(reply.content_type().starts_with("application/json"));
        assert_eq!(reply.body["jsonrpc"], "2.0");
        assert_eq!(reply.body["id"], id, "the response echoes the id");
        reply.body
    }
}

/// `headers` with `A2A-Version: 1.0` unless they name a version: every v1.0 client sends it,
/// and a JSON-RPC request without it is a v0.3 request (spec §3.6.2).
pub fn with_version<'a>(headers: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut all = headers.to_vec();
    if !headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("a2a-version"))
    {
        all.push(("A2A-Version", "1.0"));
    }
    all
}

/// Sends a request and reads the answer as JSON.
pub async fn send_json(rb: reqwest::RequestBuilder, what: &str) -> Reply {
    let response = within(what, rb.send()).await.expect("the request is sent");
    reply_of(response, what).await
}

async fn reply_of(response: reqwest::Response, what: &str) -> Reply {
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let bytes = within(what, response.bytes())
        .await
        .expect("the body is read");
    let body = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes).unwrap_or_else(|e| {
            panic!(
                "{what}: the body is not JSON ({e}): {:?}",
                String::from_utf8_lossy(&bytes)
            )
        })
    };
    Reply {
        binding: Binding::JsonRpc,
        status,
        headers,
        body,
        rpc_id: None,
        grpc: None,
    }
}
