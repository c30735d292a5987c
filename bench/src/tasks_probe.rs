//! `a2a-bench tasks`: the memory a server keeps per finished task. Sends `--tasks` blocking
//! SendMessages in process (no HTTP) to the demo agent's echo skill on the in-memory store,
//! exactly the benchmark's echo tasks (the user message in the history, one artifact `echo:
//! <text>`, COMPLETED; a fresh message id and context each), and reports the live heap bytes
//! per task, counted by this binary's allocator, and the process RSS per task. Everything the
//! server keeps counts: the task, its event log, the listing indexes, the message-id claim (kept
//! for the de-duplication window), caches.

use crate::procfs;
use a2a_core::{Message, SendMessageRequest};
use a2a_server::demo::DemoAgent;
use a2a_server::{CallContext, MemoryStore, Server};
use serde::Serialize;
use std::sync::Arc;

/// The system allocator, counting the bytes live (requested sizes, not size classes): `cap`
/// does the counting, since this workspace forbids `unsafe`.
#[global_allocator]
static GLOBAL: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);

fn live() -> isize {
    GLOBAL.allocated() as isize
}

/// Options of `a2a-bench tasks`.
#[derive(Clone, Debug, clap::Args)]
pub(crate) struct TasksArgs {
    /// Tasks to create.
    #[arg(long, default_value_t = 200_000)]
    pub(crate) tasks: usize,
    /// Concurrent senders.
    #[arg(short = 'c', long, default_value_t = 16)]
    pub(crate) concurrency: usize,
    /// The message text.
    #[arg(long, default_value = "hello")]
    pub(crate) text: String,
    /// Bound the store to this many tasks (`MemoryStore::with_max_tasks`).
    #[arg(long)]
    pub(crate) max_tasks: Option<usize>,
}

#[derive(Debug, Serialize)]
struct Outcome {
    tasks: usize,
    heap_bytes_per_task: f64,
    rss_bytes_per_task: Option<f64>,
    heap_mib: f64,
    rss_mib: Option<f64>,
    seconds: f64,
}

fn rss_bytes() -> Option<f64> {
    procfs::rss_mib(&std::process::id().to_string()).map(|m| m * 1024.0 * 1024.0)
}

/// Runs the probe.
pub(crate) async fn probe(args: TasksArgs) -> Result<(), String> {
    let store = match args.max_tasks {
        Some(max) => MemoryStore::with_max_tasks(max),
        None => MemoryStore::new(),
    };
    let builder = Server::builder(DemoAgent).task_store(store);
    let server = builder.build().map_err(|e| e.to_string())?;
    let handler = server.handler();
    let text = Arc::<str>::from(args.text.as_str());
    // One task first, so that lazily built state (caches, the runtime's workers) is not
    // counted against the tasks.
    let cx = CallContext::default();
    let send = |h: Arc<a2a_server::RequestHandler>, text: Arc<str>| async move {
        let req = SendMessageRequest::new(Message::user_text(&*text));
        h.send_message(&CallContext::default(), req)
            .await
            .map(drop)
            .map_err(|e| e.message)
    };
    send(handler.clone(), text.clone()).await?;
    let _ = &cx;
    let (heap0, rss0) = (live(), rss_bytes());
    let started = std::time::Instant::now();
    let per = args.tasks.div_ceil(args.concurrency.max(1));
    let mut senders = Vec::new();
    for w in 0..args.concurrency.max(1) {
        let (handler, text) = (handler.clone(), text.clone());
        let n = per.min(args.tasks.saturating_sub(w * per));
        senders.push(tokio::spawn(async move {
            for _ in 0..n {
                send(handler.clone(), text.clone()).await?;
            }
            Ok::<_, String>(())
        }));
    }
    for s in senders {
        s.await.map_err(|e| e.to_string())??;
    }
    let seconds = started.elapsed().as_secs_f64();
    // Executions release their cells just after the answer: let them finish.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let (heap1, rss1) = (live(), rss_bytes());
    let n = args.tasks as f64;
    let outcome = Outcome {
        tasks: args.tasks,
        heap_bytes_per_task: (heap1 - heap0) as f64 / n,
        rss_bytes_per_task: rss0.zip(rss1).map(|(a, b)| (b - a) / n),
        heap_mib: heap1 as f64 / 1048576.0,
        rss_mib: rss1.map(|r| r / 1048576.0),
        seconds,
    };
    println!(
        "{} echo tasks in memory{}: {:.0} heap bytes per task ({:.1} MiB live), {} RSS bytes per task, {:.1} s",
        outcome.tasks,
        args.max_tasks
            .map(|m| format!(" (at most {m} kept)"))
            .unwrap_or_default(),
        outcome.heap_bytes_per_task,
        outcome.heap_mib,
        outcome
            .rss_bytes_per_task
            .map_or("-".to_owned(), |r| format!("{r:.0}")),
        outcome.seconds
    );
    println!(
        "{}",
        serde_json::to_string(&outcome).map_err(|e| e.to_string())?
    );
    Ok(())
}
