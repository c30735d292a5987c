//! Storage: the [`Store`] of a server, split by concern into [`TaskStore`] (tasks, their event
//! logs, listing and retention), [`ClaimStore`] (message claims, for idempotent sends) and
//! [`PushStore`] (webhook registrations with their delivery cursors and leases), and its
//! implementations, which implement all three: [`MemoryStore`], and the durable embedded store
//! `EmbeddedStore` on one of two engines (trait `Kv`): `SledStore` (sled; the `sled` feature,
//! on by default) and `FjallStore` (fjall; the `fjall` feature). The two engines share every
//! line of the store's logic (records, keys, write-behind, relists, group commit) and its
//! tests; only the engine calls differ (`store/kv/engine.rs`, `store/kv/fjall_db.rs`).
//!
//! Every change to a task goes through [`TaskStore::update`] (or [`TaskStore::create`]) before
//! any client or subscriber sees it. Updates are optimistic: each stored task carries a
//! `version` that increases by one per write, and a write states the version it replaces.
//!
//! Each write also appends one event to the task's log, in the same atomic step: the task
//! snapshot at version 1 (creation), then the event that announces each change. An event's
//! sequence number is the task's version after the write, so a task's log is gap-free
//! `1, 2, 3, …` and a stream can be resumed after any sequence number
//! ([`TaskStore::events`]).
//!
//! A store may keep a task as a snapshot plus the log events after it, and fold them at read
//! time: the sled store writes the whole task only at status updates and once every
//! [`SNAPSHOT_EVERY`] events, so that a long chunked artifact stream writes its chunks, not
//! the growing task again for each chunk.
//!
//! The traits use only values of the wire model (tasks shared behind an [`Arc`]: a stored
//! snapshot is never changed, a write stores a new one), so that a networked backend shared by
//! several server replicas can implement them.

use a2a_core::{
    Message, StreamResponse, Task, TaskId, TaskPushNotificationConfig, TaskState, Timestamp,
};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::sync::Arc;
use std::time::Duration;

mod index;
mod joint;
mod query;
#[cfg(any(test, feature = "testing"))]
pub(crate) use index::order_key;
pub(crate) use index::status_millis;
pub(crate) use index::{decode_page_token, encode_page_token};
pub use joint::{JointCreate, JointWrites};
pub use query::{ListPage, ListQuery};
mod lease;
pub(crate) use lease::may_advance;
// The behaviour every store must have, run for ours and public in `testing::check_store`.
#[cfg(any(feature = "sled", feature = "fjall"))]
mod kv;
#[cfg(any(test, feature = "testing"))]
pub(crate) mod list_tests;
mod memory;
mod metered;
#[cfg(any(test, feature = "testing"))]
pub(crate) mod scan_tests;
#[cfg(any(test, feature = "testing"))]
pub(crate) mod tests;

#[cfg(feature = "sled")]
pub use self::kv::SledStore;
#[cfg(any(feature = "sled", feature = "fjall"))]
pub use self::kv::{
    CLAIM_EXPIRY_WALK, DEFAULT_CACHE_BYTES, EmbeddedStore, Entries, HEAD_LOG_BYTES, Kv, KvTree,
    LOCK_WAIT, RECENT_CACHE_BYTES, RELIST_AFTER, RELIST_AGE, RELIST_BACKLOG, RELIST_MAX,
    SNAPSHOT_EVERY,
};
#[cfg(feature = "fjall")]
pub use self::kv::{FjallDb, FjallStore, FjallTree};
pub use memory::{DECODED_CACHE_BYTES, MemoryStore};
pub(crate) use metered::Metered;

/// The hash map of the server's in-memory indexes: foldhash rather than the standard SipHash,
/// for short keys like task ids; seeded at random per map, so that callers who choose ids
/// cannot predict collisions.
pub(crate) type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// A boxed error from a storage backend.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Who may see a task: the tenant it was created under and the authenticated principal that
/// created it. A task is visible only to calls with the same scope.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Scope {
    /// The tenant (`tenant` request field / `/{tenant}` path segment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The authenticated principal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
}

/// A task as stored: the task, its write version, and its scope.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredTask {
    /// The task: an immutable snapshot, shared by the store, the running task and readers
    /// (copy it with `Task::clone(&stored.task)` to change it).
    pub task: Arc<Task>,
    /// Starts at 1 and increases by one with every write.
    pub version: u64,
    /// Who may see it.
    #[serde(default)]
    pub scope: Scope,
}

impl StoredTask {
    /// The task's status timestamp in milliseconds (0 when unset), the list order key.
    pub fn sort_millis(&self) -> i64 {
        status_millis(&self.task)
    }
}

/// One entry of a task's event log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoggedEvent {
    /// The task's version after the change (1 for the creation snapshot).
    pub seq: u64,
    /// The event announcing the change.
    pub event: StreamResponse,
}

/// One change of a [`TaskStore::write_batch`]: the task after it, and the event announcing it
/// (`None` for the creation, whose event is the task).
#[derive(Clone, Copy, Debug)]
pub struct BatchWrite<'a> {
    /// The task after the change.
    pub task: &'a Arc<Task>,
    /// The event announcing it; `None` for the creation.
    pub event: Option<&'a StreamResponse>,
}

/// What a `messageId` was used for, to answer a retried `SendMessage` the same way
/// (idempotent sends).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MessageClaim {
    /// The task the message created or continued.
    pub task_id: TaskId,
    /// The agent's direct message answer, when it answered without a task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<Message>,
    /// When the message was first received (milliseconds since the epoch), for retention.
    pub received_ms: i64,
}

/// A webhook registration as stored, with how far its delivery got. The task's event log is
/// the delivery outbox: every event with a sequence number above `delivered` is still to be
/// posted, in order, so an event and its delivery job are durable in the same write.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PushRecord {
    /// The registration, with its `id` and `taskId` set.
    pub config: TaskPushNotificationConfig,
    /// Registered through the v0.3 protocol: deliver v0.3 payloads.
    #[serde(default)]
    pub v03: bool,
    /// Registered by an A2A 1.1 request: each task snapshot and update delivered carries its
    /// `generation` (a push delivery is the StreamResponse a stream of that request would
    /// carry). A 1.0 (or v0.3) registration's deliveries carry none.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub generations: bool,
    /// The sequence number of the last event delivered (or not to be delivered).
    pub delivered: u64,
    /// Set when delivery gave up; nothing more is sent to this webhook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dead_letter: Option<DeadLetter>,
}

/// A delivery that failed for good (after every retry).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadLetter {
    /// The event that could not be delivered.
    pub seq: u64,
    /// The last error.
    pub error: String,
    /// When delivery gave up (milliseconds since the epoch).
    pub at_ms: i64,
}

impl PushRecord {
    /// The config id (always set in a stored record).
    pub fn id(&self) -> &str {
        self.config.id.as_deref().unwrap_or_default()
    }
}

/// What went wrong in a store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// No such task.
    #[error("task {0} not found")]
    NotFound(TaskId),
    /// A task with this id exists already.
    #[error("task {0} already exists")]
    AlreadyExists(TaskId),
    /// The task was written by someone else since it was read.
    #[error("version conflict: expected {expected}, found {found}")]
    VersionConflict {
        /// The version the writer read.
        expected: u64,
        /// The version in the store.
        found: u64,
    },
    /// The page token is not one this store issued.
    #[error("invalid page token")]
    InvalidPageToken,
    /// The backend failed.
    #[error("storage backend failed: {0}")]
    Backend(#[source] BoxError),
}

impl From<StoreError> for a2a_core::Error {
    fn from(e: StoreError) -> Self {
        use a2a_core::{Error, ErrorKind};
        match e {
            StoreError::NotFound(id) => Error::task_not_found(id.as_str()),
            StoreError::InvalidPageToken => {
                Error::invalid_params("pageToken", "is not a token this server issued")
            }
            other => {
                tracing::error!(error = %other, source = ?std::error::Error::source(&other), "task store failed");
                Error::new(ErrorKind::Internal, "Internal error: the task store failed")
            }
        }
    }
}

/// Everything the server keeps: tasks and their logs ([`TaskStore`]), message claims
/// ([`ClaimStore`]) and webhook registrations ([`PushStore`]), as one object. Implemented for
/// every type that implements the three, so [`MemoryStore`] and [`SledStore`] are stores, and
/// the server holds one `Arc<dyn Store>`: a call through it costs one virtual call, as
/// through any of the three.
pub trait Store: TaskStore + ClaimStore + PushStore {}

impl<T: TaskStore + ClaimStore + PushStore + ?Sized> Store for T {}

/// Where tasks and their event logs live. Implementations must make each write atomic and
/// visible to every later read; [`TaskStore::sync`] makes everything written so far durable
/// (in the task store, and in the [`ClaimStore`] and [`PushStore`] of the same backend).
///
/// # Wrapping a store
///
/// A store that wraps another (to count, trace, or fault-inject) forwards each method. The
/// two that decide durability, [`TaskStore::sync`] and [`TaskStore::flushes`], have no
/// default, so a wrapper cannot forget them and silently show changes before they are
/// durable ("durable before visible"); the defaulted ones ([`TaskStore::task_json`],
/// [`PushStore::push_config`], [`PushStore::push_config_count`]) are answers a wrapper may
/// leave out at some cost in speed, never in correctness. A wrapper that leaves out
/// `flushes` does not compile:
///
/// ```compile_fail,E0046
/// use a2a_core::{StreamResponse, Task, TaskId, TaskState, Timestamp};
/// use a2a_server::store::{ListPage, ListQuery, LoggedEvent};
/// use a2a_server::{Scope, SledStore, StoreError, StoredTask, TaskStore};
/// use std::sync::Arc;
///
/// struct Traced(SledStore);
///
/// #[async_trait::async_trait]
/// impl TaskStore for Traced {
///     async fn get(&self, id: &TaskId) -> Result<Option<StoredTask>, StoreError> {
///         self.0.get(id).await
///     }
///     async fn create(&self, task: Arc<Task>, scope: Scope) -> Result<StoredTask, StoreError> {
///         self.0.create(task, scope).await
///     }
///     async fn update(
///         &self,
///         task: Arc<Task>,
///         expected: u64,
///         event: &StreamResponse,
///     ) -> Result<StoredTask, StoreError> {
///         self.0.update(task, expected, event).await
///     }
///     async fn events(&self, id: &TaskId, after: u64, limit: usize)
///         -> Result<Vec<LoggedEvent>, StoreError> {
///         self.0.events(id, after, limit).await
///     }
///     async fn delete(&self, id: &TaskId) -> Result<bool, StoreError> {
///         self.0.delete(id).await
///     }
///     async fn terminal_before(&self, before: Timestamp, limit: usize)
///         -> Result<Vec<TaskId>, StoreError> {
///         self.0.terminal_before(before, limit).await
///     }
///     async fn list(&self, query: &ListQuery) -> Result<ListPage, StoreError> {
///         self.0.list(query).await
///     }
///     async fn tasks_in_states(&self, states: &[TaskState], after: Option<&TaskId>, limit: usize)
///         -> Result<Vec<StoredTask>, StoreError> {
///         self.0.tasks_in_states(states, after, limit).await
///     }
///     async fn sync(&self) -> Result<(), StoreError> {
///         self.0.sync().await
///     }
///     // `flushes` forgotten: sled's writes wait for a flush, and this wrapper would not say so.
/// }
/// ```
#[async_trait]
pub trait TaskStore: Send + Sync + 'static {
    /// The task with this id, if any.
    async fn get(&self, id: &TaskId) -> Result<Option<StoredTask>, StoreError>;

    /// Stores a new task at version 1, and starts its log with the task snapshot (seq 1).
    async fn create(&self, task: Arc<Task>, scope: Scope) -> Result<StoredTask, StoreError>;

    /// Replaces the task if its stored version is `expected_version`, and appends `event` to
    /// its log at seq `expected_version + 1`, atomically. Returns the new record.
    ///
    /// Unless `event` is a status update or a whole task, `task` must be the stored task with
    /// `event` applied ([`Task::apply`]), as the engine builds it: a store may then keep only
    /// the event and fold it at read time (the sled store does, see [`SNAPSHOT_EVERY`]). A
    /// status update may come with other changes (a continuation adds the user's message to
    /// the history), so it is always stored with the whole task.
    async fn update(
        &self,
        task: Arc<Task>,
        expected_version: u64,
        event: &StreamResponse,
    ) -> Result<StoredTask, StoreError>;

    /// Writes consecutive changes of one task together: `changes[i]` at version `base + i + 1`,
    /// the first replacing version `base` (0: the first creates the task, in `scope`, and has
    /// no event: its event is the task). The engine writes so the changes that nobody has seen
    /// yet (write-behind, see `engine/cell/outbox.rs`), on a store that flushes.
    ///
    /// A store may write the batch as it likes, as long as a crash keeps a prefix of it (the
    /// sled store writes the events, then one value); each task must be the one before it with
    /// the event applied, as for [`TaskStore::update`]. The default writes each change with
    /// [`TaskStore::create`] and [`TaskStore::update`]: correct, and as costly as those.
    async fn write_batch(
        &self,
        scope: &Scope,
        base: u64,
        changes: &[BatchWrite<'_>],
    ) -> Result<(), StoreError> {
        let mut version = base;
        for change in changes {
            version = match change.event {
                None if version == 0 => self.create(change.task.clone(), scope.clone()).await?,
                None => return Err(StoreError::AlreadyExists(change.task.id.clone())),
                Some(event) => self.update(change.task.clone(), version, event).await?,
            }
            .version;
        }
        Ok(())
    }

    /// Up to `limit` events of the task's log with `seq > after`, in order.
    async fn events(
        &self,
        id: &TaskId,
        after: u64,
        limit: usize,
    ) -> Result<Vec<LoggedEvent>, StoreError>;

    /// Removes a task and its log (and, in a store that keeps them too, its webhook
    /// registrations). Returns whether it existed.
    async fn delete(&self, id: &TaskId) -> Result<bool, StoreError>;

    /// Up to `limit` ids of terminal tasks whose status timestamp is before `before`, oldest
    /// first (for retention).
    async fn terminal_before(
        &self,
        before: Timestamp,
        limit: usize,
    ) -> Result<Vec<TaskId>, StoreError>;

    /// Lists tasks, newest status timestamp first (ties by id).
    ///
    /// A listing should cost its page, not the store: both stores answer it from indexes by
    /// scope, context and state, and `totalSize` from counts kept per index (see
    /// `store/index.rs`). The scope's tenant and owner are separate fields of
    /// [`ListQuery::scope`], for a backend to index each.
    async fn list(&self, query: &ListQuery) -> Result<ListPage, StoreError>;

    /// Up to `limit` tasks in one of the given states, by id, starting after the id `after`
    /// (for start-up and orphan recovery). A page shorter than `limit` is the last one; pass
    /// the last id of a page as `after` to get the next. A store answers it from an index by
    /// state, reading only the tasks of the page.
    async fn tasks_in_states(
        &self,
        states: &[TaskState],
        after: Option<&TaskId>,
        limit: usize,
    ) -> Result<Vec<StoredTask>, StoreError>;

    /// Makes every write so far durable (in this store, and in the [`ClaimStore`] and
    /// [`PushStore`] of the same backend). A store whose writes are durable when they return
    /// (memory, PostgreSQL) returns at once.
    ///
    /// Required, with [`TaskStore::flushes`]: the engine shows a change only after a `sync`
    /// covers it, so a store that wraps another must pass both on (see [`TaskStore`]).
    async fn sync(&self) -> Result<(), StoreError>;

    /// Whether [`TaskStore::sync`] has work to do: `true` when a write is durable only once a
    /// later `sync` returns (sled), `false` when each write is durable when it returns
    /// (memory, PostgreSQL). With `true`, the engine lets an agent go on as soon as its
    /// change is written, and publishes the change once a flush covers it, so that one flush
    /// serves every change written meanwhile (see `engine/cell/outbox.rs`). Only a store that
    /// one process writes may say so.
    ///
    /// Required, with no default: a wrapper that answered `false` over a store that flushes
    /// would let clients see changes a crash can still take back.
    fn flushes(&self) -> bool;

    /// The JSON of the task `id` at `version`, exactly as `serde_json` writes the [`Task`], if
    /// this store keeps it encoded so (the memory store keeps finished tasks so): an answer
    /// with the task writes it as it is instead of serializing the task again. `None`
    /// otherwise, and whenever the task is not at `version`. The default is always `None`.
    fn task_json(&self, id: &TaskId, version: u64) -> Option<Box<RawValue>> {
        let _ = (id, version);
        None
    }

    /// The store's [`JointWrites`], if it keeps claims and leases in the same database as
    /// tasks (PostgreSQL). The default has none; a wrapper passes its store's on.
    fn joint(&self) -> Option<&dyn JointWrites> {
        None
    }
}

/// Message claims: which `messageId`s were received, to answer a retried `SendMessage` the
/// same way (idempotent sends). Claims are kept in receipt-time order, so that expiring old
/// ones reads only those.
#[async_trait]
pub trait ClaimStore: Send + Sync + 'static {
    /// Records `claim` under `key` unless the key is taken; returns the existing claim if it is.
    async fn claim_message(
        &self,
        key: &str,
        claim: MessageClaim,
    ) -> Result<Option<MessageClaim>, StoreError>;

    /// Replaces the claim under `key` (to add the reply).
    async fn update_claim(&self, key: &str, claim: MessageClaim) -> Result<(), StoreError>;

    /// Removes the claim under `key`: the message it recorded did not take effect, so a retry
    /// of it must be processed afresh rather than answered as a duplicate.
    async fn release_claim(&self, key: &str) -> Result<(), StoreError>;

    /// Removes claims received before `before_ms`; returns how many. The retention sweep calls
    /// it once per sweep interval, so it must not cost every claim every time: the memory
    /// store keeps its claims in receipt-time order and walks only the expired ones; sled walks
    /// a bounded page of its claims with a cursor (`CLAIM_EXPIRY_WALK` per call; a server
    /// receiving more than that per sweep expires claims later than `before_ms`, never
    /// earlier), so that a send writes nothing but its claim.
    async fn expire_claims(&self, before_ms: i64) -> Result<usize, StoreError>;
}

/// Webhook registrations, their delivery cursors and their delivery leases.
///
/// Several server replicas may share a store, and each may run a delivery worker for the same
/// registration. A worker posts only while it holds the registration's delivery lease
/// ([`PushStore::acquire_delivery`], renewed while it delivers), and moves the cursor with
/// a compare-and-swap ([`PushStore::advance_delivery`]), so that each event is posted by one
/// replica, once.
#[async_trait]
pub trait PushStore: Send + Sync + 'static {
    /// Stores (or replaces, by task and config id) a webhook registration.
    async fn put_push_config(&self, record: PushRecord) -> Result<(), StoreError>;

    /// A task's webhook registrations, in registration order.
    async fn push_configs(&self, task: &TaskId) -> Result<Vec<PushRecord>, StoreError>;

    /// One webhook registration of a task, by config id. Delivery reads it before every
    /// batch, so stores should find it without reading the task's other registrations (the
    /// default does read them all).
    async fn push_config(&self, task: &TaskId, id: &str) -> Result<Option<PushRecord>, StoreError> {
        Ok(self
            .push_configs(task)
            .await?
            .into_iter()
            .find(|r| r.id() == id))
    }

    /// How many webhook registrations a task has (to enforce the per-task limit), without
    /// decoding them, in stores that can (the default decodes them all).
    async fn push_config_count(&self, task: &TaskId) -> Result<usize, StoreError> {
        Ok(self.push_configs(task).await?.len())
    }

    /// Removes a registration; returns whether it existed.
    async fn delete_push_config(&self, task: &TaskId, id: &str) -> Result<bool, StoreError>;

    /// Up to `limit` ids of tasks that have webhook registrations, starting after the task
    /// `after` (to resume deliveries at start-up), in an order of the store's choosing that
    /// stays the same from page to page. A page shorter than `limit` is the last one; pass the
    /// last id of a page as `after` to get the next.
    async fn tasks_with_push_configs(
        &self,
        after: Option<&TaskId>,
        limit: usize,
    ) -> Result<Vec<TaskId>, StoreError>;

    /// Moves the delivery cursor of a registration: stores `record.delivered` and
    /// `record.dead_letter` if the stored registration still has `record.config`, no dead
    /// letter, and its cursor at `expected`. Returns whether it did; `false` means another
    /// replica delivered meanwhile, or the registration was replaced or deleted (read it again).
    async fn advance_delivery(
        &self,
        record: &PushRecord,
        expected: u64,
    ) -> Result<bool, StoreError>;

    /// Takes the delivery lease of the registration `id` of `task` for `owner` until `ttl` from
    /// now, unless another owner holds one that has not expired; the holder renews it by
    /// calling again. Returns whether `owner` holds it now. A worker posts only while it holds
    /// the lease.
    async fn acquire_delivery(
        &self,
        task: &TaskId,
        id: &str,
        owner: &str,
        ttl: Duration,
    ) -> Result<bool, StoreError>;

    /// Gives up the delivery lease of a registration, if `owner` holds it.
    async fn release_delivery(
        &self,
        task: &TaskId,
        id: &str,
        owner: &str,
    ) -> Result<(), StoreError>;
}

/// `read`, once it may be shown to a client: every write so far is made durable first, among
/// them whatever the read saw. The engine flushes each change before it publishes it, but a
/// store's reads see a change as soon as it is written, before that flush; a stream catching
/// up from the log, `GetTask`, `ListTasks` or a webhook could otherwise show a change that a
/// crash in the next instant loses. Costs nothing when no write is waiting for its flush (and
/// nothing at all in memory); otherwise the reader joins that flush.
pub(crate) async fn durable<T>(store: &dyn Store, read: T) -> Result<T, StoreError> {
    store.sync().await?;
    Ok(read)
}
