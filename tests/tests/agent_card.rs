//! The public agent card (checklist 39): required fields, v1.0 interfaces at the bound URL,
//! caching headers, 304 on `If-None-Match`, and the hybrid v1.0 + v0.3 card for header-less
//! clients.

use a2a_e2e::agents::Kitchen;
use a2a_e2e::{TestServer, header_str};
use serde_json::Value;

async fn fetch(srv: &TestServer, path: &str, headers: &[(&str, &str)]) -> reqwest::Response {
    let mut rb = srv.http.get(srv.url(path));
    for (k, v) in headers {
        rb = rb.header(*k, *v);
    }
    a2a_e2e::within("the card", rb.send()).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_card_has_every_required_field_and_v1_interfaces_at_the_public_url() {
    let srv = TestServer::start(Kitchen).await;
    let response = fetch(
        &srv,
        "/.well-known/agent-card.json",
        &[("A2A-Version", "1.0")],
    )
    .await;
    assert_eq!(response.status(), 200);
    assert!(header_str(response.headers(), "content-type").starts_with("application/json"));
    let cache = header_str(response.headers(), "cache-control").to_owned();
    assert!(cache.contains("max-age="), "{cache}");
    assert!(!header_str(response.headers(), "etag").is_empty());
    let card: Value = response.json().await.unwrap();

    assert_eq!(card["name"], "e2e test agent");
    assert_eq!(card["description"], "Agents for the end-to-end tests.");
    assert_eq!(card["version"], "9.9.9");
    assert_eq!(card["provider"]["organization"], "a2a-e2e");
    assert_eq!(card["defaultInputModes"], serde_json::json!(["text/plain"]));
    assert_eq!(
        card["defaultOutputModes"],
        serde_json::json!(["text/plain"])
    );
    assert!(card["capabilities"].is_object());
    assert_eq!(card["capabilities"]["streaming"], true);
    assert_ne!(card["capabilities"]["pushNotifications"], true);
    let skills = card["skills"].as_array().unwrap();
    assert_eq!(skills.len(), 1);
    for key in ["id", "name", "description", "tags"] {
        assert!(skills[0].get(key).is_some(), "skill {key}");
    }

    let interfaces = card["supportedInterfaces"].as_array().unwrap();
    for binding in ["JSONRPC", "HTTP+JSON"] {
        let v1 = interfaces
            .iter()
            .find(|i| i["protocolBinding"] == binding && i["protocolVersion"] == "1.0")
            .unwrap_or_else(|| panic!("a v1.0 {binding} interface in {card:#}"));
        assert_eq!(v1["url"], srv.base, "the interface is the bound address");
    }
    assert_eq!(
        interfaces[0]["protocolVersion"], "1.0",
        "the preferred interface is v1.0"
    );
    for i in interfaces {
        let version = i["protocolVersion"].as_str().unwrap();
        // 1.1: task generations (docs/a2a-1.1.md), listed after the 1.0 interfaces.
        assert!(["1.0", "1.1", "0.3"].contains(&version), "{i}");
    }
    // The pure v1.0 card has none of the v0.3 top-level keys.
    for gone in [
        "url",
        "preferredTransport",
        "protocolVersion",
        "additionalInterfaces",
    ] {
        assert!(card.get(gone).is_none(), "v1.0 card has no `{gone}`");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn if_none_match_with_the_etag_is_answered_304() {
    let srv = TestServer::start(Kitchen).await;
    for version in [Some("1.0"), None] {
        let headers: Vec<(&str, &str)> = version.map(|v| ("A2A-Version", v)).into_iter().collect();
        let first = fetch(&srv, "/.well-known/agent-card.json", &headers).await;
        let etag = header_str(first.headers(), "etag").to_owned();
        assert!(
            etag.starts_with('"') && etag.ends_with('"'),
            "a strong ETag: {etag}"
        );
        let body = first.bytes().await.unwrap();
        assert!(!body.is_empty());

        let mut with_tag = headers.clone();
        with_tag.push(("If-None-Match", &etag));
        let again = fetch(&srv, "/.well-known/agent-card.json", &with_tag).await;
        assert_eq!(again.status(), 304, "{version:?}");
        assert_eq!(header_str(again.headers(), "etag"), etag);
        assert!(again.bytes().await.unwrap().is_empty());

        let mut stale = headers.clone();
        stale.push(("If-None-Match", "\"not-the-tag\""));
        let fresh = fetch(&srv, "/.well-known/agent-card.json", &stale).await;
        assert_eq!(fresh.status(), 200);
        assert_eq!(fresh.bytes().await.unwrap(), body);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_a_version_header_gets_the_hybrid_card() {
    let srv = TestServer::start(Kitchen).await;
    let v1 = fetch(
        &srv,
        "/.well-known/agent-card.json",
        &[("A2A-Version", "1.0")],
    )
    .await;
    let v1_tag = header_str(v1.headers(), "etag").to_owned();
    let v1: Value = v1.json().await.unwrap();
    let hybrid = fetch(&srv, "/.well-known/agent-card.json", &[]).await;
    assert!(header_str(hybrid.headers(), "vary").contains("A2A-Version"));
    assert_ne!(
        header_str(hybrid.headers(), "etag"),
        v1_tag,
        "two bodies, two tags"
    );
    let hybrid: Value = hybrid.json().await.unwrap();
    // v0.3 keys …
    assert_eq!(hybrid["protocolVersion"], "0.3");
    assert_eq!(hybrid["url"], srv.base);
    assert_eq!(hybrid["preferredTransport"], "JSONRPC");
    // … next to every v1.0 key.
    for (key, value) in v1.as_object().unwrap() {
        assert_eq!(&hybrid[key], value, "hybrid card keeps v1.0 `{key}`");
    }
    // The old well-known path is an alias.
    let alias: Value = fetch(&srv, "/.well-known/agent.json", &[])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(alias, hybrid);
}
