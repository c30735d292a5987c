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
use a2a_core::jsonrpc::Response;
use a2a_core::{Method, Operation, StreamResponse, proto};
use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;
use reqwest::header::HeaderMap;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
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

/// A request of some operation, as the object-safe core of a [`Transport`] sees it: the
/// operation, and the request encoded in the form a binding asks for (only that one is built).
pub trait Outgoing: Send + Sync {
    /// The operation.
    fn method(&self) -> Method;
    /// The request's v1.0 JSON.
    fn json(&self) -> Result<Box<RawValue>, Error>;
    /// The request's v1.0 JSON as an object, for a binding that takes fields out of it (the
    /// HTTP+JSON path and query).
    fn json_object(&self) -> Result<Map<String, Value>, Error>;
    /// The v0.3 method name and params; [`Error::NoCompatibleInterface`] for an operation v0.3
    /// does not have.
    fn v03(&self) -> Result<(&'static str, Value), Error>;
    /// The request's protobuf message.
    fn proto(&self) -> Result<Vec<u8>, Error>;
}

/// A typed request of operation `O`, for the object-safe core.
struct Typed<'a, O: Operation>(&'a O::Request);

impl<O: Operation> Outgoing for Typed<'_, O> {
    fn method(&self) -> Method {
        O::METHOD
    }

    fn json(&self) -> Result<Box<RawValue>, Error> {
        serde_json::value::to_raw_value(self.0)
            .map_err(|e| Error::Config(format!("{} request: {e}", O::METHOD)))
    }

    fn json_object(&self) -> Result<Map<String, Value>, Error> {
        match serde_json::to_value(self.0) {
            Ok(Value::Object(o)) => Ok(o),
            Ok(_) => Ok(Map::new()),
            Err(e) => Err(Error::Config(format!("{} request: {e}", O::METHOD))),
        }
    }

    fn v03(&self) -> Result<(&'static str, Value), Error> {
        let name = O::V03_NAME.ok_or_else(|| {
            Error::NoCompatibleInterface(format!("{} does not exist in A2A v0.3", O::METHOD))
        })?;
        Ok((name, O::encode_v03_params(self.0)))
    }

    fn proto(&self) -> Result<Vec<u8>, Error> {
        proto::encode(self.0, O::request_message())
            .map_err(|e| Error::Config(format!("{} request: {e}", O::METHOD)))
    }
}

/// A unary call's result as the binding carried it; `dyn Transport::call` reads it as the
/// operation's response type.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Payload {
    /// A v1.0 JSON-RPC response (result or error), with the HTTP status it came with.
    JsonRpc {
        /// The response body.
        body: Bytes,
        /// The HTTP status.
        status: u16,
    },
    /// A v0.3 JSON-RPC response (result or error), with the HTTP status it came with.
    JsonRpcV03 {
        /// The response body.
        body: Bytes,
        /// The HTTP status.
        status: u16,
    },
    /// The result's v1.0 JSON (an empty body reads as `{}`).
    Json(Bytes),
    /// The result's protobuf message.
    Proto(Bytes),
}

impl Payload {
    /// Reads the payload as the response of operation `O`.
    pub fn decode<O: Operation>(self) -> Result<O::Response, Error> {
        match self {
            Payload::JsonRpc { body, status } => {
                serde_json::from_slice::<Response<O::Response>>(&body)?
                    .into_result()
                    .map_err(|error| Error::Remote { error, status })
            }
            Payload::JsonRpcV03 { body, status } => {
                let result = serde_json::from_slice::<Response<Value>>(&body)?
                    .into_result()
                    .map_err(|error| Error::Remote { error, status })?;
                O::decode_v03_result(&result).map_err(|e| Error::Decode(Box::new(e)))
            }
            Payload::Json(body) if body.iter().all(u8::is_ascii_whitespace) => {
                Ok(serde_json::from_slice(b"{}")?)
            }
            Payload::Json(body) => Ok(serde_json::from_slice(&body)?),
            Payload::Proto(body) => {
                proto::decode(&body, O::response_message()).map_err(|e| Error::Decode(Box::new(e)))
            }
        }
    }
}

/// A protocol binding. Its core is object safe (a request as [`Outgoing`], a result as
/// [`Payload`]); calls are typed through `call::<O>` and `open::<O>` on
/// `dyn Transport`: a request type in, its response type out.
#[async_trait]
pub trait Transport: Send + Sync + Debug + 'static {
    /// A unary call: the result as the binding carried it.
    async fn unary(&self, request: &dyn Outgoing, options: &CallOptions) -> Result<Payload, Error>;

    /// A streaming call (`SendStreamingMessage`, `SubscribeToTask`).
    async fn stream(
        &self,
        request: &dyn Outgoing,
        options: &CallOptions,
    ) -> Result<ItemStream, Error>;

    /// The binding name (`JSONRPC`, `HTTP+JSON`, `GRPC`) and protocol version spoken.
    fn binding(&self) -> (&'static str, &'static str);
}

impl dyn Transport {
    /// A unary call of operation `O`.
    pub async fn call<O: Operation>(
        &self,
        request: &O::Request,
        options: &CallOptions,
    ) -> Result<O::Response, Error> {
        self.unary(&Typed::<O>(request), options)
            .await?
            .decode::<O>()
    }

    /// A streaming call of operation `O`.
    pub async fn open<O: Operation>(
        &self,
        request: &O::Request,
        options: &CallOptions,
    ) -> Result<ItemStream, Error> {
        self.stream(&Typed::<O>(request), options).await
    }
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

/// Reads an error response of at most `max` bytes: an A2A error body (JSON-RPC error object or
/// google.rpc.Status), or a plain HTTP error.
pub(crate) async fn error_from_response(response: reqwest::Response, max: usize) -> Error {
    let status = response.status().as_u16();
    let text = match crate::limits::read_body(response, crate::Limit::Response, max).await {
        Ok(body) => String::from_utf8_lossy(&body).into_owned(),
        Err(e) => return e,
    };
    if let Ok(v) = serde_json::from_str::<Value>(&text) {
        // Both forms have an `error` object: a JSON-RPC response says so with `jsonrpc`
        // (its details are in `data`, which a Status body reader would miss).
        if v.get("jsonrpc").is_none() {
            if let Some(e) = a2a_core::Error::from_status_body(&v) {
                return Error::Remote { error: e, status };
            }
        } else if let Ok(Response {
            payload: a2a_core::jsonrpc::Payload::Error(obj),
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
    let mut end = body.len().min(4096);
    while !body.is_char_boundary(end) {
        end -= 1;
    }
    body.truncate(end);
    Error::Http { status, body }
}
