//! v0.3 compatibility on the JSON-RPC endpoint (checklist 45): slash method names, `kind`
//! discriminators, lowercase states, bare results, and `final: true` on the last status update.

use a2a_e2e::agents::{Gated, Kitchen, Step};
use a2a_e2e::{Binding, SseStream, TestServer, message_id};
use serde_json::{Value, json};

fn v03_message(text: &str) -> Value {
    json!({"kind": "message", "messageId": message_id(), "role": "user",
           "parts": [{"kind": "text", "text": text}]})
}

/// Posts a v0.3 JSON-RPC request without any `A2A-Version` header; returns the response.
async fn v03(srv: &TestServer, method: &str, params: Value) -> Value {
    srv.rpc(method, params, &[]).await
}

async fn v03_stream(srv: &TestServer, method: &str, params: Value) -> SseStream {
    let body = json!({"jsonrpc": "2.0", "id": "v03-stream", "method": method, "params": params});
    let response = a2a_e2e::within(
        "the v0.3 stream opens",
        srv.http
            .post(srv.url("/"))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send(),
    )
    .await
    .unwrap();
    SseStream::new(response, Binding::JsonRpc, Some(json!("v03-stream")))
}

/// Every data payload of a v0.3 stream (the `result`s), checking the envelope.
async fn v03_events(stream: &mut SseStream) -> Vec<Value> {
    let mut out = Vec::new();
    while let Some(e) = stream.next_event().await {
        let data = e.json();
        assert_eq!(data["jsonrpc"], "2.0");
        assert_eq!(data["id"], "v03-stream");
        out.push(data["result"].clone());
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn message_send_returns_a_bare_task_with_kind_and_lowercase_state() {
    let srv = TestServer::start(Kitchen).await;
    let response = v03(
        &srv,
        "message/send",
        json!({"message": v03_message("hello")}),
    )
    .await;
    let task = &response["result"];
    assert_eq!(task["kind"], "task", "{response:#}");
    assert!(task.get("task").is_none(), "a bare task, no wrapper");
    assert_eq!(task["status"]["state"], "completed");
    assert!(task["id"].is_string() && task["contextId"].is_string());
    assert_eq!(
        task["artifacts"][0]["parts"],
        json!([{"kind": "text", "text": "hello"}])
    );
    assert_eq!(task["history"][0]["kind"], "message");
    assert_eq!(task["history"][0]["role"], "user");

    // tasks/get answers the same task the v0.3 way; historyLength applies.
    let id = task["id"].clone();
    let got = v03(&srv, "tasks/get", json!({"id": id, "historyLength": 0})).await;
    assert_eq!(got["result"]["kind"], "task");
    assert_eq!(got["result"]["status"]["state"], "completed");
    assert!(got["result"].get("history").is_none());
    // And a v1.0 client sees the same task in v1.0 form.
    let v1 = srv.get_task(id.as_str().unwrap()).await;
    assert_eq!(v1["status"]["state"], "TASK_STATE_COMPLETED");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v03_file_and_data_parts_round_trip() {
    let srv = TestServer::start(Kitchen).await;
    let parts = json!([
        {"kind": "text", "text": "files"},
        {"kind": "file", "file": {"bytes": "aGk=", "mimeType": "text/plain", "name": "hi.txt"}},
        {"kind": "file", "file": {"uri": "https://files.example.net/a.pdf", "mimeType": "application/pdf"}},
        {"kind": "data", "data": {"rows": 3}}
    ]);
    let message =
        json!({"kind": "message", "messageId": message_id(), "role": "user", "parts": parts});
    let response = v03(&srv, "message/send", json!({"message": message})).await;
    assert_eq!(
        response["result"]["artifacts"][0]["parts"], parts,
        "{response:#}"
    );
    // The v1.0 view of the same parts.
    let id = response["result"]["id"].as_str().unwrap();
    let v1 = srv.get_task(id).await;
    assert_eq!(
        v1["artifacts"][0]["parts"],
        json!([
            {"text": "files"},
            {"raw": "aGk=", "mediaType": "text/plain", "filename": "hi.txt"},
            {"url": "https://files.example.net/a.pdf", "mediaType": "application/pdf"},
            {"data": {"rows": 3}}
        ])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn message_stream_ends_with_a_final_status_update() {
    let (agent, gate) = Gated::new();
    let srv = TestServer::start(agent).await;
    let mut stream = v03_stream(
        &srv,
        "message/stream",
        json!({"message": v03_message("go")}),
    )
    .await;
    let first = stream.next_event().await.expect("a first event").json();
    assert_eq!(first["result"]["kind"], "task");
    assert_eq!(first["result"]["status"]["state"], "working");
    gate.step(Step::Working("halfway".into()));
    gate.chunk("a-1", "result", false, true);
    gate.step(Step::Complete);
    let events = v03_events(&mut stream).await;
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["status-update", "artifact-update", "status-update"]);
    assert_eq!(events[0]["status"]["state"], "working");
    assert_eq!(events[0]["final"], false);
    assert_eq!(
        events[1]["artifact"]["parts"][0],
        json!({"kind": "text", "text": "result"})
    );
    assert_eq!(events[1]["lastChunk"], true);
    assert_eq!(events[2]["status"]["state"], "completed");
    assert_eq!(events[2]["final"], true, "the last status update is final");
    assert_eq!(events[2]["taskId"], first["result"]["id"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v03_cancel_resubscribe_and_non_blocking_send_work() {
    let srv = TestServer::start(Kitchen).await;
    // blocking: false → the v1.0 returnImmediately.
    let response = v03(
        &srv,
        "message/send",
        json!({"message": v03_message("slow"), "configuration": {"blocking": false}}),
    )
    .await;
    let task = &response["result"];
    assert_eq!(task["status"]["state"], "working", "{response:#}");
    let id = task["id"].clone();

    let mut sub = v03_stream(&srv, "tasks/resubscribe", json!({"id": id})).await;
    let first = sub.next_event().await.unwrap().json();
    assert_eq!(first["result"]["kind"], "task");

    let canceled = v03(&srv, "tasks/cancel", json!({"id": id})).await;
    assert_eq!(canceled["result"]["kind"], "task");
    assert_eq!(canceled["result"]["status"]["state"], "canceled");

    let rest = v03_events(&mut sub).await;
    assert_eq!(rest.len(), 1);
    assert_eq!(rest[0]["kind"], "status-update");
    assert_eq!(rest[0]["status"]["state"], "canceled");
    assert_eq!(rest[0]["final"], true);

    // A terminal task cannot be resubscribed. v0.3 clients read a streaming method's answer
    // only as an event stream, so the error is its one event.
    let mut again = v03_stream(&srv, "tasks/resubscribe", json!({"id": id})).await;
    let error = again.next_event().await.expect("the error event").json();
    assert_eq!(error["id"], "v03-stream");
    assert_eq!(error["error"]["code"], -32004, "{error:#}");
    assert_eq!(error["error"]["data"][0]["reason"], "UNSUPPORTED_OPERATION");
    again.assert_closed().await;
    // An unknown task does not exist.
    let missing = v03(&srv, "tasks/get", json!({"id": "no-such-task"})).await;
    assert_eq!(missing["error"]["code"], -32001);
    let not_cancelable = v03(&srv, "tasks/cancel", json!({"id": id})).await;
    assert_eq!(not_cancelable["error"]["code"], -32002);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v03_calls_work_with_an_explicit_0_3_version_header_too() {
    let srv = TestServer::start(Kitchen).await;
    let response = srv
        .rpc(
            "message/send",
            json!({"message": v03_message("hello")}),
            &[("A2A-Version", "0.3")],
        )
        .await;
    assert_eq!(response["result"]["kind"], "task");
    assert_eq!(response["result"]["status"]["state"], "completed");
    // A direct message answer is a bare message with `kind`.
    let reply = v03(
        &srv,
        "message/send",
        json!({"message": v03_message("reply hi")}),
    )
    .await;
    assert_eq!(reply["result"]["kind"], "message");
    assert_eq!(reply["result"]["role"], "agent");
    assert_eq!(reply["result"]["parts"][0]["text"], "reply: reply hi");
}
