//! Tests of the test OAuth 2.0 / OpenID Connect issuer itself ([`a2a_e2e::issuer`]): its
//! tokens must verify with an ordinary JOSE library against its published JWKS.

use a2a_e2e::issuer::{AUDIENCE, JwksMode, Signing, TestIssuer};
use a2a_e2e::within;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{DecodingKey, Validation, decode, decode_header};
use reqwest::StatusCode;
use serde_json::{Value, json};

async fn get_json(http: &reqwest::Client, url: &str) -> Value {
    let response = within(url, http.get(url).send()).await.expect("GET");
    assert_eq!(response.status(), StatusCode::OK, "GET {url}");
    within(url, response.json()).await.expect("JSON body")
}

async fn fetch_jwks(http: &reqwest::Client, issuer: &TestIssuer) -> JwkSet {
    serde_json::from_value(get_json(http, &issuer.jwks_url()).await).expect("a JWK set")
}

/// Verifies `token` against the issuer's JWKS (by kid), checking iss, aud and exp.
async fn verify(http: &reqwest::Client, issuer: &TestIssuer, token: &str) -> Value {
    let header = decode_header(token).expect("a JWT header");
    let kid = header.kid.expect("a kid");
    let jwks = fetch_jwks(http, issuer).await;
    let jwk = jwks.find(&kid).expect("the kid is in the JWKS");
    let key = DecodingKey::from_jwk(jwk).expect("a decoding key");
    let mut validation = Validation::new(header.alg);
    validation.set_audience(&[AUDIENCE]);
    validation.set_issuer(&[&issuer.url]);
    validation.set_required_spec_claims(&["exp", "iss", "aud", "sub", "nbf"]);
    decode::<Value>(token, &key, &validation)
        .expect("the token verifies")
        .claims
}

async fn token_request(
    http: &reqwest::Client,
    issuer: &TestIssuer,
    basic: Option<(&str, &str)>,
    form: &[(&str, &str)],
) -> (StatusCode, reqwest::header::HeaderMap, Value) {
    let mut request = http.post(issuer.token_url()).form(form);
    if let Some((id, secret)) = basic {
        request = request.basic_auth(id, Some(secret));
    }
    let response = within("POST /token", request.send())
        .await
        .expect("POST /token");
    let status = response.status();
    let headers = response.headers().clone();
    let body = within("token body", response.json()).await.expect("JSON");
    (status, headers, body)
}

#[tokio::test]
async fn discovery_document() {
    let issuer = TestIssuer::start().await;
    let http = reqwest::Client::new();
    let doc = get_json(&http, &issuer.discovery_url()).await;
    assert_eq!(doc["issuer"], json!(issuer.url));
    assert_eq!(doc["jwks_uri"], json!(issuer.jwks_url()));
    assert_eq!(doc["token_endpoint"], json!(issuer.token_url()));
    assert_eq!(doc["grant_types_supported"], json!(["client_credentials"]));
    assert_eq!(
        doc["id_token_signing_alg_values_supported"],
        json!(["RS256", "ES256"])
    );

    let jwks = get_json(&http, &issuer.jwks_url()).await;
    let keys = jwks["keys"].as_array().expect("keys");
    assert_eq!(keys.len(), 2);
    assert_eq!(keys[0]["kty"], "RSA");
    assert_eq!(keys[0]["kid"], "rsa-1");
    assert_eq!(keys[0]["alg"], "RS256");
    assert_eq!(keys[0]["use"], "sig");
    assert_eq!(keys[0]["e"], "AQAB");
    assert_eq!(keys[1]["kty"], "EC");
    assert_eq!(keys[1]["crv"], "P-256");
    assert_eq!(keys[1]["kid"], "ec-1");
    assert_eq!(keys[1]["alg"], "ES256");
    assert_eq!(issuer.jwks_fetches(), 1);
}

#[tokio::test]
async fn client_credentials_by_basic_and_by_form() {
    let issuer = TestIssuer::start().await;
    issuer.client("svc", "s3cret", "service-a", &["tasks:read", "tasks:write"]);
    issuer.token_ttl(120);
    let http = reqwest::Client::new();

    // HTTP Basic, requesting one scope.
    let (status, _, body) = token_request(
        &http,
        &issuer,
        Some(("svc", "s3cret")),
        &[
            ("grant_type", "client_credentials"),
            ("scope", "tasks:read"),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["expires_in"], 120);
    assert_eq!(body["scope"], "tasks:read");
    let token = body["access_token"].as_str().expect("access_token");
    assert_eq!(decode_header(token).unwrap().kid.as_deref(), Some("rsa-1"));
    let claims = verify(&http, &issuer, token).await;
    assert_eq!(claims["iss"], json!(issuer.url));
    assert_eq!(claims["aud"], "a2a-test");
    assert_eq!(claims["sub"], "service-a");
    assert_eq!(claims["scope"], "tasks:read");
    assert_eq!(claims["client_id"], "svc");
    assert_eq!(
        claims["exp"].as_u64().unwrap() - claims["iat"].as_u64().unwrap(),
        120
    );

    // Form fields, no scope requested: all the allowed ones.
    let (status, _, body) = token_request(
        &http,
        &issuer,
        None,
        &[
            ("grant_type", "client_credentials"),
            ("client_id", "svc"),
            ("client_secret", "s3cret"),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["scope"], "tasks:read tasks:write");
    let claims = verify(&http, &issuer, body["access_token"].as_str().unwrap()).await;
    assert_eq!(claims["sub"], "service-a");
    assert_eq!(claims["scope"], "tasks:read tasks:write");
    assert_eq!(
        claims["exp"].as_u64().unwrap() - claims["iat"].as_u64().unwrap(),
        120
    );
    assert_eq!(issuer.token_requests(), 2);
}

#[tokio::test]
async fn token_errors() {
    let issuer = TestIssuer::start().await;
    issuer.client("svc", "s3cret", "service-a", &["tasks:read"]);
    let http = reqwest::Client::new();

    let (status, headers, body) = token_request(
        &http,
        &issuer,
        Some(("svc", "wrong")),
        &[("grant_type", "client_credentials")],
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["error"], "invalid_client");
    assert!(body["error_description"].is_string());
    assert_eq!(
        headers.get("www-authenticate").unwrap(),
        r#"Basic realm="test-issuer""#
    );

    let (status, _, body) = token_request(
        &http,
        &issuer,
        Some(("nobody", "x")),
        &[("grant_type", "client_credentials")],
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["error"], "invalid_client");

    let (status, _, body) = token_request(
        &http,
        &issuer,
        Some(("svc", "s3cret")),
        &[
            ("grant_type", "client_credentials"),
            ("scope", "tasks:read admin"),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"], "invalid_scope");

    let (status, _, body) = token_request(
        &http,
        &issuer,
        Some(("svc", "s3cret")),
        &[("grant_type", "password")],
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"], "unsupported_grant_type");
    assert_eq!(issuer.token_requests(), 4);
}

#[tokio::test]
async fn rotation_and_retirement() {
    let issuer = TestIssuer::start().await;
    let http = reqwest::Client::new();
    let kid = issuer.rotate();
    assert_eq!(kid, "rsa-2");

    let token = issuer.mint(json!({"sub": "alice", "nbf": null}));
    assert_eq!(decode_header(&token).unwrap().kid.as_deref(), Some("rsa-2"));
    let jwks = fetch_jwks(&http, &issuer).await;
    assert!(jwks.find("rsa-1").is_some());
    assert!(jwks.find("rsa-2").is_some());
    assert!(jwks.find("ec-1").is_some());
    let claims = jsonwebtoken::dangerous::insecure_decode::<Value>(&token)
        .unwrap()
        .claims;
    assert_eq!(claims["sub"], "alice");
    assert!(claims.get("nbf").is_none(), "null removes the claim");

    issuer.retire("rsa-1");
    let jwks = fetch_jwks(&http, &issuer).await;
    assert!(jwks.find("rsa-1").is_none());
    assert!(jwks.find("rsa-2").is_some());

    // The ES256 key signs tokens that verify too.
    let token = issuer.mint_as(Signing::Es256, json!({"nbf": null}));
    let header = decode_header(&token).unwrap();
    assert_eq!(header.kid.as_deref(), Some("ec-1"));
    assert_eq!(header.alg, jsonwebtoken::Algorithm::ES256);
    let jwk = jwks.find("ec-1").unwrap();
    let mut validation = Validation::new(jsonwebtoken::Algorithm::ES256);
    validation.set_audience(&[AUDIENCE]);
    decode::<Value>(&token, &DecodingKey::from_jwk(jwk).unwrap(), &validation)
        .expect("the ES256 token verifies");
}

#[tokio::test]
async fn bad_signings() {
    let issuer = TestIssuer::start().await;
    let http = reqwest::Client::new();
    let jwks = fetch_jwks(&http, &issuer).await;

    let none = issuer.mint_as(Signing::NoneAlg, json!({}));
    let parts: Vec<&str> = none.split('.').collect();
    assert_eq!(parts.len(), 3);
    assert!(parts[2].is_empty());
    assert!(none.ends_with('.'));

    let ghost = issuer.mint_as(Signing::Unknown, json!({}));
    assert_eq!(decode_header(&ghost).unwrap().kid.as_deref(), Some("ghost"));
    assert!(jwks.find("ghost").is_none());

    let confused = issuer.mint_as(Signing::Hs256WithRsaPublicKey, json!({}));
    let header = decode_header(&confused).unwrap();
    assert_eq!(header.alg, jsonwebtoken::Algorithm::HS256);
    assert_eq!(header.kid.as_deref(), Some("rsa-1"));

    // A verifier pinned to the JWKS key refuses them all.
    let rsa = DecodingKey::from_jwk(jwks.find("rsa-1").unwrap()).unwrap();
    let mut validation = Validation::new(jsonwebtoken::Algorithm::RS256);
    validation.set_audience(&[AUDIENCE]);
    assert!(decode::<Value>(&confused, &rsa, &validation).is_err());
    assert!(decode::<Value>(&none, &rsa, &validation).is_err());
    let good = issuer.mint(json!({}));
    decode::<Value>(&good, &rsa, &validation).expect("the current key's token verifies");
}

#[tokio::test]
async fn jwks_down() {
    let issuer = TestIssuer::start().await;
    let http = reqwest::Client::new();
    issuer.jwks_mode(JwksMode::Down);
    let response = within("GET /jwks", http.get(issuer.jwks_url()).send())
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
    issuer.jwks_mode(JwksMode::Up);
    let response = within("GET /jwks", http.get(issuer.jwks_url()).send())
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(issuer.jwks_fetches(), 2);
}
