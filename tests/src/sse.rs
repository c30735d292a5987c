//! A server-sent-events reader: `id:`, `event:`, `data:` (multi-line data joined with `\n`),
//! `retry:` (ignored) and `:` comments, events dispatched at blank lines.

use crate::{Binding, assert_v1_shape, header_str, within};
use bytes::Bytes;
use futures::StreamExt as _;
use futures::stream::BoxStream;
use reqwest::header::HeaderMap;
use serde_json::Value;
use std::collections::VecDeque;

/// One dispatched event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `id:` field, if any.
    pub id: Option<String>,
    /// The `event:` field, if any.
    pub event: Option<String>,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
}

impl SseEvent {
    /// The data as JSON.
    #[track_caller]
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.data)
            .unwrap_or_else(|e| panic!("SSE data is not JSON ({e}): {:?}", self.data))
    }
}

#[derive(Debug, Default)]
struct Partial {
    id: Option<String>,
    event: Option<String>,
    data: Vec<String>,
}

/// The incremental SSE parser behind [`SseStream`]: feed it bytes as they arrive, take
/// dispatched events out.
#[derive(Debug, Default)]
pub struct SseParser {
    buf: Vec<u8>,
    partial: Partial,
    ready: VecDeque<SseEvent>,
    /// Every comment line seen so far (without the leading `:` and one space).
    pub comments: Vec<String>,
    /// How many `data:` lines were seen (to check that each event's data is one line).
    pub data_lines: usize,
}

impl SseParser {
    /// Parses `bytes`; complete lines are processed, a partial line waits for more.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
        while let Some(pos) = self.buf.iter().position(|b| *b == b'\n') {
            let raw: Vec<u8> = self.buf.drain(..=pos).collect();
            let text = String::from_utf8(raw).expect("SSE is UTF-8");
            let line = text.trim_end_matches('\n').trim_end_matches('\r');
            self.line(line);
        }
    }

    /// The next dispatched event, if any.
    pub fn pop(&mut self) -> Option<SseEvent> {
        self.ready.pop_front()
    }

    fn line(&mut self, line: &str) {
        if line.is_empty() {
            let p = std::mem::take(&mut self.partial);
            if !p.data.is_empty() {
                self.ready.push_back(SseEvent {
                    id: p.id,
                    event: p.event,
                    data: p.data.join("\n"),
                });
            }
            return;
        }
        if let Some(comment) = line.strip_prefix(':') {
            self.comments
                .push(comment.strip_prefix(' ').unwrap_or(comment).to_owned());
            return;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value).to_owned();
        match field {
            "data" => {
                self.data_lines += 1;
                self.partial.data.push(value);
            }
            "id" => self.partial.id = Some(value),
            "event" => self.partial.event = Some(value),
            _ => {} // `retry:` and unknown fields are ignored
        }
    }
}

/// An open `text/event-stream` response.
pub struct SseStream {
    /// The HTTP status.
    pub status: u16,
    /// The response headers.
    pub headers: HeaderMap,
    /// The parser, with the comments and data-line count seen so far.
    pub parser: SseParser,
    binding: Binding,
    rpc_id: Option<Value>,
    body: Body,
    ended: bool,
}

/// Where a stream's events come from.
enum Body {
    /// An SSE response body.
    Sse(BoxStream<'static, reqwest::Result<Bytes>>),
    /// A gRPC response stream: each message becomes an event whose `data` is the
    /// StreamResponse's JSON and whose `id` is the event id from its metadata.
    Grpc(Box<tonic::Streaming<Bytes>>),
}

impl std::fmt::Debug for SseStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SseStream")
            .field("status", &self.status)
            .field("binding", &self.binding)
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}

impl SseStream {
    /// Wraps a response (checks HTTP 200 and `text/event-stream`).
    #[track_caller]
    pub fn new(response: reqwest::Response, binding: Binding, rpc_id: Option<Value>) -> Self {
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        assert_eq!(status, 200, "streams are HTTP 200");
        assert!(
            header_str(&headers, "content-type").starts_with("text/event-stream"),
            "streams are text/event-stream"
        );
        Self {
            status,
            headers,
            parser: SseParser::default(),
            binding,
            rpc_id,
            body: Body::Sse(response.bytes_stream().boxed()),
            ended: false,
        }
    }

    /// Wraps a gRPC response stream, presenting each message as an event.
    pub(crate) fn grpc(stream: tonic::Streaming<Bytes>, headers: HeaderMap) -> Self {
        Self {
            status: 200,
            headers,
            parser: SseParser::default(),
            binding: Binding::Grpc,
            rpc_id: None,
            body: Body::Grpc(Box::new(stream)),
            ended: false,
        }
    }

    /// Reads one more chunk of the body; `false` at the end of the stream.
    async fn fill(&mut self) -> bool {
        let stream = match &mut self.body {
            Body::Sse(body) => body,
            Body::Grpc(messages) => {
                return match within("the next gRPC message", messages.message()).await {
                    Ok(Some(bytes)) => {
                        self.parser.ready.push_back(crate::grpc::event(&bytes));
                        true
                    }
                    Ok(None) => {
                        self.ended = true;
                        false
                    }
                    Err(status) => panic!("the gRPC stream failed: {status:?}"),
                };
            }
        };
        match within("the next SSE bytes", stream.next()).await {
            Some(Ok(bytes)) => {
                self.parser.feed(&bytes);
                true
            }
            Some(Err(e)) => panic!("the SSE stream failed: {e}"),
            None => {
                self.ended = true;
                false
            }
        }
    }

    /// The next event, or `None` when the server closed the stream.
    pub async fn next_event(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(e) = self.parser.pop() {
                return Some(e);
            }
            if self.ended || !self.fill().await {
                return None;
            }
        }
    }

    /// Waits for the next comment line (keep-alive), skipping nothing else: panics if an
    /// event arrives first.
    pub async fn next_comment(&mut self) -> String {
        assert!(
            self.binding != Binding::Grpc,
            "gRPC streams have no comments"
        );
        let seen = self.parser.comments.len();
        while self.parser.comments.len() == seen {
            assert!(
                self.parser.ready.is_empty(),
                "an event arrived before a comment"
            );
            assert!(self.fill().await, "the stream ended before a comment");
        }
        self.parser.comments[seen].clone()
    }

    /// The next StreamResponse (unwrapped from its JSON-RPC envelope and shape-checked), or
    /// `None` at the end of the stream.
    pub async fn next(&mut self) -> Option<Value> {
        let event = self.next_event().await?;
        let data = event.json();
        let response = match self.binding {
            Binding::JsonRpc => {
                assert_eq!(data["jsonrpc"], "2.0", "every data is a JSON-RPC response");
                assert_eq!(
                    Some(&data["id"]),
                    self.rpc_id.as_ref(),
                    "every data echoes the request id"
                );
                assert!(
                    data.get("error").is_none(),
                    "unexpected stream error {data:#}"
                );
                data.get("result")
                    .unwrap_or_else(|| panic!("no result in {data:#}"))
                    .clone()
            }
            Binding::Rest | Binding::Grpc => data,
        };
        let keys: Vec<&String> = response.as_object().expect("an object").keys().collect();
        assert_eq!(
            keys.len(),
            1,
            "a StreamResponse has exactly one member: {response:#}"
        );
        assert!(
            ["task", "message", "statusUpdate", "artifactUpdate"].contains(&keys[0].as_str()),
            "unknown StreamResponse member in {response:#}"
        );
        assert_v1_shape(&response);
        Some(response)
    }

    /// The next StreamResponse, which must exist.
    pub async fn expect(&mut self) -> Value {
        match self.next().await {
            Some(v) => v,
            None => panic!("the stream ended early"),
        }
    }

    /// Every remaining StreamResponse until the server closes the stream.
    pub async fn rest(&mut self) -> Vec<Value> {
        let mut out = Vec::new();
        while let Some(v) = self.next().await {
            out.push(v);
        }
        out
    }

    /// Asserts that the server closed the stream (no further event).
    pub async fn assert_closed(&mut self) {
        if let Some(e) = self.next_event().await {
            panic!("the stream should have ended, got {e:?}");
        }
    }
}

/// The member name of a StreamResponse (`task`, `message`, `statusUpdate`, `artifactUpdate`).
pub fn member(response: &Value) -> &str {
    response
        .as_object()
        .and_then(|o| o.keys().next())
        .map_or("", String::as_str)
}

/// The task state a StreamResponse announces, if any.
pub fn state_of(response: &Value) -> Option<&str> {
    response["task"]["status"]["state"]
        .as_str()
        .or_else(|| response["statusUpdate"]["status"]["state"].as_str())
}

/// A compact description of a StreamResponse sequence: `task:TASK_STATE_WORKING`,
/// `artifactUpdate`, `statusUpdate:TASK_STATE_COMPLETED`, …
pub fn summary(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| match state_of(e) {
            Some(s) => format!("{}:{s}", member(e)),
            None => member(e).to_owned(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parser_handles_fields_comments_multi_line_data_and_split_chunks() {
        let mut p = SseParser::default();
        p.feed(b": keep-alive\n\nid: 7\r\nevent: update\ndata: {\"a\":\ndata: 1}\n");
        assert_eq!(p.pop(), None, "not dispatched before the blank line");
        p.feed(b"\nretry: 100\ndata:no-space");
        p.feed(b"\n\nid: lone\n\n");
        assert_eq!(
            p.pop(),
            Some(SseEvent {
                id: Some("7".into()),
                event: Some("update".into()),
                data: "{\"a\":\n1}".into(),
            })
        );
        assert_eq!(p.pop().unwrap().data, "no-space");
        assert_eq!(p.pop(), None, "an event without data is not dispatched");
        assert_eq!(p.comments, ["keep-alive"]);
        assert_eq!(p.data_lines, 3);
    }
}
