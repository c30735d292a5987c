//! A2A 1.1 task generations that outlast the server: on every binding, a countdown's
//! generations (1..7, its events' order) and an INPUT_REQUIRED task's are the same after a
//! restart on the sled store, and go on from there (a stale `ifGenerationMatch` refused, the
//! right one accepted). And push: a webhook registered by a 1.1 request gets each task event with
//! its generation, as a 1.1 stream would carry it; one registered by a 1.0 request gets none.

use a2a_e2e::agents::Kitchen;
use a2a_e2e::{ALL, Binding, Kind, Op, TestServer, reply_params, send_params, str_at, within};
use a2a_server::SledStore;
use a2a_server::push::PushSettings;
use serde_json::{Value, json};

const V11: &[(&str, &str)] = &[("A2A-Version", "1.1")];

#[track_caller]
fn generation(v: &Value) -> i64 {
    let g = v["generation"]
        .as_str()
        .unwrap_or_else(|| panic!("an int64 string `generation` in {v:#}"));
    g.parse().expect("a decimal generation")
}

fn payload(event: &Value) -> &Value {
    event
        .as_object()
        .and_then(|o| o.values().next())
        .expect("one member")
}

async fn call(server: &TestServer, binding: Binding, op: Op, params: Value) -> Value {
    match server.call_with(binding, op, params, V11).await {
        Ok(v) => v,
        Err(e) => panic!("{binding:?} {op:?} failed: {:#}", e.body),
    }
}

/// The generations of `id`'s whole log, replayed at 1.1.
async fn replay(server: &TestServer, binding: Binding, id: &str) -> Vec<i64> {
    let headers = [("A2A-Version", "1.1"), ("Last-Event-ID", "0")];
    let mut stream = server
        .open_stream(binding, Op::SubscribeToTask, json!({"id": id}), &headers)
        .await
        .unwrap_or_else(|e| panic!("{binding:?}: {:#}", e.body));
    let events = within("the replay ends", stream.rest()).await;
    events.iter().map(|e| generation(payload(e))).collect()
}

async fn start(dir: &std::path::Path) -> TestServer {
    let store = SledStore::open(dir).expect("the sled store opens");
    TestServer::start_with(Kitchen, move |b| b.task_store(store)).await
}

#[tokio::test]
async fn generations_are_the_same_after_a_sled_restart_and_go_on_from_there_on_every_binding() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    let mut made = Vec::new();
    for binding in ALL {
        let mut stream = server
            .open_stream(
                binding,
                Op::SendStreamingMessage,
                send_params("countdown 3"),
                V11,
            )
            .await
            .unwrap_or_else(|e| panic!("{binding:?}: {:#}", e.body));
        let events = within("the countdown ends", stream.rest()).await;
        let generations: Vec<i64> = events.iter().map(|e| generation(payload(e))).collect();
        assert_eq!(generations, (1..=7).collect::<Vec<_>>(), "{binding:?}");
        let counted = str_at(payload(&events[0]), "id").to_owned();
        let asked = call(&server, binding, Op::SendMessage, send_params("greet")).await;
        assert_eq!(
            asked["task"]["status"]["state"],
            "TASK_STATE_INPUT_REQUIRED"
        );
        let at = generation(&asked["task"]);
        made.push((
            binding,
            counted,
            str_at(&asked["task"], "id").to_owned(),
            at,
        ));
    }
    server.stop().await;

    let server = start(dir.path()).await;
    for (binding, counted, asked, at) in made {
        let task = call(&server, binding, Op::GetTask, json!({"id": counted})).await;
        assert_eq!(generation(&task), 7, "{binding:?}: after the restart");
        assert_eq!(
            replay(&server, binding, &counted).await,
            (1..=7).collect::<Vec<_>>(),
            "{binding:?}: the log after the restart"
        );
        let task = call(&server, binding, Op::GetTask, json!({"id": asked})).await;
        assert_eq!(generation(&task), at, "{binding:?}");
        // A stale generation is refused, the task's own accepted: WORKING, then COMPLETED.
        let answer = |name: &str, at: i64| {
            let mut p = reply_params(&asked, name);
            p["configuration"] = json!({"ifGenerationMatch": at.to_string()});
            p
        };
        let stale = server
            .call_with(binding, Op::SendMessage, answer("Ada", at - 1), V11)
            .await
            .unwrap_err();
        stale.assert_kind(Kind::TaskGenerationMismatch);
        let done = call(&server, binding, Op::SendMessage, answer("Ada", at)).await;
        assert_eq!(done["task"]["status"]["state"], "TASK_STATE_COMPLETED");
        assert_eq!(generation(&done["task"]), at + 2, "{binding:?}");
        assert_eq!(
            replay(&server, binding, &asked).await,
            (1..=at + 2).collect::<Vec<_>>(),
            "{binding:?}: numbered on from before the restart, no gap, no repeat"
        );
    }
    server.stop().await;
}

/// A webhook on `127.0.0.1:0` that keeps every body it is posted.
async fn webhook() -> (String, tokio::sync::mpsc::Receiver<Value>) {
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |body: axum::body::Bytes| {
            let tx = tx.clone();
            async move {
                let v: Value = serde_json::from_slice(&body).expect("a JSON webhook body");
                let _ = tx.send(v).await;
                axum::http::StatusCode::OK
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, rx)
}

/// The bodies posted to the webhook for one task, up to its COMPLETED status.
async fn delivered(rx: &mut tokio::sync::mpsc::Receiver<Value>) -> Vec<Value> {
    let mut bodies = Vec::new();
    within("the webhook hears the task complete", async {
        while let Some(body) = rx.recv().await {
            let done = body["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED";
            bodies.push(body);
            if done {
                break;
            }
        }
    })
    .await;
    bodies
}

/// Whether `v` has a `generation` key at any depth.
fn has_generation(v: &Value) -> bool {
    match v {
        Value::Object(o) => o.contains_key("generation") || o.values().any(has_generation),
        Value::Array(a) => a.iter().any(has_generation),
        _ => false,
    }
}

/// A countdown sent with a webhook at `version`; what the webhook was posted.
async fn pushed(server: &TestServer, binding: Binding, version: &str) -> Vec<Value> {
    let (url, mut rx) = webhook().await;
    let mut params = send_params("countdown 2");
    params["configuration"] = json!({"taskPushNotificationConfig": {"url": url}});
    let headers = [("A2A-Version", version)];
    let done = server
        .call_with(binding, Op::SendMessage, params, &headers)
        .await
        .unwrap_or_else(|e| panic!("{binding:?}: {:#}", e.body));
    assert_eq!(done["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    let bodies = delivered(&mut rx).await;
    // The creation (the first WORKING), its chunk, WORKING and chunk, COMPLETED.
    assert_eq!(bodies.len(), 5, "{binding:?}: {bodies:#?}");
    bodies
}

#[tokio::test]
async fn a_webhook_gets_generations_when_registered_at_1_1_and_none_at_1_0() {
    let push = PushSettings::default().allow("127.0.0.1").unwrap();
    let server = TestServer::start_with(Kitchen, |b| b.push_notifications(push)).await;
    for binding in ALL {
        let bodies = pushed(&server, binding, "1.1").await;
        let generations: Vec<i64> = bodies.iter().map(|b| generation(payload(b))).collect();
        assert_eq!(generations, [1, 2, 3, 4, 5], "{binding:?}: {bodies:#?}");
        let bodies = pushed(&server, binding, "1.0").await;
        assert!(
            !bodies.iter().any(has_generation),
            "{binding:?}: {bodies:#?}"
        );
    }
    server.stop().await;
}
