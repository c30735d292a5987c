//! Authentication as a tower layer around the bindings (the agent card stays public): it asks
//! the authenticator about each request, records the caller in the request's extensions (a
//! [`Principal`] and its [`Granted`] scopes), and answers a refusal in the error form of the
//! request's binding ([`Binding::of`], the same decision the dispatch makes): 401 for missing
//! or wrong credentials, 403 for a caller the authenticator knows but does not authorize. With
//! anonymous access, a request without credentials goes on without a principal (the handler
//! then refuses what needs one, the extended card). A server without an authenticator has no
//! such layer. The dispatch gives every other 401 and 403 of the
//! JSON-RPC and HTTP+JSON bindings its `WWW-Authenticate` challenge ([`challenge_of`]).
//! Authorization by scope ([`authorize`]) runs later, where the operation is known.

use super::AppState;
use super::binding::{Binding, Door};
use crate::auth::{AuthDecision, DEFAULT_CHALLENGE, DynAuthenticator, Granted, Principal};
use crate::telemetry::MetricsInner;
use axum::extract::Request;
use axum::http::header::WWW_AUTHENTICATE;
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use futures::future::BoxFuture;
use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

/// The layer that authenticates every request reaching the bindings behind a door.
#[derive(Clone, Debug)]
pub(crate) struct AuthLayer {
    auth: Arc<dyn DynAuthenticator>,
    /// Requests without credentials are served, anonymously.
    anonymous: bool,
    metrics: Option<Arc<MetricsInner>>,
    door: Door,
}

impl AuthLayer {
    /// The layer of the server `state`, for the bindings behind `door`; none when the server
    /// has no authenticator (every request is then served as it comes).
    pub(crate) fn new(state: &AppState, door: Door) -> Option<Self> {
        Some(Self {
            auth: state.auth.clone()?,
            anonymous: state.anonymous,
            metrics: state.metrics.clone(),
            door,
        })
    }
}

impl<S> tower::Layer<S> for AuthLayer {
    type Service = Authenticate<S>;

    fn layer(&self, inner: S) -> Authenticate<S> {
        Authenticate {
            inner,
            layer: self.clone(),
        }
    }
}

/// The service of [`AuthLayer`].
#[derive(Clone, Debug)]
pub(crate) struct Authenticate<S> {
    inner: S,
    layer: AuthLayer,
}

impl<S> tower::Service<Request> for Authenticate<S>
where
    S: tower::Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send,
{
    type Response = Response;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response, Infallible>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        // The inner service that was made ready is the one called (tower's clone-and-swap).
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let binding = Binding::of(&request, self.layer.door);
        let AuthLayer {
            auth,
            anonymous,
            metrics,
            ..
        } = self.layer.clone();
        Box::pin(async move {
            let request = match binding {
                // Nothing is served there (a 415): nothing to authenticate.
                Binding::Unsupported(_) => request,
                _ => match admit(auth.as_ref(), anonymous, request).await {
                    Ok(request) => request,
                    Err(refusal) => {
                        if let Some(metrics) = &metrics {
                            metrics.auth_failed(refusal != Refusal::Missing);
                        }
                        return Ok(refuse(binding, auth.as_ref(), &refusal));
                    }
                },
            };
            inner.call(request).await
        })
    }
}

/// Why the authenticator refused a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// No credentials came.
    Missing,
    /// The credentials are not valid.
    Invalid,
    /// The credentials are not valid for this reason, which the caller is told.
    Rejected(String),
    /// The credentials are valid, and their holder may not use this agent.
    Forbidden,
}

impl Refusal {
    /// The error answered: Unauthenticated, or PermissionDenied for a known caller.
    fn error(&self) -> a2a_core::Error {
        let message = match self {
            Self::Missing => {
                "Authentication required: see the agent card's securitySchemes".to_owned()
            }
            Self::Invalid => "The credentials are not valid".to_owned(),
            Self::Rejected(why) => format!("The credentials are not valid: {why}"),
            Self::Forbidden => {
                return a2a_core::Error::new(
                    a2a_core::ErrorKind::PermissionDenied,
                    "The credentials are valid but do not give access to this agent",
                );
            }
        };
        a2a_core::Error::new(a2a_core::ErrorKind::Unauthenticated, message)
    }
}

/// `request` with its caller recorded in its extensions (none for an anonymous request, when
/// `anonymous` lets it in), or why it is refused.
async fn admit(
    auth: &dyn DynAuthenticator,
    anonymous: bool,
    request: Request,
) -> Result<Request, Refusal> {
    let (mut parts, body) = request.into_parts();
    let (principal, granted) = match auth.authenticate(&parts).await {
        AuthDecision::Allow(principal) => (principal, Granted::default()),
        AuthDecision::Granted(principal, scopes) => (principal, Granted(scopes)),
        AuthDecision::Missing if anonymous => return Ok(Request::from_parts(parts, body)),
        AuthDecision::Missing => return Err(Refusal::Missing),
        AuthDecision::Forbidden(principal) => {
            tracing::debug!(principal = %principal.0, "refused: not authorized");
            return Err(Refusal::Forbidden);
        }
        AuthDecision::Invalid => return Err(Refusal::Invalid),
        AuthDecision::Rejected(why) => return Err(Refusal::Rejected(why)),
    };
    parts.extensions.insert::<Principal>(principal);
    parts.extensions.insert(granted);
    Ok(Request::from_parts(parts, body))
}

/// The 401 (403 for [`Refusal::Forbidden`]) answering a refused request, in its binding's
/// error form. Over HTTP it carries its challenge: RFC 6750 §3's `invalid_token` with the
/// reason when the authenticator gave one, else the scheme (see [`challenge`]).
fn refuse(binding: Binding, auth: &dyn DynAuthenticator, refusal: &Refusal) -> Response {
    let mut response = binding.refused(refusal.error());
    if binding == Binding::Grpc {
        return response;
    }
    if let Refusal::Rejected(why) = refusal {
        let challenge = format!(
            "{}, error=\"invalid_token\", error_description=\"{}\"",
            auth.challenge(),
            why.replace(['"', '\\'], "'")
        );
        if let Ok(v) = HeaderValue::from_str(&challenge) {
            response.headers_mut().insert(WWW_AUTHENTICATE, v);
        }
    }
    challenge(Some(auth), response)
}

/// The challenges a response of `binding` carries, over JSON-RPC and HTTP+JSON (see
/// [`challenge`]); a gRPC status carries none.
pub(super) fn challenge_of(
    binding: Binding,
    auth: Option<&dyn DynAuthenticator>,
    response: Response,
) -> Response {
    match binding {
        Binding::JsonRpc | Binding::HttpJson => challenge(auth, response),
        Binding::Grpc | Binding::Unsupported(_) => response,
    }
}

/// The challenges a response of the JSON-RPC or HTTP+JSON binding carries: a 403 under a
/// bearer scheme is a missing scope (RFC 6750 §3.1); a 401 (also one an operation answered, an
/// agent's Unauthenticated error) names the scheme (the authenticator's, else ours).
fn challenge(auth: Option<&dyn DynAuthenticator>, mut response: Response) -> Response {
    let value = match response.status() {
        _ if response.headers().contains_key(WWW_AUTHENTICATE) => None,
        StatusCode::FORBIDDEN if auth.is_some_and(|a| a.challenge().starts_with("Bearer")) => Some(
            HeaderValue::from_static(r#"Bearer error="insufficient_scope""#),
        ),
        StatusCode::UNAUTHORIZED => {
            let scheme = auth.map_or_else(|| DEFAULT_CHALLENGE.to_owned(), |a| a.challenge());
            HeaderValue::from_str(&scheme).ok()
        }
        _ => None,
    };
    if let Some(value) = value {
        response.headers_mut().insert(WWW_AUTHENTICATE, value);
    }
    response
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
