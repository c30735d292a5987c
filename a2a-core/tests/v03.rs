//! v0.3 translation (digest §9): each v0.3 fixture decodes into the v1.0 model with the expected
//! fields and, where v0.3 and v1.0 say the same thing, encodes back to the same JSON.

use a2a_core::jsonrpc::Response;
use a2a_core::v03::{self, DATA_PART_COMPAT, Params};
use a2a_core::*;
use serde_json::{Value, json};
use std::path::PathBuf;

fn fixture(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name} is not JSON: {e}"))
}

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

// ---------------------------------------------------------------------------------------------
// Requests

fn send_params(v: &Value) -> SendMessageRequest {
    match v03::decode_params(Method::from_v03_name("message/send").unwrap(), v).unwrap() {
        Params::SendMessage(r) => r,
        other => panic!("not SendMessage: {other:?}"),
    }
}

#[test]
fn v03_message_send_params_decode_into_a_send_message_request() {
    let v = fixture("v03/message_send_params.json");
    let req = send_params(&v);
    req.validate().unwrap();
    assert_eq!(req.message.message_id, "m-u1");
    assert_eq!(req.message.role, Role::User);
    assert_eq!(req.message.context_id.as_ref().unwrap(), "c-19aa");
    assert!(
        req.return_immediately(),
        "blocking: false = returnImmediately: true"
    );
    assert_eq!(req.history_length(), Some(2));
    let cfg = req.configuration.as_ref().unwrap();
    assert_eq!(cfg.accepted_output_modes, ["text/plain"]);
    let push = cfg.task_push_notification_config.as_ref().unwrap();
    assert_eq!(push.id.as_deref(), Some("cfg-1"));
    assert_eq!(push.url, "https://hooks.example.org/a2a");
    assert_eq!(push.token.as_deref(), Some("tok-9"));
    assert_eq!(push.task_id, None);
    assert_eq!(
        push.authentication,
        Some(AuthenticationInfo {
            scheme: "Bearer".into(),
            credentials: Some("s3cr3t".into())
        })
    );
    assert_eq!(req.metadata.as_ref().unwrap()["trace"], "abc");
    // v1.0 JSON of it.
    let v1 = serde_json::to_value(&req).unwrap();
    assert_eq!(v1["configuration"]["returnImmediately"], true);
    assert_eq!(
        v1["configuration"]["taskPushNotificationConfig"]["authentication"],
        json!({"scheme": "Bearer", "credentials": "s3cr3t"})
    );
    assert!(v1["configuration"].get("blocking").is_none());
    // And back.
    assert_eq!(v03::encode_send_params(&req), v);
}

#[test]
fn blocking_is_the_negation_of_return_immediately() {
    let msg = json!({"kind": "message", "messageId": "m", "role": "user",
                     "parts": [{"kind": "text", "text": "x"}]});
    for (blocking, return_immediately) in [
        (Some(false), true),
        (Some(true), false),
        (None, false), // absent = blocking
    ] {
        let mut cfg = json!({});
        if let Some(b) = blocking {
            cfg["blocking"] = b.into();
        }
        let req = send_params(&json!({"message": msg, "configuration": cfg}));
        assert_eq!(req.return_immediately(), return_immediately, "{blocking:?}");
    }
    // No configuration at all: blocking.
    assert!(!send_params(&json!({"message": msg})).return_immediately());
    for (return_immediately, blocking) in [(true, false), (false, true)] {
        let req = SendMessageRequest::new(Message::user_text("x"))
            .with_return_immediately(return_immediately);
        assert_eq!(
            v03::encode_send_params(&req)["configuration"]["blocking"],
            blocking
        );
    }
    // v0.3 always states it, also when the v1.0 request has no configuration.
    let plain = SendMessageRequest::new(Message::user_text("x"));
    assert_eq!(
        v03::encode_send_params(&plain)["configuration"],
        json!({"blocking": true})
    );
}

#[test]
fn v03_push_config_translates_both_ways() {
    let v = fixture("v03/push_config.json");
    let cfg = v03::decode_push_config(&v, "params").unwrap();
    cfg.validate().unwrap();
    assert_eq!(cfg.task_id.as_ref().unwrap(), "t-81c2");
    assert_eq!(cfg.id.as_deref(), Some("cfg-1"));
    assert_eq!(cfg.authentication.as_ref().unwrap().scheme, "Bearer");
    // The flat v1.0 form.
    assert_eq!(
        serde_json::to_value(&cfg).unwrap(),
        json!({"id": "cfg-1", "taskId": "t-81c2", "url": "https://hooks.example.org/a2a",
               "token": "tok-9", "authentication": {"scheme": "Bearer", "credentials": "s3cr3t"}})
    );
    assert_eq!(v03::encode_push_config(&cfg), v);

    // Several schemes: the first is taken. None: invalid.
    let mut many = v.clone();
    many["pushNotificationConfig"]["authentication"]["schemes"] = json!(["Basic", "Bearer"]);
    let cfg = v03::decode_push_config(&many, "params").unwrap();
    assert_eq!(cfg.authentication.unwrap().scheme, "Basic");
    let mut none = v;
    none["pushNotificationConfig"]["authentication"]["schemes"] = json!([]);
    let err = v03::decode_push_config(&none, "params").unwrap_err();
    assert!(
        err.message
            .starts_with("params.pushNotificationConfig.authentication.schemes:"),
        "{}",
        err.message
    );
    let err = v03::decode_push_config(&json!({"taskId": "t"}), "params").unwrap_err();
    assert!(err.message.starts_with("params.pushNotificationConfig:"));
}

#[test]
fn decode_params_handles_every_v03_method() {
    let names = [
        "message/send",
        "message/stream",
        "tasks/get",
        "tasks/cancel",
        "tasks/resubscribe",
        "tasks/pushNotificationConfig/set",
        "tasks/pushNotificationConfig/get",
        "tasks/pushNotificationConfig/list",
        "tasks/pushNotificationConfig/delete",
        "agent/getAuthenticatedExtendedCard",
    ];
    let methods: Vec<Method> = names
        .iter()
        .map(|n| Method::from_v03_name(n).unwrap_or_else(|| panic!("{n}")))
        .collect();
    assert_eq!(
        methods,
        [
            Method::SendMessage,
            Method::SendStreamingMessage,
            Method::GetTask,
            Method::CancelTask,
            Method::SubscribeToTask,
            Method::CreateTaskPushNotificationConfig,
            Method::GetTaskPushNotificationConfig,
            Method::ListTaskPushNotificationConfigs,
            Method::DeleteTaskPushNotificationConfig,
            Method::GetExtendedAgentCard,
        ]
    );
    assert_eq!(Method::from_v03_name("tasks/list"), None);
    assert_eq!(Method::from_v03_name("SendMessage"), None);

    let decode = |name: &str, params: Value| {
        v03::decode_params(Method::from_v03_name(name).unwrap(), &params)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    let send = fixture("v03/message_send_params.json");
    assert!(matches!(
        decode("message/send", send.clone()),
        Params::SendMessage(_)
    ));
    let Params::SendMessage(streamed) = decode("message/stream", send) else {
        panic!("message/stream")
    };
    assert_eq!(streamed.message.text(), "Convert 40 units");

    assert_eq!(
        decode("tasks/get", json!({"id": "t-1", "historyLength": 3})),
        Params::GetTask(GetTaskRequest {
            id: "t-1".into(),
            history_length: Some(3),
            ..Default::default()
        })
    );
    assert_eq!(
        decode(
            "tasks/cancel",
            json!({"id": "t-1", "metadata": {"why": "x"}})
        ),
        Params::CancelTask(CancelTaskRequest {
            id: "t-1".into(),
            metadata: Some(json!({"why": "x"}).as_object().unwrap().clone()),
            ..Default::default()
        })
    );
    assert_eq!(
        decode("tasks/resubscribe", json!({"id": "t-1"})),
        Params::SubscribeToTask(SubscribeToTaskRequest::new("t-1"))
    );
    let Params::CreatePushConfig(created) = decode(
        "tasks/pushNotificationConfig/set",
        fixture("v03/push_config.json"),
    ) else {
        panic!("set")
    };
    assert_eq!(created.task_id.as_ref().unwrap(), "t-81c2");
    assert_eq!(
        decode(
            "tasks/pushNotificationConfig/get",
            json!({"id": "t-1", "pushNotificationConfigId": "cfg-1"})
        ),
        Params::GetPushConfig(GetTaskPushNotificationConfigRequest {
            tenant: None,
            task_id: "t-1".into(),
            id: "cfg-1".into()
        })
    );
    // Without a config id, the task id is the config id (a2a-python).
    assert_eq!(
        decode("tasks/pushNotificationConfig/get", json!({"id": "t-1"})),
        Params::GetPushConfig(GetTaskPushNotificationConfigRequest {
            tenant: None,
            task_id: "t-1".into(),
            id: "t-1".into()
        })
    );
    assert_eq!(
        decode("tasks/pushNotificationConfig/list", json!({"id": "t-1"})),
        Params::ListPushConfigs(ListTaskPushNotificationConfigsRequest {
            task_id: "t-1".into(),
            ..Default::default()
        })
    );
    assert_eq!(
        decode(
            "tasks/pushNotificationConfig/delete",
            json!({"id": "t-1", "pushNotificationConfigId": "cfg-1"})
        ),
        Params::DeletePushConfig(DeleteTaskPushNotificationConfigRequest {
            tenant: None,
            task_id: "t-1".into(),
            id: "cfg-1".into()
        })
    );
    for params in [Value::Null, json!({})] {
        assert_eq!(
            decode("agent/getAuthenticatedExtendedCard", params),
            Params::GetExtendedAgentCard(GetExtendedAgentCardRequest::default())
        );
    }
}

#[test]
fn decode_params_errors_name_the_field() {
    for (name, params, field) in [
        ("tasks/get", json!({}), "params.id"),
        (
            "tasks/get",
            json!({"id": "t", "historyLength": "x"}),
            "params.historyLength",
        ),
        ("tasks/cancel", json!({"id": 5}), "params.id"),
        (
            "tasks/pushNotificationConfig/delete",
            json!({"id": "t"}),
            "params.pushNotificationConfigId",
        ),
        ("message/send", json!({}), "params.message"),
        (
            "message/send",
            json!({"message": {"parts": [{"kind": "text"}]}}),
            "params.message.parts[0].text",
        ),
        (
            "message/send",
            json!({"message": {"parts": []}, "configuration": {"blocking": "no"}}),
            "params.configuration.blocking",
        ),
        ("tasks/resubscribe", json!([]), "params"),
    ] {
        let err = v03::decode_params(Method::from_v03_name(name).unwrap(), &params).unwrap_err();
        assert_eq!(
            err.kind(),
            Some(ErrorKind::InvalidParams),
            "{name} {params}"
        );
        assert!(
            err.message.starts_with(&format!("{field}:")),
            "{name} {params}: {}",
            err.message
        );
    }
    let err = v03::decode_params(Method::ListTasks, &json!({})).unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::MethodNotFound));
}

#[test]
fn decoded_v03_messages_are_validated_like_v1_ones() {
    // v0.3 decoding is lenient; `Validate` then names the missing field the same way.
    let req = send_params(&json!({"message": {"kind": "message", "role": "user",
        "parts": [{"kind": "text", "text": "x"}]}}));
    let err = req.validate().unwrap_err();
    assert!(
        err.message.starts_with("message.messageId:"),
        "{}",
        err.message
    );
    let req = send_params(&json!({"message": {"kind": "message", "messageId": "m",
        "parts": [{"kind": "text", "text": "x"}]}}));
    assert!(
        req.validate()
            .unwrap_err()
            .message
            .starts_with("message.role:")
    );
    let req = send_params(&json!({"message": {"kind": "message", "messageId": "m",
        "role": "user", "parts": []}}));
    assert!(
        req.validate()
            .unwrap_err()
            .message
            .starts_with("message.parts:")
    );
}

// ---------------------------------------------------------------------------------------------
// Agent cards

#[test]
fn v03_card_decodes_into_a_v1_card() {
    let v = fixture("v03/agent_card.json");
    let card = v03::decode_card(&v).unwrap();
    assert_eq!(card.name, "GeoSpatial Route Planner Agent");
    assert_eq!(card.version, "1.2.0");
    // `url` + `preferredTransport` first, then the other `additionalInterfaces`, all 0.3
    // (protocol versions are Major.Minor: the card's "0.3.0" is "0.3").
    assert_eq!(
        card.supported_interfaces,
        [
            AgentInterface::new(BINDING_JSONRPC, "https://georoute-agent.example.com/a2a/v1")
                .with_protocol_version("0.3"),
            AgentInterface::new(BINDING_GRPC, "https://georoute-agent.example.com/a2a/grpc")
                .with_protocol_version("0.3"),
            AgentInterface::new(
                BINDING_HTTP_JSON,
                "https://georoute-agent.example.com/a2a/json"
            )
            .with_protocol_version("0.3"),
        ]
    );
    assert_eq!(
        card.interface(BINDING_JSONRPC, PROTOCOL_VERSION_V03)
            .unwrap()
            .url,
        "https://georoute-agent.example.com/a2a/v1"
    );
    assert!(card.capabilities.streaming());
    assert!(card.capabilities.push_notifications());
    assert!(
        card.capabilities.extended_agent_card(),
        "supportsAuthenticatedExtendedCard"
    );
    assert_eq!(
        card.provider.as_ref().unwrap().organization,
        "Example Geo Services Inc."
    );
    assert_eq!(
        card.icon_url.as_deref(),
        Some("https://georoute-agent.example.com/icon.png")
    );

    let s = &card.security_schemes;
    assert!(
        matches!(&s["google"], SecurityScheme::OpenIdConnectSecurityScheme(o)
        if o.open_id_connect_url == "https://accounts.google.com/.well-known/openid-configuration")
    );
    assert_eq!(
        s["key"],
        SecurityScheme::ApiKeySecurityScheme(ApiKeySecurityScheme {
            description: Some("API key".into()),
            location: "header".into(),
            name: "X-API-Key".into()
        })
    );
    assert_eq!(
        s["jwt"],
        SecurityScheme::HttpAuthSecurityScheme(HttpAuthSecurityScheme {
            description: None,
            scheme: "bearer".into(),
            bearer_format: Some("JWT".into())
        })
    );
    let SecurityScheme::Oauth2SecurityScheme(oa) = &s["oa"] else {
        panic!("oa")
    };
    assert!(matches!(&oa.flows, OAuthFlows::AuthorizationCode(f)
        if f.token_url == "https://id.example.com/token" && f.scopes["route.read"] == "read routes"));
    assert!(matches!(&s["mtls"], SecurityScheme::MtlsSecurityScheme(m)
        if m.description.as_deref() == Some("client certificate")));

    assert_eq!(
        card.security_requirements,
        [
            SecurityRequirement::scheme("google", ["openid", "profile", "email"]),
            SecurityRequirement {
                schemes: [
                    ("key".to_owned(), StringList::default()),
                    ("mtls".to_owned(), StringList::default())
                ]
                .into()
            }
        ]
    );
    let skill = card.skill("route-optimizer-traffic").unwrap();
    assert_eq!(
        skill.security_requirements,
        [SecurityRequirement::scheme("oa", ["route.read"])]
    );
    assert_eq!(skill.output_modes, ["application/json"]);
    assert!(
        card.skill("custom-map-generator")
            .unwrap()
            .security_requirements
            .is_empty()
    );
    assert_eq!(card.signatures.len(), 1);

    // Its v1.0 JSON has none of the v0.3 keys.
    let v1 = serde_json::to_value(&card).unwrap();
    for gone in [
        "url",
        "preferredTransport",
        "additionalInterfaces",
        "protocolVersion",
        "supportsAuthenticatedExtendedCard",
        "security",
    ] {
        assert!(v1.get(gone).is_none(), "{gone}");
    }
    assert_eq!(
        v1["capabilities"],
        json!({"streaming": true, "pushNotifications": true, "extendedAgentCard": true})
    );
    assert_eq!(
        v1["securitySchemes"]["key"],
        json!({"apiKeySecurityScheme": {"description": "API key", "location": "header", "name": "X-API-Key"}})
    );
    // And it is a card v1.0 readers accept as is.
    assert_eq!(serde_json::from_value::<AgentCard>(v1).unwrap(), card);
}

#[test]
fn v1_card_of_a_v03_card_encodes_back_to_the_v03_card() {
    let v = fixture("v03/agent_card.json");
    let card = v03::decode_card(&v).unwrap();
    let back = v03::encode_card(&card);
    // The only differences: the protocol version is written as Major.Minor, and
    // `capabilities.stateTransitionHistory` (gone in v1.0) is dropped.
    let mut expected = v;
    expected["protocolVersion"] = "0.3".into();
    expected["capabilities"]
        .as_object_mut()
        .unwrap()
        .remove("stateTransitionHistory");
    assert_eq!(back, expected);
    assert_eq!(v03::decode_card(&back).unwrap(), card);
}

#[test]
fn v03_card_edge_cases() {
    let base = json!({"name": "n", "description": "d", "version": "1", "capabilities": {},
        "defaultInputModes": [], "defaultOutputModes": [], "skills": []});
    // No `url`: no interfaces. No protocolVersion: 0.3.
    let card = v03::decode_card(&base).unwrap();
    assert!(card.supported_interfaces.is_empty());
    let mut with_url = base.clone();
    with_url["url"] = "https://a.example".into();
    let card = v03::decode_card(&with_url).unwrap();
    assert_eq!(
        card.supported_interfaces,
        [AgentInterface::new(BINDING_JSONRPC, "https://a.example").with_protocol_version("0.3")]
    );
    // Several OAuth flows (allowed in v0.3): one is kept.
    let mut multi = base.clone();
    multi["securitySchemes"] = json!({"oa": {"type": "oauth2", "flows": {
        "implicit": {"authorizationUrl": "https://a.example/auth", "scopes": {}},
        "clientCredentials": {"tokenUrl": "https://a.example/token", "scopes": {"s": "d"}}}}});
    let card = v03::decode_card(&multi).unwrap();
    let SecurityScheme::Oauth2SecurityScheme(oa) = &card.security_schemes["oa"] else {
        panic!("oa")
    };
    assert!(
        matches!(&oa.flows, OAuthFlows::ClientCredentials(c) if c.token_url == "https://a.example/token")
    );
    // A scheme type v1.0 does not know makes the card unreadable.
    let mut bad = base;
    bad["securitySchemes"] = json!({"x": {"type": "magic"}});
    assert_eq!(
        v03::decode_card(&bad).unwrap_err().kind(),
        Some(ErrorKind::InvalidParams)
    );
}

#[test]
fn v1_only_features_are_dropped_when_encoding_a_v03_card() {
    let card: AgentCard = serde_json::from_value(fixture("v1/agent_card_full.json")).unwrap();
    let old = v03::encode_card(&card);
    assert_eq!(old["protocolVersion"], "0.3");
    assert_eq!(old["url"], "https://agent.example.net/v03");
    assert!(old.get("supportedInterfaces").is_none());
    assert!(old.get("securityRequirements").is_none());
    assert!(old["capabilities"].get("extendedAgentCard").is_none());
    assert_eq!(old["supportsAuthenticatedExtendedCard"], true);
    // The device-code flow has no v0.3 form: its scheme is left out (written with empty
    // `flows`, it made the card unreadable to `decode_card`; found by the fuzz suite).
    assert!(old["securitySchemes"].get("device").is_none());
    assert!(old["securitySchemes"].get("code").is_some());
    assert!(v03::decode_card(&old).is_ok());
    // PKCE has no v0.3 form either.
    assert!(
        old["securitySchemes"]["code"]["flows"]["authorizationCode"]
            .get("pkceRequired")
            .is_none()
    );
    for (name, scheme) in old["securitySchemes"].as_object().unwrap() {
        assert!(
            scheme
                .as_object()
                .unwrap()
                .keys()
                .all(|k| !k.ends_with("SecurityScheme")),
            "{name}"
        );
    }
    assert_eq!(old["skills"][0]["security"], json!([{"basic": []}]));
    assert!(old["skills"][0].get("securityRequirements").is_none());
}

/// Found by the fuzz suite: an interface without a binding was written as `"transport": ""`,
/// which a v0.3 reader skips, so the card did not read back the same. Such interfaces are left
/// out of the v0.3 card.
#[test]
fn an_interface_without_a_binding_is_left_out_of_a_v03_card() {
    let mut v1 = fixture("v1/agent_card.json");
    v1["supportedInterfaces"][0]["protocolBinding"] = json!("");
    let card: AgentCard = serde_json::from_value(v1).unwrap();
    let old = v03::encode_card(&card);
    assert_eq!(old["additionalInterfaces"].as_array().unwrap().len(), 1);
    assert_eq!(old["preferredTransport"], "HTTP+JSON");
    let again = v03::encode_card(&v03::decode_card(&old).unwrap());
    assert_eq!(again, old);
}
