//! [`RequestHandler`]: one method per A2A operation, independent of the transport. The HTTP
//! bindings only decode requests, call these, and encode results.

use crate::agent::{RequestContext, ServiceParams};
use crate::runtime::{Change, Runtime, TaskCell, Update};
use crate::store::{ListQuery, Scope, StoredTask};
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

/// Who is calling and with which service parameters.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct CallContext {
    /// The caller's tenant and principal: tasks are visible only within the same scope.
    pub scope: Scope,
    /// `A2A-Version`, `A2A-Extensions`.
    pub service_params: ServiceParams,
}

impl CallContext {
    /// A call in `scope` with `service_params`.
    pub fn new(scope: Scope, service_params: ServiceParams) -> Self {
        Self {
            scope,
            service_params,
        }
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

/// The transport-independent A2A request handler.
#[derive(Debug)]
pub struct RequestHandler {
    pub(crate) rt: Arc<Runtime>,
    pub(crate) card: AgentCard,
    pub(crate) extended_card: Option<AgentCard>,
}

/// A task execution just started (or continued), with a subscription to its events.
struct Started {
    cell: Arc<TaskCell>,
    rx: broadcast::Receiver<Update>,
    /// The snapshot to open a stream with (continuations); a new task's stream opens with its
    /// creation event instead.
    first: Option<StoredTask>,
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

    fn check_push(&self) -> Result<(), Error> {
        if self.card.capabilities.push_notifications() {
            Ok(())
        } else {
            Err(Error::new(
                ErrorKind::PushNotificationNotSupported,
                "This agent does not support push notifications",
            ))
        }
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
        if req
            .configuration
            .as_ref()
            .is_some_and(|c| c.task_push_notification_config.is_some())
        {
            self.check_push()?;
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
                let cell = self.rt.cell_for(stored);
                let applied = cell
                    .apply(&self.rt, Change::Continue(message.clone()), true)
                    .await?;
                let (Some(stored), Some(rx)) = (applied.stored, applied.rx) else {
                    return Err(Error::new(
                        ErrorKind::Internal,
                        "continuation lost its task",
                    ));
                };
                let mut rcx = context(task_id, context_id, message, Some(stored.task.clone()));
                rcx.cancel = cell.cancel.clone();
                self.rt.spawn_execution(cell.clone(), rcx);
                Ok(Started {
                    cell,
                    rx,
                    first: Some(stored),
                })
            }
            None => {
                let task_id = TaskId::random();
                let context_id = message.context_id.clone().unwrap_or_else(ContextId::random);
                message.task_id = Some(task_id.clone());
                message.context_id = Some(context_id.clone());
                let cell = self.rt.cell_for_new(
                    task_id.clone(),
                    context_id.clone(),
                    cx.scope.clone(),
                    message.clone(),
                );
                let (_, rx) = cell.subscribe().await;
                let mut rcx = context(task_id, context_id, message, None);
                rcx.cancel = cell.cancel.clone();
                self.rt.spawn_execution(cell.clone(), rcx);
                Ok(Started {
                    cell,
                    rx,
                    first: None,
                })
            }
        }
    }

    /// `SendMessage`: by default waits until the task is terminal or interrupted;
    /// with `returnImmediately`, returns as soon as the task exists.
    pub async fn send_message(
        &self,
        cx: &CallContext,
        req: SendMessageRequest,
    ) -> Result<SendMessageResponse, Error> {
        let history_length = req.history_length();
        let immediately = req.return_immediately();
        let Started {
            cell,
            mut rx,
            first,
        } = self.start(cx, req).await?;
        if !(immediately && first.is_some()) {
            loop {
                match rx.recv().await {
                    Ok(Update::Event(e)) if immediately || e.event.ends_stream() => break,
                    Ok(Update::Event(_)) => {}
                    Ok(Update::Done) | Err(RecvError::Closed) => break,
                    Err(RecvError::Lagged(_)) => {
                        if cell
                            .snapshot()
                            .await
                            .is_some_and(|t| StreamResponse::Task(t.task).ends_stream())
                        {
                            break;
                        }
                    }
                }
            }
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

    /// `SendStreamingMessage`: the task (or a single message) first, then its events.
    pub async fn send_streaming_message(
        &self,
        cx: &CallContext,
        req: SendMessageRequest,
    ) -> Result<EventStream, Error> {
        self.check_streaming()?;
        let Started { cell, rx, first } = self.start(cx, req).await?;
        let first = first.map(|t| StreamEvent {
            seq: t.version,
            event: StreamResponse::Task(t.task),
        });
        Ok(follow(self.rt.clone(), cell, first, rx))
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

    /// `SubscribeToTask`: the current task first, then its events.
    pub async fn subscribe_to_task(
        &self,
        cx: &CallContext,
        req: SubscribeToTaskRequest,
    ) -> Result<EventStream, Error> {
        self.check_streaming()?;
        req.validate()?;
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
        Ok(follow(self.rt.clone(), cell, Some(first), rx))
    }

    /// `CreateTaskPushNotificationConfig` (not supported yet: PushNotificationNotSupported).
    pub async fn create_push_config(
        &self,
        cx: &CallContext,
        req: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, Error> {
        let _ = (cx, req);
        self.check_push()?;
        Err(Error::from_kind(ErrorKind::PushNotificationNotSupported))
    }

    /// `GetTaskPushNotificationConfig` (not supported yet).
    pub async fn get_push_config(
        &self,
        cx: &CallContext,
        req: GetTaskPushNotificationConfigRequest,
    ) -> Result<TaskPushNotificationConfig, Error> {
        let _ = (cx, req);
        self.check_push()?;
        Err(Error::from_kind(ErrorKind::PushNotificationNotSupported))
    }

    /// `ListTaskPushNotificationConfigs` (not supported yet).
    pub async fn list_push_configs(
        &self,
        cx: &CallContext,
        req: ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse, Error> {
        let _ = (cx, req);
        self.check_push()?;
        Err(Error::from_kind(ErrorKind::PushNotificationNotSupported))
    }

    /// `DeleteTaskPushNotificationConfig` (not supported yet).
    pub async fn delete_push_config(
        &self,
        cx: &CallContext,
        req: DeleteTaskPushNotificationConfigRequest,
    ) -> Result<Empty, Error> {
        let _ = (cx, req);
        self.check_push()?;
        Err(Error::from_kind(ErrorKind::PushNotificationNotSupported))
    }

    /// `GetExtendedAgentCard`.
    pub async fn get_extended_agent_card(
        &self,
        cx: &CallContext,
        req: GetExtendedAgentCardRequest,
    ) -> Result<AgentCard, Error> {
        let _ = (cx, req);
        if !self.card.capabilities.extended_agent_card() {
            return Err(Error::new(
                ErrorKind::UnsupportedOperation,
                "This agent has no extended agent card",
            ));
        }
        self.extended_card
            .clone()
            .ok_or_else(|| Error::from_kind(ErrorKind::ExtendedAgentCardNotConfigured))
    }
}

/// Streams a task's events: `first` (if any), then every broadcast event after it, until an
/// event ends the stream, the execution ends, or the server shuts down. A subscriber that fell
/// too far behind gets the current task snapshot and continues from there.
fn follow(
    rt: Arc<Runtime>,
    cell: Arc<TaskCell>,
    first: Option<StreamEvent>,
    mut rx: broadcast::Receiver<Update>,
) -> EventStream {
    let shutdown = rt.shutdown.clone();
    let stream = async_stream::stream! {
        let mut last_seq = 0;
        if let Some(first) = first {
            last_seq = first.seq;
            let terminal = first.event.state().is_some_and(|s| s.is_terminal());
            yield first;
            if terminal {
                return;
            }
        }
        loop {
            let update = tokio::select! {
                biased;
                u = rx.recv() => u,
                () = shutdown.cancelled() => return,
            };
            match update {
                Ok(Update::Event(e)) => {
                    if e.seq != 0 && e.seq <= last_seq {
                        continue;
                    }
                    last_seq = last_seq.max(e.seq);
                    let ends = e.event.ends_stream();
                    yield StreamEvent { seq: e.seq, event: e.event.clone() };
                    if ends {
                        return;
                    }
                }
                Ok(Update::Done) | Err(RecvError::Closed) => return,
                Err(RecvError::Lagged(missed)) => {
                    tracing::debug!(task = %cell.id, missed, "slow subscriber resynchronized with a snapshot");
                    let Some(t) = cell.snapshot().await else { return };
                    last_seq = t.version;
                    let event = StreamResponse::Task(t.task);
                    let ends = event.ends_stream();
                    yield StreamEvent { seq: last_seq, event };
                    if ends {
                        return;
                    }
                }
            }
        }
    };
    Box::pin(stream)
}
