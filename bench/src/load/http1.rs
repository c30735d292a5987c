//! The JSON-RPC load over HTTP/1.1: closed-loop workers, each with one keep-alive connection
//! per replica and one request in flight, and the preloading of tasks for `get` and `list`.

use super::{Plan, Scenario, WorkerStats, is_ok_result, record, send_body, snippet};
use crate::http::Conn;
use memchr::memmem;
use serde_json::Value;
use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

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

pub(super) async fn worker(plan: Arc<Plan>, w: usize) -> WorkerStats {
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
pub(super) async fn preload(plan: &Plan, count: usize) -> Result<Vec<String>, String> {
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
