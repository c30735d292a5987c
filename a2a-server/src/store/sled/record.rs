//! A task's record on sled: a snapshot of the task in tree `tasks`, refreshed only at some
//! writes, and the events of its log after that snapshot, which a read folds onto it with
//! [`Task::apply`]. A write that changes the task's status stores a snapshot; any other write
//! (an artifact chunk, an agent message) stores only its event, unless [`SNAPSHOT_EVERY`]
//! events have accumulated since the snapshot. So a stream of `n` artifact chunks writes
//! `O(n)` bytes of events plus `n / SNAPSHOT_EVERY` snapshots, instead of `n` whole tasks.
//!
//! **Commit points.** A write holds its task's write lock (`SledStore::stripe`) from the
//! version check to the end, so writes of one task are serialized and the check is exact.
//! An event-only write is one insert, which commits it. A snapshot write inserts its event,
//! then its new index keys, then the snapshot (which commits it), then removes the old index
//! keys. A crash before the snapshot leaves its event in the log after the previous snapshot;
//! a read stops folding at the first status update (or whole task) it meets there, since a
//! committed one always has a snapshot of its own version, so that event and its index keys
//! are ignored (and the next write replaces the event). A snapshot written because of the
//! event count (the event is an artifact or a message) is committed by its event already: the
//! fold of the event is the snapshot it was about to write.

use super::{SledStore, backend, backend_msg, decode, encode, index_key, log_key};
use crate::cache::Weigh;
use crate::store::index::{self, Listed};
use crate::store::{StoreError, StoredTask};
use a2a_core::{StreamResponse, Task, TaskId};
use std::sync::Arc;

/// How many events at most a sled task's log holds after its snapshot (the task as last
/// written whole): an event-only write that would make the count reach this writes a snapshot
/// instead. A read that misses the cache folds at most `SNAPSHOT_EVERY - 1` events; a long
/// artifact stream rewrites the whole task once every `SNAPSHOT_EVERY` chunks.
pub const SNAPSHOT_EVERY: u64 = 64;

/// A committed task, as the cache holds it: the task at its current version, materialized.
#[derive(Clone, Debug)]
pub(super) struct Record {
    /// The task at its current version.
    pub(super) stored: StoredTask,
    /// The version of its snapshot in tree `tasks`.
    snapshot: u64,
    /// The JSON size of the snapshot and of the events after it (the cache weight).
    bytes: usize,
}

impl Weigh for Record {
    fn weight(&self) -> usize {
        self.bytes
    }
}

/// Whether an event is always written with a snapshot of its version: a status update (a
/// state change, or a continuation, whose user message enters the history without an event)
/// and a whole task.
fn needs_snapshot(event: &StreamResponse) -> bool {
    matches!(
        event,
        StreamResponse::StatusUpdate(_) | StreamResponse::Task(_)
    )
}

/// Whether `task` is `previous` with `event` applied, as `TaskStore::update` requires of an
/// event that is stored alone (checked in debug builds).
fn folds_to(previous: &Task, event: &StreamResponse, task: &Task) -> bool {
    let mut folded = previous.clone();
    folded.apply(event).is_ok() && folded == *task
}

/// The sequence number at the end of a log key.
pub(super) fn seq_of(key: &[u8]) -> Result<u64, StoreError> {
    let bytes: [u8; 8] = key
        .get(key.len().saturating_sub(8)..)
        .unwrap_or_default()
        .try_into()
        .map_err(backend_msg)?;
    Ok(u64::from_be_bytes(bytes))
}

impl SledStore {
    /// Stores a new task at version 1 (a snapshot), with its creation event.
    pub(super) fn create_record(
        &self,
        stored: StoredTask,
        event: Vec<u8>,
    ) -> Result<StoredTask, StoreError> {
        let id = stored.task.id.as_str();
        let _stripe = self.stripe(id);
        if self.tasks.contains_key(id.as_bytes()).map_err(backend)? {
            return Err(StoreError::AlreadyExists(stored.task.id.clone()));
        }
        self.write_snapshot(stored, None, event)
    }

    /// `TaskStore::update`: checks the version under the task's write lock, then stores the
    /// event alone or with a snapshot (see the module docs).
    pub(super) fn update_record(
        &self,
        task: Arc<Task>,
        expected_version: u64,
        event: &StreamResponse,
    ) -> Result<StoredTask, StoreError> {
        let _stripe = self.stripe(task.id.as_str());
        let Some(previous) = self.load(&task.id)? else {
            return Err(StoreError::NotFound(task.id.clone()));
        };
        if previous.stored.version != expected_version {
            return Err(StoreError::VersionConflict {
                expected: expected_version,
                found: previous.stored.version,
            });
        }
        let stored = StoredTask {
            task,
            version: expected_version + 1,
            scope: previous.stored.scope.clone(),
        };
        let bytes = serde_json::to_vec(event).map_err(backend)?;
        if needs_snapshot(event)
            || stored.version - previous.snapshot >= SNAPSHOT_EVERY
            || !index::unmoved(&previous.stored, &stored)
        {
            return self.write_snapshot(stored, Some(previous), bytes);
        }
        debug_assert!(
            folds_to(&previous.stored.task, event, &stored.task),
            "the task of an event-only write must be the previous task with the event applied"
        );
        let weight = previous.bytes + bytes.len();
        let id = &stored.task.id;
        self.events
            .insert(log_key(id.as_str(), stored.version), bytes)
            .map_err(backend)?;
        self.wrote();
        self.recent.lock().expect("cache lock").put(
            id.clone(),
            Record {
                stored: stored.clone(),
                snapshot: previous.snapshot,
                bytes: weight,
            },
        );
        Ok(stored)
    }

    /// Writes a snapshot of a task with its event: the event first, then its new index keys
    /// (retention's and the listing ones that change), then the snapshot itself (the commit
    /// point), then the removal of the old index keys and the update of the listing counts.
    /// The caller holds the task's write lock and has checked the version. A crash at any
    /// step leaves the previous version intact: an event the fold stops at and an index key
    /// that does not match the task are ignored by every read (and a listing that meets such
    /// a key removes it).
    ///
    /// No sled transaction or batch is used: in sled 0.34 they switch every thread to a
    /// reader-writer lock that can deadlock against a concurrent `flush` (which we call before
    /// every acknowledgement).
    fn write_snapshot(
        &self,
        stored: StoredTask,
        previous: Option<Record>,
        event: Vec<u8>,
    ) -> Result<StoredTask, StoreError> {
        let id = stored.task.id.as_str();
        let value = encode(&stored)?;
        let bytes = value.len();
        let new_key = index_key(stored.sort_millis(), id);
        // An artifact or a message leaves the listing keys (and counts) as they are.
        let relist = previous
            .as_ref()
            .is_none_or(|p| !index::unmoved(&p.stored, &stored));
        let new_listed = relist.then(|| Listed::of(&stored));
        let old_listed = previous
            .as_ref()
            .filter(|_| relist)
            .map(|p| Listed::of(&p.stored));
        let new_lists = new_listed.as_ref().map(index::keys).unwrap_or_default();
        let old_lists = old_listed.as_ref().map(index::keys).unwrap_or_default();
        self.events
            .insert(log_key(id, stored.version), event)
            .map_err(backend)?;
        self.index
            .insert(new_key.as_slice(), &[] as &[u8])
            .map_err(backend)?;
        for k in new_lists.iter().filter(|k| !old_lists.contains(k)) {
            self.lists
                .insert(k.as_slice(), &[] as &[u8])
                .map_err(backend)?;
        }
        self.tasks.insert(id.as_bytes(), value).map_err(backend)?;
        self.wrote();
        self.recent.lock().expect("cache lock").put(
            stored.task.id.clone(),
            Record {
                stored: stored.clone(),
                snapshot: stored.version,
                bytes,
            },
        );
        if let Some(new) = &new_listed {
            let mut counts = self.counts.lock().expect("counts lock");
            match &old_listed {
                Some(old) => counts.replace(old, new),
                None => counts.apply(new, true),
            }
        }
        if let Some(p) = previous {
            let old_key = index_key(p.stored.sort_millis(), id);
            if old_key != new_key {
                self.index.remove(old_key).map_err(backend)?;
            }
        }
        for k in old_lists.iter().filter(|k| !new_lists.contains(k)) {
            self.lists.remove(k.as_slice()).map_err(backend)?;
        }
        Ok(stored)
    }

    /// The committed task: from the cache, or read, materialized and cached. The read happens
    /// under the cache's lock, so a record read before a write can never be cached after that
    /// write's.
    pub(super) fn load(&self, id: &TaskId) -> Result<Option<Record>, StoreError> {
        let mut recent = self.recent.lock().expect("cache lock");
        if let Some(hit) = recent.get(id) {
            return Ok(Some(hit));
        }
        let Some(raw) = self.tasks.get(id.as_str().as_bytes()).map_err(backend)? else {
            return Ok(None);
        };
        let record = self.materialize(decode(&raw)?, raw.len())?;
        recent.put(id.clone(), record.clone());
        Ok(Some(record))
    }

    /// A snapshot (of `bytes` JSON bytes) with the committed events after it applied: the log
    /// from the snapshot's version on, gap-free, up to the first event that needs a snapshot
    /// of its own (a write that did not commit).
    pub(super) fn materialize(
        &self,
        snapshot: StoredTask,
        bytes: usize,
    ) -> Result<Record, StoreError> {
        let finished = snapshot.task.status.state.is_terminal();
        let id = snapshot.task.id.clone();
        let mut record = Record {
            snapshot: snapshot.version,
            bytes,
            stored: snapshot,
        };
        if finished {
            // A terminal status writes a snapshot, and nothing follows it: no tail to look for
            // (a listing of finished tasks reads one tree per task, not two).
            return Ok(record);
        }
        let id = id.as_str();
        let tail = self
            .events
            .range(log_key(id, record.snapshot + 1)..=log_key(id, u64::MAX));
        let mut task: Option<Task> = None;
        for entry in tail {
            let (key, value) = entry.map_err(backend)?;
            if seq_of(&key)? != record.stored.version + 1 {
                break;
            }
            let event: StreamResponse = serde_json::from_slice(&value).map_err(backend)?;
            if needs_snapshot(&event) {
                break;
            }
            task.get_or_insert_with(|| Task::clone(&record.stored.task))
                .apply(&event)
                .map_err(backend)?;
            record.stored.version += 1;
            record.bytes += value.len();
        }
        if let Some(task) = task {
            record.stored.task = Arc::new(task);
        }
        Ok(record)
    }
}
