//! `SendMessage` and `SendStreamingMessage`: starting or continuing a task, and answering a
//! retried message as the first time.

use super::{CallContext, EventStream, RequestHandler, SendReply, StreamEvent, TaskReply, follow};
use crate::engine::{Change, Execution, Outcome, TaskCell, Update};
use crate::store::{MessageClaim, Scope, Store, StoredTask};
use a2a_core::{
    ContextId, Error, ErrorKind, Message, SendMessageRequest, StreamResponse, Task, TaskId,
    TaskPushNotificationConfig, Validate,
};
use futures::StreamExt as _;
use std::sync::Arc;
use tokio::sync::broadcast::{self, error::RecvError};

/// A task execution just started (or continued), with a subscription to its events; or the
/// claim of an earlier identical message (a retried send).
#[allow(clippy::large_enum_variant)] // one per call, moved once
enum Started {
    Fresh {
        cell: Arc<TaskCell>,
        rx: broadcast::Receiver<Update>,
        /// The snapshot to open a stream with (continuations); a new task's stream opens with
        /// its creation event instead.
        first: Option<StoredTask>,
        /// The agent's execution, for the caller to drive while it waits (see [`Execution`]).
        execution: Execution,
    },
    /// A retry: the claim the first send left, and its key.
    Duplicate(MessageClaim, String),
}

/// The deduplication key of a message: the caller's scope, the task (or context) it is sent
/// to, and its `messageId`.
fn claim_key(scope: &Scope, message: &Message) -> String {
    let (kind, target) = match (&message.task_id, &message.context_id) {
        (Some(t), _) => ("t:", t.as_str()),
        (None, Some(c)) => ("c:", c.as_str()),
        (None, None) => ("", ""),
    };
    // The content is part of the key: a retry sends the same message, while two callers that
    // happen to reuse a message id (anonymous callers share a scope) get their own tasks.
    // The JSON of the content is hashed as it is written, without a buffer.
    let mut content = Fnv1a::default();
    let _ = serde_json::to_writer(&mut content, &(&message.parts, &message.metadata));
    // `tenant␟owner␟target␟messageId␟hash`, put together without `format!` (every send makes
    // one): the hash in 16 lowercase hex digits.
    let fields = [
        scope.tenant.as_deref().unwrap_or_default(),
        "\u{1f}",
        scope.owner.as_deref().unwrap_or_default(),
        "\u{1f}",
        kind,
        target,
        "\u{1f}",
        message.message_id.as_str(),
        "\u{1f}",
    ];
    let mut key = String::with_capacity(fields.iter().map(|f| f.len()).sum::<usize>() + 16);
    fields.iter().for_each(|f| key.push_str(f));
    for shift in (0..16).rev() {
        let digit = (content.0 >> (shift * 4)) & 0xf;
        key.push(char::from(
            b"0123456789abcdef"[usize::try_from(digit).unwrap_or(0)],
        ));
    }
    key
}

/// FNV-1a, 64 bits, over the bytes written to it: a stable (across builds and restarts)
/// fingerprint for claim keys.
struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl std::io::Write for Fnv1a {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
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

impl RequestHandler {
    async fn start(&self, cx: &CallContext, req: SendMessageRequest) -> Result<Started, Error> {
        req.validate()?;
        self.check_media_types(&req.message)?;
        self.ready().await?;
        let extensions = self.check_extensions(cx)?;
        let push = req
            .configuration
            .and_then(|c| c.task_push_notification_config);
        if let Some(config) = &push {
            self.pusher()?.settings().check_url(&config.url)?;
        }
        let message = req.message;
        let started = match message.task_id.clone() {
            // Rare, and its future is large: boxed, so that every new task's is small.
            Some(task_id) => {
                Box::pin(self.continue_task(cx, task_id, message, push.clone(), extensions)).await?
            }
            None => {
                self.start_task(cx, message, push.clone(), extensions)
                    .await?
            }
        };
        if let (Started::Duplicate(claim, _), Some(config)) = (&started, push) {
            Box::pin(self.register_retried_push(cx, claim, config)).await?;
        }
        Ok(started)
    }

    /// [`RequestHandler::start`] for a message that continues the task it names.
    async fn continue_task(
        &self,
        cx: &CallContext,
        task_id: TaskId,
        mut message: Message,
        push: Option<TaskPushNotificationConfig>,
        extensions: Vec<String>,
    ) -> Result<Started, Error> {
        let stored = self.load(cx, &task_id).await?;
        let state = &stored.task.status.state;
        let key = claim_key(&cx.scope, &message);
        let claim = MessageClaim {
            task_id: task_id.clone(),
            reply: None,
            received_ms: a2a_core::Timestamp::now().unix_millis(),
        };
        if state.is_terminal() {
            // A retry of the message that continued the task before it finished gets the task,
            // as the first send did; any other message is refused.
            if let Some(existing) = self.rt.store.claim_message(&key, claim).await? {
                return Ok(Started::Duplicate(existing, key));
            }
            self.rt.store.release_claim(&key).await?;
            return Err(Error::new(
                ErrorKind::UnsupportedOperation,
                format!(
                    "Task {task_id} is {state} and cannot be continued; start a new task (it may list this one in referenceTaskIds)"
                ),
            )
            .with_metadata("taskId", task_id.as_str()));
        }
        if let Some(ctx) = &message.context_id
            && *ctx != stored.task.context_id
        {
            return Err(Error::invalid_params(
                "message.contextId",
                format!(
                    "{ctx} does not match the context {} of task {task_id}",
                    stored.task.context_id
                ),
            ));
        }
        message.context_id = Some(stored.task.context_id.clone());
        if let Some(existing) = self.rt.store.claim_message(&key, claim).await? {
            return Ok(Started::Duplicate(existing, key));
        }
        if let Some(config) = push {
            // Deliver from the continuation on.
            self.register_push(cx, &task_id, config, stored.version)
                .await?;
        }
        let cell = self.rt.cell_for(stored);
        // The run starts before the task moves to WORKING: a wrap-up of the run that asked for
        // input then leaves the task alone, and no replica takes it for an orphan.
        let generation = self.rt.begin(&cell);
        let applied = match self.rt.lease(&task_id, true).await {
            Ok(_) => {
                cell.apply(&self.rt, Change::Continue(message.clone()), true)
                    .await
            }
            Err(e) => Err(e),
        };
        let applied = match applied {
            Ok(applied) => applied,
            Err(e) => {
                self.rt.abandon(&cell);
                // The message did not take effect: a retry is not a duplicate.
                self.rt.store.release_claim(&key).await?;
                return Err(e);
            }
        };
        let (Some(stored), Some(rx)) = (applied.stored, applied.rx) else {
            return Err(Error::new(
                ErrorKind::Internal,
                "continuation lost its task",
            ));
        };
        let task = Some(Task::clone(&stored.task));
        let rcx = Self::request_context(cx, &cell, message, task, extensions);
        let execution = self.rt.execution(cell.clone(), rcx, generation);
        Ok(Started::Fresh {
            cell,
            rx,
            first: Some(stored),
            execution,
        })
    }

    /// [`RequestHandler::start`] for a message that starts a new task.
    async fn start_task(
        &self,
        cx: &CallContext,
        mut message: Message,
        push: Option<TaskPushNotificationConfig>,
        extensions: Vec<String>,
    ) -> Result<Started, Error> {
        let task_id = TaskId::random();
        let key = claim_key(&cx.scope, &message);
        let context_id = message.context_id.clone().unwrap_or_else(ContextId::random);
        message.task_id = Some(task_id.clone());
        message.context_id = Some(context_id.clone());
        crate::telemetry::record_task(&task_id, &context_id);
        // The cell exists before the claim, so a duplicate always finds the task live.
        let cell = self.rt.cell_for_new(
            task_id.clone(),
            context_id,
            cx.scope.clone(),
            message.clone(),
            Some(key.clone()),
        );
        let claim = MessageClaim {
            task_id: task_id.clone(),
            reply: None,
            received_ms: a2a_core::Timestamp::now().unix_millis(),
        };
        match self.rt.store.claim_message(&key, claim).await {
            Ok(None) => {
                if let Some(config) = push {
                    // Deliver every event of the new task, its creation included.
                    let registered = Box::pin(self.register_push(cx, &task_id, config, 0));
                    if let Err(e) = registered.await {
                        self.rt.forget(&task_id);
                        self.rt.store.release_claim(&key).await?;
                        return Err(e);
                    }
                }
            }
            Ok(Some(existing)) => {
                self.rt.forget(&task_id);
                return Ok(Started::Duplicate(existing, key));
            }
            Err(e) => {
                self.rt.forget(&task_id);
                return Err(e.into());
            }
        }
        let generation = self.rt.begin(&cell);
        // Only with shared leases is there anything to wait for (boxed: every send's future
        // stays small).
        let leased = match self.rt.replication {
            Some(_) => Box::pin(self.rt.lease(&task_id, false)).await,
            None => Ok(true),
        };
        if let Err(e) = leased {
            self.rt.abandon(&cell);
            self.rt.forget(&task_id);
            self.rt.store.release_claim(&key).await?;
            return Err(e);
        }
        let (_, rx) = cell.subscribe();
        let rcx = Self::request_context(cx, &cell, message, None, extensions);
        let execution = self.rt.execution(cell.clone(), rcx, generation);
        Ok(Started::Fresh {
            cell,
            rx,
            first: None,
            execution,
        })
    }

    /// `SendMessage`: by default waits until the task is terminal or interrupted;
    /// with `returnImmediately`, returns as soon as the task exists. A retried message (same
    /// `messageId`, same task or context) gets the task it created or continued the first
    /// time; the agent does not run again.
    pub async fn send_message(
        &self,
        cx: &CallContext,
        req: SendMessageRequest,
    ) -> Result<SendReply, Error> {
        let history_length = req.history_length();
        let immediately = req.return_immediately();
        let (cell, mut rx, first, mut execution) = match self.start(cx, req).await? {
            Started::Fresh {
                cell,
                rx,
                first,
                execution,
            } => (cell, rx, first, Some(execution)),
            Started::Duplicate(claim, key) => {
                if let Some(m) = claim.reply {
                    return Ok(SendReply::Message(m));
                }
                let Some(cell) = self
                    .rt
                    .live_cell(&claim.task_id)
                    .filter(|c| c.scope == cx.scope)
                else {
                    // Rare, and its future is large: boxed, so that every send's is small.
                    let settled = self.settled(cx, &key, claim, immediately, history_length);
                    return Box::pin(settled).await;
                };
                let (snapshot, rx) = cell.subscribe();
                (cell, rx, snapshot, None)
            }
        };
        let settled = first.is_some_and(|t| immediately || t.task.status.state.ends_stream());
        // A blocking send drives the execution while it waits; `returnImmediately` answers
        // once the task exists, however long the agent then works without yielding.
        if immediately && let Some(execution) = execution.take() {
            execution.detach();
        }
        if !settled {
            let waiting = wait(&cell, &mut rx, immediately);
            match &mut execution {
                Some(execution) => execution.drive(waiting).await,
                None => waiting.await,
            }
        }
        // Unfinished (the task waits for input), it goes on in the background.
        drop(execution);
        Self::answer(&cell, history_length, &*self.rt.store).await
    }

    /// The answer to a retried send whose first send ended or runs on another replica: the
    /// task once it settles (once it exists, with `immediately`), following its log. No task
    /// comes if the first send was answered with a message, or refused: the claim under `key`
    /// is read again whenever nothing happened for a while.
    async fn settled(
        &self,
        cx: &CallContext,
        key: &str,
        claim: MessageClaim,
        immediately: bool,
        history_length: Option<i32>,
    ) -> Result<SendReply, Error> {
        const RECHECK: std::time::Duration = std::time::Duration::from_secs(2);
        let id = claim.task_id.clone();
        let source = follow::Source::Bus(self.rt.bus.subscribe(&id));
        let mut stream = follow::follow(&self.rt, &id, None, 0, source);
        loop {
            match tokio::time::timeout(RECHECK, stream.next()).await {
                Ok(Some(_)) if immediately => break,
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(_) => match self.rt.store.claim_message(key, claim.clone()).await? {
                    Some(MessageClaim { reply: Some(m), .. }) => return Ok(SendReply::Message(m)),
                    Some(_) => {}
                    None => {
                        // The claim was gone (the agent refused the first send), and this
                        // look took it: give it back, so that the next try runs afresh.
                        self.rt.store.release_claim(key).await?;
                        return Err(Error::new(
                            ErrorKind::UnsupportedOperation,
                            "The first send of this message was refused; send it again to retry",
                        ));
                    }
                },
            }
        }
        let stored = self.load(cx, &id).await?;
        let store = &*self.rt.store;
        Ok(SendReply::Task(TaskReply::stored(
            store,
            stored,
            history_length,
            None,
        )))
    }

    /// What a `SendMessage` that ran on `cell` answers, once it waited.
    async fn answer(
        cell: &TaskCell,
        history_length: Option<i32>,
        store: &dyn Store,
    ) -> Result<SendReply, Error> {
        let stored = match cell.outcome().await? {
            Outcome::Reply(m) => return Ok(SendReply::Message(m)),
            Outcome::Task(stored) => {
                stored.ok_or_else(|| Error::new(ErrorKind::Internal, "the task was not created"))?
            }
        };
        Ok(SendReply::Task(TaskReply::stored(
            store,
            stored,
            history_length,
            None,
        )))
    }

    /// `SendStreamingMessage`: the task (or a single message) first, then its events. A
    /// retried message replays the stream of the task it created.
    pub async fn send_streaming_message(
        &self,
        cx: &CallContext,
        req: SendMessageRequest,
    ) -> Result<EventStream, Error> {
        self.check_streaming()?;
        match self.start(cx, req).await? {
            Started::Fresh {
                cell,
                mut rx,
                first: None,
                mut execution,
            } => {
                // A new task: the response waits for the agent's first event, so that an
                // agent refusing the request (an A2A error before any event) is answered with
                // that error rather than a stream. The stream starts with that event (published,
                // so durable): the log is read only if the broadcast falls behind. The rest of
                // the execution runs in the background, if anything is left of it.
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
                        // A task created finished or interrupted (input required): that one
                        // event is the whole stream, as for any live event.
                        if e.ends_stream() {
                            return Ok(Box::pin(futures::stream::once(async move { first })));
                        }
                        let source = follow::Source::Cell(rx);
                        return Ok(follow::follow(&self.rt, &cell.id, Some(first), 1, source));
                    }
                    Ok(Update::Done) | Err(RecvError::Closed) => {
                        if let Some(refusal) = cell.refusal().await {
                            return Err(refusal);
                        }
                    }
                    Ok(Update::Event(_)) | Err(RecvError::Lagged(_)) => {}
                }
                Ok(follow::follow(
                    &self.rt,
                    &cell.id,
                    None,
                    0,
                    follow::Source::Cell(rx),
                ))
            }
            Started::Fresh {
                cell: _,
                rx,
                first: Some(t),
                execution,
            } => {
                execution.detach();
                Ok(follow::from_snapshot(&self.rt, t, follow::Source::Cell(rx)))
            }
            Started::Duplicate(claim, _) => match claim.reply {
                Some(m) => Ok(Box::pin(futures::stream::once(async move {
                    StreamEvent {
                        seq: 0,
                        event: StreamResponse::Message(m),
                    }
                }))),
                None => {
                    let notices = self.rt.bus.subscribe(&claim.task_id);
                    let source = match self.rt.running_cell(&claim.task_id) {
                        Some(cell) => follow::Source::Cell(cell.subscribe().1),
                        None => follow::Source::Bus(notices),
                    };
                    Ok(follow::follow(&self.rt, &claim.task_id, None, 0, source))
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Claim keys outlive a process (the sled store keeps them for a day): the key of a
    /// message is exactly the one earlier versions wrote, so that a retry across an upgrade is
    /// still recognized.
    #[test]
    fn a_claim_key_is_scope_target_message_id_and_content_hash() {
        let scoped = Scope {
            tenant: Some("acme".into()),
            owner: Some("ann".into()),
        };
        let mut to_task = Message::user_text("hi");
        to_task.task_id = Some(TaskId::from("t1"));
        to_task.context_id = Some(ContextId::from("c1"));
        let mut to_context = Message::user_text("hi");
        to_context.context_id = Some(ContextId::from("c1"));
        let fresh = Message::user_text("hi");
        for (scope, message, target) in [
            (&scoped, &to_task, "t:t1"),
            (&Scope::default(), &to_context, "c:c1"),
            (&Scope::default(), &fresh, ""),
        ] {
            let mut hash = Fnv1a::default();
            serde_json::to_writer(&mut hash, &(&message.parts, &message.metadata)).unwrap();
            let expected = format!(
                "{}\u{1f}{}\u{1f}{target}\u{1f}{}\u{1f}{:016x}",
                scope.tenant.as_deref().unwrap_or_default(),
                scope.owner.as_deref().unwrap_or_default(),
                message.message_id,
                hash.0
            );
            assert_eq!(claim_key(scope, message), expected);
        }
        // The same message sent again has the same key; other content, another.
        assert_eq!(claim_key(&scoped, &to_task), claim_key(&scoped, &to_task));
        let mut other = to_task.clone();
        other.parts = vec![a2a_core::Part::text("ho")];
        assert_ne!(claim_key(&scoped, &other), claim_key(&scoped, &to_task));
    }
}
