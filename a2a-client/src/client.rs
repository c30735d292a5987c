//! [`Client`]: every operation, typed, with retries and resumable streams; and
//! [`ClientBuilder`], which picks a binding from the agent's card.

use crate::Error;
use crate::auth::Interceptor;
use crate::error::Context;
use crate::limits::{Deadline, attempt_within, within};
use crate::transport::{CallOptions, ItemStream, Transport};
use a2a_core::operation::{self, Operation};
use a2a_core::{
    AgentCard, CancelTaskRequest, DeleteTaskPushNotificationConfigRequest, Empty, ErrorKind,
    GetExtendedAgentCardRequest, GetTaskPushNotificationConfigRequest, GetTaskRequest, HasTenant,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    ListTasksRequest, ListTasksResponse, Message, Method, Request, SendMessageRequest,
    SendMessageResponse, StreamResponse, SubscribeToTaskRequest, Task, TaskId,
    TaskPushNotificationConfig, has_generations,
};
use futures::stream::{BoxStream, StreamExt as _};
use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;
use tracing::Instrument as _;

/// A stream of events from the agent; resumed transparently if the connection drops.
pub type EventStream = BoxStream<'static, Result<StreamResponse, Error>>;

mod builder;

pub use builder::{Binding, ClientBuilder, RetryPolicy};

#[derive(Debug)]
struct Inner {
    transport: Box<dyn Transport>,
    /// The agent's host and port, for the call spans.
    peer: crate::telemetry::Peer,
    card: Option<AgentCard>,
    tenant: Option<String>,
    streaming: bool,
    timeout: Option<Duration>,
    attempt_timeout: Option<Duration>,
    retry: RetryPolicy,
    interceptors: Vec<Arc<dyn Interceptor>>,
    credentials: Option<Arc<crate::ClientCredentials>>,
}

/// An A2A client bound to one agent interface. Cheap to clone.
///
/// ```no_run
/// # async fn run() -> Result<(), a2a_client::Error> {
/// use a2a_client::Client;
/// use a2a_core::Message;
///
/// let client = Client::connect("http://127.0.0.1:8080").await?;
/// let outcome = client.delegate(Message::user_text("hello"), Default::default()).await?;
/// println!("{outcome:?}");
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct Client {
    inner: Arc<Inner>,
}

/// Whether a failed call may be retried: idempotent methods on any retryable failure;
/// SendMessage too (retried with the same messageId, which servers may de-duplicate on);
/// anything when the request certainly never left.
fn may_retry(method: Method, e: &Error) -> bool {
    if e.is_before_send() {
        return true;
    }
    let idempotent = matches!(
        method,
        Method::GetTask
            | Method::ListTasks
            | Method::GetTaskPushNotificationConfig
            | Method::ListTaskPushNotificationConfigs
            | Method::DeleteTaskPushNotificationConfig
            | Method::GetExtendedAgentCard
            | Method::SendMessage
    );
    idempotent && e.is_retryable()
}

impl Client {
    /// Starts building a client.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// Discovers the agent at `base_url` and connects with default settings.
    pub async fn connect(base_url: &str) -> Result<Self, Error> {
        ClientBuilder::default().connect(base_url).await
    }

    /// The agent card this client was built from, if any.
    pub fn card(&self) -> Option<&AgentCard> {
        self.inner.card.as_ref()
    }

    /// The binding and protocol version in use.
    pub fn binding(&self) -> (&'static str, &'static str) {
        self.inner.transport.binding()
    }

    /// Whether the agent streams (per its card).
    pub fn supports_streaming(&self) -> bool {
        self.inner.streaming
    }

    /// Whether the client speaks A2A 1.1 to the agent (the card offers a 1.1 interface of the
    /// binding it chose): tasks and events carry their generation, `GetTask` can long-poll
    /// ([`Client::wait_for_change`]) and sends can set `ifGenerationMatch`.
    pub fn speaks_generations(&self) -> bool {
        has_generations(self.inner.transport.binding().1)
    }

    /// The call's headers: the interceptors', the access token (a new one if `refresh`), the
    /// trace context.
    async fn options(&self, method: Method, refresh: bool) -> Result<CallOptions, Error> {
        let mut options = CallOptions::default();
        for i in &self.inner.interceptors {
            i.intercept(method, &mut options)?;
        }
        if let Some(credentials) = &self.inner.credentials {
            let token = credentials.token(refresh).await?;
            let value = reqwest::header::HeaderValue::from_str(&format!("Bearer {token}"))
                .map_err(|e| {
                    Error::Token(Box::new(Context::new(
                        "the access token is not a valid header value",
                        e,
                    )))
                })?;
            options
                .headers
                .insert(reqwest::header::AUTHORIZATION, value);
        }
        crate::telemetry::inject(&mut options.headers);
        Ok(options)
    }

    fn span(&self, method: Method) -> tracing::Span {
        crate::telemetry::call_span(method, self.inner.transport.binding().0, &self.inner.peer)
    }

    /// The request with the interface's tenant, when it names none itself (copied only then).
    fn with_tenant<'r, T: HasTenant + Clone>(&self, req: &'r T) -> Cow<'r, T> {
        match &self.inner.tenant {
            Some(tenant) if req.tenant().is_none() => {
                let mut req = req.clone();
                req.set_tenant(Some(tenant.clone()));
                Cow::Owned(req)
            }
            _ => Cow::Borrowed(req),
        }
    }

    /// Any unary operation, typed by its request.
    pub async fn call<R: Request>(&self, req: &R) -> Result<R::Response, Error> {
        self.call_operation::<R::Operation>(req).await
    }

    /// A unary call of operation `O` (as [`Self::call`], for an operation whose request type
    /// is another's too).
    pub async fn call_operation<O: Operation>(
        &self,
        req: &O::Request,
    ) -> Result<O::Response, Error> {
        let span = self.span(O::METHOD);
        let result = self
            .call_once_or_retry::<O>(req)
            .instrument(span.clone())
            .await;
        crate::telemetry::ended(&span, result.as_ref().map(|_| ()));
        result
    }

    async fn call_once_or_retry<O: Operation>(
        &self,
        req: &O::Request,
    ) -> Result<O::Response, Error> {
        let req = self.with_tenant(req);
        // One deadline for the whole call: every attempt, token fetch and backoff.
        let deadline = Deadline::start(self.inner.timeout);
        let mut attempt = 0;
        let mut refresh = false;
        loop {
            attempt += 1;
            let once = async {
                let options = self.options(O::METHOD, refresh).await?;
                let call = self.inner.transport.call::<O>(&req, &options);
                attempt_within(self.inner.attempt_timeout, O::METHOD, attempt, call).await
            };
            match deadline.bound(O::METHOD, attempt, once).await {
                Ok(response) => return Ok(response),
                Err(e) if deadline.passed() => return Err(e),
                // A refused token (expired early, revoked, keys rotated): one new token, once.
                Err(e)
                    if e.is_unauthenticated() && self.inner.credentials.is_some() && !refresh =>
                {
                    refresh = true;
                }
                Err(e) if attempt < self.inner.retry.max_attempts && may_retry(O::METHOD, &e) => {
                    let backoff = self.inner.retry.backoff(attempt);
                    if !deadline.leaves(backoff) {
                        return Err(deadline.no_time_to_retry(O::METHOD, attempt, e));
                    }
                    tokio::time::sleep(backoff).await;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// `SendMessage` (retried with the same `messageId` on transient failures).
    pub async fn send_message(
        &self,
        req: &SendMessageRequest,
    ) -> Result<SendMessageResponse, Error> {
        self.call(req).await
    }

    /// Sends one text message and waits (blocking mode) for the result.
    pub async fn send_text(&self, text: &str) -> Result<SendMessageResponse, Error> {
        self.send_message(&SendMessageRequest::new(Message::user_text(text)))
            .await
    }

    /// `GetTask`.
    pub async fn get_task(&self, id: impl Into<TaskId>) -> Result<Task, Error> {
        self.call(&GetTaskRequest::new(id)).await
    }

    /// A2A 1.1 long poll: `GetTask` answered once the task's generation is past `generation`
    /// (or when the agent's wait is over: then the task may be unchanged). Needs
    /// [`Client::speaks_generations`]; a 1.0 agent answers at once.
    pub async fn wait_for_change(
        &self,
        id: impl Into<TaskId>,
        generation: i64,
    ) -> Result<Task, Error> {
        self.call(&GetTaskRequest::new(id).with_current_generation(generation))
            .await
    }

    /// `ListTasks`.
    pub async fn list_tasks(&self, req: &ListTasksRequest) -> Result<ListTasksResponse, Error> {
        self.call(req).await
    }

    /// `CancelTask`.
    pub async fn cancel_task(&self, id: impl Into<TaskId>) -> Result<Task, Error> {
        self.call(&CancelTaskRequest::new(id)).await
    }

    /// `CreateTaskPushNotificationConfig`.
    pub async fn create_push_config(
        &self,
        config: &TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, Error> {
        self.call(config).await
    }

    /// `GetTaskPushNotificationConfig`.
    pub async fn get_push_config(
        &self,
        req: &GetTaskPushNotificationConfigRequest,
    ) -> Result<TaskPushNotificationConfig, Error> {
        self.call(req).await
    }

    /// `ListTaskPushNotificationConfigs`.
    pub async fn list_push_configs(
        &self,
        req: &ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse, Error> {
        self.call(req).await
    }

    /// `DeleteTaskPushNotificationConfig`.
    pub async fn delete_push_config(
        &self,
        req: &DeleteTaskPushNotificationConfigRequest,
    ) -> Result<Empty, Error> {
        self.call(req).await
    }

    /// `GetExtendedAgentCard`.
    pub async fn get_extended_agent_card(&self) -> Result<AgentCard, Error> {
        self.call(&GetExtendedAgentCardRequest::default()).await
    }

    async fn open_stream<O: Operation>(
        &self,
        req: &O::Request,
        last_event_id: Option<String>,
    ) -> Result<ItemStream, Error> {
        let open = async {
            let req = self.with_tenant(req);
            let mut options = self.options(O::METHOD, false).await?;
            options.last_event_id = last_event_id.clone();
            match self.inner.transport.open::<O>(&req, &options).await {
                Err(e) if e.is_unauthenticated() && self.inner.credentials.is_some() => {
                    let mut options = self.options(O::METHOD, true).await?;
                    options.last_event_id = last_event_id;
                    self.inner.transport.open::<O>(&req, &options).await
                }
                other => other,
            }
        };
        within(self.inner.timeout, O::METHOD, open).await
    }

    /// `SendStreamingMessage`: the task (or one message) first, then its events, until a
    /// terminal or interrupted state. If the connection drops, the stream resumes through
    /// `SubscribeToTask` (with `Last-Event-ID`), skipping events already seen.
    pub async fn send_streaming_message(
        &self,
        req: &SendMessageRequest,
    ) -> Result<EventStream, Error> {
        let span = self.span(Method::SendStreamingMessage);
        let first = self
            .open_stream::<operation::SendStreamingMessage>(req, None)
            .instrument(span.clone())
            .await;
        let first = first.inspect_err(|e| crate::telemetry::ended(&span, Err(e)))?;
        Ok(self.resumable(first, None, span))
    }

    /// `SubscribeToTask`: the current task first, then its events; resumed like
    /// [`Self::send_streaming_message`].
    pub async fn subscribe(&self, id: impl Into<TaskId>) -> Result<EventStream, Error> {
        let id = id.into();
        let span = self.span(Method::SubscribeToTask);
        let first = self
            .open_stream::<operation::SubscribeToTask>(
                &SubscribeToTaskRequest::new(id.clone()),
                None,
            )
            .instrument(span.clone())
            .await;
        let first = first.inspect_err(|e| crate::telemetry::ended(&span, Err(e)))?;
        Ok(self.resumable(first, Some(id), span))
    }

    /// `SendStreamingMessage` as the agent sends it: each event with its id (`Last-Event-ID`
    /// to resume after it), not resumed when it breaks. For the inspector, which shows each
    /// call as it went and lets the person resume.
    #[cfg(feature = "inspect")]
    pub(crate) async fn send_streaming_items(
        &self,
        req: &SendMessageRequest,
    ) -> Result<ItemStream, Error> {
        self.open_stream::<operation::SendStreamingMessage>(req, None)
            .await
    }

    /// `SubscribeToTask` as the agent sends it, after event `after` (`Last-Event-ID`) when
    /// given, else from the current task; like [`Self::send_streaming_items`].
    #[cfg(feature = "inspect")]
    pub(crate) async fn subscribe_items(
        &self,
        id: TaskId,
        after: Option<String>,
    ) -> Result<ItemStream, Error> {
        self.open_stream::<operation::SubscribeToTask>(&SubscribeToTaskRequest::new(id), after)
            .await
    }

    /// The stream of `first`, resumed when it breaks; `span` (the call's) lasts as long as it.
    fn resumable(
        &self,
        first: ItemStream,
        task_id: Option<TaskId>,
        span: tracing::Span,
    ) -> EventStream {
        let client = self.clone();
        let within = span.clone();
        let stream = async_stream::stream! {
            let span = span;
            let mut current = first;
            let mut task_id = task_id;
            let mut last_id: Option<u64> = None;
            let mut failures = 0u32;
            loop {
                let mut broken: Option<Error> = None;
                while let Some(item) = current.next().await {
                    match item {
                        Ok(item) => {
                            let seq = item.id.as_deref().and_then(|s| s.parse::<u64>().ok());
                            if let (Some(seq), Some(last)) = (seq, last_id)
                                && seq <= last {
                                    continue; // already seen before the reconnect
                                }
                            if seq.is_some() {
                                last_id = seq;
                            }
                            if task_id.is_none() {
                                task_id = item.event.task_id().cloned();
                            }
                            failures = 0;
                            let ends = item.event.ends_stream();
                            yield Ok(item.event);
                            if ends {
                                crate::telemetry::ended(&span, Ok(()));
                                return;
                            }
                        }
                        // An A2A error in the stream ends it; a retryable one (a 503 answering
                        // the resubscribe) breaks it like a dropped connection. An event over
                        // the size limit ends it too: it would be sent again on resuming.
                        Err(e @ (Error::Remote { .. } | Error::TooLarge { .. }))
                            if !e.is_retryable() =>
                        {
                            crate::telemetry::ended(&span, Err(&e));
                            yield Err(e);
                            return;
                        }
                        Err(e) => {
                            broken = Some(e);
                            break;
                        }
                    }
                }
                let Some(id) = task_id.clone() else {
                    yield Err(Error::StreamEnded(match broken {
                        Some(e) => {
                            Box::new(Context::new("the stream broke before the task was created", e))
                        }
                        None => "the stream closed before the first event".into(),
                    }));
                    return;
                };
                failures += 1;
                if failures >= client.inner.retry.max_attempts.max(1) {
                    let context = format!("task {id}: the stream dropped and could not be resumed");
                    yield Err(Error::StreamEnded(match broken {
                        Some(e) => Box::new(Context::new(context, e)),
                        None => format!("{context} (closed early)").into(),
                    }));
                    return;
                }
                tokio::time::sleep(client.inner.retry.backoff(failures)).await;
                let resubscribe = SubscribeToTaskRequest::new(id.clone());
                match client
                    .open_stream::<operation::SubscribeToTask>(&resubscribe, last_id.map(|n| n.to_string()))
                    .instrument(span.clone())
                    .await
                {
                    Ok(s) => current = s,
                    Err(e) if e.kind() == Some(ErrorKind::UnsupportedOperation) => {
                        // The task ended meanwhile: its final state is the last event.
                        match client.get_task(id).await {
                            Ok(task) => yield Ok(StreamResponse::Task(task)),
                            Err(e) => yield Err(e),
                        }
                        return;
                    }
                    Err(e) if e.is_retryable() || matches!(e, Error::Transport(_)) => {
                        current = futures::stream::iter(vec![Err(e)]).boxed();
                    }
                    Err(e) => {
                        yield Err(e);
                        return;
                    }
                }
            }
        };
        // Polled inside the call's span, whose end (its last exit, for OpenTelemetry) is then
        // the stream's.
        let mut stream = stream.boxed();
        futures::stream::poll_fn(move |cx| {
            let _in = within.enter();
            stream.poll_next_unpin(cx)
        })
        .boxed()
    }
}
