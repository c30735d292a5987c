//! Service parameters (checklist 41, 42): `A2A-Version` (header or query) and `A2A-Extensions`,
//! on every operation of both bindings.

use a2a_core::{AgentExtension, AgentSkill};
use a2a_e2e::agents::Kitchen;
use a2a_e2e::{
    ALL, ApiError, BOTH, Binding, Kind, Op, TestServer, header_str, send_params, str_at,
};
use serde_json::{Value, json};

/// Parameters that route `op` in both bindings (ids need not exist).
fn dummy_params(op: Op) -> Value {
    match op {
        Op::SendMessage | Op::SendStreamingMessage => send_params("hello"),
        Op::GetTask | Op::CancelTask | Op::SubscribeToTask => json!({"id": "t-x"}),
        Op::ListTasks | Op::GetExtendedAgentCard => json!({}),
        Op::CreatePushConfig => json!({"taskId": "t-x", "url": "https://hooks.example.net/a"}),
        Op::GetPushConfig | Op::DeletePushConfig => json!({"taskId": "t-x", "id": "c-1"}),
        Op::ListPushConfigs => json!({"taskId": "t-x"}),
    }
}

/// Runs `op` (streaming or not) and returns the error, if any; a stream is dropped at once.
async fn attempt(
    srv: &TestServer,
    b: Binding,
    op: Op,
    params: Value,
    headers: &[(&str, &str)],
    query: &[(&str, &str)],
) -> Result<Option<Value>, ApiError> {
    if op.is_streaming() {
        srv.open_stream_ext(b, op, params, headers, query)
            .await
            .map(|_| None)
    } else {
        srv.call_ext(b, op, params, headers, query).await.map(Some)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsupported_version_is_rejected_on_every_operation() {
    let srv = TestServer::start(Kitchen).await;
    for version in ["0.5", "2.0", "0.2", "1.x", "one"] {
        for b in BOTH {
            for op in Op::ALL {
                let err = attempt(
                    &srv,
                    b,
                    op,
                    dummy_params(op),
                    &[("A2A-Version", version)],
                    &[],
                )
                .await
                .expect_err("an unsupported version");
                err.assert_kind(Kind::VersionNotSupported);
            }
            // The same as a query parameter.
            let err = attempt(
                &srv,
                b,
                Op::ListTasks,
                json!({}),
                &[],
                &[("A2A-Version", version)],
            )
            .await
            .expect_err("an unsupported version");
            err.assert_kind(Kind::VersionNotSupported);
        }
        // v0.3 method names too.
        let response = srv
            .rpc(
                "message/send",
                json!({"message": {"kind": "message", "messageId": "m-1", "role": "user",
                                   "parts": [{"kind": "text", "text": "hi"}]}}),
                &[("A2A-Version", version)],
            )
            .await;
        assert_eq!(response["error"]["code"], -32009, "{response:#}");
    }
    assert_eq!(
        srv.ok(Binding::JsonRpc, Op::ListTasks, json!({})).await["totalSize"],
        0,
        "nothing was created"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn version_1_0_is_accepted_as_header_or_query_on_every_operation() {
    let srv = TestServer::start(Kitchen).await;
    let as_header: &[(&str, &str)] = &[("A2A-Version", "1.0")];
    let as_query: &[(&str, &str)] = &[("A2A-Version", "1.0")];
    for b in BOTH {
        for (headers, query) in [(as_header, &[][..]), (&[][..], as_query)] {
            let send = attempt(
                &srv,
                b,
                Op::SendMessage,
                send_params("hello"),
                headers,
                query,
            )
            .await
            .expect("SendMessage")
            .unwrap();
            assert_eq!(send["task"]["status"]["state"], "TASK_STATE_COMPLETED");
            let done = str_at(&send["task"], "id").to_owned();
            let working = srv.make_task(Binding::JsonRpc, "TASK_STATE_WORKING").await;
            let working = str_at(&working, "id").to_owned();

            let ok_cases = [
                (Op::SendStreamingMessage, send_params("hello")),
                (Op::GetTask, json!({"id": done})),
                (Op::ListTasks, json!({"pageSize": 5})),
                (Op::SubscribeToTask, json!({"id": working})),
                (Op::CancelTask, json!({"id": working})),
            ];
            for (op, params) in ok_cases {
                attempt(&srv, b, op, params, headers, query)
                    .await
                    .unwrap_or_else(|e| panic!("{b:?} {op:?}: {:#}", e.body));
            }
            // Operations this server does not offer answer their own error, not -32009.
            for op in [
                Op::CreatePushConfig,
                Op::GetPushConfig,
                Op::ListPushConfigs,
                Op::DeletePushConfig,
            ] {
                let mut params = dummy_params(op);
                params["taskId"] = json!(done);
                attempt(&srv, b, op, params, headers, query)
                    .await
                    .expect_err("push is not offered")
                    .assert_kind(Kind::PushNotificationNotSupported);
            }
            attempt(&srv, b, Op::GetExtendedAgentCard, json!({}), headers, query)
                .await
                .expect_err("no extended card")
                .assert_kind(Kind::UnsupportedOperation);
        }
    }
}

const REQUIRED: &str = "https://example.net/ext/required/v1";
const OPTIONAL: &str = "https://example.net/ext/optional/v1";

async fn server_with_extensions() -> TestServer {
    let card = a2a_core::AgentCard::builder("ext agent", "Declares extensions.")
        .skill(AgentSkill::new("echo", "Echo", "Echoes.").with_tags(["test"]))
        .extension(AgentExtension::new(REQUIRED).with_required(true))
        .extension(AgentExtension::new(OPTIONAL).with_description("nice to have"))
        .build();
    TestServer::start_with(Kitchen, move |b| b.agent_card(card)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_required_extension_the_client_did_not_request_is_extension_support_required() {
    let srv = server_with_extensions().await;
    let card: Value = srv.card().await;
    assert_eq!(card["capabilities"]["extensions"][0]["uri"], REQUIRED);
    assert_eq!(card["capabilities"]["extensions"][0]["required"], true);
    for b in ALL {
        for headers in [
            &[][..],
            &[("A2A-Extensions", OPTIONAL)][..],
            &[("A2A-Extensions", "https://example.net/ext/required/v0")][..],
        ] {
            for op in [
                Op::SendMessage,
                Op::SendStreamingMessage,
                Op::GetTask,
                Op::ListTasks,
            ] {
                let err = attempt(&srv, b, op, dummy_params(op), headers, &[])
                    .await
                    .expect_err("the required extension is missing");
                err.assert_kind(Kind::ExtensionSupportRequired);
                assert_eq!(err.error_info().unwrap()["metadata"]["extension"], REQUIRED);
            }
        }
    }
    let listed = srv
        .call_with(
            Binding::JsonRpc,
            Op::ListTasks,
            json!({}),
            &[("A2A-Extensions", REQUIRED)],
        )
        .await
        .expect("a call activating the required extension");
    assert_eq!(listed["totalSize"], 0, "nothing was created");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn activated_extensions_are_echoed_in_the_response_header() {
    let srv = server_with_extensions().await;
    for b in ALL {
        // Only the required one.
        let reply = srv
            .raw(
                b,
                Op::SendMessage,
                &send_params("hello"),
                &[("A2A-Extensions", REQUIRED)],
            )
            .await;
        assert_eq!(header_str(&reply.headers, "a2a-extensions"), REQUIRED);
        let task = reply.outcome().unwrap()["task"].clone();
        assert_eq!(
            task["artifacts"][0]["metadata"]["extensions"],
            json!([REQUIRED])
        );

        // Both, plus one the agent does not know (ignored), in two header spellings.
        for name in ["A2A-Extensions", "X-A2A-Extensions"] {
            let list = format!("https://example.net/ext/unknown/v1, {OPTIONAL},{REQUIRED}");
            let reply = srv
                .raw(b, Op::SendMessage, &send_params("hello"), &[(name, &list)])
                .await;
            let echoed: Vec<String> = header_str(&reply.headers, "a2a-extensions")
                .split(',')
                .map(|s| s.trim().to_owned())
                .collect();
            assert_eq!(echoed, [REQUIRED, OPTIONAL], "{b:?} {name}");
            let task = reply.outcome().unwrap()["task"].clone();
            assert_eq!(
                task["artifacts"][0]["metadata"]["extensions"],
                json!([REQUIRED, OPTIONAL]),
                "the agent sees the activated extensions"
            );
        }

        // Streams carry the header as well.
        let mut stream = srv
            .open_stream(
                b,
                Op::SendStreamingMessage,
                send_params("hello"),
                &[("A2A-Extensions", REQUIRED)],
            )
            .await
            .unwrap();
        assert_eq!(header_str(&stream.headers, "a2a-extensions"), REQUIRED);
        assert!(!stream.rest().await.is_empty());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_declared_extensions_no_extension_header_is_sent() {
    let srv = TestServer::start(Kitchen).await;
    for b in ALL {
        let reply = srv
            .raw(
                b,
                Op::SendMessage,
                &send_params("hello"),
                &[("A2A-Extensions", OPTIONAL)],
            )
            .await;
        assert!(reply.headers.get("a2a-extensions").is_none());
        let task = reply.outcome().unwrap()["task"].clone();
        assert!(task["artifacts"][0].get("metadata").is_none());
    }
}

/// Spec §3.6.2: a request without `A2A-Version` is a 0.3 request. Over JSON-RPC its method
/// names are then v0.3's: a 1.0 name is not found (with a hint to send the header), while a
/// v0.3 client, which sends no version, is served. Each version has only its own names.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_json_rpc_request_without_a_version_is_a_v03_request() {
    let srv = TestServer::start(Kitchen).await;
    let v1_params = send_params("hello");
    let v03_params = json!({"message": {"kind": "message", "messageId": "m-v03", "role": "user",
                                        "parts": [{"kind": "text", "text": "hi"}]}});
    for (method, params, headers) in [
        ("SendMessage", &v1_params, &[][..]),
        ("SendMessage", &v1_params, &[("A2A-Version", "0.3")][..]),
        ("SendMessage", &v1_params, &[("A2A-Version", "")][..]),
        ("message/send", &v03_params, &[("A2A-Version", "1.0")][..]),
    ] {
        let response = srv.rpc(method, params.clone(), headers).await;
        assert_eq!(
            response["error"]["code"], -32601,
            "{method} {headers:?}: {response:#}"
        );
        assert!(
            str_at(&response["error"], "message").contains("A2A"),
            "the message says which version the name belongs to: {response:#}"
        );
    }
    let v03 = srv.rpc("message/send", v03_params, &[]).await;
    assert_eq!(v03["result"]["kind"], "task", "{v03:#}");
    let v1 = srv
        .rpc("SendMessage", v1_params, &[("A2A-Version", "1.0")])
        .await;
    assert_eq!(
        v1["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{v1:#}"
    );
    // HTTP+JSON has no v0.3 routes here: a request without a version is served by its path.
    let reply = srv
        .http
        .post(srv.url("/message:send"))
        .header("content-type", "application/a2a+json")
        .json(&send_params("no version"))
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);
}
