//! Agent card signatures: each algorithm signs and verifies with keys generated here; every
//! forgery and mistake a verifier must catch is refused with its own reason.

use a2a_core::signing::{
    Canonicalization, CardSigningKey, KeyError, Rejection, TrustedKeys, VerifyError, jwks,
    sign_card, verify_card,
};
use a2a_core::{AgentCard, AgentSkill};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use std::sync::OnceLock;

/// PKCS#8 PEM private keys: P-256, RSA 2048, Ed25519 (generated once per test binary).
struct Keys {
    ec: String,
    rsa: String,
    ed: String,
}

fn keys() -> &'static Keys {
    static KEYS: OnceLock<Keys> = OnceLock::new();
    KEYS.get_or_init(|| {
        use p256::pkcs8::EncodePrivateKey as _;
        let mut rng = rand::rngs::OsRng;
        let ec = p256::SecretKey::random(&mut rng)
            .to_pkcs8_pem(Default::default())
            .expect("P-256 PEM")
            .to_string();
        let rsa = rsa::pkcs8::EncodePrivateKey::to_pkcs8_pem(
            &rsa::RsaPrivateKey::new(&mut rng, 2048).expect("an RSA key"),
            Default::default(),
        )
        .expect("RSA PEM")
        .to_string();
        let ed = ed25519_dalek::pkcs8::EncodePrivateKey::to_pkcs8_pem(
            &ed25519_dalek::SigningKey::generate(&mut rng),
            Default::default(),
        )
        .expect("Ed25519 PEM")
        .to_string();
        Keys { ec, rsa, ed }
    })
}

fn card() -> AgentCard {
    AgentCard::builder("Café agent", "Signs its card — and means it ✓")
        .interface("JSONRPC", "https://agent.example/a2a")
        .skill(AgentSkill::new("echo", "Echo", "Echoes").with_tags(["echo"]))
        .streaming(true)
        .build()
}

fn served(card: &AgentCard) -> Value {
    serde_json::to_value(card).expect("a card serializes")
}

fn signer(pem: &str) -> CardSigningKey {
    CardSigningKey::from_pem(pem).expect("a usable key")
}

fn rejection(result: Result<a2a_core::signing::Verified, VerifyError>) -> Rejection {
    match result {
        Err(VerifyError::Rejected(r)) => {
            assert_eq!(r.len(), 1, "{r:?}");
            r[0].2.clone()
        }
        other => panic!("expected one rejected signature, got {other:?}"),
    }
}

#[test]
fn each_algorithm_signs_and_verifies_and_names_its_key() {
    for (pem, alg) in [
        (&keys().ec, "ES256"),
        (&keys().rsa, "RS256"),
        (&keys().ed, "EdDSA"),
    ] {
        let key = signer(pem).with_jku("https://agent.example/.well-known/jwks.json");
        assert_eq!(key.algorithm(), alg);
        let mut card = card();
        sign_card(&mut card, std::slice::from_ref(&key)).expect("signs");
        let trusted = TrustedKeys::from_jwks(&jwks(std::slice::from_ref(&key))).expect("a JWKS");
        let verified =
            verify_card(&served(&card), &trusted, Canonicalization::Jcs).expect("verifies");
        assert_eq!(verified.kid.as_deref(), Some(key.kid()), "{alg}");
        assert_eq!(verified.algorithm, alg);
        assert_eq!(
            verified.jku.as_deref(),
            Some("https://agent.example/.well-known/jwks.json")
        );
        // The header is what the spec's example shows: alg, kid, typ JOSE (and jku).
        let header: Value = serde_json::from_slice(
            &URL_SAFE_NO_PAD
                .decode(&card.signatures[0].protected)
                .expect("base64url"),
        )
        .expect("JSON");
        assert_eq!(header["alg"], alg);
        assert_eq!(header["typ"], "JOSE");
        // The thumbprint kid is stable: the same key read again has the same kid.
        assert_eq!(signer(pem).kid(), key.kid());
    }
}

#[test]
fn a_card_signed_by_several_keys_verifies_with_any_one_of_them() {
    let keys = [signer(&keys().ec), signer(&keys().rsa), signer(&keys().ed)];
    let mut card = card();
    sign_card(&mut card, &keys).expect("signs");
    assert_eq!(card.signatures.len(), 3);
    let only_ed = TrustedKeys::from_jwk_value(keys[2].public_jwk());
    let verified = verify_card(&served(&card), &only_ed, Canonicalization::Jcs).expect("verifies");
    assert_eq!(verified.index, 2);
    // Signing again replaces the signatures rather than signing them.
    sign_card(&mut card, &keys[..1]).expect("signs");
    assert_eq!(card.signatures.len(), 1);
}

trait FromJwk {
    fn from_jwk_value(jwk: Value) -> Self;
}

impl FromJwk for TrustedKeys {
    fn from_jwk_value(jwk: Value) -> Self {
        TrustedKeys::from_jwks(&jwk).expect("a JWK")
    }
}

#[test]
fn a_changed_card_or_another_canonicalization_does_not_verify() {
    let key = signer(&keys().ec);
    let trusted = TrustedKeys::from_jwk_value(key.public_jwk());
    let mut card = card();
    sign_card(&mut card, std::slice::from_ref(&key)).expect("signs");

    let mut tampered = served(&card);
    tampered["description"] = json!("Signs its card, honestly");
    assert_eq!(
        rejection(verify_card(&tampered, &trusted, Canonicalization::Jcs)),
        Rejection::BadSignature
    );

    // The same card re-serialized by a server that writes empty fields: the spec's JCS sees a
    // different card, the SDKs' form (empty values dropped) the same one.
    let mut with_empties = served(&card);
    with_empties["supportedInterfaces"][0]["tenant"] = json!("");
    with_empties["securitySchemes"] = json!({});
    assert_eq!(
        rejection(verify_card(&with_empties, &trusted, Canonicalization::Jcs)),
        Rejection::BadSignature
    );
    verify_card(&with_empties, &trusted, Canonicalization::Sdk).expect("the SDK form verifies");

    // Member order and whitespace are not part of what is signed.
    let reordered: Value =
        serde_json::from_str(&serde_json::to_string_pretty(&served(&card)).expect("JSON"))
            .expect("JSON");
    verify_card(&reordered, &trusted, Canonicalization::Jcs).expect("verifies");
}

/// A signature with the given protected header over the card, signed by `sign`.
fn forged(card: &AgentCard, header: Value, sign: impl Fn(&[u8]) -> String) -> Value {
    let mut v = served(card);
    let protected = URL_SAFE_NO_PAD.encode(header.to_string());
    let payload =
        URL_SAFE_NO_PAD.encode(a2a_core::signing::canonical_card(&v, Canonicalization::Jcs));
    let signature = sign(format!("{protected}.{payload}").as_bytes());
    v["signatures"] = json!([{"protected": protected, "signature": signature}]);
    v
}

#[test]
fn forgeries_are_refused_each_with_its_reason() {
    let rsa = signer(&keys().rsa);
    let trusted = TrustedKeys::from_jwk_value(rsa.public_jwk());
    let card = card();

    // alg "none" with an empty signature.
    let none = forged(&card, json!({"alg": "none", "kid": rsa.kid()}), |_| {
        String::new()
    });
    assert_eq!(
        rejection(verify_card(&none, &trusted, Canonicalization::Jcs)),
        Rejection::AlgorithmNotAllowed("none".into())
    );

    // Algorithm confusion: HS256 keyed with the RSA public key's PEM, which the attacker has.
    let public_pem = {
        use rsa::pkcs8::{DecodePrivateKey as _, EncodePublicKey as _};
        rsa::RsaPrivateKey::from_pkcs8_pem(&keys().rsa)
            .expect("RSA")
            .to_public_key()
            .to_public_key_pem(Default::default())
            .expect("SPKI PEM")
    };
    let hs = forged(&card, json!({"alg": "HS256", "kid": rsa.kid()}), |input| {
        jsonwebtoken::crypto::sign(
            input,
            &jsonwebtoken::EncodingKey::from_secret(public_pem.as_bytes()),
            jsonwebtoken::Algorithm::HS256,
        )
        .expect("HMAC")
    });
    assert_eq!(
        rejection(verify_card(&hs, &trusted, Canonicalization::Jcs)),
        Rejection::AlgorithmNotAllowed("HS256".into())
    );

    // A key nobody trusts, under its own kid or under the trusted key's kid.
    let stranger = signer(&keys().ec).with_kid("stranger");
    let mut signed = card.clone();
    sign_card(&mut signed, std::slice::from_ref(&stranger)).expect("signs");
    assert_eq!(
        rejection(verify_card(
            &served(&signed),
            &trusted,
            Canonicalization::Jcs
        )),
        Rejection::UnknownKey(Some("stranger".into()))
    );
    let impostor = signer(&keys().ec).with_kid(rsa.kid());
    sign_card(&mut signed, std::slice::from_ref(&impostor)).expect("signs");
    assert_eq!(
        rejection(verify_card(
            &served(&signed),
            &trusted,
            Canonicalization::Jcs
        )),
        Rejection::WrongKey(rsa.kid().into(), "ES256".into())
    );

    // An RS256 signature by another RSA key that claims the trusted kid.
    let other_rsa = {
        use rsa::pkcs8::EncodePrivateKey as _;
        rsa::RsaPrivateKey::new(&mut rand::rngs::OsRng, 2048)
            .expect("RSA")
            .to_pkcs8_pem(Default::default())
            .expect("PEM")
            .to_string()
    };
    let twin = signer(&other_rsa).with_kid(rsa.kid());
    sign_card(&mut signed, std::slice::from_ref(&twin)).expect("signs");
    assert_eq!(
        rejection(verify_card(
            &served(&signed),
            &trusted,
            Canonicalization::Jcs
        )),
        Rejection::BadSignature
    );

    // Unreadable headers, and extensions the verifier does not know.
    let mut garbage = served(&card);
    garbage["signatures"] = json!([{"protected": "%%%", "signature": "x"}]);
    assert!(matches!(
        rejection(verify_card(&garbage, &trusted, Canonicalization::Jcs)),
        Rejection::Malformed(_)
    ));
    let crit = forged(
        &card,
        json!({"alg": "RS256", "kid": rsa.kid(), "crit": ["exp"]}),
        |_| "x".into(),
    );
    assert!(matches!(
        rejection(verify_card(&crit, &trusted, Canonicalization::Jcs)),
        Rejection::Malformed(_)
    ));

    // No signatures at all.
    assert_eq!(
        verify_card(&served(&card), &trusted, Canonicalization::Jcs),
        Err(VerifyError::NoSignatures)
    );
}

#[test]
fn trusted_keys_come_from_jwks_public_or_private_pem_and_nothing_else() {
    let ed = signer(&keys().ed);
    let mut card = card();
    sign_card(&mut card, std::slice::from_ref(&ed)).expect("signs");
    let public_pem = {
        use ed25519_dalek::pkcs8::{DecodePrivateKey as _, EncodePublicKey as _};
        ed25519_dalek::SigningKey::from_pkcs8_pem(&keys().ed)
            .expect("Ed25519")
            .verifying_key()
            .to_public_key_pem(Default::default())
            .expect("SPKI PEM")
    };
    for trusted in [
        TrustedKeys::from_pem(&public_pem).expect("public PEM"),
        TrustedKeys::from_pem(&keys().ed).expect("private PEM"),
    ] {
        // A PEM key has no kid of its own: any signature its type fits is tried.
        verify_card(&served(&card), &trusted, Canonicalization::Jcs).expect("verifies");
    }
    assert!(matches!(
        TrustedKeys::from_pem("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"),
        Err(KeyError::Unsupported)
    ));
    assert!(matches!(
        CardSigningKey::from_pem("not a key"),
        Err(KeyError::Unsupported)
    ));
    // A JWK set that holds a private key is refused: it should never have been published.
    let mut private = ed.public_jwk();
    private["d"] = json!("AAAA");
    assert!(matches!(
        TrustedKeys::from_jwks(&json!({"keys": [private]})),
        Err(KeyError::InvalidJwk(_))
    ));
}
