//! A v0.3-only agent: a small axum server that serves a v0.3 card (`protocolVersion: "0.3.0"`,
//! `url`, `preferredTransport: "JSONRPC"`) and answers v0.3 JSON-RPC with recorded v0.3
//! responses (`kind` fields, lowercase states, `final: true`). The client must pick JSON-RPC
//! 0.3, send v0.3 method names and shapes, and hand back the v1.0 model.

mod common;

use a2a_client::{Client, DelegateOptions, Error};
use a2a_core::{
    ErrorKind, GetTaskRequest, ListTasksRequest, Message, PartContent, Role, SendMessageRequest,
    StreamResponse, TaskState,
};
use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use common::{Recorder, collect, fold, shape, task_of, within};
use serde_json::{Value, json};

/// The card a v0.3 agent publishes.
fn v03_card(base: &str) -> Value {
    json!({
        "name": "Legacy travel agent",
        "description": "Books trips (A2A 0.3)",
        "url": format!("{base}/a2a"),
        "preferredTransport": "JSONRPC",
        "protocolVersion": "0.3.0",
        "version": "2.4.1",
        "capabilities": {"streaming": true, "pushNotifications": false},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{
            "id": "book-trip",
            "name": "Book a trip",
            "description": "Books flights and hotels",
            "tags": ["travel"]
        }]
    })
}

/// A recorded v0.3 `message/send` result: a bare task with `kind`, lowercase state, and parts
/// of all three kinds.
fn recorded_task() -> Value {
    json!({
        "kind": "task",
        "id": "task-v03-1",
        "contextId": "ctx-v03-1",
        "status": {"state": "completed", "timestamp": "2025-07-01T10:00:02.000Z"},
        "artifacts": [{
            "artifactId": "itinerary",
            "name": "Itinerary",
            "parts": [
                {"kind": "text", "text": "Lisbon, 3 nights"},
                {"kind": "file", "file": {"name": "ticket.txt", "mimeType": "text/plain", "bytes": "VElDS0VU"}},
                {"kind": "data", "data": {"price": 420, "currency": "EUR"}}
            ]
        }],
        "history": [{
            "kind": "message",
            "messageId": "m-1",
            "role": "user",
            "parts": [{"kind": "text", "text": "book Lisbon"}],
            "contextId": "ctx-v03-1",
            "taskId": "task-v03-1"
        }]
    })
}

/// A recorded v0.3 `tasks/get` result: an input-required task asking a question.
fn recorded_interrupted_task() -> Value {
    json!({
        "kind": "task",
        "id": "task-v03-9",
        "contextId": "ctx-v03-9",
        "status": {
            "state": "input-required",
            "message": {
                "kind": "message",
                "messageId": "m-q",
                "role": "agent",
                "parts": [{"kind": "text", "text": "Which dates?"}]
            }
        }
    })
}

/// A recorded v0.3 `message/stream`: task, status-update, two artifact chunks, and the final
/// status-update with `final: true`.
fn recorded_stream(id: &Value) -> String {
    let events = [
        json!({"kind": "task", "id": "task-v03-2", "contextId": "ctx-v03-2",
               "status": {"state": "submitted"}}),
        json!({"kind": "status-update", "taskId": "task-v03-2", "contextId": "ctx-v03-2",
               "status": {"state": "working"}, "final": false}),
        json!({"kind": "artifact-update", "taskId": "task-v03-2", "contextId": "ctx-v03-2",
               "artifact": {"artifactId": "a-1", "parts": [{"kind": "text", "text": "Part one. "}]},
               "lastChunk": false}),
        json!({"kind": "artifact-update", "taskId": "task-v03-2", "contextId": "ctx-v03-2",
               "artifact": {"artifactId": "a-1", "parts": [{"kind": "text", "text": "Part two."}]},
               "append": true, "lastChunk": true}),
        json!({"kind": "status-update", "taskId": "task-v03-2", "contextId": "ctx-v03-2",
               "status": {"state": "completed", "timestamp": "2025-07-01T10:00:04.210Z"},
               "final": true}),
    ];
    events
        .iter()
        .map(|e| {
            let line = json!({"jsonrpc": "2.0", "id": id, "result": e});
            format!("data: {line}\n\n")
        })
        .collect()
}

/// A recorded v0.3 `tasks/resubscribe`: the task, then its final status-update.
fn recorded_resubscribe(id: &Value) -> String {
    [
        json!({"kind": "task", "id": "task-v03-9", "contextId": "ctx-v03-9",
               "status": {"state": "working"}}),
        json!({"kind": "status-update", "taskId": "task-v03-9", "contextId": "ctx-v03-9",
               "status": {"state": "completed"}, "final": true}),
    ]
    .iter()
    .map(|e| {
        format!(
            "data: {}\n\n",
            json!({"jsonrpc": "2.0", "id": id, "result": e})
        )
    })
    .collect()
}

async fn card(State(base): State<String>) -> Response {
    axum::Json(v03_card(&base)).into_response()
}

async fn rpc(body: axum::body::Bytes) -> Response {
    let request: Value = serde_json::from_slice(&body).expect("a JSON-RPC request");
    let id = request["id"].clone();
    let reply = |payload: Value| {
        let mut envelope = json!({"jsonrpc": "2.0", "id": id});
        for (k, v) in payload.as_object().expect("object") {
            envelope[k] = v.clone();
        }
        axum::Json(envelope).into_response()
    };
    match request["method"].as_str().unwrap_or_default() {
        "message/send" => reply(json!({"result": recorded_task()})),
        "message/stream" => (
            [(header::CONTENT_TYPE, "text/event-stream")],
            recorded_stream(&id),
        )
            .into_response(),
        "tasks/get" if request["params"]["id"] == "missing" => reply(json!({"error": {
            "code": -32001,
            "message": "Task not found",
            "data": {"taskId": "missing"}
        }})),
        "tasks/get" => reply(json!({"result": recorded_interrupted_task()})),
        "tasks/cancel" => reply(json!({"result": {
            "kind": "task",
            "id": request["params"]["id"],
            "contextId": "ctx-v03-9",
            "status": {"state": "canceled"}
        }})),
        "tasks/resubscribe" => (
            [(header::CONTENT_TYPE, "text/event-stream")],
            recorded_resubscribe(&id),
        )
            .into_response(),
        "tasks/pushNotificationConfig/set" => {
            let mut config = request["params"].clone();
            config["pushNotificationConfig"]["id"] = json!("cfg-1");
            reply(json!({"result": config}))
        }
        "tasks/pushNotificationConfig/list" => reply(json!({"result": [{
            "taskId": request["params"]["id"],
            "pushNotificationConfig": {
                "id": "cfg-1",
                "url": "https://hooks.example.org/a2a",
                "authentication": {"schemes": ["Bearer"], "credentials": "s3cr3t"}
            }
        }]})),
        "tasks/pushNotificationConfig/delete" => reply(json!({"result": null})),
        other => reply(
            json!({"error": {"code": -32601, "message": format!("Method not found: {other}")}}),
        ),
    }
}

/// Starts the fake v0.3 agent; returns its base URL and what it received.
async fn v03_agent() -> (String, Recorder) {
    let (listener, base) = common::listen().await;
    let seen = Recorder::default();
    let router = seen.wrap(
        Router::new()
            .route("/.well-known/agent-card.json", get(card))
            .route("/a2a", post(rpc))
            .with_state(base.clone()),
    );
    common::spawn(listener, router);
    (base, seen)
}

async fn connect(base: &str) -> Client {
    within(
        "connect",
        Client::builder().retry(common::fast_retry()).connect(base),
    )
    .await
    .expect("connect")
}

#[tokio::test]
async fn a_v03_card_makes_the_client_speak_jsonrpc_0_3_at_the_card_url() {
    let (base, _) = v03_agent().await;
    let client = connect(&base).await;
    assert_eq!(client.binding(), ("JSONRPC", "0.3"));
    let card = client.card().expect("card");
    assert_eq!(card.name, "Legacy travel agent");
    assert_eq!(card.supported_interfaces.len(), 1);
    assert_eq!(card.supported_interfaces[0].url, format!("{base}/a2a"));
    assert_eq!(card.supported_interfaces[0].protocol_version, "0.3");
    assert!(client.supports_streaming());
    assert_eq!(card.skills[0].id, "book-trip");
}

#[tokio::test]
async fn message_send_goes_out_in_v03_shape_and_its_task_comes_back_in_the_v1_model() {
    let (base, seen) = v03_agent().await;
    let client = connect(&base).await;
    let message = Message::user_text("book Lisbon");
    let message_id = message.message_id.clone();
    let task = task_of(
        within(
            "send",
            client.send_message(&SendMessageRequest::new(message)),
        )
        .await
        .expect("send"),
    );

    // The request: v0.3 method, `kind`s, lowercase role, `blocking` instead of
    // `returnImmediately`, and no A2A-Version header (its absence means 0.3).
    let calls = seen.calls();
    assert_eq!(calls.len(), 1);
    let body = calls[0].json();
    assert_eq!(calls[0].path, "/a2a");
    assert_eq!(body["jsonrpc"], "2.0");
    assert_eq!(body["method"], "message/send");
    let sent = &body["params"]["message"];
    assert_eq!(sent["kind"], "message");
    assert_eq!(sent["role"], "user");
    assert_eq!(sent["messageId"], message_id.as_str());
    assert_eq!(
        sent["parts"],
        json!([{"kind": "text", "text": "book Lisbon"}])
    );
    assert_eq!(body["params"]["configuration"]["blocking"], true);
    assert!(
        body["params"]["configuration"]
            .get("returnImmediately")
            .is_none()
    );
    assert!(calls[0].header("a2a-version").is_none());

    // The result, in the v1.0 model.
    assert_eq!(task.id.as_str(), "task-v03-1");
    assert_eq!(task.context_id.as_str(), "ctx-v03-1");
    assert_eq!(task.status.state, TaskState::Completed);
    assert!(task.status.timestamp.is_some());
    let artifact = &task.artifacts[0];
    assert_eq!(artifact.name.as_deref(), Some("Itinerary"));
    assert_eq!(artifact.parts[0].as_text(), Some("Lisbon, 3 nights"));
    let file = &artifact.parts[1];
    assert_eq!(file.content, PartContent::Raw(b"TICKET".to_vec()));
    assert_eq!(file.filename.as_deref(), Some("ticket.txt"));
    assert_eq!(file.media_type.as_deref(), Some("text/plain"));
    assert_eq!(
        artifact.parts[2].as_data(),
        Some(&json!({"price": 420, "currency": "EUR"}))
    );
    assert_eq!(task.history[0].role, Role::User);

    // The v1.0 JSON of that task has no trace of v0.3.
    let v1 = serde_json::to_value(&task).expect("serialize");
    assert_eq!(v1["status"]["state"], "TASK_STATE_COMPLETED");
    assert!(v1.get("kind").is_none());
    assert_eq!(v1["history"][0]["role"], "ROLE_USER");
}

#[tokio::test]
async fn return_immediately_goes_out_as_blocking_false() {
    let (base, seen) = v03_agent().await;
    let client = connect(&base).await;
    let request =
        SendMessageRequest::new(Message::user_text("book Porto")).with_return_immediately(true);
    within("send", client.send_message(&request))
        .await
        .expect("send");
    assert_eq!(
        seen.calls()[0].json()["params"]["configuration"]["blocking"],
        false
    );
}

#[tokio::test]
async fn message_stream_events_with_kind_and_final_are_decoded_into_v1_events() {
    let (base, seen) = v03_agent().await;
    let client = connect(&base).await;
    let request = SendMessageRequest::new(Message::user_text("book Faro"));
    let stream = within("open", client.send_streaming_message(&request))
        .await
        .expect("open");
    let events = collect(stream).await;
    let shapes: Vec<String> = events.iter().map(shape).collect();
    assert_eq!(
        shapes,
        [
            "task TASK_STATE_SUBMITTED []",
            "status TASK_STATE_WORKING ",
            "artifact \"Part one. \" append=false last=false",
            "artifact \"Part two.\" append=true last=true",
            "status TASK_STATE_COMPLETED ",
        ]
    );
    let task = fold(&events).expect("task");
    assert_eq!(task.artifacts[0].text_content(), "Part one. Part two.");

    let call = &seen.calls()[0];
    assert_eq!(call.json()["method"], "message/stream");
    assert_eq!(call.json()["params"]["message"]["kind"], "message");
    assert_eq!(call.header("accept"), Some("text/event-stream"));
}

#[tokio::test]
async fn delegate_follows_a_v03_stream_to_the_final_task() {
    let (base, _) = v03_agent().await;
    let client = connect(&base).await;
    let options = DelegateOptions::default().deadline(common::WAIT);
    let task = task_of(
        within(
            "delegate",
            client.delegate(Message::user_text("book Faro"), options),
        )
        .await
        .expect("delegate"),
    );
    assert_eq!(task.id.as_str(), "task-v03-2");
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(task.artifacts[0].text_content(), "Part one. Part two.");
}

#[tokio::test]
async fn tasks_get_sends_the_id_and_history_length_and_decodes_the_task() {
    let (base, seen) = v03_agent().await;
    let client = connect(&base).await;
    let mut request = GetTaskRequest::new("task-v03-9");
    request.history_length = Some(2);
    let task = within("get", client.call(&request)).await.expect("get");
    assert_eq!(
        seen.calls()[0].json()["params"],
        json!({"id": "task-v03-9", "historyLength": 2})
    );
    assert_eq!(seen.calls()[0].json()["method"], "tasks/get");
    assert_eq!(task.status.state, TaskState::InputRequired);
    let question = task.status.message.expect("question");
    assert_eq!(question.role, Role::Agent);
    assert_eq!(question.text(), "Which dates?");
}

#[tokio::test]
async fn a_v03_error_comes_back_as_a_typed_remote_error() {
    let (base, _) = v03_agent().await;
    let client = connect(&base).await;
    let err = within("get", client.get_task("missing"))
        .await
        .expect_err("unknown task");
    assert!(matches!(err, Error::Remote { .. }), "{err}");
    assert_eq!(err.kind(), Some(ErrorKind::TaskNotFound));
    assert_eq!(err.remote().expect("remote").code, -32001);
}

#[tokio::test]
async fn list_tasks_is_refused_without_asking_a_v03_agent() {
    let (base, seen) = v03_agent().await;
    let client = connect(&base).await;
    let err = within("list", client.list_tasks(&ListTasksRequest::default()))
        .await
        .expect_err("no ListTasks in v0.3");
    assert!(matches!(err, Error::NoCompatibleInterface(_)), "{err}");
    assert!(seen.calls().is_empty());
}

#[tokio::test]
async fn our_server_answers_a_client_restricted_to_its_v03_interface() {
    let server = common::TestServer::demo().await;
    let mut card = server.card.clone();
    card.supported_interfaces
        .retain(|i| i.protocol_version == a2a_core::PROTOCOL_VERSION_V03);
    assert_eq!(card.supported_interfaces.len(), 1);
    let client = Client::builder()
        .retry(common::fast_retry())
        .build_from_card(card)
        .expect("client");
    assert_eq!(client.binding(), ("JSONRPC", "0.3"));

    let task = task_of(
        within("send", client.send_text("hola"))
            .await
            .expect("send"),
    );
    assert_eq!(task.artifacts[0].text_content(), "echo: hola");
    let request = SendMessageRequest::new(Message::user_text("countdown 2"));
    let stream = within("stream", client.send_streaming_message(&request))
        .await
        .expect("stream");
    let events = collect(stream).await;
    assert!(matches!(events[0], StreamResponse::Task(_)));
    let folded = fold(&events).expect("task");
    assert_eq!(folded.status.state, TaskState::Completed);
    assert_eq!(folded.artifacts[0].text_content(), "2\n1\n");
    let got = within("get", client.get_task(task.id.clone()))
        .await
        .expect("get");
    assert_eq!(got.id, task.id);

    let methods: Vec<String> = server.seen.calls().iter().map(common::Seen::op).collect();
    assert_eq!(methods, ["message/send", "message/stream", "tasks/get"]);
}

#[tokio::test]
async fn cancel_and_resubscribe_use_the_v03_methods_with_the_task_id() {
    let (base, seen) = v03_agent().await;
    let client = connect(&base).await;
    let canceled = within("cancel", client.cancel_task("task-v03-9"))
        .await
        .expect("cancel");
    assert_eq!(canceled.status.state, TaskState::Canceled);

    let stream = within("subscribe", client.subscribe("task-v03-9"))
        .await
        .expect("subscribe");
    let events = collect(stream).await;
    assert_eq!(
        events.iter().map(shape).collect::<Vec<_>>(),
        ["task TASK_STATE_WORKING []", "status TASK_STATE_COMPLETED "]
    );

    let calls = seen.calls();
    assert_eq!(calls[0].json()["method"], "tasks/cancel");
    assert_eq!(calls[0].json()["params"], json!({"id": "task-v03-9"}));
    assert_eq!(calls[1].json()["method"], "tasks/resubscribe");
    assert_eq!(calls[1].json()["params"], json!({"id": "task-v03-9"}));
}

#[tokio::test]
async fn push_configs_go_out_nested_and_come_back_flat() {
    let (base, seen) = v03_agent().await;
    let client = connect(&base).await;
    let config = a2a_core::TaskPushNotificationConfig {
        task_id: Some("task-v03-9".into()),
        url: "https://hooks.example.org/a2a".into(),
        token: Some("tok".into()),
        authentication: Some(a2a_core::AuthenticationInfo {
            scheme: "Bearer".into(),
            credentials: Some("s3cr3t".into()),
        }),
        ..Default::default()
    };
    let created = within("create", client.create_push_config(&config))
        .await
        .expect("create");
    assert_eq!(created.id.as_deref(), Some("cfg-1"));
    assert_eq!(created.task_id, config.task_id);
    assert_eq!(created.url, config.url);
    assert_eq!(created.authentication, config.authentication);

    let list = a2a_core::ListTaskPushNotificationConfigsRequest {
        task_id: "task-v03-9".into(),
        ..Default::default()
    };
    let listed = within("list", client.list_push_configs(&list))
        .await
        .expect("list");
    assert_eq!(listed.configs.len(), 1);
    assert_eq!(listed.configs[0].id.as_deref(), Some("cfg-1"));
    assert_eq!(listed.next_page_token, "");

    let delete = a2a_core::DeleteTaskPushNotificationConfigRequest {
        task_id: "task-v03-9".into(),
        id: "cfg-1".into(),
        ..Default::default()
    };
    within("delete", client.delete_push_config(&delete))
        .await
        .expect("a null result is an empty success");

    let calls = seen.calls();
    let set = calls[0].json();
    assert_eq!(set["method"], "tasks/pushNotificationConfig/set");
    assert_eq!(
        set["params"],
        json!({
            "taskId": "task-v03-9",
            "pushNotificationConfig": {
                "url": "https://hooks.example.org/a2a",
                "token": "tok",
                "authentication": {"schemes": ["Bearer"], "credentials": "s3cr3t"}
            }
        })
    );
    assert_eq!(calls[1].json()["params"], json!({"id": "task-v03-9"}));
    assert_eq!(
        calls[2].json()["params"],
        json!({"id": "task-v03-9", "pushNotificationConfigId": "cfg-1"})
    );
}
