//! Signed agent cards end to end: the server signs every form of its card it serves (and the
//! extended card) and publishes its keys; our client verifies them against keys it trusts and
//! refuses an agent signed by anyone else.

use a2a_client::{CardResolver, ClientBuilder, Error, fetch_jwks};
use a2a_core::signing::{Canonicalization, CardSigningKey, TrustedKeys, verify_card};
use a2a_e2e::keys::{self, Kind};
use a2a_server::Server;
use a2a_server::auth::BearerTokens;
use a2a_server::demo::DemoAgent;
use serde_json::{Value, json};
use std::time::Duration;
use tokio::task::JoinHandle;

struct Signed {
    url: String,
    serving: JoinHandle<()>,
}

impl Drop for Signed {
    fn drop(&mut self) {
        self.serving.abort();
    }
}

/// The demo agent signing its card with one key of each kind, behind bearer auth with an
/// extended card.
async fn start() -> Signed {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    let mut extended = DemoAgent::card();
    extended.description = "The extended card, for callers with a token.".into();
    let mut public = DemoAgent::card();
    public.capabilities.extended_agent_card = Some(true);
    let mut builder = Server::builder(DemoAgent)
        .agent_card(public)
        .extended_agent_card(extended)
        .authenticator(BearerTokens::each_its_own(["t0ken"]))
        .public_url(&url);
    for kind in [Kind::Es256, Kind::Rs256, Kind::EdDsa] {
        builder =
            builder.card_signing_key(CardSigningKey::from_pem(keys::pem(kind)).expect("a key"));
    }
    let server = builder.build().expect("the server builds");
    let serving = tokio::spawn(async move {
        server.serve(listener).await.expect("serve");
    });
    Signed { url, serving }
}

async fn get(url: &str, version: Option<&str>) -> Value {
    let mut request = reqwest::Client::new().get(url);
    if let Some(v) = version {
        request = request.header("A2A-Version", v);
    }
    let response = request.send().await.expect("GET");
    assert!(
        response.status().is_success(),
        "{url}: {}",
        response.status()
    );
    response.json().await.expect("JSON")
}

async fn served_keys(url: &str) -> TrustedKeys {
    fetch_jwks(
        &reqwest::Client::new(),
        &format!("{url}/.well-known/jwks.json"),
        Duration::from_secs(5),
        a2a_client::DEFAULT_MAX_JWKS_BYTES,
    )
    .await
    .expect("the JWK set")
}

#[tokio::test]
async fn every_form_of_the_card_is_signed_as_served_by_every_key() {
    let agent = start().await;
    let jwks = get(&format!("{}/.well-known/jwks.json", agent.url), None).await;
    let algorithms: Vec<&str> = jwks["keys"]
        .as_array()
        .expect("keys")
        .iter()
        .map(|k| k["alg"].as_str().expect("alg"))
        .collect();
    assert_eq!(algorithms, ["ES256", "RS256", "EdDSA"]);

    let card_url = format!("{}/.well-known/agent-card.json", agent.url);
    // The v1.0 card, and the one with v0.3 fields beside (for clients that do not ask for
    // 1.0): each verifies with each key on its own.
    for version in [Some("1.0"), None] {
        let card = get(&card_url, version).await;
        assert_eq!(
            card["signatures"].as_array().map(Vec::len),
            Some(3),
            "{version:?}"
        );
        for (i, jwk) in jwks["keys"].as_array().expect("keys").iter().enumerate() {
            let one = TrustedKeys::from_jwks(jwk).expect("a JWK");
            let verified = verify_card(&card, &one, Canonicalization::Jcs)
                .unwrap_or_else(|e| panic!("{version:?}, key {i}: {e}"));
            assert_eq!(verified.index, i);
            assert_eq!(verified.kid.as_deref(), jwk["kid"].as_str());
            assert_eq!(
                verified.jku.as_deref(),
                Some(format!("{}/.well-known/jwks.json", agent.url).as_str())
            );
        }
    }

    // The extended card, built per caller, is signed too.
    let response: Value = reqwest::Client::new()
        .post(&agent.url)
        .bearer_auth("t0ken")
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard", "params": {}}))
        .send()
        .await
        .expect("POST")
        .json()
        .await
        .expect("JSON");
    let extended = &response["result"];
    assert_eq!(
        extended["description"], "The extended card, for callers with a token.",
        "{response}"
    );
    verify_card(
        extended,
        &served_keys(&agent.url).await,
        Canonicalization::Jcs,
    )
    .expect("the extended card verifies");
}

#[tokio::test]
async fn our_client_talks_only_to_an_agent_signed_by_a_key_it_trusts() {
    let agent = start().await;
    let trusted = served_keys(&agent.url).await;
    let resolver = CardResolver::new(reqwest::Client::new(), Default::default())
        .verify_with(trusted.clone(), Canonicalization::Jcs);
    let (card, verified) = resolver
        .resolve_verified(&agent.url)
        .await
        .expect("verified");
    assert_eq!(card.name, "a2a-rust demo agent");
    assert_eq!(verified.algorithm, "ES256");

    let client = ClientBuilder::default()
        .trust_card_keys(trusted, Canonicalization::Jcs)
        .bearer_token("t0ken")
        .connect(&agent.url)
        .await
        .expect("a client");
    let task = client.get_task("no-such-task").await;
    assert!(task.is_err());

    // Keys of someone else: the agent is refused before any call, saying why.
    let stranger = CardSigningKey::from_pem(&keys::generate(Kind::Es256)).expect("a key");
    let theirs = TrustedKeys::from_jwks(&stranger.public_jwk()).expect("a JWK");
    let refused = ClientBuilder::default()
        .trust_card_keys(theirs, Canonicalization::Jcs)
        .connect(&agent.url)
        .await
        .expect_err("an untrusted agent");
    match refused {
        Error::Untrusted { url, error } => {
            assert!(url.ends_with("/.well-known/agent-card.json"), "{url}");
            let text = error.to_string();
            assert!(text.contains("no trusted key"), "{text}");
        }
        other => panic!("expected Untrusted, got {other:?}"),
    }
}

#[tokio::test]
async fn a_jwks_that_cannot_be_had_is_a_clear_error_within_its_timeout() {
    // A port nothing listens on.
    let closed = {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        l.local_addr().expect("address")
    };
    let err = fetch_jwks(
        &reqwest::Client::new(),
        &format!("http://{closed}/jwks"),
        Duration::from_secs(2),
        a2a_client::DEFAULT_MAX_JWKS_BYTES,
    )
    .await
    .expect_err("nothing there");
    assert!(matches!(err, Error::Transport(_)), "{err:?}");

    // A server that never answers: the fetch gives up at its timeout.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = silent.local_addr().expect("address");
    let hold = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            held.push(socket);
        }
    });
    let started = std::time::Instant::now();
    let err = fetch_jwks(
        &reqwest::Client::new(),
        &format!("http://{addr}/jwks"),
        Duration::from_millis(500),
        a2a_client::DEFAULT_MAX_JWKS_BYTES,
    )
    .await
    .expect_err("no answer");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    // The whole fetch is bounded (connect, headers and body), so this is the client's own
    // deadline, naming how to raise it.
    assert!(matches!(err, Error::Timeout(_)), "{err:?}");
    hold.abort();
}
