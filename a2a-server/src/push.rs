//! Push notifications: webhook deliveries that arrive even when the receiver or the server
//! restarts, and never reach an address they should not.
//!
//! **Durable outbox.** A task's event log is the outbox. Each webhook registration
//! ([`PushRecord`]) remembers the sequence number of the last event it delivered; every event
//! above it is still to be posted. An event and its delivery job are therefore durable in the
//! same write, deliveries resume after a restart, and each webhook gets its events in order.
//!
//! **Replicas.** Several servers sharing one store may each run a worker for the same
//! registration. A worker posts only while it holds the registration's delivery lease in the
//! store ([`PushStore::acquire_delivery`](crate::PushStore::acquire_delivery), under the
//! server's [`replica_id`](crate::ServerBuilder::replica_id), renewed while it posts and
//! retries), reads the cursor after taking it, and moves the cursor with a compare-and-swap
//! ([`PushStore::advance_delivery`](crate::PushStore::advance_delivery)): each event is posted
//! by one replica, once (unless a replica stalls past its lease, or dies between a post and
//! its cursor write: then the next holder posts that event again, with the same
//! `A2A-Notification-Id`).
//!
//! **Delivery.** One worker per registration posts each event as a `StreamResponse`
//! (`Content-Type: application/a2a+json`; the v0.3 shape and `application/json` for
//! registrations made through v0.3), with `Authorization: <scheme> <credentials>` when
//! configured, the token in `X-A2A-Notification-Token` and `A2A-Notification-Token`, and
//! `A2A-Notification-Id: <taskId>:<seq>` for the receiver to de-duplicate on. A failed post is
//! retried with exponential backoff; after the last attempt the registration gets a
//! [`DeadLetter`], logged, and stops. Delivery never blocks or fails the task.
//!
//! A shutdown stops the workers without touching the registrations: an event whose delivery
//! was being retried stays pending, and the next process delivers it (never a dead letter
//! for the shutdown). A task has at most [`PushSettings::max_configs_per_task`] webhooks
//! (100 by default); registering, and every event, cost the same whatever that number is. A
//! webhook URL is at most [`MAX_WEBHOOK_URL_BYTES`] (8 KiB) long, on every binding.
//!
//! **SSRF guard.** Webhook URLs that resolve to loopback, private, link-local (cloud
//! metadata), unspecified, multicast or other reserved addresses are refused, on the address
//! actually resolved at connect time and on every redirect (redirects must stay on the same
//! host), unless the host or address is on the allow-list. IPv6 addresses that carry an IPv4
//! one (IPv4-mapped or -compatible, NAT64, 6to4, Teredo, ISATAP) are judged by the IPv4
//! address they lead to.
//!
//! **Proxies.** Deliveries ignore the proxy environment variables (`HTTP_PROXY` and the
//! like): a proxy is handed the host name, resolves it itself, and would connect wherever it
//! points, past the guard. With an explicit [`PushSettings::proxy`], each attempt first
//! resolves the webhook's host name and checks every address it gets (refusing the delivery
//! attempt if any is refused), then hands the request, with the name, to the proxy, which
//! resolves the name again. Between those two resolutions a DNS-rebinding host could change
//! its answer: keeping the proxy from reaching internal addresses is then the proxy's own
//! job, as it is for any other client of it. (Connecting to the checked address instead
//! would break TLS through the proxy, which verifies the certificate against the name.)

mod deliver;
mod guard;

pub use guard::{MAX_WEBHOOK_URL_BYTES, is_forbidden};

use crate::store::{DeadLetter, PushRecord, Store, StoreError};
use a2a_core::{Error, TaskId, Timestamp};
use deliver::{Failure, Held};
use guard::AllowRule;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

/// How webhooks are delivered. Build with [`PushSettings::default`] and the setters.
#[derive(Clone, Debug)]
#[must_use]
pub struct PushSettings {
    allow: Vec<AllowRule>,
    max_attempts: u32,
    initial_backoff: Duration,
    max_backoff: Duration,
    timeout: Duration,
    max_configs_per_task: usize,
    proxy: Option<reqwest::Url>,
}

/// The default of [`PushSettings::max_configs_per_task`].
pub const DEFAULT_MAX_CONFIGS_PER_TASK: usize = 100;

impl Default for PushSettings {
    /// 12 attempts, backoff from 1 s doubling up to 5 min (about 25 minutes in all), 10 s
    /// timeout per post, nothing private allowed, at most
    /// [`DEFAULT_MAX_CONFIGS_PER_TASK`] webhooks per task, no proxy.
    fn default() -> Self {
        Self {
            allow: Vec::new(),
            max_attempts: 12,
            initial_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(300),
            timeout: Duration::from_secs(10),
            max_configs_per_task: DEFAULT_MAX_CONFIGS_PER_TASK,
            proxy: None,
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

    /// The most webhook registrations one task may have (at least 1; default
    /// [`DEFAULT_MAX_CONFIGS_PER_TASK`]). Each one is a worker and a post per event, so the
    /// limit bounds what one client can make the server do. Registering one more is refused
    /// with `InvalidParams` (-32602, HTTP 400, `INVALID_PARAMS`, a field violation on `taskId`
    /// and the limit in the `ErrorInfo` metadata): A2A has no resource-exhausted error, and
    /// of its kinds this is the one that tells a client its request, as sent, will never
    /// succeed, without suggesting that push notifications are unsupported
    /// (`PushNotificationNotSupported`) or that the operation is (`UnsupportedOperation`).
    /// Re-registering an existing config id replaces it and is not counted again; a
    /// `SendMessage` that would go past the limit fails as a whole.
    pub fn max_configs_per_task(mut self, n: usize) -> Self {
        self.max_configs_per_task = n.max(1);
        self
    }

    /// Sends webhook deliveries through this HTTP proxy (`http://proxy.internal:3128`). Off
    /// by default, and the proxy environment variables (`HTTP_PROXY`, `HTTPS_PROXY`,
    /// `ALL_PROXY`) are ignored: a proxy resolves host names itself, so see the module docs
    /// for how the SSRF guard works with one.
    pub fn proxy(mut self, url: &str) -> Result<Self, String> {
        let parsed =
            reqwest::Url::parse(url).map_err(|e| format!("{url:?} is not a proxy URL: {e}"))?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
            return Err(format!("{url:?}: the proxy must be an http or https URL"));
        }
        self.proxy = Some(parsed);
        Ok(self)
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
    store: Arc<dyn Store>,
    /// This server's name in the delivery leases.
    owner: Arc<str>,
    /// How long a delivery lease lasts without renewal.
    lease_ttl: Duration,
    http: reqwest::Client,
    settings: Arc<PushSettings>,
    /// With replicas: the bus, on which a waiting worker hears the events that other replicas
    /// write (this replica's engine rings its workers itself).
    bus: Option<Arc<dyn crate::engine::EventBus>>,
    /// Live registrations (not dead-lettered, task not finished) by task and config id, with
    /// the worker delivering each, if one runs. An event rings the workers of its task (and
    /// starts the missing ones) without reading the store.
    live: Mutex<HashMap<TaskId, Workers>>,
    /// Held while a registration is counted against the per-task limit and stored, so that
    /// concurrent registrations cannot pass the limit together.
    registering: tokio::sync::Mutex<()>,
    shutdown: CancellationToken,
    /// Delivery counts, when metrics are on.
    metrics: Option<Arc<crate::telemetry::MetricsInner>>,
}

/// A task's live registrations by config id, with the bell of each one's running worker.
type Workers = HashMap<String, Option<Arc<Bell>>>;

/// Wakes a worker. `rung` tells a worker about to stop that it was rung meanwhile.
#[derive(Debug, Default)]
struct Bell {
    notify: Notify,
    rung: AtomicBool,
}

impl Bell {
    fn ring(&self) {
        self.rung.store(true, Ordering::SeqCst);
        self.notify.notify_one();
    }
}

/// How many tasks with webhooks [`Pusher::resume_all`] reads per page.
const RESUME_PAGE: usize = 256;

/// What a worker does after one turn holding the delivery lease.
enum Turn {
    /// Stop.
    Stop(Stop),
    /// Wait for the next event (nothing to deliver now).
    Wait,
    /// Look again now (the registration changed, or the lease was lost).
    Again,
}

/// Why a worker stopped.
enum Stop {
    /// The registration is gone, dead-lettered, or has nothing more to deliver, ever.
    Done,
    /// It may have more later (the task does not exist yet, a store error, shutdown): the next
    /// event of the task starts a worker again.
    Idle,
}

impl std::fmt::Debug for Pusher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pusher").finish_non_exhaustive()
    }
}

impl Pusher {
    /// A pusher with a random name in the delivery leases, and leases of
    /// [`DEFAULT_LEASE_TTL`](crate::engine::DEFAULT_LEASE_TTL).
    pub(crate) fn new(
        store: Arc<dyn Store>,
        settings: PushSettings,
        shutdown: CancellationToken,
    ) -> Result<Self, reqwest::Error> {
        let settings = Arc::new(settings);
        let http = deliver::client(&settings)?;
        Ok(Self {
            store,
            owner: uuid::Uuid::new_v4().to_string().into(),
            lease_ttl: crate::engine::DEFAULT_LEASE_TTL,
            http,
            settings,
            bus: None,
            live: Mutex::new(HashMap::new()),
            registering: tokio::sync::Mutex::new(()),
            shutdown,
            metrics: None,
        })
    }

    /// Names this pusher `owner` in the delivery leases, which last `ttl` without renewal.
    pub(crate) fn with_lease(mut self, owner: Arc<str>, ttl: Duration) -> Self {
        self.owner = owner;
        self.lease_ttl = ttl;
        self
    }

    /// Has waiting workers also listen on `bus`, for the events of their task that other
    /// replicas write (the task may run on one replica, its webhook be registered on another).
    pub(crate) fn with_bus(mut self, bus: Arc<dyn crate::engine::EventBus>) -> Self {
        self.bus = Some(bus);
        self
    }

    /// Counts deliveries, retries and dead letters in `metrics`.
    pub(crate) fn with_metrics(
        mut self,
        metrics: Option<Arc<crate::telemetry::MetricsInner>>,
    ) -> Self {
        self.metrics = metrics;
        self
    }

    pub(crate) fn settings(&self) -> &PushSettings {
        &self.settings
    }

    /// Stores a registration (new, or replacing the one with the same task and config id)
    /// unless that would give its task more than [`PushSettings::max_configs_per_task`], and
    /// starts delivering to it. Constant work, whatever the task's other registrations.
    pub(crate) async fn register(self: &Arc<Self>, record: PushRecord) -> Result<(), Error> {
        let task = record.config.task_id.clone().unwrap_or_default();
        let id = record.id().to_owned();
        {
            let _turn = self.registering.lock().await;
            let limit = self.settings.max_configs_per_task;
            if self.store.push_config(&task, &id).await?.is_none()
                && self.store.push_config_count(&task).await? >= limit
            {
                return Err(too_many_configs(&task, limit));
            }
            self.store.put_push_config(record).await?;
        }
        self.store.sync().await?;
        self.start(&task, &id);
        Ok(())
    }

    /// Resumes deliveries left pending by a previous process, reading the tasks with webhooks
    /// a page at a time.
    pub(crate) async fn resume_all(self: &Arc<Self>) -> Result<(), StoreError> {
        let mut after: Option<TaskId> = None;
        loop {
            let page = self
                .store
                .tasks_with_push_configs(after.as_ref(), RESUME_PAGE)
                .await?;
            for task in &page {
                for record in self.store.push_configs(task).await? {
                    if record.dead_letter.is_none() {
                        self.start(task, record.id());
                    }
                }
            }
            if page.len() < RESUME_PAGE {
                return Ok(());
            }
            after = page.last().cloned();
        }
    }

    /// Starts (or rings) the worker of one registration.
    fn start(self: &Arc<Self>, task: &TaskId, id: &str) {
        let mut live = self.live.lock().expect("push lock");
        let slot = live
            .entry(task.clone())
            .or_default()
            .entry(id.to_owned())
            .or_default();
        self.ring_or_spawn(task, id, slot);
    }

    fn ring_or_spawn(self: &Arc<Self>, task: &TaskId, id: &str, slot: &mut Option<Arc<Bell>>) {
        match slot {
            Some(bell) => bell.ring(),
            None => {
                let bell = Arc::new(Bell::default());
                *slot = Some(bell.clone());
                let this = self.clone();
                // The worker's deliveries belong to the trace of the request that started it
                // (the registration, or the event that found the worker idle).
                let span = tracing::info_span!(
                    target: "a2a::server",
                    "a2a.push",
                    otel.name = "push",
                    a2a.task.id = %task,
                    a2a.push.config.id = %id,
                );
                let (task, id) = (task.clone(), id.to_owned());
                tokio::spawn(async move { this.work(task, id, bell).await }.instrument(span));
            }
        }
    }

    /// Called after every committed event of `task`: rings its workers, starting those that
    /// are not running. Reads nothing from the store.
    pub(crate) async fn wake(self: &Arc<Self>, task: &TaskId) {
        let mut live = self.live.lock().expect("push lock");
        if let Some(ids) = live.get_mut(task) {
            for (id, slot) in ids.iter_mut() {
                self.ring_or_spawn(task, id, slot);
            }
        }
    }

    /// Runs one registration's deliveries, then takes it off the live set (or leaves it
    /// there, idle, for the next event to restart), unless it was rung meanwhile.
    async fn work(self: Arc<Self>, task: TaskId, id: String, bell: Arc<Bell>) {
        loop {
            bell.rung.store(false, Ordering::SeqCst);
            let stop = self.deliver_pending(&task, &id, &bell).await;
            let mut live = self.live.lock().expect("push lock");
            if bell.rung.load(Ordering::SeqCst) && !self.shutdown.is_cancelled() {
                continue; // a registration or an event came after the last look
            }
            let Some(ids) = live.get_mut(&task) else {
                return;
            };
            match stop {
                Stop::Done => {
                    ids.remove(&id);
                }
                Stop::Idle => {
                    if let Some(slot) = ids.get_mut(&id) {
                        *slot = None;
                    }
                }
            }
            if ids.is_empty() {
                live.remove(&task);
            }
            return;
        }
    }

    /// Delivers one registration's events in order until none is left and the task is
    /// finished, the registration is deleted, it dead-letters, or the server shuts down.
    /// A shutdown leaves undelivered events pending (the cursor where it is) for the next
    /// process to resume. Each turn holds the registration's delivery lease; while another
    /// replica holds it, the worker looks again from time to time (or when rung).
    async fn deliver_pending(&self, task: &TaskId, id: &str, bell: &Bell) -> Stop {
        // Subscribed before the first look at the log, so that no event written elsewhere
        // after it goes unheard; without replicas, the bell is enough.
        let mut elsewhere = match &self.bus {
            Some(bus) => bus.subscribe(task),
            None => Box::pin(futures::stream::pending()),
        };
        loop {
            let held = match self.acquire(task, id).await {
                Ok(held) => held,
                Err(e) => {
                    tracing::error!(task = %task, error = %e, "taking a webhook delivery lease failed");
                    return Stop::Idle;
                }
            };
            let wait = if held {
                let turn = self.turn(task, id).await;
                if let Err(e) = self.store.release_delivery(task, id, &self.owner).await {
                    tracing::warn!(task = %task, error = %e, "giving up a webhook delivery lease failed");
                }
                match turn {
                    Turn::Stop(stop) => return stop,
                    Turn::Again => continue,
                    Turn::Wait => Duration::from_secs(30),
                }
            } else {
                // Another replica is delivering: look again when its lease may be free.
                (self.lease_ttl / 4).min(Duration::from_secs(1))
            };
            tokio::select! {
                () = bell.notify.notified() => {}
                // (Not while another replica holds the lease: it delivers.)
                _ = futures::StreamExt::next(&mut elsewhere), if held => {}
                () = tokio::time::sleep(wait) => {}
                () = self.shutdown.cancelled() => return Stop::Idle,
            }
        }
    }

    /// One turn with the delivery lease held: reads the registration and its pending events
    /// (after taking the lease, so no other replica delivers them meanwhile) and posts them.
    async fn turn(&self, task: &TaskId, id: &str) -> Turn {
        let record = match self.store.push_config(task, id).await {
            Ok(r) => r,
            Err(e) => {
                tracing::error!(task = %task, error = %e, "reading a webhook registration failed");
                return Turn::Stop(Stop::Idle);
            }
        };
        let Some(mut record) = record.filter(|r| r.dead_letter.is_none()) else {
            return Turn::Stop(Stop::Done);
        };
        let read = self.store.events(task, record.delivered, 64).await;
        let read = match read {
            Ok(e) if e.is_empty() => Ok(e),
            Ok(e) => crate::store::durable(&*self.store, e).await,
            Err(e) => Err(e),
        };
        let events = match read {
            Ok(e) => e,
            Err(e) => {
                tracing::error!(task = %task, error = %e, "reading the event log for a webhook failed");
                return Turn::Stop(Stop::Idle);
            }
        };
        if events.is_empty() {
            return match self.store.get(task).await {
                Ok(Some(t))
                    if t.task.status.state.is_terminal() && t.version <= record.delivered =>
                {
                    Turn::Stop(Stop::Done)
                }
                Ok(Some(_)) => Turn::Wait,
                // Not created yet (its first event starts a worker again), or unreadable.
                Ok(None) | Err(_) => Turn::Stop(Stop::Idle),
            };
        }
        let mut held = Held::now();
        for e in events {
            let expected = record.delivered;
            // A client span per delivery (its retries included).
            let span = tracing::info_span!(
                target: "a2a::server",
                "a2a.push.deliver",
                otel.name = "push.deliver",
                otel.kind = "client",
                a2a.task.id = %task,
                a2a.push.event.seq = e.seq,
                url.full = %record.config.url,
            );
            let delivered = self
                .deliver(&record, &mut held, e.seq, &e.event)
                .instrument(span)
                .await;
            match delivered {
                Ok(()) => record.delivered = e.seq,
                Err(Failure::ShuttingDown) => return Turn::Stop(Stop::Idle),
                Err(Failure::LeaseLost) => return Turn::Again,
                Err(Failure::GaveUp(error)) => {
                    if let Some(metrics) = &self.metrics {
                        metrics.push_dead_letter();
                    }
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
            if !self.save_progress(&record, expected).await {
                return Turn::Again;
            }
            if record.dead_letter.is_some() {
                return Turn::Stop(Stop::Done);
            }
            if self.shutdown.is_cancelled() {
                return Turn::Stop(Stop::Idle);
            }
        }
        Turn::Again
    }

    /// Moves the stored cursor from `expected` to the record's. `false` when it did not move:
    /// the registration was deleted or replaced (the new one starts afresh), another replica
    /// moved it, or the store failed; the worker then reads it again.
    async fn save_progress(&self, record: &PushRecord, expected: u64) -> bool {
        let task = record.config.task_id.as_ref().map_or("", TaskId::as_str);
        let saved = match self.store.advance_delivery(record, expected).await {
            Ok(saved) => saved,
            Err(e) => {
                tracing::error!(task, error = %e, "recording webhook progress failed");
                return false;
            }
        };
        if saved && let Err(e) = self.store.sync().await {
            tracing::error!(task, error = %e, "recording webhook progress failed");
        }
        saved
    }
}

/// The error of a registration beyond [`PushSettings::max_configs_per_task`].
fn too_many_configs(task: &TaskId, limit: usize) -> Error {
    Error::invalid_params(
        "taskId",
        format!(
            "task {task} already has {limit} push notification configs, the most this server \
             keeps per task; delete one, or re-register an existing id to replace it"
        ),
    )
    .with_metadata("taskId", task.as_str())
    .with_metadata("limit", limit.to_string())
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
