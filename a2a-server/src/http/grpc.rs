//! The gRPC binding: the service `lf.a2a.v1.A2AService`, on tonic, adapting the same
//! [`RequestHandler`] as the other bindings. Requests reach it on the HTTP port (any request
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

/// The layer in front of every route: gRPC calls go to [`serve`], the rest on.
pub(crate) async fn route(
    axum::extract::State(state): axum::extract::State<Arc<AppState>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    if is_grpc(request.headers()) {
        serve(state, request).await
    } else {
        next.run(request).await
    }
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
    let cx = match context(&state, &parts).await {
        Ok(cx) => cx,
        Err(e) => return status_response(&e),
    };
    let active = match state.handler.activated_extensions(&cx) {
        Ok(a) => a,
        Err(e) => return status_response(&e),
    };
    // The whole request (one message) is read first, under the body limit plus the 5-byte
    // frame header, so that an oversized one gets our RESOURCE_EXHAUSTED with its ErrorInfo.
    let limit = state.config.body_limit.saturating_add(5);
    let bytes = match read_body(&parts.headers, body, limit).await {
        Ok(b) => b,
        Err(e) => return status_response(&e),
    };
    // Event ids in the payload's metadata, for a client that activated resumable streams.
    let event_ids = active.iter().any(|e| e == RESUMABLE_STREAMS_EXTENSION);
    let request = http::Request::from_parts(parts, http_body_util::Full::new(bytes));
    let mut grpc = tonic::server::Grpc::new(proto::BytesCodec);
    // tonic calls the service once per request: it takes the context then.
    let mut cx = Some(cx);
    let mut take = move || {
        cx.take()
            .ok_or_else(|| tonic::Status::internal("the call was made twice"))
    };
    let mut response = if method.is_streaming() {
        let service = tower::service_fn(move |req: tonic::Request<Bytes>| {
            let state = state.clone();
            let cx = take();
            async move {
                let events = stream(&state.handler, cx?, method, req.into_inner())
                    .await
                    .map_err(|e| e.to_tonic_status())?;
                let frames = events.map(move |mut e: StreamEvent| {
                    if event_ids && e.seq > 0 {
                        e.event.set_event_id(e.seq);
                    }
                    encode(&e.event, &proto::schema::STREAM_RESPONSE)
                        .map_err(|e| e.to_tonic_status())
                });
                Ok(tonic::Response::new(frames))
            }
        });
        grpc.server_streaming(service, request).await
    } else {
        let service = tower::service_fn(move |req: tonic::Request<Bytes>| {
            let state = state.clone();
            let cx = take();
            async move {
                unary(&state.handler, cx?, method, req.into_inner())
                    .await
                    .map(tonic::Response::new)
                    .map_err(|e| e.to_tonic_status())
            }
        });
        grpc.unary(service, request).await
    };
    if let Some(v) = extensions_header(&active) {
        response.headers_mut().insert("a2a-extensions", v);
    }
    response.map(Body::new)
}

/// The call's context (its caller and service parameters), or the error to answer with.
async fn context(state: &AppState, parts: &http::request::Parts) -> Result<CallContext, Error> {
    let owner = super::auth::principal(state, parts).await?;
    let mut cx = call_context(&parts.headers, None)?;
    cx.scope.owner = owner.map(|p| p.0);
    Ok(cx)
}

/// Decodes and validates a request, and scopes the call to its tenant.
fn decode<P: DeserializeOwned + Validate + Tenanted>(
    bytes: &[u8],
    ty: &'static MessageType,
    cx: &mut CallContext,
) -> Result<P, Error> {
    let p: P = proto::decode(bytes, ty)
        .map_err(|e| Error::new(ErrorKind::InvalidParams, format!("{}: {e}", ty.name)))?;
    p.validate()?;
    scope_to_tenant(&p, cx);
    Ok(p)
}

fn encode<T: Serialize + ?Sized>(value: &T, ty: &'static MessageType) -> Result<Bytes, Error> {
    proto::encode(value, ty).map(Bytes::from).map_err(|e| {
        tracing::error!(error = %e, message = ty.name, "a gRPC response failed to encode");
        Error::new(ErrorKind::Internal, format!("response not encodable: {e}"))
    })
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
            encode(&Box::pin(h.$operation(cx, p)).await?, response)
        }};
    }
    match method {
        Method::SendMessage => {
            let p: SendMessageRequest = decode(&bytes, request, cx)?;
            match Box::pin(h.send_message(cx, p)).await? {
                SendReply::Task(t) => encode(&Reply::Task(&t), response),
                SendReply::Message(m) => encode(&Reply::Message(&m), response),
            }
        }
        Method::GetTask => {
            let p: GetTaskRequest = decode(&bytes, request, cx)?;
            let task = Box::pin(h.get_task(cx, p)).await?;
            encode(&*task, response)
        }
        Method::CancelTask => {
            let p: CancelTaskRequest = decode(&bytes, request, cx)?;
            let task = Box::pin(h.cancel_task(cx, p)).await?;
            encode(&task, response)
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
    error.to_tonic_status().into_http()
}
