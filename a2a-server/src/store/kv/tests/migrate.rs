//! Heads that carry their creation event (issue 41): one key fewer per task, the log taking
//! the creation back when a snapshot replaces the head, and the migration at open of a store
//! whose heads do not (as every store written before issue 41).

use super::*;
use crate::store::tests::{status_event, task_at, write};

/// What a store written before issue 41 holds for a task with a head: the head without its
/// creation event, which is the log's entry 1 instead (the format those versions wrote).
fn as_written_before_issue_41(store: &Store, id: &str) {
    let head = store.tasks.get(id).unwrap().unwrap();
    let mut value: serde_json::Value = serde_json::from_slice(&head).unwrap();
    let created = value.as_object_mut().unwrap().remove("created").unwrap();
    store
        .events
        .insert(log_key(id, 1), serde_json::to_vec(&created).unwrap())
        .unwrap();
    store
        .tasks
        .insert(id, serde_json::to_vec(&value).unwrap())
        .unwrap();
}

/// The log of a task, whole.
async fn log(store: &Store, id: &str) -> Vec<LoggedEvent> {
    store.events(&TaskId::from(id), 0, 100).await.unwrap()
}

#[tokio::test]
async fn a_store_written_before_issue_41_is_migrated_at_open_and_reads_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let scope = Scope::default();
    let (done, open, logs) = {
        let store = Store::open(dir.path()).unwrap();
        // A finished echo, and a task still working (a head each).
        let t = task_at("done", "c", TaskState::Submitted, 10);
        let created = store
            .create(Arc::new(t.clone()), scope.clone())
            .await
            .unwrap();
        let mut finished = t.clone();
        finished.status = task_at("done", "c", TaskState::Completed, 20).status;
        let done = write(&store, &created, status_event(&finished)).await;
        let w = task_at("open", "c", TaskState::Submitted, 10);
        let created = store
            .create(Arc::new(w.clone()), scope.clone())
            .await
            .unwrap();
        let mut working = w.clone();
        working.status = task_at("open", "c", TaskState::Working, 30).status;
        let open = write(&store, &created, status_event(&working)).await;
        for id in ["done", "open"] {
            as_written_before_issue_41(&store, id);
        }
        forget_cached(&store);
        let logs = (log(&store, "done").await, log(&store, "open").await);
        assert_eq!(logs.0.len(), 2, "the old format reads whole");
        assert_eq!(
            store.get(&done.task.id).await.unwrap().as_ref(),
            Some(&done)
        );
        store.sync().await.unwrap();
        // Not marked migrated: a store before issue 41 had no marker.
        store
            .db
            .open_tree(META)
            .unwrap()
            .remove(b"heads_carry_creation")
            .unwrap();
        store.db.flush().unwrap();
        (done, open, logs)
    };
    let store = Store::open(dir.path()).unwrap();
    for id in ["done", "open"] {
        let head: serde_json::Value =
            serde_json::from_slice(&store.tasks.get(id).unwrap().unwrap()).unwrap();
        assert_eq!(
            head["created"]["task"]["id"], id,
            "{id}'s head carries its creation"
        );
        assert!(
            store.events.get(log_key(id, 1)).unwrap().is_none(),
            "{id}'s log entry 1 is gone"
        );
    }
    assert_eq!(store.get(&done.task.id).await.unwrap(), Some(done));
    assert_eq!(store.get(&open.task.id).await.unwrap(), Some(open.clone()));
    assert_eq!((log(&store, "done").await, log(&store, "open").await), logs);
    assert_eq!(
        store.events(&open.task.id, 1, 10).await.unwrap(),
        logs.1[1..],
        "after the creation"
    );
    // The migrated task goes on: finished, its head still carries the creation.
    let mut finished = Task::clone(&open.task);
    finished.status = task_at("open", "c", TaskState::Completed, 40).status;
    let finished = write(&store, &open, status_event(&finished)).await;
    forget_cached(&store);
    assert_eq!(store.get(&open.task.id).await.unwrap(), Some(finished));
    assert_eq!(log(&store, "open").await.len(), 3);
    // Opening again finds it done: nothing to rewrite.
    drop(store);
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(
        open::carry_creations(&store.db, &store.tasks, &store.events).unwrap(),
        0
    );
}

#[tokio::test]
async fn a_snapshot_over_a_head_puts_the_creation_back_in_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let t = task_at("long", "c", TaskState::Working, 10);
    let mut stored = store.create(Arc::new(t), Scope::default()).await.unwrap();
    assert!(store.events.get(log_key("long", 1)).unwrap().is_none());
    // Artifacts past SNAPSHOT_EVERY: the head gives way to a snapshot.
    for i in 0..SNAPSHOT_EVERY {
        let event = StreamResponse::ArtifactUpdate(a2a_core::TaskArtifactUpdateEvent {
            task_id: stored.task.id.clone(),
            context_id: stored.task.context_id.clone(),
            artifact: a2a_core::Artifact::text("x", format!("a{i}")).with_id(format!("a{i}")),
            append: false,
            last_chunk: true,
            metadata: None,
            generation: 0,
        });
        stored = write(&store, &stored, event).await;
    }
    assert!(!is_head(&store, "long"));
    assert!(store.events.get(log_key("long", 1)).unwrap().is_some());
    forget_cached(&store);
    let events = log(&store, "long").await;
    assert_eq!(events.len() as u64, SNAPSHOT_EVERY + 1);
    assert!(matches!(events[0].event, StreamResponse::Task(_)));
    assert_eq!(store.get(&stored.task.id).await.unwrap(), Some(stored));
}

#[tokio::test]
async fn store_writes_a_batch_as_single_writes_would() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    crate::store::tests::batch_writes_read_back_as_single_writes(&store).await;
    forget_cached(&store);
    let t = store.get(&TaskId::from("batch")).await.unwrap().unwrap();
    assert_eq!(t.version, 5, "read from disk");
    assert!(is_head(&store, "batch"), "a head, carrying the creation");
    assert!(store.events.get(log_key("batch", 1)).unwrap().is_none());
}

/// What the release before the second part of issue 41 wrote for a task: its head without the
/// batch's later events (those were log entries 2, 3, …), and a key in tree `task_index` if
/// it is finished (`(i64::MAX - status millis) ++ id`, which retention walked).
fn as_written_before_heads_carried_batches(store: &Store, id: &str) {
    let head = store.tasks.get(id).unwrap().unwrap();
    let mut value: serde_json::Value = serde_json::from_slice(&head).unwrap();
    let object = value.as_object_mut().unwrap();
    if let Some(serde_json::Value::Array(logged)) = object.remove("logged") {
        for (seq, event) in (2..).zip(logged) {
            store
                .events
                .insert(log_key(id, seq), serde_json::to_vec(&event).unwrap())
                .unwrap();
        }
    }
    // A head starts `{"head":` (serde_json sorts the other keys, `created` among them, after).
    let created = object.remove("created").unwrap();
    let head = serde_json::to_vec(&value).unwrap();
    let created = serde_json::to_vec(&created).unwrap().into_boxed_slice();
    store
        .tasks
        .insert(id, record::with_carried(head, &[created]))
        .unwrap();
    let stored = store.load(&TaskId::from(id)).unwrap().unwrap().stored;
    if stored.task.status.state.is_terminal() {
        let mut key = (i64::MAX - stored.sort_millis().max(0))
            .to_be_bytes()
            .to_vec();
        key.extend_from_slice(id.as_bytes());
        let index = store.db.open_tree(open::RETIRED_RETENTION_TREE).unwrap();
        index.insert(key, &[] as &[u8]).unwrap();
    }
}

#[tokio::test]
async fn a_store_written_before_heads_carried_batches_reads_the_same_and_loses_its_retention_tree()
{
    use crate::store::BatchWrite;
    use crate::store::tests::applied;
    let dir = tempfile::tempdir().unwrap();
    let scope = Scope::default();
    let echo = |id: &str, state: TaskState| {
        let t = Arc::new(task_at(id, "c", TaskState::Submitted, 10));
        let mut next = Task::clone(&t);
        next.status = task_at(id, "c", state, 20).status;
        let event = status_event(&next);
        let next = Arc::new(applied(&t, &event));
        (t, event, next)
    };
    let (done, open, logs) = {
        let store = Store::open(dir.path()).unwrap();
        // A blocking echo, finished in its batch; and a task its batch left working.
        for (id, state) in [("done", TaskState::Completed), ("open", TaskState::Working)] {
            let (t, event, next) = echo(id, state);
            let changes = [
                BatchWrite {
                    task: &t,
                    event: None,
                },
                BatchWrite {
                    task: &next,
                    event: Some(&event),
                },
            ];
            store.write_batch(&scope, 0, &changes).await.unwrap();
        }
        let logs = (log(&store, "done").await, log(&store, "open").await);
        for id in ["done", "open"] {
            as_written_before_heads_carried_batches(&store, id);
        }
        forget_cached(&store);
        assert_eq!(
            (log(&store, "done").await, log(&store, "open").await),
            logs,
            "the old format reads the same"
        );
        for id in ["done", "open"] {
            assert!(
                store.events.get(log_key(id, 2)).unwrap().is_some(),
                "{id}'s status in the log, as the old release wrote it"
            );
        }
        store.sync().await.unwrap();
        let (done, open) = (TaskId::from("done"), TaskId::from("open"));
        (
            store.get(&done).await.unwrap().unwrap(),
            store.get(&open).await.unwrap().unwrap(),
            logs,
        )
    };
    let store = Store::open(dir.path()).unwrap();
    let retired = store.db.open_tree(open::RETIRED_RETENTION_TREE).unwrap();
    assert!(retired.is_empty(), "the retention tree is gone");
    assert_eq!(
        store.get(&done.task.id).await.unwrap().as_ref(),
        Some(&done)
    );
    assert_eq!(
        store.get(&open.task.id).await.unwrap().as_ref(),
        Some(&open)
    );
    assert_eq!((log(&store, "done").await, log(&store, "open").await), logs);
    assert_eq!(
        store.events(&open.task.id, 1, 10).await.unwrap(),
        logs.1[1..],
        "resumed after the creation"
    );
    let later = Timestamp::from_unix_millis(1_000).unwrap();
    assert_eq!(
        store.terminal_before(later, 10).await.unwrap(),
        std::slice::from_ref(&done.task.id),
        "retention finds the old store's finished task from its listing keys"
    );
    // The old task goes on: its head rewritten, its status still the log's entry 2.
    let mut finished = Task::clone(&open.task);
    finished.status = task_at("open", "c", TaskState::Completed, 40).status;
    let finished = write(&store, &open, status_event(&finished)).await;
    forget_cached(&store);
    assert_eq!(store.get(&open.task.id).await.unwrap(), Some(finished));
    assert_eq!(log(&store, "open").await[..2], logs.1[..]);
    assert_eq!(store.terminal_before(later, 10).await.unwrap().len(), 2);
}
