//! The JSON-RPC 2.0 binding: one `POST` endpoint. Envelope errors are answered with HTTP 200
//! (-32700 with a `null` id, -32600, -32601); A2A errors carry an ErrorInfo in `data`. v1.0
//! method names are served directly; v0.3 names (`message/send`, …) through a2a-core's
//! translation, so v0.3 clients work unchanged.

use super::extract::{Tenanted, call_context, extensions_header, read_body, scope_to_tenant};
use super::{AppState, sse};
use crate::handler::{CallContext, RequestHandler, StreamEvent};
use crate::telemetry::{Failed, called};
use a2a_core::jsonrpc::{Id, RawRequest, Response as RpcResponse};
use a2a_core::v03::{self, Params};
use a2a_core::{Error, ErrorKind, Method, SendMessageRequest, SubscribeToTaskRequest, Validate};
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

fn json_response(status: StatusCode, body: &impl Serialize) -> Response {
    // Sized for a typical task: serializing into a growing empty vector reallocates and copies
    // several times.
    let mut bytes = Vec::with_capacity(2048);
    match serde_json::to_writer(&mut bytes, body) {
        Ok(()) => {
            super::bytes_response(status, HeaderValue::from_static("application/json"), bytes)
        }
        Err(e) => {
            tracing::error!(error = %e, "a JSON-RPC response failed to serialize");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

/// How an error is answered, besides its JSON-RPC error response.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Framing {
    /// The answer to a call: HTTP 200, or 413 for an oversized body (the issue of the transport,
    /// not of the call).
    Call,
    /// An answer outside a call, with this HTTP status (401 from authentication, 405 for a
    /// method other than `POST`, with its `Allow: POST`).
    Status(StatusCode),
    /// The answer to a v0.3 streaming call, which v0.3 clients read only as an event stream,
    /// errors included (the v0.3 SendStreamingMessageResponse is a result or an error): one
    /// `data:` carrying the error response, then the stream ends. (v1.0 answers with a plain
    /// error response, as the v1.0 spec says.)
    V03Stream,
}

/// The one renderer of this binding's errors: a JSON-RPC error response echoing `id`, framed
/// as `framing` says.
pub(crate) fn error_response(id: Id, error: Error, framing: Framing) -> Response {
    let too_large = error.is(ErrorKind::PayloadTooLarge);
    let failed = Failed::of(&error, error.code.into());
    let body = RpcResponse::<Value>::error(id, error);
    let status = match framing {
        Framing::Call if too_large => StatusCode::PAYLOAD_TOO_LARGE,
        Framing::Call => StatusCode::OK,
        Framing::Status(status) => status,
        Framing::V03Stream => {
            return failed.mark(sse::error_event(
                serde_json::to_string(&body).unwrap_or_default(),
            ));
        }
    };
    let mut response = json_response(status, &body);
    if status == StatusCode::METHOD_NOT_ALLOWED {
        response
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("POST"));
    }
    failed.mark(response)
}

/// Any method but `POST` on the JSON-RPC endpoint: HTTP 405 with `Allow: POST` and a JSON-RPC
/// error body (-32600, null id), like every other envelope error of this binding.
pub(crate) fn wrong_method(method: &axum::http::Method) -> Response {
    let error = Error::new(
        ErrorKind::InvalidRequest,
        format!("JSON-RPC requests are POSTed to this endpoint, not sent with {method}"),
    );
    error_response(
        Id::Null,
        error,
        Framing::Status(StatusCode::METHOD_NOT_ALLOWED),
    )
}

/// Decodes and validates the params, and scopes the call to their tenant.
fn params<P: DeserializeOwned + Validate + Tenanted>(
    req: &RawRequest,
    cx: &mut CallContext,
) -> Result<P, Error> {
    let p: P = req.params_as()?;
    p.validate()?;
    scope_to_tenant(&p, cx);
    Ok(p)
}

// The whole request, taken apart here: axum's `HeaderMap` extractor would clone the headers.
pub(crate) async fn serve(state: &AppState, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let headers = &parts.headers;
    let bytes = match read_body(headers, body, state.config.body_limit).await {
        Ok(b) => b,
        Err(e) => return error_response(Id::Null, e, Framing::Call),
    };
    let req = match RawRequest::parse(&bytes) {
        Ok(r) => r,
        Err(rejected) => {
            // The parser answers with a whole error response; render it like every other.
            let id = rejected.id.clone();
            let error = rejected
                .into_result()
                .err()
                .unwrap_or_else(|| ErrorKind::Internal.into());
            return error_response(id, error, Framing::Call);
        }
    };
    let id = req.id.clone();
    let cx = match call_context(headers, parts.uri.query()) {
        Ok(mut c) => {
            c.scope.owner = parts
                .extensions
                .get::<crate::auth::Principal>()
                .map(|p| p.0.clone());
            c
        }
        Err(e) => return error_response(id, e, Framing::Call),
    };
    let handler = &state.handler;
    let active = match handler.activated_extensions(&cx) {
        Ok(a) => a,
        Err(e) => return error_response(id, e, Framing::Call),
    };
    let granted = parts.extensions.get::<crate::auth::Granted>();
    let refused = |method| {
        let e = super::auth::authorize(state, granted, method).err()?;
        Some(error_response(
            id.clone(),
            e,
            Framing::Status(StatusCode::FORBIDDEN),
        ))
    };
    let mut response = if let Some(method) = Method::from_name(&req.method) {
        called(method);
        match refused(method) {
            Some(r) => r,
            None => dispatch_v1(state, handler, cx, method, &req).await,
        }
    } else if let Some(method) = Method::from_v03_name(&req.method) {
        called(method);
        match refused(method) {
            Some(r) => r,
            None => Box::pin(dispatch_v03(state, handler, cx, method, &req)).await,
        }
    } else {
        let error = Error::new(
            ErrorKind::MethodNotFound,
            format!("Method not found: {:?}", req.method),
        );
        error_response(id, error, Framing::Call)
    };
    if let Some(v) = extensions_header(&active) {
        response.headers_mut().insert("a2a-extensions", v);
    }
    response
}

fn unary<T: Serialize>(id: Id, result: Result<T, Error>) -> Response {
    match result {
        Ok(r) => json_response(StatusCode::OK, &RpcResponse::result(id, r)),
        Err(e) => error_response(id, e, Framing::Call),
    }
}

async fn dispatch_v1(
    state: &AppState,
    h: &RequestHandler,
    mut cx: CallContext,
    method: Method,
    req: &RawRequest,
) -> Response {
    let id = req.id.clone();
    // A unary operation: decode and validate the params, call the handler, answer. Each
    // operation's future is boxed: inline, the union of every operation's state would make
    // this handler's future several kilobytes, which axum boxes and copies per request.
    macro_rules! call {
        ($operation:ident) => {
            match params(req, &mut cx) {
                Ok(p) => unary(id, Box::pin(h.$operation(&cx, p)).await),
                Err(e) => error_response(id, e, Framing::Call),
            }
        };
    }
    match method {
        Method::SendMessage => call!(send_message),
        Method::SendStreamingMessage => {
            let stream = match params::<SendMessageRequest>(req, &mut cx) {
                Ok(p) => Box::pin(h.send_streaming_message(&cx, p)).await,
                Err(e) => Err(e),
            };
            stream_v1(state, id, stream)
        }
        Method::SubscribeToTask => {
            let stream = match params::<SubscribeToTaskRequest>(req, &mut cx) {
                Ok(p) => Box::pin(h.subscribe_to_task(&cx, p)).await,
                Err(e) => Err(e),
            };
            stream_v1(state, id, stream)
        }
        Method::GetTask => call!(get_task),
        Method::ListTasks => call!(list_tasks),
        Method::CancelTask => call!(cancel_task),
        Method::CreateTaskPushNotificationConfig => call!(create_push_config),
        Method::GetTaskPushNotificationConfig => call!(get_push_config),
        Method::ListTaskPushNotificationConfigs => call!(list_push_configs),
        Method::DeleteTaskPushNotificationConfig => call!(delete_push_config),
        Method::GetExtendedAgentCard => call!(get_extended_agent_card),
        _ => error_response(
            id,
            Error::from_kind(ErrorKind::MethodNotFound),
            Framing::Call,
        ),
    }
}

fn stream_v1(state: &AppState, id: Id, stream: Result<crate::EventStream, Error>) -> Response {
    match stream {
        Ok(events) => sse::respond(
            events,
            state.config.keep_alive,
            move |e: &StreamEvent, out| {
                serde_json::to_writer(out, &RpcResponse::result(id.clone(), &e.event))
            },
        ),
        Err(e) => error_response(id, e, Framing::Call),
    }
}

async fn dispatch_v03(
    state: &AppState,
    h: &RequestHandler,
    cx: CallContext,
    method: Method,
    req: &RawRequest,
) -> Response {
    let id = req.id.clone();
    let mut cx = cx;
    cx.v03 = true;
    let params = match v03::decode_params(method, &req.params_value()) {
        Ok(p) => p,
        Err(e) => return error_response(id, e, Framing::Call),
    };
    match params {
        Params::SendMessage(p) if method == Method::SendStreamingMessage => {
            let stream = match p.validate() {
                Ok(()) => h.send_streaming_message(&cx, p).await,
                Err(e) => Err(e),
            };
            stream_v03(state, id, stream)
        }
        Params::SendMessage(p) => match p.validate() {
            Ok(()) => unary(
                id,
                h.send_message(&cx, p)
                    .await
                    .map(|r| v03::encode_send_response(&r.into())),
            ),
            Err(e) => error_response(id, e, Framing::Call),
        },
        Params::SubscribeToTask(p) => {
            let stream = h.subscribe_to_task(&cx, p).await;
            stream_v03(state, id, stream)
        }
        Params::GetTask(p) => unary(id, h.get_task(&cx, p).await.map(|t| v03::encode_task(&t))),
        Params::CancelTask(p) => unary(
            id,
            h.cancel_task(&cx, p).await.map(|t| v03::encode_task(&t)),
        ),
        Params::CreatePushConfig(p) => unary(
            id,
            h.create_push_config(&cx, p)
                .await
                .map(|c| v03::encode_push_config(&c)),
        ),
        Params::GetPushConfig(p) => unary(
            id,
            h.get_push_config(&cx, p)
                .await
                .map(|c| v03::encode_push_config(&c)),
        ),
        Params::ListPushConfigs(p) => unary(
            id,
            h.list_push_configs(&cx, p).await.map(|l| {
                l.configs
                    .iter()
                    .map(v03::encode_push_config)
                    .collect::<Vec<_>>()
            }),
        ),
        Params::DeletePushConfig(p) => {
            unary(id, h.delete_push_config(&cx, p).await.map(|_| Value::Null))
        }
        Params::GetExtendedAgentCard(p) => unary(
            id,
            h.get_extended_agent_card(&cx, p)
                .await
                .map(|c| v03::encode_card(&c)),
        ),
        // ListTasks did not exist in v0.3.
        _ => error_response(
            id,
            Error::from_kind(ErrorKind::MethodNotFound),
            Framing::Call,
        ),
    }
}

fn stream_v03(state: &AppState, id: Id, stream: Result<crate::EventStream, Error>) -> Response {
    match stream {
        Ok(events) => sse::respond(
            events,
            state.config.keep_alive,
            move |e: &StreamEvent, out| {
                serde_json::to_writer(
                    out,
                    &RpcResponse::result(id.clone(), v03::encode_stream_event(&e.event)),
                )
            },
        ),
        Err(e) => error_response(id, e, Framing::V03Stream),
    }
}
