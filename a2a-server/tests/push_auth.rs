//! Push notifications that arrive (in order, after the receiver or the server comes back),
//! refused where they must not go; and authentication that keeps each principal's tasks apart.

use a2a_client::webhook::PushReceiver;
use a2a_core::{Artifact, Error, Message};
use a2a_server::auth::BearerTokens;
use a2a_server::push::PushSettings;
use a2a_server::{Agent, RequestContext, Server, TaskEvents};
use axum::body::Bytes;
use axum::http::HeaderMap;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::timeout;

const WAIT: Duration = Duration::from_secs(20);

/// Three steps, each a status update and an artifact chunk; or asks a question for `ask`.
struct Steps;

impl Agent for Steps {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        if cx.message.text() == "ask" && cx.stored_task.is_none() {
            return events.input_required("Which one?").await;
        }
        for i in 1..=3 {
            events.working(format!("step {i}")).await?;
            let chunk = Artifact::text("out", format!("{i};")).with_id("a-1");
            events.artifact_chunk(chunk, i > 1, i == 3).await?;
        }
        events.complete(Some(Message::agent_text("done"))).await
    }

    async fn cancel(&self, _: RequestContext, _: TaskEvents) -> Result<(), Error> {
        Ok(())
    }
}

fn fast_push() -> PushSettings {
    PushSettings::default()
        .allow("127.0.0.1")
        .unwrap()
        .backoff(Duration::from_millis(20), Duration::from_millis(100))
        .max_attempts(400)
}

/// Serves the built server on a free loopback port, advertising that address.
async fn start(builder: a2a_server::ServerBuilder) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = builder.public_url(&url).build().unwrap();
    tokio::spawn(async move { server.serve(listener).await });
    url
}

/// A JSON-RPC call: a v1.0 method with `A2A-Version: 1.0`, a v0.3 one (`tasks/get`) without a
/// version, as a v0.3 client sends it.
async fn rpc(url: &str, token: Option<&str>, method: &str, params: Value) -> Value {
    let mut req = reqwest::Client::new()
        .post(format!("{url}/"))
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}));
    if !method.contains('/') {
        req = req.header("A2A-Version", "1.0");
    }
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    req.send().await.unwrap().json().await.unwrap()
}

/// What a capturing webhook received: headers and body of each post.
type Received = Arc<Mutex<Vec<(HeaderMap, Value)>>>;

async fn capture_on(listener: tokio::net::TcpListener) -> Received {
    let received: Received = Arc::default();
    let sink = received.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: HeaderMap, body: Bytes| {
            let sink = sink.clone();
            async move {
                sink.lock()
                    .unwrap()
                    .push((headers, serde_json::from_slice(&body).unwrap()));
                "ok"
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    received
}

async fn wait_for(received: &Received, n: usize) -> Vec<(HeaderMap, Value)> {
    timeout(WAIT, async {
        loop {
            if received.lock().unwrap().len() >= n {
                return received.lock().unwrap().clone();
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap_or_else(|_| {
        panic!(
            "expected {n} deliveries, got {:?}",
            received.lock().unwrap().len()
        )
    })
}

fn seqs(posts: &[(HeaderMap, Value)]) -> Vec<u64> {
    posts
        .iter()
        .map(|(h, _)| {
            let id = h["a2a-notification-id"].to_str().unwrap();
            id.rsplit(':').next().unwrap().parse().unwrap()
        })
        .collect()
}

#[tokio::test]
async fn a_webhook_receives_every_event_of_a_task_in_order_with_its_credentials() {
    let hook = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook_url = format!("http://{}/hook", hook.local_addr().unwrap());
    let received = capture_on(hook).await;
    let url = start(Server::builder(Steps).push_notifications(fast_push())).await;
    let card: Value = reqwest::get(format!("{url}/.well-known/agent-card.json"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(card["capabilities"]["pushNotifications"], true);

    let r = rpc(
        &url,
        None,
        "SendMessage",
        json!({
            "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "go"}]},
            "configuration": {"taskPushNotificationConfig": {
                "url": hook_url, "token": "tok-9",
                "authentication": {"scheme": "Bearer", "credentials": "s3cr3t"}}}
        }),
    )
    .await;
    let task = &r["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{r}");
    // The creation snapshot (already WORKING "step 1"), the first chunk, then 2 × (status,
    // chunk), then COMPLETED: 7 events.
    let posts = wait_for(&received, 7).await;
    assert_eq!(
        seqs(&posts),
        (1..=7).collect::<Vec<_>>(),
        "every event, in order"
    );
    for (headers, body) in &posts {
        assert_eq!(headers["content-type"], "application/a2a+json");
        assert_eq!(headers["authorization"], "Bearer s3cr3t");
        assert_eq!(headers["x-a2a-notification-token"], "tok-9");
        assert_eq!(headers["a2a-notification-token"], "tok-9");
        assert!(body.get("kind").is_none(), "v1.0 StreamResponse: {body}");
    }
    assert_eq!(posts[0].1["task"]["id"], task["id"]);
    let last = &posts[6].1["statusUpdate"]["status"];
    assert_eq!(last["state"], "TASK_STATE_COMPLETED");
    let chunks: Vec<&str> = posts
        .iter()
        .filter_map(|(_, b)| b["artifactUpdate"]["artifact"]["parts"][0]["text"].as_str())
        .collect();
    assert_eq!(chunks, ["1;", "2;", "3;"]);
}

#[tokio::test]
async fn a_receiver_that_is_down_for_a_while_still_gets_everything_when_it_comes_back() {
    // Reserve a port, and leave nothing listening on it.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = start(Server::builder(Steps).push_notifications(fast_push())).await;
    let r = rpc(&url, None, "SendMessage", json!({
        "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "go"}]},
        "configuration": {"taskPushNotificationConfig": {"url": format!("http://127.0.0.1:{port}/hook")}}
    }))
    .await;
    assert_eq!(
        r["result"]["task"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    // The task is done while the receiver is down; it comes up now.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let hook = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .unwrap();
    let received = capture_on(hook).await;
    let posts = wait_for(&received, 7).await;
    assert_eq!(seqs(&posts), (1..=7).collect::<Vec<_>>());
}

#[cfg(feature = "cli")] // runs the `a2a-server` binary
#[tokio::test]
async fn a_server_killed_mid_delivery_delivers_after_restart() {
    use std::io::BufRead as _;
    let dir = tempfile::tempdir().unwrap();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let spawn = || {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_a2a-server"))
            .args([
                "--data-dir",
                dir.path().to_str().unwrap(),
                "--listen",
                "127.0.0.1:0",
            ])
            .args(["--push-allow", "127.0.0.1"])
            .env("RUST_LOG", "warn")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("a2a-server listening on ")
            .unwrap()
            .to_owned();
        (child, url)
    };
    let (mut first, url) = spawn();
    let r = rpc(&url, None, "SendMessage", json!({
        "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "countdown 2"}]},
        "configuration": {"taskPushNotificationConfig": {"url": format!("http://127.0.0.1:{port}/hook")}}
    }))
    .await;
    assert_eq!(
        r["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{r}"
    );
    let events = r["result"]["task"]["history"]
        .as_array()
        .map_or(0, Vec::len);
    assert!(events > 0);
    // Killed while its deliveries are still failing (nothing listens yet).
    first.kill().unwrap();
    first.wait().unwrap();
    let hook = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .unwrap();
    let received = capture_on(hook).await;
    let (mut second, _) = spawn();
    // countdown 2: creation (working "2..."), artifact, working, artifact, completed.
    let posts = wait_for(&received, 5).await;
    second.kill().unwrap();
    second.wait().unwrap();
    assert_eq!(
        seqs(&posts),
        [1, 2, 3, 4, 5],
        "delivered after the restart, in order"
    );
    assert_eq!(
        posts[4].1["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
}

#[tokio::test]
async fn webhook_urls_to_private_addresses_are_refused() {
    let url = start(Server::builder(Steps).push_notifications(PushSettings::default())).await;
    let r = rpc(
        &url,
        None,
        "SendMessage",
        json!({
            "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "ask"}]}
        }),
    )
    .await;
    let task = r["result"]["task"]["id"].as_str().unwrap().to_owned();
    for bad in [
        "http://127.0.0.1:9/hook",
        "http://localhost:9/hook",
        "http://10.0.0.8/hook",
        "http://172.16.5.4/hook",
        "http://192.168.1.1/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://0.0.0.0/hook",
        "http://224.0.0.1/hook",
        "http://[::1]/hook",
        "http://[fd00::1]/hook",
        "http://[::ffff:127.0.0.1]/hook",
        "ftp://example.com/hook",
    ] {
        let r = rpc(
            &url,
            None,
            "CreateTaskPushNotificationConfig",
            json!({"taskId": task, "url": bad}),
        )
        .await;
        assert_eq!(r["error"]["code"], -32602, "{bad} must be refused: {r}");
        // The same, given inline with a message.
        let r = rpc(&url, None, "SendMessage", json!({
            "message": {"messageId": format!("m-{bad}"), "role": "ROLE_USER", "parts": [{"text": "go"}]},
            "configuration": {"taskPushNotificationConfig": {"url": bad}}
        }))
        .await;
        assert_eq!(
            r["error"]["code"], -32602,
            "{bad} inline must be refused: {r}"
        );
    }
    let ok = rpc(
        &url,
        None,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": task, "url": "https://hooks.example.com/a2a"}),
    )
    .await;
    assert!(ok["result"]["id"].is_string(), "{ok}");
}

#[tokio::test]
async fn push_config_operations_behave_as_the_spec_says_and_hide_credentials() {
    let url = start(Server::builder(Steps).push_notifications(fast_push())).await;
    let r = rpc(
        &url,
        None,
        "SendMessage",
        json!({
            "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "ask"}]}
        }),
    )
    .await;
    let task = r["result"]["task"]["id"].as_str().unwrap().to_owned();
    let created = rpc(
        &url,
        None,
        "CreateTaskPushNotificationConfig",
        json!({
            "taskId": task, "url": "http://127.0.0.1:9/hook", "token": "t",
            "authentication": {"scheme": "Bearer", "credentials": "secret"}
        }),
    )
    .await["result"]
        .clone();
    let id = created["id"].as_str().expect("an id").to_owned();
    assert!(
        created["authentication"].get("credentials").is_none(),
        "{created}"
    );
    let got = rpc(
        &url,
        None,
        "GetTaskPushNotificationConfig",
        json!({"taskId": task, "id": id}),
    )
    .await;
    assert_eq!(got["result"]["url"], "http://127.0.0.1:9/hook");
    assert_eq!(got["result"]["authentication"]["scheme"], "Bearer");
    assert!(
        got["result"]["authentication"].get("credentials").is_none(),
        "{got}"
    );
    let list = rpc(
        &url,
        None,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": task}),
    )
    .await;
    let configs = list["result"]["configs"].as_array().unwrap();
    assert_eq!(configs.len(), 1);
    assert_eq!(configs[0]["id"], id.as_str());
    assert_eq!(configs[0]["taskId"], task.as_str());
    assert!(!list.to_string().contains("secret"));
    for _ in 0..2 {
        let d = rpc(
            &url,
            None,
            "DeleteTaskPushNotificationConfig",
            json!({"taskId": task, "id": id}),
        )
        .await;
        assert_eq!(d["result"], json!({}), "delete is idempotent: {d}");
    }
    let gone = rpc(
        &url,
        None,
        "GetTaskPushNotificationConfig",
        json!({"taskId": task, "id": id}),
    )
    .await;
    assert_eq!(gone["error"]["code"], -32001);
    for (method, params) in [
        (
            "CreateTaskPushNotificationConfig",
            json!({"taskId": "nope", "url": "https://h.example.com/"}),
        ),
        (
            "GetTaskPushNotificationConfig",
            json!({"taskId": "nope", "id": "x"}),
        ),
        ("ListTaskPushNotificationConfigs", json!({"taskId": "nope"})),
        (
            "DeleteTaskPushNotificationConfig",
            json!({"taskId": "nope", "id": "x"}),
        ),
    ] {
        assert_eq!(
            rpc(&url, None, method, params).await["error"]["code"],
            -32001,
            "{method}"
        );
    }
}

#[tokio::test]
async fn v03_registrations_get_v03_payloads_and_the_receiver_deduplicates() {
    let (receiver, mut events) = PushReceiver::new(64);
    let hook = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook_url = format!("http://{}/hook", hook.local_addr().unwrap());
    let app = receiver.expect_token("tok").router("/hook");
    tokio::spawn(async move { axum::serve(hook, app).await });
    let url = start(Server::builder(Steps).push_notifications(fast_push())).await;
    let r = rpc(&url, None, "message/send", json!({
        "message": {"kind": "message", "messageId": "m1", "role": "user", "parts": [{"kind": "text", "text": "ask"}]}
    }))
    .await;
    let task = r["result"]["id"].as_str().unwrap().to_owned();
    let set = rpc(
        &url,
        None,
        "tasks/pushNotificationConfig/set",
        json!({
            "taskId": task, "pushNotificationConfig": {"url": hook_url, "token": "tok"}
        }),
    )
    .await;
    assert_eq!(set["result"]["taskId"], task.as_str(), "{set}");
    // Continue the task: the webhook gets the rest of it.
    let r = rpc(
        &url,
        None,
        "message/send",
        json!({
            "message": {"kind": "message", "messageId": "m2", "role": "user", "taskId": task,
                        "parts": [{"kind": "text", "text": "this one"}]}
        }),
    )
    .await;
    assert_eq!(r["result"]["status"]["state"], "completed", "{r}");
    let mut got = Vec::new();
    while got.len() < 8 {
        let e = timeout(WAIT, events.recv()).await.unwrap().unwrap();
        got.push(e);
    }
    assert!(got.iter().all(|e| e.task_id.as_str() == task));
    let ids: Vec<&str> = got
        .iter()
        .map(|e| e.notification_id.as_deref().unwrap())
        .collect();
    let mut unique = ids.clone();
    unique.dedup();
    assert_eq!(ids, unique, "no duplicates");
    assert!(matches!(
        got.last().unwrap().event.state(),
        Some(a2a_core::TaskState::Completed)
    ));
    // A retried post with the same notification id is accepted but not yielded again.
    let again = reqwest::Client::new()
        .post(&hook_url)
        .header("X-A2A-Notification-Token", "tok")
        .header("A2A-Notification-Id", ids[0])
        .json(
            &json!({"kind": "status-update", "taskId": task, "contextId": "c",
                      "status": {"state": "working"}, "final": false}),
        )
        .send()
        .await
        .unwrap();
    assert!(again.status().is_success());
    let wrong = reqwest::Client::new()
        .post(&hook_url)
        .header("X-A2A-Notification-Token", "nope")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    assert!(
        timeout(Duration::from_millis(200), events.recv())
            .await
            .is_err(),
        "nothing new"
    );
}

#[tokio::test]
async fn a_second_principal_cannot_see_or_touch_the_first_ones_task() {
    let url = start(
        Server::builder(Steps)
            .authenticator(BearerTokens::each_its_own(["alice-token", "bob-token"]))
            .push_notifications(fast_push()),
    )
    .await;
    let (alice, bob) = (Some("alice-token"), Some("bob-token"));
    // The card is public and declares the scheme.
    let card = reqwest::get(format!("{url}/.well-known/agent-card.json"))
        .await
        .unwrap();
    assert_eq!(card.status(), 200);
    let card: Value = card.json().await.unwrap();
    assert_eq!(
        card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"],
        "Bearer"
    );
    assert_eq!(
        card["securityRequirements"][0]["schemes"]["bearer"],
        json!({"list": []})
    );
    // No or wrong credentials: 401 with a challenge, in both bindings.
    for token in [None, Some("mallory")] {
        let mut req = reqwest::Client::new()
            .post(format!("{url}/"))
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let r = req.send().await.unwrap();
        assert_eq!(r.status(), 401);
        assert!(
            r.headers()["www-authenticate"]
                .to_str()
                .unwrap()
                .starts_with("Bearer")
        );
        let mut req = reqwest::Client::new().get(format!("{url}/tasks"));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        assert_eq!(req.send().await.unwrap().status(), 401);
    }

    let r = rpc(
        &url,
        alice,
        "SendMessage",
        json!({
            "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "ask"}]}
        }),
    )
    .await;
    let task = r["result"]["task"]["id"].as_str().unwrap().to_owned();
    let ctx = r["result"]["task"]["contextId"]
        .as_str()
        .unwrap()
        .to_owned();
    let not_found = |r: &Value| r["error"]["code"] == -32001;
    assert!(not_found(
        &rpc(&url, bob, "GetTask", json!({"id": task})).await
    ));
    let list = rpc(&url, bob, "ListTasks", json!({})).await;
    assert_eq!(list["result"]["totalSize"], 0, "{list}");
    assert_eq!(list["result"]["tasks"], json!([]));
    assert!(not_found(
        &rpc(&url, bob, "CancelTask", json!({"id": task})).await
    ));
    assert!(not_found(
        &rpc(&url, bob, "SubscribeToTask", json!({"id": task})).await
    ));
    assert!(not_found(&rpc(&url, bob, "SendMessage", json!({
        "message": {"messageId": "m2", "role": "ROLE_USER", "taskId": task, "contextId": ctx, "parts": [{"text": "x"}]}
    })).await));
    assert!(not_found(
        &rpc(
            &url,
            bob,
            "CreateTaskPushNotificationConfig",
            json!({"taskId": task, "url": "https://h.example.com/"})
        )
        .await
    ));
    assert!(not_found(
        &rpc(
            &url,
            bob,
            "ListTaskPushNotificationConfigs",
            json!({"taskId": task})
        )
        .await
    ));
    assert!(not_found(
        &rpc(
            &url,
            bob,
            "GetTaskPushNotificationConfig",
            json!({"taskId": task, "id": "x"})
        )
        .await
    ));
    assert!(not_found(
        &rpc(
            &url,
            bob,
            "DeleteTaskPushNotificationConfig",
            json!({"taskId": task, "id": "x"})
        )
        .await
    ));
    let rest = reqwest::Client::new()
        .get(format!("{url}/tasks/{task}"))
        .bearer_auth("bob-token")
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), 404);
    // Alice still has it, untouched.
    let mine = rpc(&url, alice, "GetTask", json!({"id": task})).await;
    assert_eq!(
        mine["result"]["status"]["state"],
        "TASK_STATE_INPUT_REQUIRED"
    );
    let list = rpc(&url, alice, "ListTasks", json!({})).await;
    assert_eq!(list["result"]["totalSize"], 1);
    let done = rpc(&url, alice, "SendMessage", json!({
        "message": {"messageId": "m3", "role": "ROLE_USER", "taskId": task, "parts": [{"text": "x"}]}
    }))
    .await;
    assert_eq!(
        done["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
}

/// An authenticator that asks an identity provider (a task answering over a channel, after a
/// pause) who owns each bearer token.
#[derive(Debug)]
struct AskTheProvider(
    tokio::sync::mpsc::Sender<(String, tokio::sync::oneshot::Sender<Option<String>>)>,
);

impl AskTheProvider {
    fn start(known: &'static [(&'static str, &'static str)]) -> Self {
        let (ask, mut questions) =
            tokio::sync::mpsc::channel::<(String, tokio::sync::oneshot::Sender<Option<String>>)>(8);
        tokio::spawn(async move {
            while let Some((token, reply)) = questions.recv().await {
                tokio::time::sleep(Duration::from_millis(5)).await;
                let who = known
                    .iter()
                    .find(|(t, _)| *t == token)
                    .map(|(_, p)| (*p).to_owned());
                let _ = reply.send(who);
            }
        });
        Self(ask)
    }
}

impl a2a_server::auth::Authenticator for AskTheProvider {
    async fn authenticate(
        &self,
        request: &axum::http::request::Parts,
    ) -> a2a_server::auth::AuthDecision {
        use a2a_server::auth::{AuthDecision, Principal};
        let Some(token) = request
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
        else {
            return AuthDecision::Missing;
        };
        let (reply, answer) = tokio::sync::oneshot::channel();
        if self.0.send((token.to_owned(), reply)).await.is_err() {
            return AuthDecision::Invalid;
        }
        match answer.await {
            Ok(Some(principal)) => AuthDecision::Allow(Principal(principal)),
            _ => AuthDecision::Invalid,
        }
    }

    fn schemes(&self) -> Vec<(String, a2a_core::SecurityScheme)> {
        vec![("bearer".to_owned(), a2a_core::SecurityScheme::bearer())]
    }

    fn challenge(&self) -> String {
        r#"Bearer realm="idp""#.to_owned()
    }
}

#[tokio::test]
async fn an_authenticator_may_await_an_identity_provider() {
    let url = start(
        Server::builder(Steps).authenticator(AskTheProvider::start(&[
            ("alice-token", "alice"),
            ("bob-token", "bob"),
        ])),
    )
    .await;
    // Unknown or missing credentials: 401 with the authenticator's challenge.
    for token in [None, Some("mallory")] {
        let mut req = reqwest::Client::new().get(format!("{url}/tasks"));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let r = req.send().await.unwrap();
        assert_eq!(r.status(), 401);
        assert_eq!(r.headers()["www-authenticate"], r#"Bearer realm="idp""#);
    }
    // The provider's answer is the principal: Alice's task is hers alone.
    let send = json!({
        "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "ask"}]}
    });
    let r = rpc(&url, Some("alice-token"), "SendMessage", send).await;
    let task = r["result"]["task"]["id"]
        .as_str()
        .expect("a task")
        .to_owned();
    let get = json!({"id": task});
    let r = rpc(&url, Some("alice-token"), "GetTask", get.clone()).await;
    assert_eq!(r["result"]["id"], task.as_str(), "{r}");
    let r = rpc(&url, Some("bob-token"), "GetTask", get).await;
    assert_eq!(
        r["error"]["code"], -32001,
        "another principal: TaskNotFound: {r}"
    );
}

#[tokio::test]
async fn the_extended_card_is_for_authenticated_callers_and_per_caller() {
    // Capability off: UnsupportedOperation.
    let plain = start(Server::builder(Steps)).await;
    assert_eq!(
        rpc(&plain, None, "GetExtendedAgentCard", json!({})).await["error"]["code"],
        -32004
    );
    // Declared by the card but not configured: ExtendedAgentCardNotConfigured.
    let declared = a2a_core::AgentCard::builder("x", "y")
        .extended_agent_card(true)
        .build();
    let url = start(
        Server::builder(Steps)
            .agent_card(declared)
            .authenticator(BearerTokens::each_its_own(["t1"])),
    )
    .await;
    assert_eq!(
        rpc(&url, Some("t1"), "GetExtendedAgentCard", json!({})).await["error"]["code"],
        -32007
    );
    // Configured per caller; unauthenticated callers get 401.
    let url = start(
        Server::builder(Steps)
            .authenticator(BearerTokens::new().token("t1", "alice").token("t2", "bob"))
            .extended_agent_card_fn(|p| {
                (p.0 == "alice")
                    .then(|| a2a_core::AgentCard::builder("for alice", "private skills").build())
            }),
    )
    .await;
    let r = reqwest::Client::new()
        .get(format!("{url}/extendedAgentCard"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let card = rpc(&url, Some("t1"), "GetExtendedAgentCard", json!({})).await;
    assert_eq!(card["result"]["name"], "for alice");
    assert_eq!(
        card["result"]["supportedInterfaces"][0]["url"],
        url.as_str()
    );
    assert_eq!(
        rpc(&url, Some("t2"), "GetExtendedAgentCard", json!({})).await["error"]["code"],
        -32007
    );
}
