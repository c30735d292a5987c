//! The checker's side of the wire: every request paced and timed out, and every answer kept
//! as the agent sent it (status, content type, body, error in the binding's own terms), so
//! that a finding judges what was on the wire and can show it.

mod grpc;
mod read;

pub(in crate::check) use read::json_rpc_answer;
use read::{json_rpc_event, rest_answer, rest_event};

use crate::sse::{SseEvent, SseParser};
use crate::transport::GrpcTransport;
use a2a_core::Method;
use a2a_core::http_json::{self, HttpMethod, Rest};
use a2a_core::proto;
use bytes::Bytes;
use futures::StreamExt as _;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::Mutex;
use tokio::time::Instant;

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

/// Pacing, time-outs and credentials, shared by every request of a run.
#[derive(Debug)]
pub(super) struct Probe {
    pub(super) http: reqwest::Client,
    /// The credentials and extra headers.
    pub(super) headers: HeaderMap,
    interval: Duration,
    next: Mutex<Instant>,
    pub(super) timeout: Duration,
    ids: AtomicU64,
}

impl Probe {
    pub(super) fn new(
        headers: HeaderMap,
        rate: f64,
        timeout: Duration,
    ) -> Result<Self, crate::Error> {
        let http = reqwest::Client::builder()
            .connect_timeout(timeout)
            .user_agent(concat!("a2a-check/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Self {
            http,
            headers,
            interval: Duration::from_secs_f64(1.0 / rate.max(0.1)),
            next: Mutex::new(Instant::now()),
            timeout,
            ids: AtomicU64::new(1),
        })
    }

    /// Waits for this request's turn: at most `rate` requests a second.
    pub(super) async fn pace(&self) {
        let at = {
            let mut next = self.next.lock().await;
            let at = (*next).max(Instant::now());
            *next = at + self.interval;
            at
        };
        tokio::time::sleep_until(at).await;
    }

    /// A JSON-RPC request of `method` to `url`, with a fresh id (returned beside it).
    fn json_rpc(
        &self,
        url: &str,
        method: &str,
        params: Value,
    ) -> (String, reqwest::RequestBuilder) {
        let id = format!("a2a-check-{}", self.ids.fetch_add(1, Ordering::Relaxed));
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let request = self
            .http
            .post(url)
            .header(CONTENT_TYPE, "application/json")
            .body(body.to_string());
        (id, request)
    }

    fn prepare(&self, request: reqwest::RequestBuilder, call: Call<'_>) -> reqwest::RequestBuilder {
        let mut request = request.timeout(self.timeout);
        if call.credentials {
            request = request.headers(self.headers.clone());
        }
        match call.version {
            Some(v) => request.header("A2A-Version", v),
            None => request,
        }
    }

    /// Sends a request and reads the whole answer. `Err` is a transport failure, described.
    pub(super) async fn send(
        &self,
        request: reqwest::RequestBuilder,
        call: Call<'_>,
    ) -> Result<HttpAnswer, (String, Exchange)> {
        self.pace().await;
        let request = self.prepare(request, call).build().map_err(|e| {
            let text = format!("the request could not be built: {e}");
            (text, Exchange::default())
        })?;
        let mut exchange = Exchange {
            request: describe_request(&request),
            response: String::new(),
        };
        let response = match self.http.execute(request).await {
            Ok(r) => r,
            Err(e) => {
                exchange.response = format!("(no answer: {})", error_chain(&e));
                return Err((exchange.response.clone(), exchange));
            }
        };
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = match read_limited(response).await {
            Ok(b) => b,
            Err(e) => {
                exchange.response = format!("HTTP {status}; the body broke off: {e}");
                return Err((exchange.response.clone(), exchange));
            }
        };
        exchange.response = describe_response(status, &headers, &body);
        Ok(HttpAnswer {
            status,
            headers,
            body,
            exchange,
        })
    }

    /// Sends a request for a stream and follows it, reading each event with `event`: until
    /// the agent closes it, until [`LINGER`] after an event that should end it
    /// ([`ends_stream`]), or for [`STREAM_LIMIT`]. An answer that is not a stream (an error,
    /// usually) comes back as `Err`.
    async fn follow(
        &self,
        request: reqwest::RequestBuilder,
        call: Call<'_>,
        mut event: impl FnMut(SseEvent) -> Result<Value, String>,
    ) -> Result<Streamed, HttpAnswer> {
        self.pace().await;
        let built = self
            .prepare(request, call)
            .timeout(STREAM_LIMIT + LINGER)
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .build();
        let request = match built {
            Ok(r) => r,
            Err(e) => {
                return Ok(Streamed {
                    broken: Some(format!("the request could not be built: {e}")),
                    ..Streamed::default()
                });
            }
        };
        let mut streamed = Streamed {
            exchange: Exchange {
                request: describe_request(&request),
                response: String::new(),
            },
            ..Streamed::default()
        };
        let response = match tokio::time::timeout(self.timeout, self.http.execute(request)).await {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => {
                streamed.broken = Some(error_chain(&e));
                streamed.exchange.response = format!("(no answer: {})", error_chain(&e));
                return Ok(streamed);
            }
            Err(_) => {
                let text = format!("(no answer within {:?})", self.timeout);
                streamed.broken = Some(text.clone());
                streamed.exchange.response = text;
                return Ok(streamed);
            }
        };
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        streamed.media_type = media_type(&headers);
        if streamed.media_type != "text/event-stream" {
            let body = read_limited(response).await.unwrap_or_default();
            streamed.exchange.response = describe_response(status, &headers, &body);
            return Err(HttpAnswer {
                status,
                headers,
                body,
                exchange: streamed.exchange,
            });
        }
        let mut log = format!("HTTP {status} text/event-stream\n");
        let mut parser = SseParser::default();
        let mut body = response.bytes_stream();
        let mut deadline = Instant::now() + STREAM_LIMIT;
        loop {
            let chunk = match tokio::time::timeout_at(deadline, body.next()).await {
                Err(_) => break,
                Ok(None) => {
                    streamed.closed = true;
                    break;
                }
                Ok(Some(Err(e))) => {
                    streamed.broken = Some(error_chain(&e));
                    break;
                }
                Ok(Some(Ok(chunk))) => chunk,
            };
            for e in parser.feed(&chunk) {
                if log.len() < SHOWN * 2 {
                    let _ = writeln!(log, "data: {}", clip(&e.data, 400));
                }
                let parsed = event(e);
                if let Ok(v) = &parsed
                    && ends_stream(v)
                {
                    deadline = deadline.min(Instant::now() + LINGER);
                }
                streamed.events.push(parsed);
            }
            if parser.overflowed() {
                streamed.broken = Some(format!(
                    "an event over {} bytes",
                    crate::DEFAULT_MAX_EVENT_BYTES
                ));
                break;
            }
        }
        if !streamed.closed {
            let _ = writeln!(log, "(still open when the checker stopped reading)");
        }
        streamed.exchange.response = log;
        Ok(streamed)
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

async fn read_limited(mut response: reqwest::Response) -> Result<Bytes, String> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| error_chain(&e))? {
        body.extend_from_slice(&chunk);
        if body.len() > READ_LIMIT {
            body.truncate(READ_LIMIT);
            break;
        }
    }
    Ok(body.into())
}

/// An error with its causes: reqwest's own text alone hides the cause.
pub(super) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let _ = write!(s, ": {cause}");
        source = cause.source();
    }
    s
}

pub(super) fn clip(s: &str, n: usize) -> String {
    if s.len() <= n {
        return s.to_owned();
    }
    let mut end = n;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &s[..end], s.len())
}

fn describe_request(request: &reqwest::Request) -> String {
    let mut s = format!("{} {}\n", request.method(), request.url());
    for (name, value) in request.headers() {
        let shown = if is_secret(name) {
            "<redacted>"
        } else {
            value.to_str().unwrap_or("<binary>")
        };
        let _ = writeln!(s, "{name}: {shown}");
    }
    if let Some(body) = request.body().and_then(|b| b.as_bytes()) {
        let _ = write!(s, "\n{}", clip(&String::from_utf8_lossy(body), SHOWN));
    }
    s
}

fn is_secret(name: &HeaderName) -> bool {
    let n = name.as_str();
    n == "authorization" || n == "cookie" || n.contains("key") || n.contains("token")
}

fn describe_response(status: u16, headers: &HeaderMap, body: &[u8]) -> String {
    let mut s = format!("HTTP {status}\n");
    for name in [
        "content-type",
        "cache-control",
        "etag",
        "www-authenticate",
        "a2a-version",
    ] {
        if let Some(v) = headers.get(name).and_then(|v| v.to_str().ok()) {
            let _ = writeln!(s, "{name}: {v}");
        }
    }
    let _ = write!(s, "\n{}", clip(&String::from_utf8_lossy(body), SHOWN));
    s
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
    pub(super) async fn stream(&self, probe: &Probe, method: Method, params: Value) -> Streamed {
        let call = Call::default();
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
                return grpc::stream(probe, channel, url, method, &params).await;
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
