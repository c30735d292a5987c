//! An in-memory [`Store`](super::Store), for tests and ephemeral servers. Nothing survives a
//! restart. Its [`ClaimStore`](super::ClaimStore) and [`PushStore`](super::PushStore) are in
//! `memory/claims.rs` and `memory/push.rs`.

use super::index;
use super::lease::DeliveryLeases;
use super::{
    FastMap, ListPage, ListQuery, LoggedEvent, MessageClaim, PushRecord, Scope, StoreError,
    StoredTask, TaskStore, order_key,
};
use a2a_core::{StreamResponse, Task, TaskId, TaskState, Timestamp};
use async_trait::async_trait;
use std::cmp::Reverse;
use std::collections::BTreeSet;
use std::ops::Bound;
use std::sync::{Arc, RwLock};

mod claims;
mod push;

/// Keeps tasks in a hash map plus ordered indexes: one by status time (for retention) and the
/// listing indexes of `store::index` (scope, context, state), so
/// that a listing reads only the tasks of its page; message claims by key and by receipt time;
/// webhook registrations by task, with the tasks that have some in order.
#[derive(Debug, Default)]
pub struct MemoryStore {
    inner: RwLock<Inner>,
    /// The webhook delivery leases.
    leases: DeliveryLeases,
    /// Index entries visited by listings (to test that a page costs O(page)).
    #[cfg(test)]
    visited: std::sync::atomic::AtomicUsize,
}

/// A task and its log. Boxed in the map: a store holds many tasks, and growing a table of
/// large inline values copies (and page-faults in) all of them.
#[derive(Debug)]
struct Entry {
    stored: StoredTask,
    /// The task's log; entry `i` has seq `i + 1`.
    log: Vec<Logged>,
}

/// A log entry. The creation snapshot shares the created task rather than copying it.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // all entries but the first are events
enum Logged {
    Created(Arc<Task>),
    Event(StreamResponse),
}

impl Logged {
    fn to_event(&self) -> StreamResponse {
        match self {
            Self::Created(task) => StreamResponse::Task(Task::clone(task)),
            Self::Event(event) => event.clone(),
        }
    }
}

#[derive(Debug, Default)]
struct Inner {
    tasks: FastMap<TaskId, Box<Entry>>,
    index: BTreeSet<(Reverse<i64>, String)>,
    /// The listing indexes: for each of the four prefixes of `index::prefixes`, its tasks,
    /// newest status first (ties by id). A prefix's count is its set's length.
    lists: FastMap<Vec<u8>, BTreeSet<(Reverse<i64>, String)>>,
    claims: FastMap<Arc<str>, Box<MessageClaim>>,
    /// The claim keys by receipt time, oldest first (for `expire_claims`).
    claim_times: BTreeSet<(i64, Arc<str>)>,
    /// Webhook registrations by task; only tasks that have some.
    pushes: FastMap<TaskId, PushList>,
    /// The ids of the tasks in `pushes`, in order (for `tasks_with_push_configs`).
    push_tasks: BTreeSet<String>,
}

impl Inner {
    /// Moves a task's listing entries from `old` to `new` (either may be absent).
    fn reindex(&mut self, old: Option<&StoredTask>, new: Option<&StoredTask>) {
        if let (Some(o), Some(n)) = (old, new) {
            if index::unmoved(o, n) {
                return;
            }
        }
        if let Some(old) = old {
            let entry = (Reverse(old.sort_millis()), old.task.id.as_str().to_owned());
            for p in index::prefixes_of(old) {
                if let Some(set) = self.lists.get_mut(&p) {
                    set.remove(&entry);
                    if set.is_empty() {
                        self.lists.remove(&p);
                    }
                }
            }
        }
        if let Some(new) = new {
            let entry = (Reverse(new.sort_millis()), new.task.id.as_str().to_owned());
            for p in index::prefixes_of(new) {
                self.lists.entry(p).or_default().insert(entry.clone());
            }
        }
    }
}

/// A task's webhook registrations in registration order, with their positions by config id.
#[derive(Debug, Default)]
struct PushList {
    records: Vec<PushRecord>,
    by_id: FastMap<String, usize>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

#[async_trait]
impl TaskStore for MemoryStore {
    async fn get(&self, id: &TaskId) -> Result<Option<StoredTask>, StoreError> {
        Ok(self
            .inner
            .read()
            .expect("store lock")
            .tasks
            .get(id)
            .map(|e| e.stored.clone()))
    }

    async fn create(&self, task: Arc<Task>, scope: Scope) -> Result<StoredTask, StoreError> {
        let mut inner = self.inner.write().expect("store lock");
        if inner.tasks.contains_key(&task.id) {
            return Err(StoreError::AlreadyExists(task.id.clone()));
        }
        let stored = StoredTask {
            task,
            version: 1,
            scope,
        };
        inner.index.insert(order_key(&stored));
        inner.reindex(None, Some(&stored));
        let entry = Box::new(Entry {
            log: vec![Logged::Created(stored.task.clone())],
            stored: stored.clone(),
        });
        inner.tasks.insert(stored.task.id.clone(), entry);
        Ok(stored)
    }

    async fn update(
        &self,
        task: Arc<Task>,
        expected_version: u64,
        event: &StreamResponse,
    ) -> Result<StoredTask, StoreError> {
        let mut guard = self.inner.write().expect("store lock");
        let inner = &mut *guard;
        let Some(entry) = inner.tasks.get_mut(&task.id) else {
            return Err(StoreError::NotFound(task.id.clone()));
        };
        let current = &mut entry.stored;
        if current.version != expected_version {
            return Err(StoreError::VersionConflict {
                expected: expected_version,
                found: current.version,
            });
        }
        let old_key = order_key(current);
        let old = current.clone();
        current.task = task;
        current.version += 1;
        let new_key = order_key(current);
        let stored = current.clone();
        entry.log.push(Logged::Event(event.clone()));
        if old_key != new_key {
            inner.index.remove(&old_key);
            inner.index.insert(new_key);
        }
        inner.reindex(Some(&old), Some(&stored));
        Ok(stored)
    }

    async fn list(&self, query: &ListQuery) -> Result<ListPage, StoreError> {
        let token = query.start_after()?;
        let prefix = index::query_prefix(query);
        let after = query.status_timestamp_after.map(Timestamp::unix_millis);
        let inner = self.inner.read().expect("store lock");
        let empty = BTreeSet::new();
        let set = inner.lists.get(&prefix).unwrap_or(&empty);
        let at_or_after = |e: &(Reverse<i64>, String)| after.is_none_or(|a| e.0.0 >= a);
        let total_size = if after.is_none() {
            set.len()
        } else {
            let side = |e: &(Reverse<i64>, String)| Ok::<_, StoreError>(at_or_after(e));
            index::count_after(set.len(), set.iter().map(side), set.iter().rev().map(side))?
        };
        let start = match token {
            Some(t) => Bound::Excluded(t),
            None => Bound::Unbounded,
        };
        let mut tasks = Vec::with_capacity(query.page_size.min(128));
        let mut more = false;
        let mut visited = 0;
        for entry in set
            .range((start, Bound::Unbounded))
            .take_while(|e| at_or_after(e))
        {
            visited += 1;
            if tasks.len() == query.page_size {
                more = true;
                break;
            }
            if let Some(e) = inner.tasks.get(entry.1.as_str()) {
                tasks.push(e.stored.clone());
            }
        }
        #[cfg(test)]
        self.visited
            .fetch_add(visited, std::sync::atomic::Ordering::Relaxed);
        let _ = visited;
        Ok(ListPage::new(tasks, more, total_size))
    }

    async fn events(
        &self,
        id: &TaskId,
        after: u64,
        limit: usize,
    ) -> Result<Vec<LoggedEvent>, StoreError> {
        let inner = self.inner.read().expect("store lock");
        let Some(log) = inner.tasks.get(id).map(|e| &e.log) else {
            return Ok(Vec::new());
        };
        let start = usize::try_from(after).unwrap_or(usize::MAX).min(log.len());
        Ok(log[start..]
            .iter()
            .take(limit)
            .zip(after + 1..)
            .map(|(event, seq)| LoggedEvent {
                seq,
                event: event.to_event(),
            })
            .collect())
    }

    async fn delete(&self, id: &TaskId) -> Result<bool, StoreError> {
        let mut inner = self.inner.write().expect("store lock");
        if inner.pushes.remove(id).is_some() {
            inner.push_tasks.remove(id.as_str());
        }
        self.leases.forget(id);
        match inner.tasks.remove(id).map(|e| e.stored) {
            Some(t) => {
                inner.index.remove(&order_key(&t));
                inner.reindex(Some(&t), None);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    async fn terminal_before(
        &self,
        before: Timestamp,
        limit: usize,
    ) -> Result<Vec<TaskId>, StoreError> {
        let inner = self.inner.read().expect("store lock");
        let before = before.unix_millis();
        Ok(inner
            .index
            .iter()
            .rev()
            .take_while(|(Reverse(ms), _)| *ms < before)
            .filter_map(|(_, id)| inner.tasks.get(id.as_str()))
            .map(|e| &e.stored)
            .filter(|t| t.task.status.state.is_terminal())
            .take(limit)
            .map(|t| t.task.id.clone())
            .collect())
    }

    async fn tasks_in_states(
        &self,
        states: &[TaskState],
        after: Option<&TaskId>,
        limit: usize,
    ) -> Result<Vec<StoredTask>, StoreError> {
        // A walk over every task: recovery runs once per start, and a memory store starts
        // empty (in-process replicas sharing one call it once per lease time); an index by
        // state would cost every write instead.
        let inner = self.inner.read().expect("store lock");
        let after = |id: &str| after.is_none_or(|a| id > a.as_str());
        let mut ids: Vec<&str> = inner
            .tasks
            .values()
            .map(|e| &e.stored.task)
            .filter(|t| states.contains(&t.status.state) && after(t.id.as_str()))
            .map(|t| t.id.as_str())
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids.truncate(limit);
        Ok(ids
            .into_iter()
            .filter_map(|id| inner.tasks.get(id).map(|e| e.stored.clone()))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn memory_store_creates_gets_and_updates() {
        crate::store::tests::create_get_update(&MemoryStore::new()).await;
    }

    #[tokio::test]
    async fn memory_store_keeps_a_gap_free_log_expires_old_tasks_and_claims_messages() {
        crate::store::tests::log_pages_retention_and_claims(&MemoryStore::new()).await;
    }

    #[tokio::test]
    async fn memory_store_reads_a_long_append_stream_as_its_fold() {
        crate::store::tests::long_append_stream_reads_back_as_its_fold(&MemoryStore::new()).await;
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

    #[tokio::test]
    async fn memory_store_pages_list_an_updated_task_at_most_once() {
        crate::store::list_tests::pages_stay_stable_under_updates(&MemoryStore::new()).await;
    }
}
