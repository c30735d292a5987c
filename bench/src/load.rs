//! The load scenarios: closed-loop workers (each with one keep-alive connection, one request
//! in flight) for a fixed duration after a warm-up (or a fixed number of requests after a number
//! of warm-up requests: `--requests`), and the SubscribeToTask fan-out. Over gRPC
//! ([`grpc`]) and JSON-RPC over HTTP/2 ([`h2`]) the workers share HTTP/2 connections instead,
//! one call in flight each.

mod grpc;
mod h2;

use crate::http::{Conn, Target};
use crate::{callgrind, procfs};
use memchr::memmem;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// What to measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Scenario {
    /// `GET /.well-known/agent-card.json`.
    Card,
    /// Blocking `SendMessage` (waits for the completed task).
    Send,
    /// `SendStreamingMessage`, read to the end of the stream; also time to first event.
    Stream,
    /// `GetTask` of tasks created before the run.
    Get,
    /// `ListTasks`, following `nextPageToken` for `--pages` pages.
    List,
    /// `SubscribeToTask` fan-out: `--subscribers` streams on one long-running task.
    Subscribe,
}

impl Scenario {
    fn name(self) -> &'static str {
        match self {
            Self::Card => "card",
            Self::Send => "send",
            Self::Stream => "stream",
            Self::Get => "get",
            Self::List => "list",
            Self::Subscribe => "subscribe",
        }
    }
}

/// The A2A binding a run speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Binding {
    /// JSON-RPC over HTTP/1.1 (this tool's own client, `http.rs`).
    #[default]
    #[value(name = "jsonrpc")]
    JsonRpc,
    /// gRPC (`lf.a2a.v1.A2AService`) over HTTP/2, on tonic: `send`, `stream` and `get`.
    Grpc,
    /// JSON-RPC over HTTP/2 (prior knowledge), on hyper's HTTP/2 client: `send` and `get`,
    /// the HTTP/1.1 load's requests on shared connections, as over gRPC.
    #[value(name = "jsonrpc-h2")]
    #[serde(rename = "jsonrpc-h2")]
    JsonRpcH2,
}

impl Binding {
    fn is_json_rpc(&self) -> bool {
        *self == Self::JsonRpc
    }
}

/// Options of `a2a-bench run`.
#[derive(Clone, Debug, clap::Args)]
pub(crate) struct RunArgs {
    /// The server's JSON-RPC URL (plain http). Several, comma-separated, are replicas of one
    /// server: each worker keeps a connection to each and sends its requests to them in turn
    /// (round robin); preloading and the `subscribe` scenario use the first.
    #[arg(long, default_value = "http://127.0.0.1:8080", value_delimiter = ',')]
    pub(crate) url: Vec<String>,
    /// What to measure.
    #[arg(long, short = 's', value_enum)]
    pub(crate) scenario: Scenario,
    /// The binding: JSON-RPC over HTTP/1.1, gRPC on the same URL's host and port (`send`,
    /// `stream` and `get`), or JSON-RPC over HTTP/2 to the same URL (`send` and `get`); `get`
    /// preloads its tasks over JSON-RPC/HTTP/1.1.
    #[arg(long, value_enum, default_value_t = Binding::JsonRpc)]
    pub(crate) binding: Binding,
    /// gRPC and jsonrpc-h2: the HTTP/2 connections the workers share (worker `w` calls on
    /// connection `w` mod N), each carrying up to `-c` ÷ N concurrent streams, as gRPC channels
    /// do.
    #[arg(long, alias = "h2-connections", default_value_t = 1)]
    pub(crate) grpc_connections: usize,
    /// Concurrent connections, each with one request in flight.
    #[arg(long, short = 'c', default_value_t = 16)]
    pub(crate) concurrency: usize,
    /// Seconds measured (after the warm-up).
    #[arg(long, short = 'd', default_value_t = 5.0)]
    pub(crate) duration: f64,
    /// Seconds of load before measuring.
    #[arg(long, default_value_t = 1.0)]
    pub(crate) warmup: f64,
    /// Measure this many successful requests instead of `--duration` seconds, after
    /// `--warmup-requests` instead of `--warmup` seconds: a window of fixed work, which meets a
    /// store of the same size on a fast machine and a slow one (on sled, a request's
    /// instructions grow with the trees; the instruction guard measures this way).
    #[arg(long)]
    pub(crate) requests: Option<u64>,
    /// With `--requests`: successful requests before the window opens.
    #[arg(long, default_value_t = 0, requires = "requests")]
    pub(crate) warmup_requests: u64,
    /// The server's process id: reports its CPU time per request and its memory. Several,
    /// comma-separated (replicas): their sum.
    #[arg(long, value_delimiter = ',')]
    pub(crate) server_pid: Vec<u32>,
    /// Also report the CPU time of every process with this command name (`/proc/<pid>/comm`),
    /// e.g. `postgres`: a database the server uses is part of a request's cost.
    #[arg(long, value_name = "COMM")]
    pub(crate) db_process: Option<String>,
    /// A name for the server in reports.
    #[arg(long, default_value = "server")]
    pub(crate) label: String,
    /// Append the result as one JSON line to this file (for `a2a-bench report`).
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Put a fresh `taskId` in every new message (for servers that want client-chosen ids).
    #[arg(long)]
    pub(crate) client_task_ids: bool,
    /// Tasks to create before a `get` or `list` run.
    #[arg(long, default_value_t = 100)]
    pub(crate) preload: usize,
    /// `pageSize` of `list` requests.
    #[arg(long, default_value_t = 50)]
    pub(crate) page_size: u32,
    /// Pages a `list` worker reads before starting over (0: every page).
    #[arg(long, default_value_t = 1)]
    pub(crate) pages: u32,
    /// Subscribers of the `subscribe` scenario.
    #[arg(long, default_value_t = 1000)]
    pub(crate) subscribers: usize,
    /// Steps of the demo agent's `countdown` task the subscribers watch (about 100 ms and two
    /// events each; default: long enough for every subscriber to connect).
    #[arg(long)]
    pub(crate) countdown: Option<u32>,
    /// The message text.
    #[arg(long, default_value = "hello")]
    pub(crate) text: String,
    /// Seconds before one request counts as failed.
    #[arg(long, default_value_t = 10.0)]
    pub(crate) timeout: f64,
    /// Print nothing but the JSON line.
    #[arg(long)]
    pub(crate) quiet: bool,
    /// The server (`--server-pid`) runs under `valgrind --tool=callgrind
    /// --callgrind-out-file=PATH`: count its instructions per request over the measured
    /// window (see `bench/src/callgrind.rs`).
    #[arg(long, value_name = "PATH", requires = "server_pid")]
    pub(crate) callgrind_out: Option<PathBuf>,
}

/// One run's result (one JSON line).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Outcome {
    pub(crate) label: String,
    pub(crate) scenario: String,
    /// JSON-RPC unless said otherwise (rows from before gRPC runs have no `binding`).
    #[serde(default, skip_serializing_if = "Binding::is_json_rpc")]
    pub(crate) binding: Binding,
    pub(crate) concurrency: usize,
    pub(crate) seconds: f64,
    pub(crate) requests: u64,
    pub(crate) errors: u64,
    pub(crate) rps: f64,
    pub(crate) p50_ms: f64,
    pub(crate) p99_ms: f64,
    pub(crate) max_ms: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) ttfe_p50_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) ttfe_p99_ms: Option<f64>,
    /// Server CPU time (user + system, all threads) per successful request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) server_cpu_us: Option<f64>,
    /// Server CPU use during the measurement (100 = one core).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) server_cpu_pct: Option<f64>,
    /// CPU time of the `--db-process` processes per successful request, and their use (100 =
    /// one core).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) db_cpu_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) db_cpu_pct: Option<f64>,
    /// The whole machine's busy CPU over the window (100 = one core): what it has beyond the
    /// server, the database and the load generator ran beside them (another job on a shared
    /// machine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) machine_cpu_pct: Option<f64>,
    /// Server user-space instructions per successful request (with `--callgrind-out`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) server_instructions: Option<f64>,
    /// Whether the server ran under callgrind (its times then mean nothing).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) under_callgrind: bool,
    /// The load generator's own CPU use (100 = one core): near 100, it may be the limit.
    pub(crate) client_cpu_pct: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) server_rss_mib: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) subscribe: Option<FanOut>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) first_error: Option<String>,
}

impl Outcome {
    /// The label as reports show it: `ours-memory`, `ours-memory grpc`.
    pub(crate) fn shown_label(&self) -> String {
        match self.binding {
            Binding::JsonRpc => self.label.clone(),
            Binding::Grpc => format!("{} grpc", self.label),
            Binding::JsonRpcH2 => format!("{} jsonrpc-h2", self.label),
        }
    }

    /// The machine's busy CPU over the window that was neither the server, its database nor
    /// the load generator (100 = one core).
    pub(crate) fn other_cpu_pct(&self) -> Option<f64> {
        self.machine_cpu_pct.map(|m| {
            m - self.server_cpu_pct.unwrap_or(0.0)
                - self.db_cpu_pct.unwrap_or(0.0)
                - self.client_cpu_pct
        })
    }
}

/// The fan-out figures of a `subscribe` run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct FanOut {
    pub(crate) subscribers: usize,
    /// Subscribers that received every event from their snapshot to the terminal event.
    pub(crate) complete: usize,
    pub(crate) events_delivered: u64,
    /// Seconds until every subscriber had its first event.
    pub(crate) all_subscribed_s: f64,
    /// Server RSS with every subscriber connected, and its peak during the run.
    pub(crate) rss_subscribed_mib: Option<f64>,
    pub(crate) rss_peak_mib: Option<f64>,
    /// Delay of each delivery after the first delivery of the same event.
    pub(crate) spread_p50_ms: f64,
    pub(crate) spread_p99_ms: f64,
}

/// What every worker shares.
struct Plan {
    /// The replicas (one for a single server), in round-robin order.
    targets: Vec<Target>,
    args: RunArgs,
    run_id: String,
    text_json: String,
    task_ids: Vec<String>,
    /// The gRPC connections (`--binding grpc`), shared by the workers.
    channels: Vec<tonic::transport::Channel>,
    /// The HTTP/2 connections of `--binding jsonrpc-h2`, shared by the workers.
    h2: Vec<h2::H2Sender>,
    /// Successful requests so far (read by the sampler at the window's edges).
    ok: AtomicU64,
    /// When the run started: the measured window's edges count from here.
    start: Instant,
    /// The measured window, in nanoseconds after `start` (`to` is `u64::MAX` until it closes;
    /// with `--requests`, the sampler sets both when the counts are reached).
    from_ns: AtomicU64,
    to_ns: AtomicU64,
    /// Set when the window has closed: workers start no more requests.
    stop: std::sync::atomic::AtomicBool,
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Plan {
    /// Whether workers should go on with another request.
    fn running(&self) -> bool {
        !self.stop.load(Ordering::Relaxed)
    }

    /// Whether a request that ran from `started` to `done` lies inside the measured window.
    fn in_window(&self, started: Instant, done: Instant) -> bool {
        nanos(started - self.start) >= self.from_ns.load(Ordering::Relaxed)
            && nanos(done - self.start) <= self.to_ns.load(Ordering::Relaxed)
    }

    /// The instant of a window edge.
    fn at(&self, edge: &AtomicU64) -> Instant {
        self.start + Duration::from_nanos(edge.load(Ordering::Relaxed))
    }

    /// Sets a window edge to now.
    fn mark(&self, edge: &AtomicU64) {
        edge.store(nanos(self.start.elapsed()), Ordering::Relaxed);
    }

    /// Waits until `n` requests have succeeded; false if none succeeded for `--timeout`.
    async fn reached(&self, n: u64) -> bool {
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
struct WorkerStats {
    latencies: Vec<u64>,
    ttfe: Vec<u64>,
    errors: u64,
    first_error: Option<String>,
}

impl WorkerStats {
    fn error(&mut self, what: impl Into<String>) {
        self.errors += 1;
        if self.first_error.is_none() {
            self.first_error = Some(what.into());
        }
    }
}

/// Runs blocking work (a child process) off the runtime's threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| e.to_string())?
}

/// Counts one request: a success adds to the total, and its latency (and time to first event)
/// when it lies inside the measured window; a failure is an error.
fn record(
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

fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1] as f64 / 1e6
}

fn run_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("b{:x}", nanos % (1 << 48))
}

fn send_body(plan: &Plan, method: &str, w: usize, n: u64, extra: &str) -> String {
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

fn is_ok_result(body: &[u8]) -> bool {
    memmem::find(body, br#""result""#).is_some() && memmem::find(body, br#""error":{"#).is_none()
}

fn snippet(body: &[u8]) -> String {
    let s = String::from_utf8_lossy(&body[..body.len().min(300)]);
    s.into_owned()
}

/// One request of a unary scenario; `Ok(Err(msg))` is a wrong answer.
async fn unary_once(
    plan: &Plan,
    conn: &mut Conn,
    req: &[u8],
    body: &mut Vec<u8>,
    must_contain: Option<&[u8]>,
) -> io::Result<Result<(), String>> {
    body.clear();
    let status = conn.unary(req, body).await?;
    if status != 200 {
        return Ok(Err(format!("HTTP {status}: {}", snippet(body))));
    }
    let _ = plan;
    if let Some(needle) = must_contain
        && memmem::find(body, needle).is_none()
    {
        return Ok(Err(format!(
            "answer without {}: {}",
            String::from_utf8_lossy(needle),
            snippet(body)
        )));
    }
    Ok(Ok(()))
}

fn next_page_token(body: &[u8]) -> Option<String> {
    let key = br#""nextPageToken":""#;
    let start = memmem::find(body, key)? + key.len();
    let len = memchr::memchr(b'"', &body[start..])?;
    (len > 0).then(|| String::from_utf8_lossy(&body[start..start + len]).into_owned())
}

async fn worker(plan: Arc<Plan>, w: usize) -> WorkerStats {
    let mut stats = WorkerStats::default();
    let mut conns: Vec<Option<Conn>> = plan.targets.iter().map(|_| None).collect();
    let mut body = Vec::with_capacity(64 * 1024);
    let mut n: u64 = 0;
    let mut page_token: Option<String> = None;
    let mut page = 0u32;
    let timeout = Duration::from_secs_f64(plan.args.timeout);
    while plan.running() {
        n += 1;
        // Round robin over the replicas, each worker starting at its own.
        let (target, conn) = {
            let k = (w + n as usize) % plan.targets.len();
            (&plan.targets[k], &mut conns[k])
        };
        let c = match conn.as_mut() {
            Some(c) if !c.closed => c,
            _ => match Conn::connect(target.addr).await {
                Ok(c) => conn.insert(c),
                Err(e) => {
                    stats.error(format!("connect: {e}"));
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
        };
        let scenario = plan.args.scenario;
        let started = Instant::now();
        let mut first_event: Option<Instant> = None;
        let outcome = match scenario {
            Scenario::Card => {
                let card = target.get("/.well-known/agent-card.json");
                tokio::time::timeout(timeout, unary_once(&plan, c, &card, &mut body, None)).await
            }
            Scenario::Send => {
                let req = target.post_json(&send_body(&plan, "SendMessage", w, n, ""), false);
                tokio::time::timeout(
                    timeout,
                    unary_once(&plan, c, &req, &mut body, Some(b"TASK_STATE_COMPLETED")),
                )
                .await
            }
            Scenario::Get => {
                let id = &plan.task_ids[(w * 7919 + n as usize) % plan.task_ids.len()];
                let req = target.post_json(
                    &format!(
                        r#"{{"jsonrpc":"2.0","id":{n},"method":"GetTask","params":{{"id":"{id}"}}}}"#
                    ),
                    false,
                );
                tokio::time::timeout(
                    timeout,
                    unary_once(&plan, c, &req, &mut body, Some(br#""result""#)),
                )
                .await
            }
            Scenario::List => {
                let token = page_token
                    .as_deref()
                    .map(|t| format!(r#","pageToken":"{t}""#))
                    .unwrap_or_default();
                let req = target.post_json(
                    &format!(
                        r#"{{"jsonrpc":"2.0","id":{n},"method":"ListTasks","params":{{"pageSize":{}{token}}}}}"#,
                        plan.args.page_size
                    ),
                    false,
                );
                let r = tokio::time::timeout(
                    timeout,
                    unary_once(&plan, c, &req, &mut body, Some(br#""tasks""#)),
                )
                .await;
                page += 1;
                page_token = next_page_token(&body);
                if page_token.is_none() || (plan.args.pages > 0 && page >= plan.args.pages) {
                    page_token = None;
                    page = 0;
                }
                r
            }
            Scenario::Stream => {
                let req =
                    target.post_json(&send_body(&plan, "SendStreamingMessage", w, n, ""), true);
                let mut events = 0u32;
                let mut wrong: Option<String> = None;
                let mut terminal = false;
                let r = tokio::time::timeout(timeout, async {
                    c.sse(&req, &mut |_, data| {
                        if first_event.is_none() {
                            first_event = Some(Instant::now());
                        }
                        events += 1;
                        if !is_ok_result(data) && wrong.is_none() {
                            wrong = Some(snippet(data));
                        }
                        if memmem::find(data, b"TASK_STATE_COMPLETED").is_some() {
                            terminal = true;
                        }
                    })
                    .await
                })
                .await;
                r.map(|r| {
                    r.map(|status| match wrong {
                        _ if status != 200 => Err(format!("HTTP {status}")),
                        Some(w) => Err(w),
                        None if !terminal => Err(format!(
                            "the stream ended after {events} events, not completed"
                        )),
                        None => Ok(()),
                    })
                })
            }
            Scenario::Subscribe => unreachable!("handled by fan_out"),
        };
        let outcome = match outcome {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => {
                *conn = None;
                Err(e.to_string())
            }
            Err(_) => {
                *conn = None;
                Err("request timed out".to_owned())
            }
        };
        record(&plan, &mut stats, started, first_event, outcome);
    }
    stats
}

/// Creates `count` tasks with blocking SendMessage calls; returns their ids.
async fn preload(plan: &Plan, count: usize) -> Result<Vec<String>, String> {
    let lanes = 8.min(count.max(1));
    let per_lane = count.div_ceil(lanes);
    let mut handles = Vec::new();
    for lane in 0..lanes {
        let target = plan.targets[0].clone();
        let bodies: Vec<String> = (0..per_lane)
            .filter(|i| lane * per_lane + i < count)
            .map(|i| send_body(plan, "SendMessage", 100_000 + lane, i as u64, ""))
            .collect();
        handles.push(tokio::spawn(async move {
            let mut ids = Vec::new();
            let mut conn = Conn::connect(target.addr)
                .await
                .map_err(|e| format!("connect: {e}"))?;
            let mut body = Vec::new();
            for b in bodies {
                body.clear();
                if conn.closed {
                    conn = Conn::connect(target.addr)
                        .await
                        .map_err(|e| format!("connect: {e}"))?;
                }
                let status = conn
                    .unary(&target.post_json(&b, false), &mut body)
                    .await
                    .map_err(|e| format!("preload: {e}"))?;
                let v: Value = serde_json::from_slice(&body)
                    .map_err(|e| format!("preload answer (HTTP {status}): {e}"))?;
                let id = v["result"]["task"]["id"]
                    .as_str()
                    .ok_or_else(|| format!("preload answer without a task: {v}"))?;
                ids.push(id.to_owned());
            }
            Ok::<_, String>(ids)
        }));
    }
    let mut ids = Vec::new();
    for h in handles {
        ids.extend(h.await.map_err(|e| e.to_string())??);
    }
    Ok(ids)
}

/// Runs one scenario and returns its outcome.
pub(crate) async fn run(args: RunArgs) -> Result<Outcome, String> {
    let targets = args
        .url
        .iter()
        .map(|u| Target::parse(u))
        .collect::<Result<Vec<_>, _>>()?;
    if targets.is_empty() {
        return Err("no --url".into());
    }
    if args.binding == Binding::Grpc
        && !matches!(
            args.scenario,
            Scenario::Send | Scenario::Stream | Scenario::Get
        )
    {
        return Err(format!(
            "--binding grpc runs send, stream and get, not {}",
            args.scenario.name()
        ));
    }
    if args.binding == Binding::JsonRpcH2
        && !matches!(args.scenario, Scenario::Send | Scenario::Get)
    {
        return Err(format!(
            "--binding jsonrpc-h2 runs send and get, not {}",
            args.scenario.name()
        ));
    }
    if args.scenario == Scenario::Subscribe {
        if args.requests.is_some() {
            return Err("the subscribe scenario measures its fan-out, not --requests".into());
        }
        return fan_out(args, targets[0].clone()).await;
    }
    if args.callgrind_out.is_some() && args.server_pid.len() != 1 {
        return Err("--callgrind-out takes one --server-pid".into());
    }
    if args.binding != Binding::JsonRpc && targets.len() != 1 {
        return Err("--binding grpc and jsonrpc-h2 take one --url".into());
    }
    let channels = match args.binding {
        Binding::Grpc => grpc::connect(targets[0].addr, args.grpc_connections).await?,
        _ => Vec::new(),
    };
    let h2 = match args.binding {
        Binding::JsonRpcH2 => h2::connect(targets[0].addr, args.grpc_connections).await?,
        _ => Vec::new(),
    };
    let now = Instant::now();
    let mut plan = Plan {
        targets,
        text_json: serde_json::to_string(&args.text).map_err(|e| e.to_string())?,
        args: args.clone(),
        run_id: run_id(),
        task_ids: Vec::new(),
        channels,
        h2,
        ok: AtomicU64::new(0),
        start: now,
        from_ns: AtomicU64::new(u64::MAX),
        to_ns: AtomicU64::new(u64::MAX),
        stop: Default::default(),
    };
    if matches!(args.scenario, Scenario::Get | Scenario::List) && args.preload > 0 {
        plan.task_ids = preload(&plan, args.preload).await?;
    }
    if args.scenario == Scenario::Get && plan.task_ids.is_empty() {
        return Err("the get scenario needs --preload > 0".into());
    }
    plan.start = Instant::now();
    if args.requests.is_none() {
        let from = Duration::from_secs_f64(args.warmup);
        let to = from + Duration::from_secs_f64(args.duration);
        plan.from_ns = AtomicU64::new(nanos(from));
        plan.to_ns = AtomicU64::new(nanos(to));
    }
    let plan = Arc::new(plan);
    let pids: Vec<String> = args.server_pid.iter().map(u32::to_string).collect();
    let callgrind = args
        .server_pid
        .first()
        .copied()
        .zip(args.callgrind_out.clone());
    let db = args.db_process.clone();
    let sampler = {
        let plan = plan.clone();
        let pids = pids.clone();
        let callgrind = callgrind.clone();
        tokio::spawn(async move {
            // The window opens after the warm-up's requests, or at its end.
            let mut stalled = false;
            match plan.args.requests {
                Some(_) => stalled = !plan.reached(plan.args.warmup_requests).await,
                None => tokio::time::sleep_until(plan.at(&plan.from_ns).into()).await,
            }
            let mut counted = Ok(0);
            if let Some((server, _)) = &callgrind {
                let server = *server;
                counted = blocking(move || callgrind::zero(server)).await.map(|()| 0);
            }
            let a = (
                Instant::now(),
                plan.ok.load(Ordering::Relaxed),
                procfs::cpu_seconds_sum(&pids),
                procfs::cpu_seconds("self"),
            );
            let db0 = db.as_deref().map(procfs::cpu_by_comm);
            let m0 = procfs::machine_busy_seconds();
            match plan.args.requests {
                Some(n) => {
                    plan.mark(&plan.from_ns);
                    stalled = stalled || !plan.reached(a.1 + n).await;
                    plan.mark(&plan.to_ns);
                }
                None => tokio::time::sleep_until(plan.at(&plan.to_ns).into()).await,
            }
            plan.stop.store(true, Ordering::Relaxed);
            let b = (
                Instant::now(),
                plan.ok.load(Ordering::Relaxed),
                procfs::cpu_seconds_sum(&pids),
                procfs::cpu_seconds("self"),
            );
            let db1 = db.as_deref().map(procfs::cpu_by_comm);
            let m1 = procfs::machine_busy_seconds();
            if let (Some((server, out)), Ok(_)) = (callgrind, &counted) {
                counted = blocking(move || callgrind::dump(server, &out)).await;
            }
            // A process that started inside the window counts whole; one that ended in it is
            // lost (a connection pool's backends live as long as the pool).
            let db_cpu = db0.zip(db1).map(|(before, after)| {
                after
                    .iter()
                    .map(|(p, t)| t - before.get(p).copied().unwrap_or(0.0))
                    .sum::<f64>()
            });
            let machine = m0.zip(m1).map(|(x, y)| y - x);
            (a, b, db_cpu, machine, counted, stalled)
        })
    };
    let workers: Vec<_> = (0..args.concurrency.max(1))
        .map(|w| match args.binding {
            Binding::JsonRpc => tokio::spawn(worker(plan.clone(), w)),
            Binding::Grpc => tokio::spawn(grpc::worker(plan.clone(), w)),
            Binding::JsonRpcH2 => tokio::spawn(h2::worker(plan.clone(), w)),
        })
        .collect();
    let ((t0, ok0, s0, c0), (t1, ok1, s1, c1), db_cpu, machine, counted, stalled) =
        sampler.await.map_err(|e| e.to_string())?;
    let mut all = WorkerStats::default();
    let grace = Duration::from_secs_f64(args.timeout + 5.0);
    for w in workers {
        let abort = w.abort_handle();
        match tokio::time::timeout(grace, w).await {
            Ok(Ok(s)) => {
                all.latencies.extend(s.latencies);
                all.ttfe.extend(s.ttfe);
                all.errors += s.errors;
                if all.first_error.is_none() {
                    all.first_error = s.first_error;
                }
            }
            Ok(Err(e)) => all.error(format!("worker failed: {e}")),
            Err(_) => {
                abort.abort();
                all.error("worker did not stop");
            }
        }
    }
    if stalled {
        return Err(format!(
            "no request succeeded for {} s before the window's requests were reached (first error: {})",
            args.timeout,
            all.first_error.as_deref().unwrap_or("none")
        ));
    }
    all.latencies.sort_unstable();
    all.ttfe.sort_unstable();
    let seconds = (t1 - t0).as_secs_f64();
    let requests = ok1 - ok0;
    let cpu = match (s0, s1) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    let client_cpu = match (c0, c1) {
        (Some(a), Some(b)) => (b - a) / seconds * 100.0,
        _ => 0.0,
    };
    Ok(Outcome {
        label: args.label.clone(),
        scenario: args.scenario.name().to_owned(),
        binding: args.binding,
        concurrency: args.concurrency,
        seconds,
        requests,
        errors: all.errors,
        rps: requests as f64 / seconds,
        p50_ms: percentile(&all.latencies, 50.0),
        p99_ms: percentile(&all.latencies, 99.0),
        max_ms: all.latencies.last().map_or(0.0, |&m| m as f64 / 1e6),
        ttfe_p50_ms: (!all.ttfe.is_empty()).then(|| percentile(&all.ttfe, 50.0)),
        ttfe_p99_ms: (!all.ttfe.is_empty()).then(|| percentile(&all.ttfe, 99.0)),
        server_cpu_us: cpu
            .filter(|_| requests > 0)
            .map(|c| c * 1e6 / requests as f64),
        server_cpu_pct: cpu.map(|c| c / seconds * 100.0),
        db_cpu_us: db_cpu
            .filter(|_| requests > 0)
            .map(|c| c * 1e6 / requests as f64),
        db_cpu_pct: db_cpu.map(|c| c / seconds * 100.0),
        machine_cpu_pct: machine.map(|c| c / seconds * 100.0),
        server_instructions: match (&args.callgrind_out, counted) {
            (None, _) => None,
            (Some(_), Ok(ir)) => (requests > 0).then(|| ir as f64 / requests as f64),
            (Some(_), Err(e)) => return Err(e),
        },
        under_callgrind: args.callgrind_out.is_some(),
        client_cpu_pct: client_cpu,
        server_rss_mib: procfs::rss_mib_sum(&pids),
        subscribe: None,
        first_error: all.first_error,
    })
}

/// One subscriber's view of the task's stream.
#[derive(Default)]
struct SubscriberLog {
    /// `(seq, received)` of every event with an id.
    events: Vec<(u64, Instant)>,
    complete: bool,
    error: Option<String>,
}

/// The SubscribeToTask fan-out: one long-running task (the demo agent's `countdown`), N
/// subscribers that each must see every event from their snapshot to the terminal event.
async fn fan_out(args: RunArgs, target: Target) -> Result<Outcome, String> {
    let n = args.subscribers.max(1);
    let steps = args
        .countdown
        .unwrap_or_else(|| 20 + u32::try_from(n / 200).unwrap_or(u32::MAX));
    let pid = args.server_pid.first().map(u32::to_string);
    let cpu_before = pid.as_deref().and_then(procfs::cpu_seconds);
    let self_before = procfs::cpu_seconds("self");
    let mut conn = Conn::connect(target.addr)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{{"message":{{"role":"ROLE_USER","parts":[{{"text":"countdown {steps}"}}],"messageId":"{}-fanout"}},"configuration":{{"returnImmediately":true}}}}}}"#,
        run_id()
    );
    let mut answer = Vec::new();
    conn.unary(&target.post_json(&body, false), &mut answer)
        .await
        .map_err(|e| format!("creating the task: {e}"))?;
    let v: Value = serde_json::from_slice(&answer).map_err(|e| e.to_string())?;
    let task_id = v["result"]["task"]["id"]
        .as_str()
        .ok_or_else(|| {
            format!("the subscribe scenario needs the demo agent's countdown task; got {v}")
        })?
        .to_owned();
    let started = Instant::now();
    let connecting = Arc::new(Semaphore::new(256));
    let subscribed = Arc::new(AtomicUsize::new(0));
    // When the last subscriber got its first event, and the server's RSS then.
    type Moment = Option<(Instant, Option<f64>)>;
    let all_subscribed: Arc<Mutex<Moment>> = Arc::default();
    let finished = Arc::new(AtomicBool::new(false));
    let rss_peak = Arc::new(Mutex::new(None::<f64>));
    let sampler = {
        let (pid, finished, rss_peak) = (pid.clone(), finished.clone(), rss_peak.clone());
        tokio::spawn(async move {
            while !finished.load(Ordering::Relaxed) {
                if let Some(r) = pid.as_deref().and_then(procfs::rss_mib) {
                    let mut p = rss_peak.lock().expect("lock");
                    *p = Some(p.map_or(r, |q: f64| q.max(r)));
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
    };
    let limit = Duration::from_secs_f64(f64::from(steps) * 0.1 + 60.0 + args.timeout);
    let mut handles = Vec::with_capacity(n);
    for i in 0..n {
        let target = target.clone();
        let task_id = task_id.clone();
        let connecting = connecting.clone();
        let subscribed = subscribed.clone();
        let all_subscribed = all_subscribed.clone();
        let pid = pid.clone();
        handles.push(tokio::spawn(async move {
            let mut log = SubscriberLog::default();
            let permit = connecting.acquire_owned().await.expect("semaphore");
            let mut permit = Some(permit);
            let mut conn = match Conn::connect(target.addr).await {
                Ok(c) => c,
                Err(e) => {
                    log.error = Some(format!("connect: {e}"));
                    return log;
                }
            };
            let req = target.post_json(
                &format!(
                    r#"{{"jsonrpc":"2.0","id":{i},"method":"SubscribeToTask","params":{{"id":"{task_id}"}}}}"#
                ),
                true,
            );
            let mut wrong: Option<String> = None;
            let mut last_terminal = false;
            let r = tokio::time::timeout(
                limit,
                conn.sse(&req, &mut |id, data| {
                    if permit.take().is_some() {
                        let k = subscribed.fetch_add(1, Ordering::Relaxed) + 1;
                        if k == n {
                            let rss = pid.as_deref().and_then(procfs::rss_mib);
                            *all_subscribed.lock().expect("lock") = Some((Instant::now(), rss));
                        }
                    }
                    if !is_ok_result(data) && wrong.is_none() {
                        wrong = Some(snippet(data));
                    }
                    last_terminal = memmem::find(data, b"TASK_STATE_COMPLETED").is_some();
                    if let Some(seq) = id {
                        log.events.push((seq, Instant::now()));
                    }
                }),
            )
            .await;
            let gap_free = log.events.windows(2).all(|w| w[1].0 == w[0].0 + 1);
            log.error = match r {
                Err(_) => Some("timed out".into()),
                Ok(Err(e)) => Some(e.to_string()),
                Ok(Ok(status)) if status != 200 => Some(format!("HTTP {status}")),
                Ok(Ok(_)) => match wrong {
                    Some(w) => Some(w),
                    None if !gap_free => Some("a gap in the event sequence".into()),
                    None if !last_terminal => Some("the stream ended before COMPLETED".into()),
                    None => None,
                },
            };
            log.complete = log.error.is_none();
            log
        }));
    }
    let mut logs = Vec::with_capacity(n);
    let mut first_error = None;
    for h in handles {
        match h.await {
            Ok(log) => {
                if first_error.is_none() {
                    first_error.clone_from(&log.error);
                }
                logs.push(log);
            }
            Err(e) => first_error = Some(e.to_string()),
        }
    }
    finished.store(true, Ordering::Relaxed);
    let _ = sampler.await;
    let ended = Instant::now();
    let mut earliest: std::collections::HashMap<u64, Instant> = Default::default();
    for log in &logs {
        for &(seq, at) in &log.events {
            earliest
                .entry(seq)
                .and_modify(|e| *e = (*e).min(at))
                .or_insert(at);
        }
    }
    let mut spread: Vec<u64> = logs
        .iter()
        .flat_map(|l| l.events.iter())
        .map(|(seq, at)| u64::try_from((*at - earliest[seq]).as_nanos()).unwrap_or(u64::MAX))
        .collect();
    spread.sort_unstable();
    let complete = logs.iter().filter(|l| l.complete).count();
    let delivered: u64 = logs.iter().map(|l| l.events.len() as u64).sum();
    let seconds = (ended - started).as_secs_f64();
    let subscribed_at = *all_subscribed.lock().expect("lock");
    let cpu = match (cpu_before, pid.as_deref().and_then(procfs::cpu_seconds)) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    let client_cpu = match (self_before, procfs::cpu_seconds("self")) {
        (Some(a), Some(b)) => (b - a) / seconds * 100.0,
        _ => 0.0,
    };
    let peak = *rss_peak.lock().expect("lock");
    Ok(Outcome {
        label: args.label.clone(),
        scenario: "subscribe".into(),
        binding: Binding::JsonRpc,
        concurrency: n,
        seconds,
        requests: delivered,
        errors: (n - complete) as u64,
        rps: delivered as f64 / seconds,
        p50_ms: percentile(&spread, 50.0),
        p99_ms: percentile(&spread, 99.0),
        max_ms: spread.last().map_or(0.0, |&m| m as f64 / 1e6),
        ttfe_p50_ms: None,
        ttfe_p99_ms: None,
        server_cpu_us: cpu
            .filter(|_| delivered > 0)
            .map(|c| c * 1e6 / delivered as f64),
        server_cpu_pct: cpu.map(|c| c / seconds * 100.0),
        db_cpu_us: None,
        db_cpu_pct: None,
        machine_cpu_pct: None,
        server_instructions: None,
        under_callgrind: args.callgrind_out.is_some(),
        client_cpu_pct: client_cpu,
        server_rss_mib: pid.as_deref().and_then(procfs::rss_mib),
        subscribe: Some(FanOut {
            subscribers: n,
            complete,
            events_delivered: delivered,
            all_subscribed_s: subscribed_at.map_or(f64::NAN, |(t, _)| (t - started).as_secs_f64()),
            rss_subscribed_mib: subscribed_at.and_then(|(_, r)| r),
            rss_peak_mib: peak,
            spread_p50_ms: percentile(&spread, 50.0),
            spread_p99_ms: percentile(&spread, 99.0),
        }),
        first_error,
    })
}

/// Prints an outcome for people.
pub(crate) fn print(o: &Outcome) {
    let opt = |v: Option<f64>, unit: &str| v.map_or("-".to_owned(), |v| format!("{v:.3}{unit}"));
    if let Some(f) = &o.subscribe {
        println!(
            "{} subscribe: {} subscribers, {} received every event, {} events in {:.2}s ({:.0}/s); all subscribed after {:.2}s; delivery spread p50 {:.3} ms p99 {:.3} ms; server RSS subscribed {} peak {}; server CPU {} per delivery",
            o.label,
            f.subscribers,
            f.complete,
            f.events_delivered,
            o.seconds,
            o.rps,
            f.all_subscribed_s,
            f.spread_p50_ms,
            f.spread_p99_ms,
            opt(f.rss_subscribed_mib, " MiB"),
            opt(f.rss_peak_mib, " MiB"),
            opt(o.server_cpu_us, " µs"),
        );
    } else {
        println!(
            "{} {} c={}: {:.0} req/s, p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms, first event p50 {} p99 {}, server CPU {}/req ({}), client CPU {:.0}%, other CPU {}, {} requests, {} errors",
            o.shown_label(),
            o.scenario,
            o.concurrency,
            o.rps,
            o.p50_ms,
            o.p99_ms,
            o.max_ms,
            opt(o.ttfe_p50_ms, " ms"),
            opt(o.ttfe_p99_ms, " ms"),
            opt(o.server_cpu_us, " µs"),
            opt(o.server_cpu_pct, "%"),
            o.client_cpu_pct,
            opt(o.other_cpu_pct(), "%"),
            o.requests,
            o.errors,
        );
    }
    if let Some(db) = o.db_cpu_pct {
        println!(
            "  database CPU {}/req ({db:.0}%), machine CPU {}",
            opt(o.db_cpu_us, " µs"),
            opt(o.machine_cpu_pct, "%")
        );
    }
    if let Some(ir) = o.server_instructions {
        println!("  server user-space instructions: {ir:.0} per request (callgrind)");
    }
    if let Some(e) = &o.first_error {
        println!("  first error: {e}");
    }
}
