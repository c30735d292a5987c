//! A task as the memory store holds it.
//!
//! A running task is kept as it is, shared with its readers. A finished task never changes
//! again, so it is kept as its JSON: an echo task's is about 500 bytes, where the decoded task
//! takes about 850 in ten allocations. Beside the JSON stay the fields the indexes and the
//! retention read (context, state, status time), so that listing, evicting or expiring a
//! finished task decodes nothing. A read decodes it; the tasks read most recently stay decoded
//! in [`Decoded`] (up to [`DECODED_CACHE_BYTES`] of their JSON), so that a client polling a
//! result, or paging the newest tasks, does not decode them again. An answer with a finished
//! task writes this JSON as it is ([`TaskStore::task_json`]): the task is serialized once.
//!
//! [`TaskStore::task_json`]: crate::store::TaskStore::task_json

use super::listing::Key;
use crate::cache::{Fifo, Weigh};
use crate::store::{StoreError, status_millis as millis};
use a2a_core::{ContextId, Task, TaskId, TaskState};
use serde_json::value::RawValue;
use std::cmp::Reverse;
use std::sync::{Arc, Mutex};

/// How many bytes of finished tasks, counted as their JSON, a [`MemoryStore`](crate::MemoryStore)
/// keeps decoded for reads (see `store/memory/held.rs`).
pub const DECODED_CACHE_BYTES: usize = 4 * 1024 * 1024;

/// A task, running or finished.
#[derive(Debug)]
pub(super) enum Held {
    Live(Arc<Task>),
    Finished(Finished),
}

/// A finished task: its JSON, and what the indexes read.
#[derive(Debug)]
pub(super) struct Finished {
    json: Box<RawValue>,
    context: ContextId,
    millis: i64,
    /// Its state (`state_byte`).
    state: u8,
}

impl Held {
    /// `task` as held: encoded once it is terminal.
    pub(super) fn new(task: Arc<Task>) -> Result<Self, StoreError> {
        if !task.status.state.is_terminal() {
            return Ok(Held::Live(task));
        }
        // Every terminal state is a known one.
        let Some(state) = super::state_byte(&task.status.state) else {
            return Ok(Held::Live(task));
        };
        let json = serde_json::value::to_raw_value(&*task)
            .map_err(|e| StoreError::Backend(Box::new(e)))?;
        Ok(Held::Finished(Finished {
            json,
            context: task.context_id.clone(),
            millis: millis(&task),
            state,
        }))
    }

    /// The JSON of a finished task.
    pub(super) fn json(&self) -> Option<&RawValue> {
        match self {
            Held::Live(_) => None,
            Held::Finished(f) => Some(&f.json),
        }
    }

    pub(super) fn state(&self) -> &TaskState {
        match self {
            Held::Live(t) => &t.status.state,
            Held::Finished(f) => super::byte_state(f.state),
        }
    }

    pub(super) fn context(&self) -> &ContextId {
        match self {
            Held::Live(t) => &t.context_id,
            Held::Finished(f) => &f.context,
        }
    }

    /// The task's place in the listings and the retention index.
    pub(super) fn key(&self, id: &TaskId) -> Key {
        let millis = match self {
            Held::Live(t) => millis(t),
            Held::Finished(f) => f.millis,
        };
        (Reverse(millis), id.clone())
    }

    /// The task at `version`: shared if running, else from `decoded` or decoded now (and kept
    /// there).
    pub(super) fn task(
        &self,
        id: &TaskId,
        version: u64,
        decoded: &Decoded,
    ) -> Result<Arc<Task>, StoreError> {
        let finished = match self {
            Held::Live(t) => return Ok(t.clone()),
            Held::Finished(f) => f,
        };
        let mut cache = decoded.0.lock().expect("cache lock");
        if let Some(hit) = cache.get(id).filter(|d| d.version == version) {
            return Ok(hit.task);
        }
        drop(cache);
        let task: Task = serde_json::from_str(finished.json.get())
            .map_err(|e| StoreError::Backend(format!("stored task {id}: {e}").into()))?;
        let task = Arc::new(task);
        cache = decoded.0.lock().expect("cache lock");
        cache.put(
            id.clone(),
            DecodedTask {
                version,
                task: task.clone(),
                weight: finished.json.get().len(),
            },
        );
        Ok(task)
    }
}

/// Recently read finished tasks, decoded.
#[derive(Debug)]
pub(super) struct Decoded(Mutex<Fifo<DecodedTask>>);

impl Default for Decoded {
    fn default() -> Self {
        Self(Mutex::new(Fifo::new(DECODED_CACHE_BYTES)))
    }
}

impl Decoded {
    /// Forgets the task `id` (removed from the store).
    pub(super) fn remove(&self, id: &TaskId) {
        self.0.lock().expect("cache lock").remove(id);
    }

    #[cfg(test)]
    pub(super) fn holds(&self, id: &TaskId) -> bool {
        self.0.lock().expect("cache lock").get(id).is_some()
    }
}

#[derive(Clone, Debug)]
pub(super) struct DecodedTask {
    version: u64,
    task: Arc<Task>,
    /// The size of its JSON.
    weight: usize,
}

impl Weigh for DecodedTask {
    fn weight(&self) -> usize {
        self.weight
    }
}
