//! [`TrackRequestsLayer`]: counts each request as in flight on its connection until its
//! response body ends or is dropped, so that the connection's watcher never closes a
//! connection that is serving someone (an SSE or gRPC stream included); and counts the output
//! its answer holds (see [`super::output`]), refusing it at a cap.

use super::conn::ConnState;
use super::listener::Connection;
use super::output::{self, Meter, Stage};
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::ConnectInfo;
use axum::http;
use http_body::{Frame, SizeHint};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// One request in flight, from the call until its response body is finished or dropped.
#[derive(Debug)]
pub(crate) struct InFlight(Arc<ConnState>);

impl InFlight {
    pub(crate) fn begin(conn: &Arc<ConnState>) -> Self {
        conn.begin_request();
        Self(conn.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.end_request();
    }
}

/// The layer of [`Protections::layer`](super::Protections::layer): wraps a service in
/// [`TrackRequests`].
#[derive(Debug, Clone, Copy)]
pub struct TrackRequestsLayer(());

impl TrackRequestsLayer {
    pub(super) fn new() -> Self {
        Self(())
    }
}

impl<S> tower::Layer<S> for TrackRequestsLayer {
    type Service = TrackRequests<S>;

    fn layer(&self, inner: S) -> TrackRequests<S> {
        TrackRequests { inner }
    }
}

/// A service whose requests count as in flight on their [`Connection`] (found in the
/// request's `ConnectInfo<Connection>` extension) until their response bodies end or are
/// dropped. A request without that extension passes through untouched.
#[derive(Debug, Clone)]
pub struct TrackRequests<S> {
    inner: S,
}

impl<S, B, R> tower::Service<http::Request<B>> for TrackRequests<S>
where
    S: tower::Service<http::Request<B>, Response = http::Response<R>>,
    R: HttpBody<Data = Bytes> + Send + 'static,
    R::Error: Into<axum::BoxError>,
{
    type Response = axum::response::Response;
    type Error = S::Error;
    type Future = TrackedFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let in_flight = request
            .extensions()
            .get::<ConnectInfo<Connection>>()
            .map(|ConnectInfo(c)| InFlight::begin(&c.conn));
        // At its output cap, the connection is answered without the request being served.
        let full = in_flight.as_ref().and_then(|f| f.0.output().full());
        let grpc = || output::is_grpc(request.headers());
        let refused = full.map(|why| output::refusal(grpc(), why, Stage::Before));
        TrackedFuture {
            response: refused.is_none().then(|| self.inner.call(request)),
            refused,
            in_flight,
        }
    }
}

pin_project_lite::pin_project! {
    /// The future of [`TrackRequests`]: the inner service's response, its body tracked.
    pub struct TrackedFuture<F> {
        #[pin]
        response: Option<F>,
        refused: Option<axum::response::Response>,
        in_flight: Option<InFlight>,
    }
}

impl<F> std::fmt::Debug for TrackedFuture<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrackedFuture")
            .field("tracked", &self.in_flight.is_some())
            .finish_non_exhaustive()
    }
}

impl<F, R, E> Future for TrackedFuture<F>
where
    F: Future<Output = Result<http::Response<R>, E>>,
    R: HttpBody<Data = Bytes> + Send + 'static,
    R::Error: Into<axum::BoxError>,
{
    type Output = Result<axum::response::Response, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let Some(response) = this.response.as_pin_mut() else {
            let refused = this
                .refused
                .take()
                .expect("a TrackedFuture polled after completion");
            return Poll::Ready(Ok(refused));
        };
        let response = std::task::ready!(response.poll(cx))?;
        Poll::Ready(Ok(match this.in_flight.take() {
            // The body is boxed again (a `Body` is a box): the price of a layer that fits
            // any router. `Server::serve` counts requests without it.
            Some(in_flight) => {
                TrackedBody::admit(response.map(Body::new), in_flight).map(Body::new)
            }
            None => response.map(Body::new),
        }))
    }
}

pin_project_lite::pin_project! {
    /// A response body that keeps its request counted as in flight until it ends or is
    /// dropped, and the output it holds counted on its connection.
    #[derive(Debug)]
    pub(crate) struct TrackedBody<B> {
        #[pin]
        body: B,
        in_flight: Option<InFlight>,
        meter: Option<Meter>,
    }
}

impl TrackedBody<Body> {
    /// The router's `response` to a request in flight, its output counted on the request's
    /// connection: or, when that would pass an output cap, the refusal in its place (the
    /// answer dropped at once; a gRPC status for a gRPC answer).
    pub(crate) fn admit(
        response: http::Response<Body>,
        in_flight: InFlight,
    ) -> http::Response<Self> {
        let size = output::size_of(&response);
        let conn = in_flight.0.clone();
        match conn.output().admit(size) {
            Ok(()) => response.map(|body| Self {
                body,
                in_flight: Some(in_flight),
                meter: Some(Meter::new(conn, size)),
            }),
            Err(why) => {
                tracing::debug!(bytes = size, ?why, "an answer refused at the output cap");
                let grpc = output::is_grpc(response.headers());
                output::refusal(grpc, why, Stage::After).map(|body| Self {
                    body,
                    in_flight: Some(in_flight),
                    meter: None,
                })
            }
        }
    }

    /// A response answered without being served (the connection at its output cap).
    pub(crate) fn refused(
        response: http::Response<Body>,
        in_flight: InFlight,
    ) -> http::Response<Self> {
        response.map(|body| Self {
            body,
            in_flight: Some(in_flight),
            meter: None,
        })
    }
}

impl<B: HttpBody<Data = Bytes>> HttpBody for TrackedBody<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let this = self.project();
        if let Some(meter) = this.meter.as_mut() {
            meter.asked();
            if let Some(piece) = meter.next_piece() {
                return Poll::Ready(Some(Ok(Frame::data(piece))));
            }
        }
        let frame = std::task::ready!(this.body.poll_frame(cx));
        Poll::Ready(match frame {
            None => {
                *this.in_flight = None;
                *this.meter = None;
                None
            }
            Some(Ok(frame)) => match (frame.into_data(), this.meter.as_mut()) {
                (Ok(data), Some(meter)) => Some(Ok(Frame::data(meter.frame(data)))),
                (Ok(data), None) => Some(Ok(Frame::data(data))),
                (Err(frame), _) => Some(Ok(frame)),
            },
            Some(Err(e)) => Some(Err(e)),
        })
    }

    fn is_end_stream(&self) -> bool {
        self.meter.as_ref().is_none_or(Meter::is_drained) && self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
