//! The push-notification operations of the handler.

use super::{CallContext, RequestHandler};
use crate::store::{MessageClaim, PushRecord};
use a2a_core::{
    DeleteTaskPushNotificationConfigRequest, Empty, Error, ErrorKind,
    GetTaskPushNotificationConfigRequest, ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse, TaskId, TaskPushNotificationConfig, Validate,
};
use std::sync::Arc;

impl RequestHandler {
    pub(super) fn pusher(&self) -> Result<&Arc<crate::push::Pusher>, Error> {
        self.rt.pusher.as_ref().ok_or_else(|| {
            Error::new(
                ErrorKind::PushNotificationNotSupported,
                "This agent does not support push notifications",
            )
        })
    }

    /// Stores a webhook registration for `task_id`, delivering events after `delivered`.
    pub(super) async fn register_push(
        &self,
        cx: &CallContext,
        task_id: &TaskId,
        mut config: TaskPushNotificationConfig,
        delivered: u64,
    ) -> Result<TaskPushNotificationConfig, Error> {
        let pusher = self.pusher()?;
        pusher.settings().check_url(&config.url)?;
        config.task_id = Some(task_id.clone());
        config.tenant = None;
        if config.id.is_none() {
            config.id = Some(uuid::Uuid::new_v4().to_string());
        }
        let record = PushRecord {
            config: config.clone(),
            v03: cx.v03,
            delivered,
            dead_letter: None,
        };
        pusher.register(record).await?;
        Ok(redacted(config))
    }

    /// The push config of a retried `SendMessage`, which is answered with the task of its
    /// first sending: registered on that task as the first sending would have, with the same
    /// checks and limit, delivering from the task's first event (a client that retries a send
    /// expects every event of the task at its webhook). Unless it is registered already: the
    /// same config id with the same URL, token and authentication, or, without an id, a
    /// registration with the same URL, token and authentication (the first sending's own);
    /// then its delivery goes on where it is. The same id with another config replaces it,
    /// as `CreateTaskPushNotificationConfig` would. A first sending answered with a message
    /// (no task) has no events to deliver, then or now: nothing is registered.
    pub(super) async fn register_retried_push(
        &self,
        cx: &CallContext,
        claim: &MessageClaim,
        config: TaskPushNotificationConfig,
    ) -> Result<(), Error> {
        if claim.reply.is_some() {
            return Ok(());
        }
        let task_id = &claim.task_id;
        self.load(cx, task_id).await?;
        let same = |r: &PushRecord| {
            r.config.url == config.url
                && r.config.token == config.token
                && r.config.authentication == config.authentication
        };
        let registered = match &config.id {
            Some(id) => self
                .rt
                .store
                .push_config(task_id, id)
                .await?
                .is_some_and(|r| same(&r)),
            None => self.rt.store.push_configs(task_id).await?.iter().any(same),
        };
        if !registered {
            self.register_push(cx, task_id, config, 0).await?;
        }
        Ok(())
    }

    /// `CreateTaskPushNotificationConfig`: registers a webhook for the task's next events.
    /// The same `id` replaces an earlier registration.
    pub async fn create_push_config(
        &self,
        cx: &CallContext,
        req: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, Error> {
        self.pusher()?;
        req.validate()?;
        let task_id = req.task_id.clone().unwrap_or_default();
        let stored = self.load(cx, &task_id).await?;
        self.register_push(cx, &task_id, req, stored.version).await
    }

    async fn push_record(
        &self,
        cx: &CallContext,
        task: &TaskId,
        id: &str,
    ) -> Result<PushRecord, Error> {
        self.load(cx, task).await?;
        self.rt
            .store
            .push_configs(task)
            .await?
            .into_iter()
            .find(|r| r.id() == id)
            .ok_or_else(|| {
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
        self.pusher()?;
        req.validate()?;
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
        self.pusher()?;
        req.validate()?;
        self.load(cx, &req.task_id).await?;
        let configs = self.rt.store.push_configs(&req.task_id).await?;
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
        self.pusher()?;
        req.validate()?;
        self.load(cx, &req.task_id).await?;
        if self
            .rt
            .store
            .delete_push_config(&req.task_id, &req.id)
            .await?
        {
            self.rt.store.sync().await?;
        }
        Ok(Empty {})
    }

    /// Webhook registrations of a task that gave up delivering, with why (for operators).
    pub async fn dead_letters(&self, task: &TaskId) -> Result<Vec<PushRecord>, Error> {
        Ok(self
            .rt
            .store
            .push_configs(task)
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
