//! Fuzz suite over the v0.3 translation of messages, tasks, events, push configs and cards, as
//! a2a-core reads them from peers and writes them for v0.3 clients.
//!
//! Inputs are valid values generated from the model (or spec fixtures), then damaged by
//! `support/mutate.rs`. The properties: nothing panics or takes long; every translation error
//! is InvalidParams; whatever is accepted reads back the same after a trip through its own
//! output (v1.0 JSON, and v0.3 → v1.0 → v0.3 → v1.0).
//!
//! CI runs a thousand cases per target (seconds in all); `FUZZ_CASES=100000 cargo test
//! --release -p a2a-core --test 'fuzz_*'` runs a long session of both fuzz suites (see the
//! README).

mod support;

use a2a_core::v03;
use a2a_core::*;
use proptest::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::fmt::Debug;
use support::fuzz::*;
use support::mutate::*;
use support::strategies::*;

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
// Targets

proptest! {
    #![proptest_config(config(CI_CASES))]

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
