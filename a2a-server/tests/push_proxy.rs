//! Webhook deliveries and HTTP proxies: the proxy environment variables are ignored (a proxy
//! would resolve webhook host names past the SSRF guard), and an explicit proxy only gets
//! requests whose host names the guard has resolved and allowed.
//!
//! The environment test sets `HTTP_PROXY` for a child process (this test binary, running one
//! ignored test), not for this one: the variables are process-wide.

use a2a_core::{Error, Message, SendMessageRequest, SendMessageResponse, TaskId};
use a2a_server::push::PushSettings;
use a2a_server::{Agent, CallContext, RequestContext, RequestHandler, Server, TaskEvents};
use axum::http::{HeaderMap, Uri};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::timeout;

const WAIT: Duration = Duration::from_secs(20);
/// The ignored test the environment test runs in a child process.
const CHILD: &str = "child_with_proxy_variables_set_delivers_nothing_to_a_loopback_name";
/// Tells the child which host name to use.
const HOST_VAR: &str = "A2A_TEST_LOOPBACK_NAME";

/// Completes at once.
struct Done;

impl Agent for Done {
    async fn execute(&self, _: RequestContext, events: TaskEvents) -> Result<(), Error> {
        events.complete(Some(Message::agent_text("done"))).await
    }
}

/// A host name (not `localhost`, which the guard refuses by name) that resolves only to
/// loopback addresses here, from `/etc/hosts`.
async fn loopback_name() -> Option<String> {
    let hosts = std::fs::read_to_string("/etc/hosts").ok()?;
    for line in hosts.lines() {
        let mut fields = line.split('#').next()?.split_whitespace();
        if !fields.next().is_some_and(|ip| ip.starts_with("127.")) {
            continue;
        }
        for name in fields {
            let lower = name.to_ascii_lowercase();
            if lower == "localhost" || lower.ends_with(".localhost") {
                continue;
            }
            let Ok(addrs) = tokio::net::lookup_host((name, 80)).await else {
                continue;
            };
            let addrs: Vec<_> = addrs.collect();
            if !addrs.is_empty() && addrs.iter().all(|a| a.ip().is_loopback()) {
                return Some(name.to_owned());
            }
        }
    }
    None
}

/// An HTTP listener standing in for a proxy (or a webhook): records the request target and
/// `Host` of everything it gets, and answers 200.
async fn recorder() -> (Arc<Mutex<Vec<String>>>, u16) {
    let got: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = got.clone();
    let app = axum::Router::new().fallback(move |uri: Uri, headers: HeaderMap| {
        let sink = sink.clone();
        async move {
            let host = headers
                .get("host")
                .and_then(|h| h.to_str().ok())
                .unwrap_or_default();
            sink.lock().unwrap().push(format!("{uri} (Host: {host})"));
            "ok"
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (got, port)
}

/// Sends a message whose task registers `hook`; returns the task.
async fn task_with_hook(h: &RequestHandler, hook: &str) -> TaskId {
    let req: SendMessageRequest = serde_json::from_value(json!({
        "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "go"}]},
        "configuration": {"taskPushNotificationConfig": {"url": hook}}
    }))
    .unwrap();
    match h
        .send_message(&CallContext::default(), req)
        .await
        .unwrap()
        .into()
    {
        SendMessageResponse::Task(t) => t.id,
        SendMessageResponse::Message(m) => panic!("a task, not {m:?}"),
    }
}

/// Waits for the webhook's dead letter; returns its error.
async fn dead_letter(h: &RequestHandler, task: &TaskId) -> String {
    timeout(WAIT, async {
        loop {
            if let Some(r) = h.dead_letters(task).await.unwrap().pop() {
                return r.dead_letter.unwrap().error;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the delivery gives up")
}

#[tokio::test]
async fn proxy_environment_variables_do_not_carry_webhooks_past_the_guard() {
    let Some(name) = loopback_name().await else {
        eprintln!("skipped: /etc/hosts has no name for a loopback address but localhost");
        return;
    };
    let (proxy, port) = recorder().await;
    let proxy_url = format!("http://127.0.0.1:{port}");
    let status = tokio::process::Command::new(std::env::current_exe().unwrap())
        .args([CHILD, "--exact", "--ignored", "--nocapture"])
        .env(HOST_VAR, &name)
        .env("HTTP_PROXY", &proxy_url)
        .env("http_proxy", &proxy_url)
        .env("HTTPS_PROXY", &proxy_url)
        .env("https_proxy", &proxy_url)
        .env("ALL_PROXY", &proxy_url)
        .env("all_proxy", &proxy_url)
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        .status()
        .await
        .unwrap();
    assert!(status.success(), "the child test failed");
    assert_eq!(
        *proxy.lock().unwrap(),
        Vec::<String>::new(),
        "the proxy got a webhook"
    );
}

#[tokio::test]
#[ignore = "run by proxy_environment_variables_do_not_carry_webhooks_past_the_guard"]
async fn child_with_proxy_variables_set_delivers_nothing_to_a_loopback_name() {
    let Ok(name) = std::env::var(HOST_VAR) else {
        return; // not run by the parent test
    };
    let (hook, port) = recorder().await;
    let server = Server::builder(Done)
        .push_notifications(PushSettings::default().max_attempts(1))
        .build()
        .unwrap();
    let h = server.handler();
    let task = task_with_hook(&h, &format!("http://{name}:{port}/hook")).await;
    let error = dead_letter(&h, &task).await;
    assert!(error.contains("refused"), "{error}");
    assert!(hook.lock().unwrap().is_empty(), "delivered to loopback");
}

#[tokio::test]
async fn an_explicit_proxy_gets_only_requests_for_hosts_the_guard_allows() {
    let (proxy, proxy_port) = recorder().await;
    // The proxy's own host name is exempt from the guard (here, a loopback one).
    let settings = || {
        PushSettings::default()
            .proxy(&format!("http://localhost:{proxy_port}"))
            .unwrap()
            .max_attempts(1)
    };
    // Allowed: handed to the proxy, host name and all.
    let server = Server::builder(Done)
        .push_notifications(settings().allow("hooks.test").unwrap())
        .build()
        .unwrap();
    let task = task_with_hook(&server.handler(), "http://hooks.test/hook").await;
    let got = timeout(WAIT, async {
        loop {
            if let Some(first) = proxy.lock().unwrap().first().cloned() {
                return first;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the proxy gets the delivery");
    assert_eq!(got, "http://hooks.test/hook (Host: hooks.test)");
    assert!(
        server
            .handler()
            .dead_letters(&task)
            .await
            .unwrap()
            .is_empty()
    );

    // A name that resolves to loopback: refused before the proxy sees it.
    let Some(name) = loopback_name().await else {
        eprintln!("partly skipped: /etc/hosts has no loopback name but localhost");
        return;
    };
    let (hook, port) = recorder().await;
    proxy.lock().unwrap().clear();
    let server = Server::builder(Done)
        .push_notifications(settings())
        .build()
        .unwrap();
    let h = server.handler();
    let task = task_with_hook(&h, &format!("http://{name}:{port}/hook")).await;
    let error = dead_letter(&h, &task).await;
    assert!(error.contains("not handed to the proxy"), "{error}");
    assert!(proxy.lock().unwrap().is_empty(), "the proxy got it");
    assert!(hook.lock().unwrap().is_empty());
}
