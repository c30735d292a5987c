//! The HTTP side: [`Server`] (built with [`ServerBuilder`]) turns an [`Agent`] into an
//! [`axum::Router`] serving the agent card, the JSON-RPC binding (`POST /`) and the HTTP+JSON
//! binding (`/message:send`, `/tasks/{id}`, …, also under a `/{tenant}` prefix).

mod auth;
mod card;
mod extract;
mod jsonrpc;
mod rest;
mod serve;
mod sse;
mod upkeep;

pub use serve::{
    DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_IDLE_TIMEOUT, SHUTDOWN_GRACE, default_max_connections,
};
pub use upkeep::Upkeep;

use crate::agent::{Agent, DynAgent};
use crate::auth::{Authenticator, DynAuthenticator, Principal};
use crate::engine::{Engine, EventBus, Leases, LocalBus, Replication};
use crate::handler::{RESUMABLE_STREAMS_EXTENSION, RequestHandler};
use crate::store::{MemoryStore, Store};
use a2a_core::{
    AgentCard, AgentExtension, AgentInterface, BINDING_HTTP_JSON, BINDING_JSONRPC,
    PROTOCOL_VERSION_V03,
};
use axum::Router;
use axum::http;
use axum::routing::{get, post};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The default request body limit: 10 MiB.
pub const DEFAULT_BODY_LIMIT: usize = 10 * 1024 * 1024;
/// The default interval of SSE keep-alive comments.
pub const DEFAULT_KEEP_ALIVE: Duration = Duration::from_secs(15);

/// How long a `messageId` is remembered for de-duplicating retried sends, by default.
pub const DEFAULT_DEDUP_WINDOW: Duration = Duration::from_secs(24 * 60 * 60);

/// Background upkeep settings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Maintenance {
    pub(crate) retention: Option<Duration>,
    pub(crate) dedup_window: Duration,
    pub(crate) sweep_interval: Duration,
    /// The lease time-to-live, when leases are shared: the upkeep renews this engine's leases
    /// and looks for orphans.
    pub(crate) lease_ttl: Option<Duration>,
}

/// Settings shared by the HTTP handlers.
#[derive(Debug)]
pub(crate) struct HttpConfig {
    pub(crate) body_limit: usize,
    pub(crate) keep_alive: Duration,
}

/// Everything the HTTP handlers share.
#[derive(Debug)]
pub(crate) struct AppState {
    pub(crate) handler: Arc<RequestHandler>,
    pub(crate) auth: Option<Arc<dyn DynAuthenticator>>,
    pub(crate) maintenance: Maintenance,
    pub(crate) config: HttpConfig,
    pub(crate) card: card::CardCache,
}

/// An A2A agent server. Build one with [`Server::builder`], then run it on a listener with
/// [`Server::serve`] (the recommended way):
///
/// ```no_run
/// # use a2a_core::{AgentCard, Error};
/// # use a2a_server::{Agent, RequestContext, Server, TaskEvents};
/// # struct Echo;
/// # impl Agent for Echo {
/// #     async fn execute(&self, _: RequestContext, e: TaskEvents) -> Result<(), Error> { e.complete(None).await }
/// # }
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let card = AgentCard::builder("Echo", "Repeats what you say").build();
/// let server = Server::builder(Echo)
///     .agent_card(card)
///     .public_url("http://127.0.0.1:8080")
///     .build()?;
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// server
///     .serve_with_shutdown(listener, async {
///         let _ = tokio::signal::ctrl_c().await;
///     })
///     .await?;
/// # Ok(()) }
/// ```
///
/// Or mount [`Server::into_router`] in your own axum app, and spawn the server's
/// [`Server::upkeep`] (retention sweeps; [`Server::serve`] runs it itself):
///
/// ```no_run
/// # use a2a_core::Error;
/// # use a2a_server::{Agent, RequestContext, Server, TaskEvents};
/// # struct Echo;
/// # impl Agent for Echo {
/// #     async fn execute(&self, _: RequestContext, e: TaskEvents) -> Result<(), Error> { e.complete(None).await }
/// # }
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let server = Server::builder(Echo).public_url("http://127.0.0.1:8080").build()?;
/// tokio::spawn(server.upkeep());
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// axum::serve(listener, server.into_router()).await?;
/// # Ok(()) }
/// ```
///
/// `axum::serve` then runs it without the protections [`Server::serve`] adds, which you must
/// provide yourself (in your HTTP server, or a proxy in front): a cap on open connections, a
/// header-read timeout and an idle-connection timeout (that must not cut SSE streams, which
/// only send a keep-alive comment every [`ServerBuilder::keep_alive`]), and `TCP_NODELAY` on
/// accepted sockets. Without them a client holding many idle or slowly-sending connections can
/// exhaust the process's file descriptors and starve every other client.
#[derive(Debug)]
pub struct Server {
    state: Arc<AppState>,
    limits: serve::ConnectionLimits,
}

/// A configuration mistake found by [`ServerBuilder::build`].
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

/// Builds a [`Server`].
#[must_use]
pub struct ServerBuilder {
    agent: Arc<dyn DynAgent>,
    card: Option<AgentCard>,
    extended_card: Option<crate::handler::ExtendedCardFn>,
    auth: Option<Arc<dyn DynAuthenticator>>,
    store: Option<Arc<dyn Store>>,
    public_url: String,
    body_limit: usize,
    keep_alive: Duration,
    streaming: bool,
    retention: Option<Duration>,
    dedup_window: Duration,
    sweep_interval: Duration,
    push: Option<crate::push::PushSettings>,
    check_input_modes: bool,
    header_read_timeout: Duration,
    idle_timeout: Duration,
    max_connections: Option<usize>,
    bus: Option<Arc<dyn EventBus>>,
    leases: Option<Arc<dyn Leases>>,
    lease_ttl: Duration,
    replica_id: Option<String>,
}

impl std::fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("public_url", &self.public_url)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Starts building a server for `agent`.
    pub fn builder<A: Agent>(agent: A) -> ServerBuilder {
        ServerBuilder {
            agent: Arc::new(agent),
            card: None,
            extended_card: None,
            auth: None,
            store: None,
            public_url: "http://127.0.0.1:8080".to_owned(),
            body_limit: DEFAULT_BODY_LIMIT,
            keep_alive: DEFAULT_KEEP_ALIVE,
            streaming: true,
            retention: None,
            dedup_window: DEFAULT_DEDUP_WINDOW,
            sweep_interval: Duration::from_secs(60),
            push: None,
            check_input_modes: true,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_connections: None,
            bus: None,
            leases: None,
            lease_ttl: crate::engine::DEFAULT_LEASE_TTL,
            replica_id: None,
        }
    }

    /// The transport-independent handler (for custom transports and tests).
    pub fn handler(&self) -> Arc<RequestHandler> {
        self.state.handler.clone()
    }

    /// The agent card as served (with `supportedInterfaces` and capabilities filled in).
    pub fn agent_card(&self) -> &AgentCard {
        &self.state.handler.card
    }

    /// A token that, when cancelled, ends every open stream and signals running agents to
    /// stop (through their cancellation tokens). Call it when shutting down.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.state.handler.rt.shutdown.clone()
    }

    /// Makes everything stored so far durable (call after the HTTP server stopped).
    pub async fn flush(&self) -> Result<(), crate::store::StoreError> {
        self.state.handler.rt.store.sync().await
    }

    /// The axum router with every route of both bindings and the agent card. It starts
    /// nothing in the background: spawn [`Server::upkeep`] (taken before this call) for the
    /// retention sweeps, or use [`Server::serve`], which runs both. Start-up recovery and the
    /// resumption of pending webhook deliveries run before the first request either way
    /// ([`RequestHandler::recover`]).
    pub fn into_router(self) -> Router {
        let state = self.state;
        let card_routes = Router::new()
            .route(
                "/.well-known/agent-card.json",
                get(card::serve).fallback(card::wrong_method),
            )
            .route(
                "/.well-known/agent.json",
                get(card::serve).fallback(card::wrong_method),
            )
            .layer(
                tower_http::cors::CorsLayer::new()
                    .allow_origin(tower_http::cors::Any)
                    .allow_methods([http::Method::GET])
                    .expose_headers([http::header::ETAG, http::header::LAST_MODIFIED]),
            );
        let a2a_routes = Router::new()
            .route("/", post(jsonrpc::serve).fallback(jsonrpc::wrong_method))
            .fallback(rest::serve)
            .layer(axum::middleware::from_fn_with_state(
                state.clone(),
                auth::authenticate,
            ));
        a2a_routes.merge(card_routes).with_state(state)
    }
}

impl ServerBuilder {
    /// The agent card. Its `supportedInterfaces` are replaced by the bindings this server
    /// mounts at the public URL, and `capabilities.streaming` by what the server offers.
    pub fn agent_card(mut self, card: AgentCard) -> Self {
        self.card = Some(card);
        self
    }

    /// The extended card served to authenticated callers of `GetExtendedAgentCard` (declares
    /// the capability). Its interfaces are filled in like the public card's. Needs an
    /// [`authenticator`](Self::authenticator): without one, [`build`](Self::build) refuses
    /// with [`BuildError::ExtendedCardWithoutAuthentication`].
    pub fn extended_agent_card(self, card: AgentCard) -> Self {
        self.extended_agent_card_fn(move |_| Some(card.clone()))
    }

    /// A per-caller extended card: `build(principal)` returns the card for that caller, or
    /// `None` (ExtendedAgentCardNotConfigured). Declares the capability.
    pub fn extended_agent_card_fn(
        mut self,
        build: impl Fn(&Principal) -> Option<AgentCard> + Send + Sync + 'static,
    ) -> Self {
        self.extended_card = Some(Arc::new(build));
        self
    }

    /// Authenticates every A2A call (the agent card stays public): a 401 with
    /// `WWW-Authenticate` when credentials are missing or wrong. The authenticator's schemes
    /// are declared in the card. Tasks are then visible only to the principal that created
    /// them.
    pub fn authenticator(mut self, auth: impl Authenticator) -> Self {
        self.auth = Some(Arc::new(auth));
        self
    }

    /// Where tasks, message claims and webhook registrations are stored (default: in memory;
    /// use [`crate::SledStore`] to persist). Any [`Store`] does: a type that implements
    /// [`TaskStore`](crate::TaskStore), [`ClaimStore`](crate::ClaimStore) and
    /// [`PushStore`](crate::PushStore).
    pub fn task_store(mut self, store: impl Store) -> Self {
        self.store = Some(Arc::new(store));
        self
    }

    /// Like [`Self::task_store`], for a store already behind an `Arc`.
    pub fn task_store_arc(mut self, store: Arc<dyn Store>) -> Self {
        self.store = Some(store);
        self
    }

    /// The base URL clients reach this server at, as advertised in the card
    /// (default `http://127.0.0.1:8080`).
    pub fn public_url(mut self, url: impl Into<String>) -> Self {
        self.public_url = url.into();
        self
    }

    /// The largest accepted request body (default 10 MiB); larger ones get HTTP 413.
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    /// The interval of SSE keep-alive comments (default 15 s).
    pub fn keep_alive(mut self, every: Duration) -> Self {
        self.keep_alive = every;
        self
    }

    /// Whether to offer streaming (SendStreamingMessage, SubscribeToTask); default on.
    pub fn streaming(mut self, on: bool) -> Self {
        self.streaming = on;
        self
    }

    /// Deletes terminal tasks (and their event logs) this long after their last status change,
    /// checked every sweep interval. Default: keep forever.
    pub fn retention(mut self, ttl: Duration) -> Self {
        self.retention = Some(ttl);
        self
    }

    /// How long a `messageId` is remembered to de-duplicate retried sends (default 24 h).
    pub fn dedup_window(mut self, window: Duration) -> Self {
        self.dedup_window = window;
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

    /// How this server's replicas tell each other about tasks (default: a [`LocalBus`] of its
    /// own, enough for one process). Replicas that share a task store must share a bus.
    pub fn event_bus(mut self, bus: Arc<dyn EventBus>) -> Self {
        self.bus = Some(bus);
        self
    }

    /// Execution leases shared by the replicas of this server (default: none, this process
    /// runs every task). With them, the upkeep ([`Server::upkeep`], run by [`Server::serve`])
    /// renews this replica's leases and resumes the tasks of replicas that stopped renewing
    /// theirs.
    pub fn leases(mut self, leases: Arc<dyn Leases>) -> Self {
        self.leases = Some(leases);
        self
    }

    /// How long an execution lease lasts without renewal (default 30 s): how soon the tasks of a
    /// replica that died are resumed elsewhere. Renewed every third of it. Webhook delivery
    /// leases last as long (renewed while a webhook is being posted to).
    pub fn lease_ttl(mut self, ttl: Duration) -> Self {
        self.lease_ttl = ttl.max(Duration::from_millis(30));
        self
    }

    /// This replica's name in the shared execution leases and in the store's webhook delivery
    /// leases (default: a random UUID per server).
    pub fn replica_id(mut self, id: impl Into<String>) -> Self {
        self.replica_id = Some(id.into());
        self
    }

    /// How often retention and message-id expiry run (default 60 s).
    pub fn sweep_interval(mut self, every: Duration) -> Self {
        self.sweep_interval = every.max(Duration::from_millis(10));
        self
    }

    /// How long a client may take to send a complete request head (default 10 s); a slower
    /// one (slowloris) is disconnected. For HTTP/1.1 the clock also runs while a keep-alive
    /// connection waits for its next request, so such a connection is closed after the
    /// shorter of this and [`Self::idle_timeout`]. Applies to [`Server::serve`].
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        // hyper adds it to `Instant::now()`, which panics on overflow: a year is forever.
        self.header_read_timeout = timeout.min(Duration::from_secs(365 * 24 * 60 * 60));
        self
    }

    /// Closes a connection that has had no request in flight for this long (default 60 s):
    /// one that never sends anything, an idle HTTP/1.1 keep-alive connection, an idle HTTP/2
    /// connection. A request is in flight until its response has been sent, so an open SSE
    /// stream (which sends keep-alive comments) is never idle. Applies to [`Server::serve`].
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// The most client connections open at once (at least 1; default:
    /// [`default_max_connections`], from the open-file limit). A connection beyond it is
    /// answered `503` and closed at once. Applies to [`Server::serve`].
    pub fn max_connections(mut self, max: usize) -> Self {
        self.max_connections = Some(max.max(1));
        self
    }

    /// The server, or the first configuration mistake.
    pub fn build(self) -> Result<Server, BuildError> {
        let url = self.public_url.trim_end_matches('/').to_owned();
        if !(url.starts_with("http://") || url.starts_with("https://")) || url.len() < 10 {
            return Err(BuildError::PublicUrl(self.public_url));
        }
        let mut card = self
            .card
            .unwrap_or_else(|| AgentCard::builder("A2A agent", "An A2A agent").build());
        // A card that declares push notifications gets them, with default settings.
        let push = self.push.or_else(|| {
            card.capabilities
                .push_notifications()
                .then(crate::push::PushSettings::default)
        });
        card.capabilities.push_notifications = Some(push.is_some());
        card.supported_interfaces = vec![
            AgentInterface::new(BINDING_JSONRPC, url.clone()),
            AgentInterface::new(BINDING_HTTP_JSON, url.clone()),
            AgentInterface::new(BINDING_JSONRPC, url).with_protocol_version(PROTOCOL_VERSION_V03),
        ];
        card.capabilities.streaming = Some(self.streaming);
        if self.streaming
            && !card
                .capabilities
                .extensions
                .iter()
                .any(|e| e.uri.as_deref() == Some(RESUMABLE_STREAMS_EXTENSION))
        {
            card.capabilities.extensions.push(
                AgentExtension::new(RESUMABLE_STREAMS_EXTENSION).with_description(
                    "Every SSE event carries `id: <sequence>`; SubscribeToTask with \
                     `Last-Event-ID: <sequence>` replays exactly the events after it from the \
                     durable log, then continues live (also after a server restart).",
                ),
            );
        }
        let interfaces = card.supported_interfaces.clone();
        let extended = self
            .extended_card
            .map(|build| -> crate::handler::ExtendedCardFn {
                Arc::new(move |p: &Principal| {
                    build(p).map(|mut c| {
                        c.supported_interfaces = interfaces.clone();
                        c
                    })
                })
            });
        // Declared by the card or configured here; declared but not configured answers
        // ExtendedAgentCardNotConfigured.
        card.capabilities.extended_agent_card =
            Some(card.capabilities.extended_agent_card() || extended.is_some());
        if card.capabilities.extended_agent_card() && self.auth.is_none() {
            return Err(BuildError::ExtendedCardWithoutAuthentication);
        }
        if let Some(auth) = &self.auth {
            for (name, scheme) in auth.schemes() {
                card.security_schemes.insert(name, scheme);
            }
            let requirement = crate::auth::requirement(auth.as_ref());
            if !card.security_requirements.contains(&requirement) {
                card.security_requirements.push(requirement);
            }
        }
        let store = self.store.unwrap_or_else(|| Arc::new(MemoryStore::new()));
        let shutdown = CancellationToken::new();
        // This replica's name in the execution leases and in the webhook delivery leases.
        let owner: Arc<str> = (self.replica_id)
            .unwrap_or_else(|| uuid::Uuid::new_v4().to_string())
            .into();
        let lease_ttl = self.leases.is_some().then_some(self.lease_ttl);
        let pusher = match push {
            Some(settings) => Some(Arc::new(
                crate::push::Pusher::new(store.clone(), settings, shutdown.clone())
                    .map_err(BuildError::Push)?
                    .with_lease(owner.clone(), self.lease_ttl),
            )),
            None => None,
        };
        let replication = self.leases.map(|leases| Replication {
            leases,
            owner,
            ttl: self.lease_ttl,
        });
        let bus = self.bus.unwrap_or_else(|| Arc::new(LocalBus::new()));
        let engine = Engine::new(store, self.agent, shutdown, pusher, bus, replication);
        let handler = Arc::new(RequestHandler {
            rt: engine,
            card: card.clone(),
            extended_card: extended,
            serialized: Arc::new(crate::handler::SerializedTasks::new(
                crate::handler::SERIALIZED_CACHE_BYTES,
            )),
            check_input_modes: self.check_input_modes,
            recovered: tokio::sync::OnceCell::new(),
        });
        Ok(Server {
            state: Arc::new(AppState {
                auth: self.auth,
                card: card::CardCache::new(&card),
                handler,
                maintenance: Maintenance {
                    retention: self.retention,
                    dedup_window: self.dedup_window,
                    sweep_interval: self.sweep_interval,
                    lease_ttl,
                },
                config: HttpConfig {
                    body_limit: self.body_limit,
                    keep_alive: self.keep_alive,
                },
            }),
            limits: serve::ConnectionLimits {
                header_read_timeout: self.header_read_timeout,
                idle_timeout: self.idle_timeout,
                max_connections: self.max_connections.unwrap_or_else(default_max_connections),
            },
        })
    }
}
