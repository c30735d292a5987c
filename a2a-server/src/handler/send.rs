//! `SendMessage` and `SendStreamingMessage`: the protocol's checks of a message, then the
//! engine starts or continues its task ([`Engine::start`](crate::engine::Engine),
//! `continue_task`), or recognizes a retried message and answers it as the first time.

use super::{CallContext, EventStream, RequestHandler, SendReply, TaskReply};
use crate::engine::{Answer, Incoming, Started};
use a2a_core::{Error, ErrorKind, SendMessageRequest, TaskPushNotificationConfig, Validate};
use std::future::Future;

/// A send request once checked: what the engine gets of it, and a copy of its webhook (if it
/// has one) for a retry, which registers it too.
type CheckedSend = (Box<Incoming>, Option<Box<TaskPushNotificationConfig>>);

impl RequestHandler {
    /// Checks the request (validated by the caller; media types, extensions, the webhook's
    /// URL), then has the engine start or continue its task.
    ///
    /// The request comes boxed, and goes on to the engine boxed (as [`Incoming`]): a future
    /// keeps each argument it was called with for its whole life, beside the locals it is moved
    /// into, so every level that took the request by value would copy its few hundred bytes
    /// into every send's future again.
    async fn start(
        &self,
        cx: &CallContext,
        req: Box<SendMessageRequest>,
    ) -> Result<Started, Error> {
        self.check_media_types(&req.message)?;
        self.ready().await?;
        let (incoming, retried_push) = self.incoming(cx, *req)?;
        let started = match incoming.message.task_id.clone() {
            // Rare, and its future is large: boxed, so that every new task's is small.
            Some(task_id) => Box::pin(self.continue_task(cx, task_id, incoming)).await?,
            None => {
                if let Some(context) = &incoming.message.context_id {
                    self.check_context(cx, context).await?;
                }
                self.rt.start(incoming).await?
            }
        };
        // A first send answered with a message (no task) has no events to deliver, then or
        // now: nothing is registered.
        if let (Started::Retry(retry), Some(config)) = (&started, retried_push)
            && retry.claim.reply.is_none()
        {
            // Rare: boxed, so that every send's future is small.
            let task_id = &retry.claim.task_id;
            Box::pin(self.register_for_retry(cx, task_id, *config)).await?;
        }
        Ok(started)
    }

    /// What the engine gets of a checked request (the extensions it activates, its webhook's
    /// URL allowed), and a copy of its webhook for a retry, which registers it too.
    fn incoming(&self, cx: &CallContext, req: SendMessageRequest) -> Result<CheckedSend, Error> {
        let extensions = self.check_extensions(cx)?;
        let (push, if_generation_match) = req.configuration.map_or((None, None), |c| {
            (c.task_push_notification_config, c.if_generation_match)
        });
        // A 1.0 request keeps 1.0 behaviour: the field is unknown there.
        let if_generation_match = if_generation_match.filter(|_| cx.generations());
        if let Some(config) = &push {
            self.rt.pusher()?.settings().check_url(&config.url)?;
        }
        let retried_push = push.clone().map(Box::new);
        let incoming = Box::new(Incoming {
            scope: cx.scope.clone(),
            service_params: cx.service_params.clone(),
            extensions,
            message: req.message,
            push,
            v03: cx.v03,
            generations: cx.generations(),
            if_generation_match,
        });
        Ok((incoming, retried_push))
    }

    /// Registers the webhook of a retried message whose first send created the task
    /// `task_id`, once the caller may see that task.
    async fn register_for_retry(
        &self,
        cx: &CallContext,
        task_id: &a2a_core::TaskId,
        config: TaskPushNotificationConfig,
    ) -> Result<(), Error> {
        self.load(cx, task_id).await?;
        let versions = (cx.v03, cx.generations());
        let registered = self.rt.register_retried_webhook(task_id, config, versions);
        Box::pin(registered).await
    }

    /// Unless a `messageId` is required, gives a message without one a fresh id (it is then
    /// never taken for the retry of another).
    fn name_message(&self, req: &mut SendMessageRequest) {
        if !self.message_id_required && req.message.message_id.is_empty() {
            req.message.message_id = a2a_core::MessageId::random();
        }
    }

    /// Unless clients may choose their contexts, `context` must be the context of one of the
    /// caller's tasks.
    async fn check_context(
        &self,
        cx: &CallContext,
        context: &a2a_core::ContextId,
    ) -> Result<(), Error> {
        if self.client_context_ids {
            return Ok(());
        }
        let query = crate::store::ListQuery {
            scope: cx.scope.clone(),
            context_id: Some(context.clone()),
            page_size: 1,
            ..Default::default()
        };
        if self.rt.store.list(&query).await?.tasks.is_empty() {
            return Err(Error::invalid_params(
                "message.contextId",
                format!(
                    "{context} is not a context of this agent: omit contextId to start a new \
                     conversation, or use one this agent returned"
                ),
            ));
        }
        Ok(())
    }

    /// [`RequestHandler::start`] for a message that continues the task it names: the task
    /// must be visible to the caller, in the message's context, and not ended (unless the
    /// message is a retry of the one that continued it).
    async fn continue_task(
        &self,
        cx: &CallContext,
        task_id: a2a_core::TaskId,
        incoming: Box<Incoming>,
    ) -> Result<Started, Error> {
        let stored = self.load(cx, &task_id).await?;
        let state = stored.task.status.state.clone();
        if !state.is_terminal()
            && let Some(ctx) = &incoming.message.context_id
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
        match self.rt.continue_task(stored, incoming).await? {
            Some(started) => Ok(started),
            None => Err(Error::new(
                ErrorKind::UnsupportedOperation,
                format!(
                    "Task {task_id} is {state} and cannot be continued; start a new task (it may list this one in referenceTaskIds)"
                ),
            )
            .with_metadata("taskId", task_id.as_str())),
        }
    }

    /// `SendMessage`: by default waits until the task is terminal or interrupted;
    /// with `returnImmediately`, returns as soon as the task exists. A retried message (same
    /// `messageId`, same task or context) gets the task it created or continued the first
    /// time; the agent does not run again.
    pub fn send_message<'a>(
        &'a self,
        cx: &'a CallContext,
        req: SendMessageRequest,
    ) -> impl Future<Output = Result<SendReply, Error>> + Send + 'a {
        // Boxed before the future is made: an `async fn` would keep the request in its future
        // for its whole life, beside the box.
        self.send_boxed(cx, Box::new(req))
    }

    /// [`RequestHandler::send_message`] of the boxed request.
    async fn send_boxed(
        &self,
        cx: &CallContext,
        mut req: Box<SendMessageRequest>,
    ) -> Result<SendReply, Error> {
        self.name_message(&mut req);
        req.validate()?;
        let history_length = req.history_length();
        let immediately = req.return_immediately();
        let run = match self.start(cx, req).await? {
            Started::Run(run) => run,
            Started::Retry(retry) => {
                if let Some(m) = retry.claim.reply {
                    return Ok(SendReply::Message(m));
                }
                match self.rt.join(&retry, &cx.scope) {
                    Some(run) => run,
                    // The first send ended or runs on another replica. Rare, and its future
                    // is large: boxed, so that every send's is small.
                    None => {
                        let settled = self.settle_retry(cx, retry, immediately, history_length);
                        return Box::pin(settled).await;
                    }
                }
            }
        };
        Ok(match run.settle(&self.rt, immediately).await? {
            Answer::Reply(m) => SendReply::Message(m),
            Answer::Task(stored) => self.task_reply(cx, stored, history_length),
            Answer::Retry(retry) => {
                let settled = self.settle_retry(cx, retry, immediately, history_length);
                Box::pin(settled).await?
            }
        })
    }

    /// The answer to a retried message whose first send ended or runs on another replica:
    /// its message reply, or its task once it ends or pauses (exists, with `immediately`).
    async fn settle_retry(
        &self,
        cx: &CallContext,
        retry: crate::engine::Retry,
        immediately: bool,
        history_length: Option<i32>,
    ) -> Result<SendReply, Error> {
        if let Some(m) = retry.claim.reply {
            return Ok(SendReply::Message(m));
        }
        let id = retry.claim.task_id.clone();
        if let Some(m) = self.rt.settle_retry(retry, immediately).await? {
            return Ok(SendReply::Message(m));
        }
        let stored = self.load(cx, &id).await?;
        Ok(self.task_reply(cx, stored, history_length))
    }

    /// A `SendMessage` answer with the task `stored` (with its generation for a 1.1 call).
    fn task_reply(
        &self,
        cx: &CallContext,
        stored: crate::store::StoredTask,
        history_length: Option<i32>,
    ) -> SendReply {
        let version = stored.version;
        let reply = TaskReply::stored(&*self.rt.store, stored, history_length, None);
        SendReply::Task(if cx.generations() {
            reply.with_generation(version)
        } else {
            reply
        })
    }

    /// `SendStreamingMessage`: the task (or a single message) first, then its events. A
    /// retried message replays the stream of the task it created.
    pub fn send_streaming_message<'a>(
        &'a self,
        cx: &'a CallContext,
        req: SendMessageRequest,
    ) -> impl Future<Output = Result<EventStream, Error>> + Send + 'a {
        // Boxed before the future is made, as for `send_message`.
        self.stream_boxed(cx, Box::new(req))
    }

    /// [`RequestHandler::send_streaming_message`] of the boxed request.
    async fn stream_boxed(
        &self,
        cx: &CallContext,
        mut req: Box<SendMessageRequest>,
    ) -> Result<EventStream, Error> {
        self.name_message(&mut req);
        req.validate()?;
        self.check_streaming()?;
        let events = match self.start(cx, req).await? {
            Started::Run(run) => run.stream(&self.rt).await?,
            Started::Retry(retry) => self.rt.replay_retry(retry),
        };
        Ok(super::for_call(cx, events))
    }
}
