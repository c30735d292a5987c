//! JSON-RPC 2.0 over HTTP POST, in the v1.0 or the v0.3 dialect.

use super::{
    CallOptions, ItemStream, Outgoing, Payload, StreamItem, Transport, error_from_response,
    stream_headers,
};
use crate::limits::read_body;
use crate::{Error, Limit, Limits, sse};
use a2a_core::StreamResponse;
use a2a_core::jsonrpc::{Id, Request, Response};
use a2a_core::v03;
use async_trait::async_trait;
use futures::StreamExt as _;
use reqwest::header::{CONTENT_TYPE, HeaderValue};
use serde_json::Value;
use std::sync::atomic::{AtomicU64, Ordering};

/// JSON-RPC over HTTP. `v03` selects the v0.3 method names and shapes.
#[derive(Debug)]
pub struct JsonRpcTransport {
    http: reqwest::Client,
    url: reqwest::Url,
    v03: bool,
    /// The `A2A-Version` sent (v1 only).
    version: &'static str,
    next_id: AtomicU64,
    limits: Limits,
}

impl JsonRpcTransport {
    /// A v1.0 JSON-RPC transport posting to `url`.
    pub fn new(http: reqwest::Client, url: reqwest::Url) -> Self {
        Self {
            http,
            url,
            v03: false,
            version: a2a_core::PROTOCOL_VERSION,
            next_id: AtomicU64::new(1),
            limits: Limits::default(),
        }
    }

    /// Reads answers and streams within `limits`.
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Speaks A2A 1.1 (`A2A-Version: 1.1`: answers carry task generations).
    #[must_use]
    pub fn v1_1(mut self) -> Self {
        self.version = a2a_core::PROTOCOL_VERSION_1_1;
        self
    }

    /// A v0.3 JSON-RPC transport posting to `url`.
    pub fn new_v03(http: reqwest::Client, url: reqwest::Url) -> Self {
        Self {
            v03: true,
            ..Self::new(http, url)
        }
    }

    fn decode_event(&self, data: &str) -> Result<StreamResponse, Error> {
        if self.v03 {
            let v = read_response(data.as_bytes(), 200)?;
            v03::decode_stream_event(&v).map_err(|e| Error::Decode(Box::new(e)))
        } else {
            serde_json::from_slice::<Response<StreamResponse>>(data.as_bytes())?
                .into_result()
                .map_err(|error| Error::Remote { error, status: 200 })
        }
    }

    /// The request's body: the envelope around the params, in this transport's dialect.
    fn body(&self, request: &dyn Outgoing) -> Result<Vec<u8>, Error> {
        let id = Id::from(self.next_id.fetch_add(1, Ordering::Relaxed) as i64);
        let encoded = if self.v03 {
            let (name, params) = request.v03()?;
            serde_json::to_vec(&Request::new(id, name, params))
        } else {
            let params = request.json()?;
            serde_json::to_vec(&Request::new(id, request.method().name(), params))
        };
        encoded.map_err(|e| Error::Config(format!("{} request: {e}", request.method())))
    }

    async fn post(
        &self,
        request: &dyn Outgoing,
        options: &CallOptions,
        streaming: bool,
    ) -> Result<reqwest::Response, Error> {
        let body = self.body(request)?;
        let mut request = self
            .http
            .post(self.url.clone())
            .headers(options.headers.clone())
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .query(&options.query)
            .body(body);
        if !self.v03 {
            request = request.header("A2A-Version", self.version);
        }
        if streaming {
            request = stream_headers(request, options);
        }
        let response = request.send().await?;
        if !response.status().is_success() {
            return Err(error_from_response(response, self.limits.response_bytes).await);
        }
        Ok(response)
    }
}

/// Reads a JSON-RPC response: its result, or its error as [`Error::Remote`] with the HTTP
/// status it came with.
fn read_response(bytes: &[u8], status: u16) -> Result<Value, Error> {
    serde_json::from_slice::<Response<Value>>(bytes)?
        .into_result()
        .map_err(|error| Error::Remote { error, status })
}

#[async_trait]
impl Transport for JsonRpcTransport {
    async fn unary(&self, request: &dyn Outgoing, options: &CallOptions) -> Result<Payload, Error> {
        let response = self.post(request, options, false).await?;
        let status = response.status().as_u16();
        let body = read_body(response, Limit::Response, self.limits.response_bytes).await?;
        Ok(if self.v03 {
            Payload::JsonRpcV03 { body, status }
        } else {
            Payload::JsonRpc { body, status }
        })
    }

    async fn stream(
        &self,
        request: &dyn Outgoing,
        options: &CallOptions,
    ) -> Result<ItemStream, Error> {
        let response = self.post(request, options, true).await?;
        let is_sse = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !is_sse {
            // An error answered before the stream started.
            let status = response.status().as_u16();
            let bytes = read_body(response, Limit::Response, self.limits.response_bytes).await?;
            read_response(&bytes, status)?;
            return Err(Error::decode(
                "expected an event stream, got a plain result",
            ));
        }
        let this = Self {
            http: self.http.clone(),
            url: self.url.clone(),
            v03: self.v03,
            version: self.version,
            next_id: AtomicU64::new(0),
            limits: self.limits,
        };
        Ok(sse::events(response, &self.limits)
            .map(move |e| {
                let e = e?;
                Ok(StreamItem {
                    event: this.decode_event(&e.data)?,
                    id: e.id,
                })
            })
            .boxed())
    }

    fn binding(&self) -> (&'static str, &'static str) {
        (
            a2a_core::BINDING_JSONRPC,
            if self.v03 {
                a2a_core::PROTOCOL_VERSION_V03
            } else {
                self.version
            },
        )
    }
}
