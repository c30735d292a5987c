//! Serving the agent card: `ETag`, `Cache-Control`, 304 on `If-None-Match`, and the hybrid
//! v1.0 + v0.3 card unless the client asks for `A2A-Version: 1.0`.

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
        Self {
            v1_etag: etag(&v1),
            hybrid_etag: etag(&hybrid),
            v1,
            hybrid,
        }
    }
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
    let mut response = if headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(',')
                .any(|t| t.trim() == tag.to_str().unwrap_or_default() || t.trim() == "*")
        }) {
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
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=300"),
    );
    h.insert(header::VARY, HeaderValue::from_static("A2A-Version"));
    response
}
