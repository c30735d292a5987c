//! How many transactions a `SendMessage` costs on PostgreSQL (issue 41), counted by the store
//! ([`PgStore::transactions`]), and what the fewer transactions keep: a retried or duplicated
//! message, on one replica or two, is answered with the first send's task.
//!
//! A new task is written once, at its first reveal, with its message claim and its execution
//! lease (`JointWrites`): a blocking send whose task finishes before anyone sees it is one
//! transaction; a streaming one is two (the first event, then the final write, which also
//! gives the lease up).
#![cfg(all(feature = "postgres", feature = "testing"))]

mod pg;

use a2a_core::{Artifact, Error, Message, SendMessageRequest, TaskState};
use a2a_server::postgres::PgStore;
use a2a_server::push::PushSettings;
use a2a_server::{
    Agent, CallContext, EventBus, Leases, RequestContext, RequestHandler, Scope, SendReply, Server,
    TaskEvents,
};
use futures::StreamExt as _;
use pg::TestSchema;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::Semaphore;
use tokio::time::timeout;

const WAIT: Duration = Duration::from_secs(20);

/// What the agent of every replica shares with the test.
struct Probe {
    runs: AtomicUsize,
    gate: Semaphore,
}

/// The demo's echo: an artifact, then COMPLETED. "gated" waits for a permit first.
/// "stepped": WORKING, then (a permit) COMPLETED.
struct Echo(Arc<Probe>);

impl Agent for Echo {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        self.0.runs.fetch_add(1, Ordering::SeqCst);
        let text = cx.message.text();
        if text == "stepped" {
            events.working("a step").await?;
            self.0.gate.acquire().await.expect("gate").forget();
            return events.complete(None).await;
        }
        if text == "gated" {
            self.0.gate.acquire().await.expect("gate").forget();
        }
        events
            .artifact(Artifact::text("echo", format!("echo: {text}")))
            .await?;
        events.complete(None).await
    }
}

fn echo() -> Arc<Probe> {
    Arc::new(Probe {
        runs: AtomicUsize::new(0),
        gate: Semaphore::new(0),
    })
}

/// A replica on the test's schema, with the schema's bus and leases; and its store.
async fn replica(
    db: &TestSchema,
    name: &str,
    agent: &Arc<Probe>,
) -> (Arc<RequestHandler>, PgStore) {
    let store = db.store().await;
    let bus: Arc<dyn EventBus> = store.event_bus().await.expect("bus");
    let leases: Arc<dyn Leases> = store.leases();
    let server = Server::builder(Echo(agent.clone()))
        .task_store(store.clone())
        .event_bus(bus)
        .leases(leases)
        .replica_id(name)
        .push_notifications(PushSettings::default().allow("127.0.0.1").expect("allow"))
        .build()
        .expect("server");
    (server.handler(), store)
}

/// A streaming send of "stepped": reads its first event (WORKING, written), then lets the
/// agent complete the task and reads the rest.
async fn stepped(handler: &RequestHandler, agent: &Probe) {
    let req = SendMessageRequest::new(Message::user_text("stepped"));
    let mut events = timeout(WAIT, handler.send_streaming_message(&cx(), req))
        .await
        .expect("the stream opens in time")
        .expect("the stream opens");
    let first = timeout(WAIT, events.next()).await.expect("the first event");
    assert!(first.is_some_and(|e| e.seq == 1));
    agent.gate.add_permits(1);
    let rest: Vec<_> = timeout(WAIT, events.collect()).await.expect("the end");
    assert_eq!(rest.len(), 1, "COMPLETED");
}

fn cx() -> CallContext {
    CallContext::new(Scope::default(), Default::default())
}

/// A blocking send of `message`; returns the task's id and state.
async fn send(handler: &RequestHandler, message: Message) -> (String, TaskState) {
    send_request(handler, SendMessageRequest::new(message)).await
}

/// A blocking send of `req`; returns the task's id and state.
async fn send_request(handler: &RequestHandler, req: SendMessageRequest) -> (String, TaskState) {
    match timeout(WAIT, handler.send_message(&cx(), req)).await {
        Ok(Ok(SendReply::Task(task))) => {
            let task = task.into_task();
            (task.id.to_string(), task.status.state)
        }
        other => panic!("send: {other:?}"),
    }
}

/// A streaming send of `message`, read to its end; returns the task id of every event.
async fn stream(handler: &RequestHandler, message: Message) -> Vec<String> {
    let req = SendMessageRequest::new(message);
    let events = timeout(WAIT, handler.send_streaming_message(&cx(), req))
        .await
        .expect("the stream opens in time")
        .expect("the stream opens");
    let events: Vec<_> = timeout(WAIT, events.collect())
        .await
        .expect("the stream ends in time");
    events
        .iter()
        .map(|e| match &e.event {
            a2a_core::StreamResponse::Task(t) => t.id.to_string(),
            a2a_core::StreamResponse::StatusUpdate(u) => u.task_id.to_string(),
            a2a_core::StreamResponse::ArtifactUpdate(u) => u.task_id.to_string(),
            other => panic!("unexpected event {other:?}"),
        })
        .collect()
}

#[tokio::test]
async fn a_blocking_send_is_one_transaction_and_a_streaming_one_two() {
    let Some(db) = TestSchema::new().await else {
        return;
    };
    let agent = echo();
    let (handler, store) = replica(&db, "r1", &agent).await;
    // The first lease taken registers the replica (its heartbeat row, renewed by the upkeep,
    // which this test does not run): once per process.
    stepped(&handler, &agent).await;

    const N: u64 = 10;
    let before = store.transactions();
    for i in 0..N {
        let (_, state) = send(&handler, Message::user_text(format!("hello {i}"))).await;
        assert_eq!(state, TaskState::Completed);
    }
    let blocking = store.transactions() - before;
    assert_eq!(
        blocking, N,
        "a blocking send whose task finishes unseen: claim, task and log in one transaction"
    );

    // A stream of the echo: its completion usually comes before the creation's write has
    // begun, and is written with it; else after it, with the release.
    let before = store.transactions();
    for i in 0..N {
        let ids = stream(&handler, Message::user_text(format!("stream {i}"))).await;
        assert_eq!(
            ids.len(),
            2,
            "created (with the artifact), completed: {ids:?}"
        );
    }
    // One more blocking send: whatever the streams' executions did after their last event
    // (they do nothing more) is done by the time it is answered.
    send(&handler, Message::user_text("last")).await;
    let streaming = store.transactions() - before - 1;
    assert!(
        (N..=2 * N).contains(&streaming),
        "a streaming send: one or two transactions ({streaming} for {N})"
    );

    // A stream whose first event is seen before the task goes on: claim, lease and creation;
    // then the final write with the release.
    let before = store.transactions();
    for _ in 0..N {
        stepped(&handler, &agent).await;
    }
    send(&handler, Message::user_text("last")).await;
    let stepped = store.transactions() - before - 1;
    assert_eq!(
        stepped,
        2 * N,
        "a streamed task seen before it ends: two transactions"
    );

    let client = db.sql().await;
    assert_eq!(db.count("a2a_leases").await, 0, "every lease given up");
    assert_eq!(
        db.count("a2a_claims").await,
        i64::try_from(3 * N + 3).unwrap(),
        "every send's claim written with its task"
    );
    let active: i64 = client
        .query_one(
            "SELECT count(*) FROM a2a_tasks WHERE state <> 'TASK_STATE_COMPLETED'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(active, 0);
}

#[tokio::test]
async fn a_retried_send_is_answered_with_the_first_task_blocking_or_streaming() {
    let Some(db) = TestSchema::new().await else {
        return;
    };
    let agent = echo();
    let (handler, _store) = replica(&db, "r1", &agent).await;
    let message = Message::user_text("once");
    let (first, _) = send(&handler, message.clone()).await;
    // The retry runs the agent up to its first write, which finds the claim: nothing of it
    // is written, and it is answered with the first send's task.
    let (again, state) = send(&handler, message.clone()).await;
    assert_eq!(again, first);
    assert_eq!(state, TaskState::Completed);
    let ids = stream(&handler, message).await;
    assert!(
        !ids.is_empty() && ids.iter().all(|id| *id == first),
        "{ids:?}"
    );
    assert_eq!(db.count("a2a_tasks").await, 1, "one task for three sends");
    assert_eq!(db.count("a2a_claims").await, 1);
}

#[tokio::test]
async fn a_duplicate_sent_while_the_first_runs_unwritten_is_answered_with_its_task() {
    let Some(db) = TestSchema::new().await else {
        return;
    };
    let agent = echo();
    let (a, _) = replica(&db, "a", &agent).await;
    let (b, _) = replica(&db, "b", &agent).await;
    let message = Message::user_text("gated");

    // On one replica: the duplicate finds the first send's unwritten task in the process and
    // waits for it; the agent runs once.
    let first = tokio::spawn({
        let (a, m) = (a.clone(), message.clone());
        async move { send(&a, m).await }
    });
    while agent.runs.load(Ordering::SeqCst) == 0 {
        tokio::task::yield_now().await;
    }
    let second = tokio::spawn({
        let (a, m) = (a.clone(), message.clone());
        async move { send(&a, m).await }
    });
    agent.gate.add_permits(1);
    let (first, second) = (first.await.unwrap(), second.await.unwrap());
    assert_eq!(first, second);
    assert_eq!(
        agent.runs.load(Ordering::SeqCst),
        1,
        "the duplicate joined the first run"
    );

    // On two replicas at once: both run the agent unwritten; the first to write its claim
    // wins, and the other send is answered with the winner's task.
    let message = Message::user_text("gated");
    let sends: Vec<_> = [a.clone(), b.clone()]
        .into_iter()
        .map(|h| {
            let m = message.clone();
            tokio::spawn(async move { send(&h, m).await })
        })
        .collect();
    while agent.runs.load(Ordering::SeqCst) < 3 {
        tokio::task::yield_now().await;
    }
    agent.gate.add_permits(2);
    let mut answers = Vec::new();
    for s in sends {
        answers.push(s.await.unwrap());
    }
    assert_eq!(answers[0], answers[1], "one task answers both sends");
    assert_eq!(answers[0].1, TaskState::Completed);
    assert_eq!(db.count("a2a_tasks").await, 2, "one task per message");
    assert_eq!(db.count("a2a_claims").await, 2);
}

/// Two sends of one message on two replicas at once, each with a webhook of its own: the one
/// whose task loses the claim is answered with the winner's task, and its webhook moves there
/// with it. No registration is left on the task that was never written.
#[tokio::test]
async fn a_duplicate_that_loses_its_claim_takes_its_webhook_to_the_winners_task() {
    let Some(db) = TestSchema::new().await else {
        return;
    };
    let agent = echo();
    let (a, _) = replica(&db, "a", &agent).await;
    let (b, _) = replica(&db, "b", &agent).await;
    let message = Message::user_text("gated");
    agent.gate.add_permits(2);
    let sends: Vec<_> = [(a, "http://127.0.0.1:9/a"), (b, "http://127.0.0.1:9/b")]
        .into_iter()
        .map(|(h, url)| {
            let mut req = SendMessageRequest::new(message.clone());
            let webhook = serde_json::from_value(serde_json::json!({ "url": url })).unwrap();
            req.configuration = Some(a2a_core::SendMessageConfiguration {
                task_push_notification_config: Some(webhook),
                ..Default::default()
            });
            tokio::spawn(async move { send_request(&h, req).await.0 })
        })
        .collect();
    let mut answers = Vec::new();
    for s in sends {
        answers.push(s.await.unwrap());
    }
    assert_eq!(answers[0], answers[1], "one task answers both sends");
    let client = db.sql().await;
    assert_eq!(db.count("a2a_tasks").await, 1);
    let rows = client
        .query(
            "SELECT task_id, config->>'url' FROM a2a_push_configs ORDER BY 2",
            &[],
        )
        .await
        .expect("push configs");
    let registered: Vec<(String, String)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    let winner = &answers[0];
    assert_eq!(
        registered,
        [
            (winner.clone(), "http://127.0.0.1:9/a".to_owned()),
            (winner.clone(), "http://127.0.0.1:9/b".to_owned()),
        ],
        "both webhooks on the winner's task"
    );
}

/// With metrics on, a new task's one write (claim, task and lease together) is timed as the
/// store operation `create_joint`.
#[tokio::test]
async fn the_joint_write_is_timed_as_a_store_operation() {
    let Some(db) = TestSchema::new().await else {
        return;
    };
    let store = db.store().await;
    let leases: Arc<dyn Leases> = store.leases();
    let metrics = a2a_server::Metrics::new();
    let server = Server::builder(Echo(echo()))
        .task_store(store.clone())
        .leases(leases)
        .metrics(metrics.clone())
        .build()
        .expect("server");
    let handler = server.handler();
    send(&handler, Message::user_text("timed")).await;
    let text = metrics.render();
    assert!(
        text.contains(r#"a2a_store_operation_duration_seconds_count{operation="create_joint"} 1"#),
        "{text}"
    );
}
