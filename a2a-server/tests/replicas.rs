//! Two replicas in one process: two servers (engines) sharing one task store, one event bus and
//! one set of execution leases, as replicas of a deployment share a database. Whatever replica
//! a request lands on, it sees and controls the task the other one runs.

use a2a_core::{
    Artifact, CancelTaskRequest, Error, ErrorKind, GetTaskRequest, Message, SendMessageRequest,
    StreamResponse, SubscribeToTaskRequest, Task, TaskId, TaskState,
};
use a2a_server::{
    Agent, CallContext, EventBus, Leases, LocalBus, LocalLeases, MemoryStore, RequestContext,
    RequestHandler, Scope, SendReply, Server, Store, StreamEvent, TaskEvents,
};
use futures::StreamExt as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::{Notify, Semaphore};
use tokio::time::timeout;

const WAIT: Duration = Duration::from_secs(10);

/// What the agent of every replica shares with the test.
struct Probe {
    /// One permit per chunk the "chunks" job may write.
    gate: Semaphore,
    /// The "wait" job saw its cancellation.
    stopped: Notify,
    stops: AtomicUsize,
    /// The `resume` hook ran (on some replica).
    resumed: AtomicUsize,
}

/// "chunks": WORKING, five artifact chunks (one per permit), COMPLETED. "ask": INPUT_REQUIRED;
/// its continuation completes, quoting the answer. "wait": WORKING until canceled.
struct Worker(Arc<Probe>);

impl Agent for Worker {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        if cx.stored_task.is_some() {
            let answer = format!("got {}", cx.message.text());
            return events.complete(Some(Message::agent_text(answer))).await;
        }
        match cx.message.text().as_str() {
            "chunks" => {
                events.working("chunking").await?;
                for i in 0..5 {
                    self.0.gate.acquire().await.expect("gate").forget();
                    let chunk = Artifact::text("out", i.to_string()).with_id("out");
                    events.artifact_chunk(chunk, i > 0, i == 4).await?;
                }
                events.complete(None).await
            }
            "ask" => events.input_required("which one?").await,
            "idle" => {
                // Returns without finishing the task once the gate opens: the server fails it.
                events.working("idling").await?;
                self.0.gate.acquire().await.expect("gate").forget();
                Ok(())
            }
            "reply later" => {
                self.0.gate.acquire().await.expect("gate").forget();
                events.reply(Message::agent_text("here you are")).await
            }
            "wait" => {
                events.working("waiting").await?;
                cx.cancel.cancelled().await;
                self.0.stops.fetch_add(1, Ordering::SeqCst);
                self.0.stopped.notify_one();
                // A write after the cancel stored elsewhere fails cleanly.
                let late = events.artifact(Artifact::text("late", "too late")).await;
                assert!(late.is_err(), "a canceled task takes no more artifacts");
                Ok(())
            }
            other => events.fail(format!("unknown job {other}")).await,
        }
    }

    async fn cancel(&self, _cx: RequestContext, _events: TaskEvents) -> Result<(), Error> {
        Ok(())
    }

    async fn resume(&self, _cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        self.0.resumed.fetch_add(1, Ordering::SeqCst);
        events.complete(Some(Message::agent_text("resumed"))).await
    }
}

struct Cluster {
    store: Arc<MemoryStore>,
    bus: Arc<LocalBus>,
    leases: Arc<LocalLeases>,
    probe: Arc<Probe>,
}

impl Default for Probe {
    fn default() -> Self {
        Self {
            gate: Semaphore::new(0),
            stopped: Notify::new(),
            stops: AtomicUsize::new(0),
            resumed: AtomicUsize::new(0),
        }
    }
}

impl Cluster {
    fn new() -> Self {
        Self {
            store: Arc::new(MemoryStore::new()),
            bus: Arc::new(LocalBus::new()),
            leases: Arc::new(LocalLeases::new()),
            probe: Arc::new(Probe::default()),
        }
    }

    /// A replica named `name` on the shared store, bus and leases.
    fn replica(&self, name: &str, lease_ttl: Duration) -> Server {
        Server::builder(Worker(self.probe.clone()))
            .task_store_arc(self.store.clone() as Arc<dyn Store>)
            .event_bus(self.bus.clone() as Arc<dyn EventBus>)
            .leases(self.leases.clone() as Arc<dyn Leases>)
            .lease_ttl(lease_ttl)
            .replica_id(name)
            .build()
            .expect("server")
    }

    /// The handlers of two replicas, "a" and "b", with leases long enough never to expire in
    /// a test.
    fn pair(&self) -> (Arc<RequestHandler>, Arc<RequestHandler>) {
        let ttl = Duration::from_secs(30);
        let (a, b) = (self.replica("a", ttl), self.replica("b", ttl));
        (a.handler(), b.handler())
    }
}

fn cx() -> CallContext {
    CallContext::new(Scope::default(), Default::default())
}

async fn start(handler: &RequestHandler, job: &str) -> Task {
    let req = SendMessageRequest::new(Message::user_text(job)).with_return_immediately(true);
    match timeout(WAIT, handler.send_message(&cx(), req)).await {
        Ok(Ok(SendReply::Task(task))) => task.into_task(),
        other => panic!("starting {job}: {other:?}"),
    }
}

async fn state_of(handler: &RequestHandler, id: &TaskId) -> TaskState {
    let cx = cx();
    let task = handler.get_task(&cx, GetTaskRequest::new(id.clone()));
    timeout(WAIT, task)
        .await
        .expect("get")
        .expect("task")
        .status
        .state
        .clone()
}

/// Waits until the task (read through `handler`) reaches `state`.
async fn until_state(handler: &RequestHandler, id: &TaskId, state: TaskState) {
    let reached = async {
        while state_of(handler, id).await != state {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    timeout(WAIT, reached)
        .await
        .unwrap_or_else(|_| panic!("task {id} never reached {state}"));
}

fn seqs(events: &[StreamEvent]) -> Vec<u64> {
    events.iter().map(|e| e.seq).collect()
}

#[tokio::test]
async fn a_subscriber_on_b_follows_a_task_running_on_a_and_resumes_exactly() {
    let cluster = Cluster::new();
    let (a, b) = cluster.pair();
    let task = start(&a, "chunks").await;
    until_state(&b, &task.id, TaskState::Working).await;
    assert_eq!(cluster.leases.holder(&task.id).as_deref(), Some("a"));

    let stream = b
        .subscribe_to_task(&cx(), SubscribeToTaskRequest::new(task.id.clone()))
        .await
        .expect("subscribe on b");
    cluster.probe.gate.add_permits(5);
    let events: Vec<StreamEvent> = timeout(WAIT, stream.collect())
        .await
        .expect("the stream on b ends with the task");
    // The snapshot, then every later event exactly once, in order, up to COMPLETED.
    let first = events[0].seq;
    assert!(matches!(events[0].event, StreamResponse::Task(_)));
    let expected: Vec<u64> = (first..first + events.len() as u64).collect();
    assert_eq!(seqs(&events), expected, "gap-free and in order");
    assert_eq!(
        events.last().and_then(|e| e.event.state()),
        Some(&TaskState::Completed)
    );
    let chunks = events
        .iter()
        .filter(|e| matches!(e.event, StreamResponse::ArtifactUpdate(_)))
        .count();
    assert_eq!(chunks, 5, "every chunk came through");

    // A stream resumed on B after seq 3 gets exactly 4.. up to the end, from the log.
    let resumed = b
        .subscribe_to_task(
            &cx().with_last_event_id(Some(3)),
            SubscribeToTaskRequest::new(task.id.clone()),
        )
        .await
        .expect("resume on b");
    let resumed: Vec<StreamEvent> = timeout(WAIT, resumed.collect()).await.expect("ends");
    let end = events.last().expect("events").seq;
    assert_eq!(seqs(&resumed), (4..=end).collect::<Vec<_>>());
    // The whole log: creation (already WORKING), five chunks, COMPLETED.
    assert_eq!(end, 7);
}

#[tokio::test]
async fn a_stream_on_b_opened_before_the_chunks_sees_each_one_live() {
    let cluster = Cluster::new();
    let (a, b) = cluster.pair();
    let task = start(&a, "chunks").await;
    until_state(&b, &task.id, TaskState::Working).await;
    let mut stream = b
        .subscribe_to_task(&cx(), SubscribeToTaskRequest::new(task.id.clone()))
        .await
        .expect("subscribe on b");
    let snapshot = timeout(WAIT, stream.next()).await.expect("snapshot");
    let mut last = snapshot.expect("snapshot").seq;
    // One chunk at a time: each arrives on B before the next is allowed.
    for _ in 0..5 {
        cluster.probe.gate.add_permits(1);
        let e = timeout(WAIT, stream.next())
            .await
            .expect("the chunk reaches b")
            .expect("stream open");
        assert_eq!(e.seq, last + 1);
        assert!(matches!(e.event, StreamResponse::ArtifactUpdate(_)));
        last = e.seq;
    }
    let done = timeout(WAIT, stream.next())
        .await
        .expect("end")
        .expect("event");
    assert_eq!(done.event.state(), Some(&TaskState::Completed));
    assert!(
        timeout(WAIT, stream.next())
            .await
            .expect("closed")
            .is_none()
    );
}

#[tokio::test]
async fn cancel_on_b_stops_the_agent_on_a() {
    let cluster = Cluster::new();
    let (a, b) = cluster.pair();
    let task = start(&a, "wait").await;
    until_state(&a, &task.id, TaskState::Working).await;
    // A subscriber on A (where the task runs) must see the cancel stored by B.
    let on_a = a
        .subscribe_to_task(&cx(), SubscribeToTaskRequest::new(task.id.clone()))
        .await
        .expect("subscribe on a");

    let canceled = timeout(
        WAIT,
        b.cancel_task(&cx(), CancelTaskRequest::new(task.id.clone())),
    )
    .await
    .expect("cancel answers")
    .expect("cancel on b");
    assert_eq!(canceled.status.state, TaskState::Canceled);
    timeout(WAIT, cluster.probe.stopped.notified())
        .await
        .expect("the agent on a saw the cancel");
    assert_eq!(cluster.probe.stops.load(Ordering::SeqCst), 1);

    let events: Vec<StreamEvent> = timeout(WAIT, on_a.collect())
        .await
        .expect("a's stream ends");
    assert_eq!(
        events.last().and_then(|e| e.event.state()),
        Some(&TaskState::Canceled)
    );
    // A's wrap-up did not turn the canceled task into a failure; the late write was refused.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let task = a
        .get_task(&cx(), GetTaskRequest::new(task.id.clone()))
        .await
        .expect("task");
    assert_eq!(task.status.state, TaskState::Canceled);
    assert!(task.artifacts.is_empty());
}

#[tokio::test]
async fn get_task_on_a_shows_what_b_did() {
    let cluster = Cluster::new();
    let (a, b) = cluster.pair();
    let req = SendMessageRequest::new(Message::user_text("ask"));
    let SendReply::Task(task) = a.send_message(&cx(), req).await.expect("send on a") else {
        panic!("a task");
    };
    assert_eq!(task.status.state, TaskState::InputRequired);
    // Read on A once, so that A has seen the task as INPUT_REQUIRED.
    assert_eq!(state_of(&a, &task.id).await, TaskState::InputRequired);

    let answer = Message::user_text("the blue one").with_task_id(task.id.clone());
    let SendReply::Task(done) = b
        .send_message(&cx(), SendMessageRequest::new(answer))
        .await
        .expect("continue on b")
    else {
        panic!("a task");
    };
    assert_eq!(done.status.state, TaskState::Completed);
    let on_a = a
        .get_task(&cx(), GetTaskRequest::new(task.id.clone()))
        .await
        .expect("get on a");
    assert_eq!(on_a.status.state, TaskState::Completed);
    assert_eq!(
        on_a.status.message.as_deref().map(Message::text).as_deref(),
        Some("got the blue one")
    );
    assert_eq!(on_a, done, "A answers exactly what B stored");
}

#[tokio::test]
async fn a_retried_blocking_send_on_b_waits_for_the_task_on_a() {
    let cluster = Cluster::new();
    let (a, b) = cluster.pair();
    let message = Message::user_text("chunks");
    let req = SendMessageRequest::new(message.clone()).with_return_immediately(true);
    let SendReply::Task(task) = a.send_message(&cx(), req).await.expect("send on a") else {
        panic!("a task");
    };
    // The same message again, blocking, on B: it must wait for A's run, not answer WORKING.
    let retry = tokio::spawn({
        let b = b.clone();
        async move {
            b.send_message(&cx(), SendMessageRequest::new(message))
                .await
        }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!retry.is_finished(), "the retry waits while the task runs");
    cluster.probe.gate.add_permits(5);
    let answer = timeout(WAIT, retry)
        .await
        .expect("retry answers")
        .expect("join");
    let Ok(SendReply::Task(settled)) = answer else {
        panic!("a task: {answer:?}");
    };
    assert_eq!(settled.id, task.id, "the same task, not a second run");
    assert_eq!(settled.status.state, TaskState::Completed);
}

#[tokio::test]
async fn a_retried_send_on_b_gets_the_reply_the_agent_on_a_gave() {
    let cluster = Cluster::new();
    let (a, b) = cluster.pair();
    let message = Message::user_text("reply later");
    let first = tokio::spawn({
        let (a, message) = (a.clone(), message.clone());
        async move {
            a.send_message(&cx(), SendMessageRequest::new(message))
                .await
        }
    });
    // The retry reaches B while A's agent has not answered yet: no task will ever come.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let retry = tokio::spawn({
        let b = b.clone();
        async move {
            b.send_message(&cx(), SendMessageRequest::new(message))
                .await
        }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    cluster.probe.gate.add_permits(1);
    for answer in [first, retry] {
        let answer = timeout(WAIT, answer).await.expect("answers").expect("join");
        let Ok(SendReply::Message(m)) = answer else {
            panic!("the reply: {answer:?}");
        };
        assert_eq!(m.text(), "here you are");
    }
}

#[test]
fn b_leaves_a_leased_task_alone_and_takes_it_once_a_stops() {
    let cluster = Cluster::new();
    let ttl = Duration::from_millis(300);
    // A runs in a runtime of its own, which the test later shuts down: A dies without a word
    // (no wrap-up, no heartbeat), as a killed process would.
    let a_runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime a");
    let a = cluster.replica("a", ttl);
    let a_handler = a.handler();
    let task = a_runtime.block_on(async {
        tokio::spawn(a.upkeep());
        let task = start(&a_handler, "wait").await;
        until_state(&a_handler, &task.id, TaskState::Working).await;
        task
    });
    let b_runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime b");
    b_runtime.block_on(async {
        let b = cluster.replica("b", ttl);
        let b_handler = b.handler();
        // Start-up recovery on B, then several heartbeats of A later: A's task stays A's.
        assert_eq!(b_handler.recover().await.expect("recover"), 0);
        tokio::time::sleep(ttl * 2).await;
        assert_eq!(b_handler.claim_orphans().await.expect("claim"), 0);
        assert_eq!(cluster.leases.holder(&task.id).as_deref(), Some("a"));
        assert_eq!(cluster.probe.resumed.load(Ordering::SeqCst), 0);
        assert_eq!(state_of(&b_handler, &task.id).await, TaskState::Working);

        a_runtime.shutdown_background();
        // Once A's lease expires, B claims the task, exactly once.
        let claimed = async {
            loop {
                if b_handler.claim_orphans().await.expect("claim") == 1 {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        timeout(WAIT, claimed).await.expect("b claims the orphan");
        until_state(&b_handler, &task.id, TaskState::Completed).await;
        assert_eq!(cluster.probe.resumed.load(Ordering::SeqCst), 1);
        assert_eq!(b_handler.claim_orphans().await.expect("claim"), 0);
        let done = b_handler
            .get_task(&cx(), GetTaskRequest::new(task.id.clone()))
            .await
            .expect("task");
        assert_eq!(
            done.status.message.as_deref().map(Message::text).as_deref(),
            Some("resumed")
        );
    });
}

/// Leases that, the moment a replica takes the lease of `task`, first let "another replica"
/// finish it: the store says FAILED and nobody holds the lease, as after a survivor resumed
/// and finished the task between the recovery scan's page and its lease.
struct FinishedMeanwhile {
    inner: LocalLeases,
    store: Arc<MemoryStore>,
    task: TaskId,
}

#[async_trait::async_trait]
impl Leases for FinishedMeanwhile {
    async fn acquire(
        &self,
        task: &TaskId,
        owner: &str,
        ttl: Duration,
    ) -> Result<bool, a2a_server::StoreError> {
        use a2a_server::TaskStore as _;
        if *task == self.task {
            let stored = self.store.get(task).await?.expect("the task");
            let status = a2a_core::TaskStatus::new(TaskState::Failed);
            let event = StreamResponse::StatusUpdate(a2a_core::TaskStatusUpdateEvent {
                task_id: task.clone(),
                context_id: stored.task.context_id.clone(),
                status: status.clone(),
                metadata: None,
                generation: 0,
            });
            let mut done = Task::clone(&stored.task);
            done.status = status;
            self.store
                .update(Arc::new(done), stored.version, &event)
                .await?;
        }
        self.inner.acquire(task, owner, ttl).await
    }

    async fn take_over(
        &self,
        task: &TaskId,
        owner: &str,
        ttl: Duration,
    ) -> Result<Option<String>, a2a_server::StoreError> {
        self.inner.take_over(task, owner, ttl).await
    }

    async fn give_back(
        &self,
        task: &TaskId,
        owner: &str,
        previous: Option<&str>,
    ) -> Result<(), a2a_server::StoreError> {
        self.inner.give_back(task, owner, previous).await
    }

    async fn renew(&self, owner: &str, ttl: Duration) -> Result<(), a2a_server::StoreError> {
        self.inner.renew(owner, ttl).await
    }

    async fn release(&self, task: &TaskId, owner: &str) -> Result<(), a2a_server::StoreError> {
        self.inner.release(task, owner).await
    }
}

#[tokio::test]
async fn recovery_does_not_resume_a_task_finished_since_its_scan() {
    use a2a_server::TaskStore as _;
    let cluster = Cluster::new();
    // A WORKING task nobody holds: an orphan when the scan reads it.
    let task = Task::new("t-1", "c-1", a2a_core::TaskStatus::new(TaskState::Working));
    cluster
        .store
        .create(Arc::new(task), Scope::default())
        .await
        .expect("created");
    let leases = FinishedMeanwhile {
        inner: LocalLeases::new(),
        store: cluster.store.clone(),
        task: TaskId::from("t-1"),
    };
    let b = Server::builder(Worker(cluster.probe.clone()))
        .task_store_arc(cluster.store.clone() as Arc<dyn Store>)
        .event_bus(cluster.bus.clone() as Arc<dyn EventBus>)
        .leases(Arc::new(leases))
        .replica_id("b")
        .build()
        .expect("server");
    let b = b.handler();
    assert_eq!(
        b.claim_orphans().await.expect("claim"),
        0,
        "nothing to resume"
    );
    assert_eq!(cluster.probe.resumed.load(Ordering::SeqCst), 0);
    assert_eq!(state_of(&b, &TaskId::from("t-1")).await, TaskState::Failed);
}

/// A message the task refuses (it is WORKING on `a`) leaves the lease with `a`: a continuation
/// takes the lease over before it is stored, and gives it back when the task refuses it.
#[tokio::test]
async fn a_message_refused_on_b_leaves_the_lease_of_the_task_running_on_a_with_a() {
    let cluster = Cluster::new();
    let (a, b) = cluster.pair();
    let task = start(&a, "wait").await;
    until_state(&a, &task.id, TaskState::Working).await;
    assert_eq!(cluster.leases.holder(&task.id).as_deref(), Some("a"));
    // A WORKING task expects no message: refused, whatever replica it reaches.
    let m = Message::user_text("more").with_task_id(task.id.clone());
    let refused = b.send_message(&cx(), SendMessageRequest::new(m)).await;
    assert!(
        refused.is_err_and(|e| e.is(ErrorKind::UnsupportedOperation)),
        "refused"
    );
    assert_eq!(
        cluster.leases.holder(&task.id).as_deref(),
        Some("a"),
        "a refused message takes nothing from the replica running the task"
    );
    b.cancel_task(&cx(), CancelTaskRequest::new(task.id.clone()))
        .await
        .expect("cancel");
}

/// A message the task refuses leaves the execution that runs it the latest one: when that
/// execution returns without finishing the task, the task is failed, as without the message.
#[tokio::test]
async fn a_refused_message_does_not_keep_the_running_execution_from_failing_its_task() {
    let cluster = Cluster::new();
    let (a, _b) = cluster.pair();
    let task = start(&a, "idle").await;
    until_state(&a, &task.id, TaskState::Working).await;
    let m = Message::user_text("more").with_task_id(task.id.clone());
    let refused = a.send_message(&cx(), SendMessageRequest::new(m)).await;
    assert!(
        refused.is_err_and(|e| e.is(ErrorKind::UnsupportedOperation)),
        "refused"
    );
    cluster.probe.gate.add_permits(1);
    until_state(&a, &task.id, TaskState::Failed).await;
    assert_eq!(
        cluster.leases.holder(&task.id),
        None,
        "the lease is given up"
    );
}
