//! GetTask (checklist 19): the bare task, and TaskNotFound for unknown ids in both bindings.

use a2a_e2e::agents::Kitchen;
use a2a_e2e::{ALL, Binding, Kind, Op, TestServer, str_at};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_task_returns_the_bare_task_as_stored() {
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        let sent = srv.send_task(b, "hello").await;
        let id = str_at(&sent, "id");
        let got = srv.ok(b, Op::GetTask, json!({"id": id})).await;
        assert!(got.get("task").is_none(), "GetTask returns a bare Task");
        assert_eq!(got, sent, "{b:?}: GetTask shows what SendMessage returned");
        let mut keys: Vec<&String> = got.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(keys, ["artifacts", "contextId", "history", "id", "status"]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_task_of_an_unknown_id_is_task_not_found() {
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        for id in [
            "no-such-task",
            "0196c4a2-8f5e-7a00-b000-000000000000",
            "a b:c",
        ] {
            let err = srv.err(b, Op::GetTask, json!({"id": id})).await;
            err.assert_kind(Kind::TaskNotFound)
                .assert_metadata("taskId", id);
            if b == Binding::Rest {
                // The whole google.rpc.Status body.
                let error = err.body["error"].as_object().unwrap();
                let mut keys: Vec<&String> = error.keys().collect();
                keys.sort();
                assert_eq!(keys, ["code", "details", "message", "status"]);
                assert_eq!(error["code"], 404);
                assert_eq!(error["status"], "NOT_FOUND");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_task_without_an_id_is_invalid_params() {
    let srv = TestServer::start(Kitchen).await;
    let err = srv.err(Binding::JsonRpc, Op::GetTask, json!({})).await;
    err.assert_kind(Kind::InvalidParams);
    assert_eq!(err.violated_fields(), ["id"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_task_after_a_change_shows_the_new_version_and_a_cut_history_stays_cut() {
    // GetTask answers an unchanged task from its serialized copy: every read after a change
    // must show the change, and a read with historyLength must never be served from (or
    // poison) the copy of the whole task.
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        let asked = srv.make_task(b, "TASK_STATE_INPUT_REQUIRED").await;
        let id = str_at(&asked, "id").to_owned();
        for _ in 0..2 {
            let got = srv.ok(b, Op::GetTask, json!({"id": id})).await;
            assert_eq!(got, asked, "{b:?}: the task as answered");
        }
        let cut = srv
            .ok(b, Op::GetTask, json!({"id": id, "historyLength": 0}))
            .await;
        assert!(cut.get("history").is_none(), "{b:?}: {cut:#}");
        let whole = srv.ok(b, Op::GetTask, json!({"id": id})).await;
        assert_eq!(
            whole, asked,
            "{b:?}: the cut read did not replace the whole task"
        );

        let done = srv
            .ok(b, Op::SendMessage, a2a_e2e::reply_params(&id, "Ada"))
            .await["task"]
            .clone();
        assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED");
        let got = srv.ok(b, Op::GetTask, json!({"id": id})).await;
        assert_eq!(
            got, done,
            "{b:?}: GetTask after the change shows the new version"
        );
    }
}
