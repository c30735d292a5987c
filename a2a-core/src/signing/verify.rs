//! Verifying a card: the keys a verifier trusts, and the check of each signature against them.

use super::*;

/// One trusted public key.
#[derive(Clone, Debug)]
struct Trusted {
    /// The JWK as given (its `kid` and `alg`, if any, are honoured).
    jwk: Value,
    key: Jwk,
}

/// The public keys a verifier trusts: from a JWK set it was told to trust, or PEM files.
#[derive(Clone, Debug, Default)]
pub struct TrustedKeys {
    keys: Vec<Trusted>,
}

impl TrustedKeys {
    /// No keys.
    pub fn new() -> Self {
        Self::default()
    }

    /// The keys of a JWK set (`{"keys": [...]}`), or of a single JWK.
    pub fn from_jwks(jwks: &Value) -> Result<Self, KeyError> {
        let list = match jwks.get("keys") {
            Some(Value::Array(keys)) => keys.clone(),
            Some(_) => return Err(KeyError::InvalidJwk("`keys` is not an array".into())),
            None if jwks.get("kty").is_some() => vec![jwks.clone()],
            None => return Err(KeyError::InvalidJwk("no `keys` and no `kty`".into())),
        };
        let mut trusted = Self::new();
        for jwk in list {
            trusted.add_jwk(jwk)?;
        }
        Ok(trusted)
    }

    /// A public key in PEM (SPKI `PUBLIC KEY`), or the public half of a private key.
    pub fn from_pem(pem: &str) -> Result<Self, KeyError> {
        use p256::elliptic_curve::sec1::ToEncodedPoint as _;
        use rsa::traits::PublicKeyParts as _;
        let public = if let Ok(k) =
            <p256::PublicKey as p256::pkcs8::DecodePublicKey>::from_public_key_pem(pem)
        {
            ec_jwk(&k.to_encoded_point(false))
        } else if let Ok(k) =
            <rsa::RsaPublicKey as rsa::pkcs8::DecodePublicKey>::from_public_key_pem(pem)
        {
            rsa_jwk(k.n(), k.e())
        } else if let Ok(k) = <ed25519_dalek::VerifyingKey as ed25519_dalek::pkcs8::DecodePublicKey>::from_public_key_pem(pem) {
            ed_jwk(k.as_bytes())
        } else {
            public_of_private(pem)?.1
        };
        let mut trusted = Self::new();
        trusted.add_jwk(Value::Object(public))?;
        Ok(trusted)
    }

    /// Adds one JWK (a public key; `kid` and `alg` optional).
    pub fn add_jwk(&mut self, jwk: Value) -> Result<(), KeyError> {
        if jwk.get("d").is_some() {
            return Err(KeyError::InvalidJwk(
                "a private key where a public key belongs".into(),
            ));
        }
        let key: Jwk =
            serde_json::from_value(jwk.clone()).map_err(|e| KeyError::InvalidJwk(e.to_string()))?;
        DecodingKey::from_jwk(&key).map_err(|e| KeyError::InvalidJwk(e.to_string()))?;
        self.keys.push(Trusted { jwk, key });
        Ok(())
    }

    /// Adds every key of `other`.
    pub fn extend(&mut self, other: TrustedKeys) {
        self.keys.extend(other.keys);
    }

    /// How many keys are trusted.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether no key is trusted.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// Which signature of a card verified, and with which key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verified {
    /// The position of the signature in `signatures`.
    pub index: usize,
    /// The `kid` of its header.
    pub kid: Option<String>,
    /// Its algorithm.
    pub algorithm: String,
    /// The `jku` of its header, if any (informational: the key came from the trusted set).
    pub jku: Option<String>,
}

/// Why one signature did not verify.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    /// The signature object or its protected header does not read.
    #[error("malformed: {0}")]
    Malformed(String),
    /// An algorithm no card signature may use (`none`, HMAC, unknown).
    #[error("algorithm {0:?} is not accepted (ES256, ES384, RS256-512, PS256-512, EdDSA are)")]
    AlgorithmNotAllowed(String),
    /// No trusted key has the header's `kid` and fits its algorithm.
    #[error("no trusted key {}", .0.as_deref().map_or("fits its algorithm".to_owned(), |k| format!("has kid {k:?} and fits its algorithm")))]
    UnknownKey(Option<String>),
    /// The trusted key with that `kid` is of another type, or declares another `alg`.
    #[error("the trusted key {0:?} does not fit algorithm {1}")]
    WrongKey(String, String),
    /// The signature does not match: the card was changed after signing, or signed over
    /// another canonical form.
    #[error(
        "the signature does not match the card (changed after signing, or canonicalized differently)"
    )]
    BadSignature,
}

/// Why a card did not verify.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// The card has no `signatures`.
    #[error("the card is not signed")]
    NoSignatures,
    /// No signature verified; why, for each.
    #[error("no signature verified: {}", describe(.0))]
    Rejected(Vec<(usize, Option<String>, Rejection)>),
}

fn describe(rejections: &[(usize, Option<String>, Rejection)]) -> String {
    rejections
        .iter()
        .map(|(i, kid, r)| match kid {
            Some(kid) => format!("signature {i} (kid {kid:?}): {r}"),
            None => format!("signature {i}: {r}"),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Verifies a card as served (JSON): `Ok` with the first signature that a trusted key
/// verifies over the card's canonical form.
pub fn verify_card(
    card: &Value,
    trusted: &TrustedKeys,
    form: Canonicalization,
) -> Result<Verified, VerifyError> {
    let signatures = card
        .get("signatures")
        .and_then(Value::as_array)
        .filter(|s| !s.is_empty())
        .ok_or(VerifyError::NoSignatures)?;
    let payload = b64(&canonical_card(card, form));
    let mut rejections = Vec::new();
    for (index, signature) in signatures.iter().enumerate() {
        match verify_one(signature, &payload, trusted) {
            Ok(mut verified) => {
                verified.index = index;
                return Ok(verified);
            }
            Err((kid, why)) => rejections.push((index, kid, why)),
        }
    }
    Err(VerifyError::Rejected(rejections))
}

fn verify_one(
    signature: &Value,
    payload: &str,
    trusted: &TrustedKeys,
) -> Result<Verified, (Option<String>, Rejection)> {
    let malformed = |why: &str| (None, Rejection::Malformed(why.to_owned()));
    let protected = signature["protected"]
        .as_str()
        .ok_or_else(|| malformed("no `protected`"))?;
    let sig = signature["signature"]
        .as_str()
        .ok_or_else(|| malformed("no `signature`"))?;
    let header: Value = URL_SAFE_NO_PAD
        .decode(protected.trim_end_matches('='))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .filter(Value::is_object)
        .ok_or_else(|| malformed("the protected header is not base64url JSON"))?;
    let kid = header["kid"].as_str().map(str::to_owned);
    let fail = |why| (kid.clone(), why);
    let name = header["alg"]
        .as_str()
        .ok_or_else(|| fail(Rejection::Malformed("no `alg`".into())))?;
    let alg = asymmetric_algorithm(name)
        .ok_or_else(|| fail(Rejection::AlgorithmNotAllowed(name.into())))?;
    if header.get("crit").is_some() {
        // RFC 7515 §4.1.11: extensions a verifier does not understand make the JWS invalid.
        return Err(fail(Rejection::Malformed(
            "`crit` names extensions this verifier does not implement".into(),
        )));
    }
    let candidates: Vec<&Trusted> = trusted
        .keys
        .iter()
        // A trusted key without a kid (one read from PEM) stands for whatever kid it signed
        // under; a signature without a kid is tried against every key.
        .filter(|t| match (t.jwk["kid"].as_str(), kid.as_deref()) {
            (Some(trusted), Some(kid)) => trusted == kid,
            _ => true,
        })
        .collect();
    if candidates.is_empty() {
        return Err(fail(Rejection::UnknownKey(kid.clone())));
    }
    let fitting: Vec<&&Trusted> = candidates
        .iter()
        .filter(|t| key_fits(&t.jwk, alg, name))
        .collect();
    if fitting.is_empty() {
        // The key that has the kid is of another type: say so; otherwise no key fits at all.
        let named = kid
            .as_deref()
            .filter(|k| candidates.iter().any(|t| t.jwk["kid"].as_str() == Some(*k)));
        return Err(fail(match named {
            Some(k) => Rejection::WrongKey(k.to_owned(), name.into()),
            None => Rejection::UnknownKey(kid.clone()),
        }));
    }
    let input = format!("{protected}.{payload}");
    for t in fitting {
        let Ok(key) = DecodingKey::from_jwk(&t.key) else {
            continue;
        };
        if crypto::verify(sig, input.as_bytes(), &key, alg).unwrap_or(false) {
            return Ok(Verified {
                index: 0,
                kid,
                algorithm: name.to_owned(),
                jku: header["jku"].as_str().map(str::to_owned),
            });
        }
    }
    Err(fail(Rejection::BadSignature))
}
