//! [`RequestHandler`]: one method per A2A operation, independent of the transport. The HTTP
//! bindings only decode requests, call these, and encode results.

use crate::agent::{RequestContext, ServiceParams};
mod follow;
mod maintenance;
mod push;

use crate::auth::Principal;
use crate::cache::{Fifo, Weigh};
use crate::engine::{Change, Engine, TaskCell, Update};
use crate::store::{ListQuery, MessageClaim, Scope, StoredTask};
use a2a_core::{
    AgentCard, CancelTaskRequest, ContextId, Error, ErrorKind, GetExtendedAgentCardRequest,
    GetTaskRequest, ListTasksRequest, ListTasksResponse, Message, SendMessageRequest,
    SendMessageResponse, StreamResponse, SubscribeToTaskRequest, Task, TaskId,
    TaskPushNotificationConfig, Validate,
};
use futures::StreamExt as _;
use futures::stream::BoxStream;
use serde_json::value::RawValue;
use std::sync::{Arc, Mutex};
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
    pub(crate) rt: Arc<Engine>,
    pub(crate) card: AgentCard,
    pub(crate) extended_card: Option<ExtendedCardFn>,
    /// The JSON of recently read tasks, by version: `GetTask` of an unchanged task (a polling
    /// client's usual read) answers with it instead of serializing the task again.
    pub(crate) serialized: Mutex<Fifo<SerializedTask>>,
    /// Refuse parts whose `mediaType` the card's input modes do not cover.
    pub(crate) check_input_modes: bool,
    /// Set once start-up recovery has claimed the tasks a previous process left running.
    pub(crate) recovered: tokio::sync::OnceCell<usize>,
}

/// How many bytes of serialized tasks [`RequestHandler`] keeps for `GetTask`.
pub(crate) const SERIALIZED_CACHE_BYTES: usize = 8 * 1024 * 1024;

/// One version of a task, serialized.
#[derive(Clone, Debug)]
pub(crate) struct SerializedTask {
    version: u64,
    json: Arc<RawValue>,
}

impl Weigh for SerializedTask {
    fn weight(&self) -> usize {
        self.json.get().len()
    }
}

fn to_raw(task: &Task) -> Result<Arc<RawValue>, Error> {
    serde_json::value::to_raw_value(task)
        .map(Arc::from)
        .map_err(|e| Error::new(ErrorKind::Internal, format!("task not serializable: {e}")))
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
    // The JSON of the content is hashed as it is written, without a buffer.
    let mut content = Fnv1a::default();
    let _ = serde_json::to_writer(&mut content, &(&message.parts, &message.metadata));
    format!(
        "{}\u{1f}{}\u{1f}{target}\u{1f}{}\u{1f}{:016x}",
        scope.tenant.as_deref().unwrap_or_default(),
        scope.owner.as_deref().unwrap_or_default(),
        message.message_id,
        content.0
    )
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

/// The task with at most `history_length` messages of history (a copy only if that cuts it).
fn with_history(task: Arc<Task>, history_length: Option<i32>) -> Arc<Task> {
    let keep = history_length.map(|n| usize::try_from(n).unwrap_or(0));
    if keep.is_none_or(|n| task.history.len() <= n) {
        return task;
    }
    let mut task = Arc::unwrap_or_clone(task);
    task.truncate_history(history_length);
    Arc::new(task)
}

/// A `SendMessage` answer as the bindings serialize it: the same JSON as
/// [`SendMessageResponse`], with the task shared rather than copied.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum SharedResponse {
    Task(Arc<Task>),
    Message(Message),
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
                if immediately
                    || cell
                        .snapshot()
                        .await
                        .is_some_and(|t| t.task.status.state.ends_stream())
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

    /// The task as stored: every write reaches the store before anyone sees it, so the store
    /// is never behind a cell of this process, and it holds what other replicas wrote.
    async fn load(&self, cx: &CallContext, id: &TaskId) -> Result<StoredTask, Error> {
        self.ready().await?;
        self.rt
            .store
            .get(id)
            .await?
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

    /// Refuses a message with a part whose declared `mediaType` the card does not accept
    /// (ContentTypeNotSupported), unless the check is off.
    fn check_media_types(&self, message: &Message) -> Result<(), Error> {
        if !self.check_input_modes {
            return Ok(());
        }
        for (i, part) in message.parts.iter().enumerate() {
            let Some(media_type) = part.media_type.as_deref() else {
                continue;
            };
            if !self.card.accepts_input(media_type) {
                return Err(Error::new(
                    ErrorKind::ContentTypeNotSupported,
                    format!(
                        "message.parts[{i}] has media type {media_type}, which this agent does not accept (it accepts: {})",
                        self.card.input_modes().join(", ")
                    ),
                )
                .with_metadata("mediaType", media_type));
            }
        }
        Ok(())
    }

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
        if let (Started::Duplicate(claim), Some(config)) = (&started, push) {
            Box::pin(self.register_retried_push(cx, claim, config)).await?;
        }
        Ok(started)
    }

    /// The [`RequestContext`] of an execution for `cx`.
    fn request_context(
        cx: &CallContext,
        cell: &TaskCell,
        message: Message,
        stored_task: Option<Task>,
        extensions: Vec<String>,
    ) -> RequestContext {
        RequestContext {
            task_id: cell.id.clone(),
            context_id: cell.context_id.clone(),
            message,
            stored_task,
            service_params: cx.service_params.clone(),
            extensions,
            scope: cx.scope.clone(),
            cancel: cell.cancel.clone(),
        }
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
        message.context_id = Some(stored.task.context_id.clone());
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
                self.rt.release(cell);
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
        self.rt.spawn_execution(cell.clone(), rcx, generation);
        Ok(Started::Fresh {
            cell,
            rx,
            first: Some(stored),
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
                return Ok(Started::Duplicate(existing));
            }
            Err(e) => {
                self.rt.forget(&task_id);
                return Err(e.into());
            }
        }
        let generation = self.rt.begin(&cell);
        if let Err(e) = self.rt.lease(&task_id, false).await {
            self.rt.abandon(&cell);
            self.rt.forget(&task_id);
            self.rt.store.release_claim(&key).await?;
            return Err(e);
        }
        let (_, rx) = cell.subscribe().await;
        let rcx = Self::request_context(cx, &cell, message, None, extensions);
        self.rt.spawn_execution(cell.clone(), rcx, generation);
        Ok(Started::Fresh {
            cell,
            rx,
            first: None,
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
    ) -> Result<SendMessageResponse, Error> {
        Ok(match self.send_message_shared(cx, req).await? {
            SharedResponse::Task(task) => SendMessageResponse::Task(Arc::unwrap_or_clone(task)),
            SharedResponse::Message(m) => SendMessageResponse::Message(m),
        })
    }

    /// [`RequestHandler::send_message`], answering with the stored task itself (no copy,
    /// unless its history is cut).
    pub(crate) async fn send_message_shared(
        &self,
        cx: &CallContext,
        req: SendMessageRequest,
    ) -> Result<SharedResponse, Error> {
        let history_length = req.history_length();
        let immediately = req.return_immediately();
        let (cell, mut rx, first) = match self.start(cx, req).await? {
            Started::Fresh { cell, rx, first } => (cell, rx, first),
            Started::Duplicate(claim) => {
                if let Some(m) = claim.reply {
                    return Ok(SharedResponse::Message(m));
                }
                let Some(cell) = self
                    .rt
                    .live_cell(&claim.task_id)
                    .filter(|c| c.scope == cx.scope)
                else {
                    // The first send ended, or runs on another replica: its log says when it
                    // settles.
                    if !immediately {
                        let notices = self.rt.bus.subscribe(&claim.task_id);
                        let source = follow::Source::Bus(notices);
                        let stream = follow::follow(&self.rt, &claim.task_id, None, 0, source);
                        stream.for_each(|_| async {}).await;
                    }
                    let task = self.load(cx, &claim.task_id).await?.task;
                    return Ok(SharedResponse::Task(with_history(task, history_length)));
                };
                let (snapshot, rx) = cell.subscribe().await;
                (cell, rx, snapshot)
            }
        };
        let settled = first.is_some_and(|t| immediately || t.task.status.state.ends_stream());
        if !settled {
            wait(&cell, &mut rx, immediately).await;
        }
        let answer = Self::answer(&cell, history_length).await;
        self.rt.release(cell);
        answer
    }

    /// What a `SendMessage` that ran on `cell` answers, once it waited.
    async fn answer(cell: &TaskCell, history_length: Option<i32>) -> Result<SharedResponse, Error> {
        if let Some(refusal) = cell.refusal().await {
            return Err(refusal);
        }
        if let Some(m) = cell.reply().await {
            return Ok(SharedResponse::Message(m));
        }
        let task = cell
            .snapshot()
            .await
            .ok_or_else(|| Error::new(ErrorKind::Internal, "the task was not created"))?
            .task;
        Ok(SharedResponse::Task(with_history(task, history_length)))
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
            } => {
                // A new task: the response waits for the agent's first event, so that an
                // agent refusing the request (an A2A error before any event) is answered with
                // that error rather than a stream. The event itself is read back from the log.
                match rx.recv().await {
                    Ok(Update::Event(e)) if e.seq == 0 => {
                        let reply = StreamEvent {
                            seq: 0,
                            event: e.to_response(),
                        };
                        return Ok(Box::pin(futures::stream::once(async move { reply })));
                    }
                    Ok(Update::Done) | Err(RecvError::Closed) => {
                        if let Some(refusal) = cell.refusal().await {
                            return Err(refusal);
                        }
                    }
                    Ok(Update::Event(_)) | Err(RecvError::Lagged(_)) => {}
                }
                let stream = follow::follow(&self.rt, &cell.id, None, 0, follow::Source::Cell(rx));
                self.rt.release(cell);
                Ok(stream)
            }
            Started::Fresh {
                cell,
                rx,
                first: Some(t),
            } => {
                let stream = follow::from_snapshot(&self.rt, t, follow::Source::Cell(rx));
                self.rt.release(cell);
                Ok(stream)
            }
            Started::Duplicate(claim) => match claim.reply {
                Some(m) => Ok(Box::pin(futures::stream::once(async move {
                    StreamEvent {
                        seq: 0,
                        event: StreamResponse::Message(m),
                    }
                }))),
                None => {
                    let notices = self.rt.bus.subscribe(&claim.task_id);
                    let source = match self.rt.running_cell(&claim.task_id) {
                        Some(cell) => follow::Source::Cell(cell.subscribe().await.1),
                        None => follow::Source::Bus(notices),
                    };
                    Ok(follow::follow(&self.rt, &claim.task_id, None, 0, source))
                }
            },
        }
    }

    /// The task's events after `cursor` from its log, then live ones (if it is not finished):
    /// from this process's execution of the task if it runs one, else through the bus.
    async fn stream_from(
        &self,
        cx: &CallContext,
        id: &TaskId,
        cursor: u64,
    ) -> Result<EventStream, Error> {
        if let Some(cell) = self.rt.running_cell(id).filter(|c| c.scope == cx.scope) {
            self.ready().await?;
            let (_, rx) = cell.subscribe().await;
            return Ok(follow::follow(
                &self.rt,
                id,
                None,
                cursor,
                follow::Source::Cell(rx),
            ));
        }
        // Subscribed before the task is read: nothing written after the read goes unheard.
        let notices = self.rt.bus.subscribe(id);
        let stored = self.load(cx, id).await?;
        if stored.task.status.state.is_terminal() {
            return Ok(follow::replay(&self.rt, id, cursor));
        }
        Ok(follow::follow(
            &self.rt,
            id,
            None,
            cursor,
            follow::Source::Bus(notices),
        ))
    }

    /// `GetTask`.
    pub async fn get_task(&self, cx: &CallContext, req: GetTaskRequest) -> Result<Task, Error> {
        req.validate()?;
        let task = self.load(cx, &req.id).await?.task;
        Ok(Arc::unwrap_or_clone(with_history(task, req.history_length)))
    }

    /// [`RequestHandler::get_task`], serialized: from [`RequestHandler::serialized`] when this
    /// version of the task was serialized before (and its history is not cut).
    pub(crate) async fn get_task_json(
        &self,
        cx: &CallContext,
        req: GetTaskRequest,
    ) -> Result<Arc<RawValue>, Error> {
        req.validate()?;
        let stored = self.load(cx, &req.id).await?;
        let task = with_history(stored.task.clone(), req.history_length);
        if !Arc::ptr_eq(&task, &stored.task) {
            return to_raw(&task); // cut: not the stored version
        }
        let cached = self.serialized.lock().expect("cache lock").get(&req.id);
        if let Some(hit) = cached.filter(|c| c.version == stored.version) {
            return Ok(hit.json);
        }
        let json = to_raw(&task)?;
        self.serialized.lock().expect("cache lock").put(
            req.id,
            SerializedTask {
                version: stored.version,
                json: json.clone(),
            },
        );
        Ok(json)
    }

    /// `ListTasks`: newest status first, cursor paging.
    pub async fn list_tasks(
        &self,
        cx: &CallContext,
        req: ListTasksRequest,
    ) -> Result<ListTasksResponse, Error> {
        req.validate()?;
        self.ready().await?;
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
                let mut task = Arc::unwrap_or_clone(with_history(t.task, req.history_length));
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
        let task = Task::clone(&stored.task);
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
        let canceled = self.rt.cancel(&cell, rcx).await;
        self.rt.release(cell);
        Ok(Arc::unwrap_or_clone(canceled?.task))
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
        if let Some(cell) = self.rt.running_cell(&req.id) {
            let (snapshot, rx) = cell.subscribe().await;
            if let Some(snapshot) = snapshot {
                return Ok(follow::from_snapshot(
                    &self.rt,
                    snapshot,
                    follow::Source::Cell(rx),
                ));
            }
        }
        // No execution here: the bus, subscribed before the snapshot is read.
        let notices = self.rt.bus.subscribe(&req.id);
        let snapshot = self.load(cx, &req.id).await?;
        Ok(follow::from_snapshot(
            &self.rt,
            snapshot,
            follow::Source::Bus(notices),
        ))
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
