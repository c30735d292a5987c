//! Property tests: arbitrary tasks, stream events and agent cards survive a trip through v1.0
//! JSON unchanged, and through v0.3 JSON wherever v0.3 can express them. The strategies (and
//! what their `v03` flag leaves out) are in `support/strategies.rs`.

#[path = "support/strategies.rs"]
mod strategies;

use a2a_core::v03;
use a2a_core::*;
use proptest::prelude::*;
use serde_json::Value;
use strategies::*;

// ---------------------------------------------------------------------------------------------
// Helpers

/// Serializes to a JSON string and parses it back (a real trip through JSON text).
fn via_json<T: serde::Serialize + serde::de::DeserializeOwned>(value: &T) -> T {
    let text = serde_json::to_string(value).expect("serializes");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("own output does not parse: {e}\n{text}"))
}

/// A v0.3 JSON value after a trip through JSON text.
fn through_text(v: &Value) -> Value {
    serde_json::from_str(&v.to_string()).expect("JSON")
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 128,
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------------------------
// Properties

proptest! {
    #![proptest_config(config())]

    #[test]
    fn part_survives_v1_json(p in part(false)) {
        prop_assert_eq!(via_json(&p), p);
    }

    #[test]
    fn part_survives_v03_json(p in part(true)) {
        let old = through_text(&v03::encode_part(&p));
        prop_assert_eq!(v03::decode_part(&old, "part").unwrap(), p);
    }

    #[test]
    fn task_survives_v1_json(t in task(false)) {
        prop_assert_eq!(via_json(&t), t);
    }

    #[test]
    fn task_survives_v03_json(t in task(true)) {
        let old = through_text(&v03::encode_task(&t));
        prop_assert_eq!(&old["kind"], "task");
        prop_assert_eq!(v03::decode_task(&old, "task").unwrap(), t);
    }

    #[test]
    fn stream_response_survives_v1_json(e in stream_response(false)) {
        prop_assert_eq!(via_json(&e), e);
    }

    #[test]
    fn stream_response_survives_v03_json(e in stream_response(true)) {
        let old = through_text(&v03::encode_stream_event(&e));
        if let StreamResponse::StatusUpdate(_) = &e {
            prop_assert_eq!(&old["final"], &Value::Bool(e.ends_stream()));
        }
        prop_assert_eq!(v03::decode_stream_event(&old).unwrap(), e);
    }

    #[test]
    fn send_message_response_survives_v1_and_v03_json(e in stream_response(true)) {
        let r = match e {
            StreamResponse::Task(t) => SendMessageResponse::Task(t),
            StreamResponse::Message(m) => SendMessageResponse::Message(m),
            _ => return Ok(()),
        };
        prop_assert_eq!(&via_json(&r), &r);
        let old = through_text(&v03::encode_send_response(&r));
        prop_assert_eq!(v03::decode_send_response(&old).unwrap(), r);
    }

    #[test]
    fn agent_card_survives_v1_json(card in agent_card(false)) {
        prop_assert_eq!(via_json(&card), card);
    }

    #[test]
    fn agent_card_survives_v03_json(card in agent_card(true)) {
        let old = through_text(&v03::encode_card(&card));
        prop_assert!(old.get("supportedInterfaces").is_none());
        prop_assert_eq!(v03::decode_card(&old).unwrap(), card);
    }

    #[test]
    fn hybrid_card_reads_back_as_the_v1_card(card in agent_card(false)) {
        let hybrid = through_text(&v03::hybrid_card(&card));
        prop_assert_eq!(&hybrid["protocolVersion"], "0.3");
        prop_assert_eq!(&serde_json::from_value::<AgentCard>(hybrid.clone()).unwrap(), &card);
        prop_assert_eq!(v03::decode_card(&hybrid).unwrap(), card);
    }
}
