//! Reading what the HTTP bindings answered: JSON-RPC responses and google.rpc.Status bodies,
//! and the events of their streams, each with what is wrong with its form, if anything.

use super::{Answer, Exchange, Fault, HttpAnswer, clip};
use crate::sse::SseEvent;
use serde_json::{Value, json};

pub(super) fn transport_fault(text: String, exchange: Exchange) -> Answer {
    Answer {
        result: Err(Fault {
            shape: Some(format!("no answer: {text}")),
            ..Fault::default()
        }),
        exchange,
        http: None,
    }
}

/// Reads a JSON-RPC answer: `result`, or `error` (with what is wrong with the envelope).
pub(in crate::check) fn json_rpc_answer(
    sent: Result<HttpAnswer, (String, Exchange)>,
    id: &str,
) -> Answer {
    let answer = match sent {
        Ok(a) => a,
        Err((text, exchange)) => return transport_fault(text, exchange),
    };
    let fault = |shape: String| Fault {
        http: answer.status,
        shape: Some(shape),
        ..Fault::default()
    };
    let result = match answer.json() {
        None => Err(fault(format!(
            "HTTP {} with a body that is not JSON",
            answer.status
        ))),
        Some(v) => match (v.get("result"), v.get("error")) {
            (Some(result), None) if answer.status == 200 => {
                if v["jsonrpc"] != "2.0" || (!id.is_empty() && v["id"] != id) {
                    Err(fault(format!(
                        "the response's envelope is wrong (jsonrpc {}, id {} for request {id:?})",
                        v["jsonrpc"], v["id"]
                    )))
                } else {
                    Ok(result.clone())
                }
            }
            (None, Some(error)) => {
                let mut shape = None;
                if answer.status != 200 {
                    shape = Some(format!(
                        "a JSON-RPC error with HTTP {} (the binding answers errors with 200)",
                        answer.status
                    ));
                } else if v["jsonrpc"] != "2.0" {
                    shape = Some(format!("`jsonrpc` is {}", v["jsonrpc"]));
                } else if !id.is_empty() && v["id"] != id {
                    shape = Some(format!("`id` is {} for request {id:?}", v["id"]));
                }
                Err(Fault {
                    http: answer.status,
                    code: error["code"].as_i64(),
                    details: error["data"].as_array().cloned().unwrap_or_default(),
                    shape,
                    ..Fault::default()
                })
            }
            _ => Err(fault(format!(
                "HTTP {} with neither `result` nor `error` (or both)",
                answer.status
            ))),
        },
    };
    Answer {
        result,
        exchange: answer.exchange.clone(),
        http: Some(answer),
    }
}

/// Reads an HTTP+JSON answer: a 2xx body, or a google.rpc.Status error body.
pub(super) fn rest_answer(sent: Result<HttpAnswer, (String, Exchange)>) -> Answer {
    let answer = match sent {
        Ok(a) => a,
        Err((text, exchange)) => return transport_fault(text, exchange),
    };
    let result = if (200..300).contains(&answer.status) {
        if answer.body.iter().all(u8::is_ascii_whitespace) {
            Ok(json!({}))
        } else {
            answer.json().ok_or_else(|| Fault {
                http: answer.status,
                shape: Some("a success whose body is not JSON".to_owned()),
                ..Fault::default()
            })
        }
    } else {
        let body = answer.json();
        let status = body.as_ref().and_then(|b| b.get("error"));
        let shape = match status {
            None => {
                Some("the error body is not a google.rpc.Status (`{\"error\": {…}}`)".to_owned())
            }
            Some(s) if s["code"].as_u64() != Some(u64::from(answer.status)) => Some(format!(
                "`error.code` is {} for HTTP {}",
                s["code"], answer.status
            )),
            Some(_) => None,
        };
        Err(Fault {
            http: answer.status,
            details: status
                .and_then(|s| s["details"].as_array().cloned())
                .unwrap_or_default(),
            shape,
            ..Fault::default()
        })
    };
    Answer {
        result,
        exchange: answer.exchange.clone(),
        http: Some(answer),
    }
}

pub(super) fn json_rpc_event(e: &SseEvent, id: &str) -> Result<Value, String> {
    let v: Value = serde_json::from_str(&e.data)
        .map_err(|err| format!("`data:` is not JSON ({err}): {}", clip(&e.data, 200)))?;
    if v["jsonrpc"] != "2.0" || v["id"] != id {
        return Err(format!(
            "`data:` is not a JSON-RPC response to request {id:?} (jsonrpc {}, id {})",
            v["jsonrpc"], v["id"]
        ));
    }
    match (v.get("result"), v.get("error")) {
        (Some(result), None) => stream_response(result),
        (None, Some(error)) => Err(format!("an error event: {error}")),
        _ => Err("a JSON-RPC response with neither `result` nor `error`".to_owned()),
    }
}

pub(super) fn rest_event(e: &SseEvent) -> Result<Value, String> {
    let v: Value = serde_json::from_str(&e.data)
        .map_err(|err| format!("`data:` is not JSON ({err}): {}", clip(&e.data, 200)))?;
    if e.event.as_deref() == Some("error") || v.get("error").is_some() {
        return Err(format!("an error event: {}", clip(&e.data, 300)));
    }
    stream_response(&v)
}

/// A StreamResponse: exactly one of its four members, in the v1.0 model.
pub(super) fn stream_response(v: &Value) -> Result<Value, String> {
    match serde_json::from_value::<a2a_core::StreamResponse>(v.clone()) {
        Ok(_) => Ok(v.clone()),
        Err(e) => Err(format!(
            "not a StreamResponse ({e}): {}",
            clip(&v.to_string(), 200)
        )),
    }
}
