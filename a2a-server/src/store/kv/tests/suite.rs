//! The embedded store's tests, run once per engine (`Store`, from `tests/on_sled.rs` or
//! `tests/on_fjall.rs`, which both compile this file): the shared store behaviour, reopening,
//! the listing indexes, and snapshots with the log events folded onto them.

pub(super) use super::Store;
pub(super) use crate::store::kv::*;
use std::time::Instant;

/// A tree's size, on any engine (a scan: tests only).
#[allow(dead_code, reason = "sled's trees count themselves; fjall's use this")]
pub(super) trait Counted {
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T: KvTree> Counted for T {
    fn len(&self) -> usize {
        self.iter().inspect(|e| assert!(e.is_ok(), "{e:?}")).count()
    }
}

#[path = "carried.rs"]
mod carried;
#[path = "listing.rs"]
mod listing;
#[path = "migrate.rs"]
mod migrate;

#[tokio::test]
async fn store_creates_gets_and_updates() {
    let dir = tempfile::tempdir().unwrap();
    crate::store::tests::create_get_update(&Store::open(dir.path()).unwrap()).await;
    let dir = tempfile::tempdir().unwrap();
    crate::store::tests::task_json_is_the_tasks_json(&Store::open(dir.path()).unwrap()).await;
}

#[tokio::test]
async fn store_keeps_a_gap_free_log_expires_old_tasks_and_claims_messages() {
    let dir = tempfile::tempdir().unwrap();
    crate::store::tests::log_pages_retention_and_claims(&Store::open(dir.path()).unwrap()).await;
}

#[tokio::test]
async fn store_lists_newest_first_with_filters_and_pages() {
    let dir = tempfile::tempdir().unwrap();
    crate::store::tests::list_orders_filters_and_pages(&Store::open(dir.path()).unwrap()).await;
}

#[tokio::test]
async fn store_pages_its_recovery_and_webhook_scans() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    crate::store::scan_tests::scans_page_with_a_cursor(&store).await;
}

#[tokio::test]
async fn store_expires_only_the_old_claims() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    crate::store::scan_tests::claims_expire_by_receipt_time(&store).await;
}

#[tokio::test]
async fn store_moves_a_delivery_cursor_only_from_its_expected_value() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    crate::store::scan_tests::delivery_cursor_is_compare_and_swap(&store).await;
}

#[tokio::test]
async fn store_gives_a_delivery_lease_to_one_owner_until_it_expires() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    crate::store::scan_tests::delivery_lease_has_one_owner(&store).await;
}

#[tokio::test]
async fn claim_expiry_walks_a_bounded_page_from_where_it_stopped() {
    use crate::store::{ClaimStore as _, MessageClaim};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    for (i, ms) in [5, 50, 6, 60, 7, 70, 8].into_iter().enumerate() {
        let claim = MessageClaim {
            task_id: format!("t{i}").as_str().into(),
            reply: None,
            received_ms: ms,
        };
        assert!(
            store
                .claim_message(&format!("k{i}"), claim)
                .await
                .unwrap()
                .is_none()
        );
    }
    // Three claims per walk: k0..k2 (two old), k3..k5 (one), k6 and round (one).
    let walks: Vec<usize> = (0..3)
        .map(|_| store.expire_claims_blocking(10, 3).unwrap())
        .collect();
    assert_eq!(walks, [2, 1, 1]);
    assert_eq!(store.expire_claims_blocking(10, 3).unwrap(), 0, "all gone");
    // A walk that covers every claim expires exactly the old ones.
    assert_eq!(store.expire_claims(65).await.unwrap(), 2);
    let left = |k: &str| store.claims.get(k).unwrap().is_some();
    assert!(left("k5") && !left("k1") && !left("k3"));
    // A database written by a version with the claims' time index loses it at open.
    let times = store.db().open_tree("message_claim_times").unwrap();
    times.insert(b"k0", b"5").unwrap();
    drop((times, store));
    let store = Store::open(dir.path()).unwrap();
    let times = store.db().open_tree("message_claim_times").unwrap();
    assert!(times.iter().next().is_none());
}

#[test]
fn a_directory_held_by_an_open_store_is_refused_with_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let _held = Store::open(dir.path()).unwrap();
    let started = Instant::now();
    let err = Store::open(dir.path()).unwrap_err().to_string();
    assert!(
        started.elapsed() >= LOCK_WAIT,
        "gave up before {LOCK_WAIT:?}"
    );
    assert!(err.contains("in use by another process"), "{err}");
    assert!(err.contains(&dir.path().display().to_string()), "{err}");
}

#[tokio::test]
async fn store_keeps_tasks_across_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = Store::open(dir.path()).unwrap();
        crate::store::tests::create_get_update(&store).await;
        store.sync().await.unwrap();
    }
    let store = Store::open(dir.path()).unwrap();
    let t = store.get(&TaskId::from("t1")).await.unwrap().unwrap();
    assert_eq!(t.version, 2);
    assert_eq!(t.task.status.state, TaskState::Working);
    let page = store
        .list(&ListQuery {
            page_size: 10,
            ..ListQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(page.total_size, 1);
}

/// Forgets every cached task, so that the next reads materialize from disk.
fn forget_cached(store: &Store) {
    *store.recent.lock().unwrap() = Fifo::new(RECENT_CACHE_BYTES);
}

/// The version of a task's value (snapshot or head) in tree `tasks`.
fn snapshot_version(store: &Store, id: &str) -> u64 {
    record::value_version(&store.tasks.get(id).unwrap().unwrap()).unwrap()
}

#[tokio::test]
async fn store_reads_a_long_append_stream_as_its_fold_from_cache_disk_and_reopen() {
    use crate::store::tests::{fold_of_log, long_append_stream_reads_back_as_its_fold};
    let dir = tempfile::tempdir().unwrap();
    let expected = {
        let store = Store::open(dir.path()).unwrap();
        let expected = long_append_stream_reads_back_as_its_fold(&store).await;
        forget_cached(&store);
        let id = &expected.task.id;
        assert_eq!(store.get(id).await.unwrap().unwrap(), expected);
        assert_eq!(
            snapshot_version(&store, id.as_str()),
            expected.version,
            "the last status update wrote a snapshot"
        );
        store.sync().await.unwrap();
        expected
    };
    let store = Store::open(dir.path()).unwrap();
    let id = &expected.task.id;
    assert_eq!(store.get(id).await.unwrap().unwrap(), expected);
    assert_eq!(fold_of_log(&store, id).await.1, expected.version);
    let done = store
        .tasks_in_states(&[TaskState::Completed], None, usize::MAX)
        .await
        .unwrap();
    assert_eq!(done, [expected]);
}

#[tokio::test]
async fn store_snapshots_every_so_many_events_and_folds_the_rest() {
    use crate::store::tests::{chunk, task_at, write};
    let dir = tempfile::tempdir().unwrap();
    let k = usize::try_from(SNAPSHOT_EVERY).unwrap();
    // Created WORKING (a snapshot at version 1), then `n` chunks: version n + 1.
    let cases = [k - 2, k - 1, k, k + 1, 2 * k - 1, 2 * k, 2 * k + 3];
    let mut expected = Vec::new();
    {
        let store = Store::open(dir.path()).unwrap();
        for n in cases {
            let t = task_at(&format!("n{n}"), "c", TaskState::Working, 10);
            let mut stored = store
                .create(Arc::new(t.clone()), Scope::default())
                .await
                .unwrap();
            for i in 0..n {
                stored = write(&store, &stored, chunk(&t, "a", i)).await;
            }
            let version = u64::try_from(n).unwrap() + 1;
            assert_eq!(stored.version, version);
            let snapshot = snapshot_version(&store, t.id.as_str());
            assert_eq!(
                snapshot,
                version - (version - 1) % SNAPSHOT_EVERY,
                "a snapshot once every {SNAPSHOT_EVERY} events, for {n} chunks"
            );
            assert!(version - snapshot < SNAPSHOT_EVERY);
            expected.push(stored);
        }
        forget_cached(&store);
        for e in &expected {
            assert_eq!(store.get(&e.task.id).await.unwrap().as_ref(), Some(e));
        }
        store.sync().await.unwrap();
    }
    let store = Store::open(dir.path()).unwrap();
    for e in &expected {
        assert_eq!(store.get(&e.task.id).await.unwrap().as_ref(), Some(e));
    }
    forget_cached(&store);
    let page = store
        .list(&ListQuery {
            page_size: 100,
            ..ListQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(page.tasks.len(), cases.len());
    for t in page.tasks {
        assert!(
            expected.contains(&t),
            "listed as materialized: {}",
            t.task.id
        );
    }
    forget_cached(&store);
    let mut working = store
        .tasks_in_states(&[TaskState::Working], None, usize::MAX)
        .await
        .unwrap();
    working.sort_by_key(|t| t.version);
    assert!(working == expected, "recovery reads materialized tasks");
}

#[tokio::test]
async fn store_ignores_a_status_event_whose_snapshot_was_not_written() {
    use crate::store::tests::{chunk, status_event, task_at, write};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let t = task_at("crashed", "c", TaskState::Working, 10);
    let mut stored = store
        .create(Arc::new(t.clone()), Scope::default())
        .await
        .unwrap();
    for i in 0..5 {
        stored = write(&store, &stored, chunk(&t, "a", i)).await;
    }
    // What a crash between a status update's event and its snapshot leaves behind.
    let mut failed = Task::clone(&stored.task);
    failed.status.state = TaskState::Failed;
    let orphan = serde_json::to_vec(&status_event(&failed)).unwrap();
    store
        .events
        .insert(log_key("crashed", stored.version + 1), orphan)
        .unwrap();
    forget_cached(&store);
    assert_eq!(store.get(&t.id).await.unwrap().unwrap(), stored);
    assert_eq!(
        store.events(&t.id, 0, 100).await.unwrap().len(),
        6,
        "the orphan is not in the log"
    );
    // The next write takes its place.
    stored = write(&store, &stored, chunk(&t, "a", 5)).await;
    forget_cached(&store);
    assert_eq!(store.get(&t.id).await.unwrap().unwrap(), stored);
    let (folded, seq) = crate::store::tests::fold_of_log(&store, &t.id).await;
    assert_eq!((folded, seq), (Task::clone(&stored.task), 7));
}

#[tokio::test]
async fn a_delete_cut_short_is_finished_at_open_and_the_id_starts_afresh() {
    use crate::store::tests::{chunk, task_at, write};
    let dir = tempfile::tempdir().unwrap();
    let t = task_at("reused", "c", TaskState::Working, 10);
    {
        let store = Store::open(dir.path()).unwrap();
        let mut stored = store
            .create(Arc::new(t.clone()), Scope::default())
            .await
            .unwrap();
        for i in 0..3 {
            stored = write(&store, &stored, chunk(&t, "a", i)).await;
        }
        // `delete` records its intent, removes the record, then the log; a crash in between
        // leaves the intent and the log.
        let meta = store.db().open_tree("store_meta").unwrap();
        meta.insert(deleting_key("reused"), &[] as &[u8]).unwrap();
        store.tasks.remove("reused").unwrap();
        store.db().flush().unwrap();
    }
    let store = Store::open(dir.path()).unwrap();
    assert!(store.events(&t.id, 0, 10).await.unwrap().is_empty());
    let meta = store.db().open_tree("store_meta").unwrap();
    assert!(
        meta.scan_prefix(b"deleting:").next().is_none(),
        "intent done"
    );
    let again = store
        .create(Arc::new(t.clone()), Scope::default())
        .await
        .unwrap();
    forget_cached(&store);
    assert_eq!(store.get(&t.id).await.unwrap().unwrap(), again);
    assert_eq!(store.events(&t.id, 0, 10).await.unwrap().len(), 1);
    // A whole delete leaves no intent behind.
    assert!(store.delete(&t.id).await.unwrap());
    assert!(meta.scan_prefix(b"deleting:").next().is_none());
}

/// Whether a task's value in tree `tasks` is a head (not a snapshot).
fn is_head(store: &Store, id: &str) -> bool {
    store
        .tasks
        .get(id)
        .unwrap()
        .unwrap()
        .starts_with(b"{\"head\":")
}

#[tokio::test]
async fn store_keeps_a_head_while_the_task_is_its_log_folded_and_a_snapshot_after() {
    use crate::store::tests::{status_event, task_at, write};
    let dir = tempfile::tempdir().unwrap();
    let scope = Scope {
        tenant: Some("t".into()),
        owner: Some("alice".into()),
    };
    let (echo, continued) = {
        let store = Store::open(dir.path()).unwrap();
        // An echo task: created with the user's message and an artifact, then COMPLETED.
        let mut t = task_at("echo", "c", TaskState::Submitted, 10);
        t.history = vec![a2a_core::Message::user_text("hi")];
        t.artifacts = vec![a2a_core::Artifact::text("answer", "echo: hi").with_id("a")];
        let created = store
            .create(Arc::new(t.clone()), scope.clone())
            .await
            .unwrap();
        assert!(
            is_head(&store, "echo"),
            "a created task is its creation event"
        );
        let mut done = t.clone();
        done.status = task_at("echo", "c", TaskState::Completed, 20).status;
        let echo = write(&store, &created, status_event(&done)).await;
        assert!(
            is_head(&store, "echo"),
            "its completion folds onto it: still a head"
        );
        let head = store.tasks.get("echo").unwrap().unwrap();
        let mut fields: serde_json::Value = serde_json::from_slice(&head).unwrap();
        let carried = fields.as_object_mut().unwrap().remove("created");
        assert_eq!(
            carried.unwrap()["task"]["status"]["state"],
            "TASK_STATE_SUBMITTED",
            "a head carries its creation event"
        );
        assert!(
            store.events.get(log_key("echo", 1)).unwrap().is_none(),
            "which the log then lacks"
        );
        assert!(
            fields.to_string().len() < 200,
            "besides it, a head holds no task: {fields}"
        );
        assert_eq!(
            list::listed(&head).unwrap(),
            Listed::of(&echo),
            "a head has every indexed field"
        );

        // A continuation: the user's message enters the history with no event of its own.
        let w = task_at("cont", "c", TaskState::InputRequired, 10);
        let asked = store
            .create(Arc::new(w.clone()), scope.clone())
            .await
            .unwrap();
        let mut next = w.clone();
        next.history
            .push(a2a_core::Message::user_text("the answer"));
        next.status = task_at("cont", "c", TaskState::Working, 30).status;
        let continued = store
            .update(Arc::new(next.clone()), asked.version, &status_event(&next))
            .await
            .unwrap();
        assert!(
            !is_head(&store, "cont"),
            "a task its log does not fold to gets a snapshot"
        );
        for (id, expected) in [("echo", &echo), ("cont", &continued)] {
            assert_eq!(
                store.get(&TaskId::from(id)).await.unwrap().as_ref(),
                Some(expected)
            );
            forget_cached(&store);
            assert_eq!(
                store.get(&TaskId::from(id)).await.unwrap().as_ref(),
                Some(expected),
                "{id} read from disk"
            );
        }
        store.sync().await.unwrap();
        (echo, continued)
    };
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(store.get(&echo.task.id).await.unwrap(), Some(echo.clone()));
    assert_eq!(
        store.get(&continued.task.id).await.unwrap(),
        Some(continued)
    );
    let page = store
        .list(&ListQuery {
            scope,
            page_size: 10,
            ..ListQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(page.total_size, 2, "counted at open from the heads");
    assert_eq!(page.tasks[1], echo);
    assert_eq!(
        store
            .tasks_in_states(&[TaskState::Completed], None, 10)
            .await
            .unwrap(),
        [echo]
    );
}

#[tokio::test]
async fn retention_walks_the_finished_listing_ranges_oldest_first_and_drops_stale_keys() {
    use crate::store::index::{self, Listed};
    use crate::store::tests::{status_event, task_at, write};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    // Finished tasks in two scopes and two finished states, and one still running.
    let scopes = [
        Scope::default(),
        Scope {
            tenant: Some("t".into()),
            owner: Some("o".into()),
        },
    ];
    let finished = [
        ("d40", 0, TaskState::Completed, 40),
        ("d10", 1, TaskState::Failed, 10),
        ("d30", 0, TaskState::Canceled, 30),
        ("d20", 1, TaskState::Completed, 20),
        ("d5000", 0, TaskState::Completed, 5_000),
    ];
    for (id, scope, state, millis) in finished {
        store
            .create(
                Arc::new(task_at(id, "c", state, millis)),
                scopes[scope].clone(),
            )
            .await
            .unwrap();
    }
    let t = task_at("r", "c", TaskState::Submitted, 5);
    let created = store
        .create(Arc::new(t.clone()), Scope::default())
        .await
        .unwrap();
    let running = write(
        &store,
        &created,
        status_event(&task_at("r", "c", TaskState::Working, 6)),
    )
    .await;
    let before = Timestamp::from_unix_millis(1_000).unwrap();
    let ids = |v: Vec<TaskId>| v.iter().map(ToString::to_string).collect::<Vec<_>>();
    assert!(
        store.lists.is_empty(),
        "no listing key yet: retention relists the finished tasks itself"
    );
    assert_eq!(
        ids(store.terminal_before(before, 10).await.unwrap()),
        ["d10", "d20", "d30", "d40"],
        "oldest first across scopes and states, before the time only"
    );
    assert_eq!(
        ids(store.terminal_before(before, 3).await.unwrap()),
        ["d10", "d20", "d30"],
        "a page"
    );
    // A key a crash left stale: the running task listed as completed.
    let stale = Listed {
        state: TaskState::Completed.as_str().into(),
        millis: 6,
        ..Listed::of(&running)
    };
    for key in index::keys(&stale) {
        store.lists.insert(key, &[] as &[u8]).unwrap();
    }
    let lists = store.lists.len();
    assert_eq!(
        ids(store.terminal_before(before, 10).await.unwrap()),
        ["d10", "d20", "d30", "d40"]
    );
    assert_eq!(
        store.lists.len(),
        lists - 1,
        "retention removed the stale key it met"
    );
    assert_eq!(store.get(&t.id).await.unwrap(), Some(running));
    for id in ["d10", "d20"] {
        assert!(store.delete(&TaskId::from(id)).await.unwrap());
    }
    assert_eq!(
        ids(store.terminal_before(before, 10).await.unwrap()),
        ["d30", "d40"]
    );
    // Reopened: the ranges are found again from the counts.
    drop(store);
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(
        ids(store.terminal_before(before, 10).await.unwrap()),
        ["d30", "d40"]
    );
}

#[tokio::test]
async fn a_completion_cut_short_before_its_head_leaves_the_running_task_and_no_retention() {
    use crate::store::tests::{status_event, task_at};
    let dir = tempfile::tempdir().unwrap();
    let t = task_at("cut", "c", TaskState::Working, 10);
    let running = {
        let store = Store::open(dir.path()).unwrap();
        let running = store
            .create(Arc::new(t.clone()), Scope::default())
            .await
            .unwrap();
        assert!(is_head(&store, "cut"));
        // What a crash after a completion's event, before its head, leaves.
        let done = task_at("cut", "c", TaskState::Completed, 20);
        store
            .events
            .insert(
                log_key("cut", 2),
                serde_json::to_vec(&status_event(&done)).unwrap(),
            )
            .unwrap();
        store.sync().await.unwrap();
        running
    };
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(
        store.get(&t.id).await.unwrap(),
        Some(running.clone()),
        "the head's version is what was committed"
    );
    assert_eq!(store.events(&t.id, 0, 10).await.unwrap().len(), 1);
    let later = Timestamp::from_unix_millis(1_000).unwrap();
    assert!(store.terminal_before(later, 10).await.unwrap().is_empty());
    // The completion written again takes the orphan's place.
    let done = task_at("cut", "c", TaskState::Completed, 30);
    let finished = crate::store::tests::write(&store, &running, status_event(&done)).await;
    assert_eq!(finished.version, 2);
    assert_eq!(
        store.terminal_before(later, 10).await.unwrap(),
        std::slice::from_ref(&finished.task.id)
    );
}
