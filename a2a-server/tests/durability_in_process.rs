//! Durability in process, through the transport-independent handler: slow subscribers catch up
//! without blocking the agent; retried sends run the agent once; a resumed subscription of a
//! finished task replays what it missed; retention removes what it should and nothing else.

mod served;

use a2a_core::{
    Artifact, Error, Message, SendMessageRequest, StreamResponse, SubscribeToTaskRequest, Task,
    TaskId, TaskState, TaskStatus, Timestamp,
};
use a2a_server::{
    Agent, CallContext, MemoryStore, RequestContext, Scope, SendReply, Server, Store, TaskEvents,
};
use futures::{FutureExt as _, StreamExt as _};
use serde_json::Value;
use served::message;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::time::timeout;

const WAIT: Duration = Duration::from_secs(20);

/// Emits `n` status updates as fast as it can, then completes.
struct Burst(usize);

impl Agent for Burst {
    async fn execute(&self, _: RequestContext, events: TaskEvents) -> Result<(), Error> {
        for i in 0..self.0 {
            events.working(format!("step {i}")).await?;
        }
        events.complete(None).await
    }
}

fn server<A: Agent>(agent: A, store: Arc<dyn Store>) -> Server {
    Server::builder(agent)
        .task_store_arc(store)
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_subscriber_that_reads_nothing_for_a_long_burst_gets_every_event_and_never_blocks_the_agent()
 {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let server = server(Burst(3000), store.clone());
    let h = server.handler();
    let cx = CallContext::default();
    // Start the task, subscribe, and then read nothing while the agent emits 3000 events.
    let first = h
        .send_message(
            &cx,
            SendMessageRequest::new(Message::user_text("go")).with_return_immediately(true),
        )
        .await
        .unwrap();
    let SendReply::Task(task) = first else {
        panic!("a task")
    };
    let mut stream = h
        .subscribe_to_task(&cx, SubscribeToTaskRequest::new(task.id.clone()))
        .await
        .unwrap();
    // The agent finishes while nobody reads: it was never blocked.
    timeout(WAIT, async {
        loop {
            let t = store.get(&task.id).await.unwrap().unwrap();
            if t.task.status.state == TaskState::Completed {
                return;
            }
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the agent completes without anyone reading");
    // Now read: every event after the snapshot, in order, no gap, no duplicate.
    let mut seqs = Vec::new();
    while let Some(e) = timeout(WAIT, stream.next()).await.unwrap() {
        seqs.push(e.seq);
    }
    let from = seqs[0];
    let expected: Vec<u64> = (from..from + seqs.len() as u64).collect();
    assert_eq!(seqs, expected);
    let last = store.get(&task.id).await.unwrap().unwrap().version;
    assert_eq!(*seqs.last().unwrap(), last, "up to the terminal event");
}

/// Counts its executions; takes a moment, then completes.
struct Counting(Arc<AtomicUsize>);

impl Agent for Counting {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        self.0.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(100)).await;
        events
            .artifact(Artifact::text("echo", cx.message.text()))
            .await?;
        events.complete(None).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_message_id_sent_concurrently_from_two_connections_makes_one_task_and_one_execution()
 {
    let runs = Arc::new(AtomicUsize::new(0));
    let server = server(Counting(runs.clone()), Arc::new(MemoryStore::new()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { server.serve(listener).await });
    let send = |url: String| async move {
        // A fresh client per request: two separate connections.
        let r: Value = reqwest::Client::new()
            .post(format!("{url}/message:send"))
            .json(&message("same-id", "once"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        r
    };
    let (a, b) = tokio::join!(send(url.clone()), send(url.clone()));
    assert_eq!(a["task"]["id"], b["task"]["id"], "one task: {a} / {b}");
    assert_eq!(a["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(b["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(runs.load(Ordering::SeqCst), 1, "the agent ran once");
    // A later retry still gets the same task; a new messageId makes a new one.
    let c = send(url.clone()).await;
    assert_eq!(c["task"]["id"], a["task"]["id"]);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

fn stored_task(id: &str, state: TaskState, millis: i64) -> Arc<Task> {
    let mut status = TaskStatus::new(state);
    status.timestamp = Timestamp::from_unix_millis(millis);
    Arc::new(Task::new(id, "ctx", status))
}

#[tokio::test]
async fn retention_removes_old_finished_tasks_and_nothing_else() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let old = Timestamp::now().unix_millis() - 3_600_000 * 48;
    for (id, state) in [
        ("old-completed", TaskState::Completed),
        ("old-failed", TaskState::Failed),
        ("old-canceled", TaskState::Canceled),
        ("old-rejected", TaskState::Rejected),
        ("old-input", TaskState::InputRequired),
        ("old-auth", TaskState::AuthRequired),
        ("old-working", TaskState::Working),
    ] {
        store
            .create(stored_task(id, state, old), Scope::default())
            .await
            .unwrap();
    }
    store
        .create(
            stored_task(
                "new-completed",
                TaskState::Completed,
                Timestamp::now().unix_millis(),
            ),
            Scope::default(),
        )
        .await
        .unwrap();
    let server = server(Counting(Arc::default()), store.clone());
    let h = server.handler();
    let deleted = h
        .sweep(
            Some(Duration::from_secs(24 * 3600)),
            Duration::from_secs(3600),
        )
        .await
        .unwrap();
    assert_eq!(deleted, 4);
    for gone in [
        "old-completed",
        "old-failed",
        "old-canceled",
        "old-rejected",
    ] {
        let id = TaskId::from(gone);
        assert!(store.get(&id).await.unwrap().is_none(), "{gone} removed");
        assert!(
            store.events(&id, 0, 10).await.unwrap().is_empty(),
            "{gone}'s log removed"
        );
    }
    for kept in ["old-input", "old-auth", "old-working", "new-completed"] {
        let t = store.get(&TaskId::from(kept)).await.unwrap();
        assert!(t.is_some(), "{kept} kept");
        assert_eq!(
            store
                .events(&TaskId::from(kept), 0, 10)
                .await
                .unwrap()
                .len(),
            1
        );
    }
}

/// Who runs the sweeps: `Server::serve`, the upkeep a user spawns next to `into_router`, or
/// nobody (a bare router starts nothing in the background).
#[tokio::test]
async fn serve_and_the_spawned_upkeep_sweep_and_a_bare_router_starts_nothing() {
    for how in ["serve", "upkeep", "router"] {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let old = stored_task("old", TaskState::Completed, 1_000);
        store.create(old.clone(), Scope::default()).await.unwrap();
        let server = Server::builder(Counting(Arc::default()))
            .task_store_arc(store.clone())
            .retention(Duration::from_secs(1))
            .sweep_interval(Duration::from_millis(20))
            .build()
            .unwrap();
        let stop = server.shutdown_token();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let served = match how {
            "serve" => tokio::spawn(async move { server.serve(listener).await.unwrap() }),
            "upkeep" => {
                tokio::spawn(server.upkeep());
                tokio::spawn(
                    async move { axum::serve(listener, server.into_router()).await.unwrap() },
                )
            }
            _ => tokio::spawn(
                async move { axum::serve(listener, server.into_router()).await.unwrap() },
            ),
        };
        let swept = timeout(Duration::from_millis(500), async {
            while store.get(&old.id).await.unwrap().is_some() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
        .is_ok();
        assert_eq!(swept, how != "router", "{how}");
        stop.cancel();
        if how == "serve" {
            timeout(WAIT, served)
                .await
                .expect("serve returns on shutdown")
                .unwrap();
        } else {
            served.abort();
        }
    }
}

/// Reports its task, works until the gate opens, then completes.
struct Gated {
    task: Arc<std::sync::Mutex<Option<TaskId>>>,
    gate: Arc<tokio::sync::Notify>,
}

impl Agent for Gated {
    async fn execute(&self, _: RequestContext, events: TaskEvents) -> Result<(), Error> {
        events.working("waiting for the gate").await?;
        *self.task.lock().unwrap() = Some(events.task_id().clone());
        self.gate.notified().await;
        events.complete(None).await
    }
}

/// A blocking send drives its agent itself while it waits (no task spawned): a caller that hangs
/// up must not take the agent's work with it.
#[tokio::test]
async fn a_blocking_send_whose_caller_hangs_up_leaves_its_agent_running_to_the_end() {
    let task = Arc::new(std::sync::Mutex::new(None));
    let gate = Arc::new(tokio::sync::Notify::new());
    let agent = Gated {
        task: task.clone(),
        gate: gate.clone(),
    };
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let server = server(agent, store.clone());
    let h = server.handler();
    let cx = CallContext::default();
    let mut send = Box::pin(h.send_message(&cx, SendMessageRequest::new(Message::user_text("go"))));
    // Poll the send until its agent works and waits at the gate, then hang up.
    let id = timeout(WAIT, async {
        loop {
            assert!(send.as_mut().now_or_never().is_none(), "the send waits");
            if let Some(id) = task.lock().unwrap().clone() {
                return id;
            }
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the agent starts");
    drop(send);
    gate.notify_one();
    timeout(WAIT, async {
        loop {
            let t = store.get(&id).await.unwrap().unwrap();
            if t.task.status.state == TaskState::Completed {
                return;
            }
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the agent completes the task after its caller left");
}

#[tokio::test]
async fn remembered_message_ids_expire_after_the_dedup_window() {
    let runs = Arc::new(AtomicUsize::new(0));
    let server = server(Counting(runs.clone()), Arc::new(MemoryStore::new()));
    let h = server.handler();
    let cx = CallContext::default();
    let request = SendMessageRequest::new(Message::user_text("x").with_message_id("m-1"));
    let first = h.send_message(&cx, request.clone()).await.unwrap();
    let again = h.send_message(&cx, request.clone()).await.unwrap();
    assert_eq!(first, again, "within the window: the same task");
    h.sweep(None, Duration::ZERO).await.unwrap();
    tokio::time::sleep(Duration::from_millis(5)).await;
    h.sweep(None, Duration::ZERO).await.unwrap();
    let later = h.send_message(&cx, request).await.unwrap();
    let (SendReply::Task(a), SendReply::Task(b)) = (first, later) else {
        panic!("tasks")
    };
    assert_ne!(a.id, b.id, "after the window: a new task");
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_resumed_subscription_of_a_finished_task_replays_the_missed_events_then_closes() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let server = server(Burst(5), store.clone());
    let h = server.handler();
    let cx = CallContext::default();
    let SendReply::Task(task) = h
        .send_message(&cx, SendMessageRequest::new(Message::user_text("go")))
        .await
        .unwrap()
    else {
        panic!("a task")
    };
    assert_eq!(task.status.state, TaskState::Completed);
    let resumed: Vec<_> = h
        .subscribe_to_task(
            &cx.clone().with_last_event_id(Some(3)),
            SubscribeToTaskRequest::new(task.id.clone()),
        )
        .await
        .unwrap()
        .collect()
        .await;
    let seqs: Vec<u64> = resumed.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [4, 5, 6]);
    assert!(matches!(
        &resumed.last().unwrap().event,
        StreamResponse::StatusUpdate(s) if s.status.state == TaskState::Completed
    ));
    // Without Last-Event-ID the spec's rule stands: a finished task cannot be subscribed to.
    let err = h
        .subscribe_to_task(&cx, SubscribeToTaskRequest::new(task.id.clone()))
        .await
        .err()
        .expect("an error");
    assert_eq!(err.kind(), Some(a2a_core::ErrorKind::UnsupportedOperation));
}

#[tokio::test]
async fn two_callers_reusing_a_message_id_with_different_content_get_their_own_tasks() {
    let runs = Arc::new(AtomicUsize::new(0));
    let server = server(Counting(runs.clone()), Arc::new(MemoryStore::new()));
    let h = server.handler();
    let cx = CallContext::default();
    let a = h
        .send_message(
            &cx,
            SendMessageRequest::new(Message::user_text("from a").with_message_id("1")),
        )
        .await
        .unwrap();
    let b = h
        .send_message(
            &cx,
            SendMessageRequest::new(Message::user_text("from b").with_message_id("1")),
        )
        .await
        .unwrap();
    let (SendReply::Task(a), SendReply::Task(b)) = (a, b) else {
        panic!("tasks")
    };
    assert_ne!(a.id, b.id);
    assert_eq!(a.artifacts[0].text_content(), "from a");
    assert_eq!(b.artifacts[0].text_content(), "from b");
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

/// Asks once; completes when answered (counting its runs).
struct AskOnce(Arc<AtomicUsize>);

impl Agent for AskOnce {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        self.0.fetch_add(1, Ordering::SeqCst);
        if cx.stored_task.is_some() {
            return events.complete(None).await;
        }
        events.input_required("which one?").await
    }
}

#[tokio::test]
async fn a_retried_continuation_of_a_task_that_finished_gets_the_task() {
    let runs = Arc::new(AtomicUsize::new(0));
    let server = server(AskOnce(runs.clone()), Arc::new(MemoryStore::new()));
    let h = server.handler();
    let cx = CallContext::default();
    let first = SendMessageRequest::new(Message::user_text("book"));
    let Ok(SendReply::Task(asked)) = h.send_message(&cx, first).await else {
        panic!("a task")
    };
    let answer = Message::user_text("the red one")
        .with_task_id(asked.id.clone())
        .with_message_id("answer-1");
    let continued = SendMessageRequest::new(answer.clone());
    let Ok(SendReply::Task(done)) = h.send_message(&cx, continued.clone()).await else {
        panic!("a task")
    };
    assert_eq!(done.status.state, TaskState::Completed);
    // The answer's response was lost; the client sends it again: the same task, no new run.
    let Ok(SendReply::Task(again)) = h.send_message(&cx, continued).await else {
        panic!("the task again")
    };
    assert_eq!(again, done);
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    // Another message to the finished task is refused, and refused again when retried.
    let other = SendMessageRequest::new(
        Message::user_text("and a blue one")
            .with_task_id(asked.id.clone())
            .with_message_id("answer-2"),
    );
    for _ in 0..2 {
        let err = h
            .send_message(&cx, other.clone())
            .await
            .expect_err("finished");
        assert_eq!(err.kind(), Some(a2a_core::ErrorKind::UnsupportedOperation));
    }
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}
