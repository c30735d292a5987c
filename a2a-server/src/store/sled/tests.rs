//! The sled store's tests: the shared store behaviour, reopening, the listing indexes, and
//! snapshots with the log events folded onto them.

use super::*;
use std::time::Instant;

#[tokio::test]
async fn sled_store_creates_gets_and_updates() {
    let dir = tempfile::tempdir().unwrap();
    crate::store::tests::create_get_update(&SledStore::open(dir.path()).unwrap()).await;
    let dir = tempfile::tempdir().unwrap();
    crate::store::tests::task_json_is_the_tasks_json(&SledStore::open(dir.path()).unwrap()).await;
}

#[tokio::test]
async fn sled_store_keeps_a_gap_free_log_expires_old_tasks_and_claims_messages() {
    let dir = tempfile::tempdir().unwrap();
    crate::store::tests::log_pages_retention_and_claims(&SledStore::open(dir.path()).unwrap())
        .await;
}

#[tokio::test]
async fn sled_store_lists_newest_first_with_filters_and_pages() {
    let dir = tempfile::tempdir().unwrap();
    crate::store::tests::list_orders_filters_and_pages(&SledStore::open(dir.path()).unwrap()).await;
}

#[tokio::test]
async fn sled_store_pages_its_recovery_and_webhook_scans() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    crate::store::scan_tests::scans_page_with_a_cursor(&store).await;
}

#[tokio::test]
async fn sled_store_expires_only_the_old_claims() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    crate::store::scan_tests::claims_expire_by_receipt_time(&store).await;
}

#[tokio::test]
async fn sled_store_moves_a_delivery_cursor_only_from_its_expected_value() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    crate::store::scan_tests::delivery_cursor_is_compare_and_swap(&store).await;
}

#[tokio::test]
async fn sled_store_gives_a_delivery_lease_to_one_owner_until_it_expires() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    crate::store::scan_tests::delivery_lease_has_one_owner(&store).await;
}

#[tokio::test]
async fn claim_expiry_walks_a_bounded_page_from_where_it_stopped() {
    use crate::store::{ClaimStore as _, MessageClaim};
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
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
    store.db().open_tree("message_claim_times").unwrap();
    drop(store);
    let store = SledStore::open(dir.path()).unwrap();
    assert!(
        !store
            .db()
            .tree_names()
            .iter()
            .any(|n| &n[..] == b"message_claim_times")
    );
}

#[test]
fn a_directory_held_by_an_open_store_is_refused_with_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let _held = SledStore::open(dir.path()).unwrap();
    let started = Instant::now();
    let err = SledStore::open(dir.path()).unwrap_err().to_string();
    assert!(
        started.elapsed() >= LOCK_WAIT,
        "gave up before {LOCK_WAIT:?}"
    );
    assert!(err.contains("in use by another process"), "{err}");
    assert!(err.contains(&dir.path().display().to_string()), "{err}");
}

#[tokio::test]
async fn sled_store_keeps_tasks_across_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = SledStore::open(dir.path()).unwrap();
        crate::store::tests::create_get_update(&store).await;
        store.sync().await.unwrap();
    }
    let store = SledStore::open(dir.path()).unwrap();
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

#[tokio::test]
async fn sled_store_listing_follows_updates_and_deletes_and_reopens() {
    let dir = tempfile::tempdir().unwrap();
    let model = {
        let store = SledStore::open(dir.path()).unwrap();
        let model = crate::store::list_tests::list_follows_updates_and_deletes(&store).await;
        store.sync().await.unwrap();
        model
    };
    let store = SledStore::open(dir.path()).unwrap();
    crate::store::list_tests::check_against_model(&store, &model).await;
}

#[tokio::test]
async fn sled_store_lists_a_small_scope_without_visiting_other_scopes() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    let visited =
        || usize::try_from(store.visited.load(std::sync::atomic::Ordering::Relaxed)).unwrap();
    crate::store::list_tests::listing_a_small_scope_costs_its_page(&store, &visited).await;
}

#[tokio::test]
async fn sled_store_pages_list_an_updated_task_at_most_once() {
    let dir = tempfile::tempdir().unwrap();
    crate::store::list_tests::pages_stay_stable_under_updates(
        &SledStore::open(dir.path()).unwrap(),
    )
    .await;
}

#[tokio::test]
async fn sled_store_written_without_listing_indexes_gets_them_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let model = {
        let store = SledStore::open(dir.path()).unwrap();
        let model = crate::store::list_tests::fill_model(&store, 40).await;
        // What the previous version left: no `task_lists` tree and no marker.
        store.db().drop_tree("task_lists").unwrap();
        store.db().drop_tree("store_meta").unwrap();
        store.sync().await.unwrap();
        model
    };
    let store = SledStore::open(dir.path()).unwrap();
    assert!(!store.lists.is_empty(), "indexes built at open");
    crate::store::list_tests::check_against_model(&store, &model).await;
    let meta = store.db().open_tree("store_meta").unwrap();
    assert!(
        meta.get(list::LISTS_BUILT).unwrap().is_some(),
        "migration recorded"
    );
}

/// The indexed fields of task `id` as committed.
async fn listed_now(store: &SledStore, id: &str) -> Listed {
    Listed::of(&store.get(&TaskId::from(id)).await.unwrap().unwrap())
}

#[tokio::test]
async fn four_keys_per_task_from_an_older_version_become_two_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let (model, two_keys) = {
        let store = SledStore::open(dir.path()).unwrap();
        let model = crate::store::list_tests::fill_model(&store, 40).await;
        store.relist(true).unwrap();
        let two_keys = store.lists.len();
        assert_eq!(two_keys, 2 * model.len());
        // What a version before 2026-11-26 left: keys under the scope and the scope and
        // context prefixes too, and its marker.
        for id in model.keys() {
            let listed = listed_now(&store, id).await;
            for p in &index::prefixes(&listed)[..2] {
                let k = index::key(p, listed.millis, &listed.id);
                store.lists.insert(k, &[] as &[u8]).unwrap();
            }
        }
        let meta = store.db().open_tree("store_meta").unwrap();
        meta.insert("task_lists_v1", &[1u8] as &[u8]).unwrap();
        store.sync().await.unwrap();
        assert_eq!(store.lists.len(), 4 * model.len());
        (model, two_keys)
    };
    let store = SledStore::open(dir.path()).unwrap();
    assert_eq!(store.lists.len(), two_keys, "the retired keys are removed");
    crate::store::list_tests::check_against_model(&store, &model).await;
    let meta = store.db().open_tree("store_meta").unwrap();
    assert!(
        meta.get("task_lists_v1").unwrap().is_none(),
        "an older binary opening it again rebuilds its own keys"
    );
    assert!(meta.get(list::LISTS_BUILT).unwrap().is_some());
}

#[tokio::test]
async fn sled_store_skips_and_removes_a_stale_listing_key() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    let model = crate::store::list_tests::fill_model(&store, 12).await;
    // A key a crashed write left: task m001 in the wrong state at a newer time, and a task
    // that was never committed.
    let t = store.get(&TaskId::from("m001")).await.unwrap().unwrap();
    let mut wrong = index::Listed::of(&t);
    wrong.state = TaskState::Failed.as_str().to_owned();
    wrong.millis = 99_999;
    let mut ghost = wrong.clone();
    ghost.id = "ghost".into();
    for k in index::keys(&wrong).into_iter().chain(index::keys(&ghost)) {
        store.lists.insert(k, &[] as &[u8]).unwrap();
    }
    crate::store::list_tests::check_against_model(&store, &model).await;
    let stale = index::keys(&wrong)[0].clone();
    assert!(
        store.lists.get(&stale).unwrap().is_none(),
        "removed when met"
    );
}

#[tokio::test]
async fn sled_store_a_refused_write_leaves_no_listing_key() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    let model = crate::store::list_tests::fill_model(&store, 6).await;
    let (_, t) = &model["m001"];
    let elsewhere = Scope {
        tenant: Some("elsewhere".into()),
        owner: None,
    };
    let mut moved = t.clone();
    moved.status.state = TaskState::Failed;
    assert!(matches!(
        store.create(Arc::new(moved.clone()), elsewhere).await,
        Err(StoreError::AlreadyExists(_))
    ));
    let event = crate::store::tests::status_event(&moved);
    assert!(matches!(
        store.update(Arc::new(moved), 7, &event).await,
        Err(StoreError::VersionConflict { .. })
    ));
    store.relist(true).unwrap();
    assert_eq!(
        store.lists.len(),
        2 * model.len(),
        "only the committed keys"
    );
}

#[tokio::test]
async fn a_write_leaves_its_listing_keys_to_a_relist_which_writes_the_final_ones_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    let mut model = crate::store::list_tests::fill_model(&store, 12).await;
    for (i, state) in [TaskState::Working, TaskState::Completed]
        .into_iter()
        .enumerate()
    {
        crate::store::list_tests::move_task(&store, &mut model, "m001", state, 5000 + i as i64)
            .await;
    }
    assert!(store.lists.is_empty(), "no write wrote a listing key");
    store.relist(true).unwrap();
    // Only the keys of each task's committed state: none of m001's earlier states.
    let mut expected: Vec<Vec<u8>> = Vec::new();
    for id in model.keys() {
        expected.extend(index::keys(&listed_now(&store, id).await));
    }
    expected.sort();
    let keys: Vec<Vec<u8>> = store
        .lists
        .iter()
        .keys()
        .map(|k| k.unwrap().to_vec())
        .collect();
    assert_eq!(keys, expected);
    assert!(store.waiting.lock().unwrap().tasks.is_empty());
    // A listing relists first: a write just acknowledged is listed.
    crate::store::list_tests::move_task(&store, &mut model, "m002", TaskState::Failed, 6000).await;
    crate::store::list_tests::check_against_model(&store, &model).await;
}

#[tokio::test]
async fn keys_a_crash_kept_a_relist_from_writing_are_written_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let meta = |store: &SledStore| relist::listed_up_to(&store.db().open_tree(META).unwrap());
    let (model, listed) = {
        let store = SledStore::open(dir.path()).unwrap();
        let mut model = crate::store::list_tests::fill_model(&store, 30).await;
        store.relist(true).unwrap();
        let listed = meta(&store).unwrap();
        assert!(listed > 0, "a relist records its generation");
        // Written after the relist, never relisted: the store goes away as in a crash.
        crate::store::list_tests::move_task(&store, &mut model, "m004", TaskState::Failed, 7000)
            .await;
        let later = crate::store::tests::task_at("late", "c9", TaskState::Working, 8000);
        store
            .create(Arc::new(later.clone()), Scope::default())
            .await
            .unwrap();
        model.insert("late".into(), (Scope::default(), later));
        store.sync().await.unwrap();
        assert!(!store.waiting.lock().unwrap().tasks.is_empty());
        (model, listed)
    };
    let store = SledStore::open(dir.path()).unwrap();
    assert!(store.waiting.lock().unwrap().tasks.is_empty());
    // Listed without a relist: the keys are there (m004's earlier key stays, stale, until a
    // listing meets it).
    crate::store::list_tests::check_against_model(&store, &model).await;
    assert!(
        meta(&store).unwrap() > listed,
        "the keys written at open are recorded"
    );
    // And a write after the reopen is stamped above every earlier generation.
    let t = store.get(&TaskId::from("m005")).await.unwrap().unwrap();
    assert!(store.stamp(&t.task.id, false, None, false) > meta(&store).unwrap());
}

/// Waits until `task_lists` holds `keys` keys, or `within` has passed.
async fn lists_reach(
    store: &SledStore,
    keys: usize,
    within: Duration,
) -> Result<(), tokio::time::error::Elapsed> {
    tokio::time::timeout(within, async {
        while store.lists.len() < keys {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finished_tasks_are_relisted_in_the_background_and_running_ones_survive_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let finished = |i: usize| format!("f{i:05}");
    {
        let store = SledStore::open(dir.path()).unwrap();
        let running = crate::store::tests::task_at("running", "c", TaskState::Working, 1);
        store
            .create(Arc::new(running), Scope::default())
            .await
            .unwrap();
        for i in 0..RELIST_AFTER {
            let t = crate::store::tests::task_at(&finished(i), "c", TaskState::Completed, 2);
            store.create(Arc::new(t), Scope::default()).await.unwrap();
        }
        lists_reach(&store, 2 * RELIST_AFTER, Duration::from_secs(30))
            .await
            .expect("a background relist wrote the finished tasks' keys");
        // The running task still waits (its state will change again), and the generation
        // recorded as listed stays below the one it was noted in.
        let waiting: Vec<TaskId> = store
            .waiting
            .lock()
            .unwrap()
            .tasks
            .keys()
            .cloned()
            .collect();
        assert_eq!(waiting, [TaskId::from("running")]);
        store.sync().await.unwrap();
    }
    // Gone as in a crash: opening writes the running task's keys.
    let store = SledStore::open(dir.path()).unwrap();
    let page = store
        .list(&ListQuery {
            status: Some(TaskState::Working),
            page_size: 10,
            ..ListQuery::default()
        })
        .await
        .unwrap();
    let ids: Vec<&str> = page.tasks.iter().map(|t| t.task.id.as_str()).collect();
    assert_eq!(ids, ["running"]);
    assert_eq!(store.lists.len(), 2 * (RELIST_AFTER + 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn so_many_running_tasks_are_all_relisted_in_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    for i in 0..RELIST_MAX {
        let t = crate::store::tests::task_at(&format!("r{i:05}"), "c", TaskState::Working, 1);
        store.create(Arc::new(t), Scope::default()).await.unwrap();
    }
    lists_reach(&store, 2 * RELIST_MAX, Duration::from_secs(60))
        .await
        .expect("a background relist wrote every task's keys");
    assert!(store.waiting.lock().unwrap().tasks.len() < RELIST_MAX);
}

#[test]
fn a_backlog_of_waiting_tasks_is_relisted_by_the_write_that_finds_it() {
    // Off a tokio runtime no background relist starts: the backlog grows until a write
    // finds RELIST_BACKLOG tasks waiting and relists them before it returns.
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    for i in 0..RELIST_BACKLOG {
        let t = crate::store::tests::task_at(&format!("w{i:05}"), "c", TaskState::Working, 1);
        // Polled once, on no runtime: a sled write completes without waiting.
        let mut create = std::pin::pin!(store.create(Arc::new(t), Scope::default()));
        let waker = std::task::Waker::noop();
        let std::task::Poll::Ready(created) = create
            .as_mut()
            .poll(&mut std::task::Context::from_waker(waker))
        else {
            panic!("a sled write waited");
        };
        created.unwrap();
        assert!(store.waiting.lock().unwrap().tasks.len() < RELIST_BACKLOG);
    }
    assert!(
        store.waiting.lock().unwrap().tasks.is_empty(),
        "the write that found the backlog relisted every task"
    );
    assert_eq!(store.lists.len(), 2 * RELIST_BACKLOG);
}

/// Forgets every cached task, so that the next reads materialize from disk.
fn forget_cached(store: &SledStore) {
    *store.recent.lock().unwrap() = Fifo::new(RECENT_CACHE_BYTES);
}

/// The version of a task's value (snapshot or head) in tree `tasks`.
fn snapshot_version(store: &SledStore, id: &str) -> u64 {
    super::record::value_version(&store.tasks.get(id).unwrap().unwrap()).unwrap()
}

#[tokio::test]
async fn sled_store_reads_a_long_append_stream_as_its_fold_from_cache_disk_and_reopen() {
    use crate::store::tests::{fold_of_log, long_append_stream_reads_back_as_its_fold};
    let dir = tempfile::tempdir().unwrap();
    let expected = {
        let store = SledStore::open(dir.path()).unwrap();
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
    let store = SledStore::open(dir.path()).unwrap();
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
async fn sled_store_snapshots_every_so_many_events_and_folds_the_rest() {
    use crate::store::tests::{chunk, task_at, write};
    let dir = tempfile::tempdir().unwrap();
    let k = usize::try_from(SNAPSHOT_EVERY).unwrap();
    // Created WORKING (a snapshot at version 1), then `n` chunks: version n + 1.
    let cases = [k - 2, k - 1, k, k + 1, 2 * k - 1, 2 * k, 2 * k + 3];
    let mut expected = Vec::new();
    {
        let store = SledStore::open(dir.path()).unwrap();
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
    let store = SledStore::open(dir.path()).unwrap();
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
async fn sled_store_ignores_a_status_event_whose_snapshot_was_not_written() {
    use crate::store::tests::{chunk, status_event, task_at, write};
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
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
        let store = SledStore::open(dir.path()).unwrap();
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
        meta.insert(super::deleting_key("reused"), &[] as &[u8])
            .unwrap();
        store.tasks.remove("reused").unwrap();
        store.db().flush().unwrap();
    }
    let store = SledStore::open(dir.path()).unwrap();
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
fn is_head(store: &SledStore, id: &str) -> bool {
    store
        .tasks
        .get(id)
        .unwrap()
        .unwrap()
        .starts_with(b"{\"head\":")
}

#[tokio::test]
async fn sled_store_keeps_a_head_while_the_task_is_its_log_folded_and_a_snapshot_after() {
    use crate::store::tests::{status_event, task_at, write};
    let dir = tempfile::tempdir().unwrap();
    let scope = Scope {
        tenant: Some("t".into()),
        owner: Some("alice".into()),
    };
    let (echo, continued) = {
        let store = SledStore::open(dir.path()).unwrap();
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
        assert!(
            head.len() < 200,
            "a head holds no task: {}",
            String::from_utf8_lossy(&head)
        );
        assert_eq!(
            super::list::listed(&head).unwrap(),
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
    let store = SledStore::open(dir.path()).unwrap();
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
async fn only_finished_tasks_have_a_retention_key_and_an_old_stores_other_keys_go() {
    use crate::store::tests::{status_event, task_at, write};
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    let t = task_at("r", "c", TaskState::Submitted, 10);
    let created = store
        .create(Arc::new(t.clone()), Scope::default())
        .await
        .unwrap();
    let working = write(
        &store,
        &created,
        status_event(&task_at("r", "c", TaskState::Working, 20)),
    )
    .await;
    assert_eq!(
        store.index.len(),
        0,
        "an unfinished task has no retention key"
    );
    let done = write(
        &store,
        &working,
        status_event(&task_at("r", "c", TaskState::Completed, 30)),
    )
    .await;
    assert_eq!(store.index.len(), 1);
    // What a store written before 2026-11-26 holds: a key for a running task, and the old key
    // of a task that has finished since.
    let running = store
        .create(
            Arc::new(task_at("old", "c", TaskState::Working, 15)),
            Scope::default(),
        )
        .await
        .unwrap();
    store
        .index
        .insert(index_key(15, "old"), &[] as &[u8])
        .unwrap();
    store
        .index
        .insert(index_key(20, "r"), &[] as &[u8])
        .unwrap();
    let before = Timestamp::from_unix_millis(1_000).unwrap();
    assert_eq!(
        store.terminal_before(before, 10).await.unwrap(),
        std::slice::from_ref(&done.task.id)
    );
    assert_eq!(
        store.index.len(),
        1,
        "retention removed the keys that name no finished task"
    );
    assert_eq!(store.get(&running.task.id).await.unwrap(), Some(running));
    assert!(store.delete(&done.task.id).await.unwrap());
    assert_eq!(store.index.len(), 0);
}

#[tokio::test]
async fn a_completion_cut_short_before_its_head_leaves_the_running_task_and_no_retention() {
    use crate::store::tests::{status_event, task_at};
    let dir = tempfile::tempdir().unwrap();
    let t = task_at("cut", "c", TaskState::Working, 10);
    let running = {
        let store = SledStore::open(dir.path()).unwrap();
        let running = store
            .create(Arc::new(t.clone()), Scope::default())
            .await
            .unwrap();
        assert!(is_head(&store, "cut"));
        // What a crash after a completion's event and retention key, before its head, leaves.
        let done = task_at("cut", "c", TaskState::Completed, 20);
        store
            .events
            .insert(
                log_key("cut", 2),
                serde_json::to_vec(&status_event(&done)).unwrap(),
            )
            .unwrap();
        store
            .index
            .insert(index_key(20, "cut"), &[] as &[u8])
            .unwrap();
        store.sync().await.unwrap();
        running
    };
    let store = SledStore::open(dir.path()).unwrap();
    assert_eq!(
        store.get(&t.id).await.unwrap(),
        Some(running.clone()),
        "the head's version is what was committed"
    );
    assert_eq!(store.events(&t.id, 0, 10).await.unwrap().len(), 1);
    let later = Timestamp::from_unix_millis(1_000).unwrap();
    assert!(store.terminal_before(later, 10).await.unwrap().is_empty());
    assert_eq!(store.index.len(), 0, "the orphan retention key is gone");
    // The completion written again takes the orphan's place.
    let done = task_at("cut", "c", TaskState::Completed, 30);
    let finished = crate::store::tests::write(&store, &running, status_event(&done)).await;
    assert_eq!(finished.version, 2);
    assert_eq!(
        store.terminal_before(later, 10).await.unwrap(),
        std::slice::from_ref(&finished.task.id)
    );
}
