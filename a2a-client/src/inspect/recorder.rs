//! The wire recorder: a loopback reverse proxy in front of each of the agent's interfaces.
//!
//! The inspector's clients talk to the agent through it, so that every request and every
//! response (each stream chunk as it arrives) is recorded exactly as it went to and came from
//! the agent, whatever the binding: JSON-RPC and HTTP+JSON bodies as text, gRPC messages
//! decoded to their ProtoJSON form with the call's status and metadata. Requests are read
//! whole (at most [`MAX_REQUEST`]); responses are passed on frame by frame, so streams stay
//! live, and recorded up to [`MAX_RECORDED`] each.

use super::session::Feed;
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use futures::StreamExt as _;
use http::{HeaderMap, StatusCode};
use http_body_util::BodyExt as _;
use serde_json::{Value, json};
use std::sync::Arc;

/// The largest request body passed on.
pub(crate) const MAX_REQUEST: usize = 16 << 20;
/// How much of one response is recorded (the rest still reaches the client).
pub(crate) const MAX_RECORDED: usize = 1 << 20;

/// One interface the recorder stands in front of.
#[derive(Clone, Debug)]
pub(crate) struct Upstream {
    /// `JSONRPC`, `HTTP+JSON` or `GRPC`.
    pub(crate) binding: &'static str,
    /// The interface URL as the card gives it (with a scheme added to a gRPC `host:port`).
    pub(crate) url: String,
    /// The HTTP client for it (HTTP/2 only for gRPC).
    pub(crate) http: reqwest::Client,
    /// Where exchanges are reported.
    pub(crate) feed: Feed,
    /// The recorder's own `host:port`, the only `Host` it serves (against DNS rebinding).
    pub(crate) local: String,
}

/// The URL a gRPC interface means: `host:port` as cards write it is TLS on 443, else plain.
pub(crate) fn grpc_url(url: &str) -> String {
    let url = url.trim_end_matches('/');
    if url.contains("://") {
        url.to_owned()
    } else if url.ends_with(":443") {
        format!("https://{url}")
    } else {
        format!("http://{url}")
    }
}

/// Starts a recorder for `upstream` on a fresh loopback port; returns its URL and the task
/// serving it (aborted when the session connects elsewhere).
pub(crate) async fn start(
    mut upstream: Upstream,
) -> std::io::Result<(String, tokio::task::JoinHandle<()>)> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    upstream.local = addr.to_string();
    let router = Router::new()
        .fallback(forward)
        .with_state(Arc::new(upstream));
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    Ok((format!("http://{addr}"), task))
}

/// Headers not passed on: the hop's own, and those the HTTP client sets itself.
fn hop_header(name: &str) -> bool {
    matches!(
        name,
        "host"
            | "connection"
            | "keep-alive"
            | "proxy-connection"
            | "transfer-encoding"
            | "upgrade"
            | "content-length"
    )
}

fn headers_json(headers: &HeaderMap) -> Value {
    Value::Array(
        headers
            .iter()
            .map(|(k, v)| json!([k.as_str(), String::from_utf8_lossy(v.as_bytes())]))
            .collect(),
    )
}

/// The body as the console shows it: text, or each gRPC message as ProtoJSON.
fn show(binding: &str, path: &str, request: bool, bytes: &[u8]) -> Value {
    if binding != a2a_core::BINDING_GRPC {
        return Value::String(String::from_utf8_lossy(bytes).into_owned());
    }
    let Some(method) = a2a_core::proto::method_of_path(path) else {
        return json!({ "undecoded": bytes.len() });
    };
    let (req, res) = a2a_core::proto::messages(method);
    let ty = if request { req } else { res };
    let mut out = Vec::new();
    let mut rest = bytes;
    while rest.len() >= 5 {
        let len = u32::from_be_bytes([rest[1], rest[2], rest[3], rest[4]]) as usize;
        if rest.len() < 5 + len {
            break;
        }
        let message = &rest[5..5 + len];
        out.push(match a2a_core::proto::decode::<Value>(message, ty) {
            Ok(v) => v,
            Err(e) => json!({ "undecodable": e.to_string() }),
        });
        rest = &rest[5 + len..];
    }
    Value::Array(out)
}

/// The operation a request is, and its parameters as JSON (for the page's `a2a` command).
fn describe(
    binding: &str,
    method: &str,
    path: &str,
    query: Option<&str>,
    body: &Value,
) -> (String, Value) {
    match binding {
        a2a_core::BINDING_GRPC => (
            a2a_core::proto::method_of_path(path).map_or_else(String::new, |m| m.name().to_owned()),
            body.get(0).cloned().unwrap_or(Value::Null),
        ),
        a2a_core::BINDING_JSONRPC => {
            let rpc: Value = body
                .as_str()
                .and_then(|b| serde_json::from_str(b).ok())
                .unwrap_or_default();
            let op = rpc
                .get("method")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            (op, rpc.get("params").cloned().unwrap_or(Value::Null))
        }
        _ => {
            use a2a_core::http_json::{HttpMethod, match_path};
            let route = HttpMethod::from_name(method)
                .and_then(|m| match_path(path)?.route(m).map(|r| (r, match_path(path))));
            let Some((route, Some(found))) = route else {
                return (String::new(), Value::Null);
            };
            let mut params: Value = body
                .as_str()
                .and_then(|b| serde_json::from_str(b).ok())
                .filter(Value::is_object)
                .unwrap_or_else(|| json!({}));
            for (name, value) in found.fields {
                params[name] = json!(value);
            }
            for kv in query
                .unwrap_or_default()
                .split('&')
                .filter(|kv| !kv.is_empty())
            {
                let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                params[a2a_core::http_json::query_decode(k)] =
                    json!(a2a_core::http_json::query_decode(v));
            }
            (route.method.name().to_owned(), params)
        }
    }
}

/// The gRPC status a response's trailers (or trailers-only headers) carry.
fn grpc_status(headers: &HeaderMap) -> Option<Value> {
    let code = headers
        .get("grpc-status")?
        .to_str()
        .ok()?
        .parse::<usize>()
        .ok()?;
    let name = a2a_core::proto::GRPC_CODE_NAMES
        .get(code)
        .copied()
        .unwrap_or("UNKNOWN");
    let message = headers
        .get("grpc-message")
        .map(|m| String::from_utf8_lossy(m.as_bytes()).into_owned());
    let details = headers
        .get("grpc-status-details-bin")
        .and_then(|d| {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD_NO_PAD
                .decode(d.as_bytes().strip_suffix(b"=").unwrap_or(d.as_bytes()))
                .ok()
        })
        .and_then(|bytes| a2a_core::proto::status_details(&bytes).ok());
    Some(json!({ "code": code, "name": name, "message": message, "details": details }))
}

/// Records the end of an exchange when dropped.
struct Ended {
    feed: Feed,
    id: u64,
}

impl Drop for Ended {
    fn drop(&mut self) {
        let at = super::session::now_ms();
        self.feed
            .wire(json!({ "kind": "end", "id": self.id, "at": at }));
    }
}

async fn forward(State(up): State<Arc<Upstream>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let host = parts
        .headers
        .get(http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .or_else(|| parts.uri.authority().map(|a| a.as_str()));
    if host != Some(up.local.as_str()) {
        return (StatusCode::FORBIDDEN, "a2a inspect: Host not allowed").into_response();
    }
    let path = parts.uri.path().to_owned();
    let query = parts
        .uri
        .query()
        .map(|q| format!("?{q}"))
        .unwrap_or_default();
    let base = up.url.trim_end_matches('/');
    let url = if path == "/" && up.binding != a2a_core::BINDING_GRPC {
        format!("{}{query}", up.url)
    } else {
        format!("{base}{path}{query}")
    };
    let body = match http_body_util::Limited::new(body, MAX_REQUEST)
        .collect()
        .await
    {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            return (StatusCode::PAYLOAD_TOO_LARGE, format!("inspector: {e}")).into_response();
        }
    };
    let mut headers = HeaderMap::new();
    for (k, v) in &parts.headers {
        if !hop_header(k.as_str()) {
            headers.append(k.clone(), v.clone());
        }
    }
    let id = up.feed.next_id();
    let shown = show(up.binding, &path, true, &body);
    let (op, params) = describe(
        up.binding,
        parts.method.as_str(),
        &path,
        parts.uri.query(),
        &shown,
    );
    up.feed.wire(json!({
        "kind": "request",
        "id": id,
        "at": super::session::now_ms(),
        "binding": up.binding,
        "op": op,
        "params": params,
        "request": {
            "method": parts.method.as_str(),
            "url": url,
            "headers": headers_json(&headers),
            "body": shown,
        },
    }));
    let sent = up
        .http
        .request(parts.method, &url)
        .headers(headers)
        .body(body)
        .send()
        .await;
    let response = match sent {
        Ok(r) => r,
        Err(e) => {
            let text = crate::Error::Transport(e).to_string();
            up.feed.wire(
                json!({ "kind": "error", "id": id, "at": super::session::now_ms(), "error": text }),
            );
            return (StatusCode::BAD_GATEWAY, text).into_response();
        }
    };
    let status = response.status();
    let response_headers = response.headers().clone();
    up.feed.wire(json!({
        "kind": "response",
        "id": id,
        "at": super::session::now_ms(),
        "status": status.as_u16(),
        "headers": headers_json(&response_headers),
        "grpc": grpc_status(&response_headers),
    }));
    let mut builder = Response::builder().status(status);
    for (k, v) in &response_headers {
        if !hop_header(k.as_str()) {
            builder = builder.header(k, v);
        }
    }
    let feed = up.feed.clone();
    let binding = up.binding;
    let body: http::Response<reqwest::Body> = response.into();
    let mut recorded = 0usize;
    // The exchange ends when the client is done with the body: at its end, after the gRPC
    // trailers (which tonic does not read past), or when the client lets go.
    let end = Ended {
        feed: up.feed.clone(),
        id,
    };
    let frames = http_body_util::BodyStream::new(body.into_body()).map(move |frame| {
        let _ = &end;
        let at = super::session::now_ms();
        match &frame {
            Ok(f) => {
                if let Some(chunk) = f.data_ref() {
                    if recorded < MAX_RECORDED {
                        recorded += chunk.len();
                        let body = show(binding, &path, false, chunk);
                        feed.wire(json!({ "kind": "chunk", "id": id, "at": at, "body": body }));
                    }
                } else if let Some(t) = f.trailers_ref() {
                    let (headers, grpc) = (headers_json(t), grpc_status(t));
                    feed.wire(json!({ "kind": "trailers", "id": id, "at": at, "headers": headers, "grpc": grpc }));
                }
            }
            Err(e) => {
                let error = e.to_string();
                feed.wire(json!({ "kind": "error", "id": id, "at": at, "error": error }));
            }
        }
        frame
    });
    let body = http_body_util::StreamBody::new(frames);
    builder
        .body(Body::new(body))
        .unwrap_or_else(|e| (StatusCode::BAD_GATEWAY, e.to_string()).into_response())
}
