//! Starting and continuing a task on a message. [`Engine::start`] and
//! [`Engine::continue_task`] own every step a send takes before the agent runs: the message's
//! claim (so that a retried send is answered as the first was), the webhook registration the
//! message asked for, the execution lease, and the undo of each when a later step fails, so
//! that a failed start leaves nothing behind and a retry of it runs afresh.

use super::claim_key::claim_key;
use super::follow::{self, Source};
use super::retry::Retry;
use super::webhooks::Handoff;
use super::{Change, Engine, Execution, Outcome, TaskCell, Update};
use crate::agent::{RequestContext, ServiceParams};
use crate::handler::{EventStream, StreamEvent};
use crate::store::{MessageClaim, Scope, StoredTask};
use a2a_core::{ContextId, Error, ErrorKind, Message, Task, TaskId, TaskPushNotificationConfig};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use tokio::sync::broadcast::{self, error::RecvError};

/// A message to start or continue a task with, as the handler checked it.
#[derive(Debug)]
pub(crate) struct Incoming {
    /// The caller's scope: the task's, and part of the message's claim key.
    pub(crate) scope: Scope,
    /// The call's service parameters, for the agent.
    pub(crate) service_params: ServiceParams,
    /// The extensions the call activates, for the agent.
    pub(crate) extensions: Vec<String>,
    /// The message (its `taskId` names the task a continuation continues).
    pub(crate) message: Message,
    /// A webhook to register for the task's events, its URL checked.
    pub(crate) push: Option<TaskPushNotificationConfig>,
    /// The call came through the v0.3 protocol (the webhook gets v0.3 payloads).
    pub(crate) v03: bool,
    /// The call speaks A2A 1.1 (the webhook's task events carry their generation).
    pub(crate) generations: bool,
    /// `ifGenerationMatch`: continue the task only at this generation (new tasks ignore it).
    pub(crate) if_generation_match: Option<i64>,
}

/// What a send started.
#[allow(clippy::large_enum_variant)] // one per call, moved once
pub(crate) enum Started {
    /// An execution of the agent, just started.
    Run(Run),
    /// A retry of a message received before: the agent does not run again.
    Retry(Retry),
}

/// A task execution, with a subscription to its events taken when it started.
pub(crate) struct Run {
    cell: Arc<TaskCell>,
    rx: broadcast::Receiver<Update>,
    /// The snapshot to open a stream with (continuations); a new task's stream opens with its
    /// creation event instead.
    first: Option<StoredTask>,
    /// The agent's execution, for the caller to drive while it waits (see [`Execution`]).
    /// `None` when the run was joined by a retry.
    execution: Option<Execution>,
    /// A new task's webhook, moved to the winner's task if the task loses its claim.
    webhook: Option<Box<Handoff>>,
}

/// What a send that waited for its task answers.
#[derive(Debug)]
pub(crate) enum Answer {
    /// The agent answered with a message, and no task.
    Reply(Message),
    /// The task as published when the wait ended.
    Task(StoredTask),
    /// Another send of the message (on another replica) wrote its claim first, while this
    /// one's task waited unwritten (`joint` writes): nothing of this one was written, and the
    /// send is answered as a retry of that one.
    Retry(Retry),
}

/// What a failed start has done so far, undone in reverse order by [`Engine::undo`].
#[derive(Default)]
struct Undo {
    /// The cell was begun (this generation) for an execution that did not start.
    begun: Option<(Arc<TaskCell>, u64)>,
    /// A new task's cell is in the engine's map.
    new_cell: Option<TaskId>,
    /// The message's claim, taken.
    claim: Option<String>,
    /// A webhook registration made for the message: (task, config id).
    webhook: Option<(TaskId, String)>,
}

impl Engine {
    /// Starts a new task on `incoming.message`: claims the message (answering a retry with
    /// its first send's claim instead), registers the webhook it asked for (delivering every
    /// event of the task, its creation included), takes the task's execution lease, and
    /// creates the agent's execution for the caller to drive. A step that fails undoes the
    /// ones before it.
    ///
    /// `incoming` stays boxed, its fields taken as they are used (taken apart at once, all would
    /// stay in the future); a new task ignores `ifGenerationMatch` (spec §3.2.2).
    pub(crate) async fn start(
        self: &Arc<Self>,
        mut incoming: Box<Incoming>,
    ) -> Result<Started, Error> {
        let task_id = TaskId::random();
        let key = (self.claims.is_some()).then(|| claim_key(&incoming.scope, &incoming.message));
        let message = &mut incoming.message;
        let context_id = message.context_id.clone().unwrap_or_else(ContextId::random);
        message.task_id = Some(task_id.clone());
        message.context_id = Some(context_id.clone());
        crate::telemetry::record_task(&task_id, &context_id);
        // The cell exists before the claim, so a duplicate always finds the task live.
        let initial = incoming.message.clone();
        let cell = self.cell_for_new(task_id, context_id, incoming.scope, initial, key.clone());
        let mut undo = Undo {
            new_cell: Some(cell.id.clone()),
            ..Undo::default()
        };
        if let Some(key) = key {
            let claimed = if self.joint {
                Ok(self.claim_deferred(&key, &cell.id))
            } else {
                self.claim(&key, &cell.id).await
            };
            match claimed {
                Ok(None) => undo.claim = Some(key),
                Ok(Some(claim)) => {
                    let retry = Ok(Started::Retry(Retry { claim, key }));
                    return self.undo(undo, retry).await;
                }
                Err(e) => return self.undo(undo, Err(e)).await,
            }
        }
        let mut webhook = None;
        if let Some(asked) = incoming.push.take() {
            let form = (incoming.v03, incoming.generations);
            match Box::pin(self.register_webhook(&cell.id, asked.clone(), form, 0)).await {
                Ok(config) => {
                    undo.webhook = Some((cell.id.clone(), config_id(&config)));
                    webhook = Some(Handoff::new(asked, config_id(&config), form));
                }
                Err(e) => return self.undo(undo, Err(e)).await,
            }
        }
        let generation = self.begin(&cell);
        undo.begun = Some((cell.clone(), generation));
        // Only with shared leases is there anything to wait for (boxed: every send's future
        // stays small). With `joint` writes, the lease is taken with the task's first write:
        // until then no other replica can know of the task.
        if self.replication.is_some()
            && !self.joint
            && let Err(e) = Box::pin(self.lease(&cell.id)).await
        {
            return self.undo(undo, Err(e)).await;
        }
        let (_, rx) = cell.subscribe();
        let Incoming {
            message,
            service_params,
            extensions,
            ..
        } = *incoming;
        let rcx = request_context(&cell, message, None, service_params, extensions);
        let execution = self.execution(cell.clone(), rcx, generation);
        Ok(Started::Run(Run {
            cell,
            rx,
            first: None,
            execution: Some(execution),
            webhook,
        }))
    }

    /// Continues the interrupted task `stored` with `incoming.message` (its context already
    /// checked by the caller): claims the message (answering a retry with its first send's
    /// claim), registers the webhook it asked for (delivering from the continuation on), takes
    /// over the task's execution lease, moves the task to WORKING with the message, and creates
    /// the agent's execution. A step that fails undoes the ones before it.
    ///
    /// `None` when the task has ended and the message is no retry of the one that continued it
    /// before it ended: the caller refuses it.
    pub(crate) async fn continue_task(
        self: &Arc<Self>,
        stored: StoredTask,
        incoming: Box<Incoming>,
    ) -> Result<Option<Started>, Error> {
        let Incoming {
            scope,
            service_params,
            extensions,
            mut message,
            push,
            v03,
            generations,
            if_generation_match,
        } = *incoming;
        let task_id = stored.task.id.clone();
        let key = self.claims.is_some().then(|| claim_key(&scope, &message));
        if stored.task.status.state.is_terminal() {
            // A retry of the message that continued the task before it finished gets the task,
            // as the first send did.
            if let Some(key) = key {
                if let Some(claim) = self.claim(&key, &task_id).await? {
                    return Ok(Some(Started::Retry(Retry { claim, key })));
                }
                self.release_claim(&key).await?;
            }
            // An ended task is never continued; a wrong `ifGenerationMatch` says so first.
            if let Some(required) = if_generation_match
                && i64::try_from(stored.version) != Ok(required)
            {
                return Err(super::cell::generation_mismatch(
                    &task_id,
                    required,
                    stored.version,
                ));
            }
            return Ok(None);
        }
        message.context_id = Some(stored.task.context_id.clone());
        let mut undo = Undo::default();
        if let Some(key) = key {
            if let Some(claim) = self.claim(&key, &task_id).await? {
                return Ok(Some(Started::Retry(Retry { claim, key })));
            }
            undo.claim = Some(key);
        }
        if let Some(config) = push {
            match self
                .register_webhook(&task_id, config, (v03, generations), stored.version)
                .await
            {
                Ok(config) => undo.webhook = Some((task_id.clone(), config_id(&config))),
                Err(e) => return self.undo(undo, Err(e)).await,
            }
        }
        let cell = self.cell_for(stored);
        // The run starts before the task moves to WORKING: a wrap-up of the run that asked for
        // input then leaves the task alone, and no replica takes it for an orphan.
        let generation = self.begin(&cell);
        undo.begun = Some((cell.clone(), generation));
        // Taken over before the continuation is stored: a task WORKING without a lease would
        // be resumed as an orphan by another replica.
        let taken = match self.take_over_lease(&task_id).await {
            Ok(taken) => taken,
            Err(e) => return self.undo(undo, Err(e)).await,
        };
        let applied = match cell
            .apply(
                self,
                Box::new(Change::Continue(message.clone(), if_generation_match)),
                true,
            )
            .await
        {
            Ok(applied) => applied,
            Err(e) => {
                // Refused (the task was not waiting for a message, or another continuation
                // won): whoever held the lease goes on holding it. After a store failure the
                // continuation may have been stored, so the lease is kept, as a WORKING task
                // needs one.
                if let Some(taken) = taken
                    && !e.is(ErrorKind::Internal)
                {
                    self.give_back_lease(&task_id, taken).await;
                }
                return self.undo(undo, Err(e)).await;
            }
        };
        let (Some(stored), Some(rx)) = (applied.stored, applied.rx) else {
            // Unreachable: a change applied to a stored task always leaves one.
            return Err(Error::new(
                ErrorKind::Internal,
                "continuation lost its task",
            ));
        };
        let task = Some(Task::clone(&stored.task));
        let rcx = request_context(&cell, message, task, service_params, extensions);
        let execution = self.execution(cell.clone(), rcx, generation);
        Ok(Some(Started::Run(Run {
            cell,
            rx,
            first: Some(stored),
            execution: Some(execution),
            webhook: None,
        })))
    }

    /// Records the claim of a message on `task` under `key`, unless the key is taken: then
    /// returns the claim already there.
    async fn claim(&self, key: &str, task: &TaskId) -> Result<Option<MessageClaim>, Error> {
        let Some(claims) = &self.claims else {
            return Ok(None);
        };
        let claim = MessageClaim {
            task_id: task.clone(),
            reply: None,
            received_ms: a2a_core::Timestamp::now().unix_millis(),
        };
        Ok(claims.claim_message(key, claim).await?)
    }

    /// With `joint` writes: takes the claim of a new task's message in this process, to be
    /// written with the task's first write ([`Outbox`](super::cell::Outbox)), which checks
    /// it against the claims in the store; unless a send of this process holds it: then
    /// returns that send's claim.
    fn claim_deferred(&self, key: &str, task: &TaskId) -> Option<MessageClaim> {
        use std::collections::hash_map::Entry;
        match self.pending_claims().entry(key.to_owned()) {
            Entry::Occupied(first) => Some(MessageClaim {
                task_id: first.get().clone(),
                reply: None,
                received_ms: a2a_core::Timestamp::now().unix_millis(),
            }),
            Entry::Vacant(free) => {
                free.insert(task.clone());
                None
            }
        }
    }

    /// The claim `task` took with [`Engine::claim_deferred`] is in the store now (written
    /// with the task, or with the agent's message reply), or lost to another send's, or the
    /// task's execution ended without writing it: this process no longer answers for it.
    pub(super) fn claim_written(&self, key: &str, task: &TaskId) {
        let mut pending = self.pending_claims();
        if pending.get(key) == Some(task) {
            pending.remove(key);
        }
    }

    /// Removes the claim under `key`: the message did not take effect, and a retry of it is
    /// processed afresh. A claim not written yet (`joint`) only leaves this process.
    pub(super) async fn release_claim(&self, key: &str) -> Result<(), Error> {
        if self.pending_claims().remove(key).is_some() {
            return Ok(());
        }
        if let Some(claims) = &self.claims {
            claims.release_claim(key).await?;
        }
        Ok(())
    }

    /// Undoes what a failed start did, latest first, then answers `then` (the start's error,
    /// or the retry it found). Each step is tried whatever the others do; a step that fails is
    /// logged (the claim expires with the de-duplication window, the webhook registration
    /// names a task that never ran).
    ///
    /// Boxed, behind a `dyn`, with the answer inside: it runs only when a start does not, and
    /// inline its future, its code and the answer waiting for it would be part of every
    /// start's.
    fn undo<'a, T: Send + 'a>(
        &'a self,
        undo: Undo,
        then: T,
    ) -> Pin<Box<dyn Future<Output = T> + Send + 'a>> {
        Box::pin(async move {
            if let Some((cell, generation)) = &undo.begun {
                self.abandon(cell, *generation);
            }
            if let Some(id) = &undo.new_cell {
                self.forget(id);
            }
            if let Some((task, id)) = &undo.webhook
                && let Err(e) = self.store.delete_push_config(task, id).await
            {
                let why = "could not remove the webhook of a failed send";
                tracing::warn!(task = %task, error = %e, "{why}");
            }
            if let Some(key) = &undo.claim
                && let Err(e) = self.release_claim(key).await
            {
                tracing::warn!(error = %e, "could not release the claim of a failed send");
            }
            then
        })
    }
}

impl Run {
    /// A run a retry joined: it waits on the first send's execution without driving it.
    pub(super) fn joined(cell: Arc<TaskCell>) -> Self {
        let (first, rx) = cell.subscribe();
        Self {
            cell,
            rx,
            first,
            execution: None,
            webhook: None,
        }
    }

    /// Waits until the task ends or pauses (with `immediately`, until it exists), driving the
    /// agent's execution meanwhile, and returns what the send answers. With `immediately`, the
    /// execution goes on in the background at once, however long the agent then works without
    /// yielding; an unfinished one (a task waiting for input) goes on in the background too.
    pub(crate) async fn settle(mut self, rt: &Engine, immediately: bool) -> Result<Answer, Error> {
        let settled =
            (self.first.as_ref()).is_some_and(|t| immediately || t.task.status.state.ends_stream());
        if immediately && let Some(execution) = self.execution.take() {
            // The answer reveals the task as soon as it exists.
            self.cell.outbox.watch();
            execution.detach();
        }
        if !settled {
            let waiting = wait(&self.cell, &mut self.rx, immediately);
            match &mut self.execution {
                Some(execution) => execution.drive(waiting).await,
                None => waiting.await,
            }
        }
        drop(self.execution);
        match self.cell.outcome().await? {
            Outcome::Lost(claim, key) => {
                let retry = Retry { claim, key };
                Box::pin(rt.hand_over(&self.cell.id, self.webhook, &retry)).await?;
                Ok(Answer::Retry(retry))
            }
            Outcome::Reply(m) => Ok(Answer::Reply(m)),
            Outcome::Task(Some(stored)) => Ok(Answer::Task(stored)),
            Outcome::Task(None) => Err(Error::new(ErrorKind::Internal, "the task was not created")),
        }
    }

    /// The run's events as a stream: a continuation's opens with the task as the continuation
    /// left it. A new task's waits for the agent's first event, so that an agent refusing the
    /// request (an A2A error before any event) is answered with that error rather than a
    /// stream, and opens with that event (published, so durable: the log is read only if the
    /// broadcast falls behind). The rest of the execution runs in the background.
    pub(crate) async fn stream(self, rt: &Arc<Engine>) -> Result<EventStream, Error> {
        let Self {
            cell,
            mut rx,
            first,
            execution,
            webhook,
        } = self;
        let Some(mut execution) = execution else {
            return Err(Error::new(
                ErrorKind::Internal,
                "a joined run has no stream",
            ));
        };
        // A stream reveals each change as it comes.
        cell.outbox.watch();
        if let Some(t) = first {
            execution.detach();
            return Ok(follow::from_snapshot(rt, t, Source::Cell(rx)));
        }
        let first = execution.drive(rx.recv()).await;
        execution.detach();
        match first {
            Ok(Update::Event(e)) if e.seq == 0 => {
                let reply = StreamEvent {
                    seq: 0,
                    event: e.to_response(),
                };
                return Ok(Box::pin(futures::stream::once(async move { reply })));
            }
            Ok(Update::Event(e)) if e.seq == 1 => {
                let first = StreamEvent {
                    seq: 1,
                    event: e.to_response(),
                };
                // A task created finished or interrupted (input required): that one event is
                // the whole stream, as for any live event.
                if e.ends_stream() {
                    return Ok(Box::pin(futures::stream::once(async move { first })));
                }
                let source = Source::Cell(rx);
                return Ok(follow::follow(rt, &cell.id, Some(first), 1, source));
            }
            Ok(Update::Done) | Err(RecvError::Closed) => {
                if let Some(refusal) = cell.refusal().await {
                    return Err(refusal);
                }
                if let Ok(Outcome::Lost(claim, key)) = cell.outcome().await {
                    let retry = Retry { claim, key };
                    Box::pin(rt.hand_over(&cell.id, webhook, &retry)).await?;
                    return Ok(rt.replay_retry(retry));
                }
            }
            Ok(Update::Event(_)) | Err(RecvError::Lagged(_)) => {}
        }
        Ok(follow::follow(rt, &cell.id, None, 0, Source::Cell(rx)))
    }
}

/// The id of a registered webhook config (always set once registered).
fn config_id(config: &TaskPushNotificationConfig) -> String {
    config.id.clone().unwrap_or_default()
}

/// The [`RequestContext`] of an execution on `cell`.
fn request_context(
    cell: &TaskCell,
    message: Message,
    stored_task: Option<Task>,
    service_params: ServiceParams,
    extensions: Vec<String>,
) -> RequestContext {
    RequestContext {
        task_id: cell.id.clone(),
        context_id: cell.context_id.clone(),
        message,
        stored_task,
        service_params,
        extensions,
        scope: cell.scope.clone(),
        cancel: cell.cancel.clone(),
    }
}

/// Waits until the cell's task ends or pauses (or, with `immediately`, until it exists).
async fn wait(cell: &TaskCell, rx: &mut broadcast::Receiver<Update>, immediately: bool) {
    loop {
        match rx.recv().await {
            Ok(Update::Event(e)) if immediately || e.ends_stream() => return,
            Ok(Update::Event(_)) => {}
            Ok(Update::Done) | Err(RecvError::Closed) => return,
            Err(RecvError::Lagged(_)) => {
                // Events were missed: the task exists (all `immediately` waits for); otherwise
                // its current state says whether it ended meanwhile.
                if immediately || cell.current_state().is_some_and(|s| s.ends_stream()) {
                    return;
                }
            }
        }
    }
}
