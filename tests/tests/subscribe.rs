//! SubscribeToTask (checklist 31, 32) in both bindings: the snapshot first, identical sequences
//! for concurrent subscribers (two, and two hundred), disconnects that disturb nothing, and the
//! plain errors for terminal and unknown tasks.

use a2a_e2e::agents::{Gate, Gated, Kitchen, Step};
use a2a_e2e::sse::summary;
use a2a_e2e::{
    ALL, Binding, Kind, Op, SseStream, TestServer, header_str, reply_params, send_params, str_at,
    texts, within,
};
use futures::future::join_all;
use serde_json::{Value, json};

/// Starts a gated task with a streaming send; returns the sender's stream (already past its
/// first event) and the task id.
async fn gated_task(srv: &TestServer) -> (SseStream, String) {
    let mut stream = srv
        .stream(
            Binding::JsonRpc,
            Op::SendStreamingMessage,
            send_params("go"),
        )
        .await;
    let first = stream.expect().await;
    assert_eq!(first["task"]["status"]["state"], "TASK_STATE_WORKING");
    let id = str_at(&first["task"], "id").to_owned();
    (stream, id)
}

/// The steps every multi-subscriber test releases.
fn release_script(gate: &Gate) {
    gate.step(Step::Working("one".into()));
    gate.chunk("a-1", "alpha ", false, false);
    gate.step(Step::Message("a note".into()));
    gate.chunk("a-1", "beta", true, true);
    gate.step(Step::Working("two".into()));
    gate.step(Step::Complete);
}

const SCRIPT: [&str; 6] = [
    "statusUpdate:TASK_STATE_WORKING",
    "artifactUpdate",
    "message",
    "artifactUpdate",
    "statusUpdate:TASK_STATE_WORKING",
    "statusUpdate:TASK_STATE_COMPLETED",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_event_is_the_current_task_snapshot() {
    for b in ALL {
        let (agent, gate) = Gated::new();
        let srv = TestServer::start(agent).await;
        let (mut sender, id) = gated_task(&srv).await;
        gate.chunk("a-1", "already here", false, false);
        gate.step(Step::Working("progress".into()));
        // Once the sender saw both events, they are stored.
        assert_eq!(
            summary(&[sender.expect().await, sender.expect().await]),
            ["artifactUpdate", "statusUpdate:TASK_STATE_WORKING"]
        );
        let snapshot = srv.get_task(&id).await;
        let mut sub = srv.stream(b, Op::SubscribeToTask, json!({"id": id})).await;
        let first = sub.expect().await;
        assert_eq!(first, json!({"task": snapshot}), "{b:?}");
        assert_eq!(
            texts(&first["task"]["artifacts"][0]["parts"]),
            ["already here"]
        );
        gate.step(Step::Complete);
        assert_eq!(
            summary(&sub.rest().await),
            ["statusUpdate:TASK_STATE_COMPLETED"]
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_subscribe_works_with_get_and_post() {
    let (agent, gate) = Gated::new();
    let srv = TestServer::start(agent).await;
    let (_sender, id) = gated_task(&srv).await;
    let mut via_get = srv
        .stream(Binding::Rest, Op::SubscribeToTask, json!({"id": id}))
        .await;
    let response = srv
        .http
        .post(srv.url(&format!("/tasks/{id}:subscribe")))
        .header("content-type", "application/a2a+json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(header_str(response.headers(), "content-type").starts_with("text/event-stream"));
    let mut via_post = SseStream::new(response, Binding::Rest, None);
    let a = via_get.expect().await;
    let b = via_post.expect().await;
    assert_eq!(a, b);
    assert_eq!(a["task"]["id"], id.as_str());
    gate.step(Step::Complete);
    assert_eq!(via_get.rest().await, via_post.rest().await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_subscribers_in_different_bindings_receive_identical_sequences() {
    let (agent, gate) = Gated::new();
    let srv = TestServer::start(agent).await;
    let (mut sender, id) = gated_task(&srv).await;
    let mut rpc = srv
        .stream(Binding::JsonRpc, Op::SubscribeToTask, json!({"id": id}))
        .await;
    let mut rest = srv
        .stream(Binding::Rest, Op::SubscribeToTask, json!({"id": id}))
        .await;
    let rpc_first = rpc.expect().await;
    let rest_first = rest.expect().await;
    assert_eq!(rpc_first, rest_first);
    release_script(&gate);
    let a = rpc.rest().await;
    let b = rest.rest().await;
    let s = sender.rest().await;
    assert_eq!(summary(&a), SCRIPT);
    assert_eq!(a, b, "identical events in identical order");
    assert_eq!(a, s, "the sender's own stream sees the same events");
    assert_eq!(srv.state_of(&id).await, "TASK_STATE_COMPLETED");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_concurrent_subscribers_receive_identical_sequences() {
    let (agent, gate) = Gated::new();
    let srv = TestServer::start(agent).await;
    let (_sender, id) = gated_task(&srv).await;
    // Open every subscription and read its snapshot before anything else happens.
    let opened = join_all((0..200).map(|i| {
        let b = ALL[i % 2];
        let srv = &srv;
        let id = id.clone();
        async move {
            let mut s = srv.stream(b, Op::SubscribeToTask, json!({"id": id})).await;
            let first = s.expect().await;
            (s, first)
        }
    }))
    .await;
    let snapshot = opened[0].1.clone();
    assert_eq!(snapshot["task"]["status"]["state"], "TASK_STATE_WORKING");
    release_script(&gate);
    let sequences: Vec<Vec<Value>> = within(
        "two hundred subscribers read to the end",
        join_all(opened.into_iter().map(|(mut s, first)| async move {
            let mut all = vec![first];
            all.extend(s.rest().await);
            all
        })),
    )
    .await;
    assert_eq!(summary(&sequences[0][1..]), SCRIPT);
    for (i, seq) in sequences.iter().enumerate() {
        assert_eq!(seq[0], snapshot, "subscriber {i}: snapshot");
        assert_eq!(seq, &sequences[0], "subscriber {i}: sequence");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_disconnecting_mid_stream_disturbs_neither_the_task_nor_other_subscribers() {
    let (agent, gate) = Gated::new();
    let srv = TestServer::start(agent).await;
    let (sender, id) = gated_task(&srv).await;
    let mut leaving = srv
        .stream(Binding::Rest, Op::SubscribeToTask, json!({"id": id}))
        .await;
    let mut staying = srv
        .stream(Binding::JsonRpc, Op::SubscribeToTask, json!({"id": id}))
        .await;
    leaving.expect().await;
    staying.expect().await;
    gate.step(Step::Working("one".into()));
    assert_eq!(
        summary(&[leaving.expect().await]),
        ["statusUpdate:TASK_STATE_WORKING"]
    );
    // The original sender and one subscriber go away mid-stream.
    drop(sender);
    drop(leaving);
    gate.chunk("a-1", "alpha ", false, false);
    gate.step(Step::Message("a note".into()));
    gate.chunk("a-1", "beta", true, true);
    gate.step(Step::Working("two".into()));
    gate.step(Step::Complete);
    let events = staying.rest().await;
    assert_eq!(
        summary(&events),
        SCRIPT,
        "the remaining subscriber saw everything"
    );
    let task = srv.get_task(&id).await;
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(texts(&task["artifacts"][0]["parts"]), ["alpha ", "beta"]);
    // The server keeps serving new subscribers and calls.
    assert_eq!(
        srv.ok(Binding::Rest, Op::ListTasks, json!({})).await["totalSize"],
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribing_to_a_task_waiting_for_input_follows_its_continuation() {
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        let task = srv.make_task(b, "TASK_STATE_INPUT_REQUIRED").await;
        let id = str_at(&task, "id");
        let mut sub = srv.stream(b, Op::SubscribeToTask, json!({"id": id})).await;
        let first = sub.expect().await;
        assert_eq!(
            first["task"]["status"]["state"],
            "TASK_STATE_INPUT_REQUIRED"
        );
        let done = srv.ok(b, Op::SendMessage, reply_params(id, "Ada")).await;
        assert_eq!(done["task"]["status"]["state"], "TASK_STATE_COMPLETED");
        let rest = sub.rest().await;
        assert_eq!(
            summary(&rest),
            [
                "statusUpdate:TASK_STATE_WORKING",
                "statusUpdate:TASK_STATE_COMPLETED"
            ],
            "{b:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribing_to_a_terminal_task_is_a_plain_unsupported_operation_error() {
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        for state in [
            "TASK_STATE_COMPLETED",
            "TASK_STATE_FAILED",
            "TASK_STATE_CANCELED",
            "TASK_STATE_REJECTED",
        ] {
            let task = srv.make_task(b, state).await;
            let err = srv
                .open_stream(b, Op::SubscribeToTask, json!({"id": task["id"]}), &[])
                .await
                .expect_err("a terminal task has nothing to subscribe to");
            err.assert_kind(Kind::UnsupportedOperation);
            assert!(!header_str(&err.headers, "content-type").contains("event-stream"));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribing_to_an_unknown_task_is_task_not_found() {
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        let err = srv
            .open_stream(b, Op::SubscribeToTask, json!({"id": "no-such-task"}), &[])
            .await
            .expect_err("unknown task");
        err.assert_kind(Kind::TaskNotFound)
            .assert_metadata("taskId", "no-such-task");
    }
}
