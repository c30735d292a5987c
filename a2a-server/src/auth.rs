//! Authentication: a pluggable [`Authenticator`] asked before every A2A operation
//! (the agent card stays public), with built-in bearer-token and API-key validators that
//! declare themselves in the card's `securitySchemes` / `securityRequirements`.
//!
//! The authenticated principal is recorded on each task at creation; every operation then sees
//! only the caller's tasks (another principal's task answers TaskNotFound, never 403, and
//! ListTasks never counts it).
//!
//! [`Authenticator::authenticate`] is async, so that it can ask an identity provider (token
//! introspection, a session store, a JWKS fetched on demand):
//!
//! ```
//! use a2a_core::SecurityScheme;
//! use a2a_server::auth::{AuthDecision, Authenticator, Parts, Principal};
//! use a2a_server::axum::http::header;
//!
//! /// Asks the identity provider who owns each bearer token.
//! #[derive(Debug)]
//! struct Introspection {
//!     // e.g. an HTTP client and the introspection endpoint
//! }
//!
//! impl Introspection {
//!     async fn lookup(&self, token: &str) -> Option<String> {
//!         // a call to the identity provider (cache the answers: this runs on every request)
//!         (token == "s3cr3t").then(|| "team-a".to_owned())
//!     }
//! }
//!
//! impl Authenticator for Introspection {
//!     async fn authenticate(&self, request: &Parts) -> AuthDecision {
//!         let Some(value) = request.headers.get(header::AUTHORIZATION) else {
//!             return AuthDecision::Missing;
//!         };
//!         let token = value.to_str().unwrap_or_default().trim_start_matches("Bearer ");
//!         match self.lookup(token).await {
//!             Some(who) => AuthDecision::Allow(Principal(who)),
//!             None => AuthDecision::Invalid,
//!         }
//!     }
//!
//!     fn schemes(&self) -> Vec<(String, SecurityScheme)> {
//!         vec![("bearer".to_owned(), SecurityScheme::bearer())]
//!     }
//!
//!     fn challenge(&self) -> String {
//!         r#"Bearer realm="a2a""#.to_owned()
//!     }
//! }
//! ```

#[cfg(feature = "trust")]
mod jwt;
#[cfg(feature = "trust")]
pub use jwt::{DEFAULT_FETCH_TIMEOUT, DEFAULT_MAX_FETCH_BYTES, JwtBearer, TokenError};

use a2a_core::{Method, SecurityRequirement, SecurityScheme};
use axum::http::header;
/// The request head an [`Authenticator`] reads (`axum::http::request::Parts`, re-exported so
/// that implementing the trait needs no direct `http` dependency).
pub use axum::http::request::Parts;
use futures::future::BoxFuture;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;

/// The authenticated caller, as stored in the request's extensions and on its tasks.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Principal(pub String);

/// An authenticator's verdict on a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuthDecision {
    /// Authenticated as this principal.
    Allow(Principal),
    /// Authenticated as this principal, holding these OAuth scopes (checked against
    /// [`Authenticator::required_scopes`] of each operation).
    Granted(Principal, Vec<String>),
    /// No credentials were presented.
    Missing,
    /// Credentials were presented and are wrong.
    Invalid,
    /// Credentials were presented and are wrong for this reason, which the caller is told
    /// (an expired token, another audience): it must not reveal anything secret.
    Rejected(String),
    /// Authenticated as this principal, who is not authorized to use this agent (a suspended
    /// account, another team's token): every request is refused with 403, PermissionDenied
    /// (gRPC `PERMISSION_DENIED`), never with the 401 that would ask for other credentials.
    Forbidden(Principal),
}

/// Decides who is calling. Implementors write `async fn authenticate`; see the
/// [module docs](self) for one that asks an identity provider.
pub trait Authenticator: Send + Sync + fmt::Debug + 'static {
    /// Looks at the request head (headers, URI) and decides. It runs before every A2A request
    /// (not the agent card): it may await (an identity provider, a database), but should cache
    /// what it can, and must not block the thread.
    fn authenticate(&self, request: &Parts) -> impl Future<Output = AuthDecision> + Send;

    /// The security schemes to declare in the agent card, by name; a caller must satisfy all
    /// of them (one requirement).
    fn schemes(&self) -> Vec<(String, SecurityScheme)>;

    /// The `WWW-Authenticate` challenge sent with a 401.
    fn challenge(&self) -> String;

    /// The scopes a caller must hold for `method` (none by default). A caller authenticated
    /// with [`AuthDecision::Granted`] and lacking one is refused with 403 (PermissionDenied,
    /// `WWW-Authenticate: Bearer error="insufficient_scope"`); one authenticated with
    /// [`AuthDecision::Allow`] holds no scope.
    fn required_scopes(&self, method: Method) -> Vec<String> {
        let _ = method;
        Vec::new()
    }
}

/// The object-safe form of [`Authenticator`], used inside the server.
pub(crate) trait DynAuthenticator: Send + Sync + fmt::Debug + 'static {
    fn authenticate<'a>(&'a self, request: &'a Parts) -> BoxFuture<'a, AuthDecision>;
    fn schemes(&self) -> Vec<(String, SecurityScheme)>;
    fn challenge(&self) -> String;
    fn required_scopes(&self, method: Method) -> Vec<String>;
}

impl<A: Authenticator> DynAuthenticator for A {
    fn authenticate<'a>(&'a self, request: &'a Parts) -> BoxFuture<'a, AuthDecision> {
        Box::pin(Authenticator::authenticate(self, request))
    }

    fn schemes(&self) -> Vec<(String, SecurityScheme)> {
        Authenticator::schemes(self)
    }

    fn challenge(&self) -> String {
        Authenticator::challenge(self)
    }

    fn required_scopes(&self, method: Method) -> Vec<String> {
        Authenticator::required_scopes(self, method)
    }
}

/// What a built-in authenticator knows of a credential: whose it is, and whether that caller
/// may use the agent.
#[derive(Clone, Debug)]
struct Holder {
    principal: Principal,
    authorized: bool,
}

impl Holder {
    fn decision(&self) -> AuthDecision {
        if self.authorized {
            AuthDecision::Allow(self.principal.clone())
        } else {
            AuthDecision::Forbidden(self.principal.clone())
        }
    }
}

/// Bearer tokens, each mapped to its principal: `Authorization: Bearer <token>`.
#[derive(Clone, Default)]
pub struct BearerTokens {
    tokens: HashMap<String, Holder>,
}

impl fmt::Debug for BearerTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BearerTokens")
            .field("tokens", &self.tokens.len())
            .finish()
    }
}

impl BearerTokens {
    /// No tokens yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Accepts `token` as `principal`.
    #[must_use]
    pub fn token(mut self, token: impl Into<String>, principal: impl Into<String>) -> Self {
        self.tokens.insert(token.into(), holder(principal, true));
        self
    }

    /// Recognizes `token` as `principal`, who is not authorized to use this agent: its
    /// requests are refused with 403 PermissionDenied ([`AuthDecision::Forbidden`]), not 401.
    #[must_use]
    pub fn denied(mut self, token: impl Into<String>, principal: impl Into<String>) -> Self {
        self.tokens.insert(token.into(), holder(principal, false));
        self
    }

    /// Accepts each token as its own principal, named `token-1`, `token-2`, … in order (the
    /// token itself is never used as a name, so it appears in no log).
    pub fn each_its_own(tokens: impl IntoIterator<Item = impl Into<String>>) -> Self {
        tokens
            .into_iter()
            .enumerate()
            .fold(Self::new(), |b, (i, t)| {
                b.token(t, format!("token-{}", i + 1))
            })
    }

    /// Whether no token is configured.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }
}

impl Authenticator for BearerTokens {
    async fn authenticate(&self, request: &Parts) -> AuthDecision {
        let token = match bearer_token(request) {
            None => return AuthDecision::Missing,
            Some(None) => return AuthDecision::Invalid,
            Some(Some(token)) => token,
        };
        self.tokens
            .get(token)
            .map_or(AuthDecision::Invalid, Holder::decision)
    }

    fn schemes(&self) -> Vec<(String, SecurityScheme)> {
        vec![("bearer".to_owned(), SecurityScheme::bearer())]
    }

    fn challenge(&self) -> String {
        DEFAULT_CHALLENGE.to_owned()
    }
}

fn holder(principal: impl Into<String>, authorized: bool) -> Holder {
    Holder {
        principal: Principal(principal.into()),
        authorized,
    }
}

/// Where an API key is read from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyLocation {
    /// A request header.
    Header,
    /// A query parameter.
    Query,
    /// A cookie.
    Cookie,
}

/// API keys in a header, query parameter or cookie of a given name, each mapped to its
/// principal.
#[derive(Clone)]
pub struct ApiKeys {
    location: KeyLocation,
    name: String,
    keys: HashMap<String, Holder>,
}

impl fmt::Debug for ApiKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiKeys")
            .field("location", &self.location)
            .field("name", &self.name)
            .field("keys", &self.keys.len())
            .finish()
    }
}

impl ApiKeys {
    /// Keys read from `location` under `name` (e.g. header `X-Api-Key`).
    pub fn new(location: KeyLocation, name: impl Into<String>) -> Self {
        Self {
            location,
            name: name.into(),
            keys: HashMap::new(),
        }
    }

    /// Accepts `key` as `principal`.
    #[must_use]
    pub fn key(mut self, key: impl Into<String>, principal: impl Into<String>) -> Self {
        self.keys.insert(key.into(), holder(principal, true));
        self
    }

    /// Recognizes `key` as `principal`, who is not authorized to use this agent: its requests
    /// are refused with 403 PermissionDenied ([`AuthDecision::Forbidden`]), not 401.
    #[must_use]
    pub fn denied(mut self, key: impl Into<String>, principal: impl Into<String>) -> Self {
        self.keys.insert(key.into(), holder(principal, false));
        self
    }

    fn presented<'a>(&self, request: &'a Parts) -> Option<std::borrow::Cow<'a, str>> {
        match self.location {
            KeyLocation::Header => request
                .headers
                .get(self.name.as_str())
                .and_then(|v| v.to_str().ok())
                .map(Into::into),
            KeyLocation::Query => request.uri.query().and_then(|q| {
                q.split('&')
                    .filter_map(|kv| kv.split_once('='))
                    .find(|(k, _)| *k == self.name)
                    .map(|(_, v)| a2a_core::http_json::query_decode(v).into())
            }),
            KeyLocation::Cookie => request
                .headers
                .get_all(header::COOKIE)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .flat_map(|v| v.split(';'))
                .filter_map(|c| c.trim().split_once('='))
                .find(|(k, _)| *k == self.name)
                .map(|(_, v)| v.into()),
        }
    }
}

impl Authenticator for ApiKeys {
    async fn authenticate(&self, request: &Parts) -> AuthDecision {
        match self.presented(request) {
            None => AuthDecision::Missing,
            Some(key) => self
                .keys
                .get(key.as_ref())
                .map_or(AuthDecision::Invalid, Holder::decision),
        }
    }

    fn schemes(&self) -> Vec<(String, SecurityScheme)> {
        let location = match self.location {
            KeyLocation::Header => "header",
            KeyLocation::Query => "query",
            KeyLocation::Cookie => "cookie",
        };
        vec![(
            "apiKey".to_owned(),
            SecurityScheme::ApiKeySecurityScheme(a2a_core::ApiKeySecurityScheme {
                description: None,
                location: location.to_owned(),
                name: self.name.clone(),
            }),
        )]
    }

    fn challenge(&self) -> String {
        format!(r#"ApiKey realm="a2a", name="{}""#, self.name)
    }
}

/// The `WWW-Authenticate` challenge of bearer tokens, also sent on a 401 when no authenticator
/// is configured.
/// The token of `Authorization: Bearer <token>`: `None` without an `Authorization` header,
/// `Some(None)` when it holds something else.
pub(crate) fn bearer_token(request: &Parts) -> Option<Option<&str>> {
    let value = request.headers.get(header::AUTHORIZATION)?;
    Some(
        value
            .to_str()
            .ok()
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, t)| t.trim()),
    )
}

/// The OAuth scopes a caller holds, when its authenticator granted some.
#[derive(Clone, Debug, Default)]
pub(crate) struct Granted(pub(crate) Vec<String>);

pub(crate) const DEFAULT_CHALLENGE: &str = r#"Bearer realm="a2a""#;

/// The card's requirement for an authenticator: all its schemes, no scopes.
pub(crate) fn requirement(auth: &dyn DynAuthenticator) -> Option<SecurityRequirement> {
    let schemes: std::collections::BTreeMap<_, _> = auth
        .schemes()
        .into_iter()
        .map(|(name, _)| (name, a2a_core::StringList::default()))
        .collect();
    // No scheme declared: no requirement (an empty one would read as "anyone").
    (!schemes.is_empty()).then_some(SecurityRequirement { schemes })
}

#[cfg(test)]
mod tests {
    use super::{ApiKeys, AuthDecision, Authenticator, BearerTokens, KeyLocation, Principal};
    use axum::http::request::Parts;

    fn parts(
        build: impl FnOnce(axum::http::request::Builder) -> axum::http::request::Builder,
    ) -> Parts {
        build(axum::http::Request::builder().uri("/tasks?apikey=k%201&x=y"))
            .body(())
            .unwrap()
            .into_parts()
            .0
    }

    #[tokio::test]
    async fn bearer_tokens_tell_missing_wrong_and_right_apart() {
        let auth = BearerTokens::each_its_own(["alpha", "beta"]);
        assert_eq!(
            auth.authenticate(&parts(|b| b)).await,
            AuthDecision::Missing
        );
        let with = |v: &'static str| parts(move |b| b.header("authorization", v));
        assert_eq!(
            auth.authenticate(&with("Bearer nope")).await,
            AuthDecision::Invalid
        );
        assert_eq!(
            auth.authenticate(&with("Basic alpha")).await,
            AuthDecision::Invalid
        );
        assert_eq!(
            auth.authenticate(&with("bearer beta")).await,
            AuthDecision::Allow(Principal("token-2".into()))
        );
    }

    #[tokio::test]
    async fn a_denied_credential_is_a_known_caller_refused_not_an_invalid_one() {
        let bearer = BearerTokens::new().token("t1", "a").denied("t2", "b");
        assert_eq!(
            bearer
                .authenticate(&parts(|r| r.header("authorization", "Bearer t2")))
                .await,
            AuthDecision::Forbidden(Principal("b".into()))
        );
        assert_eq!(
            bearer
                .authenticate(&parts(|r| r.header("authorization", "Bearer t3")))
                .await,
            AuthDecision::Invalid
        );
        let keys = ApiKeys::new(KeyLocation::Header, "X-Api-Key").denied("k2", "b");
        assert_eq!(
            keys.authenticate(&parts(|r| r.header("x-api-key", "k2")))
                .await,
            AuthDecision::Forbidden(Principal("b".into()))
        );
    }

    #[tokio::test]
    async fn api_keys_are_read_from_header_query_or_cookie() {
        let header = ApiKeys::new(KeyLocation::Header, "X-Api-Key").key("k1", "a");
        assert_eq!(
            header
                .authenticate(&parts(|b| b.header("x-api-key", "k1")))
                .await,
            AuthDecision::Allow(Principal("a".into()))
        );
        let query = ApiKeys::new(KeyLocation::Query, "apikey").key("k 1", "b");
        assert_eq!(
            query.authenticate(&parts(|b| b)).await,
            AuthDecision::Allow(Principal("b".into()))
        );
        let cookie = ApiKeys::new(KeyLocation::Cookie, "session").key("c3", "c");
        assert_eq!(
            cookie
                .authenticate(&parts(|b| b.header("cookie", "theme=dark; session=c3")))
                .await,
            AuthDecision::Allow(Principal("c".into()))
        );
        assert_eq!(
            cookie.authenticate(&parts(|b| b)).await,
            AuthDecision::Missing
        );
    }

    /// Decides from a header alone, and declares no scheme (e.g. a gateway's).
    #[derive(Debug)]
    struct Undeclared;

    impl Authenticator for Undeclared {
        async fn authenticate(&self, _: &Parts) -> AuthDecision {
            AuthDecision::Allow(Principal("gateway".into()))
        }
        fn schemes(&self) -> Vec<(String, a2a_core::SecurityScheme)> {
            Vec::new()
        }
        fn challenge(&self) -> String {
            "Bearer".into()
        }
    }

    #[test]
    fn an_authenticator_without_schemes_puts_no_requirement_in_the_card() {
        assert_eq!(super::requirement(&Undeclared), None);
        let bearer = super::requirement(&BearerTokens::each_its_own(["a"])).expect("one");
        assert_eq!(bearer.schemes.len(), 1, "{bearer:?}");
    }
}
