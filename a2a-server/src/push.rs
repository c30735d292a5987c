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

use crate::store::{DeadLetter, PushRecord, StoreError, TaskStore};
use a2a_core::{Error, StreamResponse, TaskId, Timestamp};
use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, SocketAddr};
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

    fn host_allowed(&self, host: &str) -> bool {
        self.allow.iter().any(|r| match r {
            AllowRule::Host(h) => h.eq_ignore_ascii_case(host.trim_end_matches('.')),
            AllowRule::Net(..) => false,
        })
    }

    fn ip_allowed(&self, ip: IpAddr) -> bool {
        !is_forbidden(ip)
            || self.allow.iter().any(|r| match r {
                AllowRule::Net(net, prefix) => in_net(ip, *net, *prefix),
                AllowRule::Host(_) => false,
            })
    }

    /// Checks a webhook URL before registering it: an http(s) URL whose host, if it is an
    /// address, is allowed. (Host names are checked when resolved, at every delivery.)
    pub(crate) fn check_url(&self, url: &str) -> Result<reqwest::Url, Error> {
        let refuse = |why: String| Error::invalid_params("url", why);
        let parsed =
            reqwest::Url::parse(url).map_err(|e| refuse(format!("{url:?} is not a URL: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(refuse(format!("{url:?} must be an http or https URL")));
        }
        let host = parsed
            .host_str()
            .ok_or_else(|| refuse(format!("{url:?} has no host")))?;
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let refused = match bare.parse::<IpAddr>() {
            Ok(ip) => !self.ip_allowed(ip),
            Err(_) => {
                let name = bare.trim_end_matches('.').to_ascii_lowercase();
                (name == "localhost" || name.ends_with(".localhost")) && !self.host_allowed(&name)
            }
        };
        if refused {
            return Err(refuse(format!(
                "{url:?} points to a loopback, private or reserved address; webhooks there are refused"
            )));
        }
        Ok(parsed)
    }

    fn backoff_for(&self, failures: u32) -> Duration {
        let exp = failures.saturating_sub(1).min(20);
        self.initial_backoff
            .saturating_mul(1u32 << exp)
            .min(self.max_backoff)
    }
}

/// An allow-list entry.
#[derive(Clone, Debug, PartialEq, Eq)]
enum AllowRule {
    Host(String),
    Net(IpAddr, u8),
}

impl AllowRule {
    fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        let (addr, prefix) = match s.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (s, None),
        };
        if let Ok(ip) = addr.trim_matches(['[', ']']).parse::<IpAddr>() {
            let max = if ip.is_ipv4() { 32 } else { 128 };
            let prefix = match prefix {
                Some(p) => p
                    .parse::<u8>()
                    .ok()
                    .filter(|p| *p <= max)
                    .ok_or_else(|| format!("{s:?}: bad prefix length"))?,
                None => max,
            };
            return Ok(AllowRule::Net(ip, prefix));
        }
        if prefix.is_some() || s.is_empty() || s.contains(['/', ':', ' ']) {
            return Err(format!("{s:?} is neither a host name nor an address range"));
        }
        Ok(AllowRule::Host(s.to_ascii_lowercase()))
    }
}

fn in_net(ip: IpAddr, net: IpAddr, prefix: u8) -> bool {
    match (ip, net) {
        (IpAddr::V4(a), IpAddr::V4(n)) => {
            let mask = if prefix == 0 {
                0
            } else {
                u32::MAX << (32 - u32::from(prefix))
            };
            u32::from(a) & mask == u32::from(n) & mask
        }
        (IpAddr::V6(a), IpAddr::V6(n)) => {
            let mask = if prefix == 0 {
                0
            } else {
                u128::MAX << (128 - u32::from(prefix))
            };
            u128::from(a) & mask == u128::from(n) & mask
        }
        (IpAddr::V6(a), IpAddr::V4(_)) => a
            .to_ipv4_mapped()
            .is_some_and(|v4| in_net(IpAddr::V4(v4), net, prefix)),
        _ => false,
    }
}

/// Addresses a webhook must not reach: loopback, private (RFC 1918, unique local), link-local
/// (including 169.254.169.254, cloud metadata), unspecified, multicast, broadcast, shared
/// (CGNAT), documentation and other reserved ranges.
pub fn is_forbidden(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_multicast()
                || v4.is_broadcast()
                || v4.is_documentation()
                || o[0] == 0
                || (o[0] == 100 && (64..128).contains(&o[1]))
                || o[0] >= 240
                || (o[0] == 192 && o[1] == 0 && o[2] == 0)
                || (o[0] == 198 && (18..20).contains(&o[1]))
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_forbidden(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00 // unique local
                || (first & 0xffc0) == 0xfe80 // link-local
                || (first & 0xffc0) == 0xfec0 // site-local
                || first == 0x2001 && v6.segments()[1] == 0x0db8 // documentation
        }
    }
}

/// Resolves webhook host names, keeping only addresses the guard allows: the check happens on
/// the address the connection will use, so DNS rebinding cannot slip past it.
struct GuardedResolver(Arc<PushSettings>);

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let settings = self.0.clone();
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let all = settings.host_allowed(&host);
            let allowed: Vec<SocketAddr> = addrs
                .into_iter()
                .filter(|a| all || settings.ip_allowed(a.ip()))
                .collect();
            if allowed.is_empty() {
                return Err(format!(
                    "webhook host {host} resolves only to refused (private or reserved) addresses"
                )
                .into());
            }
            Ok(Box::new(allowed.into_iter()) as reqwest::dns::Addrs)
        })
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
        let guard = settings.clone();
        let http = reqwest::Client::builder()
            .dns_resolver(Arc::new(GuardedResolver(settings.clone())))
            .timeout(settings.timeout)
            .connect_timeout(settings.timeout)
            .tcp_nodelay(true)
            .user_agent(concat!("a2a-rust-push/", env!("CARGO_PKG_VERSION")))
            .redirect(reqwest::redirect::Policy::custom(move |attempt| {
                let first_host = attempt
                    .previous()
                    .first()
                    .and_then(|u| u.host_str().map(str::to_owned));
                if attempt.previous().len() > 5 {
                    attempt.error("too many redirects")
                } else if first_host.as_deref() != attempt.url().host_str() {
                    attempt.error("a webhook may only redirect on its own host")
                } else if guard.check_url(attempt.url().as_str()).is_err() {
                    attempt.error("redirect to a refused address")
                } else {
                    attempt.follow()
                }
            }))
            .build()?;
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

    /// Posts one event, retrying with backoff; `Err` after the last attempt.
    async fn deliver(
        &self,
        record: &PushRecord,
        seq: u64,
        event: &StreamResponse,
    ) -> Result<(), String> {
        let config = &record.config;
        let task = config.task_id.clone().unwrap_or_default();
        let (body, content_type) = if record.v03 {
            (
                a2a_core::v03::encode_stream_event(event).to_string(),
                "application/json",
            )
        } else {
            (
                serde_json::to_string(event).map_err(|e| e.to_string())?,
                "application/a2a+json",
            )
        };
        let mut last_error = String::new();
        for attempt in 1..=self.settings.max_attempts {
            if let Err(e) = self.settings.check_url(&config.url) {
                return Err(e.message);
            }
            let mut request = self
                .http
                .post(&config.url)
                .header(reqwest::header::CONTENT_TYPE, content_type)
                .header("A2A-Notification-Id", format!("{task}:{seq}"))
                .body(body.clone());
            if let Some(auth) = &config.authentication {
                let value = match &auth.credentials {
                    Some(c) => format!("{} {c}", auth.scheme),
                    None => auth.scheme.clone(),
                };
                request = request.header(reqwest::header::AUTHORIZATION, value);
            }
            if let Some(token) = &config.token {
                request = request
                    .header("X-A2A-Notification-Token", token)
                    .header("A2A-Notification-Token", token);
            }
            match request.send().await {
                Ok(r) if r.status().is_success() => return Ok(()),
                Ok(r) => last_error = format!("HTTP {}", r.status()),
                Err(e) => {
                    last_error = std::error::Error::source(&e)
                        .map_or_else(|| e.to_string(), |s| format!("{e}: {s}"));
                }
            }
            if attempt < self.settings.max_attempts {
                tracing::debug!(task = %task, seq, attempt, error = %last_error, "webhook delivery failed; retrying");
                tokio::select! {
                    () = tokio::time::sleep(self.settings.backoff_for(attempt)) => {}
                    () = self.shutdown.cancelled() => return Err("server shutting down".into()),
                }
            }
        }
        Err(last_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_loopback_link_local_and_reserved_addresses_are_forbidden() {
        for bad in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "100.64.0.1",
            "::1",
            "::",
            "fe80::1",
            "fc00::1",
            "fd12::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
        ] {
            assert!(is_forbidden(bad.parse().unwrap()), "{bad} must be refused");
        }
        for good in ["8.8.8.8", "172.32.0.1", "93.184.216.34", "2606:4700::1111"] {
            assert!(
                !is_forbidden(good.parse().unwrap()),
                "{good} must be allowed"
            );
        }
    }

    #[test]
    fn the_allow_list_exempts_hosts_and_ranges() {
        let s = PushSettings::default()
            .allow("127.0.0.1")
            .unwrap()
            .allow("10.0.0.0/8")
            .unwrap()
            .allow("hooks.internal")
            .unwrap();
        assert!(s.ip_allowed("127.0.0.1".parse().unwrap()));
        assert!(!s.ip_allowed("127.0.0.2".parse().unwrap()));
        assert!(s.ip_allowed("10.9.8.7".parse().unwrap()));
        assert!(!s.ip_allowed("192.168.0.1".parse().unwrap()));
        assert!(s.host_allowed("HOOKS.internal"));
        assert!(s.check_url("http://127.0.0.1:9/h").is_ok());
        assert!(s.check_url("http://192.168.0.1/h").is_err());
        assert!(s.check_url("ftp://example.com/h").is_err());
        assert!(
            PushSettings::default()
                .check_url("http://localhost:8080/h")
                .is_err()
        );
        assert!(PushSettings::default().check_url("http://[::1]/h").is_err());
        assert!(
            PushSettings::default()
                .check_url("https://hooks.example.com/a2a")
                .is_ok()
        );
        assert!(PushSettings::default().allow("10.0.0.0/33").is_err());
        assert!(PushSettings::default().allow("not a host").is_err());
    }

    #[test]
    fn backoff_doubles_up_to_the_maximum() {
        let s =
            PushSettings::default().backoff(Duration::from_millis(100), Duration::from_millis(700));
        let d: Vec<u128> = (1..=5).map(|n| s.backoff_for(n).as_millis()).collect();
        assert_eq!(d, [100, 200, 400, 700, 700]);
    }
}
