//! Webhook registrations, as the engine keeps them: in the store's [`PushStore`], delivered by
//! the [`Pusher`](crate::push::Pusher) from the task's log.
//!
//! [`PushStore`]: crate::store::PushStore

use super::Engine;
use super::retry::Retry;
use crate::push::Pusher;
use crate::store::PushRecord;
use a2a_core::{Error, ErrorKind, TaskId, TaskPushNotificationConfig};
use std::sync::Arc;

/// The webhook a send registered on its new task, kept in case the task loses its message
/// claim to a duplicate on another replica (`joint` writes, `Outcome::Lost`): the send is then
/// answered as a retry of the winner, and its webhook follows it there.
pub(crate) struct Handoff {
    /// The config as the send asked for it.
    asked: TaskPushNotificationConfig,
    /// The config id it was registered under on the losing task.
    id: String,
    /// The payloads' form: (v0.3, with generations).
    form: (bool, bool),
}

impl Handoff {
    pub(crate) fn new(
        asked: TaskPushNotificationConfig,
        id: String,
        form: (bool, bool),
    ) -> Box<Self> {
        Box::new(Self { asked, id, form })
    }
}

impl Engine {
    /// The webhook delivery, or PushNotificationNotSupported when push notifications are off.
    pub(crate) fn pusher(&self) -> Result<&Arc<Pusher>, Error> {
        self.pusher.as_ref().ok_or_else(|| {
            Error::new(
                ErrorKind::PushNotificationNotSupported,
                "This agent does not support push notifications",
            )
        })
    }

    /// Stores a webhook registration for `task_id` (with a new config id unless it has one),
    /// delivering the events after `delivered`. Returns the config as registered.
    pub(crate) async fn register_webhook(
        &self,
        task_id: &TaskId,
        mut config: TaskPushNotificationConfig,
        (v03, generations): (bool, bool),
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
            v03,
            generations,
            delivered,
            dead_letter: None,
        };
        pusher.register(record).await?;
        // A webhook sees each change as it comes: a reveal (see `cell/outbox.rs`).
        if let Some(cell) = self.live_cell(task_id) {
            cell.outbox.watch();
        }
        Ok(config)
    }

    /// The push config of a retried send, answered with the task of its first send:
    /// registered on that task as the first send would have, delivering from the task's
    /// first event (a client that retries a send expects every event of the task at its
    /// webhook). Unless it is registered already: the same config id with the same URL, token
    /// and authentication, or, without an id, a registration with the same URL, token and
    /// authentication (the first send's own); then its delivery goes on where it is. The same
    /// id with another config replaces it, as `CreateTaskPushNotificationConfig` would.
    pub(crate) async fn register_retried_webhook(
        &self,
        task_id: &TaskId,
        config: TaskPushNotificationConfig,
        form: (bool, bool),
    ) -> Result<(), Error> {
        let same = |r: &PushRecord| {
            r.config.url == config.url
                && r.config.token == config.token
                && r.config.authentication == config.authentication
        };
        let registered = match &config.id {
            Some(id) => self.webhook(task_id, id).await?.is_some_and(|r| same(&r)),
            None => self.webhooks(task_id).await?.iter().any(same),
        };
        if !registered {
            self.register_webhook(task_id, config, form, 0).await?;
        }
        Ok(())
    }

    /// Moves the webhook of a send whose new task `lost` its message claim to `retry`'s task:
    /// the registration on the task that was never written goes, and the config is registered
    /// on the winner's task as a retried send's would be (unless the winner answered with a
    /// message: then there are no task events to deliver). The claim's key holds the caller's
    /// scope, so the winner's task is one the caller may see.
    pub(crate) async fn hand_over(
        &self,
        lost: &TaskId,
        webhook: Option<Box<Handoff>>,
        retry: &Retry,
    ) -> Result<(), Error> {
        let Some(handoff) = webhook else {
            return Ok(());
        };
        if let Err(e) = self.store.delete_push_config(lost, &handoff.id).await {
            tracing::warn!(task = %lost, error = %e, "could not remove the webhook of a send that lost its claim");
        }
        if retry.claim.reply.is_none() {
            let Handoff { asked, form, .. } = *handoff;
            self.register_retried_webhook(&retry.claim.task_id, asked, form)
                .await?;
        }
        Ok(())
    }

    /// A task's webhook registrations, in registration order.
    pub(crate) async fn webhooks(&self, task_id: &TaskId) -> Result<Vec<PushRecord>, Error> {
        Ok(self.store.push_configs(task_id).await?)
    }

    /// One webhook registration of a task, by config id.
    pub(crate) async fn webhook(
        &self,
        task_id: &TaskId,
        id: &str,
    ) -> Result<Option<PushRecord>, Error> {
        Ok(self.store.push_config(task_id, id).await?)
    }

    /// Removes a webhook registration, durably. Returns whether it existed.
    pub(crate) async fn delete_webhook(&self, task_id: &TaskId, id: &str) -> Result<bool, Error> {
        let deleted = self.store.delete_push_config(task_id, id).await?;
        if deleted {
            self.store.sync().await?;
        }
        Ok(deleted)
    }

    /// Removes every webhook registration of a task that never came to be (a refused send).
    pub(super) async fn forget_webhooks(&self, task_id: &TaskId) {
        if let Ok(configs) = self.store.push_configs(task_id).await {
            for config in configs {
                let _ = self.store.delete_push_config(task_id, config.id()).await;
            }
        }
    }
}
