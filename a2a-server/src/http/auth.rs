//! Authentication of the JSON-RPC and HTTP+JSON bindings (the gRPC binding asks
//! [`principal`] itself).

use super::{AppState, jsonrpc, rest};
use crate::auth::{AuthDecision, DynAuthenticator, Granted, Principal};
use axum::extract::Request;
use axum::http;
use axum::response::Response;

/// Authentication of a request to the JSON-RPC or HTTP+JSON binding: the request with its
/// caller recorded (a [`Principal`] and its [`Granted`] scopes, when there is an
/// authenticator), or the 401 to answer with, challenge included. Every other 401 or 403 that
/// the binding answers gets its challenge from [`challenge`].
pub(super) async fn admit(state: &AppState, request: Request) -> Result<Request, Response> {
    let Some(auth) = state.auth.as_deref() else {
        return Ok(request);
    };
    let (mut parts, body) = request.into_parts();
    let error = match principal(state, &parts).await {
        Ok(caller) => {
            if let Some((principal, granted)) = caller {
                parts.extensions.insert(principal);
                parts.extensions.insert(granted);
            }
            return Ok(Request::from_parts(parts, body));
        }
        Err(error) => error,
    };
    // Answered in the binding's own error form, with its challenge.
    let mut response = if parts.uri.path() == "/" && parts.method == http::Method::POST {
        jsonrpc::error_response(
            a2a_core::jsonrpc::Id::Null,
            error.clone(),
            jsonrpc::Framing::Status(http::StatusCode::UNAUTHORIZED),
        )
    } else {
        rest::error_response(&error, None)
    };
    if error.message.starts_with(REJECTED) {
        // RFC 6750 §3: say why a bearer token was refused (an authenticator that gave its
        // reason, AuthDecision::Rejected).
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
    Err(challenge(Some(auth), response))
}

/// The challenges a response of the JSON-RPC or HTTP+JSON binding carries: a 403 under a
/// bearer scheme is a missing scope (RFC 6750 §3.1); a 401 (also one an operation answered, an
/// agent's Unauthenticated error) names the scheme (the authenticator's, else ours).
pub(super) fn challenge(auth: Option<&dyn DynAuthenticator>, mut response: Response) -> Response {
    let status = response.status();
    if status != http::StatusCode::FORBIDDEN && status != http::StatusCode::UNAUTHORIZED {
        return response;
    }
    if response
        .headers()
        .contains_key(http::header::WWW_AUTHENTICATE)
    {
        return response;
    }
    let value = if status == http::StatusCode::FORBIDDEN {
        let bearer = auth.is_some_and(|a| a.challenge().starts_with("Bearer"));
        if !bearer {
            return response;
        }
        http::HeaderValue::from_static(r#"Bearer error="insufficient_scope""#)
    } else {
        let challenge = auth.map_or_else(
            || crate::auth::DEFAULT_CHALLENGE.to_owned(),
            |a| a.challenge(),
        );
        let Ok(value) = http::HeaderValue::from_str(&challenge) else {
            return response;
        };
        value
    };
    response
        .headers_mut()
        .insert(http::header::WWW_AUTHENTICATE, value);
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
