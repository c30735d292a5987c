//! Interoperability with the official Python SDK (PyPI `a2a-sdk`, pinned by
//! `tests/interop/requirements-*.txt`, installed by `tests/interop/setup.sh`):
//!
//! - its v1.x client (1.3.0) drives our server over JSON-RPC and HTTP+JSON
//!   (`tests/interop/py_client.py`): blocking and return-immediately sends, streaming, get,
//!   list, cancel, subscribe, multi-turn, error mapping;
//! - its v0.3 client (0.3.26) drives our server's v0.3 JSON-RPC (`tests/interop/py03_client.py`);
//! - our `a2a_client::Client` talks to agents written with the SDK's server
//!   (`tests/interop/py_server.py`) over JSON-RPC, HTTP+JSON and v0.3 JSON-RPC, streaming and
//!   polling, including a multi-turn (INPUT_REQUIRED) exchange answered with `reply`.

mod interop_support;

use a2a_client::{Binding, Client, DelegateOptions};
use a2a_core::{
    ErrorKind, ListTasksRequest, Message, SendMessageResponse, StreamResponse, Task, TaskState,
};
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
    let question = asked.status.message.as_ref().map(Message::text);
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
    for binding in [Binding::JsonRpc, Binding::HttpJson] {
        let ask = connect(&format!("{}/ask", py.base), binding).await;
        ask_agent(&ask, &py, streaming, streaming).await;
    }
}
