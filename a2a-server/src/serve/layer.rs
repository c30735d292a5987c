//! [`TrackRequestsLayer`]: counts each request as in flight on its connection until its
//! response body ends or is dropped, so that the connection's watcher never closes a
//! connection that is serving someone (an SSE or gRPC stream included).

use super::conn::ConnState;
use super::listener::Connection;
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
        TrackedFuture {
            response: self.inner.call(request),
            in_flight,
        }
    }
}

pin_project_lite::pin_project! {
    /// The future of [`TrackRequests`]: the inner service's response, its body tracked.
    pub struct TrackedFuture<F> {
        #[pin]
        response: F,
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
        let response = std::task::ready!(this.response.poll(cx))?;
        Poll::Ready(Ok(match this.in_flight.take() {
            // The body is boxed again (a `Body` is a box): the price of a layer that fits
            // any router. `Server::serve` counts requests without it.
            Some(in_flight) => {
                response.map(|body| Body::new(TrackedBody::new(body, Some(in_flight))))
            }
            None => response.map(Body::new),
        }))
    }
}

pin_project_lite::pin_project! {
    /// A response body that keeps its request counted as in flight until it ends or is
    /// dropped.
    #[derive(Debug)]
    pub(crate) struct TrackedBody<B> {
        #[pin]
        body: B,
        in_flight: Option<InFlight>,
    }
}

impl<B> TrackedBody<B> {
    pub(crate) fn new(body: B, in_flight: Option<InFlight>) -> Self {
        Self { body, in_flight }
    }
}

impl<B: HttpBody> HttpBody for TrackedBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        let this = self.project();
        let frame = this.body.poll_frame(cx);
        if let Poll::Ready(None) = frame {
            *this.in_flight = None;
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
