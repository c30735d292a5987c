//! A hostile agent on `127.0.0.1:0`: it serves a valid card (or not), then answers what it is
//! told to attack with a body that is too large or that never comes. The HTTP bindings are
//! answered by hand on raw TCP (any `Content-Length` can be declared); gRPC over HTTP/2 by an
//! axum fallback that frames its own messages.

use a2a_core::{AgentCard, BINDING_GRPC};
use axum::body::{Body, Bytes};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

/// What the hostile agent declares: 5 GiB.
pub(crate) const HUGE: u64 = 5 << 30;
/// The pace of a trickle: one byte this often.
pub(crate) const TRICKLE: Duration = Duration::from_millis(250);
/// How long a late answer is held back.
pub(crate) const LATE: Duration = Duration::from_secs(1);
/// The most the agent sends on one connection (it stops once the client stops reading).
const SEND_AT_MOST: u64 = 1 << 30;

/// How the agent answers what it attacks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Attack {
    /// Declares [`HUGE`] bytes (`Content-Length`, a gRPC length prefix, or an SSE event that
    /// never ends its line) and sends as fast as the client reads.
    Huge,
    /// A body without a declared length (chunked) that never ends, sent as fast as it is read
    /// (a stream's event that never ends its line).
    Endless,
    /// Declares 100,000 bytes (or, on a stream, starts an event) and sends one byte every
    /// [`TRICKLE`].
    Trickle,
    /// Answers properly (the card; an empty JWK set), but only after [`LATE`]. On the HTTP
    /// bindings' card and JWK set.
    Late,
}

/// What the agent attacks; everything else is answered properly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// The agent card.
    Card,
    /// The JWK set at `/jwks.json`.
    Jwks,
    /// Every A2A call (unary and streaming).
    Calls,
}

/// A running hostile agent.
#[derive(Debug)]
pub(crate) struct HostileAgent {
    /// Its base URL.
    pub(crate) url: String,
    sent: Arc<AtomicU64>,
}

impl HostileAgent {
    /// Starts an agent whose card offers `binding` (a card binding name) at its own address,
    /// with streaming.
    pub(crate) async fn start(binding: &str, attack: Attack, target: Target) -> Self {
        Self::start_with(binding, attack, target, true).await
    }

    /// Starts an agent whose card says it cannot stream (so tasks are followed by unary calls).
    pub(crate) async fn start_unary(binding: &str, attack: Attack, target: Target) -> Self {
        Self::start_with(binding, attack, target, false).await
    }

    async fn start_with(binding: &str, attack: Attack, target: Target, streaming: bool) -> Self {
        let (listener, url) = super::listen().await;
        let card = AgentCard::builder("Hostile", "Answers badly")
            .interface(binding, url.clone())
            .streaming(streaming)
            .build();
        let card = Bytes::from(serde_json::to_vec(&card).expect("card JSON"));
        let sent = Arc::new(AtomicU64::new(0));
        if binding == BINDING_GRPC {
            let router = grpc_router(card, attack, target, sent.clone());
            super::spawn(listener, router);
        } else {
            let sent = sent.clone();
            tokio::spawn(async move {
                while let Ok((tcp, _)) = listener.accept().await {
                    let (card, sent) = (card.clone(), sent.clone());
                    tokio::spawn(async move {
                        let _ = answer(tcp, &card, attack, target, &sent).await;
                    });
                }
            });
        }
        Self { url, sent }
    }

    /// The bytes of bodies sent so far (what the client could have read).
    pub(crate) fn sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }
}

/// The head of one HTTP/1.1 request: its path and whether it asks for an event stream.
async fn read_request(tcp: &mut TcpStream) -> std::io::Result<Option<(String, bool)>> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if tcp.read(&mut byte).await? == 0 || head.len() > 64 << 10 {
            return Ok(None);
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
    let path = head.split(' ').nth(1).unwrap_or("/").to_owned();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; length.min(1 << 20)];
    tcp.read_exact(&mut body).await?;
    Ok(Some((path, head.contains("text/event-stream"))))
}

async fn answer(
    mut tcp: TcpStream,
    card: &Bytes,
    attack: Attack,
    target: Target,
    sent: &AtomicU64,
) -> std::io::Result<()> {
    while let Some((path, streaming)) = read_request(&mut tcp).await? {
        let attacked = match target {
            Target::Card => path.starts_with("/.well-known/"),
            Target::Jwks => path == "/jwks.json",
            Target::Calls => !path.starts_with("/.well-known/") && path != "/jwks.json",
        };
        if !attacked || attack == Attack::Late {
            if attacked {
                tokio::time::sleep(LATE).await;
            }
            let body: &[u8] = if path == "/jwks.json" {
                br#"{"keys":[]}"#
            } else {
                card
            };
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                body.len()
            );
            tcp.write_all(head.as_bytes()).await?;
            tcp.write_all(body).await?;
            continue;
        }
        let media = if streaming {
            "text/event-stream"
        } else {
            "application/json"
        };
        return match (attack, streaming) {
            (Attack::Huge, false) => {
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: {media}\r\ncontent-length: {HUGE}\r\n\r\n"
                );
                tcp.write_all(head.as_bytes()).await?;
                flood(&mut tcp, sent, |c| c.to_vec()).await
            }
            (Attack::Trickle, false) => {
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: {media}\r\ncontent-length: 100000\r\n\r\n"
                );
                tcp.write_all(head.as_bytes()).await?;
                trickle(&mut tcp, sent, b"{").await
            }
            (Attack::Trickle, true) => {
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: {media}\r\ntransfer-encoding: chunked\r\n\r\n"
                );
                tcp.write_all(head.as_bytes()).await?;
                tcp.write_all(b"6\r\ndata: \r\n").await?;
                trickle(&mut tcp, sent, b"1\r\nx\r\n").await
            }
            // An unending body, or an event that never ends its line.
            (Attack::Late, _) => Ok(()), // answered above
            (Attack::Endless, _) | (Attack::Huge, true) => {
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: {media}\r\ntransfer-encoding: chunked\r\n\r\n"
                );
                tcp.write_all(head.as_bytes()).await?;
                if streaming {
                    tcp.write_all(b"6\r\ndata: \r\n").await?;
                }
                flood(&mut tcp, sent, |c| {
                    let mut framed = format!("{:x}\r\n", c.len()).into_bytes();
                    framed.extend_from_slice(c);
                    framed.extend_from_slice(b"\r\n");
                    framed
                })
                .await
            }
        };
    }
    Ok(())
}

/// Sends 64 KiB chunks (framed by `frame`) until the client stops reading or
/// [`SEND_AT_MOST`].
async fn flood(
    tcp: &mut TcpStream,
    sent: &AtomicU64,
    frame: impl Fn(&[u8]) -> Vec<u8>,
) -> std::io::Result<()> {
    let chunk = frame(&[b' '; 64 << 10]);
    let mut total = 0;
    while total < SEND_AT_MOST {
        tcp.write_all(&chunk).await?;
        total += chunk.len() as u64;
        sent.fetch_add(chunk.len() as u64, Ordering::Relaxed);
    }
    Ok(())
}

/// Sends `piece` every [`TRICKLE`] until the client goes (or 100,000 pieces).
async fn trickle(tcp: &mut TcpStream, sent: &AtomicU64, piece: &[u8]) -> std::io::Result<()> {
    for _ in 0..100_000 {
        tcp.write_all(piece).await?;
        sent.fetch_add(1, Ordering::Relaxed);
        tokio::time::sleep(TRICKLE).await;
    }
    Ok(())
}

/// The gRPC side: the card on GET, and every call answered with a message that is too large
/// or that trickles.
fn grpc_router(card: Bytes, attack: Attack, target: Target, sent: Arc<AtomicU64>) -> axum::Router {
    use axum::http::{Method, Response, header};
    axum::Router::new().fallback(move |request: axum::extract::Request| {
        let (card, sent) = (card.clone(), sent.clone());
        async move {
            if request.method() == Method::GET || target != Target::Calls {
                return Response::builder()
                    .header(header::CONTENT_TYPE, "application/json")
                    .body(Body::from(card))
                    .expect("response");
            }
            let declared: u32 = match attack {
                Attack::Trickle => 100_000,
                _ => u32::MAX,
            };
            let mut prefix = vec![0u8];
            prefix.extend_from_slice(&declared.to_be_bytes());
            let body = async_stream::stream! {
                yield Ok::<_, std::io::Error>(Bytes::from(prefix));
                let mut total = 0u64;
                while total < SEND_AT_MOST {
                    let chunk = match attack {
                        Attack::Trickle => {
                            tokio::time::sleep(TRICKLE).await;
                            Bytes::from_static(b"x")
                        }
                        _ => Bytes::from(vec![b' '; 64 << 10]),
                    };
                    total += chunk.len() as u64;
                    sent.fetch_add(chunk.len() as u64, Ordering::Relaxed);
                    yield Ok(chunk);
                }
            };
            Response::builder()
                .header(header::CONTENT_TYPE, "application/grpc")
                .body(Body::from_stream(body))
                .expect("response")
        }
    })
}
