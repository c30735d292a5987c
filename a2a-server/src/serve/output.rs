//! Output held for slow readers: the bytes of answers built but not yet taken by the HTTP
//! server, counted per connection and in total ([`OutputBudget`]), an answer refused when it
//! would pass a cap ([`refusal`]), and the [`Meter`] that cuts a large answer into pieces and
//! keeps the count as they are handed over.
//!
//! What is counted is what a reader that does not read can make the server hold: a response
//! body from the moment the router returns it until hyper takes its bytes (a large frame is
//! handed over in [`CHUNK`]-sized copies, so hyper never holds more than a piece of it), and the
//! last piece handed over until hyper asks for the next (while it waits for the peer's flow
//! control window or the socket, it holds that piece). Hyper's own write buffers are bounded
//! by its settings, which [`Server::serve`](crate::Server::serve) sets (see
//! `docs/server-limits.md`).

use super::conn::ConnState;
use axum::body::{Body, Bytes};
use axum::http;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The largest piece of an answer handed to hyper at once: a larger frame is cut into copies
/// of this size, so that its memory is released once the last piece is out, and what hyper
/// holds per stream stays small.
pub(crate) const CHUNK: usize = 32 * 1024;

/// The memory assumed when it cannot be read (off Linux).
const ASSUMED_MEMORY: u64 = 4 << 30;

/// The output caps and the bytes held in total, shared by a server's connections.
#[derive(Debug)]
pub(crate) struct OutputBudget {
    held: AtomicU64,
    pub(crate) per_connection: u64,
    pub(crate) total: u64,
}

impl OutputBudget {
    pub(crate) fn new(per_connection: u64, total: u64) -> Self {
        Self {
            held: AtomicU64::new(0),
            per_connection: per_connection.max(1),
            total: total.max(1),
        }
    }

    /// Bytes held in total.
    pub(crate) fn held(&self) -> u64 {
        self.held.load(Ordering::Acquire)
    }

    /// Whether no more answers are taken in total.
    fn full(&self) -> bool {
        self.held() >= self.total
    }

    /// Takes `bytes` if they fit under the cap, or if nothing is held (an answer larger than
    /// the cap is sent when it is the only one).
    fn try_take(&self, bytes: u64) -> bool {
        fits(&self.held, bytes, self.total)
    }

    fn take(&self, bytes: u64) {
        self.held.fetch_add(bytes, Ordering::AcqRel);
    }

    fn give_back(&self, bytes: u64) {
        self.held.fetch_sub(bytes, Ordering::AcqRel);
    }
}

/// Adds `bytes` to `held` if the sum stays within `cap` or `held` is zero.
fn fits(held: &AtomicU64, bytes: u64, cap: u64) -> bool {
    held.fetch_update(Ordering::AcqRel, Ordering::Acquire, |h| {
        (h == 0 || h.saturating_add(bytes) <= cap).then(|| h.saturating_add(bytes))
    })
    .is_ok()
}

/// One connection's count of output held, and its budget.
#[derive(Debug)]
pub(crate) struct ConnOutput {
    held: AtomicU64,
    budget: Arc<OutputBudget>,
}

impl ConnOutput {
    pub(crate) fn new(budget: Arc<OutputBudget>) -> Self {
        Self {
            held: AtomicU64::new(0),
            budget,
        }
    }

    /// Bytes held for this connection.
    pub(crate) fn held(&self) -> u64 {
        self.held.load(Ordering::Acquire)
    }

    /// Why a new request is refused before it is served, if it is: this connection or the
    /// server is at its cap.
    pub(crate) fn full(&self) -> Option<Refused> {
        if self.held() >= self.budget.per_connection {
            Some(Refused::Connection)
        } else if self.budget.full() {
            Some(Refused::Total)
        } else {
            None
        }
    }

    /// Takes an answer of `bytes` under both caps (each lets an answer through when nothing
    /// else is held under it), or says which cap refuses it.
    pub(crate) fn admit(&self, bytes: u64) -> Result<(), Refused> {
        if bytes == 0 {
            return Ok(());
        }
        if !fits(&self.held, bytes, self.budget.per_connection) {
            return Err(Refused::Connection);
        }
        if !self.budget.try_take(bytes) {
            self.held.fetch_sub(bytes, Ordering::AcqRel);
            return Err(Refused::Total);
        }
        Ok(())
    }

    /// Counts `bytes` that are held whatever the caps (a frame of a streamed answer).
    fn take(&self, bytes: u64) {
        if bytes > 0 {
            self.held.fetch_add(bytes, Ordering::AcqRel);
            self.budget.take(bytes);
        }
    }

    /// Bytes taken earlier are released.
    fn give_back(&self, bytes: u64) {
        if bytes > 0 {
            self.held.fetch_sub(bytes, Ordering::AcqRel);
            self.budget.give_back(bytes);
        }
    }
}

/// Which cap refused an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The connection's ([`Protections::max_output_per_connection`](super::Protections::max_output_per_connection)).
    Connection,
    /// The server's ([`Protections::max_output`](super::Protections::max_output)).
    Total,
}

/// When a request is refused: before it was served (nothing happened), or after (the
/// operation was performed, its answer is not sent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    Before,
    After,
}

/// The answer to a request refused at an output cap: for gRPC, the status `RESOURCE_EXHAUSTED`
/// (trailers only); otherwise `503 Service Unavailable` with `retry-after: 1` and the reason in
/// plain text.
pub(crate) fn refusal(grpc: bool, why: Refused, stage: Stage) -> http::Response<Body> {
    let whose = match why {
        Refused::Connection => "this connection holds too many bytes of answers not yet read",
        Refused::Total => "the server holds too many bytes of answers not yet read",
    };
    let what = match stage {
        Stage::Before => "the request was not served; read the pending answers and retry",
        Stage::After => {
            "the request was served but its answer is withheld; read the pending answers and \
             retry a read, or use another connection"
        }
    };
    let message = format!("output limit: {whose}; {what}");
    if grpc {
        return tonic::Status::resource_exhausted(message).into_http::<Body>();
    }
    let mut response = http::Response::new(Body::from(message));
    *response.status_mut() = http::StatusCode::SERVICE_UNAVAILABLE;
    let headers = response.headers_mut();
    headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(
        http::header::RETRY_AFTER,
        http::HeaderValue::from_static("1"),
    );
    response
}

/// Whether a request is a gRPC call, or a response a gRPC answer, by its `headers`: any form
/// of gRPC, served or not (a refusal is then a gRPC status). Looked at only to refuse, not
/// for every request.
pub(crate) fn is_grpc(headers: &http::HeaderMap) -> bool {
    crate::http::ContentType::of(headers) != crate::http::ContentType::Other
}

/// The size of an answer known before it is sent: a binding that builds its answer whole
/// (the gRPC binding, whose body tonic frames only when polled) puts it in the response's
/// extensions, so that the answer counts (and may be refused) before any of it is sent.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AnswerSize(pub(crate) u64);

/// The bytes a response will hold: its body's size if known, or the [`AnswerSize`] its binding
/// declared.
pub(crate) fn size_of<B: http_body::Body>(response: &http::Response<B>) -> u64 {
    let hint = response.body().size_hint();
    let declared = response.extensions().get::<AnswerSize>().map_or(0, |s| s.0);
    hint.exact().unwrap_or(hint.lower()).max(declared)
}

/// One response body's count, as its bytes go from the body to hyper.
#[derive(Debug)]
pub(crate) struct Meter {
    conn: Arc<ConnState>,
    /// Admitted with the response, not yet seen in a frame.
    reserve: u64,
    /// Counted for frames: the whole of the large frame being cut (its memory lives until the
    /// last piece is out), or the piece last handed over (until hyper asks for the next).
    counted: u64,
    /// The rest of a large frame, still to be handed over.
    rest: Bytes,
    /// Whether a piece has been handed over and hyper has not asked for the next yet.
    waiting: bool,
}

impl Meter {
    /// A meter for a response admitted with `reserve` bytes.
    pub(crate) fn new(conn: Arc<ConnState>, reserve: u64) -> Self {
        Self {
            conn,
            reserve,
            counted: 0,
            rest: Bytes::new(),
            waiting: false,
        }
    }

    /// Hyper asks for more: the piece handed over last is taken on (and no longer counted,
    /// unless it was cut from a frame still being cut).
    pub(crate) fn asked(&mut self) {
        if self.waiting {
            self.waiting = false;
            self.conn.resumed();
        }
        if self.rest.is_empty() && self.counted > 0 {
            self.conn.output().give_back(self.counted);
            self.counted = 0;
        }
    }

    /// The next piece of a large frame being cut, if any.
    pub(crate) fn next_piece(&mut self) -> Option<Bytes> {
        if self.rest.is_empty() {
            return None;
        }
        let n = CHUNK.min(self.rest.len());
        let piece = Bytes::copy_from_slice(&self.rest[..n]);
        if n == self.rest.len() {
            // The frame's memory goes; what is left is the piece hyper will hold.
            self.rest = Bytes::new();
            let n = n as u64;
            self.conn.output().give_back(self.counted.saturating_sub(n));
            self.counted = self.counted.min(n);
        } else {
            bytes::Buf::advance(&mut self.rest, n);
        }
        self.handed();
        Some(piece)
    }

    /// A data frame from the body: counted (from the reserve, and beyond it whatever the
    /// caps), and handed over whole if small, or its first piece if large.
    pub(crate) fn frame(&mut self, data: Bytes) -> Bytes {
        let len = data.len() as u64;
        let reserved = len.min(self.reserve);
        self.reserve -= reserved;
        self.conn.output().take(len - reserved);
        self.counted += len;
        if data.len() <= CHUNK {
            self.handed();
            return data;
        }
        self.rest = data;
        self.next_piece().unwrap_or_default()
    }

    /// Whether no piece of a cut frame is left to hand over.
    pub(crate) fn is_drained(&self) -> bool {
        self.rest.is_empty()
    }

    fn handed(&mut self) {
        if !self.waiting {
            self.waiting = true;
            self.conn.waiting();
        }
    }
}

impl Drop for Meter {
    fn drop(&mut self) {
        if self.waiting {
            self.conn.resumed();
        }
        self.conn.output().give_back(self.reserve + self.counted);
    }
}

/// The default of [`Protections::max_output`](super::Protections::max_output): an eighth of
/// the memory the process may use (the smaller of the machine's and its cgroup's limit), at
/// least 64 MiB and at most 4 GiB.
pub fn default_max_output() -> u64 {
    output_for(memory())
}

/// The default of
/// [`Protections::max_output_per_connection`](super::Protections::max_output_per_connection):
/// a sixteenth of [`default_max_output`], at least 8 MiB and at most 64 MiB.
pub fn default_max_output_per_connection() -> u64 {
    per_connection_for(default_max_output())
}

fn output_for(memory: u64) -> u64 {
    (memory / 8).clamp(64 << 20, 4 << 30)
}

fn per_connection_for(total: u64) -> u64 {
    (total / 16).clamp(8 << 20, 64 << 20)
}

/// The memory this process may use: the machine's, or its cgroup's limit if lower.
fn memory() -> u64 {
    let machine = read_small("/proc/meminfo")
        .and_then(|info| {
            let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kib.saturating_mul(1024))
        })
        .unwrap_or(ASSUMED_MEMORY);
    let cgroup = read_small("/sys/fs/cgroup/memory.max")
        .and_then(|max| max.trim().parse::<u64>().ok())
        .unwrap_or(u64::MAX);
    machine.min(cgroup)
}

/// A small system file's text (at most 64 KiB of it).
fn read_small(path: &str) -> Option<String> {
    use std::io::Read as _;
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(64 * 1024)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_caps_follow_the_memory() {
        assert_eq!(output_for(24 << 30), 3 << 30);
        assert_eq!(output_for(256 << 20), 64 << 20, "never below the floor");
        assert_eq!(output_for(1 << 40), 4 << 30, "never above the ceiling");
        assert_eq!(per_connection_for(3 << 30), 64 << 20);
        assert_eq!(per_connection_for(64 << 20), 8 << 20);
    }

    #[test]
    fn an_answer_passes_a_cap_only_when_nothing_else_is_held() {
        let held = AtomicU64::new(0);
        assert!(fits(&held, 100, 10), "alone, a large answer is sent");
        assert!(!fits(&held, 1, 10));
        held.store(4, Ordering::Release);
        assert!(fits(&held, 6, 10));
        assert!(!fits(&held, 1, 10));
        assert_eq!(held.load(Ordering::Acquire), 10);
    }
}
