//! The authentication layer of the A2A routes.

use super::{AppState, jsonrpc, rest};
use crate::auth::{AuthDecision, Principal};
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
                Ok(principal) => {
                    if let Some(principal) = principal {
                        parts.extensions.insert(principal);
                    }
                    next.run(axum::extract::Request::from_parts(parts, body))
                        .await
                }
                // Answered in the binding's own error form; the challenge is added below.
                Err(error) => {
                    if parts.uri.path() == "/" && parts.method == http::Method::POST {
                        jsonrpc::error_response(
                            a2a_core::jsonrpc::Id::Null,
                            error,
                            jsonrpc::Framing::Status(http::StatusCode::UNAUTHORIZED),
                        )
                    } else {
                        rest::error_response(&error, None)
                    }
                }
            }
        }
    };
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

/// The caller, as the authenticator decides (`None` when there is none), or the Unauthenticated
/// error to answer with.
pub(super) async fn principal(
    state: &AppState,
    parts: &http::request::Parts,
) -> Result<Option<Principal>, a2a_core::Error> {
    let Some(auth) = &state.auth else {
        return Ok(None);
    };
    match auth.authenticate(parts).await {
        AuthDecision::Allow(principal) => Ok(Some(principal)),
        decision => {
            let invalid = decision == AuthDecision::Invalid;
            if let Some(metrics) = &state.metrics {
                metrics.auth_failed(invalid);
            }
            Err(a2a_core::Error::new(
                a2a_core::ErrorKind::Unauthenticated,
                if invalid {
                    "The credentials are not valid"
                } else {
                    "Authentication required: see the agent card's securitySchemes"
                },
            ))
        }
    }
}
