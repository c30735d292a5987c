//! How a finding shows an exchange: the request (credentials redacted) and the answer, each
//! clipped to a readable length, and errors with their causes.

use super::SHOWN;
use reqwest::header::{HeaderMap, HeaderName};
use std::fmt::Write as _;

/// An error with its causes: reqwest's own text alone hides the cause.
pub(super) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let _ = write!(s, ": {cause}");
        source = cause.source();
    }
    s
}

pub(in crate::check) fn clip(s: &str, n: usize) -> String {
    if s.len() <= n {
        return s.to_owned();
    }
    let mut end = n;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &s[..end], s.len())
}

pub(super) fn describe_request(request: &reqwest::Request) -> String {
    let mut s = format!("{} {}\n", request.method(), request.url());
    for (name, value) in request.headers() {
        let shown = if is_secret(name) {
            "<redacted>"
        } else {
            value.to_str().unwrap_or("<binary>")
        };
        let _ = writeln!(s, "{name}: {shown}");
    }
    if let Some(body) = request.body().and_then(|b| b.as_bytes()) {
        let _ = write!(s, "\n{}", clip(&String::from_utf8_lossy(body), SHOWN));
    }
    s
}

fn is_secret(name: &HeaderName) -> bool {
    let n = name.as_str();
    n == "authorization" || n == "cookie" || n.contains("key") || n.contains("token")
}

pub(super) fn describe_response(status: u16, headers: &HeaderMap, body: &[u8]) -> String {
    let mut s = format!("HTTP {status}\n");
    for name in [
        "content-type",
        "cache-control",
        "etag",
        "www-authenticate",
        "a2a-version",
    ] {
        if let Some(v) = headers.get(name).and_then(|v| v.to_str().ok()) {
            let _ = writeln!(s, "{name}: {v}");
        }
    }
    let _ = write!(s, "\n{}", clip(&String::from_utf8_lossy(body), SHOWN));
    s
}
