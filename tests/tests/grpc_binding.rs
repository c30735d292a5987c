//! What only the gRPC binding has (issue 15): protobuf bytes that do not decode, unknown enum
//! numbers, missing fields, oversized and truncated messages, unknown methods and services,
//! compression it does not offer, credentials in metadata, event ids in the events' metadata,
//! the card's `GRPC` interface and a listener of gRPC only. Every error is a gRPC status with
//! a `google.rpc.Status` holding the ErrorInfo, and the server keeps serving. The behaviour
//! the bindings share runs over gRPC in the other suites (`ALL`).

use a2a_core::Task;
use a2a_core::proto::{self, schema};
use a2a_e2e::agents::{Echo, Kitchen};
use a2a_e2e::{Binding, Kind, Op, TestServer, send_params, str_at, within};
use serde_json::{Value, json};

/// A raw gRPC call over HTTP/2 (reqwest, prior knowledge): `frame` is sent as the body as is,
/// with `content-type: application/grpc` unless `headers` name another. Returns the HTTP
/// status, the headers (a trailers-only error has its `grpc-status` there) and the body.
async fn raw(
    srv: &TestServer,
    path: &str,
    frame: Vec<u8>,
    headers: &[(&str, &str)],
) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
    let http = reqwest::Client::builder()
        .http2_prior_knowledge()
        .build()
        .expect("an HTTP/2 client");
    let content_type = headers
        .iter()
        .find(|(k, _)| *k == "content-type")
        .map_or("application/grpc", |(_, v)| *v);
    let mut rb = http
        .post(srv.url(path))
        .header("content-type", content_type)
        .header("te", "trailers")
        .body(frame);
    for (k, v) in headers.iter().filter(|(k, _)| *k != "content-type") {
        rb = rb.header(*k, *v);
    }
    let response = within("the raw gRPC call", rb.send()).await.expect("sent");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = within("the body", response.bytes()).await.expect("body");
    (status, headers, body.to_vec())
}

/// A message in its gRPC frame (not compressed).
fn frame(message: &[u8]) -> Vec<u8> {
    let mut out = vec![0];
    out.extend_from_slice(&(message.len() as u32).to_be_bytes());
    out.extend_from_slice(message);
    out
}

/// The error of a trailers-only answer: its gRPC status name and ErrorInfo reason.
fn error_of(headers: &reqwest::header::HeaderMap) -> (String, Option<String>, Value) {
    let code: usize = headers
        .get("grpc-status")
        .expect("a grpc-status")
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    let details = headers
        .get("grpc-status-details-bin")
        .map(|v| {
            use base64::Engine as _;
            let bytes = base64::engine::general_purpose::STANDARD_NO_PAD
                .decode(v.as_bytes().strip_suffix(b"==").unwrap_or(v.as_bytes()))
                .expect("base64");
            proto::status_details(&bytes).expect("a google.rpc.Status")
        })
        .unwrap_or_default();
    let reason = details
        .iter()
        .find(|d| d["@type"] == "type.googleapis.com/google.rpc.ErrorInfo")
        .and_then(|d| d["reason"].as_str())
        .map(str::to_owned);
    (
        proto::GRPC_CODE_NAMES[code].to_owned(),
        reason,
        Value::Array(details),
    )
}

/// Asserts the server still answers a plain SendMessage over gRPC.
async fn still_serving(srv: &TestServer) {
    let result = srv
        .ok(Binding::Grpc, Op::SendMessage, send_params("hello"))
        .await;
    assert_eq!(result["task"]["status"]["state"], "TASK_STATE_COMPLETED");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bytes_that_are_not_protobuf_are_invalid_argument() {
    let srv = TestServer::start(Echo).await;
    for junk in [
        &[0x0a, 0x40, b'x'][..],             // a length past the end
        &[0xff, 0xff, 0xff, 0xff, 0xff][..], // a varint cut short
        &[0x13][..],                         // a group
        &[0x12, 0x02, 0xc3, 0x28][..],       // message not valid protobuf inside
    ] {
        let (status, headers, _) =
            raw(&srv, "/lf.a2a.v1.A2AService/SendMessage", frame(junk), &[]).await;
        assert_eq!(status, 200);
        let (code, reason, _) = error_of(&headers);
        assert_eq!(code, "INVALID_ARGUMENT", "{junk:02x?}");
        assert_eq!(reason.as_deref(), Some("INVALID_PARAMS"), "{junk:02x?}");
    }
    still_serving(&srv).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_and_invalid_fields_are_invalid_params_naming_the_field() {
    let srv = TestServer::start(Echo).await;
    // No message at all.
    let err = srv
        .call(Binding::Grpc, Op::SendMessage, json!({}))
        .await
        .unwrap_err();
    err.assert_kind(Kind::InvalidParams);
    assert!(err.message.contains("message"), "{}", err.message);
    // A message without its id, and one without parts.
    for (message, field) in [
        (
            json!({"role": "ROLE_USER", "parts": [{"text": "x"}]}),
            "messageId",
        ),
        (
            json!({"messageId": "m-1", "role": "ROLE_USER", "parts": []}),
            "parts",
        ),
    ] {
        let err = srv
            .call(Binding::Grpc, Op::SendMessage, json!({"message": message}))
            .await
            .unwrap_err();
        err.assert_kind(Kind::InvalidParams);
        assert!(err.message.contains(field), "{field}: {}", err.message);
    }
    // GetTask without an id.
    let err = srv
        .call(Binding::Grpc, Op::GetTask, json!({}))
        .await
        .unwrap_err();
    err.assert_kind(Kind::InvalidParams);
    still_serving(&srv).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_enum_numbers_are_invalid_params() {
    let srv = TestServer::start(Echo).await;
    // role = 9 (no such Role), state filter = 99 (no such TaskState).
    let err = srv
        .call(
            Binding::Grpc,
            Op::SendMessage,
            json!({"message": {"messageId": "m-1", "role": 9, "parts": [{"text": "x"}]}}),
        )
        .await
        .unwrap_err();
    err.assert_kind(Kind::InvalidParams);
    let err = srv
        .call(Binding::Grpc, Op::ListTasks, json!({"status": 99}))
        .await
        .unwrap_err();
    err.assert_kind(Kind::InvalidParams);
    still_serving(&srv).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_message_is_resource_exhausted_and_the_limit_is_the_body_limit() {
    let srv = TestServer::start_with(Echo, |b| b.body_limit(4096)).await;
    let big = send_params(&"x".repeat(8192));
    let err = srv
        .call(Binding::Grpc, Op::SendMessage, big)
        .await
        .unwrap_err();
    assert_eq!(err.grpc_status.as_deref(), Some("RESOURCE_EXHAUSTED"));
    assert_eq!(err.reason(), Some("PAYLOAD_TOO_LARGE"));
    assert!(
        err.message.contains("4101"),
        "the limit, frame included: {}",
        err.message
    );
    // Just under the limit passes.
    still_serving(&srv).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_truncated_frame_is_an_error_not_a_hang() {
    let srv = TestServer::start(Echo).await;
    // The frame announces 100 bytes and carries 3.
    let mut truncated = vec![0, 0, 0, 0, 100];
    truncated.extend_from_slice(&[0x0a, 0x01, b'x']);
    let (status, headers, _) = raw(&srv, "/lf.a2a.v1.A2AService/GetTask", truncated, &[]).await;
    assert_eq!(status, 200);
    let (code, _, _) = error_of(&headers);
    assert_ne!(code, "OK");
    still_serving(&srv).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_methods_and_services_are_unimplemented() {
    let srv = TestServer::start(Echo).await;
    for path in [
        "/lf.a2a.v1.A2AService/SendMessages",
        "/a2a.v1.A2AService/SendMessage",
        "/grpc.health.v1.Health/Check",
        "/",
    ] {
        let (status, headers, _) = raw(&srv, path, frame(&[]), &[]).await;
        assert_eq!(status, 200, "{path}");
        let (code, reason, _) = error_of(&headers);
        assert_eq!(code, "UNIMPLEMENTED", "{path}");
        assert_eq!(reason.as_deref(), Some("METHOD_NOT_FOUND"), "{path}");
    }
    // The agent card's paths are the card's whatever the content-type: a POST there is the
    // card route's 405, not a gRPC method.
    let (status, headers, _) = raw(&srv, "/.well-known/agent-card.json", frame(&[]), &[]).await;
    assert_eq!(status, 405);
    assert!(headers.get("grpc-status").is_none(), "{headers:?}");
    still_serving(&srv).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compressed_message_is_refused_cleanly() {
    let srv = TestServer::start(Echo).await;
    let message = proto::encode(&send_params("hi"), &schema::SEND_MESSAGE_REQUEST).unwrap();
    let mut compressed = frame(&message);
    compressed[0] = 1; // "compressed", with an encoding the server does not offer
    let (status, headers, _) = raw(
        &srv,
        "/lf.a2a.v1.A2AService/SendMessage",
        compressed,
        &[("grpc-encoding", "gzip")],
    )
    .await;
    assert_eq!(status, 200);
    let (code, _, _) = error_of(&headers);
    assert_eq!(code, "UNIMPLEMENTED");
    still_serving(&srv).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_is_told_by_its_exact_media_type_and_grpc_web_is_refused() {
    let srv = TestServer::start(Echo).await;
    let message = proto::encode(&send_params("hi"), &schema::SEND_MESSAGE_REQUEST).unwrap();
    let send = "/lf.a2a.v1.A2AService/SendMessage";
    // Any case, with parameters: a gRPC call, answered with a message.
    for ct in [
        "application/grpc+proto",
        "Application/GRPC",
        "application/gRPC+Proto; charset=utf-8",
    ] {
        let (status, headers, body) =
            raw(&srv, send, frame(&message), &[("content-type", ct)]).await;
        assert_eq!(status, 200, "{ct}");
        assert!(headers.get("grpc-status").is_none(), "{ct}: {headers:?}");
        assert_eq!(headers["content-type"], "application/grpc", "{ct}");
        assert!(body.len() > 5, "{ct}: a message in its frame");
    }
    // gRPC-Web, or messages of another codec: refused with 415, saying why.
    for ct in [
        "application/grpc-web",
        "application/grpc-web+proto",
        "application/GRPC-WEB-TEXT",
        "application/grpc+json",
    ] {
        let (status, headers, body) =
            raw(&srv, send, frame(&message), &[("content-type", ct)]).await;
        assert_eq!(status, 415, "{ct}");
        assert!(headers.get("grpc-status").is_none(), "{ct}: {headers:?}");
        let body = String::from_utf8(body).unwrap();
        assert!(body.contains("not gRPC-Web"), "{ct}: {body}");
    }
    // Not gRPC at all: the HTTP+JSON binding, which has no route there.
    let (status, headers, body) = raw(
        &srv,
        send,
        frame(&message),
        &[("content-type", "application/grpcfoo")],
    )
    .await;
    assert_eq!(status, 404);
    assert!(headers.get("grpc-status").is_none(), "{headers:?}");
    let body: Value = serde_json::from_slice(&body).expect("a JSON error body");
    assert_eq!(body["error"]["code"], 404, "{body}");
    still_serving(&srv).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsupported_version_in_metadata_is_version_not_supported() {
    let srv = TestServer::start(Echo).await;
    let err = srv
        .call_with(
            Binding::Grpc,
            Op::SendMessage,
            send_params("hi"),
            &[("a2a-version", "2.0")],
        )
        .await
        .unwrap_err();
    err.assert_kind(Kind::VersionNotSupported);
    srv.call_with(
        Binding::Grpc,
        Op::SendMessage,
        send_params("hi"),
        &[("a2a-version", "1.0")],
    )
    .await
    .expect("1.0 is served");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bearer_tokens_in_metadata_authenticate_and_isolate_tasks() {
    let srv = TestServer::start_with(Echo, |b| {
        b.authenticator(a2a_server::auth::BearerTokens::each_its_own([
            "alice-token".to_owned(),
            "bob-token".to_owned(),
        ]))
    })
    .await;
    let err = srv
        .call(Binding::Grpc, Op::SendMessage, send_params("hi"))
        .await
        .unwrap_err();
    assert_eq!(err.grpc_status.as_deref(), Some("UNAUTHENTICATED"));
    assert_eq!(err.reason(), Some("UNAUTHENTICATED"));
    let err = srv
        .call_with(
            Binding::Grpc,
            Op::SendMessage,
            send_params("hi"),
            &[("authorization", "Bearer wrong")],
        )
        .await
        .unwrap_err();
    assert_eq!(err.grpc_status.as_deref(), Some("UNAUTHENTICATED"));

    let alice = [("authorization", "Bearer alice-token")];
    let bob = [("authorization", "Bearer bob-token")];
    let task = srv
        .call_with(Binding::Grpc, Op::SendMessage, send_params("mine"), &alice)
        .await
        .expect("alice sends")["task"]
        .clone();
    let id = str_at(&task, "id");
    srv.call_with(Binding::Grpc, Op::GetTask, json!({"id": id}), &alice)
        .await
        .expect("alice reads her task");
    srv.call_with(Binding::Grpc, Op::GetTask, json!({"id": id}), &bob)
        .await
        .unwrap_err()
        .assert_kind(Kind::TaskNotFound);
    let listed = srv
        .call_with(Binding::Grpc, Op::ListTasks, json!({}), &bob)
        .await
        .expect("bob lists");
    assert_eq!(listed["totalSize"], 0, "bob sees none of alice's tasks");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn event_ids_are_in_the_events_metadata_only_for_clients_that_ask() {
    let srv = TestServer::start(Kitchen).await;
    // The harness asks for the extension on every gRPC stream: each task event has an id.
    let mut stream = srv
        .stream(
            Binding::Grpc,
            Op::SendStreamingMessage,
            send_params("chunks"),
        )
        .await;
    let mut ids = Vec::new();
    let mut task_id = String::new();
    while let Some(event) = stream.next_event().await {
        let data = event.json();
        if let Some(t) = data["task"]["id"].as_str() {
            task_id = t.to_owned();
        }
        ids.push(event.id.expect("an event id").parse::<u64>().unwrap());
    }
    assert_eq!(ids.len(), 6);
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");

    assert!(!task_id.is_empty());

    // A live task, subscribed to without the extension: its events' metadata is left alone.
    let mut params = send_params("slow");
    params["configuration"] = json!({"returnImmediately": true});
    let task = srv.ok(Binding::Grpc, Op::SendMessage, params).await["task"].clone();
    let id = str_at(&task, "id").to_owned();
    let channel = tonic::transport::Endpoint::from_shared(srv.base.clone())
        .unwrap()
        .connect_lazy();
    let mut grpc = tonic::client::Grpc::new(channel);
    within("ready", grpc.ready()).await.unwrap();
    let request = proto::encode(&json!({"id": id}), &schema::SUBSCRIBE_TO_TASK_REQUEST).unwrap();
    let path = http::uri::PathAndQuery::from_static("/lf.a2a.v1.A2AService/SubscribeToTask");
    let mut messages = within(
        "subscribe",
        grpc.server_streaming(
            tonic::Request::new(bytes::Bytes::from(request)),
            path,
            proto::BytesCodec,
        ),
    )
    .await
    .expect("subscribed")
    .into_inner();
    let first = within("the snapshot", messages.message())
        .await
        .expect("a message")
        .expect("the snapshot");
    let snapshot: Value = proto::decode(&first, &schema::STREAM_RESPONSE).unwrap();
    assert!(snapshot["task"].get("metadata").is_none(), "{snapshot:#}");
    let task: Task = serde_json::from_value(snapshot["task"].clone()).unwrap();
    assert_eq!(task.id.as_str(), id);
    srv.ok(Binding::Grpc, Op::CancelTask, json!({"id": id}))
        .await;
    let last = within("the canceled status", messages.message())
        .await
        .expect("a message")
        .expect("the last event");
    let last: Value = proto::decode(&last, &schema::STREAM_RESPONSE).unwrap();
    assert_eq!(
        last["statusUpdate"]["status"]["state"],
        "TASK_STATE_CANCELED"
    );
    assert!(last["statusUpdate"].get("metadata").is_none(), "{last:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_card_lists_a_grpc_interface_at_host_and_port() {
    let srv = TestServer::start(Echo).await;
    let card: Value = srv
        .http
        .get(srv.url("/.well-known/agent-card.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let grpc: Vec<&Value> = card["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["protocolBinding"] == "GRPC")
        .collect();
    // One for 1.0, one for 1.1 (task generations), at the same address.
    assert_eq!(grpc.len(), 2, "{card:#}");
    for (i, version) in grpc.iter().zip(["1.0", "1.1"]) {
        assert_eq!(i["url"], srv.addr.to_string(), "host:port, no scheme");
        assert_eq!(i["protocolVersion"], version);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_of_its_own_serves_grpc_only_and_is_the_one_advertised() {
    let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    std_listener.set_nonblocking(true).unwrap();
    let grpc_addr = std_listener.local_addr().unwrap();
    let listener = tokio::net::TcpListener::from_std(std_listener).unwrap();
    let srv = TestServer::start_with(Echo, move |b| b.grpc_listener(listener)).await;
    let card: Value = srv
        .http
        .get(srv.url("/.well-known/agent-card.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let url = card["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["protocolBinding"] == "GRPC")
        .map(|i| i["url"].clone());
    assert_eq!(url, Some(json!(grpc_addr.to_string())));

    // gRPC on the listener of its own.
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{grpc_addr}"))
        .unwrap()
        .connect_lazy();
    let mut grpc = tonic::client::Grpc::new(channel);
    within("ready", grpc.ready()).await.unwrap();
    let request = proto::encode(&send_params("hi"), &schema::SEND_MESSAGE_REQUEST).unwrap();
    let path = http::uri::PathAndQuery::from_static("/lf.a2a.v1.A2AService/SendMessage");
    let answer = within(
        "send",
        grpc.unary(
            tonic::Request::new(bytes::Bytes::from(request)),
            path,
            proto::BytesCodec,
        ),
    )
    .await
    .expect("answered");
    let reply: Value = proto::decode(answer.get_ref(), &schema::SEND_MESSAGE_RESPONSE).unwrap();
    assert_eq!(reply["task"]["status"]["state"], "TASK_STATE_COMPLETED");

    // Anything else there: 415.
    let plain = srv
        .http
        .get(format!("http://{grpc_addr}/.well-known/agent-card.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(plain.status().as_u16(), 415);
    // And the HTTP port still serves gRPC too.
    still_serving(&srv).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_advertised_grpc_address_follows_the_public_url() {
    let grpc_url =
        |public: &str, configure: fn(a2a_server::ServerBuilder) -> a2a_server::ServerBuilder| {
            let server = configure(a2a_server::Server::builder(Echo).public_url(public))
                .build()
                .expect("a valid server");
            server
                .agent_card()
                .supported_interfaces
                .iter()
                .find(|i| i.protocol_binding == "GRPC")
                .map(|i| i.url.clone())
        };
    let same = |b| b;
    assert_eq!(
        grpc_url("https://agent.example.net/a2a", same).as_deref(),
        Some("agent.example.net:443")
    );
    assert_eq!(
        grpc_url("http://agent.example.net", same).as_deref(),
        Some("agent.example.net:80")
    );
    assert_eq!(
        grpc_url("http://[::1]:9000/", same).as_deref(),
        Some("[::1]:9000")
    );
    assert_eq!(
        grpc_url("https://agent.example.net", |b| b
            .grpc_public_url("grpc.example.net:8443"))
        .as_deref(),
        Some("grpc.example.net:8443")
    );
    assert_eq!(
        grpc_url("https://agent.example.net", |b| b.grpc(false)),
        None
    );
}
