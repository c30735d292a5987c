//! [`Server::serve`]: [`Server::into_router`] served on hyper-util's server over a
//! [`ProtectedListener`](super::ProtectedListener), and [`ServerHandle`], what stays usable of
//! a server while and after it serves.

use super::Protections;
use super::conn::ConnState;
use super::layer::{InFlight, TrackedBody};
use super::output::{self, Stage};
use crate::Server;
use crate::handler::RequestHandler;
use a2a_core::AgentCard;
use axum::Router;
use axum::body::Body;
use axum::http;
use axum::serve::Listener as _;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use std::convert::Infallible;
use std::future::Future;
use std::io;
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

impl Server {
    /// A handle on this server that stays usable while and after [`Server::serve`] (which
    /// consumes the server) runs: to shut it down, flush the store, reach the handler.
    pub fn handle(&self) -> ServerHandle {
        ServerHandle {
            handler: self.state.handler.clone(),
        }
    }

    /// The connection protections [`Server::serve`] applies (set with
    /// [`ServerBuilder::max_connections`](crate::ServerBuilder::max_connections) and the
    /// like), to put around your own `axum::serve` when you mount [`Server::into_router`]
    /// (see [`crate::serve`]).
    pub fn protections(&self) -> Protections {
        self.protections.clone()
    }

    /// Serves the agent on `listener` (HTTP/1.1 and HTTP/2) until [`Server::shutdown_token`]
    /// is cancelled; then stops accepting, ends open streams, lets in-flight requests finish
    /// (for at most [`SHUTDOWN_GRACE`](super::SHUTDOWN_GRACE)) and returns. This is the
    /// recommended way to run a server: it serves [`Server::into_router`] (nothing else),
    /// runs the [`Server::upkeep`] (until it returns), sends HTTP/2 pings every
    /// [`ServerBuilder::keep_alive`](crate::ServerBuilder::keep_alive), and applies
    /// [`Server::protections`] (see [`crate::serve`]):
    ///
    /// - caps open connections ([`ServerBuilder::max_connections`](crate::ServerBuilder::max_connections));
    ///   at the cap, the quietest connection that serves no request is closed to admit the new
    ///   one, which is answered `503` only when every connection is serving a request;
    /// - closes a connection whose request head is not complete within
    ///   [`ServerBuilder::header_read_timeout`](crate::ServerBuilder::header_read_timeout)
    ///   (slowloris), and one with no request in flight for
    ///   [`ServerBuilder::idle_timeout`](crate::ServerBuilder::idle_timeout) (an open SSE
    ///   stream is a request in flight: it is never cut);
    /// - caps the bytes of answers held for clients that do not read them, per connection and
    ///   in total ([`ServerBuilder::max_output_per_connection`](crate::ServerBuilder::max_output_per_connection),
    ///   [`ServerBuilder::max_output`](crate::ServerBuilder::max_output)), refusing requests
    ///   beyond (`503`, gRPC `RESOURCE_EXHAUSTED`), and closes a connection whose output waits
    ///   for a peer that reads nothing for
    ///   [`ServerBuilder::send_timeout`](crate::ServerBuilder::send_timeout);
    /// - sets `TCP_NODELAY`, so that small SSE writes are not held back by Nagle's algorithm.
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
    /// let handle = server.handle();
    /// let stop = handle.clone();
    /// tokio::spawn(async move {
    ///     let _ = tokio::signal::ctrl_c().await;
    ///     stop.shutdown(); // stops the server
    /// });
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
    /// server.serve(listener).await?;
    /// handle.flush().await?; // everything stored is durable
    /// # Ok(()) }
    /// ```
    ///
    /// Accept errors (a connection reset before it was accepted, the open-file limit) are
    /// logged and retried, not returned: the `io::Result` is that of `axum::serve`.
    pub async fn serve(mut self, listener: TcpListener) -> io::Result<()> {
        let shutdown = self.shutdown_token();
        let protections = self.protections.clone().shutdown_on(shutdown.clone());
        // On its own task (a sweep must not hold up the accept loop), owned by this future: it
        // ends with the shutdown token, and is aborted if this future is dropped.
        let mut upkeep = AbortOnDrop(tokio::spawn(self.upkeep()));
        let grpc = self
            .grpc_listener
            .take()
            .map(|l| (l, Server::grpc_router(self.state.clone())));
        let http = run(listener, self.into_router(), &protections, &shutdown);
        match grpc {
            Some((grpc, router)) => {
                tokio::join!(http, run(grpc, router, &protections, &shutdown));
            }
            None => http.await,
        }
        if let Err(e) = (&mut upkeep.0).await {
            tracing::error!(error = %e, "the server's upkeep panicked");
        }
        Ok(())
    }

    /// Like [`Server::serve`], shutting down (as if [`Server::shutdown_token`] were cancelled)
    /// when `signal` completes, e.g. on `tokio::signal::ctrl_c()`.
    pub async fn serve_with_shutdown(
        self,
        listener: TcpListener,
        signal: impl Future<Output = ()>,
    ) -> io::Result<()> {
        let token = self.shutdown_token();
        let trigger = async {
            tokio::select! {
                () = signal => token.cancel(),
                () = token.cancelled() => {}
            }
        };
        let (result, ()) = tokio::join!(self.serve(listener), trigger);
        result
    }
}

/// What stays usable of a [`Server`] while and after it serves ([`Server::handle`]).
#[derive(Debug, Clone)]
pub struct ServerHandle {
    handler: Arc<RequestHandler>,
}

impl ServerHandle {
    /// Shuts the server down: [`Server::serve`] stops accepting, open streams end, running
    /// agents are told to stop (through their cancellation tokens), in-flight requests get
    /// the shutdown grace to finish.
    pub fn shutdown(&self) {
        self.handler.rt.shutdown.cancel();
    }

    /// The token [`ServerHandle::shutdown`] cancels ([`Server::shutdown_token`]).
    pub fn shutdown_token(&self) -> CancellationToken {
        self.handler.rt.shutdown.clone()
    }

    /// Makes everything stored so far durable (call after the server stopped).
    pub async fn flush(&self) -> Result<(), crate::store::StoreError> {
        self.handler.rt.store.sync().await
    }

    /// The transport-independent handler.
    pub fn handler(&self) -> Arc<RequestHandler> {
        self.handler.clone()
    }

    /// The agent card as served.
    pub fn agent_card(&self) -> &AgentCard {
        &self.handler.card
    }
}

/// A spawned task that is aborted when its handle is dropped.
#[derive(Debug)]
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The accept loop, until `shutdown`; then the bounded wait for open connections (the
/// listener's watchers close them as they finish, and the rest after the grace).
async fn run(
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
        tokio::spawn(async move {
            // No upgrades: the routes have none, and an upgraded socket would outlive its slot.
            if let Err(e) = builder.serve_connection(TokioIo::new(io), service).await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    if !registry
        .drained(protections.shutdown_grace + CLOSE_GRACE)
        .await
    {
        tracing::warn!("connections still open after the shutdown grace period; leaving them");
    }
}

/// [`Server::into_router`] on one connection, counting its requests in flight.
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
        let grpc = output::is_grpc(&request);
        // At its output cap, the connection is answered without the request being served.
        if let Some(why) = self.conn.output().full() {
            let refused = output::refusal(grpc, why, Stage::Before);
            return Counting {
                response: None,
                refused: Some(TrackedBody::refused(refused, in_flight)),
                in_flight: None,
                grpc,
            };
        }
        // The router is always ready; a clone is a reference count.
        let response = tower::Service::call(&mut self.router.clone(), request);
        Counting {
            response: Some(response),
            refused: None,
            in_flight: Some(in_flight),
            grpc,
        }
    }
}

/// A request's answer from the router, its body then tracked (or the refusal of a request at
/// the output cap). A future of its own, not a boxed `async` block: one box fewer per request.
struct Counting {
    response: Option<axum::routing::future::RouteFuture<Infallible>>,
    refused: Option<http::Response<TrackedBody<Body>>>,
    in_flight: Option<InFlight>,
    grpc: bool,
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
        Poll::Ready(Ok(TrackedBody::admit(response, in_flight, self.grpc)))
    }
}
