//! Fuzz suite over the server's whole router (through `tower::ServiceExt::oneshot`, no socket):
//! JSON-RPC `POST /` with damaged requests of every method (v1.0 and v0.3 names), and the
//! HTTP+JSON routes with random methods, paths, query strings, headers and bodies.
//!
//! Properties: no panic and no 5xx for a client's mistake; a JSON-RPC answer is HTTP 200 with
//! a well-formed envelope (or an event stream for a streaming method), its id echoed, or `null`
//! when the request's id could not be read, and an error code from the spec's table; an
//! HTTP+JSON error is a `google.rpc.Status` body whose `code` is the HTTP status.
//!
//! The mutation engine is a2a-core's (`a2a-core/tests/support`). CI runs a thousand cases
//! per target; `FUZZ_CASES=20000 cargo test --release -p a2a-server --test fuzz` runs longer.

#[path = "../../a2a-core/tests/support/mutate.rs"]
mod mutate;
#[path = "../../a2a-core/tests/support/strategies.rs"]
mod strategies;

use a2a_core::{AgentCard, Error, ErrorKind, Message, Method, v03};
use a2a_server::{Agent, RequestContext, Server, TaskEvents};
use axum::Router;
use axum::body::Body;
use axum::http::{self, HeaderValue, Request, StatusCode, header};
use http_body_util::BodyExt;
use mutate::*;
use proptest::option;
use proptest::prelude::*;
use proptest::sample::{Index, select};
use serde_json::{Value, json};
use std::sync::OnceLock;
use std::time::Duration;
use strategies::{message, word};
use tower::ServiceExt;

/// The CI default: cases per target.
const CI_CASES: u32 = 1000;

/// How long a response (an event stream included) may take.
const WAIT: Duration = Duration::from_secs(10);

/// Answers every message at once, completing the task.
struct Echo;

impl Agent for Echo {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        events
            .complete(Some(Message::agent_text(cx.message.text())))
            .await
    }
}

struct Fixture {
    rt: tokio::runtime::Runtime,
    router: Router,
    /// Ids of tasks that exist.
    tasks: Vec<String>,
}

/// One server for all cases (a current-thread runtime: the cases run one by one).
fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let (router, tasks) = rt.block_on(async {
            let card = AgentCard::builder("Fuzz", "Echoes").build();
            let router = Server::builder(Echo)
                .agent_card(card)
                .body_limit(1 << 20)
                .build()
                .unwrap()
                .into_router();
            let mut tasks = Vec::new();
            for text in ["one", "two"] {
                let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                    "params": {"message": {"messageId": text, "role": "ROLE_USER",
                        "parts": [{"text": text}]}}});
                let response = router
                    .clone()
                    .oneshot(
                        Request::post("/")
                            .header(header::CONTENT_TYPE, "application/json")
                            .header("a2a-version", "1.0")
                            .body(Body::from(body.to_string()))
                            .unwrap(),
                    )
                    .await
                    .unwrap();
                let bytes = response.into_body().collect().await.unwrap().to_bytes();
                let v: Value = serde_json::from_slice(&bytes).unwrap();
                tasks.push(v["result"]["task"]["id"].as_str().unwrap().to_owned());
            }
            (router, tasks)
        });
        Fixture { rt, router, tasks }
    })
}

/// A task id: one that exists, one that does not, or a hostile one.
fn task_id() -> BoxedStrategy<String> {
    prop_oneof![
        3 => any::<Index>().prop_map(|i| fixture().tasks[i.index(fixture().tasks.len())].clone()),
        1 => word(),
        1 => nasty_string(),
    ]
    .boxed()
}

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
// Headers, paths, queries

/// Optional service-parameter and transport headers, some hostile.
fn headers() -> BoxedStrategy<Vec<(&'static str, String)>> {
    let version = prop_oneof![
        Just("1.0"),
        Just("0.3"),
        Just("1"),
        Just("1.1"),
        Just("2.0"),
        Just(""),
        Just("1."),
        Just("1.x"),
        Just("0.3.0"),
        Just(" 1.0 "),
        Just("abc"),
    ];
    let one = prop_oneof![
        version.prop_map(|v| ("a2a-version", v.to_owned())),
        prop_oneof![
            Just("5"),
            Just("-1"),
            Just("abc"),
            Just("18446744073709551616"),
            Just("0")
        ]
        .prop_map(|v| ("last-event-id", v.to_owned())),
        prop_oneof![Just("https://x.example/ext"), Just(",,"), Just("a, b ,c")]
            .prop_map(|v| ("a2a-extensions", v.to_owned())),
        prop_oneof![
            Just("application/json"),
            Just("application/a2a+json"),
            Just("text/plain"),
            Just("multipart/form-data; boundary=x"),
        ]
        .prop_map(|v| ("content-type", v.to_owned())),
        prop_oneof![
            Just("0"),
            Just("3"),
            Just("99999999999"),
            Just("-1"),
            Just("x")
        ]
        .prop_map(|v| ("content-length", v.to_owned())),
        prop_oneof![
            Just("text/event-stream"),
            Just("*/*"),
            Just("application/json")
        ]
        .prop_map(|v| ("accept", v.to_owned())),
    ];
    proptest::collection::vec(one, 0..4).boxed()
}

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

/// A response, read whole (an event stream until it ends, within [`WAIT`]).
struct Answer {
    status: StatusCode,
    content_type: String,
    /// The `Allow` header, if any.
    allow: Option<String>,
    body: Vec<u8>,
}

fn send(request: Request<Body>) -> Result<Answer, TestCaseError> {
    let f = fixture();
    f.rt.block_on(async {
        let response = tokio::time::timeout(WAIT, f.router.clone().oneshot(request))
            .await
            .map_err(|_| TestCaseError::fail("no response in time"))?
            .expect("infallible");
        let status = response.status();
        let content_type = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let allow = response
            .headers()
            .get(header::ALLOW)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let body = tokio::time::timeout(WAIT, response.into_body().collect())
            .await
            .map_err(|_| TestCaseError::fail(format!("{status}: the body did not end in time")))?
            .map_err(|e| TestCaseError::fail(format!("reading the body: {e}")))?
            .to_bytes()
            .to_vec();
        Ok(Answer {
            status,
            content_type,
            allow,
            body,
        })
    })
}

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

/// The `data:` payloads of an event stream.
fn sse_data(body: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(body)
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| d.trim_start().to_owned())
        .collect()
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

    /// `POST /` with a damaged request of any method, with random service headers.
    #[test]
    fn fuzz_jsonrpc_binding(body in rpc_body(), headers in headers()) {
        check_rpc(body, headers)?;
    }

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
