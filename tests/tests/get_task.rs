//! GetTask (checklist 19): the bare task, and TaskNotFound for unknown ids in both bindings.

use a2a_e2e::agents::Kitchen;
use a2a_e2e::{BOTH, Binding, Kind, Op, TestServer, str_at};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_task_returns_the_bare_task_as_stored() {
    let srv = TestServer::start(Kitchen).await;
    for b in BOTH {
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
    for b in BOTH {
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
