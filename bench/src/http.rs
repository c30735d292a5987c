//! A lean HTTP/1.1 client for load generation: one keep-alive connection per worker,
//! `TCP_NODELAY` on, requests written as prepared bytes, responses parsed just enough to find
//! the status, the body (`Content-Length` or chunked) and server-sent events. No allocation per
//! response beyond the body the caller asked for, so that the load generator is not what limits
//! the measurement.

use memchr::memmem;
use std::io;
use std::net::{SocketAddr, ToSocketAddrs as _};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

/// Where to send requests: the socket address, the `Host` header value, and the path of the
/// JSON-RPC endpoint (from a URL like `http://127.0.0.1:8080/` or `http://host:port/rpc`).
#[derive(Clone, Debug)]
pub(crate) struct Target {
    pub(crate) addr: SocketAddr,
    pub(crate) host: String,
    pub(crate) path: String,
}

impl Target {
    /// Parses an `http://host:port[/path]` URL (plain HTTP only).
    pub(crate) fn parse(url: &str) -> Result<Self, String> {
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| format!("{url}: only http:// URLs are supported"))?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        let with_port = if authority.contains(':') {
            authority.to_owned()
        } else {
            format!("{authority}:80")
        };
        let addr = with_port
            .to_socket_addrs()
            .map_err(|e| format!("{authority}: {e}"))?
            .next()
            .ok_or_else(|| format!("{authority}: no address"))?;
        Ok(Self {
            addr,
            host: authority.to_owned(),
            path: path.to_owned(),
        })
    }

    /// A `POST` of a JSON body to the JSON-RPC endpoint.
    pub(crate) fn post_json(&self, body: &str, sse: bool) -> Vec<u8> {
        let accept = if sse {
            "text/event-stream"
        } else {
            "application/json"
        };
        let mut req = Vec::with_capacity(160 + body.len());
        req.extend_from_slice(
            format!(
                "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: {accept}\r\nA2A-Version: 1.0\r\nContent-Length: {}\r\n\r\n",
                self.path,
                self.host,
                body.len()
            )
            .as_bytes(),
        );
        req.extend_from_slice(body.as_bytes());
        req
    }

    /// A `GET` of `path` (absolute, from the server root).
    pub(crate) fn get(&self, path: &str) -> Vec<u8> {
        format!("GET {path} HTTP/1.1\r\nHost: {}\r\n\r\n", self.host).into_bytes()
    }
}

/// How a response body is delimited.
#[derive(Clone, Copy, Debug)]
enum Framing {
    Length(usize),
    Chunked,
    UntilClose,
}

/// One keep-alive connection.
#[derive(Debug)]
pub(crate) struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    pos: usize,
    /// The server announced `Connection: close` (or the body ran to EOF): reconnect.
    pub(crate) closed: bool,
}

fn bad(what: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.into())
}

impl Conn {
    pub(crate) async fn connect(addr: SocketAddr) -> io::Result<Self> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(Self {
            stream,
            buf: Vec::with_capacity(16 * 1024),
            pos: 0,
            closed: false,
        })
    }

    fn pending(&self) -> &[u8] {
        &self.buf[self.pos..]
    }

    /// Reads more bytes into the buffer; `Ok(false)` at EOF.
    async fn fill(&mut self) -> io::Result<bool> {
        if self.pos > 0 && self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        } else if self.pos > self.buf.capacity() / 2 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        if self.buf.capacity() - self.buf.len() < 8 * 1024 {
            self.buf.reserve(16 * 1024);
        }
        let n = self.stream.read_buf(&mut self.buf).await?;
        Ok(n > 0)
    }

    async fn fill_or_eof(&mut self) -> io::Result<()> {
        if self.fill().await? {
            Ok(())
        } else {
            Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection",
            ))
        }
    }

    /// Reads a response head: the status and how the body is framed.
    async fn head(&mut self) -> io::Result<(u16, Framing)> {
        let end = loop {
            if let Some(i) = memmem::find(self.pending(), b"\r\n\r\n") {
                break i;
            }
            self.fill_or_eof().await?;
        };
        let head = &self.buf[self.pos..self.pos + end];
        let mut lines = head.split(|&b| b == b'\n');
        let status_line = lines.next().unwrap_or_default();
        let status = status_line
            .get(9..12)
            .and_then(|s| std::str::from_utf8(s).ok())
            .and_then(|s| s.parse::<u16>().ok())
            .ok_or_else(|| bad("malformed status line"))?;
        let mut framing = Framing::UntilClose;
        let mut close = false;
        for line in lines {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let Some(colon) = line.iter().position(|&b| b == b':') else {
                continue;
            };
            let (name, value) = (&line[..colon], line[colon + 1..].trim_ascii());
            if name.eq_ignore_ascii_case(b"content-length") {
                let n = std::str::from_utf8(value)
                    .ok()
                    .and_then(|v| v.parse().ok())
                    .ok_or_else(|| bad("bad content-length"))?;
                framing = Framing::Length(n);
            } else if name.eq_ignore_ascii_case(b"transfer-encoding")
                && memmem::find(&value.to_ascii_lowercase(), b"chunked").is_some()
            {
                framing = Framing::Chunked;
            } else if name.eq_ignore_ascii_case(b"connection")
                && value.eq_ignore_ascii_case(b"close")
            {
                close = true;
            }
        }
        self.pos += end + 4;
        if (100..200).contains(&status) {
            return Err(bad("1xx responses are not supported"));
        }
        if status == 204 || status == 304 {
            framing = Framing::Length(0);
        }
        self.closed = close || matches!(framing, Framing::UntilClose);
        Ok((status, framing))
    }

    /// Delivers the body to `sink` as it arrives (a chunk at a time for chunked bodies).
    async fn body(
        &mut self,
        framing: Framing,
        sink: &mut (dyn FnMut(&[u8]) + Send),
    ) -> io::Result<()> {
        match framing {
            Framing::Length(n) => {
                while self.pending().len() < n {
                    self.fill_or_eof().await?;
                }
                sink(&self.buf[self.pos..self.pos + n]);
                self.pos += n;
            }
            Framing::UntilClose => {
                loop {
                    let p = self.pending().len();
                    if p > 0 {
                        sink(&self.buf[self.pos..]);
                        self.pos += p;
                    }
                    if !self.fill().await? {
                        break;
                    }
                }
                self.closed = true;
            }
            Framing::Chunked => loop {
                let line_end = loop {
                    if let Some(i) = memmem::find(self.pending(), b"\r\n") {
                        break i;
                    }
                    self.fill_or_eof().await?;
                };
                let line = &self.buf[self.pos..self.pos + line_end];
                let hex = line.split(|&b| b == b';').next().unwrap_or_default();
                let size = std::str::from_utf8(hex)
                    .ok()
                    .and_then(|h| usize::from_str_radix(h.trim(), 16).ok())
                    .ok_or_else(|| bad("bad chunk size"))?;
                self.pos += line_end + 2;
                if size == 0 {
                    // Trailers (normally none), then the empty line.
                    loop {
                        let end = loop {
                            if let Some(i) = memmem::find(self.pending(), b"\r\n") {
                                break i;
                            }
                            self.fill_or_eof().await?;
                        };
                        self.pos += end + 2;
                        if end == 0 {
                            return Ok(());
                        }
                    }
                }
                while self.pending().len() < size + 2 {
                    self.fill_or_eof().await?;
                }
                sink(&self.buf[self.pos..self.pos + size]);
                self.pos += size + 2;
            },
        }
        Ok(())
    }

    /// Sends `req` and reads the whole response; the body is appended to `body`.
    pub(crate) async fn unary(&mut self, req: &[u8], body: &mut Vec<u8>) -> io::Result<u16> {
        self.stream.write_all(req).await?;
        let (status, framing) = self.head().await?;
        self.body(framing, &mut |b| body.extend_from_slice(b))
            .await?;
        Ok(status)
    }

    /// Sends `req` and reads a server-sent-event response to its end, calling `on_event` with
    /// each event's `id:` and `data:` (data lines joined by `\n`) as it arrives. A non-SSE answer
    /// (an error) is delivered as one event without an id. Returns the status.
    pub(crate) async fn sse(
        &mut self,
        req: &[u8],
        on_event: &mut (dyn FnMut(Option<u64>, &[u8]) + Send),
    ) -> io::Result<u16> {
        self.stream.write_all(req).await?;
        let (status, framing) = self.head().await?;
        let mut parser = SseParser::default();
        self.body(framing, &mut |bytes| parser.feed(bytes, on_event))
            .await?;
        parser.finish(on_event);
        Ok(status)
    }
}

/// Splits a byte stream into server-sent events.
#[derive(Debug, Default)]
pub(crate) struct SseParser {
    buf: Vec<u8>,
    data: Vec<u8>,
}

impl SseParser {
    pub(crate) fn feed(
        &mut self,
        bytes: &[u8],
        on_event: &mut (dyn FnMut(Option<u64>, &[u8]) + Send),
    ) {
        self.buf.extend_from_slice(bytes);
        let mut start = 0;
        while let Some(i) = memmem::find(&self.buf[start..], b"\n\n") {
            let block = &self.buf[start..start + i];
            start += i + 2;
            let mut id = None;
            self.data.clear();
            let mut any = false;
            for line in block.split(|&b| b == b'\n') {
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                if let Some(v) = line.strip_prefix(b"data:") {
                    if any {
                        self.data.push(b'\n');
                    }
                    self.data
                        .extend_from_slice(v.strip_prefix(b" ").unwrap_or(v));
                    any = true;
                } else if let Some(v) = line.strip_prefix(b"id:") {
                    id = std::str::from_utf8(v)
                        .ok()
                        .and_then(|s| s.trim().parse().ok());
                }
            }
            if any {
                on_event(id, &self.data);
            }
        }
        self.buf.drain(..start);
    }

    /// A body that was not an event stream (a plain JSON error) counts as one event.
    pub(crate) fn finish(&mut self, on_event: &mut (dyn FnMut(Option<u64>, &[u8]) + Send)) {
        let rest = self.buf.trim_ascii();
        if !rest.is_empty() && !rest.starts_with(b":") && !rest.starts_with(b"data:") {
            on_event(None, rest);
        }
        self.buf.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_events_split_across_feeds() {
        let mut p = SseParser::default();
        let mut seen = Vec::new();
        let mut on = |id: Option<u64>, d: &[u8]| seen.push((id, d.to_vec()));
        p.feed(b": keep-alive\n\nid: 1\nda", &mut on);
        p.feed(b"ta: {\"a\":1}\n\ndata: x\ndata: y\n\n", &mut on);
        p.finish(&mut on);
        assert_eq!(
            seen,
            [(Some(1), b"{\"a\":1}".to_vec()), (None, b"x\ny".to_vec())]
        );
    }

    #[test]
    fn targets_parse() {
        let t = Target::parse("http://127.0.0.1:9000").unwrap();
        assert_eq!(t.path, "/");
        assert_eq!(t.addr.port(), 9000);
        let t = Target::parse("http://127.0.0.1:9000/rpc").unwrap();
        assert_eq!(t.path, "/rpc");
        assert!(Target::parse("https://x").is_err());
    }
}
