//! The JSON-RPC load over HTTP/2 (`--binding jsonrpc-h2`): `send` and `get` with the same
//! JSON-RPC bodies as the HTTP/1.1 load, posted to the same URL over cleartext HTTP/2 with prior
//! knowledge, on hyper's HTTP/2 client (`hyper::client::conn::http2`, the same client and
//! default settings tonic's channel uses for the gRPC load).
//!
//! As over gRPC, the workers share `--h2-connections` connections (one by default,
//! `TCP_NODELAY` on): at `-c 64` one connection carries 64 concurrent streams, each worker
//! keeping one request in flight. Every answer is checked as the HTTP/1.1 load checks it:
//! status 200 and a body holding `TASK_STATE_COMPLETED` (SendMessage) or `"result"` (GetTask);
//! anything else counts as an error.

use super::{Plan, Scenario, WorkerStats, record, send_body, snippet};
use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use http::{HeaderName, Method, Request, Uri};
use http_body_util::{BodyExt as _, Full};
use hyper::client::conn::http2::{Builder, SendRequest};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use memchr::memmem;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::TcpStream;

/// One HTTP/2 connection's request handle, cloned by every worker that shares it.
pub(super) type H2Sender = SendRequest<Full<Bytes>>;

/// Opens `n` HTTP/2 connections (prior knowledge) to `addr`, each driven by its own task.
pub(super) async fn connect(addr: SocketAddr, n: usize) -> Result<Vec<H2Sender>, String> {
    let mut senders = Vec::with_capacity(n.max(1));
    for _ in 0..n.max(1) {
        let tcp = tokio::time::timeout(Duration::from_secs(5), TcpStream::connect(addr))
            .await
            .map_err(|_| format!("HTTP/2 connection to {addr}: timed out"))?
            .map_err(|e| format!("HTTP/2 connection to {addr}: {e}"))?;
        tcp.set_nodelay(true)
            .map_err(|e| format!("TCP_NODELAY: {e}"))?;
        let (sender, conn) = Builder::new(TokioExecutor::new())
            .timer(TokioTimer::new())
            .handshake(TokioIo::new(tcp))
            .await
            .map_err(|e| format!("HTTP/2 handshake with {addr}: {e}"))?;
        tokio::spawn(async move {
            // The connection ends when every sender is dropped, or on an error that the
            // workers see on their next request.
            let _ = conn.await;
        });
        senders.push(sender);
    }
    Ok(senders)
}

/// The request head every call carries (the HTTP/1.1 load's headers; `:authority` from the URI).
struct Head {
    uri: Uri,
    a2a_version: HeaderName,
}

impl Head {
    fn post(&self, body: String) -> Request<Full<Bytes>> {
        let mut req = Request::new(Full::new(Bytes::from(body)));
        *req.method_mut() = Method::POST;
        *req.uri_mut() = self.uri.clone();
        let h = req.headers_mut();
        h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        h.insert(ACCEPT, HeaderValue::from_static("application/json"));
        h.insert(self.a2a_version.clone(), HeaderValue::from_static("1.0"));
        req
    }
}

/// One request: status 200 and a body holding `needle`.
async fn unary(
    sender: &mut H2Sender,
    req: Request<Full<Bytes>>,
    needle: &[u8],
) -> Result<(), String> {
    sender
        .ready()
        .await
        .map_err(|e| format!("HTTP/2 connection: {e}"))?;
    let response = sender
        .send_request(req)
        .await
        .map_err(|e| format!("HTTP/2 request: {e}"))?;
    let status = response.status();
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(|e| format!("HTTP/2 response body: {e}"))?
        .to_bytes();
    if status != http::StatusCode::OK {
        return Err(format!("HTTP {}: {}", status.as_u16(), snippet(&body)));
    }
    if memmem::find(&body, needle).is_none() {
        return Err(format!(
            "answer without {}: {}",
            String::from_utf8_lossy(needle),
            snippet(&body)
        ));
    }
    Ok(())
}

/// One closed-loop worker: one request in flight on its shared connection until the run ends.
pub(super) async fn worker(plan: Arc<Plan>, w: usize) -> WorkerStats {
    let mut stats = WorkerStats::default();
    let mut sender = plan.h2[w % plan.h2.len()].clone();
    let target = &plan.targets[0];
    let head = match Uri::try_from(format!("http://{}{}", target.host, target.path)) {
        Ok(uri) => Head {
            uri,
            a2a_version: HeaderName::from_static("a2a-version"),
        },
        Err(e) => {
            stats.error(format!("URI: {e}"));
            return stats;
        }
    };
    let timeout = Duration::from_secs_f64(plan.args.timeout);
    let mut n: u64 = 0;
    while plan.running() {
        n += 1;
        let started = Instant::now();
        let call = async {
            match plan.args.scenario {
                Scenario::Send => {
                    let req = head.post(send_body(&plan, "SendMessage", w, n, ""));
                    unary(&mut sender, req, b"TASK_STATE_COMPLETED").await
                }
                Scenario::Get => {
                    let id = &plan.task_ids[(w * 7919 + n as usize) % plan.task_ids.len()];
                    let req = head.post(format!(
                        r#"{{"jsonrpc":"2.0","id":{n},"method":"GetTask","params":{{"id":"{id}"}}}}"#
                    ));
                    unary(&mut sender, req, br#""result""#).await
                }
                other => Err(format!("{} is not a jsonrpc-h2 scenario", other.name())),
            }
        };
        let outcome = tokio::time::timeout(timeout, call)
            .await
            .unwrap_or_else(|_| Err("request timed out".to_owned()));
        record(&plan, &mut stats, started, None, outcome);
    }
    stats
}
