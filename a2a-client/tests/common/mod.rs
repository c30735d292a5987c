//! Shared setup of the client's end-to-end tests: A2A servers on real sockets (`127.0.0.1:0`),
//! a recorder of every request they received, scripted failures, a step-by-step test agent,
//! and timeouts around every await that could hang.

#![allow(dead_code)] // each test binary uses a part of this module

pub(crate) mod hostile;
mod recorder;

pub(crate) use recorder::{Recorder, Seen};

use a2a_client::{Binding, Client, ClientBuilder, EventStream, RetryPolicy};
use a2a_core::{
    AgentCard, Artifact, ArtifactId, BINDING_GRPC, BINDING_HTTP_JSON, BINDING_JSONRPC, Error,
    Message, StreamResponse, Task,
};
use a2a_server::demo::DemoAgent;
use a2a_server::{Agent, RequestContext, Server, ServerBuilder, TaskEvents};
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use futures::StreamExt as _;
use serde_json::Value;
use std::collections::VecDeque;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Semaphore, watch};

/// How long anything in a test may take before the test fails.
pub(crate) const WAIT: Duration = Duration::from_secs(10);

/// Awaits `f`, failing the test (naming `what`) if it takes longer than [`WAIT`].
pub(crate) async fn within<F: Future>(what: &str, f: F) -> F::Output {
    tokio::time::timeout(WAIT, f)
        .await
        .unwrap_or_else(|_| panic!("timed out after {WAIT:?}: {what}"))
}

/// Defines `mod $name` with one test per binding listed, each running the body with `$binding`
/// set (the attributes, passed as one group, go on every test).
#[allow(unused_macros)]
macro_rules! per_binding {
    ([$($test:ident $variant:ident),*] $attrs:tt async fn $name:ident($binding:ident) $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            async fn run($binding: ::a2a_client::Binding) $body

            $($crate::common::per_binding!(@test $attrs $test $variant);)*
        }
    };
    (@test {$(#[$attr:meta])*} $test:ident $variant:ident) => {
        $(#[$attr])*
        #[tokio::test]
        async fn $test() {
            run(::a2a_client::Binding::$variant).await
        }
    };
}
#[allow(unused_imports)]
pub(crate) use per_binding;

/// Defines one test per binding: `name::over_jsonrpc`, `name::over_http_json` and
/// `name::over_grpc`, each running the body with `$binding` set.
#[allow(unused_macros)]
macro_rules! each_binding {
    ($(#[$attr:meta])* async fn $name:ident($binding:ident) $body:block) => {
        $crate::common::per_binding!(
            [over_jsonrpc JsonRpc, over_http_json HttpJson, over_grpc Grpc]
            {$(#[$attr])*} async fn $name($binding) $body
        );
    };
}
#[allow(unused_imports)]
pub(crate) use each_binding;

/// Defines one test per HTTP binding (`name::over_jsonrpc`, `name::over_http_json`), for what
/// gRPC has no counterpart of (HTTP statuses, query strings, HTTP/1.1 proxies).
#[allow(unused_macros)]
macro_rules! http_bindings {
    ($(#[$attr:meta])* async fn $name:ident($binding:ident) $body:block) => {
        $crate::common::per_binding!(
            [over_jsonrpc JsonRpc, over_http_json HttpJson]
            {$(#[$attr])*} async fn $name($binding) $body
        );
    };
}
#[allow(unused_imports)]
pub(crate) use http_bindings;

/// The binding name a card uses for `binding`.
pub(crate) fn binding_name(binding: Binding) -> &'static str {
    match binding {
        Binding::JsonRpc => BINDING_JSONRPC,
        Binding::Grpc => BINDING_GRPC,
        _ => BINDING_HTTP_JSON,
    }
}

/// Retries with short backoffs, so that failing attempts cost milliseconds.
pub(crate) fn fast_retry() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 4,
        initial_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(40),
    }
}

/// Binds `127.0.0.1:0` and returns the listener and its base URL.
pub(crate) async fn listen() -> (tokio::net::TcpListener, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1:0");
    let url = format!("http://{}", listener.local_addr().expect("local addr"));
    (listener, url)
}

/// Serves `router` on `listener` in the background.
pub(crate) fn spawn(listener: tokio::net::TcpListener, router: Router) {
    tokio::spawn(async move {
        axum::serve(listener, router).await.expect("axum::serve");
    });
}

/// Serves `router` on a fresh port and returns its base URL.
pub(crate) async fn serve(router: Router) -> String {
    let (listener, url) = listen().await;
    spawn(listener, router);
    url
}

/// A base URL nothing listens on.
pub(crate) async fn unreachable_url() -> String {
    let (listener, url) = listen().await;
    drop(listener);
    url
}

/// A scripted failure: the next requests matching `when` are answered with `status` and `body`
/// instead of reaching the server.
#[derive(Clone)]
pub(crate) struct Fault {
    when: Arc<dyn Fn(&Seen) -> bool + Send + Sync>,
    status: StatusCode,
    body: String,
}

/// Failures to inject, in order.
#[derive(Clone, Default)]
pub(crate) struct Faults(Arc<Mutex<VecDeque<Fault>>>);

impl Faults {
    /// Answers the next `times` requests matching `when` with `status` and a JSON `body`.
    pub(crate) fn fail(
        &self,
        times: usize,
        when: impl Fn(&Seen) -> bool + Send + Sync + 'static,
        status: u16,
        body: Value,
    ) {
        let fault = Fault {
            when: Arc::new(when),
            status: StatusCode::from_u16(status).expect("status"),
            body: body.to_string(),
        };
        let mut q = self.0.lock().expect("faults");
        for _ in 0..times {
            q.push_back(fault.clone());
        }
    }

    fn wrap(&self, router: Router) -> Router {
        router.layer(middleware::from_fn_with_state(self.clone(), inject))
    }
}

async fn inject(State(faults): State<Faults>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let seen = Seen {
        method: parts.method.to_string(),
        path: parts.uri.path().to_owned(),
        query: parts.uri.query().map(str::to_owned),
        headers: parts.headers.clone(),
        body: body.clone(),
    };
    let fault = {
        let mut q = faults.0.lock().expect("faults");
        let at = q.iter().position(|f| (f.when)(&seen));
        at.and_then(|i| q.remove(i))
    };
    if let Some(f) = fault {
        if seen.is_grpc() {
            return grpc_fault(&f);
        }
        return (
            f.status,
            [(header::CONTENT_TYPE, "application/json")],
            f.body,
        )
            .into_response();
    }
    next.run(Request::from_parts(parts, Body::from(body))).await
}

/// A fault as a gRPC server would answer it: the A2A error its body holds, as a gRPC status;
/// else (an HTTP 502/503 of a proxy, say) `UNAVAILABLE`.
fn grpc_fault(f: &Fault) -> Response {
    let body: Value = serde_json::from_str(&f.body).unwrap_or(Value::Null);
    let a2a = match body.get("error") {
        Some(e) if body.get("jsonrpc").is_some() => {
            serde_json::from_value::<a2a_core::ErrorObject>(e.clone())
                .ok()
                .map(a2a_core::Error::from)
        }
        Some(_) => a2a_core::Error::from_status_body(&body),
        None => None,
    };
    let status = match a2a {
        Some(error) => error.to_tonic_status(),
        None => tonic::Status::unavailable(format!("HTTP {}: {}", f.status, f.body)),
    };
    status.into_http::<Body>()
}

/// An A2A error as `binding` carries it in an HTTP error response: a JSON-RPC error response,
/// or a google.rpc.Status body.
pub(crate) fn a2a_error_body(binding: Binding, kind: a2a_core::ErrorKind, message: &str) -> Value {
    let error = a2a_core::Error::new(kind, message);
    match binding {
        Binding::JsonRpc => serde_json::json!({
            "jsonrpc": "2.0",
            "id": 1,
            "error": serde_json::to_value(error.to_json_rpc()).expect("error object"),
        }),
        _ => error.to_status_body(),
    }
}

/// An A2A server of ours, on a real socket, recording what it receives.
pub(crate) struct TestServer {
    /// The base URL (the card is at `/.well-known/agent-card.json`).
    pub(crate) url: String,
    /// The card as the server serves it.
    pub(crate) card: AgentCard,
    /// Every request received.
    pub(crate) seen: Recorder,
    /// Failures to inject before requests reach the server.
    pub(crate) faults: Faults,
}

impl TestServer {
    /// The demo agent (echo, `countdown N`, `greet`).
    pub(crate) async fn demo() -> Self {
        Self::start(DemoAgent, |b| b.agent_card(DemoAgent::card())).await
    }

    /// `agent`, with the server configured by `configure` (card, streaming, …).
    pub(crate) async fn start<A: Agent>(
        agent: A,
        configure: impl FnOnce(ServerBuilder) -> ServerBuilder,
    ) -> Self {
        let (listener, url) = listen().await;
        let server = configure(Server::builder(agent).public_url(&url))
            .build()
            .expect("server config");
        let card = server.agent_card().clone();
        let seen = Recorder::default();
        let faults = Faults::default();
        // The router is wrapped in the test's layers, so it is served here, with the upkeep
        // spawned next to it.
        tokio::spawn(server.upkeep());
        spawn(listener, seen.wrap(faults.wrap(server.into_router())));
        Self {
            url,
            card,
            seen,
            faults,
        }
    }

    /// A client builder preferring `binding`, with fast retries.
    pub(crate) fn builder(&self, binding: Binding) -> ClientBuilder {
        Client::builder().prefer([binding]).retry(fast_retry())
    }

    /// A client that discovered this server through its card and speaks `binding` (v1.0).
    pub(crate) async fn client(&self, binding: Binding) -> Client {
        let client = within("connect", self.builder(binding).connect(&self.url))
            .await
            .expect("connect");
        // The card offers 1.1 (task generations) for every binding: the client speaks it.
        assert_eq!(client.binding(), (binding_name(binding), "1.1"));
        client
    }
}

/// Collects a stream to its end, each event within [`WAIT`]. Errors fail the test.
pub(crate) async fn collect(mut stream: EventStream) -> Vec<StreamResponse> {
    let mut events = Vec::new();
    while let Some(event) = within("the next stream event", stream.next()).await {
        events.push(event.expect("stream event"));
    }
    events
}

/// The task as a client following the events sees it: snapshots replace it, status updates
/// set its status, artifact chunks are merged.
pub(crate) fn fold(events: &[StreamResponse]) -> Option<Task> {
    let mut task: Option<Task> = None;
    for event in events {
        match event {
            StreamResponse::Task(t) => task = Some(t.clone()),
            StreamResponse::StatusUpdate(s) => {
                if let Some(t) = &mut task {
                    t.status = s.status.clone();
                }
            }
            StreamResponse::ArtifactUpdate(a) => {
                if let Some(t) = &mut task {
                    t.apply_artifact(a.artifact.clone(), a.append);
                }
            }
            StreamResponse::Message(_) => {}
        }
    }
    task
}

/// The expected task of an operation answered with a task.
pub(crate) fn task_of(response: a2a_core::SendMessageResponse) -> Task {
    match response {
        a2a_core::SendMessageResponse::Task(t) => t,
        other => panic!("expected a task, got {other:?}"),
    }
}

/// An event without its ids and timestamps, to compare event sequences across runs.
pub(crate) fn shape(event: &StreamResponse) -> String {
    match event {
        StreamResponse::Task(t) => format!(
            "task {} [{}]",
            t.status.state,
            t.artifacts
                .iter()
                .map(Artifact::text_content)
                .collect::<Vec<_>>()
                .join("|")
        ),
        StreamResponse::Message(m) => format!("message {}", m.text()),
        StreamResponse::StatusUpdate(s) => format!(
            "status {} {}",
            s.status.state,
            s.status
                .message
                .as_deref()
                .map(Message::text)
                .unwrap_or_default()
        ),
        StreamResponse::ArtifactUpdate(a) => format!(
            "artifact {:?} append={} last={}",
            a.artifact.text_content(),
            a.append,
            a.last_chunk
        ),
    }
}

/// A test agent that advances one step per permit of its gate, so that a test decides exactly
/// how far a task has got: step `i` (1..=steps) reports WORKING `step i` and appends the chunk
/// `i;` to the artifact `steps`; one more permit completes the task with the message `done`.
/// It can be canceled at any time.
#[derive(Clone, Debug)]
pub(crate) struct Stepper {
    /// Each permit lets the agent take one step.
    gate: Arc<Semaphore>,
    /// How many steps are done (`steps + 1` once completed).
    done: Arc<watch::Sender<u32>>,
    steps: u32,
}

impl Stepper {
    /// A stepper of `steps` steps, its gate closed.
    pub(crate) fn new(steps: u32) -> Self {
        Self {
            gate: Arc::new(Semaphore::new(0)),
            done: Arc::new(watch::channel(0).0),
            steps,
        }
    }

    /// Lets the agent take `n` more steps.
    pub(crate) fn open(&self, n: usize) {
        self.gate.add_permits(n);
    }

    /// Waits until the agent has done `step` steps (their events are stored and broadcast).
    pub(crate) async fn reached(&self, step: u32) {
        let mut rx = self.done.subscribe();
        within("the agent's progress", rx.wait_for(|done| *done >= step))
            .await
            .expect("the agent is gone");
    }

    async fn pass(&self) {
        self.gate.acquire().await.expect("gate").forget();
    }
}

impl Agent for Stepper {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        let id = ArtifactId::new("steps");
        for i in 1..=self.steps {
            tokio::select! {
                () = self.pass() => {}
                () = cx.cancel.cancelled() => return Ok(()),
            }
            events.working(format!("step {i}")).await?;
            let chunk = Artifact::text("steps", format!("{i};")).with_id(id.clone());
            events
                .artifact_chunk(chunk, i != 1, i == self.steps)
                .await?;
            self.done.send_replace(i);
        }
        tokio::select! {
            () = self.pass() => {}
            () = cx.cancel.cancelled() => return Ok(()),
        }
        events.complete(Some(Message::agent_text("done"))).await?;
        self.done.send_replace(self.steps + 1);
        Ok(())
    }

    /// Accepts: the server stops the execution and marks the task canceled.
    async fn cancel(&self, _cx: RequestContext, _events: TaskEvents) -> Result<(), Error> {
        Ok(())
    }
}

/// The stdout and stderr of a command must not contain terminal escapes.
pub(crate) fn assert_no_colors(text: &str) {
    assert!(
        !text.contains("\x1b["),
        "terminal escape codes in output that is not a terminal: {text:?}"
    );
}

/// A fresh P-256 card signing key and its public key as a PEM (what a user trusts to verify
/// what it signs).
pub(crate) fn signing_key() -> (a2a_core::signing::CardSigningKey, String) {
    use p256::pkcs8::{EncodePrivateKey as _, EncodePublicKey as _};
    let secret = p256::SecretKey::random(&mut rand::rngs::OsRng);
    let pem = secret
        .to_pkcs8_pem(Default::default())
        .expect("PEM")
        .to_string();
    let public = secret
        .public_key()
        .to_public_key_pem(Default::default())
        .expect("public PEM");
    let key = a2a_core::signing::CardSigningKey::from_pem(&pem).expect("a key");
    (key, public)
}

/// The demo agent serving a card signed with a fresh key ([`signing_key`]): the server, the
/// key's `kid`, and its public key as a PEM.
pub(crate) async fn signed_demo_server() -> (TestServer, String, String) {
    let (key, public) = signing_key();
    let kid = key.kid().to_owned();
    let server = TestServer::start(DemoAgent, move |b| {
        b.agent_card(DemoAgent::card()).card_signing_key(key)
    })
    .await;
    (server, kid, public)
}

/// The public key (PEM) of a fresh P-256 key that signed nothing.
pub(crate) fn unrelated_public_pem() -> String {
    use p256::pkcs8::EncodePublicKey as _;
    p256::SecretKey::random(&mut rand::rngs::OsRng)
        .public_key()
        .to_public_key_pem(Default::default())
        .expect("PEM")
}
