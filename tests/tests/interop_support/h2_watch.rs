//! A TCP proxy for plain-text HTTP/2 (gRPC without TLS) that forwards every byte unchanged and
//! reads the frame headers on the way: the PING frames the client sends and the GOAWAY frames
//! the server sends. It shows how a client's keep-alive pings meet a server's ping policy.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// The client connection preface (RFC 9113 §3.4), before the client's first frame.
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const DATA: u8 = 0x0;
const HEADERS: u8 = 0x1;
const PING: u8 = 0x6;
const GOAWAY: u8 = 0x7;
const ACK: u8 = 0x1;

/// What one connection through the proxy carried so far.
#[derive(Clone, Debug)]
pub(crate) struct Connection {
    /// When the connection was accepted.
    pub(crate) opened: Instant,
    /// When the client sent each PING (not the ACKs of the server's pings).
    pub(crate) client_pings: Vec<Duration>,
    /// The most PINGs the client sent in a row with no HEADERS or DATA from the server between
    /// them. gRPC servers count such pings, and close the connection after a few too many.
    pub(crate) pings_without_data: usize,
    /// Each GOAWAY the server sent: its error code and debug data.
    pub(crate) goaways: Vec<(u32, String)>,
}

/// The proxy, listening on 127.0.0.1; stopped when dropped.
#[derive(Debug)]
pub(crate) struct H2Watch {
    /// `127.0.0.1:<port>`, to dial instead of the upstream.
    pub(crate) addr: String,
    connections: Arc<Mutex<Vec<Connection>>>,
    accept: JoinHandle<()>,
}

impl H2Watch {
    /// A proxy to `upstream` (`host:port`).
    pub(crate) async fn start(upstream: &str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr").to_string();
        let connections = Arc::new(Mutex::new(Vec::new()));
        let all = connections.clone();
        let upstream = upstream.to_owned();
        let accept = tokio::spawn(async move {
            while let Ok((inbound, _)) = listener.accept().await {
                let index = {
                    let mut all = all.lock().expect("connections");
                    all.push(Connection {
                        opened: Instant::now(),
                        client_pings: Vec::new(),
                        pings_without_data: 0,
                        goaways: Vec::new(),
                    });
                    all.len() - 1
                };
                let Ok(outbound) = TcpStream::connect(&upstream).await else {
                    continue;
                };
                let (client_in, client_out) = inbound.into_split();
                let (server_in, server_out) = outbound.into_split();
                let seen = Seen {
                    all: all.clone(),
                    index,
                    pings_in_a_row: Arc::new(Mutex::new(0)),
                };
                tokio::spawn(pump(client_in, server_out, true, seen.clone()));
                tokio::spawn(pump(server_in, client_out, false, seen));
            }
        });
        Self {
            addr,
            connections,
            accept,
        }
    }

    /// The connections accepted so far.
    pub(crate) fn connections(&self) -> Vec<Connection> {
        self.connections.lock().expect("connections").clone()
    }
}

impl Drop for H2Watch {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

/// Where a connection's two pumps record what they read.
#[derive(Clone)]
struct Seen {
    all: Arc<Mutex<Vec<Connection>>>,
    index: usize,
    pings_in_a_row: Arc<Mutex<usize>>,
}

impl Seen {
    fn frame(&self, from_client: bool, kind: u8, flags: u8, payload: &[u8]) {
        let mut all = self.all.lock().expect("connections");
        let conn = &mut all[self.index];
        let mut in_a_row = self.pings_in_a_row.lock().expect("pings");
        match (from_client, kind) {
            (true, PING) if flags & ACK == 0 => {
                conn.client_pings.push(conn.opened.elapsed());
                *in_a_row += 1;
                conn.pings_without_data = conn.pings_without_data.max(*in_a_row);
            }
            (false, HEADERS | DATA) => *in_a_row = 0,
            (false, GOAWAY) if payload.len() >= 8 => {
                let code = u32::from_be_bytes([payload[4], payload[5], payload[6], payload[7]]);
                let debug = String::from_utf8_lossy(&payload[8..]).into_owned();
                conn.goaways.push((code, debug));
            }
            _ => {}
        }
    }
}

/// Copies `from` to `to`, reading the HTTP/2 frames on the way (after the preface, from the
/// client). Stops at end of stream or the first error, closing `to`.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    from_client: bool,
    seen: Seen,
) {
    let mut pending: Vec<u8> = Vec::new();
    let mut preface = if from_client { PREFACE.len() } else { 0 };
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if to.write_all(&buf[..n]).await.is_err() {
            break;
        }
        pending.extend_from_slice(&buf[..n]);
        let skip = preface.min(pending.len());
        pending.drain(..skip);
        preface -= skip;
        // Whole frames: a 9-byte header (24-bit length, type, flags, stream id), then the payload.
        while pending.len() >= 9 {
            let len = usize::from(pending[0]) << 16
                | usize::from(pending[1]) << 8
                | usize::from(pending[2]);
            if pending.len() < 9 + len {
                break;
            }
            seen.frame(from_client, pending[3], pending[4], &pending[9..9 + len]);
            pending.drain(..9 + len);
        }
    }
    let _ = to.shutdown().await;
}
