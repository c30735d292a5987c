//! `a2a_client::Credentials` and `credentials::KeySources`, what the `a2a` command's flags and
//! the inspector's page both become: header lines checked at once; the headers, bearer token,
//! API key (where the card says) and OAuth tokens (the card's flow, or a token URL, with its
//! scopes and size limit) on every call over each binding; the same as plain headers for a
//! caller that makes its own requests; keys to trust from a JWK set URL, PEM and JWK set text,
//! a bad one named in the error.

mod common;

use a2a_client::credentials::{KeySources, OAuth};
use a2a_client::{ClientBuilder, Credentials, Error};
use a2a_core::{
    AgentCard, ApiKeySecurityScheme, ClientCredentialsOAuthFlow, OAuth2SecurityScheme, OAuthFlows,
    SecurityScheme,
};
use a2a_server::demo::DemoAgent;
use axum::routing::{get, post};
use common::{Seen, TestServer, collect, each_binding, serve, within};
use serde_json::json;
use std::sync::{Arc, Mutex};

/// The demo card with an API key in the header `X-Agent-Key`, and, with `token_url`, an OAuth
/// client-credentials flow there with scopes `a2a.read` and `a2a.write`.
fn card(token_url: Option<&str>) -> AgentCard {
    let mut card = DemoAgent::card();
    card.security_schemes.insert(
        "key".into(),
        SecurityScheme::ApiKeySecurityScheme(ApiKeySecurityScheme {
            description: None,
            location: "header".into(),
            name: "X-Agent-Key".into(),
        }),
    );
    if let Some(url) = token_url {
        card.security_schemes.insert(
            "oauth".into(),
            SecurityScheme::Oauth2SecurityScheme(OAuth2SecurityScheme {
                description: None,
                flows: OAuthFlows::ClientCredentials(ClientCredentialsOAuthFlow {
                    token_url: url.into(),
                    refresh_url: None,
                    scopes: [("a2a.read", ""), ("a2a.write", "")]
                        .map(|(k, v)| (k.to_owned(), v.to_owned()))
                        .into(),
                }),
                oauth2_metadata_url: None,
            }),
        );
    }
    card
}

/// A token endpoint answering `token`, recording each form body it is sent.
async fn token_endpoint(token: &'static str) -> (String, Arc<Mutex<Vec<String>>>) {
    let forms = Arc::new(Mutex::new(Vec::new()));
    let seen = forms.clone();
    let url = serve(axum::Router::new().route(
        "/token",
        post(move |body: String| {
            seen.lock().unwrap().push(body);
            async move {
                axum::Json(
                    json!({ "access_token": token, "token_type": "Bearer", "expires_in": 3600 }),
                )
            }
        }),
    ))
    .await;
    (format!("{url}/token"), forms)
}

/// A send and a stream with `credentials` applied to the test server's builder.
async fn calls_with(server: &TestServer, binding: a2a_client::Binding, credentials: &Credentials) {
    let builder = credentials
        .apply(server.builder(binding), Some(&server.card))
        .expect("credentials apply");
    let client = within("connect", builder.connect(&server.url))
        .await
        .expect("connect");
    within("send", client.send_text("hello"))
        .await
        .expect("send");
    let request = a2a_core::SendMessageRequest::new(a2a_core::Message::user_text("countdown 1"));
    collect(
        within("stream", client.send_streaming_message(&request))
            .await
            .expect("stream"),
    )
    .await;
}

each_binding! {
    async fn headers_token_and_card_placed_key_reach_the_agent_on_every_call(binding) {
        let card = card(None);
        let server = TestServer::start(DemoAgent, move |b| b.agent_card(card)).await;
        let mut credentials = Credentials::default()
            .with_header_line("X-Team:  blue ")
            .expect("a header line");
        credentials.bearer = Some("t0k".into());
        credentials.api_key = Some("k-1".into());
        calls_with(&server, binding, &credentials).await;
        let calls = server.seen.calls();
        assert_eq!(calls.len(), 2, "{:?}", calls.iter().map(Seen::op).collect::<Vec<_>>());
        for c in calls {
            assert_eq!(c.header("x-team"), Some("blue"), "{}", c.op());
            assert_eq!(c.header("authorization"), Some("Bearer t0k"), "{}", c.op());
            assert_eq!(c.header("x-agent-key"), Some("k-1"), "{}", c.op());
        }
    }
}

each_binding! {
    async fn oauth_tokens_come_from_the_cards_flow_with_its_scopes(binding) {
        let (token_url, forms) = token_endpoint("from-the-card").await;
        let card = card(Some(&token_url));
        let server = TestServer::start(DemoAgent, move |b| b.agent_card(card)).await;
        let mut credentials = Credentials::default();
        credentials.oauth = Some(OAuth::new("app", "s3cret"));
        calls_with(&server, binding, &credentials).await;
        for c in server.seen.calls() {
            assert_eq!(c.header("authorization"), Some("Bearer from-the-card"), "{}", c.op());
        }
        let forms = forms.lock().unwrap().clone();
        assert_eq!(forms.len(), 1, "one token, cached: {forms:?}");
        assert!(forms[0].contains("grant_type=client_credentials"), "{forms:?}");
        assert!(forms[0].contains("a2a.read") && forms[0].contains("a2a.write"), "{forms:?}");
    }
}

#[tokio::test]
async fn oauth_with_a_token_url_asks_there_for_the_scopes_given_within_its_size_limit() {
    let (from_card, card_forms) = token_endpoint("from-the-card").await;
    let (given, forms) = token_endpoint("from-the-url").await;
    let card = card(Some(&from_card));
    let server = TestServer::start(DemoAgent, move |b| b.agent_card(card)).await;
    let mut oauth = OAuth::new("app", "s3cret");
    oauth.token_url = Some(given);
    oauth.scopes = vec!["only.this".into()];
    let mut credentials = Credentials::default();
    credentials.oauth = Some(oauth.clone());
    calls_with(&server, a2a_client::Binding::JsonRpc, &credentials).await;
    for c in server.seen.calls() {
        assert_eq!(c.header("authorization"), Some("Bearer from-the-url"));
    }
    assert!(card_forms.lock().unwrap().is_empty());
    let forms = forms.lock().unwrap().clone();
    assert!(
        forms[0].contains("only.this") && !forms[0].contains("a2a.read"),
        "{forms:?}"
    );

    // An answer over the token limit fails the call, naming the limit.
    oauth.max_token_bytes = 16;
    credentials.oauth = Some(oauth);
    let client = credentials
        .apply(server.builder(a2a_client::Binding::JsonRpc), None)
        .expect("no card needed with a token URL")
        .connect(&server.url)
        .await
        .expect("connect");
    let err = within("send", client.send_text("hi"))
        .await
        .expect_err("the token answer is too large");
    assert!(matches!(err, Error::TooLarge { .. }), "{err}");
}

#[test]
fn header_lines_are_checked_at_once() {
    let err = Credentials::default()
        .with_header_line("no colon here")
        .expect_err("not `Name: value`");
    assert_eq!(
        err.to_string(),
        Error::Config("header \"no colon here\" is not `Name: value`".into()).to_string()
    );
    let err = Credentials::default()
        .with_header_line("bad name: x")
        .expect_err("a space in the name");
    assert!(err.to_string().contains("invalid header name"), "{err}");
    let err = Credentials::default()
        .with_header_line("X-Ok: line\nbreak")
        .expect_err("a control character in the value");
    assert!(err.to_string().contains("invalid value"), "{err}");
}

#[test]
fn what_needs_the_card_fails_clearly_without_it() {
    let mut credentials = Credentials::default();
    credentials.api_key = Some("k".into());
    assert!(credentials.needs_card());
    let err = credentials
        .apply(ClientBuilder::default(), None)
        .expect_err("where does the key go?");
    assert!(
        matches!(&err, Error::Config(m) if m.contains("card")),
        "{err}"
    );
    let err = credentials
        .apply(ClientBuilder::default(), Some(&DemoAgent::card()))
        .expect_err("the demo card has no key scheme");
    assert!(
        matches!(&err, Error::Config(m) if m.contains("API-key")),
        "{err}"
    );

    let mut credentials = Credentials::default();
    credentials.oauth = Some(OAuth::new("app", "s"));
    assert!(credentials.needs_card());
    let err = credentials
        .apply(ClientBuilder::default(), None)
        .expect_err("no token endpoint");
    assert!(
        matches!(&err, Error::Config(m) if m.contains("token")),
        "{err}"
    );
}

#[test]
fn as_plain_headers_with_the_key_where_the_card_says() {
    let mut credentials = Credentials::default()
        .with_header_line("X-Team: blue")
        .unwrap();
    credentials.bearer = Some("t".into());
    credentials.api_key = Some("k".into());
    let without = credentials.headers(None).expect("headers");
    assert_eq!(without.len(), 2, "{without:?}");
    let with = credentials.headers(Some(&card(None))).expect("headers");
    assert_eq!(with["x-team"], "blue");
    assert_eq!(with["authorization"], "Bearer t");
    assert_eq!(with["x-agent-key"], "k");

    let mut in_query = card(None);
    in_query.security_schemes.insert(
        "key".into(),
        SecurityScheme::ApiKeySecurityScheme(ApiKeySecurityScheme {
            description: None,
            location: "query".into(),
            name: "key".into(),
        }),
    );
    let err = credentials
        .headers(Some(&in_query))
        .expect_err("a query key is no header");
    assert!(err.to_string().contains("query string"), "{err}");
    // Secrets stay out of Debug.
    let shown = format!("{credentials:?}");
    assert!(
        !shown.contains("\"k\"") && !shown.contains("\"t\""),
        "{shown}"
    );
}

#[tokio::test]
async fn keys_to_trust_from_a_jwks_url_pem_and_jwk_set_text() {
    let key = |kid: &str| {
        let (signing, public) = common::signing_key();
        (signing.with_kid(kid), public)
    };
    let (served, _) = key("served");
    let (pasted, _) = key("pasted");
    let (_, public_pem) = key("pem");
    let jwks = a2a_core::signing::jwks(std::slice::from_ref(&served));
    let url = serve(
        axum::Router::new().route("/jwks.json", get(move || async move { axum::Json(jwks) })),
    )
    .await;

    let sources = KeySources::default()
        .with_jwks_url(&format!("{url}/jwks.json"))
        .with_jwks_url("  ")
        .with_key("pasted", a2a_core::signing::jwks(&[pasted]).to_string())
        .with_key("pem", public_pem)
        .with_key("blank", "\n");
    assert_eq!((sources.jwks_urls.len(), sources.keys.len()), (1, 2));
    let keys = within("load", sources.load(&ClientBuilder::default()))
        .await
        .expect("keys");
    assert_eq!(keys.len(), 3);

    let err = within(
        "load",
        KeySources::default()
            .with_key("--key cards/bad.pem", "not a key")
            .load(&ClientBuilder::default()),
    )
    .await
    .expect_err("not a key");
    assert!(
        matches!(&err, Error::Config(m) if m.starts_with("--key cards/bad.pem: ")),
        "{err}"
    );
    assert!(KeySources::default().is_empty());
}
