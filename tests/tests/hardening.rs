//! What a strict conformance run found at the edges of both bindings: arrays where objects
//! belong, error bodies on every error status, unreadable version headers, conditional card
//! requests, and extended cards nobody could read.

use a2a_e2e::agents::Echo;
use a2a_e2e::{BOTH, Binding, Kind, Op, TestServer, header_str, send_json, user_message, within};
use a2a_server::{BuildError, Server};
use reqwest::header::HeaderValue;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_array_where_an_object_belongs_is_invalid_params() {
    let srv = TestServer::start(Echo).await;
    for binding in BOTH {
        for params in [
            json!({"message": user_message("hi"), "configuration": []}),
            json!({"message": user_message("hi"), "configuration": {"taskPushNotificationConfig": []}}),
            json!({"message": user_message("hi"), "configuration": {}, "metadata": []}),
        ] {
            srv.err(binding, Op::SendMessage, params)
                .await
                .assert_kind(Kind::InvalidParams);
        }
        // An object, with the same (default) content, is fine.
        srv.ok(
            binding,
            Op::SendMessage,
            json!({"message": user_message("hi"), "configuration": {}}),
        )
        .await;
    }
}

/// Sends `method path` and returns the answer, which must be JSON.
async fn answer(srv: &TestServer, method: &str, path: &str) -> a2a_e2e::Reply {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    send_json(
        srv.http.request(method.clone(), srv.url(path)),
        &format!("{method} {path}"),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_method_gets_405_with_allow_and_the_bindings_error_body() {
    let srv = TestServer::start(Echo).await;
    for (method, path, allow) in [
        ("GET", "/tasks/x:cancel", "POST"),
        ("DELETE", "/tasks", "GET"),
        ("PUT", "/message:send", "POST"),
        ("POST", "/.well-known/agent-card.json", "GET"),
        ("DELETE", "/.well-known/agent.json", "GET"),
    ] {
        let reply = answer(&srv, method, path).await;
        assert_eq!(reply.status, 405, "{method} {path}: {:#}", reply.body);
        assert_eq!(
            header_str(&reply.headers, "allow"),
            allow,
            "{method} {path}"
        );
        assert_eq!(
            reply.body["error"]["code"], 405,
            "{method} {path}: the body's code is the HTTP status: {:#}",
            reply.body
        );
        assert!(
            reply.body["error"]["status"].is_string(),
            "{:#}",
            reply.body
        );
        assert!(
            !reply.body["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .is_empty()
        );
    }
    // The JSON-RPC endpoint answers in JSON-RPC.
    for method in ["PATCH", "GET", "PUT", "DELETE"] {
        let reply = answer(&srv, method, "/").await;
        assert_eq!(reply.status, 405, "{method} /: {:#}", reply.body);
        assert_eq!(header_str(&reply.headers, "allow"), "POST");
        assert_eq!(reply.body["jsonrpc"], "2.0", "{:#}", reply.body);
        assert_eq!(reply.body["id"], Value::Null);
        assert_eq!(reply.body["error"]["code"], -32600, "{:#}", reply.body);
    }
    // No route at all: 404 with a REST body whose code is 404.
    let reply = answer(&srv, "GET", "/no/such/route").await;
    assert_eq!(reply.status, 404);
    assert_eq!(reply.body["error"]["code"], 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_header_that_is_not_ascii_is_not_supported() {
    let srv = TestServer::start(Echo).await;
    for binding in BOTH {
        for raw in [&b"1.\xe9"[..], b"\xff", b"1.0\xc3\xa9"] {
            let (rb, rpc_id) = srv.request(
                binding,
                Op::SendMessage,
                &json!({"message": user_message("hi")}),
                &[],
            );
            let rb = rb.header("A2A-Version", HeaderValue::from_bytes(raw).unwrap());
            let mut reply = send_json(rb, "send with a non-ASCII version").await;
            reply.binding = binding;
            reply.rpc_id = rpc_id;
            let err = reply
                .outcome()
                .expect_err("a non-ASCII A2A-Version is refused");
            err.assert_kind(Kind::VersionNotSupported);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_card_has_last_modified_and_answers_if_modified_since() {
    let srv = TestServer::start(Echo).await;
    let get = |headers: Vec<(&'static str, String)>| {
        let mut rb = srv.http.get(srv.url("/.well-known/agent-card.json"));
        for (k, v) in headers {
            rb = rb.header(k, v);
        }
        async move { within("the card", rb.send()).await.unwrap() }
    };
    let first = get(vec![]).await;
    assert_eq!(first.status(), 200);
    let modified = header_str(first.headers(), "last-modified").to_owned();
    let when = chrono::DateTime::parse_from_rfc2822(&modified)
        .unwrap_or_else(|e| panic!("Last-Modified {modified:?} is an HTTP date: {e}"));
    assert!(modified.ends_with(" GMT"), "{modified}");
    let etag = header_str(first.headers(), "etag").to_owned();
    assert!(
        header_str(first.headers(), "access-control-expose-headers")
            .to_ascii_lowercase()
            .contains("last-modified")
            || first
                .headers()
                .get("access-control-expose-headers")
                .is_none(),
        "exposed to browsers where anything is"
    );

    // Not modified since then (or since later): 304, with the validators again.
    let later = (when + chrono::Duration::hours(1))
        .format("%a, %d %b %Y %H:%M:%S GMT")
        .to_string();
    for since in [modified.clone(), later] {
        let r = get(vec![("if-modified-since", since.clone())]).await;
        assert_eq!(r.status(), 304, "If-Modified-Since: {since}");
        assert_eq!(header_str(r.headers(), "last-modified"), modified);
        assert_eq!(header_str(r.headers(), "etag"), etag);
    }
    // Modified since an earlier moment: the card.
    let earlier = (when - chrono::Duration::days(1))
        .format("%a, %d %b %Y %H:%M:%S GMT")
        .to_string();
    let r = get(vec![("if-modified-since", earlier)]).await;
    assert_eq!(r.status(), 200);
    // If-None-Match wins over If-Modified-Since (RFC 9110 §13.2.2).
    let r = get(vec![
        ("if-none-match", "\"another\"".to_owned()),
        ("if-modified-since", modified.clone()),
    ])
    .await;
    assert_eq!(r.status(), 200);
    // A date that does not parse is ignored.
    let r = get(vec![("if-modified-since", "yesterday".to_owned())]).await;
    assert_eq!(r.status(), 200);
}

#[test]
fn an_extended_card_without_an_authenticator_is_refused_at_build_time() {
    let extended = a2a_core::AgentCard::builder("more", "for members").build();
    let configured = Server::builder(Echo).extended_agent_card(extended).build();
    assert!(
        matches!(
            configured,
            Err(BuildError::ExtendedCardWithoutAuthentication)
        ),
        "{configured:?}"
    );
    let declared = a2a_core::AgentCard::builder("x", "y")
        .extended_agent_card(true)
        .build();
    let declared = Server::builder(Echo).agent_card(declared).build();
    let err = declared.expect_err("declared without an authenticator");
    assert!(err.to_string().contains("authenticator"), "{err}");
    // With one, both build.
    let extended = a2a_core::AgentCard::builder("more", "for members").build();
    Server::builder(Echo)
        .extended_agent_card(extended)
        .authenticator(a2a_server::auth::BearerTokens::each_its_own(["t"]))
        .build()
        .expect("an extended card with an authenticator");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_401_carries_a_challenge() {
    let extended = a2a_core::AgentCard::builder("more", "for members").build();
    let srv = TestServer::start_with(Echo, |b| {
        b.extended_agent_card(extended)
            .authenticator(a2a_server::auth::BearerTokens::each_its_own(["t"]))
    })
    .await;
    for binding in [Binding::Rest, Binding::JsonRpc] {
        for op in [Op::GetExtendedAgentCard, Op::ListTasks] {
            let reply = srv.raw(binding, op, &json!({}), &[]).await;
            assert_eq!(reply.status, 401, "{binding:?} {op:?}");
            assert!(
                header_str(&reply.headers, "www-authenticate").starts_with("Bearer"),
                "{binding:?} {op:?}: {:?}",
                reply.headers
            );
        }
    }
}
