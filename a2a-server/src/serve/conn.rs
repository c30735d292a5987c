//! One connection's shared state ([`ConnState`]), which its socket, its requests and its
//! watcher ([`watch`]) update and read without waking each other, and the watcher itself.

use super::output::{ConnOutput, OutputBudget};

use futures::task::AtomicWaker;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// [`ConnState::head_ms`] when no request head is being read (and
/// [`ConnState::blocked_ms`] when no write is blocked).
const NO_HEAD: u64 = u64::MAX;

/// When a watcher's timeouts fire.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timeouts {
    pub(crate) idle: Duration,
    pub(crate) header: Duration,
    pub(crate) send: Duration,
}

/// What a connection's socket, requests, watcher and listener share.
#[derive(Debug)]
pub(crate) struct ConnState {
    opened: Instant,
    /// Requests in flight (counted by the request layer, when it sees this connection).
    in_flight: AtomicUsize,
    /// When the last request in flight ended (or the connection opened), in milliseconds since
    /// `opened`.
    since_ms: AtomicU64,
    /// When the first byte of the HTTP/1 head being read arrived, in milliseconds since
    /// `opened`; [`NO_HEAD`] when none is being read. The first head is timed from the moment
    /// the connection opened: a client that connects and sends nothing holds a slot as surely
    /// as one that sends slowly.
    head_ms: AtomicU64,
    /// Reads and writes that moved bytes, counted only while requests are not tracked: the
    /// watcher's only sign of life then.
    moved: AtomicU64,
    /// Whether the peer has sent anything at all.
    heard: AtomicBool,
    /// The output held for this connection (see [`super::output`]).
    output: ConnOutput,
    /// Since when a write has been waiting for room in the socket's send buffer, in
    /// milliseconds since `opened`; [`NO_HEAD`] when none waits.
    blocked_ms: AtomicU64,
    /// Response bodies that handed a piece to the HTTP server which has not asked for the next
    /// yet (it waits for the peer's flow-control window or the socket).
    waiting: AtomicUsize,
    /// When a waiting body was last taken on (or the first one began to wait), in
    /// milliseconds since `opened`.
    progress_ms: AtomicU64,
    /// Whether the request layer counts this connection's requests: only then do
    /// `in_flight`, `since_ms` and `head_ms` tell whether it is serving anyone.
    tracked: AtomicBool,
    /// Set to close the connection: its socket's reads end and its writes fail.
    closing: AtomicBool,
    /// The connection's task, registered whenever its socket returns `Pending`, so that
    /// closing wakes it.
    waker: AtomicWaker,
    /// Notified when the socket is dropped: the watcher's end.
    ended: Notify,
}

/// Why a watcher closes its connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Closing {
    /// No request in flight for the idle timeout.
    Idle,
    /// A request head took longer than the header-read timeout (slowloris).
    SlowHead,
    /// Requests are not tracked and nothing was received within the header-read timeout.
    Silent,
    /// Requests are not tracked and no byte moved for the idle timeout.
    Still,
    /// Output waited for the peer, without progress, for the send timeout.
    Send,
}

impl Closing {
    fn as_str(self) -> &'static str {
        match self {
            Closing::Idle => "idle",
            Closing::SlowHead => "request head too slow",
            Closing::Silent => "nothing received",
            Closing::Still => "no bytes moved",
            Closing::Send => "the peer read nothing within the send timeout",
        }
    }
}

impl ConnState {
    pub(crate) fn new(budget: std::sync::Arc<OutputBudget>) -> Self {
        Self {
            output: ConnOutput::new(budget),
            blocked_ms: AtomicU64::new(NO_HEAD),
            waiting: AtomicUsize::new(0),
            progress_ms: AtomicU64::new(0),
            opened: Instant::now(),
            in_flight: AtomicUsize::new(0),
            since_ms: AtomicU64::new(0),
            head_ms: AtomicU64::new(0),
            moved: AtomicU64::new(0),
            heard: AtomicBool::new(false),
            tracked: AtomicBool::new(false),
            closing: AtomicBool::new(false),
            waker: AtomicWaker::new(),
            ended: Notify::new(),
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.opened.elapsed().as_millis()).unwrap_or(NO_HEAD - 1)
    }

    fn at(&self, ms: u64) -> Instant {
        self.opened + Duration::from_millis(ms)
    }

    /// From now on, requests on this connection are counted by the request layer.
    pub(crate) fn track(&self) {
        self.tracked.store(true, Ordering::Release);
    }

    fn tracked(&self) -> bool {
        self.tracked.load(Ordering::Acquire)
    }

    /// Bytes arrived; `http1`: they may be part of a request head.
    pub(crate) fn on_read(&self, http1: bool) {
        if !self.heard.load(Ordering::Relaxed) {
            self.heard.store(true, Ordering::Release);
        }
        if !self.tracked() {
            self.moved.fetch_add(1, Ordering::Relaxed);
        } else if http1
            && self.in_flight.load(Ordering::Acquire) == 0
            && self.head_ms.load(Ordering::Acquire) == NO_HEAD
        {
            // With no request in flight, these bytes start the next head.
            self.head_ms.store(self.now_ms(), Ordering::Release);
        }
    }

    /// Bytes were written.
    pub(crate) fn on_write(&self) {
        if !self.tracked.load(Ordering::Relaxed) {
            self.moved.fetch_add(1, Ordering::Relaxed);
        }
        if self.blocked_ms.load(Ordering::Relaxed) != NO_HEAD {
            self.blocked_ms.store(NO_HEAD, Ordering::Release);
        }
    }

    /// A write found the socket's send buffer full.
    pub(crate) fn on_write_blocked(&self) {
        if self.blocked_ms.load(Ordering::Relaxed) == NO_HEAD {
            self.blocked_ms.store(self.now_ms(), Ordering::Release);
        }
    }

    /// The output held for this connection.
    pub(crate) fn output(&self) -> &ConnOutput {
        &self.output
    }

    /// A response body handed a piece over; the HTTP server has not asked for the next yet.
    pub(crate) fn waiting(&self) {
        if self.waiting.fetch_add(1, Ordering::AcqRel) == 0 {
            self.progress_ms.fetch_max(self.now_ms(), Ordering::AcqRel);
        }
    }

    /// A waiting body was asked for more (or dropped): the peer took on what it was sent.
    pub(crate) fn resumed(&self) {
        self.progress_ms.fetch_max(self.now_ms(), Ordering::AcqRel);
        self.waiting.fetch_sub(1, Ordering::AcqRel);
    }

    /// Since when output has waited for the peer without progress, if it does: a write
    /// blocked on a full socket, or a response body whose piece the HTTP server holds (for the
    /// peer's flow-control window).
    fn stalled_since(&self) -> Option<Instant> {
        let blocked = self.blocked_ms.load(Ordering::Acquire);
        let blocked = (blocked != NO_HEAD).then_some(blocked);
        let held = (self.waiting.load(Ordering::Acquire) > 0)
            .then(|| self.progress_ms.load(Ordering::Acquire));
        blocked.into_iter().chain(held).min().map(|ms| self.at(ms))
    }

    /// The connection speaks HTTP/2: there are no heads to time.
    pub(crate) fn http2(&self) {
        self.head_ms.store(NO_HEAD, Ordering::Release);
    }

    /// A request's head is complete and it is being served.
    pub(crate) fn begin_request(&self) {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        // The next head is timed from its own first byte.
        self.head_ms.store(NO_HEAD, Ordering::Release);
    }

    /// A request's response has been sent (or dropped).
    pub(crate) fn end_request(&self) {
        // The time first: a watcher that then sees no request in flight reads it.
        self.since_ms.fetch_max(self.now_ms(), Ordering::AcqRel);
        self.in_flight.fetch_sub(1, Ordering::AcqRel);
    }

    /// Closes the connection: its socket's reads return end-of-file and its writes fail from
    /// now on, and its task is woken to see it.
    pub(crate) fn close(&self) {
        self.closing.store(true, Ordering::Release);
        self.waker.wake();
    }

    pub(crate) fn is_closing(&self) -> bool {
        self.closing.load(Ordering::Acquire)
    }

    /// Remembers the connection's task, to wake when closing.
    pub(crate) fn register(&self, waker: &std::task::Waker) {
        self.waker.register(waker);
    }

    /// The socket is gone: the watcher may stop.
    pub(crate) fn ended(&self) {
        self.ended.notify_one();
    }

    /// Since when this connection has served no one, if it may be closed to make room for a
    /// new one: no request in flight (or, when requests are not tracked, nothing ever
    /// received), and not already closing.
    pub(crate) fn quiet_since(&self) -> Option<Instant> {
        if self.is_closing() {
            return None;
        }
        if !self.tracked() {
            return (!self.heard.load(Ordering::Acquire)).then_some(self.opened);
        }
        if self.in_flight.load(Ordering::Acquire) > 0 {
            return None;
        }
        // A head being read (slowly or not) counts from its first byte; an idle connection
        // from the end of its last request.
        let head = self.head_ms.load(Ordering::Acquire);
        Some(self.at(if head == NO_HEAD {
            self.since_ms.load(Ordering::Acquire)
        } else {
            head
        }))
    }
}

/// Watches one connection until its socket is dropped, and closes it when a rule says so (see
/// the module's notes), or, once `shutdown` is cancelled, [`FLUSH_GRACE`] after it last served
/// a request, unless the HTTP server closed it first.
pub(crate) async fn watch(
    conn: std::sync::Arc<ConnState>,
    timeouts: Timeouts,
    shutdown: Option<CancellationToken>,
) {
    let shutting_down = async {
        match shutdown {
            Some(token) => token.cancelled_owned().await,
            None => std::future::pending().await,
        }
        drained(&conn).await;
        // A response body's end is not yet on the wire: hyper, shutting the connection down
        // gracefully (`Server::serve`, or `axum::serve` with `with_graceful_shutdown`), still
        // writes what it holds (a stream's last chunk, a gRPC call's trailers, HTTP/2's
        // `GOAWAY`), then closes the connection itself, which ends this watch. Closed before,
        // the client would lose that end.
        tokio::time::sleep(FLUSH_GRACE).await;
    };
    let closing = tokio::select! {
        closing = rules(&conn, timeouts) => closing.as_str(),
        () = shutting_down => "shutting down",
        () = conn.ended.notified() => return,
    };
    tracing::debug!(reason = closing, "closing a connection");
    conn.close();
}

/// How long, shutting down, a connection that serves no more requests is left to the HTTP server
/// to close before its watcher closes it: an HTTP server that does not shut its connections
/// down gracefully leaves them open.
const FLUSH_GRACE: Duration = Duration::from_secs(1);

/// How often a connection is looked at while shutting down, until it serves no request.
const DRAIN_TICK: Duration = Duration::from_millis(10);

/// Completes once the connection serves no request. Never for a connection whose requests are
/// not tracked: the shutdown grace bounds those.
async fn drained(conn: &ConnState) {
    if !conn.tracked() {
        return std::future::pending().await;
    }
    while conn.in_flight.load(Ordering::Acquire) > 0 {
        tokio::time::sleep(DRAIN_TICK).await;
    }
}

/// Completes when the connection is to be closed.
///
/// It looks at least every `min(idle, header, send)` (the tick) and, once it sees what it waits
/// for, sleeps until the exact deadline: a head or a stall that starts after a look is seen at
/// the next, before its deadline, since the tick is no longer than the timeout. A long-lived
/// request (an SSE stream) thus costs a look every tick and nothing per event or request.
async fn rules(conn: &ConnState, timeouts: Timeouts) -> Closing {
    let Timeouts { idle, header, send } = timeouts;
    let tick = idle.min(header).min(send);
    let mut deadline = Instant::now().checked_add(tick);
    // Untracked: the count of reads and writes last seen, and when it last changed.
    let mut moved = (conn.moved.load(Ordering::Relaxed), Instant::now());
    loop {
        match deadline {
            Some(at) => tokio::time::sleep_until(at).await,
            // Timeouts beyond the end of time: never closed.
            None => std::future::pending().await,
        }
        let now = Instant::now();
        let mut next = now.checked_add(tick);
        if conn.is_closing() {
            // Closed by the listener (at the cap) or the shutdown: nothing more to decide.
            return std::future::pending().await;
        }
        // Whatever else holds: output the peer does not take is bounded in time.
        if let Some(due) = conn.stalled_since().and_then(|s| s.checked_add(send)) {
            if due <= now {
                return Closing::Send;
            }
            next = Some(next.map_or(due, |n| n.min(due)));
        }
        if !conn.tracked() {
            let silent_due = (!conn.heard.load(Ordering::Acquire))
                .then(|| conn.opened.checked_add(header))
                .flatten();
            if silent_due.is_some_and(|due| due <= now) {
                return Closing::Silent;
            }
            let count = conn.moved.load(Ordering::Relaxed);
            if count != moved.0 {
                moved = (count, now);
            }
            let still_due = moved.1.checked_add(idle);
            if still_due.is_some_and(|due| due <= now) {
                return Closing::Still;
            }
            deadline = [silent_due, still_due, next].into_iter().flatten().min();
            continue;
        }
        if conn.in_flight.load(Ordering::Acquire) > 0 {
            deadline = next;
            continue;
        }
        let idle_due = conn
            .at(conn.since_ms.load(Ordering::Acquire))
            .checked_add(idle);
        let head = conn.head_ms.load(Ordering::Acquire);
        let head_due = (head != NO_HEAD)
            .then(|| conn.at(head).checked_add(header))
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
