//! The binary's trust flags: `--card-signing-key` (the card signed, the JWK set served) and
//! `--oauth-*` (the card declares the OAuth 2.0 scheme; calls without a token are refused),
//! and the mistakes it refuses to start with.

mod process;

use a2a_core::signing::{Canonicalization, TrustedKeys, verify_card};
use process::Process;
use serde_json::Value;
use std::process::{Command, Stdio};

async fn get(url: &str) -> (u16, Value) {
    let response = reqwest::Client::new()
        .get(url)
        .header("A2A-Version", "1.0")
        .send()
        .await
        .expect("GET");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn card_signing_key_signs_the_card_and_serves_its_key() {
    use p256::pkcs8::EncodePrivateKey as _;
    let dir = tempfile::tempdir().expect("a temp dir");
    let key = dir.path().join("card.pem");
    let pem = p256::SecretKey::random(&mut rand::rngs::OsRng)
        .to_pkcs8_pem(Default::default())
        .expect("PEM");
    std::fs::write(&key, pem.as_bytes()).expect("write");
    let server = Process::with_args(&[
        "--memory",
        "--card-signing-key",
        key.to_str().expect("path"),
    ]);

    let (status, jwks) = get(&format!("{}/.well-known/jwks.json", server.url)).await;
    assert_eq!(status, 200, "{jwks}");
    let (_, card) = get(&format!("{}/.well-known/agent-card.json", server.url)).await;
    let trusted = TrustedKeys::from_jwks(&jwks).expect("a JWK set");
    let verified = verify_card(&card, &trusted, Canonicalization::Jcs).expect("verifies");
    assert_eq!(verified.algorithm, "ES256");
    assert_eq!(verified.kid.as_deref(), jwks["keys"][0]["kid"].as_str());
    assert_eq!(
        verified.jku,
        Some(format!("{}/.well-known/jwks.json", server.url))
    );
}

#[tokio::test]
async fn oauth_flags_declare_the_scheme_and_require_a_token() {
    let server = Process::with_args(&[
        "--memory",
        "--oauth-issuer",
        "https://login.example.com",
        "--oauth-audience",
        "https://agents.example.com/demo",
        "--oauth-token-url",
        "https://login.example.com/oauth2/token",
        "--oauth-scope",
        "a2a.use",
    ]);
    let (_, card) = get(&format!("{}/.well-known/agent-card.json", server.url)).await;
    let flow =
        &card["securitySchemes"]["oauth2"]["oauth2SecurityScheme"]["flows"]["clientCredentials"];
    assert_eq!(
        flow["tokenUrl"], "https://login.example.com/oauth2/token",
        "{card:#}"
    );
    assert!(flow["scopes"].get("a2a.use").is_some(), "{card:#}");
    assert_eq!(
        card["securityRequirements"][0]["schemes"]["oauth2"],
        serde_json::json!({"list": []}),
        "{card:#}"
    );
    let (status, _) = get(&format!("{}/tasks/some-task", server.url)).await;
    assert_eq!(status, 401);
}

/// Runs the binary with `args` and returns its exit code and stderr (it must not start).
fn refused(args: &[&str]) -> (Option<i32>, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_a2a-server"))
        .args(args)
        .args(["--listen", "127.0.0.1:0", "--memory"])
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn it_refuses_to_start_with_a_bad_key_or_two_ways_to_authenticate() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let junk = dir.path().join("junk.pem");
    std::fs::write(&junk, "not a key").expect("write");
    let (code, stderr) = refused(&["--card-signing-key", junk.to_str().expect("path")]);
    assert_ne!(code, Some(0));
    assert!(stderr.contains("--card-signing-key"), "{stderr}");
    assert!(stderr.contains("PKCS#8"), "{stderr}");

    let (code, stderr) = refused(&[
        "--oauth-issuer",
        "https://login.example.com",
        "--oauth-audience",
        "a",
        "--bearer-token",
        "t",
    ]);
    assert_ne!(code, Some(0));
    assert!(stderr.contains("choose one"), "{stderr}");

    let (code, stderr) = refused(&["--oauth-issuer", "https://login.example.com"]);
    assert_ne!(code, Some(0));
    assert!(stderr.contains("--oauth-audience"), "{stderr}");
}
