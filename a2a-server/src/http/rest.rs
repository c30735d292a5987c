//! The HTTP+JSON binding. Routes are matched here rather than by the router, so that the
//! optional leading `/{tenant}` segment and the `:cancel` / `:subscribe` verb suffixes are
//! handled in one place:
//!
//! | method | path | operation |
//! |---|---|---|
//! | POST | `/message:send` | SendMessage |
//! | POST | `/message:stream` | SendStreamingMessage (SSE) |
//! | GET | `/tasks` | ListTasks (query parameters) |
//! | GET | `/tasks/{id}` | GetTask |
//! | POST | `/tasks/{id}:cancel` | CancelTask |
//! | GET, POST | `/tasks/{id}:subscribe` | SubscribeToTask (SSE) |
//! | POST, GET | `/tasks/{taskId}/pushNotificationConfigs` | Create, List push configs |
//! | GET, DELETE | `/tasks/{taskId}/pushNotificationConfigs/{id}` | Get, Delete push config |
//! | GET | `/extendedAgentCard` | GetExtendedAgentCard |
//!
//! Errors are `google.rpc.Status` bodies with the v1.0.1 HTTP status codes.

use super::extract::{call_context, extensions_header, read_body};
use super::{AppState, sse};
use crate::handler::{CallContext, StreamEvent};
use a2a_core::{
    CancelTaskRequest, DeleteTaskPushNotificationConfigRequest, Error, ErrorKind,
    GetExtendedAgentCardRequest, GetTaskPushNotificationConfigRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTasksRequest, SendMessageRequest,
    SubscribeToTaskRequest, TaskId, TaskPushNotificationConfig,
};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method as HttpMethod, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::sync::Arc;

const A2A_JSON: HeaderValue = HeaderValue::from_static("application/a2a+json");

/// An HTTP+JSON operation with its path parameters.
#[derive(Debug, PartialEq, Eq)]
enum Route {
    Send,
    Stream,
    ListTasks,
    GetTask(String),
    Cancel(String),
    Subscribe(String),
    PushConfigs(String),
    PushConfig(String, String),
    ExtendedCard,
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Some(b) = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Matches path segments (without a tenant) to a route.
fn match_route(segments: &[String]) -> Option<Route> {
    let s: Vec<&str> = segments.iter().map(String::as_str).collect();
    Some(match s.as_slice() {
        ["message:send"] => Route::Send,
        ["message:stream"] => Route::Stream,
        ["tasks"] => Route::ListTasks,
        ["extendedAgentCard"] => Route::ExtendedCard,
        ["tasks", id] => {
            if let Some(id) = id.strip_suffix(":cancel") {
                Route::Cancel(id.to_owned())
            } else if let Some(id) = id.strip_suffix(":subscribe") {
                Route::Subscribe(id.to_owned())
            } else {
                Route::GetTask((*id).to_owned())
            }
        }
        ["tasks", id, "pushNotificationConfigs"] => Route::PushConfigs((*id).to_owned()),
        ["tasks", id, "pushNotificationConfigs", cid] => {
            Route::PushConfig((*id).to_owned(), (*cid).to_owned())
        }
        _ => return None,
    })
}

/// Splits a path into an optional tenant and a route.
fn route(path: &str) -> Option<(Option<String>, Route)> {
    let segments: Vec<String> = path
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .map(percent_decode)
        .collect();
    if let Some(r) = match_route(&segments) {
        return Some((None, r));
    }
    let (tenant, rest) = segments.split_first()?;
    match_route(rest).map(|r| (Some(tenant.clone()), r))
}

fn status_response(error: &Error) -> Response {
    let status =
        StatusCode::from_u16(error.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (
        status,
        [(header::CONTENT_TYPE, A2A_JSON)],
        error.to_status_body().to_string(),
    )
        .into_response()
}

fn ok<T: Serialize>(value: &T) -> Response {
    match serde_json::to_vec(value) {
        Ok(bytes) => (StatusCode::OK, [(header::CONTENT_TYPE, A2A_JSON)], bytes).into_response(),
        Err(e) => status_response(&Error::new(
            ErrorKind::Internal,
            format!("the response failed to serialize: {e}"),
        )),
    }
}

fn reply<T: Serialize>(result: Result<T, Error>) -> Response {
    match result {
        Ok(v) => ok(&v),
        Err(e) => status_response(&e),
    }
}

/// Parses a JSON body (an empty body reads as `{}`), then sets the path-bound fields.
fn body_as<T: DeserializeOwned>(bytes: &[u8], path_fields: &[(&str, &str)]) -> Result<T, Error> {
    let mut value: Value = if bytes.iter().all(u8::is_ascii_whitespace) {
        Value::Object(Map::new())
    } else {
        serde_json::from_slice(bytes)
            .map_err(|e| Error::new(ErrorKind::ParseError, format!("Invalid JSON payload: {e}")))?
    };
    let obj = value
        .as_object_mut()
        .ok_or_else(|| Error::new(ErrorKind::InvalidRequest, "The body must be a JSON object"))?;
    for (k, v) in path_fields {
        obj.insert((*k).to_owned(), Value::String((*v).to_owned()));
    }
    a2a_core::strict::from_value(&value)
        .map_err(|e| Error::new(ErrorKind::InvalidParams, format!("Invalid parameters: {e}")))
}

/// Reads query parameters into a JSON object (booleans and repeated keys handled), then sets
/// the path-bound fields.
fn query_as<T: DeserializeOwned>(
    query: Option<&str>,
    path_fields: &[(&str, &str)],
) -> Result<T, Error> {
    let mut obj = Map::new();
    for pair in query
        .unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty())
    {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let k = percent_decode(&k.replace('+', " "));
        let v = percent_decode(&v.replace('+', " "));
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
    for (k, v) in path_fields {
        obj.insert((*k).to_owned(), Value::String((*v).to_owned()));
    }
    serde_json::from_value(Value::Object(obj)).map_err(|e| {
        Error::new(
            ErrorKind::InvalidParams,
            format!("Invalid query parameters: {e}"),
        )
    })
}

/// HTTP 405 for a route that exists with other methods, with `Allow` and a `google.rpc.Status`
/// body whose code is 405 too (gRPC has no such status: `UNIMPLEMENTED` is the nearest).
pub(super) fn method_not_allowed(allowed: &'static str) -> Response {
    let error = Error::new(
        ErrorKind::MethodNotFound,
        format!("This route accepts {allowed}"),
    );
    let mut body = error.to_status_body();
    body["error"]["code"] = StatusCode::METHOD_NOT_ALLOWED.as_u16().into();
    body["error"]["status"] = "UNIMPLEMENTED".into();
    (
        StatusCode::METHOD_NOT_ALLOWED,
        [
            (header::CONTENT_TYPE, A2A_JSON),
            (header::ALLOW, HeaderValue::from_static(allowed)),
        ],
        body.to_string(),
    )
        .into_response()
}

fn stream(state: &AppState, result: Result<crate::EventStream, Error>) -> Response {
    match result {
        Ok(events) => sse::respond(events, state.config.keep_alive, |e: &StreamEvent| {
            serde_json::to_string(&e.event)
        }),
        Err(e) => status_response(&e),
    }
}

pub(crate) async fn serve(State(state): State<Arc<AppState>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let Some((tenant, route)) = route(parts.uri.path()) else {
        return status_response(&Error::new(
            ErrorKind::MethodNotFound,
            format!("No A2A route at {} {}", parts.method, parts.uri.path()),
        ));
    };
    let query = parts.uri.query();
    let cx = match call_context(&parts.headers, query) {
        Ok(mut c) => {
            c.scope.owner = parts
                .extensions
                .get::<crate::auth::Principal>()
                .map(|p| p.0.clone());
            c.with_tenant(tenant.clone())
        }
        Err(e) => return status_response(&e),
    };
    let active = match state.handler.activated_extensions(&cx) {
        Ok(a) => a,
        Err(e) => return status_response(&e),
    };
    let needs_body = parts.method == HttpMethod::POST;
    let bytes = if needs_body {
        match read_body(&parts.headers, body, state.config.body_limit).await {
            Ok(b) => b,
            Err(e) => return status_response(&e),
        }
    } else {
        drop(body);
        Default::default()
    };
    let mut response = dispatch(
        &state,
        &cx,
        &parts.method,
        route,
        tenant.as_deref(),
        query,
        &bytes,
    )
    .await;
    if let Some(v) = extensions_header(&active) {
        response.headers_mut().insert("a2a-extensions", v);
    }
    response
}

/// The path-bound fields of a request: the tenant, if any, and `extra`.
fn fields<'a>(
    tenant: Option<&'a str>,
    extra: &[(&'static str, &'a str)],
) -> Vec<(&'a str, &'a str)> {
    tenant
        .map(|t| ("tenant", t))
        .into_iter()
        .chain(extra.iter().copied())
        .collect()
}

async fn dispatch(
    state: &AppState,
    cx: &CallContext,
    method: &HttpMethod,
    route: Route,
    tenant: Option<&str>,
    query: Option<&str>,
    bytes: &[u8],
) -> Response {
    let h = &state.handler;
    // Each operation's future is boxed, so this future stays small (see the JSON-RPC binding).
    let get = *method == HttpMethod::GET;
    let post = *method == HttpMethod::POST;
    match route {
        Route::Send if post => match body_as::<SendMessageRequest>(bytes, &fields(tenant, &[])) {
            Ok(p) => reply(Box::pin(h.send_message(cx, p)).await),
            Err(e) => status_response(&e),
        },
        Route::Stream if post => match body_as::<SendMessageRequest>(bytes, &fields(tenant, &[])) {
            Ok(p) => stream(state, Box::pin(h.send_streaming_message(cx, p)).await),
            Err(e) => status_response(&e),
        },
        Route::Send | Route::Stream => method_not_allowed("POST"),
        Route::ListTasks if get => {
            match query_as::<ListTasksRequest>(query, &fields(tenant, &[])) {
                Ok(p) => reply(Box::pin(h.list_tasks(cx, p)).await),
                Err(e) => status_response(&e),
            }
        }
        Route::ListTasks => method_not_allowed("GET"),
        Route::GetTask(id) if get => {
            match query_as::<GetTaskRequest>(query, &fields(tenant, &[("id", &id)])) {
                Ok(p) => reply(Box::pin(h.get_task(cx, p)).await),
                Err(e) => status_response(&e),
            }
        }
        Route::GetTask(_) => method_not_allowed("GET"),
        Route::Cancel(id) if post => {
            match body_as::<CancelTaskRequest>(bytes, &fields(tenant, &[("id", &id)])) {
                Ok(p) => reply(Box::pin(h.cancel_task(cx, p)).await),
                Err(e) => status_response(&e),
            }
        }
        Route::Cancel(_) => method_not_allowed("POST"),
        Route::Subscribe(id) if get || post => {
            let mut p = SubscribeToTaskRequest::new(TaskId::new(id));
            p.tenant = tenant.map(str::to_owned);
            stream(state, Box::pin(h.subscribe_to_task(cx, p)).await)
        }
        Route::Subscribe(_) => method_not_allowed("GET, POST"),
        Route::PushConfigs(task) if post => {
            match body_as::<TaskPushNotificationConfig>(
                bytes,
                &fields(tenant, &[("taskId", &task)]),
            ) {
                Ok(p) => reply(Box::pin(h.create_push_config(cx, p)).await),
                Err(e) => status_response(&e),
            }
        }
        Route::PushConfigs(task) if get => {
            match query_as::<ListTaskPushNotificationConfigsRequest>(
                query,
                &fields(tenant, &[("taskId", &task)]),
            ) {
                Ok(p) => reply(Box::pin(h.list_push_configs(cx, p)).await),
                Err(e) => status_response(&e),
            }
        }
        Route::PushConfigs(_) => method_not_allowed("GET, POST"),
        Route::PushConfig(task, id) if get => {
            match query_as::<GetTaskPushNotificationConfigRequest>(
                query,
                &fields(tenant, &[("taskId", &task), ("id", &id)]),
            ) {
                Ok(p) => reply(Box::pin(h.get_push_config(cx, p)).await),
                Err(e) => status_response(&e),
            }
        }
        Route::PushConfig(task, id) if *method == HttpMethod::DELETE => {
            match query_as::<DeleteTaskPushNotificationConfigRequest>(
                query,
                &fields(tenant, &[("taskId", &task), ("id", &id)]),
            ) {
                Ok(p) => reply(Box::pin(h.delete_push_config(cx, p)).await),
                Err(e) => status_response(&e),
            }
        }
        Route::PushConfig(..) => method_not_allowed("GET, DELETE"),
        Route::ExtendedCard if get => {
            match query_as::<GetExtendedAgentCardRequest>(query, &fields(tenant, &[])) {
                Ok(p) => reply(Box::pin(h.get_extended_agent_card(cx, p)).await),
                Err(e) => status_response(&e),
            }
        }
        Route::ExtendedCard => method_not_allowed("GET"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_are_told_apart_by_verb_suffix_and_tenant() {
        assert_eq!(route("/message:send"), Some((None, Route::Send)));
        assert_eq!(
            route("/tasks/t-1"),
            Some((None, Route::GetTask("t-1".into())))
        );
        assert_eq!(
            route("/tasks/t-1:cancel"),
            Some((None, Route::Cancel("t-1".into())))
        );
        assert_eq!(
            route("/tasks/t-1:subscribe"),
            Some((None, Route::Subscribe("t-1".into())))
        );
        assert_eq!(
            route("/acme/tasks"),
            Some((Some("acme".into()), Route::ListTasks))
        );
        assert_eq!(
            route("/acme/tasks/t%201:cancel"),
            Some((Some("acme".into()), Route::Cancel("t 1".into())))
        );
        assert_eq!(
            route("/tasks/t-1/pushNotificationConfigs/c-1"),
            Some((None, Route::PushConfig("t-1".into(), "c-1".into())))
        );
        assert_eq!(
            route("/acme/message:stream"),
            Some((Some("acme".into()), Route::Stream))
        );
        assert_eq!(route("/nothing/here/at/all/x"), None);
    }
}
