//! `a2a inspect`'s API against the demo agent on a real socket, over each binding: connect
//! (card, problems, signatures), chat (blocking, streaming, multi-turn, cancel), tasks, the
//! wire console (each exchange as the recorder saw it, gRPC as ProtoJSON with its status),
//! push deliveries to the inspector's webhook, `a2a check`; and the guard (token, Host) and
//! bad agents (unreachable, not an agent, a card that does not parse); each stream event's id,
//! and resuming after one (`after`, sent as `Last-Event-ID`).

mod common;

use a2a_client::Binding;
use a2a_client::inspect::{Inspector, Options};
use common::{TestServer, binding_name, each_binding, serve, unreachable_url, within};
use serde_json::{Value, json};
use std::time::Duration;

/// A running inspector and a client of its API.
struct Page {
    base: String,
    token: String,
    http: reqwest::Client,
}

impl Page {
    async fn open() -> Self {
        Self::open_with(Options::default()).await
    }

    async fn open_with(options: Options) -> Self {
        let inspector = Inspector::bind(options).await.expect("bind");
        let url = reqwest::Url::parse(inspector.url()).expect("printed URL");
        let token = url
            .query_pairs()
            .find(|(k, _)| k == "token")
            .map(|(_, v)| v.into_owned())
            .expect("a token in the printed URL");
        assert!(token.len() >= 32, "a long random token: {token}");
        let base = format!("http://{}", url.authority());
        assert!(base.starts_with("http://127.0.0.1:"), "loopback: {base}");
        tokio::spawn(inspector.serve());
        Self {
            base,
            token,
            http: reqwest::Client::new(),
        }
    }

    fn post(&self, path: &str, body: &Value) -> reqwest::RequestBuilder {
        self.http
            .post(format!("{}/api/{path}", self.base))
            .header("x-inspect-token", &self.token)
            .json(body)
    }

    /// A call answered with JSON: its status and body.
    async fn call(&self, path: &str, body: Value) -> (u16, Value) {
        let response = within(path, self.post(path, &body).send())
            .await
            .expect("inspector reachable");
        let status = response.status().as_u16();
        let body = within(path, response.json::<Value>()).await.expect("JSON");
        (status, body)
    }

    /// A call that must succeed.
    async fn ok(&self, path: &str, body: Value) -> Value {
        let (status, body) = self.call(path, body).await;
        assert_eq!(status, 200, "{path}: {body}");
        body
    }

    /// A call answered with SSE, read to its end: `(event name, data)` pairs.
    async fn stream(&self, path: &str, body: Value) -> Vec<(String, Value)> {
        let response = within(path, self.post(path, &body).send())
            .await
            .expect("inspector reachable");
        assert_eq!(response.status(), 200);
        let text = within(path, response.text()).await.expect("stream body");
        sse(&text)
    }

    /// Everything on the feed so far (the kept entries; the live part is cut after a pause).
    async fn feed(&self) -> Vec<Value> {
        let mut response = self
            .http
            .get(format!("{}/api/feed?token={}", self.base, self.token))
            .send()
            .await
            .expect("feed");
        let mut text = String::new();
        // The kept entries come at once; stop reading when nothing more comes for a moment.
        while let Ok(Ok(Some(chunk))) =
            tokio::time::timeout(Duration::from_millis(300), response.chunk()).await
        {
            text.push_str(&String::from_utf8_lossy(&chunk));
        }
        sse(&text).into_iter().map(|(_, v)| v).collect()
    }

    async fn connect(&self, url: &str) -> Value {
        self.ok("connect", json!({ "url": url })).await
    }
}

fn sse(text: &str) -> Vec<(String, Value)> {
    text.split("\n\n")
        .filter_map(|block| {
            let mut name = "message".to_owned();
            let mut data = String::new();
            for line in block.lines() {
                if let Some(n) = line.strip_prefix("event:") {
                    name = n.trim().to_owned();
                } else if let Some(d) = line.strip_prefix("data:") {
                    data.push_str(d.trim_start());
                }
            }
            (!data.is_empty()).then(|| (name, serde_json::from_str(&data).expect("JSON data")))
        })
        .collect()
}

fn user(text: &str) -> Value {
    json!({ "messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER", "parts": [{ "text": text }] })
}

/// The wire entries of exchanges whose request is operation `op`.
fn exchanges<'a>(feed: &'a [Value], op: &str) -> Vec<Vec<&'a Value>> {
    let ids: Vec<&Value> = feed
        .iter()
        .filter(|e| e["type"] == "wire" && e["kind"] == "request" && e["op"] == op)
        .map(|e| &e["id"])
        .collect();
    ids.into_iter()
        .map(|id| feed.iter().filter(|e| &e["id"] == id).collect())
        .collect()
}

each_binding! {
    async fn connect_shows_the_card_and_its_problems(binding) {
        let server = TestServer::demo().await;
        let page = Page::open().await;
        let answer = page.connect(&server.url).await;
        assert_eq!(answer["card"]["name"], server.card.name);
        let bindings: Vec<&str> = answer["bindings"].as_array().unwrap().iter().map(|b| b.as_str().unwrap()).collect();
        assert!(bindings.contains(&binding_name(binding)), "{bindings:?}");
        let problems = answer["problems"].as_array().expect("the card group's findings");
        assert!(!problems.is_empty());
        assert!(problems.iter().all(|f| f["group"] == "card"), "{problems:?}");
        assert_eq!(answer["signature"]["count"], 0);
        // The card's fetch is on the wire console.
        let feed = page.feed().await;
        assert!(feed.iter().any(|e| e["binding"] == "card" && e["kind"] == "request"), "{feed:?}");
    }
}

each_binding! {
    async fn chat_streams_countdown_and_the_wire_console_records_it(binding) {
        let server = TestServer::demo().await;
        let page = Page::open().await;
        page.connect(&server.url).await;
        let b = binding_name(binding);
        let events = page.stream("send", json!({ "binding": b, "stream": true, "message": user("countdown 3") })).await;
        // The three progress messages (the first may come in the task's first snapshot).
        let statuses: Vec<&Value> = events.iter().filter(|(name, _)| name == "event").filter_map(|(_, d)| {
            let e = &d["event"];
            e.get("statusUpdate").or_else(|| e.get("task")).map(|x| &x["status"])
        }).collect();
        let progress: Vec<&str> = statuses.iter()
            .filter_map(|s| s["message"]["parts"][0]["text"].as_str())
            .filter(|t| t.ends_with("..."))
            .collect();
        assert_eq!(progress, ["3...", "2...", "1..."], "{events:?}");
        assert_eq!(statuses.last().map(|s| &s["state"]), Some(&json!("TASK_STATE_COMPLETED")));
        let chunks = events.iter().filter(|(_, d)| d["event"].get("artifactUpdate").is_some()).count();
        assert_eq!(chunks, 3, "{events:?}");
        assert_eq!(events.last().map(|(n, _)| n.as_str()), Some("end"));

        // Each event carries its id (1, 2, … as the agent numbered them); resuming after the
        // first (`after`, sent as Last-Event-ID) replays exactly the others.
        let sent: Vec<&Value> = events.iter().filter(|(n, _)| n == "event").map(|(_, d)| d).collect();
        let ids: Vec<u64> = sent.iter().map(|d| d["id"].as_str().and_then(|i| i.parse().ok()).expect("an id")).collect();
        assert_eq!(ids, (1..=sent.len() as u64).collect::<Vec<_>>(), "{events:?}");
        let task_id = &sent[0]["event"]["task"]["id"];
        let resumed = page.stream("subscribe", json!({ "binding": b, "taskId": task_id, "after": "1" })).await;
        let replayed: Vec<&Value> = resumed.iter().filter(|(n, _)| n == "event").map(|(_, d)| d).collect();
        assert_eq!(
            replayed.iter().map(|d| (&d["id"], &d["event"])).collect::<Vec<_>>(),
            sent[1..].iter().map(|d| (&d["id"], &d["event"])).collect::<Vec<_>>(),
        );
        let feed = page.feed().await;
        let resubscribe = exchanges(&feed, "SubscribeToTask");
        let headers = resubscribe[0][0]["request"]["headers"].to_string().to_lowercase();
        assert!(headers.contains(r#"["last-event-id","1"]"#), "{headers}");

        let streams = exchanges(&feed, "SendStreamingMessage");
        assert_eq!(streams.len(), 1, "{feed:?}");
        let x = &streams[0];
        assert_eq!(x[0]["binding"], b);
        assert_eq!(x[0]["params"]["message"]["parts"][0]["text"], "countdown 3");
        assert!(x.iter().any(|e| e["kind"] == "response" && e["status"] == 200));
        assert!(x.iter().any(|e| e["kind"] == "end"));
        let chunks: Vec<&&Value> = x.iter().filter(|e| e["kind"] == "chunk").collect();
        assert!(!chunks.is_empty());
        if binding == Binding::Grpc {
            // Each gRPC message as ProtoJSON, and the status from the trailers.
            assert_eq!(x[0]["request"]["body"][0]["message"]["parts"][0]["text"], "countdown 3");
            assert!(chunks.iter().any(|c| c["body"][0].get("statusUpdate").is_some()), "{chunks:?}");
            let trailers = x.iter().find(|e| e["kind"] == "trailers").expect("trailers");
            assert_eq!(trailers["grpc"]["name"], "OK");
        } else {
            let body = x[0]["request"]["body"].as_str().expect("text body");
            assert!(body.contains("countdown 3"), "{body}");
            let text: String = chunks.iter().map(|c| c["body"].as_str().unwrap_or_default()).collect();
            assert!(text.contains("data:"), "SSE as received: {text}");
        }
    }
}

each_binding! {
    async fn chat_answers_greet_in_the_same_task(binding) {
        let server = TestServer::demo().await;
        let page = Page::open().await;
        page.connect(&server.url).await;
        let b = binding_name(binding);
        let asked = page.ok("send", json!({ "binding": b, "message": user("greet") })).await;
        let task = &asked["response"]["task"];
        assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{asked}");
        let mut answer = user("Ada");
        answer["taskId"] = task["id"].clone();
        answer["contextId"] = task["contextId"].clone();
        let done = page.ok("send", json!({ "binding": b, "message": answer })).await;
        let task = &done["response"]["task"];
        assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{done}");
        assert!(task.to_string().contains("Ada"), "{done}");

        // The task list and the task itself.
        let list = page.ok("tasks", json!({ "binding": b, "request": { "contextId": task["contextId"] } })).await;
        let ids: Vec<&Value> = list["page"]["tasks"].as_array().unwrap().iter().map(|t| &t["id"]).collect();
        assert_eq!(ids, [&task["id"]], "{list}");
        let got = page.ok("task", json!({ "binding": b, "taskId": task["id"] })).await;
        assert_eq!(got["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    }
}

each_binding! {
    async fn cancel_stops_a_countdown(binding) {
        let server = TestServer::demo().await;
        let page = Page::open().await;
        page.connect(&server.url).await;
        let b = binding_name(binding);
        let started = page.ok("send", json!({ "binding": b, "message": user("countdown 50"), "returnImmediately": true })).await;
        let id = started["response"]["task"]["id"].clone();
        assert!(id.is_string(), "{started}");
        let canceled = page.ok("cancel", json!({ "binding": b, "taskId": id })).await;
        assert_eq!(canceled["task"]["status"]["state"], "TASK_STATE_CANCELED", "{canceled}");
        let feed = page.feed().await;
        assert_eq!(exchanges(&feed, "CancelTask").len(), 1);
    }
}

#[tokio::test]
async fn the_api_needs_the_token_and_a_host_naming_the_inspector() {
    let page = Page::open().await;
    let no_token = page
        .http
        .post(format!("{}/api/connect", page.base))
        .json(&json!({ "url": "http://127.0.0.1:9" }))
        .send()
        .await
        .unwrap();
    assert_eq!(no_token.status(), 401);
    let index = page
        .http
        .get(format!("{}/", page.base))
        .send()
        .await
        .unwrap();
    assert_eq!(index.status(), 401);
    let rebinding = page
        .post("connect", &json!({ "url": "http://127.0.0.1:9" }))
        .header("host", "evil.example:80")
        .send()
        .await
        .unwrap();
    assert_eq!(rebinding.status(), 403);
    let page_html = page
        .http
        .get(format!("{}/?token={}", page.base, page.token))
        .send()
        .await
        .unwrap();
    assert_eq!(page_html.status(), 200);
    assert!(
        page_html.headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .contains("connect-src 'self'")
    );
}

#[tokio::test]
async fn bad_agents_are_clear_errors_and_the_inspector_stays_usable() {
    let page = Page::open().await;
    let (status, body) = page
        .call("connect", json!({ "url": unreachable_url().await }))
        .await;
    assert_eq!(status, 502);
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("cannot reach") && message.contains("refused"),
        "{body}"
    );

    let not_agent = serve(axum::Router::new()).await;
    let (status, body) = page.call("connect", json!({ "url": not_agent })).await;
    assert_eq!(status, 502);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not an A2A agent"),
        "{body}"
    );

    let bad_card = serve(axum::Router::new().route(
        "/.well-known/agent-card.json",
        axum::routing::get(|| async { axum::Json(json!({ "name": 7 })) }),
    ))
    .await;
    let (status, body) = page.call("connect", json!({ "url": bad_card })).await;
    assert_eq!(status, 502);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("does not parse"),
        "{body}"
    );

    let (status, body) = page.call("send", json!({ "message": user("hi") })).await;
    assert_eq!(status, 400);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("connect"),
        "{body}"
    );

    // Still usable: a real agent connects.
    let server = TestServer::demo().await;
    page.connect(&server.url).await;
}

#[tokio::test]
async fn check_runs_from_the_page() {
    let server = TestServer::demo().await;
    let page = Page::open().await;
    page.connect(&server.url).await;
    let report = page
        .ok(
            "check",
            json!({ "groups": ["card", "errors"], "bindings": ["JSONRPC"] }),
        )
        .await;
    let findings = report["findings"].as_array().expect("findings");
    assert!(
        findings
            .iter()
            .any(|f| f["group"] == "errors" && f["binding"] == "JSONRPC"),
        "{report}"
    );
    assert!(findings.iter().all(|f| f["section"].is_string()));
    let (status, body) = page.call("check", json!({ "groups": ["nope"] })).await;
    assert_eq!(status, 400, "{body}");

    // A task that lasts, as `a2a check --long-task` takes it: the long-poll hold is checked
    // instead of skipped.
    let skipped = |report: &serde_json::Value| {
        (report["findings"].as_array().expect("findings").iter())
            .filter(|f| f["verdict"] == "skip")
            .count()
    };
    let body = json!({ "groups": ["generations"], "bindings": ["JSONRPC"] });
    let without = page.ok("check", body).await;
    assert_eq!(skipped(&without), 1, "{without}");
    let body =
        json!({ "groups": ["generations"], "bindings": ["JSONRPC"], "longTask": "countdown 5" });
    let with = page.ok("check", body).await;
    assert_eq!(skipped(&with), 0, "{with}");
    assert_eq!(with["passed"], true, "{with}");
}

each_binding! {
    async fn push_deliveries_reach_the_inspectors_webhook(binding) {
        let push = a2a_server::push::PushSettings::default().allow("127.0.0.1").expect("allow");
        let server = TestServer::start(a2a_server::demo::DemoAgent, |b| {
            b.agent_card(a2a_server::demo::DemoAgent::card()).push_notifications(push)
        })
        .await;
        let page = Page::open().await;
        let connected = page.connect(&server.url).await;
        let b = binding_name(binding);
        let started = page.ok("send", json!({ "binding": b, "message": user("countdown 3"), "returnImmediately": true })).await;
        let id = started["response"]["task"]["id"].clone();
        let registered = page.ok("push", json!({ "binding": b, "taskId": id })).await;
        assert_eq!(registered["config"]["url"], connected["webhook"], "{registered}");
        // Deliveries arrive on the feed, the token the inspector set checked.
        let completed = within("the completed task's delivery", async {
            loop {
                let feed = page.feed().await;
                let pushes: Vec<&Value> = feed.iter().filter(|e| e["type"] == "push").collect();
                if pushes.iter().any(|p| p["body"].to_string().contains("TASK_STATE_COMPLETED")) {
                    return pushes.into_iter().cloned().collect::<Vec<Value>>();
                }
            }
        })
        .await;
        assert!(completed.iter().all(|p| p["tokenMatches"] == true), "{completed:?}");
    }
}

/// An agent that starts working and then says nothing more until canceled.
struct Hangs;

impl a2a_server::Agent for Hangs {
    async fn execute(
        &self,
        cx: a2a_server::RequestContext,
        events: a2a_server::TaskEvents,
    ) -> Result<(), a2a_core::Error> {
        events.working("started").await?;
        cx.cancel.cancelled().await;
        Ok(())
    }
}

#[tokio::test]
async fn an_agent_that_hangs_mid_stream_is_told_on_the_page() {
    let server =
        TestServer::start(Hangs, |b| b.agent_card(a2a_server::demo::DemoAgent::card())).await;
    let mut options = Options::default();
    options.idle_notice = Duration::from_millis(300);
    let page = Page::open_with(options).await;
    page.connect(&server.url).await;
    let body = json!({ "stream": true, "message": user("anything") });
    let mut response = within("send", page.post("send", &body).send())
        .await
        .unwrap();
    let mut text = String::new();
    let notice = within("the notice", async {
        loop {
            let chunk = response.chunk().await.expect("stream").expect("not ended");
            text.push_str(&String::from_utf8_lossy(&chunk));
            if let Some((_, data)) = sse(&text).into_iter().find(|(name, _)| name == "notice") {
                return data;
            }
        }
    })
    .await;
    assert!(
        notice["message"]
            .as_str()
            .unwrap()
            .contains("has sent nothing"),
        "{notice}"
    );
    assert!(
        sse(&text)
            .iter()
            .any(|(name, d)| name == "event" && d["event"].to_string().contains("started"))
    );
    // Still usable while the stream hangs.
    page.ok("tasks", json!({ "request": {} })).await;
}

#[tokio::test]
async fn signatures_are_verified_against_the_keys_the_user_gives() {
    let (server, kid, public) = common::signed_demo_server().await;
    let page = Page::open().await;

    // Not checked until the user gives keys; never against keys the card names itself.
    let answer = page.connect(&server.url).await;
    assert_eq!(answer["signature"], json!({ "count": 1, "checked": false }));

    let jwks = format!("{}/.well-known/jwks.json", server.url);
    let answer = page
        .ok("connect", json!({ "url": server.url, "jwks": [jwks] }))
        .await;
    let signature = &answer["signature"];
    assert_eq!(signature["verified"], true, "{signature}");
    assert_eq!(signature["kid"], kid.as_str());
    assert_eq!(signature["algorithm"], "ES256");

    let answer = page
        .ok("connect", json!({ "url": server.url, "keys": [public] }))
        .await;
    assert_eq!(answer["signature"]["verified"], true, "{answer}");

    let other = common::unrelated_public_pem();
    let answer = page
        .ok("connect", json!({ "url": server.url, "keys": [other] }))
        .await;
    let signature = &answer["signature"];
    assert_eq!(signature["verified"], false, "{signature}");
    assert!(
        signature["error"]
            .as_str()
            .unwrap()
            .contains("does not match"),
        "{signature}"
    );
}
