//! The bodies of requests and the readers of answers: fresh message ids, user messages,
//! SendMessage params, and the strings and texts of a result.

use serde_json::{Value, json};
use std::sync::atomic::{AtomicU64, Ordering};

/// A fresh message id.
pub fn message_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!(
        "m-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// A user message with one text part.
pub fn user_message(text: &str) -> Value {
    json!({"messageId": message_id(), "role": "ROLE_USER", "parts": [{"text": text}]})
}

/// SendMessage params with a user text message.
pub fn send_params(text: &str) -> Value {
    json!({"message": user_message(text)})
}

/// SendMessage params continuing task `task_id` with a user text message.
pub fn reply_params(task_id: &str, text: &str) -> Value {
    let mut m = user_message(text);
    m["taskId"] = json!(task_id);
    json!({"message": m})
}

/// The string at `v[key]`, panicking with context if absent.
#[track_caller]
pub fn str_at<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("`{key}` is not a string in {v:#}"))
}

/// The texts of a list of parts.
pub fn texts(parts: &Value) -> Vec<String> {
    parts
        .as_array()
        .map(|ps| {
            ps.iter()
                .filter_map(|p| p["text"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}
