//! `a2a-bench replicas` and `a2a-bench recovery`: what it costs in time to run one server as
//! several replicas on one database (PostgreSQL: `a2a-server --postgres URL`).
//!
//! - **`replicas`**: cross-replica delivery latency. `--tasks` demo-agent `countdown` tasks are
//!   started on replica A (the first `--url`); each is watched with `SubscribeToTask` on A
//!   itself (the execution's in-process broadcast) and on replica B (the second `--url`: the
//!   database's `NOTIFY`, then a read of the log). Per event (matched by its SSE `id`, the log
//!   sequence) it reports B's arrival minus A's (the delay the other replica adds), and for
//!   status updates arrival minus the event's `status.timestamp` on each (the absolute delay
//!   from the agent's emitting the event, which is before its commit; the server writes
//!   timestamps truncated to the millisecond, so this reads up to 1 ms high, 0.5 ms on average).
//!   The snapshot each stream starts with is not an event and is not counted.
//! - **`recovery`**: time to recover the tasks of a replica that dies. `--tasks` countdown
//!   tasks are started on the first `--url`, which is then killed (`kill -9 --kill-pid`); the
//!   other URLs (survivors) are polled with `GetTask` every `--poll-ms` until every task is in
//!   a terminal state. Reports, from the kill, when the first and the last task were seen
//!   final, the same by the final status's own timestamp, and the final states and messages.
//!
//! Both compare the probe's wall clock with the server's timestamps: run them on the machine
//! of the servers.

use crate::http::{Conn, Target};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Options of `a2a-bench replicas`.
#[derive(Clone, Debug, clap::Args)]
pub(crate) struct ReplicasArgs {
    /// JSON-RPC URLs of two replicas, comma-separated: tasks run on the first (A) and are
    /// watched on both.
    #[arg(long, value_delimiter = ',', required = true)]
    url: Vec<String>,
    /// Countdown tasks running at once (each gives two events per step).
    #[arg(long, default_value_t = 10)]
    tasks: usize,
    /// Steps of each task (about 100 ms each).
    #[arg(long, default_value_t = 200)]
    countdown: u32,
}

/// Options of `a2a-bench recovery`.
#[derive(Clone, Debug, clap::Args)]
pub(crate) struct RecoveryArgs {
    /// JSON-RPC URLs, comma-separated: the replica to kill first, then the survivors.
    #[arg(long, value_delimiter = ',', required = true)]
    url: Vec<String>,
    /// The process id of the first URL's replica (killed with SIGKILL).
    #[arg(long)]
    kill_pid: u32,
    /// Countdown tasks running on the victim when it is killed.
    #[arg(long, default_value_t = 20)]
    tasks: usize,
    /// Steps of each task (long enough to outlive the recovery).
    #[arg(long, default_value_t = 900)]
    countdown: u32,
    /// Seconds the tasks run before the kill.
    #[arg(long, default_value_t = 2.0)]
    after: f64,
    /// Milliseconds between two polls of the unfinished tasks.
    #[arg(long, default_value_t = 20)]
    poll_ms: u64,
    /// Seconds to wait for every task to finish before giving up.
    #[arg(long, default_value_t = 120.0)]
    timeout: f64,
}

/// Nanoseconds since the Unix epoch (the server's timestamps are on this clock).
fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

/// Milliseconds since the epoch of an RFC 3339 timestamp.
fn millis(v: &Value) -> Option<i64> {
    let t: a2a_core::Timestamp = v.as_str()?.parse().ok()?;
    Some(t.unix_millis())
}

/// Percentiles of `v` (sorted here), in milliseconds.
fn pcts(v: &mut [i64]) -> String {
    if v.is_empty() {
        return "no samples".into();
    }
    v.sort_unstable();
    let at = |p: f64| {
        let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
        v[rank.clamp(1, v.len()) - 1] as f64 / 1e6
    };
    format!(
        "p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms ({} samples)",
        at(50.0),
        at(90.0),
        at(99.0),
        v[v.len() - 1] as f64 / 1e6,
        v.len()
    )
}

/// One JSON-RPC call on a fresh connection; returns `result`.
async fn call(target: &Target, method: &str, params: &str) -> Result<Value, String> {
    let mut conn = Conn::connect(target.addr)
        .await
        .map_err(|e| format!("{}: connect: {e}", target.host))?;
    let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{params}}}"#);
    let mut answer = Vec::new();
    conn.unary(&target.post_json(&body, false), &mut answer)
        .await
        .map_err(|e| format!("{}: {method}: {e}", target.host))?;
    let mut v: Value = serde_json::from_slice(&answer).map_err(|e| format!("{method}: {e}"))?;
    match v.get_mut("result") {
        Some(result) => Ok(result.take()),
        None => Err(format!("{}: {method}: {v}", target.host)),
    }
}

/// Starts a demo `countdown` task on `target` without waiting for it; returns its id.
async fn start_countdown(target: &Target, steps: u32, tag: &str) -> Result<String, String> {
    let params = format!(
        r#"{{"message":{{"role":"ROLE_USER","parts":[{{"text":"countdown {steps}"}}],"messageId":"{tag}-{}"}},"configuration":{{"returnImmediately":true}}}}"#,
        now_ns()
    );
    let result = call(target, "SendMessage", &params).await?;
    result["task"]["id"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("SendMessage answered without a task: {result}"))
}

/// What a subscriber saw of one event: when it arrived, and its status time if it has one.
#[derive(Clone, Copy, Debug)]
struct Seen {
    arrived_ns: i64,
    status_ms: Option<i64>,
}

/// Subscribes to `task` on `target` and records every event after the snapshot by sequence
/// number, until the stream ends; checks it ended COMPLETED.
async fn watch(
    target: Target,
    task: String,
    limit: Duration,
) -> Result<HashMap<u64, Seen>, String> {
    let mut conn = Conn::connect(target.addr)
        .await
        .map_err(|e| format!("{}: connect: {e}", target.host))?;
    let req = target.post_json(
        &format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"SubscribeToTask","params":{{"id":"{task}"}}}}"#
        ),
        true,
    );
    let mut seen = HashMap::new();
    let mut wrong = None;
    let mut completed = false;
    let status = tokio::time::timeout(
        limit,
        conn.sse(&req, &mut |id, data| {
            let arrived_ns = now_ns();
            let v: Value = match serde_json::from_slice(data) {
                Ok(v) => v,
                Err(e) => {
                    wrong.get_or_insert_with(|| format!("not JSON: {e}"));
                    return;
                }
            };
            let r = &v["result"];
            let status_ms = if r.get("statusUpdate").is_some() {
                let s = &r["statusUpdate"]["status"];
                completed |= s["state"] == "TASK_STATE_COMPLETED";
                millis(&s["timestamp"])
            } else if r.get("artifactUpdate").is_some() {
                None
            } else {
                if r.get("task").is_none() {
                    wrong.get_or_insert_with(|| v.to_string());
                }
                return; // the snapshot
            };
            if let Some(seq) = id {
                seen.insert(
                    seq,
                    Seen {
                        arrived_ns,
                        status_ms,
                    },
                );
            }
        }),
    )
    .await
    .map_err(|_| format!("{}: the stream of {task} did not end in time", target.host))?
    .map_err(|e| format!("{}: SubscribeToTask: {e}", target.host))?;
    if let Some(w) = wrong {
        return Err(format!("{}: {w}", target.host));
    }
    if status != 200 || !completed {
        return Err(format!(
            "{}: the stream of {task} ended (HTTP {status}) before COMPLETED",
            target.host
        ));
    }
    Ok(seen)
}

/// `a2a-bench replicas`.
pub(crate) async fn replicas(args: ReplicasArgs) -> Result<(), String> {
    let [a, b] = &args.url[..] else {
        return Err("--url takes two URLs: A (runs the tasks) and B".into());
    };
    let (a, b) = (Target::parse(a)?, Target::parse(b)?);
    let limit = Duration::from_secs(u64::from(args.countdown) / 10 + 60);
    let mut handles = Vec::new();
    for i in 0..args.tasks {
        let (a, b) = (a.clone(), b.clone());
        let steps = args.countdown;
        handles.push(tokio::spawn(async move {
            let task = start_countdown(&a, steps, &format!("replicas-{i}")).await?;
            let on_a = tokio::spawn(watch(a, task.clone(), limit));
            let on_b = tokio::spawn(watch(b, task, limit));
            let on_a = on_a.await.map_err(|e| e.to_string())??;
            let on_b = on_b.await.map_err(|e| e.to_string())??;
            Ok::<_, String>((on_a, on_b))
        }));
    }
    let (mut b_minus_a, mut abs_a, mut abs_b) = (Vec::new(), Vec::new(), Vec::new());
    let (mut only_a, mut only_b) = (0usize, 0usize);
    for h in handles {
        let (on_a, on_b) = h.await.map_err(|e| e.to_string())??;
        for (seq, sa) in &on_a {
            match on_b.get(seq) {
                Some(sb) => b_minus_a.push(sb.arrived_ns - sa.arrived_ns),
                None => only_a += 1,
            }
        }
        only_b += on_b.keys().filter(|s| !on_a.contains_key(s)).count();
        for (seen, abs) in [(&on_a, &mut abs_a), (&on_b, &mut abs_b)] {
            abs.extend(
                seen.values()
                    .filter_map(|s| Some(s.arrived_ns - s.status_ms? * 1_000_000)),
            );
        }
    }
    println!(
        "{} tasks × countdown {} on {} (A), watched on A and on {} (B)",
        args.tasks, args.countdown, a.host, b.host
    );
    println!(
        "  B arrival − A arrival (every event on both): {}",
        pcts(&mut b_minus_a)
    );
    println!(
        "  A arrival − status timestamp (status updates): {}",
        pcts(&mut abs_a)
    );
    println!(
        "  B arrival − status timestamp (status updates): {}",
        pcts(&mut abs_b)
    );
    println!(
        "  events seen only on A: {only_a}, only on B: {only_b} (after one stream's snapshot)"
    );
    Ok(())
}

/// `a2a-bench recovery`.
pub(crate) async fn recovery(args: RecoveryArgs) -> Result<(), String> {
    let targets = args
        .url
        .iter()
        .map(|u| Target::parse(u))
        .collect::<Result<Vec<_>, _>>()?;
    let Some((victim, survivors)) = targets.split_first().filter(|(_, s)| !s.is_empty()) else {
        return Err("--url takes the replica to kill, then at least one survivor".into());
    };
    let mut ids = Vec::new();
    for i in 0..args.tasks {
        ids.push(start_countdown(victim, args.countdown, &format!("recovery-{i}")).await?);
    }
    tokio::time::sleep(Duration::from_secs_f64(args.after)).await;
    for id in &ids {
        let t = call(&survivors[0], "GetTask", &format!(r#"{{"id":"{id}"}}"#)).await?;
        if t["status"]["state"] != "TASK_STATE_WORKING" {
            return Err(format!(
                "task {id} is not WORKING before the kill: {}",
                t["status"]
            ));
        }
    }
    let killed_ns = now_ns();
    let killed = Instant::now();
    let status = std::process::Command::new("kill")
        .args(["-9", &args.kill_pid.to_string()])
        .status()
        .map_err(|e| format!("kill: {e}"))?;
    if !status.success() {
        return Err(format!("kill -9 {} failed", args.kill_pid));
    }
    // id → (seen final after, final status time − kill, state, message)
    let mut done: BTreeMap<String, (Duration, i64, String, String)> = BTreeMap::new();
    let mut round = 0usize;
    while done.len() < ids.len() {
        if killed.elapsed() > Duration::from_secs_f64(args.timeout) {
            return Err(format!(
                "{} of {} tasks still not final {} s after the kill",
                ids.len() - done.len(),
                ids.len(),
                args.timeout
            ));
        }
        for id in &ids {
            if done.contains_key(id) {
                continue;
            }
            round += 1;
            let target = &survivors[round % survivors.len()];
            let t = call(target, "GetTask", &format!(r#"{{"id":"{id}"}}"#)).await?;
            let state = t["status"]["state"].as_str().unwrap_or("?").to_owned();
            if matches!(
                state.as_str(),
                "TASK_STATE_WORKING" | "TASK_STATE_SUBMITTED"
            ) {
                continue;
            }
            let status_ms = millis(&t["status"]["timestamp"]).unwrap_or(0);
            let message = t["status"]["message"]["parts"][0]["text"]
                .as_str()
                .unwrap_or("")
                .to_owned();
            done.insert(
                id.clone(),
                (
                    killed.elapsed(),
                    status_ms * 1_000_000 - killed_ns,
                    state,
                    message,
                ),
            );
        }
        tokio::time::sleep(Duration::from_millis(args.poll_ms)).await;
    }
    let seen: Vec<f64> = done.values().map(|d| d.0.as_secs_f64()).collect();
    let stamped: Vec<f64> = done.values().map(|d| d.1 as f64 / 1e9).collect();
    let range = |v: &[f64]| {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        format!("first {lo:.3} s, last {hi:.3} s")
    };
    let mut outcomes: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for d in done.values() {
        *outcomes.entry((&d.2, &d.3)).or_default() += 1;
    }
    println!(
        "{} countdown tasks on {} (pid {}), killed after {} s; survivors polled every {} ms",
        args.tasks, victim.host, args.kill_pid, args.after, args.poll_ms
    );
    println!("  final, as seen by polling: {}", range(&seen));
    println!(
        "  final, by the final status's timestamp: {}",
        range(&stamped)
    );
    for ((state, message), n) in outcomes {
        println!("  {n} × {state}: {message:?}");
    }
    Ok(())
}
