//! The accept loop of [`Server::serve`](crate::Server::serve): a router served on hyper-util's
//! server over a [`ProtectedListener`](super::ProtectedListener), each request counted in flight
//! on its connection without the layer's connect info.

use super::Protections;
use super::conn::ConnState;
use super::layer::{InFlight, TrackedBody};
use super::output::{self, Stage};
use axum::Router;
use axum::body::Body;
use axum::http;
use axum::serve::Listener as _;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// The bytes hyper buffers per HTTP/2 stream, ahead of the socket (hyper's default is 400 KiB).
const HTTP2_SEND_BUFFER: usize = 4 * output::CHUNK;

/// The most HTTP/2 streams open at once on one connection (hyper's default).
const HTTP2_MAX_STREAMS: u32 = 200;

/// How long connections closed at the end of the shutdown grace may take to go.
const CLOSE_GRACE: Duration = Duration::from_secs(1);

/// The accept loop, until `shutdown`; then every connection is shut down gracefully by hyper
/// (an HTTP/1.1 connection after the response in flight, an HTTP/2 one with a `GOAWAY` once its
/// streams have ended, each after writing what it holds: a stream's last chunk, a gRPC call's
/// trailers), and the wait for them is bounded (the listener's watchers close what is still
/// open after the grace).
pub(crate) async fn run(
    listener: TcpListener,
    router: Router,
    protections: &Protections,
    shutdown: &CancellationToken,
) {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    // The connection's watcher keeps the header-read timeout: hyper's would also time a
    // kept-alive connection's wait for its next request, which the idle timeout governs.
    builder.http1().header_read_timeout(None);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(protections.http2_keep_alive)
        // What hyper buffers per stream beyond the piece a response body hands it (see
        // `output`): the output a peer can hold that the caps do not count.
        .max_send_buf_size(HTTP2_SEND_BUFFER)
        .max_concurrent_streams(HTTP2_MAX_STREAMS);
    let builder = Arc::new(builder);
    let mut listener = protections.listener(listener);
    let registry = listener.registry().clone();
    let graceful = GracefulShutdown::new();
    loop {
        let (io, _) = tokio::select! {
            biased;
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        // Requests are counted here, without the layer's connect info.
        io.conn().track();
        let service = Counted {
            router: router.clone(),
            conn: io.conn().clone(),
        };
        let builder = builder.clone();
        let watcher = graceful.watcher();
        tokio::spawn(async move {
            // No upgrades: the routes have none, and an upgraded socket would outlive its slot.
            let connection = builder.serve_connection(TokioIo::new(io), service);
            if let Err(e) = watcher.watch(connection).await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    let limit = protections.shutdown_grace + CLOSE_GRACE;
    let closed = tokio::time::timeout(limit, async {
        graceful.shutdown().await;
        // Their sockets, dropped as their tasks end.
        registry.drained(limit).await
    });
    if !closed.await.unwrap_or(false) {
        tracing::warn!("connections still open after the shutdown grace period; leaving them");
    }
}

/// A router on one connection, counting its requests in flight.
#[derive(Debug, Clone)]
struct Counted {
    router: Router,
    conn: Arc<ConnState>,
}

impl hyper::service::Service<http::Request<Incoming>> for Counted {
    type Response = http::Response<TrackedBody<Body>>;
    type Error = Infallible;
    type Future = Counting;

    fn call(&self, request: http::Request<Incoming>) -> Counting {
        let in_flight = InFlight::begin(&self.conn);
        // At its output cap, the connection is answered without the request being served.
        if let Some(why) = self.conn.output().full() {
            let grpc = output::is_grpc(request.headers());
            let refused = output::refusal(grpc, why, Stage::Before);
            return Counting {
                response: None,
                refused: Some(TrackedBody::refused(refused, in_flight)),
                in_flight: None,
            };
        }
        // The router is always ready; a clone is a reference count.
        let response = tower::Service::call(&mut self.router.clone(), request);
        Counting {
            response: Some(response),
            refused: None,
            in_flight: Some(in_flight),
        }
    }
}

/// A request's answer from the router, its body then tracked (or the refusal of a request at
/// the output cap). A future of its own, not a boxed `async` block: one box fewer per request.
struct Counting {
    response: Option<axum::routing::future::RouteFuture<Infallible>>,
    refused: Option<http::Response<TrackedBody<Body>>>,
    in_flight: Option<InFlight>,
}

impl Future for Counting {
    type Output = Result<http::Response<TrackedBody<Body>>, Infallible>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(route) = self.response.as_mut() else {
            let refused = self
                .refused
                .take()
                .expect("Counting polled after completion");
            return Poll::Ready(Ok(refused));
        };
        let Poll::Ready(Ok(response)) = Pin::new(route).poll(cx) else {
            return Poll::Pending;
        };
        let in_flight = self
            .in_flight
            .take()
            .expect("Counting polled after completion");
        Poll::Ready(Ok(TrackedBody::admit(response, in_flight)))
    }
}
