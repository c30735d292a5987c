//! Private keys generated once per test binary, in PKCS#8 PEM: what `--card-signing-key`
//! reads and `CardSigningKey::from_pem` takes.

use std::sync::OnceLock;

/// A kind of key, by the JWS algorithm it signs with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// P-256, ES256.
    Es256,
    /// RSA 2048, RS256.
    Rs256,
    /// Ed25519, EdDSA.
    EdDsa,
}

impl Kind {
    /// Every kind.
    pub const ALL: [Kind; 3] = [Kind::Es256, Kind::Rs256, Kind::EdDsa];

    /// The JWS algorithm name.
    pub fn algorithm(self) -> &'static str {
        match self {
            Kind::Es256 => "ES256",
            Kind::Rs256 => "RS256",
            Kind::EdDsa => "EdDSA",
        }
    }
}

/// The private key of this kind (the same one for the whole test binary).
pub fn pem(kind: Kind) -> &'static str {
    static KEYS: [OnceLock<String>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let slot = &KEYS[kind as usize];
    slot.get_or_init(|| generate(kind))
}

/// A fresh private key of this kind.
pub fn generate(kind: Kind) -> String {
    let mut rng = rand::rngs::OsRng;
    let lf = Default::default();
    match kind {
        Kind::Es256 => {
            p256::pkcs8::EncodePrivateKey::to_pkcs8_pem(&p256::SecretKey::random(&mut rng), lf)
                .expect("P-256 PEM")
                .to_string()
        }
        Kind::Rs256 => rsa::pkcs8::EncodePrivateKey::to_pkcs8_pem(
            &rsa::RsaPrivateKey::new(&mut rng, 2048).expect("an RSA key"),
            lf,
        )
        .expect("RSA PEM")
        .to_string(),
        // PKCS#8 v1 (RFC 8410, no public key inside), the form OpenSSL and Python's
        // `cryptography` write and read; ed25519-dalek's own encoding is v2.
        Kind::EdDsa => ed25519_dalek::pkcs8::EncodePrivateKey::to_pkcs8_pem(
            &ed25519_dalek::pkcs8::KeypairBytes {
                secret_key: ed25519_dalek::SigningKey::generate(&mut rng).to_bytes(),
                public_key: None,
            },
            lf,
        )
        .expect("Ed25519 PEM")
        .to_string(),
    }
}
