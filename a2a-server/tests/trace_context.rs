//! One trace across agents: a caller → an orchestrator agent → an agent → a sub-agent, with a
//! webhook, all exporting OpenTelemetry spans over OTLP/HTTP to a collector inside the test;
//! the spans share the caller's trace id with the right parents and attributes, over the gRPC,
//! HTTP+JSON and JSON-RPC bindings, and the webhook POST carries the trace context.

use a2a_client::Client;
use a2a_core::{
    AgentCard, Artifact, Error, ErrorKind, SendMessageRequest, SendMessageResponse, StreamResponse,
};
use a2a_server::push::PushSettings;
use a2a_server::{Agent, RequestContext, Server, TaskEvents};
use axum::http::{HeaderMap, StatusCode};
use futures::StreamExt as _;
use opentelemetry::trace::{TraceContextExt as _, TracerProvider as _};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_sdk::trace::SdkTracerProvider;
use prost::Message as _;
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tracing::Instrument as _;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

const WAIT: Duration = Duration::from_secs(20);

/// A span as the collector received it.
#[derive(Clone, Debug)]
struct Received {
    trace_id: String,
    span_id: String,
    parent: String,
    name: String,
    /// 1 internal, 2 server, 3 client.
    kind: i32,
    /// 0 unset, 1 OK, 2 error.
    status: i32,
    /// Start and end, in Unix nanoseconds.
    start: u64,
    end: u64,
    attributes: HashMap<String, String>,
}

/// The process's exporter and the spans its collector received.
struct Telemetry {
    provider: SdkTracerProvider,
    received: Arc<Mutex<Vec<Received>>>,
}

/// An OTLP/HTTP collector on 127.0.0.1 (its own thread and runtime, as it outlives each test's
/// runtime), and the global subscriber exporting to it, set up once per test process.
fn telemetry() -> &'static Telemetry {
    static TELEMETRY: OnceLock<Telemetry> = OnceLock::new();
    TELEMETRY.get_or_init(|| {
        let received: Arc<Mutex<Vec<Received>>> = Arc::default();
        let (tx, rx) = std::sync::mpsc::channel();
        let store = received.clone();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                tx.send(listener.local_addr().unwrap()).unwrap();
                let app = axum::Router::new().route(
                    "/v1/traces",
                    axum::routing::post(move |body: axum::body::Bytes| {
                        let store = store.clone();
                        async move {
                            let request = ExportTraceServiceRequest::decode(body).unwrap();
                            store.lock().unwrap().extend(spans_of(request));
                            StatusCode::OK
                        }
                    }),
                );
                axum::serve(listener, app).await.unwrap();
            });
        });
        let collector = rx.recv().unwrap();
        // The blocking HTTP client of the exporter is built (and used) off the async runtimes.
        let provider = std::thread::spawn(move || {
            use opentelemetry_otlp::WithExportConfig as _;
            let exporter = opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_endpoint(format!("http://{collector}/v1/traces"))
                .build()
                .unwrap();
            SdkTracerProvider::builder()
                .with_batch_exporter(exporter)
                .build()
        })
        .join()
        .unwrap();
        opentelemetry::global::set_text_map_propagator(
            opentelemetry_sdk::propagation::TraceContextPropagator::new(),
        );
        // A2A_TEST_LOGS=1 also prints the log lines (to debug a failing test).
        let logs = std::env::var_os("A2A_TEST_LOGS").map(|_| tracing_subscriber::fmt::layer());
        tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")))
            .with(logs)
            .init();
        Telemetry { provider, received }
    })
}

fn spans_of(request: ExportTraceServiceRequest) -> Vec<Received> {
    let mut out = Vec::new();
    for resource in request.resource_spans {
        for scope in resource.scope_spans {
            for span in scope.spans {
                let attributes = span
                    .attributes
                    .iter()
                    .filter_map(|kv| {
                        let value = match kv.value.as_ref()?.value.as_ref()? {
                            AnyValue::StringValue(s) => s.clone(),
                            AnyValue::IntValue(i) => i.to_string(),
                            AnyValue::BoolValue(b) => b.to_string(),
                            other => format!("{other:?}"),
                        };
                        Some((kv.key.clone(), value))
                    })
                    .collect();
                out.push(Received {
                    trace_id: hex(&span.trace_id),
                    span_id: hex(&span.span_id),
                    parent: hex(&span.parent_span_id),
                    name: span.name,
                    kind: span.kind,
                    status: span.status.map_or(0, |s| s.code),
                    start: span.start_time_unix_nano,
                    end: span.end_time_unix_nano,
                    attributes,
                });
            }
        }
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn failed(e: a2a_client::Error) -> Error {
    Error::new(ErrorKind::Internal, e.to_string())
}

/// The sub-agent: answers `sub: <text>` inside a span of its own.
struct Sub;

impl Agent for Sub {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        async {
            let text = format!("sub: {}", cx.message.text());
            events.artifact(Artifact::text("sub", text)).await?;
            events.complete(None).await
        }
        .instrument(tracing::info_span!("sub.work"))
        .await
    }
}

/// The agent: says it is working (so that a stream of its task starts at once), asks the
/// sub-agent (JSON-RPC, blocking) and answers `middle: <its answer>`.
struct Middle {
    sub: String,
}

impl Agent for Middle {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        events.working("asking the sub-agent").await?;
        let client = Client::builder().build_jsonrpc(&self.sub).map_err(failed)?;
        let reply = client.send_text(&cx.message.text()).await.map_err(failed)?;
        let SendMessageResponse::Task(task) = reply else {
            return Err(Error::new(
                ErrorKind::Internal,
                "the sub-agent sent a message",
            ));
        };
        let text: String = task.artifacts.iter().map(|a| a.text_content()).collect();
        events
            .artifact(Artifact::text("middle", format!("middle: {text}")))
            .await?;
        events.complete(None).await
    }
}

/// The orchestrator: streams the agent's work (HTTP+JSON) with a webhook registered, and
/// answers what the agent answered.
struct Orchestrator {
    middle: String,
    hook: String,
}

impl Agent for Orchestrator {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        let client = Client::builder().build_rest(&self.middle).map_err(failed)?;
        let request: SendMessageRequest = serde_json::from_value(json!({
            "message": {
                "role": "ROLE_USER",
                "parts": [{"text": cx.message.text()}],
                "messageId": uuid::Uuid::new_v4().to_string(),
            },
            "configuration": {"taskPushNotificationConfig": {"url": self.hook}},
        }))
        .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
        let mut stream = client
            .send_streaming_message(&request)
            .await
            .map_err(failed)?;
        let mut text = String::new();
        while let Some(event) = stream.next().await {
            match event.map_err(failed)? {
                StreamResponse::Task(t) => {
                    text = t.artifacts.iter().map(|a| a.text_content()).collect();
                }
                StreamResponse::ArtifactUpdate(u) => text.push_str(&u.artifact.text_content()),
                _ => {}
            }
        }
        events.artifact(Artifact::text("result", text)).await?;
        events.complete(None).await
    }
}

/// Serves `agent` on a port of its own; its base URL.
async fn serve(agent: impl Agent, push: bool) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let builder = Server::builder(agent)
        .agent_card(AgentCard::builder("agent", "an agent of the trace test").build())
        .public_url(&url);
    let builder = if push {
        builder.push_notifications(PushSettings::default().allow("127.0.0.1").unwrap())
    } else {
        builder
    };
    let server = builder.build().unwrap();
    tokio::spawn(server.serve(listener));
    url
}

/// A webhook receiver: the `traceparent` and the body of every POST.
async fn webhook() -> (Arc<Mutex<Vec<(String, String)>>>, String) {
    let posts: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let record = posts.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: HeaderMap, body: String| {
            let record = record.clone();
            async move {
                let traceparent = headers
                    .get("traceparent")
                    .map(|v| v.to_str().unwrap().to_owned())
                    .unwrap_or_default();
                record.lock().unwrap().push((traceparent, body));
                StatusCode::OK
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    (posts, url)
}

/// The spans of `trace` received so far.
fn trace(t: &Telemetry, trace: &str) -> Vec<Received> {
    let received = t.received.lock().unwrap();
    received
        .iter()
        .filter(|s| s.trace_id == trace)
        .cloned()
        .collect()
}

/// The one span of `spans` that is a child of `parent` with this name and kind.
fn child<'a>(spans: &'a [Received], parent: &Received, name: &str, kind: i32) -> &'a Received {
    let found: Vec<_> = spans
        .iter()
        .filter(|s| s.parent == parent.span_id && s.name == name && s.kind == kind)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one {name} span (kind {kind}) under {} ({}), in {spans:#?}",
        parent.name,
        parent.span_id
    );
    found[0]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_trace_runs_through_an_orchestrator_an_agent_a_sub_agent_and_a_webhook() {
    let t = telemetry();
    let (posts, hook) = webhook().await;
    let sub = serve(Sub, false).await;
    let middle = serve(Middle { sub }, true).await;
    let orchestrator = serve(
        Orchestrator {
            middle,
            hook: hook.clone(),
        },
        false,
    )
    .await;

    let root = tracing::info_span!("test.root");
    let trace_id = root.context().span().span_context().trace_id().to_string();
    let answer = tokio::time::timeout(
        WAIT,
        async {
            let client = Client::builder()
                .prefer([a2a_client::Binding::Grpc])
                .connect(&orchestrator)
                .await
                .unwrap();
            assert_eq!(client.binding().0, "GRPC");
            client.send_text("hello").await.unwrap()
        }
        .instrument(root.clone()),
    )
    .await
    .expect("the delegation ends in time");
    drop(root);
    let SendMessageResponse::Task(task) = answer else {
        panic!("a task, not {answer:?}")
    };
    assert_eq!(task.artifacts[0].text_content(), "middle: sub: hello");

    // Every event of the agent's task is posted, up to its completion.
    let completed = |posts: &[(String, String)]| {
        posts
            .iter()
            .any(|(_, body)| body.contains("TASK_STATE_COMPLETED"))
    };
    tokio::time::timeout(WAIT, async {
        while !completed(&posts.lock().unwrap()) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the webhook gets every event");

    // Export, until the collector has every span this test expects (spans of a stream end
    // after its last event has been read, so some may come in a later batch).
    let spans = tokio::time::timeout(WAIT, async {
        loop {
            let provider = t.provider.clone();
            tokio::task::spawn_blocking(move || provider.force_flush())
                .await
                .unwrap()
                .unwrap();
            let spans = trace(t, &trace_id);
            let delivered = spans.iter().filter(|s| s.name == "push.deliver").count();
            let posted = posts.lock().unwrap().len();
            if spans.iter().filter(|s| s.name == "execute").count() == 3 && delivered >= posted {
                return spans;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("every span reaches the collector");

    const INTERNAL: i32 = 1;
    const SERVER: i32 = 2;
    const CLIENT: i32 = 3;
    let root = spans.iter().find(|s| s.name == "test.root").unwrap();
    // caller → orchestrator, over gRPC
    let call_o = child(&spans, root, "SendMessage", CLIENT);
    assert_eq!(call_o.attributes["a2a.protocol.binding"], "GRPC");
    let port = orchestrator.rsplit(':').next().unwrap();
    assert_eq!(call_o.attributes["server.address"], "127.0.0.1");
    assert_eq!(call_o.attributes["server.port"], port);
    let serve_o = child(&spans, call_o, "SendMessage", SERVER);
    assert_eq!(serve_o.attributes["a2a.method.name"], "SendMessage");
    assert_eq!(serve_o.attributes["a2a.protocol.binding"], "GRPC");
    assert_eq!(serve_o.attributes["a2a.task.id"], task.id.as_str());
    assert_eq!(
        serve_o.attributes["a2a.context.id"],
        task.context_id.as_str()
    );
    assert!(!serve_o.attributes.contains_key("error.type"));
    let exec_o = child(&spans, serve_o, "execute", INTERNAL);
    assert_eq!(exec_o.attributes["a2a.task.id"], task.id.as_str());
    // orchestrator → agent, streaming over HTTP+JSON, its span lasting the stream
    let call_m = child(&spans, exec_o, "SendStreamingMessage", CLIENT);
    assert_eq!(call_m.attributes["a2a.protocol.binding"], "HTTP+JSON");
    assert_eq!(call_m.status, 1, "OK");
    let serve_m = child(&spans, call_m, "SendStreamingMessage", SERVER);
    assert_eq!(serve_m.attributes["a2a.protocol.binding"], "HTTP+JSON");
    let middle_task = serve_m.attributes["a2a.task.id"].clone();
    let exec_m = child(&spans, serve_m, "execute", INTERNAL);
    assert_eq!(exec_m.attributes["a2a.task.id"], middle_task);
    // agent → sub-agent, over JSON-RPC; the sub-agent's own span inside its execution
    let call_s = child(&spans, exec_m, "SendMessage", CLIENT);
    assert_eq!(call_s.attributes["a2a.protocol.binding"], "JSONRPC");
    let serve_s = child(&spans, call_s, "SendMessage", SERVER);
    assert_eq!(serve_s.attributes["a2a.protocol.binding"], "JSONRPC");
    let exec_s = child(&spans, serve_s, "execute", INTERNAL);
    assert_eq!(
        exec_s.attributes["a2a.task.id"],
        serve_s.attributes["a2a.task.id"]
    );
    child(&spans, exec_s, "sub.work", INTERNAL);
    // The stream's spans end when the stream ends (after the agent's last event, which came
    // after its call to the sub-agent), not when its first event went out (before that call).
    assert!(
        serve_m.start <= call_s.start && serve_m.end >= call_s.end,
        "the server's stream span lasts the stream"
    );
    assert!(
        call_m.start <= call_s.start && call_m.end >= call_s.end,
        "the client's stream span lasts the stream"
    );

    // The webhook deliveries of the agent's task: client spans in the same trace, and each
    // POST's traceparent names one of them as its parent.
    let deliveries: Vec<_> = spans.iter().filter(|s| s.name == "push.deliver").collect();
    assert!(deliveries.iter().all(|d| d.kind == CLIENT
        && d.attributes["a2a.task.id"] == middle_task
        && d.attributes["url.full"] == hook));
    for (traceparent, _) in posts.lock().unwrap().iter() {
        let fields: Vec<&str> = traceparent.split('-').collect();
        assert_eq!(fields.len(), 4, "a W3C traceparent, not {traceparent:?}");
        assert_eq!(fields[1], trace_id, "the webhook POST continues the trace");
        assert!(
            deliveries.iter().any(|d| d.span_id == fields[2]),
            "the POST's parent is its delivery span"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_call_marks_both_spans_with_the_error_reason() {
    let t = telemetry();
    let agent = serve(Sub, false).await;
    let root = tracing::info_span!("test.failing");
    let trace_id = root.context().span().span_context().trace_id().to_string();
    let error = async {
        let client = Client::builder().build_jsonrpc(&agent).unwrap();
        client.get_task("no-such-task").await.unwrap_err()
    }
    .instrument(root.clone())
    .await;
    drop(root);
    assert_eq!(error.kind(), Some(ErrorKind::TaskNotFound));
    let spans = tokio::time::timeout(WAIT, async {
        loop {
            let provider = t.provider.clone();
            tokio::task::spawn_blocking(move || provider.force_flush())
                .await
                .unwrap()
                .unwrap();
            let spans = trace(t, &trace_id);
            if spans.iter().any(|s| s.kind == 2) && spans.iter().any(|s| s.kind == 3) {
                return spans;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the spans reach the collector");
    let root = spans.iter().find(|s| s.name == "test.failing").unwrap();
    let call = child(&spans, root, "GetTask", 3);
    assert_eq!(call.attributes["error.type"], "TASK_NOT_FOUND");
    let served = child(&spans, call, "GetTask", 2);
    assert_eq!(served.attributes["error.type"], "TASK_NOT_FOUND");
    assert_eq!(served.attributes["rpc.response.status_code"], "-32001");
    assert_eq!(served.status, 2, "ERROR");
    assert_eq!(call.status, 2, "ERROR");
}
