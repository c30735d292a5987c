//! What a server received: every request, recorded before anything else sees it, and read
//! back whatever the binding (the operation, its parameters, its headers).

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::HeaderMap;
use axum::middleware::{self, Next};
use axum::response::Response;
use serde_json::Value;
use std::sync::{Arc, Mutex};

/// One request as a server received it.
#[derive(Clone, Debug)]
pub(crate) struct Seen {
    pub(crate) method: String,
    pub(crate) path: String,
    pub(crate) query: Option<String>,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

impl Seen {
    /// Whether this is a gRPC call.
    pub(crate) fn is_grpc(&self) -> bool {
        self.header("content-type")
            .is_some_and(|c| c.starts_with("application/grpc"))
    }

    /// The body as JSON (`Null` when empty or not JSON); a gRPC call's message, decoded.
    pub(crate) fn json(&self) -> Value {
        if self.is_grpc() {
            let method = a2a_core::proto::method_of_path(&self.path);
            return match (method, self.body.get(5..)) {
                (Some(m), Some(message)) => {
                    a2a_core::proto::decode(message, a2a_core::proto::messages(m).0)
                        .unwrap_or(Value::Null)
                }
                _ => Value::Null,
            };
        }
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The JSON-RPC method, if this is a JSON-RPC call (the method of a gRPC call).
    pub(crate) fn rpc_method(&self) -> Option<String> {
        if self.is_grpc() {
            return a2a_core::proto::method_of_path(&self.path).map(|m| m.name().to_owned());
        }
        self.json()
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_owned)
    }

    /// A header's value.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// A query parameter's (raw) value.
    pub(crate) fn query_param(&self, name: &str) -> Option<&str> {
        self.query
            .as_deref()?
            .split('&')
            .filter_map(|kv| kv.split_once('='))
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v)
    }

    /// Whether this is an A2A call (not a card fetch).
    pub(crate) fn is_call(&self) -> bool {
        !self.path.starts_with("/.well-known/")
    }

    /// The A2A operation, whatever the binding: the JSON-RPC method, or the v1.0 method name
    /// of an HTTP+JSON route (with or without a tenant segment); else `VERB /path`.
    pub(crate) fn op(&self) -> String {
        if let Some(m) = self.rpc_method() {
            return m;
        }
        let segments: Vec<&str> = self.path.split('/').filter(|s| !s.is_empty()).collect();
        let name = |s: &[&str]| -> Option<&'static str> {
            let get = self.method == "GET";
            Some(match s {
                ["message:send"] => "SendMessage",
                ["message:stream"] => "SendStreamingMessage",
                ["tasks"] => "ListTasks",
                ["extendedAgentCard"] => "GetExtendedAgentCard",
                ["tasks", id] if id.ends_with(":cancel") => "CancelTask",
                ["tasks", id] if id.ends_with(":subscribe") => "SubscribeToTask",
                ["tasks", _] => "GetTask",
                ["tasks", _, "pushNotificationConfigs"] if get => "ListTaskPushNotificationConfigs",
                ["tasks", _, "pushNotificationConfigs"] => "CreateTaskPushNotificationConfig",
                ["tasks", _, "pushNotificationConfigs", _] if get => {
                    "GetTaskPushNotificationConfig"
                }
                ["tasks", _, "pushNotificationConfigs", _] => "DeleteTaskPushNotificationConfig",
                _ => return None,
            })
        };
        name(&segments)
            .or_else(|| segments.split_first().and_then(|(_, rest)| name(rest)))
            .map_or_else(|| format!("{} {}", self.method, self.path), str::to_owned)
    }

    /// The request's parameters: the JSON-RPC `params`, or the HTTP+JSON body.
    pub(crate) fn params(&self) -> Value {
        let json = self.json();
        if json.get("jsonrpc").is_some() {
            json.get("params").cloned().unwrap_or(Value::Null)
        } else {
            json
        }
    }
}

/// Everything a server received, in order.
#[derive(Clone, Debug, Default)]
pub(crate) struct Recorder(Arc<Mutex<Vec<Seen>>>);

impl Recorder {
    /// Wraps `router` so that every request is recorded (before anything else sees it).
    pub(crate) fn wrap(&self, router: Router) -> Router {
        router.layer(middleware::from_fn_with_state(self.clone(), record))
    }

    /// Every request so far.
    pub(crate) fn all(&self) -> Vec<Seen> {
        self.0.lock().expect("recorder").clone()
    }

    /// Every A2A call so far (card fetches left out).
    pub(crate) fn calls(&self) -> Vec<Seen> {
        self.all().into_iter().filter(Seen::is_call).collect()
    }

    /// The calls of operation `op` (see [`Seen::op`]).
    pub(crate) fn calls_of(&self, op: &str) -> Vec<Seen> {
        self.calls().into_iter().filter(|s| s.op() == op).collect()
    }

    /// Forgets everything recorded so far.
    pub(crate) fn clear(&self) {
        self.0.lock().expect("recorder").clear();
    }
}

async fn record(State(recorder): State<Recorder>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    recorder.0.lock().expect("recorder").push(Seen {
        method: parts.method.to_string(),
        path: parts.uri.path().to_owned(),
        query: parts.uri.query().map(str::to_owned),
        headers: parts.headers.clone(),
        body: body.clone(),
    });
    next.run(Request::from_parts(parts, Body::from(body))).await
}
