//! Interoperability with the official Python SDK (PyPI `a2a-sdk` 1.3.0, pinned by
//! `tests/interop/requirements-v1.txt`, installed by `tests/interop/setup.sh`): signed agent
//! cards, both ways. The SDK (`a2a.utils.signing`, `tests/interop/py_signing.py`) verifies the
//! cards our server signs, and our client verifies the cards the SDK signs.

mod interop_support;

use interop_support::env;
use serde_json::Value;

// ---------------------------------------------------------------------------------------------
// Signed agent cards, both ways (tests/interop/py_signing.py, the SDK's `a2a.utils.signing`)

/// Runs `py_signing.py ARGS…` and returns its stdout.
async fn py_signing(args: &[&str]) -> String {
    let env = env();
    let script = env.programs.join("py_signing.py");
    let output = tokio::time::timeout(
        interop_support::PEER_TIMEOUT,
        tokio::process::Command::new(&env.python_v1)
            .arg(&script)
            .args(args)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("py_signing.py ended in time")
    .expect("py_signing.py ran");
    let stdout = String::from_utf8(output.stdout).expect("UTF-8");
    assert!(
        output.status.success(),
        "py_signing.py {args:?}: {}\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write a temp file");
    path.to_str().expect("UTF-8 path").to_owned()
}

/// Our demo agent's card as our server serves it to a v1.0 client, signed by a key of each
/// of `kinds` (`a2a_e2e::keys`).
async fn our_signed_card(kinds: &[a2a_e2e::keys::Kind]) -> Value {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    let mut builder = a2a_server::Server::builder(a2a_server::demo::DemoAgent)
        .agent_card(a2a_server::demo::DemoAgent::card())
        .public_url(&url);
    for kind in kinds {
        let key =
            a2a_core::signing::CardSigningKey::from_pem(a2a_e2e::keys::pem(*kind)).expect("a key");
        builder = builder.card_signing_key(key);
    }
    let server = builder.build().expect("builds");
    let serving = tokio::spawn(async move { server.serve(listener).await.expect("serve") });
    let card = reqwest::Client::new()
        .get(format!("{url}/.well-known/agent-card.json"))
        .header("A2A-Version", "1.0")
        .send()
        .await
        .expect("GET")
        .json()
        .await
        .expect("JSON");
    serving.abort();
    card
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_sdk_verifies_the_cards_we_sign() {
    use a2a_core::signing::{CardSigningKey, jwks};
    use a2a_e2e::keys::{Kind, pem};
    let dir = tempfile::tempdir().expect("a temp dir");
    let keys: Vec<CardSigningKey> = Kind::ALL
        .into_iter()
        .map(|k| CardSigningKey::from_pem(pem(k)).expect("a key"))
        .collect();
    let card = our_signed_card(&Kind::ALL).await;

    // The SDK's canonical form of our card is byte for byte the RFC 8785 form we signed.
    let card_file = write(dir.path(), "card.json", &card.to_string());
    let theirs = py_signing(&["canonical", &card_file]).await;
    let ours = a2a_core::signing::canonical_card(&card, a2a_core::signing::Canonicalization::Jcs);
    assert_eq!(theirs, String::from_utf8(ours).expect("UTF-8"));

    // Each of our signatures verifies with the SDK, given only that key.
    for (kind, key) in Kind::ALL.into_iter().zip(&keys) {
        let jwks_file = write(
            dir.path(),
            "jwks.json",
            &jwks(std::slice::from_ref(key)).to_string(),
        );
        let verdict = py_signing(&["verify", &card_file, &jwks_file, kind.algorithm()]).await;
        assert_eq!(verdict.trim(), r#"{"ok": true}"#, "{kind:?}");
    }

    // A changed card does not.
    let mut tampered = card.clone();
    tampered["description"] = Value::from("Something else entirely.");
    let tampered_file = write(dir.path(), "tampered.json", &tampered.to_string());
    let jwks_file = write(dir.path(), "jwks.json", &jwks(&keys).to_string());
    let verdict: Value = serde_json::from_str(
        &py_signing(&["verify", &tampered_file, &jwks_file, "ES256,RS256,EdDSA"]).await,
    )
    .expect("JSON");
    assert_eq!(verdict["ok"], false, "{verdict}");
    assert!(
        verdict["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("InvalidSignaturesError")),
        "{verdict}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn our_client_verifies_the_cards_the_python_sdk_signs() {
    use a2a_core::signing::{
        Canonicalization, CardSigningKey, Rejection, TrustedKeys, VerifyError, verify_card,
    };
    use a2a_e2e::keys::{Kind, pem};
    let dir = tempfile::tempdir().expect("a temp dir");
    let unsigned = our_signed_card(&[]).await;
    let card_file = write(dir.path(), "card.json", &unsigned.to_string());
    for kind in Kind::ALL {
        let kid = format!("py-{}", kind.algorithm());
        let key_file = write(dir.path(), "key.pem", pem(kind));
        let signed: Value = serde_json::from_str(
            &py_signing(&["sign", &card_file, &key_file, &kid, kind.algorithm()]).await,
        )
        .expect("the signed card");
        let public = CardSigningKey::from_pem(pem(kind))
            .expect("a key")
            .with_kid(&kid)
            .public_jwk();
        let trusted = TrustedKeys::from_jwks(&public).expect("a JWK");
        let verified =
            verify_card(&signed, &trusted, Canonicalization::Jcs).expect("the SDK's signature");
        assert_eq!(verified.kid.as_deref(), Some(kid.as_str()));
        assert_eq!(verified.algorithm, kind.algorithm());
    }

    // A card holding an empty value: the SDK signs it with the value dropped, which the spec's
    // RFC 8785 form does not do; the SDK compatibility form verifies it.
    let mut with_empty = unsigned.clone();
    with_empty["iconUrl"] = Value::from("");
    let empty_file = write(dir.path(), "empty.json", &with_empty.to_string());
    let key_file = write(dir.path(), "key.pem", pem(Kind::Es256));
    let signed: Value = serde_json::from_str(
        &py_signing(&["sign", &empty_file, &key_file, "py-ec", "ES256"]).await,
    )
    .expect("the signed card");
    assert_eq!(
        signed["iconUrl"], "",
        "the SDK keeps the empty field in the card: {signed}"
    );
    let trusted = TrustedKeys::from_jwks(
        &CardSigningKey::from_pem(pem(Kind::Es256))
            .expect("a key")
            .with_kid("py-ec")
            .public_jwk(),
    )
    .expect("a JWK");
    match verify_card(&signed, &trusted, Canonicalization::Jcs) {
        Err(VerifyError::Rejected(r)) => assert_eq!(r[0].2, Rejection::BadSignature),
        other => panic!("the spec's form should not verify it: {other:?}"),
    }
    verify_card(&signed, &trusted, Canonicalization::Sdk).expect("the SDK form verifies");
}
