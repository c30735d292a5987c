//! The JSON-RPC 2.0 binding: one `POST` endpoint. Envelope errors are answered with HTTP 200
//! (-32700 with a `null` id, -32600, -32601); A2A errors carry an ErrorInfo in `data`. The
//! request's `A2A-Version` decides its method names (none means 0.3, spec §3.6.2): v1.0 names
//! are served directly, v0.3 names (`message/send`, …) through a2a-core's translation, so v0.3
//! clients, which send no version, work unchanged.

use super::dispatch::{self, Answer, Call, Handle, Reply};
use super::extract::{context, read_body, scope_to_tenant, with_extensions};
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

fn json_response(status: StatusCode, body: &impl Serialize) -> Response {
    let json = HeaderValue::from_static("application/json");
    super::json_response(status, json, body).unwrap_or_else(|e| {
        tracing::error!(error = %e, "a JSON-RPC response failed to serialize");
        StatusCode::INTERNAL_SERVER_ERROR.into_response()
    })
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
/// as `framing` says. Cold: kept out of the request path's code, which calls it from many
/// places.
#[cold]
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
    let (cx, active) = match context(state, headers, &parts.extensions, parts.uri.query()) {
        Ok(c) => c,
        Err(e) => return error_response(id, e, Framing::Call),
    };
    let response = match method_of(&req.method, cx.version) {
        Ok((method, v03)) => {
            called(method);
            let granted = parts.extensions.get::<crate::auth::Granted>();
            let rpc = Rpc {
                state,
                cx,
                req: &req,
                v03,
            };
            if let Err(e) = super::auth::authorize(state, granted, method) {
                error_response(id, e, Framing::Status(StatusCode::FORBIDDEN))
            } else {
                match dispatch::dispatch(method, rpc) {
                    Ok(call) => call.await,
                    Err(e) => error_response(id, e, Framing::Call),
                }
            }
        }
        Err(e) => error_response(id, e, Framing::Call),
    };
    with_extensions(response, &active)
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

/// A call of an operation in the version the request asked for ([`call`]).
struct Rpc<'a> {
    state: &'a AppState,
    cx: CallContext,
    req: &'a RawRequest,
    v03: bool,
}

impl Call for Rpc<'_> {
    type Output = Response;

    fn call<O: Operation>(self) -> impl Future<Output = Response> + Send
    where
        RequestHandler: Handle<O>,
    {
        call::<O>(self)
    }
}

/// A call of the operation `O`: decode the params (v1.0 ones scoped to their tenant; v0.3 ones
/// through the table's v0.3 codec of `O`), call the handler (which validates them), answer in
/// the request's version.
async fn call<O: Operation>(rpc: Rpc<'_>) -> Response
where
    RequestHandler: Handle<O>,
{
    let Rpc {
        state,
        mut cx,
        req,
        v03,
    } = rpc;
    let id = req.id.clone();
    cx.v03 = v03;
    // Decoded in a temporary of this statement, not in a local: a local the request was taken
    // out of would still be kept in this future, beside the handler's future that holds it.
    let p = match decode::<O>(req, v03, &mut cx) {
        Ok(p) => p,
        Err(e) => return error_response(id, e, Framing::Call),
    };
    match state.handler.handle(&cx, p).await {
        Ok(answer) if v03 => respond(state, id, answer.into_v03_reply(), true),
        Ok(answer) => respond(state, id, answer.into_reply(), false),
        Err(e) if v03 && O::STREAMING => error_response(id, e, Framing::V03Stream),
        Err(e) => error_response(id, e, Framing::Call),
    }
}

/// The params of a call of `O` (v1.0 ones scoped to their tenant, v0.3 ones through the
/// table's v0.3 codec of `O`).
fn decode<O: Operation>(
    req: &RawRequest,
    v03: bool,
    cx: &mut CallContext,
) -> Result<O::Request, Error> {
    if v03 {
        O::decode_v03_params(&req.params_value())
    } else {
        req.params_as()
            .inspect(|p: &O::Request| scope_to_tenant(p, cx))
    }
}

/// A call's answer: a result response, or an event stream of result responses (each event in
/// its v0.3 form with `v03`).
fn respond<T: Serialize>(state: &AppState, id: Id, reply: Reply<T>, v03: bool) -> Response {
    let events = match reply {
        Reply::Unary(r) => return json_response(StatusCode::OK, &RpcResponse::result(id, r)),
        Reply::Stream(events) => events,
    };
    sse::respond(
        events,
        state.config.keep_alive,
        move |e: &StreamEvent, out| match v03 {
            true => serde_json::to_writer(
                out,
                &RpcResponse::result(id.clone(), v03::encode_stream_event(&e.event)),
            ),
            false => serde_json::to_writer(out, &RpcResponse::result(id.clone(), &e.event)),
        },
    )
}
