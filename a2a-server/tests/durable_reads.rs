//! What a client is shown has been flushed: a change the engine has written but whose flush
//! has not finished is not sent on a stream, nor answered by `GetTask` or `ListTasks`, even
//! though the store's reads already see it.

mod observed;

use a2a_core::{Error, GetTaskRequest, ListTasksRequest, SendMessageRequest, TaskId, TaskState};
use a2a_server::{
    Agent, CallContext, EventStream, RequestContext, RequestHandler, SendReply, Server, StoreError,
    StoredTask, TaskEvents,
};
use futures::StreamExt as _;
use serde_json::json;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Notify, watch};
use tokio::time::timeout;

const WAIT: Duration = Duration::from_secs(20);
/// How long a read is given to (wrongly) answer while a flush is held.
const HELD: Duration = Duration::from_millis(300);

/// Sends "hi" (message id `message_id`) as a streaming message: the stream, once the agent's
/// first event has opened it.
async fn stream_hi(h: &RequestHandler, message_id: &str) -> EventStream {
    let req: SendMessageRequest = serde_json::from_value(json!({
        "message": {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    }))
    .unwrap();
    timeout(WAIT, h.send_streaming_message(&CallContext::default(), req))
        .await
        .unwrap()
        .unwrap()
}

/// Works, then waits for the test's go before completing.
struct TwoSteps {
    go: Arc<Notify>,
}

impl Agent for TwoSteps {
    async fn execute(&self, _cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        events.working("first").await?;
        self.go.notified().await;
        events.complete(None).await
    }
}

/// A store's flush (`sync`) that can be held: each task's written version, made durable when
/// a flush completes.
struct Gated {
    written: Mutex<HashMap<TaskId, u64>>,
    durable: Mutex<HashMap<TaskId, u64>>,
    /// `true` while flushes are held.
    held: watch::Sender<bool>,
    /// Signalled at every write.
    wrote: Notify,
    /// Set to fail the next flush, as a disk might.
    fail_next: AtomicBool,
}

impl Gated {
    fn new() -> Self {
        Self {
            written: Mutex::default(),
            durable: Mutex::default(),
            held: watch::channel(false).0,
            wrote: Notify::new(),
            fail_next: AtomicBool::new(false),
        }
    }

    fn durable(&self, id: &TaskId) -> u64 {
        self.durable.lock().unwrap().get(id).copied().unwrap_or(0)
    }

    fn written(&self, id: &TaskId) -> u64 {
        self.written.lock().unwrap().get(id).copied().unwrap_or(0)
    }
}

impl observed::Hooks for Gated {
    fn wrote(&self, stored: &StoredTask) {
        let id = stored.task.id.clone();
        self.written.lock().unwrap().insert(id, stored.version);
        self.wrote.notify_waiters();
    }

    async fn sync(&self) -> Result<(), StoreError> {
        let written = self.written.lock().unwrap().clone();
        let mut held = self.held.subscribe();
        held.wait_for(|h| !*h).await.unwrap();
        if self.fail_next.swap(false, Ordering::SeqCst) {
            return Err(StoreError::Backend("the disk failed".into()));
        }
        self.durable.lock().unwrap().extend(written);
        Ok(())
    }

    /// As sled: a write is durable once a later flush completes.
    fn flushes(&self) -> bool {
        true
    }
}

/// The agent's completion is written while flushes are held: the stream, `GetTask` and
/// `ListTasks` show it only once its flush has completed.
#[tokio::test]
async fn a_change_is_shown_only_once_its_flush_completed() {
    let store = Arc::new(observed::Observed::new(Gated::new()));
    let gate = &store.hooks;
    let go = Arc::new(Notify::new());
    let server = Server::builder(TwoSteps { go: go.clone() })
        .task_store_arc(store.clone())
        .build()
        .unwrap();
    let h = server.handler();
    let cx = CallContext::default();
    // The stream opens on the task's first event, flushed.
    let mut stream = stream_hi(&h, "m1").await;
    let id = {
        let written = gate.written.lock().unwrap();
        written.keys().next().cloned().expect("a task")
    };
    // The completion is written, its flush held.
    gate.held.send_replace(true);
    let wrote = gate.wrote.notified();
    go.notify_one();
    timeout(WAIT, wrote).await.unwrap();
    assert_eq!(gate.written(&id), 2);
    assert_eq!(gate.durable(&id), 1);

    // Every event the stream shows was durable when shown; while the flush is held, the
    // completion does not come.
    let mut seen = Vec::new();
    loop {
        let next = match timeout(HELD, stream.next()).await {
            Ok(next) => next,
            Err(_) if *gate.held.borrow() => {
                // Nothing more while held: GetTask and ListTasks do not answer the
                // completion either, then the flush is let through.
                let get: GetTaskRequest = serde_json::from_value(json!({"id": id})).unwrap();
                if let Ok(answer) = timeout(HELD, h.get_task(&cx, get.clone())).await {
                    let task = answer.unwrap();
                    assert_ne!(
                        task.status.state,
                        TaskState::Completed,
                        "shown before durable"
                    );
                }
                let list = ListTasksRequest::default();
                if let Ok(answer) = timeout(HELD, h.list_tasks(&cx, list)).await {
                    for task in answer.unwrap().tasks {
                        assert_ne!(
                            task.status.state,
                            TaskState::Completed,
                            "listed before durable"
                        );
                    }
                }
                gate.held.send_replace(false);
                continue;
            }
            Err(_) => panic!("the stream stalled with flushes let through"),
        };
        let Some(event) = next else { break };
        assert!(
            event.seq <= gate.durable(&id),
            "event {} shown with only {} durable",
            event.seq,
            gate.durable(&id)
        );
        seen.push(event.seq);
    }
    assert_eq!(
        seen.last(),
        Some(&2),
        "the stream ends with the completion: {seen:?}"
    );
    assert!(
        !*gate.held.borrow(),
        "the completion came only once let through"
    );
    let get: GetTaskRequest = serde_json::from_value(json!({"id": id})).unwrap();
    let task = h.get_task(&cx, get).await.unwrap();
    assert_eq!(task.status.state, TaskState::Completed);
}

/// Reports three changes in a row, then says it returned.
struct ThreeInARow {
    returned: Arc<Notify>,
}

impl Agent for ThreeInARow {
    async fn execute(&self, _cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        events.working("one").await?;
        events.working("two").await?;
        events.complete(None).await?;
        self.returned.notify_one();
        Ok(())
    }
}

/// On a store whose writes wait for a flush, the agent does not wait for the disk: its first
/// changes are only queued (write-behind until the first reveal) and it goes on. Its completion
/// ends the blocking wait, so it reveals them: the three are written, and the completion
/// returns once their flush completed. The client is answered only then, with the task as
/// flushed.
#[tokio::test]
async fn an_agent_goes_on_while_its_changes_wait_for_their_flush() {
    let store = Arc::new(observed::Observed::new(Gated::new()));
    let gate = &store.hooks;
    let returned = Arc::new(Notify::new());
    let server = Server::builder(ThreeInARow {
        returned: returned.clone(),
    })
    .task_store_arc(store.clone())
    .build()
    .unwrap();
    let h = server.handler();
    gate.held.send_replace(true);
    let req: SendMessageRequest = serde_json::from_value(json!({
        "message": {"messageId": "m4", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    }))
    .unwrap();
    let send = tokio::spawn(async move { h.send_message(&CallContext::default(), req).await });
    let id = timeout(WAIT, async {
        loop {
            // Taken before the look: `notify_waiters` reaches it from its creation on.
            let wrote = gate.wrote.notified();
            let written = gate.written.lock().unwrap().clone();
            if let Some((id, 3)) = written.into_iter().next() {
                return id;
            }
            wrote.await;
        }
    })
    .await
    .expect("the three changes are written while the flush is held");
    assert_eq!(gate.durable(&id), 0, "none of them flushed yet");
    assert!(
        timeout(HELD, returned.notified()).await.is_err(),
        "the completion returned before its flush"
    );
    assert!(!send.is_finished(), "answered before the flush completed");
    gate.held.send_replace(false);
    timeout(WAIT, returned.notified())
        .await
        .expect("the agent returns once the flush completed");
    let answer = timeout(WAIT, send).await.unwrap().unwrap().unwrap();
    let SendReply::Task(task) = answer else {
        panic!("a task");
    };
    assert_eq!(task.shared().status.state, TaskState::Completed);
    assert_eq!(gate.durable(&id), 3);
}

/// A flush that fails shows nothing: the changes it would have covered wait for the next
/// flush, which publishes them, and the client is never answered with a change before a flush
/// covering it succeeded.
#[tokio::test]
async fn a_failed_flush_shows_nothing_and_a_later_one_publishes() {
    let store = Arc::new(observed::Observed::new(Gated::new()));
    let gate = &store.hooks;
    let server = Server::builder(ThreeInARow {
        returned: Arc::new(Notify::new()),
    })
    .task_store_arc(store.clone())
    .build()
    .unwrap();
    let h = server.handler();
    let cx = CallContext::default();
    gate.fail_next.store(true, Ordering::SeqCst);
    let req: SendMessageRequest = serde_json::from_value(json!({
        "message": {"messageId": "m5", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    }))
    .unwrap();
    let answer = timeout(WAIT, h.send_message(&cx, req)).await.unwrap();
    let durable_then = {
        let written = gate.written.lock().unwrap();
        let id = written.keys().next().cloned().expect("a task");
        (id.clone(), gate.durable(&id))
    };
    let (id, durable) = durable_then;
    assert!(
        !gate.fail_next.load(Ordering::SeqCst),
        "a flush was tried, and failed"
    );
    // Whichever flush failed (the background one or the wrap-up's), the answer is an error
    // that says so, or a task no newer than what was durable when it was given.
    if let Err(e) = &answer {
        assert!(e.message.contains("could not be made durable"), "{e:?}");
    }
    if let Ok(SendReply::Task(task)) = &answer {
        let version = match task.shared().status.state {
            TaskState::Completed => 3,
            _ => match task.shared().status.message.as_ref().map(|m| m.text()) {
                Some(text) if text == "two" => 2,
                _ => 1,
            },
        };
        assert!(
            version <= durable,
            "answered version {version} with {durable} durable"
        );
    }
    // A later flush publishes everything: the task is there, finished.
    let get: GetTaskRequest = serde_json::from_value(json!({"id": id})).unwrap();
    let task = timeout(WAIT, h.get_task(&cx, get)).await.unwrap().unwrap();
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(gate.durable(&id), 3);
}

/// Counts log reads.
#[derive(Default)]
struct LogReads(std::sync::atomic::AtomicUsize);

impl observed::Hooks for LogReads {
    fn read_log(&self, _id: &TaskId) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// A new stream starts with the task's first event as published (flushed already), and
/// follows the broadcast: it reads the log only to catch up, which a reader keeping up never
/// needs. Reading it back would cost a store read and, on sled, a wait for the flush of
/// whatever the agent wrote meanwhile.
#[tokio::test]
async fn a_new_stream_starts_from_the_published_event_without_reading_the_log() {
    let store = Arc::new(observed::Observed::new(LogReads::default()));
    let go = Arc::new(Notify::new());
    let server = Server::builder(TwoSteps { go: go.clone() })
        .task_store_arc(store.clone())
        .build()
        .unwrap();
    let mut stream = stream_hi(&server.handler(), "m2").await;
    let first = timeout(WAIT, stream.next()).await.unwrap().unwrap();
    assert_eq!(first.seq, 1);
    assert!(matches!(first.event, a2a_core::StreamResponse::Task(_)));
    go.notify_one();
    let rest: Vec<u64> = timeout(WAIT, stream.map(|e| e.seq).collect())
        .await
        .unwrap();
    assert_eq!(rest, [2]);
    assert_eq!(
        store.hooks.0.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "no log read"
    );
}

/// Asks for input, then keeps running until told.
struct AsksThenWaits {
    go: Arc<Notify>,
}

impl Agent for AsksThenWaits {
    async fn execute(&self, _cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        events.input_required("Which one?").await?;
        self.go.notified().await;
        Ok(())
    }
}

/// A task whose first event interrupts it (input required) is a stream of that one event,
/// even while its execution goes on.
#[tokio::test]
async fn a_stream_whose_first_event_asks_for_input_is_that_event_alone() {
    let go = Arc::new(Notify::new());
    let server = Server::builder(AsksThenWaits { go: go.clone() })
        .build()
        .unwrap();
    let stream = stream_hi(&server.handler(), "m3").await;
    let events: Vec<_> = timeout(WAIT, stream.collect::<Vec<_>>())
        .await
        .expect("the stream ends at the question, before the execution does");
    assert_eq!(events.len(), 1);
    assert_eq!(
        events[0].event.state(),
        Some(&TaskState::InputRequired),
        "{:?}",
        events[0].event
    );
    go.notify_one();
}
