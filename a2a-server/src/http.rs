//! The HTTP side: [`Server`] (built with [`ServerBuilder`]) turns an [`Agent`] into an
//! [`axum::Router`] serving the agent card, the JSON-RPC binding (`POST /`) and the HTTP+JSON
//! binding (`/message:send`, `/tasks/{id}`, …, also under a `/{tenant}` prefix).

mod auth;
mod binding;
mod builder;
mod card;
mod dispatch;
mod extract;
mod grpc;
mod jsonrpc;
mod rest;
mod sse;
mod upkeep;

pub use crate::serve::{
    DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_IDLE_TIMEOUT, SHUTDOWN_GRACE, ServerHandle,
    default_max_connections,
};
pub use builder::ServerBuilder;
pub use upkeep::Upkeep;

pub(crate) use grpc::is_grpc;

use crate::agent::Agent;
use crate::auth::DynAuthenticator;
use crate::handler::RequestHandler;
use a2a_core::AgentCard;
use auth::AuthLayer;
use axum::Router;
use axum::extract::{Request, State};
use axum::handler::Handler as _;
use axum::http;
use axum::routing::get;
use binding::{Binding, Door};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tower::Layer as _;

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

/// Everything the HTTP handlers share.
#[derive(Debug)]
pub(crate) struct AppState {
    pub(crate) handler: Arc<RequestHandler>,
    pub(crate) auth: Option<Arc<dyn DynAuthenticator>>,
    /// Requests without credentials are served anonymously ([`ServerBuilder::anonymous_access`]).
    pub(crate) anonymous: bool,
    pub(crate) maintenance: Maintenance,
    pub(crate) config: HttpConfig,
    pub(crate) card: card::CardCache,
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
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
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
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
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

    /// The axum router with every route of the bindings and the agent card (gRPC calls, told
    /// apart by their `content-type`, go to the gRPC binding whatever their path, but the
    /// card's). The bindings are inside the server's authentication, a tower layer that the
    /// card's routes (public) are not in. It starts nothing in the background: spawn
    /// [`Server::upkeep`] (taken before this call) for the retention sweeps, or use
    /// [`Server::serve`], which runs both.
    /// Start-up recovery and the resumption of pending webhook deliveries run before the first
    /// request either way ([`RequestHandler::recover`]).
    pub fn into_router(self) -> Router {
        let state = self.state;
        let card_routes = Router::new()
            .route(
                a2a_core::AGENT_CARD_PATH,
                get(card::serve).fallback(card::wrong_method),
            )
            .route(
                a2a_core::LEGACY_AGENT_CARD_PATH,
                get(card::serve).fallback(card::wrong_method),
            );
        let card_routes = match state.jwks {
            Some(_) => card_routes.route(
                card::JWKS_PATH,
                get(card::jwks).fallback(card::wrong_method),
            ),
            None => card_routes,
        }
        .layer(
            tower_http::cors::CorsLayer::new()
                .allow_origin(tower_http::cors::Any)
                .allow_methods([http::Method::GET])
                .expose_headers([http::header::ETAG, http::header::LAST_MODIFIED]),
        );
        // The bindings, inside the authentication layer (the card stays public).
        let door = Door::Http {
            grpc: state.config.grpc,
        };
        let router = card_routes.merge(bindings(&state, door));
        observed(router, &state).with_state(state)
    }

    /// The router of a listener of gRPC only.
    pub(crate) fn grpc_router(state: Arc<AppState>) -> Router {
        let router = bindings(&state, Door::GrpcOnly);
        observed(router, &state).with_state(state)
    }
}

/// A response of `status` whose body is `bytes` of type `content_type` (a binding's JSON),
/// with that one content type set once.
pub(crate) fn bytes_response(
    status: http::StatusCode,
    content_type: http::HeaderValue,
    bytes: Vec<u8>,
) -> axum::response::Response {
    let mut response = axum::response::Response::new(axum::body::Body::from(bytes));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(http::header::CONTENT_TYPE, content_type);
    response
}

/// A router sending every request (on the HTTP port, every one but the agent card's) to the
/// binding it is for behind `door` ([`Binding::of`]), inside the authentication layer when the
/// server has an authenticator.
fn bindings(state: &Arc<AppState>, door: Door) -> Router<Arc<AppState>> {
    let dispatch = move |State(state): State<Arc<AppState>>, request: Request| async move {
        let binding = Binding::of(&request, door);
        let response = binding.serve(&state, request).await;
        // Every 401 and 403 a binding answers (an operation's too) gets its challenge here.
        auth::challenge_of(binding, state.auth.as_deref(), response)
    };
    let dispatch = dispatch.with_state(state.clone());
    match AuthLayer::new(state, door) {
        Some(auth) => Router::new().fallback_service(auth.layer(dispatch)),
        None => Router::new().fallback_service(dispatch),
    }
}

/// `router` inside the telemetry layer (outermost, so that every binding's calls are
/// observed), if there is anything to observe.
fn observed(router: Router<Arc<AppState>>, state: &AppState) -> Router<Arc<AppState>> {
    match crate::telemetry::Layer::wanted(state.metrics.clone()) {
        Some(layer) => router.layer(layer),
        None => router,
    }
}
