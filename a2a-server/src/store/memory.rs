//! An in-memory [`Store`](super::Store), for tests and ephemeral servers. Nothing survives a
//! restart. Its [`ClaimStore`](super::ClaimStore) and [`PushStore`](super::PushStore) are in
//! `memory/claims.rs` and `memory/push.rs`.

use super::index;
use super::lease::DeliveryLeases;
use super::{
    FastMap, ListPage, ListQuery, LoggedEvent, PushRecord, Scope, StoreError, StoredTask, TaskStore,
};
use a2a_core::{StreamResponse, Task, TaskId, TaskState, Timestamp};
use async_trait::async_trait;
use std::cmp::Reverse;
use std::collections::{BTreeSet, hash_map};
use std::ops::Bound;
use std::sync::{Arc, RwLock};

mod claims;
mod held;
mod listing;
mod log;
mod push;
#[cfg(test)]
mod tests;

pub use held::DECODED_CACHE_BYTES;
use held::{Decoded, Held};
use listing::{Filter, Key, Listing};
use log::Log;

/// Keeps tasks in a hash map plus ordered indexes: the finished ones by status time (for
/// retention and eviction) and the listing indexes (`memory/listing.rs`: a scope's tasks, by
/// context, by state, by both), so that a listing reads only the tasks of its page; message
/// claims by key and by receipt time; webhook registrations by task, with the tasks that have
/// some in order. A finished task is kept as its JSON, about half the memory of the decoded
/// task; the finished tasks read most recently are kept decoded too (up to
/// [`DECODED_CACHE_BYTES`] of their JSON).
#[derive(Debug, Default)]
pub struct MemoryStore {
    inner: RwLock<Inner>,
    /// At most this many tasks and message claims are kept (see [`MemoryStore::with_max_tasks`]).
    max_tasks: Option<usize>,
    /// The webhook delivery leases.
    leases: DeliveryLeases,
    /// Finished tasks read recently, decoded (see `memory/held.rs`).
    decoded: Decoded,
    /// Index entries visited by listings (to test that a page costs O(page)).
    #[cfg(test)]
    visited: std::sync::atomic::AtomicUsize,
}

/// A task, its version, scope and log. Boxed in the map: a store holds many tasks, and
/// growing a table of large inline values copies (and page-faults in) all of them.
#[derive(Debug)]
struct Entry {
    held: Held,
    version: u64,
    /// The task's scope, unless it is the default one (most servers have no tenants and no
    /// authentication: that saves 40 bytes a task).
    scope: Option<Box<Scope>>,
    log: Log,
}

/// A known state as one byte, its place in [`TaskState::ALL`] (what the store keeps per task
/// and per log entry; a `TaskState` takes 24 bytes); `None` for an unknown one.
fn state_byte(state: &TaskState) -> Option<u8> {
    let at = TaskState::ALL.iter().position(|s| s == state)?;
    u8::try_from(at).ok()
}

/// The state of a byte that [`state_byte`] gave.
fn byte_state(byte: u8) -> &'static TaskState {
    &TaskState::ALL[usize::from(byte)]
}

/// The default scope.
static NO_SCOPE: Scope = Scope {
    tenant: None,
    owner: None,
};

impl Entry {
    fn scope(&self) -> &Scope {
        self.scope.as_deref().unwrap_or(&NO_SCOPE)
    }

    /// The stored task (decoded, if finished).
    fn stored(&self, id: &TaskId, decoded: &Decoded) -> Result<StoredTask, StoreError> {
        Ok(StoredTask {
            task: self.held.task(id, self.version, decoded)?,
            version: self.version,
            scope: self.scope().clone(),
        })
    }
}

#[derive(Debug, Default)]
struct Inner {
    tasks: FastMap<TaskId, Box<Entry>>,
    /// The finished tasks by status time, oldest last: all that retention deletes and a bound
    /// evicts (a running task stays out, so a task that finishes costs one entry, not three
    /// changes).
    finished: BTreeSet<Key>,
    /// The listing indexes (see `memory/listing.rs`).
    lists: Listing,
    claims: FastMap<Arc<str>, claims::Kept>,
    /// The claim keys by receipt time, oldest first (for `expire_claims` and the bound).
    claim_times: claims::Times,
    /// Webhook registrations by task; only tasks that have some.
    pushes: FastMap<TaskId, PushList>,
    /// The ids of the tasks in `pushes`, in order (for `tasks_with_push_configs`).
    push_tasks: BTreeSet<String>,
}

impl Inner {
    /// Evicts finished tasks, oldest status first, until at most `keep` are left or none can
    /// go (see [`MemoryStore::with_max_tasks`]).
    fn evict(&mut self, keep: usize, leases: &DeliveryLeases, decoded: &Decoded) {
        let mut skipped = 0;
        while self.tasks.len() > keep {
            let Some(id) = self
                .finished
                .iter()
                .rev()
                .skip(skipped)
                .map(|(_, id)| id)
                .find(|id| {
                    let evictable = self.evictable(id.as_str());
                    skipped += usize::from(!evictable);
                    evictable
                })
                .cloned()
            else {
                return;
            };
            self.remove(&id, leases, decoded);
        }
    }

    /// Whether the task `id` is finished with nothing left to deliver.
    fn evictable(&self, id: &str) -> bool {
        let Some(entry) = self.tasks.get(id) else {
            return true;
        };
        let logged = entry.log.len() as u64;
        entry.held.state().is_terminal()
            && self.pushes.get(id).is_none_or(|p| {
                p.records
                    .iter()
                    .all(|r| r.dead_letter.is_some() || r.delivered >= logged)
            })
    }

    /// Removes the task `id` with its indexes and webhooks; whether it was there.
    fn remove(&mut self, id: &TaskId, leases: &DeliveryLeases, decoded: &Decoded) -> bool {
        if self.pushes.remove(id).is_some() {
            self.push_tasks.remove(id.as_str());
        }
        leases.forget(id);
        let Some(e) = self.tasks.remove(id) else {
            return false;
        };
        let (held, key) = (&e.held, e.held.key(id));
        self.lists
            .remove(e.scope(), held.context(), held.state(), &key);
        if held.state().is_terminal() {
            self.finished.remove(&key);
        }
        decoded.remove(id);
        true
    }
}

/// A task's webhook registrations in registration order, with their positions by config id.
#[derive(Debug, Default)]
struct PushList {
    records: Vec<PushRecord>,
    by_id: FastMap<String, usize>,
}

impl MemoryStore {
    /// An empty store, unbounded: tasks stay until retention removes them
    /// ([`ServerBuilder::retention`](crate::ServerBuilder::retention)).
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty store that keeps at most `max` tasks: creating one more first evicts the
    /// finished task (completed, failed, canceled or rejected) whose status is oldest. A task
    /// still running or waiting for input is never evicted, nor a finished one with webhook
    /// deliveries still to make; while only such tasks are left, the store holds more than
    /// `max`. Message ids remembered for de-duplicating retried sends are bounded by `max` too,
    /// oldest forgotten first. `max` is at least 1.
    ///
    /// ```
    /// # use a2a_server::MemoryStore;
    /// let store = MemoryStore::with_max_tasks(100_000);
    /// ```
    pub fn with_max_tasks(max: usize) -> Self {
        Self {
            max_tasks: Some(max.max(1)),
            ..Self::default()
        }
    }
}

#[async_trait]
impl TaskStore for MemoryStore {
    async fn get(&self, id: &TaskId) -> Result<Option<StoredTask>, StoreError> {
        let inner = self.inner.read().expect("store lock");
        inner
            .tasks
            .get(id)
            .map(|e| e.stored(id, &self.decoded))
            .transpose()
    }

    /// Nothing to do: a write is visible and as durable as memory gets when it returns.
    async fn sync(&self) -> Result<(), StoreError> {
        Ok(())
    }

    fn flushes(&self) -> bool {
        false
    }

    fn task_json(&self, id: &TaskId, version: u64) -> Option<Box<serde_json::value::RawValue>> {
        let inner = self.inner.read().expect("store lock");
        let entry = inner.tasks.get(id).filter(|e| e.version == version)?;
        entry.held.json().map(ToOwned::to_owned)
    }

    async fn create(&self, task: Arc<Task>, scope: Scope) -> Result<StoredTask, StoreError> {
        // Encoded first: a task that cannot be changes nothing.
        let held = Held::new(task.clone())?;
        let mut guard = self.inner.write().expect("store lock");
        if let Some(max) = self.max_tasks
            && !guard.tasks.contains_key(&task.id)
        {
            guard.evict(max - 1, &self.leases, &self.decoded);
        }
        let inner = &mut *guard;
        let hash_map::Entry::Vacant(slot) = inner.tasks.entry(task.id.clone()) else {
            return Err(StoreError::AlreadyExists(task.id.clone()));
        };
        let entry = slot.insert(Box::new(Entry {
            log: Log::created(task.clone()),
            held,
            version: 1,
            scope: (scope != NO_SCOPE).then(|| Box::new(scope)),
        }));
        let (held, scope, key) = (&entry.held, entry.scope(), entry.held.key(&task.id));
        if held.state().is_terminal() {
            inner.finished.insert(key.clone());
        }
        inner.lists.insert(scope, held.context(), held.state(), key);
        Ok(StoredTask {
            task,
            version: 1,
            scope: scope.clone(),
        })
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
        if entry.version != expected_version {
            return Err(StoreError::VersionConflict {
                expected: expected_version,
                found: entry.version,
            });
        }
        let id = &task.id;
        let (old_key, old_state) = (entry.held.key(id), entry.held.state().clone());
        // Encoded first: a task that cannot be leaves the entry as it was.
        let held = Held::new(task.clone())?;
        let current = entry.held.task(id, entry.version, &self.decoded)?;
        entry.log.push(&current, event);
        if task.status.state.is_terminal() {
            entry.log.compact(&task);
        }
        entry.held = held;
        entry.version += 1;
        let new_key = entry.held.key(id);
        // A task keeps its scope and context: only a new status time or state moves it.
        let new_state = entry.held.state();
        if old_key != new_key || old_state != *new_state {
            if old_state.is_terminal() {
                inner.finished.remove(&old_key);
            }
            if new_state.is_terminal() {
                inner.finished.insert(new_key.clone());
            }
            let (scope, context) = (entry.scope(), entry.held.context());
            let (from, to) = ((&old_state, &old_key), (new_state, new_key));
            inner.lists.moved(scope, context, from, to);
        }
        Ok(StoredTask {
            task,
            version: entry.version,
            scope: entry.scope().clone(),
        })
    }

    async fn list(&self, query: &ListQuery) -> Result<ListPage, StoreError> {
        let token = query.start_after()?;
        let filter = Filter::new(
            &query.scope,
            query.context_id.as_ref(),
            query.status.as_ref(),
        );
        let after = query.status_timestamp_after.map(Timestamp::unix_millis);
        let inner = self.inner.read().expect("store lock");
        let count = inner.lists.count(filter);
        let at_or_after = |e: &Key| after.is_none_or(|a| e.0.0 >= a);
        let total_size = if after.is_none() {
            count
        } else {
            let all = || inner.lists.range(filter, Bound::Unbounded);
            let side = |e: &Key| Ok::<_, StoreError>(at_or_after(e));
            index::count_after(count, all().map(side), all().rev().map(side))?
        };
        let start = token.map(|(millis, id)| (millis, TaskId::from(id)));
        let start = match &start {
            Some(key) => Bound::Excluded(key),
            None => Bound::Unbounded,
        };
        let mut tasks = Vec::with_capacity(query.page_size.min(128));
        let mut more = false;
        let mut visited = 0;
        for entry in inner
            .lists
            .range(filter, start)
            .take_while(|e| at_or_after(e))
        {
            visited += 1;
            if tasks.len() == query.page_size {
                more = true;
                break;
            }
            if let Some(e) = inner.tasks.get(&entry.1) {
                tasks.push(e.stored(&entry.1, &self.decoded)?);
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
        let Some(entry) = inner.tasks.get(id) else {
            return Ok(Vec::new());
        };
        let start = usize::try_from(after).unwrap_or(usize::MAX);
        if start >= entry.log.len() || limit == 0 {
            return Ok(Vec::new());
        }
        let task = entry.held.task(id, entry.version, &self.decoded)?;
        Ok((start..entry.log.len())
            .take(limit)
            .zip(after + 1..)
            .filter_map(|(i, seq)| {
                let event = entry.log.event(i, &task)?;
                Some(LoggedEvent { seq, event })
            })
            .collect())
    }

    async fn delete(&self, id: &TaskId) -> Result<bool, StoreError> {
        let mut inner = self.inner.write().expect("store lock");
        Ok(inner.remove(id, &self.leases, &self.decoded))
    }

    async fn terminal_before(
        &self,
        before: Timestamp,
        limit: usize,
    ) -> Result<Vec<TaskId>, StoreError> {
        let inner = self.inner.read().expect("store lock");
        let before = before.unix_millis();
        Ok(inner
            .finished
            .iter()
            .rev()
            .take_while(|(Reverse(ms), _)| *ms < before)
            .take(limit)
            .map(|(_, id)| id.clone())
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
        let mut ids: Vec<&TaskId> = inner
            .tasks
            .iter()
            .filter(|(id, e)| states.contains(e.held.state()) && after(id.as_str()))
            .map(|(id, _)| id)
            .collect();
        ids.sort_unstable();
        ids.truncate(limit);
        ids.into_iter()
            .filter_map(|id| inner.tasks.get(id).map(|e| e.stored(id, &self.decoded)))
            .collect()
    }
}
