//! `PgStore` against a real PostgreSQL: the public store suite, and what only a shared
//! database has (migrations applied once, leases between replicas, the bus's wake-ups and
//! cancels, a listener that reconnects).
#![cfg(all(feature = "postgres", feature = "testing"))]

mod pg;

use a2a_server::testing;
use pg::TestSchema;

#[tokio::test]
async fn the_postgres_store_passes_the_store_suite() {
    let Some(db) = TestSchema::new().await else {
        return;
    };
    // Each part of the suite wants an empty store: a schema each, dropped at the end.
    let schemas = std::sync::Mutex::new(Vec::new());
    testing::check_store(|| async {
        let schema = TestSchema::new()
            .await
            .expect("PostgreSQL answered a moment ago");
        let store = schema.store().await;
        schemas.lock().expect("schemas").push(schema);
        store
    })
    .await;
    drop(db);
}

/// A raw connection to the test server, for what the store does not expose.
async fn sql(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connects");
    tokio::spawn(connection);
    client
}

#[tokio::test]
async fn replicas_starting_together_apply_each_migration_once() {
    let Some(db) = TestSchema::new().await else {
        return;
    };
    let opened = futures::future::join_all((0..4).map(|_| db.store_with(1))).await;
    let client = sql(&db.url).await;
    let applied: i64 = client
        .query_one(
            &format!(
                "SELECT count(*) FROM \"{}\".a2a_schema_migrations",
                db.schema
            ),
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(applied, 2, "two migrations so far, each applied once");
    drop(opened);
}

#[tokio::test]
async fn the_leases_of_a_replica_that_stopped_go_to_exactly_one_survivor() {
    use a2a_core::TaskId;
    use a2a_server::Leases;
    use std::time::Duration;
    let Some(db) = TestSchema::new().await else {
        return;
    };
    let store = db.store().await;
    let (a, b, c) = (store.leases(), store.leases(), store.leases());
    let ttl = Duration::from_millis(400);
    let tasks: Vec<TaskId> = (0..40).map(|i| TaskId::from(format!("t{i}"))).collect();
    for t in &tasks {
        assert!(a.acquire(t, "a", ttl).await.unwrap());
    }
    // While `a` heartbeats, nobody else gets them.
    assert!(!b.acquire(&tasks[0], "b", ttl).await.unwrap());
    a.renew("a", ttl).await.unwrap();
    assert_eq!(a.holder(&tasks[0]).await.unwrap().as_deref(), Some("a"));
    // Both heartbeat (b's try registered it), each for at most the lease time.
    let live = a.replicas().await.unwrap();
    let names: Vec<&str> = live.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    assert!(
        live.iter().all(|(_, left)| *left > 0.0 && *left <= 0.4),
        "{live:?}"
    );
    // The search for orphans reads a page of them at once.
    let mut page = tasks[..3].to_vec();
    page.push(TaskId::from("never-leased"));
    let mut held = b.held_by_others(&page, "b").await.unwrap();
    held.sort();
    assert_eq!(held, tasks[..3], "held by a, alive");
    assert!(
        a.held_by_others(&page, "a").await.unwrap().is_empty(),
        "a's own"
    );
    // `a` stops heartbeating: `b` and `c` race for every task; each task has one winner.
    tokio::time::sleep(ttl * 2).await;
    assert_eq!(a.holder(&tasks[0]).await.unwrap(), None);
    assert!(
        b.held_by_others(&page, "b").await.unwrap().is_empty(),
        "a is dead"
    );
    let race = |leases: std::sync::Arc<a2a_server::postgres::PgLeases>, owner: &'static str| {
        let tasks = tasks.clone();
        tokio::spawn(async move {
            let mut won = Vec::new();
            for t in &tasks {
                if leases
                    .acquire(t, owner, Duration::from_secs(30))
                    .await
                    .unwrap()
                {
                    won.push(t.clone());
                }
            }
            won
        })
    };
    let (won_b, won_c) = tokio::join!(race(b.clone(), "b"), race(c.clone(), "c"));
    let (won_b, won_c) = (won_b.unwrap(), won_c.unwrap());
    assert_eq!(
        won_b.len() + won_c.len(),
        tasks.len(),
        "every task taken once"
    );
    for t in &won_b {
        assert!(!won_c.contains(t), "{t} taken twice");
    }
    // `a` comes back too late: its tasks are gone; a released lease is free again.
    assert!(!a.acquire(&tasks[0], "a", ttl).await.unwrap());
    let first = won_b.first().or(won_c.first()).unwrap().clone();
    let owner = if won_b.contains(&first) { "b" } else { "c" };
    b.release(&first, owner).await.unwrap();
    c.release(&first, owner).await.unwrap();
    assert!(a.acquire(&first, "a", ttl).await.unwrap());
    // A continuation takes a task over whoever holds it, and learns from whom.
    let previous = c.take_over(&first, "c", ttl).await.unwrap();
    assert_eq!(previous.as_deref(), Some("a"));
    assert_eq!(c.holder(&first).await.unwrap().as_deref(), Some("c"));
    // The task refused the message: the lease goes back, and only from its holder.
    b.give_back(&first, "b", None).await.unwrap();
    assert_eq!(c.holder(&first).await.unwrap().as_deref(), Some("c"));
    c.give_back(&first, "c", previous.as_deref()).await.unwrap();
    assert_eq!(c.holder(&first).await.unwrap().as_deref(), Some("a"));
    // Taken from no one, given back to no one: free again.
    let free = TaskId::from("never-leased");
    assert_eq!(c.take_over(&free, "c", ttl).await.unwrap(), None);
    c.give_back(&free, "c", None).await.unwrap();
    assert_eq!(c.holder(&free).await.unwrap(), None);
}

/// A "replica" on the test's schema: a store and its bus.
async fn replica(
    db: &TestSchema,
) -> (
    a2a_server::PgStore,
    std::sync::Arc<a2a_server::postgres::PgBus>,
) {
    let store = db.store().await;
    let bus = store.event_bus().await.unwrap();
    (store, bus)
}

/// Waits for the next notification of a subscription.
async fn next_seq(sub: &mut futures::stream::BoxStream<'static, u64>) -> u64 {
    use futures::StreamExt as _;
    tokio::time::timeout(std::time::Duration::from_secs(10), sub.next())
        .await
        .expect("a notification within 10 s")
        .expect("the subscription stays open")
}

#[tokio::test]
async fn a_write_wakes_the_other_replicas_and_a_killed_listener_catches_up() {
    use a2a_core::{
        Artifact, StreamResponse, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus,
    };
    use a2a_server::{EventBus, Scope, TaskStore};
    use std::sync::Arc;
    let Some(db) = TestSchema::new().await else {
        return;
    };
    let ((store_a, bus_a), (_, bus_b)) = (replica(&db).await, replica(&db).await);
    let task = Arc::new(Task::new("t1", "c1", TaskStatus::new(TaskState::Working)));
    let created = store_a.create(task, Scope::default()).await.unwrap();
    let mut sub = bus_b.subscribe(&created.task.id);
    let chunk = |n: usize| {
        StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: "t1".into(),
            context_id: "c1".into(),
            artifact: Artifact::text("a", format!("{n}")).with_id("a"),
            append: n > 1,
            last_chunk: false,
            metadata: None,
            generation: 0,
        })
    };
    let mut current = created;
    // As the engine does: write, then publish.
    let write = |current: a2a_server::StoredTask, n: usize| {
        let (store, bus) = (store_a.clone(), bus_a.clone());
        async move {
            let event = chunk(n);
            let mut task = Task::clone(&current.task);
            task.apply(&event).unwrap();
            let stored = store
                .update(Arc::new(task), current.version, &event)
                .await
                .unwrap();
            bus.publish(&stored.task.id, stored.version);
            stored
        }
    };
    current = write(current, 1).await;
    assert_eq!(next_seq(&mut sub).await, 2, "the write's seq, heard on B");

    // Kill B's listening connection (as a database restart or a network cut would), and write
    // while it is away: its subscriber is woken to re-read once it listens again.
    let client = sql(&db.url).await;
    let killed = client
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
            &[&format!("a2a-bus a2a_{}", db.schema)],
        )
        .await
        .unwrap();
    assert_eq!(killed.len(), 2, "A's and B's listening connections");
    current = write(current, 2).await;
    let heard = next_seq(&mut sub).await;
    assert!(
        heard >= 3,
        "after the reconnect, B re-reads past seq 3 (heard {heard})"
    );
    // And it listens again: the next write is heard as such.
    let _ = write(current, 3).await;
    let mut last = 0;
    while last < 4 {
        last = next_seq(&mut sub).await;
    }
    assert!(last == 4 || last == u64::MAX);
}

#[tokio::test]
async fn a_cancel_request_reaches_every_replica() {
    use a2a_core::TaskId;
    use a2a_server::EventBus;
    use std::sync::{Arc, Mutex};
    let Some(db) = TestSchema::new().await else {
        return;
    };
    let ((_, bus_a), (_, bus_b)) = (replica(&db).await, replica(&db).await);
    let heard = Arc::new(Mutex::new(Vec::<String>::new()));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let record = heard.clone();
    bus_a.on_cancel(Arc::new(move |t: &TaskId| {
        record.lock().unwrap().push(t.to_string());
        let _ = tx.send(());
    }));
    bus_b.request_cancel(&TaskId::from("t-9"));
    tokio::time::timeout(std::time::Duration::from_secs(10), rx.recv())
        .await
        .expect("the cancel request arrives on A");
    assert_eq!(*heard.lock().unwrap(), ["t-9"]);
}

#[tokio::test]
async fn a_schema_name_that_postgres_would_read_otherwise_is_refused_before_connecting() {
    use a2a_server::postgres::{PgOptions, PgStore};
    for bad in ["Upper", "has-dash", "1digit", "", "x; DROP TABLE y"] {
        let options = PgOptions {
            schema: Some(bad.to_owned()),
            ..PgOptions::default()
        };
        // No server at this address: the name is refused first.
        let err = PgStore::connect_with("postgres://nobody@127.0.0.1:1/none", options)
            .await
            .expect_err(bad)
            .to_string();
        assert!(err.contains("schema name"), "{bad:?}: {err}");
    }
}
