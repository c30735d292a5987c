//! The HTTP+JSON binding. Routes are matched here rather than by the router, against
//! a2a-core's route table ([`a2a_core::http_json`], which the client builds its paths from), so
//! that the optional leading `/{tenant}` segment and the `:cancel` / `:subscribe` verb suffixes
//! are handled in one place. A path that exists with other methods is answered 405 with
//! `Allow`.
//!
//! Errors are `google.rpc.Status` bodies with the v1.0.1 HTTP status codes, rendered by
//! [`error_response`] alone.

use super::dispatch::{self, Answer, Call, Handle, Reply};
use super::extract::{context, read_body, with_extensions};
use super::{AppState, sse};
use crate::handler::{CallContext, RequestHandler, StreamEvent};
use crate::telemetry::{Failed, called};
use a2a_core::http_json::{self, HttpMethod, PathMatch, Rest, Route};
use a2a_core::{Error, ErrorKind, Operation};
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::future::Future;

const A2A_JSON: HeaderValue = HeaderValue::from_static("application/a2a+json");

/// The one renderer of this binding's errors: a `google.rpc.Status` body with the error's HTTP
/// status. With `allow` (a path that exists with other methods), HTTP 405 with that `Allow`,
/// and a body whose code is 405 too (gRPC has no such status: `UNIMPLEMENTED` is the nearest).
pub(crate) fn error_response(error: &Error, allow: Option<&str>) -> Response {
    let mut body = error.to_status_body();
    let status = match allow {
        Some(_) => {
            body["error"]["code"] = StatusCode::METHOD_NOT_ALLOWED.as_u16().into();
            body["error"]["status"] = "UNIMPLEMENTED".into();
            StatusCode::METHOD_NOT_ALLOWED
        }
        None => {
            StatusCode::from_u16(error.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
        }
    };
    // (A `Value` always serializes.)
    let mut response = super::json_response(status, A2A_JSON, &body).unwrap_or_default();
    if let Some(allow) = allow.and_then(|a| HeaderValue::from_str(a).ok()) {
        response.headers_mut().insert(header::ALLOW, allow);
    }
    Failed::of(error, status.as_u16().into()).mark(response)
}

/// HTTP 405 for a path that exists with other methods: `allowed` lists them.
pub(crate) fn method_not_allowed(allowed: &str) -> Response {
    let error = Error::new(
        ErrorKind::MethodNotFound,
        format!("This route accepts {allowed}"),
    );
    error_response(&error, Some(allowed))
}

fn ok<T: Serialize>(value: &T) -> Response {
    super::json_response(StatusCode::OK, A2A_JSON, value).unwrap_or_else(|e| {
        let error = format!("the response failed to serialize: {e}");
        error_response(&Error::new(ErrorKind::Internal, error), None)
    })
}

/// A JSON body as an object (an empty body reads as `{}`).
fn body_object(bytes: &[u8]) -> Result<Map<String, Value>, Error> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice(bytes) {
        Ok(Value::Object(obj)) => Ok(obj),
        Ok(_) => Err(Error::new(
            ErrorKind::InvalidRequest,
            "The body must be a JSON object",
        )),
        Err(e) => Err(Error::new(
            ErrorKind::ParseError,
            format!("Invalid JSON payload: {e}"),
        )),
    }
}

/// Query parameters as a JSON object (`true` and `false` as booleans; the last of repeated
/// keys).
fn query_object(query: Option<&str>) -> Map<String, Value> {
    let mut obj = Map::new();
    for pair in query
        .unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty())
    {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let (k, v) = (http_json::query_decode(k), http_json::query_decode(v));
        if k.eq_ignore_ascii_case("a2a-version") {
            continue;
        }
        let value = match v.as_str() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => Value::String(v),
        };
        obj.insert(k, value);
    }
    obj
}

/// A request's parameters: the path's fields (the tenant among them) set over the rest of the
/// request, which the route says is in the body (read strictly), in the query, or nowhere.
fn params<T: DeserializeOwned>(
    route: &Route,
    found: &PathMatch,
    query: Option<&str>,
    body: &[u8],
) -> Result<T, Error> {
    let mut obj = match route.rest {
        Rest::Body => body_object(body)?,
        Rest::Query => query_object(query),
        Rest::None => Map::new(),
    };
    let tenant = found.tenant.as_deref().map(|t| ("tenant", t));
    for (k, v) in tenant
        .into_iter()
        .chain(found.fields.iter().map(|(k, v)| (*k, v.as_str())))
    {
        obj.insert(k.to_owned(), Value::String(v.to_owned()));
    }
    let value = Value::Object(obj);
    match route.rest {
        Rest::Body => a2a_core::strict::from_value(&value)
            .map_err(|e| Error::new(ErrorKind::InvalidParams, format!("Invalid parameters: {e}"))),
        _ => serde_json::from_value(value).map_err(|e| {
            Error::new(
                ErrorKind::InvalidParams,
                format!("Invalid query parameters: {e}"),
            )
        }),
    }
}

fn stream(state: &AppState, events: crate::EventStream) -> Response {
    sse::respond(events, state.config.keep_alive, |e: &StreamEvent, out| {
        serde_json::to_writer(out, &e.event)
    })
}

pub(crate) async fn serve(state: &AppState, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let Some(found) = http_json::match_path(parts.uri.path()) else {
        let error = Error::new(
            ErrorKind::MethodNotFound,
            format!("No A2A route at {} {}", parts.method, parts.uri.path()),
        );
        return error_response(&error, None);
    };
    let query = parts.uri.query();
    let (cx, active) = match context(state, &parts.headers, &parts.extensions, query) {
        Ok((cx, active)) => (cx.with_tenant(found.tenant.clone()), active),
        Err(e) => return error_response(&e, None),
    };
    let bytes = if parts.method == axum::http::Method::POST {
        match read_body(&parts.headers, body, state.config.body_limit).await {
            Ok(b) => b,
            Err(e) => return error_response(&e, None),
        }
    } else {
        drop(body);
        Default::default()
    };
    let route = HttpMethod::from_name(parts.method.as_str()).and_then(|m| found.route(m));
    if let Some(route) = route {
        let granted = parts.extensions.get::<crate::auth::Granted>();
        if let Err(e) = super::auth::authorize(state, granted, route.method) {
            return error_response(&e, None);
        }
    }
    let response = match route {
        Some(route) => {
            called(route.method);
            let call = Routed {
                state,
                cx: &cx,
                route,
                found: &found,
                query,
                body: &bytes,
            };
            match dispatch::dispatch(route.method, call) {
                Ok(call) => call.await,
                Err(e) => error_response(&e, None),
            }
        }
        None => method_not_allowed(&found.allow()),
    };
    with_extensions(response, &active)
}

/// What a call of an operation needs ([`call`]).
struct Routed<'a> {
    state: &'a AppState,
    cx: &'a CallContext,
    route: &'a Route,
    found: &'a PathMatch,
    query: Option<&'a str>,
    body: &'a [u8],
}

impl Call for Routed<'_> {
    type Output = Response;

    fn call<O: Operation>(self) -> impl Future<Output = Response> + Send
    where
        RequestHandler: Handle<O>,
    {
        call::<O>(self)
    }
}

/// A call of the operation `O`: its request read from the path, the query or the body as the
/// route says, the handler called (it validates the request), the answer written.
async fn call<O: Operation>(call: Routed<'_>) -> Response
where
    RequestHandler: Handle<O>,
{
    let Routed {
        state,
        cx,
        route,
        found,
        query,
        body,
    } = call;
    let p: O::Request = match params(route, found, query, body) {
        Ok(p) => p,
        Err(e) => return error_response(&e, None),
    };
    match state.handler.handle(cx, p).await.map(Answer::into_reply) {
        Ok(Reply::Unary(r)) => ok(&r),
        Ok(Reply::Stream(events)) => stream(state, events),
        Err(e) => error_response(&e, None),
    }
}
