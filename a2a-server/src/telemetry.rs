//! Observability: a span per A2A operation, and opt-in Prometheus [`Metrics`].
//!
//! **Spans** are `tracing` spans, so that any subscriber sees them; with the `otel` feature and
//! `tracing-opentelemetry`'s layer in the subscriber they are exported as OpenTelemetry spans
//! and linked to the caller's trace:
//!
//! | span | kind | where |
//! |---|---|---|
//! | `a2a.request` (OpenTelemetry name: the operation, e.g. `SendMessage`) | server | every A2A call on every binding, until its response body ends (a stream's span ends with the stream) |
//! | `a2a.execute` | internal | the agent's execution of a task, a child of the request that started it |
//! | `a2a.push` / `a2a.push.deliver` | internal / client | a webhook's deliveries, children of the request that started them, and each POST |
//!
//! Their attributes follow the draft OpenTelemetry semantic conventions for A2A
//! (open-telemetry/semantic-conventions-genai, pull request 195): `a2a.method.name`,
//! `a2a.protocol.binding` (`JSONRPC`, `HTTP+JSON`, `GRPC`), `a2a.task.id`, `a2a.context.id`,
//! `error.type` (the ErrorInfo reason) and `rpc.response.status_code` (the code on the wire);
//! `trace_id` carries the trace for log lines. Their target is `a2a::server`, at INFO.
//!
//! With `otel`, the parent of a request's span comes from its W3C `traceparent` /
//! `tracestate` headers (gRPC metadata are headers too), through the global text-map
//! propagator (`opentelemetry::global::set_text_map_propagator`; the `a2a-server` binary sets
//! the W3C one), and webhook POSTs carry the trace context of their delivery span. The agent's
//! execution runs inside the request's trace, so an agent's own spans and its `a2a-client`
//! calls continue it.

mod layer;
mod metrics;

pub use metrics::{CONTENT_TYPE, Metrics};

pub(crate) use layer::{Failed, Layer, called, record_task};
pub(crate) use metrics::Inner as MetricsInner;

use axum::http::HeaderMap;

/// Makes the caller's trace (`traceparent`) the parent of `span`, and records the trace id on
/// it for log lines.
pub(crate) fn adopt_parent(span: &tracing::Span, headers: &HeaderMap) {
    #[cfg(feature = "otel")]
    {
        use opentelemetry::trace::TraceContextExt as _;
        use tracing_opentelemetry::OpenTelemetrySpanExt as _;
        let parent = opentelemetry::global::get_text_map_propagator(|p| {
            p.extract(&otel::HeaderExtractor(headers))
        });
        // Without the OpenTelemetry layer in the subscriber there is nothing to link.
        if span.set_parent(parent).is_ok() {
            let cx = span.context();
            let ids = cx.span().span_context().clone();
            if ids.is_valid() {
                span.record("trace_id", tracing::field::display(ids.trace_id()));
                return;
            }
        }
    }
    if let Some(id) = traceparent_trace_id(headers) {
        span.record("trace_id", id);
    }
}

/// Names `span` after its operation, known only once the binding decoded the request (for
/// OpenTelemetry, whose span has started by then, through its own API as well).
pub(crate) fn rename(span: &tracing::Span, name: &'static str) {
    span.record("otel.name", name);
    #[cfg(feature = "otel")]
    {
        use opentelemetry::trace::TraceContextExt as _;
        use tracing_opentelemetry::OpenTelemetrySpanExt as _;
        span.context().span().update_name(name);
    }
}

/// The trace id of a well-formed W3C `traceparent` header (`00-<32 hex>-<16 hex>-<2 hex>`),
/// for log lines when OpenTelemetry is not in use.
fn traceparent_trace_id(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get("traceparent")?.to_str().ok()?;
    let mut fields = value.split('-');
    let (version, trace, span) = (fields.next()?, fields.next()?, fields.next()?);
    let hex = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit());
    (hex(version, 2) && version != "ff" && hex(trace, 32) && hex(span, 16))
        .then_some(trace)
        .filter(|t| t.bytes().any(|b| b != b'0'))
}

/// The headers that carry `span`'s trace context to another service (none without `otel`).
pub(crate) fn trace_headers(span: &tracing::Span) -> Vec<(String, String)> {
    #[cfg(feature = "otel")]
    {
        use tracing_opentelemetry::OpenTelemetrySpanExt as _;
        if span.is_disabled() {
            return Vec::new();
        }
        let cx = span.context();
        let mut carrier = otel::Carrier::default();
        opentelemetry::global::get_text_map_propagator(|p| p.inject_context(&cx, &mut carrier));
        carrier.0
    }
    #[cfg(not(feature = "otel"))]
    {
        let _ = span;
        Vec::new()
    }
}

#[cfg(feature = "otel")]
mod otel {
    use axum::http::HeaderMap;

    /// Reads a request's headers for the propagator.
    pub(super) struct HeaderExtractor<'a>(pub(super) &'a HeaderMap);

    impl opentelemetry::propagation::Extractor for HeaderExtractor<'_> {
        fn get(&self, key: &str) -> Option<&str> {
            self.0.get(key).and_then(|v| v.to_str().ok())
        }

        fn keys(&self) -> Vec<&str> {
            self.0.keys().map(axum::http::HeaderName::as_str).collect()
        }
    }

    /// Collects the propagator's headers.
    #[derive(Default)]
    pub(super) struct Carrier(pub(super) Vec<(String, String)>);

    impl opentelemetry::propagation::Injector for Carrier {
        fn set(&mut self, key: &str, value: String) {
            self.0.push((key.to_owned(), value));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert("traceparent", value.parse().unwrap());
        h
    }

    #[test]
    fn a_traceparent_gives_its_trace_id_and_a_malformed_one_none() {
        let id = "4bf92f3577b34da6a3ce929d0e0e4736";
        let good = with(&format!("00-{id}-00f067aa0ba902b7-01"));
        assert_eq!(traceparent_trace_id(&good), Some(id));
        for bad in [
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736",
            "zz-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ] {
            assert_eq!(traceparent_trace_id(&with(bad)), None, "{bad}");
        }
        assert_eq!(traceparent_trace_id(&HeaderMap::new()), None);
    }
}
