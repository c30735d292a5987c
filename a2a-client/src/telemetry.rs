//! A span per call (`a2a.call`, target `a2a::client`, at INFO) and, with the `otel` feature,
//! the W3C trace context (`traceparent`, `tracestate`) of that span on the request, through
//! the global text-map propagator, so that the agent's server continues the caller's trace.
//! A call made inside a server's agent execution is a child of that execution's span.

use crate::Error;
use a2a_core::Method;
use tracing::field::Empty;

/// The agent a client calls: `server.address` and `server.port` of its spans.
#[derive(Clone, Debug, Default)]
pub(crate) struct Peer {
    address: String,
    port: u16,
}

impl Peer {
    /// The host and port of an interface URL (`http(s)://host:port/…`, or gRPC's `host:port`);
    /// empty when it does not parse (the client refuses such a URL anyway).
    pub(crate) fn of(url: &str) -> Self {
        let with_scheme = if url.contains("://") {
            url.to_owned()
        } else {
            format!("http://{url}")
        };
        reqwest::Url::parse(&with_scheme)
            .ok()
            .and_then(|u| {
                Some(Self {
                    address: u.host_str()?.to_owned(),
                    port: u.port_or_known_default()?,
                })
            })
            .unwrap_or_default()
    }
}

/// The span of one call (retries and, for a stream, reconnections included), named and
/// attributed as the draft OpenTelemetry semantic conventions for A2A propose.
pub(crate) fn call_span(method: Method, binding: &'static str, peer: &Peer) -> tracing::Span {
    tracing::info_span!(
        target: "a2a::client",
        "a2a.call",
        otel.name = method.name(),
        otel.kind = "client",
        otel.status_code = Empty,
        a2a.method.name = method.name(),
        a2a.protocol.binding = binding,
        server.address = peer.address.as_str(),
        server.port = peer.port,
        error.type = Empty,
    )
}

/// Records how a call ended on its span.
pub(crate) fn ended(span: &tracing::Span, result: Result<(), &Error>) {
    if span.is_disabled() {
        return;
    }
    match result {
        Ok(()) => span.record("otel.status_code", "OK"),
        Err(e) => {
            span.record("error.type", error_type(e));
            span.record("otel.status_code", "ERROR")
        }
    };
}

/// The `error.type` of a failed call: the A2A error's ErrorInfo reason, else what failed.
fn error_type(e: &Error) -> &'static str {
    if let Some(kind) = e.kind() {
        return kind.reason();
    }
    match e {
        Error::Http { .. } => "http",
        Error::Transport(_) => "transport",
        Error::Grpc { .. } => "grpc",
        Error::Decode(_) => "decode",
        Error::StreamEnded(_) => "stream_ended",
        Error::Timeout(_) => "timeout",
        Error::TooLarge { .. } => "too_large",
        _ => "_OTHER",
    }
}

/// Adds the current span's trace context to a call's headers (nothing without `otel`).
pub(crate) fn inject(headers: &mut reqwest::header::HeaderMap) {
    #[cfg(feature = "otel")]
    {
        use tracing_opentelemetry::OpenTelemetrySpanExt as _;
        let span = tracing::Span::current();
        if span.is_disabled() {
            return;
        }
        let cx = span.context();
        opentelemetry::global::get_text_map_propagator(|p| {
            p.inject_context(&cx, &mut Injector(headers));
        });
    }
    #[cfg(not(feature = "otel"))]
    let _ = headers;
}

#[cfg(feature = "otel")]
struct Injector<'a>(&'a mut reqwest::header::HeaderMap);

#[cfg(feature = "otel")]
impl opentelemetry::propagation::Injector for Injector<'_> {
    fn set(&mut self, key: &str, value: String) {
        if let (Ok(name), Ok(value)) = (
            reqwest::header::HeaderName::from_bytes(key.as_bytes()),
            reqwest::header::HeaderValue::from_str(&value),
        ) {
            self.0.insert(name, value);
        }
    }
}
