//! `a2a-bench chunks`: one task on a sled store receives a long chunked artifact stream
//! through the `TaskStore` trait, with the events the engine builds for an agent that calls
//! `TaskEvents::artifact_chunk(.., append = true, ..)` for every chunk: create (SUBMITTED, the
//! user's message), WORKING, `--chunks` artifact updates (the first opens the artifact, the
//! others append), then COMPLETED. Like the engine, every write stores a copy of the previous
//! task with the event applied (`Task::apply`), and is followed by a sync unless `--no-sync`.
//!
//! Reports the wall time and CPU time of the stream, the bytes the process wrote (`wchar` and
//! `write_bytes` of `/proc/self/io`), the store's size on disk after the last flush, and the
//! time to reopen the store and read the task back (which is checked against the fold).

use crate::store_probe::dir_size;
use a2a_core::{
    Artifact, Message, StreamResponse, Task, TaskArtifactUpdateEvent, TaskId, TaskState,
    TaskStatus, TaskStatusUpdateEvent,
};
use a2a_server::{Scope, SledStore, TaskStore};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Options of `a2a-bench chunks`.
#[derive(Clone, Debug, clap::Args)]
pub(crate) struct ChunksArgs {
    /// How many artifact chunks.
    #[arg(long, default_value_t = 10_000)]
    pub(crate) chunks: usize,
    /// Bytes of text per chunk.
    #[arg(long, default_value_t = 32)]
    pub(crate) chunk_bytes: usize,
    /// The sled directory (default: a temporary one under the current directory, deleted at
    /// the end; not /tmp, which may be a tmpfs that writes nothing to a disk).
    #[arg(long)]
    pub(crate) dir: Option<PathBuf>,
    /// Do not sync after every write (the engine syncs before it acknowledges each event).
    #[arg(long)]
    pub(crate) no_sync: bool,
}

/// CPU time of this process (user + system, every thread), from `CLOCK_PROCESS_CPUTIME_ID`.
fn cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Duration::new(
        u64::try_from(t.tv_sec).unwrap_or_default(),
        u32::try_from(t.tv_nsec).unwrap_or_default(),
    )
}

/// `(wchar, write_bytes)` of `/proc/self/io`: bytes passed to `write` and friends, and bytes
/// sent to the block layer.
fn io_written() -> (u64, u64) {
    let io = std::fs::read_to_string("/proc/self/io").unwrap_or_default();
    let field = |name: &str| {
        io.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    };
    (field("wchar:"), field("write_bytes:"))
}

fn status_event(task: &Task, state: TaskState) -> StreamResponse {
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: task.id.clone(),
        context_id: task.context_id.clone(),
        status: TaskStatus::new(state),
        metadata: None,
        generation: 0,
    })
}

fn chunk_event(task: &Task, i: usize, n: usize, bytes: usize) -> StreamResponse {
    let mut text = format!("chunk {i:06} ");
    text.extend(std::iter::repeat_n('x', bytes.saturating_sub(text.len())));
    StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
        task_id: task.id.clone(),
        context_id: task.context_id.clone(),
        artifact: Artifact::text("answer", text).with_id("answer-1"),
        append: i > 0,
        last_chunk: i + 1 == n,
        metadata: None,
        generation: 0,
    })
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / 1024.0 / 1024.0
}

/// Runs the probe.
pub(crate) async fn probe(args: ChunksArgs) -> Result<(), String> {
    let tmp = tempfile::tempdir_in(".").map_err(|e| e.to_string())?;
    let dir = args.dir.clone().unwrap_or_else(|| tmp.path().join("sled"));
    let store = SledStore::open(&dir).map_err(|e| e.to_string())?;
    let err = |e: a2a_server::StoreError| e.to_string();

    let id = "chunked-task";
    let mut user = Message::user_text("write me a long answer");
    user.task_id = Some(TaskId::from(id));
    let mut task = Task::new(id, "ctx-1", TaskStatus::new(TaskState::Submitted));
    task.history.push(user);

    let (wchar0, written0) = io_written();
    let (cpu0, started) = (cpu_time(), Instant::now());
    let mut in_store = Duration::ZERO;
    let t = Instant::now();
    let mut stored = store
        .create(Arc::new(task.clone()), Scope::default())
        .await
        .map_err(err)?;
    in_store += t.elapsed();
    let events = std::iter::once(status_event(&task, TaskState::Working))
        .chain((0..args.chunks).map(|i| chunk_event(&task, i, args.chunks, args.chunk_bytes)))
        .chain(std::iter::once(status_event(&task, TaskState::Completed)));
    for event in events {
        // What the engine does per event: copy the task, fold the event, store, sync.
        let mut next = Task::clone(&stored.task);
        next.apply(&event).map_err(|e| e.to_string())?;
        let t = Instant::now();
        stored = store
            .update(Arc::new(next), stored.version, &event)
            .await
            .map_err(err)?;
        if !args.no_sync {
            store.sync().await.map_err(err)?;
        }
        in_store += t.elapsed();
    }
    store.sync().await.map_err(err)?;
    let (wall, cpu) = (started.elapsed(), cpu_time() - cpu0);
    let (wchar1, written1) = io_written();
    let final_task = stored.task.clone();
    let task_json = serde_json::to_vec(&*final_task)
        .map_err(|e| e.to_string())?
        .len();
    drop(store);

    let size = dir_size(&dir);
    let t = Instant::now();
    let reopened = SledStore::open(&dir).map_err(|e| e.to_string())?;
    let open = t.elapsed();
    let t = Instant::now();
    let read = reopened
        .get(&TaskId::from(id))
        .await
        .map_err(err)?
        .ok_or("the task is gone after reopening")?;
    let get = t.elapsed();
    if read.task != final_task || read.version != stored.version {
        return Err(format!(
            "the reopened task differs: version {} (expected {})",
            read.version, stored.version
        ));
    }

    println!(
        "sled, {} chunks of {} bytes, {}: {} events, final task {:.2} MiB of JSON",
        args.chunks,
        args.chunk_bytes,
        if args.no_sync {
            "no sync"
        } else {
            "sync after each event"
        },
        stored.version,
        mib(task_json as u64)
    );
    println!(
        "  wall {:.2} s (in store calls {:.2} s), CPU {:.2} s",
        wall.as_secs_f64(),
        in_store.as_secs_f64(),
        cpu.as_secs_f64()
    );
    println!(
        "  written: wchar {:.1} MiB, write_bytes {:.1} MiB; on disk after flush {:.1} MiB",
        mib(wchar1 - wchar0),
        mib(written1 - written0),
        mib(size)
    );
    println!(
        "  reopen {:.1} ms, first get {:.2} ms (equal to the fold: yes)",
        open.as_secs_f64() * 1e3,
        get.as_secs_f64() * 1e3
    );
    Ok(())
}
