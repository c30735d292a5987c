//! What the workers share (the plan of a run, its measured window) and what each one counts,
//! with the JSON-RPC request bodies and answer checks the bindings have in common.

use super::RunArgs;
use super::h2;
use crate::http::Target;
use memchr::memmem;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What every worker shares.
pub(super) struct Plan {
    /// The replicas (one for a single server), in round-robin order.
    pub(super) targets: Vec<Target>,
    pub(super) args: RunArgs,
    pub(super) run_id: String,
    pub(super) text_json: String,
    pub(super) task_ids: Vec<String>,
    /// The gRPC connections (`--binding grpc`), shared by the workers.
    pub(super) channels: Vec<tonic::transport::Channel>,
    /// The HTTP/2 connections of `--binding jsonrpc-h2`, shared by the workers.
    pub(super) h2: Vec<h2::H2Sender>,
    /// Successful requests so far (read by the sampler at the window's edges).
    pub(super) ok: AtomicU64,
    /// When the run started: the measured window's edges count from here.
    pub(super) start: Instant,
    /// The measured window, in nanoseconds after `start` (`to` is `u64::MAX` until it closes;
    /// with `--requests`, the sampler sets both when the counts are reached).
    pub(super) from_ns: AtomicU64,
    pub(super) to_ns: AtomicU64,
    /// Set when the window has closed: workers start no more requests.
    pub(super) stop: std::sync::atomic::AtomicBool,
}

pub(super) fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Plan {
    /// Whether workers should go on with another request.
    pub(super) fn running(&self) -> bool {
        !self.stop.load(Ordering::Relaxed)
    }

    /// Whether a request that ran from `started` to `done` lies inside the measured window.
    pub(super) fn in_window(&self, started: Instant, done: Instant) -> bool {
        nanos(started - self.start) >= self.from_ns.load(Ordering::Relaxed)
            && nanos(done - self.start) <= self.to_ns.load(Ordering::Relaxed)
    }

    /// The instant of a window edge.
    pub(super) fn at(&self, edge: &AtomicU64) -> Instant {
        self.start + Duration::from_nanos(edge.load(Ordering::Relaxed))
    }

    /// Sets a window edge to now.
    pub(super) fn mark(&self, edge: &AtomicU64) {
        edge.store(nanos(self.start.elapsed()), Ordering::Relaxed);
    }

    /// Waits until `n` requests have succeeded; false if none succeeded for `--timeout`.
    pub(super) async fn reached(&self, n: u64) -> bool {
        let stalled = Duration::from_secs_f64(self.args.timeout);
        let (mut seen, mut since) = (self.ok.load(Ordering::Relaxed), Instant::now());
        while seen < n {
            tokio::time::sleep(Duration::from_millis(1)).await;
            let ok = self.ok.load(Ordering::Relaxed);
            if ok != seen {
                (seen, since) = (ok, Instant::now());
            } else if since.elapsed() > stalled {
                return false;
            }
        }
        true
    }
}

#[derive(Default)]
pub(super) struct WorkerStats {
    pub(super) latencies: Vec<u64>,
    pub(super) ttfe: Vec<u64>,
    pub(super) errors: u64,
    pub(super) first_error: Option<String>,
}

impl WorkerStats {
    pub(super) fn error(&mut self, what: impl Into<String>) {
        self.errors += 1;
        if self.first_error.is_none() {
            self.first_error = Some(what.into());
        }
    }
}

/// Counts one request: a success adds to the total, and its latency (and time to first event)
/// when it lies inside the measured window; a failure is an error.
pub(super) fn record(
    plan: &Plan,
    stats: &mut WorkerStats,
    started: Instant,
    first_event: Option<Instant>,
    outcome: Result<(), String>,
) {
    let done = Instant::now();
    match outcome {
        Ok(()) => {
            plan.ok.fetch_add(1, Ordering::Relaxed);
            if plan.in_window(started, done) {
                stats
                    .latencies
                    .push(u64::try_from((done - started).as_nanos()).unwrap_or(u64::MAX));
                if let Some(f) = first_event {
                    stats
                        .ttfe
                        .push(u64::try_from((f - started).as_nanos()).unwrap_or(u64::MAX));
                }
            }
        }
        Err(wrong) => stats.error(wrong),
    }
}

pub(super) fn run_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("b{:x}", nanos % (1 << 48))
}

pub(super) fn send_body(plan: &Plan, method: &str, w: usize, n: u64, extra: &str) -> String {
    let task = if plan.args.client_task_ids {
        format!(r#","taskId":"{}-t{w}-{n}""#, plan.run_id)
    } else {
        String::new()
    };
    format!(
        r#"{{"jsonrpc":"2.0","id":{n},"method":"{method}","params":{{"message":{{"role":"ROLE_USER","parts":[{{"text":{}}}],"messageId":"{}-m{w}-{n}"{task}}}{extra}}}}}"#,
        plan.text_json, plan.run_id
    )
}

pub(super) fn is_ok_result(body: &[u8]) -> bool {
    memmem::find(body, br#""result""#).is_some() && memmem::find(body, br#""error":{"#).is_none()
}

pub(super) fn snippet(body: &[u8]) -> String {
    let s = String::from_utf8_lossy(&body[..body.len().min(300)]);
    s.into_owned()
}
