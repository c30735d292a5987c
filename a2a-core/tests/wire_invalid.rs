//! Invalid input on the v1.0 wire (digest §12 items 2, 4, 6, 7, 18, 25): bad parts and requests
//! are InvalidParams naming the field, malformed JSON-RPC envelopes are InvalidRequest or a
//! parse error, and method names map both ways.

mod support;

use a2a_core::jsonrpc::{Id, RawRequest, Request, Response};
use a2a_core::*;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::fmt::Debug;
use support::*;

fn assert_invalid_params(err: &Error, field: &str) {
    assert_eq!(err.kind(), Some(ErrorKind::InvalidParams), "{err}");
    assert_eq!(err.code, -32602);
    assert!(
        err.message.contains(field),
        "{:?} does not name {field}",
        err.message
    );
    let bad_request = err
        .details
        .iter()
        .find(|d| d["@type"] == BAD_REQUEST_TYPE)
        .expect("a BadRequest detail");
    assert_eq!(bad_request["fieldViolations"][0]["field"], field);
    assert_eq!(err.reason(), Some("INVALID_PARAMS"));
}

fn validate_fails<T: DeserializeOwned + Validate>(name: &str, field: &str) {
    let value: T = serde_json::from_value(fixture(name))
        .unwrap_or_else(|e| panic!("{name} should parse (and fail validation): {e}"));
    let err = value.validate().expect_err(name);
    assert_invalid_params(&err, field);
}

fn parse_fails<T: DeserializeOwned + Debug>(name: &str, says: &str) {
    let err = serde_json::from_value::<T>(fixture(name)).expect_err(name);
    assert!(err.to_string().contains(says), "{name}: {err}");
}

#[test]
fn invalid_parts_are_rejected() {
    parse_fails::<Part>("invalid/part_no_content.json", "it has none");
    parse_fails::<Part>("invalid/part_two_content.json", "it has text and url");
    parse_fails::<Part>("invalid/part_bad_base64.json", "not valid base64");
}

#[test]
fn invalid_parts_inside_a_request_are_invalid_params() {
    for (name, says) in [
        (
            "invalid/jsonrpc_send_part_two_content.json",
            "text and data",
        ),
        ("invalid/jsonrpc_send_part_no_content.json", "it has none"),
    ] {
        let req = RawRequest::parse(fixture_text(name).as_bytes()).unwrap();
        let err = req.params_as::<SendMessageRequest>().expect_err(name);
        assert_eq!(err.kind(), Some(ErrorKind::InvalidParams), "{name}");
        assert_eq!(err.code, -32602);
        assert!(err.message.contains(says), "{name}: {}", err.message);
    }
}

#[test]
fn send_message_without_parts_message_id_or_role_is_invalid_params() {
    validate_fails::<SendMessageRequest>("invalid/send_empty_parts.json", "message.parts");
    validate_fails::<SendMessageRequest>(
        "invalid/send_missing_message_id.json",
        "message.messageId",
    );
    validate_fails::<SendMessageRequest>("invalid/send_missing_role.json", "message.role");
    validate_fails::<SendMessageRequest>("invalid/send_v03_role.json", "message.role");
}

#[test]
fn negative_history_length_is_invalid_params() {
    validate_fails::<SendMessageRequest>(
        "invalid/send_negative_history.json",
        "configuration.historyLength",
    );
    validate_fails::<GetTaskRequest>("invalid/get_task_negative_history.json", "historyLength");
    validate_fails::<ListTasksRequest>("invalid/list_tasks_negative_history.json", "historyLength");
}

#[test]
fn list_tasks_page_size_and_status_are_checked() {
    validate_fails::<ListTasksRequest>("invalid/list_tasks_page_size_0.json", "pageSize");
    validate_fails::<ListTasksRequest>("invalid/list_tasks_page_size_101.json", "pageSize");
    validate_fails::<ListTasksRequest>("invalid/list_tasks_bad_status.json", "status");
    validate_fails::<ListTasksRequest>("invalid/list_tasks_v03_status.json", "status");
    for ok in [1, 50, 100] {
        let req: ListTasksRequest = serde_json::from_value(json!({"pageSize": ok})).unwrap();
        req.validate().unwrap();
    }
    let unspecified: ListTasksRequest =
        serde_json::from_value(json!({"status": "TASK_STATE_UNSPECIFIED"})).unwrap();
    assert_invalid_params(&unspecified.validate().unwrap_err(), "status");
}

#[test]
fn other_required_fields_are_checked() {
    let cases: Vec<(Box<dyn Validate>, &str)> = vec![
        (Box::new(GetTaskRequest::default()), "id"),
        (Box::new(CancelTaskRequest::default()), "id"),
        (Box::new(SubscribeToTaskRequest::default()), "id"),
        (Box::new(TaskPushNotificationConfig::default()), "taskId"),
        (
            Box::new(TaskPushNotificationConfig {
                task_id: Some("t".into()),
                ..Default::default()
            }),
            "url",
        ),
        (
            Box::new(TaskPushNotificationConfig {
                task_id: Some("t".into()),
                url: "https://h.example".into(),
                authentication: Some(AuthenticationInfo::default()),
                ..Default::default()
            }),
            "authentication.scheme",
        ),
        (
            Box::new(GetTaskPushNotificationConfigRequest::default()),
            "taskId",
        ),
        (
            Box::new(GetTaskPushNotificationConfigRequest {
                task_id: "t".into(),
                ..Default::default()
            }),
            "id",
        ),
        (
            Box::new(DeleteTaskPushNotificationConfigRequest::default()),
            "taskId",
        ),
        (
            Box::new(ListTaskPushNotificationConfigsRequest::default()),
            "taskId",
        ),
        (
            Box::new(Artifact {
                parts: Vec::new(),
                ..Artifact::text("a", "x")
            }),
            "artifact.parts",
        ),
        (
            Box::new(Artifact::text("a", "x").with_id("")),
            "artifact.artifactId",
        ),
    ];
    for (value, field) in cases {
        assert_invalid_params(&value.validate().unwrap_err(), field);
    }
    let mut send = SendMessageRequest::new(Message::user_text("x"));
    send.configuration = Some(SendMessageConfiguration {
        task_push_notification_config: Some(TaskPushNotificationConfig::default()),
        ..Default::default()
    });
    assert_invalid_params(
        &send.validate().unwrap_err(),
        "configuration.taskPushNotificationConfig.url",
    );
    GetExtendedAgentCardRequest::default().validate().unwrap();
    Message::agent_text("fine").validate().unwrap();
}

fn envelope_error(name: &str) -> Value {
    let resp = RawRequest::parse(fixture_text(name).as_bytes()).expect_err(name);
    serde_json::to_value(&*resp).unwrap()
}

#[test]
fn malformed_jsonrpc_envelopes_are_invalid_request() {
    for (name, id) in [
        ("invalid/jsonrpc_version_1_0.json", json!(3)),
        ("invalid/jsonrpc_missing_method.json", json!(4)),
        ("invalid/jsonrpc_object_id.json", Value::Null),
        ("invalid/jsonrpc_batch.json", Value::Null),
        ("invalid/jsonrpc_array_params.json", json!(8)),
    ] {
        let resp = envelope_error(name);
        assert_eq!(resp["jsonrpc"], "2.0", "{name}");
        assert_eq!(resp["id"], id, "{name}");
        assert!(resp.get("result").is_none());
        assert_eq!(resp["error"]["code"], -32600, "{name}");
        assert_eq!(
            resp["error"]["data"][0]["reason"], "INVALID_REQUEST",
            "{name}"
        );
    }
}

#[test]
fn a_body_that_is_not_json_is_a_parse_error_with_null_id() {
    let resp = envelope_error("invalid/jsonrpc_not_json.txt");
    assert_eq!(resp["id"], Value::Null);
    assert_eq!(resp["error"]["code"], -32700);
    assert_eq!(resp["error"]["data"][0]["reason"], "PARSE_ERROR");
    assert_eq!(resp["error"]["data"][0]["domain"], ERROR_DOMAIN);
    let typed = RawRequest::parse(b"").unwrap_err();
    assert_eq!(typed.id, Id::Null);
    assert!(typed.into_result().unwrap_err().is(ErrorKind::ParseError));
}

#[test]
fn well_formed_envelopes_are_read() {
    let req = RawRequest::parse(br#"{"jsonrpc":"2.0","id":"a-1","method":"GetExtendedAgentCard"}"#)
        .unwrap();
    assert_eq!(req.id, Id::from("a-1"));
    assert!(req.params.is_none());
    assert_eq!(
        req.params_as::<GetExtendedAgentCardRequest>().unwrap(),
        GetExtendedAgentCardRequest::default()
    );
    // A notification-style request without an id reads as id null.
    let req =
        RawRequest::parse(br#"{"jsonrpc":"2.0","method":"GetTask","params":{"id":"t"}}"#).unwrap();
    assert_eq!(req.id, Id::Null);
    // An unknown method is the dispatcher's concern (-32601), not the envelope's.
    let req =
        RawRequest::parse(br#"{"jsonrpc":"2.0","id":1,"method":"nonexistent/method"}"#).unwrap();
    assert_eq!(Method::from_name(&req.method), None);
    assert_eq!(Method::from_v03_name(&req.method), None);
    let not_found = Response::<Value>::error(req.id, ErrorKind::MethodNotFound.into());
    let out = serde_json::to_value(&not_found).unwrap();
    assert_eq!(out["id"], 1);
    assert_eq!(out["error"]["code"], -32601);
    // A request serializes as a request.
    let built = Request::new(5, "GetTask", GetTaskRequest::new("t-1"));
    assert_eq!(
        serde_json::to_value(&built).unwrap(),
        json!({"jsonrpc": "2.0", "id": 5, "method": "GetTask", "params": {"id": "t-1"}})
    );
    // A response needs `result` or `error`, and the version must be "2.0".
    assert!(serde_json::from_value::<Response<Value>>(json!({"jsonrpc": "2.0", "id": 1})).is_err());
    assert!(
        serde_json::from_value::<Response<Value>>(json!({"jsonrpc": "1.0", "id": 1, "result": {}}))
            .is_err()
    );
    // `"result": null` is a result (DeleteTaskPushNotificationConfig from a2a-python).
    let null: Response<Empty> =
        serde_json::from_value(json!({"jsonrpc": "2.0", "id": 1, "result": null})).unwrap();
    assert_eq!(null.into_result().unwrap(), Empty {});
}

#[test]
fn method_names_map_both_ways() {
    let v1: Vec<&str> = Method::ALL.iter().map(|m| m.name()).collect();
    assert_eq!(
        v1,
        [
            "SendMessage",
            "SendStreamingMessage",
            "GetTask",
            "ListTasks",
            "CancelTask",
            "SubscribeToTask",
            "CreateTaskPushNotificationConfig",
            "GetTaskPushNotificationConfig",
            "ListTaskPushNotificationConfigs",
            "DeleteTaskPushNotificationConfig",
            "GetExtendedAgentCard",
        ]
    );
    for m in Method::ALL {
        assert_eq!(Method::from_name(m.name()), Some(m));
        assert_eq!(m.to_string(), m.name());
        if let Some(old) = m.v03_name() {
            assert_eq!(Method::from_v03_name(old), Some(m));
        }
        assert_eq!(
            m.is_streaming(),
            matches!(m, Method::SendStreamingMessage | Method::SubscribeToTask)
        );
    }
    assert_eq!(Method::ListTasks.v03_name(), None);
    assert_eq!(
        <SendMessageRequest as a2a_core::Request>::METHOD,
        Method::SendMessage
    );
    assert_eq!(
        <ListTasksRequest as a2a_core::Request>::METHOD,
        Method::ListTasks
    );
}
