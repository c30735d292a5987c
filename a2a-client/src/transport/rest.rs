//! The HTTP+JSON (REST) binding, v1.0: `POST /message:send`, `GET /tasks/{id}`, …, with the
//! interface's tenant as a leading path segment.

use super::{CallOptions, ItemStream, StreamItem, Transport, error_from_response};
use crate::{Error, sse};
use a2a_core::Method;
use async_trait::async_trait;
use futures::StreamExt as _;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use reqwest::{Method as HttpMethod, StatusCode};
use serde_json::{Map, Value};

/// HTTP+JSON over `base` (paths are appended to it).
#[derive(Debug)]
pub struct RestTransport {
    http: reqwest::Client,
    base: String,
}

impl RestTransport {
    /// A transport for the interface URL `base`.
    pub fn new(http: reqwest::Client, base: reqwest::Url) -> Self {
        Self {
            http,
            base: base.as_str().trim_end_matches('/').to_owned(),
        }
    }
}

fn take_str(o: &mut Map<String, Value>, key: &str) -> String {
    match o.remove(key) {
        Some(Value::String(s)) => s,
        _ => String::new(),
    }
}

fn enc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The HTTP method, path and body-or-query of a call.
fn route(
    method: Method,
    params: Value,
) -> (HttpMethod, String, Option<Value>, Vec<(String, String)>) {
    let mut o = match params {
        Value::Object(o) => o,
        _ => Map::new(),
    };
    let tenant = take_str(&mut o, "tenant");
    let prefix = if tenant.is_empty() {
        String::new()
    } else {
        format!("/{}", enc(&tenant))
    };
    let query = |o: Map<String, Value>| -> Vec<(String, String)> {
        o.into_iter()
            .filter_map(|(k, v)| match v {
                Value::String(s) => Some((k, s)),
                Value::Null => None,
                other => Some((k, other.to_string())),
            })
            .collect()
    };
    let (verb, path, body, q) = match method {
        Method::SendMessage => (
            HttpMethod::POST,
            "/message:send".to_owned(),
            Some(o),
            vec![],
        ),
        Method::SendStreamingMessage => (
            HttpMethod::POST,
            "/message:stream".to_owned(),
            Some(o),
            vec![],
        ),
        Method::GetTask => {
            let id = take_str(&mut o, "id");
            (
                HttpMethod::GET,
                format!("/tasks/{}", enc(&id)),
                None,
                query(o),
            )
        }
        Method::ListTasks => (HttpMethod::GET, "/tasks".to_owned(), None, query(o)),
        Method::CancelTask => {
            let id = take_str(&mut o, "id");
            (
                HttpMethod::POST,
                format!("/tasks/{}:cancel", enc(&id)),
                Some(o),
                vec![],
            )
        }
        Method::SubscribeToTask => {
            let id = take_str(&mut o, "id");
            (
                HttpMethod::GET,
                format!("/tasks/{}:subscribe", enc(&id)),
                None,
                vec![],
            )
        }
        Method::CreateTaskPushNotificationConfig => {
            let task = take_str(&mut o, "taskId");
            (
                HttpMethod::POST,
                format!("/tasks/{}/pushNotificationConfigs", enc(&task)),
                Some(o),
                vec![],
            )
        }
        Method::ListTaskPushNotificationConfigs => {
            let task = take_str(&mut o, "taskId");
            (
                HttpMethod::GET,
                format!("/tasks/{}/pushNotificationConfigs", enc(&task)),
                None,
                query(o),
            )
        }
        Method::GetTaskPushNotificationConfig | Method::DeleteTaskPushNotificationConfig => {
            let task = take_str(&mut o, "taskId");
            let id = take_str(&mut o, "id");
            let verb = if method == Method::GetTaskPushNotificationConfig {
                HttpMethod::GET
            } else {
                HttpMethod::DELETE
            };
            (
                verb,
                format!("/tasks/{}/pushNotificationConfigs/{}", enc(&task), enc(&id)),
                None,
                query(o),
            )
        }
        _ => (
            HttpMethod::GET,
            "/extendedAgentCard".to_owned(),
            None,
            vec![],
        ),
    };
    (verb, format!("{prefix}{path}"), body.map(Value::Object), q)
}

impl RestTransport {
    async fn send(
        &self,
        method: Method,
        params: Value,
        options: &CallOptions,
        streaming: bool,
    ) -> Result<reqwest::Response, Error> {
        let (verb, path, body, mut query) = route(method, params);
        query.extend(options.query.iter().cloned());
        let url = format!("{}{path}", self.base);
        let build = |verb: HttpMethod| {
            let mut request = self
                .http
                .request(verb, &url)
                .headers(options.headers.clone())
                .header("A2A-Version", "1.0")
                .query(&query);
            if let Some(b) = &body {
                request = request
                    .header(
                        CONTENT_TYPE,
                        HeaderValue::from_static("application/a2a+json"),
                    )
                    .body(b.to_string());
            }
            if streaming {
                request = request.header(ACCEPT, "text/event-stream");
                if let Some(last) = &options.last_event_id {
                    request = request.header("Last-Event-ID", last.as_str());
                }
            }
            request
        };
        let mut response = build(verb.clone()).send().await?;
        // SubscribeToTask is GET in the proto, POST in the spec text: retry as POST on 405.
        if response.status() == StatusCode::METHOD_NOT_ALLOWED && method == Method::SubscribeToTask
        {
            response = build(HttpMethod::POST).send().await?;
        }
        if !response.status().is_success() {
            return Err(error_from_response(response).await);
        }
        Ok(response)
    }
}

#[async_trait]
impl Transport for RestTransport {
    async fn call(
        &self,
        method: Method,
        params: Value,
        options: &CallOptions,
    ) -> Result<Value, Error> {
        let response = self.send(method, params, options, false).await?;
        let bytes = response.bytes().await?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(Value::Object(Map::new()));
        }
        Ok(serde_json::from_slice(&bytes)?)
    }

    async fn stream(
        &self,
        method: Method,
        params: Value,
        options: &CallOptions,
    ) -> Result<ItemStream, Error> {
        let response = self.send(method, params, options, true).await?;
        Ok(sse::events(response)
            .map(|e| {
                let e = e?;
                if e.event.as_deref() == Some("error") {
                    let v: Value = serde_json::from_str(&e.data)?;
                    return Err(match a2a_core::Error::from_status_body(&v) {
                        Some(error) => Error::Remote { error, status: 200 },
                        None => Error::Decode(format!("error event: {}", e.data)),
                    });
                }
                Ok(StreamItem {
                    event: serde_json::from_str(&e.data)?,
                    id: e.id,
                })
            })
            .boxed())
    }

    fn binding(&self) -> (&'static str, &'static str) {
        (a2a_core::BINDING_HTTP_JSON, a2a_core::PROTOCOL_VERSION)
    }
}
