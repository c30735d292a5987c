//! The task engine: the only writer of tasks. It runs the agent for each task (one
//! [`TaskCell`] per task being worked on in this process), stores every change before anyone
//! sees it, and tells the other replicas sharing the store through the [`EventBus`]; execution
//! [`Leases`] say which replica runs which task.
//!
//! It is also the one door to the store below the handler: its operations own their steps and
//! the undo of each, so the handler keeps only the protocol's checks. A send starts or
//! continues a task (`send.rs`: message claim, webhook registration, lease, execution), a
//! cancel stops one ([`Engine::cancel`]), a stream follows one (`follow.rs`), and the upkeep
//! resumes orphans and applies retention (`upkeep.rs`). The cell of a task (`cell.rs`)
//! checks and stores each change and publishes it once durable (`cell/outbox.rs`).

mod bus;
mod cell;
mod claim_key;
mod execution;
mod follow;
mod lease;
mod retry;
mod send;
#[cfg(test)]
mod tests;
mod upkeep;
mod webhooks;

pub use bus::{CancelHandler, EventBus, LocalBus};
pub(crate) use cell::{Change, TaskCell};
use cell::{Outcome, Update};
use execution::Execution;
pub use lease::{Leases, LocalLeases};
pub(crate) use retry::Retry;
pub(crate) use send::{Answer, Incoming, Started};

use crate::agent::{DynAgent, RequestContext};
use crate::events::TaskEvents;
use crate::store::{
    ClaimStore, FastMap, ListPage, ListQuery, MessageClaim, Scope, Store, StoreError, StoredTask,
};
use a2a_core::{ContextId, Error, ErrorKind, Message, TaskId, TaskState, TaskStatus};
use cell::CellState;
use futures::FutureExt as _;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

/// How long an execution lease lasts without a heartbeat, by default.
pub const DEFAULT_LEASE_TTL: Duration = Duration::from_secs(30);

/// The cells of the tasks being worked on in this process, by task id. The map holds no cell
/// alive: a cell lives while something holds it (an execution, a caller waiting on it, an
/// agent's [`TaskEvents`]) and leaves the map as its last holder drops it (`TaskCell`'s
/// `Drop`). So the memory of a task waiting for input does not stay behind, however its
/// holders let go (a caller that vanishes included), and the next reader or writer starts from
/// the store, which may have moved on on another replica.
pub(crate) type Cells = Arc<Mutex<FastMap<TaskId, Weak<TaskCell>>>>;

/// The replicas' shared execution leases, and this engine's name in them.
pub(crate) struct Replication {
    pub(crate) leases: Arc<dyn Leases>,
    /// This engine's owner id in the leases.
    pub(crate) owner: Arc<str>,
    pub(crate) ttl: Duration,
}

/// A lease taken over for a continuation: whom it was taken from.
#[derive(Debug)]
pub(crate) struct TakenLease {
    previous: Option<String>,
}

/// Where an engine keeps its tasks, and its message claims.
pub(crate) struct Stores {
    /// Tasks, their logs and webhook registrations.
    pub(crate) tasks: Arc<dyn Store>,
    /// Message claims (`None`: retried sends are not recognized).
    pub(crate) claims: Option<Arc<dyn ClaimStore>>,
    /// Whether `claims` are the task store's own (the same database): then a store with
    /// [`JointWrites`](crate::store::JointWrites) may write a claim with its task.
    pub(crate) claims_in_store: bool,
}

impl From<Arc<dyn Store>> for Stores {
    /// Everything in one store, its claims included.
    fn from(tasks: Arc<dyn Store>) -> Self {
        let claims: Arc<dyn ClaimStore> = tasks.clone();
        Self {
            tasks,
            claims: Some(claims),
            claims_in_store: true,
        }
    }
}

/// The tasks being worked on by this server, and how it reaches the other replicas: the one
/// writer of tasks, and the one door to the store below the handler. Its operations own the
/// steps of each and their undo: a send's start ([`Engine::start`],
/// [`Engine::continue_task`]: the message claim, webhook registration, lease and execution),
/// [`Engine::cancel`], following a task ([`Engine::watch`]), recovery and retention
/// (`engine/upkeep.rs`); the handler keeps the protocol's checks.
pub(crate) struct Engine {
    pub(crate) store: Arc<dyn Store>,
    /// Message claims, for idempotent sends (`None`: de-duplication is off).
    claims: Option<Arc<dyn ClaimStore>>,
    agent: Arc<dyn DynAgent>,
    cells: Cells,
    /// Triggered at shutdown: ends executions (through their tokens) and streams.
    pub(crate) shutdown: CancellationToken,
    /// Webhook deliveries, when push notifications are on.
    pub(crate) pusher: Option<Arc<crate::push::Pusher>>,
    pub(crate) bus: Arc<dyn EventBus>,
    /// Shared leases, when several replicas share the store; `None`: this engine owns every
    /// task.
    pub(crate) replication: Option<Replication>,
    /// Task and event counts, when metrics are on.
    pub(crate) metrics: Option<Arc<crate::telemetry::MetricsInner>>,
    /// Whether a new task is written once, at its first reveal, with its message claim and
    /// its execution lease, in one transaction (`send.rs`, `cell/outbox.rs`): the store has
    /// [`JointWrites`](crate::store::JointWrites), and the claims and leases are in its
    /// database.
    pub(crate) joint: bool,
    /// The claims of this process's sends whose tasks are not written yet (`joint`): by key,
    /// the task. A duplicate sent here meanwhile finds its first send's task here; once the
    /// claim is written with the task (or lost to another replica's send), it leaves.
    pending_claims: Mutex<FastMap<String, TaskId>>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").finish_non_exhaustive()
    }
}

impl Engine {
    /// An engine, registered on `bus` for cancel requests.
    pub(crate) fn new(
        stores: impl Into<Stores>,
        agent: Arc<dyn DynAgent>,
        shutdown: CancellationToken,
        pusher: Option<Arc<crate::push::Pusher>>,
        bus: Arc<dyn EventBus>,
        replication: Option<Replication>,
        metrics: Option<Arc<crate::telemetry::MetricsInner>>,
    ) -> Arc<Self> {
        let Stores {
            tasks,
            claims,
            claims_in_store,
        } = stores.into();
        let joint = !tasks.flushes()
            && tasks.joint().is_some_and(|j| {
                (claims.is_none() || claims_in_store)
                    && (replication.as_ref())
                        .is_none_or(|r| r.leases.database() == Some(j.database()))
            });
        let engine = Arc::new(Self {
            store: tasks,
            claims,
            agent,
            cells: Cells::default(),
            shutdown,
            pusher,
            bus,
            replication,
            metrics,
            joint,
            pending_claims: Mutex::default(),
        });
        let weak = Arc::downgrade(&engine);
        engine.bus.on_cancel(Arc::new(move |task: &TaskId| {
            if let Some(engine) = weak.upgrade() {
                engine.cancel_requested(task);
            }
        }));
        engine
    }

    fn new_cell(
        &self,
        id: TaskId,
        context_id: ContextId,
        scope: Scope,
        state: CellState,
    ) -> TaskCell {
        // A new task's claim, written with the task (`joint`).
        let first_claim = (self.joint && state.stored.is_none())
            .then(|| state.claim.clone())
            .flatten()
            .map(|key| {
                let claim = MessageClaim {
                    task_id: id.clone(),
                    reply: None,
                    received_ms: a2a_core::Timestamp::now().unix_millis(),
                };
                (key, claim)
            });
        let cancel = self.shutdown.child_token();
        TaskCell {
            outbox: Arc::new(cell::Outbox::new(
                id.clone(),
                scope.clone(),
                state.stored.as_ref(),
                first_claim,
                cancel.clone(),
            )),
            id,
            context_id,
            scope,
            cancel,
            generation: AtomicU64::new(0),
            running: AtomicUsize::new(0),
            state: tokio::sync::Mutex::new(state),
            cells: self.cells.clone(),
        }
    }

    /// A cell for a task that does not exist yet; `initial` opens its history.
    pub(crate) fn cell_for_new(
        &self,
        id: TaskId,
        context_id: ContextId,
        scope: Scope,
        initial: Message,
        claim: Option<String>,
    ) -> Arc<TaskCell> {
        let state = CellState::new_task(initial, claim);
        let cell = Arc::new(self.new_cell(id.clone(), context_id, scope, state));
        let weak = Arc::downgrade(&cell);
        self.cells.lock().expect("cells lock").insert(id, weak);
        cell
    }

    /// The cell of a stored task (created from the record if the task is not live).
    pub(crate) fn cell_for(&self, stored: StoredTask) -> Arc<TaskCell> {
        let mut cells = self.cells.lock().expect("cells lock");
        if let Some(live) = cells.get(&stored.task.id).and_then(Weak::upgrade) {
            return live;
        }
        // None, or one whose last holder is dropping it: its `Drop` leaves this one be.
        let cell = Arc::new(self.new_cell(
            stored.task.id.clone(),
            stored.task.context_id.clone(),
            stored.scope.clone(),
            CellState::of(stored),
        ));
        cells.insert(cell.id.clone(), Arc::downgrade(&cell));
        cell
    }

    /// The live cell of a task, if any.
    pub(crate) fn live_cell(&self, id: &TaskId) -> Option<Arc<TaskCell>> {
        let cells = self.cells.lock().expect("cells lock");
        cells.get(id).and_then(Weak::upgrade)
    }

    /// The cell of a task if an execution of the agent runs on it here: only then are this
    /// process's broadcasts the first to carry the task's events.
    pub(super) fn running_cell(&self, id: &TaskId) -> Option<Arc<TaskCell>> {
        self.live_cell(id).filter(|c| c.is_running())
    }

    /// The task `id` as stored, once durable (see `store::durable`): every write reaches the
    /// store before anyone sees it, so the store is never behind a cell of this process, and
    /// it holds what other replicas wrote.
    ///
    /// A read is a reveal: changes of the task waiting unwritten in this process
    /// (write-behind, see `cell/outbox.rs`) are written first.
    pub(crate) async fn read(&self, id: &TaskId) -> Result<Option<StoredTask>, StoreError> {
        if self.writes_behind()
            && let Some(cell) = self.live_cell(id)
            && cell.outbox.unwritten()
        {
            cell.flush(self).await?;
        }
        match self.store.get(id).await? {
            Some(stored) => crate::store::durable(&*self.store, Some(stored)).await,
            None => Ok(None),
        }
    }

    /// A page of the task listing `query`, once durable.
    /// A listing is a reveal: every task's changes waiting unwritten are written first.
    pub(crate) async fn list(&self, query: &ListQuery) -> Result<ListPage, StoreError> {
        if self.writes_behind() {
            self.reveal_all().await?;
        }
        let page = self.store.list(query).await?;
        crate::store::durable(&*self.store, page).await
    }

    /// Writes, flushes and publishes the changes of every task waiting unwritten in this
    /// process (write-behind, see `cell/outbox.rs`).
    pub(crate) async fn reveal_all(&self) -> Result<(), StoreError> {
        // Upgraded under the map's lock, dropped after it: a cell's `Drop` takes that lock.
        let live: Vec<Arc<TaskCell>> = {
            let cells = self.cells.lock().expect("cells lock");
            cells.values().filter_map(Weak::upgrade).collect()
        };
        for cell in live.iter().filter(|c| c.outbox.unwritten()) {
            cell.flush(self).await?;
        }
        Ok(())
    }

    /// The claims of this process's sends not written yet (see `Engine::pending_claims`).
    fn pending_claims(&self) -> std::sync::MutexGuard<'_, FastMap<String, TaskId>> {
        (self.pending_claims.lock()).unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether changes may wait unwritten until their first reveal (write-behind, see
    /// `cell/outbox.rs`): on a store that flushes, and for new tasks with `joint` writes.
    pub(crate) fn writes_behind(&self) -> bool {
        self.joint || self.store.flushes()
    }

    /// Makes everything stored so far durable.
    pub(crate) async fn flush(&self) -> Result<(), StoreError> {
        self.store.sync().await
    }

    /// Takes the task's cell out of the map before its holders let go: the next reader or
    /// writer starts from the store.
    pub(super) fn forget(&self, id: &TaskId) {
        self.cells.lock().expect("cells lock").remove(id);
    }

    /// Another replica (or this one) stored a cancel: stops this process's execution of the
    /// task, and catches its cell up so that local subscribers see the CANCELED state.
    fn cancel_requested(self: Arc<Self>, id: &TaskId) {
        let Some(cell) = self.live_cell(id) else {
            return;
        };
        cell.cancel.cancel();
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            if let Err(e) = cell.refresh(&self).await {
                tracing::warn!(task = %cell.id, error = %e, "could not catch up with a cancel");
            }
        });
    }

    /// Marks the start of an execution on `cell` (before its first write, so that an earlier
    /// execution's wrap-up sees that a later one started). Returns its generation.
    pub(super) fn begin(&self, cell: &TaskCell) -> u64 {
        cell.running.fetch_add(1, Ordering::AcqRel);
        cell.generation.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Undoes [`Engine::begin`] (which returned `generation`) for an execution that did not
    /// start after all: the generation goes back too, unless a later execution began since,
    /// so that the execution still running wraps up as the latest.
    pub(super) fn abandon(&self, cell: &TaskCell, generation: u64) {
        cell.running.fetch_sub(1, Ordering::AcqRel);
        let _ = cell.generation.compare_exchange(
            generation,
            generation - 1,
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
    }

    /// An execution of the agent's `execute` for `cell` (started with [`Engine::begin`]), for
    /// the caller to drive or let go (see [`Execution`]). When it ends, a task left active (or
    /// never created) is failed with a status message saying why.
    pub(super) fn execution(
        self: &Arc<Self>,
        cell: Arc<TaskCell>,
        cx: RequestContext,
        generation: u64,
    ) -> Execution {
        self.run(cell, cx, generation, false)
    }

    /// Runs the agent's `resume` hook for an orphaned task (its lease taken), in the
    /// background.
    pub(super) fn spawn_resume(self: &Arc<Self>, cell: Arc<TaskCell>, cx: RequestContext) {
        let generation = self.begin(&cell);
        self.run(cell, cx, generation, true).detach();
    }

    fn run(
        self: &Arc<Self>,
        cell: Arc<TaskCell>,
        cx: RequestContext,
        generation: u64,
        resume: bool,
    ) -> Execution {
        // The execution continues the trace of the request that started it (a root span for a
        // task resumed at start-up): the agent's own spans and client calls join that trace.
        let span = tracing::info_span!(
            target: "a2a::server",
            "a2a.execute",
            otel.name = "execute",
            a2a.task.id = %cell.id,
            a2a.context.id = %cell.context_id,
            resumed = resume,
        );
        let rt = self.clone();
        let fut = async move {
            let events = TaskEvents::new(rt.clone(), cell.clone());
            let run = if resume {
                rt.agent.resume(cx, events)
            } else {
                rt.agent.execute(cx, events)
            };
            let outcome = AssertUnwindSafe(run).catch_unwind().await;
            let failure = match outcome {
                Ok(Ok(())) => None,
                Ok(Err(e)) if !resume && rt.refuse(&cell, &e).await => {
                    rt.abandon(&cell, generation);
                    cell.outbox.done();
                    return;
                }
                Ok(Err(e)) => Some(format!("The agent failed: {}", e.message)),
                Err(panic) => {
                    let what = panic
                        .downcast_ref::<&str>()
                        .map(|s| (*s).to_owned())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "unknown panic".to_owned());
                    tracing::error!(task = %cell.id, panic = %what, "agent panicked");
                    Some(format!("The agent panicked: {what}"))
                }
            };
            rt.finish_execution(&cell, generation, failure).await;
        };
        // Boxed: the execution's future (the agent's included) is large, and tokio moves a
        // spawned future into its task cell; a box is written once and moved as a pointer.
        Execution::new(fut.instrument(span))
    }

    /// Runs the agent's `cancel` for the task `stored` (`cx` made for it) and, when the agent
    /// accepts, stores CANCELED (unless the task already ended) and stops the execution, here
    /// or on whichever replica runs it. Returns the task afterwards.
    pub(crate) async fn cancel(
        self: &Arc<Self>,
        stored: StoredTask,
        mut cx: RequestContext,
    ) -> Result<StoredTask, Error> {
        let cell = &self.cell_for(stored);
        cx.cancel = cell.cancel.clone();
        let events = TaskEvents::new(self.clone(), cell.clone());
        AssertUnwindSafe(self.agent.cancel(cx, events))
            .catch_unwind()
            .await
            .map_err(|_| Error::new(ErrorKind::Internal, "The agent panicked while canceling"))??;
        // What the agent's cancel reported, published first. CANCELED is stored next, then the
        // execution is told to stop: the execution's wrap-up (which would fail a task left
        // active) then finds the task already finished.
        cell.flush(self).await?;
        let current = cell.snapshot();
        if current
            .as_ref()
            .is_some_and(|t| !t.task.status.state.is_terminal())
        {
            let status = TaskStatus::new(TaskState::Canceled).with_message(Message::agent_text(
                "The task was canceled at the client's request.",
            ));
            if let Err(e) = cell
                .apply(self, Box::new(Change::Status(status)), false)
                .await
            {
                // It ended meanwhile; the current task is the answer.
                tracing::debug!(task = %cell.id, error = %e, "cancel raced with the task's end");
            }
        }
        cell.cancel.cancel();
        self.bus.request_cancel(&cell.id);
        cell.snapshot()
            .ok_or_else(|| Error::task_not_found(cell.id.as_str()))
    }

    /// An agent that returns an A2A error of the request's own (anything but Internal and
    /// InvalidAgentResponse, which are failures of the agent) before its first event refuses
    /// the request: the caller gets that error, no task is created, and the message is
    /// forgotten (a retry runs again), with any webhook registered by it. Returns whether the
    /// error was taken as a refusal.
    async fn refuse(&self, cell: &TaskCell, error: &Error) -> bool {
        let request_error = error
            .kind()
            .is_some_and(|k| !matches!(k, ErrorKind::Internal | ErrorKind::InvalidAgentResponse));
        if !request_error {
            return false;
        }
        let claim = {
            let mut st = cell.state.lock().await;
            if st.stored.is_some() || st.reply.is_some() {
                return false;
            }
            st.refusal = Some(error.clone());
            st.claim.take()
        };
        self.forget(&cell.id);
        // With `joint` writes a new task's lease is taken with its first write: none yet.
        if !self.joint {
            self.unlease(&cell.id).await;
        }
        if let Some(key) = claim
            && let Err(e) = self.release_claim(&key).await
        {
            tracing::warn!(task = %cell.id, error = %e, "could not forget a refused message");
        }
        self.forget_webhooks(&cell.id).await;
        true
    }

    async fn finish_execution(
        &self,
        cell: &Arc<TaskCell>,
        generation: u64,
        failure: Option<String>,
    ) {
        // What the agent reported, published before anything is decided from it.
        if let Err(e) = cell.flush(self).await
            && !cell.lost()
        {
            tracing::error!(task = %cell.id, error = %e, "could not flush the task's last changes");
        }
        let current = cell.current_state();
        let is_latest = cell.generation.load(Ordering::SeqCst) == generation;
        let needs_failing = match &current {
            // Another send of the message was written first: nothing of this one is shown.
            _ if cell.lost() => false,
            None => cell.reply().await.is_none(),
            Some(state) => is_latest && state.is_active(),
        };
        if needs_failing {
            let why = failure.unwrap_or_else(|| {
                if current.is_none() {
                    "The agent returned without creating a task or replying.".to_owned()
                } else {
                    "The agent returned without finishing the task.".to_owned()
                }
            });
            let status = TaskStatus::new(TaskState::Failed).with_message(Message::agent_text(why));
            // Boxed: rare, and inline its future would be part of every execution's.
            let failed = Box::pin(cell.apply(self, Box::new(Change::Status(status)), false));
            if let Err(e) = failed.await {
                // After a reload, a task that ended elsewhere (a cancel) cannot fail: nothing
                // went wrong.
                let ended = cell.current_state().is_some_and(|s| s.is_terminal());
                if ended {
                    tracing::debug!(task = %cell.id, error = %e, "the task ended elsewhere");
                } else {
                    tracing::error!(task = %cell.id, error = %e, "could not record the task's failure");
                }
            }
        } else if let Some(why) = failure.filter(|_| !cell.lost()) {
            tracing::warn!(task = %cell.id, "{why} (after the task had ended or paused)");
        }
        if self.writes_behind() {
            // Under the cell's lock: a change recorded after this (an agent's leftover task) is
            // written at once, one recorded before is in the queue flushed here.
            {
                let _st = cell.state.lock().await;
                cell.running.fetch_sub(1, Ordering::AcqRel);
            }
            if let Err(e) = cell.flush(self).await
                && !cell.lost()
            {
                tracing::error!(task = %cell.id, error = %e, "could not flush the task's last changes");
            }
        } else {
            cell.running.fetch_sub(1, Ordering::AcqRel);
        }
        // With `joint` writes, a task's lease is taken only with a first write that leaves it
        // unfinished, and given up by the write that finishes it (`PgStore::update`).
        let leased = !self.joint || cell.current_state().is_some_and(|s| !s.is_terminal());
        if is_latest && leased {
            self.unlease(&cell.id).await;
        }
        if let Some(key) = cell.outbox.first_claim_key() {
            // Written with the task by now, or never will be by this execution.
            self.claim_written(key, &cell.id);
        }
        cell.outbox.done();
        if current.is_none() && cell.current_state().is_none() {
            self.forget(&cell.id);
        }
    }
}
