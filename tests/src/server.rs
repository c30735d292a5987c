//! The test server: started on `127.0.0.1:0`, stopped as its binary stops, and called in any
//! binding.

use crate::request::reply_of;
use crate::{
    ApiError, Binding, Op, Reply, SseStream, agents, assert_v1_shape, grpc, header_str, send_json,
    send_params, str_at, within,
};
use a2a_server::{Agent, Server, ServerBuilder};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

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
