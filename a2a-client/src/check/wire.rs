//! The checker's side of the wire: every request paced and timed out, and every answer kept
//! as the agent sent it (status, content type, body, error in the binding's own terms), so
//! that a finding judges what was on the wire and can show it.

mod grpc;
mod probe;
mod read;
mod show;

pub(super) use probe::Probe;
pub(in crate::check) use read::json_rpc_answer;
use read::{json_rpc_event, rest_answer, rest_event};
pub(super) use show::clip;

use crate::transport::GrpcTransport;
use a2a_core::Method;
use a2a_core::http_json::{self, HttpMethod, Rest};
use a2a_core::proto;
use bytes::Bytes;
use reqwest::header::{CONTENT_TYPE, HeaderMap};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::time::Duration;

/// How much of a body a finding shows.
pub(super) const SHOWN: usize = 1500;
/// How much of a body is read at most.
const READ_LIMIT: usize = 1 << 20;
/// How long a stream may stay open after the event that should have ended it.
pub(super) const LINGER: Duration = Duration::from_secs(3);
/// How long one stream is followed at most.
pub(super) const STREAM_LIMIT: Duration = Duration::from_secs(20);

/// One request and its answer, as a finding shows them.
#[derive(Clone, Debug, Default)]
pub(super) struct Exchange {
    pub(super) request: String,
    pub(super) response: String,
}

/// An HTTP answer, read whole (or up to [`READ_LIMIT`]).
#[derive(Debug)]
pub(super) struct HttpAnswer {
    pub(super) status: u16,
    pub(super) headers: HeaderMap,
    pub(super) body: Bytes,
    pub(super) exchange: Exchange,
}

impl HttpAnswer {
    /// The media type, without parameters, lowercased.
    pub(super) fn media_type(&self) -> String {
        media_type(&self.headers)
    }

    pub(super) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    pub(super) fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }
}

fn media_type(headers: &HeaderMap) -> String {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// An error answer, in the binding's terms.
#[derive(Clone, Debug, Default)]
pub(super) struct Fault {
    /// The HTTP status (200 for a JSON-RPC error and for gRPC).
    pub(super) http: u16,
    /// The JSON-RPC `error.code`.
    pub(super) code: Option<i64>,
    /// The gRPC status name.
    pub(super) grpc: Option<&'static str>,
    /// `error.data`, `error.details` or the gRPC status details.
    pub(super) details: Vec<Value>,
    /// What is wrong with the shape of the error itself, if anything (a REST error without a
    /// google.rpc.Status body, a JSON-RPC error answer without `error`, …).
    pub(super) shape: Option<String>,
}

impl Fault {
    /// The ErrorInfo detail, if there is one.
    pub(super) fn error_info(&self) -> Option<&Value> {
        self.details
            .iter()
            .find(|d| d["@type"] == a2a_core::ERROR_INFO_TYPE)
    }

    /// The fault in a few words: `JSON-RPC -32601`, `HTTP 404`, `gRPC NOT_FOUND`.
    pub(super) fn describe(&self) -> String {
        let mut s = match (self.code, self.grpc) {
            (Some(code), _) => format!("JSON-RPC error {code}"),
            (None, Some(grpc)) => format!("gRPC {grpc}"),
            (None, None) => format!("HTTP {}", self.http),
        };
        if let Some(reason) = self.error_info().and_then(|i| i["reason"].as_str()) {
            let _ = write!(s, " ({reason})");
        }
        s
    }
}

/// What one call came back with: a result, an error, or nothing the binding can read.
#[derive(Debug)]
pub(super) struct Answer {
    pub(super) result: Result<Value, Fault>,
    pub(super) exchange: Exchange,
    /// The HTTP answer (HTTP bindings).
    pub(super) http: Option<HttpAnswer>,
}

/// What a streaming call came back with.
#[derive(Debug, Default)]
pub(super) struct Streamed {
    /// `Err` when the call was answered with an error instead of a stream.
    pub(super) opened: Option<Fault>,
    /// The media type of the answer (HTTP bindings).
    pub(super) media_type: String,
    /// Each event: a StreamResponse, or what is wrong with it.
    pub(super) events: Vec<Result<Value, String>>,
    /// Whether the agent ended the stream by itself (within [`LINGER`] of the event that
    /// should end it, or of the last event).
    pub(super) closed: bool,
    /// A failure of the connection, if any.
    pub(super) broken: Option<String>,
    pub(super) exchange: Exchange,
}

/// Per-call choices beyond the parameters.
#[derive(Clone, Copy, Debug)]
pub(super) struct Call<'a> {
    /// The `A2A-Version` to send (`None`: no header).
    pub(super) version: Option<&'a str>,
    /// Whether to send the configured credentials.
    pub(super) credentials: bool,
}

impl Default for Call<'_> {
    fn default() -> Self {
        Self {
            version: Some("1.0"),
            credentials: true,
        }
    }
}

/// One interface of the agent, spoken raw.
#[derive(Debug)]
pub(super) enum Wire {
    /// JSON-RPC at this URL.
    JsonRpc(String),
    /// HTTP+JSON under this URL.
    Rest(String),
    /// gRPC on this channel (its URL kept for the findings).
    Grpc(tonic::transport::Channel, String),
}

impl Wire {
    /// An interface of the card, of one of the three bindings A2A defines (cards name them
    /// `JSONRPC`, `HTTP+JSON`, `GRPC`; a custom binding is not the checker's to speak).
    pub(super) fn of(binding: &str, url: &str, timeout: Duration) -> Result<Self, String> {
        let url = url.trim_end_matches('/').to_owned();
        match binding {
            a2a_core::BINDING_JSONRPC => Ok(Wire::JsonRpc(url)),
            a2a_core::BINDING_HTTP_JSON => Ok(Wire::Rest(url)),
            a2a_core::BINDING_GRPC => GrpcTransport::new(&url, timeout)
                .map(|t| Wire::Grpc(t.channel(), url))
                .map_err(|e| e.to_string()),
            other => Err(format!("{other} is not a binding the checker speaks")),
        }
    }

    /// The binding's name as cards write it.
    pub(super) fn name(&self) -> &'static str {
        match self {
            Wire::JsonRpc(_) => a2a_core::BINDING_JSONRPC,
            Wire::Rest(_) => a2a_core::BINDING_HTTP_JSON,
            Wire::Grpc(..) => a2a_core::BINDING_GRPC,
        }
    }

    /// One unary call.
    pub(super) async fn call(
        &self,
        probe: &Probe,
        method: Method,
        params: Value,
        call: Call<'_>,
    ) -> Answer {
        match self {
            Wire::JsonRpc(url) => {
                let (id, request) = probe.json_rpc(url, method.name(), params);
                json_rpc_answer(probe.send(request, call).await, &id)
            }
            Wire::Rest(base) => {
                let route = http_json::route(method);
                let (path, body, query) = crate::transport::request_parts(route, params);
                let verb = match route.http_method {
                    HttpMethod::Get => reqwest::Method::GET,
                    HttpMethod::Post => reqwest::Method::POST,
                    HttpMethod::Delete => reqwest::Method::DELETE,
                };
                let mut request = probe
                    .http
                    .request(verb, format!("{base}{path}"))
                    .query(&query);
                if let (Some(body), Rest::Body) = (body, route.rest) {
                    request = request
                        .header(CONTENT_TYPE, "application/a2a+json")
                        .body(body.to_string());
                }
                rest_answer(probe.send(request, call).await)
            }
            Wire::Grpc(channel, url) => {
                grpc::call(probe, channel, url, method, &params, call).await
            }
        }
    }

    /// Raw bytes to the binding's endpoint of `method` (a malformed body).
    pub(super) async fn garbage(
        &self,
        probe: &Probe,
        method: Method,
        body: &'static [u8],
    ) -> Answer {
        match self {
            Wire::JsonRpc(url) => {
                let request = probe
                    .http
                    .post(url)
                    .header(CONTENT_TYPE, "application/json")
                    .body(body);
                json_rpc_answer(probe.send(request, Call::default()).await, "")
            }
            Wire::Rest(base) => {
                let route = http_json::route(method);
                let path = route.path(None::<&str>, |_| "a2a-check".to_owned());
                let request = probe
                    .http
                    .post(format!("{base}{path}"))
                    .header(CONTENT_TYPE, "application/a2a+json")
                    .body(body);
                rest_answer(probe.send(request, Call::default()).await)
            }
            Wire::Grpc(channel, url) => {
                let path = proto::path(method);
                let body = Bytes::from_static(body);
                let shown = format!("(bytes) {}", String::from_utf8_lossy(&body));
                let (result, exchange) =
                    grpc::raw(probe, channel, url, &path, body, &shown, Call::default()).await;
                Answer {
                    result: result.map(|_| json!({})),
                    exchange,
                    http: None,
                }
            }
        }
    }

    /// A call of a method the binding does not have (`None` over HTTP+JSON, where an unknown
    /// path is not an A2A matter).
    pub(super) async fn unknown_method(&self, probe: &Probe) -> Option<Answer> {
        match self {
            Wire::JsonRpc(url) => {
                let (id, request) = probe.json_rpc(url, "a2a-check/NoSuchMethod", json!({}));
                Some(json_rpc_answer(
                    probe.send(request, Call::default()).await,
                    &id,
                ))
            }
            Wire::Rest(_) => None,
            Wire::Grpc(channel, url) => {
                let path = format!("/{}/NoSuchMethod", proto::SERVICE);
                let (result, exchange) = grpc::raw(
                    probe,
                    channel,
                    url,
                    &path,
                    Bytes::new(),
                    "{}",
                    Call::default(),
                )
                .await;
                Some(Answer {
                    result: result.map(|_| json!({})),
                    exchange,
                    http: None,
                })
            }
        }
    }

    /// A streaming call, followed.
    pub(super) async fn stream(
        &self,
        probe: &Probe,
        method: Method,
        params: Value,
        call: Call<'_>,
    ) -> Streamed {
        let followed = match self {
            Wire::JsonRpc(url) => {
                let (id, request) = probe.json_rpc(url, method.name(), params);
                probe
                    .follow(request, call, |e| json_rpc_event(&e, &id))
                    .await
                    .map_err(|h| json_rpc_answer(Ok(h), &id))
            }
            Wire::Rest(base) => {
                // An operation with two routes (SubscribeToTask: GET in the proto, POST in the
                // spec's text) is tried on the next when the agent answers 405.
                let mut routes = http_json::routes(method).peekable();
                loop {
                    let route = routes.next().expect("every method has a route");
                    let (path, body, _) = crate::transport::request_parts(route, params.clone());
                    let mut request = match route.http_method {
                        HttpMethod::Get => probe.http.get(format!("{base}{path}")),
                        _ => probe.http.post(format!("{base}{path}")),
                    };
                    if let (Some(body), Rest::Body) = (body, route.rest) {
                        request = request
                            .header(CONTENT_TYPE, "application/a2a+json")
                            .body(body.to_string());
                    }
                    let followed = probe.follow(request, call, |e| rest_event(&e)).await;
                    match followed {
                        Err(h) if h.status == 405 && routes.peek().is_some() => {}
                        other => break other.map_err(|h| rest_answer(Ok(h))),
                    }
                }
            }
            Wire::Grpc(channel, url) => {
                return grpc::stream(probe, channel, url, method, &params, call).await;
            }
        };
        match followed {
            Ok(streamed) => streamed,
            Err(answer) => Streamed {
                opened: Some(match answer.result {
                    Err(fault) => fault,
                    Ok(_) => Fault {
                        http: answer.http.as_ref().map_or(0, |h| h.status),
                        shape: Some("a result instead of a stream".to_owned()),
                        ..Fault::default()
                    },
                }),
                media_type: answer
                    .http
                    .as_ref()
                    .map(HttpAnswer::media_type)
                    .unwrap_or_default(),
                exchange: answer.exchange,
                ..Streamed::default()
            },
        }
    }
}

/// Whether a StreamResponse should be the last of its stream: a message, or a task or status
/// update in a terminal or interrupted state.
pub(super) fn ends_stream(event: &Value) -> bool {
    if event.get("message").is_some() {
        return true;
    }
    let state = event
        .get("task")
        .or_else(|| event.get("statusUpdate"))
        .and_then(|t| t["status"]["state"].as_str());
    state.is_some_and(|s| {
        serde_json::from_value::<a2a_core::TaskState>(Value::String(s.to_owned()))
            .is_ok_and(|s| s.ends_stream())
    })
}
