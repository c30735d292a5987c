//! Server-sent events: one single-line `data:` and one `id:` (the task's sequence number) per
//! event, `: keep-alive` comments while idle, and the response ends after the last event.
//!
//! Each event is framed here, its JSON written straight into the frame: compact JSON holds no
//! line break, so it is one `data:` line as it is. (axum's `Event` scans a `data` value for
//! line breaks and copies it into a buffer it grows several times per event: about 4k
//! instructions of a streamed echo task's 100k, callgrind.)

use crate::handler::{EventStream, StreamEvent};
use a2a_core::{Error, ErrorKind};
use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, header};
use axum::response::Response;
use futures::{Stream, StreamExt as _};
use std::convert::Infallible;
use std::future::Future as _;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::{Instant, Sleep};

/// Room for a typical event's frame: growing a buffer from empty copies it several times.
const FRAME_CAPACITY: usize = 2048;

/// The comment sent after `keep_alive` without an event.
const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

/// Turns an event stream into an SSE response; `encode` writes each event's `data` JSON
/// (compact, as `serde_json::to_writer` writes it). An event that fails to serialize becomes
/// an `event: error` with a `google.rpc.Status` body.
pub(crate) fn respond(
    events: EventStream,
    keep_alive: Duration,
    encode: impl Fn(&StreamEvent, &mut Vec<u8>) -> Result<(), serde_json::Error> + Send + 'static,
) -> Response {
    let frames = Frames {
        events,
        encode,
        keep_alive,
        idle: None,
    };
    let mut response = stream_response(Body::from_stream(frames));
    response
        .headers_mut()
        .insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// An event stream holding one `data:` event (an error answer), then closing.
pub(crate) fn error_event(data: String) -> Response {
    let mut frame = Vec::with_capacity(data.len() + 8);
    frame.extend_from_slice(b"data: ");
    frame.extend_from_slice(data.as_bytes());
    frame.extend_from_slice(b"\n\n");
    stream_response(Body::from(frame))
}

fn stream_response(body: Body) -> Response {
    let mut response = Response::new(body);
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// One event's frame: `data: <json>\n`, then `id: <seq>\n` when it has a sequence number,
/// then the blank line.
fn frame<E>(e: &StreamEvent, encode: &E) -> Bytes
where
    E: Fn(&StreamEvent, &mut Vec<u8>) -> Result<(), serde_json::Error>,
{
    let mut out = Vec::with_capacity(FRAME_CAPACITY);
    out.extend_from_slice(b"data: ");
    if let Err(err) = encode(e, &mut out) {
        tracing::error!(error = %err, "an SSE event failed to serialize");
        let error = Error::new(
            ErrorKind::Internal,
            format!("event serialization failed: {err}"),
        );
        out.clear();
        out.extend_from_slice(b"event: error\ndata: ");
        out.extend_from_slice(error.to_status_body().to_string().as_bytes());
    }
    out.push(b'\n');
    if e.seq > 0 {
        out.extend_from_slice(b"id: ");
        // A number's JSON is its decimal digits (written without a `String`).
        let _ = serde_json::to_writer(&mut out, &e.seq);
        out.push(b'\n');
    }
    out.push(b'\n');
    Bytes::from(out)
}

/// The frames of an SSE response: each event's, and a keep-alive comment whenever
/// `keep_alive` passes without one.
struct Frames<E> {
    events: EventStream,
    encode: E,
    keep_alive: Duration,
    /// Armed the first time the events keep the stream waiting; its deadline moves with each
    /// frame sent.
    idle: Option<Pin<Box<Sleep>>>,
}

// Nothing in a `Frames` is pinned: the events and the timer are boxed, `encode` is only called.
impl<E> Unpin for Frames<E> {}

impl<E> Stream for Frames<E>
where
    E: Fn(&StreamEvent, &mut Vec<u8>) -> Result<(), serde_json::Error>,
{
    type Item = Result<Bytes, Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        match this.events.poll_next_unpin(cx) {
            Poll::Ready(Some(e)) => {
                if let Some(idle) = &mut this.idle {
                    idle.as_mut().reset(Instant::now() + this.keep_alive);
                }
                return Poll::Ready(Some(Ok(frame(&e, &this.encode))));
            }
            Poll::Ready(None) => return Poll::Ready(None),
            Poll::Pending => {}
        }
        let keep_alive = this.keep_alive;
        let idle = this
            .idle
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(keep_alive)));
        match idle.as_mut().poll(cx) {
            Poll::Ready(()) => {
                idle.as_mut().reset(Instant::now() + keep_alive);
                Poll::Ready(Some(Ok(Bytes::from_static(KEEP_ALIVE))))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{StreamEvent, frame};
    use a2a_core::{Message, StreamResponse};
    use serde::ser::Error as _;

    fn event(seq: u64) -> StreamEvent {
        let mut m = Message::agent_text("line one\nline two");
        m.message_id = "m1".into();
        StreamEvent {
            seq,
            event: StreamResponse::Message(m),
        }
    }

    fn json(e: &StreamEvent, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
        serde_json::to_writer(out, &e.event)
    }

    #[test]
    fn an_event_is_one_data_line_then_its_id_then_a_blank_line() {
        let e = event(7);
        let text = String::from_utf8(frame(&e, &json).to_vec()).unwrap();
        let data = serde_json::to_string(&e.event).unwrap();
        assert_eq!(text, format!("data: {data}\nid: 7\n\n"));
        assert!(data.contains("line one\\nline two"), "{data}");
        // Without a sequence number (a message reply), no id.
        let text = String::from_utf8(frame(&event(0), &json).to_vec()).unwrap();
        assert_eq!(text, format!("data: {data}\n\n"));
    }

    #[test]
    fn an_event_that_fails_to_serialize_is_an_error_event_with_a_status_body() {
        let failing = |_: &StreamEvent, out: &mut Vec<u8>| {
            out.extend_from_slice(b"{\"half");
            Err(serde_json::Error::custom("no"))
        };
        let text = String::from_utf8(frame(&event(3), &failing).to_vec()).unwrap();
        let (head, rest) = text.split_once("\ndata: ").expect("a data line");
        assert_eq!(head, "event: error");
        let (data, tail) = rest.split_once('\n').expect("one line");
        assert_eq!(tail, "id: 3\n\n");
        let body: serde_json::Value = serde_json::from_str(data).expect("a status body");
        assert_eq!(body["error"]["status"], "INTERNAL", "{body}");
    }
}
