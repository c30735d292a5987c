//! Translation to and from the A2A v0.3 wire format.
//!
//! `decode_*` functions read v0.3 JSON into the v1.0 model; `encode_*` functions write the v1.0
//! model as v0.3 JSON. What v0.3 cannot express is dropped or adapted as the spec's migration
//! notes say: a non-object `data` part is wrapped as `{"value": …}` with the metadata flag
//! `data_part_compat: true` (and unwrapped again on the way back); the device-code OAuth flow has
//! no v0.3 form; `returnImmediately` is the negation of v0.3's `blocking`.

use crate::Method;
use crate::error::Error;
use crate::event::{
    SendMessageResponse, StreamResponse, TaskArtifactUpdateEvent, TaskStatusUpdateEvent,
};
use crate::ids::{ArtifactId, ContextId, MessageId, TaskId};
use crate::message::{Message, Metadata, Part, PartContent, Role, decode_base64, encode_base64};
use crate::params::*;
use crate::task::{Artifact, Task, TaskState, TaskStatus};
use crate::time::Timestamp;
use serde_json::{Map, Value, json};

mod card;
mod model;
mod operations;

pub use card::{decode_card, decode_scheme, encode_card, hybrid_card};
pub use model::*;

/// The metadata flag that marks a wrapped non-object data part.
pub const DATA_PART_COMPAT: &str = "data_part_compat";

// ---------------------------------------------------------------------------------------------
// Small readers over `serde_json::Value` whose errors name the field.

type Obj = Map<String, Value>;

fn obj<'a>(v: &'a Value, at: &str) -> Result<&'a Obj, Error> {
    v.as_object()
        .ok_or_else(|| Error::invalid_params(at, "must be an object"))
}

fn opt_str(o: &Obj, key: &str, at: &str) -> Result<Option<String>, Error> {
    Ok(content_str(o, key, at)?.filter(|s| !s.is_empty()))
}

/// Like [`opt_str`], but `""` is a value: for part content, where an empty text or an empty
/// file is still content.
fn content_str(o: &Obj, key: &str, at: &str) -> Result<Option<String>, Error> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(Error::invalid_params(
            &format!("{at}.{key}"),
            "must be a string",
        )),
    }
}

fn req_str(o: &Obj, key: &str, at: &str) -> Result<String, Error> {
    opt_str(o, key, at)?.ok_or_else(|| Error::invalid_params(&format!("{at}.{key}"), "is required"))
}

fn opt_bool(o: &Obj, key: &str, at: &str) -> Result<Option<bool>, Error> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(Error::invalid_params(
            &format!("{at}.{key}"),
            "must be a boolean",
        )),
    }
}

fn opt_i32(o: &Obj, key: &str, at: &str) -> Result<Option<i32>, Error> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_i64()
            .and_then(|n| i32::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| {
                Error::invalid_params(&format!("{at}.{key}"), "must be a 32-bit integer")
            }),
    }
}

fn opt_obj(o: &Obj, key: &str, at: &str) -> Result<Option<Metadata>, Error> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m.clone())),
        Some(_) => Err(Error::invalid_params(
            &format!("{at}.{key}"),
            "must be an object",
        )),
    }
}

fn str_list(o: &Obj, key: &str, at: &str) -> Result<Vec<String>, Error> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| {
                i.as_str().map(str::to_owned).ok_or_else(|| {
                    Error::invalid_params(&format!("{at}.{key}"), "must be a list of strings")
                })
            })
            .collect(),
        Some(_) => Err(Error::invalid_params(
            &format!("{at}.{key}"),
            "must be a list of strings",
        )),
    }
}

fn list<'a>(o: &'a Obj, key: &str, at: &str) -> Result<&'a [Value], Error> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(items)) => Ok(items),
        Some(_) => Err(Error::invalid_params(
            &format!("{at}.{key}"),
            "must be a list",
        )),
    }
}

/// Inserts `key: value` unless the value is `None`.
fn put<T: Into<Value>>(o: &mut Obj, key: &str, value: Option<T>) {
    if let Some(v) = value {
        o.insert(key.to_owned(), v.into());
    }
}

fn put_list(o: &mut Obj, key: &str, items: &[String]) {
    if !items.is_empty() {
        o.insert(key.to_owned(), json!(items));
    }
}

// ---------------------------------------------------------------------------------------------
// Enums

/// The v0.3 name of a task state (`input-required`, …); UNSPECIFIED is `unknown`.
pub fn encode_state(state: &TaskState) -> &str {
    match state {
        TaskState::Submitted => "submitted",
        TaskState::Working => "working",
        TaskState::InputRequired => "input-required",
        TaskState::AuthRequired => "auth-required",
        TaskState::Completed => "completed",
        TaskState::Canceled => "canceled",
        TaskState::Failed => "failed",
        TaskState::Rejected => "rejected",
        TaskState::Unspecified => "unknown",
        other => other.as_str(),
    }
}

/// Reads a v0.3 task state (the v1.0 names are accepted too).
pub fn decode_state(s: &str) -> TaskState {
    match s {
        "submitted" => TaskState::Submitted,
        "working" => TaskState::Working,
        "input-required" => TaskState::InputRequired,
        "auth-required" => TaskState::AuthRequired,
        "completed" => TaskState::Completed,
        "canceled" | "cancelled" => TaskState::Canceled,
        "failed" => TaskState::Failed,
        "rejected" => TaskState::Rejected,
        "unknown" => TaskState::Unspecified,
        other => TaskState::from_wire(other),
    }
}

fn encode_role(role: &Role) -> &str {
    match role {
        Role::User => "user",
        Role::Agent => "agent",
        Role::Unspecified => "unknown",
        other => other.as_str(),
    }
}

fn decode_role(s: &str) -> Role {
    match s {
        "user" => Role::User,
        "agent" => Role::Agent,
        "unknown" => Role::Unspecified,
        other => Role::from_wire(other),
    }
}

pub use operations::*;
