//! [`RequestHandler`]: one method per A2A operation, independent of the transport. The HTTP
//! bindings only decode requests, call these, and encode results.

mod builder;
mod long_poll;
mod maintenance;
mod push;
mod reply;
mod send;
mod tasks;

pub use builder::{BuildError, HandlerBuilder};
pub use long_poll::{DEFAULT_LONG_POLL_WAIT, DEFAULT_MAX_LONG_POLLS};
pub(crate) use reply::{SERIALIZED_CACHE_BYTES, SerializedTasks};
pub use reply::{SendReply, TaskReply};

use crate::agent::ServiceParams;
use crate::auth::Principal;
use crate::engine::Engine;
use crate::store::{Scope, StoredTask};
use a2a_core::{
    AgentCard, Error, ErrorKind, GetExtendedAgentCardRequest, Message, StreamResponse, Task,
    TaskId, Validate,
};
use futures::stream::BoxStream;
use std::sync::Arc;

/// The URI of our resumable-streams extension, advertised in the agent card: every SSE event
/// carries `id: <seq>` (over gRPC, the payload's metadata does, for a client that activates the
/// extension), and `SubscribeToTask` with `Last-Event-ID: <seq>` replays exactly the events
/// after it (from the durable log), then continues live.
pub use a2a_core::RESUMABLE_STREAMS_EXTENSION;

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
    /// The protocol version the call asked for (`A2A-Version`; none means 0.3).
    pub(crate) version: Version,
}

/// The A2A protocol version of a request, as its `A2A-Version` says (spec §3.6.2: absent or
/// empty means 0.3). Decided once per request by the bindings' `negotiate`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Version {
    /// 0.3, asked for explicitly or by sending no version.
    #[default]
    V03,
    /// 1.x.
    V1,
}

impl CallContext {
    /// A call in `scope` with `service_params`.
    pub fn new(scope: Scope, service_params: ServiceParams) -> Self {
        Self {
            scope,
            service_params,
            last_event_id: None,
            v03: false,
            version: Version::V03,
        }
    }

    /// Sets the sequence number to resume a stream after.
    #[must_use]
    pub fn with_last_event_id(mut self, seq: Option<u64>) -> Self {
        self.last_event_id = seq;
        self
    }

    /// Marks the call as made through the v0.3 protocol (a custom transport that decodes v0.3
    /// requests with `a2a_core::v03`): webhooks it registers get v0.3 payloads.
    #[must_use]
    pub fn with_v03(mut self, on: bool) -> Self {
        self.v03 = on;
        self
    }

    /// Whether the call speaks A2A 1.1 or later (`A2A-Version`): its answers carry the tasks'
    /// and events' `generation`, which a 1.0 client must not see.
    pub fn generations(&self) -> bool {
        !self.v03 && (self.service_params.version.as_deref()).is_some_and(a2a_core::has_generations)
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

/// `events` as the call gets them: for a 1.1 call, each task snapshot and update carries its
/// generation (its sequence number); a 1.0 call's are left as they are, without one.
fn for_call(cx: &CallContext, events: EventStream) -> EventStream {
    use futures::StreamExt as _;
    if !cx.generations() {
        return events;
    }
    events
        .map(|mut e| {
            e.event
                .set_generation(i64::try_from(e.seq).unwrap_or(i64::MAX));
            e
        })
        .boxed()
}

/// Builds the extended agent card for an authenticated caller (`None`: not configured).
pub type ExtendedCardFn = Arc<dyn Fn(&Principal) -> Option<AgentCard> + Send + Sync>;

/// The transport-independent A2A request handler. Each operation checks its request once, at
/// entry (validation, then the protocol's checks: scope, capabilities, extensions), and leaves
/// the rest to the task engine: the bindings only decode and encode.
pub struct RequestHandler {
    pub(crate) rt: Arc<Engine>,
    pub(crate) card: AgentCard,
    pub(crate) extended_card: Option<ExtendedCardFn>,
    /// The JSON of recently read tasks, for `GetTask`.
    pub(crate) serialized: Arc<SerializedTasks>,
    /// Refuse parts whose `mediaType` the card's input modes do not cover.
    pub(crate) check_input_modes: bool,
    /// Accept a client's own `contextId` for a new conversation.
    pub(crate) client_context_ids: bool,
    /// Refuse a message without `messageId` (else the server names it).
    pub(crate) message_id_required: bool,
    /// Set once start-up recovery has claimed the tasks a previous process left running.
    pub(crate) recovered: tokio::sync::OnceCell<usize>,
    /// The bounds of long-poll `GetTask`.
    pub(crate) long_poll: long_poll::LongPoll,
}

impl std::fmt::Debug for RequestHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestHandler")
            .field("card", &self.card.name)
            .field("extended_card", &self.extended_card.is_some())
            .finish_non_exhaustive()
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

impl RequestHandler {
    /// The public agent card.
    pub fn agent_card(&self) -> &AgentCard {
        &self.card
    }

    /// Makes everything stored so far durable (call at shutdown).
    pub async fn flush(&self) -> Result<(), crate::store::StoreError> {
        self.rt.flush().await
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
        let stored = (self.rt.read(id).await?)
            .filter(|t| t.scope == cx.scope)
            .ok_or_else(|| Error::task_not_found(id.as_str()))?;
        crate::telemetry::record_task(&stored.task.id, &stored.task.context_id);
        Ok(stored)
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

    /// `GetExtendedAgentCard`.
    pub async fn get_extended_agent_card(
        &self,
        cx: &CallContext,
        req: GetExtendedAgentCardRequest,
    ) -> Result<AgentCard, Error> {
        req.validate()?;
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
