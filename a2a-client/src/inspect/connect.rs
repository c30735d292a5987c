//! Connecting to an agent: its card fetched (and recorded on the wire console), read, checked
//! with `a2a check`'s card group, and its signatures verified against the keys the user gives
//! (never against keys the card names itself).

use super::api::{Failure, describe};
use super::session::{Agent, Session, now_ms};
use crate::{AGENT_CARD_PATH, Error, LEGACY_AGENT_CARD_PATH};
use a2a_core::AgentCard;
use futures::StreamExt as _;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// The largest card read.
const MAX_CARD: usize = 1 << 20;
/// How long fetching the card may take.
const CARD_TIMEOUT: Duration = Duration::from_secs(15);

/// `POST /api/connect`: `{url, jwks?: [URL], keys?: [PEM or JWK set JSON], sdkCanonicalization?}`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ConnectRequest {
    url: String,
    #[serde(default)]
    jwks: Vec<String>,
    #[serde(default)]
    keys: Vec<String>,
    #[serde(default)]
    sdk_canonicalization: bool,
}

/// The card's URL from what the user typed: a base URL, or the card's own URL.
fn card_url(url: &str) -> String {
    let url = url.trim().trim_end_matches('/');
    if url.ends_with(AGENT_CARD_PATH) || url.ends_with(LEGACY_AGENT_CARD_PATH) {
        url.to_owned()
    } else {
        format!("{url}{AGENT_CARD_PATH}")
    }
}

/// Fetches the card, recording the exchange; the card as served (JSON) or why it is not one.
async fn fetch_card(s: &Session, url: &str) -> Result<Value, Failure> {
    let parsed = reqwest::Url::parse(url)
        .map_err(|e| Failure::input(format!("{url:?} is not a URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(Failure::input(format!("{url:?} is not an http(s) URL")));
    }
    let headers = s.credentials.headers(None)?;
    let id = s.feed.next_id();
    let header_list: Vec<Value> = headers
        .iter()
        .map(|(k, v)| json!([k.as_str(), String::from_utf8_lossy(v.as_bytes())]))
        .collect();
    s.feed.wire(json!({
        "kind": "request", "id": id, "at": now_ms(), "binding": "card",
        "request": { "method": "GET", "url": url, "headers": header_list, "body": "" },
    }));
    let http = reqwest::Client::builder()
        .timeout(CARD_TIMEOUT)
        .build()
        .map_err(Error::Transport)?;
    let answer = async {
        let response = http.get(url).headers(headers).send().await?;
        let status = response.status().as_u16();
        let response_headers: Vec<Value> = response
            .headers()
            .iter()
            .map(|(k, v)| json!([k.as_str(), String::from_utf8_lossy(v.as_bytes())]))
            .collect();
        s.feed.wire(json!({
            "kind": "response", "id": id, "at": now_ms(), "status": status, "headers": response_headers,
        }));
        let mut body = Vec::new();
        let mut chunks = response.bytes_stream();
        while let Some(chunk) = chunks.next().await {
            body.extend_from_slice(&chunk?);
            if body.len() > MAX_CARD {
                return Ok((status, None));
            }
        }
        Ok::<_, reqwest::Error>((status, Some(body)))
    }
    .await;
    let (status, body) = match answer {
        Ok(a) => a,
        Err(e) => {
            let e = Error::Transport(e);
            s.feed
                .wire(json!({ "kind": "error", "id": id, "at": now_ms(), "error": e.to_string() }));
            return Err(Failure::agent(format!(
                "cannot reach {url}: {}",
                describe(&e)
            )));
        }
    };
    let Some(body) = body else {
        return Err(Failure::agent(format!(
            "GET {url}: the answer is larger than {MAX_CARD} bytes: not an agent card"
        )));
    };
    s.feed.wire(json!({
        "kind": "chunk", "id": id, "at": now_ms(), "body": String::from_utf8_lossy(&body),
    }));
    s.feed
        .wire(json!({ "kind": "end", "id": id, "at": now_ms() }));
    if status != 200 {
        return Err(Failure::agent(format!(
            "not an A2A agent: GET {url} answered HTTP {status}"
        )));
    }
    match serde_json::from_slice::<Value>(&body) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err(Failure::agent(format!(
            "not an A2A agent: GET {url} answered JSON that is not an object"
        ))),
        Err(e) => Err(Failure::agent(format!(
            "not an A2A agent: GET {url} answered something that is not JSON ({e})"
        ))),
    }
}

/// The keys the user gave to trust: JWK set URLs and pasted keys (PEM, or a JWK set in JSON).
fn sources(req: &ConnectRequest) -> crate::credentials::KeySources {
    let sources = req.jwks.iter().fold(
        Default::default(),
        |k: crate::credentials::KeySources, url| k.with_jwks_url(url),
    );
    req.keys.iter().fold(sources, |k, text| {
        k.with_key("the key given", text.as_str())
    })
}

/// The signatures' verdict: which verified and with what, or why none did.
async fn signatures(req: &ConnectRequest, raw: &Value) -> Value {
    let count = raw
        .get("signatures")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let sources = sources(req);
    if sources.is_empty() {
        return json!({ "count": count, "checked": false });
    }
    let fetch = crate::ClientBuilder::default().timeout(CARD_TIMEOUT);
    let keys = match sources.load(&fetch).await {
        Ok(k) => k,
        Err(e) => return json!({ "count": count, "checked": false, "error": describe(&e) }),
    };
    let form = if req.sdk_canonicalization {
        a2a_core::signing::Canonicalization::Sdk
    } else {
        a2a_core::signing::Canonicalization::Jcs
    };
    match a2a_core::signing::verify_card(raw, &keys, form) {
        Ok(v) => json!({
            "count": count, "checked": true, "verified": true,
            "index": v.index, "kid": v.kid, "algorithm": v.algorithm, "jku": v.jku,
        }),
        Err(e) => {
            json!({ "count": count, "checked": true, "verified": false, "error": e.to_string() })
        }
    }
}

/// The card group of `a2a check`, run on the agent: its findings.
async fn problems(s: &Session, url: &str, card: &AgentCard) -> Value {
    let options = crate::check::Options {
        only: vec![crate::check::Group::Card],
        deadline: Duration::from_secs(30),
        headers: s.credentials.headers(Some(card)).unwrap_or_default(),
        ..Default::default()
    };
    let report = crate::check::run(url, &options).await.to_json();
    report.get("findings").cloned().unwrap_or(Value::Null)
}

/// Connects the session to the agent at `req.url`: the card, its problems, its signatures.
pub(crate) async fn connect(s: &Arc<Session>, req: ConnectRequest) -> Result<Value, Failure> {
    let url = card_url(&req.url);
    let raw = fetch_card(s, &url).await?;
    let card: AgentCard = serde_json::from_value(raw.clone()).map_err(|e| {
        Failure::agent(format!(
            "the card at {url} does not parse as an A2A v1.0 AgentCard: {e}"
        ))
    })?;
    let base = req.url.trim().to_owned();
    let agent = Agent::start(
        base.clone(),
        card.clone(),
        &s.credentials,
        s.timeout,
        &s.feed,
    )
    .await?;
    let bindings: Vec<&str> = agent.clients.iter().map(|(b, _)| *b).collect();
    let (problems, signature) = tokio::join!(problems(s, &base, &card), signatures(&req, &raw));
    let answer = json!({
        "url": base,
        "cardUrl": url,
        "card": raw,
        "bindings": bindings,
        "problems": problems,
        "signature": signature,
        "webhook": s.webhook(),
    });
    *s.agent.write().await = Some(Arc::new(agent));
    Ok(answer)
}
