//! Helpers shared by the integration tests: reading the spec fixtures under `tests/fixtures`
//! and checking that they survive a trip through the model (the `wire_*` and `v03_*` suites),
//! and the fuzz suites' strategies, mutations, seeds and checks (`fuzz_*`).

// Each test crate that includes this module uses a different subset of it.
#![allow(dead_code, unreachable_pub)]

pub mod fuzz;
pub mod mutate;
pub mod strategies;

use a2a_core::{SecurityRequirement, SecurityScheme};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::path::PathBuf;

pub fn fixture_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

pub fn fixture_text(name: &str) -> String {
    std::fs::read_to_string(fixture_path(name))
        .unwrap_or_else(|e| panic!("cannot read fixture {name}: {e}"))
}

pub fn fixture(name: &str) -> Value {
    serde_json::from_str(&fixture_text(name))
        .unwrap_or_else(|e| panic!("fixture {name} is not JSON: {e}"))
}

/// Parses the fixture text as `T`, re-serializes it, and checks the output equals the fixture
/// (as JSON values) and parses back to the same `T`.
pub fn round_trip<T>(name: &str) -> T
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
pub fn reserialize<T: Serialize + DeserializeOwned>(v: Value) -> Value {
    let typed: T = serde_json::from_value(v).expect("parses");
    serde_json::to_value(&typed).expect("serializes")
}

/// The security half of an agent card (digest §2.7 shows it as a fragment).
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecurityFragment {
    pub security_schemes: BTreeMap<String, SecurityScheme>,
    pub security_requirements: Vec<SecurityRequirement>,
}
