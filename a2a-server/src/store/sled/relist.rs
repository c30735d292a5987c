//! Listing keys written late: a write that moves a task's listing keys (a new state or status
//! time) does not touch `task_lists`; it notes the task here, and a *relist* later writes the
//! keys of the task's state at that time and removes the ones `task_lists` had. A task that is
//! created and finishes between two relists has its keys written once, for its final state,
//! instead of four inserted at creation, then four removed and four inserted at each status
//! change: on sled, the listing keys were half the tree operations of a SendMessage.
//!
//! A relist runs before every listing (so a listing shows every acknowledged write), and in the
//! background once [`RELIST_AFTER`] tasks wait (so the waiting set stays small).
//!
//! **After a crash.** Each value (snapshot or head) a write stores is stamped with the current
//! *generation*. A relist takes the waiting tasks and moves to the next generation; once their
//! keys are written and flushed it records in tree `store_meta` that generations up to its own
//! are listed. So a value stamped above that record may lack its keys: opening the store, which
//! reads every record anyway (`list::open_indexes`), writes the keys of those. A key left over
//! from an earlier state is stale, and a listing that meets one removes it.

use super::{SledStore, backend};
use crate::store::StoreError;
use crate::store::index::{self, Listed};
use a2a_core::TaskId;
use std::collections::HashMap;

/// How many tasks may wait for their listing keys before a write starts a relist in the
/// background (on tokio's blocking pool). At thousands of tasks a second a task waits about
/// 10 ms, several times what an echo task lives, so that most short tasks are listed once; a
/// larger batch saved no more sled work (callgrind: 299k–305k instructions per SendMessage
/// with 256 and 1024, 308k with 64) but stalled the server's core for longer (p99 up to twice).
pub const RELIST_AFTER: usize = 64;

/// The `store_meta` key of the highest generation whose listing keys are durable (u64,
/// big-endian).
pub(super) const LISTED_UP_TO: &[u8] = b"task_lists_listed_up_to";

/// The tasks whose listing keys lag their committed record, and the generation values are
/// stamped with now.
#[derive(Debug, Default)]
pub(super) struct Waiting {
    generation: u64,
    /// Each task, with the fields its keys in `task_lists` were written for (`None`: none yet).
    pub(super) tasks: HashMap<TaskId, Option<Listed>>,
    /// Whether a background relist is queued.
    queued: bool,
}

impl Waiting {
    /// Starts at `generation` (above every stamp of the opened database).
    pub(super) fn new(generation: u64) -> Self {
        Self {
            generation,
            ..Self::default()
        }
    }
}

impl SledStore {
    /// Called by a value write, under the task's write lock, before the value is stored: the
    /// generation to stamp it with. When the write moves the task's keys (`moved`), the task
    /// waits for a relist, with `written`, the fields of its keys in `task_lists` (the previous
    /// record's, or none for a new task), unless it was already waiting.
    pub(super) fn stamp(&self, id: &TaskId, moved: bool, written: Option<Listed>) -> u64 {
        let mut waiting = self.waiting.lock().expect("relist lock");
        if moved {
            waiting.tasks.entry(id.clone()).or_insert(written);
            if waiting.tasks.len() >= RELIST_AFTER && !waiting.queued {
                waiting.queued = true;
                let store = self.clone();
                match tokio::runtime::Handle::try_current() {
                    Ok(rt) => drop(rt.spawn_blocking(move || store.relist_queued())),
                    // Not on a runtime (a synchronous caller): the next listing relists.
                    Err(_) => waiting.queued = false,
                }
            }
        }
        waiting.generation
    }

    fn relist_queued(&self) {
        if let Err(e) = self.relist() {
            tracing::warn!(error = %e, "writing listing keys failed; the next listing retries");
        }
        self.waiting.lock().expect("relist lock").queued = false;
    }

    /// Forgets a deleted task: its keys in `task_lists`, if it was waiting (the caller removes
    /// those of its current record).
    pub(super) fn unwait(&self, id: &TaskId) -> Option<Listed> {
        (self.waiting.lock().expect("relist lock").tasks).remove(id)?
    }

    /// Writes the listing keys of every waiting task (its current record's, read under its
    /// write lock, so that no write is in flight) and removes the keys it had, then flushes
    /// and records the generation as listed. One relist at a time. On an error the tasks not
    /// yet done wait again.
    pub(super) fn relist(&self) -> Result<(), StoreError> {
        let _one = self.relisting.lock().expect("relist lock");
        let (generation, tasks) = {
            let mut waiting = self.waiting.lock().expect("relist lock");
            if waiting.tasks.is_empty() {
                return Ok(());
            }
            let generation = waiting.generation;
            waiting.generation += 1;
            (generation, std::mem::take(&mut waiting.tasks))
        };
        let mut tasks = tasks.into_iter();
        while let Some((id, written)) = tasks.next() {
            if let Err(e) = self.relist_one(&id, written.as_ref()) {
                // Back in the waiting set (unless a newer write put them there already).
                let mut waiting = self.waiting.lock().expect("relist lock");
                for (id, written) in std::iter::once((id, written)).chain(tasks) {
                    waiting.tasks.entry(id).or_insert(written);
                }
                return Err(e);
            }
        }
        // The keys are durable before the record that says so.
        self.db.flush().map_err(backend)?;
        let meta = self.db.open_tree(super::META).map_err(backend)?;
        meta.insert(LISTED_UP_TO, &generation.to_be_bytes())
            .map_err(backend)?;
        Ok(())
    }

    fn relist_one(&self, id: &TaskId, written: Option<&Listed>) -> Result<(), StoreError> {
        let _stripe = self.stripe(id.as_str());
        let old = written.map_or_else(Vec::new, |l| index::keys(l).to_vec());
        // A task deleted meanwhile: `delete` removed its keys.
        let new = match self.load(id)? {
            Some(record) => index::keys(&Listed::of(&record.stored)).to_vec(),
            None => Vec::new(),
        };
        for k in new.iter().filter(|k| !old.contains(k)) {
            self.lists
                .insert(k.as_slice(), &[] as &[u8])
                .map_err(backend)?;
        }
        for k in old.iter().filter(|k| !new.contains(k)) {
            self.lists.remove(k.as_slice()).map_err(backend)?;
        }
        Ok(())
    }
}

/// The highest listed generation recorded in `meta` (0 for a database without one).
pub(super) fn listed_up_to(meta: &sled::Tree) -> Result<u64, StoreError> {
    Ok(meta
        .get(LISTED_UP_TO)
        .map_err(backend)?
        .and_then(|v| <[u8; 8]>::try_from(v.as_ref()).ok())
        .map_or(0, u64::from_be_bytes))
}
