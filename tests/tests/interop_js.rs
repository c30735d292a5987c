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

mod interop_support;

use interop_support::{
    OurServer, V1, V03, arr, artifacts, assert_cancel_running, assert_countdown_stream,
    assert_multi_turn, assert_return_immediately, assert_send_blocking, assert_subscribe_running,
    assert_v03_common, assert_v03_final_flags, env, run_peer, s, scenario,
};
use serde_json::{Value, json};

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
