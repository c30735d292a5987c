//! Interoperability with the official JavaScript SDK (npm `@a2a-js/sdk`, pinned by
//! `tests/interop/js/package-lock.json`, installed by `tests/interop/setup.sh`):
//!
//! - the 1.3.0 client (`tests/interop/js_client.mjs`) drives our server over v1.0 JSON-RPC,
//!   v1.0 HTTP+JSON, v1.0 gRPC (its `GrpcTransport`, on @grpc/grpc-js), and — through the
//!   SDK's v0.3 compat transport — v0.3 JSON-RPC;
//! - the 0.3.14 client (`tests/interop/js03_client.mjs`) drives our server's v0.3 JSON-RPC.
//!
//! Each covers blocking and return-immediately sends, streaming, get, (list,) cancel,
//! subscribe, multi-turn and error mapping.
//!
//! And our `a2a_client::Client` talks to an echo agent written with the 1.3.0 SDK's server
//! (`tests/interop/js_server.mjs`: `DefaultRequestHandler` + `InMemoryTaskStore` behind its
//! express `jsonRpcHandler` / `restHandler` / `agentCardHandler`) over JSON-RPC and HTTP+JSON.

mod interop_support;

use a2a_client::{Binding, Client};
use a2a_core::{Message, SendMessageRequest, SendMessageResponse, StreamResponse, TaskState};
use futures::StreamExt as _;
use interop_support::{
    OurServer, V1, V03, arr, artifacts, assert_cancel_running, assert_countdown_stream,
    assert_multi_turn, assert_return_immediately, assert_send_blocking, assert_subscribe_running,
    assert_v03_common, assert_v03_final_flags, env, js_server, run_peer, s, scenario,
};
use serde_json::{Value, json};
use std::time::Duration;

async fn js_client(mode: &str) -> Value {
    let env = env();
    let server = OurServer::start().await;
    let script = env.programs.join("js_client.mjs");
    run_peer(
        &format!("js_client.mjs (@a2a-js/sdk 1.3.0, {mode})"),
        std::path::Path::new("node"),
        &[script.to_str().expect("utf-8 path"), &server.url, mode],
    )
    .await
}

/// What the JS client saw of our demo agent. The SDK hands v0.3 results to the application
/// translated into its v1.0 types, so the report reads the same in every mode.
fn assert_js_report(report: &Value, transport: &str, protocol_version: &str) {
    let used = s(report, "transport");
    assert!(
        used.contains(transport),
        "the SDK picked {used}, not {transport}: {report:#}"
    );
    assert_eq!(report["protocolVersion"], protocol_version, "{report:#}");

    assert_send_blocking(scenario(report, "send_blocking"), "hello from js", V1);
    assert_return_immediately(scenario(report, "send_return_immediately"), V1);

    let events = arr(scenario(report, "stream_countdown"));
    assert_countdown_stream(
        events,
        "3\n2\n1\n",
        V1.completed,
        [V1.submitted, V1.working],
    );

    let v = scenario(report, "get");
    assert_eq!(s(&v["got"], "id"), s(&v["sent"], "id"), "{v:#}");
    assert_eq!(s(&v["got"], "state"), V1.completed, "{v:#}");
    assert_eq!(artifacts(&v["got"]), ["echo: get me"], "{v:#}");

    if protocol_version == "1.0" {
        let v = scenario(report, "list");
        assert_eq!(
            v["ids"],
            json!([s(v, "taskId")]),
            "ListTasks by context: {v:#}"
        );
        assert_eq!(v["totalSize"], 1, "{v:#}");
        assert_eq!(v["nextPageToken"], "", "{v:#}");
    }

    assert_cancel_running(scenario(report, "cancel_running"), V1);
    assert_subscribe_running(scenario(report, "subscribe_running"), V1);
    assert_multi_turn(scenario(report, "multi_turn"), V1);

    // Our errors map onto the SDK's error classes (JSON-RPC code or ErrorInfo reason).
    let v = scenario(report, "errors");
    // A v0.3 streaming method answers errors inside the event stream, as the v0.3 spec types
    // it and the SDKs' own v0.3 servers do; the JS 1.3 SDK's v0.3 layer cannot translate such
    // an event ("Cannot translate a v0.3 error response into a v1.0 StreamResponse") and
    // raises a plain Error, as it does against a2a-python's server.
    let subscribe_error = if protocol_version == "0.3" {
        "Error"
    } else {
        "UnsupportedOperationError"
    };
    for (case, error) in [
        ("get_unknown", "TaskNotFoundError"),
        ("cancel_completed", "TaskNotCancelableError"),
        ("subscribe_completed", subscribe_error),
        ("send_to_completed", "UnsupportedOperationError"),
    ] {
        assert!(
            s(v, case).ends_with(error),
            "{case}: expected {error}: {v:#}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn js_sdk_client_over_jsonrpc() {
    let report = js_client("JSONRPC").await;
    assert_js_report(&report, "JsonRpcTransport", "1.0");
}

#[tokio::test(flavor = "multi_thread")]
async fn js_sdk_client_over_http_json() {
    let report = js_client("HTTP+JSON").await;
    assert_js_report(&report, "RestTransport", "1.0");
}

/// The SDK's gRPC client (`@a2a-js/sdk/client/grpc`) dialing the card's `host:port` GRPC
/// interface with insecure credentials; errors from the ErrorInfo in `grpc-status-details-bin`.
#[tokio::test(flavor = "multi_thread")]
async fn js_sdk_client_over_grpc() {
    let report = js_client("GRPC").await;
    assert_js_report(&report, "GrpcTransport", "1.0");
}

#[tokio::test(flavor = "multi_thread")]
async fn js_sdk_v03_client_over_jsonrpc() {
    let report = js_client("v0.3").await;
    assert_js_report(&report, "LegacyJsonRpcTransport", "0.3");
}

async fn js03_client() -> Value {
    let env = env();
    let server = OurServer::start().await;
    let script = env.programs.join("js03_client.mjs");
    run_peer(
        "js03_client.mjs (@a2a-js/sdk 0.3.14)",
        std::path::Path::new("node"),
        &[script.to_str().expect("utf-8 path"), &server.url],
    )
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn js_sdk_0_3_client_over_jsonrpc() {
    let report = js03_client().await;
    assert_v03_common(&report, "hello from js 0.3");
    let events = arr(scenario(&report, "stream_countdown"));
    assert_countdown_stream(
        events,
        "3\n2\n1\n",
        V03.completed,
        [V03.submitted, V03.working],
    );
    assert_v03_final_flags(events);

    let v = scenario(&report, "errors");
    for (case, error) in [
        ("get_unknown", "TaskNotFoundJSONRPCError"),
        ("cancel_completed", "TaskNotCancelableJSONRPCError"),
        ("send_to_completed", "UnsupportedOperationJSONRPCError"),
    ] {
        assert!(
            s(v, case).starts_with(error),
            "{case}: expected {error}: {v:#}"
        );
    }
}

/// Errors of v0.3 streaming methods, as @a2a-js/sdk 0.3.14 reads them: it requires
/// `text/event-stream` ("Invalid response Content-Type for SSE stream for tasks/resubscribe.
/// Expected 'text/event-stream'.") and reports the JSON-RPC error of the event as "SSE event
/// contained an error: … (Code: -32004)" (what it does with the a2a-sdk server's v0.3 layer).
/// See `python_sdk_v03_client_reads_streaming_errors` in interop_python.rs.
#[tokio::test(flavor = "multi_thread")]
async fn js_sdk_0_3_client_reads_streaming_errors() {
    let report = js03_client().await;
    let v = scenario(&report, "errors");
    for case in ["resubscribe_completed", "stream_to_completed"] {
        assert!(
            s(v, case).contains("(Code: -32004)"),
            "{case}: expected the -32004 error from the SSE event: {v:#}"
        );
    }
}

/// Our client against the JS SDK's server (`tests/interop/js_server.mjs`, its card at
/// `/echo/.well-known/agent-card.json`): over JSON-RPC and over HTTP+JSON, `hello` sent blocking
/// comes back as the completed task with the artifact `echo: hello`, and streamed it arrives as
/// the task, WORKING, the artifact, COMPLETED, the stored task then reading the same.
#[tokio::test(flavor = "multi_thread")]
async fn our_client_talks_to_the_js_sdk_server() {
    const DEADLINE: Duration = Duration::from_secs(30);
    let js = js_server().await;
    let base = format!("{}/echo", js.base);
    for (binding, name) in [
        (Binding::JsonRpc, "JSONRPC"),
        (Binding::HttpJson, "HTTP+JSON"),
    ] {
        let client = Client::builder()
            .prefer([binding])
            .timeout(DEADLINE)
            .connect(&base)
            .await
            .unwrap_or_else(|e| panic!("connect to {base}: {e}\n{}", js.stderr()));
        assert_eq!(client.binding(), (name, "1.0"));
        assert!(client.supports_streaming(), "{:?}", client.card());

        // Blocking send: the finished task.
        let task = match client.send_text("hello").await {
            Ok(SendMessageResponse::Task(task)) => task,
            other => panic!(
                "{name} send: expected a task, got {other:?}\n{}",
                js.stderr()
            ),
        };
        assert_eq!(task.status.state, TaskState::Completed, "{name}: {task:?}");
        let texts: Vec<_> = task.artifacts.iter().map(|a| a.text_content()).collect();
        assert_eq!(texts, ["echo: hello"], "{name}: {task:?}");

        // Streaming send: task, WORKING, the artifact, COMPLETED; then the stored task.
        let request = SendMessageRequest::new(Message::user_text("hello"));
        let stream = client
            .send_streaming_message(&request)
            .await
            .unwrap_or_else(|e| panic!("{name} stream: {e}\n{}", js.stderr()));
        let events: Vec<StreamResponse> =
            tokio::time::timeout(DEADLINE, stream.collect::<Vec<_>>())
                .await
                .unwrap_or_else(|_| panic!("{name} stream did not end\n{}", js.stderr()))
                .into_iter()
                .map(|e| e.unwrap_or_else(|e| panic!("{name} stream event: {e}\n{}", js.stderr())))
                .collect();
        let Some(StreamResponse::Task(first)) = events.first() else {
            panic!("{name}: the stream starts with the task: {events:#?}");
        };
        let states: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                StreamResponse::StatusUpdate(u) => {
                    assert_eq!(u.task_id, first.id, "{name}: {events:#?}");
                    Some(u.status.state.clone())
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            states,
            [TaskState::Working, TaskState::Completed],
            "{name}: {events:#?}"
        );
        assert!(
            matches!(events.last(), Some(StreamResponse::StatusUpdate(_))),
            "{name}: the stream ends with COMPLETED: {events:#?}"
        );
        let chunks: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                StreamResponse::ArtifactUpdate(a) => Some(a.artifact.text_content()),
                _ => None,
            })
            .collect();
        assert_eq!(chunks, ["echo: hello"], "{name}: {events:#?}");
        let stored = client
            .get_task(first.id.clone())
            .await
            .unwrap_or_else(|e| panic!("{name} get_task: {e}\n{}", js.stderr()));
        assert_eq!(
            stored.status.state,
            TaskState::Completed,
            "{name}: {stored:?}"
        );
        let texts: Vec<_> = stored.artifacts.iter().map(|a| a.text_content()).collect();
        assert_eq!(texts, ["echo: hello"], "{name}: {stored:?}");
    }
}

/// What `a2a check` finds wrong with the JS SDK's echo agent, on each binding it serves.
/// Pinned, so that a change in the checker (or the SDK) shows up here.
#[tokio::test(flavor = "multi_thread")]
async fn a2a_check_findings_on_the_js_sdk_server() {
    let server = interop_support::js_server().await;
    let (failures, table) = interop_support::check_failures(&format!("{}/echo", server.base)).await;
    assert_eq!(
        failures,
        [
            // The card is only at the new path.
            "FAIL MAY card card.legacy-path",
            // `"jsonrpc": "1.0"` is answered -32602 (invalid params), not -32600.
            "FAIL MUST JSONRPC errors.invalid-request",
            // A negative historyLength is accepted over JSON-RPC (HTTP+JSON refuses it).
            "FAIL SHOULD JSONRPC errors.history-length",
        ],
        "{table}\n--- server stderr ---\n{}",
        server.stderr()
    );
}
