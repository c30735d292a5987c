//! Posting events to webhooks: the HTTP client (guarded resolver, redirect policy), one
//! delivery with its retries, and the delivery lease held meanwhile.

use super::guard::{self, GuardedResolver};
use super::{PushSettings, Pusher};
use crate::store::{PushRecord, StoreError};
use a2a_core::{StreamResponse, TaskId};
use std::sync::Arc;
use tokio::time::Instant;

/// The webhook HTTP client: addresses checked at connect time, redirects only on the same host,
/// and no proxy but the one of [`PushSettings::proxy`] (the proxy environment variables are
/// ignored: a proxy would resolve webhook host names itself, out of the guard's sight).
pub(super) fn client(settings: &Arc<PushSettings>) -> Result<reqwest::Client, reqwest::Error> {
    let guard = settings.clone();
    let builder = match &settings.proxy {
        Some(proxy) => reqwest::Client::builder().proxy(reqwest::Proxy::all(proxy.as_str())?),
        None => reqwest::Client::builder().no_proxy(),
    };
    builder
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
        .build()
}

/// Why an event was not delivered.
#[derive(Debug)]
pub(super) enum Failure {
    /// Every attempt failed (the last error): the registration is dead-lettered.
    GaveUp(String),
    /// The server is shutting down: the event stays pending, for the next process.
    ShuttingDown,
    /// The delivery lease could not be renewed (another replica took it, or the store
    /// failed): the event stays pending, for the lease's holder.
    LeaseLost,
}

/// A delivery lease, as its worker holds it: when it was last taken or renewed.
#[derive(Debug)]
pub(super) struct Held {
    renewed: Instant,
}

impl Held {
    /// A lease taken just now.
    pub(super) fn now() -> Self {
        Self {
            renewed: Instant::now(),
        }
    }
}

impl Pusher {
    /// Takes (or renews) the delivery lease of a registration for this server.
    pub(super) async fn acquire(&self, task: &TaskId, id: &str) -> Result<bool, StoreError> {
        self.store
            .acquire_delivery(task, id, &self.owner, self.lease_ttl)
            .await
    }

    /// Renews a held delivery lease once a third of its time has passed since it was last
    /// taken; `LeaseLost` if it could not be.
    async fn keep(&self, record: &PushRecord, held: &mut Held) -> Result<(), Failure> {
        if held.renewed.elapsed() < self.lease_ttl / 3 {
            return Ok(());
        }
        let task = record.config.task_id.clone().unwrap_or_default();
        match self.acquire(&task, record.id()).await {
            Ok(true) => {
                held.renewed = Instant::now();
                Ok(())
            }
            Ok(false) => Err(Failure::LeaseLost),
            Err(e) => {
                tracing::warn!(task = %task, error = %e, "renewing a webhook delivery lease failed");
                Err(Failure::LeaseLost)
            }
        }
    }

    /// Posts one event, retrying with backoff; `GaveUp` after the last attempt. The delivery
    /// lease is renewed before each attempt and during the pauses between them, as needed.
    pub(super) async fn deliver(
        &self,
        record: &PushRecord,
        held: &mut Held,
        seq: u64,
        event: &StreamResponse,
    ) -> Result<(), Failure> {
        let config = &record.config;
        let task = config.task_id.clone().unwrap_or_default();
        let (body, content_type) = if record.v03 {
            (
                a2a_core::v03::encode_stream_event(event).to_string(),
                "application/json",
            )
        } else if record.generations {
            // A 1.1 registration: the StreamResponse a 1.1 stream carries, with the event's
            // generation (its sequence number).
            let mut event = event.clone();
            event.set_generation(i64::try_from(seq).unwrap_or(i64::MAX));
            (
                serde_json::to_string(&event).map_err(|e| Failure::GaveUp(e.to_string()))?,
                "application/a2a+json",
            )
        } else {
            (
                serde_json::to_string(event).map_err(|e| Failure::GaveUp(e.to_string()))?,
                "application/a2a+json",
            )
        };
        // The POST carries the trace context of the delivery's span.
        let trace_headers = crate::telemetry::trace_headers(&tracing::Span::current());
        let mut last_error = String::new();
        for attempt in 1..=self.settings.max_attempts {
            self.keep(record, held).await?;
            let url = self
                .settings
                .check_url(&config.url)
                .map_err(|e| Failure::GaveUp(e.message))?;
            if self.settings.proxy.is_some() {
                // The proxy resolves the host name: check it here first.
                if let Err(e) = guard::check_host(&self.settings, &url).await {
                    last_error = e;
                    self.pause(attempt, (record, held), seq, &last_error)
                        .await?;
                    continue;
                }
            }
            let mut request = self
                .http
                .post(&config.url)
                .header(reqwest::header::CONTENT_TYPE, content_type)
                .header("A2A-Notification-Id", format!("{task}:{seq}"))
                .body(body.clone());
            for (name, value) in &trace_headers {
                request = request.header(name.as_str(), value.as_str());
            }
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
            let sent = tokio::select! {
                sent = request.send() => sent,
                () = self.shutdown.cancelled() => return Err(Failure::ShuttingDown),
            };
            match sent {
                Ok(r) if r.status().is_success() => {
                    if let Some(metrics) = &self.metrics {
                        metrics.push_delivered();
                    }
                    return Ok(());
                }
                Ok(r) => last_error = format!("HTTP {}", r.status()),
                Err(e) => last_error = with_sources(&e),
            }
            self.pause(attempt, (record, held), seq, &last_error)
                .await?;
        }
        Err(Failure::GaveUp(last_error))
    }

    /// Waits before the next attempt (if there is one), renewing the delivery lease as it
    /// goes; `ShuttingDown` if the server shuts down meanwhile.
    async fn pause(
        &self,
        attempt: u32,
        (record, held): (&PushRecord, &mut Held),
        seq: u64,
        error: &str,
    ) -> Result<(), Failure> {
        if attempt >= self.settings.max_attempts {
            return if self.shutdown.is_cancelled() {
                Err(Failure::ShuttingDown)
            } else {
                Ok(())
            };
        }
        if let Some(metrics) = &self.metrics {
            metrics.push_retry();
        }
        let task = record.config.task_id.as_ref().map_or("", TaskId::as_str);
        tracing::debug!(task, seq, attempt, %error, "webhook delivery failed; retrying");
        let until = Instant::now() + self.settings.backoff_for(attempt);
        loop {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(());
            }
            tokio::select! {
                () = tokio::time::sleep(left.min(self.lease_ttl / 3)) => {}
                () = self.shutdown.cancelled() => return Err(Failure::ShuttingDown),
            }
            self.keep(record, held).await?;
        }
    }
}

/// An error and its sources, `: `-separated (a refused address is a few levels down).
fn with_sources(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let next = s.to_string();
        if !text.ends_with(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = s.source();
    }
    text
}
