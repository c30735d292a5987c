//! Push notifications: webhook deliveries that arrive even when the receiver or the server
//! restarts, and never reach an address they should not.
//!
//! **Durable outbox.** A task's event log is the outbox. Each webhook registration
//! ([`PushRecord`]) remembers the sequence number of the last event it delivered; every event
//! above it is still to be posted. An event and its delivery job are therefore durable in the
//! same write, deliveries resume after a restart, and each webhook gets its events in order.
//!
//! **Delivery.** One worker per registration posts each event as a `StreamResponse`
//! (`Content-Type: application/a2a+json`; the v0.3 shape and `application/json` for
//! registrations made through v0.3), with `Authorization: <scheme> <credentials>` when
//! configured, the token in `X-A2A-Notification-Token` and `A2A-Notification-Token`, and
//! `A2A-Notification-Id: <taskId>:<seq>` for the receiver to de-duplicate on. A failed post is
//! retried with exponential backoff; after the last attempt the registration gets a
//! [`DeadLetter`], logged, and stops. Delivery never blocks or fails the task.
//!
//! **SSRF guard.** Webhook URLs that resolve to loopback, private, link-local (cloud
//! metadata), unspecified, multicast or other reserved addresses are refused, on the address
//! actually resolved at connect time and on every redirect (redirects must stay on the same
//! host), unless the host or address is on the allow-list.

mod deliver;
mod guard;

pub use guard::is_forbidden;

use crate::store::{DeadLetter, PushRecord, StoreError, TaskStore};
use a2a_core::{TaskId, Timestamp};
use guard::AllowRule;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// How webhooks are delivered. Build with [`PushSettings::default`] and the setters.
#[derive(Clone, Debug)]
#[must_use]
pub struct PushSettings {
    allow: Vec<AllowRule>,
    max_attempts: u32,
    initial_backoff: Duration,
    max_backoff: Duration,
    timeout: Duration,
}

impl Default for PushSettings {
    /// 12 attempts, backoff from 1 s doubling up to 5 min (about 25 minutes in all), 10 s
    /// timeout per post, nothing private allowed.
    fn default() -> Self {
        Self {
            allow: Vec::new(),
            max_attempts: 12,
            initial_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(300),
            timeout: Duration::from_secs(10),
        }
    }
}

impl PushSettings {
    /// Exempts a host name (`hooks.internal`) or an address range (`10.0.0.0/8`,
    /// `127.0.0.1`, `::1/128`) from the SSRF guard, for private deployments and tests.
    pub fn allow(mut self, host_or_cidr: &str) -> Result<Self, String> {
        self.allow.push(AllowRule::parse(host_or_cidr)?);
        Ok(self)
    }

    /// Attempts per event before giving up (at least 1).
    pub fn max_attempts(mut self, n: u32) -> Self {
        self.max_attempts = n.max(1);
        self
    }

    /// The first retry delay and the largest one.
    pub fn backoff(mut self, initial: Duration, max: Duration) -> Self {
        self.initial_backoff = initial;
        self.max_backoff = max.max(initial);
        self
    }

    /// The timeout of one post.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    fn backoff_for(&self, failures: u32) -> Duration {
        let exp = failures.saturating_sub(1).min(20);
        self.initial_backoff
            .saturating_mul(1u32 << exp)
            .min(self.max_backoff)
    }
}

/// Delivers webhooks, one worker per registration.
pub(crate) struct Pusher {
    store: Arc<dyn TaskStore>,
    http: reqwest::Client,
    settings: Arc<PushSettings>,
    /// Running workers, by (task, config id), with the bell that wakes them.
    workers: Mutex<HashMap<(TaskId, String), Arc<Notify>>>,
    /// Tasks that have registrations: the hot path only checks this set.
    tasks: Mutex<HashSet<TaskId>>,
    shutdown: CancellationToken,
}

impl std::fmt::Debug for Pusher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pusher").finish_non_exhaustive()
    }
}

impl Pusher {
    pub(crate) fn new(
        store: Arc<dyn TaskStore>,
        settings: PushSettings,
        shutdown: CancellationToken,
    ) -> Result<Self, reqwest::Error> {
        let settings = Arc::new(settings);
        let http = deliver::client(&settings)?;
        Ok(Self {
            store,
            http,
            settings,
            workers: Mutex::new(HashMap::new()),
            tasks: Mutex::new(HashSet::new()),
            shutdown,
        })
    }

    pub(crate) fn settings(&self) -> &PushSettings {
        &self.settings
    }

    /// Notes that `task` has registrations (so its events wake workers).
    pub(crate) fn watch(&self, task: &TaskId) {
        self.tasks.lock().expect("push lock").insert(task.clone());
    }

    /// Resumes deliveries left pending by a previous process.
    pub(crate) async fn resume_all(self: &Arc<Self>) -> Result<(), StoreError> {
        for task in self.store.tasks_with_push_configs().await? {
            self.watch(&task);
            self.wake(&task).await;
        }
        Ok(())
    }

    /// Called after every committed event of `task`: starts or wakes its workers.
    pub(crate) async fn wake(self: &Arc<Self>, task: &TaskId) {
        if !self.tasks.lock().expect("push lock").contains(task) {
            return;
        }
        let records = match self.store.push_configs(task).await {
            Ok(r) => r,
            Err(e) => {
                tracing::error!(task = %task, error = %e, "reading webhook registrations failed");
                return;
            }
        };
        for record in records.into_iter().filter(|r| r.dead_letter.is_none()) {
            let key = (task.clone(), record.id().to_owned());
            let mut workers = self.workers.lock().expect("push lock");
            if let Some(bell) = workers.get(&key) {
                bell.notify_one();
                continue;
            }
            let bell = Arc::new(Notify::new());
            workers.insert(key.clone(), bell.clone());
            drop(workers);
            let this = self.clone();
            tokio::spawn(async move { this.work(key, bell).await });
        }
    }

    /// Delivers one registration's events in order until none is left and the task is
    /// finished, the registration is deleted, it dead-letters, or the server shuts down.
    async fn work(self: Arc<Self>, key: (TaskId, String), bell: Arc<Notify>) {
        let (task, id) = &key;
        loop {
            let record = match self.store.push_configs(task).await {
                Ok(records) => records.into_iter().find(|r| r.id() == id),
                Err(e) => {
                    tracing::error!(task = %task, error = %e, "reading a webhook registration failed");
                    None
                }
            };
            let Some(mut record) = record.filter(|r| r.dead_letter.is_none()) else {
                break;
            };
            let events = match self.store.events(task, record.delivered, 64).await {
                Ok(e) => e,
                Err(e) => {
                    tracing::error!(task = %task, error = %e, "reading the event log for a webhook failed");
                    break;
                }
            };
            if events.is_empty() {
                let finished = match self.store.get(task).await {
                    Ok(Some(t)) => {
                        t.task.status.state.is_terminal() && t.version <= record.delivered
                    }
                    _ => true,
                };
                if finished {
                    break;
                }
                tokio::select! {
                    () = bell.notified() => continue,
                    () = tokio::time::sleep(Duration::from_secs(30)) => continue,
                    () = self.shutdown.cancelled() => break,
                }
            }
            for e in events {
                match self.deliver(&record, e.seq, &e.event).await {
                    Ok(()) => record.delivered = e.seq,
                    Err(error) => {
                        tracing::error!(
                            task = %task, config = %id, seq = e.seq, url = %record.config.url, %error,
                            "webhook delivery gave up (dead letter)"
                        );
                        record.dead_letter = Some(DeadLetter {
                            seq: e.seq,
                            error,
                            at_ms: Timestamp::now().unix_millis(),
                        });
                    }
                }
                if let Err(e) = self.save_progress(&record).await {
                    tracing::error!(task = %task, error = %e, "recording webhook progress failed");
                }
                if record.dead_letter.is_some() || self.shutdown.is_cancelled() {
                    break;
                }
            }
            if self.shutdown.is_cancelled() {
                break;
            }
        }
        self.workers.lock().expect("push lock").remove(&key);
    }

    /// Saves the cursor unless the registration was deleted or replaced meanwhile.
    async fn save_progress(&self, record: &PushRecord) -> Result<(), StoreError> {
        let task = record.config.task_id.clone().unwrap_or_default();
        let current = self.store.push_configs(&task).await?;
        let Some(stored) = current.into_iter().find(|r| r.id() == record.id()) else {
            return Ok(()); // deleted
        };
        if stored.config != record.config {
            return Ok(()); // replaced: the new registration starts afresh
        }
        self.store.put_push_config(record.clone()).await?;
        self.store.sync().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_maximum() {
        let s =
            PushSettings::default().backoff(Duration::from_millis(100), Duration::from_millis(700));
        let d: Vec<u128> = (1..=5).map(|n| s.backoff_for(n).as_millis()).collect();
        assert_eq!(d, [100, 200, 400, 700, 700]);
    }
}
