//! The bindings over axum: [`Server::into_router`] is the [`axum::Router`] serving the agent
//! card, the JSON-RPC binding (`POST /`), the HTTP+JSON binding (`/message:send`,
//! `/tasks/{id}`, …, also under a `/{tenant}` prefix) and the gRPC binding, inside the
//! authentication layer. Building and running the [`Server`] is [`crate::server`]'s job.

mod auth;
mod binding;
mod card;
mod dispatch;
mod extract;
mod grpc;
mod jsonrpc;
mod rest;
mod sse;

pub(crate) use card::{CardCache, CardKeys, JWKS_PATH};
pub(crate) use grpc::{ContentType, is_grpc};

use crate::server::{AppState, Server};
use auth::AuthLayer;
use axum::Router;
use axum::http;
use axum::routing::get;
use binding::{Bindings, Door};
use std::sync::Arc;
use tower::Layer as _;

impl Server {
    /// The axum router with every route of the bindings and the agent card (gRPC calls, told
    /// apart by their `content-type`, go to the gRPC binding whatever their path, but the
    /// card's). The bindings are inside the server's authentication, a tower layer that the
    /// card's routes (public) are not in. It starts nothing in the background: spawn
    /// [`Server::upkeep`] (taken before this call) for the retention sweeps, or use
    /// [`Server::serve`], which runs both.
    /// Start-up recovery and the resumption of pending webhook deliveries run before the first
    /// request either way ([`RequestHandler::recover`](crate::RequestHandler::recover)).
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
            Some(_) => card_routes.route(JWKS_PATH, get(card::jwks).fallback(card::wrong_method)),
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

/// A response of `status` whose body is `value`'s JSON, of type `content_type` (a binding's),
/// or the error it failed to serialize with.
pub(crate) fn json_response(
    status: http::StatusCode,
    content_type: http::HeaderValue,
    value: &impl serde::Serialize,
) -> Result<axum::response::Response, serde_json::Error> {
    // Sized for a typical task: serializing into a growing empty vector reallocates and copies
    // several times.
    let mut bytes = Vec::with_capacity(2048);
    serde_json::to_writer(&mut bytes, value)?;
    let mut response = axum::response::Response::new(axum::body::Body::from(bytes));
    *response.status_mut() = status;
    (response.headers_mut()).insert(http::header::CONTENT_TYPE, content_type);
    Ok(response)
}

/// A router sending every request (on the HTTP port, every one but the agent card's) to the
/// binding it is for behind `door` ([`Binding::of`]), inside the authentication layer when the
/// server has an authenticator.
fn bindings(state: &Arc<AppState>, door: Door) -> Router<Arc<AppState>> {
    let bindings = Bindings::new(state.clone(), door);
    match AuthLayer::new(state, door) {
        Some(auth) => Router::new().fallback_service(auth.layer(bindings)),
        None => Router::new().fallback_service(bindings),
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
