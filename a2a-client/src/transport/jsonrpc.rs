//! JSON-RPC 2.0 over HTTP POST, in the v1.0 or the v0.3 dialect.

use super::{CallOptions, ItemStream, StreamItem, Transport, error_from_response, stream_headers};
use crate::{Error, sse};
use a2a_core::jsonrpc::{Id, Request, Response};
use a2a_core::v03;
use a2a_core::{Method, StreamResponse};
use async_trait::async_trait;
use futures::StreamExt as _;
use reqwest::header::{CONTENT_TYPE, HeaderValue};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicU64, Ordering};

/// JSON-RPC over HTTP. `v03` selects the v0.3 method names and shapes.
#[derive(Debug)]
pub struct JsonRpcTransport {
    http: reqwest::Client,
    url: reqwest::Url,
    v03: bool,
    next_id: AtomicU64,
}

impl JsonRpcTransport {
    /// A v1.0 JSON-RPC transport posting to `url`.
    pub fn new(http: reqwest::Client, url: reqwest::Url) -> Self {
        Self {
            http,
            url,
            v03: false,
            next_id: AtomicU64::new(1),
        }
    }

    /// A v0.3 JSON-RPC transport posting to `url`.
    pub fn new_v03(http: reqwest::Client, url: reqwest::Url) -> Self {
        Self {
            v03: true,
            ..Self::new(http, url)
        }
    }

    fn encode(&self, method: Method, params: Value) -> Result<(String, Value), Error> {
        if !self.v03 {
            return Ok((method.name().to_owned(), params));
        }
        let name = method.v03_name().ok_or_else(|| {
            Error::NoCompatibleInterface(format!("{method} does not exist in A2A v0.3"))
        })?;
        let p = |v: &Value, k: &str| v.get(k).cloned().unwrap_or(Value::Null);
        let encoded = match method {
            Method::SendMessage | Method::SendStreamingMessage => {
                v03::encode_send_params(&serde_json::from_value(params)?)
            }
            Method::GetTask => {
                let mut o = json!({"id": p(&params, "id")});
                if let Some(n) = params.get("historyLength") {
                    o["historyLength"] = n.clone();
                }
                o
            }
            Method::CancelTask | Method::SubscribeToTask => json!({"id": p(&params, "id")}),
            Method::CreateTaskPushNotificationConfig => {
                v03::encode_push_config(&serde_json::from_value(params)?)
            }
            Method::GetTaskPushNotificationConfig | Method::DeleteTaskPushNotificationConfig => {
                json!({"id": p(&params, "taskId"), "pushNotificationConfigId": p(&params, "id")})
            }
            Method::ListTaskPushNotificationConfigs => json!({"id": p(&params, "taskId")}),
            _ => json!({}),
        };
        Ok((name.to_owned(), encoded))
    }

    fn decode(&self, method: Method, result: Value) -> Result<Value, Error> {
        if !self.v03 {
            return Ok(result);
        }
        let bad = |e: a2a_core::Error| Error::Decode(e.message);
        Ok(match method {
            Method::SendMessage => {
                serde_json::to_value(v03::decode_send_response(&result).map_err(bad)?)?
            }
            Method::GetTask | Method::CancelTask => {
                serde_json::to_value(v03::decode_task(&result, "result").map_err(bad)?)?
            }
            Method::CreateTaskPushNotificationConfig | Method::GetTaskPushNotificationConfig => {
                serde_json::to_value(v03::decode_push_config(&result, "result").map_err(bad)?)?
            }
            Method::ListTaskPushNotificationConfigs => {
                let configs = result
                    .as_array()
                    .map(|items| {
                        items
                            .iter()
                            .map(|c| v03::decode_push_config(c, "result"))
                            .collect::<Result<Vec<_>, _>>()
                    })
                    .transpose()
                    .map_err(bad)?
                    .unwrap_or_default();
                json!({"configs": configs, "nextPageToken": ""})
            }
            Method::DeleteTaskPushNotificationConfig => json!({}),
            Method::GetExtendedAgentCard => {
                serde_json::to_value(v03::decode_card(&result).map_err(bad)?)?
            }
            _ => result,
        })
    }

    fn decode_event(&self, data: &str) -> Result<StreamResponse, Error> {
        let v = read_response(data.as_bytes(), 200)?;
        if self.v03 {
            v03::decode_stream_event(&v).map_err(|e| Error::Decode(e.message))
        } else {
            Ok(serde_json::from_value(v)?)
        }
    }

    async fn post(
        &self,
        method: Method,
        params: Value,
        options: &CallOptions,
        streaming: bool,
    ) -> Result<reqwest::Response, Error> {
        let (name, params) = self.encode(method, params)?;
        let id = Id::from(self.next_id.fetch_add(1, Ordering::Relaxed) as i64);
        let body = Request::new(id, name, params);
        let mut request = self
            .http
            .post(self.url.clone())
            .headers(options.headers.clone())
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .query(&options.query)
            .body(serde_json::to_vec(&body)?);
        if !self.v03 {
            request = request.header("A2A-Version", "1.0");
        }
        if streaming {
            request = stream_headers(request, options);
        }
        let response = request.send().await?;
        if !response.status().is_success() {
            return Err(error_from_response(response).await);
        }
        Ok(response)
    }
}

/// Reads a JSON-RPC response: its result, or its error as [`Error::Remote`] with the HTTP
/// status it came with.
fn read_response(bytes: &[u8], status: u16) -> Result<Value, Error> {
    serde_json::from_slice::<Response<Value>>(bytes)?
        .into_result()
        .map_err(|error| Error::Remote { error, status })
}

#[async_trait]
impl Transport for JsonRpcTransport {
    async fn call(
        &self,
        method: Method,
        params: Value,
        options: &CallOptions,
    ) -> Result<Value, Error> {
        let response = self.post(method, params, options, false).await?;
        let status = response.status().as_u16();
        let bytes = response.bytes().await?;
        self.decode(method, read_response(&bytes, status)?)
    }

    async fn stream(
        &self,
        method: Method,
        params: Value,
        options: &CallOptions,
    ) -> Result<ItemStream, Error> {
        let response = self.post(method, params, options, true).await?;
        let is_sse = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !is_sse {
            // An error answered before the stream started.
            let status = response.status().as_u16();
            let bytes = response.bytes().await?;
            read_response(&bytes, status)?;
            return Err(Error::Decode(
                "expected an event stream, got a plain result".to_owned(),
            ));
        }
        let this = Self {
            http: self.http.clone(),
            url: self.url.clone(),
            v03: self.v03,
            next_id: AtomicU64::new(0),
        };
        Ok(sse::events(response)
            .map(move |e| {
                let e = e?;
                Ok(StreamItem {
                    event: this.decode_event(&e.data)?,
                    id: e.id,
                })
            })
            .boxed())
    }

    fn binding(&self) -> (&'static str, &'static str) {
        (
            a2a_core::BINDING_JSONRPC,
            if self.v03 {
                a2a_core::PROTOCOL_VERSION_V03
            } else {
                a2a_core::PROTOCOL_VERSION
            },
        )
    }
}
