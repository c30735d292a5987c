//! What the router fuzz suites (`fuzz_jsonrpc.rs` and `fuzz_http_json.rs`) share: one server of
//! an echoing agent for all cases (through `tower::ServiceExt::oneshot`, no socket) with two
//! tasks that exist, task ids and service headers to send it (some hostile), and a request sent
//! through its router and read whole.
//!
//! The mutation engine and the model's strategies are a2a-core's (`a2a-core/tests/support`).

#![allow(dead_code, unreachable_pub)]

#[path = "../../../a2a-core/tests/support/mutate.rs"]
pub mod mutate;
#[path = "../../../a2a-core/tests/support/strategies.rs"]
pub mod strategies;

use a2a_core::{AgentCard, Error, Message};
use a2a_server::{Agent, RequestContext, Server, TaskEvents};
use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use mutate::nasty_string;
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{Value, json};
use std::sync::OnceLock;
use std::time::Duration;
use strategies::word;
use tower::ServiceExt;

/// The CI default: cases per target.
pub const CI_CASES: u32 = 1000;

/// How long a response (an event stream included) may take.
pub const WAIT: Duration = Duration::from_secs(10);

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
pub fn task_id() -> BoxedStrategy<String> {
    prop_oneof![
        3 => any::<Index>().prop_map(|i| fixture().tasks[i.index(fixture().tasks.len())].clone()),
        1 => word(),
        1 => nasty_string(),
    ]
    .boxed()
}

/// Optional service-parameter and transport headers, some hostile.
pub fn headers() -> BoxedStrategy<Vec<(&'static str, String)>> {
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

/// A response, read whole (an event stream until it ends, within [`WAIT`]).
pub struct Answer {
    pub status: StatusCode,
    pub content_type: String,
    /// The `Allow` header, if any.
    pub allow: Option<String>,
    pub body: Vec<u8>,
}

pub fn send(request: Request<Body>) -> Result<Answer, TestCaseError> {
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

/// The `data:` payloads of an event stream.
pub fn sse_data(body: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(body)
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| d.trim_start().to_owned())
        .collect()
}
