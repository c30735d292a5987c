//! Serving the agent card: `ETag` and `Last-Modified` (the moment the server was built),
//! `Cache-Control`, 304 on `If-None-Match` (or, without it, on `If-Modified-Since`), and the
//! hybrid v1.0 + v0.3 card unless the client asks for `A2A-Version: 1.0`; each form signed as
//! served when the server has card signing keys, whose JWK set is served beside the card.

use super::AppState;
use a2a_core::AgentCard;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// The card, serialized once in both forms.
#[derive(Debug)]
pub(crate) struct CardCache {
    v1: Bytes,
    hybrid: Bytes,
    v1_etag: HeaderValue,
    hybrid_etag: HeaderValue,
    /// Whole seconds since the epoch, as HTTP dates carry them.
    modified_secs: i64,
    last_modified: HeaderValue,
}

fn etag(bytes: &[u8]) -> HeaderValue {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    HeaderValue::from_str(&format!("\"{:016x}\"", h.finish())).expect("hex is a valid header")
}

/// Where the JWK set of the card's signing keys is served.
pub(crate) const JWKS_PATH: &str = "/.well-known/jwks.json";

/// The keys the card is signed with (none without the `trust` feature).
#[derive(Clone, Debug, Default)]
pub(crate) struct CardKeys {
    #[cfg(feature = "trust")]
    keys: Arc<Vec<a2a_core::signing::CardSigningKey>>,
}

impl CardKeys {
    #[cfg(feature = "trust")]
    pub(crate) fn new(keys: Vec<a2a_core::signing::CardSigningKey>) -> Self {
        Self {
            keys: Arc::new(keys),
        }
    }

    /// Signs `card` (JSON, as served) with every key; without keys, leaves it as it is.
    fn sign_json(&self, card: &mut serde_json::Value) {
        #[cfg(feature = "trust")]
        if !self.keys.is_empty()
            && let Err(e) = a2a_core::signing::sign_json(card, &self.keys)
        {
            // Keys are checked when read; a failure here is a bug, and the card is served
            // unsigned rather than not at all.
            tracing::error!(error = %e, "the agent card could not be signed");
        }
        #[cfg(not(feature = "trust"))]
        let _ = card;
    }

    /// Signs a card (the extended card, built per caller) with every key.
    pub(crate) fn sign(&self, card: &mut AgentCard) {
        #[cfg(feature = "trust")]
        if !self.keys.is_empty()
            && let Err(e) = a2a_core::signing::sign_card(card, &self.keys)
        {
            tracing::error!(error = %e, "the extended agent card could not be signed");
        }
        #[cfg(not(feature = "trust"))]
        let _ = card;
    }

    /// The public JWK set, when there are keys.
    pub(crate) fn jwks(&self) -> Option<Bytes> {
        #[cfg(feature = "trust")]
        if !self.keys.is_empty() {
            let jwks = a2a_core::signing::jwks(&self.keys);
            return Some(Bytes::from(jwks.to_string()));
        }
        None
    }
}

/// The card in JSON as served: `card` (or its v0.3 hybrid), signed by `keys`.
fn served<T: serde::Serialize>(card: &T, keys: &CardKeys) -> Bytes {
    let mut v = serde_json::to_value(card).expect("a card serializes");
    keys.sign_json(&mut v);
    Bytes::from(serde_json::to_vec(&v).expect("a card serializes"))
}

impl CardCache {
    pub(crate) fn new(card: &AgentCard, keys: &CardKeys) -> Self {
        let v1 = served(card, keys);
        let hybrid = served(&a2a_core::v03::hybrid_card(card), keys);
        let now = chrono::Utc::now();
        let last_modified =
            HeaderValue::from_str(&http_date(now)).expect("an HTTP date is a valid header value");
        Self {
            v1_etag: etag(&v1),
            hybrid_etag: etag(&hybrid),
            v1,
            hybrid,
            modified_secs: now.timestamp(),
            last_modified,
        }
    }

    /// Whether a conditional GET may be answered 304 (RFC 9110 §13.2.2: `If-None-Match` when
    /// present, else `If-Modified-Since`).
    fn not_modified(&self, headers: &HeaderMap, tag: &HeaderValue) -> bool {
        if let Some(tags) = headers.get(header::IF_NONE_MATCH) {
            let tag = tag.to_str().unwrap_or_default();
            return tags
                .to_str()
                .is_ok_and(|v| v.split(',').any(|t| t.trim() == tag || t.trim() == "*"));
        }
        headers
            .get(header::IF_MODIFIED_SINCE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| chrono::DateTime::parse_from_rfc2822(v.trim()).ok())
            .is_some_and(|since| self.modified_secs <= since.timestamp())
    }
}

/// An IMF-fixdate (RFC 9110 §5.6.7): `Sun, 06 Nov 1994 08:49:37 GMT`.
fn http_date(t: chrono::DateTime<chrono::Utc>) -> String {
    t.format("%a, %d %b %Y %H:%M:%S GMT").to_string()
}

/// Any method but GET (and HEAD) on the card: HTTP 405 with `Allow: GET` and an HTTP+JSON
/// error body.
pub(crate) async fn wrong_method() -> Response {
    super::rest::method_not_allowed("GET")
}

pub(crate) async fn serve(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    let wants_v1 = headers
        .get("a2a-version")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().starts_with('1'));
    let cache = &state.card;
    let (body, tag) = if wants_v1 {
        (&cache.v1, &cache.v1_etag)
    } else {
        (&cache.hybrid, &cache.hybrid_etag)
    };
    let mut response = if cache.not_modified(&headers, tag) {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            body.clone(),
        )
            .into_response()
    };
    let h = response.headers_mut();
    h.insert(header::ETAG, tag.clone());
    h.insert(header::LAST_MODIFIED, cache.last_modified.clone());
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=300"),
    );
    h.insert(header::VARY, HeaderValue::from_static("A2A-Version"));
    response
}

/// The JWK set of the card's signing keys (routed only when there are keys).
pub(crate) async fn jwks(State(state): State<Arc<AppState>>) -> Response {
    let Some(jwks) = state.jwks.clone() else {
        return StatusCode::NOT_FOUND.into_response();
    };
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/jwk-set+json"),
            ),
            (
                header::CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=300"),
            ),
        ],
        jwks,
    )
        .into_response()
}
