//! A2A 1.1 task generations on every binding: the `generation` of tasks and events (1 at
//! creation, one more per event, no gap), long-poll `GetTask` (`currentGeneration`), and
//! `ifGenerationMatch` (`TaskGenerationMismatchError`: -32010 / 409 / ABORTED). A 1.0 request's
//! answers carry none of it.

use a2a_e2e::agents::{Gated, Kitchen, Step};
use a2a_e2e::{ALL, Binding, Kind, Op, TestServer, reply_params, send_params, str_at, within};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const V11: &[(&str, &str)] = &[("A2A-Version", "1.1")];
const V10: &[(&str, &str)] = &[("A2A-Version", "1.0")];

/// A ProtoJSON `int64`: written as a decimal string.
#[track_caller]
fn generation(v: &Value) -> i64 {
    let g = v["generation"]
        .as_str()
        .unwrap_or_else(|| panic!("an int64 string `generation` in {v:#}"));
    g.parse().expect("a decimal generation")
}

/// The object inside a StreamResponse (`task`, `statusUpdate`, …).
fn payload(event: &Value) -> &Value {
    event
        .as_object()
        .and_then(|o| o.values().next())
        .expect("one member")
}

/// Whether `v` has a `generation` key at any depth.
fn has_generation(v: &Value) -> bool {
    match v {
        Value::Object(o) => o.contains_key("generation") || o.values().any(has_generation),
        Value::Array(a) => a.iter().any(has_generation),
        _ => false,
    }
}

async fn call(server: &TestServer, binding: Binding, op: Op, params: Value) -> Value {
    match server.call_with(binding, op, params, V11).await {
        Ok(v) => v,
        Err(e) => panic!("{binding:?} {op:?} failed: {:#}", e.body),
    }
}

/// Streams a countdown at 1.1 and returns its events.
async fn countdown(server: &TestServer, binding: Binding) -> Vec<Value> {
    let params = send_params("countdown 3");
    let mut stream = server
        .open_stream(binding, Op::SendStreamingMessage, params, V11)
        .await
        .unwrap_or_else(|e| panic!("{binding:?}: {:#}", e.body));
    within("the countdown ends", stream.rest()).await
}

#[tokio::test]
async fn a_countdowns_generations_run_from_1_without_gaps_in_event_order_on_every_binding() {
    let server = TestServer::start(Kitchen).await;
    for binding in ALL {
        let events = countdown(&server, binding).await;
        // 3 × (WORKING, chunk), then COMPLETED, the first WORKING creating the task: 7 events.
        let generations: Vec<i64> = events.iter().map(|e| generation(payload(e))).collect();
        assert_eq!(
            generations,
            (1..=7).collect::<Vec<_>>(),
            "{binding:?}: {events:#?}"
        );
        let id = str_at(payload(&events[0]), "id").to_owned();
        let task = call(&server, binding, Op::GetTask, json!({"id": id})).await;
        assert_eq!(
            generation(&task),
            7,
            "{binding:?}: the task is at its last event's"
        );
        // A replay of the log carries the same generations (SSE ids are the same numbers).
        let mut replay = server
            .open_stream(
                binding,
                Op::SubscribeToTask,
                json!({"id": id}),
                &[("A2A-Version", "1.1"), ("Last-Event-ID", "0")],
            )
            .await
            .unwrap_or_else(|e| panic!("{binding:?}: {:#}", e.body));
        let replayed: Vec<i64> = within("the replay ends", replay.rest())
            .await
            .iter()
            .map(|e| generation(payload(e)))
            .collect();
        assert_eq!(replayed, generations, "{binding:?}: the replay");
        let listed = call(&server, binding, Op::ListTasks, json!({"pageSize": 100})).await;
        let row = (listed["tasks"].as_array().expect("tasks").iter())
            .find(|t| t["id"] == id.as_str())
            .expect("the task is listed");
        assert_eq!(generation(row), 7, "{binding:?}: ListTasks");
    }
    server.stop().await;
}

#[tokio::test]
async fn a_1_0_request_gets_no_generation_field_anywhere() {
    let server = TestServer::start(Kitchen).await;
    for binding in ALL {
        for headers in [V10, &[][..]] {
            let mut stream = server
                .open_stream(
                    binding,
                    Op::SendStreamingMessage,
                    send_params("countdown 2"),
                    headers,
                )
                .await
                .unwrap_or_else(|e| panic!("{binding:?}: {:#}", e.body));
            let events = within("the countdown ends", stream.rest()).await;
            assert!(
                !events.iter().any(has_generation),
                "{binding:?} {headers:?}: {events:#?}"
            );
            let id = str_at(payload(&events[0]), "id").to_owned();
            // Nor does a replay of the task's log.
            let mut replay_headers = headers.to_vec();
            replay_headers.push(("Last-Event-ID", "0"));
            let mut replay = server
                .open_stream(
                    binding,
                    Op::SubscribeToTask,
                    json!({"id": id}),
                    &replay_headers,
                )
                .await
                .unwrap_or_else(|e| panic!("{binding:?}: {:#}", e.body));
            let replayed = within("the replay ends", replay.rest()).await;
            assert_eq!(replayed.len(), events.len(), "{binding:?} {headers:?}");
            assert!(
                !replayed.iter().any(has_generation),
                "{binding:?} {headers:?}: {replayed:#?}"
            );
            // A currentGeneration in a 1.0 request is an unknown field: answered at once.
            let get = json!({"id": id, "currentGeneration": "99"});
            let task = server
                .call_with(binding, Op::GetTask, get, headers)
                .await
                .unwrap();
            assert!(!has_generation(&task), "{binding:?} {headers:?}: {task:#}");
            let sent = server
                .call_with(binding, Op::SendMessage, send_params("hello"), headers)
                .await
                .unwrap();
            assert!(!has_generation(&sent), "{binding:?} {headers:?}: {sent:#}");
            let listed = server
                .call_with(binding, Op::ListTasks, json!({}), headers)
                .await
                .unwrap();
            assert!(
                !has_generation(&listed),
                "{binding:?} {headers:?}: {listed:#}"
            );
            let asked = server
                .call_with(binding, Op::SendMessage, send_params("greet"), headers)
                .await
                .unwrap();
            let asked = str_at(&asked["task"], "id").to_owned();
            // ifGenerationMatch is unknown in 1.0 too: a wrong one is ignored.
            let mut answer = reply_params(&asked, "Ada");
            answer["configuration"] = json!({"ifGenerationMatch": "77"});
            let done = server
                .call_with(binding, Op::SendMessage, answer, headers)
                .await
                .unwrap();
            assert_eq!(done["task"]["status"]["state"], "TASK_STATE_COMPLETED");
            assert!(!has_generation(&done), "{binding:?} {headers:?}: {done:#}");
            // Nor does a cancel's.
            let mut params = send_params("countdown 50");
            params["configuration"] = json!({"returnImmediately": true});
            let running = server
                .call_with(binding, Op::SendMessage, params, headers)
                .await
                .unwrap();
            let running = str_at(&running["task"], "id").to_owned();
            let canceled = server
                .call_with(binding, Op::CancelTask, json!({"id": running}), headers)
                .await
                .unwrap();
            assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED");
            assert!(
                !has_generation(&canceled),
                "{binding:?} {headers:?}: {canceled:#}"
            );
        }
    }
    server.stop().await;
}

/// A gated task, created WORKING (generation 1), and its id.
async fn working(server: &TestServer, binding: Binding) -> String {
    let mut params = send_params("go");
    params["configuration"] = json!({"returnImmediately": true});
    let task = call(server, binding, Op::SendMessage, params).await;
    assert_eq!(task["task"]["status"]["state"], "TASK_STATE_WORKING");
    assert_eq!(generation(&task["task"]), 1);
    str_at(&task["task"], "id").to_owned()
}

#[tokio::test]
async fn a_long_poll_is_held_until_the_task_changes_on_every_binding() {
    let (agent, gate) = Gated::new();
    let server = TestServer::start(agent).await;
    for binding in ALL {
        let id = working(&server, binding).await;
        // Already past: answered at once.
        let past = json!({"id": id, "currentGeneration": "0"});
        assert_eq!(
            generation(&call(&server, binding, Op::GetTask, past).await),
            1
        );
        let held = json!({"id": id, "currentGeneration": "1"});
        let poll = server.call_with(binding, Op::GetTask, held, V11);
        tokio::pin!(poll);
        // Held while nothing changes (a bounded wait: the server holds up to 30 s).
        assert!(
            tokio::time::timeout(Duration::from_millis(300), &mut poll)
                .await
                .is_err(),
            "{binding:?}: a long poll at the current generation is held"
        );
        let released = Instant::now();
        gate.step(Step::Working("more".into()));
        let task = within("the long poll returns", poll).await.unwrap();
        assert_eq!(generation(&task), 2, "{binding:?}: {task:#}");
        assert!(
            released.elapsed() < Duration::from_secs(2),
            "{binding:?}: woken by the change"
        );
        gate.step(Step::Complete);
        let done = json!({"id": id, "currentGeneration": "2"});
        let task = within(
            "the task completes",
            call(&server, binding, Op::GetTask, done),
        )
        .await;
        assert_eq!(generation(&task), 3, "{binding:?}: {task:#}");
        // An ended task never changes: a long poll at its generation is answered at once.
        let ended = json!({"id": id, "currentGeneration": "3"});
        let task = within(
            "an ended task answers at once",
            call(&server, binding, Op::GetTask, ended),
        )
        .await;
        assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
        assert_eq!(generation(&task), 3);
    }
    server.stop().await;
}

#[tokio::test]
async fn a_long_poll_ends_at_the_servers_wait_and_past_the_cap_at_once() {
    let (agent, _gate) = Gated::new();
    let wait = Duration::from_millis(400);
    let server = TestServer::start_with(agent, |b| b.long_poll(wait, 1)).await;
    let id = working(&server, Binding::JsonRpc).await;
    let held = json!({"id": id, "currentGeneration": "1"});
    let started = Instant::now();
    let first = server.call_with(Binding::Rest, Op::GetTask, held.clone(), V11);
    let second = async {
        // Issued once the first is held (the cap is one).
        tokio::time::sleep(Duration::from_millis(100)).await;
        let at = Instant::now();
        let task = call(&server, Binding::Grpc, Op::GetTask, held.clone()).await;
        (task, at.elapsed())
    };
    let (first, (second, second_took)) =
        within("both polls return", async { tokio::join!(first, second) }).await;
    let first = first.unwrap();
    assert_eq!(generation(&first), 1, "the wait ran out: the task as it is");
    assert!(started.elapsed() >= wait, "held for the server's wait");
    assert_eq!(generation(&second), 1);
    assert!(
        second_took < wait,
        "past the cap, answered at once ({second_took:?})"
    );
}

#[tokio::test]
async fn rest_long_polls_with_the_current_generation_query_parameter() {
    let (agent, gate) = Gated::new();
    let server = TestServer::start(agent).await;
    let id = working(&server, Binding::Rest).await;
    let url = server.url(&format!("/tasks/{id}?currentGeneration=1"));
    let poll = server.http.get(url).header("A2A-Version", "1.1").send();
    tokio::pin!(poll);
    assert!(
        tokio::time::timeout(Duration::from_millis(300), &mut poll)
            .await
            .is_err()
    );
    gate.step(Step::Working("more".into()));
    let task: Value = within("the poll returns", poll)
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(generation(&task), 2, "{task:#}");
    gate.step(Step::Complete);
}

#[tokio::test]
async fn of_two_answers_at_the_same_generation_exactly_one_wins_on_every_binding() {
    let server = TestServer::start(Kitchen).await;
    for binding in ALL {
        let asked = call(&server, binding, Op::SendMessage, send_params("greet")).await;
        let task = &asked["task"];
        assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
        let (id, at) = (str_at(task, "id").to_owned(), generation(task));
        let answer = |name: &str| {
            let mut p = reply_params(&id, name);
            p["configuration"] = json!({"ifGenerationMatch": at.to_string()});
            server.call_with(binding, Op::SendMessage, p, V11)
        };
        let (a, b) = within("both answers return", async {
            tokio::join!(answer("Ada"), answer("Bob"))
        })
        .await;
        let (won, lost) = match (a, b) {
            (Ok(won), Err(lost)) | (Err(lost), Ok(won)) => (won, lost),
            (a, b) => panic!("{binding:?}: exactly one must win: {a:?} / {b:?}"),
        };
        assert_eq!(won["task"]["status"]["state"], "TASK_STATE_COMPLETED");
        lost.assert_kind(Kind::TaskGenerationMismatch)
            .assert_metadata("taskId", &id)
            .assert_metadata("expectedGeneration", &at.to_string());
        // A stale generation on a task waiting for input again is refused the same way.
        let asked = call(&server, binding, Op::SendMessage, send_params("greet")).await;
        let id = str_at(&asked["task"], "id").to_owned();
        let stale = generation(&asked["task"]) - 1;
        let mut p = reply_params(&id, "Cy");
        p["configuration"] = json!({"ifGenerationMatch": stale.to_string()});
        let err = server
            .call_with(binding, Op::SendMessage, p, V11)
            .await
            .unwrap_err();
        err.assert_kind(Kind::TaskGenerationMismatch);
        // Ignored on a message that creates a task.
        let mut p = send_params("hello");
        p["configuration"] = json!({"ifGenerationMatch": "42"});
        let created = call(&server, binding, Op::SendMessage, p).await;
        assert_eq!(created["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    }
    server.stop().await;
}

#[tokio::test]
async fn a_negative_generation_is_invalid_params() {
    let server = TestServer::start(Kitchen).await;
    for binding in ALL {
        let get = json!({"id": "t-1", "currentGeneration": "-1"});
        let err = server
            .call_with(binding, Op::GetTask, get, V11)
            .await
            .unwrap_err();
        err.assert_kind(Kind::InvalidParams);
    }
    server.stop().await;
}

#[tokio::test]
async fn the_card_lists_a_1_1_interface_for_every_binding_after_the_1_0_ones() {
    let server = TestServer::start(Kitchen).await;
    let card: Value = server.card().await;
    let interfaces: Vec<(String, String)> =
        (card["supportedInterfaces"].as_array().unwrap().iter())
            .map(|i| {
                (
                    i["protocolBinding"].as_str().unwrap().to_owned(),
                    i["protocolVersion"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
    for binding in ["JSONRPC", "HTTP+JSON", "GRPC"] {
        let v10 = interfaces
            .iter()
            .position(|(b, v)| b == binding && v == "1.0");
        let v11 = interfaces
            .iter()
            .position(|(b, v)| b == binding && v == "1.1");
        assert!(v10.is_some() && v11 > v10, "{binding}: {interfaces:?}");
    }
    server.stop().await;
}
