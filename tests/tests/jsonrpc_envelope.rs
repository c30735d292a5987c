//! The JSON-RPC 2.0 envelope (checklist 6, 7, 8, 9): parse errors, invalid requests, unknown
//! methods, and ErrorInfo details on A2A errors.

use a2a_e2e::agents::Kitchen;
use a2a_e2e::{Binding, Kind, Op, TestServer, send_params, str_at};
use serde_json::{Value, json};

const JSON: [(&str, &str); 2] = [("content-type", "application/json"), ("A2A-Version", "1.0")];

/// Checks a raw JSON-RPC error answer: HTTP 200, `application/json`, `jsonrpc`, `id`, code and
/// an ErrorInfo with the reason.
#[track_caller]
fn assert_rpc_error(reply: &a2a_e2e::Reply, id: Value, code: i64, reason: &str) {
    assert_eq!(
        reply.status, 200,
        "JSON-RPC errors use HTTP 200: {:#}",
        reply.body
    );
    assert!(reply.content_type().starts_with("application/json"));
    assert_eq!(reply.body["jsonrpc"], "2.0");
    assert_eq!(reply.body["id"], id, "{:#}", reply.body);
    assert!(reply.body.get("result").is_none());
    let error = &reply.body["error"];
    assert_eq!(error["code"], code, "{:#}", reply.body);
    assert!(!str_at(error, "message").is_empty());
    assert_eq!(error["data"][0]["reason"], reason, "{:#}", reply.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_is_not_json_is_a_parse_error_with_a_null_id_and_http_200() {
    let srv = TestServer::start(Kitchen).await;
    for body in [
        "this is not json",
        "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"GetTask\"",
        "",
        "\u{1F600}",
    ] {
        let reply = srv.post_raw("/", body, &JSON).await;
        assert_rpc_error(&reply, Value::Null, -32700, "PARSE_ERROR");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_envelope_is_an_invalid_request_with_http_200() {
    let srv = TestServer::start(Kitchen).await;
    let cases = [
        (
            json!({"jsonrpc": "1.0", "id": 1, "method": "GetTask", "params": {"id": "t"}}),
            json!(1),
        ),
        (
            json!({"id": 2, "method": "GetTask", "params": {"id": "t"}}),
            json!(2),
        ),
        (
            json!({"jsonrpc": "2.0", "id": 3, "params": {"id": "t"}}),
            json!(3),
        ),
        (json!({"jsonrpc": "2.0", "id": 4, "method": 17}), json!(4)),
        (
            json!({"jsonrpc": "2.0", "id": {"an": "object"}, "method": "GetTask"}),
            Value::Null,
        ),
        (
            json!({"jsonrpc": "2.0", "id": [1], "method": "GetTask"}),
            Value::Null,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 5, "method": "GetTask", "params": ["t"]}),
            json!(5),
        ),
        (
            json!([{"jsonrpc": "2.0", "id": 6, "method": "GetTask"}]),
            Value::Null,
        ),
        (json!("a string"), Value::Null),
    ];
    for (body, id) in cases {
        let reply = srv.post_raw("/", body.to_string(), &JSON).await;
        assert_rpc_error(&reply, id, -32600, "INVALID_REQUEST");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_method_is_method_not_found_echoing_the_id() {
    let srv = TestServer::start(Kitchen).await;
    for (method, id) in [
        ("nonexistent/method", json!(41)),
        ("NoSuchMethod", json!("req-42")),
        ("getTask", json!(43)),
        ("tasks/list", json!(44)),
        ("", json!(45)),
    ] {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {}});
        let reply = srv.post_raw("/", body.to_string(), &JSON).await;
        assert_rpc_error(&reply, id, -32601, "METHOD_NOT_FOUND");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn string_and_number_ids_are_echoed_exactly() {
    let srv = TestServer::start(Kitchen).await;
    for id in [
        json!(0),
        json!(7),
        json!(-3),
        json!(1.5),
        json!("abc"),
        json!(""),
    ] {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "SendMessage", "params": send_params("hi")});
        let reply = srv.post_raw("/", body.to_string(), &JSON).await;
        assert_eq!(reply.status, 200);
        assert_eq!(reply.body["id"], id);
        assert_eq!(
            reply.body["result"]["task"]["status"]["state"],
            "TASK_STATE_COMPLETED"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_a2a_error_carries_an_error_info_in_data() {
    let srv = TestServer::start(Kitchen).await;
    let b = Binding::JsonRpc;
    let done = srv.make_task(b, "TASK_STATE_COMPLETED").await;
    let done_id = str_at(&done, "id");

    let err = srv.err(b, Op::GetTask, json!({"id": "missing"})).await;
    err.assert_kind(Kind::TaskNotFound)
        .assert_metadata("taskId", "missing");
    assert_eq!(err.details.len(), 1);
    assert_eq!(
        err.body["error"]["data"][0],
        json!({
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "TASK_NOT_FOUND",
            "domain": "a2a-protocol.org",
            "metadata": {"taskId": "missing"}
        })
    );

    srv.err(b, Op::CancelTask, json!({"id": done_id}))
        .await
        .assert_kind(Kind::TaskNotCancelable);
    srv.err(b, Op::CancelTask, json!({}))
        .await
        .assert_kind(Kind::InvalidParams);
    srv.err(
        b,
        Op::CreatePushConfig,
        json!({"taskId": done_id, "url": "https://hooks.example.net/a2a"}),
    )
    .await
    .assert_kind(Kind::PushNotificationNotSupported);
    srv.err(b, Op::GetExtendedAgentCard, json!({}))
        .await
        .assert_kind(Kind::UnsupportedOperation);
    srv.err(b, Op::SendMessage, a2a_e2e::reply_params(done_id, "more"))
        .await
        .assert_kind(Kind::UnsupportedOperation);
    srv.call_with(
        b,
        Op::GetTask,
        json!({"id": done_id}),
        &[("A2A-Version", "9.9")],
    )
    .await
    .expect_err("an unsupported version")
    .assert_kind(Kind::VersionNotSupported);

    // Invalid params name the field in a BadRequest detail after the ErrorInfo.
    let err = srv
        .err(b, Op::GetTask, json!({"id": done_id, "historyLength": -1}))
        .await;
    err.assert_kind(Kind::InvalidParams);
    assert_eq!(err.violated_fields(), ["historyLength"]);
    assert_eq!(
        err.details[1]["@type"],
        "type.googleapis.com/google.rpc.BadRequest"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn params_may_be_omitted_where_nothing_is_required() {
    let srv = TestServer::start(Kitchen).await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks"});
    let reply = srv.post_raw("/", body.to_string(), &JSON).await;
    assert_eq!(reply.body["result"]["tasks"], json!([]));
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "GetTask"});
    let reply = srv.post_raw("/", body.to_string(), &JSON).await;
    assert_rpc_error(&reply, json!(2), -32602, "INVALID_PARAMS");
}
