//! Interoperability with the official Python SDK (PyPI `a2a-sdk`, pinned by
//! `tests/interop/requirements-*.txt`, installed by `tests/interop/setup.sh`):
//!
//! - its v1.x client (1.3.0) drives our server over JSON-RPC, HTTP+JSON and gRPC (the SDK's
//!   `GrpcTransport` on grpcio; `tests/interop/py_client.py`): blocking and return-immediately
//!   sends, streaming, get, list, cancel, subscribe, multi-turn, error mapping;
//! - its v0.3 client (0.3.26) drives our server's v0.3 JSON-RPC (`tests/interop/py03_client.py`);
//! - our `a2a_client::Client` talks to agents written with the SDK's server
//!   (`tests/interop/py_server.py`) over JSON-RPC, HTTP+JSON, gRPC (the SDK's `GrpcHandler` on a
//!   grpc.aio server) and v0.3 JSON-RPC, streaming and polling, including a multi-turn
//!   (INPUT_REQUIRED) exchange answered with `reply`.

mod interop_support;

use a2a_client::{Binding, Client, DelegateOptions};
use a2a_core::{
    ErrorKind, ListTasksRequest, Message, SendMessageRequest, SendMessageResponse, StreamResponse,
    Task, TaskPushNotificationConfig, TaskState,
};
use futures::StreamExt as _;
use interop_support::h2_watch::H2Watch;
use interop_support::{
    OurServer, PeerServer, V1, V03, arr, artifacts, assert_cancel_running, assert_countdown_stream,
    assert_multi_turn, assert_return_immediately, assert_send_blocking, assert_subscribe_running,
    assert_v03_common, assert_v03_final_flags, env, event_state, is_status_update, run_peer, s,
    scenario,
};
use serde_json::Value;
use std::time::Duration;

// ---------------------------------------------------------------------------------------------
// The Python SDK's clients against our server

async fn python_v1_client(binding: &str) -> Value {
    let env = env();
    let server = OurServer::start().await;
    let script = env.programs.join("py_client.py");
    run_peer(
        &format!("py_client.py (a2a-sdk 1.3.0, {binding})"),
        &env.python_v1,
        &[script.to_str().expect("utf-8 path"), &server.url, binding],
    )
    .await
}

/// Everything the v1.x Python client saw of our demo agent, over either binding.
fn assert_python_v1_report(report: &Value, transport: &str) {
    assert_eq!(
        report["transport"], transport,
        "the SDK picked another binding: {report:#}"
    );
    assert_send_blocking(scenario(report, "send_blocking"), "hello from python", V1);
    assert_return_immediately(scenario(report, "send_return_immediately"), V1);

    let events = arr(scenario(report, "stream_countdown"));
    assert_countdown_stream(
        events,
        "3\n2\n1\n",
        V1.completed,
        [V1.submitted, V1.working],
    );

    let v = scenario(report, "get_and_list");
    assert_eq!(s(&v["got"], "id"), s(&v["sent"], "id"), "{v:#}");
    assert_eq!(s(&v["got"], "state"), V1.completed, "{v:#}");
    assert_eq!(artifacts(&v["got"]), ["echo: get me"], "{v:#}");
    assert_eq!(
        v["list"]["ids"],
        serde_json::json!([s(&v["sent"], "id")]),
        "ListTasks by context: {v:#}"
    );
    assert_eq!(v["list"]["totalSize"], 1, "{v:#}");
    assert_eq!(v["list"]["nextPageToken"], "", "{v:#}");

    assert_cancel_running(scenario(report, "cancel_running"), V1);
    assert_subscribe_running(scenario(report, "subscribe_running"), V1);
    assert_multi_turn(scenario(report, "multi_turn"), V1);

    // The same conversation over SendStreamingMessage: the first stream ends at INPUT_REQUIRED,
    // the answer's stream at COMPLETED, both in one task.
    let v = scenario(report, "multi_turn_streaming");
    let first = arr(&v["first"]);
    let second = arr(&v["second"]);
    let id = s(&first[0], "id");
    assert_eq!(
        event_state(first.last().expect("events")),
        Some(V1.input_required),
        "{v:#}"
    );
    assert_eq!(
        s(&second[0], "id"),
        id,
        "the answer's stream is the same task: {v:#}"
    );
    let last = second.last().expect("events");
    assert!(is_status_update(last), "{v:#}");
    assert_eq!(event_state(last), Some(V1.completed), "{v:#}");
    assert_eq!(last["text"], "Hello, Grace!", "{v:#}");

    // Our errors map onto the SDK's exception classes (by JSON-RPC code / ErrorInfo reason).
    let v = scenario(report, "errors");
    assert_eq!(v["get_unknown"], "TaskNotFoundError", "{v:#}");
    assert!(
        s(v, "get_unknown_unicode").starts_with("TaskNotFoundError: ")
            && s(v, "get_unknown_unicode").contains("nö-such-täsk ✓ 100%"),
        "{v:#}"
    );
    assert_eq!(v["cancel_completed"], "TaskNotCancelableError", "{v:#}");
    assert_eq!(
        v["subscribe_completed"], "UnsupportedOperationError",
        "{v:#}"
    );
    assert_eq!(v["send_to_completed"], "UnsupportedOperationError", "{v:#}");
    assert_eq!(
        v["push_config"], "PushNotificationNotSupportedError",
        "{v:#}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn python_sdk_v1_client_over_jsonrpc() {
    let report = python_v1_client("JSONRPC").await;
    assert_python_v1_report(&report, "JsonRpcTransport");
}

#[tokio::test(flavor = "multi_thread")]
async fn python_sdk_v1_client_over_http_json() {
    let report = python_v1_client("HTTP+JSON").await;
    assert_python_v1_report(&report, "RestTransport");
}

/// The SDK's gRPC client (grpcio, `grpc.aio.insecure_channel` to the card's `host:port`
/// interface): the same scenarios, errors read from the `google.rpc.Status` in
/// `grpc-status-details-bin` (whose code and message the SDK checks against `grpc-status` and
/// `grpc-message`).
#[tokio::test(flavor = "multi_thread")]
async fn python_sdk_v1_client_over_grpc() {
    let report = python_v1_client("GRPC").await;
    assert_python_v1_report(&report, "GrpcTransport");
}

async fn python_v03_client() -> (Value, String) {
    let env = env();
    let server = OurServer::start().await;
    let script = env.programs.join("py03_client.py");
    let report = run_peer(
        "py03_client.py (a2a-sdk 0.3.26)",
        &env.python_v03,
        &[script.to_str().expect("utf-8 path"), &server.url],
    )
    .await;
    (report, server.url.clone())
}

#[tokio::test(flavor = "multi_thread")]
async fn python_sdk_v03_client_over_jsonrpc() {
    let (report, url) = python_v03_client().await;
    // It read the hybrid card the v0.3 way.
    assert_eq!(report["cardProtocolVersion"], "0.3", "{report:#}");
    assert_eq!(report["cardUrl"], url.as_str(), "{report:#}");
    assert_v03_common(&report, "hello from python 0.3");

    // message/stream: v0.3 events with `kind`, `final: true` on the last status update only;
    // the SDK's task manager assembles the chunks.
    let v = scenario(&report, "stream_countdown");
    let events = arr(&v["events"]);
    assert_countdown_stream(
        events,
        "3\n2\n1\n",
        V03.completed,
        [V03.submitted, V03.working],
    );
    assert_v03_final_flags(events);
    assert_eq!(s(&v["assembled"], "state"), V03.completed, "{v:#}");
    assert_eq!(artifacts(&v["assembled"]), ["3\n2\n1\n"], "{v:#}");

    let v = scenario(&report, "errors");
    assert_eq!(v["get_unknown"], -32001, "{v:#}");
    assert_eq!(v["cancel_completed"], -32002, "{v:#}");
    assert_eq!(v["send_to_completed"], -32004, "{v:#}");
}

/// Errors of v0.3 streaming methods. a2a-sdk 0.3.26's client reads them only as a JSON-RPC
/// error inside a `text/event-stream` response (`data: {"jsonrpc":"2.0","id":…,"error":…}`),
/// which is what the v0.3 reference servers send (a2a-sdk 0.3.26 `JSONRPCHandler`, a2a-sdk
/// 1.3.0's v0.3 `JSONRPCAdapter`: HTTP 200, `text/event-stream`, one error event). Our server
/// answers `tasks/resubscribe` of a finished or unknown task and `message/stream` to a finished
/// task with a plain `application/json` error, so the client raises `A2AClientHTTPError:
/// Invalid SSE response … got 'application/json'` instead of the -32004 / -32001 error.
#[tokio::test(flavor = "multi_thread")]
async fn python_sdk_v03_client_reads_streaming_errors() {
    let (report, _) = python_v03_client().await;
    let v = scenario(&report, "errors");
    assert_eq!(v["resubscribe_completed"], -32004, "{v:#}");
    assert_eq!(v["resubscribe_unknown"], -32001, "{v:#}");
    assert_eq!(v["stream_to_completed"], -32004, "{v:#}");
}

// ---------------------------------------------------------------------------------------------
// Our client against agents written with the Python SDK's server

const DEADLINE: Duration = Duration::from_secs(30);

fn streaming() -> DelegateOptions {
    DelegateOptions::default().deadline(DEADLINE)
}

fn polling() -> DelegateOptions {
    DelegateOptions::default()
        .deadline(DEADLINE)
        .force_polling(true)
        .poll_interval(Duration::from_millis(20), Duration::from_millis(200))
}

async fn start_python_server() -> PeerServer {
    let env = env();
    let script = env.programs.join("py_server.py");
    PeerServer::start(
        "py_server.py (a2a-sdk 1.3.0)",
        &env.python_v1,
        &[script.to_str().expect("utf-8 path"), "0"],
    )
    .await
}

fn expect_task(outcome: SendMessageResponse, what: &str) -> Task {
    match outcome {
        SendMessageResponse::Task(task) => task,
        SendMessageResponse::Message(m) => panic!("{what}: a message instead of a task: {m:?}"),
    }
}

fn artifact_texts(task: &Task) -> Vec<String> {
    task.artifacts.iter().map(|a| a.text_content()).collect()
}

/// The Python echo agent: streamed (chunks seen and assembled), polled, get, list, a message
/// answer, and TaskNotFound mapping.
async fn echo_agent(client: &Client, py: &PeerServer, v03: bool) {
    // Streaming: the chunks `echo: ` + `<text>` arrive as artifact updates and are assembled.
    let mut events = Vec::new();
    let outcome = client
        .delegate_with(Message::user_text("hello"), streaming(), |e| {
            events.push(e.clone())
        })
        .await
        .unwrap_or_else(|e| panic!("streamed delegate: {e}\n{}", py.stderr()));
    let task = expect_task(outcome, "streamed delegate");
    assert_eq!(task.status.state, TaskState::Completed, "{task:?}");
    assert_eq!(
        artifact_texts(&task),
        ["echo: hello"],
        "{task:?}\n{events:#?}"
    );
    assert!(
        matches!(events.first(), Some(StreamResponse::Task(_))),
        "the stream starts with the task: {events:#?}"
    );
    let chunks: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            StreamResponse::ArtifactUpdate(a) => Some((a.artifact.text_content(), a.append)),
            _ => None,
        })
        .collect();
    assert_eq!(
        chunks,
        [("echo: ".to_owned(), false), ("hello".to_owned(), true)],
        "the SDK's two chunks, in order: {events:#?}"
    );

    // Polling: GetTask until completed gives the same, merged by the SDK's server.
    let outcome = client
        .delegate(Message::user_text("polled"), polling())
        .await
        .unwrap_or_else(|e| panic!("polled delegate: {e}\n{}", py.stderr()));
    let polled = expect_task(outcome, "polled delegate");
    assert_eq!(polled.status.state, TaskState::Completed, "{polled:?}");
    assert_eq!(artifact_texts(&polled), ["echo: polled"], "{polled:?}");

    let got = client.get_task(task.id.clone()).await.expect("get_task");
    assert_eq!(got.id, task.id);
    assert_eq!(got.context_id, task.context_id);
    assert_eq!(got.status.state, TaskState::Completed);
    assert_eq!(artifact_texts(&got), ["echo: hello"], "{got:?}");

    if !v03 {
        let listed = client
            .list_tasks(&ListTasksRequest {
                context_id: Some(task.context_id.clone()),
                ..Default::default()
            })
            .await
            .expect("list_tasks");
        let ids: Vec<_> = listed.tasks.iter().map(|t| &t.id).collect();
        assert_eq!(ids, [&task.id], "ListTasks by context: {listed:?}");
    }

    // An agent that answers with a Message (no task), both ways.
    match client.send_text("msg: hi").await.expect("send_text") {
        SendMessageResponse::Message(m) => assert_eq!(m.text(), "you said: hi"),
        other => panic!("expected the agent's message, got {other:?}"),
    }
    for options in [streaming(), polling()] {
        match client
            .delegate(Message::user_text("msg: yo"), options)
            .await
        {
            Ok(SendMessageResponse::Message(m)) => assert_eq!(m.text(), "you said: yo"),
            other => panic!("expected the agent's message, got {other:?}"),
        }
    }

    let missing = client
        .get_task("no-such-task")
        .await
        .expect_err("an unknown task");
    assert_eq!(missing.kind(), Some(ErrorKind::TaskNotFound), "{missing:?}");
}

/// The Python input-required agent: `delegate` stops at INPUT_REQUIRED with the question,
/// `reply` in the same task completes it. `ask` and `answer` say how each step is followed.
async fn ask_agent(
    client: &Client,
    py: &PeerServer,
    ask: fn() -> DelegateOptions,
    answer: fn() -> DelegateOptions,
) {
    let outcome = client
        .delegate(Message::user_text("weather?"), ask())
        .await
        .unwrap_or_else(|e| panic!("delegate: {e}\n{}", py.stderr()));
    let asked = expect_task(outcome, "delegate");
    assert_eq!(asked.status.state, TaskState::InputRequired, "{asked:?}");
    let question = asked.status.message.as_deref().map(Message::text);
    assert_eq!(question.as_deref(), Some("Which city?"), "{asked:?}");

    let outcome = client
        .reply(&asked, Message::user_text("Paris"), answer())
        .await
        .unwrap_or_else(|e| panic!("reply: {e}\n{}", py.stderr()));
    let answered = expect_task(outcome, "reply");
    assert_eq!(answered.id, asked.id, "the reply continues the task");
    assert_eq!(answered.context_id, asked.context_id);
    assert_eq!(answered.status.state, TaskState::Completed, "{answered:?}");
    assert_eq!(
        artifact_texts(&answered),
        ["weather in Paris: sunny"],
        "{answered:?}"
    );
}

async fn connect(base: &str, binding: Binding) -> Client {
    Client::builder()
        .prefer([binding])
        .timeout(DEADLINE)
        .connect(base)
        .await
        .unwrap_or_else(|e| panic!("connect to {base}: {e}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn our_client_against_python_sdk_server_over_jsonrpc() {
    let py = start_python_server().await;
    let echo = connect(&format!("{}/echo", py.base), Binding::JsonRpc).await;
    assert_eq!(echo.binding(), ("JSONRPC", "1.0"));
    echo_agent(&echo, &py, false).await;
    let ask = connect(&format!("{}/ask", py.base), Binding::JsonRpc).await;
    assert_eq!(ask.binding(), ("JSONRPC", "1.0"));
    ask_agent(&ask, &py, streaming, polling).await;
    ask_agent(&ask, &py, polling, polling).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn our_client_against_python_sdk_server_over_http_json() {
    let py = start_python_server().await;
    let echo = connect(&format!("{}/echo", py.base), Binding::HttpJson).await;
    assert_eq!(echo.binding(), ("HTTP+JSON", "1.0"));
    echo_agent(&echo, &py, false).await;
    let ask = connect(&format!("{}/ask", py.base), Binding::HttpJson).await;
    assert_eq!(ask.binding(), ("HTTP+JSON", "1.0"));
    ask_agent(&ask, &py, streaming, polling).await;
    ask_agent(&ask, &py, polling, polling).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn our_client_against_python_sdk_server_over_grpc() {
    let py = start_python_server().await;
    let echo = connect(&format!("{}/echo", py.base), Binding::Grpc).await;
    assert_eq!(echo.binding(), ("GRPC", "1.0"));
    echo_agent(&echo, &py, false).await;
    let ask = connect(&format!("{}/ask", py.base), Binding::Grpc).await;
    assert_eq!(ask.binding(), ("GRPC", "1.0"));
    ask_agent(&ask, &py, streaming, polling).await;
    ask_agent(&ask, &py, polling, polling).await;
}

/// The A2A error kind of a call that must fail (its outcome, if it did not, in the panic).
fn error_kind(
    what: &str,
    outcome: Result<String, a2a_client::Error>,
    py: &PeerServer,
) -> ErrorKind {
    match outcome {
        Ok(v) => panic!("{what}: no error but {v}\n{}", py.stderr()),
        Err(e) => e
            .kind()
            .unwrap_or_else(|| panic!("{what}: not an A2A error: {e:?}\n{}", py.stderr())),
    }
}

/// The SDK server's errors, as our client reads them over each v1.0 binding: the same kinds
/// everywhere. Over gRPC they come as a status code (the spec's v1.0.1 table: NOT_FOUND,
/// FAILED_PRECONDITION) with the `google.rpc.Status` in `grpc-status-details-bin`, whose
/// ErrorInfo reason our client reads.
#[tokio::test(flavor = "multi_thread")]
async fn our_client_reads_python_sdk_server_errors() {
    let py = start_python_server().await;
    for binding in [Binding::JsonRpc, Binding::HttpJson, Binding::Grpc] {
        let client = connect(&format!("{}/echo", py.base), binding).await;
        let kind_of =
            |what: &str, outcome| error_kind(&format!("{binding:?} {what}"), outcome, &py);
        let done = expect_task(
            client.send_text("done").await.expect("send_text"),
            "send_text",
        );
        assert_eq!(done.status.state, TaskState::Completed, "{done:?}");

        let missing = client
            .get_task("no-such-task")
            .await
            .map(|t| format!("{t:?}"));
        assert_eq!(
            kind_of("get unknown", missing),
            ErrorKind::TaskNotFound,
            "{binding:?}"
        );
        let to_unknown = Message::user_text("hi").with_task_id("no-such-task");
        let sent = client
            .send_message(&SendMessageRequest::new(to_unknown))
            .await
            .map(|r| format!("{r:?}"));
        assert_eq!(
            kind_of("send to an unknown task", sent),
            ErrorKind::TaskNotFound,
            "{binding:?}"
        );
        let canceled = client
            .cancel_task(done.id.clone())
            .await
            .map(|t| format!("{t:?}"));
        assert_eq!(
            kind_of("cancel completed", canceled),
            ErrorKind::TaskNotCancelable,
            "{binding:?}"
        );
        let hook = TaskPushNotificationConfig {
            task_id: Some(done.id.clone()),
            url: "https://hooks.invalid/a2a".to_owned(),
            ..Default::default()
        };
        let created = client
            .create_push_config(&hook)
            .await
            .map(|c| format!("{c:?}"));
        assert_eq!(
            kind_of("create push config", created),
            ErrorKind::PushNotificationNotSupported,
            "{binding:?}"
        );
        // A stream's error may come when it opens or as its first item.
        let subscribed = match client.subscribe(done.id.clone()).await {
            Err(e) => Err(e),
            Ok(mut stream) => {
                match tokio::time::timeout(DEADLINE, stream.next())
                    .await
                    .expect("subscribe: no answer")
                {
                    Some(Err(e)) => Err(e),
                    other => Ok(format!("{other:?}")),
                }
            }
        };
        assert_eq!(
            kind_of("subscribe completed", subscribed),
            ErrorKind::UnsupportedOperation,
            "{binding:?}"
        );
    }
}

/// How long the keep-alive test keeps a stream open and quiet, and a connection idle.
const QUIET: Duration = Duration::from_secs(35);

/// Our gRPC client must ping no more often than gRPC servers allow. They police pings by default:
/// C-core (grpcio, the Python SDK's server; also C++, Ruby, PHP) allows one ping per 5 minutes
/// without data while a call is open and one per 2 hours without a call
/// (`grpc.http2.min_ping_interval_without_data_ms`, `grpc.keepalive_permit_without_calls`), and
/// grpc-go and grpc-java default to the same 5 minutes (`EnforcementPolicy.MinTime`,
/// `permitKeepAliveTime`). Each ping too soon is a strike; after 2 (`grpc.http2.max_ping_strikes`)
/// the next one gets GOAWAY ENHANCE_YOUR_CALM "too_many_pings" and the connection is closed,
/// cutting the streams open on it. A client that pinged every 30 s (as ours once did) lost its
/// connection ~120 s into a quiet stream. The test watches a quiet stream's connection and an
/// idle one for 35 s: no PING from the client on either, no GOAWAY, one connection each.
#[tokio::test(flavor = "multi_thread")]
async fn our_grpc_client_pings_no_more_often_than_grpc_servers_allow() {
    let py = start_python_server().await;
    let echo = connect(&format!("{}/echo", py.base), Binding::Grpc).await;
    let grpc = echo
        .card()
        .expect("a card")
        .supported_interfaces
        .iter()
        .find(|i| i.protocol_binding == "GRPC")
        .expect("a GRPC interface")
        .url
        .clone();
    let (quiet, idle) = (H2Watch::start(&grpc).await, H2Watch::start(&grpc).await);
    let through = |watch: &H2Watch| {
        Client::builder()
            .timeout(DEADLINE)
            .build_grpc(&watch.addr)
            .expect("build_grpc")
    };
    let (quiet_client, idle_client) = (through(&quiet), through(&idle));

    // One connection idle after a call, the other carrying a stream with nothing to say.
    let sent = idle_client.send_text("one").await.expect("send_text");
    expect_task(sent, "send_text");
    let text = format!("quiet {}", QUIET.as_secs());
    let options = DelegateOptions::default().deadline(QUIET + DEADLINE);
    let outcome = quiet_client
        .delegate(Message::user_text(&text), options)
        .await
        .unwrap_or_else(|e| panic!("quiet delegate: {e}\n{}", py.stderr()));
    let task = expect_task(outcome, "quiet delegate");
    assert_eq!(task.status.state, TaskState::Completed, "{task:?}");

    for (what, watch) in [("a quiet stream's", &quiet), ("an idle", &idle)] {
        let connections = watch.connections();
        let c = &connections[0];
        assert!(
            c.client_pings.is_empty() && c.goaways.is_empty() && connections.len() == 1,
            "over {what} connection our client sent PINGs at {:?} after it opened ({} in a row \
             with nothing from the server between them); gRPC servers allow one per 5 minutes \
             (none without a call) and answer a few too many with GOAWAY ENHANCE_YOUR_CALM \
             \"too_many_pings\", closing the connection. GOAWAYs (code, debug data): {:?}; \
             connections opened: {}",
            c.client_pings,
            c.pings_without_data,
            c.goaways,
            connections.len()
        );
    }
    drop((quiet_client, idle_client));
}

/// The Python SDK's v0.3 compat layer (an agent whose card offers only JSON-RPC 0.3): our
/// client must pick its v0.3 transport and still get the same results.
#[tokio::test(flavor = "multi_thread")]
async fn our_client_against_python_sdk_server_over_v03_jsonrpc() {
    let py = start_python_server().await;
    let legacy = connect(&format!("{}/legacy", py.base), Binding::JsonRpc).await;
    assert_eq!(legacy.binding(), ("JSONRPC", "0.3"));
    echo_agent(&legacy, &py, true).await;
}

/// `reply` over a stream to an a2a-python server. The SDK's server, with the executor pattern of
/// its samples (enqueue a `Task` only when `context.current_task` is None), opens the stream of
/// a follow-up message with a `statusUpdate`, not a `task` snapshot. The proto says the first
/// response "should be a Task"; our client follows such a stream from the task it answers.
#[tokio::test(flavor = "multi_thread")]
async fn our_client_streaming_reply_to_python_sdk_server() {
    let py = start_python_server().await;
    for binding in [Binding::JsonRpc, Binding::HttpJson, Binding::Grpc] {
        let ask = connect(&format!("{}/ask", py.base), binding).await;
        ask_agent(&ask, &py, streaming, streaming).await;
    }
}

/// What `a2a check` finds wrong with the Python SDK's echo agent, on each binding it serves.
/// Pinned, so that a change in the checker (or the SDK) shows up here.
#[tokio::test(flavor = "multi_thread")]
async fn a2a_check_findings_on_the_python_sdk_server() {
    let server = start_python_server().await;
    let (failures, table) = interop_support::check_failures(&format!("{}/echo", server.base)).await;
    assert_eq!(
        failures,
        [
            // The card comes with an ETag but no Cache-Control, and only at the new path.
            "FAIL SHOULD card card.cache-control",
            "FAIL MAY card card.legacy-path",
            // grpcio answers bytes that are not the request message with UNKNOWN.
            "FAIL SHOULD GRPC errors.malformed-json",
            // The gRPC handler does not look at the `a2a-version` metadata (the HTTP
            // bindings refuse 99.0 as they should).
            "FAIL MUST GRPC errors.unsupported-version",
        ],
        "{table}\n--- server stderr ---\n{}",
        server.stderr()
    );
}

// ---------------------------------------------------------------------------------------------
// Signed agent cards, both ways (tests/interop/py_signing.py, the SDK's `a2a.utils.signing`)

/// Runs `py_signing.py ARGS…` and returns its stdout.
async fn py_signing(args: &[&str]) -> String {
    let env = env();
    let script = env.programs.join("py_signing.py");
    let output = tokio::time::timeout(
        interop_support::PEER_TIMEOUT,
        tokio::process::Command::new(&env.python_v1)
            .arg(&script)
            .args(args)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("py_signing.py ended in time")
    .expect("py_signing.py ran");
    let stdout = String::from_utf8(output.stdout).expect("UTF-8");
    assert!(
        output.status.success(),
        "py_signing.py {args:?}: {}\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write a temp file");
    path.to_str().expect("UTF-8 path").to_owned()
}

/// Our demo agent's card as our server serves it to a v1.0 client, signed by a key of each
/// of `kinds` (`a2a_e2e::keys`).
async fn our_signed_card(kinds: &[a2a_e2e::keys::Kind]) -> Value {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    let mut builder = a2a_server::Server::builder(a2a_server::demo::DemoAgent)
        .agent_card(a2a_server::demo::DemoAgent::card())
        .public_url(&url);
    for kind in kinds {
        let key =
            a2a_core::signing::CardSigningKey::from_pem(a2a_e2e::keys::pem(*kind)).expect("a key");
        builder = builder.card_signing_key(key);
    }
    let server = builder.build().expect("builds");
    let serving = tokio::spawn(async move { server.serve(listener).await.expect("serve") });
    let card = reqwest::Client::new()
        .get(format!("{url}/.well-known/agent-card.json"))
        .header("A2A-Version", "1.0")
        .send()
        .await
        .expect("GET")
        .json()
        .await
        .expect("JSON");
    serving.abort();
    card
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_sdk_verifies_the_cards_we_sign() {
    use a2a_core::signing::{CardSigningKey, jwks};
    use a2a_e2e::keys::{Kind, pem};
    let dir = tempfile::tempdir().expect("a temp dir");
    let keys: Vec<CardSigningKey> = Kind::ALL
        .into_iter()
        .map(|k| CardSigningKey::from_pem(pem(k)).expect("a key"))
        .collect();
    let card = our_signed_card(&Kind::ALL).await;

    // The SDK's canonical form of our card is byte for byte the RFC 8785 form we signed.
    let card_file = write(dir.path(), "card.json", &card.to_string());
    let theirs = py_signing(&["canonical", &card_file]).await;
    let ours = a2a_core::signing::canonical_card(&card, a2a_core::signing::Canonicalization::Jcs);
    assert_eq!(theirs, String::from_utf8(ours).expect("UTF-8"));

    // Each of our signatures verifies with the SDK, given only that key.
    for (kind, key) in Kind::ALL.into_iter().zip(&keys) {
        let jwks_file = write(
            dir.path(),
            "jwks.json",
            &jwks(std::slice::from_ref(key)).to_string(),
        );
        let verdict = py_signing(&["verify", &card_file, &jwks_file, kind.algorithm()]).await;
        assert_eq!(verdict.trim(), r#"{"ok": true}"#, "{kind:?}");
    }

    // A changed card does not.
    let mut tampered = card.clone();
    tampered["description"] = Value::from("Something else entirely.");
    let tampered_file = write(dir.path(), "tampered.json", &tampered.to_string());
    let jwks_file = write(dir.path(), "jwks.json", &jwks(&keys).to_string());
    let verdict: Value = serde_json::from_str(
        &py_signing(&["verify", &tampered_file, &jwks_file, "ES256,RS256,EdDSA"]).await,
    )
    .expect("JSON");
    assert_eq!(verdict["ok"], false, "{verdict}");
    assert!(
        verdict["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("InvalidSignaturesError")),
        "{verdict}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn our_client_verifies_the_cards_the_python_sdk_signs() {
    use a2a_core::signing::{
        Canonicalization, CardSigningKey, Rejection, TrustedKeys, VerifyError, verify_card,
    };
    use a2a_e2e::keys::{Kind, pem};
    let dir = tempfile::tempdir().expect("a temp dir");
    let unsigned = our_signed_card(&[]).await;
    let card_file = write(dir.path(), "card.json", &unsigned.to_string());
    for kind in Kind::ALL {
        let kid = format!("py-{}", kind.algorithm());
        let key_file = write(dir.path(), "key.pem", pem(kind));
        let signed: Value = serde_json::from_str(
            &py_signing(&["sign", &card_file, &key_file, &kid, kind.algorithm()]).await,
        )
        .expect("the signed card");
        let public = CardSigningKey::from_pem(pem(kind))
            .expect("a key")
            .with_kid(&kid)
            .public_jwk();
        let trusted = TrustedKeys::from_jwks(&public).expect("a JWK");
        let verified =
            verify_card(&signed, &trusted, Canonicalization::Jcs).expect("the SDK's signature");
        assert_eq!(verified.kid.as_deref(), Some(kid.as_str()));
        assert_eq!(verified.algorithm, kind.algorithm());
    }

    // A card holding an empty value: the SDK signs it with the value dropped, which the spec's
    // RFC 8785 form does not do; the SDK compatibility form verifies it.
    let mut with_empty = unsigned.clone();
    with_empty["iconUrl"] = Value::from("");
    let empty_file = write(dir.path(), "empty.json", &with_empty.to_string());
    let key_file = write(dir.path(), "key.pem", pem(Kind::Es256));
    let signed: Value = serde_json::from_str(
        &py_signing(&["sign", &empty_file, &key_file, "py-ec", "ES256"]).await,
    )
    .expect("the signed card");
    assert_eq!(
        signed["iconUrl"], "",
        "the SDK keeps the empty field in the card: {signed}"
    );
    let trusted = TrustedKeys::from_jwks(
        &CardSigningKey::from_pem(pem(Kind::Es256))
            .expect("a key")
            .with_kid("py-ec")
            .public_jwk(),
    )
    .expect("a JWK");
    match verify_card(&signed, &trusted, Canonicalization::Jcs) {
        Err(VerifyError::Rejected(r)) => assert_eq!(r[0].2, Rejection::BadSignature),
        other => panic!("the spec's form should not verify it: {other:?}"),
    }
    verify_card(&signed, &trusted, Canonicalization::Sdk).expect("the SDK form verifies");
}
