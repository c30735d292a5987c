//! What a client is shown has been flushed: a change the engine has written but whose flush
//! has not finished is not sent on a stream, nor answered by `GetTask` or `ListTasks`, even
//! though the store's reads already see it.

use a2a_core::{
    Error, GetTaskRequest, ListTasksRequest, SendMessageRequest, StreamResponse, Task, TaskId,
    TaskState,
};
use a2a_server::store::{ListPage, ListQuery, LoggedEvent, PushRecord};
use a2a_server::{
    Agent, CallContext, ClaimStore, MemoryStore, MessageClaim, PushStore, RequestContext, Scope,
    Server, StoreError, StoredTask, TaskEvents, TaskStore,
};
use futures::StreamExt as _;
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Notify, watch};
use tokio::time::timeout;

const WAIT: Duration = Duration::from_secs(20);
/// How long a read is given to (wrongly) answer while a flush is held.
const HELD: Duration = Duration::from_millis(300);

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

/// A memory store whose flush (`sync`) can be held: it records each task's written version,
/// and makes it durable when a flush completes.
struct Gated {
    inner: MemoryStore,
    written: Mutex<HashMap<TaskId, u64>>,
    durable: Mutex<HashMap<TaskId, u64>>,
    /// `true` while flushes are held.
    held: watch::Sender<bool>,
    /// Signalled at every write.
    wrote: Notify,
}

impl Gated {
    fn new() -> Self {
        Self {
            inner: MemoryStore::new(),
            written: Mutex::default(),
            durable: Mutex::default(),
            held: watch::channel(false).0,
            wrote: Notify::new(),
        }
    }

    fn noted(&self, stored: &StoredTask) {
        let id = stored.task.id.clone();
        self.written.lock().unwrap().insert(id, stored.version);
        self.wrote.notify_waiters();
    }

    fn durable(&self, id: &TaskId) -> u64 {
        self.durable.lock().unwrap().get(id).copied().unwrap_or(0)
    }

    fn written(&self, id: &TaskId) -> u64 {
        self.written.lock().unwrap().get(id).copied().unwrap_or(0)
    }
}

#[async_trait::async_trait]
impl TaskStore for Gated {
    async fn get(&self, id: &TaskId) -> Result<Option<StoredTask>, StoreError> {
        self.inner.get(id).await
    }
    async fn create(&self, task: Arc<Task>, scope: Scope) -> Result<StoredTask, StoreError> {
        let stored = self.inner.create(task, scope).await?;
        self.noted(&stored);
        Ok(stored)
    }
    async fn update(
        &self,
        task: Arc<Task>,
        expected_version: u64,
        event: &StreamResponse,
    ) -> Result<StoredTask, StoreError> {
        let stored = self.inner.update(task, expected_version, event).await?;
        self.noted(&stored);
        Ok(stored)
    }
    async fn events(
        &self,
        id: &TaskId,
        after: u64,
        limit: usize,
    ) -> Result<Vec<LoggedEvent>, StoreError> {
        self.inner.events(id, after, limit).await
    }
    async fn delete(&self, id: &TaskId) -> Result<bool, StoreError> {
        self.inner.delete(id).await
    }
    async fn terminal_before(
        &self,
        before: a2a_core::Timestamp,
        limit: usize,
    ) -> Result<Vec<TaskId>, StoreError> {
        self.inner.terminal_before(before, limit).await
    }
    async fn list(&self, query: &ListQuery) -> Result<ListPage, StoreError> {
        self.inner.list(query).await
    }
    async fn tasks_in_states(
        &self,
        states: &[TaskState],
        after: Option<&TaskId>,
        limit: usize,
    ) -> Result<Vec<StoredTask>, StoreError> {
        self.inner.tasks_in_states(states, after, limit).await
    }
    async fn sync(&self) -> Result<(), StoreError> {
        let written = self.written.lock().unwrap().clone();
        let mut held = self.held.subscribe();
        held.wait_for(|h| !*h).await.unwrap();
        self.durable.lock().unwrap().extend(written);
        Ok(())
    }
}

#[async_trait::async_trait]
impl ClaimStore for Gated {
    async fn claim_message(
        &self,
        key: &str,
        claim: MessageClaim,
    ) -> Result<Option<MessageClaim>, StoreError> {
        self.inner.claim_message(key, claim).await
    }
    async fn update_claim(&self, key: &str, claim: MessageClaim) -> Result<(), StoreError> {
        self.inner.update_claim(key, claim).await
    }
    async fn release_claim(&self, key: &str) -> Result<(), StoreError> {
        self.inner.release_claim(key).await
    }
    async fn expire_claims(&self, before_ms: i64) -> Result<usize, StoreError> {
        self.inner.expire_claims(before_ms).await
    }
}

#[async_trait::async_trait]
impl PushStore for Gated {
    async fn put_push_config(&self, record: PushRecord) -> Result<(), StoreError> {
        self.inner.put_push_config(record).await
    }
    async fn push_configs(&self, task: &TaskId) -> Result<Vec<PushRecord>, StoreError> {
        self.inner.push_configs(task).await
    }
    async fn delete_push_config(&self, task: &TaskId, id: &str) -> Result<bool, StoreError> {
        self.inner.delete_push_config(task, id).await
    }
    async fn tasks_with_push_configs(
        &self,
        after: Option<&TaskId>,
        limit: usize,
    ) -> Result<Vec<TaskId>, StoreError> {
        self.inner.tasks_with_push_configs(after, limit).await
    }
    async fn advance_delivery(
        &self,
        record: &PushRecord,
        expected: u64,
    ) -> Result<bool, StoreError> {
        self.inner.advance_delivery(record, expected).await
    }
    async fn acquire_delivery(
        &self,
        task: &TaskId,
        id: &str,
        owner: &str,
        ttl: Duration,
    ) -> Result<bool, StoreError> {
        self.inner.acquire_delivery(task, id, owner, ttl).await
    }
    async fn release_delivery(
        &self,
        task: &TaskId,
        id: &str,
        owner: &str,
    ) -> Result<(), StoreError> {
        self.inner.release_delivery(task, id, owner).await
    }
}

/// The agent's completion is written while flushes are held: the stream, `GetTask` and
/// `ListTasks` show it only once its flush has completed.
#[tokio::test]
async fn a_change_is_shown_only_once_its_flush_completed() {
    let store = Arc::new(Gated::new());
    let go = Arc::new(Notify::new());
    let server = Server::builder(TwoSteps { go: go.clone() })
        .task_store_arc(store.clone())
        .build()
        .unwrap();
    let h = server.handler();
    let cx = CallContext::default();
    let req: SendMessageRequest = serde_json::from_value(json!({
        "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    }))
    .unwrap();
    // The stream opens on the task's first event, flushed.
    let mut stream = timeout(WAIT, h.send_streaming_message(&cx, req))
        .await
        .unwrap()
        .unwrap();
    let id = {
        let written = store.written.lock().unwrap();
        written.keys().next().cloned().expect("a task")
    };
    // The completion is written, its flush held.
    store.held.send_replace(true);
    let wrote = store.wrote.notified();
    go.notify_one();
    timeout(WAIT, wrote).await.unwrap();
    assert_eq!(store.written(&id), 2);
    assert_eq!(store.durable(&id), 1);

    // Every event the stream shows was durable when shown; while the flush is held, the
    // completion does not come.
    let mut seen = Vec::new();
    loop {
        let next = match timeout(HELD, stream.next()).await {
            Ok(next) => next,
            Err(_) if *store.held.borrow() => {
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
                store.held.send_replace(false);
                continue;
            }
            Err(_) => panic!("the stream stalled with flushes let through"),
        };
        let Some(event) = next else { break };
        assert!(
            event.seq <= store.durable(&id),
            "event {} shown with only {} durable",
            event.seq,
            store.durable(&id)
        );
        seen.push(event.seq);
    }
    assert_eq!(
        seen.last(),
        Some(&2),
        "the stream ends with the completion: {seen:?}"
    );
    assert!(
        !*store.held.borrow(),
        "the completion came only once let through"
    );
    let get: GetTaskRequest = serde_json::from_value(json!({"id": id})).unwrap();
    let task = h.get_task(&cx, get).await.unwrap();
    assert_eq!(task.status.state, TaskState::Completed);
}
