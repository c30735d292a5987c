//! A fake OAuth 2.0 / OpenID Connect identity provider for the bearer-token tests.
//!
//! [`TestIssuer::start`] binds `127.0.0.1:0` and serves:
//!
//! - `GET /.well-known/openid-configuration`: the discovery document (`issuer`, `jwks_uri`,
//!   `token_endpoint`, …);
//! - `GET /jwks`: the public keys (an RSA key `rsa-1` for RS256 and a P-256 key `ec-1` for ES256
//!   at start), counted, and behaving as the [`JwksMode`] says (up, down with a 500, or slow);
//! - `POST /token`: the client-credentials grant of RFC 6749 §4.4 for the clients registered
//!   with [`TestIssuer::client`], authenticated by HTTP Basic or by form fields, counted.
//!
//! The keys are real and generated at start, so the tokens verify with any JOSE library.
//! [`TestIssuer::mint`] signs arbitrary claims with the current key, [`TestIssuer::mint_as`]
//! signs them in the wrong ways a verifier must refuse (see [`Signing`]), and
//! [`TestIssuer::rotate`] / [`TestIssuer::retire`] change the key set.

mod keys;
mod routes;
mod state;

use axum::Router;
use axum::routing::{get, post};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use keys::{b64, ec_key, rsa_key, sign};
use routes::{discovery, jwks, token};
use serde_json::Value;
use state::{Client, Inner, Shared};
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The `aud` of every token the issuer signs.
pub const AUDIENCE: &str = "a2a-test";

/// How long [`JwksMode::Slow`] holds a JWKS request before answering.
pub const SLOW_JWKS_DELAY: Duration = Duration::from_secs(30);

/// How [`TestIssuer::mint_as`] signs a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signing {
    /// With the current signing key, as [`TestIssuer::mint`] does.
    Current,
    /// ES256 with the `ec-1` key (published in the JWKS).
    Es256,
    /// RS256 with a key that is not in the JWKS, kid `ghost`.
    Unknown,
    /// Header `{"alg":"none"}` and an empty signature: `<header>.<payload>.`.
    NoneAlg,
    /// HS256 with the PEM (SPKI, `-----BEGIN PUBLIC KEY-----`) of the current RSA public key as
    /// the HMAC secret, and the kid of the current key: the algorithm-confusion attack.
    Hs256WithRsaPublicKey,
}

/// How the JWKS endpoint behaves ([`TestIssuer::jwks_mode`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JwksMode {
    /// Answers 200 with the key set.
    Up,
    /// Answers 500.
    Down,
    /// Holds each request [`SLOW_JWKS_DELAY`] (30 s) before answering with the key set.
    Slow,
}

/// A fake identity provider on `127.0.0.1:0` with real keys generated at start.
///
/// Dropping it stops the server.
pub struct TestIssuer {
    /// `http://127.0.0.1:PORT`, which is also the `iss` of every token.
    pub url: String,
    shared: Arc<Shared>,
    shutdown: CancellationToken,
    serving: JoinHandle<()>,
}

impl fmt::Debug for TestIssuer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TestIssuer")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl TestIssuer {
    /// Starts it: an RSA 2048 key (kid `rsa-1`, RS256) and a P-256 key (kid `ec-1`, ES256),
    /// both published in the JWKS; tokens are signed with the current key (`rsa-1` at start).
    /// The audience of issued tokens is [`AUDIENCE`] (`a2a-test`).
    pub async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        let url = format!("http://{addr}");
        // RSA generation is CPU work: keep it off the runtime's worker.
        let (rsa, ec) = tokio::task::spawn_blocking(|| (rsa_key("rsa-1"), ec_key("ec-1")))
            .await
            .expect("generate the issuer's keys");
        let shutdown = CancellationToken::new();
        let shared = Arc::new(Shared {
            url: url.clone(),
            state: Mutex::new(Inner {
                keys: vec![rsa, ec],
                current: "rsa-1".into(),
                rsa_count: 1,
                clients: HashMap::new(),
                jwks_mode: JwksMode::Up,
                token_ttl: 300,
            }),
            ghost: OnceLock::new(),
            jwks_fetches: AtomicUsize::new(0),
            token_requests: AtomicUsize::new(0),
            shutdown: shutdown.clone(),
        });
        let app = Router::new()
            .route("/.well-known/openid-configuration", get(discovery))
            .route("/jwks", get(jwks))
            .route("/token", post(token))
            .with_state(shared.clone());
        let serving = tokio::spawn(async move {
            // Serving only ends with an accept error, which there is nobody to report to.
            let _ = axum::serve(listener, app).await;
        });
        Self {
            url,
            shared,
            shutdown,
            serving,
        }
    }

    /// Registers a client for the client-credentials grant: its id and secret, the `sub` its
    /// tokens carry, and the scopes it may be granted. Registering an id again replaces it.
    pub fn client(&self, id: &str, secret: &str, sub: &str, scopes: &[&str]) {
        self.shared.state().clients.insert(
            id.to_owned(),
            Client {
                secret: secret.to_owned(),
                sub: sub.to_owned(),
                scopes: scopes.iter().map(|s| (*s).to_owned()).collect(),
            },
        );
    }

    /// A token signed with the current key: the default claims `{iss, sub: "test-user",
    /// aud: "a2a-test", iat: now, nbf: now, exp: now + 300}` merged with `claims` (an object, or
    /// null for none; a key set to null is removed).
    pub fn mint(&self, claims: Value) -> String {
        self.mint_as(Signing::Current, claims)
    }

    /// A token for bad-input tests, signed as `how` says, with the same claims as
    /// [`mint`](Self::mint).
    pub fn mint_as(&self, how: Signing, claims: Value) -> String {
        let claims = self.shared.claims("test-user", 300, claims);
        match how {
            Signing::Current => self.shared.sign_current(&claims),
            Signing::Es256 => {
                let state = self.shared.state();
                let key = state
                    .keys
                    .iter()
                    .find(|k| k.kid == "ec-1")
                    .expect("the ec-1 key exists");
                sign(key, &claims)
            }
            Signing::Unknown => sign(self.shared.ghost.get_or_init(|| rsa_key("ghost")), &claims),
            Signing::NoneAlg => {
                let header = b64(br#"{"alg":"none","typ":"JWT"}"#);
                let payload = b64(claims.to_string().as_bytes());
                format!("{header}.{payload}.")
            }
            Signing::Hs256WithRsaPublicKey => {
                let state = self.shared.state();
                let key = state
                    .keys
                    .iter()
                    .find(|k| k.kid == state.current)
                    .expect("the current key exists");
                let pem = key
                    .public_pem
                    .as_ref()
                    .expect("the current key is an RSA key");
                let mut header = Header::new(Algorithm::HS256);
                header.kid = Some(key.kid.clone());
                jsonwebtoken::encode(&header, &claims, &EncodingKey::from_secret(pem.as_bytes()))
                    .expect("sign an HS256 JWT")
            }
        }
    }

    /// A new RSA key (kid `rsa-2`, `rsa-3`, …) becomes the current signing key and joins the
    /// JWKS; the old keys stay there until [`retire`](Self::retire)d. Returns the new kid.
    pub fn rotate(&self) -> String {
        let kid = {
            let mut state = self.shared.state();
            state.rsa_count += 1;
            format!("rsa-{}", state.rsa_count)
        };
        // Generated without holding the lock, so the server keeps answering meanwhile.
        let key = rsa_key(&kid);
        let mut state = self.shared.state();
        state.keys.push(key);
        state.current = kid.clone();
        kid
    }

    /// Removes a key from the JWKS (it can still sign, e.g. with [`Signing::Current`] if it
    /// is the current key). Panics if there is no key `kid`.
    pub fn retire(&self, kid: &str) {
        let mut state = self.shared.state();
        let key = state
            .keys
            .iter_mut()
            .find(|k| k.kid == kid)
            .unwrap_or_else(|| panic!("TestIssuer::retire: no key {kid:?}"));
        key.published = false;
    }

    /// How the JWKS endpoint behaves from now on.
    pub fn jwks_mode(&self, mode: JwksMode) {
        self.shared.state().jwks_mode = mode;
    }

    /// How many times the JWKS was fetched (every `GET /jwks`, whatever the mode).
    pub fn jwks_fetches(&self) -> usize {
        self.shared.jwks_fetches.load(Ordering::SeqCst)
    }

    /// How many token requests came (every `POST /token`, successful or not).
    pub fn token_requests(&self) -> usize {
        self.shared.token_requests.load(Ordering::SeqCst)
    }

    /// The `expires_in` (and `exp - iat`) of the tokens `/token` issues from now on
    /// (default 300 s).
    pub fn token_ttl(&self, secs: u64) {
        self.shared.state().token_ttl = secs;
    }

    /// The JWKS URL: `<url>/jwks`.
    pub fn jwks_url(&self) -> String {
        format!("{}/jwks", self.url)
    }

    /// The token endpoint URL: `<url>/token`.
    pub fn token_url(&self) -> String {
        format!("{}/token", self.url)
    }

    /// The discovery URL: `<url>/.well-known/openid-configuration`.
    pub fn discovery_url(&self) -> String {
        format!("{}/.well-known/openid-configuration", self.url)
    }
}

impl Drop for TestIssuer {
    fn drop(&mut self) {
        // Ends held (slow) JWKS requests and the accept loop.
        self.shutdown.cancel();
        self.serving.abort();
    }
}
