//! Restart durability with the sled store: tasks in every state are written, the server is
//! shut down (streams closed, HTTP stopped, store flushed and dropped, its runtime gone), a
//! new server opens the same directory, and every task reads back exactly as it was.

use a2a_e2e::agents::Kitchen;
use a2a_e2e::{ALL, Binding, Kind, Op, TestServer, reply_params, send_params, str_at, texts};
use a2a_server::SledStore;
use serde_json::{Value, json};
use std::path::Path;

/// A fresh runtime per server life: dropping it drops every task it still runs, so nothing of
/// the first server (and its sled handle) outlives its phase.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}

async fn start(dir: &Path) -> TestServer {
    let store = SledStore::open(dir).expect("the sled store opens");
    TestServer::start_with(Kitchen, move |b| b.task_store(store)).await
}

/// What a client saw before the restart.
struct Seen {
    /// `(id, tenant, GetTask result)` of every task.
    tasks: Vec<(String, Option<String>, Value)>,
    /// ListTasks results, by their params.
    listings: Vec<(Value, Value)>,
    greet_id: String,
    greet_context: String,
    completed_id: String,
    canceled_id: String,
}

fn listing_params() -> Vec<Value> {
    vec![
        json!({"includeArtifacts": true, "pageSize": 100}),
        json!({}),
        json!({"pageSize": 3}),
        json!({"status": "TASK_STATE_FAILED"}),
        json!({"tenant": "acme", "includeArtifacts": true}),
    ]
}

async fn before_restart(dir: &Path) -> Seen {
    let srv = start(dir).await;
    let rpc = Binding::JsonRpc;
    let rest = Binding::Rest;
    let mut created: Vec<(String, Option<String>)> = Vec::new();
    let mut keep = |task: &Value, tenant: Option<&str>| {
        let id = str_at(task, "id").to_owned();
        created.push((id.clone(), tenant.map(str::to_owned)));
        id
    };

    let completed = srv.make_task(rpc, "TASK_STATE_COMPLETED").await;
    let completed_id = keep(&completed, None);
    keep(&srv.send_task(rest, "chunks").await, None);
    let greet = srv.make_task(rest, "TASK_STATE_INPUT_REQUIRED").await;
    let greet_id = keep(&greet, None);
    keep(&srv.make_task(rpc, "TASK_STATE_FAILED").await, None);
    keep(&srv.send_task(rpc, "panic on purpose").await, None);
    keep(&srv.make_task(rest, "TASK_STATE_REJECTED").await, None);
    let canceled = srv.make_task(rpc, "TASK_STATE_CANCELED").await;
    let canceled_id = keep(&canceled, None);
    // A multi-turn task that finished, and one streamed to completion.
    let answered = srv.make_task(rpc, "TASK_STATE_INPUT_REQUIRED").await;
    let answered_id = keep(&answered, None);
    srv.ok(rpc, Op::SendMessage, reply_params(&answered_id, "Ada"))
        .await;
    let mut stream = srv
        .stream(
            rest,
            Op::SendStreamingMessage,
            send_params("chunks streamed"),
        )
        .await;
    let streamed = stream.rest().await;
    keep(&streamed[0]["task"], None);
    // A task of another tenant.
    let mut params = send_params("tenant work");
    params["tenant"] = json!("acme");
    let acme = srv.ok(rpc, Op::SendMessage, params).await["task"].clone();
    keep(&acme, Some("acme"));

    let mut tasks = Vec::new();
    for (id, tenant) in &created {
        let mut params = json!({"id": id});
        if let Some(t) = tenant {
            params["tenant"] = json!(t);
        }
        let task = srv.ok(rpc, Op::GetTask, params).await;
        tasks.push((id.clone(), tenant.clone(), task));
    }
    let states: Vec<&str> = tasks
        .iter()
        .map(|(_, _, t)| t["status"]["state"].as_str().unwrap())
        .collect();
    for state in [
        "TASK_STATE_COMPLETED",
        "TASK_STATE_INPUT_REQUIRED",
        "TASK_STATE_FAILED",
        "TASK_STATE_REJECTED",
        "TASK_STATE_CANCELED",
    ] {
        assert!(states.contains(&state), "{state} in {states:?}");
    }
    let mut listings = Vec::new();
    for params in listing_params() {
        let listing = srv.ok(rpc, Op::ListTasks, params.clone()).await;
        listings.push((params, listing));
    }
    assert_eq!(listings[0].1["totalSize"], 9, "every task but the tenant's");
    assert_eq!(listings[4].1["totalSize"], 1, "the tenant's task");

    srv.stop().await;
    Seen {
        tasks,
        listings,
        greet_context: str_at(&greet, "contextId").to_owned(),
        greet_id,
        completed_id,
        canceled_id,
    }
}

async fn after_restart(dir: &Path, seen: Seen) {
    let srv = start(dir).await;
    for b in ALL {
        for (id, tenant, before) in &seen.tasks {
            let mut params = json!({"id": id});
            if let Some(t) = tenant {
                params["tenant"] = json!(t);
            }
            let after = srv.ok(b, Op::GetTask, params).await;
            assert_eq!(
                &after, before,
                "{b:?}: task {id} changed across the restart"
            );
        }
        for (params, before) in &seen.listings {
            let after = srv.ok(b, Op::ListTasks, params.clone()).await;
            assert_eq!(&after, before, "{b:?}: ListTasks {params}");
        }
    }
    // Page tokens issued before the restart still work.
    let first_page = &seen.listings[2].1;
    let token = str_at(first_page, "nextPageToken");
    assert!(!token.is_empty());
    let second = srv
        .ok(
            Binding::Rest,
            Op::ListTasks,
            json!({"pageSize": 3, "pageToken": token}),
        )
        .await;
    let everything = &seen.listings[1].1["tasks"];
    assert_eq!(second["tasks"][0]["id"], everything[3]["id"]);

    // The lifecycle holds across the restart: the waiting task can be answered …
    let done = srv
        .ok(
            Binding::JsonRpc,
            Op::SendMessage,
            reply_params(&seen.greet_id, "Grace"),
        )
        .await["task"]
        .clone();
    assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(done["contextId"], seen.greet_context.as_str());
    assert_eq!(
        texts(&done["status"]["message"]["parts"]),
        ["Hello, Grace!"]
    );
    assert_eq!(done["history"].as_array().unwrap().len(), 4);
    // … and terminal tasks stay terminal.
    srv.err(
        Binding::Rest,
        Op::SendMessage,
        reply_params(&seen.completed_id, "more"),
    )
    .await
    .assert_kind(Kind::UnsupportedOperation);
    srv.err(
        Binding::Rest,
        Op::CancelTask,
        json!({"id": seen.canceled_id}),
    )
    .await
    .assert_kind(Kind::TaskNotCancelable);
    // New work is stored next to the old.
    let fresh = srv.send_task(Binding::Rest, "after the restart").await;
    let listing = srv
        .ok(Binding::JsonRpc, Op::ListTasks, json!({"pageSize": 100}))
        .await;
    assert_eq!(listing["totalSize"], 10);
    assert_eq!(listing["tasks"][0]["id"], fresh["id"]);
    srv.stop().await;
}

#[test]
fn every_task_reads_back_unchanged_after_a_restart() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let seen = runtime().block_on(before_restart(dir.path()));
    runtime().block_on(after_restart(dir.path(), seen));
}

#[test]
fn a_store_reopened_twice_keeps_the_latest_state() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let (id, context) = runtime().block_on(async {
        let srv = start(dir.path()).await;
        let task = srv
            .make_task(Binding::JsonRpc, "TASK_STATE_INPUT_REQUIRED")
            .await;
        srv.stop().await;
        (
            str_at(&task, "id").to_owned(),
            str_at(&task, "contextId").to_owned(),
        )
    });
    let answered = runtime().block_on(async {
        let srv = start(dir.path()).await;
        let done = srv
            .ok(Binding::Rest, Op::SendMessage, reply_params(&id, "Lin"))
            .await["task"]
            .clone();
        srv.stop().await;
        done
    });
    assert_eq!(answered["contextId"], context.as_str());
    runtime().block_on(async {
        let srv = start(dir.path()).await;
        assert_eq!(srv.get_task(&id).await, answered);
        srv.stop().await;
    });
}
