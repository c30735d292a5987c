//! Serving the agent card: `ETag` and `Last-Modified` (the moment the server was built),
//! `Cache-Control`, 304 on `If-None-Match` (or, without it, on `If-Modified-Since`), and the
//! hybrid v1.0 + v0.3 card unless the client asks for `A2A-Version: 1.0`.

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

impl CardCache {
    pub(crate) fn new(card: &AgentCard) -> Self {
        let v1 = Bytes::from(serde_json::to_vec(card).expect("a card serializes"));
        let hybrid = Bytes::from(
            serde_json::to_vec(&a2a_core::v03::hybrid_card(card)).expect("a card serializes"),
        );
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
