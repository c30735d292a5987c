//! The HTTP side: [`Server`] (built with [`ServerBuilder`]) turns an [`Agent`] into an
//! [`axum::Router`] serving the agent card, the JSON-RPC binding (`POST /`) and the HTTP+JSON
//! binding (`/message:send`, `/tasks/{id}`, …, also under a `/{tenant}` prefix).

mod auth;
mod builder;
mod card;
mod dispatch;
mod extract;
mod grpc;
mod jsonrpc;
mod rest;
mod serve;
mod sse;
mod upkeep;

pub use builder::ServerBuilder;
pub use serve::{
    DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_IDLE_TIMEOUT, SHUTDOWN_GRACE, default_max_connections,
};
pub use upkeep::Upkeep;

pub(crate) use grpc::is_grpc;

use crate::agent::Agent;
use crate::auth::DynAuthenticator;
use crate::handler::RequestHandler;
use a2a_core::AgentCard;
use axum::Router;
use axum::http;
use axum::routing::get;
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

/// Everything the HTTP handlers share.
#[derive(Debug)]
pub(crate) struct AppState {
    pub(crate) handler: Arc<RequestHandler>,
    pub(crate) auth: Option<Arc<dyn DynAuthenticator>>,
    pub(crate) maintenance: Maintenance,
    pub(crate) config: HttpConfig,
    pub(crate) card: card::CardCache,
    /// The JWK set of the card's signing keys, when it is signed.
    pub(crate) jwks: Option<bytes::Bytes>,
    /// Request counts and latencies, when metrics are on.
    pub(crate) metrics: Option<Arc<crate::telemetry::MetricsInner>>,
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
    /// A listener of gRPC only ([`ServerBuilder::grpc_listener`]).
    grpc_listener: Option<tokio::net::TcpListener>,
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
    /// card's). It starts nothing in the background: spawn [`Server::upkeep`] (taken before
    /// this call) for the retention sweeps, or use [`Server::serve`], which runs both.
    /// Start-up recovery and the resumption of pending webhook deliveries run before the first
    /// request either way ([`RequestHandler::recover`]).
    pub fn into_router(self) -> Router {
        let state = self.state;
        // Every route but the fallback stays under `WELL_KNOWN_PREFIX`: `Server::serve` sends
        // the other paths to the fallback without asking the router (`Routes::call`).
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
        let router = card_routes.fallback(bindings);
        observed(router, &state).with_state(state)
    }

    /// [`Server::into_router`], and what [`Server::serve`] needs to reach the bindings without
    /// it (see [`Routes::call`]).
    fn into_routes(self) -> Routes {
        let telemetry = crate::telemetry::Layer::wanted(self.state.metrics.clone()).is_some();
        let direct = (!telemetry).then(|| self.state.clone());
        Routes {
            router: self.into_router(),
            direct,
        }
    }

    /// The routes of a listener of gRPC only.
    fn grpc_routes(state: Arc<AppState>) -> Routes {
        Routes::router(observed(Router::new().fallback(grpc::only), &state).with_state(state))
    }
}

/// A response of `status` whose body is `bytes` of type `content_type` (a binding's JSON),
/// built directly: axum's `(status, [(CONTENT_TYPE, ..)], bytes).into_response()` first sets
/// `application/octet-stream` and then replaces it (callgrind: 240 instructions of a
/// `GetTask`, 660 of a `SendMessage`).
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

/// Where [`Server::serve`] sends a request: [`Server::into_router`]'s router, or straight to
/// its fallback, [`bindings`], where the router would do nothing else.
#[derive(Clone)]
pub(crate) struct Routes {
    router: Router,
    /// The bindings' state, when the router's fallback has no layer around it (no telemetry).
    direct: Option<Arc<AppState>>,
}

impl std::fmt::Debug for Routes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Routes")
            .field("router", &self.router)
            .field("direct", &self.direct.is_some())
            .finish()
    }
}

impl Routes {
    /// A router of its own, every request through it (the gRPC listener's).
    fn router(router: Router) -> Self {
        Self {
            router,
            direct: None,
        }
    }

    /// Sends `request` straight to [`bindings`] if the router would only have called its
    /// fallback (any path but the agent card's, under `/.well-known/`; any method but `HEAD`,
    /// whose body the router drops), else through the router. Straight, it skips the router's
    /// matching, its extensions, its box around the handler's future and its response fix-ups
    /// (which hyper makes anyway): about 2.7k instructions of a 26.2k `GetTask` (callgrind).
    pub(crate) fn call(&self, request: axum::extract::Request) -> Answer {
        match &self.direct {
            Some(state)
                if !request
                    .uri()
                    .path()
                    .starts_with(a2a_core::WELL_KNOWN_PREFIX)
                    && request.method() != http::Method::HEAD =>
            {
                let state = axum::extract::State(state.clone());
                Answer::Bindings(Box::pin(bindings(state, request)))
            }
            // The router is always ready; a clone is a reference count.
            _ => Answer::Router(tower::Service::call(&mut self.router.clone(), request)),
        }
    }
}

/// The future of a request's answer (see [`Routes::call`]).
#[allow(clippy::large_enum_variant)] // one per request, moved once, into hyper's connection
pub(crate) enum Answer {
    Router(axum::routing::future::RouteFuture<std::convert::Infallible>),
    /// [`bindings`]' future, boxed (as the router boxes it).
    Bindings(std::pin::Pin<Box<dyn std::future::Future<Output = axum::response::Response> + Send>>),
}

impl std::future::Future for Answer {
    type Output = axum::response::Response;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        match self.get_mut() {
            Self::Router(future) => std::pin::Pin::new(future)
                .poll(cx)
                .map(|answer| answer.unwrap_or_else(|never| match never {})),
            Self::Bindings(future) => future.as_mut().poll(cx),
        }
    }
}

/// Every request but the agent card's. A gRPC call (told apart by its `content-type`, whatever
/// its path) goes to the gRPC binding, which authenticates it itself; the rest, authenticated,
/// to JSON-RPC at `/` and to HTTP+JSON elsewhere. One handler rather than a layer around each
/// route: axum boxes the future of every layer of a route again, about 1.5k instructions a
/// layer, a twentieth of a `GetTask` (callgrind).
async fn bindings(
    axum::extract::State(state): axum::extract::State<Arc<AppState>>,
    request: axum::extract::Request,
) -> axum::response::Response {
    if state.config.grpc && grpc::is_grpc(request.headers()) {
        // Boxed: the gRPC binding's future would make this one larger for every request.
        return Box::pin(grpc::serve(state, request)).await;
    }
    let request = match auth::admit(&state, request).await {
        Ok(r) => r,
        Err(refused) => return refused,
    };
    let response = if request.uri().path() != "/" {
        rest::serve(&state, request).await
    } else if request.method() == http::Method::POST {
        jsonrpc::serve(&state, request).await
    } else {
        jsonrpc::wrong_method(request.method())
    };
    auth::challenge(state.auth.as_deref(), response)
}

/// `router` inside the telemetry layer (outermost, so that every binding's calls are
/// observed), if there is anything to observe.
fn observed(router: Router<Arc<AppState>>, state: &AppState) -> Router<Arc<AppState>> {
    match crate::telemetry::Layer::wanted(state.metrics.clone()) {
        Some(layer) => router.layer(layer),
        None => router,
    }
}
