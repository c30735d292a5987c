//! Fuzz suite over the server's HTTP+JSON binding (through the whole router, with
//! `tower::ServiceExt::oneshot`, no socket): random methods, paths, query strings, headers and
//! bodies.
//!
//! Properties: no panic and no 5xx for a client's mistake; an error is a `google.rpc.Status`
//! body whose `code` is the HTTP status (any method but POST on `/`: 405, `Allow: POST`, a
//! JSON-RPC -32600 body).
//!
//! The mutation engine is a2a-core's (`a2a-core/tests/support`). CI runs a thousand cases
//! per target; `FUZZ_CASES=20000 cargo test --release -p a2a-server --test 'fuzz_*'` runs both
//! router suites longer.

mod fuzzing;

use a2a_core::Error;
use axum::body::Body;
use axum::http::{self, HeaderValue, Request, StatusCode};
use fuzzing::mutate::*;
use fuzzing::strategies::{message, word};
use fuzzing::*;
use proptest::option;
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// Paths, queries, methods, bodies

/// Percent-encodes everything but unreserved characters (and `:`, to keep verb suffixes).
fn encode_segment(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~:".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// A path: one of the routes (with ids, a tenant, a verb suffix), or not quite one.
fn path() -> BoxedStrategy<String> {
    let segment = prop_oneof![
        4 => task_id().prop_map(|s| encode_segment(&s)),
        1 => prop_oneof![
            Just("%".to_owned()), Just("%zz".to_owned()), Just("%ff%fe".to_owned()),
            Just("..".to_owned()), Just(":cancel".to_owned()), Just("x:subscribe:cancel".to_owned()),
        ],
    ];
    let route = (segment.clone(), segment).prop_flat_map(|(id, cid)| {
        select(vec![
            "/message:send".to_owned(),
            "/message:stream".to_owned(),
            "/tasks".to_owned(),
            format!("/tasks/{id}"),
            format!("/tasks/{id}:cancel"),
            format!("/tasks/{id}:subscribe"),
            format!("/tasks/{id}/pushNotificationConfigs"),
            format!("/tasks/{id}/pushNotificationConfigs/{cid}"),
            "/extendedAgentCard".to_owned(),
            "/".to_owned(),
            "/.well-known/agent-card.json".to_owned(),
            "/.well-known/agent.json".to_owned(),
            format!("/{id}/{cid}/x/y"),
            "//tasks//".to_owned(),
        ])
    });
    (option::of(word()), route)
        .prop_map(|(tenant, route)| match tenant {
            Some(t) if !route.starts_with("/.well") && route != "/" => format!("/{t}{route}"),
            _ => route,
        })
        .boxed()
}

fn query() -> BoxedStrategy<Option<String>> {
    let key = prop_oneof![
        Just("historyLength"),
        Just("pageSize"),
        Just("pageToken"),
        Just("status"),
        Just("contextId"),
        Just("includeArtifacts"),
        Just("statusTimestampAfter"),
        Just("A2A-Version"),
        Just("tenant"),
        Just("id"),
        Just("taskId"),
        Just("x"),
        Just(""),
    ];
    let value = prop_oneof![
        Just("5".to_owned()),
        Just("-1".to_owned()),
        Just("true".to_owned()),
        Just("TASK_STATE_WORKING".to_owned()),
        Just("2026-01-01T00:00:00Z".to_owned()),
        Just("%".to_owned()),
        Just("%zz".to_owned()),
        Just("a+b".to_owned()),
        nasty_string().prop_map(|s| encode_segment(&s)),
    ];
    option::of(
        proptest::collection::vec((key, value), 0..4).prop_map(|pairs| {
            pairs
                .into_iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join("&")
        }),
    )
    .boxed()
}

fn http_method() -> BoxedStrategy<http::Method> {
    select(vec![
        http::Method::GET,
        http::Method::POST,
        http::Method::POST,
        http::Method::DELETE,
        http::Method::PUT,
        http::Method::PATCH,
        http::Method::OPTIONS,
        http::Method::HEAD,
    ])
    .boxed()
}

fn rest_body() -> BoxedStrategy<Vec<u8>> {
    let seed = prop_oneof![
        message(false).prop_map(|m| json!({ "message": m })),
        Just(json!({})),
        Just(json!({"url": "https://example.com/h"})),
        spec_fixture(),
    ];
    prop_oneof![
        1 => Just(Vec::new()),
        6 => (seed, mutations(), text_mutations())
            .prop_map(|(seed, tree, text)| damage(&seed, &tree, &text)),
    ]
    .boxed()
}

// ---------------------------------------------------------------------------------------------
// Checks

fn check_rest(
    method: http::Method,
    path: String,
    query: Option<String>,
    headers: Vec<(&'static str, String)>,
    body: Vec<u8>,
) -> Result<(), TestCaseError> {
    let uri = match &query {
        Some(q) => format!("{path}?{q}"),
        None => path.clone(),
    };
    let Ok(uri) = uri.parse::<http::Uri>() else {
        return Ok(());
    };
    let shown = format!(
        "{method} {uri} {headers:?} {}",
        String::from_utf8_lossy(&body)
    );
    let mut request = Request::builder().method(method.clone()).uri(uri);
    for (k, v) in &headers {
        if let Ok(v) = HeaderValue::from_str(v) {
            request = request.header(*k, v);
        }
    }
    let answer = send(request.body(Body::from(body)).unwrap())?;
    let status = answer.status;
    prop_assert!(!status.is_server_error(), "{} for {}", status, shown);
    if status.is_success() || status.is_redirection() {
        if answer.content_type.starts_with("text/event-stream") {
            for data in sse_data(&answer.body) {
                prop_assert!(
                    serde_json::from_str::<Value>(&data).is_ok(),
                    "event {:?} for {}",
                    data,
                    shown
                );
            }
        } else if method != http::Method::HEAD && !answer.body.is_empty() {
            prop_assert!(
                serde_json::from_slice::<Value>(&answer.body).is_ok(),
                "a {} answer that is not JSON for {}",
                status,
                shown
            );
        }
        return Ok(());
    }
    // A HEAD answer has no body; `POST /` is the JSON-RPC binding (its own target).
    if method == http::Method::HEAD || (method == http::Method::POST && path == "/") {
        return Ok(());
    }
    // Any other method on the JSON-RPC endpoint: 405, `Allow: POST`, a JSON-RPC error body.
    if path == "/" {
        prop_assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{}", shown);
        prop_assert_eq!(answer.allow.as_deref(), Some("POST"), "{}", shown);
        let v: Value = serde_json::from_slice(&answer.body)
            .map_err(|e| TestCaseError::fail(format!("{e}: not JSON for {shown}")))?;
        prop_assert_eq!(&v["jsonrpc"], "2.0", "{} for {}", v, shown);
        prop_assert_eq!(&v["error"]["code"], -32600, "{} for {}", v, shown);
        return Ok(());
    }
    // An error: a google.rpc.Status body whose code is the HTTP status.
    let v: Value = serde_json::from_slice(&answer.body).map_err(|e| {
        TestCaseError::fail(format!(
            "{status}: the error body is not JSON ({e}): {:?} for {shown}",
            String::from_utf8_lossy(&answer.body)
        ))
    })?;
    let e = &v["error"];
    prop_assert_eq!(
        e["code"].as_u64(),
        Some(u64::from(status.as_u16())),
        "{}: body {} for {}",
        status,
        v,
        shown
    );
    prop_assert!(
        e["status"]
            .as_str()
            .is_some_and(|s| a2a_core::proto::GRPC_CODE_NAMES.contains(&s)),
        "{} for {}",
        v,
        shown
    );
    prop_assert!(e["message"].is_string(), "{} for {}", v, shown);
    prop_assert!(e["details"].is_array(), "{} for {}", v, shown);
    let parsed = Error::from_status_body(&v);
    prop_assert!(
        parsed.is_some_and(|e| e.kind().is_some()),
        "no A2A error kind in {} for {}",
        v,
        shown
    );
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Targets

proptest! {
    #![proptest_config(config(CI_CASES))]

    /// The HTTP+JSON routes: random methods, paths, queries, headers and bodies.
    #[test]
    fn fuzz_http_json_binding(
        method in http_method(),
        path in path(),
        query in query(),
        headers in headers(),
        body in rest_body(),
    ) {
        check_rest(method, path, query, headers, body)?;
    }
}
