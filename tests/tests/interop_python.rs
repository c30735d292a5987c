//! Interoperability with the official Python SDK (PyPI `a2a-sdk`, pinned by
//! `tests/interop/requirements-*.txt`, installed by `tests/interop/setup.sh`), its clients
//! against our server:
//!
//! - its v1.x client (1.3.0) drives our server over JSON-RPC, HTTP+JSON and gRPC (the SDK's
//!   `GrpcTransport` on grpcio; `tests/interop/py_client.py`): blocking and return-immediately
//!   sends, streaming, get, list, cancel, subscribe, multi-turn, error mapping;
//! - its v0.3 client (0.3.26) drives our server's v0.3 JSON-RPC (`tests/interop/py03_client.py`).
//!
//! Our `a2a_client::Client` against agents written with the SDK's server is
//! `interop_python_server.rs`; signed agent cards, both ways, `interop_python_signing.rs`.

mod interop_support;

use interop_support::{
    OurServer, V1, V03, arr, artifacts, assert_cancel_running, assert_countdown_stream,
    assert_multi_turn, assert_return_immediately, assert_send_blocking, assert_subscribe_running,
    assert_v03_common, assert_v03_final_flags, env, event_state, is_status_update, run_peer, s,
    scenario,
};
use serde_json::Value;

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
