//! The issuer's documents (the discovery document and the JWK set), fetched with their size
//! bounded: an issuer, or whoever answers at its address, cannot make the agent hold more than
//! [`JwtBearer::max_fetch_bytes`](super::JwtBearer::max_fetch_bytes) of its answer. The time a
//! fetch takes is bounded by the caller, around the whole fetch (connect, headers and body).

use serde_json::Value;

/// The default largest answer read from the issuer, discovery document or JWK set: 1 MiB.
/// Real ones are a few KiB (a JWK of a 4096-bit RSA key is under 1 KiB of JSON), so this leaves
/// room for hundreds of keys while a hostile answer costs the agent at most this much memory.
pub const DEFAULT_MAX_FETCH_BYTES: usize = 1 << 20;

/// The default time a whole fetch of the issuer's documents may take (connect, headers and
/// body, the discovery document and the key set together): 5 s.
pub const DEFAULT_FETCH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Why the issuer's key set could not be had (logged; the caller of a refused token is told
/// only that the key set is unavailable).
#[derive(Debug, thiserror::Error)]
pub(super) enum FetchError {
    /// Connecting, sending or reading failed.
    #[error("{url}: {source}")]
    Transport {
        url: String,
        #[source]
        source: reqwest::Error,
    },
    /// Not a success status.
    #[error("{url} answered {status}")]
    Status {
        url: String,
        status: reqwest::StatusCode,
    },
    /// The answer declares, or has sent, more than the limit.
    #[error(
        "{url} answered more than the limit of {limit} bytes \
         (raise it with JwtBearer::max_fetch_bytes)"
    )]
    TooLarge { url: String, limit: usize },
    /// The answer is not JSON.
    #[error("{url} did not answer JSON: {source}")]
    NotJson {
        url: String,
        #[source]
        source: serde_json::Error,
    },
    /// The discovery document names another issuer than the one configured.
    #[error("the discovery document {url} names another issuer")]
    OtherIssuer { url: String },
    /// The discovery document has no `jwks_uri`, or the key set no `keys` list.
    #[error("{url} lacks {field:?}")]
    Missing { url: String, field: &'static str },
}

/// `url`'s answer as JSON, refused once it is over `limit` bytes: at once when its
/// `Content-Length` says so, otherwise as soon as the chunks read add up to more (what was
/// read is dropped with the connection, so the agent never holds more than about `limit`).
pub(super) async fn get_json(
    http: &reqwest::Client,
    url: &str,
    limit: usize,
) -> Result<Value, FetchError> {
    let transport = |source| FetchError::Transport {
        url: url.to_owned(),
        source,
    };
    let too_large = || FetchError::TooLarge {
        url: url.to_owned(),
        limit,
    };
    let mut response = http.get(url).send().await.map_err(transport)?;
    let status = response.status();
    if !status.is_success() {
        return Err(FetchError::Status {
            url: url.to_owned(),
            status,
        });
    }
    let declared = response.content_length();
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    // The declared length is at most `limit` here, so the reservation is bounded too.
    let mut body = Vec::with_capacity(declared.and_then(|n| usize::try_from(n).ok()).unwrap_or(0));
    while let Some(chunk) = response.chunk().await.map_err(transport)? {
        if body.len() + chunk.len() > limit {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&body).map_err(|source| FetchError::NotJson {
        url: url.to_owned(),
        source,
    })
}
