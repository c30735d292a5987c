//! The gRPC binding's protobuf mapping: every v1.0 JSON fixture converts JSON → protobuf → JSON
//! unchanged (as a `serde_json::Value` and through its Rust type); the same message as the
//! official protobuf runtime encodes it (`fixtures/proto/*.binpb`, written by
//! `fixtures/proto/make.py` with the official Python SDK's generated classes) decodes to the
//! fixture, and our encoding is byte for byte the same; errors become `google.rpc.Status` and
//! back, and bad bytes are errors, never panics.

use a2a_core::proto::{self, MessageType, schema};
use a2a_core::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::fmt::Debug;
use std::path::PathBuf;

fn fixture(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The message a fixture holds: the whole file, or the JSON-RPC `params` / `result` in it.
fn body(name: &str) -> Value {
    let v = fixture(name);
    match (v.get("params"), v.get("result")) {
        (Some(p), _) => p.clone(),
        (_, Some(r)) => r.clone(),
        _ => v,
    }
}

/// JSON → protobuf → JSON, as `serde_json::Value` and as `T`; both must give back the fixture.
fn check<T>(name: &str, ty: &'static MessageType)
where
    T: Serialize + DeserializeOwned + PartialEq + Debug,
{
    let json = body(name);
    let bytes = proto::encode(&json, ty).unwrap_or_else(|e| panic!("{name}: {e}"));
    let back: Value = proto::decode(&bytes, ty).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(back, json, "{name}: JSON → protobuf → JSON changed it");

    let typed: T = serde_json::from_value(json.clone()).unwrap();
    let typed_bytes = proto::encode(&typed, ty).unwrap_or_else(|e| panic!("{name}: {e}"));
    // (Not byte for byte: a `Value` writes its object keys sorted.)
    assert_eq!(
        proto::decode::<Value>(&typed_bytes, ty).unwrap(),
        json,
        "{name}: the type and its JSON encode differently"
    );
    // The same message as the official protobuf runtime encodes it (fixtures/proto/make.py).
    let stem = name.trim_start_matches("v1/").trim_end_matches(".json");
    let official = std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/proto")
            .join(format!("{stem}.binpb")),
    )
    .unwrap_or_else(|e| panic!("{name}: no protobuf fixture: {e}"));
    let from_official: Value =
        proto::decode(&official, ty).unwrap_or_else(|e| panic!("{name} (official bytes): {e}"));
    assert_eq!(
        from_official, json,
        "{name}: the official bytes decode to another message"
    );
    // Our types write their fields in the proto's order: the very bytes of the official
    // runtime's deterministic encoding.
    assert_eq!(
        typed_bytes, official,
        "{name}: the encoding differs from the official one"
    );
    let again: T = proto::decode(&typed_bytes, ty).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(
        again,
        typed,
        "{name}: protobuf → {}",
        std::any::type_name::<T>()
    );
    assert_eq!(serde_json::to_value(&again).unwrap(), json, "{name}");
}

#[test]
fn every_v1_message_fixture_round_trips_through_protobuf() {
    use schema::*;
    check::<Task>("v1/task_input_required.json", &TASK);
    check::<AgentCard>("v1/agent_card.json", &AGENT_CARD);
    check::<AgentCard>("v1/agent_card_full.json", &AGENT_CARD);
    check::<SendMessageRequest>("v1/send_message_request.json", &SEND_MESSAGE_REQUEST);
    check::<SendMessageRequest>("v1/send_message_request_full.json", &SEND_MESSAGE_REQUEST);
    check::<SendMessageResponse>("v1/send_message_response.json", &SEND_MESSAGE_RESPONSE);
    check::<SendMessageResponse>(
        "v1/send_message_response_message.json",
        &SEND_MESSAGE_RESPONSE,
    );
    for sse in [
        "v1/sse_1_task.json",
        "v1/sse_3_artifact_last_chunk.json",
        "v1/sse_4_status_completed.json",
        "v1/stream_artifact_update_full.json",
        "v1/stream_message.json",
        "v1/push_delivery.json",
    ] {
        check::<StreamResponse>(sse, &STREAM_RESPONSE);
    }
    check::<TaskPushNotificationConfig>("v1/push_config.json", &TASK_PUSH_NOTIFICATION_CONFIG);
    check::<GetTaskPushNotificationConfigRequest>(
        "v1/push_config_get_request.json",
        &GET_TASK_PUSH_NOTIFICATION_CONFIG_REQUEST,
    );
    check::<ListTaskPushNotificationConfigsResponse>(
        "v1/push_config_list_response.json",
        &LIST_TASK_PUSH_NOTIFICATION_CONFIGS_RESPONSE,
    );
    for list in [
        "v1/list_tasks_response_last_page.json",
        "v1/list_tasks_response_empty.json",
        "v1/list_tasks_response_more.json",
    ] {
        check::<ListTasksResponse>(list, &LIST_TASKS_RESPONSE);
    }
    check::<ListTasksRequest>("v1/list_tasks_request.json", &LIST_TASKS_REQUEST);
    check::<GetTaskRequest>("v1/get_task_request.json", &GET_TASK_REQUEST);
    check::<CancelTaskRequest>("v1/cancel_task_request.json", &CANCEL_TASK_REQUEST);
    for scheme in ["api_key", "http_auth", "oauth2", "open_id_connect", "mtls"] {
        check::<SecurityScheme>(
            &format!("v1/security_scheme_{scheme}.json"),
            &SECURITY_SCHEME,
        );
    }
    for flow in [
        "authorization_code",
        "client_credentials",
        "device_code",
        "implicit",
        "password",
    ] {
        check::<OAuthFlows>(&format!("v1/oauth_flow_{flow}.json"), &OAUTH_FLOWS);
    }
}

#[test]
fn parts_of_every_kind_round_trip() {
    let parts = fixture("v1/parts.json");
    for part in parts.as_array().unwrap() {
        let bytes = proto::encode(part, &schema::PART).unwrap();
        let back: Value = proto::decode(&bytes, &schema::PART).unwrap();
        assert_eq!(&back, part);
        let typed: Part = proto::decode(&bytes, &schema::PART).unwrap();
        assert_eq!(serde_json::to_value(typed).unwrap(), *part);
    }
}

#[test]
fn the_wire_bytes_are_those_of_the_proto() {
    // Task {id: "t" (1), status: {state: WORKING (2)} (3)}, checked byte by byte.
    let task: Task = serde_json::from_value(json!({
        "id": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}
    }))
    .unwrap();
    let bytes = proto::encode(&task, &schema::TASK).unwrap();
    assert_eq!(
        bytes,
        [0x0a, 1, b't', 0x12, 1, b'c', 0x1a, 2, 0x08, 2],
        "{bytes:02x?}"
    );
    // A long nested message takes a two-byte length.
    let text = "x".repeat(300);
    let m = Message::user_text(&text);
    let bytes = proto::encode(&m, &schema::MESSAGE).unwrap();
    let back: Message = proto::decode(&bytes, &schema::MESSAGE).unwrap();
    assert_eq!(back, m);
}

#[test]
fn data_parts_keep_integers_and_nulls() {
    let part = json!({"data": {"n": 3, "x": 1.5, "neg": -7, "big": 9007199254740993u64,
                               "list": [null, true, "s", {"deep": []}], "nil": null}});
    let bytes = proto::encode(&part, &schema::PART).unwrap();
    let back: Value = proto::decode(&bytes, &schema::PART).unwrap();
    let data = &back["data"];
    assert_eq!(data["n"], json!(3));
    assert_eq!(data["x"], json!(1.5));
    assert_eq!(data["neg"], json!(-7));
    assert_eq!(data["list"], json!([null, true, "s", {"deep": []}]));
    assert_eq!(data["nil"], Value::Null);
    // A double holds 2^53 + 1 only approximately, as on every ProtoJSON peer.
    assert!(data["big"].is_number());
}

#[test]
fn absent_required_scalars_read_as_their_defaults() {
    // A peer that leaves out an empty nextPageToken and a zero totalSize (proto3 does).
    let bytes = proto::encode(&json!({"tasks": []}), &schema::LIST_TASKS_RESPONSE).unwrap();
    assert!(bytes.is_empty());
    let back: ListTasksResponse = proto::decode(&bytes, &schema::LIST_TASKS_RESPONSE).unwrap();
    assert_eq!(back.next_page_token, "");
    assert_eq!(back.total_size, 0);
    // A message without its messageId decodes, and validation names the field.
    let bytes = proto::encode(
        &json!({"message": {"role": "ROLE_USER", "parts": [{"text": "hi"}]}}),
        &schema::SEND_MESSAGE_REQUEST,
    )
    .unwrap();
    let request: SendMessageRequest = proto::decode(&bytes, &schema::SEND_MESSAGE_REQUEST).unwrap();
    let err = request.validate().unwrap_err();
    assert!(err.message.contains("messageId"), "{err}");
}

#[test]
fn unknown_fields_are_skipped_and_unknown_enum_values_kept() {
    let mut bytes = proto::encode(
        &json!({"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}),
        &schema::TASK,
    )
    .unwrap();
    // Field 99 (varint) and field 100 (bytes), from a newer peer.
    bytes.extend_from_slice(&[0x98, 0x06, 0x01, 0xa2, 0x06, 0x02, b'h', b'i']);
    let task: Task = proto::decode(&bytes, &schema::TASK).unwrap();
    assert_eq!(task.id, "t");
    // state = 42, a value this version does not know.
    let status = [0x08, 42];
    let v: Value = proto::decode(&status, &schema::TASK_STATUS).unwrap();
    assert_eq!(v["state"], json!(42));
    let s: TaskStatus = proto::decode(&status, &schema::TASK_STATUS).unwrap();
    assert!(matches!(s.state, TaskState::Unknown(_)), "{:?}", s.state);
}

#[test]
fn bad_bytes_are_errors_not_panics() {
    let cases: &[&[u8]] = &[
        &[0x0a, 0x05, b'a'], // a length past the end
        &[0x0a],             // a key with no value
        &[
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        ], // an overlong varint
        &[0x00, 0x01],       // field number 0
        &[0x0b],             // a group
        &[0x08, 0x01],       // id (a string) as a varint
        &[0x0a, 0x02, 0xc3, 0x28], // id not UTF-8
        &[0x1a, 0x02, 0x08], // status cut short inside
    ];
    for bytes in cases {
        assert!(
            proto::decode::<Task>(bytes, &schema::TASK).is_err(),
            "{bytes:02x?} decoded"
        );
        assert!(proto::decode::<Value>(bytes, &schema::TASK).is_err());
    }
    // Values nested 10,000 deep: refused, not a stack overflow.
    let mut value = Vec::new(); // an empty Value (null)
    for _ in 0..10_000 {
        let mut list = vec![0x0a]; // ListValue.values
        put_len(&mut list, value.len());
        list.extend_from_slice(&value);
        value = vec![0x32]; // Value.list_value
        put_len(&mut value, list.len());
        value.extend_from_slice(&list);
    }
    let mut part = vec![0x22]; // Part.data
    put_len(&mut part, value.len());
    part.extend_from_slice(&value);
    let err = proto::decode::<Value>(&part, &schema::PART).unwrap_err();
    assert!(err.to_string().contains("nests"), "{err}");
    let err = proto::decode::<Part>(&part, &schema::PART).unwrap_err();
    assert!(err.to_string().contains("nests"), "{err}");
}

fn put_len(buf: &mut Vec<u8>, mut n: usize) {
    while n >= 0x80 {
        buf.push((n as u8) | 0x80);
        n >>= 7;
    }
    buf.push(n as u8);
}

#[test]
fn errors_become_google_rpc_status_and_back() {
    for kind in ErrorKind::ALL {
        let error = Error::new(kind, "it went wrong").with_metadata("taskId", "t-1");
        let status = error.to_grpc_status();
        let back = Error::from_grpc_status(error.grpc_code(), &error.message, &status);
        assert_eq!(back, error, "{kind:?}");
        assert_eq!(
            proto::GRPC_CODE_NAMES[error.grpc_code() as usize],
            kind.grpc_status()
        );
    }
    let error = Error::invalid_params("message.parts", "must not be empty");
    let back = Error::from_grpc_status(3, &error.message, &error.to_grpc_status());
    assert_eq!(back, error);
    assert_eq!(
        back.details[1]["fieldViolations"][0]["field"],
        "message.parts"
    );
    // A status with no details: the kind comes from the code.
    let bare = Error::from_grpc_status(5, "no such task", &[]);
    assert!(bare.is(ErrorKind::TaskNotFound));
    assert_eq!(bare.message, "no such task");
    // Garbage details are ignored, not fatal.
    let junk = Error::from_grpc_status(16, "who are you", &[0x1a, 0x09, 0x01]);
    assert!(junk.is(ErrorKind::Unauthenticated));
}

#[test]
fn every_method_has_its_messages_and_path() {
    for method in Method::ALL {
        let path = proto::path(method);
        assert_eq!(proto::method_of_path(&path), Some(method));
        let (request, response) = proto::messages(method);
        assert!(request.name.starts_with("lf.a2a.v1."), "{}", request.name);
        assert!(!response.name.is_empty());
    }
    assert_eq!(
        proto::path(Method::SendMessage),
        "/lf.a2a.v1.A2AService/SendMessage"
    );
    assert_eq!(proto::method_of_path("/lf.a2a.v1.A2AService/Nope"), None);
}
