//! The issuer's signing keys: real RSA 2048 and P-256 keys generated at start, their public
//! JWKs, and the signing of claims.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use p256::elliptic_curve::sec1::ToEncodedPoint;
use rsa::pkcs8::{EncodePrivateKey, EncodePublicKey, LineEnding};
use rsa::traits::PublicKeyParts;
use serde_json::{Value, json};

/// One signing key, published in the JWKS or not (retired keys still sign when asked to).
pub(super) struct Key {
    pub(super) kid: String,
    pub(super) alg: Algorithm,
    pub(super) encoding: EncodingKey,
    /// The public JWK as published.
    pub(super) jwk: Value,
    /// The SPKI PEM of an RSA public key (for [`Signing::Hs256WithRsaPublicKey`](super::Signing::Hs256WithRsaPublicKey)).
    pub(super) public_pem: Option<String>,
    pub(super) published: bool,
}

pub(super) fn sign(key: &Key, claims: &Value) -> String {
    let mut header = Header::new(key.alg);
    header.kid = Some(key.kid.clone());
    jsonwebtoken::encode(&header, claims, &key.encoding).expect("sign a JWT")
}

pub(super) fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

pub(super) fn rsa_key(kid: &str) -> Key {
    let private = rsa::RsaPrivateKey::new(&mut rand::rngs::OsRng, 2048).expect("RSA 2048 key");
    let pem = private
        .to_pkcs8_pem(LineEnding::LF)
        .expect("RSA PKCS#8 PEM");
    let encoding = EncodingKey::from_rsa_pem(pem.as_bytes()).expect("RSA encoding key");
    let public = private.to_public_key();
    let public_pem = public
        .to_public_key_pem(LineEnding::LF)
        .expect("RSA SPKI PEM");
    let jwk = json!({
        "kty": "RSA",
        "n": b64(&public.n().to_bytes_be()),
        "e": b64(&public.e().to_bytes_be()),
        "kid": kid,
        "alg": "RS256",
        "use": "sig",
    });
    Key {
        kid: kid.to_owned(),
        alg: Algorithm::RS256,
        encoding,
        jwk,
        public_pem: Some(public_pem),
        published: true,
    }
}

pub(super) fn ec_key(kid: &str) -> Key {
    let private = p256::SecretKey::random(&mut rand::rngs::OsRng);
    let pem = private.to_pkcs8_pem(LineEnding::LF).expect("EC PKCS#8 PEM");
    let encoding = EncodingKey::from_ec_pem(pem.as_bytes()).expect("EC encoding key");
    let point = private.public_key().to_encoded_point(false);
    let jwk = json!({
        "kty": "EC",
        "crv": "P-256",
        "x": b64(point.x().expect("uncompressed point has x")),
        "y": b64(point.y().expect("uncompressed point has y")),
        "kid": kid,
        "alg": "ES256",
        "use": "sig",
    });
    Key {
        kid: kid.to_owned(),
        alg: Algorithm::ES256,
        encoding,
        jwk,
        public_pem: None,
        published: true,
    }
}
