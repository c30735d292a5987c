//! [`RequestHandler`]: one method per A2A operation, independent of the transport. The HTTP
//! bindings only decode requests, call these, and encode results.

use crate::agent::{RequestContext, ServiceParams};
mod follow;

use crate::auth::Principal;
use crate::runtime::{Change, Runtime, TaskCell, Update};
use crate::store::{ListQuery, MessageClaim, PushRecord, Scope, StoredTask};
use a2a_core::{
    AgentCard, CancelTaskRequest, ContextId, DeleteTaskPushNotificationConfigRequest, Empty, Error,
    ErrorKind, GetExtendedAgentCardRequest, GetTaskPushNotificationConfigRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    ListTasksRequest, ListTasksResponse, Message, SendMessageRequest, SendMessageResponse,
    StreamResponse, SubscribeToTaskRequest, Task, TaskId, TaskPushNotificationConfig, Validate,
};
use futures::stream::BoxStream;
use std::sync::Arc;
use tokio::sync::broadcast::{self, error::RecvError};

/// The URI of our resumable-streams extension, advertised in the agent card: every SSE event
/// carries `id: <seq>`, and `SubscribeToTask` with `Last-Event-ID: <seq>` replays exactly the
/// events after it (from the durable log), then continues live.
pub const RESUMABLE_STREAMS_EXTENSION: &str =
    "https://github.com/a2a-rust/a2a/extensions/resumable-streams/v1";

/// Who is calling and with which service parameters.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct CallContext {
    /// The caller's tenant and principal: tasks are visible only within the same scope.
    pub scope: Scope,
    /// `A2A-Version`, `A2A-Extensions`.
    pub service_params: ServiceParams,
    /// Resume a stream after this event sequence number (`Last-Event-ID`).
    pub last_event_id: Option<u64>,
    /// The call came in through the v0.3 protocol (webhooks it registers get v0.3 payloads).
    pub(crate) v03: bool,
}

impl CallContext {
    /// A call in `scope` with `service_params`.
    pub fn new(scope: Scope, service_params: ServiceParams) -> Self {
        Self {
            scope,
            service_params,
            last_event_id: None,
            v03: false,
        }
    }

    /// Sets the sequence number to resume a stream after.
    #[must_use]
    pub fn with_last_event_id(mut self, seq: Option<u64>) -> Self {
        self.last_event_id = seq;
        self
    }

    /// Sets the tenant (from the request's `tenant` field or path).
    #[must_use]
    pub fn with_tenant(mut self, tenant: Option<String>) -> Self {
        if tenant.is_some() {
            self.scope.tenant = tenant;
        }
        self
    }
}

/// One event of a stream, with its sequence number within the task (0 for a message reply).
#[derive(Clone, Debug, PartialEq)]
pub struct StreamEvent {
    /// The task's version after the change this event announces.
    pub seq: u64,
    /// The event.
    pub event: StreamResponse,
}

/// A stream of events; it ends after a terminal or interrupted state, a message reply, or at
/// server shutdown.
pub type EventStream = BoxStream<'static, StreamEvent>;

/// Builds the extended agent card for an authenticated caller (`None`: not configured).
pub type ExtendedCardFn = Arc<dyn Fn(&Principal) -> Option<AgentCard> + Send + Sync>;

/// The transport-independent A2A request handler.
pub struct RequestHandler {
    pub(crate) rt: Arc<Runtime>,
    pub(crate) card: AgentCard,
    pub(crate) extended_card: Option<ExtendedCardFn>,
}

impl std::fmt::Debug for RequestHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestHandler")
            .field("card", &self.card.name)
            .field("extended_card", &self.extended_card.is_some())
            .finish_non_exhaustive()
    }
}

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
    },
    Duplicate(MessageClaim),
}

/// The deduplication key of a message: the caller's scope, the task (or context) it is sent
/// to, and its `messageId`.
fn claim_key(scope: &Scope, message: &Message) -> String {
    let target = message
        .task_id
        .as_ref()
        .map(|t| format!("t:{t}"))
        .or_else(|| message.context_id.as_ref().map(|c| format!("c:{c}")))
        .unwrap_or_default();
    // The content is part of the key: a retry sends the same message, while two callers that
    // happen to reuse a message id (anonymous callers share a scope) get their own tasks.
    let content = serde_json::to_vec(&(&message.parts, &message.metadata)).unwrap_or_default();
    format!(
        "{}\u{1f}{}\u{1f}{target}\u{1f}{}\u{1f}{:016x}",
        scope.tenant.as_deref().unwrap_or_default(),
        scope.owner.as_deref().unwrap_or_default(),
        message.message_id,
        fnv1a(&content)
    )
}

/// FNV-1a, 64 bits: a stable (across builds and restarts) fingerprint for claim keys.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Waits until the cell's task ends or pauses (or, with `immediately`, until it exists).
async fn wait(cell: &TaskCell, rx: &mut broadcast::Receiver<Update>, immediately: bool) {
    loop {
        match rx.recv().await {
            Ok(Update::Event(e)) if immediately || e.event.ends_stream() => return,
            Ok(Update::Event(_)) => {}
            Ok(Update::Done) | Err(RecvError::Closed) => return,
            Err(RecvError::Lagged(_)) => {
                if cell
                    .snapshot()
                    .await
                    .is_some_and(|t| StreamResponse::Task(t.task).ends_stream())
                {
                    return;
                }
            }
        }
    }
}

impl RequestHandler {
    /// The public agent card.
    pub fn agent_card(&self) -> &AgentCard {
        &self.card
    }

    /// Makes everything stored so far durable (call at shutdown).
    pub async fn flush(&self) -> Result<(), crate::store::StoreError> {
        self.rt.store.sync().await
    }

    fn check_extensions(&self, cx: &CallContext) -> Result<Vec<String>, Error> {
        let requested = &cx.service_params.extensions;
        let mut active = Vec::new();
        for ext in &self.card.capabilities.extensions {
            let Some(uri) = &ext.uri else { continue };
            if requested.iter().any(|r| r == uri) {
                active.push(uri.clone());
            } else if ext.required {
                return Err(Error::new(
                    ErrorKind::ExtensionSupportRequired,
                    format!("This agent requires the extension {uri}; list it in A2A-Extensions"),
                )
                .with_metadata("extension", uri.as_str()));
            }
        }
        Ok(active)
    }

    /// The extension URIs this call activates (requested and declared), or ExtensionSupportRequired.
    pub fn activated_extensions(&self, cx: &CallContext) -> Result<Vec<String>, Error> {
        self.check_extensions(cx)
    }

    async fn load(&self, cx: &CallContext, id: &TaskId) -> Result<StoredTask, Error> {
        let live = match self.rt.live_cell(id) {
            Some(cell) => cell.snapshot().await,
            None => None,
        };
        let stored = match live {
            Some(t) => Some(t),
            None => self.rt.store.get(id).await?,
        };
        stored
            .filter(|t| t.scope == cx.scope)
            .ok_or_else(|| Error::task_not_found(id.as_str()))
    }

    fn check_streaming(&self) -> Result<(), Error> {
        if self.card.capabilities.streaming() {
            Ok(())
        } else {
            Err(Error::new(
                ErrorKind::UnsupportedOperation,
                "This agent does not support streaming",
            ))
        }
    }

    async fn start(&self, cx: &CallContext, req: SendMessageRequest) -> Result<Started, Error> {
        req.validate()?;
        let extensions = self.check_extensions(cx)?;
        let push = req
            .configuration
            .and_then(|c| c.task_push_notification_config);
        if let Some(config) = &push {
            self.pusher()?.settings().check_url(&config.url)?;
        }
        let mut message = req.message;
        let context = |task_id: TaskId, context_id: ContextId, message: Message, stored_task| {
            RequestContext {
                task_id,
                context_id,
                message,
                stored_task,
                service_params: cx.service_params.clone(),
                extensions: extensions.clone(),
                scope: cx.scope.clone(),
                cancel: Default::default(),
            }
        };
        match message.task_id.clone() {
            Some(task_id) => {
                let stored = self.load(cx, &task_id).await?;
                let state = &stored.task.status.state;
                if state.is_terminal() {
                    return Err(Error::new(
                        ErrorKind::UnsupportedOperation,
                        format!(
                            "Task {task_id} is {state} and cannot be continued; start a new task (it may list this one in referenceTaskIds)"
                        ),
                    )
                    .with_metadata("taskId", task_id.as_str()));
                }
                if let Some(ctx) = &message.context_id {
                    if *ctx != stored.task.context_id {
                        return Err(Error::invalid_params(
                            "message.contextId",
                            format!(
                                "{ctx} does not match the context {} of task {task_id}",
                                stored.task.context_id
                            ),
                        ));
                    }
                }
                let context_id = stored.task.context_id.clone();
                message.context_id = Some(context_id.clone());
                let claim = MessageClaim {
                    task_id: task_id.clone(),
                    reply: None,
                    received_ms: a2a_core::Timestamp::now().unix_millis(),
                };
                let key = claim_key(&cx.scope, &message);
                if let Some(existing) = self.rt.store.claim_message(&key, claim).await? {
                    return Ok(Started::Duplicate(existing));
                }
                if let Some(config) = push {
                    // Deliver from the continuation on.
                    self.register_push(cx, &task_id, config, stored.version)
                        .await?;
                }
                let cell = self.rt.cell_for(stored);
                let applied = match cell
                    .apply(&self.rt, Change::Continue(message.clone()), true)
                    .await
                {
                    Ok(applied) => applied,
                    Err(e) => {
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
                let mut rcx = context(task_id, context_id, message, Some(stored.task.clone()));
                rcx.cancel = cell.cancel.clone();
                self.rt.spawn_execution(cell.clone(), rcx);
                Ok(Started::Fresh {
                    cell,
                    rx,
                    first: Some(stored),
                })
            }
            None => {
                let task_id = TaskId::random();
                let key = claim_key(&cx.scope, &message);
                let context_id = message.context_id.clone().unwrap_or_else(ContextId::random);
                message.task_id = Some(task_id.clone());
                message.context_id = Some(context_id.clone());
                // The cell exists before the claim, so a duplicate always finds the task live.
                let cell = self.rt.cell_for_new(
                    task_id.clone(),
                    context_id.clone(),
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
                            if let Err(e) = self.register_push(cx, &task_id, config, 0).await {
                                self.rt.forget(&task_id);
                                self.rt.store.release_claim(&key).await?;
                                return Err(e);
                            }
                        }
                    }
                    Ok(Some(existing)) => {
                        self.rt.forget(&task_id);
                        return Ok(Started::Duplicate(existing));
                    }
                    Err(e) => {
                        self.rt.forget(&task_id);
                        return Err(e.into());
                    }
                }
                let (_, rx) = cell.subscribe().await;
                let mut rcx = context(task_id, context_id, message, None);
                rcx.cancel = cell.cancel.clone();
                self.rt.spawn_execution(cell.clone(), rcx);
                Ok(Started::Fresh {
                    cell,
                    rx,
                    first: None,
                })
            }
        }
    }

    /// `SendMessage`: by default waits until the task is terminal or interrupted;
    /// with `returnImmediately`, returns as soon as the task exists. A retried message (same
    /// `messageId`, same task or context) gets the task it created or continued the first
    /// time; the agent does not run again.
    pub async fn send_message(
        &self,
        cx: &CallContext,
        req: SendMessageRequest,
    ) -> Result<SendMessageResponse, Error> {
        let history_length = req.history_length();
        let immediately = req.return_immediately();
        let (cell, mut rx, first) = match self.start(cx, req).await? {
            Started::Fresh { cell, rx, first } => (cell, rx, first),
            Started::Duplicate(claim) => {
                if let Some(m) = claim.reply {
                    return Ok(SendMessageResponse::Message(m));
                }
                let Some(cell) = self
                    .rt
                    .live_cell(&claim.task_id)
                    .filter(|c| c.scope == cx.scope)
                else {
                    let mut task = self.load(cx, &claim.task_id).await?.task;
                    task.truncate_history(history_length);
                    return Ok(SendMessageResponse::Task(task));
                };
                let (snapshot, rx) = cell.subscribe().await;
                (cell, rx, snapshot)
            }
        };
        let settled = first.is_some_and(|t| {
            immediately || t.task.status.state.is_terminal() || t.task.status.state.is_interrupted()
        });
        if !settled {
            wait(&cell, &mut rx, immediately).await;
        }
        if let Some(m) = cell.reply().await {
            return Ok(SendMessageResponse::Message(m));
        }
        let mut task = cell
            .snapshot()
            .await
            .ok_or_else(|| Error::new(ErrorKind::Internal, "the task was not created"))?
            .task;
        task.truncate_history(history_length);
        Ok(SendMessageResponse::Task(task))
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
            Started::Fresh { cell, rx, first } => {
                let first = first.map(|t| StreamEvent {
                    seq: t.version,
                    event: StreamResponse::Task(t.task),
                });
                let cursor = first.as_ref().map_or(0, |f| f.seq);
                Ok(follow::follow(self.rt.clone(), cell, first, cursor, rx))
            }
            Started::Duplicate(claim) => match claim.reply {
                Some(m) => Ok(Box::pin(futures::stream::once(async move {
                    StreamEvent {
                        seq: 0,
                        event: StreamResponse::Message(m),
                    }
                }))),
                None => self.stream_from(cx, &claim.task_id, 0).await,
            },
        }
    }

    /// The task's events after `cursor` from its log, then live ones (if it is not finished).
    async fn stream_from(
        &self,
        cx: &CallContext,
        id: &TaskId,
        cursor: u64,
    ) -> Result<EventStream, Error> {
        if let Some(cell) = self.rt.live_cell(id).filter(|c| c.scope == cx.scope) {
            let (_, rx) = cell.subscribe().await;
            return Ok(follow::follow(self.rt.clone(), cell, None, cursor, rx));
        }
        let stored = self.load(cx, id).await?;
        if stored.task.status.state.is_terminal() {
            return Ok(follow::replay(self.rt.clone(), id.clone(), cursor));
        }
        let cell = self.rt.cell_for(stored);
        let (_, rx) = cell.subscribe().await;
        Ok(follow::follow(self.rt.clone(), cell, None, cursor, rx))
    }

    /// `GetTask`.
    pub async fn get_task(&self, cx: &CallContext, req: GetTaskRequest) -> Result<Task, Error> {
        req.validate()?;
        let mut task = self.load(cx, &req.id).await?.task;
        task.truncate_history(req.history_length);
        Ok(task)
    }

    /// `ListTasks`: newest status first, cursor paging.
    pub async fn list_tasks(
        &self,
        cx: &CallContext,
        req: ListTasksRequest,
    ) -> Result<ListTasksResponse, Error> {
        req.validate()?;
        let query = ListQuery {
            scope: cx.scope.clone(),
            context_id: req.context_id.clone(),
            status: req.status.clone(),
            status_timestamp_after: req.status_timestamp_after,
            page_size: usize::try_from(req.effective_page_size()).unwrap_or(50),
            page_token: req.page_token.clone(),
        };
        let page = self.rt.store.list(&query).await?;
        let include_artifacts = req.include_artifacts == Some(true);
        let tasks: Vec<Task> = page
            .tasks
            .into_iter()
            .map(|t| {
                let mut task = t.task;
                task.truncate_history(req.history_length);
                if !include_artifacts {
                    task.artifacts.clear();
                }
                task
            })
            .collect();
        Ok(ListTasksResponse {
            page_size: i32::try_from(tasks.len()).unwrap_or(i32::MAX),
            tasks,
            next_page_token: page.next_page_token.unwrap_or_default(),
            total_size: i32::try_from(page.total_size).unwrap_or(i32::MAX),
        })
    }

    /// `CancelTask`: asks the agent, stops the execution, returns the task (normally CANCELED).
    pub async fn cancel_task(
        &self,
        cx: &CallContext,
        req: CancelTaskRequest,
    ) -> Result<Task, Error> {
        req.validate()?;
        let stored = self.load(cx, &req.id).await?;
        let state = &stored.task.status.state;
        if state.is_terminal() {
            return Err(Error::new(
                ErrorKind::TaskNotCancelable,
                format!("Task {} is already {state}", req.id),
            )
            .with_metadata("taskId", req.id.as_str()));
        }
        let extensions = self.check_extensions(cx)?;
        let message = stored
            .task
            .history
            .iter()
            .rev()
            .find(|m| m.role == a2a_core::Role::User)
            .cloned()
            .unwrap_or_else(|| Message::user_text(""));
        let task = stored.task.clone();
        let cell = self.rt.cell_for(stored);
        let rcx = RequestContext {
            task_id: task.id.clone(),
            context_id: task.context_id.clone(),
            message,
            stored_task: Some(task),
            service_params: cx.service_params.clone(),
            extensions,
            scope: cx.scope.clone(),
            cancel: cell.cancel.clone(),
        };
        Ok(self.rt.cancel(cell, rcx).await?.task)
    }

    /// `SubscribeToTask`: the current task first, then its events. With
    /// [`CallContext::last_event_id`] (`Last-Event-ID`), instead exactly the events after that
    /// sequence number, from the durable log, then live ones; this works for finished tasks too
    /// (up to their terminal event) and across server restarts.
    pub async fn subscribe_to_task(
        &self,
        cx: &CallContext,
        req: SubscribeToTaskRequest,
    ) -> Result<EventStream, Error> {
        self.check_streaming()?;
        req.validate()?;
        if let Some(after) = cx.last_event_id {
            return self.stream_from(cx, &req.id, after).await;
        }
        let stored = self.load(cx, &req.id).await?;
        if stored.task.status.state.is_terminal() {
            return Err(Error::new(
                ErrorKind::UnsupportedOperation,
                format!(
                    "Task {} is {}: there is nothing to subscribe to",
                    req.id, stored.task.status.state
                ),
            )
            .with_metadata("taskId", req.id.as_str()));
        }
        let cell = self.rt.cell_for(stored);
        let (snapshot, rx) = cell.subscribe().await;
        let snapshot = snapshot.ok_or_else(|| Error::task_not_found(req.id.as_str()))?;
        let first = StreamEvent {
            seq: snapshot.version,
            event: StreamResponse::Task(snapshot.task),
        };
        let cursor = first.seq;
        Ok(follow::follow(
            self.rt.clone(),
            cell,
            Some(first),
            cursor,
            rx,
        ))
    }

    /// Start-up recovery: every task left SUBMITTED or WORKING by a previous process is handed
    /// to the agent's [`Agent::resume`](crate::Agent::resume) hook (by default: failed with a
    /// status message saying the server restarted). Returns how many tasks it found.
    pub async fn recover(&self) -> Result<usize, Error> {
        use a2a_core::TaskState;
        let tasks = self
            .rt
            .store
            .tasks_in_states(&[TaskState::Submitted, TaskState::Working])
            .await?;
        let n = tasks.len();
        for stored in tasks {
            if self.rt.live_cell(&stored.task.id).is_some() {
                continue; // started in this process
            }
            let task = stored.task.clone();
            let message = task
                .history
                .iter()
                .rev()
                .find(|m| m.role == a2a_core::Role::User)
                .cloned()
                .unwrap_or_else(|| Message::user_text(""));
            let scope = stored.scope.clone();
            let cell = self.rt.cell_for(stored);
            let rcx = RequestContext {
                task_id: task.id.clone(),
                context_id: task.context_id.clone(),
                message,
                stored_task: Some(task),
                service_params: ServiceParams::default(),
                extensions: Vec::new(),
                scope,
                cancel: cell.cancel.clone(),
            };
            self.rt.spawn_resume(cell, rcx);
        }
        if n > 0 {
            tracing::info!(tasks = n, "recovered tasks interrupted by a restart");
        }
        Ok(n)
    }

    /// Retention: deletes terminal tasks (and their logs) whose status is older than `ttl`,
    /// and forgets message ids older than `dedup_window`. Returns how many tasks it deleted.
    pub async fn sweep(
        &self,
        ttl: Option<std::time::Duration>,
        dedup_window: std::time::Duration,
    ) -> Result<usize, Error> {
        let now = a2a_core::Timestamp::now().unix_millis();
        let ms = |d: std::time::Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
        let mut deleted = 0;
        if let Some(ttl) = ttl {
            let before = a2a_core::Timestamp::from_unix_millis(now.saturating_sub(ms(ttl)))
                .unwrap_or_else(a2a_core::Timestamp::now);
            loop {
                let ids = self.rt.store.terminal_before(before, 500).await?;
                let mut progressed = false;
                for id in &ids {
                    if self.rt.live_cell(id).is_none() && self.rt.store.delete(id).await? {
                        deleted += 1;
                        progressed = true;
                    }
                }
                if ids.len() < 500 || !progressed {
                    break;
                }
            }
        }
        self.rt
            .store
            .expire_claims(now.saturating_sub(ms(dedup_window)))
            .await?;
        if deleted > 0 {
            self.rt.store.sync().await?;
            tracing::info!(deleted, "retention removed expired tasks");
        }
        Ok(deleted)
    }

    fn pusher(&self) -> Result<&Arc<crate::push::Pusher>, Error> {
        self.rt.pusher.as_ref().ok_or_else(|| {
            Error::new(
                ErrorKind::PushNotificationNotSupported,
                "This agent does not support push notifications",
            )
        })
    }

    /// Stores a webhook registration for `task_id`, delivering events after `delivered`.
    async fn register_push(
        &self,
        cx: &CallContext,
        task_id: &TaskId,
        mut config: TaskPushNotificationConfig,
        delivered: u64,
    ) -> Result<TaskPushNotificationConfig, Error> {
        let pusher = self.pusher()?;
        pusher.settings().check_url(&config.url)?;
        config.task_id = Some(task_id.clone());
        config.tenant = None;
        if config.id.is_none() {
            config.id = Some(uuid::Uuid::new_v4().to_string());
        }
        let record = PushRecord {
            config: config.clone(),
            v03: cx.v03,
            delivered,
            dead_letter: None,
        };
        self.rt.store.put_push_config(record).await?;
        self.rt.store.sync().await?;
        pusher.watch(task_id);
        Ok(redacted(config))
    }

    /// `CreateTaskPushNotificationConfig`: registers a webhook for the task's next events.
    /// The same `id` replaces an earlier registration.
    pub async fn create_push_config(
        &self,
        cx: &CallContext,
        req: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, Error> {
        self.pusher()?;
        req.validate()?;
        let task_id = req.task_id.clone().unwrap_or_default();
        let stored = self.load(cx, &task_id).await?;
        let config = self
            .register_push(cx, &task_id, req, stored.version)
            .await?;
        if let Some(pusher) = &self.rt.pusher {
            pusher.wake(&task_id).await;
        }
        Ok(config)
    }

    async fn push_record(
        &self,
        cx: &CallContext,
        task: &TaskId,
        id: &str,
    ) -> Result<PushRecord, Error> {
        self.load(cx, task).await?;
        self.rt
            .store
            .push_configs(task)
            .await?
            .into_iter()
            .find(|r| r.id() == id)
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::TaskNotFound,
                    format!("Push notification config {id} not found for task {task}"),
                )
                .with_metadata("taskId", task.as_str())
            })
    }

    /// `GetTaskPushNotificationConfig` (credentials are not returned).
    pub async fn get_push_config(
        &self,
        cx: &CallContext,
        req: GetTaskPushNotificationConfigRequest,
    ) -> Result<TaskPushNotificationConfig, Error> {
        self.pusher()?;
        req.validate()?;
        Ok(redacted(
            self.push_record(cx, &req.task_id, &req.id).await?.config,
        ))
    }

    /// `ListTaskPushNotificationConfigs` (credentials are not returned).
    pub async fn list_push_configs(
        &self,
        cx: &CallContext,
        req: ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse, Error> {
        self.pusher()?;
        req.validate()?;
        self.load(cx, &req.task_id).await?;
        let configs = self.rt.store.push_configs(&req.task_id).await?;
        Ok(ListTaskPushNotificationConfigsResponse {
            configs: configs.into_iter().map(|r| redacted(r.config)).collect(),
            next_page_token: String::new(),
        })
    }

    /// `DeleteTaskPushNotificationConfig`: idempotent (deleting twice succeeds twice).
    pub async fn delete_push_config(
        &self,
        cx: &CallContext,
        req: DeleteTaskPushNotificationConfigRequest,
    ) -> Result<Empty, Error> {
        self.pusher()?;
        req.validate()?;
        self.load(cx, &req.task_id).await?;
        if self
            .rt
            .store
            .delete_push_config(&req.task_id, &req.id)
            .await?
        {
            self.rt.store.sync().await?;
        }
        Ok(Empty {})
    }

    /// Webhook registrations of a task that gave up delivering, with why (for operators).
    pub async fn dead_letters(&self, task: &TaskId) -> Result<Vec<PushRecord>, Error> {
        Ok(self
            .rt
            .store
            .push_configs(task)
            .await?
            .into_iter()
            .filter(|r| r.dead_letter.is_some())
            .collect())
    }

    /// `GetExtendedAgentCard`.
    pub async fn get_extended_agent_card(
        &self,
        cx: &CallContext,
        req: GetExtendedAgentCardRequest,
    ) -> Result<AgentCard, Error> {
        let _ = req;
        if !self.card.capabilities.extended_agent_card() {
            return Err(Error::new(
                ErrorKind::UnsupportedOperation,
                "This agent has no extended agent card",
            ));
        }
        let Some(owner) = &cx.scope.owner else {
            return Err(Error::new(
                ErrorKind::Unauthenticated,
                "The extended agent card is only for authenticated callers",
            ));
        };
        self.extended_card
            .as_ref()
            .and_then(|build| build(&Principal(owner.clone())))
            .ok_or_else(|| Error::from_kind(ErrorKind::ExtendedAgentCardNotConfigured))
    }
}

/// A config as returned to clients: push credentials are never sent back in clear.
fn redacted(mut config: TaskPushNotificationConfig) -> TaskPushNotificationConfig {
    if let Some(auth) = &mut config.authentication {
        auth.credentials = None;
    }
    config
}
