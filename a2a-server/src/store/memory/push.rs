//! The memory store's webhook registrations: by task, with the tasks that have some in order,
//! and their delivery leases.

use super::MemoryStore;
use crate::store::{PushRecord, PushStore, StoreError, may_advance};
use a2a_core::TaskId;
use async_trait::async_trait;
use std::ops::Bound;
use std::time::Duration;

#[async_trait]
impl PushStore for MemoryStore {
    async fn put_push_config(&self, record: PushRecord) -> Result<(), StoreError> {
        let mut inner = self.inner.write().expect("store lock");
        let task = record.config.task_id.clone().unwrap_or_default();
        if !inner.pushes.contains_key(&task) {
            inner.push_tasks.insert(task.as_str().to_owned());
        }
        let list = inner.pushes.entry(task).or_default();
        match list.by_id.get(record.id()) {
            Some(&at) => list.records[at] = record,
            None => {
                list.by_id
                    .insert(record.id().to_owned(), list.records.len());
                list.records.push(record);
            }
        }
        Ok(())
    }

    async fn push_configs(&self, task: &TaskId) -> Result<Vec<PushRecord>, StoreError> {
        let inner = self.inner.read().expect("store lock");
        Ok(inner
            .pushes
            .get(task)
            .map(|l| l.records.clone())
            .unwrap_or_default())
    }

    async fn push_config(&self, task: &TaskId, id: &str) -> Result<Option<PushRecord>, StoreError> {
        let inner = self.inner.read().expect("store lock");
        Ok(inner
            .pushes
            .get(task)
            .and_then(|l| l.by_id.get(id).map(|&at| l.records[at].clone())))
    }

    async fn push_config_count(&self, task: &TaskId) -> Result<usize, StoreError> {
        let inner = self.inner.read().expect("store lock");
        Ok(inner.pushes.get(task).map_or(0, |l| l.records.len()))
    }

    async fn delete_push_config(&self, task: &TaskId, id: &str) -> Result<bool, StoreError> {
        let mut inner = self.inner.write().expect("store lock");
        let Some(list) = inner.pushes.get_mut(task) else {
            return Ok(false);
        };
        let Some(at) = list.by_id.remove(id) else {
            return Ok(false);
        };
        list.records.remove(at);
        for (i, r) in list.records.iter().enumerate().skip(at) {
            list.by_id.insert(r.id().to_owned(), i);
        }
        if list.records.is_empty() {
            inner.pushes.remove(task);
            inner.push_tasks.remove(task.as_str());
        }
        Ok(true)
    }

    async fn tasks_with_push_configs(
        &self,
        after: Option<&TaskId>,
        limit: usize,
    ) -> Result<Vec<TaskId>, StoreError> {
        let inner = self.inner.read().expect("store lock");
        let start = after.map_or(Bound::Unbounded, |a| Bound::Excluded(a.as_str()));
        Ok(inner
            .push_tasks
            .range::<str, _>((start, Bound::Unbounded))
            .take(limit)
            .map(|id| TaskId::from(id.as_str()))
            .collect())
    }

    async fn advance_delivery(
        &self,
        record: &PushRecord,
        expected: u64,
    ) -> Result<bool, StoreError> {
        let task = record.config.task_id.clone().unwrap_or_default();
        let mut inner = self.inner.write().expect("store lock");
        let stored = inner
            .pushes
            .get_mut(&task)
            .and_then(|l| l.by_id.get(record.id()).map(|&at| &mut l.records[at]));
        match stored {
            Some(s) if may_advance(s, record, expected) => {
                s.delivered = record.delivered;
                s.dead_letter.clone_from(&record.dead_letter);
                Ok(true)
            }
            _ => Ok(false),
        }
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
