//! Fuzz suite over the server's JSON-RPC binding (`POST /` through the whole router, with
//! `tower::ServiceExt::oneshot`, no socket): damaged requests of every method (v1.0 and v0.3
//! names), with random service headers.
//!
//! Properties: no panic; the answer is HTTP 200 (413 over the body limit) with a well-formed
//! envelope (or an event stream for a streaming method), its id echoed, or `null` when the
//! request's id could not be read, and an error code from the spec's table, never a server
//! failure for a client's mistake.
//!
//! The mutation engine is a2a-core's (`a2a-core/tests/support`). CI runs a thousand cases
//! per target; `FUZZ_CASES=20000 cargo test --release -p a2a-server --test 'fuzz_*'` runs both
//! router suites longer.

mod fuzzing;

use a2a_core::{ErrorKind, Method, v03};
use axum::body::Body;
use axum::http::{HeaderValue, Request, StatusCode};
use fuzzing::mutate::*;
use fuzzing::strategies::{message, word};
use fuzzing::*;
use proptest::option;
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// JSON-RPC

/// Valid params of a method (by its v1.0 or v0.3 name).
fn params(name: &str) -> BoxedStrategy<Value> {
    let v03 = Method::from_v03_name(name).is_some();
    let Some(method) = Method::from_name(name).or_else(|| Method::from_v03_name(name)) else {
        return spec_fixture();
    };
    let id = task_id;
    match method {
        Method::SendMessage | Method::SendStreamingMessage => (
            message(v03),
            option::of(id()),
            any::<bool>(),
            option::of(-2..5i32),
        )
            .prop_map(move |(mut m, task, immediately, history)| {
                m.task_id = task.map(Into::into);
                m.context_id = None;
                if v03 {
                    json!({"message": v03::encode_message(&m),
                        "configuration": {"blocking": !immediately, "historyLength": history}})
                } else {
                    json!({"message": m,
                        "configuration": {"returnImmediately": immediately, "historyLength": history}})
                }
            })
            .boxed(),
        Method::ListTasks => (option::of(-2..120i32), option::of(word()), any::<bool>())
            .prop_map(|(size, token, arts)| {
                json!({"pageSize": size, "pageToken": token, "includeArtifacts": arts,
                    "status": "TASK_STATE_COMPLETED"})
            })
            .boxed(),
        Method::CreateTaskPushNotificationConfig if v03 => id()
            .prop_map(|t| json!({"taskId": t, "pushNotificationConfig": {"url": "https://example.com/h"}}))
            .boxed(),
        Method::CreateTaskPushNotificationConfig => id()
            .prop_map(|t| json!({"taskId": t, "url": "https://example.com/h"}))
            .boxed(),
        Method::GetTaskPushNotificationConfig
        | Method::DeleteTaskPushNotificationConfig
        | Method::ListTaskPushNotificationConfigs => (id(), word())
            .prop_map(move |(t, c)| {
                if v03 {
                    json!({"id": t, "pushNotificationConfigId": c})
                } else {
                    json!({"taskId": t, "id": c})
                }
            })
            .boxed(),
        Method::GetExtendedAgentCard => Just(json!({})).boxed(),
        _ => (id(), option::of(-2..5i32))
            .prop_map(|(t, h)| json!({"id": t, "historyLength": h}))
            .boxed(),
    }
}

fn method_name() -> BoxedStrategy<String> {
    let mut names: Vec<String> = Method::ALL.iter().map(|m| m.name().to_owned()).collect();
    names.extend(
        Method::ALL
            .iter()
            .filter_map(|m| m.v03_name().map(str::to_owned)),
    );
    prop_oneof![8 => select(names), 1 => "\\PC{0,8}"].boxed()
}

fn rpc_body() -> BoxedStrategy<Vec<u8>> {
    let envelope = (
        method_name(),
        prop_oneof![
            any::<i64>().prop_map(Value::from),
            word().prop_map(Value::from)
        ],
    )
        .prop_flat_map(|(method, id)| {
            params(&method).prop_map(move |params| {
                json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
            })
        });
    (
        prop_oneof![6 => envelope, 1 => spec_fixture()],
        mutations(),
        text_mutations(),
    )
        .prop_map(|(seed, tree, text)| damage(&seed, &tree, &text))
        .boxed()
}

// ---------------------------------------------------------------------------------------------
// Checks

/// The JSON-RPC codes of the spec's table.
fn is_table_code(code: i64) -> bool {
    ErrorKind::ALL
        .iter()
        .any(|k| i64::from(k.json_rpc_code()) == code)
}

/// A JSON-RPC response: `jsonrpc`, the expected id, a result or an error from the table that is
/// not a server failure.
fn check_rpc_response(v: &Value, id: &Value, shown: &str) -> Result<(), TestCaseError> {
    prop_assert_eq!(&v["jsonrpc"], "2.0", "{} for {}", v, shown);
    prop_assert_eq!(&v["id"], id, "the id of {} for {}", v, shown);
    match (v.get("result"), v.get("error")) {
        (Some(_), None) => {}
        (None, Some(e)) => {
            let code = e["code"].as_i64().unwrap_or_default();
            prop_assert!(
                is_table_code(code),
                "code {} not in the table: {}",
                code,
                shown
            );
            prop_assert!(
                code != i64::from(ErrorKind::Internal.json_rpc_code()),
                "an internal error for a client's mistake: {} for {}",
                v,
                shown
            );
            prop_assert!(e["message"].is_string(), "{}", v);
        }
        _ => prop_assert!(
            false,
            "neither or both of result and error: {} for {}",
            v,
            shown
        ),
    }
    Ok(())
}

fn check_rpc(body: Vec<u8>, headers: Vec<(&'static str, String)>) -> Result<(), TestCaseError> {
    let shown = String::from_utf8_lossy(&body).into_owned();
    // The id the answer must carry: the request's if it could be read, else null.
    let parsed: Option<Value> = serde_json::from_slice(&body).ok();
    let id = parsed
        .as_ref()
        .and_then(|v| v.get("id"))
        .filter(|id| id.is_string() || id.is_number() || id.is_null())
        .cloned()
        .unwrap_or(Value::Null);
    let mut request = Request::post("/");
    for (k, v) in &headers {
        if let Ok(v) = HeaderValue::from_str(v) {
            request = request.header(*k, v);
        }
    }
    let answer = send(request.body(Body::from(body)).unwrap())?;
    // The server reads the first Content-Length (a real connection would refuse two).
    let too_large = headers
        .iter()
        .find(|(k, _)| *k == "content-length")
        .is_some_and(|(_, v)| v.parse::<u64>().is_ok_and(|n| n > 1 << 20));
    if too_large {
        prop_assert_eq!(answer.status, StatusCode::PAYLOAD_TOO_LARGE);
        return Ok(());
    }
    prop_assert_eq!(answer.status, StatusCode::OK, "for {}", shown);
    if answer.content_type.starts_with("text/event-stream") {
        let method = parsed
            .as_ref()
            .and_then(|v| v["method"].as_str())
            .and_then(|m| Method::from_name(m).or_else(|| Method::from_v03_name(m)));
        prop_assert!(
            method.is_some_and(Method::is_streaming),
            "an event stream for {}",
            shown
        );
        for data in sse_data(&answer.body) {
            let v: Value = serde_json::from_str(&data)
                .map_err(|e| TestCaseError::fail(format!("event {data:?}: {e}")))?;
            check_rpc_response(&v, &id, &shown)?;
        }
        return Ok(());
    }
    prop_assert_eq!(&answer.content_type, "application/json", "for {}", shown);
    let v: Value = serde_json::from_slice(&answer.body)
        .map_err(|e| TestCaseError::fail(format!("the answer is not JSON: {e} for {shown}")))?;
    check_rpc_response(&v, &id, &shown)
}

// ---------------------------------------------------------------------------------------------
// Targets

proptest! {
    #![proptest_config(config(CI_CASES))]

    /// `POST /` with a damaged request of any method, with random service headers.
    #[test]
    fn fuzz_jsonrpc_binding(body in rpc_body(), headers in headers()) {
        check_rpc(body, headers)?;
    }
}
