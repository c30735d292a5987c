//! A task's record on sled: its value in tree `tasks`, refreshed only at some writes, and the
//! events of its log after that value's version, which a read folds onto it with
//! [`Task::apply`]. The value is either a snapshot (the whole task at its version) or a
//! *head*: the version and the indexed fields only (id, context, status state and time,
//! scope), the task being its creation event (seq 1, a whole task) folded with the log up to
//! that version. A write that changes the task's status stores a value; any other write (an
//! artifact chunk, an agent message) stores only its event, unless [`SNAPSHOT_EVERY`] events
//! have accumulated since the value's version. So a stream of `n` artifact chunks writes
//! `O(n)` bytes of events plus `n / SNAPSHOT_EVERY` snapshots, instead of `n` whole tasks.
//!
//! A head written since issue 41 carries the creation event itself (key `created`), which the
//! log then lacks (one key fewer per task); a head written by a batch that creates its task
//! (`kv/batch.rs`) also carries the batch's next events (key `logged`, entries 2, 3, … of the
//! log, at most [`HEAD_LOG_BYTES`] of them), so that a task created and finished in one batch
//! is one key. A head rewritten later carries the same events on; a snapshot written over it
//! puts them back in the log. Older heads (creation event in the log) are rewritten to carry
//! it when the store opens (`kv/open.rs`); heads without `logged` read their events from the
//! log, as they always did.
//!
//! A task starts with a head, and keeps one while its task is exactly the fold of its log
//! (a continuation, whose user message enters the history without an event, is not) and
//! shorter than [`SNAPSHOT_EVERY`] events; then a snapshot. So a task that is created and
//! finishes at once writes its whole JSON once (the creation event), not three times (event,
//! snapshot, final snapshot): fewer bytes through sled's log, and leaves of small values in
//! `tasks`, which sled splits and rewrites whole.
//!
//! **Commit points.** A write holds its task's write lock (`SledStore::stripe`) from the
//! version check to the end, so writes of one task are serialized and the check is exact.
//! An event-only write is one insert, which commits it. A value write (snapshot or head) inserts
//! its events (those a snapshot takes back from the head, and its own), then the value (which
//! commits it); its listing keys come later (`kv/relist.rs`). A crash before the value leaves
//! its events in the log after the previous value's version (or under a head that carries
//! them, which never reads those entries); a read stops folding at the first status update (or
//! whole task) it meets there, since a committed one always has a value of its own version, so
//! that event is ignored (and the next write replaces it). A snapshot written because of the
//! event count (the event is an artifact or a message) is committed by its event already: the
//! fold of the event is the snapshot it was about to write.

use super::{EmbeddedStore, Kv, KvTree, backend, backend_msg, decode, log_key};
use crate::cache::Weigh;
use crate::store::index::{self, Listed};
use crate::store::{Scope, StoreError, StoredTask};
use a2a_core::{ContextId, StreamResponse, Task, TaskId, TaskState, Timestamp};
use std::sync::Arc;

/// How many events at most a sled task's log holds after its snapshot (the task as last
/// written whole), or after its creation event while it has a head: an event-only write that
/// would make the count reach this writes a snapshot instead. A read that misses the cache
/// folds at most `SNAPSHOT_EVERY` events; a long
/// artifact stream rewrites the whole task once every `SNAPSHOT_EVERY` chunks.
pub const SNAPSHOT_EVERY: u64 = 64;

/// How many bytes of events after the creation a head may carry (the JSON of the log entries 2,
/// 3, … a batch that creates its task keeps in the head instead of the log): the events of a
/// short task, not a stream's. Every later rewrite of the head carries them again, so the
/// bound is what one such rewrite may cost beyond the head itself.
pub const HEAD_LOG_BYTES: usize = 4096;

/// The events a head carries: the first entries of its task's log, from the creation (seq 1)
/// on, in order.
pub(super) type Carried = Arc<[Box<[u8]>]>;

/// A committed task, as the cache holds it: the task at its current version, materialized.
#[derive(Clone, Debug)]
pub(super) struct Record {
    /// The task at its current version.
    pub(super) stored: StoredTask,
    /// The version of its value in tree `tasks` (a snapshot or a head).
    pub(super) snapshot: u64,
    /// Whether that value is a head (the task is its creation event folded with the log).
    pub(super) headed: bool,
    /// The JSON size of the snapshot and of the events after it (the cache weight).
    pub(super) bytes: usize,
    /// The events its head carries (a head written since issue 41: the creation event
    /// `{"task": …}`, and maybe those after it), which are then not in the log; `None` for a
    /// snapshot, and for an older head, whose creation event is the log's entry 1.
    pub(super) carried: Option<Carried>,
}

impl Weigh for Record {
    fn weight(&self) -> usize {
        self.bytes
    }
}

/// Whether an event is always written with a snapshot of its version: a status update (a
/// state change, or a continuation, whose user message enters the history without an event)
/// and a whole task.
pub(super) fn needs_snapshot(event: &StreamResponse) -> bool {
    matches!(
        event,
        StreamResponse::StatusUpdate(_) | StreamResponse::Task(_)
    )
}

/// Whether `task` is `previous` with `event` applied: what `TaskStore::update` requires of an
/// event that is stored alone (checked in debug builds), and what lets a status update keep
/// its task's head.
pub(super) fn folds_to(previous: &Task, event: &StreamResponse, task: &Task) -> bool {
    let mut folded = previous.clone();
    folded.apply(event).is_ok() && folded == *task
}

/// How a head value starts: a snapshot starts `{"task":`.
pub(super) const HEAD: &[u8] = b"{\"head\":";

/// A head value as written: the version, then the fields `list::listed` reads of any record,
/// and the relist generation (see `kv/relist.rs`).
#[derive(serde::Serialize)]
struct HeadOut<'a> {
    head: u64,
    task: HeadTask<'a>,
    scope: &'a Scope,
    lists: u64,
}

/// A snapshot value as written: a [`StoredTask`] (which reads it back, ignoring `lists`), and
/// the relist generation.
#[derive(serde::Serialize)]
struct SnapshotOut<'a> {
    task: &'a Task,
    version: u64,
    scope: &'a Scope,
    lists: u64,
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct HeadTask<'a> {
    id: &'a TaskId,
    context_id: &'a ContextId,
    status: HeadStatus<'a>,
}

#[derive(serde::Serialize)]
struct HeadStatus<'a> {
    state: &'a TaskState,
    #[serde(skip_serializing_if = "Option::is_none")]
    timestamp: Option<&'a Timestamp>,
}

/// A head value as read.
#[derive(serde::Deserialize)]
pub(super) struct HeadIn<'a> {
    head: u64,
    #[serde(default)]
    scope: Scope,
    /// The creation event, in a head written since issue 41.
    #[serde(borrow, default)]
    pub(super) created: Option<&'a serde_json::value::RawValue>,
    /// The log entries after the creation that the head carries (2, 3, …).
    #[serde(borrow, default)]
    logged: Vec<&'a serde_json::value::RawValue>,
}

/// `head` (a head value, a JSON object) carrying the events `carried` (the creation, then the
/// log entries after it): a key fewer per event than in the log.
pub(super) fn with_carried(mut head: Vec<u8>, carried: &[Box<[u8]>]) -> Vec<u8> {
    debug_assert_eq!(head.last(), Some(&b'}'));
    let Some((created, logged)) = carried.split_first() else {
        return head;
    };
    head.pop();
    head.reserve(carried.iter().map(|e| e.len() + 1).sum::<usize>() + 24);
    head.extend_from_slice(b",\"created\":");
    head.extend_from_slice(created);
    if !logged.is_empty() {
        head.extend_from_slice(b",\"logged\":[");
        for (i, event) in logged.iter().enumerate() {
            if i > 0 {
                head.push(b',');
            }
            head.extend_from_slice(event);
        }
        head.push(b']');
    }
    head.push(b'}');
    head
}

/// The JSON size of the events a head carries.
fn carried_bytes(carried: Option<&Carried>) -> usize {
    carried.map_or(0, |c| c.iter().map(|e| e.len()).sum())
}

fn encode_snapshot(t: &StoredTask, generation: u64) -> Result<Vec<u8>, StoreError> {
    serde_json::to_vec(&SnapshotOut {
        task: &t.task,
        version: t.version,
        scope: &t.scope,
        lists: generation,
    })
    .map_err(backend)
}

fn encode_head(t: &StoredTask, generation: u64) -> Result<Vec<u8>, StoreError> {
    serde_json::to_vec(&HeadOut {
        head: t.version,
        lists: generation,
        task: HeadTask {
            id: &t.task.id,
            context_id: &t.task.context_id,
            status: HeadStatus {
                state: &t.task.status.state,
                timestamp: t.task.status.timestamp.as_ref(),
            },
        },
        scope: &t.scope,
    })
    .map_err(backend)
}

/// The version a `tasks` value covers (a snapshot's or a head's).
#[cfg(test)]
pub(super) fn value_version(raw: &[u8]) -> Result<u64, StoreError> {
    if raw.starts_with(HEAD) {
        Ok(serde_json::from_slice::<HeadIn<'_>>(raw)
            .map_err(backend)?
            .head)
    } else {
        Ok(decode(raw)?.version)
    }
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

impl<K: Kv> EmbeddedStore<K> {
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
        // The creation event is the whole task: a head carrying it is enough.
        let carried: Carried = Arc::new([event.into_boxed_slice()]);
        self.write_value(stored, None, Vec::new(), true, 0, Some(carried))
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
        // A head's fold starts at the creation event; a snapshot's at itself.
        let base = if previous.headed {
            1
        } else {
            previous.snapshot
        };
        if needs_snapshot(event)
            || stored.version - base >= SNAPSHOT_EVERY
            || !index::unmoved(&previous.stored, &stored)
        {
            let headed = previous.headed
                && stored.version < SNAPSHOT_EVERY
                && folds_to(&previous.stored.task, event, &stored.task);
            let carried = previous.carried.clone();
            return self.write_value(stored, Some(previous), bytes, headed, 0, carried);
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
                headed: previous.headed,
                bytes: weight,
                carried: previous.carried,
            },
        );
        Ok(stored)
    }

    /// Writes a task's value (a head when `headed`, else a snapshot) with its event: the event
    /// first, then the value itself (the commit point), then the update of the listing counts.
    /// The listing keys (which retention reads too) are written later, by a relist (see
    /// `kv/relist.rs`): a write that moves them notes the task for one, and stamps the value
    /// with the generation that tells a reopened store after a crash which records may lack
    /// their keys.
    /// The caller holds the task's write lock and has checked the version. A crash at any
    /// step leaves the previous version intact: an event the fold stops at is ignored by every
    /// read.
    ///
    /// No sled transaction or batch is used: in sled 0.34 they switch every thread to a
    /// reader-writer lock that can deadlock against a concurrent `flush` (which we call before
    /// every acknowledgement).
    ///
    /// `logged`: the bytes of the events a batch inserted before this one (see
    /// [`Self::batch_record`]), which a head's fold reads too. `event` is empty when the value
    /// is in `carried` (at version 1, the creation; in a batch that creates the task, maybe the
    /// events after it). `carried` is the events a head carries (the new task's, or the
    /// previous head's): a head carries them on, a snapshot puts them back in the log as its
    /// entries 1, 2, ….
    pub(super) fn write_value(
        &self,
        stored: StoredTask,
        previous: Option<Record>,
        event: Vec<u8>,
        headed: bool,
        logged: usize,
        carried: Option<Carried>,
    ) -> Result<StoredTask, StoreError> {
        let id = stored.task.id.as_str();
        // An artifact or a message leaves the listing keys (and counts) as they are.
        let moved = previous
            .as_ref()
            .is_none_or(|p| !index::unmoved(&p.stored, &stored));
        let old_listed = previous
            .as_ref()
            .filter(|_| moved)
            .map(|p| Listed::of(&p.stored));
        let finished = stored.task.status.state.is_terminal();
        let generation = self.stamp(&stored.task.id, moved, old_listed.as_ref(), finished);
        let (value, carried) = match carried {
            Some(carried) if headed => (
                with_carried(encode_head(&stored, generation)?, &carried),
                Some(carried),
            ),
            carried => {
                // The log takes back the events a head carried: a snapshot's log is whole.
                for (seq, event) in (1..).zip(carried.iter().flat_map(|c| c.iter())) {
                    self.events
                        .insert(log_key(id, seq), &**event)
                        .map_err(backend)?;
                }
                let value = if headed {
                    encode_head(&stored, generation)?
                } else {
                    encode_snapshot(&stored, generation)?
                };
                (value, None)
            }
        };
        // A head's record weighs its log so far (what its fold reads); a snapshot itself.
        let bytes = if headed {
            let before = (previous.as_ref().map(|p| p.bytes))
                .unwrap_or_else(|| carried_bytes(carried.as_ref()));
            event.len() + logged + before
        } else {
            value.len()
        };
        if !event.is_empty() {
            self.events
                .insert(log_key(id, stored.version), event)
                .map_err(backend)?;
        }
        self.tasks.insert(id.as_bytes(), value).map_err(backend)?;
        self.wrote();
        if moved {
            let new = Listed::of(&stored);
            let mut counts = self.counts.lock().expect("counts lock");
            match &old_listed {
                Some(old) => counts.replace(old, &new),
                None => counts.apply(&new, true),
            }
        }
        self.recent.lock().expect("cache lock").put(
            stored.task.id.clone(),
            Record {
                stored: stored.clone(),
                snapshot: stored.version,
                headed,
                bytes,
                carried,
            },
        );
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
        let record = if raw.starts_with(HEAD) {
            self.materialize_head(id, &raw)?
        } else {
            self.materialize(decode(&raw)?, raw.len())?
        };
        recent.put(id.clone(), record.clone());
        Ok(Some(record))
    }

    /// A snapshot (of `bytes` JSON bytes) with the committed events after it applied (see
    /// [`Self::fold_tail`]).
    fn materialize(&self, snapshot: StoredTask, bytes: usize) -> Result<Record, StoreError> {
        self.fold_tail(Record {
            snapshot: snapshot.version,
            headed: false,
            bytes,
            stored: snapshot,
            carried: None,
        })
    }

    /// A head: the creation event folded with every event up to the head's version (each
    /// committed by the head), then the committed events after it (see [`Self::fold_tail`]).
    fn materialize_head(&self, id: &TaskId, raw: &[u8]) -> Result<Record, StoreError> {
        let head: HeadIn<'_> = serde_json::from_slice(raw).map_err(backend)?;
        let corrupt = |what: &str| {
            StoreError::Backend(
                format!("task {id}: {what} under its head (version {})", head.head).into(),
            )
        };
        // Point reads: a head covers fewer than `SNAPSHOT_EVERY` events, most often two, and
        // sled answers a `get` for less than it costs to open a range.
        let logged = |seq| {
            self.events
                .get(log_key(id.as_str(), seq))
                .map_err(backend)?
                .ok_or_else(|| {
                    corrupt(if seq == 1 {
                        "no creation event"
                    } else {
                        "a gap in the log"
                    })
                })
        };
        // The events the head carries (the creation since issue 41, maybe more), then the log.
        let carried: Option<Carried> = head.created.map(|created| {
            std::iter::once(created)
                .chain(head.logged.iter().copied())
                .map(|raw| raw.get().as_bytes().into())
                .collect()
        });
        let in_head = carried.as_ref().map_or(0, |c| c.len() as u64);
        if in_head > head.head {
            return Err(corrupt("more events carried than the version"));
        }
        let from_log;
        let created: &[u8] = match &carried {
            Some(c) => &c[0],
            None => {
                from_log = logged(1)?;
                &from_log
            }
        };
        let StreamResponse::Task(mut task) = serde_json::from_slice(created).map_err(backend)?
        else {
            return Err(corrupt("a first event that is not the task"));
        };
        let mut bytes = created.len();
        for seq in 2..=head.head {
            let event: StreamResponse = match &carried {
                Some(c) if seq <= in_head => {
                    let value = &c[usize::try_from(seq - 1).map_err(backend)?];
                    bytes += value.len();
                    serde_json::from_slice(value).map_err(backend)?
                }
                _ => {
                    let value = logged(seq)?;
                    bytes += value.len();
                    serde_json::from_slice(&value).map_err(backend)?
                }
            };
            task.apply(&event).map_err(backend)?;
        }
        let version = head.head;
        self.fold_tail(Record {
            snapshot: version,
            headed: true,
            bytes,
            stored: StoredTask {
                task: Arc::new(task),
                version,
                scope: head.scope,
            },
            carried,
        })
    }

    /// A record with the committed events after its value applied: the log from the value's
    /// version on, gap-free, up to the first event that needs a value of its own (a write that
    /// did not commit).
    fn fold_tail(&self, mut record: Record) -> Result<Record, StoreError> {
        let finished = record.stored.task.status.state.is_terminal();
        let id = record.stored.task.id.clone();
        if finished {
            // A terminal status writes a value, and nothing follows it: no tail to look for
            // (a listing of finished tasks with a snapshot reads one tree per task, not two).
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
