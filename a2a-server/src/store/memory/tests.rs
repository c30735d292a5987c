//! The memory store against the store contract, and its own bounds: eviction, claim expiry,
//! finished tasks kept encoded.

use super::*;
use crate::store::{ClaimStore, MessageClaim, PushStore};

#[tokio::test]
async fn memory_store_creates_gets_and_updates() {
    crate::store::tests::create_get_update(&MemoryStore::new()).await;
}

#[tokio::test]
async fn memory_store_gives_a_finished_tasks_json_as_serde_writes_it() {
    let store = MemoryStore::new();
    crate::store::tests::task_json_is_the_tasks_json(&store).await;
    let id = TaskId::from("json");
    assert!(
        store.task_json(&id, 2).is_some(),
        "a finished task's JSON is kept"
    );
}

#[tokio::test]
async fn memory_store_keeps_a_gap_free_log_expires_old_tasks_and_claims_messages() {
    crate::store::tests::log_pages_retention_and_claims(&MemoryStore::new()).await;
}

#[tokio::test]
async fn memory_store_reads_a_long_append_stream_as_its_fold() {
    crate::store::tests::long_append_stream_reads_back_as_its_fold(&MemoryStore::new()).await;
    crate::store::tests::batch_writes_read_back_as_single_writes(&MemoryStore::new()).await;
}

#[tokio::test]
async fn memory_store_lists_newest_first_with_filters_and_pages() {
    crate::store::tests::list_orders_filters_and_pages(&MemoryStore::new()).await;
}

#[tokio::test]
async fn memory_store_listing_follows_updates_and_deletes() {
    crate::store::list_tests::list_follows_updates_and_deletes(&MemoryStore::new()).await;
}

#[tokio::test]
async fn memory_store_lists_a_small_scope_without_visiting_other_scopes() {
    let store = MemoryStore::new();
    let visited = || store.visited.load(std::sync::atomic::Ordering::Relaxed);
    crate::store::list_tests::listing_a_small_scope_costs_its_page(&store, &visited).await;
}

#[tokio::test]
async fn memory_store_pages_its_recovery_and_webhook_scans() {
    crate::store::scan_tests::scans_page_with_a_cursor(&MemoryStore::new()).await;
}

#[tokio::test]
async fn memory_store_expires_only_the_old_claims() {
    crate::store::scan_tests::claims_expire_by_receipt_time(&MemoryStore::new()).await;
}

#[tokio::test]
async fn memory_store_moves_a_delivery_cursor_only_from_its_expected_value() {
    crate::store::scan_tests::delivery_cursor_is_compare_and_swap(&MemoryStore::new()).await;
}

#[tokio::test]
async fn memory_store_gives_a_delivery_lease_to_one_owner_until_it_expires() {
    crate::store::scan_tests::delivery_lease_has_one_owner(&MemoryStore::new()).await;
}

/// Creates `id` at `millis` in `state`; a finished task is created working and then
/// finished, as a server writes it.
async fn put(store: &MemoryStore, id: &str, state: TaskState, millis: i64) {
    use crate::store::tests::{status_event, task_at};
    let working = task_at(id, "c", TaskState::Working, millis);
    store
        .create(Arc::new(working), Scope::default())
        .await
        .unwrap();
    if state != TaskState::Working {
        let done = task_at(id, "c", state, millis);
        let event = status_event(&done);
        store.update(Arc::new(done), 1, &event).await.unwrap();
    }
}

async fn ids(store: &MemoryStore) -> Vec<String> {
    let mut ids: Vec<String> = store
        .inner
        .read()
        .unwrap()
        .tasks
        .keys()
        .map(|id| id.to_string())
        .collect();
    ids.sort();
    ids
}

#[tokio::test]
async fn a_bounded_memory_store_evicts_the_oldest_finished_tasks_first() {
    let store = MemoryStore::with_max_tasks(3);
    put(&store, "a-running", TaskState::Working, 1).await;
    put(&store, "b-done", TaskState::Completed, 2).await;
    put(&store, "c-failed", TaskState::Failed, 3).await;
    put(&store, "d-done", TaskState::Completed, 4).await;
    // The oldest task still runs: the oldest finished one went.
    assert_eq!(ids(&store).await, ["a-running", "c-failed", "d-done"]);
    // A finished task with a webhook delivery still to make stays.
    let config = serde_json::json!({"taskId": "c-failed", "id": "w", "url": "http://127.0.0.1:9/"});
    store
        .put_push_config(PushRecord {
            config: serde_json::from_value(config).unwrap(),
            v03: false,
            generations: false,
            delivered: 1,
            dead_letter: None,
        })
        .await
        .unwrap();
    put(&store, "e-done", TaskState::Completed, 5).await;
    assert_eq!(ids(&store).await, ["a-running", "c-failed", "e-done"]);
    // Nothing left to evict but the newest: it goes, the others stay.
    put(&store, "f-input", TaskState::InputRequired, 6).await;
    assert_eq!(ids(&store).await, ["a-running", "c-failed", "f-input"]);
    // Only tasks that cannot go are left: the store holds more than its bound.
    put(&store, "g-running", TaskState::Working, 7).await;
    assert_eq!(
        ids(&store).await,
        ["a-running", "c-failed", "f-input", "g-running"]
    );
    // The listing indexes followed every eviction.
    let query = ListQuery {
        page_size: 10,
        ..ListQuery::default()
    };
    let page = store.list(&query).await.unwrap();
    assert_eq!(page.total_size, 4);
    assert_eq!(page.tasks.len(), 4);
}

#[tokio::test]
async fn a_bounded_memory_store_forgets_its_oldest_message_ids() {
    let store = MemoryStore::with_max_tasks(2);
    let claim = |ms| MessageClaim {
        task_id: TaskId::from("t"),
        reply: None,
        received_ms: ms,
    };
    for (key, ms) in [("m1", 1), ("m2", 2), ("m3", 3)] {
        assert!(store.claim_message(key, claim(ms)).await.unwrap().is_none());
    }
    // m1 is forgotten: claiming it again succeeds; m3 is remembered.
    assert!(store.claim_message("m3", claim(4)).await.unwrap().is_some());
    assert!(store.claim_message("m1", claim(5)).await.unwrap().is_none());
}

/// A finished task is kept as its JSON and reads back equal, field for field, from the
/// store and from its log; a second read shares the first one's decoded task; writing the
/// task again (a store is told to, whatever the lifecycle says) or deleting it is seen by
/// the next read.
#[tokio::test]
async fn a_finished_task_is_kept_encoded_and_reads_back_equal() {
    use crate::store::tests::{chunk, fold_of_log, status_event, task_at, write};
    let store = MemoryStore::new();
    let held = |id: &str| {
        let inner = store.inner.read().unwrap();
        matches!(inner.tasks[id].held, Held::Finished(_))
    };
    let mut t = task_at("t", "ctx", TaskState::Working, 5);
    t.history = vec![a2a_core::Message::user_text("hello")];
    t.metadata = Some(serde_json::from_str(r#"{"n": 1, "f": 0.5, "s": "\u00e9\n"}"#).unwrap());
    let mut stored = store.create(Arc::new(t), Scope::default()).await.unwrap();
    stored = write(&store, &stored, chunk(&stored.task, "a", 0)).await;
    assert!(!held("t"), "a running task is kept as it is");
    let mut done = Task::clone(&stored.task);
    done.status = a2a_core::TaskStatus::new(TaskState::Completed);
    done.status.timestamp = Timestamp::from_unix_millis(9);
    let event = status_event(&done);
    let finished = store
        .update(Arc::new(done.clone()), stored.version, &event)
        .await
        .unwrap();
    assert!(held("t"), "a finished task is kept encoded");

    let first = store.get(&TaskId::from("t")).await.unwrap().unwrap();
    assert_eq!(first, finished);
    assert_eq!(*first.task, done);
    let again = store.get(&TaskId::from("t")).await.unwrap().unwrap();
    assert!(Arc::ptr_eq(&first.task, &again.task), "decoded once");
    assert_eq!(
        fold_of_log(&store, &TaskId::from("t")).await,
        (done.clone(), 3)
    );
    let query = ListQuery {
        context_id: Some(a2a_core::ContextId::from("ctx")),
        status: Some(TaskState::Completed),
        page_size: 10,
        ..ListQuery::default()
    };
    assert_eq!(
        store.list(&query).await.unwrap().tasks,
        std::slice::from_ref(&finished)
    );
    let terminal = store.terminal_before(Timestamp::from_unix_millis(10).unwrap(), 10);
    assert_eq!(terminal.await.unwrap(), [TaskId::from("t")]);

    let mut changed = done.clone();
    changed.status.timestamp = Timestamp::from_unix_millis(11);
    let event = status_event(&changed);
    store
        .update(Arc::new(changed.clone()), finished.version, &event)
        .await
        .unwrap();
    let read = store.get(&TaskId::from("t")).await.unwrap().unwrap();
    assert_eq!((read.version, &*read.task), (4, &changed));
    assert_eq!(store.list(&query).await.unwrap().tasks, [read]);

    assert!(store.delete(&TaskId::from("t")).await.unwrap());
    assert_eq!(store.get(&TaskId::from("t")).await.unwrap(), None);
    assert!(!store.decoded.holds(&TaskId::from("t")), "forgotten");
    assert_eq!(store.list(&query).await.unwrap().tasks, []);
}

#[test]
fn every_known_state_is_one_byte_and_back() {
    for state in TaskState::ALL {
        assert_eq!(byte_state(state_byte(state).unwrap()), state);
    }
    assert_eq!(
        state_byte(&TaskState::Unknown("TASK_STATE_NEW".into())),
        None
    );
}

#[tokio::test]
async fn memory_store_pages_list_an_updated_task_at_most_once() {
    crate::store::list_tests::pages_stay_stable_under_updates(&MemoryStore::new()).await;
}
