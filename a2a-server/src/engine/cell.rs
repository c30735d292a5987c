//! [`TaskCell`]: a task being worked on in this process. It serializes the task's writes, checks
//! each change against the lifecycle, stores it before anyone sees it, and broadcasts it (with
//! its sequence number, the task's version after the write) to this process's subscribers and,
//! as a notification, on the [`EventBus`](super::EventBus).
//!
//! A change is broadcast only once durable. On a store whose writes wait for a flush
//! ([`TaskStore::flushes`](crate::store::TaskStore::flushes)), an agent's change waits in the
//! cell's [`Outbox`], unwritten, while the agent goes on, and is written with the changes
//! queued with it, in one batch, when it is first revealed (write-behind, see
//! `cell/outbox.rs`): an agent that reports three changes in a row waits for no disk, its three
//! changes are one write, and that write's flush is shared with every other task's.
//! The checks of a change against the lifecycle are in `cell/change.rs`, the broadcast and
//! the flush-then-publish queue in `cell/outbox.rs`.

mod change;
mod outbox;

pub(crate) use change::Change;
pub(crate) use outbox::{Outbox, SeqEvent, Update};

use super::Engine;
use crate::store::{MessageClaim, Scope, StoreError, StoredTask};
use a2a_core::{
    ContextId, Error, ErrorKind, Message, StreamResponse, Task, TaskId, TaskState, TaskStatus,
    Timestamp,
};
use outbox::{OutboxState, Published, Unpublished};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, PoisonError};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

#[derive(Debug)]
pub(super) struct CellState {
    /// `None` until the task is created by its first event.
    pub(super) stored: Option<StoredTask>,
    /// The user message that will open the task when it is created.
    pub(super) initial: Option<Message>,
    /// Set when the agent answered with a message instead of a task.
    pub(super) reply: Option<Message>,
    /// The deduplication key of the message that opened the task, to record a reply under.
    pub(super) claim: Option<String>,
    /// Set when the agent refused the request with an A2A error before its first event: the
    /// call is answered with it, and no task exists.
    pub(super) refusal: Option<Error>,
}

impl CellState {
    /// The state of a task that exists in the store as `stored`.
    pub(super) fn of(stored: StoredTask) -> Self {
        Self {
            stored: Some(stored),
            initial: None,
            reply: None,
            claim: None,
            refusal: None,
        }
    }

    /// The state of a task about to be created with `initial` as its first message.
    pub(super) fn new_task(initial: Message, claim: Option<String>) -> Self {
        Self {
            stored: None,
            initial: Some(initial),
            reply: None,
            claim,
            refusal: None,
        }
    }
}

/// What a request that ran the agent answers (see [`TaskCell::outcome`]).
pub(crate) enum Outcome {
    /// Another send of the message wrote its claim first (`joint` writes): this one wrote
    /// nothing, and answers as a retry of that one (the claim found, and its key).
    Lost(MessageClaim, String),
    /// The agent answered with a message instead of a task.
    Reply(Message),
    /// The task, `None` if it was not created.
    Task(Option<StoredTask>),
}

/// `TaskGenerationMismatchError`: a continuation required generation `required` of task `id`,
/// which is at `current`.
pub(crate) fn generation_mismatch(id: &TaskId, required: i64, current: u64) -> Error {
    Error::new(
        ErrorKind::TaskGenerationMismatch,
        format!(
            "Task generation mismatch: expected {required} but current generation is {current}"
        ),
    )
    .with_metadata("taskId", id.as_str())
    .with_metadata("expectedGeneration", required.to_string())
    .with_metadata("currentGeneration", current.to_string())
}

/// A task being worked on in this process (or canceled from it).
#[derive(Debug)]
pub(crate) struct TaskCell {
    pub(crate) id: TaskId,
    pub(crate) context_id: ContextId,
    pub(crate) scope: Scope,
    /// Triggered by CancelTask or server shutdown.
    pub(crate) cancel: CancellationToken,
    /// Counts the executions started on this cell; an execution's wrap-up acts only if no
    /// later one started.
    pub(super) generation: AtomicU64,
    /// How many executions of the agent run on this cell now.
    pub(super) running: AtomicUsize,
    pub(super) state: tokio::sync::Mutex<CellState>,
    pub(super) outbox: Arc<Outbox>,
    /// The engine's map, which this cell leaves when dropped.
    pub(super) cells: super::Cells,
}

impl Drop for TaskCell {
    /// The last holder let go: the task's cell leaves the engine's map, unless the map already
    /// holds a newer cell of the task (started by a reader that found this one dropping).
    fn drop(&mut self) {
        let mut cells = self.cells.lock().unwrap_or_else(PoisonError::into_inner);
        if cells
            .get(&self.id)
            .is_some_and(|w| std::ptr::eq(w.as_ptr(), self))
        {
            cells.remove(&self.id);
        }
    }
}

/// The result of applying a change.
pub(crate) struct Applied {
    /// The stored task after the change, when the caller subscribed (`None` for a message
    /// reply).
    pub(crate) stored: Option<StoredTask>,
    /// A subscription taken right after the change, when asked for.
    pub(crate) rx: Option<broadcast::Receiver<Update>>,
}

impl TaskCell {
    /// Whether an execution of the agent runs on this cell: only then do this process's writes
    /// reach its subscribers first (others follow the task through the bus).
    pub(crate) fn is_running(&self) -> bool {
        self.running.load(Ordering::Acquire) > 0
    }

    /// Subscribes and takes the current snapshot atomically: every event after the snapshot
    /// arrives through the receiver.
    pub(crate) fn subscribe(&self) -> (Option<StoredTask>, broadcast::Receiver<Update>) {
        let out = self.outbox.lock();
        (self.stored(&out), self.outbox.tx.subscribe())
    }

    /// The task as published (what clients may see), if created: as this cell last wrote or
    /// read it, but for changes still waiting for their flush.
    pub(crate) fn snapshot(&self) -> Option<StoredTask> {
        self.stored(&self.outbox.lock())
    }

    fn stored(&self, out: &OutboxState) -> Option<StoredTask> {
        out.published.as_ref().map(|(task, version)| StoredTask {
            task: task.clone(),
            version: *version,
            scope: self.scope.clone(),
        })
    }

    /// The state of the published task, if created (without copying the task).
    pub(crate) fn current_state(&self) -> Option<TaskState> {
        let out = self.outbox.lock();
        out.published.as_ref().map(|(t, _)| t.status.state.clone())
    }

    /// The message reply, if the agent answered with one.
    pub(crate) async fn reply(&self) -> Option<Message> {
        self.state.lock().await.reply.clone()
    }

    /// The error the agent refused the request with, if it did (see [`Engine::refuse`]).
    pub(crate) async fn refusal(&self) -> Option<Error> {
        self.state.lock().await.refusal.clone()
    }

    /// What the request that ran the agent answers, read under one lock: the agent's refusal,
    /// else its message reply, else the published task (an error if the task was written but
    /// its flush failed).
    pub(crate) async fn outcome(&self) -> Result<Outcome, Error> {
        let st = self.state.lock().await;
        if let Some(refusal) = &st.refusal {
            return Err(refusal.clone());
        }
        if let (Some(claim), Some(key)) = (self.outbox.lost(), &st.claim) {
            return Ok(Outcome::Lost(claim, key.clone()));
        }
        Ok(match (&st.reply, self.snapshot()) {
            (Some(m), _) => Outcome::Reply(m.clone()),
            (None, None) if st.stored.is_some() => {
                return Err(Error::new(
                    ErrorKind::Internal,
                    format!(
                        "task {} was stored but could not be made durable; it is shown once a later flush succeeds",
                        self.id
                    ),
                ));
            }
            (None, task) => Outcome::Task(task),
        })
    }

    /// Stores `change` and returns once it is durable and broadcast. With `subscribe`, also
    /// returns the stored task and a receiver of every later event.
    ///
    /// The change comes boxed, here and on to [`TaskCell::write`]: a future keeps each argument
    /// for its whole life, so a change passed by value would take its place again in every
    /// level's future (the agent's included).
    pub(crate) async fn apply(
        &self,
        rt: &Engine,
        change: Box<Change>,
        subscribe: bool,
    ) -> Result<Applied, Error> {
        let mut st = self.state.lock().await;
        // Published under the lock: the subscription below sees exactly the changes after it.
        match self.write(rt, &mut st, change).await? {
            Some((change, true)) => {
                self.outbox.lock().queue.push_back(change);
                self.flush(rt).await?;
            }
            Some((change, false)) => {
                self.outbox
                    .publish(rt, change.event.seq, Some(change))
                    .await
            }
            None => {}
        }
        Ok(Applied {
            stored: subscribe.then(|| st.stored.clone()).flatten(),
            rx: subscribe.then(|| self.outbox.tx.subscribe()),
        })
    }

    /// An agent's change: checked and queued, then written and broadcast at its first reveal
    /// (write-behind, see `cell/outbox.rs`). On a store that flushes, this returns as soon as
    /// the change is queued, so that the agent goes on without waiting for the disk, unless
    /// the change ends a blocking wait (a terminal or interrupted state: its answer reveals
    /// it) or no execution runs to wrap up after it: then it is written, flushed and published
    /// before this returns. Changes that someone watches as they come, or that fill the queue,
    /// are written and published in the background. An execution's wrap-up publishes what is
    /// left ([`TaskCell::flush`]) before it announces its end.
    pub(crate) async fn record(&self, rt: &Arc<Engine>, change: Box<Change>) -> Result<(), Error> {
        if !rt.writes_behind() {
            return self.apply(rt, change, false).await.map(drop);
        }
        let mut st = self.state.lock().await;
        let Some((change, behind)) = self.write(rt, &mut st, change).await? else {
            return Ok(());
        };
        if !behind {
            // Written already (a `joint` task after its first write): published at once.
            let seq = change.event.seq;
            self.outbox.publish(rt, seq, Some(change)).await;
            return Ok(());
        }
        // Checked under the cell's lock, which the wrap-up takes to end the execution.
        let now = change.event.ends_stream() || !self.is_running();
        // Queued under the cell's lock: in sequence order.
        let queued = {
            let mut out = self.outbox.lock();
            out.queue.push_back(change);
            out.queue.len()
        };
        if now {
            self.flush(rt).await?;
            return Ok(());
        }
        let eager = self.outbox.watched() || queued >= outbox::PENDING_MAX;
        drop(st);
        if eager {
            self.outbox.reveal(rt);
        }
        Ok(())
    }

    /// Someone watches the task as it goes: reveals what waits unwritten, and from now on each
    /// change as it comes (see [`Outbox::watch`]).
    pub(crate) fn watch(&self, rt: &Arc<Engine>) {
        self.outbox.watch();
        if rt.writes_behind() {
            self.outbox.reveal(rt);
        }
    }

    /// Makes every change written so far durable, and broadcasts it.
    pub(crate) async fn flush(&self, rt: &Engine) -> Result<(), StoreError> {
        self.outbox.flush(rt).await
    }

    /// Whether another send of the task's message was written first (`joint` writes): the
    /// task is never written, and its execution was told to stop.
    pub(crate) fn lost(&self) -> bool {
        self.outbox.lost().is_some()
    }

    /// Whether the next change of the task waits unwritten (write-behind, see
    /// `cell/outbox.rs`): always on a store that flushes; with `joint` writes, until the
    /// task's first write (and while changes queued before it wait). Asked under the
    /// cell's lock, after any batch being written: its changes count as written.
    async fn behind(&self, rt: &Engine) -> bool {
        if rt.store.flushes() {
            return true;
        }
        if !rt.joint {
            return false;
        }
        let _writing = self.outbox.writing().await;
        let out = self.outbox.lock();
        out.written() == 0
            || out
                .queue
                .back()
                .is_some_and(|u| u.event.seq > out.written())
    }

    /// Checks `change` and stores it, or (write-behind) numbers it; returns it, to be
    /// published, and whether it waits unwritten (`None` for a message reply, no change of a
    /// task: it is broadcast at once).
    async fn write(
        &self,
        rt: &Engine,
        st: &mut CellState,
        change: Box<Change>,
    ) -> Result<Option<(Unpublished, bool)>, Error> {
        if let Some(first) = self.outbox.lost() {
            return Err(outbox::lost(&first).into());
        }
        let behind = self.behind(rt).await;
        let before = (rt.metrics.as_ref())
            .and(st.stored.as_ref())
            .map(|s| s.task.status.state.clone());
        let required = change.required_generation();
        // The change stays in its box until it is taken apart: the match holds only the box.
        let (stored, event) = match (&st.stored, change) {
            (None, change) => match *change {
                Change::Reply(m) => {
                    if st.reply.is_some() {
                        return Err(Self::illegal("the agent already replied with a message"));
                    }
                    let m = self.own_message(m, false);
                    if let (Some(key), Some(claims)) = (&st.claim, &rt.claims) {
                        // A retried send must get the same answer: record it before anyone sees it
                        // (the flush makes it durable when the claims are the task store's).
                        let claim = MessageClaim {
                            task_id: self.id.clone(),
                            reply: Some(m.clone()),
                            received_ms: Timestamp::now().unix_millis(),
                        };
                        match rt.store.joint() {
                            // The send's first write (`joint`): its claim, with the reply, unless
                            // another send of the message was written first.
                            Some(joint) if self.outbox.first_claim_key() == Some(key.as_str()) => {
                                let taken = joint.claim_reply(key, &claim).await;
                                rt.claim_written(key, &self.id);
                                if let Some(first) = taken? {
                                    return Err(self.outbox.set_lost(first).into());
                                }
                            }
                            _ => {
                                claims.update_claim(key, claim).await?;
                                rt.store.sync().await?;
                            }
                        }
                    }
                    st.reply = Some(m.clone());
                    let _out = self.outbox.lock();
                    let _ = self.outbox.tx.send(Update::Event(Arc::new(SeqEvent {
                        seq: 0,
                        event: Published::Event(StreamResponse::Message(m)),
                    })));
                    return Ok(None);
                }
                change => {
                    let task = Arc::new(self.new_task(st, change)?);
                    let stored = if behind {
                        // Write-behind: written at its first reveal (see `cell/outbox.rs`).
                        StoredTask {
                            task,
                            version: 1,
                            scope: self.scope.clone(),
                        }
                    } else {
                        rt.store.create(task, self.scope.clone()).await?
                    };
                    let event = Published::Created(stored.task.clone());
                    (stored, event)
                }
            },
            (Some(_), mut change) => loop {
                let current = st.stored.as_ref().expect("matched above");
                // `ifGenerationMatch`: checked against the version this write replaces, which
                // the store's compare-and-swap confirms; a conflict reloads and checks again,
                // so of two continuations at the same generation exactly one is stored.
                if let Some(required) = required
                    && i64::try_from(current.version) != Ok(required)
                {
                    return Err(generation_mismatch(&self.id, required, current.version));
                }
                let (received, event) = self.check(&current.task, *change)?;
                let task = Arc::new(Self::fold(
                    Task::clone(&current.task),
                    received.clone(),
                    &event,
                )?);
                if behind {
                    // Write-behind: this process is the store's only writer (or, with `joint`
                    // writes, no one else knows of the task yet), and this cell the task's:
                    // the next version is ours (see `cell/outbox.rs`).
                    let stored = StoredTask {
                        task,
                        version: current.version + 1,
                        scope: current.scope.clone(),
                    };
                    break (stored, Published::Event(event));
                }
                match rt.store.update(task, current.version, &event).await {
                    Ok(stored) => break (stored, Published::Event(event)),
                    // Another replica wrote the task (a cancel, a continuation): read it again
                    // and check the change against what it is now.
                    Err(StoreError::VersionConflict { .. }) => {
                        // Boxed: only with replicas, and inline it would make every write's
                        // future larger.
                        Box::pin(self.reload(rt, st)).await?;
                        *change = Change::redo(received, event)?;
                    }
                    Err(e) => return Err(e.into()),
                }
            },
        };
        if let Some(metrics) = &rt.metrics {
            let kind = match &event {
                Published::Created(_) => "task",
                Published::Event(StreamResponse::ArtifactUpdate(_)) => "artifact",
                Published::Event(_) => "status",
            };
            metrics.task_changed(&self.id, before.as_ref(), &stored.task.status.state, kind);
        }
        let change = Unpublished {
            event: Arc::new(SeqEvent {
                seq: stored.version,
                event,
            }),
            task: stored.task.clone(),
        };
        st.stored = Some(stored);
        Ok(Some((change, behind)))
    }

    /// The task `change` creates (its first event), with the message that opened it.
    fn new_task(&self, st: &mut CellState, change: Change) -> Result<Task, Error> {
        if st.reply.is_some() {
            return Err(Self::illegal(
                "the agent replied with a message: it cannot also create a task",
            ));
        }
        let mut task = Task::new(
            self.id.clone(),
            self.context_id.clone(),
            TaskStatus::new(TaskState::Submitted),
        );
        // Exactly as long as it is (a pushed vector would keep room for four).
        if let Some(m) = st.initial.take() {
            task.history = vec![m];
        }
        if !matches!(&change, Change::Status(s) if s.state == TaskState::Submitted) {
            let (received, event) = self.check(&task, change)?;
            task = Self::fold(task, received, &event)?;
        }
        Ok(task)
    }

    /// Catches up with writes other replicas made: if the store holds a newer version than
    /// this cell, reads it (see [`TaskCell::reload`]).
    pub(crate) async fn refresh(&self, rt: &Engine) -> Result<(), Error> {
        let mut st = self.state.lock().await;
        let Some(version) = st.stored.as_ref().map(|s| s.version) else {
            return Ok(());
        };
        match rt.store.get(&self.id).await? {
            Some(fresh) if fresh.version > version => self.catch_up(rt, &mut st, fresh).await,
            _ => Ok(()),
        }
    }

    /// Reads the task again after another replica wrote it, and passes the events this cell
    /// missed to its subscribers, in order. A task that ended elsewhere (canceled) stops the
    /// execution here.
    async fn reload(&self, rt: &Engine, st: &mut CellState) -> Result<(), Error> {
        let fresh = rt
            .store
            .get(&self.id)
            .await?
            .ok_or_else(|| Error::task_not_found(self.id.as_str()))?;
        self.catch_up(rt, st, fresh).await
    }

    /// [`TaskCell::reload`] with the task as just read.
    async fn catch_up(
        &self,
        rt: &Engine,
        st: &mut CellState,
        fresh: StoredTask,
    ) -> Result<(), Error> {
        let mut seen = st.stored.as_ref().map_or(0, |s| s.version);
        'log: while seen < fresh.version {
            let page = rt.store.events(&self.id, seen, 256).await?;
            if page.is_empty() {
                break;
            }
            // Written by another process, so durable: published at once (a store that flushes
            // has no other writer, and nothing of this cell waits in the outbox).
            let _out = self.outbox.lock();
            for e in page {
                if e.seq > fresh.version {
                    break 'log;
                }
                seen = e.seq;
                let event = Published::Event(e.event);
                let _ =
                    (self.outbox.tx).send(Update::Event(Arc::new(SeqEvent { seq: e.seq, event })));
            }
        }
        if fresh.task.status.state.is_terminal() {
            self.cancel.cancel();
        }
        self.outbox.lock().published = Some((fresh.task.clone(), fresh.version));
        st.stored = Some(fresh);
        Ok(())
    }
}
