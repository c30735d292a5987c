//! Webhook registrations over their life: pending deliveries survive a clean shutdown (resumed
//! by the upkeep, or by the first request when nobody runs it), a task's registrations are
//! limited and cost the same however many there are, and a retried send registers its push
//! config like the first one would have.

mod observed;

use a2a_core::{
    Artifact, Error, ErrorKind, GetTaskRequest, ListTaskPushNotificationConfigsRequest, Message,
    SendMessageRequest, SendMessageResponse, Task, TaskId, TaskPushNotificationConfig,
};
use a2a_server::push::{DEFAULT_MAX_CONFIGS_PER_TASK, PushSettings};
use a2a_server::store::PushRecord;
use a2a_server::{
    Agent, CallContext, PushStore, RequestContext, Server, SledStore, TaskEvents, TaskStore,
};
use axum::http::{HeaderMap, StatusCode};
use serde_json::json;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::timeout;

const WAIT: Duration = Duration::from_secs(20);

/// Three steps, each a status update and an artifact chunk (7 events in all); or asks a
/// question for `ask` (in a new task or a continuation).
struct Steps;

impl Agent for Steps {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        if cx.message.text() == "ask" {
            return events.input_required("Which one?").await;
        }
        for i in 1..=3 {
            events.working(format!("step {i}")).await?;
            let chunk = Artifact::text("out", format!("{i};")).with_id("a-1");
            events.artifact_chunk(chunk, i > 1, i == 3).await?;
        }
        events.complete(Some(Message::agent_text("done"))).await
    }
}

fn fast_push() -> PushSettings {
    PushSettings::default()
        .allow("127.0.0.1")
        .unwrap()
        .backoff(Duration::from_millis(20), Duration::from_millis(50))
        .max_attempts(10_000)
}

/// A webhook receiver that answers 503 until `accept` is set; the sequence numbers of what it
/// accepted, and how many posts it refused.
#[derive(Clone, Default)]
struct Receiver {
    accept: Arc<AtomicBool>,
    refused: Arc<AtomicUsize>,
    accepted: Arc<Mutex<Vec<u64>>>,
}

impl Receiver {
    async fn start(accept: bool) -> (Self, String) {
        let r = Self::default();
        r.accept.store(accept, Ordering::SeqCst);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let state = r.clone();
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: HeaderMap| {
                let state = state.clone();
                async move {
                    if !state.accept.load(Ordering::SeqCst) {
                        state.refused.fetch_add(1, Ordering::SeqCst);
                        return StatusCode::SERVICE_UNAVAILABLE;
                    }
                    let id = headers["a2a-notification-id"].to_str().unwrap();
                    let seq = id.rsplit(':').next().unwrap().parse().unwrap();
                    state.accepted.lock().unwrap().push(seq);
                    StatusCode::OK
                }
            }),
        );
        tokio::spawn(async move { axum::serve(listener, app).await });
        (r, url)
    }

    async fn wait_for(&self, n: usize) -> Vec<u64> {
        timeout(WAIT, async {
            loop {
                let got = self.accepted.lock().unwrap().clone();
                if got.len() >= n {
                    return got;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
        .unwrap_or_else(|_| panic!("{n} deliveries expected: {:?}", self.accepted))
    }
}

fn send(id: &str, text: &str, push: Option<serde_json::Value>) -> SendMessageRequest {
    send_to(None, id, text, push)
}

/// A message to `task` (a continuation), or a new task's first.
fn send_to(
    task: Option<&TaskId>,
    id: &str,
    text: &str,
    push: Option<serde_json::Value>,
) -> SendMessageRequest {
    let mut req = json!({
        "message": {"messageId": id, "role": "ROLE_USER", "parts": [{"text": text}]}
    });
    if let Some(task) = task {
        req["message"]["taskId"] = json!(task);
    }
    if let Some(p) = push {
        req["configuration"] = json!({"taskPushNotificationConfig": p});
    }
    serde_json::from_value(req).unwrap()
}

fn task_of(r: impl Into<SendMessageResponse>) -> Task {
    match r.into() {
        SendMessageResponse::Task(t) => t,
        SendMessageResponse::Message(m) => panic!("a task, not {m:?}"),
    }
}

fn list_request(task: &TaskId) -> ListTaskPushNotificationConfigsRequest {
    serde_json::from_value(json!({"taskId": task})).unwrap()
}

fn config(task: &TaskId, id: &str, url: &str) -> TaskPushNotificationConfig {
    serde_json::from_value(json!({"taskId": task, "id": id, "url": url})).unwrap()
}

/// How the next process, with no HTTP server, gets its pending deliveries going.
enum Restart {
    /// Its upkeep runs (as `Server::serve` does, or a user who mounts the router spawns).
    Upkeep,
    /// Nothing runs in the background (the router is built, the upkeep is not spawned) until a
    /// first request comes.
    FirstRequest,
}

#[tokio::test]
async fn a_clean_shutdown_leaves_pending_deliveries_for_the_next_process() {
    pending_deliveries_survive_a_clean_shutdown(Restart::Upkeep).await;
}

#[tokio::test]
async fn without_the_upkeep_the_first_request_resumes_pending_deliveries() {
    pending_deliveries_survive_a_clean_shutdown(Restart::FirstRequest).await;
}

async fn pending_deliveries_survive_a_clean_shutdown(restart: Restart) {
    let dir = tempfile::tempdir().unwrap();
    let (receiver, hook) = Receiver::start(false).await;
    let first = Server::builder(Steps)
        .task_store(SledStore::open(dir.path()).unwrap())
        .push_notifications(fast_push())
        .build()
        .unwrap();
    let h = first.handler();
    let cx = CallContext::default();
    let task = task_of(
        h.send_message(&cx, send("m1", "go", Some(json!({"url": hook}))))
            .await
            .unwrap(),
    );
    // Deliveries are being retried; then the server shuts down cleanly.
    timeout(WAIT, async {
        while receiver.refused.load(Ordering::SeqCst) < 3 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap();
    first.shutdown_token().cancel();
    // (The worker stops at once; give a dead letter, if one were written, time to be.)
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        h.dead_letters(&task.id).await.unwrap().is_empty(),
        "a shutdown is no reason to give up on a webhook"
    );
    first.flush().await.unwrap();
    drop((h, first));

    // The next process, on the same data, delivers everything to the receiver now up.
    receiver.accept.store(true, Ordering::SeqCst);
    let second = Server::builder(Steps)
        .task_store(SledStore::open(dir.path()).unwrap())
        .push_notifications(fast_push())
        .build()
        .unwrap();
    let h = second.handler();
    let stop = second.shutdown_token();
    match restart {
        Restart::Upkeep => drop(tokio::spawn(second.upkeep())),
        Restart::FirstRequest => {
            let _router = second.into_router();
            tokio::time::sleep(Duration::from_millis(300)).await;
            assert!(
                receiver.accepted.lock().unwrap().is_empty(),
                "building the router starts nothing"
            );
            let got = h.get_task(&cx, GetTaskRequest::new(task.id.clone())).await;
            assert_eq!(got.unwrap().id, task.id);
        }
    }
    assert_eq!(receiver.wait_for(7).await, (1..=7).collect::<Vec<_>>());
    assert!(h.dead_letters(&task.id).await.unwrap().is_empty());
    stop.cancel();
}

#[tokio::test]
async fn a_task_has_at_most_the_configured_number_of_webhooks_and_updates_do_not_count() {
    let server = Server::builder(Steps)
        .push_notifications(fast_push().max_configs_per_task(3))
        .build()
        .unwrap();
    let h = server.handler();
    let cx = CallContext::default();
    let task = task_of(h.send_message(&cx, send("m1", "ask", None)).await.unwrap());
    let url = "http://127.0.0.1:9/hook";
    for id in ["a", "b", "c"] {
        h.create_push_config(&cx, config(&task.id, id, url))
            .await
            .unwrap();
    }
    let err = h
        .create_push_config(&cx, config(&task.id, "d", url))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::InvalidParams), "{err:?}");
    assert!(
        err.message.contains("3 push notification configs"),
        "{err:?}"
    );
    // Re-registering an existing id replaces it: allowed, and still three.
    let other = "http://127.0.0.1:10/hook";
    h.create_push_config(&cx, config(&task.id, "b", other))
        .await
        .unwrap();
    let list = h
        .list_push_configs(&cx, list_request(&task.id))
        .await
        .unwrap();
    assert_eq!(list.configs.len(), 3);
    assert_eq!(list.configs[1].url, other);
    // The limit counts per task, and inline registrations too.
    let err = h
        .send_message(
            &cx,
            send_to(Some(&task.id), "m2", "x", Some(json!({"url": url}))),
        )
        .await
        .unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::InvalidParams), "{err:?}");
    let task2 = task_of(h.send_message(&cx, send("m3", "ask", None)).await.unwrap());
    h.create_push_config(&cx, config(&task2.id, "d", url))
        .await
        .unwrap();
}

#[tokio::test]
async fn the_default_limit_is_a_hundred_webhooks_per_task() {
    assert_eq!(DEFAULT_MAX_CONFIGS_PER_TASK, 100);
    let server = Server::builder(Steps)
        .push_notifications(PushSettings::default())
        .build()
        .unwrap();
    let h = server.handler();
    let cx = CallContext::default();
    let task = task_of(h.send_message(&cx, send("m1", "ask", None)).await.unwrap());
    let url = "https://hooks.example.com/a2a";
    for i in 0..100 {
        h.create_push_config(&cx, config(&task.id, &format!("c{i}"), url))
            .await
            .unwrap();
    }
    let err = h
        .create_push_config(&cx, config(&task.id, "c100", url))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::InvalidParams));
    h.create_push_config(&cx, config(&task.id, "c7", url))
        .await
        .unwrap();
}

/// Counts the webhook registrations a store reads.
#[derive(Default)]
struct Counting {
    records_read: AtomicUsize,
}

impl observed::Hooks for Counting {
    fn read_records(&self, n: usize) {
        self.records_read.fetch_add(n, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn registering_a_webhook_costs_the_same_however_many_the_task_has() {
    let store = Arc::new(observed::Observed::new(Counting::default()));
    let server = Server::builder(Steps)
        .task_store_arc(store.clone())
        .push_notifications(fast_push().max_configs_per_task(1000))
        .build()
        .unwrap();
    let h = server.handler();
    let cx = CallContext::default();
    let task = task_of(h.send_message(&cx, send("m1", "ask", None)).await.unwrap());
    let (_receiver, url) = Receiver::start(true).await;
    let before = store.hooks.records_read.load(Ordering::SeqCst);
    let n = 200;
    for i in 0..n {
        h.create_push_config(&cx, config(&task.id, &format!("c{i}"), &url))
            .await
            .unwrap();
    }
    // Let the workers look at their registrations (they have nothing to deliver yet).
    tokio::time::sleep(Duration::from_millis(200)).await;
    let read = store.hooks.records_read.load(Ordering::SeqCst) - before;
    // Each registration reads its own record (the limit check, its worker's first look), not
    // the task's others: linear in all, where reading them all each time is quadratic.
    assert!(
        read <= 4 * n,
        "{read} registration records read for {n} registrations"
    );
    // They all still get the task's next events.
    let (receiver, url2) = Receiver::start(true).await;
    h.create_push_config(&cx, config(&task.id, "last", &url2))
        .await
        .unwrap();
    h.send_message(&cx, send_to(Some(&task.id), "m2", "this one", None))
        .await
        .unwrap();
    assert_eq!(receiver.wait_for(8).await.len(), 8);
}

#[tokio::test]
async fn a_retried_send_registers_its_push_config_on_the_task_it_gets_back() {
    let (receiver, hook) = Receiver::start(true).await;
    let server = Server::builder(Steps)
        .push_notifications(fast_push())
        .build()
        .unwrap();
    let h = server.handler();
    let cx = CallContext::default();
    // Sent without a webhook; the retry (same message) carries one.
    let first = task_of(h.send_message(&cx, send("m1", "go", None)).await.unwrap());
    let again = task_of(
        h.send_message(&cx, send("m1", "go", Some(json!({"url": hook}))))
            .await
            .unwrap(),
    );
    assert_eq!(again.id, first.id, "the earlier task");
    // Every event of the task, from its first.
    assert_eq!(receiver.wait_for(7).await, (1..=7).collect::<Vec<_>>());
    let configs = |h: Arc<a2a_server::RequestHandler>, task: TaskId| async move {
        h.list_push_configs(&CallContext::default(), list_request(&task))
            .await
            .unwrap()
            .configs
    };
    assert_eq!(configs(h.clone(), first.id.clone()).await.len(), 1);
    // Retried again with the same config (no id): the first retry's registration, not another.
    h.send_message(&cx, send("m1", "go", Some(json!({"url": hook}))))
        .await
        .unwrap();
    assert_eq!(configs(h.clone(), first.id.clone()).await.len(), 1);
    // With an id: registered once, however often the send is retried.
    for _ in 0..2 {
        h.send_message(
            &cx,
            send("m1", "go", Some(json!({"id": "mine", "url": hook}))),
        )
        .await
        .unwrap();
    }
    assert_eq!(configs(h.clone(), first.id.clone()).await.len(), 2);
    assert_eq!(receiver.wait_for(14).await.len(), 14);
    // The same checks as a first send: a refused URL is an error, not a silent success.
    let err = h
        .send_message(
            &cx,
            send("m1", "go", Some(json!({"url": "http://10.0.0.1/hook"}))),
        )
        .await
        .unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::InvalidParams));

    // A retried continuation, likewise.
    let (receiver, hook) = Receiver::start(true).await;
    let asked = task_of(h.send_message(&cx, send("m2", "ask", None)).await.unwrap());
    let again = task_of(
        h.send_message(&cx, send_to(Some(&asked.id), "m3", "ask", None))
            .await
            .unwrap(),
    );
    assert_eq!(again.status.state, a2a_core::TaskState::InputRequired);
    h.send_message(
        &cx,
        send_to(Some(&asked.id), "m3", "ask", Some(json!({"url": hook}))),
    )
    .await
    .unwrap();
    let seqs = receiver.wait_for(1).await;
    assert_eq!(seqs[0], 1, "from the task's first event");
    assert_eq!(configs(h.clone(), asked.id.clone()).await.len(), 1);
}

fn record(task: &str, id: &str, url: &str) -> PushRecord {
    PushRecord {
        config: config(&TaskId::from(task), id, url),
        v03: false,
        generations: false,
        delivered: 0,
        dead_letter: None,
    }
}

#[tokio::test]
async fn sled_finds_registrations_by_id_including_those_stored_before_its_id_index() {
    let dir = tempfile::tempdir().unwrap();
    {
        // A registration as stored before the id index existed: only in `push_configs`,
        // keyed by task, creation stamp and id.
        let db = sled::open(dir.path()).unwrap();
        let tree = db.open_tree("push_configs").unwrap();
        let mut key = 3u16.to_be_bytes().to_vec();
        key.extend_from_slice(b"t-1");
        key.extend_from_slice(&1u64.to_be_bytes());
        key.extend_from_slice(b"old");
        let value = serde_json::to_vec(&record("t-1", "old", "https://h.example.com/1")).unwrap();
        tree.insert(key, value).unwrap();
        db.flush().unwrap();
    }
    let store = SledStore::open(dir.path()).unwrap();
    let t = TaskId::from("t-1");
    let old = store
        .push_config(&t, "old")
        .await
        .unwrap()
        .expect("indexed when opened");
    assert_eq!(old.config.url, "https://h.example.com/1");
    // Replacing it keeps one record in its place; new ones come after, in order.
    store
        .put_push_config(record("t-1", "old", "https://h.example.com/2"))
        .await
        .unwrap();
    store
        .put_push_config(record("t-1", "new", "https://h.example.com/3"))
        .await
        .unwrap();
    store
        .put_push_config(record("t-10", "old", "https://h.example.com/4"))
        .await
        .unwrap();
    assert_eq!(store.push_config_count(&t).await.unwrap(), 2);
    let urls: Vec<String> = store
        .push_configs(&t)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.config.url)
        .collect();
    assert_eq!(urls, ["https://h.example.com/2", "https://h.example.com/3"]);
    assert!(store.delete_push_config(&t, "old").await.unwrap());
    assert!(!store.delete_push_config(&t, "old").await.unwrap());
    assert!(store.push_config(&t, "old").await.unwrap().is_none());
    assert_eq!(store.push_config_count(&t).await.unwrap(), 1);
    // Counts kept up to date: a new one counts, a replacement does not.
    for url in ["https://h.example.com/5", "https://h.example.com/6"] {
        store
            .put_push_config(record("t-1", "third", url))
            .await
            .unwrap();
    }
    assert_eq!(store.push_config_count(&t).await.unwrap(), 2);
    assert!(store.delete_push_config(&t, "third").await.unwrap());
    assert_eq!(store.push_config_count(&t).await.unwrap(), 1);
    let other = TaskId::from("t-10");
    assert_eq!(store.push_config_count(&other).await.unwrap(), 1);
    store.sync().await.unwrap();
    drop(store);
    // Reopened: the same.
    let store = SledStore::open(dir.path()).unwrap();
    assert!(store.push_config(&t, "new").await.unwrap().is_some());
    assert!(store.push_config(&t, "old").await.unwrap().is_none());
    assert_eq!(store.push_config_count(&t).await.unwrap(), 1);
}
