//! Listing behaviour every store must have, beyond `tests::list_orders_filters_and_pages`:
//! scopes kept apart, pages that cost O(page), stable pages under concurrent updates, and
//! totals that follow every write. Each store runs these.

use super::tests::{status_event, task_at};
use super::{ListQuery, Scope, StoredTask, TaskStore};
use a2a_core::{Task, TaskId, TaskState, Timestamp};
use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::sync::Arc;

/// What a store should hold: task id → (scope, task).
pub(crate) type Model = BTreeMap<String, (Scope, Task)>;

fn tenant(name: &str) -> Scope {
    Scope {
        tenant: Some(name.into()),
        owner: None,
    }
}

const STATES: [TaskState; 3] = [
    TaskState::Working,
    TaskState::Completed,
    TaskState::InputRequired,
];

/// Creates `n` tasks in tenants `a` and `b`, spread over contexts `c0`–`c2` and three states,
/// some sharing a status time (ties are ordered by id).
pub(crate) async fn fill_model(store: &dyn TaskStore, n: usize) -> Model {
    let mut model = Model::new();
    for i in 0..n {
        let scope = tenant(if i % 3 == 0 { "b" } else { "a" });
        let t = task_at(
            &format!("m{i:03}"),
            &format!("c{}", i % 4 % 3),
            STATES[i % 5 % 3].clone(),
            1000 + (i as i64 / 2),
        );
        store
            .create(Arc::new(t.clone()), scope.clone())
            .await
            .unwrap();
        model.insert(t.id.to_string(), (scope, t));
    }
    model
}

/// Pages through every filter combination with a small page size and compares the ids, their
/// order and `totalSize` (on every page) with the model.
pub(crate) async fn check_against_model(store: &dyn TaskStore, model: &Model) {
    let mid = {
        let mut ms: Vec<i64> = model
            .values()
            .map(|(_, t)| t.status.timestamp.map_or(0, Timestamp::unix_millis))
            .collect();
        ms.sort_unstable();
        ms.get(ms.len() / 2).copied().unwrap_or(0)
    };
    for scope in [tenant("a"), tenant("b"), tenant("nobody")] {
        for ctx in [None, Some("c0"), Some("c2")] {
            for state in [None, Some(TaskState::Working), Some(TaskState::Completed)] {
                for after in [None, Timestamp::from_unix_millis(mid)] {
                    let query = ListQuery {
                        scope: scope.clone(),
                        context_id: ctx.map(Into::into),
                        status: state.clone(),
                        status_timestamp_after: after,
                        page_size: 4,
                        page_token: None,
                    };
                    let mut expected: Vec<(Reverse<i64>, TaskId)> = model
                        .values()
                        .map(|(s, t)| StoredTask {
                            task: Arc::new(t.clone()),
                            version: 1,
                            scope: s.clone(),
                        })
                        .filter(|t| query.matches(t))
                        .map(|t| super::order_key(&t))
                        .collect();
                    expected.sort();
                    let expected: Vec<String> =
                        expected.into_iter().map(|k| k.1.into_string()).collect();
                    let (seen, totals) = page_all(store, query.clone()).await;
                    assert_eq!(seen, expected, "{query:?}");
                    assert!(
                        totals.iter().all(|n| *n == expected.len()),
                        "{query:?}: totalSize {totals:?}, expected {}",
                        expected.len()
                    );
                }
            }
        }
    }
}

/// Every id of a listing, page by page, and each page's `totalSize`.
async fn page_all(store: &dyn TaskStore, mut query: ListQuery) -> (Vec<String>, Vec<usize>) {
    let (mut seen, mut totals) = (Vec::new(), Vec::new());
    loop {
        let page = store.list(&query).await.unwrap();
        assert!(page.tasks.len() <= query.page_size);
        totals.push(page.total_size);
        seen.extend(page.tasks.iter().map(|t| t.task.id.to_string()));
        match page.next_page_token {
            Some(token) => query.page_token = Some(token),
            None => return (seen, totals),
        }
    }
}

/// Moves a task to a new state and status time, in the store and the model.
pub(crate) async fn move_task(
    store: &dyn TaskStore,
    model: &mut Model,
    id: &str,
    state: TaskState,
    millis: i64,
) {
    let stored = store.get(&TaskId::from(id)).await.unwrap().unwrap();
    let mut t = Task::clone(&stored.task);
    t.status.state = state;
    t.status.timestamp = Timestamp::from_unix_millis(millis);
    store
        .update(Arc::new(t.clone()), stored.version, &status_event(&t))
        .await
        .unwrap();
    model.get_mut(id).unwrap().1 = t;
}

/// Totals and pages follow creates, state and time changes, and deletes.
pub(crate) async fn list_follows_updates_and_deletes(store: &dyn TaskStore) -> Model {
    let mut model = fill_model(store, 60).await;
    check_against_model(store, &model).await;
    move_task(store, &mut model, "m001", TaskState::Completed, 5000).await;
    move_task(store, &mut model, "m002", TaskState::InputRequired, 1001).await;
    move_task(store, &mut model, "m004", TaskState::Working, 10).await;
    for id in ["m005", "m010", "m011", "m030"] {
        assert!(store.delete(&TaskId::from(id)).await.unwrap());
        model.remove(id);
    }
    check_against_model(store, &model).await;
    model
}

/// A listing in a small scope visits only its page, however many tasks other scopes hold:
/// `visited` reads the store's count of index entries visited by listings (ours only: not in
/// the public suite).
#[cfg(test)]
pub(crate) async fn listing_a_small_scope_costs_its_page(
    store: &dyn TaskStore,
    visited: &dyn Fn() -> usize,
) {
    for i in 0..20_000 {
        let t = task_at(&format!("big{i:05}"), "c0", TaskState::Completed, 2000 + i);
        store.create(Arc::new(t), tenant("big")).await.unwrap();
    }
    let model = fill_model(store, 30).await;
    let page_size = 5;
    for ctx in [None, Some("c0")] {
        for state in [None, Some(TaskState::Completed)] {
            for after in [None, Timestamp::from_unix_millis(1005)] {
                let query = ListQuery {
                    scope: tenant("a"),
                    context_id: ctx.map(Into::into),
                    status: state.clone(),
                    status_timestamp_after: after,
                    page_size,
                    page_token: None,
                };
                let before = visited();
                let page = store.list(&query).await.unwrap();
                let cost = visited() - before;
                assert!(
                    cost <= page_size + 1,
                    "{query:?} visited {cost} index entries for a page of {page_size}"
                );
                assert!(
                    page.tasks.iter().all(|t| t.scope == tenant("a")),
                    "another scope's task listed"
                );
            }
        }
    }
    check_against_model(store, &model).await;
}

/// A task updated while a client pages through a listing is listed at most once, and every
/// task that was not moved is listed exactly once.
pub(crate) async fn pages_stay_stable_under_updates(store: &dyn TaskStore) {
    let mut model = Model::new();
    for i in 0..30 {
        let t = task_at(&format!("s{i:02}"), "c", TaskState::Working, 1000 + i);
        store
            .create(Arc::new(t.clone()), Scope::default())
            .await
            .unwrap();
        model.insert(t.id.to_string(), (Scope::default(), t));
    }
    for status in [None, Some(TaskState::Working)] {
        let mut query = ListQuery {
            status: status.clone(),
            page_size: 10,
            ..ListQuery::default()
        };
        let first = store.list(&query).await.unwrap();
        let mut seen: Vec<String> = first.tasks.iter().map(|t| t.task.id.to_string()).collect();
        // A listed task moves to the front in a new state, an unlisted one moves ahead of the
        // cursor, another changes state in place, and one listed task changes state in place.
        let round = if status.is_none() { 0 } else { 100_000 };
        move_task(
            store,
            &mut model,
            "s25",
            TaskState::InputRequired,
            9000 + round,
        )
        .await;
        move_task(
            store,
            &mut model,
            "s10",
            TaskState::InputRequired,
            9001 + round,
        )
        .await;
        move_task(store, &mut model, "s05", TaskState::Working, 1005).await;
        query.page_token = first.next_page_token;
        let (rest, _) = page_all(store, query).await;
        seen.extend(rest);
        for id in model.keys() {
            let n = seen.iter().filter(|s| *s == id).count();
            assert!(n <= 1, "{id} listed {n} times: {seen:?}");
            if !["s25", "s10"].contains(&id.as_str()) {
                assert_eq!(n, 1, "{id} missing: {seen:?}");
            }
        }
        // Back to working for the next round.
        for id in ["s25", "s10"] {
            move_task(store, &mut model, id, TaskState::Working, 20_000 + round).await;
        }
    }
}
