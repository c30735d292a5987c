//! How much the client reads of an agent's answers, and for how long. Every body is read against
//! a size limit: refused at once when its `Content-Length` is over it, and otherwise counted
//! while it arrives and dropped (with its connection) as soon as it passes it, so an agent, or
//! whoever answers in its place, costs the client at most the limit in memory. A stream is read
//! against an idle timeout between events instead of a deadline for the whole of it.

use crate::{ClientBuilder, Error};
use bytes::Bytes;
use std::time::Duration;

/// The default [`Limits::card_bytes`]: 1 MiB. Real cards are a few KiB; one with hundreds of
/// skills stays well under this.
pub const DEFAULT_MAX_CARD_BYTES: usize = 1 << 20;
/// The default [`Limits::jwks_bytes`]: 1 MiB (a JWK of a 4096-bit RSA key is under 1 KiB of
/// JSON), as the server's own bound on the JWK sets it fetches.
pub const DEFAULT_MAX_JWKS_BYTES: usize = 1 << 20;
/// The default [`Limits::response_bytes`]: 32 MiB, room for a task carrying files inline.
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 32 << 20;
/// The default [`Limits::event_bytes`]: 16 MiB for one event of a stream.
pub const DEFAULT_MAX_EVENT_BYTES: usize = 16 << 20;
/// The default [`Limits::idle_timeout`]: 5 minutes without an event (or an SSE keep-alive).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

/// The bounds on what the client reads (set through [`ClientBuilder`](crate::ClientBuilder)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The largest agent card read, in bytes.
    pub card_bytes: usize,
    /// The largest JWK set read (the keys a signed card is verified with), in bytes.
    pub jwks_bytes: usize,
    /// The largest answer to a unary call (JSON-RPC, HTTP+JSON, or a gRPC message), and the
    /// largest error body, in bytes.
    pub response_bytes: usize,
    /// The largest event of a stream (an SSE event's data, or a gRPC message), in bytes.
    pub event_bytes: usize,
    /// How long a stream may go without an event (or, on SSE, a keep-alive comment) before it
    /// counts as broken: it is then resumed as after a dropped connection, or ends with
    /// [`Error::Timeout`] when there is nothing to resume.
    pub idle_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            card_bytes: DEFAULT_MAX_CARD_BYTES,
            jwks_bytes: DEFAULT_MAX_JWKS_BYTES,
            response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            event_bytes: DEFAULT_MAX_EVENT_BYTES,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
        }
    }
}

/// The read bounds of the clients a builder builds.
impl ClientBuilder {
    /// Every read bound at once (see the setters below for each).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The largest agent card read, in bytes (default
    /// [`DEFAULT_MAX_CARD_BYTES`](crate::DEFAULT_MAX_CARD_BYTES), 1 MiB); a larger one fails
    /// with [`Error::TooLarge`].
    pub fn max_card_bytes(mut self, bytes: usize) -> Self {
        self.limits.card_bytes = bytes;
        self
    }

    /// The largest JWK set read by `fetch_jwks` (feature `trust`), in bytes (default
    /// [`DEFAULT_MAX_JWKS_BYTES`](crate::DEFAULT_MAX_JWKS_BYTES), 1 MiB).
    pub fn max_jwks_bytes(mut self, bytes: usize) -> Self {
        self.limits.jwks_bytes = bytes;
        self
    }

    /// The largest answer to a unary call read (a JSON-RPC or HTTP+JSON body, a gRPC message,
    /// an error body), in bytes (default
    /// [`DEFAULT_MAX_RESPONSE_BYTES`](crate::DEFAULT_MAX_RESPONSE_BYTES), 32 MiB).
    pub fn max_response_bytes(mut self, bytes: usize) -> Self {
        self.limits.response_bytes = bytes;
        self
    }

    /// The largest event of a stream read (an SSE event, a gRPC message), in bytes (default
    /// [`DEFAULT_MAX_EVENT_BYTES`](crate::DEFAULT_MAX_EVENT_BYTES), 16 MiB).
    pub fn max_event_bytes(mut self, bytes: usize) -> Self {
        self.limits.event_bytes = bytes;
        self
    }

    /// How long a stream may go without an event (or an SSE keep-alive comment) before it
    /// counts as broken and is resumed, or fails with [`Error::Timeout`] when it cannot be
    /// (default [`DEFAULT_IDLE_TIMEOUT`](crate::DEFAULT_IDLE_TIMEOUT), 5 minutes).
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.limits.idle_timeout = timeout;
        self
    }
}

/// Which size limit an answer went over (in [`Error::TooLarge`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Limit {
    /// [`Limits::card_bytes`].
    Card,
    /// [`Limits::jwks_bytes`].
    Jwks,
    /// [`Limits::response_bytes`].
    Response,
    /// [`Limits::event_bytes`].
    Event,
    /// [`ClientCredentials::max_response_bytes`](crate::ClientCredentials::max_response_bytes).
    Token,
}

impl Limit {
    /// What was being read: "the agent card", "the JWK set", "the response", "an event".
    pub fn what(self) -> &'static str {
        match self {
            Limit::Card => "the agent card",
            Limit::Jwks => "the JWK set",
            Limit::Response => "the response",
            Limit::Event => "a stream event",
            Limit::Token => "the token endpoint's answer",
        }
    }

    /// The [`ClientBuilder`](crate::ClientBuilder) method that raises the limit.
    pub fn setter(self) -> &'static str {
        match self {
            Limit::Card => "ClientBuilder::max_card_bytes",
            Limit::Jwks => "ClientBuilder::max_jwks_bytes",
            Limit::Response => "ClientBuilder::max_response_bytes",
            Limit::Event => "ClientBuilder::max_event_bytes",
            Limit::Token => "ClientCredentials::max_response_bytes",
        }
    }

    /// The `a2a` command's flag that raises the limit.
    pub fn flag(self) -> &'static str {
        match self {
            Limit::Card => "--max-card-bytes",
            Limit::Jwks => "--max-jwks-bytes",
            Limit::Response => "--max-response-bytes",
            Limit::Event => "--max-event-bytes",
            Limit::Token => "--max-response-bytes",
        }
    }

    pub(crate) fn exceeded(self, max: usize, url: impl Into<String>) -> Error {
        Error::TooLarge {
            limit: self,
            max,
            url: url.into(),
        }
    }
}

/// The whole body of `response`, refused with [`Error::TooLarge`] once it is over `max` bytes:
/// at once when its `Content-Length` says so, otherwise as soon as the chunks read add up to
/// more. Never holds more than `max` bytes of it.
pub(crate) async fn read_body(
    mut response: reqwest::Response,
    limit: Limit,
    max: usize,
) -> Result<Bytes, Error> {
    let url = response.url().to_string();
    let declared = response.content_length();
    if declared.is_some_and(|n| n > max as u64) {
        return Err(limit.exceeded(max, url));
    }
    // The declared length is at most `max` here, so the reservation is bounded too; growth
    // doubles, but never past `max`.
    let mut body = Vec::with_capacity(declared.map_or(0, |n| n as usize));
    while let Some(chunk) = response.chunk().await? {
        let needed = body.len() + chunk.len();
        if needed > max {
            return Err(limit.exceeded(max, url));
        }
        if needed > body.capacity() {
            let grown = needed.max(body.capacity() * 2).min(max);
            body.reserve_exact(grown - body.len());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Bytes::from(body))
}

/// The deadline of one call: its timeout counted from the call's start, over every attempt
/// and every backoff between them (none when the timeout is `None`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Deadline {
    timeout: Option<Duration>,
    at: Option<tokio::time::Instant>,
}

impl Deadline {
    /// The deadline of a call starting now.
    pub(crate) fn start(timeout: Option<Duration>) -> Self {
        Self {
            timeout,
            at: timeout.map(|t| tokio::time::Instant::now() + t),
        }
    }

    /// Whether waiting `wait` from now still leaves time before the deadline.
    pub(crate) fn leaves(&self, wait: Duration) -> bool {
        self.at
            .is_none_or(|at| tokio::time::Instant::now() + wait < at)
    }

    /// Whether the deadline has passed.
    pub(crate) fn passed(&self) -> bool {
        self.at.is_some_and(|at| tokio::time::Instant::now() >= at)
    }

    /// Runs `call` until the deadline, or fails with [`Error::Timeout`] naming `what`
    /// (`attempts` made so far, this one included) and how to raise the timeout.
    pub(crate) async fn bound<T>(
        &self,
        what: impl std::fmt::Display,
        attempts: u32,
        call: impl Future<Output = Result<T, Error>>,
    ) -> Result<T, Error> {
        let Some(at) = self.at else {
            return call.await;
        };
        tokio::time::timeout_at(at, call)
            .await
            .unwrap_or_else(|elapsed| {
                Err(self.expired(format!("{what} took over"), attempts, elapsed))
            })
    }

    /// The error of a call that gives up before retrying because its backoff would end past
    /// the deadline; `last` (the last attempt's failure) is its source.
    pub(crate) fn no_time_to_retry(
        &self,
        what: impl std::fmt::Display,
        attempts: u32,
        last: Error,
    ) -> Error {
        self.expired(
            format!("{what} could not be retried within"),
            attempts,
            last,
        )
    }

    fn expired(&self, what: String, attempts: u32, cause: impl Into<crate::BoxError>) -> Error {
        let t = self.timeout.unwrap_or_default();
        let tries = if attempts > 1 {
            format!(" ({attempts} attempts)")
        } else {
            String::new()
        };
        let context = format!(
            "{what} {t:?}{tries} (raise the limit with ClientBuilder::timeout; a2a: --timeout SECONDS)"
        );
        Error::Timeout(Box::new(crate::Context::new(context, cause)))
    }
}

/// Runs `call` within `timeout` (the whole of it: connect, headers and body), or fails with
/// [`Error::Timeout`] naming `what` and how to raise the timeout.
pub(crate) async fn within<T>(
    timeout: Option<Duration>,
    what: impl std::fmt::Display,
    call: impl Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    Deadline::start(timeout).bound(what, 1, call).await
}

/// Runs one attempt of a call within `timeout` ([`ClientBuilder::attempt_timeout`]), or fails
/// with a (retryable) [`Error::Timeout`] naming that limit.
pub(crate) async fn attempt_within<T>(
    timeout: Option<Duration>,
    what: impl std::fmt::Display,
    attempt: u32,
    call: impl Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    let Some(t) = timeout else {
        return call.await;
    };
    tokio::time::timeout(t, call).await.unwrap_or_else(|elapsed| {
        let context = format!(
            "{what}: attempt {attempt} took over {t:?} (raise the limit with ClientBuilder::attempt_timeout)"
        );
        Err(Error::Timeout(Box::new(crate::Context::new(
            context, elapsed,
        ))))
    })
}
