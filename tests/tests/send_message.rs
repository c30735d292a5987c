//! SendMessage in both bindings: request validation (checklist 4), result wrappers (10), task
//! and context ids (11, 15), continuation rules (12, 13, 14), blocking (16) and
//! `returnImmediately` (17).

use a2a_e2e::agents::{Gated, Kitchen, REPORT_ID, Step};
use a2a_e2e::sse::summary;
use a2a_e2e::{
    ALL, Binding, Kind, Op, TestServer, reply_params, send_params, str_at, texts, user_message,
    within,
};
use serde_json::{Value, json};
use std::collections::HashSet;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_message_wraps_a_task_in_result_task_never_a_bare_task() {
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        let result = srv.ok(b, Op::SendMessage, send_params("hello")).await;
        let keys: Vec<&String> = result.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["task"], "{b:?}: {result:#}");
        let task = &result["task"];
        assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
        assert_eq!(texts(&task["artifacts"][0]["parts"]), ["hello"]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_answer_is_wrapped_in_result_message_and_names_no_task() {
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        let mut params = send_params("reply please");
        params["message"]["contextId"] = json!("ctx-reply");
        let result = srv.ok(b, Op::SendMessage, params).await;
        let keys: Vec<&String> = result.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["message"], "{b:?}: {result:#}");
        let m = &result["message"];
        assert_eq!(m["role"], "ROLE_AGENT");
        assert_eq!(texts(&m["parts"]), ["reply: reply please"]);
        assert_eq!(
            m["contextId"], "ctx-reply",
            "agent messages carry the context"
        );
        assert!(str_at(m, "messageId").len() > 4);
        // No task exists, so the message must not point at one (spec §2.2: "taskId … Agent:
        // only if a task exists").
        assert!(
            m.get("taskId").is_none(),
            "a message reply names no task: {m:#}"
        );
    }
    let listed = srv.ok(Binding::JsonRpc, Op::ListTasks, json!({})).await;
    assert_eq!(listed["totalSize"], 0, "a message reply creates no task");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_task_ids_are_server_generated_unique_and_come_with_a_context_id() {
    let srv = TestServer::start(Kitchen).await;
    let mut ids = HashSet::new();
    let mut contexts = HashSet::new();
    for b in ALL {
        for i in 0..5 {
            let task = srv.send_task(b, &format!("hello {i}")).await;
            let id = str_at(&task, "id").to_owned();
            let ctx = str_at(&task, "contextId").to_owned();
            assert!(!id.is_empty() && !ctx.is_empty());
            assert_eq!(task["history"][0]["taskId"], id.as_str());
            assert_eq!(task["history"][0]["contextId"], ctx.as_str());
            assert!(ids.insert(id), "task ids are unique");
            assert!(contexts.insert(ctx), "each new task gets its own context");
        }
    }
    // A client-chosen context is kept; the task id is still the server's.
    for b in ALL {
        let mut params = send_params("in my context");
        params["message"]["contextId"] = json!(format!("client-ctx-{b:?}"));
        let task = srv.ok(b, Op::SendMessage, params).await["task"].clone();
        assert_eq!(task["contextId"], format!("client-ctx-{b:?}"));
        assert!(ids.insert(str_at(&task, "id").to_owned()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_naming_an_unknown_task_is_task_not_found() {
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        // Clients cannot create tasks with their own ids.
        let err = srv
            .err(b, Op::SendMessage, reply_params("my-own-task-id", "hi"))
            .await;
        err.assert_kind(Kind::TaskNotFound)
            .assert_metadata("taskId", "my-own-task-id");
    }
    let listed = srv.ok(Binding::JsonRpc, Op::ListTasks, json!({})).await;
    assert_eq!(listed["totalSize"], 0, "no task was created");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_to_a_terminal_task_is_unsupported_operation_and_changes_nothing() {
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        for state in [
            "TASK_STATE_COMPLETED",
            "TASK_STATE_FAILED",
            "TASK_STATE_CANCELED",
            "TASK_STATE_REJECTED",
        ] {
            let task = srv.make_task(b, state).await;
            let id = str_at(&task, "id");
            let before = srv.get_task(id).await;
            let err = srv
                .err(b, Op::SendMessage, reply_params(id, "one more thing"))
                .await;
            err.assert_kind(Kind::UnsupportedOperation)
                .assert_metadata("taskId", id);
            assert_eq!(
                srv.get_task(id).await,
                before,
                "{state}: the task is unchanged"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_id_with_another_context_id_is_invalid_params_and_changes_nothing() {
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        let task = srv.make_task(b, "TASK_STATE_INPUT_REQUIRED").await;
        let id = str_at(&task, "id");
        let before = srv.get_task(id).await;
        let mut params = reply_params(id, "Ada");
        params["message"]["contextId"] = json!("some-other-context");
        let err = srv.err(b, Op::SendMessage, params).await;
        err.assert_kind(Kind::InvalidParams);
        assert_eq!(err.violated_fields(), ["message.contextId"]);
        assert_eq!(srv.get_task(id).await, before, "the task is unchanged");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follow_up_with_only_the_task_id_keeps_the_tasks_context() {
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        let task = srv.make_task(b, "TASK_STATE_INPUT_REQUIRED").await;
        let id = str_at(&task, "id");
        let ctx = str_at(&task, "contextId");
        assert_eq!(
            texts(&task["status"]["message"]["parts"]),
            ["What is your name?"]
        );
        let done = srv.ok(b, Op::SendMessage, reply_params(id, "Ada")).await["task"].clone();
        assert_eq!(done["id"], id);
        assert_eq!(done["contextId"], ctx);
        assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED");
        assert_eq!(texts(&done["status"]["message"]["parts"]), ["Hello, Ada!"]);
        let history = done["history"].as_array().unwrap();
        assert_eq!(history.len(), 4, "{done:#}");
        for m in history {
            assert_eq!(m["contextId"], ctx, "every message carries the context");
            assert_eq!(m["taskId"], id);
        }
        // Naming the matching context explicitly is fine too.
        let again = srv.make_task(b, "TASK_STATE_INPUT_REQUIRED").await;
        let mut params = reply_params(str_at(&again, "id"), "Bo");
        params["message"]["contextId"] = again["contextId"].clone();
        let done = srv.ok(b, Op::SendMessage, params).await["task"].clone();
        assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED");
        assert_eq!(done["contextId"], again["contextId"]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocking_send_returns_the_terminal_task_with_all_artifacts() {
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        let task = srv.send_task(b, "chunks").await;
        assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
        assert_eq!(texts(&task["status"]["message"]["parts"]), ["done"]);
        let artifacts = task["artifacts"].as_array().unwrap();
        assert_eq!(artifacts.len(), 2, "{task:#}");
        assert_eq!(artifacts[0]["artifactId"], REPORT_ID);
        assert_eq!(
            texts(&artifacts[0]["parts"]),
            ["Part one. ", "Part two. ", "Part three."]
        );
        assert_eq!(texts(&artifacts[1]["parts"]), ["three parts"]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocking_send_returns_at_input_required() {
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        let task = srv.send_task(b, "greet").await;
        assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
        assert_eq!(task["status"]["message"]["role"], "ROLE_AGENT");
        assert_eq!(
            texts(&task["status"]["message"]["parts"]),
            ["What is your name?"]
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocking_send_does_not_return_while_the_task_is_working() {
    for b in ALL {
        let (agent, gate) = Gated::new();
        let srv = std::sync::Arc::new(TestServer::start(agent).await);
        let sender = {
            let srv = srv.clone();
            tokio::spawn(async move { srv.call(b, Op::SendMessage, send_params("go")).await })
        };
        // Find the task while the blocking call is pending, and watch it.
        let id = within("the task appears in the listing", async {
            loop {
                let listed = srv.ok(Binding::JsonRpc, Op::ListTasks, json!({})).await;
                if let Some(task) = listed["tasks"].get(0) {
                    break str_at(task, "id").to_owned();
                }
                tokio::task::yield_now().await;
            }
        })
        .await;
        let mut sub = srv
            .stream(Binding::JsonRpc, Op::SubscribeToTask, json!({"id": id}))
            .await;
        let first = sub.expect().await;
        assert_eq!(first["task"]["status"]["state"], "TASK_STATE_WORKING");
        gate.step(Step::Working("halfway".into()));
        gate.chunk("a-1", "first half", false, false);
        let seen = vec![sub.expect().await, sub.expect().await];
        assert_eq!(
            summary(&seen),
            ["statusUpdate:TASK_STATE_WORKING", "artifactUpdate"]
        );
        assert!(
            !sender.is_finished(),
            "{b:?}: SendMessage returned while the task was WORKING"
        );
        gate.chunk("a-1", "second half", true, true);
        gate.step(Step::Complete);
        let result = within("the blocking send returns", sender)
            .await
            .unwrap()
            .expect("the send succeeds");
        let task = &result["task"];
        assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
        assert_eq!(
            texts(&task["artifacts"][0]["parts"]),
            ["first half", "second half"]
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn return_immediately_answers_before_the_task_finishes() {
    for b in ALL {
        // The gated task cannot finish before the test releases it: an immediate answer
        // proves the server did not wait.
        let (agent, gate) = Gated::new();
        let srv = TestServer::start(agent).await;
        let mut params = send_params("go");
        params["configuration"] = json!({"returnImmediately": true});
        let task = srv.ok(b, Op::SendMessage, params).await["task"].clone();
        let state = str_at(&task["status"], "state");
        assert!(
            state == "TASK_STATE_SUBMITTED" || state == "TASK_STATE_WORKING",
            "{b:?}: {task:#}"
        );
        let id = str_at(&task, "id");
        assert_eq!(srv.state_of(id).await, "TASK_STATE_WORKING");
        let mut sub = srv
            .stream(Binding::Rest, Op::SubscribeToTask, json!({"id": id}))
            .await;
        sub.expect().await;
        gate.step(Step::Complete);
        let rest = sub.rest().await;
        assert_eq!(summary(&rest), ["statusUpdate:TASK_STATE_COMPLETED"]);
        assert_eq!(srv.state_of(id).await, "TASK_STATE_COMPLETED");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_messages_are_invalid_params_naming_the_field() {
    let srv = TestServer::start(Kitchen).await;
    let cases: Vec<(Value, &str)> = vec![
        (
            json!({"messageId": "m-1", "role": "ROLE_USER", "parts": []}),
            "message.parts",
        ),
        (
            json!({"role": "ROLE_USER", "parts": [{"text": "hi"}]}),
            "message.messageId",
        ),
        (
            json!({"messageId": "m-1", "parts": [{"text": "hi"}]}),
            "message.role",
        ),
        (
            json!({"messageId": "m-1", "role": "ROLE_UNSPECIFIED", "parts": [{"text": "hi"}]}),
            "message.role",
        ),
    ];
    for b in ALL {
        for (message, field) in &cases {
            let err = srv
                .err(b, Op::SendMessage, json!({"message": message}))
                .await;
            err.assert_kind(Kind::InvalidParams);
            assert_eq!(err.violated_fields(), [*field], "{b:?} {message}");
        }
        // No message at all.
        srv.err(b, Op::SendMessage, json!({}))
            .await
            .assert_kind(Kind::InvalidParams);
        // Negative history length.
        let mut params = send_params("hi");
        params["configuration"] = json!({"historyLength": -1});
        srv.err(b, Op::SendMessage, params)
            .await
            .assert_kind(Kind::InvalidParams);
    }
    let listed = srv.ok(Binding::JsonRpc, Op::ListTasks, json!({})).await;
    assert_eq!(listed["totalSize"], 0, "invalid requests create no task");
    // And a valid one still works.
    let ok = srv
        .ok(
            Binding::JsonRpc,
            Op::SendMessage,
            json!({"message": user_message("fine")}),
        )
        .await;
    assert_eq!(ok["task"]["status"]["state"], "TASK_STATE_COMPLETED");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follow_up_refused_while_the_task_works_is_accepted_when_retried_at_input_required() {
    for b in ALL {
        let (agent, gate) = Gated::new();
        let srv = TestServer::start(agent).await;
        let mut stream = srv
            .stream(
                Binding::JsonRpc,
                Op::SendStreamingMessage,
                send_params("go"),
            )
            .await;
        let id = str_at(&stream.expect().await["task"], "id").to_owned();
        // Too early: the task is working and expects no message.
        let follow_up = reply_params(&id, "my answer");
        srv.err(b, Op::SendMessage, follow_up.clone())
            .await
            .assert_kind(Kind::UnsupportedOperation);
        gate.step(Step::InputRequired("now, please".into()));
        assert_eq!(
            summary(&stream.rest().await),
            ["statusUpdate:TASK_STATE_INPUT_REQUIRED"]
        );
        // The same message (same messageId), retried now, reaches the agent.
        let mut retry = follow_up.clone();
        retry["configuration"] = json!({"returnImmediately": true});
        let task = srv.ok(b, Op::SendMessage, retry).await["task"].clone();
        assert_eq!(
            task["status"]["state"], "TASK_STATE_WORKING",
            "{b:?}: {task:#}"
        );
        let history: Vec<String> = task["history"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| texts(&m["parts"]).join(""))
            .collect();
        assert!(history.iter().any(|t| t == "my answer"), "{history:?}");
        gate.step(Step::Complete);
    }
}

/// A server that does not require `messageId` names a message that has none (and still
/// refuses a message without parts or role); by default it is InvalidParams.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tolerant_server_names_a_message_sent_without_an_id() {
    let tolerant = TestServer::start_with(Kitchen, |b| b.message_id_required(false)).await;
    let strict = TestServer::start(Kitchen).await;
    let unnamed = json!({"message": {"role": "ROLE_USER", "parts": [{"text": "hello"}]}});
    for b in ALL {
        let reply = tolerant.ok(b, Op::SendMessage, unnamed.clone()).await;
        let task = &reply["task"];
        assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task:#}");
        assert!(
            !str_at(&task["history"][0], "messageId").is_empty(),
            "{task:#}"
        );
        tolerant
            .err(
                b,
                Op::SendMessage,
                json!({"message": {"role": "ROLE_USER", "parts": []}}),
            )
            .await
            .assert_kind(Kind::InvalidParams);
        strict
            .err(b, Op::SendMessage, unnamed.clone())
            .await
            .assert_kind(Kind::InvalidParams);
    }
}
