//! The gRPC binding: the service `lf.a2a.v1.A2AService`, adapting the same [`RequestHandler`]
//! as the other bindings, served by tonic's [`Grpc`] with a2a-core's [`BytesCodec`]: tonic owns
//! the framing, the refusal of compression (`grpc-accept-encoding: identity`), the message size
//! limit, the trailers and the status; this module decodes and encodes the messages with
//! a2a-core's proto mapping. Requests reach it on the HTTP port (any request whose
//! `content-type` is `application/grpc` or `application/grpc+proto` is routed here, whatever
//! its path) or on a listener of its own
//! ([`ServerBuilder::grpc_listener`](crate::ServerBuilder::grpc_listener)).
//!
//! Metadata carries the service parameters (`a2a-version`, `a2a-extensions`), the credentials
//! (`authorization`, or an API key under the header name the card declares; checked by the
//! authentication layer before the call comes here) and `last-event-id` to resume a stream;
//! the tenant is the request's `tenant` field. Errors are a `grpc-status` from the error table,
//! with a `google.rpc.Status` holding the ErrorInfo in `grpc-status-details-bin`.

use super::AppState;
use super::dispatch::{self, Answer, Call, Handle, Reply};
use super::extract::{context, scope_to_tenant, with_extensions};
use crate::auth::Granted;
use crate::handler::{CallContext, RequestHandler, StreamEvent};
use crate::telemetry::{Failed, called};
use a2a_core::operation::Operation;
use a2a_core::proto::{self, BytesCodec, MessageType};
use a2a_core::{Error, ErrorKind, Method, RESUMABLE_STREAMS_EXTENSION};
use axum::body::Body;
use axum::http::{self, HeaderMap};
use axum::response::Response;
use bytes::Bytes;
use futures::StreamExt as _;
use serde::Serialize;
use std::future::Future;
use tonic::server::Grpc;

/// What a request's `content-type` means to this binding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ContentType {
    /// A gRPC call with protobuf messages: `application/grpc` or `application/grpc+proto`
    /// (any case, parameters allowed).
    Grpc,
    /// A form of gRPC this server does not serve: gRPC-Web (`application/grpc-web…`) or
    /// messages of another codec (`application/grpc+json`). Answered 415, not served as gRPC.
    Unserved,
    /// Not gRPC (`application/grpcfoo` neither).
    Other,
}

impl ContentType {
    /// Reads the request's `content-type` header.
    pub(crate) fn of(headers: &HeaderMap) -> Self {
        const GRPC: &str = "application/grpc";
        let Some(value) = headers
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
        else {
            return Self::Other;
        };
        let essence = value.split(';').next().unwrap_or_default().trim();
        let Some(rest) = essence
            .get(..GRPC.len())
            .filter(|head| head.eq_ignore_ascii_case(GRPC))
            .map(|_| &essence[GRPC.len()..])
        else {
            return Self::Other;
        };
        let web = rest
            .get(..4)
            .is_some_and(|head| head.eq_ignore_ascii_case("-web"));
        if rest.is_empty() || rest.eq_ignore_ascii_case("+proto") {
            Self::Grpc
        } else if web || rest.starts_with('+') {
            Self::Unserved
        } else {
            Self::Other
        }
    }
}

/// Whether a request is a gRPC call this server serves (see [`ContentType`]).
pub(crate) fn is_grpc(headers: &HeaderMap) -> bool {
    ContentType::of(headers) == ContentType::Grpc
}

/// The 415 answering a request that the gRPC binding is asked for and does not serve: `why`
/// says what to send instead.
pub(crate) fn unsupported(why: &'static str) -> Response {
    let mut response = Response::new(Body::from(why));
    *response.status_mut() = http::StatusCode::UNSUPPORTED_MEDIA_TYPE;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// One gRPC call, authenticated by the layer before it ([`super::auth`]): its caller (if any)
/// is in the request's extensions.
pub(crate) async fn serve(state: &AppState, request: axum::extract::Request) -> Response {
    let Some(method) = proto::method_of_path(request.uri().path()) else {
        let error = Error::new(
            ErrorKind::MethodNotFound,
            format!(
                "Method not found: {}; this server serves {}",
                request.uri().path(),
                proto::SERVICE
            ),
        );
        return status_response(&error);
    };
    let granted = request.extensions().get::<Granted>();
    let (cx, active) = match super::auth::authorize(state, granted, method)
        .and_then(|()| context(state, request.headers(), request.extensions(), None))
    {
        Ok(c) => c,
        Err(e) => return status_response(&e),
    };
    // (As on the other bindings: a call refused before this, for its credentials or
    // headers, counts as `unknown`.)
    called(method);
    let limit = state.config.body_limit;
    let mut grpc = Grpc::new(BytesCodec).max_decoding_message_size(limit);
    let handler = &state.handler;
    // tonic calls the service once, with the request's message.
    let mut cx = Some(cx);
    let response = if method.is_streaming() {
        // Event ids in the payload's metadata, for a client that activated resumable streams.
        let event_ids = active.iter().any(|e| e == RESUMABLE_STREAMS_EXTENSION);
        let call = tower::service_fn(move |request: tonic::Request<Bytes>| {
            let cx = cx.take();
            async move {
                let cx = cx.ok_or_else(served_twice)?;
                let events = match answer(handler, cx, method, request.into_inner()).await {
                    Ok(Answered::Events(events)) => events,
                    Ok(Answered::One(_)) => return Err(failed(mismatched())),
                    Err(e) => return Err(failed(e)),
                };
                let messages = events.map(move |mut e: StreamEvent| {
                    if event_ids && e.seq > 0 {
                        e.event.set_event_id(e.seq);
                    }
                    encode(&e.event, &proto::schema::STREAM_RESPONSE)
                        .map_err(|error| error.to_tonic_status())
                });
                Ok::<_, tonic::Status>(tonic::Response::new(messages))
            }
        });
        grpc.server_streaming(call, request).await
    } else {
        let call = tower::service_fn(move |request: tonic::Request<Bytes>| {
            let cx = cx.take();
            async move {
                let cx = cx.ok_or_else(served_twice)?;
                match answer(handler, cx, method, request.into_inner()).await {
                    Ok(Answered::One(message)) => {
                        // Its size, framed (5 bytes), for the output caps: tonic's body frames
                        // the message only when polled.
                        let size = crate::serve::AnswerSize(message.len() as u64 + 5);
                        let mut response = tonic::Response::new(message);
                        response.extensions_mut().insert(size);
                        Ok(response)
                    }
                    Ok(Answered::Events(_)) => Err(failed(mismatched())),
                    Err(e) => Err(failed(e)),
                }
            }
        });
        grpc.unary(call, request).await
    };
    let response = match tonic::Status::from_header_map(response.headers()) {
        // tonic's refusal of an oversized message (no error of the table is OUT_OF_RANGE, and
        // each carries its details), answered from the error table: RESOURCE_EXHAUSTED, as
        // gRPC says, the limit stated with the frame's 5 bytes as on the other bindings.
        Some(s) if s.code() == tonic::Code::OutOfRange && s.details().is_empty() => {
            status_response(&Error::new(
                ErrorKind::PayloadTooLarge,
                format!(
                    "Request message too large: the limit is {limit} bytes ({} with its gRPC \
                     frame)",
                    limit.saturating_add(5)
                ),
            ))
        }
        _ => response.map(Body::new),
    };
    with_extensions(response, &active)
}

fn served_twice() -> tonic::Status {
    tonic::Status::internal("a gRPC call was served twice")
}

/// The status a call's error is answered with (a trailers-only response), told to the
/// telemetry layer.
fn failed(error: Error) -> tonic::Status {
    let status = error.to_tonic_status();
    Failed::of(&error, i32::from(status.code()).into()).record();
    status
}

/// `value` encoded as a `ty` message.
fn encode<T: Serialize + ?Sized>(value: &T, ty: &'static MessageType) -> Result<Bytes, Error> {
    let mut buf = Vec::with_capacity(1024);
    proto::encode_into(value, ty, &mut buf).map_err(|e| {
        tracing::error!(error = %e, message = ty.name, "a gRPC response failed to encode");
        Error::new(ErrorKind::Internal, format!("response not encodable: {e}"))
    })?;
    Ok(Bytes::from(buf))
}

/// What a call answers: one message (unframed), or the events of a stream.
enum Answered {
    One(Bytes),
    Events(crate::EventStream),
}

/// A call of the operation `O`: decode its request message, scope the call to its tenant, call
/// the handler (which validates the request), encode a unary answer as `O`'s response message.
async fn call<O: Operation>(
    handler: &RequestHandler,
    mut cx: CallContext,
    bytes: Bytes,
) -> Result<Answered, Error>
where
    RequestHandler: Handle<O>,
{
    let request: O::Request = proto::decode(&bytes, O::request_message())?;
    scope_to_tenant(&request, &mut cx);
    render::<O, _>(handler.handle(&cx, request).await?)
}

fn render<O: Operation, A: Answer<O>>(answer: A) -> Result<Answered, Error> {
    match answer.into_reply() {
        Reply::Unary(unary) => A::proto(&unary).map(Answered::One),
        Reply::Stream(events) => Ok(Answered::Events(events)),
    }
}

/// A call of an operation with its request message ([`call`]).
struct Message<'a> {
    handler: &'a RequestHandler,
    cx: CallContext,
    bytes: Bytes,
}

impl Call for Message<'_> {
    type Output = Result<Answered, Error>;

    fn call<O: Operation>(self) -> impl Future<Output = Self::Output> + Send
    where
        RequestHandler: Handle<O>,
    {
        call::<O>(self.handler, self.cx, self.bytes)
    }
}

/// Calls `method`'s operation with the request message `bytes`.
async fn answer(
    handler: &RequestHandler,
    cx: CallContext,
    method: Method,
    bytes: Bytes,
) -> Result<Answered, Error> {
    dispatch::dispatch(method, Message { handler, cx, bytes })?.await
}

/// A unary or a streaming operation answered the other way (the table says which each is).
fn mismatched() -> Error {
    Error::new(
        ErrorKind::Internal,
        "an operation answered in the wrong form",
    )
}

/// A trailers-only response carrying an error.
pub(crate) fn status_response(error: &Error) -> Response {
    let status = error.to_tonic_status();
    let failed = Failed::of(error, i32::from(status.code()).into());
    failed.mark(status.into_http())
}
