//! v0.3 translation of agent cards (digest §9): a v0.3 card decodes into a v1.0 card and encodes
//! back to itself, and what v0.3 cannot say is left out of a v1.0 card encoded for v0.3.

mod support;

use a2a_core::v03;
use a2a_core::*;
use serde_json::json;
use support::*;

// ---------------------------------------------------------------------------------------------
// Agent cards

#[test]
fn v03_card_decodes_into_a_v1_card() {
    let v = fixture("v03/agent_card.json");
    let card = v03::decode_card(&v).unwrap();
    assert_eq!(card.name, "GeoSpatial Route Planner Agent");
    assert_eq!(card.version, "1.2.0");
    // `url` + `preferredTransport` first, then the other `additionalInterfaces`, all 0.3
    // (protocol versions are Major.Minor: the card's "0.3.0" is "0.3").
    assert_eq!(
        card.supported_interfaces,
        [
            AgentInterface::new(BINDING_JSONRPC, "https://georoute-agent.example.com/a2a/v1")
                .with_protocol_version("0.3"),
            AgentInterface::new(BINDING_GRPC, "https://georoute-agent.example.com/a2a/grpc")
                .with_protocol_version("0.3"),
            AgentInterface::new(
                BINDING_HTTP_JSON,
                "https://georoute-agent.example.com/a2a/json"
            )
            .with_protocol_version("0.3"),
        ]
    );
    assert_eq!(
        card.interface(BINDING_JSONRPC, PROTOCOL_VERSION_V03)
            .unwrap()
            .url,
        "https://georoute-agent.example.com/a2a/v1"
    );
    assert!(card.capabilities.streaming());
    assert!(card.capabilities.push_notifications());
    assert!(
        card.capabilities.extended_agent_card(),
        "supportsAuthenticatedExtendedCard"
    );
    assert_eq!(
        card.provider.as_ref().unwrap().organization,
        "Example Geo Services Inc."
    );
    assert_eq!(
        card.icon_url.as_deref(),
        Some("https://georoute-agent.example.com/icon.png")
    );

    let s = &card.security_schemes;
    assert!(
        matches!(&s["google"], SecurityScheme::OpenIdConnectSecurityScheme(o)
        if o.open_id_connect_url == "https://accounts.google.com/.well-known/openid-configuration")
    );
    assert_eq!(
        s["key"],
        SecurityScheme::ApiKeySecurityScheme(ApiKeySecurityScheme {
            description: Some("API key".into()),
            location: "header".into(),
            name: "X-API-Key".into()
        })
    );
    assert_eq!(
        s["jwt"],
        SecurityScheme::HttpAuthSecurityScheme(HttpAuthSecurityScheme {
            description: None,
            scheme: "bearer".into(),
            bearer_format: Some("JWT".into())
        })
    );
    let SecurityScheme::Oauth2SecurityScheme(oa) = &s["oa"] else {
        panic!("oa")
    };
    assert!(matches!(&oa.flows, OAuthFlows::AuthorizationCode(f)
        if f.token_url == "https://id.example.com/token" && f.scopes["route.read"] == "read routes"));
    assert!(matches!(&s["mtls"], SecurityScheme::MtlsSecurityScheme(m)
        if m.description.as_deref() == Some("client certificate")));

    assert_eq!(
        card.security_requirements,
        [
            SecurityRequirement::scheme("google", ["openid", "profile", "email"]),
            SecurityRequirement {
                schemes: [
                    ("key".to_owned(), StringList::default()),
                    ("mtls".to_owned(), StringList::default())
                ]
                .into()
            }
        ]
    );
    let skill = card.skill("route-optimizer-traffic").unwrap();
    assert_eq!(
        skill.security_requirements,
        [SecurityRequirement::scheme("oa", ["route.read"])]
    );
    assert_eq!(skill.output_modes, ["application/json"]);
    assert!(
        card.skill("custom-map-generator")
            .unwrap()
            .security_requirements
            .is_empty()
    );
    assert_eq!(card.signatures.len(), 1);

    // Its v1.0 JSON has none of the v0.3 keys.
    let v1 = serde_json::to_value(&card).unwrap();
    for gone in [
        "url",
        "preferredTransport",
        "additionalInterfaces",
        "protocolVersion",
        "supportsAuthenticatedExtendedCard",
        "security",
    ] {
        assert!(v1.get(gone).is_none(), "{gone}");
    }
    assert_eq!(
        v1["capabilities"],
        json!({"streaming": true, "pushNotifications": true, "extendedAgentCard": true})
    );
    assert_eq!(
        v1["securitySchemes"]["key"],
        json!({"apiKeySecurityScheme": {"description": "API key", "location": "header", "name": "X-API-Key"}})
    );
    // And it is a card v1.0 readers accept as is.
    assert_eq!(serde_json::from_value::<AgentCard>(v1).unwrap(), card);
}

#[test]
fn v1_card_of_a_v03_card_encodes_back_to_the_v03_card() {
    let v = fixture("v03/agent_card.json");
    let card = v03::decode_card(&v).unwrap();
    let back = v03::encode_card(&card);
    // The only differences: the protocol version is written as Major.Minor, and
    // `capabilities.stateTransitionHistory` (gone in v1.0) is dropped.
    let mut expected = v;
    expected["protocolVersion"] = "0.3".into();
    expected["capabilities"]
        .as_object_mut()
        .unwrap()
        .remove("stateTransitionHistory");
    assert_eq!(back, expected);
    assert_eq!(v03::decode_card(&back).unwrap(), card);
}

#[test]
fn v03_card_edge_cases() {
    let base = json!({"name": "n", "description": "d", "version": "1", "capabilities": {},
        "defaultInputModes": [], "defaultOutputModes": [], "skills": []});
    // No `url`: no interfaces. No protocolVersion: 0.3.
    let card = v03::decode_card(&base).unwrap();
    assert!(card.supported_interfaces.is_empty());
    let mut with_url = base.clone();
    with_url["url"] = "https://a.example".into();
    let card = v03::decode_card(&with_url).unwrap();
    assert_eq!(
        card.supported_interfaces,
        [AgentInterface::new(BINDING_JSONRPC, "https://a.example").with_protocol_version("0.3")]
    );
    // Several OAuth flows (allowed in v0.3): one is kept.
    let mut multi = base.clone();
    multi["securitySchemes"] = json!({"oa": {"type": "oauth2", "flows": {
        "implicit": {"authorizationUrl": "https://a.example/auth", "scopes": {}},
        "clientCredentials": {"tokenUrl": "https://a.example/token", "scopes": {"s": "d"}}}}});
    let card = v03::decode_card(&multi).unwrap();
    let SecurityScheme::Oauth2SecurityScheme(oa) = &card.security_schemes["oa"] else {
        panic!("oa")
    };
    assert!(
        matches!(&oa.flows, OAuthFlows::ClientCredentials(c) if c.token_url == "https://a.example/token")
    );
    // A scheme type v1.0 does not know makes the card unreadable.
    let mut bad = base;
    bad["securitySchemes"] = json!({"x": {"type": "magic"}});
    assert_eq!(
        v03::decode_card(&bad).unwrap_err().kind(),
        Some(ErrorKind::InvalidParams)
    );
}

#[test]
fn v1_only_features_are_dropped_when_encoding_a_v03_card() {
    let card: AgentCard = serde_json::from_value(fixture("v1/agent_card_full.json")).unwrap();
    let old = v03::encode_card(&card);
    assert_eq!(old["protocolVersion"], "0.3");
    assert_eq!(old["url"], "https://agent.example.net/v03");
    assert!(old.get("supportedInterfaces").is_none());
    assert!(old.get("securityRequirements").is_none());
    assert!(old["capabilities"].get("extendedAgentCard").is_none());
    assert_eq!(old["supportsAuthenticatedExtendedCard"], true);
    // The device-code flow has no v0.3 form: its scheme is left out (written with empty
    // `flows`, it made the card unreadable to `decode_card`; found by the fuzz suite).
    assert!(old["securitySchemes"].get("device").is_none());
    assert!(old["securitySchemes"].get("code").is_some());
    assert!(v03::decode_card(&old).is_ok());
    // PKCE has no v0.3 form either.
    assert!(
        old["securitySchemes"]["code"]["flows"]["authorizationCode"]
            .get("pkceRequired")
            .is_none()
    );
    for (name, scheme) in old["securitySchemes"].as_object().unwrap() {
        assert!(
            scheme
                .as_object()
                .unwrap()
                .keys()
                .all(|k| !k.ends_with("SecurityScheme")),
            "{name}"
        );
    }
    assert_eq!(old["skills"][0]["security"], json!([{"basic": []}]));
    assert!(old["skills"][0].get("securityRequirements").is_none());
}

/// Found by the fuzz suite: an interface without a binding was written as `"transport": ""`,
/// which a v0.3 reader skips, so the card did not read back the same. Such interfaces are left
/// out of the v0.3 card.
#[test]
fn an_interface_without_a_binding_is_left_out_of_a_v03_card() {
    let mut v1 = fixture("v1/agent_card.json");
    v1["supportedInterfaces"][0]["protocolBinding"] = json!("");
    let card: AgentCard = serde_json::from_value(v1).unwrap();
    let old = v03::encode_card(&card);
    assert_eq!(old["additionalInterfaces"].as_array().unwrap().len(), 1);
    assert_eq!(old["preferredTransport"], "HTTP+JSON");
    let again = v03::encode_card(&v03::decode_card(&old).unwrap());
    assert_eq!(again, old);
}
