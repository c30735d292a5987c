//! SendStreamingMessage (checklist 27–30, 33) in both bindings: the SSE response, the first
//! event, the order of events, the close after a terminal or interrupted state, and merged
//! artifact chunks.

use a2a_e2e::agents::{Gated, Kitchen, REPORT_ID, Step};
use a2a_e2e::sse::summary;
use a2a_e2e::{
    ALL, BOTH, Binding, Kind, Op, TestServer, header_str, reply_params, send_params, str_at, texts,
};
use serde_json::json;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_streaming_off_both_streaming_operations_are_unsupported() {
    let srv = TestServer::start_with(Kitchen, |b| b.streaming(false)).await;
    let card: serde_json::Value = srv.card().await;
    assert_ne!(card["capabilities"]["streaming"], true);
    let task = srv.make_task(Binding::JsonRpc, "TASK_STATE_WORKING").await;
    for b in ALL {
        let err = srv
            .open_stream(b, Op::SendStreamingMessage, send_params("hello"), &[])
            .await
            .expect_err("streaming is off");
        err.assert_kind(Kind::UnsupportedOperation);
        let err = srv
            .open_stream(b, Op::SubscribeToTask, json!({"id": task["id"]}), &[])
            .await
            .expect_err("streaming is off");
        err.assert_kind(Kind::UnsupportedOperation);
    }
    // Unary calls still work.
    assert_eq!(
        srv.send_task(Binding::Rest, "hello").await["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_is_sse_with_the_task_first_and_ends_after_the_terminal_event() {
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        let mut stream = srv
            .stream(b, Op::SendStreamingMessage, send_params("chunks"))
            .await;
        assert_eq!(stream.status, 200);
        if b == Binding::Grpc {
            assert_eq!(
                header_str(&stream.headers, "content-type"),
                "application/grpc"
            );
        } else {
            assert!(header_str(&stream.headers, "content-type").starts_with("text/event-stream"));
            assert_eq!(header_str(&stream.headers, "cache-control"), "no-cache");
        }
        let events = stream.rest().await;
        assert_eq!(
            summary(&events),
            [
                "task:TASK_STATE_WORKING",
                "artifactUpdate",
                "artifactUpdate",
                "artifactUpdate",
                "artifactUpdate",
                "statusUpdate:TASK_STATE_COMPLETED"
            ],
            "{b:?}"
        );
        // The stream is closed by the server right after the terminal event (`rest` read to
        // the end): no trailing event, and (checked on every event) no `final` flag.
        let task = &events[0]["task"];
        let id = str_at(task, "id");
        let ctx = str_at(task, "contextId");
        for e in &events[1..] {
            let inner = e.as_object().unwrap().values().next().unwrap();
            assert_eq!(inner["taskId"], id);
            assert_eq!(inner["contextId"], ctx);
        }
        let chunks: Vec<_> = events[1..4].iter().map(|e| &e["artifactUpdate"]).collect();
        for c in &chunks {
            assert_eq!(c["artifact"]["artifactId"], REPORT_ID);
        }
        assert!(chunks[0].get("append").is_none(), "append false is omitted");
        assert!(chunks[0].get("lastChunk").is_none());
        assert_eq!(chunks[1]["append"], true);
        assert!(chunks[1].get("lastChunk").is_none());
        assert_eq!(chunks[2]["append"], true);
        assert_eq!(chunks[2]["lastChunk"], true);
        assert_eq!(texts(&chunks[1]["artifact"]["parts"]), ["Part two. "]);
        assert_eq!(
            texts(&events[5]["statusUpdate"]["status"]["message"]["parts"]),
            ["done"]
        );
        // One single-line `data:` per event, with increasing `id:` sequence numbers.
        if b != Binding::Grpc {
            assert_eq!(stream.parser.data_lines, events.len());
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sse_ids_increase_and_json_rpc_events_echo_a_string_request_id() {
    let srv = TestServer::start(Kitchen).await;
    let body = json!({"jsonrpc": "2.0", "id": "stream-1", "method": "SendStreamingMessage",
                      "params": send_params("chunks")});
    let response = srv
        .http
        .post(srv.url("/"))
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .json(&body)
        .send()
        .await
        .unwrap();
    let mut stream = a2a_e2e::SseStream::new(response, Binding::JsonRpc, Some(json!("stream-1")));
    let mut ids = Vec::new();
    while let Some(event) = stream.next_event().await {
        let data = event.json();
        assert_eq!(data["jsonrpc"], "2.0");
        assert_eq!(data["id"], "stream-1");
        assert!(data["result"].is_object());
        ids.push(
            event
                .id
                .expect("every task event has an id")
                .parse::<u64>()
                .unwrap(),
        );
    }
    assert_eq!(ids.len(), 6);
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_answer_streams_one_message_then_closes() {
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        let mut stream = srv
            .stream(b, Op::SendStreamingMessage, send_params("reply hi"))
            .await;
        let events = stream.rest().await;
        assert_eq!(summary(&events), ["message"], "{b:?}");
        assert_eq!(texts(&events[0]["message"]["parts"]), ["reply: reply hi"]);
        assert_eq!(events[0]["message"]["role"], "ROLE_AGENT");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_closes_at_input_required_and_a_follow_up_streams_to_the_end() {
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        let mut stream = srv
            .stream(b, Op::SendStreamingMessage, send_params("greet"))
            .await;
        let events = stream.rest().await;
        assert_eq!(
            summary(&events),
            ["task:TASK_STATE_INPUT_REQUIRED"],
            "{b:?}"
        );
        let id = str_at(&events[0]["task"], "id");
        let mut stream = srv
            .stream(b, Op::SendStreamingMessage, reply_params(id, "Ada"))
            .await;
        let events = stream.rest().await;
        assert_eq!(
            summary(&events),
            [
                "task:TASK_STATE_WORKING",
                "statusUpdate:TASK_STATE_COMPLETED"
            ],
            "{b:?}: the continuation starts with the task snapshot"
        );
        assert_eq!(events[0]["task"]["id"], id);
        assert_eq!(events[0]["task"]["history"].as_array().unwrap().len(), 3);
        assert_eq!(
            texts(&events[1]["statusUpdate"]["status"]["message"]["parts"]),
            ["Hello, Ada!"]
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamed_chunks_are_merged_in_the_stored_task() {
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        let mut stream = srv
            .stream(b, Op::SendStreamingMessage, send_params("chunks"))
            .await;
        let events = stream.rest().await;
        let id = str_at(&events[0]["task"], "id");
        let task = srv.ok(b, Op::GetTask, json!({"id": id})).await;
        assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
        let artifacts = task["artifacts"].as_array().unwrap();
        assert_eq!(artifacts.len(), 2, "{task:#}");
        assert_eq!(artifacts[0]["artifactId"], REPORT_ID);
        assert_eq!(artifacts[0]["name"], "report");
        assert_eq!(
            artifacts[0]["parts"],
            json!([{"text": "Part one. "}, {"text": "Part two. "}, {"text": "Part three."}])
        );
        assert_eq!(artifacts[1]["artifactId"], "summary-1");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chunk_without_append_replaces_the_artifact() {
    let (agent, gate) = Gated::new();
    let srv = TestServer::start(agent).await;
    let mut stream = srv
        .stream(Binding::Rest, Op::SendStreamingMessage, send_params("go"))
        .await;
    let id = str_at(&stream.expect().await["task"], "id").to_owned();
    gate.chunk("a", "draft 1", false, false);
    gate.chunk("a", " more", true, false);
    gate.chunk("a", "final text", false, true);
    gate.step(Step::Complete);
    assert_eq!(stream.rest().await.len(), 4);
    let task = srv.get_task(&id).await;
    assert_eq!(
        task["artifacts"][0]["parts"],
        json!([{"text": "final text"}])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_agents_stream_ends_with_the_failed_status() {
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        let mut stream = srv
            .stream(b, Op::SendStreamingMessage, send_params("fail"))
            .await;
        let events = stream.rest().await;
        assert_eq!(
            summary(&events),
            ["task:TASK_STATE_WORKING", "statusUpdate:TASK_STATE_FAILED"],
            "{b:?}"
        );
        let why = texts(&events[1]["statusUpdate"]["status"]["message"]["parts"]).join("");
        assert!(why.contains("database unreachable"), "{why}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_stream_carries_keep_alive_comments() {
    let (agent, gate) = Gated::new();
    let srv = TestServer::start_with(agent, |b| b.keep_alive(Duration::from_millis(50))).await;
    for b in BOTH {
        let mut stream = srv
            .stream(b, Op::SendStreamingMessage, send_params("go"))
            .await;
        let first = stream.expect().await;
        assert_eq!(first["task"]["status"]["state"], "TASK_STATE_WORKING");
        assert_eq!(stream.next_comment().await, "keep-alive");
        gate.step(Step::Complete);
        let rest = stream.rest().await;
        assert_eq!(
            summary(&rest),
            ["statusUpdate:TASK_STATE_COMPLETED"],
            "{b:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_before_the_first_event_are_plain_errors_not_streams() {
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        let err = srv
            .open_stream(
                b,
                Op::SendStreamingMessage,
                json!({"message": {"messageId": "m-x", "role": "ROLE_USER", "parts": []}}),
                &[],
            )
            .await
            .expect_err("invalid params");
        err.assert_kind(Kind::InvalidParams);
        assert!(!header_str(&err.headers, "content-type").contains("event-stream"));
        let err = srv
            .open_stream(
                b,
                Op::SendStreamingMessage,
                reply_params("no-such-task", "hi"),
                &[],
            )
            .await
            .expect_err("unknown task");
        err.assert_kind(Kind::TaskNotFound);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn return_immediately_does_not_shorten_a_stream() {
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        let mut params = send_params("chunks");
        params["configuration"] = json!({"returnImmediately": true});
        let mut stream = srv.stream(b, Op::SendStreamingMessage, params).await;
        let events = stream.rest().await;
        assert_eq!(events.len(), 6, "{b:?}: {:?}", summary(&events));
        assert_eq!(
            a2a_e2e::sse::state_of(&events[5]),
            Some("TASK_STATE_COMPLETED")
        );
    }
}
