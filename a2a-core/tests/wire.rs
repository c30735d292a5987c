//! Golden-fixture tests of the v1.0 wire format (digest §1–§4, §12): every spec example parses
//! into its type and re-serializes to the same JSON (compared as `serde_json::Value`), plus the
//! concrete ProtoJSON facts a peer relies on, the JSON-RPC envelope, and the error table.

use a2a_core::jsonrpc::{Id, Payload, RawRequest, Request, Response};
use a2a_core::v03;
use a2a_core::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::path::PathBuf;

// ---------------------------------------------------------------------------------------------
// Fixture helpers

fn fixture_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn fixture_text(name: &str) -> String {
    std::fs::read_to_string(fixture_path(name))
        .unwrap_or_else(|e| panic!("cannot read fixture {name}: {e}"))
}

fn fixture(name: &str) -> Value {
    serde_json::from_str(&fixture_text(name))
        .unwrap_or_else(|e| panic!("fixture {name} is not JSON: {e}"))
}

/// Parses the fixture text as `T`, re-serializes it, and checks the output equals the fixture
/// (as JSON values) and parses back to the same `T`.
fn round_trip<T>(name: &str) -> T
where
    T: Serialize + DeserializeOwned + PartialEq + Debug,
{
    let original = fixture(name);
    let typed: T = serde_json::from_str(&fixture_text(name)).unwrap_or_else(|e| {
        panic!(
            "{name} does not parse as {}: {e}",
            std::any::type_name::<T>()
        )
    });
    let out = serde_json::to_value(&typed).expect("serializes");
    assert_eq!(
        out, original,
        "{name}: re-serialized JSON differs from the fixture"
    );
    let again: T = serde_json::from_value(out).expect("own output parses");
    assert_eq!(again, typed, "{name}: second parse differs");
    typed
}

/// Parses and re-serializes without comparing to the input.
fn reserialize<T: Serialize + DeserializeOwned>(v: Value) -> Value {
    let typed: T = serde_json::from_value(v).expect("parses");
    serde_json::to_value(&typed).expect("serializes")
}

/// Every object key anywhere in `v`.
fn all_keys(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                out.push(k.clone());
                all_keys(v, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|v| all_keys(v, out)),
        _ => {}
    }
}

/// Every string value under `key` anywhere in `v`.
fn values_of(v: &Value, key: &str, out: &mut Vec<Value>) {
    match v {
        Value::Object(m) => {
            for (k, inner) in m {
                if k == key {
                    out.push(inner.clone());
                }
                values_of(inner, key, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|v| values_of(v, key, out)),
        _ => {}
    }
}

/// The security half of an agent card (digest §2.7 shows it as a fragment).
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SecurityFragment {
    security_schemes: BTreeMap<String, SecurityScheme>,
    security_requirements: Vec<SecurityRequirement>,
}

type Checker = fn(&str) -> Value;

fn check<T>(name: &str) -> Value
where
    T: Serialize + DeserializeOwned + PartialEq + Debug,
{
    serde_json::to_value(round_trip::<T>(name)).expect("serializes")
}

/// Every valid v1.0 fixture and the type it is an example of. `sse_2_artifact_first_chunk.json`
/// is not here: it carries `"lastChunk": false`, which is not re-emitted (see its own test).
const V1_FIXTURES: &[(&str, Checker)] = &[
    ("v1/task_input_required.json", check::<Task>),
    ("v1/parts.json", check::<Vec<Part>>),
    ("v1/security.json", check::<SecurityFragment>),
    ("v1/agent_card.json", check::<AgentCard>),
    ("v1/agent_card_full.json", check::<AgentCard>),
    (
        "v1/send_message_request.json",
        check::<Request<SendMessageRequest>>,
    ),
    (
        "v1/send_message_request_full.json",
        check::<SendMessageRequest>,
    ),
    (
        "v1/send_message_response.json",
        check::<Response<SendMessageResponse>>,
    ),
    (
        "v1/send_message_response_message.json",
        check::<SendMessageResponse>,
    ),
    ("v1/sse_1_task.json", check::<Response<StreamResponse>>),
    (
        "v1/sse_3_artifact_last_chunk.json",
        check::<Response<StreamResponse>>,
    ),
    (
        "v1/sse_4_status_completed.json",
        check::<Response<StreamResponse>>,
    ),
    (
        "v1/stream_artifact_update_full.json",
        check::<StreamResponse>,
    ),
    ("v1/stream_message.json", check::<StreamResponse>),
    ("v1/jsonrpc_error.json", check::<Response<Value>>),
    ("v1/push_config.json", check::<TaskPushNotificationConfig>),
    ("v1/push_delivery.json", check::<StreamResponse>),
    (
        "v1/push_config_get_request.json",
        check::<GetTaskPushNotificationConfigRequest>,
    ),
    (
        "v1/push_config_list_response.json",
        check::<ListTaskPushNotificationConfigsResponse>,
    ),
    (
        "v1/list_tasks_response_last_page.json",
        check::<ListTasksResponse>,
    ),
    (
        "v1/list_tasks_response_empty.json",
        check::<ListTasksResponse>,
    ),
    (
        "v1/list_tasks_response_more.json",
        check::<ListTasksResponse>,
    ),
    ("v1/list_tasks_request.json", check::<ListTasksRequest>),
    ("v1/get_task_request.json", check::<GetTaskRequest>),
    ("v1/cancel_task_request.json", check::<CancelTaskRequest>),
    ("v1/security_scheme_api_key.json", check::<SecurityScheme>),
    ("v1/security_scheme_http_auth.json", check::<SecurityScheme>),
    ("v1/security_scheme_oauth2.json", check::<SecurityScheme>),
    (
        "v1/security_scheme_open_id_connect.json",
        check::<SecurityScheme>,
    ),
    ("v1/security_scheme_mtls.json", check::<SecurityScheme>),
    ("v1/oauth_flow_authorization_code.json", check::<OAuthFlows>),
    ("v1/oauth_flow_client_credentials.json", check::<OAuthFlows>),
    ("v1/oauth_flow_device_code.json", check::<OAuthFlows>),
    ("v1/oauth_flow_implicit.json", check::<OAuthFlows>),
    ("v1/oauth_flow_password.json", check::<OAuthFlows>),
    ("v1/rest_error.json", |name| {
        let body = fixture(name);
        let err = Error::from_status_body(&body).expect("a Status body");
        let out = err.to_status_body();
        assert_eq!(out, body, "{name}: re-rendered Status body differs");
        out
    }),
];

// ---------------------------------------------------------------------------------------------
// Golden fixtures

#[test]
fn every_v1_fixture_round_trips_unchanged() {
    for (name, check) in V1_FIXTURES {
        check(name);
    }
}

#[test]
fn every_v1_fixture_file_is_checked() {
    let mut listed: Vec<&str> = V1_FIXTURES.iter().map(|(n, _)| *n).collect();
    listed.push("v1/sse_2_artifact_first_chunk.json");
    for entry in std::fs::read_dir(fixture_path("v1")).unwrap() {
        let name = format!("v1/{}", entry.unwrap().file_name().to_string_lossy());
        assert!(listed.contains(&name.as_str()), "{name} is not checked");
    }
}

#[test]
fn v1_output_uses_full_enum_names_and_never_kind() {
    let mut outputs: Vec<Value> = V1_FIXTURES.iter().map(|(n, check)| check(n)).collect();
    outputs.push(reserialize::<Response<StreamResponse>>(fixture(
        "v1/sse_2_artifact_first_chunk.json",
    )));
    let mut states = Vec::new();
    let mut roles = Vec::new();
    let mut keys = Vec::new();
    for out in &outputs {
        values_of(out, "state", &mut states);
        values_of(out, "role", &mut roles);
        all_keys(out, &mut keys);
    }
    assert!(!states.is_empty() && !roles.is_empty());
    for s in states {
        assert!(s.as_str().unwrap().starts_with("TASK_STATE_"), "{s}");
    }
    for r in roles {
        assert!(r == "ROLE_USER" || r == "ROLE_AGENT", "{r}");
    }
    assert!(
        !keys.iter().any(|k| k == "kind"),
        "a v1.0 output has `kind`"
    );
    assert!(
        !keys.iter().any(|k| k == "final"),
        "a v1.0 output has `final`"
    );
}

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
fn security_example_reads_every_scheme_and_requirement() {
    let sec: SecurityFragment = round_trip("v1/security.json");
    let s = &sec.security_schemes;
    assert_eq!(s.len(), 5);
    assert_eq!(s["key"], SecurityScheme::api_key_header("X-Api-Key"));
    let SecurityScheme::HttpAuthSecurityScheme(jwt) = &s["jwt"] else {
        panic!("jwt")
    };
    assert_eq!(
        (jwt.scheme.as_str(), jwt.bearer_format.as_deref()),
        ("Bearer", Some("JWT"))
    );
    assert!(matches!(
        &s["oidc"],
        SecurityScheme::OpenIdConnectSecurityScheme(o)
            if o.open_id_connect_url == "https://id.example.net/.well-known/openid-configuration"
    ));
    assert!(matches!(
        &s["mtls"],
        SecurityScheme::MtlsSecurityScheme(m) if m.description.as_deref() == Some("client cert")
    ));
    let SecurityScheme::Oauth2SecurityScheme(oa) = &s["oa"] else {
        panic!("oa")
    };
    let OAuthFlows::ClientCredentials(cc) = &oa.flows else {
        panic!("flow")
    };
    assert_eq!(cc.token_url, "https://id.example.net/token");
    assert_eq!(cc.scopes["a2a.run"], "run tasks");
    assert_eq!(
        oa.oauth2_metadata_url.as_deref(),
        Some("https://id.example.net/.well-known/oauth-authorization-server")
    );
    assert_eq!(
        sec.security_requirements,
        [
            SecurityRequirement::scheme("oa", ["a2a.run"]),
            SecurityRequirement {
                schemes: [
                    ("key".to_owned(), StringList::default()),
                    ("mtls".to_owned(), StringList::default()),
                ]
                .into()
            }
        ]
    );
}

#[test]
fn every_security_scheme_variant_and_oauth_flow_parses_to_its_variant() {
    let scheme = |f: &str| round_trip::<SecurityScheme>(&format!("v1/security_scheme_{f}.json"));
    assert!(matches!(
        scheme("api_key"),
        SecurityScheme::ApiKeySecurityScheme(k) if k.location == "header" && k.name == "X-Api-Key"
    ));
    assert!(matches!(
        scheme("http_auth"),
        SecurityScheme::HttpAuthSecurityScheme(h) if h.scheme == "Bearer"
    ));
    assert!(matches!(
        scheme("oauth2"),
        SecurityScheme::Oauth2SecurityScheme(_)
    ));
    assert!(matches!(
        scheme("open_id_connect"),
        SecurityScheme::OpenIdConnectSecurityScheme(_)
    ));
    assert!(matches!(
        scheme("mtls"),
        SecurityScheme::MtlsSecurityScheme(_)
    ));

    let flow = |f: &str| round_trip::<OAuthFlows>(&format!("v1/oauth_flow_{f}.json"));
    let OAuthFlows::AuthorizationCode(a) = flow("authorization_code") else {
        panic!("authorizationCode")
    };
    assert!(a.pkce_required);
    assert_eq!(a.authorization_url, "https://id.example.net/authorize");
    assert_eq!(
        a.refresh_url.as_deref(),
        Some("https://id.example.net/refresh")
    );
    assert_eq!(a.scopes.len(), 2);
    assert!(matches!(
        flow("client_credentials"),
        OAuthFlows::ClientCredentials(c) if c.token_url == "https://id.example.net/token"
    ));
    assert!(matches!(
        flow("device_code"),
        OAuthFlows::DeviceCode(d) if d.device_authorization_url == "https://id.example.net/device"
    ));
    assert!(matches!(
        flow("implicit"),
        OAuthFlows::Implicit(i) if i.authorization_url.as_deref() == Some("https://id.example.net/authorize")
    ));
    assert!(matches!(
        flow("password"),
        OAuthFlows::Password(p) if p.token_url.as_deref() == Some("https://id.example.net/token")
    ));
}

#[test]
fn card_example_reads_as_the_spec_says() {
    let card: AgentCard = round_trip("v1/agent_card.json");
    assert_eq!(card.name, "Ledger Agent");
    assert_eq!(card.version, "0.4.2");
    assert_eq!(
        card.interface(BINDING_JSONRPC, PROTOCOL_VERSION)
            .unwrap()
            .url,
        "https://agent.example.net/a2a/jsonrpc"
    );
    assert_eq!(
        card.interface(BINDING_HTTP_JSON, "1.0").unwrap().url,
        "https://agent.example.net/a2a/rest"
    );
    assert!(card.interface(BINDING_GRPC, "1.0").is_none());
    assert!(card.capabilities.streaming());
    assert!(card.capabilities.push_notifications());
    assert!(!card.capabilities.extended_agent_card());
    // `optional bool` set to false is kept (and re-emitted, as the round trip shows).
    assert_eq!(card.capabilities.extended_agent_card, Some(false));
    assert_eq!(
        card.security_requirements,
        [SecurityRequirement::scheme("jwt", Vec::<String>::new())]
    );
    assert_eq!(card.skill("balance").unwrap().tags, ["finance"]);
}

#[test]
fn full_card_keeps_tenants_extensions_signatures_and_skill_security() {
    let card: AgentCard = round_trip("v1/agent_card_full.json");
    assert_eq!(card.supported_interfaces[0].tenant.as_deref(), Some("t1"));
    assert_eq!(card.supported_interfaces[1].url, "agent.example.net:443");
    assert_eq!(
        card.interface(BINDING_JSONRPC, "0.3").unwrap().url,
        "https://agent.example.net/v03"
    );
    let ext = &card.capabilities.extensions;
    assert!(ext[0].required);
    assert_eq!(ext[0].params.as_ref().unwrap()["precision"], 5);
    assert!(!ext[1].required);
    assert_eq!(card.capabilities.streaming, Some(false));
    assert!(!card.capabilities.streaming());
    assert_eq!(card.security_schemes.len(), 7);
    assert_eq!(
        card.skill("draw").unwrap().security_requirements,
        [SecurityRequirement::scheme("basic", Vec::<String>::new())]
    );
    assert!(card.skill("noop").unwrap().tags.is_empty());
    assert_eq!(card.signatures[0].header.as_ref().unwrap()["kid"], "k1");
    assert_eq!(
        card.icon_url.as_deref(),
        Some("https://example.net/icon.png")
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

// ---------------------------------------------------------------------------------------------
// ProtoJSON facts (digest §1)

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

#[test]
fn security_requirements_bare_array_form_is_read_and_list_form_emitted() {
    let input = json!([{"schemes": {"oa": ["a2a.run", "a2a.read"], "key": []}}]);
    let reqs: Vec<SecurityRequirement> = serde_json::from_value(input).unwrap();
    assert_eq!(reqs[0].schemes["oa"].list, ["a2a.run", "a2a.read"]);
    assert_eq!(
        serde_json::to_value(&reqs).unwrap(),
        json!([{"schemes": {"oa": {"list": ["a2a.run", "a2a.read"]}, "key": {"list": []}}}])
    );
    let card: AgentCard = serde_json::from_value(json!({
        "name": "n", "description": "d", "version": "1", "capabilities": {},
        "supportedInterfaces": [], "defaultInputModes": [], "defaultOutputModes": [],
        "securityRequirements": [{"schemes": {"oa": ["s"]}}],
        "skills": [{"id": "s", "name": "s", "description": "s", "tags": [],
                    "securityRequirements": [{"schemes": {"oa": ["t"]}}]}]
    }))
    .unwrap();
    let out = serde_json::to_value(&card).unwrap();
    assert_eq!(
        out["securityRequirements"],
        json!([{"schemes": {"oa": {"list": ["s"]}}}])
    );
    assert_eq!(
        out["skills"][0]["securityRequirements"],
        json!([{"schemes": {"oa": {"list": ["t"]}}}])
    );
}

#[test]
fn hybrid_card_parses_back_as_the_v1_card_and_carries_v03_keys() {
    let card: AgentCard = serde_json::from_value(fixture("v1/agent_card_full.json")).unwrap();
    let hybrid = v03::hybrid_card(&card);

    // v1.0 readers see exactly the card.
    let back: AgentCard = serde_json::from_value(hybrid.clone()).unwrap();
    assert_eq!(back, card);
    assert_eq!(v03::decode_card(&hybrid).unwrap(), card);

    // v0.3 readers find their keys.
    assert_eq!(hybrid["protocolVersion"], "0.3");
    assert_eq!(hybrid["url"], "https://agent.example.net/v03");
    assert_eq!(hybrid["preferredTransport"], "JSONRPC");
    let additional = hybrid["additionalInterfaces"].as_array().unwrap();
    assert!(
        additional
            .contains(&json!({"url": "https://agent.example.net/v03", "transport": "JSONRPC"}))
    );
    assert!(
        !additional.contains(
            &json!({"url": "https://agent.example.net/t1/jsonrpc", "transport": "JSONRPC"})
        )
    );
    assert_eq!(hybrid["supportsAuthenticatedExtendedCard"], true);
    assert_eq!(
        hybrid["security"],
        json!([{"code": ["read", "write"]}, {"key": [], "mtls": []}])
    );
    let schemes = hybrid["securitySchemes"].as_object().unwrap();
    for (name, scheme) in schemes {
        assert!(scheme.get("type").is_some(), "{name} has no v0.3 `type`");
        assert_eq!(
            scheme
                .as_object()
                .unwrap()
                .keys()
                .filter(|k| k.ends_with("SecurityScheme"))
                .count(),
            1,
            "{name}"
        );
    }
    assert_eq!(schemes["key"]["type"], "apiKey");
    assert_eq!(schemes["key"]["in"], "query");
    assert_eq!(schemes["key"]["apiKeySecurityScheme"]["location"], "query");
    assert_eq!(schemes["basic"]["type"], "http");
    assert_eq!(schemes["oidc"]["type"], "openIdConnect");
    assert_eq!(schemes["mtls"]["type"], "mutualTLS");
    assert_eq!(schemes["code"]["type"], "oauth2");
    assert_eq!(
        schemes["code"]["flows"]["authorizationCode"]["tokenUrl"],
        "https://id.example.net/token"
    );
    assert_eq!(hybrid["skills"][0]["security"], json!([{"basic": []}]));
    assert_eq!(
        hybrid["skills"][0]["securityRequirements"],
        json!([{"schemes": {"basic": {"list": []}}}])
    );
    assert!(hybrid["skills"][1].get("security").is_none());
    // The v1.0 keys are all still there.
    let plain = serde_json::to_value(&card).unwrap();
    for key in plain.as_object().unwrap().keys() {
        assert!(hybrid.get(key).is_some(), "hybrid card lost {key}");
    }
}

#[test]
fn hybrid_card_of_a_v1_only_card_points_v03_clients_at_the_first_interface() {
    let card: AgentCard = serde_json::from_value(fixture("v1/agent_card.json")).unwrap();
    let hybrid = v03::hybrid_card(&card);
    assert_eq!(
        serde_json::from_value::<AgentCard>(hybrid.clone()).unwrap(),
        card
    );
    assert_eq!(hybrid["protocolVersion"], "0.3");
    assert_eq!(hybrid["url"], "https://agent.example.net/a2a/jsonrpc");
    assert_eq!(hybrid["preferredTransport"], "JSONRPC");
    assert!(hybrid.get("supportsAuthenticatedExtendedCard").is_none());
    assert_eq!(hybrid["security"], json!([{"jwt": []}]));
    assert_eq!(hybrid["securitySchemes"]["jwt"]["type"], "http");
    assert_eq!(hybrid["securitySchemes"]["jwt"]["scheme"], "Bearer");
}

#[test]
fn card_builder_produces_a_valid_minimal_card() {
    let card = AgentCard::builder("Echo", "Repeats what you say")
        .interface(BINDING_JSONRPC, "https://echo.example/a2a")
        .streaming(true)
        .skill(AgentSkill::new("echo", "Echo", "echoes").with_tags(["demo"]))
        .security_scheme("bearer", SecurityScheme::bearer())
        .security_requirement(SecurityRequirement::scheme("bearer", Vec::<String>::new()))
        .build();
    assert_eq!(
        serde_json::to_value(&card).unwrap(),
        json!({
            "name": "Echo", "description": "Repeats what you say",
            "supportedInterfaces": [{"url": "https://echo.example/a2a", "protocolBinding": "JSONRPC",
                                     "protocolVersion": "1.0"}],
            "version": "0.1.0",
            "capabilities": {"streaming": true},
            "securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
            "securityRequirements": [{"schemes": {"bearer": {"list": []}}}],
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "echo", "name": "Echo", "description": "echoes", "tags": ["demo"]}]
        })
    );
}

// ---------------------------------------------------------------------------------------------
// Invalid input (digest §12 items 2, 4, 6, 7, 18, 25)

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

// ---------------------------------------------------------------------------------------------
// Error table (digest §4.1–§4.2, v1.0.1 columns)

/// (kind, JSON-RPC code, HTTP status, gRPC status, ErrorInfo reason).
const ERROR_TABLE: &[(ErrorKind, i32, u16, &str, &str)] = &[
    // §4.1: standard JSON-RPC codes; reasons as the SDKs use them (not normative).
    (
        ErrorKind::ParseError,
        -32700,
        400,
        "INVALID_ARGUMENT",
        "PARSE_ERROR",
    ),
    (
        ErrorKind::InvalidRequest,
        -32600,
        400,
        "INVALID_ARGUMENT",
        "INVALID_REQUEST",
    ),
    (
        ErrorKind::MethodNotFound,
        -32601,
        404,
        "UNIMPLEMENTED",
        "METHOD_NOT_FOUND",
    ),
    (
        ErrorKind::InvalidParams,
        -32602,
        400,
        "INVALID_ARGUMENT",
        "INVALID_PARAMS",
    ),
    (
        ErrorKind::Internal,
        -32603,
        500,
        "INTERNAL",
        "INTERNAL_ERROR",
    ),
    // §4.2: A2A errors, v1.0.1 HTTP and gRPC columns.
    (
        ErrorKind::TaskNotFound,
        -32001,
        404,
        "NOT_FOUND",
        "TASK_NOT_FOUND",
    ),
    (
        ErrorKind::TaskNotCancelable,
        -32002,
        400,
        "FAILED_PRECONDITION",
        "TASK_NOT_CANCELABLE",
    ),
    (
        ErrorKind::PushNotificationNotSupported,
        -32003,
        400,
        "FAILED_PRECONDITION",
        "PUSH_NOTIFICATION_NOT_SUPPORTED",
    ),
    (
        ErrorKind::UnsupportedOperation,
        -32004,
        400,
        "FAILED_PRECONDITION",
        "UNSUPPORTED_OPERATION",
    ),
    (
        ErrorKind::ContentTypeNotSupported,
        -32005,
        400,
        "INVALID_ARGUMENT",
        "CONTENT_TYPE_NOT_SUPPORTED",
    ),
    (
        ErrorKind::InvalidAgentResponse,
        -32006,
        500,
        "INTERNAL",
        "INVALID_AGENT_RESPONSE",
    ),
    (
        ErrorKind::ExtendedAgentCardNotConfigured,
        -32007,
        400,
        "FAILED_PRECONDITION",
        "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
    ),
    (
        ErrorKind::ExtensionSupportRequired,
        -32008,
        400,
        "FAILED_PRECONDITION",
        "EXTENSION_SUPPORT_REQUIRED",
    ),
    (
        ErrorKind::VersionNotSupported,
        -32009,
        400,
        "FAILED_PRECONDITION",
        "VERSION_NOT_SUPPORTED",
    ),
    // A2A 1.1 (dev-1.1, #1810).
    (
        ErrorKind::TaskGenerationMismatch,
        -32010,
        409,
        "ABORTED",
        "TASK_GENERATION_MISMATCH",
    ),
    // HTTP-level conditions (a2a-go's reasons for 401/403; the JSON-RPC codes are this crate's).
    (
        ErrorKind::Unauthenticated,
        -32098,
        401,
        "UNAUTHENTICATED",
        "UNAUTHENTICATED",
    ),
    (
        ErrorKind::PermissionDenied,
        -32099,
        403,
        "PERMISSION_DENIED",
        "UNAUTHORIZED",
    ),
    (
        ErrorKind::PayloadTooLarge,
        -32600,
        413,
        "RESOURCE_EXHAUSTED",
        "PAYLOAD_TOO_LARGE",
    ),
];

#[test]
fn error_table_matches_the_spec() {
    assert_eq!(ERROR_TABLE.len(), ErrorKind::ALL.len());
    for kind in ErrorKind::ALL {
        let &(_, code, http, grpc, reason) = ERROR_TABLE
            .iter()
            .find(|row| row.0 == kind)
            .unwrap_or_else(|| panic!("{kind:?} is not in the expected table"));
        let row = kind.codes();
        assert_eq!(
            (row.json_rpc, row.http, row.grpc, row.reason),
            (code, http, grpc, reason),
            "{kind:?}"
        );
        assert_eq!(kind.json_rpc_code(), code);
        assert_eq!(kind.http_status(), http);
        assert_eq!(kind.grpc_status(), grpc);
        assert_eq!(kind.reason(), reason);
        assert_eq!(kind.to_string(), reason);
        assert_eq!(ErrorKind::from_reason(reason), Some(kind));
        assert!(!row.message.is_empty());
    }
    // -32600 is shared; the code alone reads as InvalidRequest.
    for &(kind, code, ..) in ERROR_TABLE {
        if kind != ErrorKind::PayloadTooLarge {
            assert_eq!(ErrorKind::from_json_rpc_code(code), Some(kind));
        }
    }
    assert_eq!(
        ErrorKind::from_json_rpc_code(-32600),
        Some(ErrorKind::InvalidRequest)
    );
    assert_eq!(ErrorKind::from_json_rpc_code(-32050), None);
    assert_eq!(
        ErrorKind::from_reason("UNSUPPORTED_CONTENT_TYPE"),
        Some(ErrorKind::ContentTypeNotSupported)
    );
    assert_eq!(ErrorKind::from_reason("NOPE"), None);
}

#[test]
fn json_rpc_errors_carry_error_info_first() {
    for kind in ErrorKind::ALL {
        let err = Error::from_kind(kind);
        let obj = err.to_json_rpc();
        let json = serde_json::to_value(&obj).unwrap();
        assert_eq!(json["code"], kind.json_rpc_code());
        assert_eq!(json["message"], kind.codes().message);
        assert_eq!(
            json["data"][0],
            json!({"@type": ERROR_INFO_TYPE, "reason": kind.reason(), "domain": "a2a-protocol.org"}),
            "{kind:?}"
        );
        let back = Error::from_json_rpc(serde_json::from_value(json).unwrap());
        assert_eq!(back.kind(), Some(kind));
        assert_eq!(back, err);
        assert!(back.is(kind));
        assert_eq!(back.http_status(), kind.http_status());
    }
    assert_eq!(ERROR_INFO_TYPE, "type.googleapis.com/google.rpc.ErrorInfo");
    assert_eq!(ERROR_DOMAIN, "a2a-protocol.org");
}

#[test]
fn status_bodies_have_the_spec_shape_and_round_trip_the_kind() {
    for kind in ErrorKind::ALL {
        let err = Error::new(kind, "something happened").with_metadata("taskId", "t-1");
        let body = err.to_status_body();
        assert_eq!(
            body,
            json!({"error": {
                "code": kind.http_status(),
                "status": kind.grpc_status(),
                "message": "something happened",
                "details": [{"@type": ERROR_INFO_TYPE, "reason": kind.reason(),
                             "domain": ERROR_DOMAIN, "metadata": {"taskId": "t-1"}}]
            }}),
            "{kind:?}"
        );
        let back = Error::from_status_body(&body).unwrap();
        assert_eq!(back.kind(), Some(kind));
        assert_eq!(back.code, kind.json_rpc_code());
        assert_eq!(back, err);
    }
    // Without ErrorInfo, the HTTP status is the only hint.
    for (http, kind) in [
        (400, Some(ErrorKind::InvalidParams)),
        (401, Some(ErrorKind::Unauthenticated)),
        (403, Some(ErrorKind::PermissionDenied)),
        (404, Some(ErrorKind::TaskNotFound)),
        (413, Some(ErrorKind::PayloadTooLarge)),
        (500, Some(ErrorKind::Internal)),
    ] {
        let e = Error::from_status_body(&json!({"error": {"code": http, "message": "m"}})).unwrap();
        assert_eq!(e.kind(), kind, "{http}");
    }
    assert!(Error::from_status_body(&json!({"message": "not a status"})).is_none());
}

#[test]
fn invalid_params_errors_name_the_field_in_a_bad_request_detail() {
    let err = Error::invalid_params("message.parts", "must contain at least one part");
    assert_eq!(err.message, "message.parts: must contain at least one part");
    let data = serde_json::to_value(err.to_json_rpc()).unwrap()["data"].clone();
    assert_eq!(data[0]["reason"], "INVALID_PARAMS");
    assert_eq!(
        data[1],
        json!({"@type": BAD_REQUEST_TYPE, "fieldViolations": [
            {"field": "message.parts", "description": "must contain at least one part"}]})
    );
    // A non-array `data` from a lenient peer is kept as one detail.
    let e = Error::from_json_rpc(ErrorObject {
        code: -32001,
        message: "nope".into(),
        data: Some(json!({"taskId": "t"})),
    });
    assert_eq!(e.details, [json!({"taskId": "t"})]);
    assert_eq!(e.kind(), Some(ErrorKind::TaskNotFound));
    assert_eq!(e.to_string(), "TASK_NOT_FOUND (-32001): nope");
    let unknown = Error::from_json_rpc(ErrorObject {
        code: -1,
        message: "x".into(),
        data: None,
    });
    assert_eq!(unknown.kind(), None);
    assert_eq!(unknown.http_status(), 500);
    assert_eq!(unknown.to_json_rpc().data, None);
}

/// Found by the fuzz suite: serde's derived structs also read arrays (fields by position), so
/// `"message": []` was a message of defaults. A message is read only from an object.
#[test]
fn a_message_given_as_an_array_is_invalid_params() {
    let req = a2a_core::jsonrpc::RawRequest::parse(
        br#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":[]}}"#,
    )
    .unwrap();
    let e = req.params_as::<SendMessageRequest>().unwrap_err();
    assert_eq!(e.code, -32602);
    assert!(e.message.contains("JSON object"), "{}", e.message);
    assert!(serde_json::from_str::<Message>("[]").is_err());
    assert!(serde_json::from_str::<Message>(r#"["m-1"]"#).is_err());
}

/// Found by the fuzz suite: without serde_json's `float_roundtrip`, a number in metadata could
/// read back one ulp off after a trip through JSON (so a stored task changed on every load).
#[test]
fn numbers_in_metadata_survive_a_trip_through_json() {
    let v = json!({"x": 1.5025460453979299e86});
    let text = serde_json::to_string(&v).unwrap();
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), v);
}
