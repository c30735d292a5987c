//! Discovery: fetching agent cards from `/.well-known/agent-card.json` (falling back to the
//! older `/.well-known/agent.json`), v1.0 and v0.3 alike, with an HTTP cache that honours
//! `Cache-Control: max-age` and revalidates with `ETag` / `If-None-Match`. A card is read up to
//! [`Limits::card_bytes`](crate::Limits::card_bytes), and a whole resolution (every URL tried,
//! connect, headers and body) within the resolver's timeout.

use crate::error::Context;
use crate::limits::{read_body, within};
use crate::transport::error_from_response;
use crate::{Error, Limit, Limits};
use a2a_core::AgentCard;
use reqwest::StatusCode;
use reqwest::header::{CACHE_CONTROL, ETAG, HeaderMap, IF_NONE_MATCH};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub use a2a_core::{AGENT_CARD_PATH, LEGACY_AGENT_CARD_PATH};

#[derive(Debug, Clone)]
struct Cached {
    card: AgentCard,
    url: String,
    etag: Option<String>,
    fresh_until: Option<Instant>,
    /// Which signature verified the card, when the resolver verifies.
    #[cfg(feature = "trust")]
    verified: Option<a2a_core::signing::Verified>,
}

/// What a verifying resolver trusts.
#[cfg(feature = "trust")]
#[derive(Clone, Debug)]
struct Verification {
    keys: a2a_core::signing::TrustedKeys,
    form: a2a_core::signing::Canonicalization,
}

/// How a card fetch was answered (for tests and diagnostics).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheOutcome {
    /// Fetched from the network.
    Fetched,
    /// Served from the cache without asking (still fresh).
    Fresh,
    /// Revalidated: the server answered 304 Not Modified.
    Revalidated,
}

/// Fetches and caches agent cards, per base URL.
#[derive(Debug)]
pub struct CardResolver {
    http: reqwest::Client,
    headers: HeaderMap,
    limits: Limits,
    timeout: Option<Duration>,
    cache: Mutex<HashMap<String, Cached>>,
    #[cfg(feature = "trust")]
    verification: Option<Verification>,
}

/// What a caller looks for in an agent's card.
#[derive(Clone, Debug, Default)]
#[must_use]
pub struct SkillQuery {
    skill_id: Option<String>,
    tag: Option<String>,
    input_mode: Option<String>,
    output_mode: Option<String>,
}

impl SkillQuery {
    /// Any agent.
    pub fn new() -> Self {
        Self::default()
    }

    /// A skill with this id.
    pub fn skill(mut self, id: impl Into<String>) -> Self {
        self.skill_id = Some(id.into());
        self
    }

    /// A skill with this tag.
    pub fn tag(mut self, tag: impl Into<String>) -> Self {
        self.tag = Some(tag.into());
        self
    }

    /// A skill (or card default) accepting this media type.
    pub fn input_mode(mut self, mode: impl Into<String>) -> Self {
        self.input_mode = Some(mode.into());
        self
    }

    /// A skill (or card default) producing this media type.
    pub fn output_mode(mut self, mode: impl Into<String>) -> Self {
        self.output_mode = Some(mode.into());
        self
    }

    /// Whether `card` has a skill matching every criterion.
    pub fn matches(&self, card: &AgentCard) -> bool {
        let modes_ok = |skill_modes: &[String], defaults: &[String], want: &Option<String>| {
            want.as_ref().is_none_or(|w| {
                let modes = if skill_modes.is_empty() {
                    defaults
                } else {
                    skill_modes
                };
                modes.iter().any(|m| m == w || m == "*/*")
            })
        };
        card.skills.iter().any(|s| {
            self.skill_id.as_ref().is_none_or(|id| *id == s.id)
                && self
                    .tag
                    .as_ref()
                    .is_none_or(|t| s.tags.iter().any(|x| x == t))
                && modes_ok(&s.input_modes, &card.default_input_modes, &self.input_mode)
                && modes_ok(
                    &s.output_modes,
                    &card.default_output_modes,
                    &self.output_mode,
                )
        })
    }
}

fn max_age(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(CACHE_CONTROL)?.to_str().ok()?;
    let mut age = None;
    for directive in value.split(',').map(str::trim) {
        if directive.eq_ignore_ascii_case("no-store") || directive.eq_ignore_ascii_case("no-cache")
        {
            return None;
        }
        if let Some(n) = directive.strip_prefix("max-age=") {
            age = n.trim_matches('"').parse().ok().map(Duration::from_secs);
        }
    }
    age
}

impl CardResolver {
    /// A resolver using `http`, sending `headers` with every fetch.
    pub fn new(http: reqwest::Client, headers: HeaderMap) -> Self {
        Self {
            http,
            headers,
            limits: Limits::default(),
            timeout: None,
            cache: Mutex::new(HashMap::new()),
            #[cfg(feature = "trust")]
            verification: None,
        }
    }

    /// Sends `headers` with every fetch instead of those given to [`new`](Self::new): the
    /// credentials of an agent that serves its card only to known callers.
    #[must_use]
    pub fn headers(mut self, headers: HeaderMap) -> Self {
        self.headers = headers;
        self
    }

    /// Reads cards up to `limits.card_bytes` (and error answers up to
    /// `limits.response_bytes`); the default is [`Limits::default`].
    #[must_use]
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Bounds each resolution (every URL tried, connect, headers and body together) by
    /// `timeout`; none by default (the HTTP client's own timeouts apply).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Verifies every card it fetches: at least one of its signatures must verify with one
    /// of `keys` over the card's canonical form (`form`: the spec's RFC 8785, or the official
    /// SDKs' variant for cards they signed); otherwise resolving fails with
    /// [`Error::Untrusted`]. The keys are the caller's to choose (a JWK set fetched with
    /// [`fetch_jwks`] from a URL it trusts, PEM files), never ones the card names itself.
    #[cfg(feature = "trust")]
    #[must_use]
    pub fn verify_with(
        mut self,
        keys: a2a_core::signing::TrustedKeys,
        form: a2a_core::signing::Canonicalization,
    ) -> Self {
        self.verification = Some(Verification { keys, form });
        self
    }

    /// The card and the signature that verified it (a resolver made with
    /// [`verify_with`](Self::verify_with); `Error::Config` otherwise).
    #[cfg(feature = "trust")]
    pub async fn resolve_verified(
        &self,
        base_url: &str,
    ) -> Result<(AgentCard, a2a_core::signing::Verified), Error> {
        if self.verification.is_none() {
            return Err(Error::Config(
                "resolve_verified needs a resolver made with verify_with".into(),
            ));
        }
        self.resolve(base_url).await?;
        let key = base_url.trim_end_matches('/');
        let cached = self.cache.lock().expect("card cache").get(key).cloned();
        match cached.and_then(|c| c.verified.map(|v| (c.card, v))) {
            Some(found) => Ok(found),
            None => Err(Error::Config(format!("no verified card for {base_url}"))),
        }
    }

    /// The card of the agent at `base_url` (or at a full card URL ending in `.json`).
    pub async fn resolve(&self, base_url: &str) -> Result<AgentCard, Error> {
        self.resolve_with_outcome(base_url).await.map(|(c, _)| c)
    }

    /// Like [`Self::resolve`], also saying whether the cache answered.
    pub async fn resolve_with_outcome(
        &self,
        base_url: &str,
    ) -> Result<(AgentCard, CacheOutcome), Error> {
        let what = format!("fetching the agent card of {base_url}");
        within(self.timeout, what, self.fetch(base_url)).await
    }

    async fn fetch(&self, base_url: &str) -> Result<(AgentCard, CacheOutcome), Error> {
        let key = base_url.trim_end_matches('/').to_owned();
        let cached = self.cache.lock().expect("card cache").get(&key).cloned();
        if let Some(c) = &cached
            && c.fresh_until.is_some_and(|t| Instant::now() < t)
        {
            return Ok((c.card.clone(), CacheOutcome::Fresh));
        }
        let urls = if key.ends_with(".json") {
            vec![key.clone()]
        } else if let Some(c) = &cached {
            vec![c.url.clone()]
        } else {
            vec![
                format!("{key}{AGENT_CARD_PATH}"),
                format!("{key}{LEGACY_AGENT_CARD_PATH}"),
            ]
        };
        let mut last_error = None;
        for url in urls {
            let mut request = self.http.get(&url).headers(self.headers.clone());
            if let Some(tag) = cached
                .as_ref()
                .filter(|c| c.url == url)
                .and_then(|c| c.etag.clone())
            {
                request = request.header(IF_NONE_MATCH, tag);
            }
            let response = request.send().await?;
            let fresh_until = max_age(response.headers()).map(|age| Instant::now() + age);
            if response.status() == StatusCode::NOT_MODIFIED
                && let Some(mut c) = cached.clone()
            {
                c.fresh_until = fresh_until;
                self.cache
                    .lock()
                    .expect("card cache")
                    .insert(key, c.clone());
                return Ok((c.card, CacheOutcome::Revalidated));
            }
            if response.status() == StatusCode::NOT_FOUND {
                last_error = Some(error_from_response(response, self.limits.response_bytes).await);
                continue;
            }
            if !response.status().is_success() {
                return Err(error_from_response(response, self.limits.response_bytes).await);
            }
            let etag = response
                .headers()
                .get(ETAG)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            // A body that arrives but is not JSON is the card's fault, not the connection's.
            let body = read_body(response, Limit::Card, self.limits.card_bytes).await?;
            let value: serde_json::Value = serde_json::from_slice(&body).map_err(|e| {
                Error::decode(Context::new(format!("agent card at {url} is not JSON"), e))
            })?;
            #[cfg(feature = "trust")]
            let verified = match &self.verification {
                Some(v) => Some(
                    a2a_core::signing::verify_card(&value, &v.keys, v.form).map_err(|error| {
                        Error::Untrusted {
                            url: url.clone(),
                            error,
                        }
                    })?,
                ),
                None => None,
            };
            let card = decode_card(&value).map_err(|e| match e {
                Error::Decode(e) => Error::decode(Context::new(format!("agent card at {url}"), e)),
                other => other,
            })?;
            self.cache.lock().expect("card cache").insert(
                key,
                Cached {
                    card: card.clone(),
                    url,
                    etag,
                    fresh_until,
                    #[cfg(feature = "trust")]
                    verified,
                },
            );
            return Ok((card, CacheOutcome::Fetched));
        }
        Err(last_error.unwrap_or_else(|| Error::Config(format!("no agent card at {base_url}"))))
    }

    /// Looks at each agent in turn and returns the first whose card matches `query`, with its
    /// base URL. Agents that cannot be reached are skipped.
    pub async fn find(
        &self,
        base_urls: &[&str],
        query: &SkillQuery,
    ) -> Result<(String, AgentCard), Error> {
        let mut errors = Vec::new();
        for url in base_urls {
            match self.resolve(url).await {
                Ok(card) if query.matches(&card) => return Ok(((*url).to_owned(), card)),
                Ok(_) => {}
                Err(e) => errors.push(format!("{url}: {e}")),
            }
        }
        Err(Error::NoCompatibleInterface(if errors.is_empty() {
            format!("no agent among {} has a matching skill", base_urls.len())
        } else {
            format!("no agent has a matching skill ({})", errors.join("; "))
        }))
    }
}

/// Fetches a JWK set (`{"keys": [...]}`) from `url`, a URL the caller trusts to publish an
/// agent's card keys, within `timeout` (the whole fetch) and reading at most `max_bytes` of it
/// ([`DEFAULT_MAX_JWKS_BYTES`](crate::DEFAULT_MAX_JWKS_BYTES) is a good bound;
/// [`ClientBuilder::fetch_jwks`](crate::ClientBuilder::fetch_jwks) uses its own settings).
#[cfg(feature = "trust")]
pub async fn fetch_jwks(
    http: &reqwest::Client,
    url: &str,
    timeout: Duration,
    max_bytes: usize,
) -> Result<a2a_core::signing::TrustedKeys, Error> {
    let what = format!("fetching the JWK set {url}");
    within(Some(timeout), what, read_jwks(http, url, max_bytes)).await
}

#[cfg(feature = "trust")]
async fn read_jwks(
    http: &reqwest::Client,
    url: &str,
    max_bytes: usize,
) -> Result<a2a_core::signing::TrustedKeys, Error> {
    let response = http.get(url).send().await?;
    if !response.status().is_success() {
        return Err(error_from_response(response, max_bytes).await);
    }
    let body = read_body(response, Limit::Jwks, max_bytes).await?;
    let jwks: serde_json::Value = serde_json::from_slice(&body)
        .map_err(|e| Error::decode(Context::new(format!("the JWK set at {url} is not JSON"), e)))?;
    a2a_core::signing::TrustedKeys::from_jwks(&jwks)
        .map_err(|e| Error::decode(Context::new(format!("the JWK set at {url}"), e)))
}

/// Reads an agent card as an agent serves it, in the v1.0 shape or the v0.3 one (translated),
/// as [`CardResolver`] does with the cards it fetches.
pub fn decode_card(card: &serde_json::Value) -> Result<AgentCard, Error> {
    a2a_core::v03::decode_card(card).map_err(|e| Error::Decode(Box::new(e)))
}
