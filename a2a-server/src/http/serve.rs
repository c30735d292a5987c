//! [`Server::serve`]: the accept loop, on hyper directly, with the protections `axum::serve`
//! lacks: a cap on open connections (new ones beyond it get a 503 and are closed at once), a
//! header-read timeout, an idle timeout (no request in flight), `TCP_NODELAY`, back-off on
//! accept errors such as EMFILE, and a bounded graceful shutdown.
//!
//! Both timeouts are kept by one watcher per connection, which reads two clocks that the
//! connection's requests and socket set without waking anything (see [`Activity`]). hyper's
//! own header-read timeout is not used: it boxes, arms and drops a timer for every request and
//! polls the socket once more after every head (1.4k instructions of a 28.9k `GetTask`,
//! callgrind), and its clock runs while a kept-alive connection waits for its next request, so
//! that it closed those after 10 s rather than the idle timeout's 60 s.

use super::{Answer, Routes, Server};
use axum::body::{Body, Bytes, HttpBody};
use axum::http;
use http_body::{Frame, SizeHint};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// How long a client may take to send a request head, by default (see
/// [`ServerBuilder::header_read_timeout`](super::ServerBuilder::header_read_timeout)).
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a connection may stay open with no request in flight, by default (see
/// [`ServerBuilder::idle_timeout`](super::ServerBuilder::idle_timeout)).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// How long [`Server::serve`] waits, once shutting down, for in-flight requests to finish
/// before it drops their connections.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// How long a connection closed for being idle may take to finish closing.
const IDLE_GRACE: Duration = Duration::from_secs(1);

/// The pause after an accept error such as EMFILE, so that the loop does not spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// Files kept free for everything that is not a client connection: the store's files, outgoing
/// webhook sockets, logs.
const FILE_RESERVE: u64 = 64;

/// The smallest default connection cap, however low the file limit.
const MIN_CONNECTIONS: u64 = 32;

/// The file limit assumed when there is none (or it cannot be read).
const UNLIMITED_FILES: u64 = 65_536;

/// The answer to a connection beyond the cap, written without waiting, before closing it.
const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\
    connection: close\r\nretry-after: 1\r\n\r\n";

/// The default of [`ServerBuilder::max_connections`](super::ServerBuilder::max_connections),
/// sized from the process's open-file limit (the soft `RLIMIT_NOFILE` on Unix): three quarters
/// of it, minus 64 files kept for the store and outgoing webhooks, and at least 32. With the
/// common limit of 1,024 files that is 704 connections. Without a limit (or off Unix), the
/// limit is taken as 65,536 files (49,088 connections).
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

/// The connection protections of [`Server::serve`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConnectionLimits {
    /// HTTP/2 pings this often keep quiet gRPC streams (which have no keep-alive comments)
    /// alive through proxies, and find dead peers.
    pub(crate) keep_alive: Duration,
    pub(crate) header_read_timeout: Duration,
    pub(crate) idle_timeout: Duration,
    pub(crate) max_connections: usize,
}

impl Server {
    /// Serves the agent on `listener` (HTTP/1.1 and HTTP/2) until [`Server::shutdown_token`]
    /// is cancelled; then stops accepting, ends open streams, lets in-flight requests finish
    /// (for at most [`SHUTDOWN_GRACE`]) and returns. This is the recommended way to run a
    /// server: besides serving [`Server::into_router`]'s routes and running the
    /// [`Server::upkeep`] (until it returns), it
    ///
    /// - caps open connections ([`ServerBuilder::max_connections`](super::ServerBuilder::max_connections));
    ///   one beyond the cap is answered `503` and closed at once, so its client fails fast and
    ///   the others keep being served;
    /// - closes a connection whose request head is not complete within
    ///   [`ServerBuilder::header_read_timeout`](super::ServerBuilder::header_read_timeout)
    ///   (slowloris), and one with no request in flight for
    ///   [`ServerBuilder::idle_timeout`](super::ServerBuilder::idle_timeout) (an open SSE
    ///   stream is a request in flight: it is never cut);
    /// - sets `TCP_NODELAY`, so that small SSE writes are not held back by Nagle's algorithm;
    /// - backs off briefly when accepting fails (e.g. the open-file limit is reached).
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
    /// let shutdown = server.shutdown_token();
    /// tokio::spawn(async move {
    ///     let _ = tokio::signal::ctrl_c().await;
    ///     shutdown.cancel(); // stops the server
    /// });
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
    /// server.serve(listener).await?;
    /// # Ok(()) }
    /// ```
    ///
    /// Accept errors (a connection reset before it was accepted, the open-file limit) are
    /// logged and retried, not returned: the `io::Result` is that of `axum::serve`, so that
    /// switching is a one-line change.
    pub async fn serve(mut self, listener: TcpListener) -> io::Result<()> {
        let shutdown = self.shutdown_token();
        let limits = self.limits;
        // On its own task (a sweep must not hold up the accept loop), owned by this future: it
        // ends with the shutdown token, and is aborted if this future is dropped.
        let mut upkeep = AbortOnDrop(tokio::spawn(self.upkeep()));
        let grpc = self
            .grpc_listener
            .take()
            .map(|l| (l, Server::grpc_routes(self.state.clone())));
        let http = run(listener, self.into_routes(), limits, shutdown.clone());
        match grpc {
            Some((grpc, routes)) => {
                tokio::join!(http, run(grpc, routes, limits, shutdown));
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

/// A spawned task that is aborted when its handle is dropped.
#[derive(Debug)]
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The accept loop, until `shutdown`; then the bounded wait for open connections.
async fn run(
    listener: TcpListener,
    routes: Routes,
    limits: ConnectionLimits,
    shutdown: CancellationToken,
) {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    // The connection's watcher keeps the header-read timeout (see the module's notes).
    builder.http1().header_read_timeout(None);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(limits.keep_alive);
    let builder = Arc::new(builder);
    let max =
        u32::try_from(limits.max_connections.clamp(1, Semaphore::MAX_PERMITS)).unwrap_or(u32::MAX);
    let slots = Arc::new(Semaphore::new(max as usize));
    // Logged once per burst: accept errors, refusals at the cap.
    let (mut failing, mut refusing) = (false, false);
    loop {
        let accepted = tokio::select! {
            biased;
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let tcp = match accepted {
            Ok((tcp, _)) => {
                failing = false;
                tcp
            }
            // The peer gave up before we accepted: nothing to do with the listener.
            Err(e) if is_connection_error(&e) => continue,
            Err(e) => {
                if !failing {
                    tracing::warn!(
                        error = %e,
                        "accepting connections failed (out of file descriptors?); backing off"
                    );
                    failing = true;
                }
                tokio::select! {
                    () = tokio::time::sleep(ACCEPT_BACKOFF) => continue,
                    () = shutdown.cancelled() => break,
                }
            }
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            if !refusing {
                tracing::warn!(
                    max_connections = max,
                    "connection limit reached; refusing new connections"
                );
                refusing = true;
            }
            // A fresh socket's send buffer is empty: this never waits.
            let _ = tcp.try_write(BUSY);
            continue;
        };
        refusing = false;
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "could not set TCP_NODELAY");
        }
        tokio::spawn(connection(
            builder.clone(),
            tcp,
            routes.clone(),
            limits,
            shutdown.clone(),
            slot,
        ));
    }
    drop(listener);
    // Every connection holds a slot until it is closed, and starts closing on `shutdown`.
    let drained = tokio::time::timeout(SHUTDOWN_GRACE + IDLE_GRACE, slots.acquire_many(max)).await;
    if drained.is_err() {
        tracing::warn!("connections still open after the shutdown grace period; leaving them");
    }
}

/// Errors that concern one connection only, not the listener.
fn is_connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

/// Serves one connection until it ends, is idle too long, is too slow to send a request
/// head, or the server shuts down.
async fn connection(
    builder: Arc<auto::Builder<TokioExecutor>>,
    tcp: TcpStream,
    routes: Routes,
    limits: ConnectionLimits,
    shutdown: CancellationToken,
    _slot: OwnedSemaphorePermit,
) {
    let activity = Arc::new(Activity::new());
    let service = Tracked {
        routes,
        activity: activity.clone(),
    };
    let io = Watched {
        tcp,
        activity: activity.clone(),
        protocol: Protocol::Unknown(0),
    };
    // No upgrades: the routes have none, and an upgraded socket would outlive its slot.
    let conn = builder.serve_connection(TokioIo::new(io), service);
    tokio::pin!(conn);
    let closing = OnlyWhenWoken::new(async {
        tokio::select! {
            closing = watch(&activity, limits.idle_timeout, limits.header_read_timeout) => {
                tracing::debug!(reason = closing.as_str(), "closing a connection");
                IDLE_GRACE
            }
            () = shutdown.cancelled() => SHUTDOWN_GRACE,
        }
    });
    let grace = tokio::select! {
        biased;
        ended = conn.as_mut() => {
            if let Err(e) = ended {
                tracing::debug!(error = %e, "connection ended with an error");
            }
            return;
        }
        grace = closing => grace,
    };
    // HTTP/1: close after the current response; HTTP/2: GOAWAY, then close when the open
    // streams are done. Either way, no longer than `grace`.
    conn.as_mut().graceful_shutdown();
    if tokio::time::timeout(grace, conn).await.is_err() {
        tracing::debug!("connection did not close in time; dropped");
    }
}

/// A future polled only when something it waits on has woken it, not at every wake of the task
/// it shares: a connection's task wakes for every read and write, and polling the watcher's
/// timer and the shutdown token each time cost 600 instructions of a `GetTask` (callgrind:
/// 27,131 → 26,517).
struct OnlyWhenWoken<F> {
    inner: Pin<Box<F>>,
    woken: Arc<Woken>,
    /// The waker `inner` is polled with: it marks `woken`, then wakes the task.
    waker: std::task::Waker,
}

/// Whether an [`OnlyWhenWoken`]'s future has been woken since it was last polled, and the task
/// to wake.
#[derive(Debug, Default)]
struct Woken {
    flag: std::sync::atomic::AtomicBool,
    task: futures::task::AtomicWaker,
}

impl std::task::Wake for Woken {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.flag.store(true, Ordering::Release);
        self.task.wake();
    }
}

impl<F: Future> OnlyWhenWoken<F> {
    fn new(inner: F) -> Self {
        let woken = Arc::new(Woken::default());
        // Polled the first time, so that it registers what it waits on.
        woken.flag.store(true, Ordering::Relaxed);
        Self {
            inner: Box::pin(inner),
            waker: std::task::Waker::from(woken.clone()),
            woken,
        }
    }
}

impl<F: Future> Future for OnlyWhenWoken<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // The task first: a wake after the flag is read then wakes it again.
        self.woken.task.register(cx.waker());
        if !self.woken.flag.swap(false, Ordering::AcqRel) {
            return Poll::Pending;
        }
        let this = &mut *self;
        this.inner
            .as_mut()
            .poll(&mut Context::from_waker(&this.waker))
    }
}

/// Requests in flight on one connection, since when there have been none, and since when the
/// next request's head has been arriving: atomics that requests and reads update without
/// waking anything (the watcher looks at them when its deadline comes).
#[derive(Debug)]
struct Activity {
    in_flight: AtomicUsize,
    /// When the last request in flight ended (or the connection opened), in milliseconds since
    /// `opened`.
    since_ms: AtomicU64,
    /// When the first byte of the head being read arrived, in milliseconds since `opened`;
    /// [`NO_HEAD`] when none is being read. A new connection's first head is timed from the
    /// moment it opened (a client that connects and sends nothing holds a slot as surely as
    /// one that sends slowly). Kept for HTTP/1 only: HTTP/2 has no heads between requests.
    head_ms: AtomicU64,
    opened: Instant,
}

/// [`Activity::head_ms`] when no request head is being read.
const NO_HEAD: u64 = u64::MAX;

/// The first bytes of every HTTP/2 connection (its preface, RFC 9113 §3.4), enough to tell it
/// from an HTTP/1 request line.
const HTTP2_PREFACE: &[u8] = b"PRI * HTTP/2.0";

impl Activity {
    fn new() -> Self {
        Self {
            in_flight: AtomicUsize::new(0),
            since_ms: AtomicU64::new(0),
            head_ms: AtomicU64::new(0),
            opened: Instant::now(),
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.opened.elapsed().as_millis()).unwrap_or(u64::MAX - 1)
    }

    fn at(&self, ms: u64) -> Instant {
        self.opened + Duration::from_millis(ms)
    }

    /// Bytes arrived with no request in flight: the start of a request head, unless one has
    /// already started.
    fn received(&self) {
        if self.in_flight.load(Ordering::Acquire) == 0
            && self.head_ms.load(Ordering::Acquire) == NO_HEAD
        {
            self.head_ms.store(self.now_ms(), Ordering::Release);
        }
    }
}

/// Why a connection is closed by its watcher.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Closing {
    /// No request in flight for the idle timeout.
    Idle,
    /// A request head took longer than the header-read timeout (slowloris).
    SlowHead,
}

impl Closing {
    fn as_str(self) -> &'static str {
        match self {
            Closing::Idle => "idle",
            Closing::SlowHead => "request head too slow",
        }
    }
}

/// Completes when the connection is to be closed: it has had no request in flight for `idle`,
/// or a request head has been arriving for `header` (each timed exactly, to the millisecond).
///
/// It looks at least every `min(idle, header)` (the tick) and, once it sees what it waits for,
/// sleeps until the exact deadline: a head that starts after a look is seen at the next,
/// before its deadline, since the tick is no longer than the timeout. A long-lived request
/// (an SSE stream) thus costs a look every tick and nothing per event or request.
async fn watch(activity: &Activity, idle: Duration, header: Duration) -> Closing {
    let tick = idle.min(header);
    let mut deadline = Instant::now().checked_add(tick);
    loop {
        match deadline {
            Some(at) => tokio::time::sleep_until(at).await,
            // Timeouts beyond the end of time: never closed.
            None => std::future::pending().await,
        }
        let now = Instant::now();
        let next = now.checked_add(tick);
        if activity.in_flight.load(Ordering::Acquire) > 0 {
            deadline = next;
            continue;
        }
        let idle_due = activity
            .at(activity.since_ms.load(Ordering::Acquire))
            .checked_add(idle);
        let head = activity.head_ms.load(Ordering::Acquire);
        let head_due = (head != NO_HEAD)
            .then(|| activity.at(head).checked_add(header))
            .flatten();
        if head_due.is_some_and(|due| due <= now) {
            return Closing::SlowHead;
        }
        if idle_due.is_some_and(|due| due <= now) {
            return Closing::Idle;
        }
        deadline = [idle_due, head_due, next].into_iter().flatten().min();
    }
}

/// The connection's socket, telling [`Activity`] when a request head starts to arrive.
#[derive(Debug)]
struct Watched {
    tcp: TcpStream,
    activity: Arc<Activity>,
    protocol: Protocol,
}

/// What a connection's first bytes have told of its protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Protocol {
    /// Its bytes so far are this many of the HTTP/2 preface's (a first read may hold a single
    /// byte, and a request line that starts like the preface, such as `P` of `POST`, is HTTP/1
    /// only once it differs).
    Unknown(usize),
    Http1,
    Http2,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.tcp).poll_read(cx, buf);
        let read = &buf.filled()[before..];
        if read.is_empty() {
            return polled;
        }
        if let Protocol::Unknown(matched) = self.protocol {
            let rest = &HTTP2_PREFACE[matched..];
            let n = read.len().min(rest.len());
            self.protocol = if read[..n] != rest[..n] {
                Protocol::Http1
            } else if n == rest.len() {
                // No heads to time: the idle timeout alone applies.
                self.activity.head_ms.store(NO_HEAD, Ordering::Release);
                Protocol::Http2
            } else {
                Protocol::Unknown(matched + n)
            };
        }
        if self.protocol != Protocol::Http2 {
            self.activity.received();
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.tcp).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.tcp).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_shutdown(cx)
    }
}

/// One request in flight, from the call until its response body is finished or dropped.
#[derive(Debug)]
struct InFlight(Arc<Activity>);

impl InFlight {
    fn begin(activity: &Arc<Activity>) -> Self {
        activity.in_flight.fetch_add(1, Ordering::AcqRel);
        // Its head is complete: the next one is timed from its own first byte.
        activity.head_ms.store(NO_HEAD, Ordering::Release);
        Self(activity.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let a = &self.0;
        // The time first: a watcher that then sees no request in flight reads it.
        a.since_ms.fetch_max(a.now_ms(), Ordering::AcqRel);
        a.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The server's routes ([`Routes::call`]), counting the requests in flight on its connection.
#[derive(Debug, Clone)]
struct Tracked {
    routes: Routes,
    activity: Arc<Activity>,
}

impl hyper::service::Service<http::Request<Incoming>> for Tracked {
    type Response = http::Response<TrackedBody>;
    type Error = Infallible;
    type Future = TrackedFuture;

    fn call(&self, request: http::Request<Incoming>) -> Self::Future {
        let in_flight = InFlight::begin(&self.activity);
        TrackedFuture {
            response: self.routes.call(request.map(Body::new)),
            in_flight: Some(in_flight),
        }
    }
}

/// A request's [`Answer`], its body then tracked as [`TrackedBody`]. A future of its own, not a
/// boxed `async` block: the box and the copy of the answer's future into it cost about 400
/// instructions a request (callgrind).
struct TrackedFuture {
    response: Answer,
    in_flight: Option<InFlight>,
}

impl Future for TrackedFuture {
    type Output = Result<http::Response<TrackedBody>, Infallible>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Poll::Ready(response) = Pin::new(&mut self.response).poll(cx) else {
            return Poll::Pending;
        };
        let in_flight = self.in_flight.take();
        Poll::Ready(Ok(response.map(|body| TrackedBody { body, in_flight })))
    }
}

/// A response body that keeps its request counted as in flight until it ends or is dropped.
#[derive(Debug)]
struct TrackedBody {
    body: Body,
    in_flight: Option<InFlight>,
}

impl HttpBody for TrackedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let frame = Pin::new(&mut self.body).poll_frame(cx);
        if let Poll::Ready(None) = frame {
            self.in_flight = None;
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
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
