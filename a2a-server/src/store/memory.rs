//! An in-memory [`TaskStore`], for tests and ephemeral servers. Nothing survives a restart.

use super::{
    ListPage, ListQuery, Scope, StoreError, StoredTask, TaskStore, decode_page_token,
    encode_page_token, order_key,
};
use a2a_core::{Task, TaskId, TaskState};
use async_trait::async_trait;
use std::cmp::Reverse;
use std::collections::{BTreeSet, HashMap};
use std::ops::Bound;
use std::sync::RwLock;

/// Keeps tasks in a hash map plus an ordered index for listing.
#[derive(Debug, Default)]
pub struct MemoryStore {
    inner: RwLock<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    tasks: HashMap<TaskId, StoredTask>,
    index: BTreeSet<(Reverse<i64>, String)>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

#[async_trait]
impl TaskStore for MemoryStore {
    async fn get(&self, id: &TaskId) -> Result<Option<StoredTask>, StoreError> {
        Ok(self
            .inner
            .read()
            .expect("store lock")
            .tasks
            .get(id)
            .cloned())
    }

    async fn create(&self, task: Task, scope: Scope) -> Result<StoredTask, StoreError> {
        let mut inner = self.inner.write().expect("store lock");
        if inner.tasks.contains_key(&task.id) {
            return Err(StoreError::AlreadyExists(task.id));
        }
        let stored = StoredTask {
            task,
            version: 1,
            scope,
        };
        inner.index.insert(order_key(&stored));
        inner.tasks.insert(stored.task.id.clone(), stored.clone());
        Ok(stored)
    }

    async fn update(&self, task: Task, expected_version: u64) -> Result<StoredTask, StoreError> {
        let mut guard = self.inner.write().expect("store lock");
        let inner = &mut *guard;
        let Some(current) = inner.tasks.get_mut(&task.id) else {
            return Err(StoreError::NotFound(task.id));
        };
        if current.version != expected_version {
            return Err(StoreError::VersionConflict {
                expected: expected_version,
                found: current.version,
            });
        }
        let old_key = order_key(current);
        current.task = task;
        current.version += 1;
        let new_key = order_key(current);
        let stored = current.clone();
        if old_key != new_key {
            inner.index.remove(&old_key);
            inner.index.insert(new_key);
        }
        Ok(stored)
    }

    async fn list(&self, query: &ListQuery) -> Result<ListPage, StoreError> {
        let start = match &query.page_token {
            Some(token) => Bound::Excluded(decode_page_token(token)?),
            None => Bound::Unbounded,
        };
        let inner = self.inner.read().expect("store lock");
        let matching = |key: &(Reverse<i64>, String)| {
            inner.tasks.get(key.1.as_str()).filter(|t| query.matches(t))
        };
        let total_size = inner.index.iter().filter_map(matching).count();
        let mut tasks = Vec::with_capacity(query.page_size.min(128));
        let mut more = false;
        for t in inner
            .index
            .range((start, Bound::Unbounded))
            .filter_map(matching)
        {
            if tasks.len() == query.page_size {
                more = true;
                break;
            }
            tasks.push(t.clone());
        }
        let next_page_token = if more {
            tasks.last().map(encode_page_token)
        } else {
            None
        };
        Ok(ListPage {
            tasks,
            next_page_token,
            total_size,
        })
    }

    async fn tasks_in_states(&self, states: &[TaskState]) -> Result<Vec<StoredTask>, StoreError> {
        let inner = self.inner.read().expect("store lock");
        Ok(inner
            .tasks
            .values()
            .filter(|t| states.contains(&t.task.status.state))
            .cloned()
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn memory_store_creates_gets_and_updates() {
        crate::store::tests::create_get_update(&MemoryStore::new()).await;
    }

    #[tokio::test]
    async fn memory_store_lists_newest_first_with_filters_and_pages() {
        crate::store::tests::list_orders_filters_and_pages(&MemoryStore::new()).await;
    }
}
