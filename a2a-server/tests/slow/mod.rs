//! Slow peers, shared by the slow-reader and the connection tests: GetTask requests over each
//! binding on a raw HTTP/2 connection whose flow-control window stays closed, the RSS scenario
//! of issue 46 against a server process, and a raw HTTP/1.1 peer's reads and writes (one
//! response read whole, the wait for the server's close, a head dribbled a byte at a time).

#![allow(dead_code, unreachable_pub)]

use a2a_core::{GetTaskRequest, Method, TaskId, proto};
use axum::http;
use bytes::Bytes;
use serde_json::json;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio::time::{Instant, timeout};

pub const MIB: u64 = 1 << 20;
/// The longest any single wait may take.
pub const WAIT: Duration = Duration::from_secs(20);

/// The bindings a GetTask can be asked over.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Binding {
    Grpc,
    Rest,
    JsonRpc,
}

/// A GetTask request for `id` over `binding` (HTTP/2: no authority checks) and its body.
pub fn get_task(binding: Binding, addr: SocketAddr, id: &str) -> (http::Request<()>, Bytes) {
    let builder = http::Request::builder().version(http::Version::HTTP_2);
    match binding {
        Binding::Grpc => {
            let request = GetTaskRequest {
                id: TaskId::from(id),
                ..GetTaskRequest::default()
            };
            let message = proto::encode(&request, proto::messages(Method::GetTask).0).unwrap();
            let mut framed = vec![0];
            framed.extend_from_slice(&u32::try_from(message.len()).unwrap().to_be_bytes());
            framed.extend_from_slice(&message);
            let request = builder
                .method("POST")
                .uri(format!("http://{addr}{}", proto::path(Method::GetTask)))
                .header("content-type", "application/grpc")
                .header("te", "trailers")
                .body(())
                .unwrap();
            (request, Bytes::from(framed))
        }
        Binding::Rest => {
            let request = builder
                .method("GET")
                .uri(format!("http://{addr}/tasks/{id}"))
                .body(())
                .unwrap();
            (request, Bytes::new())
        }
        Binding::JsonRpc => {
            let request = builder
                .method("POST")
                .uri(format!("http://{addr}/"))
                .header("content-type", "application/json")
                .header("a2a-version", "1.0")
                .body(())
                .unwrap();
            let body =
                json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": id}});
            (request, Bytes::from(body.to_string()))
        }
    }
}

/// How an answer began.
#[derive(Debug, PartialEq)]
pub enum Began {
    /// Its head says it is coming (its body held back by the closed window).
    Coming,
    /// Refused at an output cap.
    Refused,
    /// Not begun: the connection was closed first (by the send timeout).
    Closed,
}

/// An HTTP/2 connection that never opens its flow-control window, with `streams` GetTask
/// requests for `id`; returns how each answer began, the answers (never read), and the task
/// driving the connection (which ends when the server closes it).
pub async fn non_reading_h2(
    addr: SocketAddr,
    binding: Binding,
    id: &str,
    streams: usize,
) -> (Vec<Began>, Vec<h2::RecvStream>, tokio::task::JoinHandle<()>) {
    let tcp = TcpStream::connect(addr).await.unwrap();
    let (mut send, connection) = h2::client::Builder::new()
        .initial_window_size(0)
        .handshake::<_, Bytes>(tcp)
        .await
        .unwrap();
    let driver = tokio::spawn(async move {
        let _ = connection.await;
    });
    let mut pending = Vec::new();
    for _ in 0..streams {
        // The server may close the connection meanwhile (its send timeout): no more streams.
        let Ok(ready) = send.ready().await else {
            break;
        };
        send = ready;
        let (request, body) = get_task(binding, addr, id);
        let Ok((response, mut stream)) = send.send_request(request, body.is_empty()) else {
            break;
        };
        if !body.is_empty() && stream.send_data(body, true).is_err() {
            break;
        }
        pending.push(response);
    }
    let mut began = Vec::new();
    let mut bodies = Vec::new();
    for response in pending {
        let Ok(response) = timeout(WAIT, response).await.expect("an answer's head") else {
            began.push(Began::Closed);
            continue;
        };
        let refused = match binding {
            Binding::Grpc => {
                assert_eq!(response.status(), 200);
                match response.headers().get("grpc-status") {
                    Some(code) => {
                        assert_eq!(code, "8", "RESOURCE_EXHAUSTED: {:?}", response.headers());
                        true
                    }
                    None => false,
                }
            }
            Binding::Rest | Binding::JsonRpc => match response.status().as_u16() {
                200 => false,
                503 => {
                    assert_eq!(response.headers()["retry-after"], "1");
                    true
                }
                other => panic!("unexpected status {other}"),
            },
        };
        began.push(if refused {
            Began::Refused
        } else {
            Began::Coming
        });
        bodies.push(response.into_body());
    }
    (began, bodies, driver)
}

/// The resident memory of process `pid`, in bytes.
pub fn rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("VmRSS");
    kib * 1024
}

/// The scenario against the server process `pid` on `addr`, whose output cap is `cap`
/// and send timeout `send`, with task `id` (an answer of more than 4 MiB): after a few answers
/// read whole (the baseline), four HTTP/2 connections with their window closed and 50 gRPC
/// GetTask streams each (200 answers asked for) keep its RSS under the cap plus 100 MB, and
/// once they leave it is back within `settle` bytes of its baseline within the send timeout
/// (what the allocator keeps of the memory freed: see `docs/server-limits.md`). `at_rest`, when
/// given, is the baseline instead: the RSS of the server at rest before any answer was read.
pub async fn rss_scenario(
    addr: SocketAddr,
    pid: u32,
    id: &str,
    cap: u64,
    send: Duration,
    settle: u64,
    at_rest: Option<u64>,
) {
    let id = id.to_owned();
    // Warm: a few answers read whole, as a real client would.
    let client = reqwest::Client::new();
    for _ in 0..4 {
        let body = client
            .get(format!("http://{addr}/tasks/{id}"))
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        assert!(body.len() > 4 << 20);
    }
    let baseline = at_rest.unwrap_or_else(|| rss(pid));
    let bound = baseline + cap + 100 * MIB;

    let peak = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let seen = peak.clone();
    let sampler = tokio::spawn(async move {
        loop {
            seen.fetch_max(rss(pid), std::sync::atomic::Ordering::Relaxed);
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });
    let mut attackers = Vec::new();
    for _ in 0..4 {
        attackers.push(non_reading_h2(addr, Binding::Grpc, &id, 50).await);
    }
    let coming: usize = attackers
        .iter()
        .map(|(began, _, _)| began.iter().filter(|b| **b == Began::Coming).count())
        .sum();
    assert!(coming > 0 && coming < 200, "{coming} answers under way");
    sampler.abort();
    let peak = peak
        .load(std::sync::atomic::Ordering::Relaxed)
        .max(rss(pid));
    assert!(
        peak <= bound,
        "RSS {} MiB with 200 non-reading streams: above the baseline {} MiB + cap {} MiB + 100",
        peak / MIB,
        baseline / MIB,
        cap / MIB
    );
    let left = Instant::now();
    for (_, bodies, driver) in attackers {
        drop(bodies);
        driver.abort();
    }
    let near = baseline + settle;
    let back = timeout(send + Duration::from_secs(1), async {
        while rss(pid) > near {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    eprintln!(
        "RSS: baseline {} MiB, peak {} MiB with 200 non-reading streams ({coming} answers \
         under way), {} MiB {:?} after they left",
        baseline / MIB,
        peak / MIB,
        rss(pid) / MIB,
        left.elapsed()
    );
    assert!(
        back.is_ok(),
        "RSS {} MiB {:?} after the peers left; baseline {} MiB (peak {} MiB)",
        rss(pid) / MIB,
        left.elapsed(),
        baseline / MIB,
        peak / MIB
    );
}

/// Reads one HTTP/1.1 response with a `content-length`; returns its status line.
pub async fn read_response(tcp: &mut TcpStream) -> String {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = tcp.read(&mut chunk).await.expect("read a response");
        assert!(n > 0, "closed before a whole response: {buf:?}");
        buf.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&buf).into_owned();
        let Some(head_end) = text.find("\r\n\r\n") else {
            continue;
        };
        let length: usize = text[..head_end]
            .lines()
            .find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("content-length:")
                    .map(|v| v.trim().parse().unwrap())
            })
            .expect("a content-length");
        if buf.len() >= head_end + 4 + length {
            return text.lines().next().unwrap().to_owned();
        }
    }
}

/// Waits until the server closes `tcp`: a read returns end-of-file or an error (a reset).
/// Returns what was read before (e.g. a refusal).
pub async fn closed(tcp: &mut TcpStream) -> Vec<u8> {
    let mut seen = Vec::new();
    let mut chunk = [0u8; 1024];
    loop {
        match tcp.read(&mut chunk).await {
            Ok(0) | Err(_) => return seen,
            Ok(n) => seen.extend_from_slice(&chunk[..n]),
        }
    }
}

/// Sends `head`, then `a`s, one byte every `every`, until the server closes `tcp` (anything
/// it sends before closing, such as a 408, is skipped).
pub async fn dribble(tcp: &mut TcpStream, head: &[u8], every: Duration) {
    let mut chunk = [0u8; 1024];
    for byte in head.iter().chain(std::iter::repeat(&b'a')) {
        if tcp.write_all(&[*byte]).await.is_err() {
            return;
        }
        if let Ok(Ok(0) | Err(_)) = timeout(every, tcp.read(&mut chunk)).await {
            return;
        }
    }
}
