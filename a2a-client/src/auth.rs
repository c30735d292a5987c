//! Authentication and other per-call additions, through one hook: [`Interceptor`].

use crate::Error;
use crate::transport::CallOptions;
use a2a_core::{AgentCard, Method, SecurityScheme};
use reqwest::header::{AUTHORIZATION, COOKIE, HeaderName, HeaderValue};
use std::fmt::Debug;

/// Runs before every call: adds headers or query parameters (credentials, tracing, extensions).
pub trait Interceptor: Send + Sync + Debug + 'static {
    /// Adjusts the call's options.
    fn intercept(&self, method: Method, options: &mut CallOptions) -> Result<(), Error>;
}

fn header_value(v: &str) -> Result<HeaderValue, Error> {
    HeaderValue::from_str(v)
        .map_err(|_| Error::Config("a header value has invalid characters".into()))
}

/// `Authorization: Bearer <token>`.
#[derive(Clone)]
pub struct BearerAuth(String);

impl BearerAuth {
    /// A bearer token.
    pub fn new(token: impl Into<String>) -> Self {
        Self(token.into())
    }
}

impl Debug for BearerAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BearerAuth(***)")
    }
}

impl Interceptor for BearerAuth {
    fn intercept(&self, _: Method, options: &mut CallOptions) -> Result<(), Error> {
        options
            .headers
            .insert(AUTHORIZATION, header_value(&format!("Bearer {}", self.0))?);
        Ok(())
    }
}

/// Where an API key goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApiKeyLocation {
    /// A header of this name.
    Header(String),
    /// A query parameter of this name.
    Query(String),
    /// A cookie of this name.
    Cookie(String),
}

/// An API key, sent where the agent's card says.
#[derive(Clone)]
pub struct ApiKeyAuth {
    location: ApiKeyLocation,
    key: String,
}

impl Debug for ApiKeyAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiKeyAuth")
            .field("location", &self.location)
            .finish_non_exhaustive()
    }
}

impl ApiKeyAuth {
    /// A key at an explicit location.
    pub fn new(location: ApiKeyLocation, key: impl Into<String>) -> Self {
        Self {
            location,
            key: key.into(),
        }
    }

    /// A key placed as the card's first API-key security scheme says (`location` + `name`).
    pub fn from_card(card: &AgentCard, key: impl Into<String>) -> Result<Self, Error> {
        let scheme = card
            .security_schemes
            .values()
            .find_map(|s| match s {
                SecurityScheme::ApiKeySecurityScheme(k) => Some(k),
                _ => None,
            })
            .ok_or_else(|| Error::Config("the agent card declares no API-key scheme".into()))?;
        let location = match scheme.location.to_ascii_lowercase().as_str() {
            "query" => ApiKeyLocation::Query(scheme.name.clone()),
            "cookie" => ApiKeyLocation::Cookie(scheme.name.clone()),
            _ => ApiKeyLocation::Header(scheme.name.clone()),
        };
        Ok(Self::new(location, key))
    }
}

impl Interceptor for ApiKeyAuth {
    fn intercept(&self, _: Method, options: &mut CallOptions) -> Result<(), Error> {
        match &self.location {
            ApiKeyLocation::Header(name) => {
                let name = HeaderName::from_bytes(name.as_bytes())
                    .map_err(|_| Error::Config(format!("invalid header name {name:?}")))?;
                options.headers.insert(name, header_value(&self.key)?);
            }
            ApiKeyLocation::Query(name) => options.query.push((name.clone(), self.key.clone())),
            ApiKeyLocation::Cookie(name) => {
                options
                    .headers
                    .append(COOKIE, header_value(&format!("{name}={}", self.key))?);
            }
        }
        Ok(())
    }
}

/// Fixed headers on every call (tracing ids, `A2A-Extensions`, …).
#[derive(Clone, Debug, Default)]
pub struct Headers(pub reqwest::header::HeaderMap);

impl Interceptor for Headers {
    fn intercept(&self, _: Method, options: &mut CallOptions) -> Result<(), Error> {
        for (k, v) in &self.0 {
            options.headers.append(k.clone(), v.clone());
        }
        Ok(())
    }
}

/// OAuth 2.0 client credentials (RFC 6749 §4.4): an access token from the issuer's token
/// endpoint, sent as `Authorization: Bearer …` on every call, cached, and fetched again
/// shortly before it expires, or when the agent answers 401 (once per call).
///
/// ```no_run
/// # async fn run() -> Result<(), a2a_client::Error> {
/// use a2a_client::{Client, ClientCredentials};
///
/// let credentials = ClientCredentials::new("https://login.example.com/oauth2/token", "my-app", "s3cret")
///     .scopes(["agents.write"]);
/// let client = Client::builder()
///     .client_credentials(credentials)
///     .connect("https://agents.example.com/echo")
///     .await?;
/// # Ok(()) }
/// ```
pub struct ClientCredentials {
    token_url: String,
    client_id: String,
    client_secret: String,
    scopes: Vec<String>,
    http: reqwest::Client,
    timeout: std::time::Duration,
    max_bytes: usize,
    cached: tokio::sync::Mutex<Option<(String, std::time::Instant)>>,
}

impl Debug for ClientCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("token_url", &self.token_url)
            .field("client_id", &self.client_id)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

/// The default of [`ClientCredentials::max_response_bytes`]: 64 KiB, for an answer that is a
/// token and a few fields.
pub const DEFAULT_MAX_TOKEN_BYTES: usize = 64 << 10;

/// How long before its expiry a token is replaced (or a tenth of its life, if shorter).
const REFRESH_AHEAD: std::time::Duration = std::time::Duration::from_secs(30);

impl ClientCredentials {
    /// A client `client_id` with `client_secret` (sent with HTTP Basic, RFC 6749 §2.3.1) at
    /// the token endpoint `token_url`.
    pub fn new(
        token_url: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        Self {
            token_url: token_url.into(),
            client_id: client_id.into(),
            client_secret: client_secret.into(),
            scopes: Vec::new(),
            http: reqwest::Client::new(),
            timeout: std::time::Duration::from_secs(10),
            max_bytes: DEFAULT_MAX_TOKEN_BYTES,
            cached: tokio::sync::Mutex::new(None),
        }
    }

    /// The token endpoint and scopes of the card's OAuth 2.0 client-credentials flow (the
    /// first scheme that has one); the scopes are all those the flow declares.
    pub fn from_card(
        card: &AgentCard,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Result<Self, Error> {
        let flow = card
            .security_schemes
            .values()
            .find_map(|s| match s {
                SecurityScheme::Oauth2SecurityScheme(o) => match &o.flows {
                    a2a_core::OAuthFlows::ClientCredentials(f) => Some(f),
                    _ => None,
                },
                _ => None,
            })
            .ok_or_else(|| {
                Error::Config("the agent card declares no OAuth 2.0 client-credentials flow".into())
            })?;
        Ok(Self::new(flow.token_url.clone(), client_id, client_secret)
            .scopes(flow.scopes.keys().cloned()))
    }

    /// The scopes to ask for.
    #[must_use]
    pub fn scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// How long a token request may take (default 10 s).
    #[must_use]
    pub fn timeout(mut self, timeout: std::time::Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The largest answer read from the token endpoint, in bytes (default
    /// [`DEFAULT_MAX_TOKEN_BYTES`], 64 KiB); a larger one fails with [`Error::TooLarge`].
    #[must_use]
    pub fn max_response_bytes(mut self, bytes: usize) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// A token: the cached one while it is fresh, else a new one (`refresh`: a new one
    /// whatever the cache holds, as after a 401).
    pub async fn token(&self, refresh: bool) -> Result<String, Error> {
        let mut cached = self.cached.lock().await;
        if let Some((token, until)) = cached.as_ref()
            && !refresh
            && std::time::Instant::now() < *until
        {
            return Ok(token.clone());
        }
        let (token, lifetime) = self.fetch().await?;
        let ahead = REFRESH_AHEAD.min(lifetime / 10);
        *cached = Some((token.clone(), std::time::Instant::now() + lifetime - ahead));
        Ok(token)
    }

    async fn fetch(&self) -> Result<(String, std::time::Duration), Error> {
        let mut form = vec![("grant_type", "client_credentials".to_owned())];
        if !self.scopes.is_empty() {
            form.push(("scope", self.scopes.join(" ")));
        }
        let response = self
            .http
            .post(&self.token_url)
            .basic_auth(
                form_encode(&self.client_id),
                Some(form_encode(&self.client_secret)),
            )
            .form(&form)
            .timeout(self.timeout)
            .send()
            .await?;
        let status = response.status();
        let body = crate::limits::read_body(response, crate::Limit::Token, self.max_bytes).await?;
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        if !status.is_success() {
            let error = body["error"].as_str().unwrap_or("no error code");
            let description = body["error_description"]
                .as_str()
                .map(|d| format!(": {d}"))
                .unwrap_or_default();
            return Err(Error::Token(
                format!(
                    "{} answered HTTP {status}: {error}{description}",
                    self.token_url
                )
                .into(),
            ));
        }
        let token = body["access_token"]
            .as_str()
            .filter(|t| !t.is_empty())
            .ok_or_else(|| {
                Error::Token(format!("{} sent no access_token", self.token_url).into())
            })?;
        if !body["token_type"]
            .as_str()
            .is_some_and(|t| t.eq_ignore_ascii_case("bearer"))
        {
            return Err(Error::Token(
                format!(
                    "{} sent a token of type {}, not Bearer",
                    self.token_url, body["token_type"]
                )
                .into(),
            ));
        }
        // Without `expires_in` (RFC 6749 makes it RECOMMENDED), an hour, refreshed on a 401.
        let lifetime = std::time::Duration::from_secs(body["expires_in"].as_u64().unwrap_or(3600));
        Ok((token.to_owned(), lifetime))
    }
}

/// RFC 6749 §2.3.1: the client id and secret are form-encoded before Basic encoding.
fn form_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}
