//! The card group: where the card is served, what it holds, how it is cached.

use super::catalog::*;
use super::wire::{Call, HttpAnswer};
use super::{Run, Verdict};
use crate::{AGENT_CARD_PATH, LEGACY_AGENT_CARD_PATH};
use a2a_core::AgentCard;
use serde_json::Value;

/// What the rest of the run needs from the card.
#[derive(Debug)]
pub(super) struct CardInfo {
    /// The card as served.
    pub(super) value: Value,
    /// The v1.0 interfaces the checker speaks, first of each binding: (binding, URL, tenant).
    pub(super) interfaces: Vec<(&'static str, String, Option<String>)>,
    /// The interfaces declared with protocol version 1.1 or later (task generations), first of
    /// each binding: (binding, URL, tenant).
    pub(super) generations: Vec<(&'static str, String, Option<String>)>,
}

/// The card's URL and the site's base, from what the user typed: a base URL, or the card's
/// own URL.
fn locations(url: &str) -> (String, String) {
    let url = url.trim_end_matches('/');
    for path in [AGENT_CARD_PATH, LEGACY_AGENT_CARD_PATH] {
        if let Some(base) = url.strip_suffix(path) {
            return (url.to_owned(), base.to_owned());
        }
    }
    (format!("{url}{AGENT_CARD_PATH}"), url.to_owned())
}

/// Runs the card group. `None` when there is no card to go on.
pub(super) async fn check(run: &Run, url: &str) -> Option<CardInfo> {
    let (card_url, base) = locations(url);
    let get = |url: &str| run.probe.http.get(url);
    let answer = match run.probe.send(get(&card_url), Call::default()).await {
        Ok(a) => a,
        Err((text, exchange)) => {
            run.record(CARD_FETCH, None, Verdict::Fail, text, Some(&exchange));
            return None;
        }
    };
    let value = match answer.json() {
        Some(v @ Value::Object(_)) if answer.status == 200 => v,
        _ => {
            let detail = format!(
                "GET {card_url} answered HTTP {} with {}",
                answer.status,
                if answer.json().is_some() {
                    "JSON that is not an object"
                } else {
                    "a body that is not JSON"
                }
            );
            run.record(
                CARD_FETCH,
                None,
                Verdict::Fail,
                detail,
                Some(&answer.exchange),
            );
            return None;
        }
    };
    run.record(CARD_FETCH, None, Verdict::Pass, "", Some(&answer.exchange));
    let media = answer.media_type();
    run.record(
        CARD_MEDIA_TYPE,
        None,
        verdict(media == "application/json"),
        format!("Content-Type is {media:?}"),
        Some(&answer.exchange),
    );

    let missing = missing_required(&value);
    run.record(
        CARD_REQUIRED,
        None,
        verdict(missing.is_empty()),
        format!("missing or empty: {}", missing.join(", ")),
        Some(&answer.exchange),
    );
    let problems = model_problems(&value);
    run.record(
        CARD_MODEL,
        None,
        verdict(problems.is_empty()),
        problems.join("; "),
        Some(&answer.exchange),
    );

    caching(run, &card_url, &answer).await;
    if run.wants(super::Group::Card) {
        let legacy = format!("{base}{LEGACY_AGENT_CARD_PATH}");
        match run.probe.send(get(&legacy), Call::default()).await {
            Ok(a) => run.record(
                CARD_LEGACY_PATH,
                None,
                verdict(a.status == 200 && a.json().is_some_and(|v| v.is_object())),
                format!("GET {legacy} answered HTTP {}", a.status),
                Some(&a.exchange),
            ),
            Err((text, exchange)) => {
                run.record(CARD_LEGACY_PATH, None, Verdict::Fail, text, Some(&exchange));
            }
        }
        v03_shape(run, &card_url, &value).await;
    }

    let mut interfaces: Vec<(&'static str, String, Option<String>)> = Vec::new();
    let mut generations: Vec<(&'static str, String, Option<String>)> = Vec::new();
    for i in value["supportedInterfaces"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let binding = match i["protocolBinding"].as_str() {
            Some(a2a_core::BINDING_JSONRPC) => a2a_core::BINDING_JSONRPC,
            Some(a2a_core::BINDING_HTTP_JSON) => a2a_core::BINDING_HTTP_JSON,
            Some(a2a_core::BINDING_GRPC) => a2a_core::BINDING_GRPC,
            _ => continue,
        };
        let version = i["protocolVersion"].as_str().unwrap_or_default();
        let tenant = i["tenant"].as_str().filter(|t| !t.is_empty());
        let entry = || {
            (
                binding,
                i["url"].as_str().unwrap_or_default().to_owned(),
                tenant.map(str::to_owned),
            )
        };
        let v1 = version == "1.0" || version.starts_with("1.");
        if v1 && !interfaces.iter().any(|(b, ..)| *b == binding) {
            interfaces.push(entry());
        }
        if a2a_core::has_generations(version) && !generations.iter().any(|(b, ..)| *b == binding) {
            generations.push(entry());
        }
    }
    let any_v1 = value["supportedInterfaces"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|i| {
            i["protocolVersion"]
                .as_str()
                .is_some_and(|v| v.starts_with("1."))
        });
    run.record(
        CARD_V1,
        None,
        verdict(any_v1),
        "no interface with protocolVersion 1.0: nothing to check beyond the card",
        Some(&answer.exchange),
    );
    Some(CardInfo {
        value,
        interfaces,
        generations,
    })
}

pub(super) fn verdict(ok: bool) -> Verdict {
    if ok { Verdict::Pass } else { Verdict::Fail }
}

async fn caching(run: &Run, card_url: &str, answer: &HttpAnswer) {
    let cache = answer.header("cache-control").unwrap_or("");
    run.record(
        CARD_CACHE_CONTROL,
        None,
        verdict(cache.contains("max-age")),
        format!("Cache-Control is {cache:?}"),
        Some(&answer.exchange),
    );
    let Some(etag) = answer.header("etag").map(str::to_owned) else {
        run.record(
            CARD_ETAG,
            None,
            Verdict::Fail,
            "no ETag",
            Some(&answer.exchange),
        );
        run.record(
            CARD_CONDITIONAL,
            None,
            Verdict::Skip,
            "the card has no ETag to send back",
            None,
        );
        return;
    };
    run.record(CARD_ETAG, None, Verdict::Pass, "", Some(&answer.exchange));
    if !run.wants(super::Group::Card) {
        return;
    }
    let request = run.probe.http.get(card_url).header("If-None-Match", &etag);
    match run.probe.send(request, Call::default()).await {
        Ok(a) => run.record(
            CARD_CONDITIONAL,
            None,
            verdict(a.status == 304),
            format!("If-None-Match: {etag} answered HTTP {}", a.status),
            Some(&a.exchange),
        ),
        Err((text, exchange)) => {
            run.record(CARD_CONDITIONAL, None, Verdict::Fail, text, Some(&exchange));
        }
    }
}

/// A card that declares a v0.3 interface should be readable by v0.3 clients: asked with
/// `A2A-Version: 0.3`, it comes in the v0.3 shape (`url` and `protocolVersion` at the top).
async fn v03_shape(run: &Run, card_url: &str, card: &Value) {
    let declares_v03 = card["supportedInterfaces"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|i| {
            i["protocolVersion"]
                .as_str()
                .is_some_and(|v| v.starts_with("0."))
        });
    if !declares_v03 {
        run.record(
            CARD_V03_SHAPE,
            None,
            Verdict::Skip,
            "no v0.3 interface declared",
            None,
        );
        return;
    }
    let call = Call {
        version: Some("0.3"),
        ..Call::default()
    };
    match run.probe.send(run.probe.http.get(card_url), call).await {
        Ok(a) => {
            let v = a.json().unwrap_or_default();
            let ok = v["url"].is_string() && v["protocolVersion"].is_string();
            run.record(
                CARD_V03_SHAPE,
                None,
                verdict(ok),
                "the card asked for with A2A-Version: 0.3 has no top-level `url` and `protocolVersion`",
                Some(&a.exchange),
            );
        }
        Err((text, exchange)) => {
            run.record(CARD_V03_SHAPE, None, Verdict::Fail, text, Some(&exchange))
        }
    }
}

/// The REQUIRED fields (proto `field_behavior = REQUIRED`) that are absent or empty.
fn missing_required(card: &Value) -> Vec<String> {
    let mut missing = Vec::new();
    let mut need = |v: &Value, at: &str, fields: &[&str]| {
        for field in fields {
            let empty = match v.get(*field) {
                None | Some(Value::Null) => true,
                Some(Value::String(s)) => s.is_empty(),
                Some(Value::Array(a)) => a.is_empty(),
                Some(Value::Object(_)) => false,
                Some(_) => false,
            };
            if empty {
                missing.push(format!("{at}{field}"));
            }
        }
    };
    need(
        card,
        "",
        &[
            "name",
            "description",
            "supportedInterfaces",
            "version",
            "capabilities",
            "defaultInputModes",
            "defaultOutputModes",
            "skills",
        ],
    );
    for (n, i) in card["supportedInterfaces"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        need(
            i,
            &format!("supportedInterfaces[{n}]."),
            &["url", "protocolBinding", "protocolVersion"],
        );
    }
    for (n, s) in card["skills"].as_array().into_iter().flatten().enumerate() {
        need(
            s,
            &format!("skills[{n}]."),
            &["id", "name", "description", "tags"],
        );
    }
    if let Some(p) = card.get("provider").filter(|p| !p.is_null()) {
        need(p, "provider.", &["url", "organization"]);
    }
    missing
}

/// What keeps the card from reading as the v1.0 model.
fn model_problems(card: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let parsed = match a2a_core::strict::from_value::<AgentCard>(card) {
        Ok(c) => c,
        Err(e) => return vec![format!("does not read as an AgentCard: {e}")],
    };
    let absolute =
        |u: &str| reqwest::Url::parse(u).is_ok_and(|u| matches!(u.scheme(), "http" | "https"));
    for (n, i) in parsed.supported_interfaces.iter().enumerate() {
        let ok = match i.protocol_binding.as_str() {
            // gRPC interfaces may be written `host:port`.
            a2a_core::BINDING_GRPC => absolute(&i.url) || i.url.rsplit_once(':').is_some(),
            _ => absolute(&i.url),
        };
        if !ok {
            problems.push(format!(
                "supportedInterfaces[{n}].url {:?} is not an absolute http(s) URL",
                i.url
            ));
        }
    }
    let urls = [
        ("documentationUrl", parsed.documentation_url.as_deref()),
        ("iconUrl", parsed.icon_url.as_deref()),
        (
            "provider.url",
            parsed.provider.as_ref().map(|p| p.url.as_str()),
        ),
    ];
    for (field, url) in urls {
        if let Some(url) = url.filter(|u| !u.is_empty() && !absolute(u)) {
            problems.push(format!("{field} {url:?} is not an absolute http(s) URL"));
        }
    }
    for requirement in &parsed.security_requirements {
        for name in requirement.schemes.keys() {
            if !parsed.security_schemes.contains_key(name) {
                problems.push(format!(
                    "securityRequirements names {name:?}, which securitySchemes does not declare"
                ));
            }
        }
    }
    for (name, scheme) in card["securitySchemes"].as_object().into_iter().flatten() {
        if scheme.as_object().is_none_or(|o| o.len() != 1) {
            problems.push(format!(
                "securitySchemes.{name} must hold exactly one scheme member"
            ));
        }
    }
    problems
}
