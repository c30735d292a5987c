//! Running tasks: one [`TaskCell`] per task being worked on, which serializes its writes, stores
//! each change before anyone sees it, and broadcasts the change (with its sequence number, the
//! task's version after the write) to every subscriber.

use crate::agent::{DynAgent, RequestContext};
use crate::events::TaskEvents;
use crate::store::{FastMap, MessageClaim, Scope, StoredTask, TaskStore};
use a2a_core::{
    Artifact, ContextId, Error, ErrorKind, Message, Role, StreamResponse, Task,
    TaskArtifactUpdateEvent, TaskId, TaskState, TaskStatus, TaskStatusUpdateEvent, Timestamp,
    Validate,
};
use futures::FutureExt as _;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

/// How many live events a subscriber may fall behind before it catches up from the durable log
/// instead. Small: every task being worked on allocates its channel.
const BROADCAST_CAPACITY: usize = 32;

/// One event of a task with its sequence number (the task's version after the write).
#[derive(Debug)]
pub(crate) struct SeqEvent {
    pub(crate) seq: u64,
    event: Published,
}

/// A broadcast event. The creation snapshot shares the stored task: a subscriber that only
/// waits for the end (a blocking `SendMessage`) never copies it.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // built once per event, already behind an Arc
enum Published {
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

/// A change an agent (or the server) makes to a task.
#[derive(Debug)]
pub(crate) enum Change {
    Status(TaskStatus),
    Artifact {
        artifact: Artifact,
        append: bool,
        last_chunk: bool,
    },
    Message(Message),
    /// A direct message answer, with no task (only before the task exists).
    Reply(Message),
    /// A follow-up user message to an interrupted task: appended, and the task moves to WORKING.
    Continue(Message),
}

#[derive(Debug)]
struct CellState {
    /// `None` until the task is created by its first event.
    stored: Option<StoredTask>,
    /// The user message that will open the task when it is created.
    initial: Option<Message>,
    /// Set when the agent answered with a message instead of a task.
    reply: Option<Message>,
    /// The deduplication key of the message that opened the task, to record a reply under.
    claim: Option<String>,
    /// Set when the agent refused the request with an A2A error before its first event: the
    /// call is answered with it, and no task exists.
    refusal: Option<Error>,
}

/// A task being worked on or watched.
#[derive(Debug)]
pub(crate) struct TaskCell {
    pub(crate) id: TaskId,
    pub(crate) context_id: ContextId,
    pub(crate) scope: Scope,
    /// Triggered by CancelTask or server shutdown.
    pub(crate) cancel: CancellationToken,
    generation: AtomicU64,
    state: tokio::sync::Mutex<CellState>,
    tx: broadcast::Sender<Update>,
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
    /// Subscribes and takes the current snapshot atomically: every event after the snapshot
    /// arrives through the receiver.
    pub(crate) async fn subscribe(&self) -> (Option<StoredTask>, broadcast::Receiver<Update>) {
        let st = self.state.lock().await;
        (st.stored.clone(), self.tx.subscribe())
    }

    /// The current stored task, if created.
    pub(crate) async fn snapshot(&self) -> Option<StoredTask> {
        self.state.lock().await.stored.clone()
    }

    /// The state of the current stored task, if created (without copying the task).
    pub(crate) async fn current_state(&self) -> Option<TaskState> {
        let st = self.state.lock().await;
        st.stored.as_ref().map(|t| t.task.status.state.clone())
    }

    /// The message reply, if the agent answered with one.
    pub(crate) async fn reply(&self) -> Option<Message> {
        self.state.lock().await.reply.clone()
    }

    /// The error the agent refused the request with, if it did (see [`Runtime::refuse`]).
    pub(crate) async fn refusal(&self) -> Option<Error> {
        self.state.lock().await.refusal.clone()
    }

    fn illegal(what: impl std::fmt::Display) -> Error {
        Error::new(ErrorKind::InvalidAgentResponse, what.to_string())
    }

    /// Completes an agent-produced message: role agent, this task's context, and this task's
    /// id when the message belongs to the task. A direct reply creates no task, so it names
    /// none (an agent message carries a `taskId` only if the task exists).
    fn own_message(&self, mut m: Message, in_task: bool) -> Message {
        if m.role == Role::Unspecified {
            m.role = Role::Agent;
        }
        if in_task {
            m.task_id.get_or_insert_with(|| self.id.clone());
        } else {
            m.task_id = None;
        }
        m.context_id.get_or_insert_with(|| self.context_id.clone());
        m
    }

    /// Applies `change` to `task` and returns the event that announces it. The task changes
    /// only through [`Task::apply`] of that event (and, for a continuation, the user's message),
    /// so the stored task is the fold of its events.
    fn apply_to(&self, task: &mut Task, change: Change) -> Result<StreamResponse, Error> {
        let (received, event) = self.check(task, change)?;
        task.history.extend(received);
        // Refused only for an event of another task, which `check` never builds.
        task.apply(&event)
            .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
        Ok(event)
    }

    /// Checks `change` against `task` and builds the event that announces it. A continuation
    /// also returns the user's message, which no event carries (the client sent it).
    fn check(
        &self,
        task: &Task,
        change: Change,
    ) -> Result<(Option<Message>, StreamResponse), Error> {
        let state = &task.status.state;
        let status_update = |status| {
            StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                task_id: task.id.clone(),
                context_id: task.context_id.clone(),
                status,
                metadata: None,
            })
        };
        match change {
            Change::Status(mut status) => {
                if !state.can_transition_to(&status.state) {
                    return Err(Self::illegal(format_args!(
                        "illegal transition of task {} from {state} to {}",
                        task.id, status.state
                    )));
                }
                status.message = status.message.map(|m| self.own_message(m, true));
                Ok((None, status_update(status)))
            }
            Change::Artifact {
                artifact,
                append,
                last_chunk,
            } => {
                if state.is_terminal() {
                    return Err(Self::illegal(format_args!(
                        "task {} is {state}: no more artifacts",
                        task.id
                    )));
                }
                artifact
                    .validate()
                    .map_err(|e| Self::illegal(format_args!("invalid artifact: {}", e.message)))?;
                let update = TaskArtifactUpdateEvent {
                    task_id: task.id.clone(),
                    context_id: task.context_id.clone(),
                    artifact,
                    append,
                    last_chunk,
                    metadata: None,
                };
                Ok((None, StreamResponse::ArtifactUpdate(update)))
            }
            Change::Message(m) => {
                if state.is_terminal() {
                    return Err(Self::illegal(format_args!(
                        "task {} is {state}: no more messages",
                        task.id
                    )));
                }
                let m = self.own_message(m, true);
                if let Some(other) = m.task_id.as_ref().filter(|id| **id != task.id) {
                    return Err(Self::illegal(format_args!(
                        "a message of task {} names task {other}",
                        task.id
                    )));
                }
                Ok((None, StreamResponse::Message(m)))
            }
            Change::Continue(m) => {
                if !state.is_interrupted() {
                    return Err(Error::new(
                        ErrorKind::UnsupportedOperation,
                        format!("Task {} is {state} and does not expect a message", task.id),
                    ));
                }
                Ok((Some(m), status_update(TaskStatus::new(TaskState::Working))))
            }
            Change::Reply(_) => Err(Self::illegal(
                "a task exists already: send agent messages with TaskEvents::message",
            )),
        }
    }

    /// Stores `change`, then broadcasts it. With `subscribe`, also returns a receiver that sees
    /// every later event.
    pub(crate) async fn apply(
        &self,
        rt: &Runtime,
        change: Change,
        subscribe: bool,
    ) -> Result<Applied, Error> {
        let mut st = self.state.lock().await;
        let (stored, event) = match (&st.stored, change) {
            (None, Change::Reply(m)) => {
                if st.reply.is_some() {
                    return Err(Self::illegal("the agent already replied with a message"));
                }
                let m = self.own_message(m, false);
                if let Some(key) = &st.claim {
                    // A retried send must get the same answer: record it before anyone sees it.
                    let claim = MessageClaim {
                        task_id: self.id.clone(),
                        reply: Some(m.clone()),
                        received_ms: Timestamp::now().unix_millis(),
                    };
                    rt.store.update_claim(key, claim).await?;
                    rt.store.sync().await?;
                }
                st.reply = Some(m.clone());
                let rx = subscribe.then(|| self.tx.subscribe());
                let _ = self.tx.send(Update::Event(Arc::new(SeqEvent {
                    seq: 0,
                    event: Published::Event(StreamResponse::Message(m)),
                })));
                return Ok(Applied { stored: None, rx });
            }
            (None, change) => {
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
                task.history.extend(st.initial.take());
                if !matches!(&change, Change::Status(s) if s.state == TaskState::Submitted) {
                    self.apply_to(&mut task, change)?;
                }
                let stored = rt.store.create(Arc::new(task), self.scope.clone()).await?;
                let event = Published::Created(stored.task.clone());
                (stored, event)
            }
            (Some(current), change) => {
                let mut task = Task::clone(&current.task);
                let event = self.apply_to(&mut task, change)?;
                let stored = rt
                    .store
                    .update(Arc::new(task), current.version, &event)
                    .await?;
                (stored, Published::Event(event))
            }
        };
        rt.store.sync().await?;
        let terminal = stored.task.status.state.is_terminal();
        let seq = stored.version;
        // Only a subscribing caller (a continuation) uses the stored task: the agent's own
        // writes skip the copy.
        let returned = subscribe.then(|| stored.clone());
        st.stored = Some(stored);
        let rx = subscribe.then(|| self.tx.subscribe());
        let _ = self
            .tx
            .send(Update::Event(Arc::new(SeqEvent { seq, event })));
        drop(st);
        if let Some(pusher) = &rt.pusher {
            pusher.wake(&self.id).await;
        }
        if terminal {
            rt.forget(&self.id);
        }
        Ok(Applied {
            stored: returned,
            rx,
        })
    }
}

/// The running tasks of a server.
pub(crate) struct Runtime {
    pub(crate) store: Arc<dyn TaskStore>,
    agent: Arc<dyn DynAgent>,
    cells: Mutex<FastMap<TaskId, Arc<TaskCell>>>,
    /// Triggered at shutdown: ends executions (through their tokens) and streams.
    pub(crate) shutdown: CancellationToken,
    /// Webhook deliveries, when push notifications are on.
    pub(crate) pusher: Option<Arc<crate::push::Pusher>>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime").finish_non_exhaustive()
    }
}

impl Runtime {
    pub(crate) fn new(
        store: Arc<dyn TaskStore>,
        agent: Arc<dyn DynAgent>,
        shutdown: CancellationToken,
        pusher: Option<Arc<crate::push::Pusher>>,
    ) -> Self {
        Self {
            store,
            agent,
            cells: Mutex::new(FastMap::default()),
            shutdown,
            pusher,
        }
    }

    fn new_cell(
        &self,
        id: TaskId,
        context_id: ContextId,
        scope: Scope,
        state: CellState,
    ) -> TaskCell {
        TaskCell {
            id,
            context_id,
            scope,
            cancel: self.shutdown.child_token(),
            generation: AtomicU64::new(0),
            state: tokio::sync::Mutex::new(state),
            tx: broadcast::channel(BROADCAST_CAPACITY).0,
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
        let cell = Arc::new(self.new_cell(
            id.clone(),
            context_id,
            scope,
            CellState {
                stored: None,
                initial: Some(initial),
                reply: None,
                claim,
                refusal: None,
            },
        ));
        self.cells
            .lock()
            .expect("cells lock")
            .insert(id, cell.clone());
        cell
    }

    /// The cell of a stored task (created from the record if the task is not live).
    pub(crate) fn cell_for(&self, stored: StoredTask) -> Arc<TaskCell> {
        let mut cells = self.cells.lock().expect("cells lock");
        cells
            .entry(stored.task.id.clone())
            .or_insert_with(|| {
                Arc::new(self.new_cell(
                    stored.task.id.clone(),
                    stored.task.context_id.clone(),
                    stored.scope.clone(),
                    CellState {
                        stored: Some(stored),
                        initial: None,
                        reply: None,
                        claim: None,
                        refusal: None,
                    },
                ))
            })
            .clone()
    }

    /// The live cell of a task, if any.
    pub(crate) fn live_cell(&self, id: &TaskId) -> Option<Arc<TaskCell>> {
        self.cells.lock().expect("cells lock").get(id).cloned()
    }

    pub(crate) fn forget(&self, id: &TaskId) {
        self.cells.lock().expect("cells lock").remove(id);
    }

    /// Runs the agent's `execute` for `cell` in the background. When it ends, a task left
    /// active (or never created) is failed with a status message saying why.
    pub(crate) fn spawn_execution(self: &Arc<Self>, cell: Arc<TaskCell>, cx: RequestContext) {
        self.spawn_run(cell, cx, false);
    }

    /// Runs the agent's `resume` hook for a task found active at start-up.
    pub(crate) fn spawn_resume(self: &Arc<Self>, cell: Arc<TaskCell>, cx: RequestContext) {
        self.spawn_run(cell, cx, true);
    }

    fn spawn_run(self: &Arc<Self>, cell: Arc<TaskCell>, cx: RequestContext, resume: bool) {
        let generation = cell.generation.fetch_add(1, Ordering::SeqCst) + 1;
        let rt = self.clone();
        tokio::spawn(async move {
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
                    let _ = cell.tx.send(Update::Done);
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
        });
    }

    /// Runs the agent's `cancel` and, when it accepts, stops the execution and moves the task
    /// to CANCELED (unless it already ended). Returns the task afterwards.
    pub(crate) async fn cancel(
        self: &Arc<Self>,
        cell: Arc<TaskCell>,
        cx: RequestContext,
    ) -> Result<StoredTask, Error> {
        let events = TaskEvents::new(self.clone(), cell.clone());
        AssertUnwindSafe(self.agent.cancel(cx, events))
            .catch_unwind()
            .await
            .map_err(|_| Error::new(ErrorKind::Internal, "The agent panicked while canceling"))??;
        // CANCELED is stored first, then the execution is told to stop: the execution's wrap-up
        // (which would fail a task left active) then finds the task already finished.
        let current = cell.snapshot().await;
        if current
            .as_ref()
            .is_some_and(|t| !t.task.status.state.is_terminal())
        {
            let status = TaskStatus::new(TaskState::Canceled).with_message(Message::agent_text(
                "The task was canceled at the client's request.",
            ));
            if let Err(e) = cell.apply(self, Change::Status(status), false).await {
                // It ended meanwhile; the current task is the answer.
                tracing::debug!(task = %cell.id, error = %e, "cancel raced with the task's end");
            }
        }
        cell.cancel.cancel();
        cell.snapshot()
            .await
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
        if let Some(key) = claim {
            if let Err(e) = self.store.release_claim(&key).await {
                tracing::warn!(task = %cell.id, error = %e, "could not forget a refused message");
            }
        }
        if let Ok(configs) = self.store.push_configs(&cell.id).await {
            for config in configs {
                let _ = self.store.delete_push_config(&cell.id, config.id()).await;
            }
        }
        true
    }

    async fn finish_execution(
        &self,
        cell: &Arc<TaskCell>,
        generation: u64,
        failure: Option<String>,
    ) {
        let current = cell.current_state().await;
        let is_latest = cell.generation.load(Ordering::SeqCst) == generation;
        let needs_failing = match &current {
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
            if let Err(e) = cell.apply(self, Change::Status(status), false).await {
                tracing::error!(task = %cell.id, error = %e, "could not record the task's failure");
            }
        } else if let Some(why) = failure {
            tracing::warn!(task = %cell.id, "{why} (after the task had ended or paused)");
        }
        let _ = cell.tx.send(Update::Done);
        if current.is_none() && cell.current_state().await.is_none() {
            self.forget(&cell.id);
        }
    }
}
