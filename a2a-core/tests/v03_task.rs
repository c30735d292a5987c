//! v0.3 translation of tasks, messages, parts and stream events (digest §9): each v0.3 fixture
//! decodes into the v1.0 model with the expected fields and, where v0.3 and v1.0 say the same
//! thing, encodes back to the same JSON.

mod support;

use a2a_core::jsonrpc::Response;
use a2a_core::v03::{self, DATA_PART_COMPAT};
use a2a_core::*;
use serde_json::{Value, json};
use support::*;

fn no_kind_anywhere(v: &Value) -> bool {
    match v {
        Value::Object(m) => !m.contains_key("kind") && m.values().all(no_kind_anywhere),
        Value::Array(a) => a.iter().all(no_kind_anywhere),
        _ => true,
    }
}

// ---------------------------------------------------------------------------------------------
// Tasks, messages, parts

#[test]
fn v03_task_decodes_into_the_v1_model() {
    let v = fixture("v03/task.json");
    let task = v03::decode_task(&v, "task").unwrap();
    assert_eq!(task.id, "t-81c2");
    assert_eq!(task.context_id, "c-19aa");
    assert_eq!(task.status.state, TaskState::InputRequired);
    assert_eq!(
        task.status.timestamp.unwrap().to_string(),
        "2026-02-03T09:15:27.412Z"
    );
    let question = task.status.message.as_ref().unwrap();
    assert_eq!(question.role, Role::Agent);
    assert_eq!(question.text(), "Which currency, EUR or USD?");

    let user = &task.history[0];
    assert_eq!(user.role, Role::User);
    assert_eq!(user.metadata.as_ref().unwrap()["client"], "cli");
    assert_eq!(user.reference_task_ids, [TaskId::new("t-7")]);
    assert_eq!(
        user.parts,
        [
            Part::text("Convert the numbers in these files"),
            Part::raw(*b"\x89PNG\r\n\x1a\n")
                .with_filename("dot.png")
                .with_media_type("image/png"),
            Part::url("https://files.example.net/q1.pdf")
                .with_filename("q1.pdf")
                .with_media_type("application/pdf"),
            Part::data(json!({"rows": 3, "ok": true}))
                .with_metadata(json!({"source": "form"}).as_object().unwrap().clone()),
        ]
    );
    let artifact = &task.artifacts[0];
    assert_eq!(artifact.artifact_id, "a-1");
    assert_eq!(artifact.name.as_deref(), Some("conversion"));
    assert_eq!(artifact.description.as_deref(), Some("converted values"));
    assert_eq!(artifact.text_content(), "36.80 EUR");
    assert_eq!(task.metadata.as_ref().unwrap()["origin"], "demo");

    // Its v1.0 JSON has no `kind` and full enum names.
    let v1 = serde_json::to_value(&task).unwrap();
    assert!(no_kind_anywhere(&v1));
    assert_eq!(v1["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(v1["history"][0]["role"], "ROLE_USER");
    assert_eq!(v1["history"][0]["parts"][1]["raw"], "iVBORw0KGgo=");
    assert_eq!(v1["history"][0]["parts"][1]["mediaType"], "image/png");
    assert_eq!(v1["history"][0]["parts"][1]["filename"], "dot.png");

    // Back to v0.3: the same JSON.
    assert_eq!(v03::encode_task(&task), v);
}

#[test]
fn v1_task_encodes_with_kind_and_lowercase_names() {
    let v1 = fixture("v1/task_input_required.json");
    let task: Task = serde_json::from_value(v1).unwrap();
    let old = v03::encode_task(&task);
    assert_eq!(old["kind"], "task");
    assert_eq!(old["status"]["state"], "input-required");
    assert_eq!(old["status"]["message"]["kind"], "message");
    assert_eq!(old["status"]["message"]["role"], "agent");
    assert_eq!(old["history"][0]["role"], "user");
    assert_eq!(
        old["history"][0]["parts"][0],
        json!({"kind": "text", "text": "Convert 40 units"})
    );
    assert_eq!(v03::decode_task(&old, "task").unwrap(), task);
}

#[test]
fn every_state_has_its_v03_name() {
    let names: Vec<&str> = TaskState::ALL.iter().map(v03::encode_state).collect();
    assert_eq!(
        names,
        [
            "unknown",
            "submitted",
            "working",
            "completed",
            "failed",
            "canceled",
            "input-required",
            "rejected",
            "auth-required",
        ]
    );
    for s in TaskState::ALL {
        assert_eq!(&v03::decode_state(v03::encode_state(s)), s);
        // v1.0 names are accepted too.
        assert_eq!(&v03::decode_state(s.as_str()), s);
    }
    assert_eq!(v03::decode_state("cancelled"), TaskState::Canceled);
    assert_eq!(
        v03::decode_state("paused"),
        TaskState::Unknown("paused".into())
    );
}

#[test]
fn v03_parts_of_each_kind_translate_both_ways() {
    let cases = [
        (
            json!({"kind": "text", "text": "hi", "metadata": {"a": 1}}),
            Part::text("hi").with_metadata(json!({"a": 1}).as_object().unwrap().clone()),
        ),
        (
            json!({"kind": "file", "file": {"bytes": "AAEC/w==", "name": "b.bin", "mimeType": "application/octet-stream"}}),
            Part::raw(vec![0, 1, 2, 255])
                .with_filename("b.bin")
                .with_media_type("application/octet-stream"),
        ),
        (
            json!({"kind": "file", "file": {"uri": "https://f.example/x"}}),
            Part::url("https://f.example/x"),
        ),
        (
            json!({"kind": "data", "data": {"x": [1, 2]}}),
            Part::data(json!({"x": [1, 2]})),
        ),
        // Empty content is still content.
        (json!({"kind": "text", "text": ""}), Part::text("")),
        (
            json!({"kind": "file", "file": {"bytes": ""}}),
            Part::raw(Vec::new()),
        ),
    ];
    for (old, part) in cases {
        assert_eq!(v03::decode_part(&old, "part").unwrap(), part, "{old}");
        assert_eq!(v03::encode_part(&part), old);
    }
    // Without `kind`, the content key decides; url-safe base64 is accepted.
    let part = v03::decode_part(&json!({"file": {"bytes": "-_8"}}), "p").unwrap();
    assert_eq!(part, Part::raw(vec![0xfb, 0xff]));
    assert_eq!(
        v03::decode_part(&json!({"text": "x"}), "p").unwrap(),
        Part::text("x")
    );
}

#[test]
fn invalid_v03_parts_name_the_field() {
    for (old, field) in [
        (json!({"kind": "video"}), "p.kind"),
        (json!({"metadata": {}}), "p.kind"),
        (json!({"kind": "text"}), "p.text"),
        (json!({"kind": "file", "file": {}}), "p.file"),
        (
            json!({"kind": "file", "file": {"bytes": "AA==", "uri": "https://x"}}),
            "p.file",
        ),
        (
            json!({"kind": "file", "file": {"bytes": "%%%"}}),
            "p.file.bytes",
        ),
        (json!({"kind": "data"}), "p.data"),
        (json!("text"), "p"),
    ] {
        let err = v03::decode_part(&old, "p").unwrap_err();
        assert_eq!(err.kind(), Some(ErrorKind::InvalidParams), "{old}");
        assert!(
            err.message.starts_with(&format!("{field}:")),
            "{old}: {}",
            err.message
        );
    }
}

#[test]
fn non_object_data_is_wrapped_for_v03_and_unwrapped_back() {
    for data in [
        json!([1, 2, 3]),
        json!("s"),
        json!(4.5),
        json!(true),
        Value::Null,
    ] {
        let part = Part::data(data.clone());
        let old = v03::encode_part(&part);
        assert_eq!(
            old,
            json!({"kind": "data", "data": {"value": data}, "metadata": {DATA_PART_COMPAT: true}})
        );
        assert_eq!(v03::decode_part(&old, "p").unwrap(), part);
    }
    // Other metadata survives next to the flag.
    let meta = json!({"k": "v"}).as_object().unwrap().clone();
    let part = Part::data(json!(7)).with_metadata(meta);
    let old = v03::encode_part(&part);
    assert_eq!(old["metadata"], json!({"k": "v", "data_part_compat": true}));
    assert_eq!(v03::decode_part(&old, "p").unwrap(), part);
    // An object with a `value` key is not unwrapped without the flag.
    let plain = json!({"kind": "data", "data": {"value": 1}});
    assert_eq!(
        v03::decode_part(&plain, "p").unwrap(),
        Part::data(json!({"value": 1}))
    );
    // An explicitly empty metadata object on an object data part is kept, as on other parts.
    let part = Part::data(json!({"a": 1})).with_metadata(Default::default());
    let old = v03::encode_part(&part);
    assert_eq!(old["metadata"], json!({}));
    assert_eq!(v03::decode_part(&old, "p").unwrap(), part);
}

#[test]
fn v03_send_results_are_bare_tasks_and_messages_with_kind() {
    let v = fixture("v03/send_result_task.json");
    let r = v03::decode_send_response(&v).unwrap();
    let SendMessageResponse::Task(task) = &r else {
        panic!("not a task")
    };
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(task.artifacts[0].text_content(), "done");
    assert_eq!(v03::encode_send_response(&r), v);

    let v = fixture("v03/send_result_message.json");
    let r = v03::decode_send_response(&v).unwrap();
    assert!(
        matches!(&r, SendMessageResponse::Message(m) if m.role == Role::Agent && m.text() == "4")
    );
    assert_eq!(v03::encode_send_response(&r), v);

    let err = v03::decode_send_response(&fixture("v03/status_update_final.json")).unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::InvalidParams));
}

// ---------------------------------------------------------------------------------------------
// Stream events

#[test]
fn v03_final_status_update_decodes_and_encodes_back() {
    let v = fixture("v03/status_update_final.json");
    let e = v03::decode_stream_event(&v).unwrap();
    let StreamResponse::StatusUpdate(s) = &e else {
        panic!("not a status update")
    };
    assert_eq!(s.task_id, "t-5");
    assert_eq!(s.context_id, "c-5");
    assert_eq!(s.status.state, TaskState::Completed);
    assert!(e.ends_stream());
    // v1.0 has no `final`.
    let v1 = serde_json::to_value(&e).unwrap();
    assert!(v1["statusUpdate"].get("final").is_none());
    assert_eq!(v03::encode_stream_event(&e), v);
}

#[test]
fn v03_working_status_update_is_not_final() {
    let v = fixture("v03/status_update_working.json");
    let e = v03::decode_stream_event(&v).unwrap();
    let StreamResponse::StatusUpdate(s) = &e else {
        panic!("not a status update")
    };
    assert_eq!(s.status.state, TaskState::Working);
    assert_eq!(
        s.status.message.as_ref().unwrap().text(),
        "Looking up rates"
    );
    assert_eq!(s.metadata.as_ref().unwrap()["step"], 1);
    assert!(!e.ends_stream());
    assert_eq!(v03::encode_stream_event(&e), v);
}

#[test]
fn final_is_true_exactly_when_the_stream_ends() {
    for state in TaskState::ALL {
        let e = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: "t".into(),
            context_id: "c".into(),
            status: TaskStatus::new(state.clone()),
            metadata: None,
            generation: 0,
        });
        let old = v03::encode_stream_event(&e);
        assert_eq!(old["kind"], "status-update");
        let expected = state.ends_stream();
        assert_eq!(old["final"], expected, "{state}");
        assert_eq!(v03::decode_stream_event(&old).unwrap(), e);
    }
    let working = |s| {
        v03::encode_stream_event(&StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: "t".into(),
            context_id: "c".into(),
            status: TaskStatus::new(s),
            metadata: None,
            generation: 0,
        }))["final"]
            .clone()
    };
    assert_eq!(working(TaskState::Working), false);
    assert_eq!(working(TaskState::Submitted), false);
    assert_eq!(working(TaskState::Completed), true);
    assert_eq!(working(TaskState::Failed), true);
    assert_eq!(working(TaskState::Canceled), true);
    assert_eq!(working(TaskState::Rejected), true);
}

#[test]
fn v03_artifact_update_decodes_and_encodes_back() {
    let v = fixture("v03/artifact_update.json");
    let e = v03::decode_stream_event(&v).unwrap();
    let StreamResponse::ArtifactUpdate(a) = &e else {
        panic!("not an artifact update")
    };
    assert!(a.append && a.last_chunk);
    assert_eq!(a.artifact.artifact_id, "a-1");
    assert_eq!(a.artifact.name.as_deref(), Some("report"));
    assert_eq!(a.artifact.text_content(), "Part two.");
    assert_eq!(v03::encode_stream_event(&e), v);
    // `append`/`lastChunk` false are omitted, as v0.3 SDKs do.
    let mut first = a.clone();
    first.append = false;
    first.last_chunk = false;
    let old = v03::encode_stream_event(&StreamResponse::ArtifactUpdate(first));
    assert!(old.get("append").is_none() && old.get("lastChunk").is_none());
}

#[test]
fn v03_stream_line_is_a_jsonrpc_response_with_a_kind_result() {
    let v = fixture("v03/stream_line_jsonrpc.json");
    let resp: Response<Value> = serde_json::from_value(v.clone()).unwrap();
    let result = resp.into_result().unwrap();
    let e = v03::decode_stream_event(&result).unwrap();
    assert_eq!(e.state(), Some(&TaskState::Completed));
    assert_eq!(v03::encode_stream_event(&e), v["result"]);
    // v1.0 carries the same event as a wrapper.
    assert_eq!(
        serde_json::to_value(&e).unwrap(),
        json!({"statusUpdate": {"taskId": "t-5", "contextId": "c-5",
                                "status": {"state": "TASK_STATE_COMPLETED"}}})
    );
    let err = v03::decode_stream_event(&json!({"kind": "tick"})).unwrap_err();
    assert!(err.message.contains("tick"));
    let err = v03::decode_stream_event(&json!({"taskId": "t"})).unwrap_err();
    assert!(err.message.starts_with("result.kind:"), "{}", err.message);
}
