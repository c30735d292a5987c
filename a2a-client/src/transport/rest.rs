//! The HTTP+JSON (REST) binding, v1.0: `POST /message:send`, `GET /tasks/{id}`, …, with the
//! interface's tenant as a leading path segment.

use super::{
    CallOptions, ItemStream, Outgoing, Payload, StreamItem, Transport, error_from_response,
    stream_headers,
};
use crate::limits::read_body;
use crate::{Error, Limit, Limits, sse};
use a2a_core::http_json::{self, HttpMethod, Rest, Route};
use async_trait::async_trait;
use futures::StreamExt as _;
use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, HeaderValue};
use serde_json::{Map, Value};

/// HTTP+JSON over `base` (paths are appended to it).
#[derive(Debug)]
pub struct RestTransport {
    http: reqwest::Client,
    base: String,
    limits: Limits,
    /// The `A2A-Version` sent.
    version: &'static str,
}

impl RestTransport {
    /// A transport for the interface URL `base`, reading within the default [`Limits`].
    pub fn new(http: reqwest::Client, base: reqwest::Url) -> Self {
        Self {
            http,
            base: base.as_str().trim_end_matches('/').to_owned(),
            limits: Limits::default(),
            version: a2a_core::PROTOCOL_VERSION,
        }
    }

    /// Reads answers and streams within `limits`.
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Speaks A2A 1.1 (`A2A-Version: 1.1`: answers carry task generations).
    #[must_use]
    pub fn v1_1(mut self) -> Self {
        self.version = a2a_core::PROTOCOL_VERSION_1_1;
        self
    }
}

fn take_str(o: &mut Map<String, Value>, key: &str) -> String {
    match o.remove(key) {
        Some(Value::String(s)) => s,
        _ => String::new(),
    }
}

/// A call as a2a-core's route table lays it out: the path (the tenant and the path's fields
/// taken out of `params`), and the rest of the params as a body or as query pairs.
pub(crate) fn request_parts(
    route: &Route,
    params: Value,
) -> (String, Option<Value>, Vec<(String, String)>) {
    let mut o = match params {
        Value::Object(o) => o,
        _ => Map::new(),
    };
    let tenant = take_str(&mut o, "tenant");
    let path = route.path(Some(&tenant), |field| take_str(&mut o, field));
    match route.rest {
        Rest::Body => (path, Some(Value::Object(o)), vec![]),
        Rest::Query => {
            let query = o
                .into_iter()
                .filter_map(|(k, v)| match v {
                    Value::String(s) => Some((k, s)),
                    Value::Null => None,
                    other => Some((k, other.to_string())),
                })
                .collect();
            (path, None, query)
        }
        Rest::None => (path, None, vec![]),
    }
}

impl RestTransport {
    async fn send(
        &self,
        request: &dyn Outgoing,
        options: &CallOptions,
        streaming: bool,
    ) -> Result<reqwest::Response, Error> {
        let method = request.method();
        let mut route = http_json::route(method);
        let mut others = http_json::routes(method).skip(1);
        let (path, body, mut query) = request_parts(route, Value::Object(request.json_object()?));
        query.extend(options.query.iter().cloned());
        let url = format!("{}{path}", self.base);
        let build = |route: &Route| {
            let verb = match route.http_method {
                HttpMethod::Get => reqwest::Method::GET,
                HttpMethod::Post => reqwest::Method::POST,
                HttpMethod::Delete => reqwest::Method::DELETE,
            };
            let mut request = self
                .http
                .request(verb, &url)
                .headers(options.headers.clone())
                .header("A2A-Version", self.version)
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
                request = stream_headers(request, options);
            }
            request
        };
        let mut response = build(route).send().await?;
        // An operation with more than one route (SubscribeToTask: GET in the proto, POST in the
        // spec text) is retried with the next on 405.
        while response.status() == StatusCode::METHOD_NOT_ALLOWED {
            let Some(next) = others.next() else { break };
            route = next;
            response = build(route).send().await?;
        }
        if !response.status().is_success() {
            return Err(error_from_response(response, self.limits.response_bytes).await);
        }
        Ok(response)
    }
}

#[async_trait]
impl Transport for RestTransport {
    async fn unary(&self, request: &dyn Outgoing, options: &CallOptions) -> Result<Payload, Error> {
        let response = self.send(request, options, false).await?;
        let max = self.limits.response_bytes;
        Ok(Payload::Json(
            read_body(response, Limit::Response, max).await?,
        ))
    }

    async fn stream(
        &self,
        request: &dyn Outgoing,
        options: &CallOptions,
    ) -> Result<ItemStream, Error> {
        let response = self.send(request, options, true).await?;
        Ok(sse::events(response, &self.limits)
            .map(|e| {
                let e = e?;
                if e.event.as_deref() == Some("error") {
                    let v: Value = serde_json::from_str(&e.data)?;
                    return Err(match a2a_core::Error::from_status_body(&v) {
                        Some(error) => Error::Remote { error, status: 200 },
                        None => Error::decode(format!("error event: {}", e.data)),
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
        (a2a_core::BINDING_HTTP_JSON, self.version)
    }
}
