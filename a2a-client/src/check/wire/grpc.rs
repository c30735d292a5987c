//! gRPC, raw: tonic calls of a2a-core's protobuf encoding, with the status of a failed call
//! kept as it came (code, details).

use super::read::{stream_response, transport_fault};
use super::{Answer, Call, Exchange, Fault, LINGER, Probe, SHOWN, STREAM_LIMIT, Streamed};
use super::{clip, ends_stream};
use a2a_core::Method;
use a2a_core::proto::{self, BytesCodec};
use bytes::Bytes;
use futures::StreamExt as _;
use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::Value;
use std::fmt::Write as _;
use tokio::time::Instant;
use tonic::metadata::MetadataMap;
use tonic::transport::Channel;

fn metadata(probe: &Probe, call: Call<'_>) -> MetadataMap {
    let mut headers = if call.credentials {
        probe.headers.clone()
    } else {
        HeaderMap::new()
    };
    if let Some(v) = call.version.and_then(|v| HeaderValue::from_str(v).ok()) {
        headers.insert("a2a-version", v);
    }
    MetadataMap::from_headers(headers)
}

fn grpc_exchange(url: &str, path: &str, call: Call<'_>, params: &str) -> Exchange {
    Exchange {
        request: format!(
            "gRPC {url}{path}\na2a-version: {}\n\n{}",
            call.version.unwrap_or("(none)"),
            clip(params, SHOWN)
        ),
        response: String::new(),
    }
}

fn grpc_fault(status: &tonic::Status) -> Fault {
    let grpc = proto::GRPC_CODE_NAMES
        .get(status.code() as usize)
        .copied()
        .unwrap_or("UNKNOWN");
    let (details, shape) = match proto::status_details(status.details()) {
        Ok(d) => (d, None),
        Err(e) => (
            vec![],
            Some(format!("grpc-status-details-bin does not decode: {e}")),
        ),
    };
    Fault {
        http: 200,
        grpc: Some(grpc),
        details,
        shape,
        ..Fault::default()
    }
}

pub(super) async fn call(
    probe: &Probe,
    channel: &Channel,
    url: &str,
    method: Method,
    params: &Value,
    call: Call<'_>,
) -> Answer {
    let (request, response) = proto::messages(method);
    let body = match proto::encode(params, request) {
        Ok(body) => body,
        Err(e) => {
            let text = format!("the checker could not encode {method}: {e}");
            return transport_fault(text, Exchange::default());
        }
    };
    let path = proto::path(method);
    let shown = params.to_string();
    let (result, mut exchange) = raw(probe, channel, url, &path, body.into(), &shown, call).await;
    let result = result.and_then(|bytes| {
        proto::decode::<Value>(&bytes, response).map_err(|e| Fault {
            http: 200,
            grpc: Some("OK"),
            shape: Some(format!("the response does not decode: {e}")),
            ..Fault::default()
        })
    });
    if let Ok(v) = &result {
        exchange.response = format!("gRPC OK\n\n{}", clip(&v.to_string(), SHOWN));
    }
    Answer {
        result,
        exchange,
        http: None,
    }
}

/// One unary gRPC call of raw bytes: the response's bytes, or its status as a fault.
pub(super) async fn raw(
    probe: &Probe,
    channel: &Channel,
    url: &str,
    path: &str,
    body: Bytes,
    shown: &str,
    call: Call<'_>,
) -> (Result<Bytes, Fault>, Exchange) {
    probe.pace().await;
    let mut exchange = grpc_exchange(url, path, call, shown);
    let mut grpc = tonic::client::Grpc::new(channel.clone());
    let request = tonic::Request::from_parts(metadata(probe, call), Default::default(), body);
    let path = http::uri::PathAndQuery::try_from(path).expect("a gRPC path");
    let done = tokio::time::timeout(probe.timeout, async {
        grpc.ready()
            .await
            .map_err(|e| tonic::Status::unavailable(e.to_string()))?;
        grpc.unary(request, path, BytesCodec).await
    })
    .await;
    let result = match done {
        Err(_) => Err(Fault {
            shape: Some(format!("no answer within {:?}", probe.timeout)),
            ..Fault::default()
        }),
        Ok(Ok(response)) => Ok(response.into_inner()),
        Ok(Err(status)) => Err(grpc_fault(&status)),
    };
    exchange.response = match &result {
        Ok(_) => "gRPC OK".to_owned(),
        Err(f) => format!("{}\n{}", f.describe(), f.shape.as_deref().unwrap_or("")),
    };
    (result, exchange)
}

pub(super) async fn stream(
    probe: &Probe,
    channel: &Channel,
    url: &str,
    method: Method,
    params: &Value,
    call: Call<'_>,
) -> Streamed {
    let path = proto::path(method);
    let mut streamed = Streamed {
        exchange: grpc_exchange(url, &path, call, &params.to_string()),
        ..Streamed::default()
    };
    let (request_type, event_type) = proto::messages(method);
    let body = match proto::encode(params, request_type) {
        Ok(b) => b,
        Err(e) => {
            streamed.broken = Some(format!("the checker could not encode {method}: {e}"));
            return streamed;
        }
    };
    probe.pace().await;
    let mut grpc = tonic::client::Grpc::new(channel.clone());
    let request =
        tonic::Request::from_parts(metadata(probe, call), Default::default(), Bytes::from(body));
    let path = http::uri::PathAndQuery::try_from(path).expect("a gRPC path");
    let opened = tokio::time::timeout(probe.timeout, async {
        grpc.ready()
            .await
            .map_err(|e| tonic::Status::unavailable(e.to_string()))?;
        grpc.server_streaming(request, path, BytesCodec).await
    })
    .await;
    let mut messages = match opened {
        Err(_) => {
            streamed.broken = Some(format!("no answer within {:?}", probe.timeout));
            return streamed;
        }
        Ok(Err(status)) => {
            let fault = grpc_fault(&status);
            streamed.exchange.response = fault.describe();
            streamed.opened = Some(fault);
            return streamed;
        }
        Ok(Ok(response)) => response.into_inner(),
    };
    let mut log = "gRPC stream\n".to_owned();
    let mut deadline = Instant::now() + STREAM_LIMIT;
    loop {
        match tokio::time::timeout_at(deadline, messages.next()).await {
            Err(_) => break,
            Ok(None) => {
                streamed.closed = true;
                break;
            }
            Ok(Some(Err(status))) => {
                let fault = grpc_fault(&status);
                if streamed.events.is_empty() {
                    streamed.exchange.response = fault.describe();
                    streamed.opened = Some(fault);
                    return streamed;
                }
                streamed.broken = Some(fault.describe());
                streamed.closed = true;
                break;
            }
            Ok(Some(Ok(bytes))) => {
                let event = proto::decode::<Value>(&bytes, event_type)
                    .map_err(|e| format!("an event does not decode: {e}"))
                    .and_then(|v| stream_response(&v));
                if let Ok(v) = &event {
                    if log.len() < SHOWN * 2 {
                        let _ = writeln!(log, "{}", clip(&v.to_string(), 400));
                    }
                    if ends_stream(v) {
                        deadline = deadline.min(Instant::now() + LINGER);
                    }
                }
                streamed.events.push(event);
            }
        }
    }
    streamed.exchange.response = log;
    streamed
}
