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

use axum::Router;
use axum::extract::rejection::FormRejection;
use axum::extract::{Form, State};
use axum::http::header::{AUTHORIZATION, CACHE_CONTROL, CONTENT_TYPE, WWW_AUTHENTICATE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use p256::elliptic_curve::sec1::ToEncodedPoint;
use rsa::pkcs8::{EncodePrivateKey, EncodePublicKey, LineEnding};
use rsa::traits::PublicKeyParts;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
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

/// One signing key, published in the JWKS or not (retired keys still sign when asked to).
struct Key {
    kid: String,
    alg: Algorithm,
    encoding: EncodingKey,
    /// The public JWK as published.
    jwk: Value,
    /// The SPKI PEM of an RSA public key (for [`Signing::Hs256WithRsaPublicKey`]).
    public_pem: Option<String>,
    published: bool,
}

struct Client {
    secret: String,
    sub: String,
    scopes: Vec<String>,
}

struct Inner {
    keys: Vec<Key>,
    /// The kid of the key that signs ([`Signing::Current`] and `/token`).
    current: String,
    /// How many RSA keys were made (`rsa-N`).
    rsa_count: usize,
    clients: HashMap<String, Client>,
    jwks_mode: JwksMode,
    token_ttl: u64,
}

struct Shared {
    url: String,
    state: Mutex<Inner>,
    /// The key of [`Signing::Unknown`], made on first use.
    ghost: OnceLock<Key>,
    jwks_fetches: AtomicUsize,
    token_requests: AtomicUsize,
    shutdown: CancellationToken,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, Inner> {
        // A panicking test thread must not make every later call panic too.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The default claims, merged with `claims` (a key set to null is removed).
    fn claims(&self, sub: &str, ttl: u64, claims: Value) -> Value {
        let now = now();
        let mut merged = Map::new();
        merged.insert("iss".into(), json!(self.url));
        merged.insert("sub".into(), json!(sub));
        merged.insert("aud".into(), json!(AUDIENCE));
        merged.insert("iat".into(), json!(now));
        merged.insert("nbf".into(), json!(now));
        merged.insert("exp".into(), json!(now + ttl));
        match claims {
            Value::Object(extra) => {
                for (k, v) in extra {
                    if v.is_null() {
                        merged.remove(&k);
                    } else {
                        merged.insert(k, v);
                    }
                }
            }
            Value::Null => {}
            other => panic!("TestIssuer: the claims must be a JSON object, not {other}"),
        }
        Value::Object(merged)
    }

    /// Signs `claims` with the current key.
    fn sign_current(&self, claims: &Value) -> String {
        let state = self.state();
        let key = state
            .keys
            .iter()
            .find(|k| k.kid == state.current)
            .expect("the current key exists");
        sign(key, claims)
    }
}

fn sign(key: &Key, claims: &Value) -> String {
    let mut header = Header::new(key.alg);
    header.kid = Some(key.kid.clone());
    jsonwebtoken::encode(&header, claims, &key.encoding).expect("sign a JWT")
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs()
}

fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

fn rsa_key(kid: &str) -> Key {
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

fn ec_key(kid: &str) -> Key {
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

fn json_response(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [
            (CONTENT_TYPE, HeaderValue::from_static("application/json")),
            (CACHE_CONTROL, HeaderValue::from_static("no-store")),
        ],
        body.to_string(),
    )
        .into_response()
}

async fn discovery(State(shared): State<Arc<Shared>>) -> Response {
    let url = &shared.url;
    json_response(
        StatusCode::OK,
        &json!({
            "issuer": url,
            "jwks_uri": format!("{url}/jwks"),
            "token_endpoint": format!("{url}/token"),
            "grant_types_supported": ["client_credentials"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
            "id_token_signing_alg_values_supported": ["RS256", "ES256"],
        }),
    )
}

async fn jwks(State(shared): State<Arc<Shared>>) -> Response {
    shared.jwks_fetches.fetch_add(1, Ordering::SeqCst);
    let mode = shared.state().jwks_mode;
    match mode {
        JwksMode::Up => {}
        JwksMode::Down => {
            return json_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                &json!({"error": "server_error", "error_description": "JWKS is down"}),
            );
        }
        JwksMode::Slow => {
            tokio::select! {
                () = tokio::time::sleep(SLOW_JWKS_DELAY) => {}
                () = shared.shutdown.cancelled() => {
                    return StatusCode::SERVICE_UNAVAILABLE.into_response();
                }
            }
        }
    }
    let keys: Vec<Value> = shared
        .state()
        .keys
        .iter()
        .filter(|k| k.published)
        .map(|k| k.jwk.clone())
        .collect();
    json_response(StatusCode::OK, &json!({ "keys": keys }))
}

/// An RFC 6749 §5.2 error.
fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response {
    let mut response = json_response(
        status,
        &json!({"error": error, "error_description": description}),
    );
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            WWW_AUTHENTICATE,
            HeaderValue::from_static(r#"Basic realm="test-issuer""#),
        );
    }
    response
}

/// Decodes `application/x-www-form-urlencoded` escapes (`+` and `%XX`), as RFC 6749 §2.3.1
/// asks of the Basic credentials.
fn form_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = |b: u8| (b as char).to_digit(16);
                match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                    (Some(hi), Some(lo)) => {
                        out.push((hi * 16 + lo) as u8);
                        i += 2;
                    }
                    _ => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The client credentials of an `Authorization: Basic` header: `Err` if the header is there
/// but malformed.
fn basic_credentials(headers: &HeaderMap) -> Result<Option<(String, String)>, ()> {
    let Some(value) = headers.get(AUTHORIZATION) else {
        return Ok(None);
    };
    let value = value.to_str().map_err(|_| ())?;
    let (scheme, rest) = value.split_once(' ').ok_or(())?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return Err(());
    }
    let decoded = STANDARD.decode(rest.trim()).map_err(|_| ())?;
    let decoded = String::from_utf8(decoded).map_err(|_| ())?;
    let (id, secret) = decoded.split_once(':').ok_or(())?;
    Ok(Some((form_decode(id), form_decode(secret))))
}

async fn token(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    form: Result<Form<HashMap<String, String>>, FormRejection>,
) -> Response {
    shared.token_requests.fetch_add(1, Ordering::SeqCst);
    let Ok(Form(form)) = form else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "the body must be application/x-www-form-urlencoded",
        );
    };

    // Client authentication: HTTP Basic or the form fields, not both (RFC 6749 §2.3).
    let Ok(basic) = basic_credentials(&headers) else {
        return oauth_error(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "malformed Basic credentials",
        );
    };
    let posted = form.get("client_id").map(|id| {
        (
            id.clone(),
            form.get("client_secret").cloned().unwrap_or_default(),
        )
    });
    let (client_id, client_secret) = match (basic, posted) {
        (Some(_), Some(_)) => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "more than one client authentication method",
            );
        }
        (Some(c), None) | (None, Some(c)) => c,
        (None, None) => {
            return oauth_error(
                StatusCode::UNAUTHORIZED,
                "invalid_client",
                "no client authentication",
            );
        }
    };

    let (sub, allowed, ttl) = {
        let state = shared.state();
        match state.clients.get(&client_id) {
            Some(c) if c.secret == client_secret => {
                (c.sub.clone(), c.scopes.clone(), state.token_ttl)
            }
            _ => {
                return oauth_error(
                    StatusCode::UNAUTHORIZED,
                    "invalid_client",
                    "unknown client or wrong secret",
                );
            }
        }
    };

    match form.get("grant_type").map(String::as_str) {
        Some("client_credentials") => {}
        Some(other) => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                &format!("grant type {other:?} is not supported"),
            );
        }
        None => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "missing grant_type",
            );
        }
    }

    let requested: Vec<&str> = form
        .get("scope")
        .map(|s| s.split(' ').filter(|s| !s.is_empty()).collect())
        .unwrap_or_default();
    let mut granted: Vec<String> = Vec::new();
    if requested.is_empty() {
        granted = allowed;
    } else {
        for scope in requested {
            if !allowed.iter().any(|a| a == scope) {
                return oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_scope",
                    &format!("scope {scope:?} is not allowed for this client"),
                );
            }
            if !granted.iter().any(|g| g == scope) {
                granted.push(scope.to_owned());
            }
        }
    }
    let scope = granted.join(" ");

    let claims = shared.claims(&sub, ttl, json!({"scope": scope, "client_id": client_id}));
    let access_token = shared.sign_current(&claims);
    json_response(
        StatusCode::OK,
        &json!({
            "access_token": access_token,
            "token_type": "Bearer",
            "expires_in": ttl,
            "scope": scope,
        }),
    )
}
