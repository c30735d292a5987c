//! A task's [`Outbox`]: its broadcast, and the changes not yet revealed. A change reaches
//! subscribers (and the bus, and webhook delivery) only once durable, and changes are published
//! in sequence order, each once: "durable before revealed".
//!
//! **Write-behind until the first reveal** (on a store that one process writes and that
//! flushes, [`TaskStore::flushes`](crate::store::TaskStore::flushes): sled). What must hold is
//! that nobody learns of a change a crash can take back; not that each change is its own
//! durable write. So an agent's change is checked, numbered (its sequence number, the task's
//! version and 1.1 `generation`, is assigned here, in memory, one more than the last) and queued,
//! and nothing is written. The queued changes are written to the store in one batch
//! ([`TaskStore::write_batch`](crate::store::TaskStore::write_batch): events, then one value),
//! flushed (one flush, shared with every other task's by group commit), then published, at the
//! first *reveal*:
//!
//! - a change that ends a blocking wait (a terminal or interrupted state): the answer to a
//!   blocking `SendMessage`, and the agent's call returns once it is durable;
//! - while anyone watches the task as it goes ([`Outbox::watch`]: a streaming send, a
//!   `SubscribeToTask`, a `returnImmediately` send, a webhook registration): each change, in the
//!   background, as before write-behind;
//! - a `GetTask` or `ListTasks` (from any caller) that would read the task: the engine writes
//!   the task's queue first (`Engine::read`, `Engine::list`);
//! - the agent asking for it before it acts outside the server (`TaskEvents::flush`);
//! - the end of the execution (its wrap-up), and a change made when no execution runs (a
//!   cancel): written at once;
//! - [`PENDING_MAX`] changes queued: written in the background, so the queue stays bounded.
//!
//! The versions stay gap-free and are never reused: only this process writes the store, the
//! cell is the task's only writer, and a batch is written with the version it continues
//! (checked by the store) before its changes are published. A crash before a reveal loses what
//! no one saw: the task as far as its last reveal (for a task never revealed, the task itself;
//! its message claim may survive, and a retried send is then answered with whatever of the task
//! was written, else runs the agent again). A task born and finished inside one blocking
//! `SendMessage` is one batch and one flush.
//!
//! **Until the first write, on PostgreSQL** (`joint` writes: a store with
//! [`JointWrites`](crate::store::JointWrites) whose database also holds the engine's message
//! claims and execution leases). Several replicas write that store, so the rule above holds
//! only while no other replica can know of the task: until its first write. A new task's
//! changes wait unwritten as on sled, and the first batch is one transaction with the
//! message's claim and (unless the batch finishes the task) its execution lease, committed
//! durably before anything of it is published, on this process or on the bus. The reveals
//! are the same. From then on, each change is written at once with a compare-and-swap on
//! its version (another replica may cancel or continue the task), as on any shared store.
//! What this keeps:
//!
//! - "Durable before revealed": nothing of the task reaches a subscriber, the bus or a
//!   webhook before the transaction that writes it commits; other replicas find the task in
//!   the store only once it is committed, claim and lease with it.
//! - One owner: a task is never in the store without its lease (when unfinished), so no other
//!   replica takes it for an orphan; its id is new, so no other replica holds its lease.
//! - A message answered once: the claim is checked by the first write (the claim's unique
//!   key, in the same transaction). A duplicate sent to this process meanwhile waits for the
//!   first send's task (`Engine::claim_deferred`); one sent to another replica runs its agent
//!   unwritten too, and of the two first writes exactly one commits: the other writes
//!   nothing, stops its agent and is answered as a retry of the winner (`Outcome::Lost`). So a
//!   retry of a message already written runs the agent again up to its first reveal before it
//!   is answered with the first send's task; an agent that acts outside the server first calls
//!   [`TaskEvents::flush`](crate::TaskEvents::flush), which is such a reveal.
//! - Gap-free versions: the first batch creates versions `1..=n` (none before it), later
//!   writes continue them with the store's check.
//!
//! A crash before the first write loses the task and its claim, neither of which anyone saw:
//! the client was never answered, and its retry runs the agent afresh.
//!
//! On the memory store (writes durable when they return), and on PostgreSQL without `joint`
//! writes, each change is written and published at once, as before.

use super::super::Engine;
use crate::store::{BatchWrite, JointCreate, MessageClaim, Scope, StoreError, StoredTask};
use a2a_core::{StreamResponse, Task, TaskId, TaskState};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::broadcast;

/// How many changes of a task may wait unwritten (write-behind) before they are written and
/// revealed in the background: the queue's bound, for an agent that reports many changes to a
/// blocking send nobody else watches.
pub(crate) const PENDING_MAX: usize = 32;

/// How many live events a subscriber may fall behind before it catches up from the durable log
/// instead. Small: every task being worked on allocates its channel.
const BROADCAST_CAPACITY: usize = 32;

/// One event of a task with its sequence number (the task's version after the write).
#[derive(Debug)]
pub(crate) struct SeqEvent {
    pub(crate) seq: u64,
    pub(super) event: Published,
}

/// A broadcast event. The creation snapshot shares the stored task: a subscriber that only
/// waits for the end (a blocking `SendMessage`) never copies it.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // built once per event, already behind an Arc
pub(super) enum Published {
    Created(Arc<Task>),
    Event(StreamResponse),
}

impl SeqEvent {
    /// The state the event announces, if any.
    fn state(&self) -> Option<&TaskState> {
        match &self.event {
            Published::Created(task) => Some(&task.status.state),
            Published::Event(e) => e.state(),
        }
    }

    /// Whether a stream ends after this event (see [`StreamResponse::ends_stream`]).
    pub(crate) fn ends_stream(&self) -> bool {
        match &self.event {
            Published::Created(_) => self.state().is_some_and(TaskState::ends_stream),
            Published::Event(e) => e.ends_stream(),
        }
    }

    /// The event as sent to clients.
    pub(crate) fn to_response(&self) -> StreamResponse {
        match &self.event {
            Published::Created(task) => StreamResponse::Task(Task::clone(task)),
            Published::Event(e) => e.clone(),
        }
    }
}

/// What subscribers of a cell receive.
#[derive(Clone, Debug)]
pub(crate) enum Update {
    /// A stored change.
    Event(Arc<SeqEvent>),
    /// An execution of the agent ended (after its last event).
    Done,
}

/// A task's broadcast, with the changes written but not yet flushed, which it publishes once a
/// flush covers them, in order. Shared with the background flush of [`TaskCell::record`](super::TaskCell::record),
/// which holds no reference to the cell (the engine frees a cell that nothing else holds).
#[derive(Debug)]
pub(crate) struct Outbox {
    id: TaskId,
    /// The task's scope, for a batch that creates it.
    scope: Scope,
    pub(super) tx: broadcast::Sender<Update>,
    state: Mutex<OutboxState>,
    /// Held by the writer of a batch (write-behind), so that batches are written one at a time
    /// and in order.
    writing: tokio::sync::Mutex<()>,
    /// Set once anyone may see the task's changes as they come (see [`Outbox::watch`]).
    watched: AtomicBool,
    /// With `joint` writes, a new task's message claim (key and record): written with the
    /// task's first batch.
    first_claim: Option<(String, MessageClaim)>,
    /// The task's execution token (the cell's), stopped when the claim is lost.
    cancel: tokio_util::sync::CancellationToken,
}

#[derive(Debug)]
pub(super) struct OutboxState {
    /// Written changes waiting for their flush, oldest first.
    pub(super) queue: VecDeque<Unpublished>,
    /// The task as the last published change left it, and that change's sequence number.
    pub(super) published: Option<(Arc<Task>, u64)>,
    /// Whether a background flush runs (see [`TaskCell::record`](super::TaskCell::record)).
    pub(super) flushing: bool,
    /// The sequence number of the last change written to the store: the queued changes after
    /// it are not written yet (write-behind, see the module docs).
    written: u64,
    /// The claim another send of the message wrote first (`joint`): the first batch wrote
    /// nothing, and no later one is tried.
    lost: Option<MessageClaim>,
}

impl OutboxState {
    /// The sequence number of the last change written to the store (0: none).
    pub(super) fn written(&self) -> u64 {
        self.written
    }
}

#[derive(Debug)]
pub(super) struct Unpublished {
    pub(super) event: Arc<SeqEvent>,
    /// The task after the change.
    pub(super) task: Arc<Task>,
}

impl Outbox {
    /// The outbox of a task last written as `stored` (`None`: not created yet).
    /// With `first_claim`, the task is new and its first batch writes the message's claim
    /// (and the lease) with it (`joint` writes).
    pub(in crate::engine) fn new(
        id: TaskId,
        scope: Scope,
        stored: Option<&StoredTask>,
        first_claim: Option<(String, MessageClaim)>,
        cancel: tokio_util::sync::CancellationToken,
    ) -> Self {
        Self {
            id,
            scope,
            tx: broadcast::channel(BROADCAST_CAPACITY).0,
            state: Mutex::new(OutboxState {
                queue: VecDeque::new(),
                published: stored.map(|s| (s.task.clone(), s.version)),
                flushing: false,
                written: stored.map_or(0, |s| s.version),
                lost: None,
            }),
            writing: tokio::sync::Mutex::new(()),
            watched: AtomicBool::new(false),
            first_claim,
            cancel,
        }
    }

    /// The key of the message claim the task's first batch writes (`joint`), if any.
    pub(in crate::engine) fn first_claim_key(&self) -> Option<&str> {
        self.first_claim.as_ref().map(|(key, _)| key.as_str())
    }

    /// The claim another send wrote first, if this task's first batch lost it (`joint`).
    pub(super) fn lost(&self) -> Option<MessageClaim> {
        self.lock().lost.clone()
    }

    /// Another send of the message wrote `claim` first: this task is never written, and its
    /// execution is told to stop. Returns the error its writes get.
    pub(super) fn set_lost(&self, claim: MessageClaim) -> StoreError {
        let error = lost(&claim);
        self.lock().lost = Some(claim);
        self.cancel.cancel();
        error
    }

    /// Waits for the batch being written, if any: what it covers counts as written after.
    pub(super) async fn writing(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.writing.lock().await
    }

    /// Someone watches the task as it goes (a stream, a webhook, a `returnImmediately` send):
    /// from now on each change is revealed as it comes, not at the next reveal only.
    pub(crate) fn watch(&self) {
        self.watched.store(true, Ordering::Release);
    }

    /// Whether someone watches the task as it goes (see [`Outbox::watch`]).
    pub(super) fn watched(&self) -> bool {
        self.watched.load(Ordering::Acquire)
    }

    /// Reveals the changes waiting unwritten, with a flush in the background, unless one runs
    /// (someone started watching, or the queue is full).
    pub(super) fn reveal(self: &Arc<Self>, rt: &Arc<Engine>) {
        let mut out = self.lock();
        if out.flushing || out.queue.back().is_none_or(|u| u.event.seq <= out.written) {
            return;
        }
        out.flushing = true;
        drop(out);
        tokio::spawn(self.clone().flush_in_background(rt.clone()));
    }

    /// Whether changes wait unwritten (write-behind).
    pub(crate) fn unwritten(&self) -> bool {
        let out = self.lock();
        out.queue.back().is_some_and(|u| u.event.seq > out.written)
    }

    /// Writes the queued changes up to `seq` that are not written yet, in one batch
    /// ([`TaskStore::write_batch`](crate::store::TaskStore::write_batch)). Each is written
    /// once: a caller finds written what an earlier caller's batch covered.
    async fn write(&self, rt: &Engine, seq: u64) -> Result<(), StoreError> {
        if self.lock().written >= seq {
            return Ok(());
        }
        let _writing = self.writing.lock().await;
        let (base, batch) = {
            let out = self.lock();
            let base = out.written;
            let batch: Vec<(Arc<Task>, Arc<SeqEvent>)> = (out.queue.iter())
                .filter(|u| u.event.seq > base && u.event.seq <= seq)
                .map(|u| (u.task.clone(), u.event.clone()))
                .collect();
            (base, batch)
        };
        let Some(last) = batch.last().map(|(_, e)| e.seq) else {
            return Ok(());
        };
        let changes: Vec<BatchWrite<'_>> = batch
            .iter()
            .map(|(task, e)| BatchWrite {
                task,
                event: match &e.event {
                    Published::Created(_) => None,
                    Published::Event(event) => Some(event),
                },
            })
            .collect();
        if base == 0 && rt.joint {
            // What the first write wrote (all of it, unless an earlier try committed fewer
            // changes), then the rest as a batch that continues it.
            let written = self.create_joint(rt, &changes).await?;
            let rest = &changes[usize::try_from(written)
                .unwrap_or(usize::MAX)
                .min(changes.len())..];
            if !rest.is_empty() {
                rt.store.write_batch(&self.scope, written, rest).await?;
            }
        } else {
            rt.store.write_batch(&self.scope, base, &changes).await?;
        }
        self.lock().written = last;
        Ok(())
    }

    /// The first batch of a new task with `joint` writes: the task, its message claim and
    /// (unless the batch finishes the task, which then needs none) its execution lease, in
    /// one transaction. A claim another send wrote first leaves this task unwritten for good
    /// (see [`Outbox::lost`]). Returns the version written.
    async fn create_joint(
        &self,
        rt: &Engine,
        changes: &[BatchWrite<'_>],
    ) -> Result<u64, StoreError> {
        if let Some(claim) = self.lock().lost.clone() {
            return Err(lost(&claim));
        }
        let joint = rt.store.joint().expect("joint writes");
        let unfinished = changes
            .last()
            .is_some_and(|c| !c.task.status.state.is_terminal());
        let lease = match &rt.replication {
            Some(r) if unfinished => {
                r.leases.keep_alive(&r.owner, r.ttl).await?;
                Some(&*r.owner)
            }
            _ => None,
        };
        let claim = (self.first_claim.as_ref()).map(|(key, claim)| (key.as_str(), claim));
        let created = joint
            .create_joint(&self.scope, changes, claim, lease)
            .await?;
        if let Some((key, _)) = &self.first_claim {
            rt.claim_written(key, &self.id);
        }
        match created {
            JointCreate::Created => Ok(changes.len() as u64),
            // The claim is this task's: an earlier try of this batch committed, though its
            // answer was lost (the connection failed). The store has the task as it wrote it.
            JointCreate::ClaimTaken(claim) if claim.task_id == self.id => rt
                .store
                .get(&self.id)
                .await?
                .map(|stored| stored.version)
                .ok_or_else(|| StoreError::NotFound(self.id.clone())),
            JointCreate::ClaimTaken(claim) => Err(self.set_lost(claim)),
        }
    }

    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, OutboxState> {
        self.state.lock().expect("outbox lock")
    }

    /// Publishes the waiting changes up to `seq`, which a flush covered, in order (a caller
    /// whose flush covered fewer may already have published some: each is published once);
    /// then `now`, a change durable already (on a store whose writes are durable at once,
    /// changes skip the queue and come straight here).
    pub(super) async fn publish(&self, rt: &Engine, seq: u64, now: Option<Unpublished>) {
        let mut terminal = false;
        {
            let mut out = self.lock();
            if now.is_none() && out.queue.front().is_none_or(|u| u.event.seq > seq) {
                return;
            }
            let mut send = |out: &mut OutboxState, u: Unpublished| {
                let seq = u.event.seq;
                terminal |= u.task.status.state.is_terminal();
                out.published = Some((u.task, seq));
                let _ = self.tx.send(Update::Event(u.event));
                rt.bus.publish(&self.id, seq);
            };
            while out.queue.front().is_some_and(|u| u.event.seq <= seq) {
                let u = out.queue.pop_front().expect("a change waits");
                send(&mut out, u);
            }
            if let Some(u) = now {
                send(&mut out, u);
            }
        }
        if let Some(pusher) = &rt.pusher {
            pusher.wake(&self.id).await;
        }
        if terminal {
            rt.forget(&self.id);
        }
    }

    /// Flushes, then publishes what the flush covered: every change written before it.
    pub(super) async fn flush(&self, rt: &Engine) -> Result<(), StoreError> {
        let Some(seq) = self.lock().queue.back().map(|u| u.event.seq) else {
            return Ok(());
        };
        #[cfg(feature = "testing")]
        fault::before_batch(rt).await;
        self.write(rt, seq).await?;
        rt.store.sync().await?;
        #[cfg(feature = "testing")]
        fault::after_batch();
        self.publish(rt, seq, None).await;
        Ok(())
    }

    /// The background flush of [`TaskCell::record`](super::TaskCell::record): flushes and publishes until no change
    /// waits, or until a flush fails (the changes then wait for the next change's flush, or
    /// the wrap-up's).
    pub(super) async fn flush_in_background(self: Arc<Self>, rt: Arc<Engine>) {
        loop {
            let Some(seq) = ({
                let mut out = self.lock();
                out.flushing = out.queue.back().is_some();
                out.queue.back().map(|u| u.event.seq)
            }) else {
                return;
            };
            let durable = match self.write(&rt, seq).await {
                Ok(()) => rt.store.sync().await,
                Err(e) => Err(e),
            };
            if let Err(e) = durable {
                if self.lost().is_some() {
                    tracing::debug!(task = %self.id, error = %e, "the task's message was claimed first elsewhere");
                } else {
                    tracing::error!(task = %self.id, error = %e, "flushing the task's changes failed");
                }
                self.lock().flushing = false;
                return;
            }
            self.publish(&rt, seq, None).await;
        }
    }

    /// Tells subscribers that an execution of the agent ended (after its published changes).
    pub(in crate::engine) fn done(&self) {
        let _out = self.lock();
        let _ = self.tx.send(Update::Done);
    }
}

/// The error of a write of a task whose first batch lost its message's claim.
pub(super) fn lost(claim: &MessageClaim) -> StoreError {
    StoreError::Backend(
        format!(
            "the message was claimed first by another send, for task {}",
            claim.task_id
        )
        .into(),
    )
}

/// Faults a test injects into a real server process (feature `testing`).
#[cfg(feature = "testing")]
mod fault {
    /// With `A2A_FAULT=abort-after-batch` in the environment, aborts the process once a batch
    /// of changes is written and flushed, before anyone is shown it: the crash between a
    /// batch's write and its reveal (`tests/durability_crash.rs`).
    pub(super) fn after_batch() {
        if is("abort-after-batch") {
            std::process::abort();
        }
    }

    /// With `A2A_FAULT=abort-before-batch`, flushes the store (what another task's batch would
    /// do, sharing the group commit: the message's claim becomes durable) and aborts before the
    /// batch is written: the crash while a task waits unwritten (`tests/durability_crash.rs`).
    pub(super) async fn before_batch(rt: &crate::engine::Engine) {
        if is("abort-before-batch") {
            let _ = rt.store.sync().await;
            std::process::abort();
        }
    }

    fn is(fault: &str) -> bool {
        static FAULT: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
        FAULT
            .get_or_init(|| std::env::var("A2A_FAULT").ok())
            .as_deref()
            == Some(fault)
    }
}
