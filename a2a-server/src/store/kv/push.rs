//! The sled store's webhook registrations (trees `push_configs`, in registration order per
//! task, and `push_config_ids`, by task and config id), their delivery cursors, moved by
//! compare-and-swap, and their delivery leases.

use super::{EmbeddedStore, Kv, KvTree, backend, engine, log_prefix, push_id_key};
use crate::store::{PushRecord, PushStore, StoreError, may_advance};
use a2a_core::{TaskId, Timestamp};
use async_trait::async_trait;
use std::ops::Bound;
use std::time::Duration;

impl<K: Kv> EmbeddedStore<K> {
    /// The key and record of a task's webhook registration (through `push_ids`).
    pub(super) fn find_push(
        &self,
        task: &TaskId,
        id: &str,
    ) -> Result<Option<(engine::Bytes<K>, PushRecord)>, StoreError> {
        let ids_key = push_id_key(task.as_str(), id);
        let Some(key) = self.push_ids.get(ids_key).map_err(backend)? else {
            return Ok(None);
        };
        // An index entry without its record: a put that did not complete.
        let Some(value) = self.pushes.get(&key).map_err(backend)? else {
            return Ok(None);
        };
        Ok(Some((
            key,
            serde_json::from_slice(&value).map_err(backend)?,
        )))
    }

    /// `PushStore::tasks_with_push_configs` (on a blocking thread): one range lookup per task,
    /// each starting past the previous task's registrations.
    pub(super) fn tasks_with_push_configs_blocking(
        &self,
        after: Option<&TaskId>,
        limit: usize,
    ) -> Result<Vec<TaskId>, StoreError> {
        let mut start = match after {
            Some(a) => past(&log_prefix(a.as_str())),
            None => Some(Vec::new()),
        };
        let mut out = Vec::new();
        while out.len() < limit {
            let Some(from) = start.take() else { break };
            let Some(entry) = self
                .pushes
                .range((Bound::Included(from), Bound::Unbounded))
                .next()
            else {
                break;
            };
            let (key, _) = entry.map_err(backend)?;
            // `log_prefix(task)`: the task id, length-prefixed.
            let len = key
                .get(..2)
                .map_or(0, |l| usize::from(u16::from_be_bytes([l[0], l[1]])));
            let Some(prefix) = key.get(..2 + len) else {
                break;
            };
            let id = std::str::from_utf8(&prefix[2..]).map_err(super::backend_msg)?;
            out.push(TaskId::from(id));
            start = past(prefix);
        }
        Ok(out)
    }

    /// `PushStore::advance_delivery`: a compare-and-swap of the record's bytes, retried while
    /// other writes (of the same registration) slip in between the read and the swap.
    fn advance_blocking(&self, record: &PushRecord, expected: u64) -> Result<bool, StoreError> {
        let task = record.config.task_id.clone().unwrap_or_default();
        let Some(key) = self
            .push_ids
            .get(push_id_key(task.as_str(), record.id()))
            .map_err(backend)?
        else {
            return Ok(false);
        };
        loop {
            let Some(raw) = self.pushes.get(&key).map_err(backend)? else {
                return Ok(false);
            };
            let mut stored: PushRecord = serde_json::from_slice(&raw).map_err(backend)?;
            if !may_advance(&stored, record, expected) {
                return Ok(false);
            }
            stored.delivered = record.delivered;
            stored.dead_letter.clone_from(&record.dead_letter);
            let value = serde_json::to_vec(&stored).map_err(backend)?;
            let swapped = self
                .pushes
                .compare_and_swap(&key, Some(&raw), Some(&value))
                .map_err(backend)?;
            if swapped.is_ok() {
                self.wrote();
                return Ok(true);
            }
        }
    }
}

/// The first key after every key that starts with `prefix`, if there is one.
fn past(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut key = prefix.to_vec();
    while let Some(last) = key.pop() {
        if last < u8::MAX {
            key.push(last + 1);
            return Some(key);
        }
    }
    None
}

#[async_trait]
impl<K: Kv> PushStore for EmbeddedStore<K> {
    async fn put_push_config(&self, record: PushRecord) -> Result<(), StoreError> {
        let task = record.config.task_id.clone().unwrap_or_default();
        let ids_key = push_id_key(task.as_str(), record.id());
        // Registration order: a creation stamp ahead of the id, kept on replacement. The
        // index entry is written first, so that every record has one.
        let key = match self.push_ids.get(&ids_key).map_err(backend)? {
            Some(k) => k.to_vec(),
            None => {
                let mut key = log_prefix(task.as_str());
                let stamp = u64::try_from(Timestamp::now().unix_millis()).unwrap_or_default();
                key.extend_from_slice(&stamp.to_be_bytes());
                key.extend_from_slice(record.id().as_bytes());
                self.push_ids.insert(ids_key, &key).map_err(backend)?;
                key
            }
        };
        let value = serde_json::to_vec(&record).map_err(backend)?;
        let mut counts = self.push_counts.lock().expect("counts lock");
        if (self.pushes.swap(key, Some(&value)).map_err(backend)?).is_none() {
            counts.entry(task).and_modify(|n| *n += 1);
        }
        drop(counts);
        self.wrote();
        Ok(())
    }

    async fn push_configs(&self, task: &TaskId) -> Result<Vec<PushRecord>, StoreError> {
        self.pushes
            .scan_prefix(log_prefix(task.as_str()))
            .map(|e| {
                let (_, v) = e.map_err(backend)?;
                serde_json::from_slice(&v).map_err(backend)
            })
            .collect()
    }

    async fn push_config(&self, task: &TaskId, id: &str) -> Result<Option<PushRecord>, StoreError> {
        Ok(self.find_push(task, id)?.map(|(_, r)| r))
    }

    async fn push_config_count(&self, task: &TaskId) -> Result<usize, StoreError> {
        if let Some(n) = self.push_counts.lock().expect("counts lock").get(task) {
            return Ok(*n);
        }
        // Counted while holding the lock, so that no write slips between the count and its
        // caching.
        let mut counts = self.push_counts.lock().expect("counts lock");
        let mut n = 0;
        for entry in engine::keys(self.pushes.scan_prefix(log_prefix(task.as_str()))) {
            entry.map_err(backend)?;
            n += 1;
        }
        counts.insert(task.clone(), n);
        Ok(n)
    }

    async fn delete_push_config(&self, task: &TaskId, id: &str) -> Result<bool, StoreError> {
        let ids_key = push_id_key(task.as_str(), id);
        let Some(key) = self.push_ids.get(&ids_key).map_err(backend)? else {
            return Ok(false);
        };
        // The record first: an index entry without one is ignored.
        let mut counts = self.push_counts.lock().expect("counts lock");
        let existed = self.pushes.swap(key, None).map_err(backend)?.is_some();
        if existed {
            counts.entry(task.clone()).and_modify(|n| *n -= 1);
        }
        drop(counts);
        self.push_ids.remove(ids_key).map_err(backend)?;
        self.wrote();
        Ok(existed)
    }

    async fn tasks_with_push_configs(
        &self,
        after: Option<&TaskId>,
        limit: usize,
    ) -> Result<Vec<TaskId>, StoreError> {
        let after = after.cloned();
        self.blocking(move |store| store.tasks_with_push_configs_blocking(after.as_ref(), limit))
            .await
    }

    async fn advance_delivery(
        &self,
        record: &PushRecord,
        expected: u64,
    ) -> Result<bool, StoreError> {
        self.advance_blocking(record, expected)
    }

    async fn acquire_delivery(
        &self,
        task: &TaskId,
        id: &str,
        owner: &str,
        ttl: Duration,
    ) -> Result<bool, StoreError> {
        Ok(self.leases.acquire(task, id, owner, ttl))
    }

    async fn release_delivery(
        &self,
        task: &TaskId,
        id: &str,
        owner: &str,
    ) -> Result<(), StoreError> {
        self.leases.release(task, id, owner);
        Ok(())
    }
}
