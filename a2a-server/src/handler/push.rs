//! The push-notification operations of the handler. `ListTaskPushNotificationConfigs` pages
//! through a task's registrations in registration order, at most
//! [`MAX_PAGE_SIZE`](a2a_core::MAX_PAGE_SIZE) a page, whatever the store; its page token is
//! the position and id of the last registration of the page, so a page resumes after that
//! registration even when earlier ones were deleted meanwhile (and where it was, when it was).

use super::{CallContext, RequestHandler};
use crate::store::PushRecord;
use a2a_core::{
    DeleteTaskPushNotificationConfigRequest, Empty, Error, ErrorKind,
    GetTaskPushNotificationConfigRequest, ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse, TaskId, TaskPushNotificationConfig, Validate,
};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

impl RequestHandler {
    /// `CreateTaskPushNotificationConfig`: registers a webhook for the task's next events.
    /// The same `id` replaces an earlier registration.
    pub async fn create_push_config(
        &self,
        cx: &CallContext,
        req: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, Error> {
        req.validate()?;
        self.rt.pusher()?;
        let task_id = req.task_id.clone().unwrap_or_default();
        let stored = self.load(cx, &task_id).await?;
        let config = (self.rt)
            .register_webhook(&task_id, req, (cx.v03, cx.generations()), stored.version)
            .await?;
        Ok(redacted(config))
    }

    async fn push_record(
        &self,
        cx: &CallContext,
        task: &TaskId,
        id: &str,
    ) -> Result<PushRecord, Error> {
        self.load(cx, task).await?;
        self.rt.webhook(task, id).await?.ok_or_else(|| {
            Error::new(
                ErrorKind::TaskNotFound,
                format!("Push notification config {id} not found for task {task}"),
            )
            .with_metadata("taskId", task.as_str())
        })
    }

    /// `GetTaskPushNotificationConfig` (credentials are not returned).
    pub async fn get_push_config(
        &self,
        cx: &CallContext,
        req: GetTaskPushNotificationConfigRequest,
    ) -> Result<TaskPushNotificationConfig, Error> {
        req.validate()?;
        self.rt.pusher()?;
        Ok(redacted(
            self.push_record(cx, &req.task_id, &req.id).await?.config,
        ))
    }

    /// `ListTaskPushNotificationConfigs` (credentials are not returned): a page of at most
    /// `pageSize` registrations (1 to 100; unset: 100) after `pageToken`, with the token of the
    /// next page, empty on the last. v0.3 has no paging: its callers get every registration.
    pub async fn list_push_configs(
        &self,
        cx: &CallContext,
        req: ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse, Error> {
        req.validate()?;
        self.rt.pusher()?;
        self.load(cx, &req.task_id).await?;
        let configs = self.rt.webhooks(&req.task_id).await?;
        let size = match req.page_size {
            _ if cx.v03 => configs.len(),
            0 => a2a_core::DEFAULT_PUSH_CONFIG_PAGE_SIZE as usize,
            n => n as usize,
        };
        let (page, next_page_token) = page(configs, size, req.page_token.as_deref())?;
        Ok(ListTaskPushNotificationConfigsResponse {
            configs: page.into_iter().map(|r| redacted(r.config)).collect(),
            next_page_token,
        })
    }

    /// `DeleteTaskPushNotificationConfig`: idempotent (deleting twice succeeds twice).
    pub async fn delete_push_config(
        &self,
        cx: &CallContext,
        req: DeleteTaskPushNotificationConfigRequest,
    ) -> Result<Empty, Error> {
        req.validate()?;
        self.rt.pusher()?;
        self.load(cx, &req.task_id).await?;
        self.rt.delete_webhook(&req.task_id, &req.id).await?;
        Ok(Empty {})
    }

    /// Webhook registrations of a task that gave up delivering, with why (for operators).
    pub async fn dead_letters(&self, task: &TaskId) -> Result<Vec<PushRecord>, Error> {
        Ok(self
            .rt
            .webhooks(task)
            .await?
            .into_iter()
            .filter(|r| r.dead_letter.is_some())
            .collect())
    }
}

/// The page of `records` of at most `size` after the one `token` names, and the token of the
/// next page (empty on the last).
fn page(
    mut records: Vec<PushRecord>,
    size: usize,
    token: Option<&str>,
) -> Result<(Vec<PushRecord>, String), Error> {
    let start = match token {
        None => 0,
        Some(token) => {
            let (at, id) = read_token(token).ok_or_else(|| {
                Error::invalid_params("pageToken", "is not a token this server gave")
            })?;
            // After the registration the token names, wherever it is now; where it was when
            // it was deleted meanwhile (its successors moved up one).
            records
                .iter()
                .position(|r| r.id() == id)
                .map_or(at.saturating_sub(1).min(records.len()), |i| i + 1)
        }
    };
    let end = start.saturating_add(size).min(records.len());
    let next = if end < records.len() {
        let last = &records[end - 1];
        URL_SAFE_NO_PAD.encode(format!("{end}.{}", last.id()))
    } else {
        String::new()
    };
    records.truncate(end);
    records.drain(..start);
    Ok((records, next))
}

/// The position and config id a page token holds.
fn read_token(token: &str) -> Option<(usize, String)> {
    let raw = String::from_utf8(URL_SAFE_NO_PAD.decode(token).ok()?).ok()?;
    let (at, id) = raw.split_once('.')?;
    Some((at.parse().ok()?, id.to_owned()))
}

/// A config as returned to clients: push credentials are never sent back in clear.
fn redacted(mut config: TaskPushNotificationConfig) -> TaskPushNotificationConfig {
    if let Some(auth) = &mut config.authentication {
        auth.credentials = None;
    }
    config
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(ids: &[&str]) -> Vec<PushRecord> {
        ids.iter()
            .map(|id| PushRecord {
                config: TaskPushNotificationConfig {
                    id: Some((*id).to_owned()),
                    task_id: Some("t".into()),
                    url: format!("https://example.com/{id}"),
                    ..Default::default()
                },
                v03: false,
                generations: false,
                delivered: 0,
                dead_letter: None,
            })
            .collect()
    }

    fn ids(page: &[PushRecord]) -> Vec<&str> {
        page.iter().map(PushRecord::id).collect()
    }

    #[test]
    fn pages_visit_every_registration_once_in_order() {
        let all: Vec<String> = (0..7).map(|i| format!("c{i}")).collect();
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        let mut seen = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let (page, next) = page(records(&all), 3, token.as_deref()).unwrap();
            assert!(page.len() <= 3);
            seen.extend(ids(&page).into_iter().map(str::to_owned));
            if next.is_empty() {
                break;
            }
            token = Some(next);
        }
        assert_eq!(seen, all);
    }

    #[test]
    fn a_page_resumes_after_its_last_registration_when_earlier_ones_are_deleted() {
        let (first, next) = page(records(&["a", "b", "c", "d", "e"]), 2, None).unwrap();
        assert_eq!(ids(&first), ["a", "b"]);
        let (second, _) = page(records(&["b", "c", "d", "e"]), 2, Some(&next)).unwrap();
        assert_eq!(ids(&second), ["c", "d"]);
        // The last one of the page itself deleted: resume where it was.
        let (second, _) = page(records(&["a", "c", "d", "e"]), 2, Some(&next)).unwrap();
        assert_eq!(ids(&second), ["c", "d"]);
    }

    #[test]
    fn a_malformed_page_token_is_invalid_params() {
        for token in ["%%%", "bm8tZG90", ""] {
            let e = page(records(&["a"]), 2, Some(token)).unwrap_err();
            assert_eq!(e.kind(), Some(ErrorKind::InvalidParams), "{token:?}");
        }
    }
}
