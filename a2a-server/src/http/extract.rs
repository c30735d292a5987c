//! What every binding reads from an HTTP request: the body (with a size limit), the service
//! parameters (`A2A-Version`, `A2A-Extensions`) and the caller; and the activated extensions
//! it answers with.

use super::AppState;
use crate::agent::ServiceParams;
use crate::auth::Principal;
use crate::handler::{CallContext, Version};
use a2a_core::{Error, ErrorKind};
use axum::body::Body;
use axum::http::{Extensions, HeaderMap, HeaderName, HeaderValue};
use axum::response::Response;
use bytes::Bytes;
use http_body_util::{BodyExt as _, LengthLimitError, Limited};

/// Reads the whole body, refusing more than `limit` bytes with PayloadTooLarge (HTTP 413): at
/// once when the declared `content-length` is over it, else as soon as the bytes received
/// pass it (`http_body_util::Limited`), so no more than `limit` bytes are ever buffered.
pub(crate) async fn read_body(
    headers: &HeaderMap,
    body: Body,
    limit: usize,
) -> Result<Bytes, Error> {
    let too_large = || {
        Error::new(
            ErrorKind::PayloadTooLarge,
            format!("Request body too large: the limit is {limit} bytes"),
        )
    };
    let declared = headers
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    match Limited::new(body, limit).collect().await {
        // One frame (the usual case) is returned as it is, without a copy.
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<LengthLimitError>() => Err(too_large()),
        Err(e) => Err(Error::new(
            ErrorKind::InvalidRequest,
            format!("Could not read the request body: {e}"),
        )),
    }
}

/// The request headers read here, named once.
const A2A_VERSION: HeaderName = HeaderName::from_static("a2a-version");
const A2A_EXTENSIONS: [HeaderName; 2] = [
    HeaderName::from_static("a2a-extensions"),
    HeaderName::from_static("x-a2a-extensions"),
];
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

fn query_param<'a>(query: Option<&'a str>, name: &str) -> Option<&'a str> {
    query?
        .split('&')
        .filter_map(|kv| kv.split_once('=').or(Some((kv, ""))))
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v)
}

/// Reads the service parameters and the requested version ([`negotiate`]).
pub(crate) fn call_context(headers: &HeaderMap, query: Option<&str>) -> Result<CallContext, Error> {
    // One pass over the headers: a request has a handful, and comparing their names costs less
    // than hashing the four looked for.
    let mut header = None;
    let mut extensions = Vec::new();
    let mut last_event_id = None;
    for (name, value) in headers {
        if *name == A2A_VERSION {
            header.get_or_insert(value);
        } else if A2A_EXTENSIONS.contains(name) {
            if let Ok(v) = value.to_str() {
                extensions.extend(
                    v.split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(str::to_owned),
                );
            }
        } else if *name == LAST_EVENT_ID {
            last_event_id.get_or_insert(value);
        }
    }
    // A header value with bytes outside visible ASCII is a version too (an unsupported one),
    // not an absent header.
    let header = header.map(|v| String::from_utf8_lossy(v.as_bytes()));
    let version = header
        .as_deref()
        .or_else(|| query_param(query, "A2A-Version"))
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned);
    let negotiated = negotiate(version.as_deref())?;
    // `Last-Event-ID` resumes a stream (our resumable-streams extension); a value that is not a
    // sequence number this server issued is ignored, as SSE servers do.
    let last_event_id = last_event_id
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let mut cx = CallContext::new(Default::default(), ServiceParams::new(version, extensions))
        .with_last_event_id(last_event_id);
    cx.version = negotiated;
    Ok(cx)
}

/// The one decision of a request's protocol version, from its `A2A-Version` (header, or query
/// parameter): none means 0.3 (spec §3.6.2), `0.3` and any `1.x` are served, anything else is
/// VersionNotSupported. The JSON-RPC binding serves each version's own method names; HTTP+JSON
/// and gRPC have only the 1.0 shapes (v0.3 had no such routes here), so they serve a request
/// without a version by its path or service as 1.0.
pub(crate) fn negotiate(requested: Option<&str>) -> Result<Version, Error> {
    let Some(v) = requested else {
        return Ok(Version::V03);
    };
    // `Major.Minor`; a patch number, which clients must not send, is ignored.
    let mut parts = v.split('.');
    match (parts.next(), parts.next()) {
        (Some("1"), None) => Ok(Version::V1),
        (Some("1"), Some(minor))
            if !minor.is_empty() && minor.chars().all(|c| c.is_ascii_digit()) =>
        {
            Ok(Version::V1)
        }
        (Some("0"), Some("3")) => Ok(Version::V03),
        _ => Err(Error::new(
            ErrorKind::VersionNotSupported,
            format!("A2A-Version {v} is not supported; this server speaks 1.1, 1.0 and 0.3"),
        )
        .with_metadata("requestedVersion", v)),
    }
}

/// A call's context: its service parameters and version ([`call_context`]) and its caller (the
/// [`Principal`] the authentication layer recorded in the request's `extensions`), with the
/// extensions it activates (for [`with_extensions`]).
pub(crate) fn context(
    state: &AppState,
    headers: &HeaderMap,
    extensions: &Extensions,
    query: Option<&str>,
) -> Result<(CallContext, Vec<String>), Error> {
    let mut cx = call_context(headers, query)?;
    cx.scope.owner = extensions.get::<Principal>().map(|p| p.0.clone());
    let active = state.handler.activated_extensions(&cx)?;
    Ok((cx, active))
}

/// `response` with the `A2A-Extensions` header listing the activated extensions, if any.
pub(crate) fn with_extensions(mut response: Response, active: &[String]) -> Response {
    if !active.is_empty()
        && let Ok(v) = HeaderValue::from_str(&active.join(", "))
    {
        response.headers_mut().insert("a2a-extensions", v);
    }
    response
}

/// Scopes the call to the tenant a request names (an empty one names none).
pub(crate) fn scope_to_tenant(request: &impl a2a_core::HasTenant, cx: &mut CallContext) {
    if let Some(tenant) = request.tenant().filter(|t| !t.is_empty()) {
        cx.scope.tenant = Some(tenant.to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::negotiate;
    use crate::handler::Version;

    #[test]
    fn the_version_of_a_request_is_its_header_and_none_means_0_3() {
        for (asked, version) in [
            (None, Version::V03),
            (Some("0.3"), Version::V03),
            (Some("1"), Version::V1),
            (Some("1.0"), Version::V1),
            (Some("1.7"), Version::V1),
            (Some("1.0.2"), Version::V1),
        ] {
            assert_eq!(negotiate(asked).ok(), Some(version), "{asked:?}");
        }
        for asked in ["2.0", "0.2", "1.x", "1.", "99.0", "one"] {
            let error = negotiate(Some(asked)).expect_err(asked);
            assert!(
                error.is(a2a_core::ErrorKind::VersionNotSupported),
                "{asked}"
            );
        }
    }
}
