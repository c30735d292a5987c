//! What a person gives to talk to an agent, in one place: the credentials sent with every call
//! (extra headers, a bearer token, an API key placed where the agent's card says, OAuth 2.0
//! client credentials) and, with feature `trust`, the keys trusted for an agent card's
//! signatures (JWK set URLs, keys in PEM or a JWK set in JSON). The `a2a` command's flags and
//! the inspector's page both end here; this module turns them into a [`ClientBuilder`]'s
//! interceptors, or into plain headers for a caller that makes its own requests (`a2a check`,
//! the inspector's card fetch).
//!
//! ```no_run
//! # async fn run() -> Result<(), a2a_client::Error> {
//! use a2a_client::{ClientBuilder, Credentials};
//!
//! let mut credentials = Credentials::default().with_header_line("X-Team: blue")?;
//! credentials.bearer = Some("t0ken".into());
//! let card = ClientBuilder::default().card_resolver()?.resolve("http://127.0.0.1:8080").await?;
//! let client = credentials.apply(ClientBuilder::default(), Some(&card))?.build_from_card(card)?;
//! # Ok(()) }
//! ```

use crate::auth::Interceptor as _;
use crate::{ApiKeyAuth, BearerAuth, ClientBuilder, ClientCredentials, Error};
use a2a_core::{AgentCard, Method};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use std::fmt;

/// The credentials sent to an agent with every call. Secrets are not shown by `Debug`.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct Credentials {
    /// `Authorization: Bearer …`.
    pub bearer: Option<String>,
    /// An API key, sent where the agent's card says (its first API-key security scheme).
    pub api_key: Option<String>,
    /// OAuth 2.0 client credentials.
    pub oauth: Option<OAuth>,
    /// Extra headers, `(name, value)`.
    pub headers: Vec<(String, String)>,
}

/// OAuth 2.0 client credentials: tokens from the card's client-credentials flow, or from
/// `token_url`. Secrets are not shown by `Debug`.
#[derive(Clone)]
#[non_exhaustive]
pub struct OAuth {
    /// The client id.
    pub client_id: String,
    /// The client secret.
    pub client_secret: String,
    /// The token endpoint, instead of the card's.
    pub token_url: Option<String>,
    /// The scopes to ask for (empty: every scope of the card's flow).
    pub scopes: Vec<String>,
    /// The largest answer read from the token endpoint, in bytes (default
    /// [`DEFAULT_MAX_TOKEN_BYTES`](crate::DEFAULT_MAX_TOKEN_BYTES)).
    pub max_token_bytes: usize,
}

impl OAuth {
    /// Client `client_id` with `client_secret`, at the card's token endpoint, every scope of its
    /// flow.
    pub fn new(client_id: impl Into<String>, client_secret: impl Into<String>) -> Self {
        Self {
            client_id: client_id.into(),
            client_secret: client_secret.into(),
            token_url: None,
            scopes: Vec::new(),
            max_token_bytes: crate::DEFAULT_MAX_TOKEN_BYTES,
        }
    }

    /// The token source: `token_url` when given, else the card's client-credentials flow.
    fn client_credentials(&self, card: Option<&AgentCard>) -> Result<ClientCredentials, Error> {
        let (id, secret) = (&self.client_id, &self.client_secret);
        let credentials = match (&self.token_url, card) {
            (Some(url), _) => ClientCredentials::new(url, id, secret),
            (None, Some(card)) => ClientCredentials::from_card(card, id, secret)?,
            (None, None) => {
                return Err(Error::Config(
                    "OAuth client credentials need a token endpoint: the agent's card, or a token URL".into(),
                ));
            }
        };
        let credentials = credentials.max_response_bytes(self.max_token_bytes);
        Ok(if self.scopes.is_empty() {
            credentials
        } else {
            credentials.scopes(self.scopes.iter().cloned())
        })
    }
}

fn shown(secret: &Option<String>) -> &'static str {
    if secret.is_some() { "<set>" } else { "<none>" }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("Credentials")
            .field("bearer", &shown(&self.bearer))
            .field("api_key", &shown(&self.api_key))
            .field("oauth", &self.oauth)
            .field("headers", &names)
            .finish()
    }
}

impl fmt::Debug for OAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuth")
            .field("client_id", &self.client_id)
            .field("token_url", &self.token_url)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

/// A header's name and value, checked.
fn header(name: &str, value: &str) -> Result<(HeaderName, HeaderValue), Error> {
    let name = HeaderName::from_bytes(name.trim().as_bytes())
        .map_err(|_| Error::Config(format!("invalid header name {:?}", name.trim())))?;
    let value = HeaderValue::from_str(value.trim())
        .map_err(|_| Error::Config(format!("invalid value for header {name}")))?;
    Ok((name, value))
}

impl Credentials {
    /// Adds a header given as one line, `Name: value` (the `a2a` command's `--header`); the
    /// name and value are checked at once.
    pub fn with_header_line(mut self, line: &str) -> Result<Self, Error> {
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| Error::Config(format!("header {line:?} is not `Name: value`")))?;
        header(name, value)?;
        self.headers
            .push((name.trim().to_owned(), value.trim().to_owned()));
        Ok(self)
    }

    /// Whether the card is needed to place them (an API key, or OAuth without a token URL).
    pub fn needs_card(&self) -> bool {
        self.api_key.is_some() || self.oauth.as_ref().is_some_and(|o| o.token_url.is_none())
    }

    /// `builder` sending these credentials: the headers and the bearer token always; the API key
    /// where `card` says, and OAuth tokens (from `card`'s flow unless a token URL is given).
    /// Fails with [`Error::Config`] when the card is needed and not given, or says nothing of
    /// where to send the key.
    pub fn apply(
        &self,
        mut builder: ClientBuilder,
        card: Option<&AgentCard>,
    ) -> Result<ClientBuilder, Error> {
        for (name, value) in &self.headers {
            builder = builder.header(name.trim(), value.trim())?;
        }
        if let Some(t) = &self.bearer {
            builder = builder.bearer_token(t);
        }
        if let Some(key) = &self.api_key {
            builder = builder.interceptor(ApiKeyAuth::from_card(needed(card)?, key)?);
        }
        if let Some(o) = &self.oauth {
            builder = builder.client_credentials(o.client_credentials(card)?);
        }
        Ok(builder)
    }

    /// The headers every request carries, for a caller that makes its own requests: the extra
    /// headers, the bearer token, and, given `card`, the API key when the card puts it in a
    /// header or a cookie (an [`Error::Config`] when it puts it in the query string, which these
    /// headers cannot carry). OAuth tokens are not included: they are fetched per call.
    pub fn headers(&self, card: Option<&AgentCard>) -> Result<HeaderMap, Error> {
        let mut options = crate::transport::CallOptions::default();
        for (name, value) in &self.headers {
            let (name, value) = header(name, value)?;
            options.headers.append(name, value);
        }
        if let Some(t) = &self.bearer {
            BearerAuth::new(t).intercept(Method::GetTask, &mut options)?;
        }
        if let (Some(key), Some(card)) = (&self.api_key, card) {
            ApiKeyAuth::from_card(card, key)?.intercept(Method::GetTask, &mut options)?;
            if !options.query.is_empty() {
                return Err(Error::Config(
                    "the agent's card puts its API key in the query string, which is not sent here: pass the key with a header (`--header`) instead".into(),
                ));
            }
        }
        Ok(options.headers)
    }
}

fn needed(card: Option<&AgentCard>) -> Result<&AgentCard, Error> {
    card.ok_or_else(|| {
        Error::Config("an API key is sent where the agent's card says: the card is needed".into())
    })
}

/// The keys a person trusts for an agent card's signatures: JWK set URLs, and keys given as
/// text (PEM, or a JWK set in JSON), from files or pasted. A card is never verified against
/// keys it names itself.
#[cfg(feature = "trust")]
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct KeySources {
    /// JWK set URLs, fetched.
    pub jwks_urls: Vec<String>,
    /// Keys as text, each with what names it in an error (a file name, "the key given").
    pub keys: Vec<(String, String)>,
}

#[cfg(feature = "trust")]
impl KeySources {
    /// Adds a JWK set URL (blank ones are ignored).
    pub fn with_jwks_url(mut self, url: &str) -> Self {
        if !url.trim().is_empty() {
            self.jwks_urls.push(url.trim().to_owned());
        }
        self
    }

    /// Adds a key as text, PEM or a JWK set in JSON (blank ones are ignored); `label` names it
    /// in errors.
    pub fn with_key(mut self, label: impl Into<String>, text: impl Into<String>) -> Self {
        let text = text.into();
        if !text.trim().is_empty() {
            self.keys.push((label.into(), text));
        }
        self
    }

    /// Whether no key is given.
    pub fn is_empty(&self) -> bool {
        self.jwks_urls.is_empty() && self.keys.is_empty()
    }

    /// The keys: each JWK set fetched with `builder` (its HTTP client, timeout and JWK set size
    /// limit), each text read.
    pub async fn load(
        &self,
        builder: &ClientBuilder,
    ) -> Result<a2a_core::signing::TrustedKeys, Error> {
        let mut keys = a2a_core::signing::TrustedKeys::new();
        for url in &self.jwks_urls {
            keys.extend(builder.fetch_jwks(url).await?);
        }
        for (label, text) in &self.keys {
            keys.extend(read_key(text).map_err(|e| Error::Config(format!("{label}: {e}")))?);
        }
        Ok(keys)
    }
}

/// A key given as text: a JWK set when it is JSON, else PEM (a public or private key).
#[cfg(feature = "trust")]
pub fn read_key(text: &str) -> Result<a2a_core::signing::TrustedKeys, a2a_core::signing::KeyError> {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(jwks) => a2a_core::signing::TrustedKeys::from_jwks(&jwks),
        Err(_) => a2a_core::signing::TrustedKeys::from_pem(text),
    }
}
