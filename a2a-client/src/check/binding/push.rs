//! The push group: push configs refused when not declared; created, read, listed and deleted
//! when they are.

use super::tasks::Sent;
use super::{NO_SUCH_TASK, Target, describe};
use crate::check::Verdict;
use crate::check::card::verdict;
use crate::check::catalog::*;
use a2a_core::{ErrorKind, Method};
use serde_json::json;

pub(super) async fn push(t: &Target<'_>, declared: bool, sent: Option<&Sent>) {
    let webhook = t
        .run
        .options
        .webhook
        .clone()
        .unwrap_or_else(|| crate::check::DEFAULT_WEBHOOK.to_owned());
    let task_id = sent.map_or(NO_SUCH_TASK, |s| s.id.as_str());
    let config = |task: &str| json!({"taskId": task, "url": webhook, "token": "a2a-check"});
    if !declared {
        let answer = t
            .call(Method::CreateTaskPushNotificationConfig, config(task_id))
            .await;
        let kind = ErrorKind::PushNotificationNotSupported;
        t.expect_error(PUSH_UNSUPPORTED, &answer, kind);
        return;
    }
    let answer = t
        .call(
            Method::CreateTaskPushNotificationConfig,
            config(NO_SUCH_TASK),
        )
        .await;
    t.expect_error(PUSH_UNKNOWN_TASK, &answer, ErrorKind::TaskNotFound);
    let Some(sent) = sent else {
        t.record(PUSH_ROUND_TRIP, Verdict::Skip, "no task to configure", None);
        return;
    };
    let answer = t
        .call(Method::CreateTaskPushNotificationConfig, config(&sent.id))
        .await;
    let created = match &answer.result {
        Ok(v) => v.clone(),
        Err(f) => {
            let detail = format!(
                "Create was refused ({}); an agent may refuse webhooks on its own host or on a finished task: --allow-webhook URL names one it accepts",
                f.describe()
            );
            t.record(
                PUSH_ROUND_TRIP,
                Verdict::Skip,
                detail,
                Some(&answer.exchange),
            );
            return;
        }
    };
    let mut problems = Vec::new();
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    if id.is_empty() || created["url"] != webhook.as_str() {
        problems.push(format!(
            "Create returned {created}, without an id or with another url"
        ));
    }
    let at = json!({"taskId": sent.id, "id": id});
    let answer = t
        .call(Method::GetTaskPushNotificationConfig, at.clone())
        .await;
    match &answer.result {
        Ok(v) if v["url"] == webhook.as_str() => {}
        other => problems.push(format!("Get gave {}", describe(other))),
    }
    let answer = t
        .call(
            Method::ListTaskPushNotificationConfigs,
            json!({"taskId": sent.id}),
        )
        .await;
    match &answer.result {
        Ok(v) => {
            let listed = v["configs"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["id"] == id.as_str() && c["taskId"] == sent.id.as_str());
            if !listed {
                problems.push(format!(
                    "List does not hold the config with its id and taskId: {v}"
                ));
            }
        }
        Err(f) => problems.push(format!("List failed: {}", f.describe())),
    }
    for n in ["first", "second"] {
        let answer = t
            .call(Method::DeleteTaskPushNotificationConfig, at.clone())
            .await;
        if let Err(f) = &answer.result {
            problems.push(format!("the {n} Delete failed: {}", f.describe()));
        }
    }
    let answer = t.call(Method::GetTaskPushNotificationConfig, at).await;
    match &answer.result {
        Err(f) if t.matches(f, ErrorKind::TaskNotFound) => {}
        other => problems.push(format!("Get after Delete gave {}", describe(other))),
    }
    t.record(
        PUSH_ROUND_TRIP,
        verdict(problems.is_empty()),
        problems.join("; "),
        Some(&answer.exchange),
    );
}
