//! Listing keys written late: a write that moves a task's listing keys (a new state or status
//! time) does not touch `task_lists`; it notes the task here, and a *relist* later writes the
//! keys of the task's state at that time and removes the ones `task_lists` had. A task that is
//! created and finishes between two relists has its keys written once, for its final state,
//! instead of four inserted at creation, then four removed and four inserted at each status
//! change: on sled, the listing keys were half the tree operations of a SendMessage.
//!
//! A relist runs before every listing (so a listing shows every acknowledged write), before
//! every retention page (of the finished tasks: retention reads their listing keys,
//! `kv/scan.rs`), and in the background once [`RELIST_AFTER`] *finished* tasks wait. A
//! background relist writes the keys of the finished tasks, and of the others only once they
//! have waited [`RELIST_AGE`]: a running task's state is about to change again, and relisting
//! it now would move its keys twice. A relist of everything also starts when [`RELIST_MAX`] tasks wait, and a write
//! that finds [`RELIST_BACKLOG`] waiting relists them itself before it returns, which bounds
//! the set whatever the tasks do and however fast they come.
//!
//! **After a crash.** Each value (snapshot or head) a write stores is stamped with the current
//! *generation*. A relist moves to the next generation; after the keys it wrote, it records in
//! tree `store_meta` the highest generation below which no task is left waiting (a task waits
//! from the first write it was noted for, so its values are stamped at or above that write's
//! generation). A crash keeps a prefix of the engine's writes (`kv/engine.rs`), so a record
//! that survives has its keys with it, and neither needs a flush of its own: the next group
//! commit makes both durable. So a value stamped above that record may lack its keys: opening
//! the store, which reads every record anyway (`list::open_indexes`), writes the keys of those.
//! A key left over from an earlier state is stale, and a listing that meets one removes it.

use super::{EmbeddedStore, Kv, KvTree, backend};
use crate::store::StoreError;
use crate::store::index::{self, Listed};
use a2a_core::TaskId;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// How many finished tasks may wait for their listing keys before a write starts a relist in
/// the background (on tokio's blocking pool). A larger batch saves no more sled work but
/// stalls the server's core for longer (bench/HISTORY.md, "Relist batches").
pub const RELIST_AFTER: usize = 64;

/// How long an unfinished task waits before a background relist writes its keys.
pub const RELIST_AGE: Duration = Duration::from_secs(1);

/// How many tasks, finished or not, may wait before a write starts a relist of all of them.
pub const RELIST_MAX: usize = 4096;

/// How many tasks may wait before a write, once committed, relists them itself and waits for
/// it: under a write load faster than the background relists, the writers pay for the backlog
/// instead of the next listing, and the set stays bounded (bench/HISTORY.md, "Relist batches").
pub const RELIST_BACKLOG: usize = 2 * RELIST_MAX;

/// The `store_meta` key of the highest generation whose listing keys are durable (u64,
/// big-endian).
pub(super) const LISTED_UP_TO: &[u8] = b"task_lists_listed_up_to";

/// A task whose listing keys lag its committed record.
#[derive(Debug)]
pub(super) struct Wait {
    /// The fields its keys in `task_lists` were written for (`None`: no keys yet).
    written: Option<Listed>,
    /// The generation of the write that noted it (its values since are stamped at or above).
    first: u64,
    /// When that write noted it.
    noted: Instant,
    /// Whether its last write finished it (its keys will not move again).
    finished: bool,
}

/// The tasks whose listing keys lag their committed record, and the generation values are
/// stamped with now.
#[derive(Debug, Default)]
pub(super) struct Waiting {
    generation: u64,
    pub(super) tasks: HashMap<TaskId, Wait>,
    /// How many of `tasks` are finished.
    finished: usize,
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

    /// Takes the tasks a relist writes: all of them, or (`all` false) the finished ones and
    /// those that waited long enough.
    fn take(&mut self, all: bool) -> Vec<(TaskId, Wait)> {
        if all || self.finished == self.tasks.len() {
            self.finished = 0;
            return self.tasks.drain().collect();
        }
        let now = Instant::now();
        let due = |w: &Wait| w.finished || now.duration_since(w.noted) >= RELIST_AGE;
        let ids: Vec<TaskId> = (self.tasks.iter())
            .filter(|(_, w)| due(w))
            .map(|(id, _)| id.clone())
            .collect();
        let taken: Vec<(TaskId, Wait)> = ids
            .into_iter()
            .filter_map(|id| self.tasks.remove_entry(&id))
            .collect();
        self.finished -= taken.iter().filter(|(_, w)| w.finished).count();
        taken
    }

    /// Puts back a task a relist could not write (unless a newer write noted it again).
    fn put_back(&mut self, id: TaskId, wait: Wait) {
        if let std::collections::hash_map::Entry::Vacant(slot) = self.tasks.entry(id) {
            self.finished += usize::from(wait.finished);
            slot.insert(wait);
        }
    }

    /// The highest generation no waiting task was noted at or below.
    fn listed_below(&self) -> u64 {
        let oldest = self.tasks.values().map(|w| w.first).min();
        oldest.map_or(self.generation - 1, |g| g.saturating_sub(1))
    }
}

impl<K: Kv> EmbeddedStore<K> {
    /// Called by a value write, under the task's write lock, before the value is stored: the
    /// generation to stamp it with. When the write moves the task's keys (`moved`), the task
    /// waits for a relist, with `written`, the fields of its keys in `task_lists` (the previous
    /// record's, or none for a new task), unless it was already waiting; `finished` says
    /// whether the write finishes the task.
    pub(super) fn stamp(
        &self,
        id: &TaskId,
        moved: bool,
        written: Option<&Listed>,
        finished: bool,
    ) -> u64 {
        let mut waiting = self.waiting.lock().expect("relist lock");
        let generation = waiting.generation;
        if moved {
            let wait = waiting.tasks.entry(id.clone()).or_insert_with(|| Wait {
                written: written.cloned(),
                first: generation,
                noted: Instant::now(),
                finished: false,
            });
            let newly = finished && !wait.finished;
            wait.finished |= finished;
            waiting.finished += usize::from(newly);
            if (waiting.finished >= RELIST_AFTER || waiting.tasks.len() >= RELIST_MAX)
                && !waiting.queued
            {
                waiting.queued = true;
                let store = self.clone();
                match tokio::runtime::Handle::try_current() {
                    Ok(rt) => drop(rt.spawn_blocking(move || store.relist_queued())),
                    // Not on a runtime (a synchronous caller): the next listing relists.
                    Err(_) => waiting.queued = false,
                }
            }
        }
        generation
    }

    fn relist_queued(&self) {
        let all = self.waiting.lock().expect("relist lock").tasks.len() >= RELIST_MAX;
        if let Err(e) = self.relist(all) {
            tracing::warn!(error = %e, "writing listing keys failed; the next listing retries");
        }
        self.waiting.lock().expect("relist lock").queued = false;
    }

    /// Called by a write once committed, outside its write lock: when [`RELIST_BACKLOG`]
    /// tasks wait, relists all of them (on tokio's blocking pool, or here when not on a
    /// runtime) and returns when done. A relist that fails is logged and left to the next one:
    /// the write itself is committed.
    pub(super) async fn relist_backlog(&self) {
        if self.waiting.lock().expect("relist lock").tasks.len() < RELIST_BACKLOG {
            return;
        }
        let result = match tokio::runtime::Handle::try_current() {
            Ok(_) => {
                let store = self.clone();
                tokio::task::spawn_blocking(move || store.relist(true))
                    .await
                    .unwrap_or_else(|e| Err(super::backend(e)))
            }
            Err(_) => self.relist(true),
        };
        if let Err(e) = result {
            tracing::warn!(error = %e, "writing listing keys failed; the next listing retries");
        }
    }

    /// Forgets a deleted task: its keys in `task_lists`, if it was waiting (the caller removes
    /// those of its current record).
    pub(super) fn unwait(&self, id: &TaskId) -> Option<Listed> {
        let mut waiting = self.waiting.lock().expect("relist lock");
        let wait = waiting.tasks.remove(id)?;
        waiting.finished -= usize::from(wait.finished);
        wait.written
    }

    /// Writes the listing keys of the waiting tasks (`all`, or those [`Waiting::take`] picks):
    /// for each, its current record's keys, read under its write lock so that no write is in
    /// flight, and removes the keys it had; then records the generation below which nothing
    /// waits (no flush: see the module's docs). One relist at a time. On an error the tasks
    /// not yet done wait again.
    pub(super) fn relist(&self, all: bool) -> Result<(), StoreError> {
        let _one = self.relisting.lock().expect("relist lock");
        let tasks = {
            let mut waiting = self.waiting.lock().expect("relist lock");
            let tasks = waiting.take(all);
            if tasks.is_empty() {
                return Ok(());
            }
            waiting.generation += 1;
            tasks
        };
        let mut tasks = tasks.into_iter();
        while let Some((id, wait)) = tasks.next() {
            if let Err(e) = self.relist_one(&id, wait.written.as_ref()) {
                let mut waiting = self.waiting.lock().expect("relist lock");
                for (id, wait) in std::iter::once((id, wait)).chain(tasks) {
                    waiting.put_back(id, wait);
                }
                return Err(e);
            }
        }
        // Written after the keys: a crash that keeps the record keeps them.
        let listed = self.waiting.lock().expect("relist lock").listed_below();
        let meta = self.db.open_tree(super::META).map_err(backend)?;
        meta.insert(LISTED_UP_TO, listed.to_be_bytes())
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
pub(super) fn listed_up_to<T: KvTree>(meta: &T) -> Result<u64, StoreError> {
    Ok(meta
        .get(LISTED_UP_TO)
        .map_err(backend)?
        .and_then(|v| <[u8; 8]>::try_from(v.as_ref()).ok())
        .map_or(0, u64::from_be_bytes))
}
