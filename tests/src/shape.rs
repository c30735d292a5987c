//! Wire-shape assertions that hold for every v1.0 response (checklist items 1 and 3).

use serde_json::Value;

/// Whether `s` is an RFC 3339 UTC timestamp with millisecond precision:
/// `2026-02-03T09:15:27.412Z`.
pub fn is_millis_utc(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| r.into_iter().all(|i| b[i].is_ascii_digit());
    b.len() == 24
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
        && b[19] == b'.'
        && digits(20..23)
        && b[23] == b'Z'
}

const STATES: [&str; 8] = [
    "TASK_STATE_SUBMITTED",
    "TASK_STATE_WORKING",
    "TASK_STATE_COMPLETED",
    "TASK_STATE_FAILED",
    "TASK_STATE_CANCELED",
    "TASK_STATE_INPUT_REQUIRED",
    "TASK_STATE_REJECTED",
    "TASK_STATE_AUTH_REQUIRED",
];

/// Asserts the v1.0 wire rules on a response or stream event, recursively: no `kind` and no
/// `final` key anywhere; every `state` is a full `TASK_STATE_*` name; every `role` is
/// `ROLE_USER` or `ROLE_AGENT`; every task status carries a millisecond UTC `timestamp`.
#[track_caller]
pub fn assert_v1_shape(v: &Value) {
    walk(v, v, "$");
}

#[track_caller]
fn walk(root: &Value, v: &Value, at: &str) {
    match v {
        Value::Object(o) => {
            for (k, child) in o {
                let here = format!("{at}.{k}");
                assert!(k != "kind", "v1.0 has no `kind` key ({here}) in {root:#}");
                assert!(k != "final", "v1.0 has no `final` key ({here}) in {root:#}");
                match k.as_str() {
                    "state" => {
                        let s = child.as_str().unwrap_or_default();
                        assert!(STATES.contains(&s), "{here} = {child} in {root:#}");
                    }
                    "role" => {
                        let s = child.as_str().unwrap_or_default();
                        assert!(
                            s == "ROLE_USER" || s == "ROLE_AGENT",
                            "{here} = {child} in {root:#}"
                        );
                    }
                    "status" if child.get("state").is_some() => {
                        let ts = child["timestamp"]
                            .as_str()
                            .unwrap_or_else(|| panic!("{here} has no timestamp in {root:#}"));
                        assert!(is_millis_utc(ts), "{here}.timestamp = {ts:?}");
                    }
                    // Metadata is free-form user data.
                    "metadata" => continue,
                    _ => {}
                }
                walk(root, child, &here);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                walk(root, item, &format!("{at}[{i}]"));
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn millisecond_utc_timestamps_are_recognized() {
        assert!(is_millis_utc("2026-02-03T09:15:27.412Z"));
        assert!(!is_millis_utc("2026-02-03T09:15:27Z"));
        assert!(!is_millis_utc("2026-02-03T09:15:27.412+00:00"));
        assert!(!is_millis_utc("2026-02-03T09:15:27.412345Z"));
    }
}
