//! `a2a-bench idle`: memory held by tasks waiting for input. Sends `--tasks` messages through
//! the transport-independent `RequestHandler` to an agent that asks a question and returns, so
//! every task ends INPUT_REQUIRED with no execution running, and reports the process RSS before
//! and after. On sled the tasks themselves live on disk, so what the RSS grows by is what the
//! server keeps per idle task (plus sled's page cache, capped by `--cache-mib`).

use crate::procfs;
use a2a_core::{Error, Message, SendMessageRequest};
use a2a_server::{Agent, CallContext, RequestContext, Server, SledStore, TaskEvents};
use futures::StreamExt as _;

/// Options of `a2a-bench idle`.
#[derive(Clone, Debug, clap::Args)]
pub(crate) struct IdleArgs {
    /// How many tasks to leave waiting for input.
    #[arg(long, default_value_t = 100_000)]
    pub(crate) tasks: usize,
    /// sled's page cache in MiB.
    #[arg(long, default_value_t = 64)]
    pub(crate) cache_mib: u64,
    /// Concurrent senders.
    #[arg(long, default_value_t = 32)]
    pub(crate) senders: usize,
}

/// Asks for input and returns: the task waits with no execution running.
struct Asker;

impl Agent for Asker {
    async fn execute(&self, _cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        events.input_required("Which one?").await
    }
}

pub(crate) async fn probe(args: IdleArgs) -> Result<(), String> {
    run(args).await.map_err(|e| e.to_string())
}

async fn run(args: IdleArgs) -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let store = SledStore::open_with_cache(dir.path(), args.cache_mib * 1024 * 1024)?;
    let server = Server::builder(Asker).task_store(store).build()?;
    let handler = server.handler();
    let rss = || procfs::rss_mib("self").unwrap_or(0.0);
    // Warm up (allocator arenas, sled's first pages), then measure from there.
    for _ in 0..1000 {
        let req = SendMessageRequest::new(Message::user_text("warm up"));
        handler.send_message(&CallContext::default(), req).await?;
    }
    let before = rss();
    let started = std::time::Instant::now();
    let sends = futures::stream::iter(0..args.tasks).map(|i| {
        let handler = handler.clone();
        async move {
            let req = SendMessageRequest::new(Message::user_text(format!("task {i}")));
            handler.send_message(&CallContext::default(), req).await
        }
    });
    let mut sends = sends.buffer_unordered(args.senders);
    while let Some(reply) = sends.next().await {
        reply?;
    }
    let after = rss();
    println!(
        "{} tasks INPUT_REQUIRED on sled (cache {} MiB) in {:.1} s: RSS {before:.1} MiB -> {after:.1} MiB (+{:.1} MiB, {:.0} bytes per task)",
        args.tasks,
        args.cache_mib,
        started.elapsed().as_secs_f64(),
        after - before,
        (after - before) * 1024.0 * 1024.0 / args.tasks as f64,
    );
    Ok(())
}
