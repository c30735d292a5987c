//! A batch of changes of one task on sled (`TaskStore::write_batch`): the changes the engine
//! kept unwritten until their first reveal (`engine/cell/outbox.rs`), written as one: every
//! event but the last inserted alone, the last written as a single change would be, with one
//! value (or none) for the whole batch. A task created and finished in one batch writes one head,
//! carrying its creation event and the events after it (up to [`HEAD_LOG_BYTES`] of them; the
//! rest go to the log): a blocking echo is one key in `tasks`, none in `task_events`.

use super::record::{Carried, HEAD_LOG_BYTES, Record, SNAPSHOT_EVERY, folds_to, needs_snapshot};
use super::{EmbeddedStore, Kv, KvTree, backend, log_key};
use crate::store::index;
use crate::store::{BatchWrite, Scope, StoreError, StoredTask};
use a2a_core::Task;
use std::sync::Arc;

impl<K: Kv> EmbeddedStore<K> {
    /// `TaskStore::write_batch`: checks the version (or, for a batch that creates the task,
    /// that it does not exist) under the task's write lock, inserts every event but the last,
    /// then writes the last as [`Self::update_record`] would, deciding its value for the whole
    /// batch: one value (or none) however many changes the batch holds. A crash keeps a prefix
    /// of the batch: the events before a status update fold onto the previous value (as an
    /// artifact written alone does), the rest waits for its value.
    pub(super) fn batch_record(
        &self,
        scope: &Scope,
        base: u64,
        changes: &[BatchWrite<'_>],
    ) -> Result<(), StoreError> {
        /// The creation event `{"task": …}`, serialized from the shared task without a copy.
        #[derive(serde::Serialize)]
        struct Created<'a> {
            task: &'a Task,
        }
        let Some(last) = changes.last() else {
            return Ok(());
        };
        let task_id = &last.task.id;
        let id = task_id.as_str();
        let _stripe = self.stripe(id);
        let previous = if base == 0 {
            if self.tasks.contains_key(id.as_bytes()).map_err(backend)? {
                return Err(StoreError::AlreadyExists(task_id.clone()));
            }
            None
        } else {
            let Some(previous) = self.load(task_id)? else {
                return Err(StoreError::NotFound(task_id.clone()));
            };
            if previous.stored.version != base {
                return Err(StoreError::VersionConflict {
                    expected: base,
                    found: previous.stored.version,
                });
            }
            Some(previous)
        };
        // Whether the task stays the fold of its log from the creation event (a head), and
        // whether an event of the batch needs a value of its version.
        let mut folds = previous.as_ref().is_none_or(|p| p.headed);
        let mut status = false;
        let mut before: Option<&Arc<Task>> = previous.as_ref().map(|p| &p.stored.task);
        let mut logged = 0;
        let mut last_bytes = Vec::new();
        // The creation event of a batch that creates the task, and the events after it while
        // they fit in `HEAD_LOG_BYTES`: carried by its head (a snapshot puts them in the log).
        let mut carried: Vec<Box<[u8]>> = Vec::new();
        let mut carried_bytes = 0;
        for (i, change) in changes.iter().enumerate() {
            let version = base + 1 + i as u64;
            let bytes = match (change.event, before) {
                (None, None) => {
                    serde_json::to_vec(&Created { task: change.task }).map_err(backend)?
                }
                (Some(event), Some(before)) => {
                    if needs_snapshot(event) {
                        status = true;
                        folds = folds && folds_to(before, event, change.task);
                    } else {
                        debug_assert!(
                            folds_to(before, event, change.task),
                            "the task of an event must be the previous task with it applied"
                        );
                    }
                    serde_json::to_vec(event).map_err(backend)?
                }
                _ => {
                    return Err(StoreError::Backend(
                        format!("task {id}: a batch creates a task only as its first change")
                            .into(),
                    ));
                }
            };
            before = Some(change.task);
            let fits = carried.len() as u64 + 1 == version
                && carried_bytes + bytes.len() <= HEAD_LOG_BYTES;
            if version == 1 {
                carried.push(bytes.into_boxed_slice());
            } else if fits {
                carried_bytes += bytes.len();
                carried.push(bytes.into_boxed_slice());
            } else if i + 1 < changes.len() {
                logged += bytes.len();
                self.events
                    .insert(log_key(id, version), bytes)
                    .map_err(backend)?;
            } else {
                last_bytes = bytes;
            }
        }
        let version = base + changes.len() as u64;
        let Some(previous) = previous else {
            let stored = StoredTask {
                task: last.task.clone(),
                version,
                scope: scope.clone(),
            };
            let headed = folds && version < SNAPSHOT_EVERY;
            let carried: Carried = carried.into();
            self.write_value(stored, None, last_bytes, headed, logged, Some(carried))?;
            return Ok(());
        };
        let stored = StoredTask {
            task: last.task.clone(),
            version,
            scope: previous.stored.scope.clone(),
        };
        let value_base = if previous.headed {
            1
        } else {
            previous.snapshot
        };
        if status
            || version - value_base >= SNAPSHOT_EVERY
            || !index::unmoved(&previous.stored, &stored)
        {
            let headed = previous.headed && folds && version < SNAPSHOT_EVERY;
            let carried = previous.carried.clone();
            self.write_value(stored, Some(previous), last_bytes, headed, logged, carried)?;
            return Ok(());
        }
        let weight = previous.bytes + logged + last_bytes.len();
        self.events
            .insert(log_key(id, version), last_bytes)
            .map_err(backend)?;
        self.wrote();
        self.recent.lock().expect("cache lock").put(
            task_id.clone(),
            Record {
                stored,
                snapshot: previous.snapshot,
                headed: previous.headed,
                bytes: weight,
                carried: previous.carried,
            },
        );
        Ok(())
    }
}
