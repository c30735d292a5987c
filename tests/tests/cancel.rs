//! CancelTask (checklist 26) in both bindings.

use a2a_e2e::agents::Kitchen;
use a2a_e2e::sse::summary;
use a2a_e2e::{ALL, Binding, Kind, Op, TestServer, str_at, texts};
use futures::future::join_all;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_of_a_working_task_returns_it_canceled() {
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        let task = srv.make_task(b, "TASK_STATE_WORKING").await;
        let id = str_at(&task, "id");
        let canceled = srv.ok(b, Op::CancelTask, json!({"id": id})).await;
        assert!(
            canceled.get("task").is_none(),
            "CancelTask returns a bare Task"
        );
        assert_eq!(canceled["id"], id);
        assert_eq!(canceled["contextId"], task["contextId"]);
        assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED");
        assert_eq!(canceled["status"]["message"]["role"], "ROLE_AGENT");
        assert!(!texts(&canceled["status"]["message"]["parts"]).is_empty());
        assert_eq!(
            srv.get_task(id).await,
            canceled,
            "{b:?}: stored as returned"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_of_a_terminal_task_is_task_not_cancelable_and_changes_nothing() {
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        for state in [
            "TASK_STATE_COMPLETED",
            "TASK_STATE_FAILED",
            "TASK_STATE_REJECTED",
            // A second cancel of a canceled task (digest §11.12).
            "TASK_STATE_CANCELED",
        ] {
            let task = srv.make_task(b, state).await;
            let id = str_at(&task, "id");
            let before = srv.get_task(id).await;
            srv.err(b, Op::CancelTask, json!({"id": id}))
                .await
                .assert_kind(Kind::TaskNotCancelable)
                .assert_metadata("taskId", id);
            assert_eq!(srv.get_task(id).await, before, "{b:?} {state}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_of_an_unknown_task_is_task_not_found() {
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        srv.err(b, Op::CancelTask, json!({"id": "no-such-task"}))
            .await
            .assert_kind(Kind::TaskNotFound)
            .assert_metadata("taskId", "no-such-task");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_of_a_task_waiting_for_input_cancels_it() {
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        let task = srv.make_task(b, "TASK_STATE_INPUT_REQUIRED").await;
        let id = str_at(&task, "id");
        let canceled = srv.ok(b, Op::CancelTask, json!({"id": id})).await;
        assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED");
        srv.err(b, Op::SendMessage, a2a_e2e::reply_params(id, "Ada"))
            .await
            .assert_kind(Kind::UnsupportedOperation);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_refuses_cancel_keeps_its_task_working() {
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        let mut params = a2a_e2e::send_params("stubborn");
        params["configuration"] = json!({"returnImmediately": true});
        let task = srv.ok(b, Op::SendMessage, params).await["task"].clone();
        let id = str_at(&task, "id");
        let before = srv.get_task(id).await;
        assert_eq!(before["status"]["state"], "TASK_STATE_WORKING");
        let err = srv.err(b, Op::CancelTask, json!({"id": id})).await;
        err.assert_kind(Kind::TaskNotCancelable);
        assert_eq!(err.message, "this work cannot be interrupted");
        assert_eq!(
            srv.get_task(id).await,
            before,
            "{b:?}: still working, unchanged"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_accepts_a_metadata_body() {
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        let task = srv.make_task(b, "TASK_STATE_WORKING").await;
        let canceled = srv
            .ok(
                b,
                Op::CancelTask,
                json!({"id": task["id"], "metadata": {"reason": "changed my mind"}}),
            )
            .await;
        assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_sees_the_cancel_as_the_last_event() {
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        let task = srv.make_task(Binding::JsonRpc, "TASK_STATE_WORKING").await;
        let id = str_at(&task, "id");
        let mut sub = srv.stream(b, Op::SubscribeToTask, json!({"id": id})).await;
        let first = sub.expect().await;
        assert_eq!(first["task"]["status"]["state"], "TASK_STATE_WORKING");
        let canceled = srv
            .ok(Binding::JsonRpc, Op::CancelTask, json!({"id": id}))
            .await;
        let rest = sub.rest().await;
        assert_eq!(
            summary(&rest),
            ["statusUpdate:TASK_STATE_CANCELED"],
            "{b:?}"
        );
        assert_eq!(rest[0]["statusUpdate"]["status"], canceled["status"]);
        assert_eq!(rest[0]["statusUpdate"]["taskId"], id);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_cancels_of_many_running_tasks_all_end_canceled() {
    let srv = TestServer::start(Kitchen).await;
    let mut ids = Vec::new();
    for _ in 0..24 {
        let task = srv.make_task(Binding::JsonRpc, "TASK_STATE_WORKING").await;
        ids.push(str_at(&task, "id").to_owned());
    }
    let answers = join_all(ids.iter().enumerate().map(|(i, id)| {
        let b = ALL[i % 2];
        srv.call(b, Op::CancelTask, json!({"id": id}))
    }))
    .await;
    for (id, answer) in ids.iter().zip(answers) {
        let task = answer.unwrap_or_else(|e| panic!("cancel of {id} failed: {:#}", e.body));
        assert_eq!(task["status"]["state"], "TASK_STATE_CANCELED", "{task:#}");
        assert_eq!(srv.state_of(id).await, "TASK_STATE_CANCELED");
    }
}
