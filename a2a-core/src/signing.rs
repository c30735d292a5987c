//! Agent card signatures (spec §8.4): a JWS (RFC 7515) in the card's `signatures`, whose
//! payload is the RFC 8785 ([`crate::jcs`]) canonical form of the card without its
//! `signatures`, left out of the card ("detached"). The protected header names the algorithm,
//! the key (`kid`), and optionally where its key set is (`jku`).
//!
//! ```
//! # fn demo(pem: &str, jwks: &serde_json::Value) -> Result<(), Box<dyn std::error::Error>> {
//! use a2a_core::AgentCard;
//! use a2a_core::signing::{Canonicalization, CardSigningKey, TrustedKeys, sign_card, verify_card};
//!
//! let mut card = AgentCard::builder("Echo", "Repeats what you say").build();
//! let key = CardSigningKey::from_pem(pem)?; // PKCS#8: P-256 (ES256), RSA (RS256), Ed25519 (EdDSA)
//! sign_card(&mut card, &[key])?;
//!
//! // A client trusts some keys (a JWKS it was given, a PEM file) and checks the card as served.
//! let served = serde_json::to_value(&card)?;
//! let verified = verify_card(&served, &TrustedKeys::from_jwks(jwks)?, Canonicalization::Jcs)?;
//! println!("signed by {:?} ({})", verified.kid, verified.algorithm);
//! # Ok(()) }
//! ```
//!
//! The official SDKs (a2a-sdk for Python, @a2a-js/sdk, both 1.3.0) canonicalize differently:
//! they first read the card into their protobuf model and drop every empty value (`""`, `[]`,
//! `{}`, `null`), then apply JCS. A card they serve carries no such values, except the empty
//! fields their serializers leave in (the JS SDK writes `"tenant": ""`, `"signatures": []`,
//! `"securitySchemes": {}`). [`Canonicalization::Sdk`] verifies their signatures; we sign with
//! plain JCS, which they verify too as long as the card holds no empty value (ours never does:
//! the model skips them).

use crate::{AgentCard, AgentCardSignature, jcs};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, crypto};
use serde_json::{Map, Value, json};
use sha2::Digest as _;
use std::fmt;

mod verify;
pub use verify::{Rejection, TrustedKeys, Verified, VerifyError, verify_card};

/// How a card is turned into the bytes its signatures cover.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Canonicalization {
    /// RFC 8785 of the card as served, without `signatures` (the spec).
    #[default]
    Jcs,
    /// The official SDKs' form: empty values dropped at every depth, then RFC 8785. For
    /// verifying cards they signed; never used to sign.
    Sdk,
}

/// The bytes the signatures of `card` (a card as served, in JSON) cover.
pub fn canonical_card(card: &Value, form: Canonicalization) -> Vec<u8> {
    let mut card = card.clone();
    if let Some(o) = card.as_object_mut() {
        o.remove("signatures");
    }
    if form == Canonicalization::Sdk {
        card = drop_empty(card).unwrap_or_else(|| Value::Object(Map::new()));
    }
    jcs::to_vec(&card)
}

/// `None` for an empty value (`null`, `""`, or an array or object that is empty once its own
/// empty values are gone).
fn drop_empty(value: Value) -> Option<Value> {
    match value {
        Value::Null => None,
        Value::String(s) if s.is_empty() => None,
        Value::Array(items) => {
            let items: Vec<Value> = items.into_iter().filter_map(drop_empty).collect();
            (!items.is_empty()).then_some(Value::Array(items))
        }
        Value::Object(members) => {
            let members: Map<String, Value> = members
                .into_iter()
                .filter_map(|(k, v)| drop_empty(v).map(|v| (k, v)))
                .collect();
            (!members.is_empty()).then_some(Value::Object(members))
        }
        other => Some(other),
    }
}

fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// A key that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// Not a key of a kind this crate signs or verifies with.
    #[error(
        "not a P-256 (ES256), RSA (RS256) or Ed25519 (EdDSA) key in PEM (PKCS#8, PKCS#1 or SPKI)"
    )]
    Unsupported,
    /// A JWK or JWK set that does not read.
    #[error("invalid JWK: {0}")]
    InvalidJwk(String),
    /// The crypto library refused the key.
    #[error("unusable key: {0}")]
    Unusable(String),
}

/// A private key the server signs its cards with, its `kid` and optional `jku`.
pub struct CardSigningKey {
    kid: String,
    jku: Option<String>,
    algorithm: Algorithm,
    key: EncodingKey,
    /// The public key as a JWK (kty and its parameters only).
    public: Map<String, Value>,
}

impl fmt::Debug for CardSigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CardSigningKey")
            .field("kid", &self.kid)
            .field("algorithm", &self.algorithm)
            .field("jku", &self.jku)
            .finish_non_exhaustive()
    }
}

/// The public JWK members of a key read from PEM, and its algorithm.
fn public_of_private(pem: &str) -> Result<(Algorithm, Map<String, Value>), KeyError> {
    use p256::elliptic_curve::sec1::ToEncodedPoint as _;
    use rsa::traits::PublicKeyParts as _;
    if let Ok(k) = <p256::SecretKey as p256::pkcs8::DecodePrivateKey>::from_pkcs8_pem(pem) {
        return Ok((
            Algorithm::ES256,
            ec_jwk(&k.public_key().to_encoded_point(false)),
        ));
    }
    let rsa = <rsa::RsaPrivateKey as rsa::pkcs8::DecodePrivateKey>::from_pkcs8_pem(pem)
        .or_else(|_| <rsa::RsaPrivateKey as rsa::pkcs1::DecodeRsaPrivateKey>::from_pkcs1_pem(pem));
    if let Ok(k) = rsa {
        return Ok((Algorithm::RS256, rsa_jwk(k.n(), k.e())));
    }
    if let Ok(k) =
        <ed25519_dalek::SigningKey as ed25519_dalek::pkcs8::DecodePrivateKey>::from_pkcs8_pem(pem)
    {
        return Ok((Algorithm::EdDSA, ed_jwk(k.verifying_key().as_bytes())));
    }
    Err(KeyError::Unsupported)
}

fn ec_jwk(point: &p256::EncodedPoint) -> Map<String, Value> {
    let coordinate = |c: Option<&p256::FieldBytes>| b64(c.map(|c| &c[..]).unwrap_or(&[]));
    members(
        json!({"kty": "EC", "crv": "P-256", "x": coordinate(point.x()), "y": coordinate(point.y())}),
    )
}

fn rsa_jwk(n: &rsa::BigUint, e: &rsa::BigUint) -> Map<String, Value> {
    members(json!({"kty": "RSA", "n": b64(&n.to_bytes_be()), "e": b64(&e.to_bytes_be())}))
}

fn ed_jwk(x: &[u8]) -> Map<String, Value> {
    members(json!({"kty": "OKP", "crv": "Ed25519", "x": b64(x)}))
}

fn members(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// The RFC 7638 thumbprint of a public JWK (its required members only, which are all the
/// members `public` holds): SHA-256 of their JCS form, base64url.
fn thumbprint(public: &Map<String, Value>) -> String {
    b64(&sha2::Sha256::digest(jcs::to_vec(&Value::Object(
        public.clone(),
    ))))
}

impl CardSigningKey {
    /// A private key in PEM: PKCS#8 P-256 (signs ES256), RSA (RS256; PKCS#1 too) or Ed25519
    /// (EdDSA). Its `kid` is the key's RFC 7638 thumbprint unless [`with_kid`](Self::with_kid)
    /// names another.
    pub fn from_pem(pem: &str) -> Result<Self, KeyError> {
        let (algorithm, public) = public_of_private(pem)?;
        let key = match algorithm {
            Algorithm::ES256 => EncodingKey::from_ec_pem(pem.as_bytes()),
            Algorithm::EdDSA => EncodingKey::from_ed_pem(pem.as_bytes()),
            _ => EncodingKey::from_rsa_pem(pem.as_bytes()),
        }
        .map_err(|e| KeyError::Unusable(e.to_string()))?;
        Ok(Self {
            kid: thumbprint(&public),
            jku: None,
            algorithm,
            key,
            public,
        })
    }

    /// Names the key `kid` in its signatures.
    #[must_use]
    pub fn with_kid(mut self, kid: impl Into<String>) -> Self {
        self.kid = kid.into();
        self
    }

    /// Puts `jku` (the URL of a JWK set holding this key) in its signatures' headers.
    #[must_use]
    pub fn with_jku(mut self, jku: impl Into<String>) -> Self {
        self.jku = Some(jku.into());
        self
    }

    /// The key id its signatures carry.
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// The JWS algorithm: `ES256`, `RS256` or `EdDSA`.
    pub fn algorithm(&self) -> &'static str {
        algorithm_name(self.algorithm)
    }

    /// The public key as a JWK, with its `kid`, `alg` and `use: "sig"`: what a JWK set
    /// published for verifiers holds.
    pub fn public_jwk(&self) -> Value {
        let mut jwk = self.public.clone();
        jwk.insert("kid".into(), json!(self.kid));
        jwk.insert("alg".into(), json!(self.algorithm()));
        jwk.insert("use".into(), json!("sig"));
        Value::Object(jwk)
    }

    /// The `jku` its signatures carry, if any.
    pub fn jku(&self) -> Option<&str> {
        self.jku.as_deref()
    }

    /// A signature of `card`, a card in JSON as it will be served (whatever signatures it
    /// already has are not covered).
    pub fn sign(&self, card: &Value) -> Result<AgentCardSignature, KeyError> {
        let payload = canonical_card(card, Canonicalization::Jcs);
        let mut header = json!({"alg": self.algorithm(), "kid": self.kid, "typ": "JOSE"});
        if let Some(jku) = &self.jku {
            header["jku"] = json!(jku);
        }
        let protected = b64(&jcs::to_vec(&header));
        let input = format!("{protected}.{}", b64(&payload));
        let signature = crypto::sign(input.as_bytes(), &self.key, self.algorithm)
            .map_err(|e| KeyError::Unusable(e.to_string()))?;
        Ok(AgentCardSignature {
            protected,
            signature,
            header: None,
        })
    }
}

/// Replaces `card`'s signatures with one by each key.
pub fn sign_card(card: &mut AgentCard, keys: &[CardSigningKey]) -> Result<(), KeyError> {
    card.signatures.clear();
    let value = serde_json::to_value(&*card).map_err(|e| KeyError::Unusable(e.to_string()))?;
    card.signatures = keys
        .iter()
        .map(|k| k.sign(&value))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(())
}

/// Replaces the `signatures` of a card in JSON (any shape a server serves, such as a card
/// with v0.3 fields beside the v1.0 ones) with one by each key, over that JSON.
pub fn sign_json(card: &mut Value, keys: &[CardSigningKey]) -> Result<(), KeyError> {
    let signatures = keys
        .iter()
        .map(|k| k.sign(card))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(o) = card.as_object_mut() {
        o.remove("signatures");
        if !signatures.is_empty() {
            let list =
                serde_json::to_value(signatures).map_err(|e| KeyError::Unusable(e.to_string()))?;
            o.insert("signatures".into(), list);
        }
    }
    Ok(())
}

/// A JWK set of the given keys' public halves (`{"keys": [...]}`).
pub fn jwks(keys: &[CardSigningKey]) -> Value {
    json!({"keys": keys.iter().map(CardSigningKey::public_jwk).collect::<Vec<_>>()})
}

fn algorithm_name(a: Algorithm) -> &'static str {
    match a {
        Algorithm::ES256 => "ES256",
        Algorithm::ES384 => "ES384",
        Algorithm::RS256 => "RS256",
        Algorithm::RS384 => "RS384",
        Algorithm::RS512 => "RS512",
        Algorithm::PS256 => "PS256",
        Algorithm::PS384 => "PS384",
        Algorithm::PS512 => "PS512",
        Algorithm::EdDSA => "EdDSA",
        Algorithm::HS256 => "HS256",
        Algorithm::HS384 => "HS384",
        Algorithm::HS512 => "HS512",
    }
}

/// The JWS algorithm named `name`, if it is one of the asymmetric algorithms a card signature
/// (or an OAuth bearer token) may use: ES256, ES384, RS256/384/512, PS256/384/512, EdDSA.
/// `none` and the HMAC algorithms never verify: a verifier holds public keys, and a public key
/// used as an HMAC secret is the classic algorithm-confusion forgery.
pub fn asymmetric_algorithm(name: &str) -> Option<Algorithm> {
    Some(match name {
        "ES256" => Algorithm::ES256,
        "ES384" => Algorithm::ES384,
        "RS256" => Algorithm::RS256,
        "RS384" => Algorithm::RS384,
        "RS512" => Algorithm::RS512,
        "PS256" => Algorithm::PS256,
        "PS384" => Algorithm::PS384,
        "PS512" => Algorithm::PS512,
        "EdDSA" => Algorithm::EdDSA,
        _ => return None,
    })
}

/// Whether a JWK (as JSON) may verify a signature of `alg`, whose JOSE name is `name`: its
/// key type (and curve) fits the algorithm, and its own `alg`, if it names one, is `name`.
/// The one rule for card signatures and for bearer tokens (`a2a-server`'s `JwtBearer`).
pub fn key_fits(jwk: &Value, alg: Algorithm, name: &str) -> bool {
    fits(jwk, alg) && jwk["alg"].as_str().is_none_or(|a| a == name)
}

/// Whether a JWK's key type fits an algorithm.
fn fits(jwk: &Value, alg: Algorithm) -> bool {
    match (jwk["kty"].as_str(), alg) {
        (Some("EC"), Algorithm::ES256) => jwk["crv"] == "P-256",
        (Some("EC"), Algorithm::ES384) => jwk["crv"] == "P-384",
        (
            Some("RSA"),
            Algorithm::RS256
            | Algorithm::RS384
            | Algorithm::RS512
            | Algorithm::PS256
            | Algorithm::PS384
            | Algorithm::PS512,
        ) => true,
        (Some("OKP"), Algorithm::EdDSA) => jwk["crv"] == "Ed25519",
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_id_is_the_rfc_7638_thumbprint() {
        // RFC 7638 §3.1.
        let jwk = members(json!({
            "kty": "RSA",
            "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
            "e": "AQAB"
        }));
        assert_eq!(
            thumbprint(&jwk),
            "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
        );
    }

    #[test]
    fn the_sdk_form_drops_empty_values_at_every_depth() {
        let card = json!({
            "name": "x", "tenant": "", "signatures": [{"protected": "p"}],
            "skills": [{"id": "s", "tags": [], "examples": [""]}, {}],
            "capabilities": {"streaming": false, "extensions": [{"params": {"a": null}}]},
        });
        assert_eq!(
            String::from_utf8(canonical_card(&card, Canonicalization::Sdk)).expect("utf-8"),
            r#"{"capabilities":{"streaming":false},"name":"x","skills":[{"id":"s"}]}"#
        );
        assert_eq!(
            String::from_utf8(canonical_card(&card, Canonicalization::Jcs)).expect("utf-8"),
            r#"{"capabilities":{"extensions":[{"params":{"a":null}}],"streaming":false},"name":"x","skills":[{"examples":[""],"id":"s","tags":[]},{}],"tenant":""}"#
        );
    }
}
