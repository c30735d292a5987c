//! The authentication layer of the A2A routes.

use super::{AppState, jsonrpc, rest};
use crate::auth::{AuthDecision, DynAuthenticator, Granted, Principal};
use axum::extract::Request;
use axum::http;
use axum::response::Response;
use std::convert::Infallible;
use std::sync::Arc;
use std::task::Poll;
use tower::ServiceExt as _;

/// The authentication layer in front of the A2A routes: records the principal, or answers
/// 401. Every 401 that passes here carries a `WWW-Authenticate` challenge (RFC 9110 §15.5.2),
/// also one an operation answered (an agent's Unauthenticated error on the HTTP+JSON binding).
/// A plain tower layer, as [`super::grpc::Route`] is and for the same reason: without an
/// authenticator (the default) a request costs no boxed future and no clone of the router.
#[derive(Clone)]
pub(super) struct Authenticate {
    state: Arc<AppState>,
}

impl Authenticate {
    pub(super) fn new(state: Arc<AppState>) -> Self {
        Self { state }
    }
}

impl<S> tower::Layer<S> for Authenticate {
    type Service = Authenticated<S>;

    fn layer(&self, inner: S) -> Authenticated<S> {
        Authenticated {
            state: self.state.clone(),
            inner,
        }
    }
}

/// A route behind [`Authenticate`].
#[derive(Clone)]
pub(super) struct Authenticated<S> {
    state: Arc<AppState>,
    inner: S,
}

impl<S> tower::Service<Request> for Authenticated<S>
where
    S: tower::Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = futures::future::Either<
        futures::future::BoxFuture<'static, Result<Response, Infallible>>,
        futures::future::MapOk<S::Future, fn(Response) -> Response>,
    >;

    fn poll_ready(&mut self, cx: &mut std::task::Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        use futures::TryFutureExt as _;
        let Some(auth) = self.state.auth.clone() else {
            let unchallenged: fn(Response) -> Response = |r| challenge(None, r);
            return futures::future::Either::Right(self.inner.call(request).map_ok(unchallenged));
        };
        // The service polled ready is the one called (tower's contract); a clone takes its place.
        let ready = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, ready);
        let state = self.state.clone();
        futures::future::Either::Left(Box::pin(async move {
            Ok(authenticate(&state, &*auth, request, inner).await)
        }))
    }
}

/// [`Authenticated`] with an authenticator: asks it, then runs the route or answers 401.
async fn authenticate<S>(
    state: &AppState,
    auth: &dyn DynAuthenticator,
    request: Request,
    inner: S,
) -> Response
where
    S: tower::Service<Request, Response = Response, Error = Infallible>,
{
    let (mut parts, body) = request.into_parts();
    let response = match principal(state, &parts).await {
        Ok(caller) => {
            if let Some((principal, granted)) = caller {
                parts.extensions.insert(principal);
                parts.extensions.insert(granted);
            }
            let request = Request::from_parts(parts, body);
            let Ok(response) = inner.oneshot(request).await;
            response
        }
        // Answered in the binding's own error form; the challenge is added below.
        Err(error) => {
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
                // RFC 6750 §3: say why a bearer token was refused (an authenticator that gave
                // its reason, AuthDecision::Rejected).
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
    };
    challenge(Some(auth), response)
}

/// The challenges a response leaving the A2A routes carries: a 403 under a bearer scheme is a
/// missing scope (RFC 6750 §3.1); a 401 names the scheme (the authenticator's, else ours).
fn challenge(auth: Option<&dyn DynAuthenticator>, mut response: Response) -> Response {
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
