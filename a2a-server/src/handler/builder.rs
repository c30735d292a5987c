//! [`HandlerBuilder`]: a [`RequestHandler`] without the HTTP server, for custom transports.

use super::{ExtendedCardFn, RequestHandler, SERIALIZED_CACHE_BYTES, SerializedTasks};
use crate::agent::{Agent, DynAgent};
use crate::engine::{DEFAULT_LEASE_TTL, Engine, EventBus, Leases, LocalBus, Replication, Stores};
use crate::store::{ClaimStore, MemoryStore, Store};
use a2a_core::AgentCard;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// A configuration mistake found by [`HandlerBuilder::build`] or
/// [`ServerBuilder::build`](crate::ServerBuilder::build).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The public URL is not an absolute http(s) URL.
    #[error("public URL {0:?} must be an absolute http:// or https:// URL")]
    PublicUrl(String),
    /// The webhook HTTP client could not be built.
    #[error("cannot set up webhook delivery: {0}")]
    Push(#[source] reqwest::Error),
    /// An extended agent card is declared or configured, but no authenticator: the card is
    /// only for authenticated callers, so nobody could ever read it.
    #[error(
        "an extended agent card needs an authenticator: it is served only to authenticated \
         callers (set ServerBuilder::authenticator, or drop the extended card)"
    )]
    ExtendedCardWithoutAuthentication,
}

/// Builds a [`RequestHandler`] on its own: the operations, the task engine and its store,
/// without the HTTP server (what [`ServerBuilder`](crate::ServerBuilder) adds: the bindings,
/// authentication, the card's interfaces). For a custom transport, which decodes requests,
/// calls the handler's one method per operation, and encodes the results; it serves v0.3 by
/// decoding and encoding with `a2a_core::v03` and marking calls with
/// [`CallContext::with_v03`](crate::CallContext::with_v03).
///
/// ```
/// use a2a_core::{AgentCard, Error, Message, SendMessageRequest};
/// use a2a_server::{Agent, CallContext, RequestContext, RequestHandler, SendReply, TaskEvents};
///
/// struct Done;
///
/// impl Agent for Done {
///     async fn execute(&self, _cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
///         events.complete(None).await
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let card = AgentCard::builder("Done", "Finishes at once").build();
/// let handler = RequestHandler::builder(Done).agent_card(card).build().unwrap();
/// let request = SendMessageRequest::new(Message::user_text("go"));
/// let reply = handler.send_message(&CallContext::default(), request).await.unwrap();
/// assert!(matches!(reply, SendReply::Task(t) if t.status.state.is_terminal()));
/// # });
/// ```
#[must_use]
pub struct HandlerBuilder {
    agent: Arc<dyn DynAgent>,
    card: Option<AgentCard>,
    extended_card: Option<ExtendedCardFn>,
    store: Option<Arc<dyn Store>>,
    claims: Claims,
    push: Option<crate::push::PushSettings>,
    check_input_modes: bool,
    client_context_ids: bool,
    message_id_required: bool,
    bus: Option<Arc<dyn EventBus>>,
    leases: Option<Arc<dyn Leases>>,
    lease_ttl: Duration,
    replica_id: Option<String>,
    metrics: Option<crate::Metrics>,
    long_poll: super::long_poll::LongPoll,
}

/// Where message claims go (see [`HandlerBuilder::claim_store`]).
enum Claims {
    /// To the task store.
    TaskStore,
    /// To a store of their own.
    Own(Arc<dyn ClaimStore>),
    /// Nowhere: de-duplication is off.
    Off,
}

impl std::fmt::Debug for HandlerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HandlerBuilder").finish_non_exhaustive()
    }
}

impl RequestHandler {
    /// Starts building a handler for `agent` (see [`HandlerBuilder`]).
    pub fn builder<A: Agent>(agent: A) -> HandlerBuilder {
        HandlerBuilder {
            agent: Arc::new(agent),
            card: None,
            extended_card: None,
            store: None,
            claims: Claims::TaskStore,
            push: None,
            check_input_modes: true,
            client_context_ids: true,
            message_id_required: true,
            bus: None,
            leases: None,
            lease_ttl: DEFAULT_LEASE_TTL,
            replica_id: None,
            metrics: None,
            long_poll: Default::default(),
        }
    }
}

impl HandlerBuilder {
    /// The agent card, used as given (its capabilities say what the handler allows: streaming,
    /// push notifications, required extensions, input modes).
    pub fn agent_card(mut self, card: AgentCard) -> Self {
        self.card = Some(card);
        self
    }

    /// A per-caller extended card for `GetExtendedAgentCard` (declares the capability).
    pub fn extended_agent_card_fn(mut self, build: ExtendedCardFn) -> Self {
        self.extended_card = Some(build);
        self
    }

    /// Where tasks are stored (default: in memory; use [`crate::SledStore`] to persist).
    pub fn task_store(self, store: impl Store) -> Self {
        self.task_store_arc(Arc::new(store))
    }

    /// Like [`HandlerBuilder::task_store`], for a store shared with other code.
    pub fn task_store_arc(mut self, store: Arc<dyn Store>) -> Self {
        self.store = Some(store);
        self
    }

    /// Where message claims are kept (default: in the task store): the record of each
    /// received `messageId` that makes a retried `SendMessage` (same `messageId`, same
    /// task or context, same content, same caller) get the answer of its first send, without
    /// running the agent again. Claims are written on every send that starts or continues a
    /// task, and expired by the retention sweep after the de-duplication window.
    ///
    /// A claim must be durable before the task it names is seen: the engine flushes the task
    /// store (which covers a claim kept there), not this one, so the writes of a separate claim
    /// store must be durable when they return. Replicas that share a task store must share
    /// their claim store too, or a retry reaching another replica runs again.
    pub fn claim_store(self, claims: impl ClaimStore) -> Self {
        self.claim_store_arc(Arc::new(claims))
    }

    /// Like [`HandlerBuilder::claim_store`], for a claim store shared with other code.
    pub fn claim_store_arc(mut self, claims: Arc<dyn ClaimStore>) -> Self {
        self.claims = Claims::Own(claims);
        self
    }

    /// Whether retried sends are recognized (default on; see
    /// [`HandlerBuilder::claim_store`]). Off, no claim is written or read: every
    /// `SendMessage` runs the agent, a retry of one included, and a message to a finished task
    /// is refused even if it is a retry of the one that continued it. For a client that never
    /// retries, or an agent whose work is idempotent anyway, it spares a store write per send.
    /// Turning it on again after [`HandlerBuilder::claim_store`] uses the task store.
    pub fn dedup(mut self, on: bool) -> Self {
        self.claims = match (on, self.claims) {
            (false, _) => Claims::Off,
            (true, Claims::Off) => Claims::TaskStore,
            (true, kept) => kept,
        };
        self
    }

    /// Turns on push notifications (webhooks) with these settings, and declares them in the
    /// card. (A card that declares `pushNotifications` gets them with default settings.)
    pub fn push_notifications(mut self, settings: crate::push::PushSettings) -> Self {
        self.push = Some(settings);
        self
    }

    /// Whether to refuse a message part whose `mediaType` the card's input modes
    /// (`defaultInputModes` and the skills' `inputModes`; `type/*` and `*/*` wildcards) do not
    /// cover, with ContentTypeNotSupported (default on). Parts without a `mediaType` are not
    /// checked, nor is anything when the card declares no input modes. Turn it off to accept
    /// anything and let the agent decide.
    pub fn check_input_modes(mut self, on: bool) -> Self {
        self.check_input_modes = on;
        self
    }

    /// Whether a message may start a task in a context of the client's choosing (default on, as
    /// the spec allows). Off, a new task's `contextId` must name a context this server issued
    /// to the caller (one of its tasks' contexts), else the message is refused with
    /// InvalidParams: the caller learns that its context was not taken, rather than its
    /// conversation being quietly moved to a new one.
    pub fn client_context_ids(mut self, on: bool) -> Self {
        self.client_context_ids = on;
        self
    }

    /// Whether a message must carry its `messageId`, as the spec requires (default on: one
    /// without is refused with InvalidParams). Off, the server gives it a fresh id, for
    /// clients that leave it out; such a message is never recognized as a retry.
    pub fn message_id_required(mut self, on: bool) -> Self {
        self.message_id_required = on;
        self
    }

    /// How this server's replicas tell each other about tasks (default: a [`LocalBus`] of its
    /// own, enough for one process). Replicas that share a task store must share a bus.
    pub fn event_bus(mut self, bus: Arc<dyn EventBus>) -> Self {
        self.bus = Some(bus);
        self
    }

    /// Execution leases shared by the replicas of this server (default: none, this process
    /// runs every task). With them, the upkeep ([`Server::upkeep`](crate::Server::upkeep))
    /// must run: it renews this replica's leases and resumes the tasks of replicas that
    /// stopped renewing theirs ([`RequestHandler::claim_orphans`]).
    pub fn leases(mut self, leases: Arc<dyn Leases>) -> Self {
        self.leases = Some(leases);
        self
    }

    /// How long an execution lease lasts without renewal (default 30 s): how soon the tasks of a
    /// replica that died are resumed elsewhere. Renewed every third of it.
    pub fn lease_ttl(mut self, ttl: Duration) -> Self {
        self.lease_ttl = ttl.max(Duration::from_millis(30));
        self
    }

    /// This replica's name in the shared leases (default: a random UUID per handler).
    pub fn replica_id(mut self, id: impl Into<String>) -> Self {
        self.replica_id = Some(id.into());
        self
    }

    /// The card as the handler will use it: push notifications and the extended card declared
    /// as configured.
    pub(crate) fn card(&mut self) -> &mut AgentCard {
        let card = self
            .card
            .get_or_insert_with(|| AgentCard::builder("A2A agent", "An A2A agent").build());
        // A card that declares push notifications gets them, with default settings.
        if self.push.is_none() && card.capabilities.push_notifications() {
            self.push = Some(crate::push::PushSettings::default());
        }
        card.capabilities.push_notifications = Some(self.push.is_some());
        // Declared by the card or configured here; declared but not configured answers
        // ExtendedAgentCardNotConfigured.
        card.capabilities.extended_agent_card =
            Some(card.capabilities.extended_agent_card() || self.extended_card.is_some());
        card
    }

    /// Counts the handler's tasks, events, store operations and webhook deliveries in
    /// `metrics` (see [`Metrics`](crate::Metrics); off by default).
    pub fn metrics(mut self, metrics: crate::Metrics) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// Replaces the extended card function (the server wraps it to fill in interfaces).
    pub(crate) fn map_extended_card(&mut self, f: impl FnOnce(ExtendedCardFn) -> ExtendedCardFn) {
        self.extended_card = self.extended_card.take().map(f);
    }

    /// Bounds long-poll `GetTask` (A2A 1.1 `currentGeneration`): a request is held at most
    /// `wait` (default [`DEFAULT_LONG_POLL_WAIT`](super::DEFAULT_LONG_POLL_WAIT), 30 s), and at
    /// most `max_held` requests are held at once (default
    /// [`DEFAULT_MAX_LONG_POLLS`](super::DEFAULT_MAX_LONG_POLLS), 4096); a request beyond the
    /// cap is answered at once. A zero `wait` turns long polls into plain reads.
    pub fn long_poll(mut self, wait: Duration, max_held: usize) -> Self {
        self.long_poll = super::long_poll::LongPoll::new(wait, max_held);
        self
    }

    /// The handler, or the first configuration mistake.
    pub fn build(mut self) -> Result<RequestHandler, BuildError> {
        let card = self.card().clone();
        let store = self.store.unwrap_or_else(|| Arc::new(MemoryStore::new()));
        let metrics = self.metrics.map(|m| m.0);
        let store = match &metrics {
            Some(m) => crate::store::Metered::wrap(store, m.clone()),
            None => store,
        };
        let shutdown = CancellationToken::new();
        // This replica's name in the execution leases and in the webhook delivery leases.
        let owner: Arc<str> = (self.replica_id)
            .unwrap_or_else(|| uuid::Uuid::new_v4().to_string())
            .into();
        let bus = self.bus.unwrap_or_else(|| Arc::new(LocalBus::new()));
        let pusher = match self.push {
            Some(settings) => {
                let pusher = crate::push::Pusher::new(store.clone(), settings, shutdown.clone())
                    .map_err(BuildError::Push)?
                    .with_lease(owner.clone(), self.lease_ttl)
                    .with_metrics(metrics.clone());
                // With replicas, a task's events may be written on another replica.
                let pusher = match self.leases {
                    Some(_) => pusher.with_bus(bus.clone()),
                    None => pusher,
                };
                Some(Arc::new(pusher))
            }
            None => None,
        };
        let replication = self.leases.map(|leases| Replication {
            leases,
            owner,
            ttl: self.lease_ttl,
        });
        let claims_in_store = matches!(self.claims, Claims::TaskStore);
        let claims: Option<Arc<dyn ClaimStore>> = match self.claims {
            Claims::TaskStore => Some(store.clone()),
            Claims::Own(claims) => Some(claims),
            Claims::Off => None,
        };
        let stores = Stores {
            tasks: store,
            claims,
            claims_in_store,
        };
        let engine = Engine::new(
            stores,
            self.agent,
            shutdown,
            pusher,
            bus,
            replication,
            metrics,
        );
        Ok(RequestHandler {
            rt: engine,
            card,
            extended_card: self.extended_card,
            serialized: Arc::new(SerializedTasks::new(SERIALIZED_CACHE_BYTES)),
            check_input_modes: self.check_input_modes,
            client_context_ids: self.client_context_ids,
            message_id_required: self.message_id_required,
            recovered: tokio::sync::OnceCell::new(),
            long_poll: self.long_poll,
        })
    }
}
