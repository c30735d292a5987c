//! Agent cards across the generations: the pure v0.3 card, the hybrid card served to both, and
//! reading either.

use super::{Obj, obj, put};
use crate::agent_card::*;
use crate::error::Error;
use serde_json::{Value, json};

fn encode_scheme(s: &SecurityScheme) -> Value {
    let desc = |d: &Option<String>, mut o: Obj| {
        put(&mut o, "description", d.clone());
        Value::Object(o)
    };
    match s {
        SecurityScheme::ApiKeySecurityScheme(k) => desc(
            &k.description,
            obj_of(json!({"type": "apiKey", "in": k.location, "name": k.name})),
        ),
        SecurityScheme::HttpAuthSecurityScheme(h) => {
            let mut o = obj_of(json!({"type": "http", "scheme": h.scheme}));
            put(&mut o, "bearerFormat", h.bearer_format.clone());
            desc(&h.description, o)
        }
        SecurityScheme::Oauth2SecurityScheme(oa) => {
            let mut o = obj_of(json!({"type": "oauth2", "flows": encode_flows(&oa.flows)}));
            put(&mut o, "oauth2MetadataUrl", oa.oauth2_metadata_url.clone());
            desc(&oa.description, o)
        }
        SecurityScheme::OpenIdConnectSecurityScheme(oi) => desc(
            &oi.description,
            obj_of(json!({"type": "openIdConnect", "openIdConnectUrl": oi.open_id_connect_url})),
        ),
        SecurityScheme::MtlsSecurityScheme(m) => {
            desc(&m.description, obj_of(json!({"type": "mutualTLS"})))
        }
    }
}

/// Whether v0.3 can express the scheme (it has no device-code flow).
fn has_v03_form(s: &SecurityScheme) -> bool {
    !matches!(
        s,
        SecurityScheme::Oauth2SecurityScheme(OAuth2SecurityScheme {
            flows: OAuthFlows::DeviceCode(_),
            ..
        })
    )
}

fn obj_of(v: Value) -> Obj {
    match v {
        Value::Object(o) => o,
        _ => Obj::new(),
    }
}

fn encode_flows(f: &OAuthFlows) -> Value {
    let flow = |auth: Option<&String>,
                token: Option<&String>,
                refresh: &Option<String>,
                scopes: &Scopes| {
        let mut o = Obj::new();
        put(&mut o, "authorizationUrl", auth.cloned());
        put(&mut o, "tokenUrl", token.cloned());
        put(&mut o, "refreshUrl", refresh.clone());
        o.insert("scopes".into(), json!(scopes));
        Value::Object(o)
    };
    match f {
        OAuthFlows::AuthorizationCode(a) => json!({"authorizationCode": flow(
            Some(&a.authorization_url), Some(&a.token_url), &a.refresh_url, &a.scopes)}),
        OAuthFlows::ClientCredentials(c) => {
            json!({"clientCredentials": flow(None, Some(&c.token_url), &c.refresh_url, &c.scopes)})
        }
        OAuthFlows::Implicit(i) => json!({"implicit": flow(
            i.authorization_url.as_ref(), None, &i.refresh_url, &i.scopes)}),
        OAuthFlows::Password(p) => {
            json!({"password": flow(None, p.token_url.as_ref(), &p.refresh_url, &p.scopes)})
        }
        // v0.3 has no device-code flow.
        OAuthFlows::DeviceCode(_) => json!({}),
    }
}

fn scopes_of(o: &Obj) -> Scopes {
    o.get("scopes")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
                .collect()
        })
        .unwrap_or_default()
}

fn s(o: &Obj, k: &str) -> Option<String> {
    o.get(k)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// Reads a v0.3 OpenAPI-style security scheme (`{"type": "apiKey", "in", "name"}`, …).
pub fn decode_scheme(v: &Value) -> Option<SecurityScheme> {
    let o = v.as_object()?;
    let description = s(o, "description");
    Some(match o.get("type")?.as_str()? {
        "apiKey" => SecurityScheme::ApiKeySecurityScheme(ApiKeySecurityScheme {
            description,
            location: s(o, "in").unwrap_or_default(),
            name: s(o, "name").unwrap_or_default(),
        }),
        "http" => SecurityScheme::HttpAuthSecurityScheme(HttpAuthSecurityScheme {
            description,
            scheme: s(o, "scheme").unwrap_or_default(),
            bearer_format: s(o, "bearerFormat"),
        }),
        "oauth2" => {
            let flows = o.get("flows").and_then(Value::as_object)?;
            let pick = |k: &str| flows.get(k).and_then(Value::as_object);
            let flow = if let Some(f) = pick("authorizationCode") {
                OAuthFlows::AuthorizationCode(AuthorizationCodeOAuthFlow {
                    authorization_url: s(f, "authorizationUrl").unwrap_or_default(),
                    token_url: s(f, "tokenUrl").unwrap_or_default(),
                    refresh_url: s(f, "refreshUrl"),
                    scopes: scopes_of(f),
                    pkce_required: false,
                })
            } else if let Some(f) = pick("clientCredentials") {
                OAuthFlows::ClientCredentials(ClientCredentialsOAuthFlow {
                    token_url: s(f, "tokenUrl").unwrap_or_default(),
                    refresh_url: s(f, "refreshUrl"),
                    scopes: scopes_of(f),
                })
            } else if let Some(f) = pick("implicit") {
                OAuthFlows::Implicit(ImplicitOAuthFlow {
                    authorization_url: s(f, "authorizationUrl"),
                    refresh_url: s(f, "refreshUrl"),
                    scopes: scopes_of(f),
                })
            } else if let Some(f) = pick("password") {
                OAuthFlows::Password(PasswordOAuthFlow {
                    token_url: s(f, "tokenUrl"),
                    refresh_url: s(f, "refreshUrl"),
                    scopes: scopes_of(f),
                })
            } else {
                return None;
            };
            SecurityScheme::Oauth2SecurityScheme(OAuth2SecurityScheme {
                description,
                flows: flow,
                oauth2_metadata_url: s(o, "oauth2MetadataUrl"),
            })
        }
        "openIdConnect" => {
            SecurityScheme::OpenIdConnectSecurityScheme(OpenIdConnectSecurityScheme {
                description,
                open_id_connect_url: s(o, "openIdConnectUrl").unwrap_or_default(),
            })
        }
        "mutualTLS" => SecurityScheme::MtlsSecurityScheme(MutualTlsSecurityScheme { description }),
        _ => return None,
    })
}

fn encode_requirements(reqs: &[SecurityRequirement]) -> Value {
    reqs.iter()
        .map(|r| {
            let m = r
                .schemes
                .iter()
                .map(|(k, v)| (k.clone(), json!(v.list)))
                .collect::<Obj>();
            Value::Object(m)
        })
        .collect::<Vec<Value>>()
        .into()
}

fn decode_requirements(v: Option<&Value>) -> Vec<SecurityRequirement> {
    v.and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_object)
                .map(|m| SecurityRequirement {
                    schemes: m
                        .iter()
                        .map(|(k, v)| {
                            let list = v
                                .as_array()
                                .map(|a| {
                                    a.iter()
                                        .filter_map(Value::as_str)
                                        .map(str::to_owned)
                                        .collect()
                                })
                                .unwrap_or_default();
                            (k.clone(), StringList { list })
                        })
                        .collect(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The interfaces a v0.3 card can name: those with a URL and a binding. (A v0.3 reader skips an
/// interface without them, so writing one made a card that did not read back the same; found
/// by the fuzz suite.)
fn v03_interfaces(card: &AgentCard) -> impl Iterator<Item = &AgentInterface> {
    card.supported_interfaces
        .iter()
        .filter(|i| !i.url.is_empty() && !i.protocol_binding.is_empty())
}

/// The interface v0.3 clients should use: the first one of protocol version 0.3, else the first.
fn primary_interface(card: &AgentCard) -> Option<&AgentInterface> {
    v03_interfaces(card)
        .find(|i| i.protocol_version == PROTOCOL_VERSION_V03)
        .or_else(|| v03_interfaces(card).next())
}

/// The v0.3-only top-level keys of a card, and the v0.3 form of its schemes and skills.
fn v03_card_keys(card: &AgentCard) -> Obj {
    let mut o = Obj::new();
    o.insert("protocolVersion".into(), PROTOCOL_VERSION_V03.into());
    if let Some(i) = primary_interface(card) {
        o.insert("url".into(), i.url.clone().into());
        o.insert(
            "preferredTransport".into(),
            i.protocol_binding.clone().into(),
        );
    }
    let has_v03 = v03_interfaces(card).any(|i| i.protocol_version == PROTOCOL_VERSION_V03);
    let additional: Vec<Value> = v03_interfaces(card)
        // Only interfaces that speak v0.3 (all of them if none is marked 0.3).
        .filter(|i| i.protocol_version == PROTOCOL_VERSION_V03 || !has_v03)
        .map(|i| json!({"url": i.url, "transport": i.protocol_binding}))
        .collect();
    if !additional.is_empty() {
        o.insert("additionalInterfaces".into(), additional.into());
    }
    if card.capabilities.extended_agent_card() {
        o.insert("supportsAuthenticatedExtendedCard".into(), true.into());
    }
    if !card.security_requirements.is_empty() {
        o.insert(
            "security".into(),
            encode_requirements(&card.security_requirements),
        );
    }
    o
}

/// Writes a card in pure v0.3 form.
pub fn encode_card(card: &AgentCard) -> Value {
    let mut o = v03_card_keys(card);
    o.insert("name".into(), card.name.clone().into());
    o.insert("description".into(), card.description.clone().into());
    o.insert("version".into(), card.version.clone().into());
    put(&mut o, "documentationUrl", card.documentation_url.clone());
    put(&mut o, "iconUrl", card.icon_url.clone());
    if let Some(p) = &card.provider {
        o.insert("provider".into(), json!(p));
    }
    let mut caps = obj_of(json!(card.capabilities));
    caps.remove("extendedAgentCard");
    o.insert("capabilities".into(), Value::Object(caps));
    // A scheme with no v0.3 form (an OAuth scheme whose flow is the device-code flow) is left
    // out: written as `{"type": "oauth2", "flows": {}}`, it made the whole card unreadable to
    // `decode_card` (found by the fuzz suite).
    let schemes: Obj = card
        .security_schemes
        .iter()
        .filter(|(_, v)| has_v03_form(v))
        .map(|(k, v)| (k.clone(), encode_scheme(v)))
        .collect();
    if !schemes.is_empty() {
        o.insert("securitySchemes".into(), schemes.into());
    }
    o.insert("defaultInputModes".into(), json!(card.default_input_modes));
    o.insert(
        "defaultOutputModes".into(),
        json!(card.default_output_modes),
    );
    o.insert(
        "skills".into(),
        card.skills
            .iter()
            .map(|sk| {
                let mut so = obj_of(json!(sk));
                if let Some(r) = so.remove("securityRequirements") {
                    so.insert(
                        "security".into(),
                        encode_requirements(
                            &serde_json::from_value::<Vec<SecurityRequirement>>(r)
                                .unwrap_or_default(),
                        ),
                    );
                }
                Value::Object(so)
            })
            .collect(),
    );
    if !card.signatures.is_empty() {
        o.insert("signatures".into(), json!(card.signatures));
    }
    Value::Object(o)
}

/// A card both generations of clients can read: the v1.0 card plus v0.3's top-level keys
/// (`protocolVersion`, `url`, `preferredTransport`, `additionalInterfaces`,
/// `supportsAuthenticatedExtendedCard`, `security`), each security scheme carrying both its
/// v1.0 wrapper key and its v0.3 `type` keys, and each skill both `securityRequirements` and
/// `security`.
pub fn hybrid_card(card: &AgentCard) -> Value {
    let mut o = obj_of(serde_json::to_value(card).unwrap_or_default());
    o.extend(v03_card_keys(card));
    if let Some(Value::Object(schemes)) = o.get_mut("securitySchemes") {
        for (name, scheme) in schemes.iter_mut() {
            if let (Some(typed), Value::Object(target)) = (card.security_schemes.get(name), scheme)
            {
                target.extend(obj_of(encode_scheme(typed)));
            }
        }
    }
    if let Some(Value::Array(skills)) = o.get_mut("skills") {
        for (skill, typed) in skills.iter_mut().zip(&card.skills) {
            if let (Value::Object(so), false) = (skill, typed.security_requirements.is_empty()) {
                so.insert(
                    "security".into(),
                    encode_requirements(&typed.security_requirements),
                );
            }
        }
    }
    Value::Object(o)
}

/// Reads a card of either generation. A v1.0 (or hybrid) card is read as such; a v0.3 card
/// (no `supportedInterfaces`) is translated: `url` + `preferredTransport` and
/// `additionalInterfaces` become `supportedInterfaces` (protocol version 0.3), `security`
/// becomes `securityRequirements`, OpenAPI-style schemes become the v1.0 oneof.
pub fn decode_card(v: &Value) -> Result<AgentCard, Error> {
    let o = obj(v, "card")?;
    let mut card: AgentCard = serde_json::from_value(v.clone())
        .map_err(|e| Error::invalid_params("card", e.to_string()))?;
    if o.contains_key("supportedInterfaces") {
        return Ok(card);
    }
    // Interface versions are `Major.Minor`; v0.3 cards say "0.3.0".
    let version = s(o, "protocolVersion").map_or_else(
        || PROTOCOL_VERSION_V03.to_owned(),
        |v| v.split('.').take(2).collect::<Vec<_>>().join("."),
    );
    let mut seen = std::collections::HashSet::new();
    let primary = s(o, "url").map(|url| {
        let binding = s(o, "preferredTransport").unwrap_or_else(|| BINDING_JSONRPC.to_owned());
        (url, binding)
    });
    let additional = o
        .get("additionalInterfaces")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .filter_map(|i| Some((s(i, "url")?, s(i, "transport")?)));
    for (url, binding) in primary.into_iter().chain(additional) {
        if seen.insert((url.clone(), binding.clone())) {
            card.supported_interfaces
                .push(AgentInterface::new(binding, url).with_protocol_version(version.clone()));
        }
    }
    if card.security_requirements.is_empty() {
        card.security_requirements = decode_requirements(o.get("security"));
    }
    if o.get("supportsAuthenticatedExtendedCard") == Some(&Value::Bool(true)) {
        card.capabilities.extended_agent_card = Some(true);
    }
    if let Some(skills) = o.get("skills").and_then(Value::as_array) {
        for (skill, raw) in card.skills.iter_mut().zip(skills) {
            if skill.security_requirements.is_empty() {
                skill.security_requirements = decode_requirements(raw.get("security"));
            }
        }
    }
    Ok(card)
}
