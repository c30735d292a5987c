//! An operation as an HTTP request in each binding (JSON-RPC body, or REST path, query and
//! body), and the answer read as JSON.

use crate::{Binding, Op, Reply, TestServer, within};
use reqwest::header::CONTENT_TYPE;
use serde_json::{Map, Value, json};

/// Percent-encodes a path segment.
pub fn encode_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn query_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl TestServer {
    /// Builds the HTTP request of `op` in `binding`: JSON-RPC puts everything in `params`;
    /// REST moves `tenant` to the path prefix, ids to the path, GET parameters to the query.
    /// Sends `A2A-Version: 1.0` unless `headers` name a version.
    pub fn request(
        &self,
        binding: Binding,
        op: Op,
        params: &Value,
        headers: &[(&str, &str)],
    ) -> (reqwest::RequestBuilder, Option<Value>) {
        self.request_ext(binding, op, params, headers, &[])
    }

    /// Like [`Self::request`], with extra URL query parameters (a version there stands for the
    /// header).
    pub fn request_ext(
        &self,
        binding: Binding,
        op: Op,
        params: &Value,
        headers: &[(&str, &str)],
        query: &[(&str, &str)],
    ) -> (reqwest::RequestBuilder, Option<Value>) {
        let (mut rb, rpc_id) = match binding {
            Binding::JsonRpc => {
                let id = self.next_id();
                let body =
                    json!({"jsonrpc": "2.0", "id": id, "method": op.method(), "params": params});
                (self.http.post(self.url("/")).json(&body), Some(id))
            }
            Binding::Rest => (self.rest_request(op, params), None),
            Binding::Grpc => panic!("gRPC calls have no HTTP request: use call or open_stream"),
        };
        let versioned = query
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("a2a-version"));
        let headers = if versioned {
            headers.to_vec()
        } else {
            with_version(headers)
        };
        for (k, v) in headers {
            rb = rb.header(k, v);
        }
        if !query.is_empty() {
            rb = rb.query(query);
        }
        (rb, rpc_id)
    }

    fn rest_request(&self, op: Op, params: &Value) -> reqwest::RequestBuilder {
        let mut rest: Map<String, Value> = params.as_object().cloned().unwrap_or_default();
        let prefix = match rest.remove("tenant") {
            Some(Value::String(t)) => format!("/{}", encode_segment(&t)),
            _ => String::new(),
        };
        let mut take = |k: &str| -> String {
            match rest.remove(k) {
                Some(Value::String(s)) => encode_segment(&s),
                Some(other) => panic!("`{k}` must be a string, got {other}"),
                None => panic!("REST {op:?} needs `{k}` in params"),
            }
        };
        enum Send {
            Body,
            Query,
        }
        let (method, path, send) = match op {
            Op::SendMessage => (
                reqwest::Method::POST,
                "/message:send".to_owned(),
                Send::Body,
            ),
            Op::SendStreamingMessage => (
                reqwest::Method::POST,
                "/message:stream".to_owned(),
                Send::Body,
            ),
            Op::GetTask => (
                reqwest::Method::GET,
                format!("/tasks/{}", take("id")),
                Send::Query,
            ),
            Op::ListTasks => (reqwest::Method::GET, "/tasks".to_owned(), Send::Query),
            Op::CancelTask => (
                reqwest::Method::POST,
                format!("/tasks/{}:cancel", take("id")),
                Send::Body,
            ),
            Op::SubscribeToTask => (
                reqwest::Method::GET,
                format!("/tasks/{}:subscribe", take("id")),
                Send::Query,
            ),
            Op::CreatePushConfig => (
                reqwest::Method::POST,
                format!("/tasks/{}/pushNotificationConfigs", take("taskId")),
                Send::Body,
            ),
            Op::GetPushConfig => {
                let task = take("taskId");
                (
                    reqwest::Method::GET,
                    format!("/tasks/{task}/pushNotificationConfigs/{}", take("id")),
                    Send::Query,
                )
            }
            Op::ListPushConfigs => (
                reqwest::Method::GET,
                format!("/tasks/{}/pushNotificationConfigs", take("taskId")),
                Send::Query,
            ),
            Op::DeletePushConfig => {
                let task = take("taskId");
                (
                    reqwest::Method::DELETE,
                    format!("/tasks/{task}/pushNotificationConfigs/{}", take("id")),
                    Send::Query,
                )
            }
            Op::GetExtendedAgentCard => (
                reqwest::Method::GET,
                "/extendedAgentCard".to_owned(),
                Send::Query,
            ),
        };
        let rb = self
            .http
            .request(method, self.url(&format!("{prefix}{path}")));
        match send {
            Send::Body => rb
                .header(CONTENT_TYPE, "application/a2a+json")
                .body(Value::Object(rest).to_string()),
            Send::Query => {
                let pairs: Vec<(String, String)> = rest
                    .iter()
                    .map(|(k, v)| (k.clone(), query_value(v)))
                    .collect();
                rb.query(&pairs)
            }
        }
    }
}

/// `headers` with `A2A-Version: 1.0` unless they name a version: every v1.0 client sends it,
/// and a JSON-RPC request without it is a v0.3 request (spec §3.6.2).
pub fn with_version<'a>(headers: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut all = headers.to_vec();
    if !headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("a2a-version"))
    {
        all.push(("A2A-Version", "1.0"));
    }
    all
}

/// Sends a request and reads the answer as JSON.
pub async fn send_json(rb: reqwest::RequestBuilder, what: &str) -> Reply {
    let response = within(what, rb.send()).await.expect("the request is sent");
    reply_of(response, what).await
}

pub(crate) async fn reply_of(response: reqwest::Response, what: &str) -> Reply {
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let bytes = within(what, response.bytes())
        .await
        .expect("the body is read");
    let body = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes).unwrap_or_else(|e| {
            panic!(
                "{what}: the body is not JSON ({e}): {:?}",
                String::from_utf8_lossy(&bytes)
            )
        })
    };
    Reply {
        binding: Binding::JsonRpc,
        status,
        headers,
        body,
        rpc_id: None,
        grpc: None,
    }
}
