//! The concrete ProtoJSON facts a peer relies on (digest §1): enum names and numbers, bytes as
//! base64, snake_case input, unknown fields, timestamps, required fields and omitted defaults.

use a2a_core::*;
use serde_json::{Value, json};

#[test]
fn every_task_state_and_role_is_emitted_by_its_full_proto_name() {
    let names: Vec<Value> = TaskState::ALL
        .iter()
        .map(|s| serde_json::to_value(s).unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "TASK_STATE_UNSPECIFIED",
            "TASK_STATE_SUBMITTED",
            "TASK_STATE_WORKING",
            "TASK_STATE_COMPLETED",
            "TASK_STATE_FAILED",
            "TASK_STATE_CANCELED",
            "TASK_STATE_INPUT_REQUIRED",
            "TASK_STATE_REJECTED",
            "TASK_STATE_AUTH_REQUIRED",
        ]
    );
    for (n, s) in TaskState::ALL.iter().enumerate() {
        assert_eq!(s.number(), Some(n as i32));
    }
    let roles: Vec<Value> = Role::ALL
        .iter()
        .map(|r| serde_json::to_value(r).unwrap())
        .collect();
    assert_eq!(roles, ["ROLE_UNSPECIFIED", "ROLE_USER", "ROLE_AGENT"]);
}

#[test]
fn enums_are_also_read_from_their_numbers() {
    let task: Task = serde_json::from_value(json!({
        "id": "t", "status": {"state": 8, "message":
            {"messageId": "m", "role": 2, "parts": [{"text": "log in"}]}}
    }))
    .unwrap();
    assert_eq!(task.status.state, TaskState::AuthRequired);
    assert_eq!(task.status.message.unwrap().role, Role::Agent);
    let req: ListTasksRequest = serde_json::from_value(json!({"status": "3"})).unwrap();
    assert_eq!(req.status, Some(TaskState::Completed));
}

#[test]
fn unknown_enum_values_are_kept_and_re_emitted() {
    let input = json!({"id": "t", "status": {"state": "TASK_STATE_PAUSED", "message":
        {"messageId": "m", "role": "ROLE_SYSTEM", "parts": [{"text": "x"}]}}});
    let task: Task = serde_json::from_value(input.clone()).unwrap();
    assert_eq!(
        task.status.state,
        TaskState::Unknown("TASK_STATE_PAUSED".into())
    );
    assert!(!task.status.state.is_known());
    assert!(!task.status.state.is_terminal() && !task.status.state.is_active());
    assert_eq!(
        task.status.message.as_ref().unwrap().role.as_str(),
        "ROLE_SYSTEM"
    );
    assert_eq!(serde_json::to_value(&task).unwrap(), input);

    // An unknown number is passed on as the same number (ProtoJSON writes unknown enum values
    // as integers).
    let numeric = json!({"id": "t", "status": {"state": 42}});
    let task: Task = serde_json::from_value(numeric.clone()).unwrap();
    assert_eq!(task.status.state.number(), None);
    assert_eq!(serde_json::to_value(&task).unwrap(), numeric);
}

#[test]
fn raw_bytes_are_written_as_padded_standard_base64() {
    let part = Part::raw(vec![0xfb, 0xff]);
    assert_eq!(serde_json::to_value(&part).unwrap(), json!({"raw": "+/8="}));
    let png = Part::raw(*b"\x89PNG\r\n\x1a\n");
    assert_eq!(serde_json::to_value(&png).unwrap()["raw"], "iVBORw0KGgo=");
    assert_eq!(
        serde_json::to_value(Part::raw(Vec::new())).unwrap(),
        json!({"raw": ""})
    );
}

#[test]
fn raw_bytes_are_read_from_url_safe_or_unpadded_base64() {
    for input in ["+/8=", "+/8", "-_8=", "-_8"] {
        let part: Part = serde_json::from_value(json!({"raw": input})).unwrap();
        assert_eq!(part.content, PartContent::Raw(vec![0xfb, 0xff]), "{input}");
    }
    for input in ["iVBORw0KGgo=", "iVBORw0KGgo"] {
        let part: Part = serde_json::from_value(json!({"raw": input})).unwrap();
        assert_eq!(
            part.content,
            PartContent::Raw(b"\x89PNG\r\n\x1a\n".to_vec())
        );
    }
}

#[test]
fn snake_case_input_is_accepted_and_camel_case_emitted() {
    let task: Task = serde_json::from_value(json!({
        "id": "t-1", "context_id": "c-1",
        "status": {"state": "TASK_STATE_WORKING"},
        "artifacts": [{"artifact_id": "a-1", "parts": [{"raw": "AA==", "media_type": "x/y"}]}],
        "history": [{"message_id": "m-1", "task_id": "t-1", "context_id": "c-1",
                     "role": "ROLE_USER", "parts": [{"text": "hi"}],
                     "reference_task_ids": ["t-0"]}]
    }))
    .unwrap();
    assert_eq!(
        serde_json::to_value(&task).unwrap(),
        json!({
            "id": "t-1", "contextId": "c-1",
            "status": {"state": "TASK_STATE_WORKING"},
            "artifacts": [{"artifactId": "a-1", "parts": [{"raw": "AA==", "mediaType": "x/y"}]}],
            "history": [{"messageId": "m-1", "taskId": "t-1", "contextId": "c-1",
                         "role": "ROLE_USER", "parts": [{"text": "hi"}],
                         "referenceTaskIds": ["t-0"]}]
        })
    );

    let event: StreamResponse = serde_json::from_value(json!({"artifact_update": {
        "task_id": "t-1", "context_id": "c-1", "artifact": {"artifact_id": "a", "parts": [{"text": "x"}]},
        "last_chunk": true}}))
    .unwrap();
    assert_eq!(
        serde_json::to_value(&event).unwrap(),
        json!({"artifactUpdate": {"taskId": "t-1", "contextId": "c-1",
            "artifact": {"artifactId": "a", "parts": [{"text": "x"}]}, "lastChunk": true}})
    );
    let status: StreamResponse = serde_json::from_value(json!({"status_update": {
        "task_id": "t-1", "context_id": "c-1", "status": {"state": "TASK_STATE_FAILED"}}}))
    .unwrap();
    assert!(matches!(status, StreamResponse::StatusUpdate(_)));

    let req: SendMessageRequest = serde_json::from_value(json!({
        "message": {"message_id": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]},
        "configuration": {"accepted_output_modes": ["text/plain"], "history_length": 1,
                          "return_immediately": true,
                          "task_push_notification_config": {"url": "https://h.example/x"}}
    }))
    .unwrap();
    assert!(req.return_immediately());
    assert_eq!(req.history_length(), Some(1));
    req.validate().unwrap();

    let list: ListTasksRequest = serde_json::from_value(json!({
        "context_id": "c", "page_size": 5, "page_token": "p", "history_length": 0,
        "status_timestamp_after": "2026-01-01T00:00:00Z", "include_artifacts": false}))
    .unwrap();
    assert_eq!(
        serde_json::to_value(&list).unwrap(),
        json!({"contextId": "c", "pageSize": 5, "pageToken": "p", "historyLength": 0,
               "statusTimestampAfter": "2026-01-01T00:00:00.000Z", "includeArtifacts": false})
    );

    let card: AgentCard = serde_json::from_value(json!({
        "name": "n", "description": "d", "version": "1",
        "supported_interfaces": [{"url": "https://a.example", "protocol_binding": "JSONRPC",
                                  "protocol_version": "1.0"}],
        "documentation_url": "https://docs.example", "icon_url": "https://i.example",
        "capabilities": {"push_notifications": true, "extended_agent_card": true},
        "security_schemes": {
            "k": {"api_key_security_scheme": {"location": "header", "name": "K"}},
            "h": {"http_auth_security_scheme": {"scheme": "Bearer", "bearer_format": "JWT"}},
            "o": {"oauth2_security_scheme": {"flows": {"client_credentials":
                     {"token_url": "https://t.example", "scopes": {}}},
                   "oauth2_metadata_url": "https://m.example"}},
            "c": {"oauth2_security_scheme": {"flows": {"authorization_code":
                     {"authorization_url": "https://a.example", "token_url": "https://t.example",
                      "refresh_url": "https://r.example", "scopes": {}, "pkce_required": true}}}},
            "d": {"oauth2_security_scheme": {"flows": {"device_code":
                     {"device_authorization_url": "https://d.example", "token_url": "https://t.example",
                      "scopes": {}}}}},
            "i": {"open_id_connect_security_scheme": {"open_id_connect_url": "https://oidc.example"}},
            "m": {"mtls_security_scheme": {}}
        },
        "security_requirements": [{"schemes": {"k": {"list": []}}}],
        "default_input_modes": ["text/plain"], "default_output_modes": ["text/plain"],
        "skills": [{"id": "s", "name": "s", "description": "s", "tags": [],
                    "input_modes": ["a/b"], "output_modes": ["c/d"],
                    "security_requirements": [{"schemes": {"h": {"list": []}}}]}]
    }))
    .unwrap();
    let out = serde_json::to_value(&card).unwrap();
    assert_eq!(out["supportedInterfaces"][0]["protocolBinding"], "JSONRPC");
    assert_eq!(out["documentationUrl"], "https://docs.example");
    assert_eq!(out["iconUrl"], "https://i.example");
    assert_eq!(
        out["capabilities"],
        json!({"pushNotifications": true, "extendedAgentCard": true})
    );
    assert_eq!(card.security_schemes.len(), 7);
    assert_eq!(
        out["securitySchemes"]["k"],
        json!({"apiKeySecurityScheme": {"location": "header", "name": "K"}})
    );
    assert_eq!(
        out["securitySchemes"]["h"]["httpAuthSecurityScheme"]["bearerFormat"],
        "JWT"
    );
    assert_eq!(
        out["securitySchemes"]["o"]["oauth2SecurityScheme"],
        json!({"flows": {"clientCredentials": {"tokenUrl": "https://t.example", "scopes": {}}},
               "oauth2MetadataUrl": "https://m.example"})
    );
    assert_eq!(
        out["securitySchemes"]["c"]["oauth2SecurityScheme"]["flows"],
        json!({"authorizationCode": {"authorizationUrl": "https://a.example",
            "tokenUrl": "https://t.example", "refreshUrl": "https://r.example", "scopes": {},
            "pkceRequired": true}})
    );
    assert_eq!(
        out["securitySchemes"]["d"]["oauth2SecurityScheme"]["flows"]["deviceCode"]["deviceAuthorizationUrl"],
        "https://d.example"
    );
    assert_eq!(
        out["securitySchemes"]["i"]["openIdConnectSecurityScheme"]["openIdConnectUrl"],
        "https://oidc.example"
    );
    assert_eq!(
        out["securitySchemes"]["m"],
        json!({"mtlsSecurityScheme": {}})
    );
    assert_eq!(out["skills"][0]["inputModes"], json!(["a/b"]));
    assert_eq!(
        out["skills"][0]["securityRequirements"],
        json!([{"schemes": {"h": {"list": []}}}])
    );
}

#[test]
fn unknown_fields_are_ignored() {
    let task: Task = serde_json::from_value(json!({
        "kind": "task", "id": "t", "futureField": {"x": 1},
        "status": {"state": "TASK_STATE_WORKING", "progress": 0.5},
        "history": [{"kind": "message", "messageId": "m", "role": "ROLE_USER",
                     "parts": [{"kind": "text", "text": "hi", "lang": "en"}]}]
    }))
    .unwrap();
    assert_eq!(
        serde_json::to_value(&task).unwrap(),
        json!({"id": "t", "status": {"state": "TASK_STATE_WORKING"},
               "history": [{"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}]})
    );
    let req: SendMessageRequest = serde_json::from_value(json!({
        "message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]},
        "configuration": {"blocking": true, "newOption": 1}, "extra": []
    }))
    .unwrap();
    req.validate().unwrap();
    let card: AgentCard = serde_json::from_value(json!({
        "name": "n", "description": "d", "version": "1", "capabilities": {"teleport": true},
        "supportedInterfaces": [], "defaultInputModes": [], "defaultOutputModes": [], "skills": [],
        "mascot": "owl"}))
    .unwrap();
    assert_eq!(card.capabilities, AgentCapabilities::default());
}

#[test]
fn timestamps_are_emitted_in_utc_with_z_and_milliseconds() {
    let cases = [
        ("2026-02-03T09:15:27.412Z", "2026-02-03T09:15:27.412Z"),
        ("2026-02-03T09:15:27Z", "2026-02-03T09:15:27.000Z"),
        ("2026-02-03T09:15:27.4Z", "2026-02-03T09:15:27.400Z"),
        ("2026-02-03T09:15:27.412345678Z", "2026-02-03T09:15:27.412Z"),
        ("2026-02-03T11:15:27.412+02:00", "2026-02-03T09:15:27.412Z"),
        ("2026-02-03T04:15:27.412-05:00", "2026-02-03T09:15:27.412Z"),
    ];
    for (input, output) in cases {
        let status: TaskStatus =
            serde_json::from_value(json!({"state": "TASK_STATE_WORKING", "timestamp": input}))
                .unwrap_or_else(|e| panic!("{input}: {e}"));
        assert_eq!(
            serde_json::to_value(&status).unwrap()["timestamp"],
            output,
            "{input}"
        );
    }
    let now = Timestamp::now().to_string();
    assert!(
        now.ends_with('Z') && now.len() == "2026-02-03T09:15:27.412Z".len(),
        "{now}"
    );
    assert!(TaskStatus::new(TaskState::Working).timestamp.is_some());
    let t = Timestamp::from_unix_millis(1_770_110_127_412).unwrap();
    assert_eq!(t.to_string(), "2026-02-03T09:15:27.412Z");
    assert_eq!(t.unix_millis(), 1_770_110_127_412);
    assert!("yesterday".parse::<Timestamp>().is_err());
    assert!(
        serde_json::from_value::<TaskStatus>(json!({"state": 1, "timestamp": "2026-02-03"}))
            .is_err()
    );
}

#[test]
fn history_length_zero_and_absent_are_different() {
    let absent: GetTaskRequest = serde_json::from_value(json!({"id": "t"})).unwrap();
    let zero: GetTaskRequest =
        serde_json::from_value(json!({"id": "t", "historyLength": 0})).unwrap();
    assert_eq!(absent.history_length, None);
    assert_eq!(zero.history_length, Some(0));
    assert_ne!(absent, zero);
    assert_eq!(serde_json::to_value(&absent).unwrap(), json!({"id": "t"}));
    assert_eq!(
        serde_json::to_value(&zero).unwrap(),
        json!({"id": "t", "historyLength": 0})
    );
    let send = SendMessageRequest::new(Message::user_text("x")).with_history_length(0);
    assert_eq!(
        serde_json::to_value(&send).unwrap()["configuration"],
        json!({"historyLength": 0})
    );
    let list: ListTasksRequest = serde_json::from_value(json!({"historyLength": 0})).unwrap();
    assert_eq!(list.history_length, Some(0));
    // int32 may come as a numeric string (ProtoJSON).
    let s: GetTaskRequest =
        serde_json::from_value(json!({"id": "t", "historyLength": "3"})).unwrap();
    assert_eq!(s.history_length, Some(3));
    // What the values mean for a task.
    let mut task = Task::new("t", "c", TaskStatus::new(TaskState::Working));
    task.history = (0..4)
        .map(|i| Message::user_text(format!("m{i}")))
        .collect();
    let mut two = task.clone();
    two.truncate_history(Some(2));
    assert_eq!(
        two.history.iter().map(Message::text).collect::<Vec<_>>(),
        ["m2", "m3"]
    );
    let mut none = task.clone();
    none.truncate_history(Some(0));
    assert!(none.history.is_empty());
    assert!(
        serde_json::to_value(&none)
            .unwrap()
            .get("history")
            .is_none()
    );
    let mut all = task;
    all.truncate_history(None);
    assert_eq!(all.history.len(), 4);
}

#[test]
fn required_fields_are_emitted_even_when_empty() {
    let msg = Message {
        message_id: MessageId::default(),
        context_id: None,
        task_id: None,
        role: Role::Unspecified,
        parts: Vec::new(),
        metadata: None,
        extensions: Vec::new(),
        reference_task_ids: Vec::new(),
    };
    assert_eq!(
        serde_json::to_value(&msg).unwrap(),
        json!({"messageId": "", "role": "ROLE_UNSPECIFIED", "parts": []})
    );
    assert_eq!(
        serde_json::to_value(AgentCard::default()).unwrap(),
        json!({"name": "", "description": "", "supportedInterfaces": [], "version": "",
               "capabilities": {}, "defaultInputModes": [], "defaultOutputModes": [],
               "skills": []})
    );
    assert_eq!(
        serde_json::to_value(ListTaskPushNotificationConfigsResponse::default()).unwrap(),
        json!({"configs": [], "nextPageToken": ""})
    );
    assert_eq!(
        serde_json::to_value(AgentSkill::new("s", "S", "does s")).unwrap(),
        json!({"id": "s", "name": "S", "description": "does s", "tags": []})
    );
    // A set oneof member is emitted even when it is "".
    assert_eq!(
        serde_json::to_value(Part::text("")).unwrap(),
        json!({"text": ""})
    );
    // `Empty` is `{}`, and `null` is read as `Empty` too.
    assert_eq!(serde_json::to_value(Empty {}).unwrap(), json!({}));
    assert_eq!(
        serde_json::from_value::<Empty>(Value::Null).unwrap(),
        Empty {}
    );
    assert_eq!(
        serde_json::from_value::<Empty>(json!({})).unwrap(),
        Empty {}
    );
}

#[test]
fn plain_proto3_defaults_are_omitted() {
    let event = TaskArtifactUpdateEvent {
        task_id: "t".into(),
        context_id: "c".into(),
        artifact: Artifact::text("a", "x").with_id("a-1"),
        append: false,
        last_chunk: false,
        metadata: None,
        generation: 0,
    };
    assert_eq!(
        serde_json::to_value(&event).unwrap(),
        json!({"taskId": "t", "contextId": "c",
               "artifact": {"artifactId": "a-1", "name": "a", "parts": [{"text": "x"}]}})
    );
    let ext = AgentExtension::new("urn:x");
    assert_eq!(serde_json::to_value(&ext).unwrap(), json!({"uri": "urn:x"}));
    let task = Task::new(
        "t",
        "",
        TaskStatus {
            state: TaskState::Submitted,
            message: None,
            timestamp: None,
        },
    );
    assert_eq!(
        serde_json::to_value(&task).unwrap(),
        json!({"id": "t", "status": {"state": "TASK_STATE_SUBMITTED"}})
    );
    // Empty strings of plain fields read as unset.
    let m: Message = serde_json::from_value(json!({"messageId": "m", "role": "ROLE_USER",
        "contextId": "", "taskId": "", "parts": [{"text": "x", "mediaType": ""}]}))
    .unwrap();
    assert_eq!(
        (m.context_id, m.task_id, m.parts[0].media_type.clone()),
        (None, None, None)
    );
}
