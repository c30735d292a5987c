//! Serving protections: a cap on open connections, a header-read timeout, an idle timeout,
//! `TCP_NODELAY` and a bounded graceful shutdown, as pieces that go around `axum::serve` (or
//! hyper-util's server, as [`Server::serve`](crate::Server::serve) does).
//!
//! [`Protections`] holds the settings. Its [`listener`](Protections::listener) wraps a
//! [`tokio::net::TcpListener`] in a [`ProtectedListener`] (an [`axum::serve::Listener`]) that
//! caps and watches the connections it accepts, and its [`layer`](Protections::layer) is a
//! tower layer that tells each connection's watcher which requests are in flight, through the
//! [`Connection`] connect info:
//!
//! ```no_run
//! # use a2a_core::Error;
//! # use a2a_server::{Agent, RequestContext, Server, TaskEvents};
//! use a2a_server::serve::{Connection, Protections};
//! # struct Echo;
//! # impl Agent for Echo {
//! #     async fn execute(&self, _: RequestContext, e: TaskEvents) -> Result<(), Error> { e.complete(None).await }
//! # }
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Server::builder(Echo).public_url("http://127.0.0.1:8080").build()?;
//! let handle = server.handle();
//! let protections = server.protections().shutdown_on(handle.shutdown_token());
//! tokio::spawn(server.upkeep());
//! let app = axum::Router::new()
//!     .route("/health", axum::routing::get(|| async { "ok" }))
//!     .merge(server.into_router())
//!     .layer(protections.layer()); // outermost: it must see every request
//! let tcp = a2a_server::serve::bind("127.0.0.1:8080").await?; // a backlog of 1,024
//! axum::serve(
//!     protections.listener(tcp),
//!     app.into_make_service_with_connect_info::<Connection>(),
//! )
//! .with_graceful_shutdown(handle.shutdown_token().cancelled_owned())
//! .await?;
//! handle.flush().await?;
//! # Ok(()) }
//! ```
//!
//! What each connection gets (one watcher task per connection, spawned when it is accepted;
//! per request, a count up and down, and through the layer the response body boxed once
//! more):
//!
//! - **The cap** ([`Protections::max_connections`]). A connection accepted at the cap makes
//!   room the way nginx does: the connection that has been quiet longest among those with no
//!   request in flight (idle keep-alive connections, and connections that have not completed a
//!   request head) is closed, and the newcomer is served. Only when every connection has a
//!   request in flight is the newcomer answered `503` (with `retry-after`) and closed at once.
//!   A client holding silent sockets therefore cannot lock real clients out.
//! - **The header-read timeout** ([`Protections::header_read_timeout`]): an HTTP/1.1 request
//!   head must be complete within it from its first byte (the first request's from the moment
//!   the connection opened); a slower one (slowloris) is closed. A kept-alive connection
//!   waiting for its next request is timed by the idle timeout instead, and HTTP/2 (which has
//!   no heads between requests) only by the idle timeout.
//! - **The idle timeout** ([`Protections::idle_timeout`]): a connection with no request in
//!   flight for that long is closed. A request is in flight until its response body has ended
//!   or is dropped, so an open SSE or gRPC stream is never cut.
//! - **The output caps** ([`Protections::max_output_per_connection`],
//!   [`Protections::max_output`]): the bytes of answers built and not yet taken by the HTTP
//!   server are counted per connection and in total (a large answer is handed over in 32 KiB
//!   pieces). A request on a connection at its cap is refused before it is served, and an
//!   answer that would pass a cap is dropped and refused, unless nothing else is held under
//!   that cap: `503` with `retry-after`, or the gRPC status `RESOURCE_EXHAUSTED`. A client that
//!   never reads thus holds at most the caps, not one answer per request.
//! - **The send timeout** ([`Protections::send_timeout`], nginx's `send_timeout`): a connection
//!   whose output has waited for the peer that long without progress (a write blocked on a full
//!   socket, or an answer's piece held for a closed HTTP/2 flow-control window) is closed, and
//!   what it held is released.
//! - **`TCP_NODELAY`**, so that small SSE writes are not held back by Nagle's algorithm.
//! - **Shutdown** ([`Protections::shutdown_on`]): once the token is cancelled the listener
//!   accepts nothing more; a connection that serves no request any more is left a second to be
//!   closed by the HTTP server (`axum::serve`'s `with_graceful_shutdown`, or
//!   [`Server::serve`](crate::Server::serve), shuts each connection down gracefully, writing
//!   what it holds: a stream's last chunk, a gRPC call's trailers) and then closed; whatever is
//!   still open [`shutdown_grace`](Protections::shutdown_grace) later is closed.
//!
//! To close a connection its watcher makes the socket's reads return end-of-file and its
//! writes fail, and wakes the connection's task: the HTTP server then drops the connection and
//! its slot is free.
//!
//! Without the layer, or without `into_make_service_with_connect_info::<Connection>()`, the
//! watcher cannot see requests (nor count their answers against the output caps; a write
//! blocked on a full socket is still bounded by the send timeout), and it then only closes what it can tell is not serving
//! anyone: a connection that has sent nothing within the header-read timeout, and one that has
//! moved no byte either way for the idle timeout; at the cap it only makes room by closing
//! connections that have sent nothing. Put the layer outermost (`Router::layer` after every
//! route and nested router), so that it counts every request.
//!
//! `axum::serve` has no HTTP/2 keep-alive pings (which keep quiet gRPC streams alive through
//! proxies); [`Server::serve`](crate::Server::serve) sends them every
//! [`Protections::http2_keep_alive`], and bounds what hyper buffers per HTTP/2 stream (128 KiB)
//! beyond what the output caps count. The limits, their defaults and flags:
//! `docs/server-limits.md`.

mod bind;
mod conn;
mod layer;
mod listener;
mod output;
mod run;

pub(crate) use output::AnswerSize;
pub use output::{default_max_output, default_max_output_per_connection};

pub use crate::server::ServerHandle;
pub use bind::{LISTEN_BACKLOG, bind};
pub use layer::{TrackRequests, TrackRequestsLayer, TrackedFuture};
pub use listener::{Connection, ProtectedListener, ProtectedStream};
pub(crate) use run::run;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How long a client may take to send a request head, by default (see
/// [`Protections::header_read_timeout`]).
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a connection may stay open with no request in flight, by default (see
/// [`Protections::idle_timeout`]).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// How long, once shutting down, in-flight requests may take to finish before their
/// connections are closed, by default (see [`Protections::shutdown_grace`]).
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// The default interval of HTTP/2 pings (see [`Protections::http2_keep_alive`]).
pub const DEFAULT_HTTP2_KEEP_ALIVE: Duration = Duration::from_secs(15);

/// How long output may wait for a peer that reads nothing before its connection is closed, by
/// default (see [`Protections::send_timeout`]).
pub const DEFAULT_SEND_TIMEOUT: Duration = Duration::from_secs(30);

/// Files kept free for everything that is not a client connection: the store's files, outgoing
/// webhook sockets, logs.
const FILE_RESERVE: u64 = 64;

/// The smallest default connection cap, however low the file limit.
const MIN_CONNECTIONS: u64 = 32;

/// The file limit assumed when there is none (or it cannot be read).
const UNLIMITED_FILES: u64 = 65_536;

/// A year: timeouts longer than this never fire.
const FOREVER: Duration = Duration::from_secs(365 * 24 * 60 * 60);

/// The default of [`Protections::max_connections`], sized from the process's open-file limit
/// (the soft `RLIMIT_NOFILE` on Unix): three quarters of it, minus 64 files kept for the store
/// and outgoing webhooks, and at least 32. With the common limit of 1,024 files that is 704
/// connections. Without a limit (or off Unix), the limit is taken as 65,536 files (49,088
/// connections).
pub fn default_max_connections() -> usize {
    #[cfg(unix)]
    let files = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
    #[cfg(not(unix))]
    let files = None;
    connections_for(files)
}

/// The connection cap for a soft file limit (`None`: unlimited).
fn connections_for(files: Option<u64>) -> usize {
    let files = files.unwrap_or(UNLIMITED_FILES).min(1 << 24);
    let cap = (files / 4 * 3)
        .saturating_sub(FILE_RESERVE)
        .max(MIN_CONNECTIONS);
    usize::try_from(cap).unwrap_or(usize::MAX)
}

/// The protections of a server's connections (see the [module](self)): settings, and the
/// factory of the [`ProtectedListener`] and the [`TrackRequestsLayer`] that enforce them.
///
/// Clones share one thing besides the settings: whether [`Protections::layer`] has been
/// called, which tells the listener's watchers that requests are counted.
#[derive(Debug, Clone)]
pub struct Protections {
    pub(crate) max_connections: usize,
    pub(crate) header_read_timeout: Duration,
    pub(crate) idle_timeout: Duration,
    pub(crate) shutdown_grace: Duration,
    pub(crate) http2_keep_alive: Duration,
    pub(crate) send_timeout: Duration,
    /// The output caps, and the bytes held under them by every connection.
    pub(crate) output: Arc<output::OutputBudget>,
    pub(crate) shutdown: Option<CancellationToken>,
    /// Set once [`Protections::layer`] has been called.
    pub(crate) layered: Arc<AtomicBool>,
}

impl Default for Protections {
    fn default() -> Self {
        Self {
            max_connections: default_max_connections(),
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            shutdown_grace: SHUTDOWN_GRACE,
            http2_keep_alive: DEFAULT_HTTP2_KEEP_ALIVE,
            send_timeout: DEFAULT_SEND_TIMEOUT,
            output: Arc::new(output::OutputBudget::new(
                default_max_output_per_connection(),
                default_max_output(),
            )),
            shutdown: None,
            layered: Arc::new(AtomicBool::new(false)),
        }
    }
}

impl Protections {
    /// The default protections: [`default_max_connections`], [`DEFAULT_HEADER_READ_TIMEOUT`],
    /// [`DEFAULT_IDLE_TIMEOUT`], [`SHUTDOWN_GRACE`], [`DEFAULT_HTTP2_KEEP_ALIVE`],
    /// [`DEFAULT_SEND_TIMEOUT`], [`default_max_output`], [`default_max_output_per_connection`].
    pub fn new() -> Self {
        Self::default()
    }

    /// The most connections open at once (at least 1). At the cap, a new connection replaces
    /// the quietest one with no request in flight, or is answered `503` if every connection
    /// has one.
    #[must_use]
    pub fn max_connections(mut self, max: usize) -> Self {
        self.max_connections = max.max(1);
        self
    }

    /// How long a client may take to send a complete HTTP/1.1 request head, timed from its
    /// first byte (the first request's from the moment the connection opened). Capped at a
    /// year (never).
    #[must_use]
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout.min(FOREVER);
        self
    }

    /// How long a connection may stay open with no request in flight. Capped at a year.
    #[must_use]
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout.min(FOREVER);
        self
    }

    /// How long in-flight requests may take to finish once shutting down, before their
    /// connections are closed.
    #[must_use]
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace.min(FOREVER);
        self
    }

    /// The interval of HTTP/2 pings, which keep quiet gRPC streams alive through proxies and
    /// find dead peers. Only [`Server::serve`](crate::Server::serve) sends them (`axum::serve`
    /// has no such setting).
    #[must_use]
    pub fn http2_keep_alive(mut self, every: Duration) -> Self {
        self.http2_keep_alive = every.max(Duration::from_millis(1));
        self
    }

    /// How long output may wait for a peer that takes none of it before the connection is
    /// closed (nginx's `send_timeout`): a write blocked on a full socket send buffer, or an
    /// answer whose piece the HTTP server holds for the peer's HTTP/2 flow-control window.
    /// Timed from the last progress, not over the whole answer. At least 1 ms; capped at a
    /// year.
    #[must_use]
    pub fn send_timeout(mut self, timeout: Duration) -> Self {
        self.send_timeout = timeout.clamp(Duration::from_millis(1), FOREVER);
        self
    }

    /// The most bytes of answers held for all connections together (at least 1; see
    /// [`output_held`](Self::output_held)). An answer that would pass it is refused (`503`, or
    /// the gRPC status `RESOURCE_EXHAUSTED`), unless nothing else is held.
    #[must_use]
    pub fn max_output(mut self, bytes: u64) -> Self {
        self.output = Arc::new(output::OutputBudget::new(self.output.per_connection, bytes));
        self
    }

    /// The most bytes of answers held for one connection (at least 1). A request on a
    /// connection at the cap is refused before it is served; an answer that would pass it is
    /// refused unless the connection holds nothing else.
    #[must_use]
    pub fn max_output_per_connection(mut self, bytes: u64) -> Self {
        self.output = Arc::new(output::OutputBudget::new(bytes, self.output.total));
        self
    }

    /// The bytes of answers held now for every connection of listeners made from these
    /// protections (or their clones): built, and not yet taken by the HTTP server.
    pub fn output_held(&self) -> u64 {
        self.output.held()
    }

    /// Shuts down when `token` is cancelled: listeners made after this call accept nothing
    /// more, and close every connection still open [`Protections::shutdown_grace`] later.
    #[must_use]
    pub fn shutdown_on(mut self, token: CancellationToken) -> Self {
        self.shutdown = Some(token);
        self
    }

    /// Wraps `tcp`: the connections it accepts get `TCP_NODELAY`, a slot under the cap and a
    /// watcher. Serve it with `axum::serve` (and
    /// `into_make_service_with_connect_info::<`[`Connection`]`>()`, so that
    /// [`Protections::layer`] finds each request's connection). Must be called within a Tokio
    /// runtime.
    pub fn listener(&self, tcp: tokio::net::TcpListener) -> ProtectedListener {
        ProtectedListener::new(tcp, self.clone())
    }

    /// The tower layer that counts each request as in flight on its connection until its
    /// response body ends or is dropped (see the [module](self)). Apply it outermost.
    pub fn layer(&self) -> TrackRequestsLayer {
        self.layered
            .store(true, std::sync::atomic::Ordering::Release);
        TrackRequestsLayer::new()
    }
}

#[cfg(test)]
mod tests {
    use super::connections_for;

    #[test]
    fn the_default_cap_leaves_a_quarter_of_the_file_limit_and_a_reserve() {
        assert_eq!(connections_for(Some(1024)), 704);
        assert_eq!(connections_for(Some(65_536)), 49_088);
        assert_eq!(connections_for(None), 49_088);
        assert_eq!(connections_for(Some(64)), 32, "never below the floor");
    }
}
