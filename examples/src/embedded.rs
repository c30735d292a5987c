//! The composition of the `embedded` example, kept here so that its test runs the same code:
//! an application with its own axum routes and tower layer, an A2A server's router mounted
//! next to them, served by the application's own `axum::serve` inside the server's
//! connection protections ([`a2a_server::serve`]).

use a2a_server::serve::{Connection, Protections};
use a2a_server::{Server, ServerHandle};
use axum::http::{HeaderName, HeaderValue};
use axum::routing::get;
use std::future::Future;
use std::io;

/// The header the application's own layer adds to every response (the A2A ones included).
pub const SERVED_BY: HeaderName = HeaderName::from_static("x-served-by");

/// The application's router: its own `/health` route, the A2A server's routes (the agent
/// card, JSON-RPC at `POST /`, HTTP+JSON, gRPC) for everything else, its own layer around
/// all of them, and the protections' layer outermost, so that it counts every request.
pub fn app(server: Server, protections: &Protections) -> axum::Router {
    axum::Router::new()
        .route("/health", get(|| async { "ok" }))
        .merge(server.into_router())
        .layer(axum::middleware::map_response(
            |mut response: axum::response::Response| async move {
                response
                    .headers_mut()
                    .insert(SERVED_BY, HeaderValue::from_static("embedded-example"));
                response
            },
        ))
        .layer(protections.layer())
}

/// Serves `server` inside the application on `listener` until [`ServerHandle::shutdown`]:
/// runs the server's upkeep, applies its protections (the cap, the header-read and idle
/// timeouts, `TCP_NODELAY`, a bounded graceful shutdown), then flushes the store. Returns the
/// handle, and the future that serves.
pub fn serve(
    server: Server,
    listener: tokio::net::TcpListener,
) -> (ServerHandle, impl Future<Output = io::Result<()>>) {
    let handle = server.handle();
    let shutdown = handle.shutdown_token();
    let protections = server.protections().shutdown_on(shutdown.clone());
    let upkeep = server.upkeep();
    let app = app(server, &protections);
    let after = handle.clone();
    let serving = async move {
        let upkeep = tokio::spawn(upkeep);
        axum::serve(
            protections.listener(listener),
            app.into_make_service_with_connect_info::<Connection>(),
        )
        .with_graceful_shutdown(shutdown.cancelled_owned())
        .await?;
        // The upkeep ends with the shutdown token.
        let _ = upkeep.await;
        after.flush().await.map_err(io::Error::other)
    };
    (handle, serving)
}
