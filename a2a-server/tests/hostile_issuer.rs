//! An issuer that answers the agent's key-set fetch with a hostile body: the token is refused
//! within the size limit (the agent reads no more than about `max_fetch_bytes`) and within the
//! fetch time-out (a trickle is given up on as a whole, not per read).
#![cfg(feature = "trust")]

use a2a_server::auth::{DEFAULT_MAX_FETCH_BYTES, JwtBearer, TokenError};
use base64::Engine as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::mpsc;

/// How long any one step of these tests may take: they end even against the old, unbounded
/// reads.
const BOUND: Duration = Duration::from_secs(30);

/// What the hostile issuer stops sending at, so that a test of an unbounded agent ends too.
const SEND_CAP: u64 = 256 << 20;

/// What the kernel may hold between the issuer and the agent (socket buffers on both ends,
/// autotuned on loopback) besides what the agent itself read.
const IN_FLIGHT: u64 = 4 << 20;

/// How the hostile issuer answers every request.
#[derive(Clone, Copy)]
enum Answer {
    /// `Content-Length: 5 GiB`, then bytes as fast as they are taken.
    HugeDeclared,
    /// No length (the body ends when the connection closes), then bytes as fast as they are
    /// taken.
    Unbounded,
    /// `Content-Length: 100000`, then one byte a second.
    Trickle,
    /// A valid, empty key set padded with spaces to this many bytes.
    EmptySetOf(usize),
}

/// A hostile issuer on 127.0.0.1: its base URL, and the bytes sent on each connection once
/// that connection ends.
struct Issuer {
    url: String,
    finished: mpsc::UnboundedReceiver<u64>,
}

async fn issuer(answer: Answer) -> Issuer {
    let socket = TcpSocket::new_v4().expect("a socket");
    // A small send buffer (inherited by accepted connections), so that what is counted as sent
    // is close to what the agent read.
    socket.set_send_buffer_size(64 << 10).expect("SO_SNDBUF");
    socket.bind("127.0.0.1:0".parse().unwrap()).expect("bind");
    let listener = socket.listen(16).expect("listen");
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (tx, finished) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let tx = tx.clone();
            tokio::spawn(async move {
                let sent = Arc::new(AtomicU64::new(0));
                let _ = serve(stream, answer, &sent).await;
                let _ = tx.send(sent.load(Ordering::Relaxed));
            });
        }
    });
    Issuer { url, finished }
}

/// Reads the request head (bounded), then answers as `answer` says until the agent goes away.
async fn serve(mut stream: TcpStream, answer: Answer, sent: &AtomicU64) -> std::io::Result<()> {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 << 10 {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        head.extend_from_slice(&buf[..n]);
    }
    let ok = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n";
    match answer {
        Answer::HugeDeclared | Answer::Unbounded => {
            let length = match answer {
                Answer::HugeDeclared => format!("content-length: {}\r\n", 5u64 << 30),
                _ => "connection: close\r\n".to_owned(),
            };
            stream
                .write_all(format!("{ok}{length}\r\n{{\"keys\":[\"").as_bytes())
                .await?;
            let chunk = vec![b'a'; 16 << 10];
            while sent.load(Ordering::Relaxed) < SEND_CAP {
                stream.write_all(&chunk).await?;
                sent.fetch_add(chunk.len() as u64, Ordering::Relaxed);
            }
        }
        Answer::Trickle => {
            stream
                .write_all(format!("{ok}content-length: 100000\r\n\r\n").as_bytes())
                .await?;
            for _ in 0..60 {
                stream.write_all(b" ").await?;
                sent.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
        Answer::EmptySetOf(size) => {
            let mut body = b"{\"keys\":[]}".to_vec();
            body.resize(size, b' ');
            let head = format!("{ok}content-length: {size}\r\n\r\n");
            stream.write_all(head.as_bytes()).await?;
            stream.write_all(&body).await?;
            sent.fetch_add(size as u64, Ordering::Relaxed);
        }
    }
    stream.shutdown().await
}

/// A token naming key `k1` with RS256: its header is all the agent reads before it needs the
/// issuer's key set.
fn token() -> String {
    let b64 = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
    format!(
        "{}.{}.{}",
        b64(r#"{"alg":"RS256","kid":"k1","typ":"JWT"}"#),
        b64(r#"{"sub":"mallory"}"#),
        b64("not a signature")
    )
}

/// Validates the token against `auth`, within [`BOUND`]; the outcome and how long it took.
async fn validate(auth: &JwtBearer) -> (Result<(), TokenError>, Duration) {
    let started = Instant::now();
    let outcome = tokio::time::timeout(BOUND, auth.validate(&token()))
        .await
        .expect("validation ends");
    (outcome.map(|_| ()), started.elapsed())
}

/// The bytes the issuer sent on its first connection, once the agent has closed it.
async fn sent(issuer: &mut Issuer) -> u64 {
    tokio::time::timeout(BOUND, issuer.finished.recv())
        .await
        .expect("the agent closes the connection")
        .expect("a connection")
}

#[tokio::test]
async fn a_key_set_declared_huge_is_refused_before_its_body_is_read() {
    let mut issuer = issuer(Answer::HugeDeclared).await;
    let auth = JwtBearer::new(&issuer.url, "aud").jwks_url(format!("{}/jwks", issuer.url));
    let (outcome, took) = validate(&auth).await;
    assert_eq!(outcome, Err(TokenError::KeySetUnavailable));
    assert!(took < Duration::from_secs(2), "{took:?}");
    let sent = sent(&mut issuer).await;
    assert!(sent < IN_FLIGHT, "the issuer sent {sent} bytes");
}

#[tokio::test]
async fn a_key_set_streamed_without_end_is_read_up_to_the_limit_only() {
    let mut issuer = issuer(Answer::Unbounded).await;
    let limit = DEFAULT_MAX_FETCH_BYTES as u64;
    let auth = JwtBearer::new(&issuer.url, "aud").jwks_url(format!("{}/jwks", issuer.url));
    let (outcome, took) = validate(&auth).await;
    assert_eq!(outcome, Err(TokenError::KeySetUnavailable));
    assert!(took < Duration::from_secs(3), "{took:?}");
    let sent = sent(&mut issuer).await;
    assert!(
        sent < limit + IN_FLIGHT,
        "the issuer sent {sent} bytes for a limit of {limit}"
    );
}

#[tokio::test]
async fn a_discovery_document_without_end_is_bounded_by_the_configured_limit() {
    let mut issuer = issuer(Answer::Unbounded).await;
    let limit: u64 = 64 << 10;
    // No JWK set URL: the agent reads the discovery document first.
    let auth = JwtBearer::new(&issuer.url, "aud").max_fetch_bytes(64 << 10);
    let (outcome, took) = validate(&auth).await;
    assert_eq!(outcome, Err(TokenError::KeySetUnavailable));
    assert!(took < Duration::from_secs(3), "{took:?}");
    let sent = sent(&mut issuer).await;
    assert!(
        sent < limit + IN_FLIGHT,
        "the issuer sent {sent} bytes for a limit of {limit}"
    );
}

#[tokio::test]
async fn a_trickling_issuer_is_given_up_on_at_the_fetch_timeout() {
    let issuer = issuer(Answer::Trickle).await;
    let auth = JwtBearer::new(&issuer.url, "aud")
        .jwks_url(format!("{}/jwks", issuer.url))
        .fetch_timeout(Duration::from_secs(2));
    let (outcome, took) = validate(&auth).await;
    assert_eq!(outcome, Err(TokenError::KeySetUnavailable));
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(4),
        "{took:?}"
    );
}

#[tokio::test]
async fn a_key_set_up_to_the_limit_is_read() {
    // At the limit: read, and the token's key is looked for in it.
    let issuer = issuer(Answer::EmptySetOf(DEFAULT_MAX_FETCH_BYTES)).await;
    let auth = JwtBearer::new(&issuer.url, "aud").jwks_url(format!("{}/jwks", issuer.url));
    let (outcome, _) = validate(&auth).await;
    assert_eq!(outcome, Err(TokenError::UnknownKey("k1".into())));

    // One byte over: refused.
    let issuer = self::issuer(Answer::EmptySetOf(DEFAULT_MAX_FETCH_BYTES + 1)).await;
    let auth = JwtBearer::new(&issuer.url, "aud").jwks_url(format!("{}/jwks", issuer.url));
    let (outcome, _) = validate(&auth).await;
    assert_eq!(outcome, Err(TokenError::KeySetUnavailable));
}
