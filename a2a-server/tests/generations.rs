//! A2A 1.1 task generations as the engine keeps them, for every store: a task's generation is
//! its event log's numbering (1 at creation, one more per event, never repeated or skipped),
//! the same after a restart (sled) and on another replica (PostgreSQL); a long poll on one
//! replica wakes on a change made on another; `ifGenerationMatch` lets exactly one of two
//! racing continuations through, across replicas too.

#[cfg(feature = "postgres")]
mod pg;

use a2a_core::{
    AgentCard, Error, ErrorKind, GetTaskRequest, Message, SendMessageConfiguration,
    SendMessageRequest, SubscribeToTaskRequest, Task, TaskState,
};
use a2a_server::{
    Agent, CallContext, RequestContext, RequestHandler, Scope, SendReply, ServiceParams, Store,
    TaskEvents,
};
use futures::StreamExt as _;
use std::sync::Arc;
use std::time::Duration;
#[cfg(feature = "postgres")]
use std::time::Instant;
use tokio::sync::Semaphore;
use tokio::time::timeout;

const WAIT: Duration = Duration::from_secs(10);

/// "count N": N × (WORKING, artifact), then COMPLETED. "ask": INPUT_REQUIRED; its answer
/// completes it. "hold": WORKING, then one more WORKING per permit of the shared gate, until
/// canceled.
struct Counter(Arc<Semaphore>);

impl Agent for Counter {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        if cx.stored_task.is_some() {
            return events.complete(Some(Message::agent_text("thanks"))).await;
        }
        let text = cx.message.text();
        if let Some(n) = text.strip_prefix("count ") {
            for i in 0..n.parse::<u32>().expect("a count") {
                events.working(format!("{i}")).await?;
                let chunk = a2a_core::Artifact::text("out", i.to_string()).with_id("out");
                events.artifact_chunk(chunk, i > 0, false).await?;
            }
            return events.complete(None).await;
        }
        if text == "ask" {
            return events.input_required("which one?").await;
        }
        events.working("holding").await?;
        loop {
            tokio::select! {
                permit = self.0.acquire() => permit.expect("gate").forget(),
                () = cx.cancel.cancelled() => return Ok(()),
            }
            events.working("more").await?;
        }
    }

    async fn cancel(&self, _cx: RequestContext, _events: TaskEvents) -> Result<(), Error> {
        Ok(())
    }
}

fn v11() -> CallContext {
    CallContext::new(
        Scope::default(),
        ServiceParams::new(Some("1.1".into()), Vec::new()),
    )
}

fn handler(store: impl Store, gate: &Arc<Semaphore>) -> RequestHandler {
    RequestHandler::builder(Counter(gate.clone()))
        .agent_card(
            AgentCard::builder("counter", "counts")
                .streaming(true)
                .build(),
        )
        .task_store(store)
        .build()
        .expect("a handler")
}

fn send(text: &str) -> SendMessageRequest {
    SendMessageRequest::new(Message::user_text(text))
}

fn task(reply: SendReply) -> Task {
    match reply {
        SendReply::Task(t) => t.into_task(),
        SendReply::Message(m) => panic!("a task expected, got {m:?}"),
    }
}

/// Streams `text` at 1.1; returns the events' (sequence number, generation) pairs and the
/// task id.
async fn stream(h: &RequestHandler, text: &str) -> (Vec<(u64, i64)>, a2a_core::TaskId) {
    let events: Vec<_> = timeout(
        WAIT,
        h.send_streaming_message(&v11(), send(text))
            .await
            .unwrap()
            .collect::<Vec<_>>(),
    )
    .await
    .unwrap();
    let id = events[0].event.task_id().expect("a task event").clone();
    let pairs = events
        .iter()
        .map(|e| (e.seq, e.event.generation()))
        .collect();
    (pairs, id)
}

/// The generations of a replay of `id`'s log, from the start.
async fn replay(h: &RequestHandler, id: &a2a_core::TaskId) -> Vec<i64> {
    let cx = v11().with_last_event_id(Some(0));
    let events = h
        .subscribe_to_task(&cx, SubscribeToTaskRequest::new(id.clone()))
        .await
        .unwrap();
    timeout(WAIT, events.map(|e| e.event.generation()).collect())
        .await
        .unwrap()
}

async fn generation_of(h: &RequestHandler, id: &a2a_core::TaskId) -> i64 {
    let got = h.get_task(&v11(), GetTaskRequest::new(id.clone())).await;
    got.unwrap().generation
}

/// A count's generations are its events' sequence numbers, 1 to n, and continue (never
/// repeat) after the task waits for input.
async fn check_store(h: &RequestHandler) -> (a2a_core::TaskId, a2a_core::TaskId) {
    let (pairs, counted) = stream(h, "count 3").await;
    // 3 × (WORKING, chunk) + COMPLETED, the first WORKING creating the task.
    let expected: Vec<(u64, i64)> = (1..=7).map(|g| (g as u64, g)).collect();
    assert_eq!(pairs, expected);
    assert_eq!(generation_of(h, &counted).await, 7);
    assert_eq!(replay(h, &counted).await, (1..=7).collect::<Vec<_>>());
    let asked = task(h.send_message(&v11(), send("ask")).await.unwrap());
    assert_eq!(
        (asked.status.state, asked.generation),
        (TaskState::InputRequired, 1)
    );
    (counted, asked.id)
}

#[tokio::test]
async fn generations_are_the_log_numbering_in_memory() {
    let gate = Arc::new(Semaphore::new(0));
    let h = handler(a2a_server::MemoryStore::new(), &gate);
    check_store(&h).await;
}

/// A runtime per process: dropping it ends every task the server spawned, as an exit does.
#[cfg(feature = "sled")]
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}

#[cfg(feature = "sled")]
#[test]
fn generations_survive_a_sled_restart_and_go_on_from_there() {
    use a2a_server::SledStore;
    let gate = Arc::new(Semaphore::new(0));
    let dir = tempfile::tempdir().unwrap();
    let open = || handler(SledStore::open(dir.path()).unwrap(), &gate);
    let (counted, asked) = runtime().block_on(async {
        let h = open();
        let ids = check_store(&h).await;
        h.flush().await.unwrap();
        ids
    });
    runtime().block_on(async {
        let h = open();
        assert_eq!(generation_of(&h, &counted).await, 7);
        assert_eq!(replay(&h, &counted).await, (1..=7).collect::<Vec<_>>());
        assert_eq!(generation_of(&h, &asked).await, 1);
        // The answer moves it on from 1: WORKING at 2, COMPLETED at 3.
        let answer = Message::user_text("this one").with_task_id(asked.clone());
        let request = SendMessageRequest::new(answer);
        let done = task(h.send_message(&v11(), request).await.unwrap());
        assert_eq!(
            (done.status.state, done.generation),
            (TaskState::Completed, 3)
        );
        assert_eq!(replay(&h, &asked).await, vec![1, 2, 3]);
    });
}

/// Two answers to `id` at generation `at`, sent to `a` and `b` at once: exactly one wins,
/// the other is TaskGenerationMismatch.
async fn race(a: &RequestHandler, b: &RequestHandler, id: &a2a_core::TaskId, at: i64) {
    let answer = |text: &str| {
        let m = Message::user_text(text).with_task_id(id.clone());
        let mut req = SendMessageRequest::new(m);
        req.configuration = Some(SendMessageConfiguration {
            if_generation_match: Some(at),
            ..SendMessageConfiguration::default()
        });
        req
    };
    let (ra, rb) = (answer("one"), answer("two"));
    let cx = v11();
    let (one, two) = timeout(WAIT, async {
        tokio::join!(a.send_message(&cx, ra), b.send_message(&cx, rb))
    })
    .await
    .unwrap();
    match (one, two) {
        (Ok(won), Err(lost)) | (Err(lost), Ok(won)) => {
            assert_eq!(task(won).status.state, TaskState::Completed);
            assert!(lost.is(ErrorKind::TaskGenerationMismatch), "{lost}");
        }
        (one, two) => panic!("exactly one must win: {one:?} / {two:?}"),
    }
}

#[tokio::test]
async fn of_two_racing_answers_at_one_generation_exactly_one_is_stored() {
    let gate = Arc::new(Semaphore::new(0));
    let h = handler(a2a_server::MemoryStore::new(), &gate);
    for _ in 0..20 {
        let asked = task(h.send_message(&v11(), send("ask")).await.unwrap());
        race(&h, &h, &asked.id, asked.generation).await;
    }
}

/// A replica on one PostgreSQL schema, each with its own engine, bus listener and leases.
#[cfg(feature = "postgres")]
async fn replica(db: &pg::TestSchema, gate: &Arc<Semaphore>) -> RequestHandler {
    let store = db.store().await;
    let bus = store.event_bus().await.unwrap();
    RequestHandler::builder(Counter(gate.clone()))
        .agent_card(
            AgentCard::builder("counter", "counts")
                .streaming(true)
                .build(),
        )
        .leases(store.leases())
        .event_bus(bus)
        .task_store(store)
        .build()
        .expect("a replica")
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn on_postgres_a_second_replica_sees_the_same_generations_and_long_polls_wake_at_once() {
    let Some(db) = pg::TestSchema::new().await else {
        return;
    };
    let gate = Arc::new(Semaphore::new(0));
    let (a, b) = (replica(&db, &gate).await, replica(&db, &gate).await);
    let (pairs, counted) = stream(&a, "count 3").await;
    assert_eq!(pairs, (1..=7).map(|g| (g as u64, g)).collect::<Vec<_>>());
    assert_eq!(generation_of(&b, &counted).await, 7);
    assert_eq!(replay(&b, &counted).await, (1..=7).collect::<Vec<_>>());

    // A task held on A (created WORKING, generation 1); long polls on B.
    let mut req = send("hold");
    req.configuration = Some(SendMessageConfiguration {
        return_immediately: true,
        ..SendMessageConfiguration::default()
    });
    let held = task(a.send_message(&v11(), req).await.unwrap());
    assert_eq!(held.generation, 1);
    let mut wakes = Vec::new();
    let cx = v11();
    for at in 1..=5 {
        let poll = b.get_task(
            &cx,
            GetTaskRequest::new(held.id.clone()).with_current_generation(at),
        );
        tokio::pin!(poll);
        assert!(
            timeout(Duration::from_millis(200), &mut poll)
                .await
                .is_err(),
            "held while the task stays at {at}"
        );
        let changed = Instant::now();
        gate.add_permits(1);
        let got = timeout(WAIT, poll).await.unwrap().unwrap();
        let took = changed.elapsed();
        assert_eq!(got.generation, at + 1);
        wakes.push(took);
    }
    woken_at_once(wakes);

    // Racing answers across the replicas: exactly one stored.
    for _ in 0..5 {
        let asked = task(a.send_message(&v11(), send("ask")).await.unwrap());
        race(&a, &b, &asked.id, asked.generation).await;
    }
    let cancel = a2a_core::CancelTaskRequest::new(held.id.clone());
    a.cancel_task(&v11(), cancel).await.unwrap();
}

/// A replica served on `127.0.0.1:0` (every binding on one port), on the schema `db`; the
/// serving task is aborted on drop.
#[cfg(feature = "postgres")]
struct Served {
    url: String,
    serving: tokio::task::JoinHandle<()>,
}

#[cfg(feature = "postgres")]
impl Drop for Served {
    fn drop(&mut self) {
        self.serving.abort();
    }
}

#[cfg(feature = "postgres")]
async fn serve(db: &pg::TestSchema, gate: &Arc<Semaphore>) -> Served {
    let store = db.store().await;
    let bus = store.event_bus().await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = a2a_server::Server::builder(Counter(gate.clone()))
        .agent_card(
            AgentCard::builder("counter", "counts")
                .streaming(true)
                .build(),
        )
        .public_url(&url)
        .leases(store.leases())
        .event_bus(bus)
        .task_store(store)
        .build()
        .expect("a replica");
    let serving = tokio::spawn(async move {
        server.serve(listener).await.expect("the replica serves");
    });
    Served { url, serving }
}

/// The same over the wire, through our client on each binding (its 1.1 interface, from the
/// card): two replicas on one PostgreSQL schema, a countdown streamed from A numbered 1..7 and
/// read back at 7 from B; long polls on B answered within 50 ms of each change made on A;
/// answers at one generation raced through A and B, exactly one winning.
#[cfg(feature = "postgres")]
#[tokio::test]
async fn on_postgres_replicas_every_binding_sees_one_numbering_and_long_polls_across_them() {
    use a2a_client::{Binding, Client};
    let Some(db) = pg::TestSchema::new().await else {
        return;
    };
    let gate = Arc::new(Semaphore::new(0));
    let (ra, rb) = (serve(&db, &gate).await, serve(&db, &gate).await);
    let mut wakes = Vec::new();
    for binding in [Binding::JsonRpc, Binding::HttpJson, Binding::Grpc] {
        let connect = |url: String| async move {
            let client = Client::builder().prefer([binding]).connect(&url).await;
            let client = client.expect("a client");
            assert!(client.speaks_generations(), "{binding:?}: a 1.1 interface");
            client
        };
        let (a, b) = (connect(ra.url.clone()).await, connect(rb.url.clone()).await);
        let events: Vec<_> = timeout(WAIT, async {
            let stream = a.send_streaming_message(&send("count 3")).await.unwrap();
            stream.collect::<Vec<_>>().await
        })
        .await
        .unwrap();
        let events: Vec<_> = events.into_iter().map(Result::unwrap).collect();
        let generations: Vec<i64> = events.iter().map(|e| e.generation()).collect();
        assert_eq!(generations, (1..=7).collect::<Vec<_>>(), "{binding:?}");
        let id = events[0].task_id().expect("a task event").clone();
        let on_b = b.get_task(id.clone()).await.unwrap();
        assert_eq!(on_b.generation, 7, "{binding:?}: read on B");

        // A task held on A at generation 1, long-polled on B.
        let hold = send("hold").with_return_immediately(true);
        let a2a_core::SendMessageResponse::Task(held) = a.send_message(&hold).await.unwrap() else {
            panic!("{binding:?}: a task");
        };
        assert_eq!(held.generation, 1);
        for at in 1..=3 {
            let poll = b.wait_for_change(held.id.clone(), at);
            tokio::pin!(poll);
            assert!(
                timeout(Duration::from_millis(200), &mut poll)
                    .await
                    .is_err(),
                "{binding:?}: held while the task stays at {at}"
            );
            let changed = Instant::now();
            gate.add_permits(1);
            let got = timeout(WAIT, poll).await.unwrap().unwrap();
            wakes.push(changed.elapsed());
            assert_eq!(got.generation, at + 1, "{binding:?}");
        }
        a.cancel_task(held.id.clone()).await.unwrap();

        // Two answers at one generation, through A and through B: exactly one wins.
        let a2a_core::SendMessageResponse::Task(asked) =
            a.send_message(&send("ask")).await.unwrap()
        else {
            panic!("{binding:?}: a task");
        };
        assert_eq!(asked.status.state, TaskState::InputRequired);
        let answer = |text: &str| {
            let m = Message::user_text(text).with_task_id(asked.id.clone());
            SendMessageRequest::new(m).with_if_generation_match(asked.generation)
        };
        let (one, two) = (answer("one"), answer("two"));
        let (one, two) = timeout(WAIT, async {
            tokio::join!(a.send_message(&one), b.send_message(&two))
        })
        .await
        .unwrap();
        match (one, two) {
            (Ok(_), Err(lost)) | (Err(lost), Ok(_)) => assert_eq!(
                lost.kind(),
                Some(ErrorKind::TaskGenerationMismatch),
                "{binding:?}: {lost}"
            ),
            (one, two) => panic!("{binding:?}: exactly one must win: {one:?} / {two:?}"),
        }
        let done = b.get_task(asked.id.clone()).await.unwrap();
        assert_eq!(
            (done.status.state, done.generation),
            (TaskState::Completed, asked.generation + 2),
            "{binding:?}: the winner's answer alone moved it on"
        );
    }
    woken_at_once(wakes);
}

/// Long polls on B returned within 50 ms of the changes on A (the median: the test suite runs
/// beside others on two cores, where one wake-up may wait for a core), and none waited for
/// anything but the bus (the server's own wait is 30 s).
#[cfg(feature = "postgres")]
fn woken_at_once(mut wakes: Vec<Duration>) {
    wakes.sort();
    let (median, slowest) = (wakes[wakes.len() / 2], wakes[wakes.len() - 1]);
    assert!(
        median < Duration::from_millis(50) && slowest < Duration::from_secs(1),
        "a long poll on B returns within 50 ms of the change on A (median {median:?}, slowest {slowest:?}: {wakes:?})"
    );
}
