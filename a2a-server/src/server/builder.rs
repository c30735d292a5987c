//! [`ServerBuilder`]: the HTTP server's settings, around the handler's ([`HandlerBuilder`]).

use super::{
    AppState, DEFAULT_BODY_LIMIT, DEFAULT_DEDUP_WINDOW, DEFAULT_KEEP_ALIVE, HttpConfig,
    Maintenance, Server, default_max_connections,
};
use crate::auth::{Authenticator, DynAuthenticator, Principal};
use crate::engine::{EventBus, Leases};
use crate::handler::{BuildError, HandlerBuilder, RESUMABLE_STREAMS_EXTENSION};
use crate::http::{CardCache, CardKeys};
use crate::store::Store;
use a2a_core::{
    AgentCard, AgentExtension, AgentInterface, BINDING_GRPC, BINDING_HTTP_JSON, BINDING_JSONRPC,
    PROTOCOL_VERSION_1_1, PROTOCOL_VERSION_V03,
};
use std::sync::Arc;
use std::time::Duration;

/// Builds a [`Server`].
#[must_use]
pub struct ServerBuilder {
    /// What the handler needs: the agent, its card, the store, push, the replicas' seams.
    handler: HandlerBuilder,
    auth: Option<Arc<dyn DynAuthenticator>>,
    anonymous: bool,
    public_url: String,
    body_limit: usize,
    keep_alive: Duration,
    streaming: bool,
    retention: Option<Duration>,
    dedup_window: Duration,
    sweep_interval: Duration,
    header_read_timeout: Duration,
    idle_timeout: Duration,
    max_connections: Option<usize>,
    send_timeout: Duration,
    max_output: Option<u64>,
    max_output_per_connection: Option<u64>,
    grpc: bool,
    grpc_public_url: Option<String>,
    grpc_listener: Option<tokio::net::TcpListener>,
    metrics: Option<crate::Metrics>,
    #[cfg(feature = "trust")]
    card_signing: Vec<a2a_core::signing::CardSigningKey>,
}

impl std::fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("public_url", &self.public_url)
            .finish_non_exhaustive()
    }
}

impl ServerBuilder {
    pub(super) fn new(handler: HandlerBuilder) -> Self {
        Self {
            handler,
            auth: None,
            anonymous: false,
            public_url: "http://127.0.0.1:8080".to_owned(),
            body_limit: DEFAULT_BODY_LIMIT,
            keep_alive: DEFAULT_KEEP_ALIVE,
            streaming: true,
            retention: None,
            dedup_window: DEFAULT_DEDUP_WINDOW,
            sweep_interval: Duration::from_secs(60),
            header_read_timeout: super::DEFAULT_HEADER_READ_TIMEOUT,
            idle_timeout: super::DEFAULT_IDLE_TIMEOUT,
            max_connections: None,
            send_timeout: crate::serve::DEFAULT_SEND_TIMEOUT,
            max_output: None,
            max_output_per_connection: None,
            grpc: true,
            grpc_public_url: None,
            grpc_listener: None,
            metrics: None,
            #[cfg(feature = "trust")]
            card_signing: Vec::new(),
        }
    }
}

impl ServerBuilder {
    /// The agent card. Its `supportedInterfaces` are replaced by the bindings this server
    /// mounts at the public URL, and `capabilities.streaming` by what the server offers.
    pub fn agent_card(mut self, card: AgentCard) -> Self {
        self.handler = self.handler.agent_card(card);
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
        self.handler = self.handler.extended_agent_card_fn(Arc::new(build));
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

    /// Also serves requests that present no credentials (default: off, they get 401), as an
    /// anonymous caller: its tasks are visible only to anonymous requests, and
    /// `GetExtendedAgentCard` still needs an authenticated caller. Credentials that are
    /// presented must be valid. The card then declares the authenticator's schemes (for the
    /// extended card) but no security requirement.
    pub fn anonymous_access(mut self, on: bool) -> Self {
        self.anonymous = on;
        self
    }

    /// Where tasks are stored (default: in memory; use [`crate::SledStore`] to persist).
    pub fn task_store(mut self, store: impl Store) -> Self {
        self.handler = self.handler.task_store(store);
        self
    }

    /// Like [`Self::task_store`], for a store already behind an `Arc`.
    pub fn task_store_arc(mut self, store: Arc<dyn Store>) -> Self {
        self.handler = self.handler.task_store_arc(store);
        self
    }

    /// Where message claims are kept (default: in the task store; see
    /// [`HandlerBuilder::claim_store`]).
    pub fn claim_store(mut self, claims: impl crate::store::ClaimStore) -> Self {
        self.handler = self.handler.claim_store(claims);
        self
    }

    /// Whether retried sends are recognized (default on; see [`HandlerBuilder::dedup`]).
    pub fn dedup(mut self, on: bool) -> Self {
        self.handler = self.handler.dedup(on);
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

    /// The interval of SSE keep-alive comments, and of HTTP/2 pings, which keep quiet gRPC
    /// streams alive (default 15 s).
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
        self.handler = self.handler.push_notifications(settings);
        self
    }

    /// Whether to refuse a message part whose `mediaType` the card's input modes
    /// (`defaultInputModes` and the skills' `inputModes`; `type/*` and `*/*` wildcards) do not
    /// cover, with ContentTypeNotSupported (default on). Parts without a `mediaType` are not
    /// checked, nor is anything when the card declares no input modes. Turn it off to accept
    /// anything and let the agent decide.
    pub fn check_input_modes(mut self, on: bool) -> Self {
        self.handler = self.handler.check_input_modes(on);
        self
    }

    /// Whether a message may start a task in a context of the client's choosing (default on).
    /// Off, a new task's `contextId` must be one this server issued to the caller, else the
    /// message is refused with InvalidParams ([`HandlerBuilder::client_context_ids`]).
    pub fn client_context_ids(mut self, on: bool) -> Self {
        self.handler = self.handler.client_context_ids(on);
        self
    }

    /// Whether a message must carry its `messageId` (default on); off, the server names one
    /// that has none ([`HandlerBuilder::message_id_required`]).
    pub fn message_id_required(mut self, on: bool) -> Self {
        self.handler = self.handler.message_id_required(on);
        self
    }

    /// How this server's replicas tell each other about tasks (default: a [`LocalBus`](crate::LocalBus) of its
    /// own, enough for one process). Replicas that share a task store must share a bus.
    pub fn event_bus(mut self, bus: Arc<dyn EventBus>) -> Self {
        self.handler = self.handler.event_bus(bus);
        self
    }

    /// Execution leases shared by the replicas of this server (default: none, this process
    /// runs every task). With them, the upkeep ([`Server::upkeep`], run by [`Server::serve`])
    /// renews this replica's leases and resumes the tasks of replicas that stopped renewing
    /// theirs.
    pub fn leases(mut self, leases: Arc<dyn Leases>) -> Self {
        self.handler = self.handler.leases(leases);
        self
    }

    /// How long an execution lease lasts without renewal (default 30 s): how soon the tasks of a
    /// replica that died are resumed elsewhere. Renewed every third of it.
    pub fn lease_ttl(mut self, ttl: Duration) -> Self {
        self.handler = self.handler.lease_ttl(ttl);
        self
    }

    /// Bounds long-poll `GetTask` (A2A 1.1): see
    /// [`HandlerBuilder::long_poll`](crate::HandlerBuilder::long_poll).
    pub fn long_poll(mut self, wait: Duration, max_held: usize) -> Self {
        self.handler = self.handler.long_poll(wait, max_held);
        self
    }

    /// This replica's name in the shared leases (default: a random UUID per server).
    pub fn replica_id(mut self, id: impl Into<String>) -> Self {
        self.handler = self.handler.replica_id(id);
        self
    }

    /// How often retention and message-id expiry run (default 60 s).
    pub fn sweep_interval(mut self, every: Duration) -> Self {
        self.sweep_interval = every.max(Duration::from_millis(10));
        self
    }

    /// How long a client may take to send a complete HTTP/1.1 request head (default 10 s),
    /// timed from its first byte (the first request's from the moment the connection opened);
    /// a slower one (slowloris) is disconnected. A kept-alive connection waiting for its next
    /// request is not timed by this but by [`Self::idle_timeout`]. Applies to
    /// [`Server::serve`] and to [`Server::protections`].
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        // A year is forever.
        self.header_read_timeout = timeout.min(Duration::from_secs(365 * 24 * 60 * 60));
        self
    }

    /// Closes a connection that has had no request in flight for this long (default 60 s):
    /// an idle HTTP/1.1 keep-alive connection, an idle HTTP/2 connection, one that never sends
    /// anything (which [`Self::header_read_timeout`] also bounds, from the connection's
    /// opening). A request is in flight until its response has been sent, so an open SSE
    /// stream (which sends keep-alive comments) is never idle. Applies to [`Server::serve`] and
    /// to [`Server::protections`].
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// The most client connections open at once (at least 1; default:
    /// [`default_max_connections`], from the open-file limit). At the cap, the quietest
    /// connection that serves no request is closed to admit a new one, which is answered `503`
    /// and closed at once only when every connection is serving a request. Applies to
    /// [`Server::serve`] and to [`Server::protections`].
    pub fn max_connections(mut self, max: usize) -> Self {
        self.max_connections = Some(max.max(1));
        self
    }

    /// Closes a connection whose output has waited this long for a peer that takes none of it
    /// (default 30 s, [`crate::serve::DEFAULT_SEND_TIMEOUT`]; nginx's `send_timeout`): timed
    /// from the last progress, not over a whole answer. Applies to [`Server::serve`] and to
    /// [`Server::protections`].
    pub fn send_timeout(mut self, timeout: Duration) -> Self {
        self.send_timeout = timeout;
        self
    }

    /// The most bytes of answers held, built and not yet taken by the HTTP server, for all
    /// connections together (default: [`crate::serve::default_max_output`], from the
    /// machine's memory). An answer that would pass it is refused (`503`, or
    /// `RESOURCE_EXHAUSTED` on gRPC) unless nothing else is held. Applies to
    /// [`Server::serve`] and to [`Server::protections`].
    pub fn max_output(mut self, bytes: u64) -> Self {
        self.max_output = Some(bytes);
        self
    }

    /// The most bytes of answers held for one connection (default:
    /// [`crate::serve::default_max_output_per_connection`]). A request on a connection at the
    /// cap is refused without being served; an answer that would pass it is refused unless
    /// the connection holds nothing else. Applies to [`Server::serve`] and to
    /// [`Server::protections`].
    pub fn max_output_per_connection(mut self, bytes: u64) -> Self {
        self.max_output_per_connection = Some(bytes);
        self
    }

    /// Serve the gRPC binding (`lf.a2a.v1.A2AService`) on the HTTP port (default: on): requests
    /// with `content-type: application/grpc` are routed to it. The card then lists a `GRPC`
    /// interface at [`ServerBuilder::grpc_public_url`].
    pub fn grpc(mut self, on: bool) -> Self {
        self.grpc = on;
        self
    }

    /// The address gRPC clients use, as the card advertises it: `host:port`, as the spec writes
    /// gRPC URLs (default: the host and port of [`ServerBuilder::public_url`], or of the
    /// [`ServerBuilder::grpc_listener`] if there is one). A URL with a scheme is accepted too.
    pub fn grpc_public_url(mut self, url: impl Into<String>) -> Self {
        self.grpc_public_url = Some(url.into());
        self
    }

    /// Also serve gRPC on a listener of its own (it answers other requests with HTTP 415).
    /// [`Server::serve`] runs it beside the HTTP listener, with the same connection limits.
    /// Turns [`ServerBuilder::grpc`] on.
    pub fn grpc_listener(mut self, listener: tokio::net::TcpListener) -> Self {
        self.grpc = true;
        self.grpc_listener = Some(listener);
        self
    }

    /// The `host:port` the card advertises for gRPC.
    fn grpc_url(&self, url: &str) -> String {
        if let Some(explicit) = &self.grpc_public_url {
            return explicit.clone();
        }
        let https = url.starts_with("https://");
        let authority = url
            .split_once("://")
            .map_or(url, |(_, rest)| rest)
            .split('/')
            .next()
            .unwrap_or_default();
        // The host, without a port (an IPv6 literal keeps its brackets).
        let host = match authority.rsplit_once(':') {
            Some((host, port)) if !port.contains(']') => host,
            _ => authority,
        };
        let port = match self
            .grpc_listener
            .as_ref()
            .and_then(|l| l.local_addr().ok())
        {
            Some(addr) => addr.port(),
            None => match authority.rsplit_once(':') {
                Some((_, port)) if !port.contains(']') => port.parse().unwrap_or(80),
                _ if https => 443,
                _ => 80,
            },
        };
        format!("{host}:{port}")
    }

    /// Counts requests, streams, tasks, events, store operations, webhook deliveries and
    /// authentication failures in `metrics` (off by default); serve them with
    /// [`Metrics::router`](crate::Metrics::router) on a listener of their own.
    pub fn metrics(mut self, metrics: crate::Metrics) -> Self {
        self.handler = self.handler.metrics(metrics.clone());
        self.metrics = Some(metrics);
        self
    }

    /// Signs the agent card (and the extended card) with `key`: one signature per key added
    /// (spec §8.4: a JWS over the RFC 8785 canonical card). The keys' public JWK set is served
    /// at `/.well-known/jwks.json`, and a key without a `jku` of its own names that URL.
    /// Each form of the card the server serves (v1.0, and v1.0 with the v0.3 fields for
    /// clients that do not ask for `A2A-Version: 1.0`) is signed as served.
    #[cfg(feature = "trust")]
    pub fn card_signing_key(mut self, key: a2a_core::signing::CardSigningKey) -> Self {
        self.card_signing.push(key);
        self
    }

    /// The card's signing keys, each naming the served JWK set as its `jku` unless it names
    /// its own.
    fn signing(&mut self, url: &str) -> CardKeys {
        #[cfg(feature = "trust")]
        {
            let jku = format!("{url}{}", crate::http::JWKS_PATH);
            let keys = std::mem::take(&mut self.card_signing)
                .into_iter()
                .map(|k| match k.jku() {
                    Some(_) => k,
                    None => k.with_jku(jku.clone()),
                })
                .collect();
            CardKeys::new(keys)
        }
        #[cfg(not(feature = "trust"))]
        {
            let _ = url;
            CardKeys::default()
        }
    }

    /// The server, or the first configuration mistake.
    pub fn build(mut self) -> Result<Server, BuildError> {
        let url = self.public_url.trim_end_matches('/').to_owned();
        if !(url.starts_with("http://") || url.starts_with("https://")) || url.len() < 10 {
            return Err(BuildError::PublicUrl(self.public_url));
        }
        let grpc_url = self.grpc.then(|| self.grpc_url(&url));
        let card = self.handler.card();
        card.supported_interfaces = vec![
            AgentInterface::new(BINDING_JSONRPC, url.clone()),
            AgentInterface::new(BINDING_HTTP_JSON, url.clone()),
        ];
        if let Some(grpc_url) = grpc_url {
            card.supported_interfaces
                .push(AgentInterface::new(BINDING_GRPC, grpc_url));
        }
        // Each binding speaks 1.1 too (task generations), listed after the 1.0 interfaces so
        // that a 1.0 client taking the first interface of its binding gets a 1.0 one.
        let v11: Vec<_> = (card.supported_interfaces.iter())
            .map(|i| i.clone().with_protocol_version(PROTOCOL_VERSION_1_1))
            .collect();
        card.supported_interfaces.extend(v11);
        card.supported_interfaces.push(
            AgentInterface::new(BINDING_JSONRPC, url.clone())
                .with_protocol_version(PROTOCOL_VERSION_V03),
        );
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
        if card.capabilities.extended_agent_card() && self.auth.is_none() {
            return Err(BuildError::ExtendedCardWithoutAuthentication);
        }
        if let Some(auth) = &self.auth {
            for (name, scheme) in auth.schemes() {
                card.security_schemes.insert(name, scheme);
            }
            let requirement = crate::auth::requirement(auth.as_ref()).filter(|_| !self.anonymous);
            if let Some(requirement) = requirement
                && !card.security_requirements.contains(&requirement)
            {
                card.security_requirements.push(requirement);
            }
        }
        let interfaces = card.supported_interfaces.clone();
        let signing = self.signing(&url);
        let keys = signing.clone();
        self.handler.map_extended_card(|build| {
            Arc::new(move |p: &Principal| {
                build(p).map(|mut c| {
                    c.supported_interfaces = interfaces.clone();
                    keys.sign(&mut c);
                    c
                })
            })
        });
        let handler = Arc::new(self.handler.build()?);
        let lease_ttl = handler.rt.replication.as_ref().map(|r| r.ttl);
        Ok(Server {
            state: Arc::new(AppState {
                auth: self.auth,
                anonymous: self.anonymous,
                card: CardCache::new(&handler.card, &signing),
                jwks: signing.jwks(),
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
                    grpc: self.grpc,
                },
                metrics: self.metrics.map(|m| m.0),
            }),
            protections: crate::serve::Protections::new()
                .max_connections(self.max_connections.unwrap_or_else(default_max_connections))
                .header_read_timeout(self.header_read_timeout)
                .idle_timeout(self.idle_timeout)
                .http2_keep_alive(self.keep_alive)
                .send_timeout(self.send_timeout)
                .max_output(
                    self.max_output
                        .unwrap_or_else(crate::serve::default_max_output),
                )
                .max_output_per_connection(
                    self.max_output_per_connection
                        .unwrap_or_else(crate::serve::default_max_output_per_connection),
                ),
            grpc_listener: self.grpc_listener,
        })
    }
}
