//! What the fuzz suites (`fuzz_jsonrpc.rs` and `fuzz_v03.rs`) share: the cases per target and
//! the time one case may take, seeds of valid send requests and push configs, and the checks
//! that an error is InvalidParams, that an accepted value reads back the same after a trip
//! through its own JSON, and that v0.3 params translate cleanly.

use super::strategies::*;
use a2a_core::v03::{self, Params};
use a2a_core::*;
use proptest::option;
use proptest::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::fmt::Debug;
use std::time::{Duration, Instant};

/// The CI default: cases per target.
pub const CI_CASES: u32 = 1000;

/// The longest one case may take (debug build, shared machine): far more than any input here
/// needs, far less than a hang.
pub const SLOW: Duration = Duration::from_secs(2);

// ---------------------------------------------------------------------------------------------
// Seeds

pub fn tenant() -> BoxedStrategy<Option<String>> {
    option::of(word()).boxed()
}

pub fn push_config() -> BoxedStrategy<TaskPushNotificationConfig> {
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

pub fn send_request(v03: bool) -> BoxedStrategy<SendMessageRequest> {
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

pub fn to_json(v: impl Serialize) -> Value {
    serde_json::to_value(v).expect("the model serializes")
}

// ---------------------------------------------------------------------------------------------
// Checks

/// An InvalidParams error that says what is wrong.
pub fn check_invalid_params(e: &Error, input: &str) -> Result<(), TestCaseError> {
    prop_assert_eq!(e.code, -32602, "{} for {}", e, input);
    prop_assert!(e.is(ErrorKind::InvalidParams), "{e} for {input}");
    prop_assert!(!e.message.is_empty());
    Ok(())
}

/// Serializes and parses back: the same value.
pub fn check_v1_stable<T: Serialize + DeserializeOwned + PartialEq + Debug>(
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

pub fn validate_params(p: &Params) -> Result<(), Error> {
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

/// What v0.3 cannot carry, removed from v1.0 JSON: the empty metadata object of a non-object
/// data part (v0.3 wraps the data and flags it in the metadata, so the empty object and none
/// look the same).
pub fn without_v03_limits(mut v: Value) -> Value {
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

/// v0.3 params: InvalidParams, or v1.0 params that validate (or fail with InvalidParams); a
/// send request reads back the same after v1.0 → v0.3 → v1.0.
pub fn check_v03_method(m: Method, params: &Value) -> Result<(), TestCaseError> {
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

/// Runs `check` and fails if it took longer than [`SLOW`].
pub fn timed(check: impl FnOnce() -> Result<(), TestCaseError>) -> Result<(), TestCaseError> {
    let start = Instant::now();
    check()?;
    let took = start.elapsed();
    prop_assert!(took < SLOW, "one input took {:?}", took);
    Ok(())
}
