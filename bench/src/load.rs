//! The load scenarios: closed-loop workers (each with one keep-alive connection, one request
//! in flight) for a fixed duration after a warm-up (or a fixed number of requests after a number
//! of warm-up requests: `--requests`), and the SubscribeToTask fan-out. Over gRPC
//! ([`grpc`]) and JSON-RPC over HTTP/2 ([`h2`]) the workers share HTTP/2 connections instead,
//! one call in flight each. The HTTP/1.1 workers are [`http1`]'s, the fan-out
//! [`fan_out`](mod@fan_out)'s; [`plan`] holds what the workers share and [`outcome`] the result.

mod fan_out;
mod grpc;
mod h2;
mod http1;
mod outcome;
mod plan;

pub(crate) use outcome::{Outcome, print};

use crate::http::Target;
use crate::{callgrind, procfs};
use fan_out::fan_out;
use outcome::{FanOut, percentile};
use plan::{Plan, WorkerStats, is_ok_result, nanos, record, run_id, send_body, snippet};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

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

/// Runs blocking work (a child process) off the runtime's threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| e.to_string())?
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
        plan.task_ids = http1::preload(&plan, args.preload).await?;
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
            Binding::JsonRpc => tokio::spawn(http1::worker(plan.clone(), w)),
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
