//! `historyLength` on GetTask, ListTasks and SendMessage (checklist 18), in both bindings:
//! `0` → no `history` key, `N` → at most the N most recent messages, absent → full history,
//! negative → invalid params.

use a2a_e2e::agents::Kitchen;
use a2a_e2e::{ALL, Binding, Kind, Op, TestServer, reply_params, str_at, texts};
use serde_json::{Value, json};

/// A greet task answered with `Ada`: four messages in its history.
async fn four_message_task(srv: &TestServer) -> String {
    let task = srv
        .make_task(Binding::JsonRpc, "TASK_STATE_INPUT_REQUIRED")
        .await;
    let id = str_at(&task, "id").to_owned();
    let done = srv
        .ok(Binding::JsonRpc, Op::SendMessage, reply_params(&id, "Ada"))
        .await;
    assert_eq!(done["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    id
}

fn history_texts(task: &Value) -> Vec<String> {
    task["history"]
        .as_array()
        .expect("a history array")
        .iter()
        .map(|m| texts(&m["parts"]).join(""))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_task_applies_history_length() {
    let srv = TestServer::start(Kitchen).await;
    let id = four_message_task(&srv).await;
    for b in ALL {
        let full = srv.ok(b, Op::GetTask, json!({"id": id})).await;
        assert_eq!(
            history_texts(&full),
            ["greet", "What is your name?", "Ada", "Hello, Ada!"],
            "{b:?}: absent → full history"
        );
        let none = srv
            .ok(b, Op::GetTask, json!({"id": id, "historyLength": 0}))
            .await;
        assert!(
            none.get("history").is_none(),
            "{b:?}: 0 → no history key: {none:#}"
        );
        assert_eq!(
            none["status"], full["status"],
            "the rest of the task is unchanged"
        );
        let two = srv
            .ok(b, Op::GetTask, json!({"id": id, "historyLength": 2}))
            .await;
        assert_eq!(
            history_texts(&two),
            ["Ada", "Hello, Ada!"],
            "{b:?}: 2 most recent"
        );
        assert_eq!(two["history"][0]["role"], "ROLE_USER");
        assert_eq!(two["history"][1]["role"], "ROLE_AGENT");
        let many = srv
            .ok(b, Op::GetTask, json!({"id": id, "historyLength": 50}))
            .await;
        assert_eq!(many["history"], full["history"]);
        srv.err(b, Op::GetTask, json!({"id": id, "historyLength": -1}))
            .await
            .assert_kind(Kind::InvalidParams);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_tasks_applies_history_length_to_every_task() {
    let srv = TestServer::start(Kitchen).await;
    four_message_task(&srv).await;
    four_message_task(&srv).await;
    for b in ALL {
        let full = srv.ok(b, Op::ListTasks, json!({})).await;
        let tasks = full["tasks"].as_array().unwrap();
        assert_eq!(tasks.len(), 2);
        for t in tasks {
            assert_eq!(history_texts(t).len(), 4, "{b:?}: absent → full history");
        }
        let none = srv.ok(b, Op::ListTasks, json!({"historyLength": 0})).await;
        for t in none["tasks"].as_array().unwrap() {
            assert!(t.get("history").is_none(), "{b:?}: {t:#}");
        }
        let one = srv.ok(b, Op::ListTasks, json!({"historyLength": 1})).await;
        for t in one["tasks"].as_array().unwrap() {
            assert_eq!(history_texts(t), ["Hello, Ada!"], "{b:?}");
        }
        srv.err(b, Op::ListTasks, json!({"historyLength": -3}))
            .await
            .assert_kind(Kind::InvalidParams);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_message_applies_history_length_to_the_returned_task() {
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        // A new task: one message in its history.
        let mut params = reply_params("unused", "hello");
        params["message"].as_object_mut().unwrap().remove("taskId");
        params["configuration"] = json!({"historyLength": 0});
        let task = srv.ok(b, Op::SendMessage, params).await["task"].clone();
        assert!(task.get("history").is_none(), "{b:?}: {task:#}");
        let stored = srv.get_task(str_at(&task, "id")).await;
        assert_eq!(
            history_texts(&stored),
            ["hello"],
            "only the answer is trimmed"
        );

        // A continuation: four messages, trimmed to the latest two.
        let greet = srv.make_task(b, "TASK_STATE_INPUT_REQUIRED").await;
        let mut params = reply_params(str_at(&greet, "id"), "Bo");
        params["configuration"] = json!({"historyLength": 2});
        let done = srv.ok(b, Op::SendMessage, params).await["task"].clone();
        assert_eq!(history_texts(&done), ["Bo", "Hello, Bo!"]);

        // Absent: the full history.
        let greet = srv.make_task(b, "TASK_STATE_INPUT_REQUIRED").await;
        let done = srv
            .ok(b, Op::SendMessage, reply_params(str_at(&greet, "id"), "Cy"))
            .await["task"]
            .clone();
        assert_eq!(
            history_texts(&done),
            ["greet", "What is your name?", "Cy", "Hello, Cy!"]
        );
    }
}
