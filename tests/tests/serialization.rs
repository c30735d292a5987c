//! ProtoJSON serialization as a client sees it (checklist 1, 2, 3, 5), in both bindings.

use a2a_e2e::agents::{Gated, Kitchen, Step};
use a2a_e2e::sse::summary;
use a2a_e2e::{
    ALL, BOTH, Binding, Kind, Op, TestServer, is_millis_utc, message_id, reply_params, send_params,
    str_at,
};
use serde_json::{Value, json};

/// Every `state` and `role` value anywhere in `v`.
fn enum_values(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            for (k, child) in o {
                if k == "state" || k == "role" {
                    out.push(child.as_str().unwrap_or("<not a string>").to_owned());
                }
                enum_values(child, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|i| enum_values(i, out)),
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_state_and_role_is_a_full_proto_name_and_no_kind_key_is_emitted() {
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        let mut seen = Vec::new();
        for state in [
            "TASK_STATE_COMPLETED",
            "TASK_STATE_FAILED",
            "TASK_STATE_REJECTED",
            "TASK_STATE_CANCELED",
            "TASK_STATE_INPUT_REQUIRED",
            "TASK_STATE_WORKING",
        ] {
            let task = srv.make_task(b, state).await;
            let got = srv
                .ok(b, Op::GetTask, json!({"id": str_at(&task, "id")}))
                .await;
            assert_eq!(got["status"]["state"], state);
            let text = got.to_string();
            assert!(!text.contains("\"kind\""), "{text}");
            enum_values(&got, &mut seen);
        }
        let listed = srv
            .ok(b, Op::ListTasks, json!({"includeArtifacts": true}))
            .await;
        assert!(!listed.to_string().contains("\"kind\""));
        enum_values(&listed, &mut seen);
        assert!(seen.iter().any(|s| s == "ROLE_USER"));
        assert!(seen.iter().any(|s| s == "ROLE_AGENT"));
        for s in &seen {
            assert!(
                s.starts_with("TASK_STATE_") || s == "ROLE_USER" || s == "ROLE_AGENT",
                "{b:?}: {s}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parts_round_trip_in_the_flat_shape() {
    let srv = TestServer::start(Kitchen).await;
    // 0xfb 0xff 0xfe: "+//+" in standard base64, "-__-" in the URL-safe alphabet.
    let sent = json!([
        {"text": "echo these parts"},
        {"text": "# Title", "mediaType": "text/markdown"},
        {"raw": "-__-", "filename": "odd.bin", "mediaType": "application/octet-stream"},
        {"raw": "iVBORw0KGgo=", "filename": "dot.png", "mediaType": "image/png"},
        {"url": "https://files.example.net/q1.pdf", "filename": "q1.pdf", "mediaType": "application/pdf"},
        {"data": {"rows": 3, "ok": true}, "mediaType": "application/json", "metadata": {"source": "e2e"}},
        {"data": [1, 2, 3]},
        {"data": "just a string"},
        {"data": 42}
    ]);
    // Output is standard, padded base64; everything else comes back as sent.
    let mut expected = sent.clone();
    expected[2]["raw"] = json!("+//+");
    for b in ALL {
        let message = json!({"messageId": message_id(), "role": "ROLE_USER", "parts": sent});
        let task = srv
            .ok(b, Op::SendMessage, json!({"message": message}))
            .await["task"]
            .clone();
        assert_eq!(task["history"][0]["parts"], expected, "{b:?}: history");
        assert_eq!(
            task["artifacts"][0]["parts"], expected,
            "{b:?}: echo artifact"
        );
        let got = srv
            .ok(b, Op::GetTask, json!({"id": str_at(&task, "id")}))
            .await;
        assert_eq!(got["artifacts"][0]["parts"], expected, "{b:?}: stored");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_part_with_two_content_keys_or_none_is_invalid_params() {
    let srv = TestServer::start(Kitchen).await;
    let bad_parts = [
        json!({"text": "a", "url": "https://example.net/a"}),
        json!({"text": "a", "data": {"b": 1}}),
        json!({"raw": "AAAA", "url": "https://example.net/a"}),
        json!({"mediaType": "text/plain"}),
        json!({}),
        json!({"raw": "not base64 at all!"}),
    ];
    for b in BOTH {
        for part in &bad_parts {
            let message = json!({"messageId": message_id(), "role": "ROLE_USER", "parts": [part]});
            srv.err(b, Op::SendMessage, json!({"message": message}))
                .await
                .assert_kind(Kind::InvalidParams);
        }
    }
    let listed = srv.ok(Binding::JsonRpc, Op::ListTasks, json!({})).await;
    assert_eq!(listed["totalSize"], 0);
}

/// Every `status` object (with a `state`) in `v`.
fn statuses(v: &Value, out: &mut Vec<Value>) {
    match v {
        Value::Object(o) => {
            for (k, child) in o {
                if k == "status" && child.get("state").is_some() {
                    out.push(child.clone());
                }
                statuses(child, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|i| statuses(i, out)),
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_status_carries_a_millisecond_utc_timestamp() {
    let srv = TestServer::start(Kitchen).await;
    let mut all = Vec::new();
    for b in ALL {
        // Statuses set by agents, and by the server itself (FAILED after a panic or an error,
        // CANCELED, WORKING on a follow-up).
        for text in ["hello", "panic now", "fail", "reject", "unfinished", "noop"] {
            let task = srv.send_task(b, text).await;
            statuses(&task, &mut all);
        }
        let canceled = srv.make_task(b, "TASK_STATE_CANCELED").await;
        statuses(&canceled, &mut all);
        let greet = srv.make_task(b, "TASK_STATE_INPUT_REQUIRED").await;
        let mut stream = srv
            .stream(
                b,
                Op::SendStreamingMessage,
                reply_params(str_at(&greet, "id"), "Ada"),
            )
            .await;
        let events = stream.rest().await;
        assert_eq!(
            summary(&events),
            [
                "task:TASK_STATE_WORKING",
                "statusUpdate:TASK_STATE_COMPLETED"
            ]
        );
        for e in &events {
            statuses(e, &mut all);
        }
        let listed = srv.ok(b, Op::ListTasks, json!({})).await;
        statuses(&listed, &mut all);
    }
    assert!(all.len() > 30, "{}", all.len());
    for s in &all {
        let ts = s["timestamp"]
            .as_str()
            .unwrap_or_else(|| panic!("a status without timestamp: {s:#}"));
        assert!(is_millis_utc(ts), "{ts}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_timestamps_never_go_backwards() {
    let (agent, gate) = Gated::new();
    let srv = TestServer::start(agent).await;
    let mut stream = srv
        .stream(
            Binding::JsonRpc,
            Op::SendStreamingMessage,
            send_params("go"),
        )
        .await;
    let first = stream.expect().await;
    for i in 0..5 {
        gate.step(Step::Working(format!("step {i}")));
    }
    gate.step(Step::Complete);
    let mut events = vec![first];
    events.extend(stream.rest().await);
    let mut stamps = Vec::new();
    for e in &events {
        let mut s = Vec::new();
        statuses(e, &mut s);
        stamps.extend(s.iter().map(|s| str_at(s, "timestamp").to_owned()));
    }
    assert_eq!(stamps.len(), 7);
    let mut sorted = stamps.clone();
    sorted.sort();
    assert_eq!(
        stamps, sorted,
        "RFC 3339 UTC millisecond stamps sort as text"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_json_fields_in_requests_are_ignored() {
    let srv = TestServer::start(Kitchen).await;
    for b in BOTH {
        let params = json!({
            "message": {
                "messageId": message_id(),
                "role": "ROLE_USER",
                "parts": [{"text": "hello", "futurePartField": {"x": 1}}],
                "futureMessageField": true
            },
            "configuration": {"historyLength": 5, "futureConfigField": "yes"},
            "futureRequestField": [1, 2, 3]
        });
        let task = srv.ok(b, Op::SendMessage, params).await["task"].clone();
        assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
        assert_eq!(task["history"][0]["parts"], json!([{"text": "hello"}]));
        let id = str_at(&task, "id");
        let got = srv
            .ok(b, Op::GetTask, json!({"id": id, "futureGetField": "x"}))
            .await;
        assert_eq!(got["id"], id);
        let listed = srv
            .ok(b, Op::ListTasks, json!({"futureListField": "x"}))
            .await;
        assert!(listed["totalSize"].as_i64().unwrap() >= 1);
    }
    // Unknown members of the JSON-RPC envelope are ignored as well.
    let body = json!({
        "jsonrpc": "2.0", "id": "env-1", "method": "SendMessage",
        "params": send_params("hello"), "futureEnvelopeField": {}
    });
    let reply = srv
        .post_raw(
            "/",
            body.to_string(),
            &[("content-type", "application/json"), ("A2A-Version", "1.0")],
        )
        .await;
    assert_eq!(
        reply.body["result"]["task"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    assert_eq!(reply.body["id"], "env-1");
}
