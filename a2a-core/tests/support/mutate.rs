//! Structure-aware mutation of JSON inputs, for the fuzz suites (`a2a-core/tests/fuzz_*.rs` and
//! `a2a-server/tests/fuzz_*.rs`).
//!
//! A valid input (a value generated from the model, or a spec fixture) is damaged in two
//! layers: first its JSON tree ([`Mutation`]: drop a member, change a value's type, put in a
//! hostile value, an unknown enum name, a duplicate key, deep nesting), then its text
//! ([`TextMutation`]: truncate, flip a byte, insert bytes). Most cases keep the text valid JSON,
//! so that the deeper layers (params types, validation, handlers) see them.
//!
//! The number of cases is `FUZZ_CASES` (or `PROPTEST_CASES`), else the CI default.

// Each test crate that includes this file uses a different subset of it.
#![allow(dead_code)]

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{Map, Value, json};

/// How many cases each fuzz target runs: `FUZZ_CASES`, else `PROPTEST_CASES`, else `default`.
pub(crate) fn cases(default: u32) -> u32 {
    ["FUZZ_CASES", "PROPTEST_CASES"]
        .iter()
        .find_map(|k| std::env::var(k).ok()?.parse().ok())
        .unwrap_or(default)
}

/// The proptest configuration of a fuzz target.
pub(crate) fn config(default_cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases: cases(default_cases),
        // Mutations reject nothing, but some targets skip inputs that are not JSON.
        max_global_rejects: u32::MAX,
        ..ProptestConfig::default()
    }
}

/// One step of a path into a JSON tree.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Seg {
    Key(String),
    Index(usize),
}

/// Every node of `v` (the root first), depth first.
pub(crate) fn paths(v: &Value) -> Vec<Vec<Seg>> {
    fn walk(v: &Value, at: &mut Vec<Seg>, out: &mut Vec<Vec<Seg>>) {
        out.push(at.clone());
        match v {
            Value::Object(m) => {
                for (k, child) in m {
                    at.push(Seg::Key(k.clone()));
                    walk(child, at, out);
                    at.pop();
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    at.push(Seg::Index(i));
                    walk(child, at, out);
                    at.pop();
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(v, &mut Vec::new(), &mut out);
    out
}

/// The node at `path`.
pub(crate) fn node_mut<'a>(v: &'a mut Value, path: &[Seg]) -> Option<&'a mut Value> {
    path.iter().try_fold(v, |v, seg| match seg {
        Seg::Key(k) => v.get_mut(k.as_str()),
        Seg::Index(i) => v.get_mut(*i),
    })
}

/// A JSON type to turn a value into.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Kind {
    Null,
    Bool,
    Number,
    String,
    Array,
    Object,
}

/// A change to a JSON tree, aimed at the node its `Index` picks.
#[derive(Clone, Debug)]
pub(crate) enum Mutation {
    /// Remove the member or element.
    Drop(Index),
    /// Put a hostile value in its place.
    Replace(Index, Value),
    /// Change its JSON type, keeping what can be kept (an object's values become an array…).
    Retype(Index, Kind),
    /// Replace a string with a name no enum has.
    UnknownEnum(Index, String),
    /// Give an object a second member with the name of one it has.
    Duplicate(Index, Value),
    /// Wrap it in this many arrays and objects.
    Nest(Index, usize),
}

/// A change to the text of a JSON input.
#[derive(Clone, Debug)]
pub(crate) enum TextMutation {
    /// Cut the text at this point.
    Truncate(Index),
    /// XOR one byte with a non-zero mask.
    Flip(Index, u8),
    /// Insert bytes at this point.
    Insert(Index, Vec<u8>),
}

/// The marker of a duplicated key; `render` removes it from the text.
const DUP: &str = "\u{0}DUP\u{0}";

/// The deepest nesting a mutation adds (serde_json refuses more than 128 levels in all, which
/// the fuzzer also reaches, on purpose, with a nested value inside a deep request).
const MAX_NEST: usize = 140;

/// Hostile strings: control and bidi characters, a lone replacement character, emoji, numbers
/// and booleans in strings, a bad timestamp, bad base64, an overlong string.
pub(crate) fn nasty_string() -> BoxedStrategy<String> {
    prop_oneof![
        Just(String::new()),
        Just(" ".to_owned()),
        Just("\u{0}".to_owned()),
        Just("\u{202e}evil\u{202c}".to_owned()),
        Just("\u{fffd}\u{feff}".to_owned()),
        Just("🦀👩‍👩‍👧".to_owned()),
        Just("\u{1b}[31m\r\n".to_owned()),
        Just("-1".to_owned()),
        Just("1e400".to_owned()),
        Just("NaN".to_owned()),
        Just("2147483648".to_owned()),
        Just("true".to_owned()),
        Just("2026-13-45T99:99:99Z".to_owned()),
        Just("not base64!".to_owned()),
        Just("%00%ff/../".to_owned()),
        Just("x".repeat(10_000)),
        "\\PC{0,12}",
        "[\\x00-\\x1f\"\\\\]{1,4}",
    ]
    .boxed()
}

/// Hostile values: extreme, negative and fractional numbers, empty containers, hostile strings.
pub(crate) fn nasty_value() -> BoxedStrategy<Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        Just(json!(0)),
        Just(json!(-1)),
        Just(json!(i64::MIN)),
        Just(json!(u64::MAX)),
        Just(json!(2_147_483_648_u64)),
        Just(json!(-2_147_483_649_i64)),
        Just(json!(0.5)),
        Just(json!(-0.0)),
        Just(json!(1e308)),
        Just(json!(5e-324)),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        Just(json!([])),
        Just(json!({})),
        Just(json!([null])),
        Just(json!({"": null})),
        nasty_string().prop_map(Value::String),
    ]
    .boxed()
}

/// Names no enum has, some shaped like real ones.
fn unknown_enum() -> BoxedStrategy<String> {
    prop_oneof![
        Just("TASK_STATE_FROM_THE_FUTURE".to_owned()),
        Just("ROLE_SYSTEM".to_owned()),
        Just("task_state_working".to_owned()),
        Just("Working".to_owned()),
        Just("unknown".to_owned()),
        Just("UNSPECIFIED".to_owned()),
        "[A-Z_]{1,12}",
    ]
    .boxed()
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::Null),
        Just(Kind::Bool),
        Just(Kind::Number),
        Just(Kind::String),
        Just(Kind::Array),
        Just(Kind::Object),
    ]
}

pub(crate) fn mutation() -> BoxedStrategy<Mutation> {
    prop_oneof![
        3 => any::<Index>().prop_map(Mutation::Drop),
        3 => (any::<Index>(), nasty_value()).prop_map(|(i, v)| Mutation::Replace(i, v)),
        3 => (any::<Index>(), kind()).prop_map(|(i, k)| Mutation::Retype(i, k)),
        1 => (any::<Index>(), unknown_enum()).prop_map(|(i, s)| Mutation::UnknownEnum(i, s)),
        1 => (any::<Index>(), nasty_value()).prop_map(|(i, v)| Mutation::Duplicate(i, v)),
        1 => (any::<Index>(), 1..MAX_NEST).prop_map(|(i, d)| Mutation::Nest(i, d)),
    ]
    .boxed()
}

/// Up to three tree mutations (none in a few cases, so the valid input is fed too).
pub(crate) fn mutations() -> BoxedStrategy<Vec<Mutation>> {
    prop_oneof![1 => Just(Vec::new()), 6 => vec(mutation(), 1..4)].boxed()
}

fn text_mutation() -> BoxedStrategy<TextMutation> {
    let bytes = prop_oneof![
        Just(b"\xff".to_vec()),
        Just(b"\x00".to_vec()),
        Just(b"\xef\xbb\xbf".to_vec()),
        Just(b"{".to_vec()),
        Just(b"[".to_vec()),
        Just(b"\"".to_vec()),
        Just(b",".to_vec()),
        Just(b"1e400".to_vec()),
        Just(b"\\ud800".to_vec()),
        Just(b"-0".to_vec()),
        vec(any::<u8>(), 1..4),
    ];
    prop_oneof![
        any::<Index>().prop_map(TextMutation::Truncate),
        (any::<Index>(), 1..=255u8).prop_map(|(i, m)| TextMutation::Flip(i, m)),
        (any::<Index>(), bytes).prop_map(|(i, b)| TextMutation::Insert(i, b)),
    ]
    .boxed()
}

/// No text mutation in most cases (the text stays JSON), one or two in the others.
pub(crate) fn text_mutations() -> BoxedStrategy<Vec<TextMutation>> {
    prop_oneof![4 => Just(Vec::new()), 1 => vec(text_mutation(), 1..3)].boxed()
}

fn retype(v: Value, kind: Kind) -> Value {
    match kind {
        Kind::Null => Value::Null,
        Kind::Bool => Value::Bool(!matches!(v, Value::Null | Value::Bool(false))),
        Kind::Number => match v {
            Value::String(s) => Value::from(s.len()),
            Value::Array(a) => Value::from(a.len()),
            Value::Object(o) => Value::from(o.len()),
            Value::Bool(b) => Value::from(u8::from(b)),
            other => other,
        },
        Kind::String => match v {
            Value::String(s) => Value::String(s),
            other => Value::String(other.to_string()),
        },
        Kind::Array => match v {
            Value::Object(o) => Value::Array(o.into_iter().map(|(_, v)| v).collect()),
            Value::Array(a) => Value::Array(a),
            other => Value::Array(vec![other]),
        },
        Kind::Object => match v {
            Value::Array(a) => Value::Object(
                a.into_iter()
                    .enumerate()
                    .map(|(i, v)| (i.to_string(), v))
                    .collect(),
            ),
            Value::Object(o) => Value::Object(o),
            other => Value::Object(Map::from_iter([("value".to_owned(), other)])),
        },
    }
}

/// Applies tree mutations to `v`, in order.
pub(crate) fn apply(v: &mut Value, mutations: &[Mutation]) {
    for m in mutations {
        let all = paths(v);
        let pick = |i: &Index| all[i.index(all.len())].clone();
        match m {
            Mutation::Drop(i) => {
                let path = pick(i);
                let Some((last, parent)) = path.split_last() else {
                    *v = Value::Null;
                    continue;
                };
                match (node_mut(v, parent), last) {
                    (Some(Value::Object(o)), Seg::Key(k)) => {
                        o.remove(k);
                    }
                    (Some(Value::Array(a)), Seg::Index(i)) => {
                        a.remove(*i);
                    }
                    _ => {}
                }
            }
            Mutation::Replace(i, new) => {
                if let Some(n) = node_mut(v, &pick(i)) {
                    *n = new.clone();
                }
            }
            Mutation::Retype(i, kind) => {
                if let Some(n) = node_mut(v, &pick(i)) {
                    *n = retype(n.take(), *kind);
                }
            }
            Mutation::UnknownEnum(i, name) => {
                if let Some(n) = node_mut(v, &pick(i)) {
                    *n = Value::String(name.clone());
                }
            }
            Mutation::Duplicate(i, value) => {
                if let Some(Value::Object(o)) = node_mut(v, &pick(i))
                    && let Some(k) = o.keys().find(|k| !k.starts_with(DUP)).cloned()
                {
                    o.insert(format!("{DUP}{k}"), value.clone());
                }
            }
            Mutation::Nest(i, depth) => {
                if let Some(n) = node_mut(v, &pick(i)) {
                    let mut inner = n.take();
                    for d in 0..*depth {
                        inner = if d % 2 == 0 {
                            Value::Array(vec![inner])
                        } else {
                            json!({ "n": inner })
                        };
                    }
                    *n = inner;
                }
            }
        }
    }
}

/// The JSON text of `v`, with duplicated keys written as duplicates.
pub(crate) fn render(v: &Value) -> Vec<u8> {
    let text = serde_json::to_string(v).expect("a JSON value serializes");
    text.replace("\\u0000DUP\\u0000", "").into_bytes()
}

/// Applies text mutations to `bytes`, in order.
pub(crate) fn apply_text(bytes: &mut Vec<u8>, mutations: &[TextMutation]) {
    for m in mutations {
        match m {
            TextMutation::Truncate(i) => {
                let at = i.index(bytes.len() + 1);
                bytes.truncate(at);
            }
            TextMutation::Flip(i, mask) => {
                if !bytes.is_empty() {
                    let at = i.index(bytes.len());
                    bytes[at] ^= mask;
                }
            }
            TextMutation::Insert(i, b) => {
                let at = i.index(bytes.len() + 1);
                bytes.splice(at..at, b.iter().copied());
            }
        }
    }
}

/// A damaged copy of `seed`: tree mutations, then text mutations.
pub(crate) fn damage(seed: &Value, tree: &[Mutation], text: &[TextMutation]) -> Vec<u8> {
    let mut v = seed.clone();
    apply(&mut v, tree);
    let mut bytes = render(&v);
    apply_text(&mut bytes, text);
    bytes
}

/// a2a-core's copies of the spec's JSON fixtures (valid and invalid, v1.0 and v0.3), read once.
pub(crate) fn spec_fixtures() -> &'static [(String, Value)] {
    static FIXTURES: std::sync::OnceLock<Vec<(String, Value)>> = std::sync::OnceLock::new();
    FIXTURES.get_or_init(|| {
        // The same path from a2a-core and from a sibling crate that includes this file.
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../a2a-core/tests/fixtures");
        let all = json_files(&dir);
        assert!(all.len() > 30, "fixtures not found under {}", dir.display());
        all
    })
}

/// One of [`spec_fixtures`].
pub(crate) fn spec_fixture() -> BoxedStrategy<Value> {
    any::<Index>()
        .prop_map(|i| spec_fixtures()[i.index(spec_fixtures().len())].1.clone())
        .boxed()
}

/// The JSON files under `dir` (recursively), parsed; files that are not JSON are skipped.
pub(crate) fn json_files(dir: &std::path::Path) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Some(v) = std::fs::read(&p)
                .ok()
                .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            {
                out.push((p.display().to_string(), v));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}
