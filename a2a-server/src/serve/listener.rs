//! [`ProtectedListener`]: a TCP listener that caps, watches and closes the connections it
//! accepts; [`ProtectedStream`], their sockets; [`Connection`], their connect info.

use super::Protections;
use super::conn::{ConnState, Timeouts, watch};
use axum::extract::connect_info::Connected;
use axum::serve::{IncomingStream, Listener};
use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

/// The answer to a connection that finds every slot serving a request, written without
/// waiting before closing it.
const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\
    connection: close\r\nretry-after: 1\r\n\r\n";

/// How long accepting waits for a connection closed to make room to release its file. Such a
/// connection serves no request, so its task drops it as soon as it runs.
const EVICTION_WAIT: Duration = Duration::from_millis(100);

/// The first bytes of every HTTP/2 connection (its preface, RFC 9113 §3.4), enough to tell it
/// from an HTTP/1 request line.
const HTTP2_PREFACE: &[u8] = b"PRI * HTTP/2.0";

/// The open connections of one listener, under its cap.
#[derive(Debug)]
pub(crate) struct Registry {
    open: Mutex<Open>,
    max: usize,
    /// Notified when the last connection closes.
    drained: Notify,
    /// Notified when any connection closes.
    freed: Notify,
}

/// The connections, by id.
#[derive(Debug, Default)]
struct Open {
    next: u64,
    by_id: HashMap<u64, Arc<ConnState>, foldhash::fast::RandomState>,
}

/// A connection found every slot serving a request.
#[derive(Debug)]
struct Full;

impl Registry {
    fn new(max: usize) -> Self {
        Self {
            open: Mutex::new(Open::default()),
            max: max.max(1),
            drained: Notify::new(),
            freed: Notify::new(),
        }
    }

    fn open(&self) -> std::sync::MutexGuard<'_, Open> {
        // The map stays consistent whatever panicked while it was held.
        self.open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Admits `conn`, closing the quietest connection that serves no one if the cap is reached
    /// (see [`ConnState::quiet_since`]). Its id and that of the connection closed to make
    /// room, or [`Full`] if every slot serves a request.
    fn admit(&self, conn: &Arc<ConnState>) -> Result<(u64, Option<u64>), Full> {
        let mut open = self.open();
        let mut evicted = None;
        // Connections being closed still hold a file until their task drops them, briefly;
        // they do not count against the cap.
        if open.by_id.len() >= self.max {
            let mut live = 0;
            let mut quietest: Option<(tokio::time::Instant, u64, &Arc<ConnState>)> = None;
            for (&id, c) in &open.by_id {
                if c.is_closing() {
                    continue;
                }
                live += 1;
                if let Some(since) = c.quiet_since()
                    && quietest.is_none_or(|(q, _, _)| since < q)
                {
                    quietest = Some((since, id, c));
                }
            }
            if live >= self.max {
                match quietest {
                    Some((_, id, c)) => {
                        tracing::debug!("connection limit reached; closing the quietest");
                        c.close();
                        evicted = Some(id);
                    }
                    None => return Err(Full),
                }
            }
        }
        let id = open.next;
        open.next += 1;
        open.by_id.insert(id, conn.clone());
        Ok((id, evicted))
    }

    fn remove(&self, id: u64) {
        let mut open = self.open();
        open.by_id.remove(&id);
        self.freed.notify_waiters();
        if open.by_id.is_empty() {
            self.drained.notify_waiters();
        }
    }

    /// Waits until connection `id` is gone, for at most `limit`.
    async fn gone(&self, id: u64, limit: Duration) {
        let _ = tokio::time::timeout(limit, async {
            loop {
                let freed = self.freed.notified();
                tokio::pin!(freed);
                freed.as_mut().enable();
                if !self.open().by_id.contains_key(&id) {
                    return;
                }
                freed.await;
            }
        })
        .await;
    }

    /// Closes every open connection.
    pub(crate) fn close_all(&self) {
        for c in self.open().by_id.values() {
            c.close();
        }
    }

    /// Waits until every connection is closed, for at most `limit`; whether they all were.
    pub(crate) async fn drained(&self, limit: Duration) -> bool {
        tokio::time::timeout(limit, async {
            loop {
                let drained = self.drained.notified();
                tokio::pin!(drained);
                drained.as_mut().enable();
                if self.open().by_id.is_empty() {
                    return;
                }
                drained.await;
            }
        })
        .await
        .is_ok()
    }
}

/// A TCP listener under [`Protections`] (made by [`Protections::listener`]): each connection
/// it accepts gets `TCP_NODELAY`, a slot under the cap (making room by closing the quietest
/// connection that serves no one, or answering `503` when every one serves a request) and a
/// watcher that closes it when a timeout says so. Accept errors are handled as
/// [`tokio::net::TcpListener`]'s [`Listener`] implementation does: retried, after a pause
/// when they are not about one connection (e.g. the open-file limit).
#[derive(Debug)]
pub struct ProtectedListener {
    tcp: TcpListener,
    protections: Protections,
    registry: Arc<Registry>,
    /// Whether the last connection found every slot busy (logged once per burst).
    refusing: bool,
}

impl ProtectedListener {
    pub(super) fn new(tcp: TcpListener, protections: Protections) -> Self {
        let registry = Arc::new(Registry::new(protections.max_connections));
        if let Some(token) = protections.shutdown.clone() {
            let registry = Arc::downgrade(&registry);
            let grace = protections.shutdown_grace;
            tokio::spawn(close_after_grace(token, grace, registry));
        }
        Self {
            tcp,
            protections,
            registry,
            refusing: false,
        }
    }

    /// The listener's connections.
    pub(crate) fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The next connection under the cap.
    async fn next(&mut self) -> (ProtectedStream, SocketAddr) {
        loop {
            let (tcp, addr) = match &self.protections.shutdown {
                Some(token) => tokio::select! {
                    accepted = Listener::accept(&mut self.tcp) => accepted,
                    // Shutting down: accept nothing more.
                    () = token.cancelled() => std::future::pending().await,
                },
                None => Listener::accept(&mut self.tcp).await,
            };
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::debug!(error = %e, "could not set TCP_NODELAY");
            }
            let conn = Arc::new(ConnState::new(self.protections.output.clone()));
            let Ok((id, evicted)) = self.registry.admit(&conn) else {
                if !self.refusing {
                    tracing::warn!(
                        max_connections = self.registry.max,
                        "every connection is serving a request; refusing new connections"
                    );
                    self.refusing = true;
                }
                // A fresh socket's send buffer is empty: this never waits.
                let _ = tcp.try_write(BUSY);
                continue;
            };
            self.refusing = false;
            if let Some(evicted) = evicted {
                // Its file is released before the next accept: at the cap, a flood of new
                // connections must not outrun the closing ones and exhaust the file limit
                // (whose accept errors make the listener pause).
                self.registry.gone(evicted, EVICTION_WAIT).await;
            }
            let timeouts = Timeouts {
                idle: self.protections.idle_timeout,
                header: self.protections.header_read_timeout,
                send: self.protections.send_timeout,
            };
            tokio::spawn(watch(
                conn.clone(),
                timeouts,
                self.protections.shutdown.clone(),
            ));
            let stream = ProtectedStream {
                tcp,
                conn,
                id,
                registry: self.registry.clone(),
                layered: self.protections.layered.clone(),
                protocol: Protocol::Unknown(0),
            };
            return (stream, addr);
        }
    }
}

/// Closes every connection of `registry` `grace` after `token` is cancelled.
async fn close_after_grace(
    token: tokio_util::sync::CancellationToken,
    grace: Duration,
    registry: Weak<Registry>,
) {
    token.cancelled().await;
    if let Some(registry) = registry.upgrade()
        && !registry.drained(grace).await
    {
        tracing::warn!("connections still open after the shutdown grace period; closing them");
        registry.close_all();
    }
}

impl Listener for ProtectedListener {
    type Io = ProtectedStream;
    type Addr = SocketAddr;

    fn accept(&mut self) -> impl Future<Output = (ProtectedStream, SocketAddr)> + Send {
        self.next()
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.tcp.local_addr()
    }
}

/// The connect info that links a request to its connection's watcher (see
/// [`Protections::layer`]): serve with
/// `into_make_service_with_connect_info::<Connection>()`. Also the client's address.
#[derive(Debug, Clone)]
pub struct Connection {
    pub(super) conn: Arc<ConnState>,
    remote: SocketAddr,
}

impl Connection {
    /// The client's address.
    pub fn remote_addr(&self) -> SocketAddr {
        self.remote
    }
}

impl Connected<IncomingStream<'_, ProtectedListener>> for Connection {
    fn connect_info(stream: IncomingStream<'_, ProtectedListener>) -> Self {
        let io = stream.io();
        // Requests are counted when the layer exists and finds this connect info.
        if io.layered.load(Ordering::Acquire) {
            io.conn.track();
        }
        Self {
            conn: io.conn.clone(),
            remote: *stream.remote_addr(),
        }
    }
}

/// A connection accepted by a [`ProtectedListener`]: its TCP stream, which holds the
/// connection's slot until dropped, tells the watcher what arrives, and ends once the watcher
/// closes it (reads return end-of-file, writes fail).
#[derive(Debug)]
pub struct ProtectedStream {
    tcp: TcpStream,
    conn: Arc<ConnState>,
    id: u64,
    registry: Arc<Registry>,
    layered: Arc<AtomicBool>,
    protocol: Protocol,
}

impl ProtectedStream {
    /// The TCP stream.
    pub fn get_ref(&self) -> &TcpStream {
        &self.tcp
    }

    /// The connection's state, for a server that counts its requests itself.
    pub(crate) fn conn(&self) -> &Arc<ConnState> {
        &self.conn
    }

    fn closed_error() -> io::Error {
        io::Error::new(
            io::ErrorKind::ConnectionAborted,
            "connection closed by its watcher",
        )
    }
}

impl Drop for ProtectedStream {
    fn drop(&mut self) {
        self.registry.remove(self.id);
        self.conn.ended();
    }
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

impl AsyncRead for ProtectedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.conn.is_closing() {
            return Poll::Ready(Ok(()));
        }
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.tcp).poll_read(cx, buf);
        if polled.is_pending() {
            self.conn.register(cx.waker());
            // Closed between the check and the registration: it woke no one.
            if self.conn.is_closing() {
                return Poll::Ready(Ok(()));
            }
            return polled;
        }
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
                self.conn.http2();
                Protocol::Http2
            } else {
                Protocol::Unknown(matched + n)
            };
        }
        self.conn.on_read(self.protocol != Protocol::Http2);
        polled
    }
}

impl ProtectedStream {
    /// A write's outcome, seen by the watcher; `Pending` registers the task to wake on close.
    fn wrote<T>(&self, cx: &Context<'_>, polled: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        match &polled {
            Poll::Pending => {
                self.conn.on_write_blocked();
                self.conn.register(cx.waker());
                if self.conn.is_closing() {
                    return Poll::Ready(Err(Self::closed_error()));
                }
            }
            Poll::Ready(Ok(_)) => self.conn.on_write(),
            Poll::Ready(Err(_)) => {}
        }
        polled
    }
}

impl AsyncWrite for ProtectedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.conn.is_closing() {
            return Poll::Ready(Err(Self::closed_error()));
        }
        let polled = Pin::new(&mut self.tcp).poll_write(cx, buf);
        self.wrote(cx, polled)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if self.conn.is_closing() {
            return Poll::Ready(Err(Self::closed_error()));
        }
        let polled = Pin::new(&mut self.tcp).poll_write_vectored(cx, bufs);
        self.wrote(cx, polled)
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
