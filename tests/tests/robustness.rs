//! What a misbehaving client or agent can do, and what the server answers: oversized bodies,
//! malformed JSON, wrong types, unknown tasks, illegal transitions, panicking and failing
//! agents.

use a2a_e2e::agents::{Illegal, Kitchen};
use a2a_e2e::sse::summary;
use a2a_e2e::{
    ALL, BOTH, Binding, Kind, Op, TestServer, message_id, reply_params, send_params, str_at, texts,
    within,
};
use futures::future::join_all;
use serde_json::{Value, json};

const LIMIT: usize = 1024;

fn big_send() -> String {
    send_params(&"x".repeat(4 * LIMIT)).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_over_the_limit_is_refused_with_413_and_a_json_error() {
    let srv = TestServer::start_with(Kitchen, |b| b.body_limit(LIMIT)).await;
    for chunked in [false, true] {
        let body = || -> reqwest::Body {
            if chunked {
                let half = "y".repeat(LIMIT);
                let chunks: Vec<Result<bytes::Bytes, std::io::Error>> =
                    vec![Ok(half.clone().into()), Ok(half.into())];
                reqwest::Body::wrap_stream(futures::stream::iter(chunks))
            } else {
                big_send().into()
            }
        };
        // JSON-RPC: HTTP 413 with a JSON-RPC error object.
        let reply = srv
            .post_raw("/", body(), &[("content-type", "application/json")])
            .await;
        assert_eq!(reply.status, 413, "chunked: {chunked}");
        assert!(reply.content_type().starts_with("application/json"));
        assert_eq!(reply.body["jsonrpc"], "2.0");
        assert_eq!(reply.body["id"], Value::Null);
        let error = &reply.body["error"];
        assert!(
            str_at(error, "message").contains(&LIMIT.to_string()),
            "the message names the limit: {error:#}"
        );
        assert_eq!(error["data"][0]["reason"], "PAYLOAD_TOO_LARGE");
        // REST: HTTP 413 with a google.rpc.Status body.
        let reply = srv
            .post_raw(
                "/message:send",
                body(),
                &[("content-type", "application/a2a+json")],
            )
            .await;
        assert_eq!(reply.status, 413, "chunked: {chunked}");
        assert!(reply.content_type().starts_with("application/a2a+json"));
        let error = &reply.body["error"];
        assert_eq!(error["code"], 413);
        assert_eq!(error["status"], "RESOURCE_EXHAUSTED");
        assert!(str_at(error, "message").contains(&LIMIT.to_string()));
        assert_eq!(error["details"][0]["reason"], "PAYLOAD_TOO_LARGE");
    }
    // Nothing was created, and a body under the limit is served.
    for b in ALL {
        assert_eq!(srv.ok(b, Op::ListTasks, json!({})).await["totalSize"], 0);
    }
    for b in ALL {
        assert_eq!(
            srv.send_task(b, "small").await["status"]["state"],
            "TASK_STATE_COMPLETED"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_sent_in_many_chunks_is_read_whole() {
    let srv = TestServer::start_with(Kitchen, |b| b.body_limit(LIMIT)).await;
    // Chunks of 0 to 6 bytes, so that the body arrives as many frames (some empty).
    let chunked = |body: String| -> reqwest::Body {
        let bytes = body.into_bytes();
        let mut chunks: Vec<Result<bytes::Bytes, std::io::Error>> = Vec::new();
        let mut rest = bytes.as_slice();
        for size in (0..7).cycle() {
            if rest.is_empty() {
                break;
            }
            let (chunk, tail) = rest.split_at(size.min(rest.len()));
            chunks.push(Ok(bytes::Bytes::copy_from_slice(chunk)));
            rest = tail;
        }
        reqwest::Body::wrap_stream(futures::stream::iter(chunks))
    };
    let text = "chunked ".repeat(20);
    let envelope =
        json!({"jsonrpc": "2.0", "id": 7, "method": "SendMessage", "params": send_params(&text)});
    let reply = srv
        .post_raw(
            "/",
            chunked(envelope.to_string()),
            &[("content-type", "application/json"), ("A2A-Version", "1.0")],
        )
        .await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    assert_eq!(reply.body["id"], 7);
    let task = &reply.body["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task:#}");
    assert_eq!(
        texts(&task["history"][0]["parts"]),
        std::slice::from_ref(&text)
    );

    let reply = srv
        .post_raw(
            "/message:send",
            chunked(send_params(&text).to_string()),
            &[("content-type", "application/a2a+json")],
        )
        .await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    assert_eq!(texts(&reply.body["task"]["history"][0]["parts"]), [text]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_rest_body_is_a_400_parse_error() {
    let srv = TestServer::start(Kitchen).await;
    for body in ["{not json", "{\"message\": ", "\u{0}"] {
        let reply = srv
            .post_raw(
                "/message:send",
                body,
                &[("content-type", "application/a2a+json")],
            )
            .await;
        let mut reply = reply;
        reply.binding = Binding::Rest;
        reply
            .outcome()
            .expect_err("malformed JSON")
            .assert_kind(Kind::ParseError);
    }
    // JSON that is not an object is a bad request too.
    for body in ["[1, 2]", "\"hello\"", "42"] {
        let mut reply = srv
            .post_raw(
                "/message:send",
                body,
                &[("content-type", "application/a2a+json")],
            )
            .await;
        reply.binding = Binding::Rest;
        let err = reply.outcome().expect_err("not an object");
        assert_eq!(err.http_status, 400);
        assert_eq!(err.grpc_status.as_deref(), Some("INVALID_ARGUMENT"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_types_are_invalid_params() {
    let srv = TestServer::start(Kitchen).await;
    let m = |extra: Value| {
        let mut msg =
            json!({"messageId": message_id(), "role": "ROLE_USER", "parts": [{"text": "hi"}]});
        for (k, v) in extra.as_object().unwrap() {
            msg[k] = v.clone();
        }
        json!({"message": msg})
    };
    let sends = [
        json!({"message": "hello"}),
        json!({"message": 7}),
        m(json!({"parts": {"text": "hi"}})),
        m(json!({"parts": ["hi"]})),
        m(json!({"role": true})),
        m(json!({"role": 99})),
        m(json!({"role": "user"})),
        m(json!({"messageId": 123})),
        m(json!({"metadata": "not an object"})),
        {
            let mut p = send_params("hi");
            p["configuration"] = json!({"historyLength": "abc"});
            p
        },
        {
            let mut p = send_params("hi");
            p["configuration"] = json!({"returnImmediately": "yes"});
            p
        },
        {
            let mut p = send_params("hi");
            p["configuration"] = json!("fast");
            p
        },
    ];
    for b in BOTH {
        for params in &sends {
            srv.err(b, Op::SendMessage, params.clone())
                .await
                .assert_kind(Kind::InvalidParams);
        }
        for params in [
            json!({"pageSize": "many"}),
            json!({"includeArtifacts": "perhaps"}),
            json!({"status": 3.5}),
        ] {
            srv.err(b, Op::ListTasks, params)
                .await
                .assert_kind(Kind::InvalidParams);
        }
        srv.err(b, Op::GetTask, json!({"id": "t", "historyLength": "all"}))
            .await
            .assert_kind(Kind::InvalidParams);
    }
    // Ids of the wrong type can only be written in JSON-RPC.
    for (op, params) in [
        (Op::GetTask, json!({"id": 42})),
        (Op::CancelTask, json!({"id": ["a"]})),
        (Op::ListTasks, json!({"contextId": {"a": 1}})),
    ] {
        srv.err(Binding::JsonRpc, op, params)
            .await
            .assert_kind(Kind::InvalidParams);
    }
    let err = srv
        .open_stream(
            Binding::JsonRpc,
            Op::SubscribeToTask,
            json!({"id": false}),
            &[],
        )
        .await
        .expect_err("a boolean id");
    err.assert_kind(Kind::InvalidParams);
    assert_eq!(
        srv.ok(Binding::Rest, Op::ListTasks, json!({})).await["totalSize"],
        0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_task_operation_on_an_unknown_id_is_task_not_found() {
    let srv = TestServer::start(Kitchen).await;
    let id = "0b7c9d3e-no-such-task";
    for b in ALL {
        for op in [Op::GetTask, Op::CancelTask] {
            srv.err(b, op, json!({"id": id}))
                .await
                .assert_kind(Kind::TaskNotFound)
                .assert_metadata("taskId", id);
        }
        srv.err(b, Op::SendMessage, reply_params(id, "hi"))
            .await
            .assert_kind(Kind::TaskNotFound);
        for (op, params) in [
            (Op::SubscribeToTask, json!({"id": id})),
            (Op::SendStreamingMessage, reply_params(id, "hi")),
        ] {
            srv.open_stream(b, op, params, &[])
                .await
                .expect_err("unknown task")
                .assert_kind(Kind::TaskNotFound);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn illegal_transitions_are_returned_to_the_agent_and_leave_the_task_untouched() {
    let (agent, mut attempts) = Illegal::new();
    let srv = TestServer::start(agent).await;
    for b in ALL {
        let task = srv.send_task(b, "go").await;
        assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
        assert!(
            task.get("artifacts").is_none(),
            "no illegal artifact was stored"
        );
        assert_eq!(task["history"].as_array().unwrap().len(), 2, "{task:#}");
        let mut seen = Vec::new();
        for _ in 0..6 {
            let (what, outcome) = within("the agent's attempts", attempts.recv())
                .await
                .expect("the agent reports");
            let err = outcome.expect_err(what);
            assert_eq!(err.code, -32006, "{what}: InvalidAgentResponse ({err})");
            assert_eq!(err.reason(), Some("INVALID_AGENT_RESPONSE"), "{what}");
            seen.push(what);
        }
        assert_eq!(
            seen,
            [
                "submitted after working",
                "empty artifact",
                "reply after the task exists",
                "working after completed",
                "artifact after completed",
                "message after completed",
            ]
        );
        // Everything the agent tried after the fact left no trace.
        let id = str_at(&task, "id");
        assert_eq!(srv.ok(b, Op::GetTask, json!({"id": id})).await, task);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_agent_fails_its_task_and_the_server_keeps_serving() {
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        // A panic after the task exists.
        let task = srv.send_task(b, "panic please").await;
        assert_eq!(task["status"]["state"], "TASK_STATE_FAILED");
        let why = texts(&task["status"]["message"]["parts"]).join("");
        assert!(why.contains("panicked") && why.contains("boom"), "{why}");
        assert_eq!(task["status"]["message"]["role"], "ROLE_AGENT");
        // A panic before any event: the task still exists, failed.
        let task = srv.send_task(b, "panic early").await;
        assert_eq!(task["status"]["state"], "TASK_STATE_FAILED");
        let why = texts(&task["status"]["message"]["parts"]).join("");
        assert!(why.contains("boom before any event"), "{why}");
        assert_eq!(texts(&task["history"][0]["parts"]), ["panic early"]);
        // Streaming: the stream ends with the failure.
        let mut stream = srv
            .stream(
                b,
                Op::SendStreamingMessage,
                send_params("panic in a stream"),
            )
            .await;
        assert_eq!(
            summary(&stream.rest().await),
            ["task:TASK_STATE_WORKING", "statusUpdate:TASK_STATE_FAILED"]
        );
    }
    // Many at once, then ordinary work.
    let panics =
        join_all((0..10).map(|i| srv.call(ALL[i % 2], Op::SendMessage, send_params("panic"))))
            .await;
    for p in panics {
        assert_eq!(p.unwrap()["task"]["status"]["state"], "TASK_STATE_FAILED");
    }
    for b in ALL {
        let ok = srv.send_task(b, "still here").await;
        assert_eq!(ok["status"]["state"], "TASK_STATE_COMPLETED");
        assert_eq!(texts(&ok["artifacts"][0]["parts"]), ["still here"]);
    }
    let card = srv
        .http
        .get(srv.url("/.well-known/agent-card.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(card.status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_error_or_an_unfinished_task_fails_the_task_with_a_reason() {
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        for (text, reason) in [
            ("fail", "database unreachable"),
            ("unfinished", "without finishing"),
            ("noop", "without creating a task or replying"),
        ] {
            let task = srv.send_task(b, text).await;
            assert_eq!(task["status"]["state"], "TASK_STATE_FAILED", "{text}");
            let why = texts(&task["status"]["message"]["parts"]).join("");
            assert!(why.contains(reason), "{text}: {why}");
            assert_eq!(srv.get_task(str_at(&task, "id")).await, task);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_gives_up_on_a_blocking_send_leaves_the_task_running() {
    let srv = TestServer::start(Kitchen).await;
    // A blocking send of slow work whose client disconnects: the task lives on.
    let (rb, _) = srv.request(Binding::Rest, Op::SendMessage, &send_params("slow"), &[]);
    let pending = tokio::spawn(rb.send());
    let id = within("the task appears", async {
        loop {
            let listed = srv.ok(Binding::Rest, Op::ListTasks, json!({})).await;
            if let Some(t) = listed["tasks"].get(0) {
                break str_at(t, "id").to_owned();
            }
            tokio::task::yield_now().await;
        }
    })
    .await;
    pending.abort();
    let _ = pending.await;
    assert_eq!(srv.state_of(&id).await, "TASK_STATE_WORKING");
    let canceled = srv
        .ok(Binding::Rest, Op::CancelTask, json!({"id": id}))
        .await;
    assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutting_the_server_down_ends_open_streams() {
    let (agent, _gate) = a2a_e2e::agents::Gated::new();
    let srv = TestServer::start(agent).await;
    let mut streams = Vec::new();
    for b in ALL {
        let mut s = srv
            .stream(b, Op::SendStreamingMessage, send_params("go"))
            .await;
        let first = s.expect().await;
        assert_eq!(first["task"]["status"]["state"], "TASK_STATE_WORKING");
        let id = str_at(&first["task"], "id").to_owned();
        let mut sub = srv.stream(b, Op::SubscribeToTask, json!({"id": id})).await;
        sub.expect().await;
        streams.push(s);
        streams.push(sub);
    }
    // Graceful shutdown completes although four streams are open, and each of them ends.
    within("the server stops", srv.stop()).await;
    for mut s in streams {
        s.rest().await;
        s.assert_closed().await;
    }
}
