//! Nothing lost: a task acknowledged to a client survives `kill -9`; every task's event log is
//! gap-free; a stream resumed with `Last-Event-ID` yields exactly the events it missed; slow
//! subscribers catch up without blocking the agent; retried sends run the agent once;
//! retention removes what it should and nothing else.

use a2a_core::{
    Artifact, Error, Message, SendMessageRequest, StreamResponse, SubscribeToTaskRequest, Task,
    TaskId, TaskState, TaskStatus, Timestamp,
};
use a2a_server::{
    Agent, CallContext, MemoryStore, RequestContext, Scope, SendReply, Server, Store, TaskEvents,
};
use futures::{FutureExt as _, StreamExt as _};
use serde_json::{Value, json};
#[cfg(feature = "cli")]
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::time::timeout;

const WAIT: Duration = Duration::from_secs(20);

// A real server process, and a small SSE reader over reqwest (with the `cli` feature, which
// builds the binary).
#[cfg(feature = "cli")]
mod process;
#[cfg(feature = "cli")]
use process::{Process, full_log, read_sse, task_id_of};

fn message(id: &str, text: &str) -> Value {
    json!({"message": {"messageId": id, "role": "ROLE_USER", "parts": [{"text": text}]}})
}

// ---------------------------------------------------------------------------------------------

/// Starts a server on the embedded store `store` with the fault `fault` (`A2A_FAULT`), sends
/// `body`, and sees the server abort before it answers.
#[cfg(all(feature = "cli", feature = "testing"))]
async fn crash_on_first_send(
    dir: &std::path::Path,
    store: &str,
    http: &reqwest::Client,
    fault: &str,
    body: &Value,
) {
    let server = Process::with_env(dir, &[("A2A_FAULT", fault), ("A2A_STORE", store)]);
    process::aborts_before_answering(server, http, body).await;
}

/// A crash while a task waits unwritten (write-behind), after its message's claim became
/// durable with another task's flush: the client got no answer; its retry is told that the
/// first send was lost (rather than waiting on a claim whose task will never exist), and the
/// next one runs the agent afresh. One task.
#[cfg(all(feature = "cli", feature = "testing"))]
#[tokio::test]
async fn a_crash_before_a_tasks_first_write_lets_the_retried_send_run_afresh() {
    let dir = tempfile::tempdir().unwrap();
    let http = reqwest::Client::new();
    let body = message("crash-2", "hello");
    crash_on_first_send(dir.path(), "sled", &http, "abort-before-batch", &body).await;

    let server = Process::start(dir.path());
    server.ready(&http).await;
    let url = &server.url;
    let send = || async {
        let r = http
            .post(format!("{url}/message:send"))
            .json(&body)
            .send()
            .await
            .unwrap();
        (r.status(), r.json::<Value>().await.unwrap())
    };
    // The claim names a task that was never written: the retry says so and lets the claim go.
    let (status, refused) = send().await;
    assert!(
        !status.is_success() && refused.to_string().contains("lost in a server restart"),
        "{status} {refused}"
    );
    let (status, retry) = send().await;
    assert!(
        status.is_success(),
        "the next retry runs afresh: {status} {retry}"
    );
    assert_eq!(
        retry["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{retry}"
    );
    let listed: Value = http
        .get(format!("{url}/tasks"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        listed["tasks"].as_array().map(Vec::len),
        Some(1),
        "one task: {listed}"
    );
}

/// The crash between a batch's write and its reveal (write-behind, `engine/cell/outbox.rs`):
/// the server aborts once the task of a blocking send is written and flushed, before it
/// answers. The client got no answer; its retry, to the restarted server, is answered with
/// the task the first send wrote, and the agent does not run again: one task, whose log is
/// the first run's.
#[cfg(all(feature = "cli", feature = "testing"))]
#[tokio::test]
async fn a_crash_between_a_batchs_write_and_its_reveal_answers_the_retried_send_once() {
    crash_between_write_and_reveal("sled").await;
}

/// The same on fjall (`--store fjall`).
#[cfg(all(feature = "cli", feature = "testing"))]
#[tokio::test]
async fn on_fjall_a_crash_between_a_batchs_write_and_its_reveal_answers_the_retried_send_once() {
    crash_between_write_and_reveal("fjall").await;
}

#[cfg(all(feature = "cli", feature = "testing"))]
async fn crash_between_write_and_reveal(store: &str) {
    let dir = tempfile::tempdir().unwrap();
    let http = reqwest::Client::new();
    let body = message("crash-1", "hello");
    crash_on_first_send(dir.path(), store, &http, "abort-after-batch", &body).await;

    let dir_arg = dir.path().to_str().unwrap();
    let server = Process::with_args(&["--data-dir", dir_arg, "--store", store]);
    server.ready(&http).await;
    let url = &server.url;
    let send = || async {
        let r = http
            .post(format!("{url}/message:send"))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert!(
            r.status().is_success(),
            "the retry is answered: {}",
            r.status()
        );
        r.json::<Value>().await.unwrap()
    };
    let retry = send().await;
    let id = retry["task"]["id"].as_str().expect("a task").to_owned();
    assert_eq!(retry["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(
        retry["task"]["artifacts"][0]["parts"][0]["text"], "echo: hello",
        "{retry}"
    );
    // Once: the task the first send wrote, the only one; its log is that run's, gap-free.
    let listed: Value = http
        .get(format!("{url}/tasks"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let ids: Vec<&str> = listed["tasks"]
        .as_array()
        .expect("a listing")
        .iter()
        .filter_map(|t| t["id"].as_str())
        .collect();
    assert_eq!(ids, [id.as_str()], "one task, no second run: {listed}");
    let log = full_log(&http, url, &id).await;
    let seqs: Vec<u64> = log.iter().map(|e| e.id).collect();
    assert_eq!(
        seqs,
        [1, 2],
        "creation (with the artifact), completion: {log:?}"
    );
    assert_eq!(send().await["task"]["id"], id.as_str(), "and again");
}

/// One round: load, SIGKILL after `kill_after`, restart, check everything, on the embedded
/// store `store` (`--store`).
#[cfg(feature = "cli")]
async fn kill_and_check(kill_after: Duration, store: &str) {
    let dir = tempfile::tempdir().unwrap();
    let http = reqwest::Client::new();
    let start =
        || Process::with_args(&["--data-dir", dir.path().to_str().unwrap(), "--store", store]);
    let mut server = start();
    server.ready(&http).await;
    let url = server.url.clone();

    // Blocking senders: every response received is an acknowledged task.
    let acked = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let mut load = Vec::new();
    for worker in 0..6 {
        let (http, url, acked) = (http.clone(), url.clone(), acked.clone());
        load.push(tokio::spawn(async move {
            for i in 0.. {
                let body = message(&format!("w{worker}-{i}"), &format!("hello {worker}/{i}"));
                let Ok(r) = http
                    .post(format!("{url}/message:send"))
                    .json(&body)
                    .send()
                    .await
                else {
                    return;
                };
                let Ok(v) = r.json::<Value>().await else {
                    return;
                };
                if let Some(id) = v["task"]["id"].as_str() {
                    acked.lock().unwrap().push(id.to_owned());
                }
            }
        }));
    }
    // Streaming clients: what each saw before the crash.
    let mut streams = Vec::new();
    for s in 0..4 {
        let (http, url) = (http.clone(), url.clone());
        streams.push(tokio::spawn(async move {
            let mut seen = Vec::new();
            let body = message(&format!("s{s}"), "countdown 40");
            if let Ok(r) = http
                .post(format!("{url}/message:stream"))
                .json(&body)
                .send()
                .await
            {
                read_sse(r, &mut seen).await;
            }
            seen
        }));
    }
    // Kill at the chosen point, but only once the load has been acknowledged at least once.
    tokio::time::sleep(kill_after).await;
    timeout(WAIT, async {
        while acked.lock().unwrap().is_empty() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the load gets acknowledged");
    server.kill9();
    for l in load {
        let _ = l.await;
    }
    let mut seen_by_stream = Vec::new();
    for s in streams {
        seen_by_stream.push(s.await.unwrap());
    }

    let server = start();
    server.ready(&http).await;
    let url = server.url.clone();
    let acked = acked.lock().unwrap().clone();
    assert!(
        !acked.is_empty(),
        "the load produced acknowledged tasks before the kill"
    );

    // Every acknowledged task exists, completed, with its artifact.
    for id in &acked {
        let t: Value = http
            .get(format!("{url}/tasks/{id}"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(t["id"], id.as_str(), "acknowledged task {id} survived: {t}");
        assert_eq!(t["status"]["state"], "TASK_STATE_COMPLETED");
        assert!(
            t["artifacts"][0]["parts"][0]["text"]
                .as_str()
                .unwrap()
                .starts_with("echo: hello")
        );
    }

    // Every task's log is gap-free, and ends in its current (terminal) state once recovery ran.
    let mut all = Vec::new();
    let mut token = String::new();
    loop {
        let page: Value = http
            .get(format!("{url}/tasks?pageSize=100&pageToken={token}"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        all.extend(
            page["tasks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["id"].as_str().unwrap().to_owned()),
        );
        token = page["nextPageToken"].as_str().unwrap().to_owned();
        if token.is_empty() {
            break;
        }
    }
    // And listed: the store writes listing keys after the task (a relist), and the reopened store
    // writes those the kill left unwritten.
    let listed: std::collections::HashSet<&String> = all.iter().collect();
    for id in &acked {
        assert!(listed.contains(id), "acknowledged task {id} is listed");
    }
    let mut logs = HashMap::new();
    for id in &all {
        let log = timeout(WAIT, async {
            loop {
                // Recovery fails tasks the old process left running; wait until it has.
                let log = full_log(&http, &url, id).await;
                let last = log.last().map(|e| e.data.clone()).unwrap_or_default();
                let state = last["statusUpdate"]["status"]["state"]
                    .as_str()
                    .or(last["task"]["status"]["state"].as_str())
                    .unwrap_or_default()
                    .to_owned();
                if state != "TASK_STATE_WORKING" && state != "TASK_STATE_SUBMITTED" {
                    return log;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
        .expect("recovery settles every task");
        let ids: Vec<u64> = log.iter().map(|e| e.id).collect();
        let expected: Vec<u64> = (1..=ids.len() as u64).collect();
        assert_eq!(ids, expected, "task {id}: the log has no gap");
        logs.insert(id.clone(), log);
    }

    // Every interrupted stream: what it saw is exactly the log's prefix, and resuming with
    // Last-Event-ID yields exactly the rest.
    for seen in seen_by_stream {
        let Some(id) = task_id_of(&seen) else {
            continue;
        };
        let log = &logs[&id];
        assert_eq!(
            &log[..seen.len()],
            &seen[..],
            "task {id}: the client saw only durable events"
        );
        let last = seen.last().unwrap().id;
        let response = http
            .get(format!("{url}/tasks/{id}:subscribe"))
            .header("Last-Event-ID", last.to_string())
            .send()
            .await
            .unwrap();
        let mut resumed = Vec::new();
        timeout(WAIT, read_sse(response, &mut resumed))
            .await
            .unwrap();
        assert_eq!(
            &resumed[..],
            &log[seen.len()..],
            "task {id}: resumed with exactly the missing events"
        );
        let final_state = &resumed.last().unwrap_or(seen.last().unwrap()).data;
        assert!(
            final_state["statusUpdate"]["status"]["state"] == "TASK_STATE_FAILED"
                || final_state["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED",
            "task {id} ends completed (if it finished) or failed by the restart: {final_state}"
        );
    }
}

#[cfg(feature = "cli")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_under_load_loses_no_acknowledged_task_and_no_event() {
    for kill_after in [150, 450, 900] {
        kill_and_check(Duration::from_millis(kill_after), "sled").await;
    }
}

#[cfg(feature = "cli")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_under_load_on_fjall_loses_no_acknowledged_task_and_no_event() {
    for kill_after in [150, 450, 900] {
        kill_and_check(Duration::from_millis(kill_after), "fjall").await;
    }
}

// ---------------------------------------------------------------------------------------------
// In-process tests through the transport-independent handler.

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
