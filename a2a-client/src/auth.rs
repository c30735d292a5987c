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
