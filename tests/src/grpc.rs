//! The gRPC side of the harness: each operation as a raw `lf.a2a.v1.A2AService` call over the
//! test server's port (HTTP/2 cleartext), with the params and results as the same v1.0 JSON
//! the other bindings carry (a2a-core's protobuf mapping in between), and errors as the
//! `grpc-status` and `google.rpc.Status` the server sent.

use crate::{ApiError, Binding, Op, SseEvent, within};
use a2a_core::proto::{self, BytesCodec};
use a2a_core::{Method, RESUMABLE_STREAMS_EXTENSION};
use bytes::Bytes;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};
use tonic::metadata::{MetadataMap, MetadataValue};
use tonic::transport::Channel;

/// The a2a-core method of an operation.
pub(crate) fn method(op: Op) -> Method {
    Method::from_name(op.method()).expect("every operation is a method")
}

/// A channel to `addr` (connected at the first call).
pub(crate) fn channel(addr: std::net::SocketAddr) -> Channel {
    tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .expect("a valid URI")
        .connect_lazy()
}

/// The request of `op`: `params` encoded, `headers` as metadata (streams ask for event ids).
fn request(op: Op, params: &Value, headers: &[(&str, &str)]) -> tonic::Request<Bytes> {
    let (ty, _) = proto::messages(method(op));
    let body = proto::encode(params, ty)
        .unwrap_or_else(|e| panic!("{op:?} params do not encode as {}: {e}", ty.name));
    let mut metadata = MetadataMap::new();
    if op.is_streaming() {
        metadata.insert(
            "a2a-extensions",
            MetadataValue::from_static(RESUMABLE_STREAMS_EXTENSION),
        );
    }
    for (k, v) in headers {
        let key = tonic::metadata::MetadataKey::from_bytes(k.to_ascii_lowercase().as_bytes())
            .unwrap_or_else(|_| panic!("metadata key {k:?}"));
        let value = MetadataValue::try_from(*v).unwrap_or_else(|_| panic!("metadata {v:?}"));
        metadata.insert(key, value);
    }
    tonic::Request::from_parts(metadata, Default::default(), Bytes::from(body))
}

/// The error a status carries, as the harness's [`ApiError`].
pub(crate) fn api_error(status: &tonic::Status) -> ApiError {
    let details = proto::status_details(status.details())
        .unwrap_or_else(|e| panic!("grpc-status-details-bin does not decode: {e}"));
    let name = proto::GRPC_CODE_NAMES
        .get(status.code() as usize)
        .copied()
        .unwrap_or("UNKNOWN");
    ApiError {
        binding: Binding::Grpc,
        http_status: 200,
        code: None,
        grpc_status: Some(name.to_owned()),
        message: status.message().to_owned(),
        body: Box::new(json!({"code": name, "message": status.message(), "details": details})),
        details,
        headers: Box::new(status.metadata().clone().into_headers()),
    }
}

/// A client on `channel`, ready, with the path and the request of `op`.
async fn prepare(
    channel: &Channel,
    op: Op,
    params: &Value,
    headers: &[(&str, &str)],
) -> (
    tonic::client::Grpc<Channel>,
    http::uri::PathAndQuery,
    tonic::Request<Bytes>,
) {
    let mut grpc = tonic::client::Grpc::new(channel.clone());
    within("the gRPC channel is ready", grpc.ready())
        .await
        .expect("the gRPC channel connects");
    let path = http::uri::PathAndQuery::try_from(proto::path(method(op))).expect("a path");
    (grpc, path, request(op, params, headers))
}

/// A unary call: the result as JSON, or the error.
pub(crate) async fn call(
    channel: &Channel,
    op: Op,
    params: &Value,
    headers: &[(&str, &str)],
) -> Result<(Value, HeaderMap), ApiError> {
    let (mut grpc, path, request) = prepare(channel, op, params, headers).await;
    let answer = within(
        &format!("gRPC {op:?} answers"),
        grpc.unary(request, path, BytesCodec),
    )
    .await
    .map_err(|status| api_error(&status))?;
    let headers = answer.metadata().clone().into_headers();
    let (_, ty) = proto::messages(method(op));
    let value = proto::decode(answer.get_ref(), ty)
        .unwrap_or_else(|e| panic!("the {op:?} response does not decode: {e}"));
    Ok((value, headers))
}

/// Opens a streaming call: the response stream and its metadata, or the error.
pub(crate) async fn open(
    channel: &Channel,
    op: Op,
    params: &Value,
    headers: &[(&str, &str)],
) -> Result<(tonic::Streaming<Bytes>, HeaderMap), ApiError> {
    let (mut grpc, path, request) = prepare(channel, op, params, headers).await;
    let answer = within(
        &format!("gRPC {op:?} answers"),
        grpc.server_streaming(request, path, BytesCodec),
    )
    .await
    .map_err(|status| api_error(&status))?;
    let headers = answer.metadata().clone().into_headers();
    Ok((answer.into_inner(), headers))
}

/// One message of a gRPC stream as the event the SSE bindings would send: `data` is the
/// StreamResponse's JSON as decoded from the wire, `id` the event id taken out of its metadata
/// (where the resumable-streams extension puts it).
pub(crate) fn event(bytes: &[u8]) -> SseEvent {
    let mut v: Value = proto::decode(bytes, &proto::schema::STREAM_RESPONSE)
        .unwrap_or_else(|e| panic!("a gRPC event does not decode: {e}"));
    let mut id = None;
    if let Some(payload) = v.as_object_mut().and_then(|o| o.values_mut().next())
        && let Some(metadata) = payload.get_mut("metadata").and_then(Value::as_object_mut)
    {
        if let Some(entry) = metadata.remove(RESUMABLE_STREAMS_EXTENSION) {
            id = entry["eventId"].as_str().map(str::to_owned);
        }
        if metadata.is_empty() {
            payload.as_object_mut().map(|p| p.remove("metadata"));
        }
    }
    SseEvent {
        id,
        event: None,
        data: v.to_string(),
    }
}
