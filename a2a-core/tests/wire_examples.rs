//! The v1.0 spec examples of tasks, parts, messages, stream events, errors, push configs and task
//! lists (digest §1–§4) read as the spec says: each fixture parses into its type with the
//! expected fields.

mod support;

use a2a_core::jsonrpc::{Id, Payload, RawRequest, Request, Response};
use a2a_core::*;
use serde_json::{Value, json};
use support::*;

#[test]
fn task_example_reads_as_the_spec_says() {
    let task: Task = round_trip("v1/task_input_required.json");
    assert_eq!(task.id, "t-81c2");
    assert_eq!(task.context_id, "c-19aa");
    assert_eq!(task.status.state, TaskState::InputRequired);
    assert!(task.status.state.is_interrupted());
    let question = task.status.message.as_ref().unwrap();
    assert_eq!(question.role, Role::Agent);
    assert_eq!(question.task_id.as_ref().unwrap(), "t-81c2");
    assert_eq!(question.text(), "Which currency, EUR or USD?");
    assert_eq!(
        task.status.timestamp.unwrap().to_string(),
        "2026-02-03T09:15:27.412Z"
    );
    assert_eq!(task.history.len(), 1);
    assert_eq!(task.history[0].role, Role::User);
    assert_eq!(task.metadata.unwrap()["origin"], "demo");
    assert!(task.artifacts.is_empty());
}

#[test]
fn parts_example_has_one_part_of_each_kind() {
    let parts: Vec<Part> = round_trip("v1/parts.json");
    assert_eq!(parts[0], Part::text("hello"));
    assert_eq!(
        parts[1],
        Part::text("# Title").with_media_type("text/markdown")
    );
    assert_eq!(
        parts[2],
        Part::raw(*b"\x89PNG\r\n\x1a\n")
            .with_filename("dot.png")
            .with_media_type("image/png")
    );
    assert_eq!(
        parts[3],
        Part::url("https://files.example.net/q1.pdf")
            .with_filename("q1.pdf")
            .with_media_type("application/pdf")
    );
    assert_eq!(parts[4].as_data(), Some(&json!({"rows": 3, "ok": true})));
    assert_eq!(parts[5].as_data(), Some(&json!([1, 2, 3])));
    let keys: Vec<_> = parts.iter().map(|p| p.content.key()).collect();
    assert_eq!(keys, ["text", "text", "raw", "url", "data", "data"]);
}

#[test]
fn data_parts_hold_any_json_value_including_null() {
    let StreamResponse::Message(m) = round_trip("v1/stream_message.json") else {
        panic!("not a message");
    };
    let data: Vec<_> = m.parts.iter().map(|p| p.as_data().cloned()).collect();
    assert_eq!(
        data,
        [Some(Value::Null), Some(json!("s")), Some(json!(1.5))]
    );
}

#[test]
fn send_message_example_is_a_valid_request() {
    let req: Request<SendMessageRequest> = round_trip("v1/send_message_request.json");
    assert_eq!(req.id, Id::from(7));
    assert_eq!(req.method, Method::SendMessage.name());
    let params = req.params.unwrap();
    params.validate().unwrap();
    assert_eq!(params.message.role, Role::User);
    assert_eq!(params.history_length(), Some(0));
    assert!(!params.return_immediately());

    // The same body through the envelope parser the server uses.
    let parsed =
        RawRequest::parse(fixture_text("v1/send_message_request.json").as_bytes()).unwrap();
    assert_eq!(Method::from_name(&parsed.method), Some(Method::SendMessage));
    assert_eq!(parsed.params_as::<SendMessageRequest>().unwrap(), params);
}

#[test]
fn full_send_message_request_keeps_every_field() {
    let req: SendMessageRequest = round_trip("v1/send_message_request_full.json");
    req.validate().unwrap();
    assert_eq!(req.tenant.as_deref(), Some("acme"));
    assert!(req.return_immediately());
    assert_eq!(req.history_length(), Some(5));
    let cfg = req.configuration.unwrap();
    let push = cfg.task_push_notification_config.unwrap();
    assert_eq!(push.task_id, None);
    assert_eq!(push.authentication.unwrap().scheme, "Bearer");
    assert_eq!(req.message.reference_task_ids, [TaskId::new("t-7")]);
    assert_eq!(req.message.extensions, ["https://ext.example.net/geo/v1"]);
}

#[test]
fn send_message_response_wraps_the_task() {
    let resp: Response<SendMessageResponse> = round_trip("v1/send_message_response.json");
    assert_eq!(resp.id, Id::from(7));
    let Payload::Result(SendMessageResponse::Task(task)) = resp.payload else {
        panic!("not a task result");
    };
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(task.artifacts[0].text_content(), "36.80 EUR");
    let msg: SendMessageResponse = round_trip("v1/send_message_response_message.json");
    assert!(matches!(msg, SendMessageResponse::Message(m) if m.text() == "4"));
}

#[test]
fn sse_example_is_a_task_then_two_chunks_then_completion() {
    let lines = [
        "v1/sse_1_task.json",
        "v1/sse_2_artifact_first_chunk.json",
        "v1/sse_3_artifact_last_chunk.json",
        "v1/sse_4_status_completed.json",
    ];
    let events: Vec<StreamResponse> = lines
        .iter()
        .map(|l| {
            let resp: Response<StreamResponse> = serde_json::from_value(fixture(l)).unwrap();
            assert_eq!(resp.id, Id::from("s1"));
            // The REST binding sends the bare `result`: the same StreamResponse.
            let bare: StreamResponse =
                serde_json::from_value(fixture(l)["result"].clone()).unwrap();
            let event = resp.into_result().unwrap();
            assert_eq!(bare, event);
            event
        })
        .collect();
    let StreamResponse::Task(mut task) = events[0].clone() else {
        panic!("the first event must be the task");
    };
    assert_eq!(task.status.state, TaskState::Submitted);
    let ends: Vec<bool> = events.iter().map(StreamResponse::ends_stream).collect();
    assert_eq!(ends, [false, false, false, true]);
    for e in &events[1..] {
        assert_eq!(e.task_id().unwrap(), "t-5");
        match e {
            StreamResponse::ArtifactUpdate(a) => task.apply_artifact(a.artifact.clone(), a.append),
            StreamResponse::StatusUpdate(s) => task.status = s.status.clone(),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(task.artifacts.len(), 1);
    assert_eq!(task.artifacts[0].text_content(), "Part one. Part two.");
    assert_eq!(task.artifacts[0].parts.len(), 2);
}

#[test]
fn last_chunk_false_is_read_and_not_re_emitted() {
    // Digest §3.10: `"lastChunk": false` "would normally be omitted; shown only for clarity".
    let original = fixture("v1/sse_2_artifact_first_chunk.json");
    let out = reserialize::<Response<StreamResponse>>(original.clone());
    let mut expected = original;
    expected["result"]["artifactUpdate"]
        .as_object_mut()
        .unwrap()
        .remove("lastChunk");
    assert_eq!(out, expected);
}

#[test]
fn jsonrpc_error_example_reads_as_task_not_found() {
    let resp: Response<Value> = round_trip("v1/jsonrpc_error.json");
    assert_eq!(resp.id, Id::from(12));
    let err = resp.into_result().unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::TaskNotFound));
    assert_eq!(err.code, -32001);
    assert_eq!(err.reason(), Some("TASK_NOT_FOUND"));
    assert_eq!(err.error_info().unwrap()["metadata"]["taskId"], "t-missing");
    assert_eq!(err.http_status(), 404);
    // And rendered back, it is the same error object.
    let rendered = serde_json::to_value(err.to_json_rpc()).unwrap();
    assert_eq!(rendered, fixture("v1/jsonrpc_error.json")["error"]);
    // The constructor a server would use produces the same shape.
    let built = Error::task_not_found("t-missing").to_json_rpc();
    assert_eq!(built.code, -32001);
    assert_eq!(
        built.data.unwrap()[0]["metadata"],
        json!({"taskId": "t-missing"})
    );
}

#[test]
fn rest_error_example_reads_as_task_not_cancelable() {
    let body = fixture("v1/rest_error.json");
    let err = Error::from_status_body(&body).unwrap();
    assert_eq!(err.kind(), Some(ErrorKind::TaskNotCancelable));
    assert_eq!(err.code, -32002);
    assert_eq!(err.message, "Task t-81c2 is already completed");
    assert_eq!(err.http_status(), 400);
    assert_eq!(err.to_status_body(), body);
}

#[test]
fn push_config_and_delivery_examples() {
    let cfg: TaskPushNotificationConfig = round_trip("v1/push_config.json");
    cfg.validate().unwrap();
    assert_eq!(cfg.task_id.as_ref().unwrap(), "t-81c2");
    assert_eq!(cfg.id, None);
    assert_eq!(
        cfg.authentication,
        Some(AuthenticationInfo {
            scheme: "Bearer".into(),
            credentials: Some("s3cr3t".into())
        })
    );
    let delivery: StreamResponse = round_trip("v1/push_delivery.json");
    assert_eq!(delivery.state(), Some(&TaskState::Completed));
    assert!(delivery.ends_stream());
    let list: ListTaskPushNotificationConfigsResponse =
        round_trip("v1/push_config_list_response.json");
    assert!(
        list.configs
            .iter()
            .all(|c| c.id.is_some() && c.task_id.is_some())
    );
    assert_eq!(list.next_page_token, "");
}

#[test]
fn list_tasks_response_always_has_its_required_fields() {
    let last: ListTasksResponse = round_trip("v1/list_tasks_response_last_page.json");
    assert_eq!((last.page_size, last.total_size), (2, 2));
    assert_eq!(last.next_page_token, "");
    assert!(last.tasks[0].artifacts.is_empty());
    let empty: ListTasksResponse = round_trip("v1/list_tasks_response_empty.json");
    assert_eq!(empty, ListTasksResponse::default());
    assert_eq!(
        serde_json::to_value(ListTasksResponse::default()).unwrap(),
        json!({"tasks": [], "nextPageToken": "", "pageSize": 0, "totalSize": 0})
    );
    let more: ListTasksResponse = round_trip("v1/list_tasks_response_more.json");
    assert_eq!(more.next_page_token, "b2Zmc2V0PTE=");
    assert_eq!((more.page_size, more.total_size), (1, 3));
}

#[test]
fn list_tasks_request_reads_every_filter() {
    let req: ListTasksRequest = round_trip("v1/list_tasks_request.json");
    req.validate().unwrap();
    assert_eq!(req.status, Some(TaskState::Working));
    assert_eq!(req.page_size, Some(20));
    assert_eq!(req.effective_page_size(), 20);
    assert_eq!(req.include_artifacts, Some(true));
    assert_eq!(
        req.status_timestamp_after.unwrap().to_string(),
        "2026-02-01T00:00:00.000Z"
    );
    assert_eq!(ListTasksRequest::default().effective_page_size(), 50);
    let get: GetTaskRequest = round_trip("v1/get_task_request.json");
    assert_eq!(get.history_length, Some(0));
    let cancel: CancelTaskRequest = round_trip("v1/cancel_task_request.json");
    cancel.validate().unwrap();
    let get_push: GetTaskPushNotificationConfigRequest =
        round_trip("v1/push_config_get_request.json");
    get_push.validate().unwrap();
}
