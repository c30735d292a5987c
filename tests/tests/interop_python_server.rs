//! Interoperability with the official Python SDK (PyPI `a2a-sdk`, pinned by
//! `tests/interop/requirements-*.txt`, installed by `tests/interop/setup.sh`), the other way
//! round from `interop_python.rs`: our `a2a_client::Client` talks to agents written with the
//! SDK's server (`tests/interop/py_server.py`) over JSON-RPC, HTTP+JSON, gRPC (the SDK's
//! `GrpcHandler` on a grpc.aio server) and v0.3 JSON-RPC, streaming and polling, including a
//! multi-turn (INPUT_REQUIRED) exchange answered with `reply`.

mod interop_support;

use a2a_client::{Binding, Client, DelegateOptions};
use a2a_core::{
    ErrorKind, ListTasksRequest, Message, SendMessageRequest, SendMessageResponse, StreamResponse,
    Task, TaskPushNotificationConfig, TaskState,
};
use futures::StreamExt as _;
use interop_support::h2_watch::H2Watch;
use interop_support::{PeerServer, env};
use std::time::Duration;

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
