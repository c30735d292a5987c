//! Running a [`Server`]: [`Server::serve`], [`Server::into_router`] served with the
//! [`Server::protections`] on hyper-util's server, and [`ServerHandle`], what stays usable of a
//! server while and after it serves.

use super::Server;
use crate::handler::RequestHandler;
use crate::serve::{Protections, run};
use a2a_core::AgentCard;
use std::future::Future;
use std::io;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

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
    /// (for at most [`SHUTDOWN_GRACE`](crate::SHUTDOWN_GRACE)) and returns. This is the
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
    /// let listener = a2a_server::serve::bind("127.0.0.1:8080").await?; // see its docs
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
