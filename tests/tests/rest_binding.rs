//! The HTTP+JSON binding (checklist 43, 44): google.rpc.Status error bodies with the spec's
//! HTTP statuses, every route under a `/{tenant}` prefix, JSON-RPC `params.tenant`, and routes
//! told apart by their verb suffix.

use a2a_e2e::agents::{Illegal, Kitchen};
use a2a_e2e::sse::summary;
use a2a_e2e::{BOTH, Binding, Kind, Op, TestServer, header_str, reply_params, send_params, str_at};
use serde_json::{Value, json};

#[track_caller]
fn assert_status_body(err: &a2a_e2e::ApiError, http: u16, grpc: &str, reason: &str) {
    assert_eq!(err.http_status, http, "{:#}", err.body);
    assert!(header_str(&err.headers, "content-type").starts_with("application/a2a+json"));
    let outer: Vec<&String> = err.body.as_object().unwrap().keys().collect();
    assert_eq!(outer, ["error"]);
    let error = err.body["error"].as_object().unwrap();
    let mut keys: Vec<&String> = error.keys().collect();
    keys.sort();
    assert_eq!(
        keys,
        ["code", "details", "message", "status"],
        "{:#}",
        err.body
    );
    assert_eq!(error["code"], http);
    assert_eq!(error["status"], grpc);
    assert!(!str_at(&err.body["error"], "message").is_empty());
    assert_eq!(
        error["details"][0]["@type"],
        "type.googleapis.com/google.rpc.ErrorInfo"
    );
    assert_eq!(error["details"][0]["reason"], reason);
    assert_eq!(error["details"][0]["domain"], "a2a-protocol.org");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_errors_are_status_bodies_with_the_spec_http_status() {
    let srv = TestServer::start(Kitchen).await;
    let rest = Binding::Rest;
    let done = srv.make_task(rest, "TASK_STATE_COMPLETED").await;
    let done_id = str_at(&done, "id");

    let err = srv.err(rest, Op::GetTask, json!({"id": "nope"})).await;
    assert_status_body(&err, 404, "NOT_FOUND", "TASK_NOT_FOUND");
    let err = srv.err(rest, Op::CancelTask, json!({"id": done_id})).await;
    assert_status_body(&err, 400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE");
    let err = srv
        .err(rest, Op::SendMessage, reply_params(done_id, "more"))
        .await;
    assert_status_body(&err, 400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION");
    let err = srv.err(rest, Op::ListTasks, json!({"pageSize": 0})).await;
    assert_status_body(&err, 400, "INVALID_ARGUMENT", "INVALID_PARAMS");
    let err = srv
        .call_with(rest, Op::ListTasks, json!({}), &[("A2A-Version", "2.0")])
        .await
        .unwrap_err();
    assert_status_body(&err, 400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED");
    let err = srv
        .err(rest, Op::ListPushConfigs, json!({"taskId": done_id}))
        .await;
    assert_status_body(
        &err,
        400,
        "FAILED_PRECONDITION",
        "PUSH_NOTIFICATION_NOT_SUPPORTED",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_agent_response_is_http_500_and_leaves_the_task_running() {
    let (agent, mut attempts) = Illegal::new();
    let srv = TestServer::start(agent).await;
    for b in BOTH {
        let mut params = send_params("hold");
        params["configuration"] = json!({"returnImmediately": true});
        let task = srv.ok(b, Op::SendMessage, params).await["task"].clone();
        let id = str_at(&task, "id");
        let before = srv.get_task(id).await;
        assert_eq!(before["status"]["state"], "TASK_STATE_WORKING");
        // The agent's cancel tries WORKING → SUBMITTED, gets an error and returns it.
        let err = srv.err(b, Op::CancelTask, json!({"id": id})).await;
        err.assert_kind(Kind::InvalidAgentResponse);
        if b == Binding::Rest {
            assert_status_body(&err, 500, "INTERNAL", "INVALID_AGENT_RESPONSE");
        }
        let (what, outcome) = a2a_e2e::within("the attempt", attempts.recv())
            .await
            .unwrap();
        assert_eq!(what, "submitted on cancel");
        assert!(outcome.is_err());
        assert_eq!(
            srv.get_task(id).await,
            before,
            "{b:?}: the task is untouched"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_rest_route_works_under_a_tenant_prefix() {
    let srv = TestServer::start(Kitchen).await;
    for tenant in ["acme", "team one"] {
        let t = |mut v: Value| {
            v["tenant"] = json!(tenant);
            v
        };
        let rest = Binding::Rest;
        // POST /{tenant}/message:send
        let task = srv.ok(rest, Op::SendMessage, t(send_params("hello"))).await["task"].clone();
        let id = str_at(&task, "id").to_owned();
        assert_eq!(task["artifacts"][0]["metadata"]["tenant"], tenant);
        // GET /{tenant}/tasks/{id}
        let got = srv.ok(rest, Op::GetTask, t(json!({"id": id}))).await;
        assert_eq!(got, task);
        // GET /{tenant}/tasks
        let listed = srv.ok(rest, Op::ListTasks, t(json!({}))).await;
        assert_eq!(listed["totalSize"], 1);
        assert_eq!(listed["tasks"][0]["id"], id.as_str());
        // POST /{tenant}/message:stream
        let mut stream = srv
            .stream(rest, Op::SendStreamingMessage, t(send_params("chunks")))
            .await;
        let events = stream.rest().await;
        assert_eq!(
            events.last().and_then(a2a_e2e::sse::state_of),
            Some("TASK_STATE_COMPLETED")
        );
        // GET /{tenant}/tasks/{id}:subscribe and POST /{tenant}/tasks/{id}:cancel
        let mut params = t(send_params("slow"));
        params["configuration"] = json!({"returnImmediately": true});
        let slow = srv.ok(rest, Op::SendMessage, params).await["task"].clone();
        let slow_id = str_at(&slow, "id").to_owned();
        let mut sub = srv
            .stream(rest, Op::SubscribeToTask, t(json!({"id": slow_id})))
            .await;
        assert_eq!(sub.expect().await["task"]["id"], slow_id.as_str());
        // POST /{tenant}/tasks/{id}:subscribe works as well.
        let posted = srv
            .http
            .post(srv.url(&format!(
                "/{}/tasks/{slow_id}:subscribe",
                a2a_e2e::encode_segment(tenant)
            )))
            .send()
            .await
            .unwrap();
        let mut posted = a2a_e2e::SseStream::new(posted, rest, None);
        assert_eq!(posted.expect().await["task"]["id"], slow_id.as_str());
        let canceled = srv
            .ok(rest, Op::CancelTask, t(json!({"id": slow_id})))
            .await;
        assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED");
        assert_eq!(
            summary(&sub.rest().await),
            ["statusUpdate:TASK_STATE_CANCELED"]
        );
        assert_eq!(
            summary(&posted.rest().await),
            ["statusUpdate:TASK_STATE_CANCELED"]
        );
        // Push-config and extended-card routes exist under the prefix (and answer their
        // capability errors).
        srv.err(rest, Op::ListPushConfigs, t(json!({"taskId": id})))
            .await
            .assert_kind(Kind::PushNotificationNotSupported);
        srv.err(rest, Op::GetPushConfig, t(json!({"taskId": id, "id": "c"})))
            .await
            .assert_kind(Kind::PushNotificationNotSupported);
        srv.err(
            rest,
            Op::CreatePushConfig,
            t(json!({"taskId": id, "url": "https://hooks.example.net/a2a"})),
        )
        .await
        .assert_kind(Kind::PushNotificationNotSupported);
        srv.err(
            rest,
            Op::DeletePushConfig,
            t(json!({"taskId": id, "id": "c"})),
        )
        .await
        .assert_kind(Kind::PushNotificationNotSupported);
        srv.err(rest, Op::GetExtendedAgentCard, t(json!({})))
            .await
            .assert_kind(Kind::UnsupportedOperation);

        // Another tenant, or none, does not see the tasks.
        for other in [json!({"id": id}), json!({"id": id, "tenant": "elsewhere"})] {
            srv.err(rest, Op::GetTask, other.clone())
                .await
                .assert_kind(Kind::TaskNotFound);
            srv.err(rest, Op::CancelTask, other.clone())
                .await
                .assert_kind(Kind::TaskNotFound);
        }
        let untenanted = srv.ok(rest, Op::ListTasks, json!({})).await;
        assert_eq!(untenanted["totalSize"], 0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_rpc_params_tenant_reaches_the_handler() {
    let srv = TestServer::start(Kitchen).await;
    let rpc = Binding::JsonRpc;
    let mut params = send_params("hello");
    params["tenant"] = json!("acme");
    let task = srv.ok(rpc, Op::SendMessage, params).await["task"].clone();
    let id = str_at(&task, "id");
    assert_eq!(
        task["artifacts"][0]["metadata"]["tenant"], "acme",
        "the agent saw it"
    );
    // Same tenant, either binding: found.
    for b in BOTH {
        let got = srv
            .ok(b, Op::GetTask, json!({"id": id, "tenant": "acme"}))
            .await;
        assert_eq!(got["id"], id);
    }
    // No tenant, another tenant: not found (not forbidden).
    for params in [json!({"id": id}), json!({"id": id, "tenant": "other"})] {
        srv.err(rpc, Op::GetTask, params)
            .await
            .assert_kind(Kind::TaskNotFound);
    }
    let listed = srv.ok(rpc, Op::ListTasks, json!({"tenant": "acme"})).await;
    assert_eq!(listed["totalSize"], 1);
    assert_eq!(srv.ok(rpc, Op::ListTasks, json!({})).await["totalSize"], 0);
    // A follow-up in the tenant continues the task; outside it, the task does not exist.
    let greet = {
        let mut p = send_params("greet");
        p["tenant"] = json!("acme");
        srv.ok(rpc, Op::SendMessage, p).await["task"].clone()
    };
    let greet_id = str_at(&greet, "id");
    srv.err(rpc, Op::SendMessage, reply_params(greet_id, "Ada"))
        .await
        .assert_kind(Kind::TaskNotFound);
    let mut p = reply_params(greet_id, "Ada");
    p["tenant"] = json!("acme");
    let done = srv.ok(rpc, Op::SendMessage, p).await;
    assert_eq!(done["task"]["status"]["state"], "TASK_STATE_COMPLETED");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_routes_are_told_apart_by_their_verb_suffix() {
    let srv = TestServer::start(Kitchen).await;
    let slow = srv.make_task(Binding::Rest, "TASK_STATE_WORKING").await;
    let id = str_at(&slow, "id");
    let http = &srv.http;

    let got = http
        .get(srv.url(&format!("/tasks/{id}")))
        .send()
        .await
        .unwrap();
    assert_eq!(got.status(), 200);
    let got: Value = got.json().await.unwrap();
    assert_eq!(got["status"]["state"], "TASK_STATE_WORKING");

    let sub = http
        .get(srv.url(&format!("/tasks/{id}:subscribe")))
        .send()
        .await
        .unwrap();
    assert!(header_str(sub.headers(), "content-type").starts_with("text/event-stream"));
    drop(sub);

    // Wrong methods are 405 with an Allow header, and change nothing.
    for (method, path, allow) in [
        (reqwest::Method::GET, format!("/tasks/{id}:cancel"), "POST"),
        (reqwest::Method::POST, format!("/tasks/{id}"), "GET"),
        (
            reqwest::Method::DELETE,
            format!("/tasks/{id}:subscribe"),
            "GET, POST",
        ),
        (reqwest::Method::GET, "/message:send".to_owned(), "POST"),
        (reqwest::Method::POST, "/tasks".to_owned(), "GET"),
    ] {
        let r = http
            .request(method.clone(), srv.url(&path))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 405, "{method} {path}");
        assert_eq!(header_str(r.headers(), "allow"), allow, "{method} {path}");
    }
    assert_eq!(srv.state_of(id).await, "TASK_STATE_WORKING");

    // An unknown suffix is part of the id.
    let err = srv
        .err(
            Binding::Rest,
            Op::GetTask,
            json!({"id": format!("{id}:frobnicate")}),
        )
        .await;
    err.assert_kind(Kind::TaskNotFound);

    // POST …:cancel with no body at all.
    let canceled = http
        .post(srv.url(&format!("/tasks/{id}:cancel")))
        .send()
        .await
        .unwrap();
    assert_eq!(canceled.status(), 200);
    let canceled: Value = canceled.json().await.unwrap();
    assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED");

    // No route at all.
    let r = http
        .get(srv.url("/no/such/route/here"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_accepts_both_json_media_types_and_answers_a2a_json() {
    let srv = TestServer::start(Kitchen).await;
    for content_type in [
        Some("application/a2a+json"),
        Some("application/json"),
        Some("application/json; charset=utf-8"),
        None,
    ] {
        let mut rb = srv
            .http
            .post(srv.url("/message:send"))
            .body(send_params("hello").to_string());
        if let Some(ct) = content_type {
            rb = rb.header("content-type", ct);
        }
        let r = rb.send().await.unwrap();
        assert_eq!(r.status(), 200, "{content_type:?}");
        assert_eq!(
            header_str(r.headers(), "content-type"),
            "application/a2a+json"
        );
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    }
}
