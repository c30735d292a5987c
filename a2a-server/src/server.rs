//! The [`Server`]: built with [`ServerBuilder`] (`builder`), run with [`Server::serve`] or
//! mounted with [`Server::into_router`] beside its [`Upkeep`] (`upkeep`), and the
//! [`ServerHandle`] that stays usable while it serves (`run`). The bindings it serves are in
//! `http`; the protections it serves them with, in [`crate::serve`].

mod builder;
mod run;
mod upkeep;

pub use crate::serve::{
    DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_IDLE_TIMEOUT, SHUTDOWN_GRACE, default_max_connections,
};
pub use builder::ServerBuilder;
pub use run::ServerHandle;
pub use upkeep::Upkeep;

use crate::agent::Agent;
use crate::auth::DynAuthenticator;
use crate::handler::RequestHandler;
use crate::http::CardCache;
use a2a_core::AgentCard;
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
    /// Serve the gRPC binding on the HTTP port.
    pub(crate) grpc: bool,
}

/// What a server's bindings, upkeep and handle share.
#[derive(Debug)]
pub(crate) struct AppState {
    pub(crate) handler: Arc<RequestHandler>,
    pub(crate) auth: Option<Arc<dyn DynAuthenticator>>,
    /// Requests without credentials are served anonymously ([`ServerBuilder::anonymous_access`]).
    pub(crate) anonymous: bool,
    pub(crate) maintenance: Maintenance,
    pub(crate) config: HttpConfig,
    pub(crate) card: CardCache,
    /// The JWK set of the card's signing keys, when it is signed.
    pub(crate) jwks: Option<bytes::Bytes>,
    /// Request counts and latencies, when metrics are on.
    pub(crate) metrics: Option<Arc<crate::telemetry::MetricsInner>>,
}

/// An A2A agent server. Build one with [`Server::builder`], then run it on a listener with
/// [`Server::serve`] (the recommended way), keeping a [`ServerHandle`] to stop it and flush
/// the store afterwards:
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
/// let handle = server.handle();
/// // tokio's own `TcpListener::bind` works too; this one queues 1,024 connections, not 128.
/// let listener = a2a_server::serve::bind("127.0.0.1:8080").await?;
/// server
///     .serve_with_shutdown(listener, async {
///         let _ = tokio::signal::ctrl_c().await;
///     })
///     .await?;
/// handle.flush().await?;
/// # Ok(()) }
/// ```
///
/// Or mount [`Server::into_router`] in your own axum app, spawn the server's
/// [`Server::upkeep`] (retention sweeps; [`Server::serve`] runs it itself), and put the
/// server's [`Server::protections`] around your `axum::serve` (a connection cap, header-read
/// and idle timeouts, `TCP_NODELAY`, a bounded shutdown; see [`crate::serve`]):
///
/// ```no_run
/// # use a2a_core::Error;
/// # use a2a_server::{Agent, RequestContext, Server, TaskEvents};
/// use a2a_server::serve::Connection;
/// # struct Echo;
/// # impl Agent for Echo {
/// #     async fn execute(&self, _: RequestContext, e: TaskEvents) -> Result<(), Error> { e.complete(None).await }
/// # }
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let server = Server::builder(Echo).public_url("http://127.0.0.1:8080").build()?;
/// let protections = server.protections();
/// tokio::spawn(server.upkeep());
/// let app = server.into_router().layer(protections.layer());
/// let listener = a2a_server::serve::bind("127.0.0.1:8080").await?;
/// axum::serve(
///     protections.listener(listener),
///     app.into_make_service_with_connect_info::<Connection>(),
/// )
/// .await?;
/// # Ok(()) }
/// ```
///
/// Both serve the same router: [`Server::serve`] adds the protections, the upkeep and HTTP/2
/// keep-alive pings around it, and nothing else. Without the protections, a client holding
/// many idle or slowly-sending connections can exhaust the process's file descriptors and
/// starve every other client.
#[derive(Debug)]
pub struct Server {
    pub(crate) state: Arc<AppState>,
    pub(crate) protections: crate::serve::Protections,
    /// A listener of gRPC only ([`ServerBuilder::grpc_listener`]).
    pub(crate) grpc_listener: Option<tokio::net::TcpListener>,
}

impl Server {
    /// Starts building a server for `agent`.
    pub fn builder<A: Agent>(agent: A) -> ServerBuilder {
        ServerBuilder::new(RequestHandler::builder(agent))
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
}
