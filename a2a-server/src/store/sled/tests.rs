//! The sled store's tests: the shared store behaviour, reopening, and the listing indexes.

use super::*;
use std::time::Instant;

#[tokio::test]
async fn sled_store_creates_gets_and_updates() {
    let dir = tempfile::tempdir().unwrap();
    crate::store::tests::create_get_update(&SledStore::open(dir.path()).unwrap()).await;
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
    assert_eq!(
        store.lists.len(),
        4 * model.len(),
        "only the committed keys"
    );
}
