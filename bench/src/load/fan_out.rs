//! The `subscribe` scenario: the SubscribeToTask fan-out on one long-running task.

use super::{Binding, FanOut, Outcome, RunArgs, is_ok_result, percentile, run_id, snippet};
use crate::http::{Conn, Target};
use crate::procfs;
use memchr::memmem;
use serde_json::Value;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

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
pub(super) async fn fan_out(args: RunArgs, target: Target) -> Result<Outcome, String> {
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
