//! OAuth 2.0 / OpenID Connect bearer tokens: JWTs checked against the issuer's published keys.

use super::{AuthDecision, Authenticator, Principal};
use a2a_core::signing::key_fits;
use a2a_core::{
    ClientCredentialsOAuthFlow, Method, OAuth2SecurityScheme, OAuthFlows,
    OpenIdConnectSecurityScheme, SecurityScheme,
};
use axum::http::request::Parts;
use base64::Engine as _;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

mod fetch;
use fetch::FetchError;
pub use fetch::{DEFAULT_FETCH_TIMEOUT, DEFAULT_MAX_FETCH_BYTES};

/// Validates `Authorization: Bearer <JWT>` as an OAuth 2.0 resource server (RFC 9068 style
/// access tokens, or OpenID Connect ID tokens): the signature with the issuer's key (from its
/// JWK set, fetched from the discovery document `<issuer>/.well-known/openid-configuration` or
/// a configured URL), the issuer, the audience, expiry and not-before with a small leeway,
/// and the scopes each operation requires. The principal is the token's `sub`.
///
/// The JWK set is cached. A token naming a key the cache lacks (the issuer rotated its keys)
/// fetches it again, at most once every [`min_refresh_interval`](Self::min_refresh_interval)
/// (30 s), so that tokens with made-up key ids cannot make the server hammer the issuer. A
/// fetch gives up after [`fetch_timeout`](Self::fetch_timeout) (5 s): while the issuer is down
/// or slow, tokens signed by keys already cached keep working, and the others are refused
/// with "the issuer's key set is unavailable" instead of waiting. The timeout bounds the whole
/// fetch (connect, headers and body, discovery document included), so an issuer trickling its
/// answer a byte at a time is given up on in time too. An answer larger than
/// [`max_fetch_bytes`](Self::max_fetch_bytes) (1 MiB) is refused as soon as that shows (its
/// `Content-Length`, or the bytes read so far), so a hostile issuer cannot make the agent hold
/// more than that.
///
/// Only asymmetric algorithms are accepted (RS256/384/512, PS256/384/512, ES256/384, EdDSA),
/// and only the one the key fits: `alg: none` and HMAC (an RSA public key used as an HMAC
/// secret) are refused before any key is looked up.
///
/// ```no_run
/// use a2a_core::Method;
/// use a2a_server::auth::JwtBearer;
///
/// let auth = JwtBearer::new("https://login.example.com", "https://agents.example.com/echo")
///     .token_url("https://login.example.com/oauth2/token") // declared in the card
///     .scope("agents.read", "Read tasks")
///     .scope("agents.write", "Send messages")
///     .require_scopes_for(Method::SendMessage, ["agents.write"]);
/// ```
pub struct JwtBearer {
    issuer: String,
    audience: String,
    jwks_url: Option<String>,
    token_url: Option<String>,
    declared: BTreeMap<String, String>,
    required: Vec<String>,
    per_method: HashMap<Method, Vec<String>>,
    leeway: Duration,
    fetch_timeout: Duration,
    max_fetch_bytes: usize,
    min_refresh: Duration,
    http: reqwest::Client,
    keys: Arc<RwLock<Vec<CachedKey>>>,
    refresh: Arc<tokio::sync::Mutex<Refresh>>,
}

/// When the key set was last fetched, and where it is.
#[derive(Debug, Default)]
struct Refresh {
    last: Option<Instant>,
    jwks_uri: Option<String>,
}

impl std::fmt::Debug for JwtBearer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtBearer")
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .field("jwks_url", &self.jwks_url)
            .finish_non_exhaustive()
    }
}

/// Why a bearer token was refused (the caller is told, in `WWW-Authenticate` and the error
/// message).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// Not a JWT (three base64url parts, a JSON header).
    #[error("the token is not a JWT")]
    Malformed,
    /// `none`, HMAC, or an unknown algorithm.
    #[error("algorithm {0:?} is not accepted")]
    AlgorithmNotAllowed(String),
    /// The issuer's key set names no such key (after a refresh, or when one was too recent).
    #[error("no key {0:?} in the issuer's key set")]
    UnknownKey(String),
    /// The key with that id does not fit the token's algorithm.
    #[error("the key {0:?} does not fit algorithm {1}")]
    WrongKey(String, String),
    /// The issuer's key set could not be fetched (down, slow, not a JWK set).
    #[error("the issuer's key set is unavailable")]
    KeySetUnavailable,
    /// The signature does not verify.
    #[error("the signature does not verify")]
    BadSignature,
    /// Past `exp` (beyond the leeway).
    #[error("the token expired")]
    Expired,
    /// Before `nbf` (beyond the leeway).
    #[error("the token is not valid yet")]
    NotYetValid,
    /// Another `iss`.
    #[error("the token was issued by another issuer")]
    WrongIssuer,
    /// Another `aud`.
    #[error("the token is for another audience")]
    WrongAudience,
    /// A required claim (`exp`, `sub`, `iss`, `aud`) is missing or of the wrong type.
    #[error("the token lacks the claim {0:?}")]
    MissingClaim(String),
}

/// The claims this authenticator reads.
#[derive(Debug, Deserialize)]
struct Claims {
    sub: Option<String>,
    /// RFC 8693 / RFC 9068: space-separated.
    #[serde(default)]
    scope: Option<String>,
    /// Azure AD and others: a list.
    #[serde(default)]
    scp: Option<ScopeList>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum ScopeList {
    List(Vec<String>),
    Spaced(String),
}

/// The token's header: its algorithm and key id, read before anything is trusted.
fn header_of(token: &str) -> Result<(String, Option<String>), TokenError> {
    let mut parts = token.split('.');
    let (Some(header), Some(_), Some(_), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(TokenError::Malformed);
    };
    let header: Value = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(header)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or(TokenError::Malformed)?;
    let alg = header["alg"]
        .as_str()
        .ok_or(TokenError::Malformed)?
        .to_owned();
    Ok((alg, header["kid"].as_str().map(str::to_owned)))
}

impl JwtBearer {
    /// Tokens issued by `issuer` (its `iss`, also where its discovery document is) for
    /// `audience` (their `aud`: this agent).
    pub fn new(issuer: impl Into<String>, audience: impl Into<String>) -> Self {
        Self {
            issuer: issuer.into().trim_end_matches('/').to_owned(),
            audience: audience.into(),
            jwks_url: None,
            token_url: None,
            declared: BTreeMap::new(),
            required: Vec::new(),
            per_method: HashMap::new(),
            leeway: Duration::from_secs(60),
            fetch_timeout: DEFAULT_FETCH_TIMEOUT,
            max_fetch_bytes: DEFAULT_MAX_FETCH_BYTES,
            min_refresh: Duration::from_secs(30),
            http: reqwest::Client::new(),
            keys: Arc::default(),
            refresh: Arc::default(),
        }
    }

    /// The JWK set's URL, instead of the `jwks_uri` of the issuer's discovery document.
    #[must_use]
    pub fn jwks_url(mut self, url: impl Into<String>) -> Self {
        self.jwks_url = Some(url.into());
        self
    }

    /// The issuer's token endpoint: the card then declares an OAuth 2.0 scheme with the
    /// client-credentials flow there (without it, an OpenID Connect scheme pointing at the
    /// discovery document).
    #[must_use]
    pub fn token_url(mut self, url: impl Into<String>) -> Self {
        self.token_url = Some(url.into());
        self
    }

    /// A scope the card declares, with what it grants.
    #[must_use]
    pub fn scope(mut self, name: impl Into<String>, description: impl Into<String>) -> Self {
        self.declared.insert(name.into(), description.into());
        self
    }

    /// Scopes every operation requires (declared in the card's security requirement too).
    #[must_use]
    pub fn require_scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        for s in scopes {
            let s = s.into();
            self.declared.entry(s.clone()).or_default();
            self.required.push(s);
        }
        self
    }

    /// Scopes `method` requires, besides those of [`require_scopes`](Self::require_scopes).
    #[must_use]
    pub fn require_scopes_for(
        mut self,
        method: Method,
        scopes: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        let list = self.per_method.entry(method).or_default();
        for s in scopes {
            let s = s.into();
            self.declared.entry(s.clone()).or_default();
            list.push(s);
        }
        self
    }

    /// How far `exp` and `nbf` may be off (default 60 s): the clocks of the issuer and the
    /// agent differ.
    #[must_use]
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// How long a fetch of the key set may take, the discovery document included (default
    /// [`DEFAULT_FETCH_TIMEOUT`], 5 s): the whole fetch, connect, headers and body, not each
    /// read.
    #[must_use]
    pub fn fetch_timeout(mut self, timeout: Duration) -> Self {
        self.fetch_timeout = timeout;
        self
    }

    /// The largest discovery document or key set read from the issuer (default
    /// [`DEFAULT_MAX_FETCH_BYTES`], 1 MiB). A larger answer is refused, at its `Content-Length`
    /// or once that many bytes have been read, and logged with this limit: the key set is then
    /// unavailable, as if the issuer were down.
    #[must_use]
    pub fn max_fetch_bytes(mut self, bytes: usize) -> Self {
        self.max_fetch_bytes = bytes;
        self
    }

    /// The least time between two fetches of the key set (default 30 s).
    #[must_use]
    pub fn min_refresh_interval(mut self, interval: Duration) -> Self {
        self.min_refresh = interval;
        self
    }

    /// Checks a token: its principal (`sub`) and scopes, or why it is refused.
    pub async fn validate(&self, token: &str) -> Result<(Principal, Vec<String>), TokenError> {
        let (name, kid) = header_of(token)?;
        let alg = a2a_core::signing::asymmetric_algorithm(&name)
            .ok_or_else(|| TokenError::AlgorithmNotAllowed(name.clone()))?;
        let jwk = self.key(kid.as_deref(), alg, &name).await?;
        let key = DecodingKey::from_jwk(&jwk).map_err(|_| TokenError::KeySetUnavailable)?;
        let mut validation = Validation::new(alg);
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.leeway = self.leeway.as_secs();
        validation.validate_nbf = true;
        let data = jsonwebtoken::decode::<Claims>(token, &key, &validation).map_err(|e| {
            use jsonwebtoken::errors::ErrorKind as K;
            match e.kind() {
                K::ExpiredSignature => TokenError::Expired,
                K::ImmatureSignature => TokenError::NotYetValid,
                K::InvalidIssuer => TokenError::WrongIssuer,
                K::InvalidAudience => TokenError::WrongAudience,
                K::MissingRequiredClaim(c) => TokenError::MissingClaim(c.clone()),
                K::InvalidSignature => TokenError::BadSignature,
                K::InvalidAlgorithm | K::InvalidAlgorithmName => {
                    TokenError::WrongKey(kid.clone().unwrap_or_default(), name.clone())
                }
                _ => TokenError::Malformed,
            }
        })?;
        let claims = data.claims;
        let sub = claims
            .sub
            .filter(|s| !s.is_empty())
            .ok_or_else(|| TokenError::MissingClaim("sub".into()))?;
        let scopes = match (claims.scope, claims.scp) {
            (Some(s), _) | (None, Some(ScopeList::Spaced(s))) => {
                s.split_whitespace().map(str::to_owned).collect()
            }
            (None, Some(ScopeList::List(l))) => l,
            (None, None) => Vec::new(),
        };
        Ok((Principal(sub), scopes))
    }

    /// The key a token names: from the cache, or after a (rate-limited) refresh.
    async fn key(&self, kid: Option<&str>, alg: Algorithm, name: &str) -> Result<Jwk, TokenError> {
        if let Some(found) = self.find(kid, alg, name)? {
            return Ok(found);
        }
        // One refresh at a time; a caller that waited for another's finds its result.
        let mut refresh = self.refresh.lock().await;
        if let Some(found) = self.find(kid, alg, name)? {
            return Ok(found);
        }
        if refresh.last.is_some_and(|t| t.elapsed() < self.min_refresh) {
            return Err(TokenError::UnknownKey(kid.unwrap_or_default().to_owned()));
        }
        // A failed fetch counts too: an issuer that is down is not asked again at once.
        refresh.last = Some(Instant::now());
        let fetched = tokio::time::timeout(self.fetch_timeout, self.fetch(&mut refresh)).await;
        match fetched {
            Ok(Ok(keys)) => *self.keys.write().expect("JWK cache lock") = keys,
            Ok(Err(error)) => {
                tracing::warn!(issuer = %self.issuer, %error, "the issuer's JWK set could not be fetched");
                return Err(TokenError::KeySetUnavailable);
            }
            Err(_) => {
                tracing::warn!(
                    issuer = %self.issuer,
                    timeout = ?self.fetch_timeout,
                    "the issuer's JWK set was not fetched within the time-out \
                     (raise it with JwtBearer::fetch_timeout)"
                );
                return Err(TokenError::KeySetUnavailable);
            }
        }
        drop(refresh);
        self.find(kid, alg, name)?
            .ok_or_else(|| TokenError::UnknownKey(kid.unwrap_or_default().to_owned()))
    }

    /// The cached key with this id (or, without one, the first that fits the algorithm).
    fn find(
        &self,
        kid: Option<&str>,
        alg: Algorithm,
        name: &str,
    ) -> Result<Option<Jwk>, TokenError> {
        let keys = self.keys.read().expect("JWK cache lock");
        let fits = |k: &CachedKey| key_fits(&k.json, alg, name);
        let found = keys.iter().find(|k| match kid {
            Some(kid) => k.jwk.common.key_id.as_deref() == Some(kid),
            None => fits(k),
        });
        match found {
            Some(k) if !fits(k) => Err(TokenError::WrongKey(
                kid.unwrap_or_default().to_owned(),
                name.to_owned(),
            )),
            Some(k) => Ok(Some(k.jwk.clone())),
            None => Ok(None),
        }
    }

    /// The key set (after the discovery document, the first time, without a configured URL).
    async fn fetch(&self, refresh: &mut Refresh) -> Result<Vec<CachedKey>, FetchError> {
        let url = match (&self.jwks_url, &refresh.jwks_uri) {
            (Some(url), _) | (None, Some(url)) => url.clone(),
            (None, None) => {
                let discovery = format!("{}/.well-known/openid-configuration", self.issuer);
                let doc = self.get(&discovery).await?;
                if doc["issuer"].as_str().map(|i| i.trim_end_matches('/')) != Some(&self.issuer) {
                    return Err(FetchError::OtherIssuer { url: discovery });
                }
                let uri = doc["jwks_uri"]
                    .as_str()
                    .ok_or(FetchError::Missing {
                        url: discovery,
                        field: "jwks_uri",
                    })?
                    .to_owned();
                refresh.jwks_uri = Some(uri.clone());
                uri
            }
        };
        let set = self.get(&url).await?;
        let keys = set["keys"]
            .as_array()
            .ok_or(FetchError::Missing { url, field: "keys" })?
            .iter()
            .filter_map(|k| {
                let jwk = serde_json::from_value::<Jwk>(k.clone()).ok()?;
                Some(CachedKey {
                    json: k.clone(),
                    jwk,
                })
            })
            .collect();
        Ok(keys)
    }

    /// `url`'s JSON answer, at most [`max_fetch_bytes`](Self::max_fetch_bytes) of it.
    async fn get(&self, url: &str) -> Result<Value, FetchError> {
        fetch::get_json(&self.http, url, self.max_fetch_bytes).await
    }
}

/// A key of the issuer's set: as published (what `a2a_core::signing::key_fits` reads) and
/// parsed (what verifies).
#[derive(Clone, Debug)]
struct CachedKey {
    json: Value,
    jwk: Jwk,
}

impl Authenticator for JwtBearer {
    async fn authenticate(&self, request: &Parts) -> AuthDecision {
        let token = match super::bearer_token(request) {
            None => return AuthDecision::Missing,
            Some(None) => return AuthDecision::Rejected("not a bearer token".into()),
            Some(Some(token)) => token,
        };
        match self.validate(token).await {
            Ok((principal, scopes)) => AuthDecision::Granted(principal, scopes),
            Err(e) => {
                tracing::debug!(error = %e, "bearer token refused");
                AuthDecision::Rejected(e.to_string())
            }
        }
    }

    fn schemes(&self) -> Vec<(String, SecurityScheme)> {
        let scheme = match &self.token_url {
            Some(token_url) => SecurityScheme::Oauth2SecurityScheme(OAuth2SecurityScheme {
                description: None,
                flows: OAuthFlows::ClientCredentials(ClientCredentialsOAuthFlow {
                    token_url: token_url.clone(),
                    refresh_url: None,
                    scopes: self.declared.clone(),
                }),
                oauth2_metadata_url: Some(format!(
                    "{}/.well-known/openid-configuration",
                    self.issuer
                )),
            }),
            None => SecurityScheme::OpenIdConnectSecurityScheme(OpenIdConnectSecurityScheme {
                description: None,
                open_id_connect_url: format!("{}/.well-known/openid-configuration", self.issuer),
            }),
        };
        vec![("oauth2".to_owned(), scheme)]
    }

    fn challenge(&self) -> String {
        r#"Bearer realm="a2a""#.to_owned()
    }

    fn required_scopes(&self, method: Method) -> Vec<String> {
        let mut scopes = self.required.clone();
        if let Some(more) = self.per_method.get(&method) {
            scopes.extend(more.iter().cloned());
        }
        scopes
    }
}
