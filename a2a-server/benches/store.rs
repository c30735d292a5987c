//! The task store's write path: a task's creation and one update (each appends to the task's
//! event log), and for sled the commit (`sync`, a group-committed flush) that the server awaits
//! before acknowledging a change.
//!
//! `cargo bench -p a2a-server --bench store`

#![allow(missing_docs)] // `criterion_group!` generates an undocumented `pub fn`

use a2a_core::{
    Artifact, Message, StreamResponse, Task, TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use a2a_server::{MemoryStore, Scope, SledStore, TaskStore};
use criterion::{Criterion, criterion_group, criterion_main};
use std::sync::atomic::{AtomicU64, Ordering};

static NEXT: AtomicU64 = AtomicU64::new(0);

/// An echo task as the agent creates it, its completed version, and the completion event.
fn echo_task() -> (Task, Task, StreamResponse) {
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let id = format!("bench-task-{n:012}");
    let mut created = Task::new(
        id.as_str(),
        "bench-context",
        TaskStatus::new(TaskState::Submitted),
    );
    created.history.push(Message::user_text("hello"));
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

async fn create_and_complete(store: &dyn TaskStore, sync: bool) {
    let (created, done, event) = echo_task();
    store
        .create(std::sync::Arc::new(created), Scope::default())
        .await
        .expect("create");
    if sync {
        store.sync().await.expect("sync");
    }
    store
        .update(std::sync::Arc::new(done), 1, &event)
        .await
        .expect("update");
    if sync {
        store.sync().await.expect("sync");
    }
}

fn store(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut g = c.benchmark_group("store");
    let memory = MemoryStore::new();
    g.bench_function("memory create+update", |b| {
        b.iter(|| rt.block_on(create_and_complete(&memory, false)))
    });
    let dir = tempfile::tempdir().expect("tempdir");
    let sled = SledStore::open(dir.path()).expect("sled");
    g.bench_function("sled create+update (append, no flush)", |b| {
        b.iter(|| rt.block_on(create_and_complete(&sled, false)))
    });
    g.sample_size(20);
    g.bench_function("sled create+sync+update+sync (durable, one writer)", |b| {
        b.iter(|| rt.block_on(create_and_complete(&sled, true)))
    });
    g.finish();
}

criterion_group!(benches, store);
criterion_main!(benches);
