//! Authentication that keeps each principal's tasks apart: a second principal can neither see
//! nor touch the first one's task, an authenticator may await an identity provider, and the
//! extended card is for authenticated callers, per caller.

mod served;

use a2a_server::Server;
use a2a_server::auth::BearerTokens;
use serde_json::{Value, json};
use served::{Steps, fast_push, rpc, start};
use std::time::Duration;

#[tokio::test]
async fn a_second_principal_cannot_see_or_touch_the_first_ones_task() {
    let url = start(
        Server::builder(Steps)
            .authenticator(BearerTokens::each_its_own(["alice-token", "bob-token"]))
            .push_notifications(fast_push()),
    )
    .await;
    let (alice, bob) = (Some("alice-token"), Some("bob-token"));
    // The card is public and declares the scheme.
    let card = reqwest::get(format!("{url}/.well-known/agent-card.json"))
        .await
        .unwrap();
    assert_eq!(card.status(), 200);
    let card: Value = card.json().await.unwrap();
    assert_eq!(
        card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"],
        "Bearer"
    );
    assert_eq!(
        card["securityRequirements"][0]["schemes"]["bearer"],
        json!({"list": []})
    );
    // No or wrong credentials: 401 with a challenge, in both bindings.
    for token in [None, Some("mallory")] {
        let mut req = reqwest::Client::new()
            .post(format!("{url}/"))
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let r = req.send().await.unwrap();
        assert_eq!(r.status(), 401);
        assert!(
            r.headers()["www-authenticate"]
                .to_str()
                .unwrap()
                .starts_with("Bearer")
        );
        let mut req = reqwest::Client::new().get(format!("{url}/tasks"));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        assert_eq!(req.send().await.unwrap().status(), 401);
    }

    let r = rpc(
        &url,
        alice,
        "SendMessage",
        json!({
            "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "ask"}]}
        }),
    )
    .await;
    let task = r["result"]["task"]["id"].as_str().unwrap().to_owned();
    let ctx = r["result"]["task"]["contextId"]
        .as_str()
        .unwrap()
        .to_owned();
    let not_found = |r: &Value| r["error"]["code"] == -32001;
    assert!(not_found(
        &rpc(&url, bob, "GetTask", json!({"id": task})).await
    ));
    let list = rpc(&url, bob, "ListTasks", json!({})).await;
    assert_eq!(list["result"]["totalSize"], 0, "{list}");
    assert_eq!(list["result"]["tasks"], json!([]));
    assert!(not_found(
        &rpc(&url, bob, "CancelTask", json!({"id": task})).await
    ));
    assert!(not_found(
        &rpc(&url, bob, "SubscribeToTask", json!({"id": task})).await
    ));
    assert!(not_found(&rpc(&url, bob, "SendMessage", json!({
        "message": {"messageId": "m2", "role": "ROLE_USER", "taskId": task, "contextId": ctx, "parts": [{"text": "x"}]}
    })).await));
    assert!(not_found(
        &rpc(
            &url,
            bob,
            "CreateTaskPushNotificationConfig",
            json!({"taskId": task, "url": "https://h.example.com/"})
        )
        .await
    ));
    assert!(not_found(
        &rpc(
            &url,
            bob,
            "ListTaskPushNotificationConfigs",
            json!({"taskId": task})
        )
        .await
    ));
    assert!(not_found(
        &rpc(
            &url,
            bob,
            "GetTaskPushNotificationConfig",
            json!({"taskId": task, "id": "x"})
        )
        .await
    ));
    assert!(not_found(
        &rpc(
            &url,
            bob,
            "DeleteTaskPushNotificationConfig",
            json!({"taskId": task, "id": "x"})
        )
        .await
    ));
    let rest = reqwest::Client::new()
        .get(format!("{url}/tasks/{task}"))
        .bearer_auth("bob-token")
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), 404);
    // Alice still has it, untouched.
    let mine = rpc(&url, alice, "GetTask", json!({"id": task})).await;
    assert_eq!(
        mine["result"]["status"]["state"],
        "TASK_STATE_INPUT_REQUIRED"
    );
    let list = rpc(&url, alice, "ListTasks", json!({})).await;
    assert_eq!(list["result"]["totalSize"], 1);
    let done = rpc(&url, alice, "SendMessage", json!({
        "message": {"messageId": "m3", "role": "ROLE_USER", "taskId": task, "parts": [{"text": "x"}]}
    }))
    .await;
    assert_eq!(
        done["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
}

/// An authenticator that asks an identity provider (a task answering over a channel, after a
/// pause) who owns each bearer token.
#[derive(Debug)]
struct AskTheProvider(
    tokio::sync::mpsc::Sender<(String, tokio::sync::oneshot::Sender<Option<String>>)>,
);

impl AskTheProvider {
    fn start(known: &'static [(&'static str, &'static str)]) -> Self {
        let (ask, mut questions) =
            tokio::sync::mpsc::channel::<(String, tokio::sync::oneshot::Sender<Option<String>>)>(8);
        tokio::spawn(async move {
            while let Some((token, reply)) = questions.recv().await {
                tokio::time::sleep(Duration::from_millis(5)).await;
                let who = known
                    .iter()
                    .find(|(t, _)| *t == token)
                    .map(|(_, p)| (*p).to_owned());
                let _ = reply.send(who);
            }
        });
        Self(ask)
    }
}

impl a2a_server::auth::Authenticator for AskTheProvider {
    async fn authenticate(
        &self,
        request: &axum::http::request::Parts,
    ) -> a2a_server::auth::AuthDecision {
        use a2a_server::auth::{AuthDecision, Principal};
        let Some(token) = request
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
        else {
            return AuthDecision::Missing;
        };
        let (reply, answer) = tokio::sync::oneshot::channel();
        if self.0.send((token.to_owned(), reply)).await.is_err() {
            return AuthDecision::Invalid;
        }
        match answer.await {
            Ok(Some(principal)) => AuthDecision::Allow(Principal(principal)),
            _ => AuthDecision::Invalid,
        }
    }

    fn schemes(&self) -> Vec<(String, a2a_core::SecurityScheme)> {
        vec![("bearer".to_owned(), a2a_core::SecurityScheme::bearer())]
    }

    fn challenge(&self) -> String {
        r#"Bearer realm="idp""#.to_owned()
    }
}

#[tokio::test]
async fn an_authenticator_may_await_an_identity_provider() {
    let url = start(
        Server::builder(Steps).authenticator(AskTheProvider::start(&[
            ("alice-token", "alice"),
            ("bob-token", "bob"),
        ])),
    )
    .await;
    // Unknown or missing credentials: 401 with the authenticator's challenge.
    for token in [None, Some("mallory")] {
        let mut req = reqwest::Client::new().get(format!("{url}/tasks"));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let r = req.send().await.unwrap();
        assert_eq!(r.status(), 401);
        assert_eq!(r.headers()["www-authenticate"], r#"Bearer realm="idp""#);
    }
    // The provider's answer is the principal: Alice's task is hers alone.
    let send = json!({
        "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "ask"}]}
    });
    let r = rpc(&url, Some("alice-token"), "SendMessage", send).await;
    let task = r["result"]["task"]["id"]
        .as_str()
        .expect("a task")
        .to_owned();
    let get = json!({"id": task});
    let r = rpc(&url, Some("alice-token"), "GetTask", get.clone()).await;
    assert_eq!(r["result"]["id"], task.as_str(), "{r}");
    let r = rpc(&url, Some("bob-token"), "GetTask", get).await;
    assert_eq!(
        r["error"]["code"], -32001,
        "another principal: TaskNotFound: {r}"
    );
}

#[tokio::test]
async fn the_extended_card_is_for_authenticated_callers_and_per_caller() {
    // Capability off: UnsupportedOperation.
    let plain = start(Server::builder(Steps)).await;
    assert_eq!(
        rpc(&plain, None, "GetExtendedAgentCard", json!({})).await["error"]["code"],
        -32004
    );
    // Declared by the card but not configured: ExtendedAgentCardNotConfigured.
    let declared = a2a_core::AgentCard::builder("x", "y")
        .extended_agent_card(true)
        .build();
    let url = start(
        Server::builder(Steps)
            .agent_card(declared)
            .authenticator(BearerTokens::each_its_own(["t1"])),
    )
    .await;
    assert_eq!(
        rpc(&url, Some("t1"), "GetExtendedAgentCard", json!({})).await["error"]["code"],
        -32007
    );
    // Configured per caller; unauthenticated callers get 401.
    let url = start(
        Server::builder(Steps)
            .authenticator(BearerTokens::new().token("t1", "alice").token("t2", "bob"))
            .extended_agent_card_fn(|p| {
                (p.0 == "alice")
                    .then(|| a2a_core::AgentCard::builder("for alice", "private skills").build())
            }),
    )
    .await;
    let r = reqwest::Client::new()
        .get(format!("{url}/extendedAgentCard"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let card = rpc(&url, Some("t1"), "GetExtendedAgentCard", json!({})).await;
    assert_eq!(card["result"]["name"], "for alice");
    assert_eq!(
        card["result"]["supportedInterfaces"][0]["url"],
        url.as_str()
    );
    assert_eq!(
        rpc(&url, Some("t2"), "GetExtendedAgentCard", json!({})).await["error"]["code"],
        -32007
    );
}
