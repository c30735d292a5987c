//! The durable [`Store`](super::Store) in an embedded database: nothing to install, data in one
//! directory. The store's logic is written once over a small engine trait ([`Kv`]: named
//! ordered trees, point reads and writes, a compare-and-swap, scans, a flush; `kv/engine.rs`),
//! implemented for [sled](https://docs.rs/sled) (`SledStore`, the default) and, with the
//! `fjall` feature, for [fjall](https://docs.rs/fjall) (`FjallStore`, `kv/fjall_db.rs`, where
//! each tree below is a partition). The [`TaskStore`] is here; the `ClaimStore` is in
//! `kv/claims.rs` and the `PushStore` in `kv/push.rs`.
//!
//! Layout: tree `tasks` maps a task id to its JSON snapshot (a [`StoredTask`] at the version
//! it was taken) or head (its version, indexed fields and creation event, see `kv/record.rs`);
//! tree `task_events` maps `(id length, u16 big-endian) ++ id ++ (seq, u64 big-endian)` to the
//! JSON event, so that a task's log is one ordered range (a head's creation event, seq 1, is in
//! the head, and so are the small events after it that the batch creating the task held); tree
//! `task_lists` holds the listing indexes of `store::index` (keys under scope+state and
//! scope+context+state prefixes, newest first; a listing without a state filter merges one
//! range per state), so that a listing reads only its page, and retention walks the ranges of
//! the finished states from their oldest end (the tree `task_index` that stores before issue 41
//! kept for retention is dropped at open); recovery pages through `tasks` itself, in id order,
//! reading each record's state (it runs once per start, and an index by state would cost every
//! write); tree `message_claims` maps a deduplication key to its claim (expiry walks it with a
//! cursor, a bounded page per sweep: see `kv/claims.rs`); trees `push_configs` and
//! `push_config_ids` hold webhook registrations.
//!
//! Writes are event-sourced (see `store/kv/record.rs`): a task's current version is its
//! value in `tasks` (a snapshot, or a head over its creation event) with the log events after
//! it applied. A status update writes a value (a head while the task is its log folded, else a
//! snapshot) with its event; an artifact chunk or an agent message writes only its event,
//! until [`SNAPSHOT_EVERY`] events have accumulated. Status updates alone move the listing
//! keys, and a write does not write them: a *relist* does, before every listing and in the
//! background, for every task whose keys lag, so that a short task's keys are written once
//! (see `store/kv/relist.rs`). [`TaskStore::sync`] flushes to disk, and the store says so
//! ([`TaskStore::flushes`]): an agent's changes wait for that flush in the engine, not the
//! agent (see `engine/cell.rs`).
//!
//! Where the engine runs: what waits on the disk runs on tokio's blocking pool (the flush of
//! [`TaskStore::sync`], listings, and the scans of recovery, retention and webhook resumption);
//! a point read or write runs inline, as it works in the engine's cache and log buffer (a
//! write's durability is the flush's), and handing each one to the blocking pool would cost
//! more than the call itself.
//!
//! Recently written and read tasks are also kept materialized (up to [`RECENT_CACHE_BYTES`]
//! of snapshot and event JSON): reading one, or writing its next version, then neither reads
//! nor decodes anything. Every write goes through the store, so the cached task is always the
//! committed one.

use super::index::{self, Counts, Listed};
use super::lease::DeliveryLeases;
use super::{
    BatchWrite, ListPage, ListQuery, LoggedEvent, Scope, StoreError, StoredTask, TaskStore,
};
use crate::cache::Fifo;
use a2a_core::{StreamResponse, Task, TaskId, TaskState, Timestamp};
use async_trait::async_trait;
use std::collections::HashMap;
#[cfg(test)]
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod batch;
mod claims;
mod commit;
mod engine;
#[cfg(feature = "fjall")]
mod fjall_db;
mod list;
mod open;
mod push;
mod record;
mod relist;

pub use claims::CLAIM_EXPIRY_WALK;
pub use engine::{Entries, Kv, KvTree};
#[cfg(feature = "fjall")]
pub use fjall_db::{FjallDb, FjallStore, FjallTree};
use record::Record;
pub use record::{HEAD_LOG_BYTES, SNAPSHOT_EVERY};
pub use relist::{RELIST_AFTER, RELIST_AGE, RELIST_BACKLOG, RELIST_MAX};

/// A task store in an embedded database directory: [`SledStore`] (sled) or, with the `fjall`
/// feature, `FjallStore` (fjall). The engine is `K` (see [`Kv`]); the records, their keys and
/// every guarantee are the same on each.
#[derive(Clone, Debug)]
pub struct EmbeddedStore<K: Kv> {
    db: K,
    tasks: K::Tree,
    /// The listing indexes (see `store::index`), written by relists (`kv/relist.rs`).
    lists: K::Tree,
    events: K::Tree,
    /// The message claims (see `kv/claims.rs`).
    claims: K::Tree,
    /// Where the last `expire_claims` walk stopped (see `kv/claims.rs`).
    claim_cursor: Arc<Mutex<Option<Vec<u8>>>>,
    pushes: K::Tree,
    /// Webhook registrations by task and config id (`log_prefix(task) + id`): the key of each
    /// in `pushes`, whose keys keep registration order.
    push_ids: K::Tree,
    /// How many webhook registrations a task has, for the tasks asked about since the store
    /// opened (counted from `pushes` on the first question, then kept up to date: the lock is
    /// held across each write to `pushes` that adds or removes a registration, and across
    /// the first count).
    push_counts: Arc<Mutex<HashMap<TaskId, usize>>>,
    /// Group commit: the writes counted and flushed (see `kv/commit.rs`).
    commit: Arc<commit::GroupCommit>,
    /// How many tasks each listing prefix has: a `ListTasks` reads its `totalSize` here instead
    /// of decoding tasks. Counted from the `tasks` tree when the store opens, then kept up to
    /// date by every write.
    counts: Arc<Mutex<Counts>>,
    /// Write locks by task id hash: held by a write from its version check to its last index
    /// removal (so that writes of one task are serialized and the check is exact), by a
    /// relist while it writes a task's listing keys (so that it reads a committed record), and
    /// by a listing that removes an index entry it found stale, so that the listing cannot
    /// remove the entry of a write still in flight.
    stripes: Arc<[Mutex<()>]>,
    /// Index entries visited by listings (to test that a page costs O(page)).
    #[cfg(test)]
    visited: Arc<AtomicU64>,
    /// Recently used tasks, materialized (see `record::Record`).
    recent: Arc<Mutex<Fifo<Record>>>,
    /// The webhook delivery leases: in memory, since only this process opens the directory.
    leases: Arc<DeliveryLeases>,
    /// The tasks whose listing keys are not written yet (see `kv/relist.rs`).
    waiting: Arc<Mutex<relist::Waiting>>,
    /// Held by the relist in progress: one at a time.
    relisting: Arc<Mutex<()>>,
}

/// The task store on sled, the default store: `SledStore::open(dir)`.
#[cfg(feature = "sled")]
pub type SledStore = EmbeddedStore<sled::Db>;

/// How many bytes of tasks the recent-task cache holds, counted as the JSON size of each
/// task's snapshot and of the log events after it.
pub const RECENT_CACHE_BYTES: usize = 16 * 1024 * 1024;

/// The default page-cache size: bounds the store's memory whatever the number of tasks.
pub const DEFAULT_CACHE_BYTES: u64 = 64 * 1024 * 1024;

/// How long opening waits for the directory's lock (see [`SledStore::open_with_cache`]).
pub const LOCK_WAIT: Duration = Duration::from_secs(3);

fn backend(e: impl std::error::Error + Send + Sync + 'static) -> StoreError {
    StoreError::Backend(Box::new(e))
}

fn backend_msg(e: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(format!("corrupt key: {e}").into())
}

fn log_prefix(id: &str) -> Vec<u8> {
    let len = u16::try_from(id.len()).unwrap_or(u16::MAX);
    let mut key = Vec::with_capacity(2 + id.len() + 8);
    key.extend_from_slice(&len.to_be_bytes());
    key.extend_from_slice(id.as_bytes());
    key
}

/// The `push_ids` key of a webhook registration.
fn push_id_key(task: &str, id: &str) -> Vec<u8> {
    let mut key = log_prefix(task);
    key.extend_from_slice(id.as_bytes());
    key
}

/// Adds the `push_ids` entries that registrations stored before that index existed lack
/// (or that a crash between the two writes of a put left out).
fn index_push_ids<T: KvTree>(pushes: &T, push_ids: &T) -> Result<(), StoreError> {
    for entry in pushes.iter() {
        let (key, _) = entry.map_err(backend)?;
        // `log_prefix(task)`, an 8-byte stamp, then the config id.
        let Some(len) = key
            .get(..2)
            .map(|l| usize::from(u16::from_be_bytes([l[0], l[1]])))
        else {
            continue;
        };
        let Some(id) = key.get(2 + len + 8..) else {
            continue;
        };
        let mut ids_key = key[..2 + len].to_vec();
        ids_key.extend_from_slice(id);
        if push_ids.get(&ids_key).map_err(backend)?.as_deref() != Some(&key[..]) {
            push_ids.insert(ids_key, key).map_err(backend)?;
        }
    }
    Ok(())
}

/// Tree `store_meta`: markers of one-time index builds, and the intents of deletes.
const META: &str = "store_meta";

/// The `store_meta` key of a delete in progress.
fn deleting_key(id: &str) -> Vec<u8> {
    let mut key = b"deleting:".to_vec();
    key.extend_from_slice(id.as_bytes());
    key
}

/// Finishes the deletes a crash cut short (at open): a task whose record is gone loses what
/// is left of its log and registrations; one whose record is still there was not touched, and
/// retention deletes it again.
fn finish_deletes<K: Kv>(db: &K, tasks: &K::Tree) -> Result<(), StoreError> {
    let meta = db.open_tree(META).map_err(backend)?;
    for entry in meta.scan_prefix(b"deleting:") {
        let (key, _) = entry.map_err(backend)?;
        let id = &key[b"deleting:".len()..];
        if !tasks.contains_key(id).map_err(backend)? {
            let prefix = log_prefix(std::str::from_utf8(id).map_err(backend)?);
            for tree in ["task_events", "push_configs", "push_config_ids"] {
                let tree = db.open_tree(tree).map_err(backend)?;
                for k in engine::keys(tree.scan_prefix(&prefix)) {
                    tree.remove(k.map_err(backend)?).map_err(backend)?;
                }
            }
        }
        meta.remove(key).map_err(backend)?;
    }
    Ok(())
}

fn log_key(id: &str, seq: u64) -> Vec<u8> {
    let mut key = log_prefix(id);
    key.extend_from_slice(&seq.to_be_bytes());
    key
}

fn decode(bytes: &[u8]) -> Result<StoredTask, StoreError> {
    serde_json::from_slice(bytes).map_err(backend)
}

impl<K: Kv> EmbeddedStore<K> {
    /// The write lock of a task (see `stripes`).
    fn stripe(&self, id: &str) -> std::sync::MutexGuard<'_, ()> {
        use std::hash::BuildHasher as _;
        let hash = foldhash::fast::FixedState::default().hash_one(id);
        let i = usize::try_from(hash % self.stripes.len() as u64).unwrap_or_default();
        self.stripes[i].lock().expect("stripe lock")
    }

    /// The underlying database (other features keep their trees in it).
    pub fn db(&self) -> &K {
        &self.db
    }

    /// Notes a completed write, for [`TaskStore::sync`].
    fn wrote(&self) {
        self.commit.wrote();
    }

    /// Waits out a write of task `id` in progress, if any. A write holds the task's stripe
    /// lock from its first insert until it is counted for [`TaskStore::sync`] (`wrote`), and
    /// a reader may see its inserts before it is counted: a read about to be shown calls this
    /// after reading, so that the flush it then asks for (`store::durable`) covers what it saw.
    fn settled(&self, id: &str) {
        drop(self.stripe(id));
    }
}

#[async_trait]
impl<K: Kv> TaskStore for EmbeddedStore<K> {
    async fn get(&self, id: &TaskId) -> Result<Option<StoredTask>, StoreError> {
        let record = self.load(id)?;
        self.settled(id.as_str());
        Ok(record.map(|r| r.stored))
    }

    async fn create(&self, task: Arc<Task>, scope: Scope) -> Result<StoredTask, StoreError> {
        let stored = StoredTask {
            task,
            version: 1,
            scope,
        };
        // The creation event `{"task": …}`, serialized from the shared task without a copy.
        #[derive(serde::Serialize)]
        struct Created<'a> {
            task: &'a Task,
        }
        let event = serde_json::to_vec(&Created { task: &stored.task }).map_err(backend)?;
        let created = self.create_record(stored, event)?;
        self.relist_backlog().await;
        Ok(created)
    }

    async fn update(
        &self,
        task: Arc<Task>,
        expected_version: u64,
        event: &StreamResponse,
    ) -> Result<StoredTask, StoreError> {
        let updated = self.update_record(task, expected_version, event)?;
        self.relist_backlog().await;
        Ok(updated)
    }

    async fn write_batch(
        &self,
        scope: &Scope,
        base: u64,
        changes: &[BatchWrite<'_>],
    ) -> Result<(), StoreError> {
        self.batch_record(scope, base, changes)?;
        self.relist_backlog().await;
        Ok(())
    }

    async fn list(&self, query: &ListQuery) -> Result<ListPage, StoreError> {
        // sled reads block: a listing runs on tokio's blocking pool, never on a worker thread.
        let (store, query) = (self.clone(), query.clone());
        tokio::task::spawn_blocking(move || {
            // Every acknowledged write listed first.
            store.relist(true)?;
            let page = store.list_blocking(&query)?;
            for t in &page.tasks {
                store.settled(t.task.id.as_str());
            }
            Ok(page)
        })
        .await
        .map_err(backend)?
    }

    async fn events(
        &self,
        id: &TaskId,
        after: u64,
        limit: usize,
    ) -> Result<Vec<LoggedEvent>, StoreError> {
        // Only events up to the task's version are committed (see `write`).
        let Some(record) = self.load(id)? else {
            return Ok(Vec::new());
        };
        self.settled(id.as_str());
        let version = record.stored.version;
        if after >= version || limit == 0 {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        let mut from = after.saturating_add(1);
        // The first events of a head's log are in the head (see `kv/record.rs`).
        let carried = record.carried.as_deref().unwrap_or_default();
        while let Some(event) = usize::try_from(from - 1).ok().and_then(|i| carried.get(i))
            && from <= version
            && out.len() < limit
        {
            out.push(LoggedEvent {
                seq: from,
                event: serde_json::from_slice(event).map_err(backend)?,
            });
            from += 1;
        }
        if from > version || out.len() == limit {
            return Ok(out);
        }
        let start = log_key(id.as_str(), from);
        let end = log_key(id.as_str(), version);
        for entry in self.events.range(start..=end).take(limit - out.len()) {
            let (key, value) = entry.map_err(backend)?;
            out.push(LoggedEvent {
                seq: record::seq_of(&key)?,
                event: serde_json::from_slice(&value).map_err(backend)?,
            });
        }
        Ok(out)
    }

    async fn delete(&self, id: &TaskId) -> Result<bool, StoreError> {
        let Some(stored) = self.get(id).await? else {
            return Ok(false);
        };
        // The intent first: a crash before the log is gone is finished at the next open, so
        // that no log outlives its task (a new task with the id would fold it). Then the task
        // record (gone for every reader), its index keys, its log and its registrations.
        let meta = self.db.open_tree(META).map_err(backend)?;
        let intent = deleting_key(id.as_str());
        meta.insert(intent.as_slice(), &[] as &[u8])
            .map_err(backend)?;
        let listed = Listed::of(&stored);
        {
            let _stripe = self.stripe(id.as_str());
            if self
                .tasks
                .swap(id.as_str().as_bytes(), None)
                .map_err(backend)?
                .is_some()
            {
                self.counts
                    .lock()
                    .expect("counts lock")
                    .apply(&listed, false);
            }
            self.recent.lock().expect("cache lock").remove(id);
            // Its keys: those of its record, and those of an earlier state that a relist has
            // not replaced yet.
            let written = self.unwait(id);
            for k in std::iter::once(&listed)
                .chain(&written)
                .flat_map(index::keys)
            {
                self.lists.remove(k).map_err(backend)?;
            }
        }
        for entry in self.events.scan_prefix(log_prefix(id.as_str())) {
            self.events
                .remove(entry.map_err(backend)?.0)
                .map_err(backend)?;
        }
        for entry in self.pushes.scan_prefix(log_prefix(id.as_str())) {
            self.pushes
                .remove(entry.map_err(backend)?.0)
                .map_err(backend)?;
        }
        for entry in self.push_ids.scan_prefix(log_prefix(id.as_str())) {
            self.push_ids
                .remove(entry.map_err(backend)?.0)
                .map_err(backend)?;
        }
        self.push_counts.lock().expect("counts lock").remove(id);
        self.leases.forget(id);
        meta.remove(intent).map_err(backend)?;
        self.wrote();
        Ok(true)
    }

    async fn terminal_before(
        &self,
        before: Timestamp,
        limit: usize,
    ) -> Result<Vec<TaskId>, StoreError> {
        self.blocking(move |store| store.terminal_before_blocking(before, limit))
            .await
    }

    async fn tasks_in_states(
        &self,
        states: &[TaskState],
        after: Option<&TaskId>,
        limit: usize,
    ) -> Result<Vec<StoredTask>, StoreError> {
        let (states, after) = (states.to_vec(), after.cloned());
        self.blocking(move |store| store.tasks_in_states_blocking(&states, after.as_ref(), limit))
            .await
    }

    fn flushes(&self) -> bool {
        true
    }

    async fn sync(&self) -> Result<(), StoreError> {
        self.commit.sync(&self.db).await
    }
}

mod scan;

#[cfg(test)]
mod tests;
