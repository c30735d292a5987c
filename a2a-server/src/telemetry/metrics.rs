//! [`Metrics`]: the server's counters, gauges and histograms, in one Prometheus registry of
//! its own (no global state: two servers in one process count apart).

use a2a_core::{BINDING_GRPC, BINDING_HTTP_JSON, BINDING_JSONRPC, Method, TaskId, TaskState};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};
use std::sync::Arc;
use std::time::Duration;

/// The content type of [`Metrics::render`]'s text (OpenMetrics 1.0, which Prometheus scrapes
/// natively; every name and sample is also valid in the classic text format).
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// A server's metrics, for Prometheus. Opt-in: create one, give it to
/// [`ServerBuilder::metrics`](crate::ServerBuilder::metrics), and serve [`Metrics::router`]
/// (or [`Metrics::render`]) where your Prometheus scrapes. Cheap to clone (shared).
///
/// | metric | type | labels |
/// |---|---|---|
/// | `a2a_server_requests_total` | counter | `method`, `binding`, `outcome` (`ok` or the error's ErrorInfo reason) |
/// | `a2a_server_request_duration_seconds` | histogram | `method`, `binding` (until the response head; for a stream, until it opens) |
/// | `a2a_server_open_streams` | gauge | `method`, `binding` (SSE and gRPC streams open now, subscribers included) |
/// | `a2a_server_auth_failures_total` | counter | `reason` (`missing`, `invalid`) |
/// | `a2a_task_transitions_total` | counter | `state` (tasks this process moved into each state; creation counts as `TASK_STATE_SUBMITTED`) |
/// | `a2a_tasks_active` | gauge | `state` (tasks this process last moved into each non-terminal state) |
/// | `a2a_task_duration_seconds` | histogram | `state` (the terminal state; from the task's creation) |
/// | `a2a_events_appended_total` | counter | `kind` (`task`, `status`, `artifact`) |
/// | `a2a_store_operation_duration_seconds` | histogram | `operation` |
/// | `a2a_push_deliveries_total` | counter | (events delivered to a webhook) |
/// | `a2a_push_retries_total` | counter | (failed attempts that will be retried) |
/// | `a2a_push_dead_letters_total` | counter | (registrations given up after the last attempt) |
#[derive(Clone, Debug)]
pub struct Metrics(pub(crate) Arc<Inner>);

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct Call {
    pub(crate) method: &'static str,
    pub(crate) binding: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct Outcome {
    pub(crate) method: &'static str,
    pub(crate) binding: &'static str,
    pub(crate) outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct State {
    state: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Kind {
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Reason {
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Operation {
    operation: &'static str,
}

type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

/// The members of a family whose labels are known up front, each looked up in the family once
/// (a family lookup hashes the labels and takes a lock), and created on first use (so that a
/// scrape shows only what happened).
struct Members<L, M, C> {
    family: Family<L, M, C>,
    members: Box<[std::sync::OnceLock<M>]>,
}

impl<L, M, C> std::fmt::Debug for Members<L, M, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Members").finish_non_exhaustive()
    }
}

impl<L, M, C> Members<L, M, C>
where
    L: Clone + std::hash::Hash + Eq,
    M: Clone + prometheus_client::metrics::TypedMetric,
    C: prometheus_client::metrics::family::MetricConstructor<M>,
{
    fn new(family: Family<L, M, C>, n: usize) -> Self {
        Self {
            family,
            members: (0..n).map(|_| std::sync::OnceLock::new()).collect(),
        }
    }

    /// Member `i`, labelled `labels()` the first time.
    fn get(&self, i: usize, labels: impl FnOnce() -> L) -> &M {
        self.members[i].get_or_init(|| self.family.get_or_create_owned(&labels()))
    }
}

/// The index of a state among [`TaskState::ALL`] (the last slot: unknown states).
fn state_index(s: &TaskState) -> usize {
    TaskState::ALL
        .iter()
        .position(|k| k == s)
        .unwrap_or(TaskState::ALL.len())
}

const EVENT_KINDS: [&str; 3] = ["task", "status", "artifact"];

const BINDINGS: [&str; 3] = [BINDING_JSONRPC, BINDING_HTTP_JSON, BINDING_GRPC];

/// How many (operation or `unknown`, binding) pairs there are.
const CALLS: usize = (Method::ALL.len() + 1) * BINDINGS.len();

/// The index of an (operation, binding) pair.
fn call_index(method: Option<Method>, binding: &str) -> usize {
    let m = method
        .and_then(|m| Method::ALL.iter().position(|k| *k == m))
        .unwrap_or(Method::ALL.len());
    let b = BINDINGS.iter().position(|k| *k == binding).unwrap_or(0);
    m * BINDINGS.len() + b
}

fn call(method: Option<Method>, binding: &'static str) -> Call {
    Call {
        method: method.map_or("unknown", Method::name),
        binding,
    }
}

#[derive(Debug)]
pub(crate) struct Inner {
    registry: Registry,
    requests: Family<Outcome, Counter>,
    /// The members of `requests` with the outcome `ok`.
    requests_ok: Members<Outcome, Counter, fn() -> Counter>,
    request_duration: Members<Call, Histogram, fn() -> Histogram>,
    open_streams: Members<Call, Gauge, fn() -> Gauge>,
    auth_failures: Family<Reason, Counter>,
    transitions: Members<State, Counter, fn() -> Counter>,
    active: Members<State, Gauge, fn() -> Gauge>,
    task_duration: Members<State, Histogram, fn() -> Histogram>,
    events: Members<Kind, Counter, fn() -> Counter>,
    store: Histograms<Operation>,
    push_deliveries: Counter,
    push_retries: Counter,
    push_dead_letters: Counter,
}

/// 100 µs to about 3.3 s.
fn latency() -> Histogram {
    Histogram::new(exponential_buckets(0.0001, 2.0, 16))
}

/// 1 ms to about 70 minutes.
fn task_duration() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 4.0, 12))
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// A fresh set of metrics, all at zero.
    pub fn new() -> Self {
        let mut registry = Registry::default();
        let requests = Family::default();
        registry.register(
            "a2a_server_requests",
            "A2A requests answered, by operation, binding and outcome",
            requests.clone(),
        );
        let request_duration: Histograms<Call> = Family::new_with_constructor(latency);
        registry.register_with_unit(
            "a2a_server_request_duration",
            "Time to answer an A2A request (for a stream: to open it)",
            Unit::Seconds,
            request_duration.clone(),
        );
        let open_streams = Family::default();
        registry.register(
            "a2a_server_open_streams",
            "Event streams open now (SendStreamingMessage and SubscribeToTask)",
            open_streams.clone(),
        );
        let auth_failures = Family::default();
        registry.register(
            "a2a_server_auth_failures",
            "Requests refused for missing or invalid credentials",
            auth_failures.clone(),
        );
        let transitions = Family::default();
        registry.register(
            "a2a_task_transitions",
            "Task state changes made by this process, by the state entered",
            transitions.clone(),
        );
        let active = Family::default();
        registry.register(
            "a2a_tasks_active",
            "Tasks this process last moved into each non-terminal state",
            active.clone(),
        );
        let task_duration: Histograms<State> = Family::new_with_constructor(task_duration);
        registry.register_with_unit(
            "a2a_task_duration",
            "Time from a task's creation to its terminal state",
            Unit::Seconds,
            task_duration.clone(),
        );
        let events = Family::default();
        registry.register(
            "a2a_events_appended",
            "Events appended to task logs",
            events.clone(),
        );
        let store: Histograms<Operation> = Family::new_with_constructor(latency);
        registry.register_with_unit(
            "a2a_store_operation_duration",
            "Task store operations",
            Unit::Seconds,
            store.clone(),
        );
        let push_deliveries = Counter::default();
        registry.register(
            "a2a_push_deliveries",
            "Events delivered to webhooks",
            push_deliveries.clone(),
        );
        let push_retries = Counter::default();
        registry.register(
            "a2a_push_retries",
            "Webhook delivery attempts that failed and will be retried",
            push_retries.clone(),
        );
        let push_dead_letters = Counter::default();
        registry.register(
            "a2a_push_dead_letters",
            "Webhook registrations given up after their last attempt",
            push_dead_letters.clone(),
        );
        Self(Arc::new(Inner {
            registry,
            requests_ok: Members::new(requests.clone(), CALLS),
            requests,
            request_duration: Members::new(request_duration, CALLS),
            open_streams: Members::new(open_streams, CALLS),
            auth_failures,
            transitions: Members::new(transitions, TaskState::ALL.len() + 1),
            active: Members::new(active, TaskState::ALL.len() + 1),
            task_duration: Members::new(task_duration, TaskState::ALL.len() + 1),
            events: Members::new(events, EVENT_KINDS.len()),
            store,
            push_deliveries,
            push_retries,
            push_dead_letters,
        }))
    }

    /// The metrics in the OpenMetrics text format ([`CONTENT_TYPE`]).
    pub fn render(&self) -> String {
        let mut text = String::with_capacity(8192);
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.0.registry);
        text
    }

    /// An axum router answering `GET /metrics` with [`Metrics::render`], to serve on a
    /// listener of its own (the A2A port's routes belong to the protocol).
    pub fn router(&self) -> axum::Router {
        let metrics = self.clone();
        axum::Router::new().route(
            "/metrics",
            axum::routing::get(move || {
                let text = metrics.render();
                async move { ([(axum::http::header::CONTENT_TYPE, CONTENT_TYPE)], text) }
            }),
        )
    }
}

impl Inner {
    /// A call of `method` (`None`: not read) on `binding` was answered after `took`, with the
    /// error `failed` (its ErrorInfo reason) or not.
    pub(crate) fn answered(
        &self,
        method: Option<Method>,
        binding: &'static str,
        failed: Option<&'static str>,
        took: Duration,
    ) {
        let i = call_index(method, binding);
        self.request_duration
            .get(i, || call(method, binding))
            .observe(took.as_secs_f64());
        let outcome = |outcome| {
            let Call { method, binding } = call(method, binding);
            Outcome {
                method,
                binding,
                outcome,
            }
        };
        match failed {
            None => self.requests_ok.get(i, || outcome("ok")).inc(),
            Some(reason) => self.requests.get_or_create(&outcome(reason)).inc(),
        };
    }

    /// The open-streams gauge of `method` on `binding`.
    pub(crate) fn open_streams(&self, method: Option<Method>, binding: &'static str) -> Gauge {
        let i = call_index(method, binding);
        self.open_streams.get(i, || call(method, binding)).clone()
    }

    pub(crate) fn auth_failed(&self, invalid: bool) {
        let reason = if invalid { "invalid" } else { "missing" };
        self.auth_failures.get_or_create(&Reason { reason }).inc();
    }

    /// A task moved from `from` (`None`: it was created) to `to`, with an event of `kind`.
    pub(crate) fn task_changed(
        &self,
        id: &TaskId,
        from: Option<&TaskState>,
        to: &TaskState,
        kind: &'static str,
    ) {
        let k = EVENT_KINDS.iter().position(|k| *k == kind).unwrap_or(0);
        self.events.get(k, || Kind { kind }).inc();
        if from == Some(to) {
            return;
        }
        if let Some(from) = from.filter(|s| !s.is_terminal()) {
            self.active.get(state_index(from), || state(from)).dec();
        }
        let i = state_index(to);
        self.transitions.get(i, || state(to)).inc();
        if to.is_terminal() {
            if let Some(age) = age(id) {
                self.task_duration
                    .get(i, || state(to))
                    .observe(age.as_secs_f64());
            }
        } else {
            self.active.get(i, || state(to)).inc();
        }
    }

    /// The latency histogram of the store operation `operation` (for a caller to keep).
    pub(crate) fn store_histogram(&self, operation: &'static str) -> Histogram {
        self.store.get_or_create_owned(&Operation { operation })
    }

    pub(crate) fn push_delivered(&self) {
        self.push_deliveries.inc();
    }

    pub(crate) fn push_retry(&self) {
        self.push_retries.inc();
    }

    pub(crate) fn push_dead_letter(&self) {
        self.push_dead_letters.inc();
    }
}

fn state(s: &TaskState) -> State {
    let known = TaskState::ALL.iter().find(|k| *k == s);
    State {
        state: known.map_or("TASK_STATE_UNKNOWN", TaskState::as_str),
    }
}

/// How long ago a task was created, from its id: this server mints UUIDv7 task ids, whose
/// first 48 bits are the creation time in Unix milliseconds. `None` for another kind of id.
fn age(id: &TaskId) -> Option<Duration> {
    let uuid = uuid::Uuid::parse_str(id.as_str()).ok()?;
    let (secs, nanos) = uuid.get_timestamp()?.to_unix();
    let created = Duration::new(secs, nanos);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Some(now.saturating_sub(created))
}
