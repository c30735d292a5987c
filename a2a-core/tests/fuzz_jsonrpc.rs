//! Fuzz suite over the JSON-RPC envelope and every operation's params (v1.0 and v0.3 method
//! names), as a2a-core reads them from peers.
//!
//! Inputs are valid requests generated from the model (or spec fixtures), then damaged by
//! `support/mutate.rs`. The properties: nothing panics or takes long; every failure is the
//! right error of its layer (an envelope error is a well-formed JSON-RPC error with the id
//! echoed or `null` as JSON-RPC requires; a params error is InvalidParams); a member of the
//! wrong JSON type is refused; accepted params read back the same after a trip through their
//! own output.
//!
//! CI runs a thousand cases per target (seconds in all); `FUZZ_CASES=100000 cargo test
//! --release -p a2a-core --test 'fuzz_*'` runs a long session of both fuzz suites (see the
//! README).

mod support;

use a2a_core::jsonrpc::{Id, RawRequest};
use a2a_core::v03;
use a2a_core::*;
use proptest::option;
use proptest::prelude::*;
use proptest::sample::{Index, select};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use std::fmt::Debug;
use support::fuzz::*;
use support::mutate::*;
use support::strategies::*;

// ---------------------------------------------------------------------------------------------
// Seeds: valid params of each operation, v1.0 and v0.3, and the spec fixtures

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
}
