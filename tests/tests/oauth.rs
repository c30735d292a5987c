//! OAuth 2.0 / OpenID Connect end to end, against a test issuer on 127.0.0.1 with keys made at
//! test time (`a2a_e2e::issuer`): our client gets tokens with client credentials, our server
//! validates them as JWTs against the issuer's keys (found through its discovery document),
//! each principal sees only its own tasks, scopes are enforced per operation, keys rotate, and
//! every bad token is refused with its own reason while the server keeps serving.

use a2a_client::{Binding, Client, ClientCredentials};
use a2a_core::{ErrorKind, Method, SendMessageResponse};
use a2a_e2e::TestServer;
use a2a_e2e::agents::Echo;
use a2a_e2e::issuer::{AUDIENCE, JwksMode, Signing, TestIssuer};
use a2a_server::auth::JwtBearer;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const BINDINGS: [Binding; 3] = [Binding::JsonRpc, Binding::HttpJson, Binding::Grpc];

/// An agent that wants tokens from `issuer`: `a2a.read` for everything, `a2a.write` too for
/// SendMessage.
async fn agent(issuer: &TestIssuer, configure: impl FnOnce(JwtBearer) -> JwtBearer) -> TestServer {
    let auth = JwtBearer::new(&issuer.url, AUDIENCE)
        .token_url(issuer.token_url())
        .scope("a2a.read", "Read tasks")
        .require_scopes(["a2a.read"])
        .require_scopes_for(Method::SendMessage, ["a2a.write"]);
    let auth = configure(auth);
    TestServer::start_with(Echo, move |b| b.authenticator(auth)).await
}

fn issuer_clients(issuer: &TestIssuer) {
    issuer.client(
        "alice-app",
        "alice-secret",
        "alice",
        &["a2a.read", "a2a.write"],
    );
    issuer.client("bob-app", "bob-secret", "bob", &["a2a.read", "a2a.write"]);
    issuer.client("reader-app", "reader-secret", "reader", &["a2a.read"]);
}

async fn client(server: &TestServer, binding: Binding, credentials: ClientCredentials) -> Client {
    Client::builder()
        .prefer([binding])
        .client_credentials(credentials)
        .timeout(Duration::from_secs(10))
        .connect(&server.base)
        .await
        .expect("a client")
}

#[tokio::test]
async fn client_credentials_to_call_with_each_principal_seeing_only_its_own_tasks() {
    let issuer = TestIssuer::start().await;
    issuer_clients(&issuer);
    let server = agent(&issuer, |a| a).await;

    // The card says how to get a token.
    let card: Value = reqwest::get(format!("{}/.well-known/agent-card.json", server.base))
        .await
        .expect("GET")
        .json()
        .await
        .expect("JSON");
    let flow =
        &card["securitySchemes"]["oauth2"]["oauth2SecurityScheme"]["flows"]["clientCredentials"];
    assert_eq!(flow["tokenUrl"], issuer.token_url().as_str(), "{card:#}");
    assert_eq!(flow["scopes"]["a2a.read"], "Read tasks", "{card:#}");
    assert!(flow["scopes"].get("a2a.write").is_some(), "{card:#}");

    for binding in BINDINGS {
        // Tokens for the card's flow (its token URL and scopes).
        let parsed: a2a_core::AgentCard = serde_json::from_value(card.clone()).expect("a card");
        let alice = client(
            &server,
            binding,
            ClientCredentials::from_card(&parsed, "alice-app", "alice-secret").expect("a flow"),
        )
        .await;
        let bob = client(
            &server,
            binding,
            ClientCredentials::new(issuer.token_url(), "bob-app", "bob-secret")
                .scopes(["a2a.read", "a2a.write"]),
        )
        .await;
        let reader = client(
            &server,
            binding,
            ClientCredentials::new(issuer.token_url(), "reader-app", "reader-secret"),
        )
        .await;

        let task = match alice.send_text("hello").await.expect("alice sends") {
            SendMessageResponse::Task(t) => t,
            other => panic!("{binding:?}: {other:?}"),
        };
        assert_eq!(
            alice
                .get_task(task.id.clone())
                .await
                .expect("alice reads")
                .id,
            task.id
        );
        // Bob's token is as good as Alice's, for his own tasks only.
        let err = bob.get_task(task.id.clone()).await.expect_err("not bob's");
        assert_eq!(
            err.kind(),
            Some(ErrorKind::TaskNotFound),
            "{binding:?}: {err:?}"
        );
        // The reader may read but not send: 403 insufficient scope.
        let err = reader.send_text("hi").await.expect_err("no a2a.write");
        assert_eq!(
            err.kind(),
            Some(ErrorKind::PermissionDenied),
            "{binding:?}: {err:?}"
        );
        assert!(err.to_string().contains("a2a.write"), "{err}");
        let err = reader
            .get_task(task.id.clone())
            .await
            .expect_err("not the reader's");
        assert_eq!(
            err.kind(),
            Some(ErrorKind::TaskNotFound),
            "{binding:?}: {err:?}"
        );
    }
    // One token per client for all its calls (three clients per binding).
    assert_eq!(issuer.token_requests(), 9);
}

#[tokio::test]
async fn a_token_refused_after_a_key_rotation_is_replaced_once_and_the_call_goes_through() {
    let issuer = TestIssuer::start().await;
    issuer_clients(&issuer);
    let server = agent(&issuer, |a| a.min_refresh_interval(Duration::ZERO)).await;
    let credentials = ClientCredentials::new(issuer.token_url(), "alice-app", "alice-secret");
    // A token signed by the first key, cached by the client.
    credentials.token(false).await.expect("a token");
    let client = Client::builder()
        .client_credentials(credentials)
        .connect(&server.base)
        .await
        .expect("a client");
    // The issuer rotates and retires the first key before the agent ever saw it.
    let kid = issuer.rotate();
    issuer.retire("rsa-1");
    let reply = client.send_text("after rotation").await.expect("sent");
    assert!(matches!(reply, SendMessageResponse::Task(_)));
    assert_eq!(issuer.token_requests(), 2, "one refused token, one new one");
    assert_eq!(kid, "rsa-2");

    // The agent, holding rsa-2 now, takes a token of a key rotated in later: it fetches the
    // key set again.
    let fetches = issuer.jwks_fetches();
    issuer.rotate();
    let token = issuer.mint(json!({"sub": "carol", "scope": "a2a.read"}));
    let response = rpc(&server, &token, "ListTasks", json!({})).await;
    assert_eq!(response.0, 200, "{:?}", response.2);
    assert_eq!(issuer.jwks_fetches(), fetches + 1);
}

/// A JSON-RPC call with a bearer token: (status, WWW-Authenticate, body).
async fn rpc(
    server: &TestServer,
    token: &str,
    method: &str,
    params: Value,
) -> (u16, String, Value) {
    let response = reqwest::Client::new()
        .post(&server.base)
        .bearer_auth(token)
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
        .send()
        .await
        .expect("POST");
    let status = response.status().as_u16();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let body = response.json().await.unwrap_or(Value::Null);
    (status, challenge, body)
}

#[tokio::test]
async fn every_bad_token_is_refused_with_its_own_reason() {
    let issuer = TestIssuer::start().await;
    let server = agent(&issuer, |a| a.leeway(Duration::from_secs(5))).await;
    let now = chrono::Utc::now().timestamp();
    let good = json!({"scope": "a2a.read a2a.write"});
    // The good token first: it works (and warms the agent's key cache).
    let (status, _, body) = rpc(&server, &issuer.mint(good.clone()), "ListTasks", json!({})).await;
    assert_eq!(status, 200, "{body}");

    let cases = [
        (
            "expired",
            issuer.mint(json!({"exp": now - 60, "scope": "a2a.read"})),
            "expired",
        ),
        (
            "not yet valid",
            issuer.mint(json!({"nbf": now + 600, "scope": "a2a.read"})),
            "not valid yet",
        ),
        (
            "another audience",
            issuer.mint(json!({"aud": "someone-else", "scope": "a2a.read"})),
            "another audience",
        ),
        (
            "another issuer",
            issuer.mint(json!({"iss": "https://evil.example", "scope": "a2a.read"})),
            "another issuer",
        ),
        (
            "no subject",
            issuer.mint(json!({"sub": null, "scope": "a2a.read"})),
            "lacks the claim",
        ),
        (
            "alg none",
            issuer.mint_as(Signing::NoneAlg, good.clone()),
            "none",
        ),
        (
            "HS256 with the RSA public key",
            issuer.mint_as(Signing::Hs256WithRsaPublicKey, good.clone()),
            "HS256",
        ),
        (
            "unknown key",
            issuer.mint_as(Signing::Unknown, good.clone()),
            "ghost",
        ),
        ("not a JWT", "not-a-jwt".to_owned(), "not a JWT"),
    ];
    for (what, token, reason) in cases {
        let (status, challenge, body) = rpc(&server, &token, "ListTasks", json!({})).await;
        assert_eq!(status, 401, "{what}: {body}");
        assert!(
            challenge.contains("error=\"invalid_token\""),
            "{what}: {challenge}"
        );
        assert!(challenge.contains(reason), "{what}: {challenge}");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(reason), "{what}: {body}");
    }
    // A token signed with the other (EC) key of the issuer works; a token with the wrong
    // scope gets 403 with the RFC 6750 challenge, over HTTP+JSON too.
    let (status, _, body) = rpc(
        &server,
        &issuer.mint_as(Signing::Es256, good.clone()),
        "ListTasks",
        json!({}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let reader = issuer.mint(json!({"scope": "a2a.read"}));
    let (status, challenge, body) = rpc(
        &server,
        &reader,
        "SendMessage",
        json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}),
    )
    .await;
    assert_eq!(status, 403, "{body}");
    assert!(challenge.contains("insufficient_scope"), "{challenge}");
    let response = reqwest::Client::new()
        .post(format!("{}/message:send", server.base))
        .bearer_auth(&reader)
        .header("A2A-Version", "1.0")
        .json(&json!({"message": {"messageId": "m2", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}))
        .send()
        .await
        .expect("POST");
    assert_eq!(response.status(), 403);
}

#[tokio::test]
async fn an_issuer_that_is_down_or_slow_costs_only_the_tokens_it_must_vouch_for() {
    let issuer = TestIssuer::start().await;
    let server = agent(&issuer, |a| {
        a.fetch_timeout(Duration::from_millis(800))
            .min_refresh_interval(Duration::ZERO)
    })
    .await;
    let cached = issuer.mint(json!({"scope": "a2a.read"}));
    let (status, _, _) = rpc(&server, &cached, "ListTasks", json!({})).await;
    assert_eq!(status, 200);

    // A new key the agent must fetch, from an issuer that hangs: refused at the fetch's
    // time-out, while a token of a cached key is served meanwhile.
    issuer.rotate();
    let fresh = issuer.mint(json!({"scope": "a2a.read"}));
    issuer.jwks_mode(JwksMode::Slow);
    let started = Instant::now();
    let (slow, quick) = tokio::join!(rpc(&server, &fresh, "ListTasks", json!({})), async {
        let t = Instant::now();
        let r = rpc(&server, &cached, "ListTasks", json!({})).await;
        (r, t.elapsed())
    });
    assert_eq!(slow.0, 401, "{:?}", slow.2);
    assert!(slow.1.contains("key set is unavailable"), "{}", slow.1);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!((quick.0).0, 200);
    assert!(quick.1 < Duration::from_millis(500), "{:?}", quick.1);

    // Down: refused at once, with the same reason.
    issuer.jwks_mode(JwksMode::Down);
    let started = Instant::now();
    let (status, challenge, _) = rpc(&server, &fresh, "ListTasks", json!({})).await;
    assert_eq!(status, 401);
    assert!(challenge.contains("key set is unavailable"), "{challenge}");
    assert!(started.elapsed() < Duration::from_secs(1));

    // Back up: the new key is fetched and the token accepted.
    issuer.jwks_mode(JwksMode::Up);
    let (status, _, body) = rpc(&server, &fresh, "ListTasks", json!({})).await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn made_up_key_ids_cannot_make_the_agent_hammer_the_issuer() {
    let issuer = TestIssuer::start().await;
    // The default: at most one fetch of the key set every 30 s.
    let server = agent(&issuer, |a| a).await;
    let (status, _, _) = rpc(
        &server,
        &issuer.mint(json!({"scope": "a2a.read"})),
        "ListTasks",
        json!({}),
    )
    .await;
    assert_eq!(status, 200);
    let fetches = issuer.jwks_fetches();
    for _ in 0..5 {
        let token = issuer.mint_as(Signing::Unknown, json!({"scope": "a2a.read"}));
        let (status, _, _) = rpc(&server, &token, "ListTasks", json!({})).await;
        assert_eq!(status, 401);
    }
    assert!(
        issuer.jwks_fetches() <= fetches + 1,
        "{} fetches",
        issuer.jwks_fetches() - fetches
    );
}

#[tokio::test]
async fn a_token_endpoint_that_refuses_is_a_clear_error() {
    let issuer = TestIssuer::start().await;
    issuer_clients(&issuer);
    let server = agent(&issuer, |a| a).await;
    let wrong = client(
        &server,
        Binding::JsonRpc,
        ClientCredentials::new(issuer.token_url(), "alice-app", "not-her-secret"),
    )
    .await;
    let err = wrong.send_text("hi").await.expect_err("no token");
    match &err {
        a2a_client::Error::Token(cause) => {
            assert!(cause.to_string().contains("invalid_client"), "{cause}");
        }
        other => panic!("expected a token error, got {other:?}"),
    }
}
