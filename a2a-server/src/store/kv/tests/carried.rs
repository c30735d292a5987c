//! Heads that carry the events of the batch that created their task (issue 41): a task created
//! and finished in one batch is one key in `tasks` and none in `task_events`; the events past
//! [`HEAD_LOG_BYTES`] go to the log; every read (the task, its log by pages, after a reopen)
//! and every later write (a head rewritten, a snapshot taking the events back) sees the same
//! log as if each event had its own key.

use super::*;
use crate::store::BatchWrite;
use crate::store::tests::{applied, chunk, status_event, task_at, write};

/// The log of a task, whole.
async fn log(store: &Store, id: &str) -> Vec<LoggedEvent> {
    store.events(&TaskId::from(id), 0, 1000).await.unwrap()
}

/// The seqs of the log entries of `id` that are keys of their own in `task_events`.
fn logged_keys(store: &Store, id: &str) -> Vec<u64> {
    engine::keys(store.events.scan_prefix(log_prefix(id)))
        .map(|k| record::seq_of(&k.unwrap()).unwrap())
        .collect()
}

/// An artifact chunk of `bytes` bytes of text.
fn big_chunk(t: &Task, artifact: &str, bytes: usize) -> StreamResponse {
    StreamResponse::ArtifactUpdate(a2a_core::TaskArtifactUpdateEvent {
        task_id: t.id.clone(),
        context_id: t.context_id.clone(),
        artifact: a2a_core::Artifact::text("answer", "x".repeat(bytes)).with_id(artifact),
        append: false,
        last_chunk: true,
        metadata: None,
        generation: 0,
    })
}

/// Writes the batch `events` creating task `id` (the creation first), returning the task at
/// each version.
async fn create_batch(store: &Store, id: &str, events: &[StreamResponse]) -> Vec<Arc<Task>> {
    let mut tasks = vec![Arc::new(task_at(id, "c", TaskState::Submitted, 10))];
    for event in events {
        let next = applied(tasks.last().unwrap(), event);
        tasks.push(Arc::new(next));
    }
    let changes: Vec<BatchWrite<'_>> = std::iter::once(BatchWrite {
        task: &tasks[0],
        event: None,
    })
    .chain(
        tasks[1..]
            .iter()
            .zip(events)
            .map(|(task, event)| BatchWrite {
                task,
                event: Some(event),
            }),
    )
    .collect();
    store
        .write_batch(&Scope::default(), 0, &changes)
        .await
        .unwrap();
    tasks
}

#[tokio::test]
async fn an_echo_batch_is_one_head_and_no_log_key() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let t = task_at("echo", "c", TaskState::Submitted, 10);
    let mut done = t.clone();
    done.status = task_at("echo", "c", TaskState::Completed, 20).status;
    let tasks = create_batch(&store, "echo", &[status_event(&done)]).await;
    assert!(is_head(&store, "echo"));
    assert_eq!(
        logged_keys(&store, "echo"),
        [0u64; 0],
        "no key in task_events"
    );
    assert_eq!(store.events.len(), 0);
    let events = log(&store, "echo").await;
    forget_cached(&store);
    assert_eq!(log(&store, "echo").await, events, "read back from the head");
    assert_eq!(events.len(), 2);
    assert_eq!(events[1].event, status_event(&done));
    let stored = store.get(&t.id).await.unwrap().unwrap();
    assert_eq!((stored.version, &stored.task), (2, tasks.last().unwrap()));
    drop(store);
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(log(&store, "echo").await, events, "after a reopen");
    assert_eq!(
        store.events(&t.id, 1, 10).await.unwrap(),
        events[1..],
        "resumed after the creation"
    );
}

#[tokio::test]
async fn a_batch_s_events_past_the_bound_go_to_the_log_and_pages_cross_the_head() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let t = task_at("big", "c", TaskState::Submitted, 10);
    let first = big_chunk(&t, "a", HEAD_LOG_BYTES / 2);
    let second = big_chunk(&t, "b", HEAD_LOG_BYTES / 2);
    let small = chunk(&t, "c", 0);
    let mut working = applied(&applied(&applied(&t, &first), &second), &small);
    working.status = task_at("big", "c", TaskState::Working, 20).status;
    let events = [first, second, small, status_event(&working)];
    let tasks = create_batch(&store, "big", &events).await;
    assert!(is_head(&store, "big"));
    assert_eq!(
        logged_keys(&store, "big"),
        [3, 4, 5],
        "the events from the first that does not fit on, in the log"
    );
    let whole = log(&store, "big").await;
    assert_eq!(whole.len(), 5);
    for _ in 0..2 {
        let stored = store.get(&t.id).await.unwrap().unwrap();
        assert_eq!((stored.version, &stored.task), (5, tasks.last().unwrap()));
        for limit in 1..=5 {
            let mut seen = Vec::new();
            while seen.len() < whole.len() {
                let page = store.events(&t.id, seen.len() as u64, limit).await.unwrap();
                assert!(!page.is_empty() && page.len() <= limit);
                seen.extend(page);
            }
            assert_eq!(seen, whole, "pages of {limit}");
        }
        forget_cached(&store);
    }
}

#[tokio::test]
async fn a_head_carries_its_batch_s_events_on_and_a_snapshot_takes_them_back() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let t = task_at("long", "c", TaskState::Submitted, 10);
    let mut working = applied(&t, &chunk(&t, "a", 0));
    working.status = task_at("long", "c", TaskState::Working, 20).status;
    let events = [chunk(&t, "a", 0), status_event(&working)];
    create_batch(&store, "long", &events).await;
    let mut stored = store.get(&t.id).await.unwrap().unwrap();
    assert_eq!(stored.version, 3);
    assert_eq!(logged_keys(&store, "long"), [0u64; 0]);
    // A status update rewrites the head: it carries the batch's events on.
    let mut waiting = Task::clone(&stored.task);
    waiting.status = task_at("long", "c", TaskState::InputRequired, 30).status;
    stored = write(&store, &stored, status_event(&waiting)).await;
    assert!(is_head(&store, "long"));
    assert_eq!(logged_keys(&store, "long"), [4]);
    forget_cached(&store);
    assert_eq!(store.get(&t.id).await.unwrap().as_ref(), Some(&stored));
    let before = log(&store, "long").await;
    assert_eq!(before.len(), 4);
    // Artifacts past SNAPSHOT_EVERY: the head gives way to a snapshot, whose log is whole.
    for i in 1..SNAPSHOT_EVERY {
        stored = write(&store, &stored, chunk(&stored.task, "a", i as usize)).await;
    }
    assert!(!is_head(&store, "long"));
    assert_eq!(
        logged_keys(&store, "long"),
        (1..=stored.version).collect::<Vec<_>>()
    );
    forget_cached(&store);
    let after = log(&store, "long").await;
    assert_eq!(after[..4], before[..]);
    assert_eq!(after.len() as u64, stored.version);
    assert_eq!(store.get(&t.id).await.unwrap(), Some(stored));
}

#[tokio::test]
async fn a_snapshot_cut_short_before_its_value_leaves_the_carrying_head_whole() {
    let dir = tempfile::tempdir().unwrap();
    let t = task_at("cut", "c", TaskState::Submitted, 10);
    let mut working = t.clone();
    working.status = task_at("cut", "c", TaskState::Working, 20).status;
    let (stored, events) = {
        let store = Store::open(dir.path()).unwrap();
        create_batch(&store, "cut", &[status_event(&working)]).await;
        let events = log(&store, "cut").await;
        // What a crash leaves after a snapshot put the carried events back in the log and
        // before its value: entries the head never reads.
        for e in &events {
            store
                .events
                .insert(log_key("cut", e.seq), serde_json::to_vec(&e.event).unwrap())
                .unwrap();
        }
        store.sync().await.unwrap();
        (store.get(&t.id).await.unwrap().unwrap(), events)
    };
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(store.get(&t.id).await.unwrap(), Some(stored.clone()));
    assert_eq!(log(&store, "cut").await, events);
    let mut finished = Task::clone(&stored.task);
    finished.status = task_at("cut", "c", TaskState::Completed, 30).status;
    let finished = write(&store, &stored, status_event(&finished)).await;
    forget_cached(&store);
    assert_eq!(store.get(&t.id).await.unwrap(), Some(finished));
    assert_eq!(log(&store, "cut").await.len(), 3);
}
