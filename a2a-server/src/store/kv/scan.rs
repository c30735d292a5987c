//! The sled store's scans of tasks (recovery, retention), run on
//! tokio's blocking pool: sled reads block, and a scan reads many.

use super::{EmbeddedStore, Kv, KvTree, backend, backend_msg};
use crate::store::{StoreError, StoredTask};
use a2a_core::{TaskId, TaskState, Timestamp};
use std::ops::Bound;

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

    pub(super) fn terminal_before_blocking(
        &self,
        before: Timestamp,
        limit: usize,
    ) -> Result<Vec<TaskId>, StoreError> {
        let mut out = Vec::new();
        let mut stale = Vec::new();
        for entry in self.index.iter().rev() {
            let (key, _) = entry.map_err(backend)?;
            let inverted: [u8; 8] = key[..8].try_into().map_err(backend_msg)?;
            let millis = i64::MAX - i64::from_be_bytes(inverted);
            if millis >= before.unix_millis() || out.len() == limit {
                break;
            }
            match self.retained(&key)? {
                Some(t) => out.push(t.task.id.clone()),
                None => stale.push(key),
            }
        }
        for key in stale {
            self.remove_if_not_retained(&key)?;
        }
        Ok(out)
    }

    /// The finished task a retention key points to, if the key is current.
    fn retained(&self, key: &[u8]) -> Result<Option<StoredTask>, StoreError> {
        Ok(self
            .indexed(key)?
            .filter(|t| t.task.status.state.is_terminal()))
    }

    /// Removes a retention key that points at no finished task (left by a crash, or by a
    /// store written before only finished tasks had one), unless a write made it current
    /// meanwhile: checked again under the task's write lock, which a write holds from
    /// inserting its keys to committing its record.
    fn remove_if_not_retained(&self, key: &[u8]) -> Result<(), StoreError> {
        let Some(id) = key.get(8..).and_then(|id| std::str::from_utf8(id).ok()) else {
            return Ok(()); // not a key this store writes; leave it
        };
        let _stripe = self.stripe(id);
        if self.retained(key)?.is_none() {
            self.index.remove(key).map_err(backend)?;
        }
        Ok(())
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
