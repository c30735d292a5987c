//! Agent cards and their security on the v1.0 wire (digest §2.7, §5): the spec's card and
//! security examples, every security scheme and OAuth flow, the bare-array form of security
//! requirements, hybrid (v1.0 + v0.3) cards, and the card builder.

mod support;

use a2a_core::v03;
use a2a_core::*;
use serde_json::json;
use support::*;

#[test]
fn security_example_reads_every_scheme_and_requirement() {
    let sec: SecurityFragment = round_trip("v1/security.json");
    let s = &sec.security_schemes;
    assert_eq!(s.len(), 5);
    assert_eq!(s["key"], SecurityScheme::api_key_header("X-Api-Key"));
    let SecurityScheme::HttpAuthSecurityScheme(jwt) = &s["jwt"] else {
        panic!("jwt")
    };
    assert_eq!(
        (jwt.scheme.as_str(), jwt.bearer_format.as_deref()),
        ("Bearer", Some("JWT"))
    );
    assert!(matches!(
        &s["oidc"],
        SecurityScheme::OpenIdConnectSecurityScheme(o)
            if o.open_id_connect_url == "https://id.example.net/.well-known/openid-configuration"
    ));
    assert!(matches!(
        &s["mtls"],
        SecurityScheme::MtlsSecurityScheme(m) if m.description.as_deref() == Some("client cert")
    ));
    let SecurityScheme::Oauth2SecurityScheme(oa) = &s["oa"] else {
        panic!("oa")
    };
    let OAuthFlows::ClientCredentials(cc) = &oa.flows else {
        panic!("flow")
    };
    assert_eq!(cc.token_url, "https://id.example.net/token");
    assert_eq!(cc.scopes["a2a.run"], "run tasks");
    assert_eq!(
        oa.oauth2_metadata_url.as_deref(),
        Some("https://id.example.net/.well-known/oauth-authorization-server")
    );
    assert_eq!(
        sec.security_requirements,
        [
            SecurityRequirement::scheme("oa", ["a2a.run"]),
            SecurityRequirement {
                schemes: [
                    ("key".to_owned(), StringList::default()),
                    ("mtls".to_owned(), StringList::default()),
                ]
                .into()
            }
        ]
    );
}

#[test]
fn every_security_scheme_variant_and_oauth_flow_parses_to_its_variant() {
    let scheme = |f: &str| round_trip::<SecurityScheme>(&format!("v1/security_scheme_{f}.json"));
    assert!(matches!(
        scheme("api_key"),
        SecurityScheme::ApiKeySecurityScheme(k) if k.location == "header" && k.name == "X-Api-Key"
    ));
    assert!(matches!(
        scheme("http_auth"),
        SecurityScheme::HttpAuthSecurityScheme(h) if h.scheme == "Bearer"
    ));
    assert!(matches!(
        scheme("oauth2"),
        SecurityScheme::Oauth2SecurityScheme(_)
    ));
    assert!(matches!(
        scheme("open_id_connect"),
        SecurityScheme::OpenIdConnectSecurityScheme(_)
    ));
    assert!(matches!(
        scheme("mtls"),
        SecurityScheme::MtlsSecurityScheme(_)
    ));

    let flow = |f: &str| round_trip::<OAuthFlows>(&format!("v1/oauth_flow_{f}.json"));
    let OAuthFlows::AuthorizationCode(a) = flow("authorization_code") else {
        panic!("authorizationCode")
    };
    assert!(a.pkce_required);
    assert_eq!(a.authorization_url, "https://id.example.net/authorize");
    assert_eq!(
        a.refresh_url.as_deref(),
        Some("https://id.example.net/refresh")
    );
    assert_eq!(a.scopes.len(), 2);
    assert!(matches!(
        flow("client_credentials"),
        OAuthFlows::ClientCredentials(c) if c.token_url == "https://id.example.net/token"
    ));
    assert!(matches!(
        flow("device_code"),
        OAuthFlows::DeviceCode(d) if d.device_authorization_url == "https://id.example.net/device"
    ));
    assert!(matches!(
        flow("implicit"),
        OAuthFlows::Implicit(i) if i.authorization_url.as_deref() == Some("https://id.example.net/authorize")
    ));
    assert!(matches!(
        flow("password"),
        OAuthFlows::Password(p) if p.token_url.as_deref() == Some("https://id.example.net/token")
    ));
}

#[test]
fn card_example_reads_as_the_spec_says() {
    let card: AgentCard = round_trip("v1/agent_card.json");
    assert_eq!(card.name, "Ledger Agent");
    assert_eq!(card.version, "0.4.2");
    assert_eq!(
        card.interface(BINDING_JSONRPC, PROTOCOL_VERSION)
            .unwrap()
            .url,
        "https://agent.example.net/a2a/jsonrpc"
    );
    assert_eq!(
        card.interface(BINDING_HTTP_JSON, "1.0").unwrap().url,
        "https://agent.example.net/a2a/rest"
    );
    assert!(card.interface(BINDING_GRPC, "1.0").is_none());
    assert!(card.capabilities.streaming());
    assert!(card.capabilities.push_notifications());
    assert!(!card.capabilities.extended_agent_card());
    // `optional bool` set to false is kept (and re-emitted, as the round trip shows).
    assert_eq!(card.capabilities.extended_agent_card, Some(false));
    assert_eq!(
        card.security_requirements,
        [SecurityRequirement::scheme("jwt", Vec::<String>::new())]
    );
    assert_eq!(card.skill("balance").unwrap().tags, ["finance"]);
}

#[test]
fn full_card_keeps_tenants_extensions_signatures_and_skill_security() {
    let card: AgentCard = round_trip("v1/agent_card_full.json");
    assert_eq!(card.supported_interfaces[0].tenant.as_deref(), Some("t1"));
    assert_eq!(card.supported_interfaces[1].url, "agent.example.net:443");
    assert_eq!(
        card.interface(BINDING_JSONRPC, "0.3").unwrap().url,
        "https://agent.example.net/v03"
    );
    let ext = &card.capabilities.extensions;
    assert!(ext[0].required);
    assert_eq!(ext[0].params.as_ref().unwrap()["precision"], 5);
    assert!(!ext[1].required);
    assert_eq!(card.capabilities.streaming, Some(false));
    assert!(!card.capabilities.streaming());
    assert_eq!(card.security_schemes.len(), 7);
    assert_eq!(
        card.skill("draw").unwrap().security_requirements,
        [SecurityRequirement::scheme("basic", Vec::<String>::new())]
    );
    assert!(card.skill("noop").unwrap().tags.is_empty());
    assert_eq!(card.signatures[0].header.as_ref().unwrap()["kid"], "k1");
    assert_eq!(
        card.icon_url.as_deref(),
        Some("https://example.net/icon.png")
    );
}

#[test]
fn security_requirements_bare_array_form_is_read_and_list_form_emitted() {
    let input = json!([{"schemes": {"oa": ["a2a.run", "a2a.read"], "key": []}}]);
    let reqs: Vec<SecurityRequirement> = serde_json::from_value(input).unwrap();
    assert_eq!(reqs[0].schemes["oa"].list, ["a2a.run", "a2a.read"]);
    assert_eq!(
        serde_json::to_value(&reqs).unwrap(),
        json!([{"schemes": {"oa": {"list": ["a2a.run", "a2a.read"]}, "key": {"list": []}}}])
    );
    let card: AgentCard = serde_json::from_value(json!({
        "name": "n", "description": "d", "version": "1", "capabilities": {},
        "supportedInterfaces": [], "defaultInputModes": [], "defaultOutputModes": [],
        "securityRequirements": [{"schemes": {"oa": ["s"]}}],
        "skills": [{"id": "s", "name": "s", "description": "s", "tags": [],
                    "securityRequirements": [{"schemes": {"oa": ["t"]}}]}]
    }))
    .unwrap();
    let out = serde_json::to_value(&card).unwrap();
    assert_eq!(
        out["securityRequirements"],
        json!([{"schemes": {"oa": {"list": ["s"]}}}])
    );
    assert_eq!(
        out["skills"][0]["securityRequirements"],
        json!([{"schemes": {"oa": {"list": ["t"]}}}])
    );
}

#[test]
fn hybrid_card_parses_back_as_the_v1_card_and_carries_v03_keys() {
    let card: AgentCard = serde_json::from_value(fixture("v1/agent_card_full.json")).unwrap();
    let hybrid = v03::hybrid_card(&card);

    // v1.0 readers see exactly the card.
    let back: AgentCard = serde_json::from_value(hybrid.clone()).unwrap();
    assert_eq!(back, card);
    assert_eq!(v03::decode_card(&hybrid).unwrap(), card);

    // v0.3 readers find their keys.
    assert_eq!(hybrid["protocolVersion"], "0.3");
    assert_eq!(hybrid["url"], "https://agent.example.net/v03");
    assert_eq!(hybrid["preferredTransport"], "JSONRPC");
    let additional = hybrid["additionalInterfaces"].as_array().unwrap();
    assert!(
        additional
            .contains(&json!({"url": "https://agent.example.net/v03", "transport": "JSONRPC"}))
    );
    assert!(
        !additional.contains(
            &json!({"url": "https://agent.example.net/t1/jsonrpc", "transport": "JSONRPC"})
        )
    );
    assert_eq!(hybrid["supportsAuthenticatedExtendedCard"], true);
    assert_eq!(
        hybrid["security"],
        json!([{"code": ["read", "write"]}, {"key": [], "mtls": []}])
    );
    let schemes = hybrid["securitySchemes"].as_object().unwrap();
    for (name, scheme) in schemes {
        assert!(scheme.get("type").is_some(), "{name} has no v0.3 `type`");
        assert_eq!(
            scheme
                .as_object()
                .unwrap()
                .keys()
                .filter(|k| k.ends_with("SecurityScheme"))
                .count(),
            1,
            "{name}"
        );
    }
    assert_eq!(schemes["key"]["type"], "apiKey");
    assert_eq!(schemes["key"]["in"], "query");
    assert_eq!(schemes["key"]["apiKeySecurityScheme"]["location"], "query");
    assert_eq!(schemes["basic"]["type"], "http");
    assert_eq!(schemes["oidc"]["type"], "openIdConnect");
    assert_eq!(schemes["mtls"]["type"], "mutualTLS");
    assert_eq!(schemes["code"]["type"], "oauth2");
    assert_eq!(
        schemes["code"]["flows"]["authorizationCode"]["tokenUrl"],
        "https://id.example.net/token"
    );
    assert_eq!(hybrid["skills"][0]["security"], json!([{"basic": []}]));
    assert_eq!(
        hybrid["skills"][0]["securityRequirements"],
        json!([{"schemes": {"basic": {"list": []}}}])
    );
    assert!(hybrid["skills"][1].get("security").is_none());
    // The v1.0 keys are all still there.
    let plain = serde_json::to_value(&card).unwrap();
    for key in plain.as_object().unwrap().keys() {
        assert!(hybrid.get(key).is_some(), "hybrid card lost {key}");
    }
}

#[test]
fn hybrid_card_of_a_v1_only_card_points_v03_clients_at_the_first_interface() {
    let card: AgentCard = serde_json::from_value(fixture("v1/agent_card.json")).unwrap();
    let hybrid = v03::hybrid_card(&card);
    assert_eq!(
        serde_json::from_value::<AgentCard>(hybrid.clone()).unwrap(),
        card
    );
    assert_eq!(hybrid["protocolVersion"], "0.3");
    assert_eq!(hybrid["url"], "https://agent.example.net/a2a/jsonrpc");
    assert_eq!(hybrid["preferredTransport"], "JSONRPC");
    assert!(hybrid.get("supportsAuthenticatedExtendedCard").is_none());
    assert_eq!(hybrid["security"], json!([{"jwt": []}]));
    assert_eq!(hybrid["securitySchemes"]["jwt"]["type"], "http");
    assert_eq!(hybrid["securitySchemes"]["jwt"]["scheme"], "Bearer");
}

#[test]
fn card_builder_produces_a_valid_minimal_card() {
    let card = AgentCard::builder("Echo", "Repeats what you say")
        .interface(BINDING_JSONRPC, "https://echo.example/a2a")
        .streaming(true)
        .skill(AgentSkill::new("echo", "Echo", "echoes").with_tags(["demo"]))
        .security_scheme("bearer", SecurityScheme::bearer())
        .security_requirement(SecurityRequirement::scheme("bearer", Vec::<String>::new()))
        .build();
    assert_eq!(
        serde_json::to_value(&card).unwrap(),
        json!({
            "name": "Echo", "description": "Repeats what you say",
            "supportedInterfaces": [{"url": "https://echo.example/a2a", "protocolBinding": "JSONRPC",
                                     "protocolVersion": "1.0"}],
            "version": "0.1.0",
            "capabilities": {"streaming": true},
            "securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
            "securityRequirements": [{"schemes": {"bearer": {"list": []}}}],
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "echo", "name": "Echo", "description": "echoes", "tags": ["demo"]}]
        })
    );
}
