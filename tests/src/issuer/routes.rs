//! The issuer's endpoints: discovery, the JWKS (as [`JwksMode`] says) and the
//! client-credentials grant at `/token`.

use super::state::Shared;
use super::{JwksMode, SLOW_JWKS_DELAY};
use axum::extract::rejection::FormRejection;
use axum::extract::{Form, State};
use axum::http::header::{AUTHORIZATION, CACHE_CONTROL, CONTENT_TYPE, WWW_AUTHENTICATE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

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

pub(super) async fn discovery(State(shared): State<Arc<Shared>>) -> Response {
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

pub(super) async fn jwks(State(shared): State<Arc<Shared>>) -> Response {
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

pub(super) async fn token(
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
