//! The client's error type.

use a2a_core::ErrorKind;

/// The cause an [`Error`] carries: the underlying error (a JSON or protobuf error, the agent's
/// malformed answer, a timer's), or a message where there is none.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// An underlying error with what was being done when it happened: displayed as
/// `{context}: {cause}`, with the cause as its [`source`](std::error::Error::source).
#[derive(Debug)]
pub struct Context {
    context: String,
    cause: BoxError,
}

impl Context {
    /// `cause`, met while doing `context`.
    pub fn new(context: impl Into<String>, cause: impl Into<BoxError>) -> Self {
        Self {
            context: context.into(),
            cause: cause.into(),
        }
    }
}

impl std::fmt::Display for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.context, self.cause)
    }
}

impl std::error::Error for Context {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.cause)
    }
}

/// What can go wrong talking to an agent.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The agent answered with an A2A (or JSON-RPC) error.
    #[error("the agent returned an error: {error}")]
    Remote {
        /// The error as the agent sent it (code, message, details).
        #[source]
        error: a2a_core::Error,
        /// The HTTP status it came with.
        status: u16,
    },
    /// The agent answered with an HTTP error that is not an A2A error body.
    #[error("HTTP {status}: {body}")]
    Http {
        /// The status code.
        status: u16,
        /// The body (truncated to 4 KiB).
        body: String,
    },
    /// The request could not be sent or the response not received.
    #[error("transport error: {0}")]
    Transport(#[from] reqwest::Error),
    /// A gRPC call failed with a status that is not an A2A error: the connection could not be
    /// opened or broke (`UNAVAILABLE`, `UNKNOWN`, `INTERNAL` without an ErrorInfo), a deadline
    /// passed, the call was cancelled.
    #[error("gRPC {code}: {message}")]
    Grpc {
        /// The gRPC status name.
        code: &'static str,
        /// The status message.
        message: String,
        /// Whether the connection could not be opened (the request was never sent).
        connect: bool,
    },
    /// The response is not what the protocol says.
    #[error("could not decode the agent's response: {0}")]
    Decode(#[source] BoxError),
    /// The agent offers no interface this client can use.
    #[error("no compatible interface: {0}")]
    NoCompatibleInterface(String),
    /// A stream ended before the task reached a terminal or interrupted state, and could not be
    /// resumed.
    #[error("the stream ended early: {0}")]
    StreamEnded(#[source] BoxError),
    /// A deadline passed: a call's [`ClientBuilder::timeout`](crate::ClientBuilder::timeout),
    /// or a stream's [`idle timeout`](crate::ClientBuilder::idle_timeout).
    #[error("timed out: {0}")]
    Timeout(#[source] BoxError),
    /// An answer was larger than the client reads (see [`Limits`](crate::Limits)); nothing past
    /// the limit was read.
    #[error(
        "{} from {url} is over its limit of {max} bytes (raise it with {}; a2a: {} BYTES)",
        .limit.what(), .limit.setter(), .limit.flag()
    )]
    TooLarge {
        /// Which limit.
        limit: crate::Limit,
        /// The limit, in bytes.
        max: usize,
        /// What was being read.
        url: String,
    },
    /// A URL or header value is not valid.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// No access token could be had from the OAuth 2.0 token endpoint.
    #[error("could not get an access token: {0}")]
    Token(#[source] BoxError),
    /// The agent card's signatures do not verify against the trusted keys.
    #[cfg(feature = "trust")]
    #[error("the agent card at {url} is not trusted: {error}")]
    Untrusted {
        /// Where the card came from.
        url: String,
        /// Why no signature verified.
        #[source]
        error: a2a_core::signing::VerifyError,
    },
}

impl Error {
    /// The A2A error kind, for remote errors.
    pub fn kind(&self) -> Option<ErrorKind> {
        match self {
            Error::Remote { error, .. } => error.kind(),
            _ => None,
        }
    }

    /// The remote A2A error, if this is one.
    pub fn remote(&self) -> Option<&a2a_core::Error> {
        match self {
            Error::Remote { error, .. } => Some(error),
            _ => None,
        }
    }

    /// Whether retrying the same call may succeed: connection failures, timeouts, and
    /// HTTP 502/503/504 (or 429).
    pub fn is_retryable(&self) -> bool {
        match self {
            Error::Transport(e) => e.is_connect() || e.is_timeout() || e.is_request(),
            Error::Http { status, .. } | Error::Remote { status, .. } => {
                matches!(status, 429 | 502 | 503 | 504)
            }
            Error::Grpc { code, .. } => matches!(
                *code,
                "UNAVAILABLE"
                    | "UNKNOWN"
                    | "INTERNAL"
                    | "DEADLINE_EXCEEDED"
                    | "ABORTED"
                    | "CANCELLED"
            ),
            Error::StreamEnded(_) | Error::Timeout(_) => true,
            _ => false,
        }
    }

    /// Whether the agent refused the call's credentials (HTTP 401, gRPC UNAUTHENTICATED).
    pub fn is_unauthenticated(&self) -> bool {
        match self {
            Error::Remote { status: 401, .. } | Error::Http { status: 401, .. } => true,
            Error::Remote { error, .. } => error.is(ErrorKind::Unauthenticated),
            Error::Grpc { code, .. } => *code == "UNAUTHENTICATED",
            _ => false,
        }
    }

    /// Whether the request certainly never reached the server (safe to retry anything).
    pub fn is_before_send(&self) -> bool {
        match self {
            Error::Transport(e) => e.is_connect(),
            Error::Grpc { connect, .. } => *connect,
            _ => false,
        }
    }
}

impl Error {
    /// A [`Error::Decode`] of `cause` (an underlying error, or a message).
    pub fn decode(cause: impl Into<BoxError>) -> Self {
        Error::Decode(cause.into())
    }
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Error::Decode(Box::new(e))
    }
}
