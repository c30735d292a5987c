//! ListTasks (checklist 21–25) in both bindings: required fields, order, artifacts, filters,
//! paging, and invalid parameters.

use a2a_e2e::agents::Kitchen;
use a2a_e2e::{ALL, BOTH, Binding, Kind, Op, TestServer, reply_params, send_params, str_at};
use serde_json::{Value, json};
use std::collections::HashSet;

fn ids(listing: &Value) -> Vec<String> {
    listing["tasks"]
        .as_array()
        .expect("tasks is an array")
        .iter()
        .map(|t| str_at(t, "id").to_owned())
        .collect()
}

#[track_caller]
fn assert_required_fields(listing: &Value) {
    let o = listing.as_object().expect("an object");
    assert!(o["tasks"].is_array(), "{listing:#}");
    assert!(o["nextPageToken"].is_string(), "{listing:#}");
    assert!(o["pageSize"].is_i64(), "{listing:#}");
    assert!(o["totalSize"].is_i64(), "{listing:#}");
    let returned = o["tasks"].as_array().unwrap().len() as i64;
    assert_eq!(
        o["pageSize"], returned,
        "pageSize = tasks returned (digest §11.4)"
    );
}

/// Sends `text` in a context of our own.
async fn task_in(srv: &TestServer, text: &str, ctx: &str) -> Value {
    let mut params = send_params(text);
    params["message"]["contextId"] = json!(ctx);
    srv.ok(Binding::JsonRpc, Op::SendMessage, params).await["task"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_listing_still_has_every_required_field() {
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        let listing = srv.ok(b, Op::ListTasks, json!({})).await;
        assert_eq!(
            listing,
            json!({"tasks": [], "nextPageToken": "", "pageSize": 0, "totalSize": 0}),
            "{b:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listing_has_every_required_field_and_an_empty_token_on_the_last_page() {
    let srv = TestServer::start(Kitchen).await;
    for i in 0..3 {
        srv.send_task(Binding::JsonRpc, &format!("hello {i}")).await;
    }
    for b in ALL {
        let listing = srv.ok(b, Op::ListTasks, json!({})).await;
        assert_required_fields(&listing);
        assert_eq!(listing["nextPageToken"], "");
        assert_eq!(listing["totalSize"], 3);
        assert_eq!(listing["pageSize"], 3);
        let first = srv.ok(b, Op::ListTasks, json!({"pageSize": 2})).await;
        assert_required_fields(&first);
        assert_eq!(first["pageSize"], 2);
        assert_eq!(first["totalSize"], 3);
        assert!(!str_at(&first, "nextPageToken").is_empty());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_are_ordered_by_status_timestamp_newest_first() {
    let srv = TestServer::start(Kitchen).await;
    let greet = srv
        .make_task(Binding::JsonRpc, "TASK_STATE_INPUT_REQUIRED")
        .await;
    let greet_id = str_at(&greet, "id").to_owned();
    for i in 0..4 {
        srv.send_task(Binding::Rest, &format!("hello {i}")).await;
    }
    // Answering the oldest task updates its status: it moves to the top.
    srv.ok(
        Binding::JsonRpc,
        Op::SendMessage,
        reply_params(&greet_id, "Ada"),
    )
    .await;
    for b in ALL {
        let listing = srv.ok(b, Op::ListTasks, json!({})).await;
        let tasks = listing["tasks"].as_array().unwrap();
        assert_eq!(tasks.len(), 5);
        assert_eq!(
            tasks[0]["id"],
            greet_id.as_str(),
            "{b:?}: most recently updated first"
        );
        let stamps: Vec<&str> = tasks
            .iter()
            .map(|t| str_at(&t["status"], "timestamp"))
            .collect();
        let mut sorted = stamps.clone();
        sorted.sort_by(|a, b| b.cmp(a));
        assert_eq!(stamps, sorted, "{b:?}: status.timestamp descending");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn artifacts_are_listed_only_when_asked_for() {
    let srv = TestServer::start(Kitchen).await;
    srv.send_task(Binding::JsonRpc, "chunks").await;
    srv.send_task(Binding::JsonRpc, "hello").await;
    for b in ALL {
        for params in [json!({}), json!({"includeArtifacts": false})] {
            let listing = srv.ok(b, Op::ListTasks, params).await;
            for t in listing["tasks"].as_array().unwrap() {
                assert!(t.get("artifacts").is_none(), "{b:?}: {t:#}");
            }
        }
        let listing = srv
            .ok(b, Op::ListTasks, json!({"includeArtifacts": true}))
            .await;
        let tasks = listing["tasks"].as_array().unwrap();
        assert_eq!(tasks.len(), 2);
        for t in tasks {
            let stored = srv.get_task(str_at(t, "id")).await;
            assert_eq!(
                t["artifacts"], stored["artifacts"],
                "{b:?}: the full artifacts"
            );
            assert!(!t["artifacts"].as_array().unwrap().is_empty());
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_work_alone_and_combined_and_paging_visits_every_match_once() {
    let srv = TestServer::start(Kitchen).await;
    // Two contexts, each with completed, failed and rejected tasks, created in turn.
    for round in 0..3 {
        for ctx in ["ctx-a", "ctx-b"] {
            task_in(&srv, &format!("hello {round}"), ctx).await;
            task_in(&srv, "fail", ctx).await;
            if round != 1 {
                task_in(&srv, "reject", ctx).await;
            }
        }
    }
    let all = srv
        .ok(Binding::JsonRpc, Op::ListTasks, json!({"pageSize": 100}))
        .await;
    let everything: Vec<Value> = all["tasks"].as_array().unwrap().clone();
    assert_eq!(everything.len(), 16);

    // The inclusive timestamp bound: the status timestamp of a task in the middle.
    let pivot = everything[7]["status"]["timestamp"]
        .as_str()
        .unwrap()
        .to_owned();
    let expected = |ctx: Option<&str>, state: Option<&str>, after: Option<&str>| -> Vec<String> {
        everything
            .iter()
            .filter(|t| ctx.is_none_or(|c| t["contextId"] == c))
            .filter(|t| state.is_none_or(|s| t["status"]["state"] == s))
            .filter(|t| after.is_none_or(|a| str_at(&t["status"], "timestamp") >= a))
            .map(|t| str_at(t, "id").to_owned())
            .collect()
    };
    let cases = [
        (Some("ctx-a"), None, None),
        (None, Some("TASK_STATE_FAILED"), None),
        (None, None, Some(pivot.as_str())),
        (Some("ctx-b"), Some("TASK_STATE_REJECTED"), None),
        (
            Some("ctx-a"),
            Some("TASK_STATE_COMPLETED"),
            Some(pivot.as_str()),
        ),
        (None, Some("TASK_STATE_REJECTED"), Some(pivot.as_str())),
        (Some("ctx-none"), None, None),
    ];
    for b in ALL {
        for (ctx, state, after) in cases {
            let want = expected(ctx, state, after);
            let mut filters = json!({});
            if let Some(c) = ctx {
                filters["contextId"] = json!(c);
            }
            if let Some(s) = state {
                filters["status"] = json!(s);
            }
            if let Some(a) = after {
                filters["statusTimestampAfter"] = json!(a);
            }
            let whole = srv.ok(b, Op::ListTasks, filters.clone()).await;
            assert_eq!(ids(&whole), want, "{b:?} {filters}");
            assert_eq!(whole["totalSize"], want.len());

            // The same through pages of two.
            let mut paged = Vec::new();
            let mut params = filters.clone();
            params["pageSize"] = json!(2);
            loop {
                let page = srv.ok(b, Op::ListTasks, params.clone()).await;
                assert_required_fields(&page);
                assert_eq!(
                    page["totalSize"],
                    want.len(),
                    "totalSize counts every match"
                );
                paged.extend(ids(&page));
                let token = str_at(&page, "nextPageToken").to_owned();
                if token.is_empty() {
                    break;
                }
                params["pageToken"] = json!(token);
            }
            assert_eq!(
                paged, want,
                "{b:?} {filters}: every match exactly once, in order"
            );
            assert_eq!(paged.iter().collect::<HashSet<_>>().len(), paged.len());
        }
    }
    // The pivot task itself is included: the bound is inclusive.
    let pivot_id = str_at(&everything[7], "id");
    let after = srv
        .ok(
            Binding::Rest,
            Op::ListTasks,
            json!({"statusTimestampAfter": pivot, "pageSize": 100}),
        )
        .await;
    assert!(ids(&after).iter().any(|i| i == pivot_id));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_list_parameters_are_invalid_params() {
    let srv = TestServer::start(Kitchen).await;
    srv.send_task(Binding::JsonRpc, "hello").await;
    srv.send_task(Binding::JsonRpc, "hello").await;
    let page = srv
        .ok(Binding::JsonRpc, Op::ListTasks, json!({"pageSize": 1}))
        .await;
    let token = str_at(&page, "nextPageToken").to_owned();
    assert!(!token.is_empty());
    let bad = [
        json!({"pageSize": 0}),
        json!({"pageSize": 101}),
        json!({"pageSize": -5}),
        json!({"status": "TASK_STATE_BOGUS"}),
        json!({"status": "TASK_STATE_UNSPECIFIED"}),
        json!({"pageToken": "!!not-a-token!!"}),
        json!({"pageToken": "bm90LWEtdG9rZW4"}),
        json!({"statusTimestampAfter": "yesterday"}),
        json!({"historyLength": -1}),
    ];
    for b in BOTH {
        for params in &bad {
            srv.err(b, Op::ListTasks, params.clone())
                .await
                .assert_kind(Kind::InvalidParams);
        }
        // The edges of the valid range work.
        for size in [1, 100] {
            let ok = srv.ok(b, Op::ListTasks, json!({"pageSize": size})).await;
            assert_required_fields(&ok);
        }
    }
}
