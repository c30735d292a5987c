//! The sled store's listing indexes: the listing keys follow updates, deletes and reopens,
//! older layouts are migrated at open, and the relist writes the final keys once (in the
//! background, or by the write that finds a backlog), surviving crashes.

use super::*;

#[tokio::test]
async fn store_listing_follows_updates_and_deletes_and_reopens() {
    let dir = tempfile::tempdir().unwrap();
    let model = {
        let store = Store::open(dir.path()).unwrap();
        let model = crate::store::list_tests::list_follows_updates_and_deletes(&store).await;
        store.sync().await.unwrap();
        model
    };
    let store = Store::open(dir.path()).unwrap();
    crate::store::list_tests::check_against_model(&store, &model).await;
}

#[tokio::test]
async fn store_lists_a_small_scope_without_visiting_other_scopes() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let visited =
        || usize::try_from(store.visited.load(std::sync::atomic::Ordering::Relaxed)).unwrap();
    crate::store::list_tests::listing_a_small_scope_costs_its_page(&store, &visited).await;
}

#[tokio::test]
async fn store_pages_list_an_updated_task_at_most_once() {
    let dir = tempfile::tempdir().unwrap();
    crate::store::list_tests::pages_stay_stable_under_updates(&Store::open(dir.path()).unwrap())
        .await;
}

#[tokio::test]
async fn store_written_without_listing_indexes_gets_them_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let model = {
        let store = Store::open(dir.path()).unwrap();
        let model = crate::store::list_tests::fill_model(&store, 40).await;
        // What the previous version left: no `task_lists` tree and no marker.
        store.db().drop_tree("task_lists").unwrap();
        store.db().drop_tree("store_meta").unwrap();
        store.sync().await.unwrap();
        model
    };
    let store = Store::open(dir.path()).unwrap();
    assert!(!store.lists.is_empty(), "indexes built at open");
    crate::store::list_tests::check_against_model(&store, &model).await;
    let meta = store.db().open_tree("store_meta").unwrap();
    assert!(
        meta.get(list::LISTS_BUILT).unwrap().is_some(),
        "migration recorded"
    );
}

/// The indexed fields of task `id` as committed.
async fn listed_now(store: &Store, id: &str) -> Listed {
    Listed::of(&store.get(&TaskId::from(id)).await.unwrap().unwrap())
}

#[tokio::test]
async fn four_keys_per_task_from_an_older_version_become_two_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let (model, two_keys) = {
        let store = Store::open(dir.path()).unwrap();
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
    let store = Store::open(dir.path()).unwrap();
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
async fn store_skips_and_removes_a_stale_listing_key() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
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
async fn store_a_refused_write_leaves_no_listing_key() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
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
    let store = Store::open(dir.path()).unwrap();
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
        .map(|e| e.map(|(k, _)| k))
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
    let meta = |store: &Store| relist::listed_up_to(&store.db().open_tree(META).unwrap());
    let (model, listed) = {
        let store = Store::open(dir.path()).unwrap();
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
    let store = Store::open(dir.path()).unwrap();
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
    store: &Store,
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
        let store = Store::open(dir.path()).unwrap();
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
    let store = Store::open(dir.path()).unwrap();
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
    let store = Store::open(dir.path()).unwrap();
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
    let store = Store::open(dir.path()).unwrap();
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
