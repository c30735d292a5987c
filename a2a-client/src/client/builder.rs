//! [`ClientBuilder`]: the settings of a [`Client`] (time limits, retries, credentials,
//! preferred bindings), and the binding it picks from an agent's card.

use super::{Client, Inner};
use crate::auth::Interceptor;
use crate::card::CardResolver;
use crate::transport::{GrpcTransport, JsonRpcTransport, RestTransport, Transport};
use crate::{Error, Limits};
use a2a_core::{
    AgentCard, AgentInterface, BINDING_GRPC, BINDING_HTTP_JSON, BINDING_JSONRPC,
    PROTOCOL_VERSION_V03, has_generations,
};
use std::sync::Arc;
use std::time::Duration;

/// When and how often to retry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all (1 = no retry).
    pub max_attempts: u32,
    /// The first backoff; doubled each attempt, with ±50% jitter.
    pub initial_backoff: Duration,
    /// The largest backoff.
    pub max_backoff: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 4,
            initial_backoff: Duration::from_millis(200),
            max_backoff: Duration::from_secs(5),
        }
    }
}

impl RetryPolicy {
    /// No retries.
    pub fn none() -> Self {
        Self {
            max_attempts: 1,
            ..Self::default()
        }
    }

    /// The backoff before attempt `attempt` (1-based count of failures so far).
    pub fn backoff(&self, attempt: u32) -> Duration {
        let base = self
            .initial_backoff
            .saturating_mul(1u32 << attempt.saturating_sub(1).min(16))
            .min(self.max_backoff);
        // Jitter in [0.5, 1.5) from a random UUID (no extra RNG dependency).
        let r = (uuid::Uuid::new_v4().as_u128() % 1000) as f64 / 1000.0;
        base.mul_f64(0.5 + r)
    }
}

/// Which binding to prefer when the card offers several.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Binding {
    /// JSON-RPC 2.0.
    JsonRpc,
    /// HTTP+JSON (REST).
    HttpJson,
    /// gRPC (`lf.a2a.v1.A2AService`).
    Grpc,
}

impl Binding {
    fn name(self) -> &'static str {
        match self {
            Binding::JsonRpc => BINDING_JSONRPC,
            Binding::HttpJson => BINDING_HTTP_JSON,
            Binding::Grpc => BINDING_GRPC,
        }
    }
}

/// Builds a [`Client`].
#[derive(Debug, Clone)]
#[must_use]
pub struct ClientBuilder {
    timeout: Option<Duration>,
    attempt_timeout: Option<Duration>,
    connect_timeout: Duration,
    preference: Vec<Binding>,
    retry: RetryPolicy,
    interceptors: Vec<Arc<dyn Interceptor>>,
    credentials: Option<Arc<crate::ClientCredentials>>,
    http: Option<reqwest::Client>,
    pub(crate) limits: Limits,
    #[cfg(feature = "trust")]
    card_keys: Option<(
        a2a_core::signing::TrustedKeys,
        a2a_core::signing::Canonicalization,
    )>,
}

impl Default for ClientBuilder {
    fn default() -> Self {
        Self {
            timeout: None,
            attempt_timeout: None,
            connect_timeout: Duration::from_secs(10),
            preference: Vec::new(),
            retry: RetryPolicy::default(),
            interceptors: Vec::new(),
            credentials: None,
            http: None,
            limits: Limits::default(),
            #[cfg(feature = "trust")]
            card_keys: None,
        }
    }
}

impl ClientBuilder {
    /// Bounds the whole of each unary call: every attempt (connect, headers and body, not
    /// each read: an answer that trickles fails at the timeout), the access token it fetches,
    /// and the backoff between retries, all against one deadline from the call's start. A
    /// retry whose backoff would end past the deadline is not made: the call fails then. Also
    /// bounds the opening of each stream (until its answer's headers) and each card or JWK set
    /// fetch. A call that runs out of time fails with [`Error::Timeout`] naming this setter.
    /// None by default; streams are bounded by [`idle_timeout`](Self::idle_timeout) instead.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Bounds each attempt of a unary call on its own, so that an attempt that hangs is
    /// retried (as the [`retry`](Self::retry) policy says) while the call's
    /// [`timeout`](Self::timeout) leaves time. None by default: an attempt may then take all
    /// of the call's time.
    pub fn attempt_timeout(mut self, timeout: Duration) -> Self {
        self.attempt_timeout = Some(timeout);
        self
    }

    /// The connect timeout (default 10 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Bindings in order of preference (default: the card's order).
    pub fn prefer(mut self, bindings: impl IntoIterator<Item = Binding>) -> Self {
        self.preference = bindings.into_iter().collect();
        self
    }

    /// The retry policy.
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Adds an interceptor (auth, headers); they run in the order added.
    pub fn interceptor(mut self, interceptor: impl Interceptor) -> Self {
        self.interceptors.push(Arc::new(interceptor));
        self
    }

    /// Sends `Authorization: Bearer <token>`.
    pub fn bearer_token(self, token: impl Into<String>) -> Self {
        self.interceptor(crate::auth::BearerAuth::new(token))
    }

    /// Adds a header to every call.
    pub fn header(self, name: &str, value: &str) -> Result<Self, Error> {
        let mut map = reqwest::header::HeaderMap::new();
        map.insert(
            reqwest::header::HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| Error::Config(format!("invalid header name {name:?}")))?,
            reqwest::header::HeaderValue::from_str(value)
                .map_err(|_| Error::Config(format!("invalid value for header {name}")))?,
        );
        Ok(self.interceptor(crate::auth::Headers(map)))
    }

    /// Uses this HTTP client (its own timeouts and TLS settings apply).
    pub fn http_client(mut self, http: reqwest::Client) -> Self {
        self.http = Some(http);
        self
    }

    fn http(&self) -> Result<reqwest::Client, Error> {
        if let Some(h) = &self.http {
            return Ok(h.clone());
        }
        reqwest::Client::builder()
            .connect_timeout(self.connect_timeout)
            .tcp_nodelay(true)
            .user_agent(concat!("a2a-rust/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(Error::Transport)
    }

    /// Picks the interface to use: the caller's preferred binding if the card offers it, else
    /// the card's order; v1.0 interfaces before v0.3 ones of the same binding.
    pub fn select_interface<'c>(&self, card: &'c AgentCard) -> Result<&'c AgentInterface, Error> {
        let usable = |i: &&AgentInterface| {
            [BINDING_JSONRPC, BINDING_HTTP_JSON, BINDING_GRPC]
                .contains(&i.protocol_binding.as_str())
                && (i.protocol_version.starts_with("1.")
                    || i.protocol_version == "1"
                    || (i.protocol_version == PROTOCOL_VERSION_V03
                        && i.protocol_binding == BINDING_JSONRPC))
        };
        // Per binding: 1.1 (task generations) first, then 1.0, then 0.3.
        let rank = |i: &AgentInterface| -> (usize, usize) {
            let pref = self
                .preference
                .iter()
                .position(|b| b.name() == i.protocol_binding)
                .unwrap_or(self.preference.len());
            let version = if has_generations(&i.protocol_version) {
                0
            } else if i.protocol_version == PROTOCOL_VERSION_V03 {
                2
            } else {
                1
            };
            (pref, version)
        };
        card.supported_interfaces
            .iter()
            .filter(usable)
            .enumerate()
            .min_by_key(|(order, i)| (rank(i), *order))
            .map(|(_, i)| i)
            .ok_or_else(|| {
                let offered: Vec<String> = card
                    .supported_interfaces
                    .iter()
                    .map(|i| format!("{} {}", i.protocol_binding, i.protocol_version))
                    .collect();
                Error::NoCompatibleInterface(format!(
                    "the agent offers [{}]; this client speaks JSONRPC 1.x/0.3, HTTP+JSON 1.x and GRPC 1.x",
                    offered.join(", ")
                ))
            })
    }

    /// A card resolver with this builder's HTTP client, timeout and limits.
    pub fn card_resolver(&self) -> Result<CardResolver, Error> {
        let resolver = CardResolver::new(self.http()?, Default::default()).limits(self.limits);
        Ok(match self.timeout {
            Some(t) => resolver.timeout(t),
            None => resolver,
        })
    }

    /// Fetches a JWK set (the keys to trust for [`trust_card_keys`](Self::trust_card_keys))
    /// from `url`, with this builder's HTTP client, within its timeout (30 s when it has none)
    /// and [`max_jwks_bytes`](Self::max_jwks_bytes).
    #[cfg(feature = "trust")]
    pub async fn fetch_jwks(&self, url: &str) -> Result<a2a_core::signing::TrustedKeys, Error> {
        let timeout = self.timeout.unwrap_or(Duration::from_secs(30));
        crate::card::fetch_jwks(&self.http()?, url, timeout, self.limits.jwks_bytes).await
    }

    /// A client for the agent described by `card`.
    pub fn build_from_card(self, card: AgentCard) -> Result<Client, Error> {
        let interface = self.select_interface(&card)?.clone();
        let v1_1 = has_generations(&interface.protocol_version);
        let transport: Box<dyn Transport> = if interface.protocol_binding == BINDING_GRPC {
            let t =
                GrpcTransport::new(&interface.url, self.connect_timeout)?.with_limits(self.limits);
            Box::new(if v1_1 { t.v1_1() } else { t })
        } else {
            let http = self.http()?;
            let url = reqwest::Url::parse(&interface.url)
                .map_err(|e| Error::Config(format!("interface URL {:?}: {e}", interface.url)))?;
            match (
                interface.protocol_binding.as_str(),
                interface.protocol_version.as_str(),
            ) {
                (BINDING_HTTP_JSON, _) => {
                    let t = RestTransport::new(http, url).with_limits(self.limits);
                    Box::new(if v1_1 { t.v1_1() } else { t })
                }
                (_, PROTOCOL_VERSION_V03) => {
                    Box::new(JsonRpcTransport::new_v03(http, url).with_limits(self.limits))
                }
                _ => {
                    let t = JsonRpcTransport::new(http, url).with_limits(self.limits);
                    Box::new(if v1_1 { t.v1_1() } else { t })
                }
            }
        };
        let streaming = card.capabilities.streaming();
        let peer = crate::telemetry::Peer::of(&interface.url);
        Ok(self.finish(transport, peer, Some(card), interface.tenant, streaming))
    }

    /// Sends an OAuth 2.0 access token got with client credentials on every call (fetched
    /// when first needed, replaced before it expires, and once more when the agent answers
    /// 401).
    pub fn client_credentials(mut self, credentials: crate::ClientCredentials) -> Self {
        self.credentials = Some(Arc::new(credentials));
        self
    }

    /// [`connect`](Self::connect) only to an agent whose card is signed by one of `keys`
    /// (see [`CardResolver::verify_with`]); any other fails with [`Error::Untrusted`].
    #[cfg(feature = "trust")]
    pub fn trust_card_keys(
        mut self,
        keys: a2a_core::signing::TrustedKeys,
        form: a2a_core::signing::Canonicalization,
    ) -> Self {
        self.card_keys = Some((keys, form));
        self
    }

    /// Discovers the agent's card at `base_url` and builds a client for it.
    pub async fn connect(self, base_url: &str) -> Result<Client, Error> {
        let resolver = self.card_resolver()?;
        #[cfg(feature = "trust")]
        let resolver = match &self.card_keys {
            Some((keys, form)) => resolver.verify_with(keys.clone(), *form),
            None => resolver,
        };
        let card = resolver.resolve(base_url).await?;
        self.build_from_card(card)
    }

    /// A client for a known JSON-RPC v1.0 endpoint, without a card (streaming assumed).
    pub fn build_jsonrpc(self, url: &str) -> Result<Client, Error> {
        let peer = crate::telemetry::Peer::of(url);
        let url = reqwest::Url::parse(url).map_err(|e| Error::Config(format!("{url:?}: {e}")))?;
        let t = Box::new(JsonRpcTransport::new(self.http()?, url).with_limits(self.limits));
        Ok(self.finish(t, peer, None, None, true))
    }

    /// A client for a known HTTP+JSON v1.0 base URL, without a card (streaming assumed).
    pub fn build_rest(self, url: &str) -> Result<Client, Error> {
        let peer = crate::telemetry::Peer::of(url);
        let url = reqwest::Url::parse(url).map_err(|e| Error::Config(format!("{url:?}: {e}")))?;
        let t = Box::new(RestTransport::new(self.http()?, url).with_limits(self.limits));
        Ok(self.finish(t, peer, None, None, true))
    }

    /// A client for a known gRPC v1.0 endpoint (`host:port`, `http://…` or `https://…`, as
    /// [`GrpcTransport::new`] reads it), without a card (streaming assumed).
    pub fn build_grpc(self, url: &str) -> Result<Client, Error> {
        let t = Box::new(GrpcTransport::new(url, self.connect_timeout)?.with_limits(self.limits));
        Ok(self.finish(t, crate::telemetry::Peer::of(url), None, None, true))
    }

    fn finish(
        self,
        transport: Box<dyn Transport>,
        peer: crate::telemetry::Peer,
        card: Option<AgentCard>,
        tenant: Option<String>,
        streaming: bool,
    ) -> Client {
        Client {
            inner: Arc::new(Inner {
                transport,
                peer,
                card,
                tenant,
                streaming,
                timeout: self.timeout,
                attempt_timeout: self.attempt_timeout,
                retry: self.retry,
                interceptors: self.interceptors,
                credentials: self.credentials,
            }),
        }
    }
}
