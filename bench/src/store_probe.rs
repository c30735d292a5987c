//! `a2a-bench store`: fills a task store directly through the `TaskStore` trait with echo-like
//! tasks (created with the user message and one artifact, then completed: two writes each, as
//! the server makes them) and reports, at each checkpoint, the process RSS, the store's size on
//! disk, and the latency of the first `ListTasks` page and of `GetTask` through the
//! transport-independent `RequestHandler`.

use crate::procfs;
use a2a_core::{
    Artifact, GetTaskRequest, ListTasksRequest, Message, StreamResponse, Task, TaskId, TaskState,
    TaskStatus, TaskStatusUpdateEvent,
};
use a2a_server::demo::DemoAgent;
use a2a_server::{CallContext, MemoryStore, Scope, Server, SledStore, Store};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// Options of `a2a-bench store`.
#[derive(Clone, Debug, clap::Args)]
pub(crate) struct StoreArgs {
    /// The sled directory (default: a temporary one, deleted at the end).
    #[arg(long)]
    pub(crate) dir: Option<PathBuf>,
    /// Report at these task counts (the last one is the total).
    #[arg(long, value_delimiter = ',', default_value = "100000,1000000")]
    pub(crate) checkpoints: Vec<usize>,
    /// sled's page cache in MiB (the server's default is 64).
    #[arg(long, default_value_t = 64)]
    pub(crate) cache_mib: u64,
    /// Measure the in-memory store instead of sled.
    #[arg(long)]
    pub(crate) memory: bool,
    /// Concurrent writers.
    #[arg(long, default_value_t = 4)]
    pub(crate) writers: usize,
    /// Append each checkpoint as a JSON line to this file.
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Write nothing: open the existing store in `--dir` (as a restarting server does) and
    /// report the time to open, the RSS and the ListTasks latency.
    #[arg(long, requires = "dir")]
    pub(crate) reopen: bool,
}

#[derive(Debug, Serialize)]
struct Checkpoint {
    store: &'static str,
    tasks: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    open_seconds: Option<f64>,
    fill_seconds: f64,
    writes_per_sec: f64,
    rss_mib: f64,
    peak_rss_mib: f64,
    disk_mib: Option<f64>,
    cache_mib: Option<u64>,
    list_first_page_cold_ms: f64,
    list_first_page_p50_ms: f64,
    list_first_page_max_ms: f64,
    list_total_size: i32,
    get_task_p50_us: f64,
}

/// The total size of the files under `dir`.
pub(crate) fn dir_size(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_size(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

fn echo_task(i: usize) -> (Task, Task, StreamResponse) {
    let id = format!("task-{i:08}");
    let ctx = format!("ctx-{i:08}");
    let mut user = Message::user_text("hello");
    user.task_id = Some(TaskId::from(id.as_str()));
    user.context_id = Some(ctx.as_str().into());
    let mut created = Task::new(
        id.as_str(),
        ctx.as_str(),
        TaskStatus::new(TaskState::Submitted),
    );
    created.history.push(user);
    created.apply_artifact(Artifact::text("echo", "echo: hello"), false);
    let mut done = created.clone();
    done.status = TaskStatus::new(TaskState::Completed);
    let event = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: done.id.clone(),
        context_id: done.context_id.clone(),
        status: done.status.clone(),
        metadata: None,
        generation: 0,
    });
    (created, done, event)
}

async fn fill(store: Arc<dyn Store>, from: usize, to: usize, writers: usize) -> Result<(), String> {
    let mut handles = Vec::new();
    for w in 0..writers {
        let store = store.clone();
        handles.push(tokio::spawn(async move {
            let mut i = from + w;
            let mut n = 0;
            while i < to {
                let (created, done, event) = echo_task(i);
                store
                    .create(std::sync::Arc::new(created), Scope::default())
                    .await
                    .map_err(|e| e.to_string())?;
                store
                    .update(std::sync::Arc::new(done), 1, &event)
                    .await
                    .map_err(|e| e.to_string())?;
                n += 1;
                if n % 1000 == 0 {
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

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Runs the probe.
pub(crate) async fn probe(args: StoreArgs) -> Result<(), String> {
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = args.dir.clone().unwrap_or_else(|| tmp.path().join("sled"));
    let opening = Instant::now();
    let store: Arc<dyn Store> = if args.memory {
        Arc::new(MemoryStore::new())
    } else {
        Arc::new(
            SledStore::open_with_cache(&dir, args.cache_mib * 1024 * 1024)
                .map_err(|e| e.to_string())?,
        )
    };
    let server = Server::builder(DemoAgent)
        .task_store_arc(store.clone())
        .build()
        .map_err(|e| e.to_string())?;
    let handler = server.handler();
    let cx = CallContext::default();
    let open_seconds = opening.elapsed().as_secs_f64();
    let mut checkpoints = args.checkpoints.clone();
    checkpoints.sort_unstable();
    if args.reopen {
        checkpoints = vec![0];
    }
    let started = Instant::now();
    let mut done = 0;
    println!(
        "{} store{}: {} {} tasks with {} writers",
        if args.memory { "memory" } else { "sled" },
        if args.memory {
            String::new()
        } else {
            format!(" in {} (cache {} MiB)", dir.display(), args.cache_mib)
        },
        if args.reopen {
            "reopened, not adding"
        } else {
            "filling to"
        },
        checkpoints.last().copied().unwrap_or(0),
        args.writers
    );
    for &target in &checkpoints {
        if !args.reopen {
            fill(store.clone(), done, target, args.writers.max(1)).await?;
            done = target;
        }
        let fill_seconds = started.elapsed().as_secs_f64();
        let req = ListTasksRequest {
            page_size: Some(50),
            ..ListTasksRequest::default()
        };
        let t = Instant::now();
        let first = handler
            .list_tasks(&cx, req.clone())
            .await
            .map_err(|e| e.message)?;
        let cold = t.elapsed();
        let mut times = Vec::new();
        for _ in 0..21 {
            let t = Instant::now();
            handler
                .list_tasks(&cx, req.clone())
                .await
                .map_err(|e| e.message)?;
            times.push(t.elapsed());
        }
        times.sort();
        if args.reopen {
            done = usize::try_from(first.total_size).unwrap_or(0).max(1);
        }
        let mut gets = Vec::new();
        for k in 0..201 {
            let i = (k * 7919) % done;
            let get: GetTaskRequest =
                serde_json::from_value(serde_json::json!({ "id": format!("task-{i:08}") }))
                    .map_err(|e| e.to_string())?;
            let t = Instant::now();
            handler.get_task(&cx, get).await.map_err(|e| e.message)?;
            gets.push(t.elapsed());
        }
        gets.sort();
        let c = Checkpoint {
            store: if args.memory { "memory" } else { "sled" },
            tasks: done,
            open_seconds: args.reopen.then_some(open_seconds),
            fill_seconds,
            writes_per_sec: (2 * done) as f64 / fill_seconds,
            rss_mib: procfs::rss_mib("self").unwrap_or(f64::NAN),
            peak_rss_mib: procfs::peak_rss_mib("self").unwrap_or(f64::NAN),
            disk_mib: (!args.memory).then(|| dir_size(&dir) as f64 / 1024.0 / 1024.0),
            cache_mib: (!args.memory).then_some(args.cache_mib),
            list_first_page_cold_ms: ms(cold),
            list_first_page_p50_ms: ms(times[times.len() / 2]),
            list_first_page_max_ms: ms(times[times.len() - 1]),
            list_total_size: first.total_size,
            get_task_p50_us: ms(gets[gets.len() / 2]) * 1e3,
        };
        if let Some(o) = c.open_seconds {
            println!("reopened in {o:.2}s");
        }
        println!(
            "{} tasks: RSS {:.0} MiB (peak {:.0}), disk {}, ListTasks first page p50 {:.3} ms (cold {:.3} ms, max {:.3} ms, totalSize {}), GetTask p50 {:.1} µs{}",
            c.tasks,
            c.rss_mib,
            c.peak_rss_mib,
            c.disk_mib.map_or("-".into(), |d| format!("{d:.0} MiB")),
            c.list_first_page_p50_ms,
            c.list_first_page_cold_ms,
            c.list_first_page_max_ms,
            c.list_total_size,
            c.get_task_p50_us,
            if args.reopen {
                String::new()
            } else {
                format!(
                    ", filled in {:.1}s ({:.0} writes/s)",
                    c.fill_seconds, c.writes_per_sec
                )
            },
        );
        if let Some(out) = &args.out {
            use std::io::Write as _;
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(out)
                .map_err(|e| e.to_string())?;
            writeln!(
                f,
                "{}",
                serde_json::to_string(&c).map_err(|e| e.to_string())?
            )
            .map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}
