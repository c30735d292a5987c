//! The sled store's scans of tasks (recovery, retention), run on
//! tokio's blocking pool: sled reads block, and a scan reads many.

use super::{SledStore, backend, backend_msg, log_prefix, state_key};
use crate::store::{StoreError, StoredTask};
use a2a_core::{TaskId, TaskState, Timestamp};
use std::ops::Bound;

impl SledStore {
    /// Runs `scan` on tokio's blocking pool.
    pub(super) async fn blocking<T: Send + 'static>(
        &self,
        scan: impl FnOnce(&SledStore) -> Result<T, StoreError> + Send + 'static,
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
        for entry in self.index.iter().rev() {
            let (key, _) = entry.map_err(backend)?;
            let inverted: [u8; 8] = key[..8].try_into().map_err(backend_msg)?;
            let millis = i64::MAX - i64::from_be_bytes(inverted);
            if millis >= before.unix_millis() || out.len() == limit {
                break;
            }
            let Some(t) = self.indexed(&key)? else {
                continue;
            };
            if t.task.status.state.is_terminal() {
                out.push(t.task.id.clone());
            }
        }
        Ok(out)
    }

    /// `TaskStore::tasks_in_states` (on a blocking thread): up to `limit` current entries of
    /// each state's range of `task_states` after `after`, merged by id. An entry whose task is
    /// no longer in that state (left by a write cut short by a crash) is skipped and removed.
    pub(super) fn tasks_in_states_blocking(
        &self,
        states: &[TaskState],
        after: Option<&TaskId>,
        limit: usize,
    ) -> Result<Vec<StoredTask>, StoreError> {
        let mut out: Vec<StoredTask> = Vec::new();
        for state in states {
            let prefix = log_prefix(state.as_str());
            let start = match after {
                Some(a) => Bound::Excluded(state_key(state.as_str(), a.as_str())),
                None => Bound::Included(prefix.clone()),
            };
            let mut found = 0;
            for entry in self.states.range((start, Bound::Unbounded)) {
                let (key, _) = entry.map_err(backend)?;
                if found == limit || !key.starts_with(&prefix) {
                    break;
                }
                let id = std::str::from_utf8(&key[prefix.len()..]).map_err(backend_msg)?;
                match self.in_state(id, state)? {
                    Some(t) => {
                        found += 1;
                        out.push(t);
                    }
                    None => {
                        let _stripe = self.stripe(id);
                        if self.in_state(id, state)?.is_none() {
                            self.states.remove(&key).map_err(backend)?;
                        }
                    }
                }
            }
        }
        out.sort_by(|a, b| a.task.id.as_str().cmp(b.task.id.as_str()));
        out.dedup_by(|a, b| a.task.id == b.task.id);
        out.truncate(limit);
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
