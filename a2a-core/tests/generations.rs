//! A2A 1.1's generation fields (dev-1.1, #1810) on the wire: ProtoJSON names, `int64` written as
//! a decimal string and read from a string or a number, the proto field numbers, and the fold.

use a2a_core::proto::{self, schema};
use a2a_core::{
    GetTaskRequest, SendMessageRequest, StreamResponse, Task, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};
use serde_json::{Value, json};

fn task_at(generation: i64) -> Task {
    let mut t = Task::new("t-1", "c-1", TaskStatus::new(TaskState::Working));
    t.status.timestamp = None;
    t.generation = generation;
    t
}

#[test]
fn a_generation_is_written_as_an_int64_string_and_omitted_at_zero() {
    let json = serde_json::to_value(task_at(7)).unwrap();
    assert_eq!(json["generation"], "7");
    let json = serde_json::to_value(task_at(0)).unwrap();
    assert!(json.get("generation").is_none(), "0 is proto3's default");
}

#[test]
fn a_generation_reads_from_a_string_or_a_number() {
    for raw in [json!("12"), json!(12), json!(12.0)] {
        let t: Task = serde_json::from_value(json!({
            "id": "t", "status": {"state": "TASK_STATE_WORKING"}, "generation": raw
        }))
        .unwrap();
        assert_eq!(t.generation, 12);
    }
    let bad: Result<Task, _> = serde_json::from_value(json!({
        "id": "t", "status": {"state": "TASK_STATE_WORKING"}, "generation": "twelve"
    }));
    assert!(bad.is_err());
}

#[test]
fn the_request_fields_have_their_protojson_names() {
    let get = GetTaskRequest::new("t-1").with_current_generation(3);
    assert_eq!(
        serde_json::to_value(&get).unwrap(),
        json!({"id": "t-1", "currentGeneration": "3"})
    );
    let send: SendMessageRequest = serde_json::from_value(json!({
        "message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
        "configuration": {"ifGenerationMatch": 5}
    }))
    .unwrap();
    assert_eq!(send.configuration.unwrap().if_generation_match, Some(5));
    // Read snake_case too, as ProtoJSON parsers do.
    let get: GetTaskRequest =
        serde_json::from_value(json!({"id": "t", "current_generation": "4"})).unwrap();
    assert_eq!(get.current_generation, Some(4));
}

/// Field numbers from dev-1.1's a2a.proto: Task 7, TaskStatusUpdateEvent 5,
/// TaskArtifactUpdateEvent 7, GetTaskRequest 4, SendMessageConfiguration 5.
#[test]
fn the_proto_field_numbers_are_the_branchs() {
    let number = |ty: &schema::MessageType, name: &str| ty.field(name).map(|f| f.number);
    assert_eq!(number(&schema::TASK, "generation"), Some(7));
    assert_eq!(
        number(&schema::TASK_STATUS_UPDATE_EVENT, "generation"),
        Some(5)
    );
    assert_eq!(
        number(&schema::TASK_ARTIFACT_UPDATE_EVENT, "generation"),
        Some(7)
    );
    assert_eq!(
        number(&schema::GET_TASK_REQUEST, "currentGeneration"),
        Some(4)
    );
    assert_eq!(
        number(&schema::SEND_MESSAGE_CONFIGURATION, "ifGenerationMatch"),
        Some(5)
    );
    // Task.generation = 300: key 7<<3|0 = 0x38, varint 300 = 0xac 0x02.
    let bytes = proto::encode(&task_at(300), &schema::TASK).unwrap();
    assert!(bytes.ends_with(&[0x38, 0xac, 0x02]), "{bytes:x?}");
    let back: Task = proto::decode(&bytes, &schema::TASK).unwrap();
    assert_eq!(back, task_at(300));
    let as_json: Value = proto::decode(&bytes, &schema::TASK).unwrap();
    assert_eq!(as_json["generation"], "300", "read as ProtoJSON writes it");
    let get = GetTaskRequest::new("t").with_current_generation(0);
    let bytes = proto::encode(&get, &schema::GET_TASK_REQUEST).unwrap();
    let back: GetTaskRequest = proto::decode(&bytes, &schema::GET_TASK_REQUEST).unwrap();
    assert_eq!(back.current_generation, Some(0), "optional: 0 is kept");
}

#[test]
fn the_fold_takes_an_updates_generation() {
    let mut t = task_at(1);
    let update = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: "t-1".into(),
        context_id: "c-1".into(),
        status: TaskStatus::new(TaskState::Completed),
        metadata: None,
        generation: 2,
    });
    t.apply(&update).unwrap();
    assert_eq!(t.generation, 2);
    // A 1.0 update (no generation) leaves it.
    let mut unknown = update.clone();
    unknown.set_generation(0);
    t.apply(&unknown).unwrap();
    assert_eq!(t.generation, 2);
}

#[test]
fn versions_from_1_1_on_have_generations() {
    assert!(a2a_core::has_generations(a2a_core::PROTOCOL_VERSION_1_1));
    assert!(!a2a_core::has_generations(a2a_core::PROTOCOL_VERSION));
    assert!(!a2a_core::has_generations("1.x"));
    assert!(a2a_core::has_generations(" 1.10 "));
}
