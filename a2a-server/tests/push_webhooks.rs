//! Push notifications that arrive (in order, after the receiver or the server comes back),
//! refused where they must not go; push config operations as the spec says them, credentials
//! hidden; v0.3 registrations get v0.3 payloads.

mod served;

use a2a_client::webhook::PushReceiver;
use a2a_server::Server;
use a2a_server::push::PushSettings;
use axum::body::Bytes;
use axum::http::HeaderMap;
use serde_json::{Value, json};
use served::{Steps, fast_push, rpc, start};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::timeout;

const WAIT: Duration = Duration::from_secs(20);

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
