//! The embedded store's scans of tasks (recovery, retention), run on tokio's blocking pool:
//! the engine's reads block, and a scan reads many. Retention reads the listing keys
//! (`kv/list.rs`): a finished task has no key of its own for it.

use super::{EmbeddedStore, Kv, KvTree, backend, engine};
use crate::store::index;
use crate::store::{StoreError, StoredTask};
use a2a_core::{TaskId, TaskState, Timestamp};
use std::collections::BinaryHeap;
use std::ops::Bound;

/// One listing range of a finished state, walked from its oldest end.
struct Oldest<T: KvTree> {
    prefix: Vec<u8>,
    keys: engine::Entries<T>,
}

impl<T: KvTree> Oldest<T> {
    /// The next key, older first, if its status time is before `before`.
    fn next(&mut self, before: i64) -> Result<Option<T::Bytes>, StoreError> {
        Ok(match self.keys.next_back().transpose().map_err(backend)? {
            Some((key, _))
                if key.starts_with(&self.prefix)
                    && !index::at_or_after(&key, self.prefix.len(), Some(before)) =>
            {
                Some(key)
            }
            _ => None,
        })
    }
}

impl<K: Kv> EmbeddedStore<K> {
    /// Runs `scan` on tokio's blocking pool.
    pub(super) async fn blocking<T: Send + 'static>(
        &self,
        scan: impl FnOnce(&Self) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let store = self.clone();
        tokio::task::spawn_blocking(move || scan(&store))
            .await
            .map_err(backend)?
    }

    /// `TaskStore::terminal_before` (on a blocking thread): relists the finished tasks first,
    /// so that each has its listing keys, then merges oldest first the listing ranges of the
    /// finished states (one per scope and state, walked from their oldest end) up to `before`.
    /// A page costs a seek per such range and the records of the page; keys a crash left
    /// stale are skipped, and removed.
    pub(super) fn terminal_before_blocking(
        &self,
        before: Timestamp,
        limit: usize,
    ) -> Result<Vec<TaskId>, StoreError> {
        self.relist(false)?;
        let before = before.unix_millis();
        let prefixes = self.counts.lock().expect("counts lock").finished_prefixes();
        let mut lanes: Vec<Oldest<K::Tree>> = (prefixes.into_iter())
            .map(|prefix| Oldest {
                keys: self.lists.range(prefix.clone()..index::end_key(&prefix)),
                prefix,
            })
            .collect();
        // The next key of each lane by its order part (inverted millis, then id): the largest
        // is the oldest.
        let mut next = BinaryHeap::with_capacity(lanes.len());
        let mut keys = Vec::with_capacity(lanes.len());
        for (i, lane) in lanes.iter_mut().enumerate() {
            let key = lane.next(before)?;
            if let Some(key) = &key {
                next.push((key[lane.prefix.len()..].to_vec(), i));
            }
            keys.push(key);
        }
        let mut out = Vec::new();
        let mut stale = Vec::new();
        while out.len() < limit
            && let Some((_, i)) = next.pop()
        {
            let (lane, slot) = (&mut lanes[i], &mut keys[i]);
            let Some(key) = slot.take() else { continue };
            match self.current(&key, lane.prefix.len())? {
                Some(t) => out.push(t.task.id.clone()),
                None => stale.push((key, lane.prefix.len())),
            }
            *slot = lane.next(before)?;
            if let Some(key) = slot {
                next.push((key[lane.prefix.len()..].to_vec(), i));
            }
        }
        for (key, prefix_len) in stale {
            self.remove_if_stale(&key, prefix_len)?;
        }
        Ok(out)
    }

    /// `TaskStore::tasks_in_states` (on a blocking thread): walks the task records in id
    /// order from `after`, reading only each one's indexed fields, until `limit` are in one of
    /// `states` (a snapshot always holds its task's state: every status update writes one).
    /// Recovery runs it once per start; an index by state would cost every write instead.
    pub(super) fn tasks_in_states_blocking(
        &self,
        states: &[TaskState],
        after: Option<&TaskId>,
        limit: usize,
    ) -> Result<Vec<StoredTask>, StoreError> {
        let start = match after {
            Some(a) => Bound::Excluded(a.as_str().as_bytes().to_vec()),
            None => Bound::Unbounded,
        };
        let mut out = Vec::new();
        for entry in self.tasks.range((start, Bound::Unbounded)) {
            if out.len() == limit {
                break;
            }
            let (_, bytes) = entry.map_err(backend)?;
            let listed = super::list::listed(&bytes)?;
            if let Some(state) = states.iter().find(|s| s.as_str() == listed.state) {
                out.extend(self.in_state(&listed.id, state)?);
            }
        }
        Ok(out)
    }

    /// The committed task `id`, if it is in `state`.
    fn in_state(&self, id: &str, state: &TaskState) -> Result<Option<StoredTask>, StoreError> {
        Ok(self
            .load(&TaskId::from(id))?
            .map(|r| r.stored)
            .filter(|t| t.task.status.state == *state))
    }
}
