//! The one place where a request becomes a span and a count: a tower layer around every A2A
//! route of every binding. The bindings only say which operation they ran ([`called`]) and
//! which error they answered ([`Failed::mark`]), into a slot the layer gives the request's
//! future (a task-local: nothing to do, and next to nothing spent, when the layer does not
//! observe); the operations record the task they touched on the current span
//! ([`record_task`]).

use super::metrics::Inner;
use a2a_core::{BINDING_GRPC, BINDING_HTTP_JSON, BINDING_JSONRPC, Method};
use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use futures::future::{BoxFuture, Either};
use prometheus_client::metrics::gauge::Gauge;
use std::cell::Cell;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;
use tracing::Instrument as _;
use tracing::field::Empty;

/// What the bindings said about one call: the operation (none: the request never reached
/// one, e.g. malformed JSON or an unknown method) and the error it was answered with.
#[derive(Clone, Copy, Debug, Default)]
struct Record {
    method: Option<Method>,
    failed: Option<Failed>,
}

tokio::task_local! {
    /// The record of the call being answered, while the layer observes it.
    static RECORD: Cell<Record>;
}

/// Tells the layer which operation the request is (a no-op when nothing observes it).
pub(crate) fn called(method: Method) {
    let _ = RECORD.try_with(|r| {
        r.set(Record {
            method: Some(method),
            ..r.get()
        });
    });
}

/// The error a binding answered with: the ErrorInfo reason and the code the binding put on
/// the wire (JSON-RPC code, HTTP status or gRPC status number).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Failed {
    pub(crate) reason: &'static str,
    pub(crate) code: i64,
}

impl Failed {
    /// The failure of `error`, answered with `code`.
    pub(crate) fn of(error: &a2a_core::Error, code: i64) -> Self {
        Self {
            reason: error.kind().map_or("UNKNOWN", a2a_core::ErrorKind::reason),
            code,
        }
    }

    /// Tells the layer the call failed so.
    pub(crate) fn record(self) {
        let _ = RECORD.try_with(|r| {
            r.set(Record {
                failed: Some(self),
                ..r.get()
            });
        });
    }

    /// Tells the layer the call failed so; passes `response` through.
    pub(crate) fn mark(self, response: Response) -> Response {
        self.record();
        response
    }
}

/// Records the task a call is about on the current request span (`a2a.task.id`,
/// `a2a.context.id`). Costs next to nothing when no subscriber wants the span.
pub(crate) fn record_task(task: &a2a_core::TaskId, context: &a2a_core::ContextId) {
    if !tracing::enabled!(target: "a2a::server", tracing::Level::INFO) {
        return;
    }
    let span = tracing::Span::current();
    if !span.is_disabled() {
        span.record("a2a.task.id", task.as_str());
        span.record("a2a.context.id", context.as_str());
    }
}

/// The layer: spans (at INFO under the target `a2a::server`, so that a subscriber decides)
/// and metrics (when configured); see [`Layer::wanted`].
#[derive(Clone, Debug)]
pub(crate) struct Layer {
    metrics: Option<Arc<Inner>>,
}

impl Layer {
    /// The layer, when there is anything to observe: metrics, or a subscriber that wants the
    /// spans (asked once, when the router is built: install the subscriber first). Without
    /// either, no layer at all, so that a request pays nothing for telemetry it does not use.
    pub(crate) fn wanted(metrics: Option<Arc<Inner>>) -> Option<Self> {
        let spans = tracing::span_enabled!(target: "a2a::server", tracing::Level::INFO);
        (spans || metrics.is_some()).then_some(Self { metrics })
    }
}

impl<S> tower::Layer<S> for Layer {
    type Service = Observe<S>;

    fn layer(&self, inner: S) -> Observe<S> {
        Observe {
            inner,
            metrics: self.metrics.clone(),
        }
    }
}

/// The service of [`Layer`].
#[derive(Clone, Debug)]
pub(crate) struct Observe<S> {
    inner: S,
    metrics: Option<Arc<Inner>>,
}

/// The binding a request is for (`None`: the agent card, which is not an A2A operation).
fn binding(request: &Request) -> Option<&'static str> {
    let path = request.uri().path();
    if crate::http::is_grpc(request.headers()) {
        Some(BINDING_GRPC)
    } else if path == "/" {
        Some(BINDING_JSONRPC)
    } else if path.starts_with(a2a_core::WELL_KNOWN_PREFIX) {
        None
    } else {
        Some(BINDING_HTTP_JSON)
    }
}

impl<S> tower::Service<Request> for Observe<S>
where
    S: tower::Service<Request, Response = Response, Error = Infallible> + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<S::Future, BoxFuture<'static, Result<Response, Infallible>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let Some(binding) = binding(&request) else {
            return Either::Left(self.inner.call(request));
        };
        let span = tracing::info_span!(
            target: "a2a::server",
            "a2a.request",
            otel.name = Empty,
            otel.kind = "server",
            otel.status_code = Empty,
            otel.status_description = Empty,
            a2a.method.name = Empty,
            a2a.protocol.binding = binding,
            a2a.task.id = Empty,
            a2a.context.id = Empty,
            error.type = Empty,
            rpc.response.status_code = Empty,
            trace_id = Empty,
        );
        if span.is_disabled() && self.metrics.is_none() {
            return Either::Left(self.inner.call(request));
        }
        if !span.is_disabled() {
            super::adopt_parent(&span, request.headers());
        }
        let metrics = self.metrics.clone();
        let start = Instant::now();
        let answer = RECORD.scope(
            Cell::default(),
            self.inner.call(request).instrument(span.clone()),
        );
        Either::Right(Box::pin(async move {
            let mut answer = std::pin::pin!(answer);
            let response = answer.as_mut().await?;
            let record = answer
                .take_value()
                .map(Cell::into_inner)
                .unwrap_or_default();
            Ok(finish(response, record, span, metrics, binding, start))
        }))
    }
}

/// Records the outcome of a call on its span and metrics; the span (and, for a stream, its
/// place in the open-streams gauge) lasts as long as the response body.
fn finish(
    response: Response,
    Record { method, failed }: Record,
    span: tracing::Span,
    metrics: Option<Arc<Inner>>,
    binding: &'static str,
    start: Instant,
) -> Response {
    let name = method.map_or("unknown", Method::name);
    if !span.is_disabled() {
        super::rename(&span, name);
        span.record("a2a.method.name", name);
        match failed {
            Some(f) => {
                span.record("error.type", f.reason);
                span.record("rpc.response.status_code", f.code);
                span.record("otel.status_code", "ERROR");
                span.record("otel.status_description", f.reason);
            }
            None => {
                span.record("otel.status_code", "OK");
            }
        }
    }
    // The access log, at DEBUG: `RUST_LOG=a2a::server=debug` gives one line per call, with
    // its span's ids.
    tracing::debug!(
        target: "a2a::server",
        parent: &span,
        outcome = failed.map_or("ok", |f| f.reason),
        micros = u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX),
        "answered {name}"
    );
    let streaming = failed.is_none()
        && matches!(
            method,
            Some(Method::SendStreamingMessage | Method::SubscribeToTask)
        );
    let open = match &metrics {
        Some(m) => {
            m.answered(method, binding, failed.map(|f| f.reason), start.elapsed());
            streaming.then(|| {
                let gauge = m.open_streams(method, binding);
                gauge.inc();
                gauge
            })
        }
        None => None,
    };
    let (parts, body) = response.into_parts();
    Response::from_parts(parts, Body::new(Observed { body, span, open }))
}

/// A response body that polls inside its call's span (so that a stream's span ends with the
/// stream: OpenTelemetry takes a span's last exit as its end), and takes a stream out of the
/// open-streams gauge when dropped.
struct Observed {
    body: Body,
    span: tracing::Span,
    open: Option<Gauge>,
}

impl Drop for Observed {
    fn drop(&mut self) {
        if let Some(gauge) = &self.open {
            gauge.dec();
        }
    }
}

impl http_body::Body for Observed {
    type Data = bytes::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let this = &mut *self;
        let _in = this.span.enter();
        Pin::new(&mut this.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}
