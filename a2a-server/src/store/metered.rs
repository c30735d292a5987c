//! [`Metered`]: a store that times every operation of the store it wraps, for
//! `a2a_store_operation_duration_seconds`. Only in use when metrics are on.

use super::{
    BatchWrite, ClaimStore, JointCreate, JointWrites, ListPage, ListQuery, LoggedEvent,
    MessageClaim, PushRecord, PushStore, Scope, Store, StoreError, StoredTask, TaskStore,
};
use crate::telemetry::MetricsInner;
use a2a_core::{StreamResponse, Task, TaskId, TaskState, Timestamp};
use async_trait::async_trait;
use prometheus_client::metrics::histogram::Histogram;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// Times each operation of `inner` under its method's name.
pub(crate) struct Metered {
    inner: Arc<dyn Store>,
    metrics: Arc<MetricsInner>,
    /// Each operation's histogram, taken from the metrics on its first use.
    histograms: Histograms,
}

/// One histogram slot per store operation.
macro_rules! histograms {
    ($($op:ident),* $(,)?) => {
        #[derive(Default)]
        #[allow(non_snake_case)]
        struct Histograms { $($op: OnceLock<Histogram>,)* }
    };
}

histograms!(
    get,
    create,
    update,
    write_batch,
    events,
    delete,
    terminal_before,
    list,
    tasks_in_states,
    sync,
    claim_message,
    update_claim,
    release_claim,
    expire_claims,
    put_push_config,
    push_configs,
    push_config,
    push_config_count,
    delete_push_config,
    tasks_with_push_configs,
    advance_delivery,
    acquire_delivery,
    release_delivery,
    claim_reply,
    create_joint,
);

impl Metered {
    pub(crate) fn wrap(inner: Arc<dyn Store>, metrics: Arc<MetricsInner>) -> Arc<dyn Store> {
        Arc::new(Self {
            inner,
            metrics,
            histograms: Histograms::default(),
        })
    }
}

/// `self.inner.$op(args…)` (with `joint`, `$op` of the inner store's joint writes), timed as
/// `$op`.
macro_rules! timed {
    ($self:ident . $op:ident ( $($arg:expr),* )) => {
        timed!(@ $self, $self.inner, $op ( $($arg),* ))
    };
    (joint $self:ident . $op:ident ( $($arg:expr),* )) => {
        timed!(@ $self, $self.joint_inner()?, $op ( $($arg),* ))
    };
    (@ $self:ident, $inner:expr, $op:ident ( $($arg:expr),* )) => {{
        let start = Instant::now();
        let result = $inner.$op($($arg),*).await;
        let histogram = $self
            .histograms
            .$op
            .get_or_init(|| $self.metrics.store_histogram(stringify!($op)));
        histogram.observe(start.elapsed().as_secs_f64());
        result
    }};
}

#[async_trait]
impl TaskStore for Metered {
    async fn get(&self, id: &TaskId) -> Result<Option<StoredTask>, StoreError> {
        timed!(self.get(id))
    }

    fn task_json(&self, id: &TaskId, version: u64) -> Option<Box<serde_json::value::RawValue>> {
        self.inner.task_json(id, version)
    }

    /// Timed as the wrapped store's, when it has them.
    fn joint(&self) -> Option<&dyn JointWrites> {
        self.inner.joint().map(|_| self as &dyn JointWrites)
    }

    async fn create(&self, task: Arc<Task>, scope: Scope) -> Result<StoredTask, StoreError> {
        timed!(self.create(task, scope))
    }

    async fn update(
        &self,
        task: Arc<Task>,
        expected_version: u64,
        event: &StreamResponse,
    ) -> Result<StoredTask, StoreError> {
        timed!(self.update(task, expected_version, event))
    }

    async fn write_batch(
        &self,
        scope: &Scope,
        base: u64,
        changes: &[BatchWrite<'_>],
    ) -> Result<(), StoreError> {
        timed!(self.write_batch(scope, base, changes))
    }

    async fn events(
        &self,
        id: &TaskId,
        after: u64,
        limit: usize,
    ) -> Result<Vec<LoggedEvent>, StoreError> {
        timed!(self.events(id, after, limit))
    }

    async fn delete(&self, id: &TaskId) -> Result<bool, StoreError> {
        timed!(self.delete(id))
    }

    async fn terminal_before(
        &self,
        before: Timestamp,
        limit: usize,
    ) -> Result<Vec<TaskId>, StoreError> {
        timed!(self.terminal_before(before, limit))
    }

    async fn list(&self, query: &ListQuery) -> Result<ListPage, StoreError> {
        timed!(self.list(query))
    }

    async fn tasks_in_states(
        &self,
        states: &[TaskState],
        after: Option<&TaskId>,
        limit: usize,
    ) -> Result<Vec<StoredTask>, StoreError> {
        timed!(self.tasks_in_states(states, after, limit))
    }

    async fn sync(&self) -> Result<(), StoreError> {
        timed!(self.sync())
    }

    fn flushes(&self) -> bool {
        self.inner.flushes()
    }
}

#[async_trait]
impl ClaimStore for Metered {
    async fn claim_message(
        &self,
        key: &str,
        claim: MessageClaim,
    ) -> Result<Option<MessageClaim>, StoreError> {
        timed!(self.claim_message(key, claim))
    }

    async fn update_claim(&self, key: &str, claim: MessageClaim) -> Result<(), StoreError> {
        timed!(self.update_claim(key, claim))
    }

    async fn release_claim(&self, key: &str) -> Result<(), StoreError> {
        timed!(self.release_claim(key))
    }

    async fn expire_claims(&self, before_ms: i64) -> Result<usize, StoreError> {
        timed!(self.expire_claims(before_ms))
    }
}

#[async_trait]
impl PushStore for Metered {
    async fn put_push_config(&self, record: PushRecord) -> Result<(), StoreError> {
        timed!(self.put_push_config(record))
    }

    async fn push_configs(&self, task: &TaskId) -> Result<Vec<PushRecord>, StoreError> {
        timed!(self.push_configs(task))
    }

    async fn push_config(&self, task: &TaskId, id: &str) -> Result<Option<PushRecord>, StoreError> {
        timed!(self.push_config(task, id))
    }

    async fn push_config_count(&self, task: &TaskId) -> Result<usize, StoreError> {
        timed!(self.push_config_count(task))
    }

    async fn delete_push_config(&self, task: &TaskId, id: &str) -> Result<bool, StoreError> {
        timed!(self.delete_push_config(task, id))
    }

    async fn tasks_with_push_configs(
        &self,
        after: Option<&TaskId>,
        limit: usize,
    ) -> Result<Vec<TaskId>, StoreError> {
        timed!(self.tasks_with_push_configs(after, limit))
    }

    async fn advance_delivery(
        &self,
        record: &PushRecord,
        expected: u64,
    ) -> Result<bool, StoreError> {
        timed!(self.advance_delivery(record, expected))
    }

    async fn acquire_delivery(
        &self,
        task: &TaskId,
        id: &str,
        owner: &str,
        ttl: Duration,
    ) -> Result<bool, StoreError> {
        timed!(self.acquire_delivery(task, id, owner, ttl))
    }

    async fn release_delivery(
        &self,
        task: &TaskId,
        id: &str,
        owner: &str,
    ) -> Result<(), StoreError> {
        timed!(self.release_delivery(task, id, owner))
    }
}

/// Only reached through [`TaskStore::joint`], which offers it when the wrapped store has joint
/// writes.
#[async_trait]
impl JointWrites for Metered {
    fn database(&self) -> u64 {
        self.inner.joint().map_or(0, JointWrites::database)
    }

    async fn claim_reply(
        &self,
        key: &str,
        claim: &MessageClaim,
    ) -> Result<Option<MessageClaim>, StoreError> {
        timed!(joint self.claim_reply(key, claim))
    }

    async fn create_joint(
        &self,
        scope: &Scope,
        changes: &[BatchWrite<'_>],
        claim: Option<(&str, &MessageClaim)>,
        lease: Option<&str>,
    ) -> Result<JointCreate, StoreError> {
        timed!(joint self.create_joint(scope, changes, claim, lease))
    }
}

impl Metered {
    /// The wrapped store's joint writes (always there when these are called).
    fn joint_inner(&self) -> Result<&dyn JointWrites, StoreError> {
        self.inner
            .joint()
            .ok_or_else(|| StoreError::Backend("the wrapped store has no joint writes".into()))
    }
}
