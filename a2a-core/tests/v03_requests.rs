//! v0.3 translation of requests (digest §9): `message/send` params, push configs and the params
//! of every v0.3 method decode into their v1.0 requests, errors name the field, and decoded
//! messages are validated like v1.0 ones.

mod support;

use a2a_core::v03::{self, Params};
use a2a_core::*;
use serde_json::{Value, json};
use support::*;

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
