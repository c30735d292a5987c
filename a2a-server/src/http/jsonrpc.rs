//! The JSON-RPC 2.0 binding: one `POST` endpoint. Envelope errors are answered with HTTP 200
//! (-32700 with a `null` id, -32600, -32601); A2A errors carry an ErrorInfo in `data`. The
//! request's `A2A-Version` decides its method names (none means 0.3, spec §3.6.2): v1.0 names
//! are served directly, v0.3 names (`message/send`, …) through a2a-core's translation, so v0.3
//! clients, which send no version, work unchanged.

use super::dispatch::{self, Answer, Handle, Reply, Visit};
use super::extract::{call_context, extensions_header, read_body, scope_to_tenant};
use super::{AppState, sse};
use crate::handler::{CallContext, RequestHandler, StreamEvent, Version};
use crate::telemetry::{Failed, called};
use a2a_core::jsonrpc::{Id, RawRequest, Response as RpcResponse};
use a2a_core::v03;
use a2a_core::{Error, ErrorKind, Method, Operation};
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;

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
    let mut response = match method_of(&req.method, cx.version) {
        Ok((method, v03)) => {
            called(method);
            match refused(method) {
                Some(r) => r,
                None => dispatch(state, cx, method, &req, v03).await,
            }
        }
        Err(e) => error_response(id, e, Framing::Call),
    };
    if let Some(v) = extensions_header(&active) {
        response.headers_mut().insert("a2a-extensions", v);
    }
    response
}

/// The operation a JSON-RPC method names in the requested protocol version (whether it is
/// the v0.3 one), or MethodNotFound: each version has its own names, and a request without
/// `A2A-Version` is a 0.3 request (spec §3.6.2), so a v0.3 client that sends none keeps
/// working and a 1.0 method name without the header is not one.
fn method_of(name: &str, version: Version) -> Result<(Method, bool), Error> {
    let found = match version {
        Version::V1 => Method::from_name(name).map(|m| (m, false)),
        Version::V03 => Method::from_v03_name(name).map(|m| (m, true)),
    };
    found.ok_or_else(|| {
        let hint = match version {
            Version::V03 if Method::from_name(name).is_some() => {
                " (an A2A 1.0 method: send the header A2A-Version: 1.0; a request without it is \
                 read as A2A 0.3)"
            }
            Version::V1 if Method::from_v03_name(name).is_some() => {
                " (an A2A 0.3 method, and this request asked for A2A-Version 1.x)"
            }
            _ => "",
        };
        Error::new(
            ErrorKind::MethodNotFound,
            format!("Method not found: {name:?}{hint}"),
        )
    })
}

/// A v1.0 call of the operation `O`: decode the params, scope the call to their tenant, call
/// the handler (which validates them), answer.
async fn call_v1<O: Operation>(state: &AppState, mut cx: CallContext, req: &RawRequest) -> Response
where
    RequestHandler: Handle<O>,
{
    let id = req.id.clone();
    let p: O::Request = match req.params_as() {
        Ok(p) => p,
        Err(e) => return error_response(id, e, Framing::Call),
    };
    scope_to_tenant(&p, &mut cx);
    match state.handler.handle(&cx, p).await.map(Answer::into_reply) {
        Ok(Reply::Unary(r)) => json_response(StatusCode::OK, &RpcResponse::result(id, r)),
        Ok(Reply::Stream(events)) => stream_v1(state, id, events),
        Err(e) => error_response(id, e, Framing::Call),
    }
}

/// A v0.3 call of the operation `O`: the params and the result through the table's v0.3 codec
/// of `O`.
async fn call_v03<O: Operation>(state: &AppState, mut cx: CallContext, req: &RawRequest) -> Response
where
    RequestHandler: Handle<O>,
{
    let id = req.id.clone();
    cx.v03 = true;
    let p = match O::decode_v03_params(&req.params_value()) {
        Ok(p) => p,
        Err(e) => return error_response(id, e, Framing::Call),
    };
    match state
        .handler
        .handle(&cx, p)
        .await
        .map(Answer::into_v03_reply)
    {
        Ok(Reply::Unary(r)) => json_response(StatusCode::OK, &RpcResponse::result(id, r)),
        Ok(Reply::Stream(events)) => stream_v03(state, id, events),
        Err(e) => stream_or_call(O::STREAMING, id, e),
    }
}

/// Each operation's call is boxed: inline, the union of every operation's state would make the
/// binding's future several kilobytes, which axum boxes and copies per request.
type Call<'a> = Pin<Box<dyn Future<Output = Response> + Send + 'a>>;

/// Dispatches a v1.0 (or, with `v03`, a v0.3) call to its operation.
struct Dispatch<'a> {
    state: &'a AppState,
    cx: CallContext,
    req: &'a RawRequest,
    v03: bool,
}

impl<'a> Visit for Dispatch<'a> {
    type Output = Call<'a>;

    fn visit<O: Operation>(self) -> Call<'a>
    where
        RequestHandler: Handle<O>,
    {
        if self.v03 {
            Box::pin(call_v03::<O>(self.state, self.cx, self.req))
        } else {
            Box::pin(call_v1::<O>(self.state, self.cx, self.req))
        }
    }
}

async fn dispatch(
    state: &AppState,
    cx: CallContext,
    method: Method,
    req: &RawRequest,
    v03: bool,
) -> Response {
    let call = Dispatch {
        state,
        cx,
        req,
        v03,
    };
    match dispatch::visit(method, call) {
        Some(call) => call.await,
        None => error_response(
            req.id.clone(),
            Error::from_kind(ErrorKind::MethodNotFound),
            Framing::Call,
        ),
    }
}

fn stream_v1(state: &AppState, id: Id, events: crate::EventStream) -> Response {
    sse::respond(
        events,
        state.config.keep_alive,
        move |e: &StreamEvent, out| {
            serde_json::to_writer(out, &RpcResponse::result(id.clone(), &e.event))
        },
    )
}

/// A handler's error: for a v0.3 streaming call, framed as the event stream v0.3 clients read.
fn stream_or_call(streaming: bool, id: Id, e: Error) -> Response {
    let framing = if streaming {
        Framing::V03Stream
    } else {
        Framing::Call
    };
    error_response(id, e, framing)
}

fn stream_v03(state: &AppState, id: Id, events: crate::EventStream) -> Response {
    sse::respond(
        events,
        state.config.keep_alive,
        move |e: &StreamEvent, out| {
            serde_json::to_writer(
                out,
                &RpcResponse::result(id.clone(), v03::encode_stream_event(&e.event)),
            )
        },
    )
}
