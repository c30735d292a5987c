//! The gRPC binding: the service `lf.a2a.v1.A2AService`, adapting the same [`RequestHandler`]
//! as the other bindings, on the server's HTTP/2 (the message framing is here, the status
//! trailers are tonic's `Status`). Requests reach it on the HTTP port (any request
//! whose `content-type` is `application/grpc…` is routed here, whatever its path) or on a
//! listener of its own ([`ServerBuilder::grpc_listener`](super::ServerBuilder::grpc_listener)).
//!
//! Metadata carries the service parameters (`a2a-version`, `a2a-extensions`), the credentials
//! (`authorization`, or an API key under the header name the card declares) and
//! `last-event-id` to resume a stream; the tenant is the request's `tenant` field. Errors are a
//! `grpc-status` from the error table, with a `google.rpc.Status` holding the ErrorInfo in
//! `grpc-status-details-bin`.

use super::AppState;
use super::extract::{Tenanted, call_context, extensions_header, read_body, scope_to_tenant};
use crate::handler::{CallContext, RequestHandler, SendReply, StreamEvent};
use crate::telemetry::{Failed, called};
use a2a_core::proto::{self, MessageType};
use a2a_core::{
    CancelTaskRequest, DeleteTaskPushNotificationConfigRequest, Error, ErrorKind,
    GetExtendedAgentCardRequest, GetTaskPushNotificationConfigRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTasksRequest, Message, Method,
    RESUMABLE_STREAMS_EXTENSION, SendMessageRequest, SubscribeToTaskRequest, Task,
    TaskPushNotificationConfig, Validate,
};
use axum::body::Body;
use axum::http::{self, HeaderMap};
use axum::response::Response;
use bytes::Bytes;
use futures::StreamExt as _;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::sync::Arc;

/// Whether a request is a gRPC call (`content-type: application/grpc`, `…+proto`, …).
pub(crate) fn is_grpc(headers: &HeaderMap) -> bool {
    headers
        .get(http::header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/grpc"))
}

/// What a listener of gRPC only answers a request that is not gRPC.
pub(crate) async fn only(
    axum::extract::State(state): axum::extract::State<Arc<AppState>>,
    request: axum::extract::Request,
) -> Response {
    if is_grpc(request.headers()) {
        return serve(state, request).await;
    }
    let mut response = Response::new(Body::from(
        "This listener serves the A2A gRPC binding only (content-type: application/grpc)\n",
    ));
    *response.status_mut() = http::StatusCode::UNSUPPORTED_MEDIA_TYPE;
    response
}

/// One gRPC call.
pub(crate) async fn serve(state: Arc<AppState>, request: axum::extract::Request) -> Response {
    let (parts, body) = request.into_parts();
    let Some(method) = proto::method_of_path(parts.uri.path()) else {
        let error = Error::new(
            ErrorKind::MethodNotFound,
            format!(
                "Method not found: {}; this server serves {}",
                parts.uri.path(),
                proto::SERVICE
            ),
        );
        return status_response(&error);
    };
    let cx = match context(&state, &parts, method).await {
        Ok(cx) => cx,
        Err(e) => return status_response(&e),
    };
    let active = match state.handler.activated_extensions(&cx) {
        Ok(a) => a,
        Err(e) => return status_response(&e),
    };
    // (As on the other bindings: a call refused before this, for its credentials or
    // headers, counts as `unknown`.)
    called(method);
    let mut response = 'answer: {
        // The whole request (one message) is read first, under the body limit plus the 5-byte
        // frame header, so that an oversized one gets our RESOURCE_EXHAUSTED with its ErrorInfo.
        let limit = state.config.body_limit.saturating_add(5);
        let bytes = match read_body(&parts.headers, body, limit).await {
            Ok(b) => b,
            Err(e) => break 'answer status_response(&e),
        };
        let message = match unframe(&parts.headers, &bytes) {
            Ok(m) => m,
            Err(response) => break 'answer response,
        };
        let body = if method.is_streaming() {
            // Event ids in the payload's metadata, for a client that activated resumable
            // streams.
            let event_ids = active.iter().any(|e| e == RESUMABLE_STREAMS_EXTENSION);
            match stream(&state.handler, cx, method, message).await {
                Ok(events) => GrpcBody::stream(events.map(move |mut e: StreamEvent| {
                    if event_ids && e.seq > 0 {
                        e.event.set_event_id(e.seq);
                    }
                    frame(&e.event, &proto::schema::STREAM_RESPONSE)
                })),
                Err(e) => break 'answer status_response(&e),
            }
        } else {
            match unary(&state.handler, cx, method, message).await {
                Ok(framed) => GrpcBody::one(framed),
                Err(e) => break 'answer status_response(&e),
            }
        };
        let mut response = Response::new(Body::new(body));
        response
            .headers_mut()
            .insert(http::header::CONTENT_TYPE, GRPC_CONTENT_TYPE);
        response
    };
    if let Some(v) = extensions_header(&active) {
        response.headers_mut().insert("a2a-extensions", v);
    }
    response
}

const GRPC_CONTENT_TYPE: http::HeaderValue = http::HeaderValue::from_static("application/grpc");

/// The one message of a request: its frame is a flag byte (compressed or not) and a 4-byte
/// length. This server offers no compression: a compressed message is answered `UNIMPLEMENTED`
/// with `grpc-accept-encoding: identity`, as gRPC says.
#[allow(clippy::result_large_err)]
fn unframe(headers: &HeaderMap, bytes: &Bytes) -> Result<Bytes, Response> {
    let not_one = |why: String| {
        status_response(&Error::new(
            ErrorKind::InvalidRequest,
            format!("The request is not one gRPC message: {why}"),
        ))
    };
    let Some((head, message)) = bytes.split_first_chunk::<5>() else {
        return Err(not_one("it is shorter than a frame header".into()));
    };
    if head[0] != 0 {
        let encoding = headers
            .get("grpc-encoding")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("none");
        let mut response = tonic::Status::unimplemented(format!(
            "Compressed messages ({encoding}) are not supported: send them uncompressed"
        ))
        .into_http();
        response.headers_mut().insert(
            "grpc-accept-encoding",
            http::HeaderValue::from_static("identity"),
        );
        return Err(response);
    }
    let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
    if message.len() != len {
        return Err(not_one(format!(
            "the frame announces {len} bytes and {} follow",
            message.len()
        )));
    }
    Ok(bytes.slice(5..))
}

/// `value` encoded as a `ty` message in its gRPC frame (uncompressed).
fn frame<T: Serialize + ?Sized>(value: &T, ty: &'static MessageType) -> Result<Bytes, Error> {
    let mut buf = Vec::with_capacity(1024);
    buf.extend_from_slice(&[0; 5]);
    proto::encode_into(value, ty, &mut buf).map_err(|e| {
        tracing::error!(error = %e, message = ty.name, "a gRPC response failed to encode");
        Error::new(ErrorKind::Internal, format!("response not encodable: {e}"))
    })?;
    finish_frame(buf)
}

/// A `GetTask` answer in its frame: an unchanged task's encoding is kept between calls, as its
/// JSON is (a `TaskReply` serialized through serde would go through that JSON).
fn framed_task(task: &crate::TaskReply) -> Result<Bytes, Error> {
    let message = task.proto()?;
    let mut buf = Vec::with_capacity(5 + message.len());
    buf.extend_from_slice(&[0; 5]);
    buf.extend_from_slice(&message);
    finish_frame(buf)
}

/// Writes the length of the message after the 5 bytes `buf` starts with.
fn finish_frame(mut buf: Vec<u8>) -> Result<Bytes, Error> {
    let len = u32::try_from(buf.len() - 5)
        .map_err(|_| Error::new(ErrorKind::Internal, "a response larger than 4 GiB"))?;
    buf[1..5].copy_from_slice(&len.to_be_bytes());
    Ok(Bytes::from(buf))
}

/// A gRPC response body: the messages, each in its frame, then the trailers with the status
/// (`grpc-status: 0`, or the error that ended a stream).
struct GrpcBody {
    messages: futures::stream::BoxStream<'static, Result<Bytes, Error>>,
    one: Option<Bytes>,
    done: bool,
}

impl GrpcBody {
    fn one(framed: Bytes) -> Self {
        Self {
            messages: futures::stream::empty().boxed(),
            one: Some(framed),
            done: false,
        }
    }

    fn stream(
        messages: impl futures::Stream<Item = Result<Bytes, Error>> + Send + 'static,
    ) -> Self {
        Self {
            messages: messages.boxed(),
            one: None,
            done: false,
        }
    }
}

impl http_body::Body for GrpcBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        use std::task::Poll;
        if self.done {
            return Poll::Ready(None);
        }
        if let Some(framed) = self.one.take() {
            return Poll::Ready(Some(Ok(http_body::Frame::data(framed))));
        }
        let mut trailers = HeaderMap::new();
        match futures::ready!(self.messages.poll_next_unpin(cx)) {
            Some(Ok(framed)) => return Poll::Ready(Some(Ok(http_body::Frame::data(framed)))),
            Some(Err(error)) => {
                if error.to_tonic_status().add_header(&mut trailers).is_err() {
                    trailers.insert("grpc-status", http::HeaderValue::from_static("13"));
                }
            }
            None => {
                trailers.insert("grpc-status", http::HeaderValue::from_static("0"));
            }
        }
        self.done = true;
        Poll::Ready(Some(Ok(http_body::Frame::trailers(trailers))))
    }

    fn is_end_stream(&self) -> bool {
        self.done
    }
}

/// The call's context (its caller and service parameters), or the error to answer with.
async fn context(
    state: &AppState,
    parts: &http::request::Parts,
    method: Method,
) -> Result<CallContext, Error> {
    let caller = super::auth::principal(state, parts).await?;
    super::auth::authorize(state, caller.as_ref().map(|(_, g)| g), method)?;
    let mut cx = call_context(&parts.headers, None)?;
    cx.scope.owner = caller.map(|(p, _)| p.0);
    Ok(cx)
}

/// Decodes and validates a request, and scopes the call to its tenant.
fn decode<P: DeserializeOwned + Validate + Tenanted>(
    bytes: &[u8],
    ty: &'static MessageType,
    cx: &mut CallContext,
) -> Result<P, Error> {
    let p: P = proto::decode(bytes, ty)?;
    p.validate()?;
    scope_to_tenant(&p, cx);
    Ok(p)
}

/// A `SendMessage` answer as `SendMessageResponse`, the task encoded straight from the store's
/// copy.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
enum Reply<'a> {
    Task(&'a Task),
    Message(&'a Message),
}

async fn unary(
    h: &RequestHandler,
    mut cx: CallContext,
    method: Method,
    bytes: Bytes,
) -> Result<Bytes, Error> {
    let (request, response) = proto::messages(method);
    let cx = &mut cx;
    macro_rules! call {
        ($operation:ident, $req:ty) => {{
            let p: $req = decode(&bytes, request, cx)?;
            frame(&Box::pin(h.$operation(cx, p)).await?, response)
        }};
    }
    match method {
        Method::SendMessage => {
            let p: SendMessageRequest = decode(&bytes, request, cx)?;
            match Box::pin(h.send_message(cx, p)).await? {
                SendReply::Task(t) => frame(&Reply::Task(&t), response),
                SendReply::Message(m) => frame(&Reply::Message(&m), response),
            }
        }
        Method::GetTask => {
            let p: GetTaskRequest = decode(&bytes, request, cx)?;
            framed_task(&Box::pin(h.get_task(cx, p)).await?)
        }
        Method::CancelTask => {
            let p: CancelTaskRequest = decode(&bytes, request, cx)?;
            frame(&Box::pin(h.cancel_task(cx, p)).await?, response)
        }
        Method::ListTasks => call!(list_tasks, ListTasksRequest),
        Method::CreateTaskPushNotificationConfig => {
            call!(create_push_config, TaskPushNotificationConfig)
        }
        Method::GetTaskPushNotificationConfig => {
            call!(get_push_config, GetTaskPushNotificationConfigRequest)
        }
        Method::ListTaskPushNotificationConfigs => {
            call!(list_push_configs, ListTaskPushNotificationConfigsRequest)
        }
        Method::DeleteTaskPushNotificationConfig => {
            call!(delete_push_config, DeleteTaskPushNotificationConfigRequest)
        }
        Method::GetExtendedAgentCard => {
            call!(get_extended_agent_card, GetExtendedAgentCardRequest)
        }
        // Streaming methods are served by `stream`.
        _ => Err(Error::from_kind(ErrorKind::MethodNotFound)),
    }
}

async fn stream(
    h: &RequestHandler,
    mut cx: CallContext,
    method: Method,
    bytes: Bytes,
) -> Result<crate::EventStream, Error> {
    let (request, _) = proto::messages(method);
    match method {
        Method::SendStreamingMessage => {
            let p: SendMessageRequest = decode(&bytes, request, &mut cx)?;
            Box::pin(h.send_streaming_message(&cx, p)).await
        }
        Method::SubscribeToTask => {
            let p: SubscribeToTaskRequest = decode(&bytes, request, &mut cx)?;
            Box::pin(h.subscribe_to_task(&cx, p)).await
        }
        _ => Err(Error::from_kind(ErrorKind::MethodNotFound)),
    }
}

/// A trailers-only response carrying an error.
pub(crate) fn status_response(error: &Error) -> Response {
    let status = error.to_tonic_status();
    let failed = Failed::of(error, i32::from(status.code()).into());
    failed.mark(status.into_http())
}
