//! Server-sent events: one `id:` (the task's sequence number) and one single-line `data:` per
//! event, `: keep-alive` comments while idle, and the response ends after the last event.

use crate::handler::{EventStream, StreamEvent};
use a2a_core::{Error, ErrorKind};
use axum::http::{HeaderValue, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt as _;
use std::convert::Infallible;
use std::time::Duration;

/// Turns an event stream into an SSE response; `encode` writes each event's `data` JSON. An
/// event that fails to serialize becomes an `event: error` with a `google.rpc.Status` body.
pub(crate) fn respond(
    events: EventStream,
    keep_alive: Duration,
    encode: impl Fn(&StreamEvent) -> Result<String, serde_json::Error> + Send + 'static,
) -> Response {
    let stream = events.map(move |e| {
        let event = match encode(&e) {
            Ok(json) => Event::default().data(json),
            Err(err) => {
                tracing::error!(error = %err, "an SSE event failed to serialize");
                let error = Error::new(
                    ErrorKind::Internal,
                    format!("event serialization failed: {err}"),
                );
                Event::default()
                    .event("error")
                    .data(error.to_status_body().to_string())
            }
        };
        let event = if e.seq > 0 {
            event.id(e.seq.to_string())
        } else {
            event
        };
        Ok::<_, Infallible>(event)
    });
    let mut response = Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(keep_alive).text("keep-alive"))
        .into_response();
    let h = response.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// An event stream holding one `data:` event (an error answer), then closing.
pub(crate) fn error_event(data: String) -> Response {
    let stream =
        futures::stream::once(async move { Ok::<_, Infallible>(Event::default().data(data)) });
    let mut response = Sse::new(stream).into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}
