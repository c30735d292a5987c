//! Who may call: a caller the authenticator knows but does not authorize gets 403 (never the
//! 401 that asks for other credentials), with the built-in bearer tokens and API keys alike;
//! anonymous access serves callers without credentials but keeps the extended card for
//! authenticated ones; and a server that issues its own context ids refuses a client's.

use a2a_e2e::agents::Echo;
use a2a_e2e::{ALL, Binding, Kind, Op, TestServer, header_str, send_params, str_at};
use a2a_server::auth::{ApiKeys, BearerTokens, KeyLocation};
use serde_json::{Value, json};

const GOOD: (&str, &str) = ("authorization", "Bearer good");
const DENIED: (&str, &str) = ("authorization", "Bearer denied");
const UNKNOWN: (&str, &str) = ("authorization", "Bearer unknown");

fn tokens() -> BearerTokens {
    BearerTokens::new()
        .token("good", "alice")
        .denied("denied", "mallory")
}

/// Asserts `reply` is the refusal of `binding` with HTTP `status` (JSON-RPC and HTTP+JSON) or
/// gRPC status `grpc`.
#[track_caller]
fn assert_refused(reply: &a2a_e2e::Reply, binding: Binding, status: u16, grpc: &str) {
    match binding {
        Binding::Grpc => {
            let outcome = reply.grpc.as_deref().expect("a gRPC reply");
            let error = outcome.as_ref().expect_err("refused");
            assert_eq!(error.grpc_status.as_deref(), Some(grpc), "{error:#?}");
        }
        // The authentication layer answers with the HTTP status too; an operation's own
        // refusal (the extended card's) is a JSON-RPC error in an HTTP 200.
        Binding::JsonRpc => {
            let code = if status == 401 { -32098 } else { -32099 };
            assert!([200, status].contains(&reply.status), "{:#}", reply.body);
            assert_eq!(reply.body["error"]["code"], code, "{:#}", reply.body);
        }
        Binding::Rest => {
            assert_eq!(reply.status, status, "{:#}", reply.body);
            assert_eq!(reply.body["error"]["status"], grpc, "{:#}", reply.body);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bearer_token_that_authenticates_but_is_not_authorized_gets_403_on_every_binding() {
    let srv = TestServer::start_with(Echo, |b| b.authenticator(tokens())).await;
    for binding in ALL {
        let params = send_params("hi");
        let denied = srv.raw(binding, Op::SendMessage, &params, &[DENIED]).await;
        assert_refused(&denied, binding, 403, "PERMISSION_DENIED");
        if binding != Binding::Grpc {
            assert!(
                header_str(&denied.headers, "www-authenticate").contains("insufficient_scope"),
                "{binding:?}: {:?}",
                denied.headers
            );
        }
        let unknown = srv.raw(binding, Op::SendMessage, &params, &[UNKNOWN]).await;
        assert_refused(&unknown, binding, 401, "UNAUTHENTICATED");
        let missing = srv
            .raw(binding, Op::GetTask, &json!({"id": "t"}), &[])
            .await;
        assert_refused(&missing, binding, 401, "UNAUTHENTICATED");
        let ok = srv
            .call_with(binding, Op::SendMessage, params, &[GOOD])
            .await
            .unwrap_or_else(|e| panic!("{binding:?}: {:#}", e.body));
        assert_eq!(ok["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_key_that_authenticates_but_is_not_authorized_gets_403_on_every_binding() {
    let keys = ApiKeys::new(KeyLocation::Header, "X-Api-Key")
        .key("k-good", "alice")
        .denied("k-denied", "mallory");
    let srv = TestServer::start_with(Echo, |b| b.authenticator(keys)).await;
    for binding in ALL {
        let denied = srv
            .raw(
                binding,
                Op::ListTasks,
                &json!({}),
                &[("x-api-key", "k-denied")],
            )
            .await;
        assert_refused(&denied, binding, 403, "PERMISSION_DENIED");
        srv.call_with(
            binding,
            Op::ListTasks,
            json!({}),
            &[("x-api-key", "k-good")],
        )
        .await
        .unwrap_or_else(|e| panic!("{binding:?}: {:#}", e.body));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anonymous_access_serves_callers_without_credentials_but_keeps_the_extended_card() {
    let extended = a2a_core::AgentCard::builder("more", "for members").build();
    let srv = TestServer::start_with(Echo, |b| {
        b.authenticator(tokens())
            .anonymous_access(true)
            .extended_agent_card(extended)
    })
    .await;
    let card: Value = srv.card().await;
    assert!(card["securitySchemes"]["bearer"].is_object(), "{card:#}");
    assert!(
        card.get("securityRequirements")
            .is_none_or(|r| r.as_array().is_some_and(Vec::is_empty)),
        "nothing is required of a caller: {card:#}"
    );
    for binding in ALL {
        let anonymous = srv.ok(binding, Op::SendMessage, send_params("hi")).await;
        let task_id = str_at(&anonymous["task"], "id").to_owned();
        // The anonymous caller's task is not the token holder's.
        srv.call_with(binding, Op::GetTask, json!({"id": task_id}), &[GOOD])
            .await
            .expect_err("another caller's task")
            .assert_kind(Kind::TaskNotFound);
        let card = srv
            .raw(binding, Op::GetExtendedAgentCard, &json!({}), &[])
            .await;
        assert_refused(&card, binding, 401, "UNAUTHENTICATED");
        let card = srv
            .raw(binding, Op::GetExtendedAgentCard, &json!({}), &[DENIED])
            .await;
        assert_refused(&card, binding, 403, "PERMISSION_DENIED");
        let wrong = srv
            .raw(binding, Op::ListTasks, &json!({}), &[UNKNOWN])
            .await;
        assert_refused(&wrong, binding, 401, "UNAUTHENTICATED");
        let card = srv
            .call_with(binding, Op::GetExtendedAgentCard, json!({}), &[GOOD])
            .await
            .unwrap_or_else(|e| panic!("{binding:?}: {:#}", e.body));
        assert_eq!(card["name"], "more");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_issues_its_contexts_refuses_a_clients_own() {
    let srv = TestServer::start_with(Echo, |b| b.client_context_ids(false)).await;
    for binding in ALL {
        let mut params = send_params("hi");
        params["message"]["contextId"] = json!("my-own-context");
        srv.call(binding, Op::SendMessage, params)
            .await
            .expect_err("a context the server did not issue")
            .assert_kind(Kind::InvalidParams);
        // A context the server issued starts a new task in it.
        let first = srv.ok(binding, Op::SendMessage, send_params("one")).await;
        let context = str_at(&first["task"], "contextId").to_owned();
        let mut params = send_params("two");
        params["message"]["contextId"] = json!(context);
        let second = srv.ok(binding, Op::SendMessage, params).await;
        assert_eq!(second["task"]["contextId"], context.as_str());
        assert_ne!(second["task"]["id"], first["task"]["id"]);
    }
    // By default a client may name its own context.
    let open = TestServer::start(Echo).await;
    let mut params = send_params("hi");
    params["message"]["contextId"] = json!("my-own-context");
    let task = open.ok(Binding::JsonRpc, Op::SendMessage, params).await;
    assert_eq!(task["task"]["contextId"], "my-own-context");
}
