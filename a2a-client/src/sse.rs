//! A server-sent-events reader: joins multi-line `data:`, keeps `id:` and `event:`, skips
//! comments and `retry:`. An event is bounded in size (its unfinished line and its data
//! together), and a stream in the time between events, so that an agent that trickles, or
//! never ends a line, costs at most [`Limits::event_bytes`] and
//! [`Limits::idle_timeout`].

use crate::{Context, Error, Limit, Limits};
use futures::Stream;

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
#[derive(Debug)]
pub struct SseParser {
    buf: Vec<u8>,
    /// How far `buf` is known to hold no line end.
    scanned: usize,
    current: SseEvent,
    has_data: bool,
    max: usize,
    overflowed: bool,
    alive: bool,
}

impl Default for SseParser {
    /// A parser of events up to [`DEFAULT_MAX_EVENT_BYTES`](crate::DEFAULT_MAX_EVENT_BYTES).
    fn default() -> Self {
        Self::with_max_event_bytes(crate::DEFAULT_MAX_EVENT_BYTES)
    }
}

impl SseParser {
    /// A parser that gives up on an event (its data and unfinished line together) over `max`
    /// bytes: see [`Self::overflowed`].
    pub fn with_max_event_bytes(max: usize) -> Self {
        Self {
            buf: Vec::new(),
            scanned: 0,
            current: SseEvent::default(),
            has_data: false,
            max,
            overflowed: false,
            alive: false,
        }
    }

    /// Whether an event went over the size limit; the parser then reads nothing more.
    pub fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// Whether an event or a comment (a keep-alive) was completed since the last call.
    pub fn take_alive(&mut self) -> bool {
        std::mem::take(&mut self.alive)
    }

    /// Adds bytes and returns every event they complete.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        if self.overflowed {
            return out;
        }
        self.buf.extend_from_slice(bytes);
        let mut start = 0;
        while let Some(at) = self.buf[start + self.scanned..]
            .iter()
            .position(|&b| b == b'\n')
        {
            let end = start + self.scanned + at;
            self.scanned = 0;
            let mut line = &self.buf[start..end];
            start = end + 1;
            if line.last() == Some(&b'\r') {
                line = &line[..line.len() - 1];
            }
            let line = String::from_utf8_lossy(line).into_owned();
            self.line(&line, &mut out);
        }
        self.buf.drain(..start);
        self.scanned = self.buf.len();
        if self.buf.len() + self.current.data.len() > self.max {
            self.overflowed = true;
            self.buf = Vec::new();
            self.current = SseEvent::default();
        }
        out
    }

    fn line(&mut self, line: &str, out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            if self.has_data {
                out.push(std::mem::take(&mut self.current));
                self.has_data = false;
                self.alive = true;
            } else {
                self.current.event = None;
            }
            return;
        }
        if line.starts_with(':') {
            self.alive = true;
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
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
}

/// Turns a response body into a stream of SSE events, each at most `limits.event_bytes`, with
/// at most `limits.idle_timeout` between two of them (or keep-alive comments). Going over
/// either ends the stream with an error ([`Error::TooLarge`], [`Error::Timeout`]).
pub fn events(
    response: reqwest::Response,
    limits: &Limits,
) -> impl Stream<Item = Result<SseEvent, Error>> + Send + 'static {
    let (max, idle) = (limits.event_bytes, limits.idle_timeout);
    async_stream::stream! {
        let mut response = response;
        let url = response.url().to_string();
        let mut parser = SseParser::with_max_event_bytes(max);
        let mut deadline = tokio::time::Instant::now() + idle;
        loop {
            let chunk = match tokio::time::timeout_at(deadline, response.chunk()).await {
                Err(elapsed) => {
                    let context = format!(
                        "no event from {url} for {idle:?} (raise the limit with ClientBuilder::idle_timeout; a2a: --idle-timeout SECONDS)"
                    );
                    yield Err(Error::Timeout(Box::new(Context::new(context, elapsed))));
                    return;
                }
                Ok(Err(e)) => {
                    yield Err(Error::Transport(e));
                    return;
                }
                Ok(Ok(None)) => return,
                Ok(Ok(Some(chunk))) => chunk,
            };
            for event in parser.feed(&chunk) {
                yield Ok(event);
            }
            if parser.overflowed() {
                yield Err(Limit::Event.exceeded(max, url));
                return;
            }
            if parser.take_alive() {
                deadline = tokio::time::Instant::now() + idle;
            }
        }
    }
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

    #[test]
    fn parser_reads_lines_split_across_chunks() {
        let mut p = SseParser::default();
        let mut all = Vec::new();
        for b in b"data: sp\r\nda".iter().chain(b"ta: lit\n\n") {
            all.extend(p.feed(&[*b]));
        }
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].data, "sp\nlit");
    }

    #[test]
    fn an_event_over_the_limit_overflows_whether_its_line_ends_or_not() {
        let mut unended = SseParser::with_max_event_bytes(64);
        assert!(unended.feed(&[b'x'; 40]).is_empty());
        assert!(!unended.overflowed());
        assert!(unended.feed(&[b'x'; 40]).is_empty());
        assert!(unended.overflowed());
        assert!(unended.feed(b"\n\ndata: late\n\n").is_empty());

        let mut lines = SseParser::with_max_event_bytes(64);
        for _ in 0..8 {
            lines.feed(b"data: 0123456789\n");
        }
        assert!(lines.overflowed());
    }

    #[test]
    fn comments_and_events_count_as_alive_but_a_partial_event_does_not() {
        let mut p = SseParser::default();
        p.feed(b"data: half");
        assert!(!p.take_alive());
        p.feed(b"\n");
        assert!(!p.take_alive());
        p.feed(b": keep-alive\n");
        assert!(p.take_alive());
        assert!(!p.take_alive());
        p.feed(b"\n");
        assert!(p.take_alive());
    }
}
