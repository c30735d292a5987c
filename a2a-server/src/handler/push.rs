//! The push-notification operations of the handler.

use super::{CallContext, RequestHandler};
use crate::store::PushRecord;
use a2a_core::{
    DeleteTaskPushNotificationConfigRequest, Empty, Error, ErrorKind,
    GetTaskPushNotificationConfigRequest, ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse, TaskId, TaskPushNotificationConfig, Validate,
};

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
            .register_webhook(&task_id, req, cx.v03, stored.version)
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

    /// `ListTaskPushNotificationConfigs` (credentials are not returned).
    pub async fn list_push_configs(
        &self,
        cx: &CallContext,
        req: ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse, Error> {
        req.validate()?;
        self.rt.pusher()?;
        self.load(cx, &req.task_id).await?;
        let configs = self.rt.webhooks(&req.task_id).await?;
        Ok(ListTaskPushNotificationConfigsResponse {
            configs: configs.into_iter().map(|r| redacted(r.config)).collect(),
            next_page_token: String::new(),
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

/// A config as returned to clients: push credentials are never sent back in clear.
fn redacted(mut config: TaskPushNotificationConfig) -> TaskPushNotificationConfig {
    if let Some(auth) = &mut config.authentication {
        auth.credentials = None;
    }
    config
}
