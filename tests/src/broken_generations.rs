//! Our demo server with its A2A 1.1 broken on purpose, one [`Fault`] at a time: the target of
//! the checker's generations tests. The fault is a layer in front of the server's JSON-RPC
//! binding (`POST /`), so everything else is the real thing; the other bindings are untouched.

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::Method;
use axum::middleware::{self, Next};
use axum::response::Response;
use futures::StreamExt as _;
use serde_json::Value;
use tokio::task::JoinHandle;

/// What the layer breaks, on JSON-RPC with `A2A-Version: 1.1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// No `generation` in any answer or event (as a 1.0 server).
    NoGeneration,
    /// Each stream event's generation doubled: 2, 4, 6, … (gaps everywhere).
    Gaps,
    /// GetTask's `currentGeneration` dropped: every long poll is answered at once.
    NoHold,
    /// SendMessage's `ifGenerationMatch` dropped: a stale answer is never refused.
    NoPrecondition,
}

/// The demo server behind `fault`, on `127.0.0.1` (an OS-chosen port). Dropping it stops it.
#[derive(Debug)]
pub struct BrokenGenerations {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    serving: JoinHandle<()>,
}

impl BrokenGenerations {
    /// Binds `127.0.0.1:0` and serves the demo agent with `fault`.
    pub async fn start(fault: Fault) -> Self {
        use a2a_server::demo::DemoAgent;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let url = format!("http://{}", listener.local_addr().expect("local address"));
        let server = a2a_server::Server::builder(DemoAgent)
            .agent_card(DemoAgent::card())
            .public_url(&url)
            .build()
            .expect("the demo server builds");
        let app = server
            .into_router()
            .layer(middleware::from_fn(move |r, n| breaking(fault, r, n)));
        let serving = tokio::spawn(async move {
            // Serving only ends with an accept error, which there is nobody to report to.
            let _ = axum::serve(listener, app).await;
        });
        Self { url, serving }
    }
}

impl Drop for BrokenGenerations {
    fn drop(&mut self) {
        self.serving.abort();
    }
}

/// The largest body the layer reads.
const LIMIT: usize = 1 << 20;

async fn breaking(fault: Fault, request: Request, next: Next) -> Response {
    let json_rpc = request.method() == Method::POST
        && request.uri().path() == "/"
        && (request.headers().get("a2a-version")).is_some_and(|v| v == "1.1");
    if !json_rpc {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, LIMIT).await else {
        return next.run(Request::from_parts(parts, Body::empty())).await;
    };
    let bytes = match serde_json::from_slice::<Value>(&bytes) {
        Ok(mut call) => {
            let dropped = match fault {
                Fault::NoHold => (call.pointer_mut("/params").and_then(Value::as_object_mut))
                    .zip(Some("currentGeneration")),
                Fault::NoPrecondition => (call.pointer_mut("/params/configuration"))
                    .and_then(Value::as_object_mut)
                    .zip(Some("ifGenerationMatch")),
                Fault::NoGeneration | Fault::Gaps => None,
            };
            if let Some((object, key)) = dropped {
                object.remove(key);
            }
            Bytes::from(call.to_string())
        }
        Err(_) => bytes,
    };
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    let stream = response
        .headers()
        .get("content-type")
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    match (fault, stream) {
        (Fault::NoGeneration, false) => {
            let (parts, body) = response.into_parts();
            let bytes = axum::body::to_bytes(body, LIMIT).await.unwrap_or_default();
            let bytes = match serde_json::from_slice::<Value>(&bytes) {
                Ok(mut v) => {
                    rewrite(&mut v, &|_| None);
                    Bytes::from(v.to_string())
                }
                Err(_) => bytes,
            };
            Response::from_parts(parts, Body::from(bytes))
        }
        (Fault::NoGeneration, true) => events(response, |_| None),
        (Fault::Gaps, true) => events(response, |g| Some(g * 2)),
        _ => response,
    }
}

/// Every `generation` in `v` replaced by `to(generation)` (`None`: removed).
fn rewrite(v: &mut Value, to: &dyn Fn(i64) -> Option<i64>) {
    match v {
        Value::Object(o) => {
            if let Some(g) = o.remove("generation") {
                let g = g.as_str().and_then(|s| s.parse().ok()).unwrap_or(0);
                if let Some(g) = to(g) {
                    o.insert("generation".into(), Value::String(g.to_string()));
                }
            }
            o.values_mut().for_each(|v| rewrite(v, to));
        }
        Value::Array(a) => a.iter_mut().for_each(|v| rewrite(v, to)),
        _ => {}
    }
}

/// The SSE response with each event's `data:` rewritten by [`rewrite`].
fn events(response: Response, to: fn(i64) -> Option<i64>) -> Response {
    let (parts, body) = response.into_parts();
    let mut pending = String::new();
    let frames = body.into_data_stream().map(move |chunk| {
        let chunk = chunk?;
        pending.push_str(&String::from_utf8_lossy(&chunk));
        let mut out = String::new();
        while let Some(end) = pending.find("\n\n") {
            let event: String = pending.drain(..end + 2).collect();
            for line in event.lines() {
                match line
                    .strip_prefix("data:")
                    .and_then(|d| serde_json::from_str::<Value>(d.trim()).ok())
                {
                    Some(mut v) => {
                        rewrite(&mut v, &to);
                        out.push_str(&format!("data: {v}\n"));
                    }
                    None => {
                        out.push_str(line);
                        out.push('\n');
                    }
                }
            }
            out.push('\n');
        }
        Ok::<Bytes, axum::Error>(Bytes::from(out))
    });
    Response::from_parts(parts, Body::from_stream(frames))
}
