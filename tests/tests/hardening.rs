//! What a strict conformance run found at the edges of both bindings: arrays where objects
//! belong, error bodies on every error status, unreadable version headers, conditional card
//! requests, extended cards nobody could read, media types the card does not accept, and
//! agents that refuse a request with an A2A error.

use a2a_core::{Error, ErrorKind};
use a2a_e2e::agents::Echo;
use a2a_e2e::{
    ALL, BOTH, Binding, Kind, Op, TestServer, header_str, message_id, send_json, str_at,
    user_message, within,
};
use a2a_server::{Agent, BuildError, RequestContext, Server, TaskEvents};
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
            // Replaces the harness's `A2A-Version: 1.0` (`headers` replaces, `header` adds).
            let mut version = reqwest::header::HeaderMap::new();
            version.insert("a2a-version", HeaderValue::from_bytes(raw).unwrap());
            let rb = rb.headers(version);
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

fn part_message(part: Value) -> Value {
    json!({"message": {"messageId": message_id(), "role": "ROLE_USER", "parts": [part]}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_part_the_card_does_not_accept_is_content_type_not_supported() {
    let text_only = || {
        a2a_core::AgentCard::builder("text only", "Takes text")
            .input_modes(["text/plain"])
            .build()
    };
    let srv = TestServer::start_with(Echo, |b| b.agent_card(text_only())).await;
    let png = json!({"raw": "iVBORw0KGgo=", "filename": "dot.png", "mediaType": "image/png"});
    for binding in ALL {
        let err = srv
            .err(binding, Op::SendMessage, part_message(png.clone()))
            .await;
        err.assert_kind(Kind::ContentTypeNotSupported);
        assert!(err.message.contains("image/png"), "{}", err.message);
        let err = srv
            .open_stream(
                binding,
                Op::SendStreamingMessage,
                part_message(png.clone()),
                &[],
            )
            .await
            .expect_err("no stream for a refused part");
        err.assert_kind(Kind::ContentTypeNotSupported);
        // Declared and accepted (parameters and case aside), or not declared: accepted.
        for ok in [
            json!({"text": "hi", "mediaType": "Text/Plain; charset=utf-8"}),
            json!({"text": "hi"}),
            json!({"data": {"a": 1}}),
        ] {
            srv.ok(binding, Op::SendMessage, part_message(ok)).await;
        }
    }
    let open =
        TestServer::start_with(Echo, |b| b.agent_card(text_only()).check_input_modes(false)).await;
    for binding in ALL {
        open.ok(binding, Op::SendMessage, part_message(png.clone()))
            .await;
    }
}

/// Refuses `refuse <kind>` before any event with that A2A error; `crash` fails with an internal
/// error before any event; anything else completes.
struct Picky;

impl Agent for Picky {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        match cx.message.text().as_str() {
            "refuse params" => Err(Error::invalid_params("message", "the agent wants a date")),
            "refuse auth" => Err(Error::new(ErrorKind::Unauthenticated, "sign in first")),
            "crash" => Err(Error::new(ErrorKind::Internal, "database unreachable")),
            _ => events.complete(None).await,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_refusing_before_its_first_event_is_answered_as_an_error() {
    let srv = TestServer::start(Picky).await;
    for binding in ALL {
        let params = json!({"message": user_message("refuse params")});
        let err = srv.err(binding, Op::SendMessage, params.clone()).await;
        err.assert_kind(Kind::InvalidParams);
        assert!(err.message.contains("wants a date"), "{}", err.message);
        // The message did not take effect: the same message again runs the agent again.
        srv.err(binding, Op::SendMessage, params.clone())
            .await
            .assert_kind(Kind::InvalidParams);
        let err = srv
            .open_stream(binding, Op::SendStreamingMessage, params, &[])
            .await
            .expect_err("a refusal is an error response, not a stream");
        err.assert_kind(Kind::InvalidParams);
        let blocking = json!({
            "message": user_message("refuse params"),
            "configuration": {"returnImmediately": true}
        });
        srv.err(binding, Op::SendMessage, blocking)
            .await
            .assert_kind(Kind::InvalidParams);
    }
    // No task was created by any of them.
    let list = srv.ok(Binding::JsonRpc, Op::ListTasks, json!({})).await;
    assert_eq!(list["totalSize"], 0, "{list:#}");
    // An internal failure still fails a task, which the caller can read.
    for binding in ALL {
        let task = srv.send_task(binding, "crash").await;
        assert_eq!(task["status"]["state"], "TASK_STATE_FAILED", "{task:#}");
        let mut stream = srv
            .stream(
                binding,
                Op::SendStreamingMessage,
                json!({"message": user_message("crash")}),
            )
            .await;
        let events = within("the failed task's stream", stream.rest()).await;
        assert!(!events.is_empty());
        // Normal work is unaffected.
        let task = srv.send_task(binding, "hello").await;
        assert_eq!(str_at(&task["status"], "state"), "TASK_STATE_COMPLETED");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_401_an_agent_answers_carries_a_challenge() {
    let srv = TestServer::start(Picky).await;
    let reply = srv
        .raw(
            Binding::Rest,
            Op::SendMessage,
            &json!({"message": user_message("refuse auth")}),
            &[],
        )
        .await;
    assert_eq!(reply.status, 401, "{:#}", reply.body);
    assert!(
        header_str(&reply.headers, "www-authenticate").starts_with("Bearer"),
        "{:?}",
        reply.headers
    );
}
