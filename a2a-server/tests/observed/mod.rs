//! A memory store a test can watch: it does what `MemoryStore` does, and tells its
//! [`Hooks`] of each task write, each log read, each webhook registration read, and each flush
//! (which the hooks may hold back).

#![allow(dead_code, unreachable_pub)]

use a2a_core::{StreamResponse, Task, TaskId, TaskState, Timestamp};
use a2a_server::store::{ListPage, ListQuery, LoggedEvent, PushRecord};
use a2a_server::{
    ClaimStore, MemoryStore, MessageClaim, PushStore, Scope, StoreError, StoredTask, TaskStore,
};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// What a test is told. Every method does nothing unless the test says otherwise.
pub trait Hooks: Send + Sync + 'static {
    /// A task was written (created or updated) as `stored`.
    fn wrote(&self, _stored: &StoredTask) {}

    /// `n` webhook registrations were read.
    fn read_records(&self, _n: usize) {}

    /// A task's log was read (`TaskStore::events`).
    fn read_log(&self, _id: &TaskId) {}

    /// A flush (`TaskStore::sync`): returns once it may complete, with its result.
    fn sync(&self) -> impl Future<Output = Result<(), StoreError>> + Send {
        async { Ok(()) }
    }

    /// What the store answers to `TaskStore::flushes`: whether its writes wait for a flush.
    fn flushes(&self) -> bool {
        false
    }
}

/// The store.
pub struct Observed<H> {
    inner: MemoryStore,
    pub hooks: H,
}

impl<H: Hooks> Observed<H> {
    pub fn new(hooks: H) -> Self {
        Self {
            inner: MemoryStore::new(),
            hooks,
        }
    }

    fn wrote(&self, stored: Result<StoredTask, StoreError>) -> Result<StoredTask, StoreError> {
        if let Ok(s) = &stored {
            self.hooks.wrote(s);
        }
        stored
    }
}

#[async_trait::async_trait]
impl<H: Hooks> TaskStore for Observed<H> {
    async fn get(&self, id: &TaskId) -> Result<Option<StoredTask>, StoreError> {
        self.inner.get(id).await
    }
    async fn create(&self, task: Arc<Task>, scope: Scope) -> Result<StoredTask, StoreError> {
        self.wrote(self.inner.create(task, scope).await)
    }
    async fn update(
        &self,
        task: Arc<Task>,
        expected_version: u64,
        event: &StreamResponse,
    ) -> Result<StoredTask, StoreError> {
        self.wrote(self.inner.update(task, expected_version, event).await)
    }
    async fn events(
        &self,
        id: &TaskId,
        after: u64,
        limit: usize,
    ) -> Result<Vec<LoggedEvent>, StoreError> {
        self.hooks.read_log(id);
        self.inner.events(id, after, limit).await
    }
    async fn delete(&self, id: &TaskId) -> Result<bool, StoreError> {
        self.inner.delete(id).await
    }
    async fn terminal_before(
        &self,
        before: Timestamp,
        limit: usize,
    ) -> Result<Vec<TaskId>, StoreError> {
        self.inner.terminal_before(before, limit).await
    }
    async fn list(&self, query: &ListQuery) -> Result<ListPage, StoreError> {
        self.inner.list(query).await
    }
    async fn tasks_in_states(
        &self,
        states: &[TaskState],
        after: Option<&TaskId>,
        limit: usize,
    ) -> Result<Vec<StoredTask>, StoreError> {
        self.inner.tasks_in_states(states, after, limit).await
    }
    async fn sync(&self) -> Result<(), StoreError> {
        self.hooks.sync().await?;
        self.inner.sync().await
    }
    fn flushes(&self) -> bool {
        self.hooks.flushes()
    }
}

#[async_trait::async_trait]
impl<H: Hooks> ClaimStore for Observed<H> {
    async fn claim_message(
        &self,
        key: &str,
        claim: MessageClaim,
    ) -> Result<Option<MessageClaim>, StoreError> {
        self.inner.claim_message(key, claim).await
    }
    async fn update_claim(&self, key: &str, claim: MessageClaim) -> Result<(), StoreError> {
        self.inner.update_claim(key, claim).await
    }
    async fn release_claim(&self, key: &str) -> Result<(), StoreError> {
        self.inner.release_claim(key).await
    }
    async fn expire_claims(&self, before_ms: i64) -> Result<usize, StoreError> {
        self.inner.expire_claims(before_ms).await
    }
}

#[async_trait::async_trait]
impl<H: Hooks> PushStore for Observed<H> {
    async fn put_push_config(&self, record: PushRecord) -> Result<(), StoreError> {
        self.inner.put_push_config(record).await
    }
    async fn push_configs(&self, task: &TaskId) -> Result<Vec<PushRecord>, StoreError> {
        let all = self.inner.push_configs(task).await?;
        self.hooks.read_records(all.len());
        Ok(all)
    }
    async fn push_config(&self, task: &TaskId, id: &str) -> Result<Option<PushRecord>, StoreError> {
        self.hooks.read_records(1);
        self.inner.push_config(task, id).await
    }
    async fn push_config_count(&self, task: &TaskId) -> Result<usize, StoreError> {
        self.inner.push_config_count(task).await
    }
    async fn delete_push_config(&self, task: &TaskId, id: &str) -> Result<bool, StoreError> {
        self.inner.delete_push_config(task, id).await
    }
    async fn tasks_with_push_configs(
        &self,
        after: Option<&TaskId>,
        limit: usize,
    ) -> Result<Vec<TaskId>, StoreError> {
        self.inner.tasks_with_push_configs(after, limit).await
    }
    async fn advance_delivery(
        &self,
        record: &PushRecord,
        expected: u64,
    ) -> Result<bool, StoreError> {
        self.inner.advance_delivery(record, expected).await
    }
    async fn acquire_delivery(
        &self,
        task: &TaskId,
        id: &str,
        owner: &str,
        ttl: Duration,
    ) -> Result<bool, StoreError> {
        self.inner.acquire_delivery(task, id, owner, ttl).await
    }
    async fn release_delivery(
        &self,
        task: &TaskId,
        id: &str,
        owner: &str,
    ) -> Result<(), StoreError> {
        self.inner.release_delivery(task, id, owner).await
    }
}
