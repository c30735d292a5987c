//! The tasks group: a text message sent, then what GetTask and ListTasks say of its task,
//! pagination, history length, cancel of a finished task.

use super::{Target, skip};
use crate::check::Verdict;
use crate::check::card::verdict;
use crate::check::catalog::*;
use a2a_core::{ErrorKind, Method, TaskState};
use serde_json::{Value, json};

/// What the task checks leave for the checks after them.
#[derive(Debug, Default)]
pub(super) struct Sent {
    pub(super) id: String,
    pub(super) context: String,
    pub(super) state: Option<TaskState>,
}

/// A task's (or status update's) state, if it is one the spec defines.
pub(super) fn state_of(task: &Value) -> Option<TaskState> {
    let s = task["status"]["state"].as_str()?;
    serde_json::from_value::<TaskState>(Value::String(s.to_owned()))
        .ok()
        .filter(TaskState::is_known)
}

/// A text message from the checker: `a2a-check: <text>`, marked in its metadata.
pub(super) fn message(text: &str, context: Option<&str>) -> Value {
    let mut m = json!({
        "messageId": uuid::Uuid::new_v4().to_string(),
        "role": "ROLE_USER",
        "parts": [{"text": format!("a2a-check: {text}")}],
        "metadata": {"a2a-check": true},
    });
    if let Some(c) = context {
        m["contextId"] = json!(c);
    }
    m
}

/// The tasks group; returns the task it made (for the checks after it).
pub(super) async fn tasks(t: &Target<'_>) -> Option<Sent> {
    let answer = t
        .call(
            Method::SendMessage,
            json!({"message": message("hello", None)}),
        )
        .await;
    let later = [
        TASK_BLOCKING,
        TASK_GET,
        TASK_HISTORY,
        TASK_LIST,
        TASK_LIST_ARTIFACTS,
        TASK_PAGES,
        TASK_CANCEL_FINISHED,
    ];
    let result = match &answer.result {
        Ok(v) => v.clone(),
        Err(f) => {
            let detail = format!("SendMessage failed: {}", f.describe());
            t.record(TASK_SEND, Verdict::Fail, detail, Some(&answer.exchange));
            skip(t, &later, "SendMessage failed");
            return None;
        }
    };
    if let Err(problem) = send_response(&result) {
        t.record(TASK_SEND, Verdict::Fail, problem, Some(&answer.exchange));
        skip(t, &later, "SendMessage's answer is not usable");
        return None;
    }
    t.record(TASK_SEND, Verdict::Pass, "", Some(&answer.exchange));
    let Some(task) = result.get("task") else {
        skip(t, &later, "the agent answered with a Message, not a task");
        return None;
    };
    let mut sent = Sent {
        id: task["id"].as_str().unwrap_or_default().to_owned(),
        context: task["contextId"].as_str().unwrap_or_default().to_owned(),
        state: state_of(task),
    };
    let settled = sent.state.as_ref().is_some_and(TaskState::ends_stream);
    t.record(
        TASK_BLOCKING,
        verdict(settled),
        format!("the task came back {}", task["status"]["state"]),
        Some(&answer.exchange),
    );

    // GetTask agrees.
    let answer = t.call(Method::GetTask, json!({"id": sent.id})).await;
    match &answer.result {
        Ok(got) => {
            let later_state = state_of(got);
            let same = got["id"] == sent.id.as_str() && got["contextId"] == sent.context.as_str();
            let forward = match (&sent.state, &later_state) {
                (Some(a), Some(b)) => a == b || a.can_transition_to(b),
                _ => false,
            };
            t.record(
                TASK_GET,
                verdict(same && forward),
                format!(
                    "SendMessage gave {} in {:?} {}; GetTask gives {} in {} {}",
                    sent.id,
                    sent.context,
                    task["status"]["state"],
                    got["id"],
                    got["contextId"],
                    got["status"]["state"]
                ),
                Some(&answer.exchange),
            );
            if later_state.is_some() {
                sent.state = later_state;
            }
        }
        Err(f) => t.record(
            TASK_GET,
            Verdict::Fail,
            format!("GetTask failed: {}", f.describe()),
            Some(&answer.exchange),
        ),
    }

    history(t, &sent).await;
    list(t, &sent).await;
    pages(t, &sent).await;
    cancel_finished(t, &mut sent).await;
    Some(sent)
}

/// What is wrong with a SendMessageResponse, if anything.
fn send_response(v: &Value) -> Result<(), String> {
    let keys: Vec<&String> = v
        .as_object()
        .map(|o| o.keys().collect())
        .unwrap_or_default();
    if keys.len() != 1 || !matches!(keys[0].as_str(), "task" | "message") {
        return Err(format!(
            "the result must be {{\"task\": …}} or {{\"message\": …}}, not one with keys {keys:?}"
        ));
    }
    if let Err(e) = a2a_core::strict::from_value::<a2a_core::SendMessageResponse>(v) {
        return Err(format!("the result does not read as the v1.0 model: {e}"));
    }
    if let Some(task) = v.get("task") {
        if task["id"].as_str().is_none_or(str::is_empty)
            || task["contextId"].as_str().is_none_or(str::is_empty)
        {
            return Err("the task has no id or no contextId".to_owned());
        }
        if state_of(task).is_none() {
            return Err(format!(
                "the task's state {} is not a TaskState",
                task["status"]["state"]
            ));
        }
    }
    Ok(())
}

async fn history(t: &Target<'_>, sent: &Sent) {
    let mut problems = Vec::new();
    let mut last = None;
    for n in [0, 1] {
        let answer = t
            .call(Method::GetTask, json!({"id": sent.id, "historyLength": n}))
            .await;
        match &answer.result {
            Ok(task) => {
                let len = task["history"].as_array().map_or(0, Vec::len);
                if len > n {
                    problems.push(format!("historyLength {n} gave {len} messages"));
                }
            }
            Err(f) => problems.push(format!("historyLength {n}: {}", f.describe())),
        }
        last = Some(answer.exchange);
    }
    t.record(
        TASK_HISTORY,
        verdict(problems.is_empty()),
        problems.join("; "),
        last.as_ref(),
    );
}

async fn list(t: &Target<'_>, sent: &Sent) {
    let answer = t
        .call(Method::ListTasks, json!({"contextId": sent.context}))
        .await;
    let page = match &answer.result {
        Ok(v) => v,
        Err(f) => {
            let detail = format!("ListTasks failed: {}", f.describe());
            t.record(TASK_LIST, Verdict::Fail, detail, Some(&answer.exchange));
            t.record(TASK_LIST_ARTIFACTS, Verdict::Skip, "ListTasks failed", None);
            return;
        }
    };
    let mut problems = Vec::new();
    for (field, ok) in [
        ("tasks", page["tasks"].is_array()),
        ("nextPageToken", page["nextPageToken"].is_string()),
        ("pageSize", page["pageSize"].is_number()),
        ("totalSize", page["totalSize"].is_number()),
    ] {
        if !ok {
            problems.push(format!("`{field}` is missing or of the wrong type"));
        }
    }
    let tasks = page["tasks"].as_array().cloned().unwrap_or_default();
    if !tasks.iter().any(|x| x["id"] == sent.id.as_str()) {
        problems.push(format!("the task {} is not listed in its context", sent.id));
    }
    t.record(
        TASK_LIST,
        verdict(problems.is_empty()),
        problems.join("; "),
        Some(&answer.exchange),
    );
    let with = tasks
        .iter()
        .filter(|x| x.get("artifacts").is_some())
        .count();
    t.record(
        TASK_LIST_ARTIFACTS,
        verdict(with == 0),
        format!(
            "{with} of {} tasks carry `artifacts` without includeArtifacts",
            tasks.len()
        ),
        Some(&answer.exchange),
    );
}

/// Two more tasks in the context, then pages of one: each task once, newest first.
async fn pages(t: &Target<'_>, sent: &Sent) {
    let mut ids = vec![sent.id.clone()];
    for text in ["page 2", "page 3"] {
        let params = json!({"message": message(text, Some(&sent.context))});
        let answer = t.call(Method::SendMessage, params).await;
        let task = answer.result.as_ref().ok().and_then(|v| v.get("task"));
        match task {
            Some(task) if task["contextId"] == sent.context.as_str() => {
                ids.push(task["id"].as_str().unwrap_or_default().to_owned());
            }
            _ => {
                let why = "the agent did not start a task in the checker's context (it may refuse client contextIds)";
                t.record(TASK_PAGES, Verdict::Skip, why, Some(&answer.exchange));
                return;
            }
        }
    }
    let mut seen: Vec<String> = Vec::new();
    let mut stamps: Vec<String> = Vec::new();
    let mut token = String::new();
    let mut problems = Vec::new();
    let mut last = None;
    for _ in 0..=ids.len() + 1 {
        let mut params = json!({"contextId": sent.context, "pageSize": 1});
        if !token.is_empty() {
            params["pageToken"] = json!(token);
        }
        let answer = t.call(Method::ListTasks, params).await;
        let page = match &answer.result {
            Ok(v) => v.clone(),
            Err(f) => {
                problems.push(format!("a page failed: {}", f.describe()));
                last = Some(answer.exchange);
                break;
            }
        };
        let tasks = page["tasks"].as_array().cloned().unwrap_or_default();
        if tasks.len() > 1 {
            problems.push(format!("pageSize 1 gave {} tasks", tasks.len()));
        }
        if let Some(total) = page["totalSize"].as_u64()
            && total != ids.len() as u64
        {
            problems.push(format!("totalSize {total} for {} tasks", ids.len()));
        }
        for task in &tasks {
            seen.push(task["id"].as_str().unwrap_or_default().to_owned());
            stamps.push(
                task["status"]["timestamp"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            );
        }
        token = page["nextPageToken"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        last = Some(answer.exchange);
        if token.is_empty() {
            break;
        }
    }
    if !token.is_empty() {
        problems.push("nextPageToken never became \"\"".to_owned());
    }
    let mut sorted_seen = seen.clone();
    sorted_seen.sort();
    let mut sorted_ids = ids.clone();
    sorted_ids.sort();
    if problems.is_empty() && sorted_seen != sorted_ids {
        problems.push(format!(
            "the pages listed {seen:?}; the context holds {ids:?}"
        ));
    }
    // RFC 3339 timestamps in UTC compare as strings when written alike.
    if stamps.windows(2).any(|w| w[0] < w[1]) {
        problems.push(format!("not newest first: {stamps:?}"));
    }
    t.record(
        TASK_PAGES,
        verdict(problems.is_empty()),
        problems.join("; "),
        last.as_ref(),
    );
}

async fn cancel_finished(t: &Target<'_>, sent: &mut Sent) {
    if sent.state.as_ref().is_some_and(|s| !s.is_terminal()) {
        // An interrupted (or still running) task is canceled first, which also cleans up.
        let answer = t.call(Method::CancelTask, json!({"id": sent.id})).await;
        match answer.result.as_ref().ok().and_then(state_of) {
            Some(s) if s.is_terminal() => sent.state = Some(s),
            _ => {
                let why = "the task is not finished and could not be canceled";
                t.record(
                    TASK_CANCEL_FINISHED,
                    Verdict::Skip,
                    why,
                    Some(&answer.exchange),
                );
                return;
            }
        }
    }
    let answer = t.call(Method::CancelTask, json!({"id": sent.id})).await;
    t.expect_error(TASK_CANCEL_FINISHED, &answer, ErrorKind::TaskNotCancelable);
}
