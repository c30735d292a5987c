//! Fuzz suite over what a2a-core reads from peers: the JSON-RPC envelope, every operation's
//! params (v1.0 and v0.3 method names), and the v0.3 translation of messages, tasks, events,
//! push configs and cards.
//!
//! Inputs are valid values generated from the model (or spec fixtures), then damaged by
//! `support/mutate.rs`. The properties: nothing panics or takes long; every failure is the
//! right error of its layer (an envelope error is a well-formed JSON-RPC error with the id
//! echoed or `null` as JSON-RPC requires; a params or translation error is InvalidParams); a
//! member of the wrong JSON type is refused; whatever is accepted reads back the same after a
//! trip through its own output (v1.0 JSON, and v0.3 → v1.0 → v0.3 → v1.0).
//!
//! CI runs a thousand cases per target (seconds in all); `FUZZ_CASES=100000 cargo test
//! --release -p a2a-core --test fuzz` runs a long session (see the README).

#[path = "support/mutate.rs"]
mod mutate;
#[path = "support/strategies.rs"]
mod strategies;

use a2a_core::jsonrpc::{Id, RawRequest};
use a2a_core::v03::{self, Params};
use a2a_core::*;
use mutate::*;
use proptest::option;
use proptest::prelude::*;
use proptest::sample::{Index, select};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use std::fmt::Debug;
use std::time::{Duration, Instant};
use strategies::*;

/// The CI default: cases per target.
const CI_CASES: u32 = 1000;

/// The longest one case may take (debug build, shared machine): far more than any input here
/// needs, far less than a hang.
const SLOW: Duration = Duration::from_secs(2);

// ---------------------------------------------------------------------------------------------
// Seeds: valid params of each operation, v1.0 and v0.3, and the spec fixtures

fn tenant() -> BoxedStrategy<Option<String>> {
    option::of(word()).boxed()
}

fn push_config() -> BoxedStrategy<TaskPushNotificationConfig> {
    (
        tenant(),
        option::of(word()),
        option::of(word()),
        word(),
        option::of(word()),
        option::of((word(), option::of(word()))),
    )
        .prop_map(
            |(tenant, id, task_id, url, token, auth)| TaskPushNotificationConfig {
                tenant,
                id,
                task_id: task_id.map(TaskId::new),
                url,
                token,
                authentication: auth.map(|(scheme, credentials)| AuthenticationInfo {
                    scheme,
                    credentials,
                }),
            },
        )
        .boxed()
}

fn send_request(v03: bool) -> BoxedStrategy<SendMessageRequest> {
    let configuration = (
        proptest::collection::vec(word(), 0..3),
        option::of(push_config()),
        option::of(-3..200i32),
        any::<bool>(),
    )
        .prop_map(|(modes, push, history_length, return_immediately)| {
            SendMessageConfiguration {
                accepted_output_modes: modes,
                task_push_notification_config: push,
                history_length,
                return_immediately,
                if_generation_match: None,
            }
        });
    (
        tenant(),
        message(v03),
        option::of(configuration),
        metadata(),
    )
        .prop_map(
            |(tenant, message, configuration, metadata)| SendMessageRequest {
                tenant,
                message,
                configuration,
                metadata,
            },
        )
        .boxed()
}

fn to_json(v: impl Serialize) -> Value {
    serde_json::to_value(v).expect("the model serializes")
}

/// Valid v1.0 params of `method`, as JSON.
fn v1_params(method: Method) -> BoxedStrategy<Value> {
    let id = || word().prop_map(TaskId::new);
    match method {
        Method::SendMessage | Method::SendStreamingMessage => {
            send_request(false).prop_map(to_json).boxed()
        }
        Method::GetTask => (tenant(), id(), option::of(-3..200i32))
            .prop_map(|(tenant, id, history_length)| {
                to_json(GetTaskRequest {
                    tenant,
                    id,
                    history_length,
                    current_generation: None,
                })
            })
            .boxed(),
        Method::ListTasks => (
            (tenant(), option::of(word()), option::of(state())),
            (
                option::of(-3..120i32),
                option::of(word()),
                option::of(-3..9i32),
            ),
            (option::of(timestamp()), option::of(any::<bool>())),
        )
            .prop_map(
                |((tenant, context, status), (size, token, history), (after, arts))| {
                    to_json(ListTasksRequest {
                        tenant,
                        context_id: context.map(ContextId::new),
                        status,
                        page_size: size,
                        page_token: token,
                        history_length: history,
                        status_timestamp_after: after,
                        include_artifacts: arts,
                    })
                },
            )
            .boxed(),
        Method::CancelTask => (tenant(), id(), metadata())
            .prop_map(|(tenant, id, metadata)| {
                to_json(CancelTaskRequest {
                    tenant,
                    id,
                    metadata,
                })
            })
            .boxed(),
        Method::SubscribeToTask => (tenant(), id())
            .prop_map(|(tenant, id)| to_json(SubscribeToTaskRequest { tenant, id }))
            .boxed(),
        Method::CreateTaskPushNotificationConfig => push_config().prop_map(to_json).boxed(),
        Method::GetTaskPushNotificationConfig | Method::DeleteTaskPushNotificationConfig => {
            (tenant(), id(), word())
                .prop_map(
                    |(tenant, task_id, id)| json!({"tenant": tenant, "taskId": task_id, "id": id}),
                )
                .boxed()
        }
        Method::ListTaskPushNotificationConfigs => (tenant(), id(), 0..10i32, option::of(word()))
            .prop_map(|(tenant, task_id, page_size, page_token)| {
                to_json(ListTaskPushNotificationConfigsRequest {
                    tenant,
                    task_id,
                    page_size,
                    page_token,
                })
            })
            .boxed(),
        _ => tenant()
            .prop_map(|tenant| to_json(GetExtendedAgentCardRequest { tenant }))
            .boxed(),
    }
}

/// Valid v0.3 params of `method`, as JSON.
fn v03_params(method: Method) -> BoxedStrategy<Value> {
    match method {
        Method::SendMessage | Method::SendStreamingMessage => send_request(true)
            .prop_map(|r| v03::encode_send_params(&r))
            .boxed(),
        Method::GetTask => (word(), option::of(-3..200i32))
            .prop_map(|(id, h)| json!({"id": id, "historyLength": h}))
            .boxed(),
        Method::CancelTask => (word(), metadata())
            .prop_map(|(id, m)| json!({"id": id, "metadata": m}))
            .boxed(),
        Method::CreateTaskPushNotificationConfig => (push_config(), word())
            .prop_map(|(mut c, task)| {
                c.task_id = Some(TaskId::new(task));
                v03::encode_push_config(&c)
            })
            .boxed(),
        Method::GetTaskPushNotificationConfig | Method::DeleteTaskPushNotificationConfig => {
            (word(), option::of(word()))
                .prop_map(|(id, cfg)| json!({"id": id, "pushNotificationConfigId": cfg}))
                .boxed()
        }
        Method::GetExtendedAgentCard => Just(json!({})).boxed(),
        _ => word().prop_map(|id| json!({ "id": id })).boxed(),
    }
}

/// A method name: every v1.0 and v0.3 name, and a few that are neither.
fn method_name() -> BoxedStrategy<String> {
    let mut names: Vec<String> = Method::ALL.iter().map(|m| m.name().to_owned()).collect();
    names.extend(
        Method::ALL
            .iter()
            .filter_map(|m| m.v03_name().map(str::to_owned)),
    );
    prop_oneof![
        8 => select(names),
        1 => prop_oneof![Just(String::new()), Just("sendMessage".to_owned()), "\\PC{0,8}"],
    ]
    .boxed()
}

/// The params for `name`: its valid params when it is a method, else a fixture.
fn params_for(name: &str) -> BoxedStrategy<Value> {
    let typed = if let Some(m) = Method::from_name(name) {
        v1_params(m)
    } else if let Some(m) = Method::from_v03_name(name) {
        v03_params(m)
    } else {
        return spec_fixture();
    };
    prop_oneof![6 => typed, 1 => spec_fixture()].boxed()
}

fn rpc_id() -> BoxedStrategy<Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        word().prop_map(Value::from),
        Just(Value::Null),
        Just(json!(1.5)),
    ]
    .boxed()
}

/// A JSON-RPC request body: a valid request (or a fixture envelope), damaged.
fn rpc_body() -> BoxedStrategy<(String, Vec<u8>)> {
    let envelope = (method_name(), rpc_id()).prop_flat_map(|(method, id)| {
        params_for(&method).prop_map(
            move |params| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        )
    });
    let seed = prop_oneof![8 => envelope, 1 => spec_fixture()];
    (seed, mutations(), text_mutations())
        .prop_map(|(seed, tree, text)| {
            let method = seed["method"].as_str().unwrap_or_default().to_owned();
            (method, damage(&seed, &tree, &text))
        })
        .boxed()
}

// ---------------------------------------------------------------------------------------------
// Checks

/// An InvalidParams error that says what is wrong.
fn check_invalid_params(e: &Error, input: &str) -> Result<(), TestCaseError> {
    prop_assert_eq!(e.code, -32602, "{} for {}", e, input);
    prop_assert!(e.is(ErrorKind::InvalidParams), "{e} for {input}");
    prop_assert!(!e.message.is_empty());
    Ok(())
}

/// Serializes and parses back: the same value.
fn check_v1_stable<T: Serialize + DeserializeOwned + PartialEq + Debug>(
    value: &T,
) -> Result<(), TestCaseError> {
    let text = serde_json::to_string(value).expect("serializes");
    let back: T = match serde_json::from_str(&text) {
        Ok(back) => back,
        // An open finding: free-form values (metadata, data parts) may be nested up to
        // serde_json's limit of 128 levels, and a value read at one depth can be written one or
        // two levels deeper (a task inside `{"task": …}`, a message in a task's history), where
        // it no longer parses. See the README's fuzzing section.
        Err(e) if e.to_string().contains("recursion limit exceeded") => return Ok(()),
        Err(e) => {
            return Err(TestCaseError::fail(format!(
                "own output does not parse: {e}\n{text}"
            )));
        }
    };
    prop_assert_eq!(&back, value, "after a trip through {}", text);
    Ok(())
}

/// Typed params of a v1.0 method: an InvalidParams error, or params that validate (or fail
/// validation with InvalidParams) and read back the same.
fn check_params<P>(req: &RawRequest) -> Result<(), TestCaseError>
where
    P: Serialize + DeserializeOwned + PartialEq + Debug + Validate,
{
    let input = req.params.as_deref().map_or("{}", RawValue::get).to_owned();
    match req.params_as::<P>() {
        Err(e) => check_invalid_params(&e, &input)?,
        Ok(p) => {
            if let Err(e) = p.validate() {
                check_invalid_params(&e, &input)?;
            }
            check_v1_stable(&p)?;
        }
    }
    Ok(())
}

fn check_v1_method(m: Method, req: &RawRequest) -> Result<(), TestCaseError> {
    match m {
        Method::SendMessage | Method::SendStreamingMessage => {
            check_params::<SendMessageRequest>(req)
        }
        Method::GetTask => check_params::<GetTaskRequest>(req),
        Method::ListTasks => check_params::<ListTasksRequest>(req),
        Method::CancelTask => check_params::<CancelTaskRequest>(req),
        Method::SubscribeToTask => check_params::<SubscribeToTaskRequest>(req),
        Method::CreateTaskPushNotificationConfig => check_params::<TaskPushNotificationConfig>(req),
        Method::GetTaskPushNotificationConfig => {
            check_params::<GetTaskPushNotificationConfigRequest>(req)
        }
        Method::ListTaskPushNotificationConfigs => {
            check_params::<ListTaskPushNotificationConfigsRequest>(req)
        }
        Method::DeleteTaskPushNotificationConfig => {
            check_params::<DeleteTaskPushNotificationConfigRequest>(req)
        }
        _ => check_params::<GetExtendedAgentCardRequest>(req),
    }
}

fn validate_params(p: &Params) -> Result<(), Error> {
    match p {
        Params::SendMessage(p) => p.validate(),
        Params::GetTask(p) => p.validate(),
        Params::ListTasks(p) => p.validate(),
        Params::CancelTask(p) => p.validate(),
        Params::SubscribeToTask(p) => p.validate(),
        Params::CreatePushConfig(p) => p.validate(),
        Params::GetPushConfig(p) => p.validate(),
        Params::ListPushConfigs(p) => p.validate(),
        Params::DeletePushConfig(p) => p.validate(),
        Params::GetExtendedAgentCard(p) => p.validate(),
        _ => Ok(()),
    }
}

/// v0.3 params: InvalidParams, or v1.0 params that validate (or fail with InvalidParams); a
/// send request reads back the same after v1.0 → v0.3 → v1.0.
fn check_v03_method(m: Method, params: &Value) -> Result<(), TestCaseError> {
    let input = params.to_string();
    match v03::decode_params(m, params) {
        Err(e) => check_invalid_params(&e, &input),
        Ok(p) => {
            if let Err(e) = validate_params(&p) {
                check_invalid_params(&e, &input)?;
            }
            if let Params::SendMessage(mut send) = p {
                let again = v03::decode_params(m, &v03::encode_send_params(&send));
                let Ok(Params::SendMessage(mut again)) = again else {
                    return Err(TestCaseError::fail(format!(
                        "own v0.3 output does not read back: {again:?} from {input}"
                    )));
                };
                // v0.3 always sends a configuration (`blocking`); unset reads as the default.
                send.configuration.get_or_insert_with(Default::default);
                again.configuration.get_or_insert_with(Default::default);
                prop_assert_eq!(
                    without_v03_limits(to_json(&again)),
                    without_v03_limits(to_json(&send)),
                    "v1 → v0.3 → v1 of {}",
                    input
                );
            }
            Ok(())
        }
    }
}

/// What JSON-RPC makes of a body, read the slow and obvious way, through a JSON value (the
/// last of duplicate members counts): the request's id, method and params (`null` when absent),
/// or the error code and id it must be refused with.
fn envelope(body: &[u8]) -> Result<(Id, String, Value), (i64, Id)> {
    let value: Value = serde_json::from_slice(body).map_err(|_| (-32700, Id::Null))?;
    let obj = value.as_object().ok_or((-32600, Id::Null))?;
    let id = match obj.get("id") {
        None => Id::Null,
        Some(v) => Id::from_value(v).ok_or((-32600, Id::Null))?,
    };
    let params = obj.get("params").cloned().unwrap_or(Value::Null);
    match obj.get("method").and_then(Value::as_str) {
        Some(m)
            if obj.get("jsonrpc") == Some(&json!("2.0"))
                && (params.is_null() || params.is_object()) =>
        {
            Ok((id, m.to_owned(), params))
        }
        _ => Err((-32600, id)),
    }
}

fn check_rpc_body(body: &[u8]) -> Result<(), TestCaseError> {
    let shown = String::from_utf8_lossy(body).into_owned();
    match (RawRequest::parse(body), envelope(body)) {
        (Err(refused), Err((code, id))) => {
            let wire = serde_json::to_value(&*refused).expect("serializes");
            prop_assert_eq!(&wire["jsonrpc"], "2.0");
            prop_assert!(wire.get("result").is_none());
            prop_assert_eq!(&wire["error"]["code"], code, "the error code for {}", shown);
            prop_assert!(
                wire["error"]["message"]
                    .as_str()
                    .is_some_and(|m| !m.is_empty())
            );
            prop_assert_eq!(&refused.id, &id, "the error's id for {}", shown);
        }
        (Ok(req), Ok((id, method, params))) => {
            prop_assert_eq!(&req.id, &id);
            prop_assert_eq!(&req.method, &method);
            prop_assert_eq!(req.params_value(), params);
            if let Some(m) = Method::from_name(&req.method) {
                check_v1_method(m, &req)?;
            } else if let Some(m) = Method::from_v03_name(&req.method) {
                check_v03_method(m, &req.params_value())?;
            }
        }
        (a, b) => {
            return Err(TestCaseError::fail(format!(
                "the parser and JSON-RPC disagree on {shown}: {a:?} vs {b:?}"
            )));
        }
    }
    Ok(())
}

/// Runs `check` and fails if it took longer than [`SLOW`].
fn timed(check: impl FnOnce() -> Result<(), TestCaseError>) -> Result<(), TestCaseError> {
    let start = Instant::now();
    check()?;
    let took = start.elapsed();
    prop_assert!(took < SLOW, "one input took {:?}", took);
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// v0.3 translation

/// A v0.3 value of some kind the translation reads.
fn v03_seed() -> BoxedStrategy<Value> {
    prop_oneof![
        part(true).prop_map(|p| v03::encode_part(&p)),
        message(true).prop_map(|m| v03::encode_message(&m)),
        task(true).prop_map(|t| v03::encode_task(&t)),
        stream_response(true).prop_map(|e| v03::encode_stream_event(&e)),
        agent_card(true).prop_map(|c| v03::encode_card(&c)),
        (push_config(), word()).prop_map(|(mut c, t)| {
            c.task_id = Some(TaskId::new(t));
            v03::encode_push_config(&c)
        }),
        spec_fixture(),
    ]
    .boxed()
}

/// What v0.3 cannot carry, removed from v1.0 JSON: the empty metadata object of a non-object
/// data part (v0.3 wraps the data and flags it in the metadata, so the empty object and none
/// look the same).
fn without_v03_limits(mut v: Value) -> Value {
    fn walk(v: &mut Value) {
        match v {
            Value::Object(o) => {
                let wrapped = o.get("data").is_some_and(|d| !d.is_object());
                if wrapped && o.get("metadata").is_some_and(|m| m == &json!({})) {
                    o.remove("metadata");
                }
                o.values_mut().for_each(walk);
            }
            Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut v);
    v
}

/// How a decoder's accepted output must survive its encoder.
#[derive(Clone, Copy, PartialEq)]
enum Trip {
    /// v0.3 → v1.0 → v0.3 → v1.0 gives the same value (up to what v0.3 cannot carry).
    Same,
    /// The v0.3 output is a fixed point: encoding what it decodes to gives it again. (A card
    /// read from a hybrid or v1.0 card loses its 1.0 interfaces on the way to v0.3.)
    FixedPoint,
}

/// A decoder's result: InvalidParams, or a value that survives its encoder and v1.0 JSON.
fn check_decoded<T: Serialize + DeserializeOwned + PartialEq + Debug>(
    what: &str,
    decoded: Result<T, Error>,
    input: &Value,
    trip: Trip,
    encode: impl Fn(&T) -> Value,
    decode: impl Fn(&Value) -> Result<T, Error>,
) -> Result<(), TestCaseError> {
    let x = match decoded {
        Err(e) => return check_invalid_params(&e, &input.to_string()),
        Ok(x) => x,
    };
    check_v1_stable(&x)?;
    let old = encode(&x);
    let again = decode(&old).map_err(|e| {
        TestCaseError::fail(format!(
            "{what}: own v0.3 output {old} does not read back: {e} (input {input})"
        ))
    })?;
    match trip {
        Trip::Same => prop_assert_eq!(
            without_v03_limits(to_json(&again)),
            without_v03_limits(to_json(&x)),
            "{}: v0.3 → v1 → v0.3 {} → v1 of {}",
            what,
            old,
            input
        ),
        Trip::FixedPoint => prop_assert_eq!(
            encode(&again),
            old,
            "{}: v0.3 output is not a fixed point, from {}",
            what,
            input
        ),
    }
    Ok(())
}

fn check_v03_value(v: &Value) -> Result<(), TestCaseError> {
    check_decoded(
        "part",
        v03::decode_part(v, "p"),
        v,
        Trip::Same,
        v03::encode_part,
        |v| v03::decode_part(v, "p"),
    )?;
    let message = v03::decode_message(v, "m");
    if let Ok(m) = &message
        && let Err(e) = m.validate()
    {
        check_invalid_params(&e, &v.to_string())?;
    }
    check_decoded(
        "message",
        message,
        v,
        Trip::Same,
        v03::encode_message,
        |v| v03::decode_message(v, "m"),
    )?;
    check_decoded(
        "artifact",
        v03::decode_artifact(v, "a"),
        v,
        Trip::Same,
        v03::encode_artifact,
        |v| v03::decode_artifact(v, "a"),
    )?;
    check_decoded(
        "status",
        v03::decode_status(v, "s"),
        v,
        Trip::Same,
        v03::encode_status,
        |v| v03::decode_status(v, "s"),
    )?;
    check_decoded(
        "task",
        v03::decode_task(v, "t"),
        v,
        Trip::Same,
        v03::encode_task,
        |v| v03::decode_task(v, "t"),
    )?;
    check_decoded(
        "event",
        v03::decode_stream_event(v),
        v,
        Trip::Same,
        v03::encode_stream_event,
        v03::decode_stream_event,
    )?;
    check_decoded(
        "send response",
        v03::decode_send_response(v),
        v,
        Trip::Same,
        v03::encode_send_response,
        v03::decode_send_response,
    )?;
    check_decoded(
        "push config",
        v03::decode_push_config(v, "c"),
        v,
        Trip::Same,
        v03::encode_push_config,
        |v| v03::decode_push_config(v, "c"),
    )?;
    if let Err(e) = v03::decode_inner_push_config(v, "c") {
        check_invalid_params(&e, &v.to_string())?;
    }
    check_decoded(
        "card",
        v03::decode_card(v),
        v,
        Trip::FixedPoint,
        v03::encode_card,
        v03::decode_card,
    )?;
    // Every method's params, too (params are objects, as most of these seeds are).
    for m in Method::ALL {
        if m.v03_name().is_some() {
            check_v03_method(m, v)?;
        }
    }
    Ok(())
}

/// A v1.0 value the server sends to v0.3 clients, read from damaged v1.0 JSON: if accepted, its
/// v0.3 form is written without panicking, and reads back (or fails with InvalidParams).
fn check_v1_to_v03(bytes: &[u8]) -> Result<(), TestCaseError> {
    let input = String::from_utf8_lossy(bytes).into_owned();
    let back = |r: Result<(), Error>| match r {
        Ok(()) => Ok(()),
        Err(e) => check_invalid_params(&e, &input),
    };
    if let Ok(e) = serde_json::from_slice::<StreamResponse>(bytes) {
        check_v1_stable(&e)?;
        back(v03::decode_stream_event(&v03::encode_stream_event(&e)).map(drop))?;
    }
    if let Ok(t) = serde_json::from_slice::<Task>(bytes) {
        check_v1_stable(&t)?;
        back(v03::decode_task(&v03::encode_task(&t), "t").map(drop))?;
    }
    if let Ok(m) = serde_json::from_slice::<Message>(bytes) {
        check_v1_stable(&m)?;
        let old = v03::decode_message(&v03::encode_message(&m), "m");
        // A message that passes validation always has a v0.3 form.
        if m.validate().is_ok() {
            prop_assert!(old.is_ok(), "valid {:?} has no v0.3 form: {:?}", m, old);
        }
        back(old.map(drop))?;
    }
    if let Ok(c) = serde_json::from_slice::<AgentCard>(bytes) {
        check_v1_stable(&c)?;
        back(v03::decode_card(&v03::encode_card(&c)).map(drop))?;
        back(v03::decode_card(&v03::hybrid_card(&c)).map(drop))?;
    }
    Ok(())
}

/// A v1.0 value of a kind the server translates for v0.3 clients.
fn v1_seed() -> BoxedStrategy<Value> {
    prop_oneof![
        message(false).prop_map(to_json),
        task(false).prop_map(to_json),
        stream_response(false).prop_map(to_json),
        agent_card(false).prop_map(to_json),
        spec_fixture(),
    ]
    .boxed()
}

// ---------------------------------------------------------------------------------------------
// Wrong JSON types

/// A member of `value` the model knows (not inside free-form JSON: metadata, data parts,
/// extension params, signature headers), with its path.
fn typed_members(value: &Value) -> Vec<Vec<Seg>> {
    const FREE_FORM: [&str; 4] = ["metadata", "data", "params", "header"];
    paths(value)
        .into_iter()
        .filter(|p| !p.is_empty())
        .filter(|p| {
            !p.iter()
                .any(|s| matches!(s, Seg::Key(k) if FREE_FORM.contains(&k.as_str())))
        })
        .collect()
}

/// A value of another JSON type than `v`, never `null` (ProtoJSON's "unset"), and not one that
/// ProtoJSON lets stand for it: a number in a string for a number, a number for an enum name.
fn wrong_type(v: &Value, key: Option<&str>, pick: usize) -> Option<Value> {
    const ENUMS: [&str; 3] = ["role", "state", "status"];
    let candidates = [
        json!({}),
        json!([]),
        json!("x"),
        json!(7),
        json!(true),
        json!([{}]),
    ];
    if v.is_null() {
        return None;
    }
    // An enum is a name or a number; an unknown name is kept (and refused by validation).
    let is_enum = key.is_some_and(|k| ENUMS.contains(&k));
    let same = |c: &Value| {
        std::mem::discriminant(c) == std::mem::discriminant(v)
            || (is_enum && (c.is_number() || c.is_string()) && (v.is_number() || v.is_string()))
    };
    let others: Vec<&Value> = candidates.iter().filter(|c| !same(c)).collect();
    (!others.is_empty()).then(|| others[pick % others.len()].clone())
}

fn check_wrong_type(
    method: Method,
    params: &Value,
    at: &Index,
    pick: usize,
) -> Result<(), TestCaseError> {
    let members = typed_members(params);
    if members.is_empty() {
        return Ok(());
    }
    let path = &members[at.index(members.len())];
    let mut bad = params.clone();
    let key = match path.last() {
        Some(Seg::Key(k)) => Some(k.as_str()),
        _ => None,
    };
    let Some(node) = node_mut(&mut bad, path) else {
        return Ok(());
    };
    let Some(replacement) = wrong_type(node, key, pick) else {
        return Ok(());
    };
    *node = replacement;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method.name(), "params": bad});
    let req = RawRequest::parse(body.to_string().as_bytes()).expect("a valid envelope");
    let accepted = |r: Result<(), Error>| r.is_ok();
    let ok = match method {
        Method::SendMessage | Method::SendStreamingMessage => {
            accepted(req.params_as::<SendMessageRequest>().map(drop))
        }
        Method::GetTask => accepted(req.params_as::<GetTaskRequest>().map(drop)),
        Method::ListTasks => accepted(req.params_as::<ListTasksRequest>().map(drop)),
        Method::CancelTask => accepted(req.params_as::<CancelTaskRequest>().map(drop)),
        Method::SubscribeToTask => accepted(req.params_as::<SubscribeToTaskRequest>().map(drop)),
        Method::CreateTaskPushNotificationConfig => {
            accepted(req.params_as::<TaskPushNotificationConfig>().map(drop))
        }
        Method::GetTaskPushNotificationConfig => accepted(
            req.params_as::<GetTaskPushNotificationConfigRequest>()
                .map(drop),
        ),
        Method::ListTaskPushNotificationConfigs => accepted(
            req.params_as::<ListTaskPushNotificationConfigsRequest>()
                .map(drop),
        ),
        Method::DeleteTaskPushNotificationConfig => accepted(
            req.params_as::<DeleteTaskPushNotificationConfigRequest>()
                .map(drop),
        ),
        _ => accepted(req.params_as::<GetExtendedAgentCardRequest>().map(drop)),
    };
    prop_assert!(
        !ok,
        "{} accepts a member of the wrong JSON type at {:?}: {}",
        method,
        path,
        bad
    );
    Ok(())
}

fn method() -> BoxedStrategy<Method> {
    select(Method::ALL.to_vec()).boxed()
}

// ---------------------------------------------------------------------------------------------
// Targets

proptest! {
    #![proptest_config(config(CI_CASES))]

    /// The envelope and every method's params: no panic, the right error of each layer, and
    /// accepted params that read back the same.
    #[test]
    fn fuzz_jsonrpc_request((_method, body) in rpc_body()) {
        timed(|| check_rpc_body(&body))?;
    }

    /// A member of a typed request given as another JSON type (an array for an object, a
    /// number for a string…) is InvalidParams, never silently read as something else.
    #[test]
    fn fuzz_params_member_of_the_wrong_type(
        (m, params) in method().prop_flat_map(|m| (Just(m), v1_params(m))),
        at in any::<Index>(),
        pick in any::<usize>(),
    ) {
        check_wrong_type(m, &params, &at, pick)?;
    }

    /// The v0.3 → v1.0 translation of every kind of value: InvalidParams or a value that
    /// validates or fails validation cleanly, and survives v1.0 → v0.3 → v1.0 unchanged.
    #[test]
    fn fuzz_v03_to_v1(seed in v03_seed(), tree in mutations(), text in text_mutations()) {
        let bytes = damage(&seed, &tree, &text);
        if let Ok(v) = serde_json::from_slice::<Value>(&bytes) {
            timed(|| check_v03_value(&v))?;
        }
    }

    /// Whatever v1.0 value is accepted has a v0.3 form that reads back.
    #[test]
    fn fuzz_v1_to_v03(seed in v1_seed(), tree in mutations(), text in text_mutations()) {
        let bytes = damage(&seed, &tree, &text);
        timed(|| check_v1_to_v03(&bytes))?;
    }
}
