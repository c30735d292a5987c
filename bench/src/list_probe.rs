//! `a2a-bench list`: fills a task store with many tasks spread over scopes (tenants), contexts
//! and states, serves it over a real socket, and measures `ListTasks` with each filter
//! combination, then `SendMessage` latency alone and while concurrent `ListTasks` callers run.
//!
//! Task `i` is in tenant `t{i % scopes}`, context `c{(i / scopes) % contexts}`, one of four
//! states that the server's start-up recovery leaves alone (completed, failed, canceled,
//! input-required), with status time `BASE_MS + i`. A filled sled directory is marked with a
//! file `a2a-bench-list-filled` and reused by later runs.

use crate::http::{Conn, Target};
use a2a_core::{Message, Task, TaskId, TaskState, TaskStatus, Timestamp};
use a2a_server::demo::DemoAgent;
use a2a_server::{MemoryStore, Scope, Server, SledStore, Store};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Options of `a2a-bench list`.
#[derive(Clone, Debug, clap::Args)]
pub(crate) struct ListArgs {
    /// The sled directory: filled once (marked by a file `a2a-bench-list-filled`), then reused.
    #[arg(long, required_unless_present = "memory")]
    pub(crate) dir: Option<PathBuf>,
    /// Measure the in-memory store instead of sled.
    #[arg(long)]
    pub(crate) memory: bool,
    /// How many tasks to fill.
    #[arg(long, default_value_t = 1_000_000)]
    pub(crate) tasks: usize,
    /// Tenants the tasks are spread over.
    #[arg(long, default_value_t = 100)]
    pub(crate) scopes: usize,
    /// Contexts per tenant.
    #[arg(long, default_value_t = 50)]
    pub(crate) contexts: usize,
    /// ListTasks calls measured per filter combination.
    #[arg(long, default_value_t = 50)]
    pub(crate) samples: usize,
    /// Concurrent ListTasks callers while SendMessage latency is measured.
    #[arg(long, default_value_t = 8)]
    pub(crate) callers: usize,
    /// Seconds of SendMessage measurement, alone and under the ListTasks load (each).
    #[arg(long, default_value_t = 5.0)]
    pub(crate) duration: f64,
    /// sled's page cache in MiB.
    #[arg(long, default_value_t = 64)]
    pub(crate) cache_mib: u64,
}

const BASE_MS: i64 = 1_760_000_000_000;
const STATES: [TaskState; 4] = [
    TaskState::Completed,
    TaskState::Failed,
    TaskState::Canceled,
    TaskState::InputRequired,
];
const FILLED: &str = "a2a-bench-list-filled";

fn state_of(i: usize) -> TaskState {
    STATES[(i.wrapping_mul(2_654_435_761) >> 7) % STATES.len()].clone()
}

fn task(args: &ListArgs, i: usize) -> (Task, Scope) {
    let scope = Scope {
        tenant: Some(format!("t{:03}", i % args.scopes)),
        owner: None,
    };
    let ctx = format!("c{:03}", (i / args.scopes) % args.contexts);
    let mut status = TaskStatus::new(state_of(i));
    status.timestamp = Timestamp::from_unix_millis(BASE_MS + i as i64);
    let mut t = Task::new(format!("task-{i:08}").as_str(), ctx.as_str(), status);
    let mut user = Message::user_text("hello");
    user.task_id = Some(TaskId::from(t.id.as_str()));
    user.context_id = Some(t.context_id.clone());
    t.history.push(user);
    (t, scope)
}

async fn fill(store: Arc<dyn Store>, args: &ListArgs) -> Result<(), String> {
    let writers = 4;
    let mut handles = Vec::new();
    for w in 0..writers {
        let store = store.clone();
        let args = args.clone();
        handles.push(tokio::spawn(async move {
            let mut i = w;
            while i < args.tasks {
                let (t, scope) = task(&args, i);
                store
                    .create(Arc::new(t), scope)
                    .await
                    .map_err(|e| e.to_string())?;
                if i % 10_000 == w {
                    store.sync().await.map_err(|e| e.to_string())?;
                }
                i += writers;
            }
            Ok::<_, String>(())
        }));
    }
    for h in handles {
        h.await.map_err(|e| e.to_string())??;
    }
    store.sync().await.map_err(|e| e.to_string())
}

/// The filter combinations measured.
const COMBOS: [(&str, bool, bool, bool); 8] = [
    ("scope", false, false, false),
    ("scope+context", true, false, false),
    ("scope+state", false, true, false),
    ("scope+context+state", true, true, false),
    ("scope+after", false, false, true),
    ("scope+context+after", true, false, true),
    ("scope+state+after", false, true, true),
    ("scope+context+state+after", true, true, true),
];

/// A ListTasks JSON-RPC body for call `n` with the given filters.
fn list_body(args: &ListArgs, n: usize, combo: (bool, bool, bool)) -> String {
    let mut params = format!(r#""tenant":"t{:03}","pageSize":50"#, (n * 37) % args.scopes);
    if combo.0 {
        params += &format!(r#","contextId":"c{:03}""#, (n * 13) % args.contexts);
    }
    if combo.1 {
        let state = serde_json::to_string(&STATES[n % STATES.len()]).unwrap_or_default();
        params += &format!(r#","status":{state}"#);
    }
    if combo.2 {
        // The newest half of the tasks.
        let after = Timestamp::from_unix_millis(BASE_MS + (args.tasks / 2) as i64);
        let after = serde_json::to_string(&after).unwrap_or_default();
        params += &format!(r#","statusTimestampAfter":{after}"#);
    }
    format!(r#"{{"jsonrpc":"2.0","id":{n},"method":"ListTasks","params":{{{params}}}}}"#)
}

fn total_size(body: &[u8]) -> Option<u64> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    v["result"]["totalSize"].as_u64()
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1e3
}

async fn call(conn: &mut Conn, target: &Target, body: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let status = conn
        .unary(&target.post_json(body, false), &mut out)
        .await
        .map_err(|e| e.to_string())?;
    if status != 200 || memchr::memmem::find(&out, br#""error":{"#).is_some() {
        return Err(format!(
            "HTTP {status}: {}",
            String::from_utf8_lossy(&out[..out.len().min(300)])
        ));
    }
    Ok(out)
}

/// Blocking SendMessage calls in a loop for `duration`; their latencies, sorted.
async fn sends(target: &Target, duration: Duration, tag: &str) -> Result<Vec<Duration>, String> {
    let mut conn = Conn::connect(target.addr)
        .await
        .map_err(|e| e.to_string())?;
    let started = Instant::now();
    let mut times = Vec::new();
    let mut n = 0u64;
    while started.elapsed() < duration {
        n += 1;
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{n},"method":"SendMessage","params":{{"message":{{"role":"ROLE_USER","parts":[{{"text":"hello"}}],"messageId":"{tag}-{n}"}}}}}}"#
        );
        let t = Instant::now();
        call(&mut conn, target, &body).await?;
        times.push(t.elapsed());
    }
    times.sort();
    Ok(times)
}

/// Runs the probe.
pub(crate) fn probe(args: ListArgs) -> Result<(), String> {
    // The server gets its own multi-threaded runtime (as in production: a worker per core);
    // the measuring clients run on another one.
    let server_rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let store: Arc<dyn Store> = match &args.dir {
        Some(dir) if !args.memory => {
            let opening = Instant::now();
            let store = SledStore::open_with_cache(dir, args.cache_mib * 1024 * 1024)
                .map_err(|e| e.to_string())?;
            println!(
                "sled store in {} opened in {:.2} s",
                dir.display(),
                opening.elapsed().as_secs_f64()
            );
            Arc::new(store)
        }
        _ => Arc::new(MemoryStore::new()),
    };
    let marker = args.dir.as_ref().map(|d| d.join(FILLED));
    if args.memory || !marker.as_ref().is_some_and(|m| m.exists()) {
        let started = Instant::now();
        server_rt.block_on(fill(store.clone(), &args))?;
        println!(
            "filled {} tasks ({} tenants x {} contexts x {} states) in {:.1} s",
            args.tasks,
            args.scopes,
            args.contexts,
            STATES.len(),
            started.elapsed().as_secs_f64()
        );
        if let (false, Some(m)) = (args.memory, &marker) {
            std::fs::write(m, args.tasks.to_string()).map_err(|e| e.to_string())?;
        }
    }
    let listener = server_rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .map_err(|e| e.to_string())?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let app = server_rt.block_on(async {
        Server::builder(DemoAgent)
            .task_store_arc(store.clone())
            .build()
            .map(Server::into_router)
            .map_err(|e| e.to_string())
    })?;
    server_rt.spawn(async move { axum::serve(listener, app).await });
    let target = Target::parse(&format!("http://{addr}/"))?;
    let client_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    client_rt.block_on(measure(&args, &target))
}

async fn measure(args: &ListArgs, target: &Target) -> Result<(), String> {
    println!(
        "ListTasks, first page of 50, {} calls per filter (random tenant/context/state):",
        args.samples
    );
    println!(
        "{:<28} {:>10} {:>10} {:>10} {:>12}",
        "filters", "p50 ms", "p99 ms", "max ms", "totalSize~"
    );
    let mut conn = Conn::connect(target.addr)
        .await
        .map_err(|e| e.to_string())?;
    for (name, ctx, state, after) in COMBOS {
        let mut times = Vec::new();
        let mut totals = 0u64;
        for n in 0..args.samples {
            let body = list_body(args, n, (ctx, state, after));
            let t = Instant::now();
            let out = call(&mut conn, target, &body).await?;
            times.push(t.elapsed());
            totals += total_size(&out).unwrap_or_default();
        }
        times.sort();
        println!(
            "{name:<28} {:>10.3} {:>10.3} {:>10.3} {:>12}",
            pct(&times, 0.5),
            pct(&times, 0.99),
            pct(&times, 1.0),
            totals / args.samples.max(1) as u64
        );
    }
    let duration = Duration::from_secs_f64(args.duration);
    let alone = sends(target, duration, &format!("alone-{}", std::process::id())).await?;
    println!(
        "SendMessage alone: {} calls, p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        alone.len(),
        pct(&alone, 0.5),
        pct(&alone, 0.99),
        pct(&alone, 1.0)
    );
    let stop = Arc::new(AtomicBool::new(false));
    let lists = Arc::new(AtomicU64::new(0));
    let mut callers = Vec::new();
    for c in 0..args.callers {
        let (stop, lists, target, args) =
            (stop.clone(), lists.clone(), target.clone(), args.clone());
        callers.push(tokio::spawn(async move {
            let mut conn = Conn::connect(target.addr)
                .await
                .map_err(|e| e.to_string())?;
            let mut n = c;
            while !stop.load(Ordering::Relaxed) {
                let (_, ctx, state, after) = COMBOS[n % COMBOS.len()];
                call(
                    &mut conn,
                    &target,
                    &list_body(&args, n, (ctx, state, after)),
                )
                .await?;
                lists.fetch_add(1, Ordering::Relaxed);
                n += args.callers;
            }
            Ok::<_, String>(())
        }));
    }
    let loaded = sends(target, duration, &format!("loaded-{}", std::process::id())).await?;
    stop.store(true, Ordering::Relaxed);
    for c in callers {
        c.await.map_err(|e| e.to_string())??;
    }
    println!(
        "SendMessage with {} ListTasks callers: {} calls, p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms ({} ListTasks answered meanwhile)",
        args.callers,
        loaded.len(),
        pct(&loaded, 0.5),
        pct(&loaded, 0.99),
        pct(&loaded, 1.0),
        lists.load(Ordering::Relaxed)
    );
    Ok(())
}
