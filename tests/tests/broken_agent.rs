//! The deliberately broken agent of `a2a_e2e::broken` really has the faults it documents.

use a2a_e2e::broken::BrokenAgent;
use a2a_e2e::within;
use futures::StreamExt;
use reqwest::header::CONTENT_TYPE;
use serde_json::{Value, json};
use std::time::Duration;

async fn rpc(agent: &BrokenAgent, body: impl Into<reqwest::Body>) -> Value {
    let response = within(
        "POST /rpc",
        reqwest::Client::new()
            .post(format!("{}/rpc", agent.url))
            .header(CONTENT_TYPE, "application/json")
            .header("A2A-Version", "9.9")
            .body(body)
            .send(),
    )
    .await
    .expect("POST /rpc");
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()[CONTENT_TYPE], "application/json");
    within("the JSON-RPC body", response.json())
        .await
        .expect("JSON")
}

#[tokio::test]
async fn card_and_unary_faults() {
    let agent = BrokenAgent::start().await;
    let http = reqwest::Client::new();

    let card = within(
        "GET card",
        http.get(format!("{}/.well-known/agent-card.json", agent.url))
            .header("If-None-Match", "\"anything\"")
            .send(),
    )
    .await
    .expect("GET card");
    assert_eq!(card.status(), 200);
    assert!(card.headers().get("cache-control").is_none());
    assert!(card.headers().get("etag").is_none());
    let card: Value = within("card body", card.json()).await.expect("JSON");
    assert_eq!(card["name"], "broken agent");
    for missing in ["description", "version", "skills"] {
        assert!(card.get(missing).is_none(), "{missing} in {card:#}");
    }
    assert_eq!(
        card["supportedInterfaces"][0]["url"],
        format!("{}/rpc", agent.url)
    );
    let legacy = within(
        "GET agent.json",
        http.get(format!("{}/.well-known/agent.json", agent.url))
            .send(),
    )
    .await
    .expect("GET agent.json");
    assert_eq!(legacy.status(), 404);

    // Not JSON: -32600 instead of -32700.
    let r = rpc(&agent, "{not json").await;
    assert_eq!(r["error"]["code"], -32600);
    assert_eq!(r["id"], Value::Null);

    // Unknown method: -32603 instead of -32601.
    let r = rpc(
        &agent,
        json!({"jsonrpc": "2.0", "id": 7, "method": "Nope", "params": {}}).to_string(),
    )
    .await;
    assert_eq!(r["error"]["code"], -32603);
    assert_eq!(r["id"], 7);

    // A2A-Version 9.9 accepted; SendMessage echoes.
    let r = rpc(
        &agent,
        json!({"jsonrpc": "2.0", "id": "s", "method": "SendMessage", "params": {"message": {
            "messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}})
        .to_string(),
    )
    .await;
    let task = &r["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(task["artifacts"][0]["parts"][0]["text"], "echo: hi");
    a2a_e2e::assert_v1_shape(&r["result"]);

    // GetTask ignores historyLength 0.
    let id = task["id"].as_str().expect("task id");
    let r = rpc(
        &agent,
        json!({"jsonrpc": "2.0", "id": 2, "method": "GetTask",
               "params": {"id": id, "historyLength": 0}})
        .to_string(),
    )
    .await;
    assert_eq!(&r["result"], task);
    assert_eq!(r["result"]["history"].as_array().map(Vec::len), Some(1));

    // Unknown task: -32001 without data.
    let r = rpc(
        &agent,
        json!({"jsonrpc": "2.0", "id": 3, "method": "CancelTask", "params": {"id": "x"}})
            .to_string(),
    )
    .await;
    assert_eq!(
        r["error"],
        json!({"code": -32001, "message": "Task not found"})
    );
}

#[tokio::test]
async fn the_stream_never_closes() {
    let agent = BrokenAgent::start().await;
    let response = within(
        "POST SendStreamingMessage",
        reqwest::Client::new()
            .post(format!("{}/rpc", agent.url))
            .json(
                &json!({"jsonrpc": "2.0", "id": 9, "method": "SendStreamingMessage",
                "params": {"message": {"messageId": "m1", "role": "ROLE_USER",
                                       "parts": [{"text": "hi"}]}}}),
            )
            .send(),
    )
    .await
    .expect("POST");
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()[CONTENT_TYPE], "text/event-stream");
    let mut body = response.bytes_stream();
    let mut seen = String::new();
    while !(seen.contains("TASK_STATE_COMPLETED") && seen.ends_with("\n\n")) {
        let chunk = within("the next chunk", body.next())
            .await
            .expect("the stream ended before COMPLETED")
            .expect("a chunk");
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    let events: Vec<Value> = seen
        .split("\n\n")
        .filter_map(|f| f.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).expect("JSON data"))
        .collect();
    let members: Vec<String> = events
        .iter()
        .map(|e| {
            assert_eq!(e["id"], 9);
            a2a_e2e::sse::summary(std::slice::from_ref(&e["result"])).remove(0)
        })
        .collect();
    assert_eq!(
        members,
        [
            "task:TASK_STATE_SUBMITTED",
            "statusUpdate:TASK_STATE_WORKING",
            "artifactUpdate",
            "statusUpdate:TASK_STATE_COMPLETED",
        ]
    );

    // Still open 1.5 s later: only keep-alive comments, no end of stream.
    let deadline = tokio::time::Instant::now() + Duration::from_millis(1500);
    let mut keep_alives = 0;
    loop {
        match tokio::time::timeout_at(deadline, body.next()).await {
            Err(_) => break,
            Ok(Some(Ok(chunk))) => {
                assert_eq!(&chunk[..], b": keep-alive\n\n");
                keep_alives += 1;
            }
            Ok(other) => panic!("the stream should stay open, got {other:?}"),
        }
    }
    assert!(keep_alives >= 1, "no keep-alive within 1.5 s");
}
