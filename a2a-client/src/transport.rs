//! The wire side of the client: one [`Transport`] trait, implemented for JSON-RPC (v1.0 and,
//! through a2a-core's translation, v0.3), HTTP+JSON and gRPC. Transports speak v1.0 JSON to the
//! client above them whatever they speak on the wire.

mod grpc;
mod jsonrpc;
mod rest;

pub use grpc::GrpcTransport;
pub use jsonrpc::JsonRpcTransport;
pub use rest::RestTransport;
#[cfg(feature = "check")]
pub(crate) use rest::request_parts;

use crate::Error;
use a2a_core::jsonrpc::{Payload, Response};
use a2a_core::{Method, StreamResponse};
use async_trait::async_trait;
use futures::stream::BoxStream;
use reqwest::header::HeaderMap;
use serde_json::Value;
use std::fmt::Debug;

/// One event of a stream with its SSE `id`, if the server sent one.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamItem {
    /// The SSE `id:` (a sequence number on servers that support resuming).
    pub id: Option<String>,
    /// The event.
    pub event: StreamResponse,
}

/// A stream of events from a transport.
pub type ItemStream = BoxStream<'static, Result<StreamItem, Error>>;

/// What a call carries besides its parameters.
#[derive(Clone, Debug, Default)]
pub struct CallOptions {
    /// Extra headers (auth, `A2A-Extensions`, tracing, …).
    pub headers: HeaderMap,
    /// Extra query parameters (e.g. an API key carried in the query).
    pub query: Vec<(String, String)>,
    /// Resume a stream after this event id (`Last-Event-ID`; gRPC metadata `last-event-id`).
    pub last_event_id: Option<String>,
}

/// A protocol binding.
#[async_trait]
pub trait Transport: Send + Sync + Debug + 'static {
    /// A unary call. `params` and the result are v1.0 JSON.
    async fn call(
        &self,
        method: Method,
        params: Value,
        options: &CallOptions,
    ) -> Result<Value, Error>;

    /// A streaming call (`SendStreamingMessage`, `SubscribeToTask`).
    async fn stream(
        &self,
        method: Method,
        params: Value,
        options: &CallOptions,
    ) -> Result<ItemStream, Error>;

    /// The binding name (`JSONRPC`, `HTTP+JSON`, `GRPC`) and protocol version spoken.
    fn binding(&self) -> (&'static str, &'static str);
}

/// What a streaming call adds to its request: `Accept: text/event-stream`, and `Last-Event-ID`
/// to resume after an event.
pub(crate) fn stream_headers(
    request: reqwest::RequestBuilder,
    options: &CallOptions,
) -> reqwest::RequestBuilder {
    let request = request.header(reqwest::header::ACCEPT, "text/event-stream");
    match &options.last_event_id {
        Some(last) => request.header("Last-Event-ID", last.as_str()),
        None => request,
    }
}

/// Reads an error response: an A2A error body (JSON-RPC error object or google.rpc.Status), or
/// a plain HTTP error.
pub(crate) async fn error_from_response(response: reqwest::Response) -> Error {
    let status = response.status().as_u16();
    let text = match response.text().await {
        Ok(t) => t,
        Err(e) => return Error::Transport(e),
    };
    if let Ok(v) = serde_json::from_str::<Value>(&text) {
        // Both forms have an `error` object: a JSON-RPC response says so with `jsonrpc`
        // (its details are in `data`, which a Status body reader would miss).
        if v.get("jsonrpc").is_none() {
            if let Some(e) = a2a_core::Error::from_status_body(&v) {
                return Error::Remote { error: e, status };
            }
        } else if let Ok(Response {
            payload: Payload::Error(obj),
            ..
        }) = serde_json::from_value::<Response<Value>>(v)
        {
            return Error::Remote {
                error: obj.into(),
                status,
            };
        }
    }
    let mut body = text;
    body.truncate(4096);
    Error::Http { status, body }
}
