//! The sled store's scans (recovery, retention, claim expiry, webhook resumption), run on
//! tokio's blocking pool: sled reads block, and a scan reads many.

use super::{SledStore, backend, backend_msg, decode};
use crate::store::{MessageClaim, PushRecord, StoreError, StoredTask};
use a2a_core::{TaskId, TaskState, Timestamp};

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

    pub(super) fn expire_claims_blocking(&self, before_ms: i64) -> Result<usize, StoreError> {
        let mut n = 0;
        for entry in self.claims.iter() {
            let (key, value) = entry.map_err(backend)?;
            let claim: MessageClaim = serde_json::from_slice(&value).map_err(backend)?;
            if claim.received_ms < before_ms {
                self.claims.remove(key).map_err(backend)?;
                n += 1;
            }
        }
        Ok(n)
    }

    pub(super) fn tasks_with_push_configs_blocking(&self) -> Result<Vec<TaskId>, StoreError> {
        let mut out: Vec<TaskId> = Vec::new();
        for entry in self.pushes.iter() {
            let (_, v) = entry.map_err(backend)?;
            let r: PushRecord = serde_json::from_slice(&v).map_err(backend)?;
            if let Some(t) = r.config.task_id {
                if out.last() != Some(&t) {
                    out.push(t);
                }
            }
        }
        Ok(out)
    }

    pub(super) fn tasks_in_states_blocking(
        &self,
        states: &[TaskState],
    ) -> Result<Vec<StoredTask>, StoreError> {
        let mut out = Vec::new();
        for entry in self.tasks.iter() {
            let (_, bytes) = entry.map_err(backend)?;
            let snapshot = decode(&bytes)?;
            // A snapshot has the task's current state (only status updates change it, and
            // each one writes a snapshot): only the matches are materialized.
            if states.contains(&snapshot.task.status.state) {
                out.push(self.materialize(snapshot, bytes.len())?.stored);
            }
        }
        Ok(out)
    }
}
