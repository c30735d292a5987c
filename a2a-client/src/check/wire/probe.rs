//! The checker's requests: paced (at most [`Options::rate`](crate::check::Options::rate) a
//! second), timed out, sent with the configured credentials and `A2A-Version`, and their answers
//! read whole (bounded) or, for a stream, followed until it ends or should have.

use super::show::{describe_request, describe_response, error_chain};
use super::{
    Call, Exchange, HttpAnswer, LINGER, READ_LIMIT, SHOWN, STREAM_LIMIT, Streamed, clip,
    ends_stream, media_type,
};
use crate::sse::{SseEvent, SseParser};
use bytes::Bytes;
use futures::StreamExt as _;
use reqwest::header::{CONTENT_TYPE, HeaderMap};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::Mutex;
use tokio::time::Instant;

/// Pacing, time-outs and credentials, shared by every request of a run.
#[derive(Debug)]
pub(in crate::check) struct Probe {
    pub(in crate::check) http: reqwest::Client,
    /// The credentials and extra headers.
    pub(in crate::check) headers: HeaderMap,
    interval: Duration,
    next: Mutex<Instant>,
    pub(in crate::check) timeout: Duration,
    ids: AtomicU64,
}

impl Probe {
    pub(in crate::check) fn new(
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
    pub(in crate::check) async fn pace(&self) {
        let at = {
            let mut next = self.next.lock().await;
            let at = (*next).max(Instant::now());
            *next = at + self.interval;
            at
        };
        tokio::time::sleep_until(at).await;
    }

    /// A JSON-RPC request of `method` to `url`, with a fresh id (returned beside it).
    pub(super) fn json_rpc(
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
    pub(in crate::check) async fn send(
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
    pub(super) async fn follow(
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
