//! Server-sent events on axum's [`Sse`]: one single-line `data:` and one `id:` (the task's
//! sequence number) per event, `: keep-alive` comments while idle, and the response ends after
//! the last event. Compact JSON holds no line break, so each event's data is one `data:` line.

use crate::handler::{EventStream, StreamEvent};
use a2a_core::{Error, ErrorKind};
use axum::http::HeaderValue;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse as _, Response};
use futures::StreamExt as _;
use std::convert::Infallible;
use std::time::Duration;

/// Room for a typical event's JSON: growing a buffer from empty copies it several times.
const JSON_CAPACITY: usize = 2048;

/// Turns an event stream into an SSE response; `encode` writes each event's `data` JSON
/// (compact, as `serde_json::to_writer` writes it). An event that fails to serialize becomes
/// an `event: error` with a `google.rpc.Status` body.
pub(crate) fn respond(
    events: EventStream,
    keep_alive: Duration,
    encode: impl Fn(&StreamEvent, &mut Vec<u8>) -> Result<(), serde_json::Error> + Send + 'static,
) -> Response {
    let events = events.map(move |e| Ok::<_, Infallible>(event(&e, &encode)));
    let keep_alive = KeepAlive::new().interval(keep_alive).text("keep-alive");
    let mut response = Sse::new(events).keep_alive(keep_alive).into_response();
    // Tells a proxy in front (nginx) to pass each event on at once.
    response
        .headers_mut()
        .insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// An event stream holding one `data:` event (an error answer), then closing.
pub(crate) fn error_event(data: String) -> Response {
    let event = Event::default().data(data);
    Sse::new(futures::stream::once(async { Ok::<_, Infallible>(event) })).into_response()
}

/// One event: `data: <json>`, then `id: <seq>` when it has a sequence number.
fn event<E>(e: &StreamEvent, encode: &E) -> Event
where
    E: Fn(&StreamEvent, &mut Vec<u8>) -> Result<(), serde_json::Error>,
{
    let mut json = Vec::with_capacity(JSON_CAPACITY);
    // serde_json writes UTF-8; checked all the same (no `unsafe`), as an error if it is not.
    let encoded = encode(e, &mut json)
        .map_err(|err| err.to_string())
        .and_then(|()| std::str::from_utf8(&json).map_err(|err| err.to_string()));
    let event = match encoded {
        Ok(data) => Event::default().data(data),
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
    if e.seq > 0 {
        event.id(e.seq.to_string())
    } else {
        event
    }
}

#[cfg(test)]
mod tests {
    use super::{StreamEvent, respond};
    use a2a_core::{Message, StreamResponse};
    use futures::StreamExt as _;
    use http_body_util::BodyExt as _;
    use serde::ser::Error as _;
    use std::time::Duration;

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

    /// The whole body of an SSE response over `events`.
    async fn body(
        events: Vec<StreamEvent>,
        encode: impl Fn(&StreamEvent, &mut Vec<u8>) -> Result<(), serde_json::Error> + Send + 'static,
    ) -> String {
        let response = respond(
            futures::stream::iter(events).boxed(),
            Duration::from_secs(60),
            encode,
        );
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        assert_eq!(response.headers()["cache-control"], "no-cache");
        assert_eq!(response.headers()["x-accel-buffering"], "no");
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[tokio::test]
    async fn an_event_is_one_data_line_then_its_id_then_a_blank_line() {
        let data = serde_json::to_string(&event(7).event).unwrap();
        assert!(data.contains("line one\\nline two"), "{data}");
        // Without a sequence number (a message reply), no id.
        let text = body(vec![event(7), event(0)], json).await;
        assert_eq!(text, format!("data: {data}\nid: 7\n\ndata: {data}\n\n"));
    }

    #[tokio::test]
    async fn an_event_that_fails_to_serialize_is_an_error_event_with_a_status_body() {
        let failing = |_: &StreamEvent, out: &mut Vec<u8>| {
            out.extend_from_slice(b"{\"half");
            Err(serde_json::Error::custom("no"))
        };
        let text = body(vec![event(3)], failing).await;
        let (head, rest) = text.split_once("\ndata: ").expect("a data line");
        assert_eq!(head, "event: error");
        let (data, tail) = rest.split_once('\n').expect("one line");
        assert_eq!(tail, "id: 3\n\n");
        let body: serde_json::Value = serde_json::from_str(data).expect("a status body");
        assert_eq!(body["error"]["status"], "INTERNAL", "{body}");
    }
}
