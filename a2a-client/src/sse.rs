//! A server-sent-events reader: joins multi-line `data:`, keeps `id:` and `event:`, skips
//! comments and `retry:`.

use futures::{Stream, StreamExt};

/// One SSE event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `id:` field, if any (the last one seen applies).
    pub id: Option<String>,
    /// The `event:` field (`message` when absent).
    pub event: Option<String>,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
}

/// Incremental parser: feed bytes, take events.
#[derive(Debug, Default)]
pub struct SseParser {
    buf: Vec<u8>,
    current: SseEvent,
    has_data: bool,
}

impl SseParser {
    /// Adds bytes and returns every event they complete.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        self.buf.extend_from_slice(bytes);
        let mut out = Vec::new();
        while let Some(pos) = self.buf.iter().position(|&b| b == b'\n') {
            let mut line: Vec<u8> = self.buf.drain(..=pos).collect();
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            let line = String::from_utf8_lossy(&line);
            if line.is_empty() {
                if self.has_data {
                    out.push(std::mem::take(&mut self.current));
                    self.has_data = false;
                } else {
                    self.current.event = None;
                }
                continue;
            }
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
                None => (line.as_ref(), ""),
            };
            match field {
                "data" => {
                    if self.has_data {
                        self.current.data.push('\n');
                    }
                    self.current.data.push_str(value);
                    self.has_data = true;
                }
                "id" => self.current.id = Some(value.to_owned()),
                "event" => self.current.event = Some(value.to_owned()),
                _ => {}
            }
        }
        out
    }
}

/// Turns a response body into a stream of SSE events.
pub fn events(
    response: reqwest::Response,
) -> impl Stream<Item = Result<SseEvent, reqwest::Error>> + Send + 'static {
    let mut parser = SseParser::default();
    response
        .bytes_stream()
        .map(move |chunk| chunk.map(|bytes| parser.feed(&bytes)))
        .flat_map(|r| {
            futures::stream::iter(match r {
                Ok(events) => events.into_iter().map(Ok).collect::<Vec<_>>(),
                Err(e) => vec![Err(e)],
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parser_joins_data_lines_and_skips_comments() {
        let mut p = SseParser::default();
        let mut all =
            p.feed(b": keep-alive\n\nid: 7\nevent: x\ndata: {\"a\":\ndata: 1}\n\nretry: 5\n");
        all.extend(p.feed(b"data: two\r\n\r\n"));
        assert_eq!(
            all,
            vec![
                SseEvent {
                    id: Some("7".into()),
                    event: Some("x".into()),
                    data: "{\"a\":\n1}".into()
                },
                SseEvent {
                    id: None,
                    event: None,
                    data: "two".into()
                },
            ]
        );
    }
}
