//! The authentication layer of the A2A routes.

use super::{AppState, jsonrpc, rest};
use crate::auth::{AuthDecision, Granted, Principal};
use axum::http;
use std::sync::Arc;

/// The authentication layer of the A2A routes: records the principal, or answers 401.
/// Every 401 that passes here carries a `WWW-Authenticate` challenge (RFC 9110 §15.5.2), also
/// one an operation answered (an agent's Unauthenticated error on the HTTP+JSON binding).
pub(super) async fn authenticate(
    axum::extract::State(state): axum::extract::State<Arc<AppState>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let mut response = match &state.auth {
        None => next.run(request).await,
        Some(_) => {
            let (mut parts, body) = request.into_parts();
            match principal(&state, &parts).await {
                Ok(caller) => {
                    if let Some((principal, granted)) = caller {
                        parts.extensions.insert(principal);
                        parts.extensions.insert(granted);
                    }
                    next.run(axum::extract::Request::from_parts(parts, body))
                        .await
                }
                // Answered in the binding's own error form; the challenge is added below.
                Err(error) => {
                    let mut response =
                        if parts.uri.path() == "/" && parts.method == http::Method::POST {
                            jsonrpc::error_response(
                                a2a_core::jsonrpc::Id::Null,
                                error.clone(),
                                jsonrpc::Framing::Status(http::StatusCode::UNAUTHORIZED),
                            )
                        } else {
                            rest::error_response(&error, None)
                        };
                    let rejected = error.message.starts_with(REJECTED);
                    if let (Some(auth), true) = (&state.auth, rejected) {
                        // RFC 6750 §3: say why a bearer token was refused (an authenticator
                        // that gave its reason, AuthDecision::Rejected).
                        let challenge = format!(
                            "{}, error=\"invalid_token\", error_description=\"{}\"",
                            auth.challenge(),
                            error.message.replace(['"', '\\'], "'")
                        );
                        if let Ok(v) = http::HeaderValue::from_str(&challenge) {
                            response
                                .headers_mut()
                                .insert(http::header::WWW_AUTHENTICATE, v);
                        }
                    }
                    response
                }
            }
        }
    };
    // A 403 under a bearer scheme is a missing scope (RFC 6750 §3.1).
    let bearer = state
        .auth
        .as_ref()
        .is_some_and(|a| a.challenge().starts_with("Bearer"));
    if response.status() == http::StatusCode::FORBIDDEN
        && bearer
        && !response
            .headers()
            .contains_key(http::header::WWW_AUTHENTICATE)
    {
        response.headers_mut().insert(
            http::header::WWW_AUTHENTICATE,
            http::HeaderValue::from_static(r#"Bearer error="insufficient_scope""#),
        );
    }
    if response.status() == http::StatusCode::UNAUTHORIZED
        && !response
            .headers()
            .contains_key(http::header::WWW_AUTHENTICATE)
    {
        let challenge = state.auth.as_ref().map_or_else(
            || crate::auth::DEFAULT_CHALLENGE.to_owned(),
            |a| a.challenge(),
        );
        if let Ok(value) = http::HeaderValue::from_str(&challenge) {
            response
                .headers_mut()
                .insert(http::header::WWW_AUTHENTICATE, value);
        }
    }
    response
}

/// What a 401 says when no credentials came.
const MISSING: &str = "Authentication required: see the agent card's securitySchemes";
/// How a 401 with the authenticator's reason starts.
const REJECTED: &str = "The credentials are not valid: ";

/// The caller, as the authenticator decides (`None` when there is none), with the scopes it
/// was granted, or the Unauthenticated error to answer with.
pub(super) async fn principal(
    state: &AppState,
    parts: &http::request::Parts,
) -> Result<Option<(Principal, Granted)>, a2a_core::Error> {
    let Some(auth) = &state.auth else {
        return Ok(None);
    };
    let decision = auth.authenticate(parts).await;
    let message = match decision {
        AuthDecision::Allow(principal) => return Ok(Some((principal, Granted::default()))),
        AuthDecision::Granted(principal, scopes) => return Ok(Some((principal, Granted(scopes)))),
        AuthDecision::Missing => MISSING.to_owned(),
        AuthDecision::Invalid => "The credentials are not valid".to_owned(),
        AuthDecision::Rejected(why) => format!("{REJECTED}{why}"),
    };
    if let Some(metrics) = &state.metrics {
        metrics.auth_failed(message != MISSING);
    }
    Err(a2a_core::Error::new(
        a2a_core::ErrorKind::Unauthenticated,
        message,
    ))
}

/// Whether the caller holds the scopes `method` requires (PermissionDenied if not).
pub(super) fn authorize(
    state: &AppState,
    granted: Option<&Granted>,
    method: a2a_core::Method,
) -> Result<(), a2a_core::Error> {
    let Some(auth) = &state.auth else {
        return Ok(());
    };
    let held = granted.map(|g| g.0.as_slice()).unwrap_or_default();
    let missing: Vec<String> = auth
        .required_scopes(method)
        .into_iter()
        .filter(|s| !held.contains(s))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(a2a_core::Error::new(
        a2a_core::ErrorKind::PermissionDenied,
        format!(
            "{} needs the scope(s) {} (insufficient_scope)",
            method.name(),
            missing.join(" ")
        ),
    ))
}
