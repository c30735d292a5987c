//! SSE frame encoding of stream events as the JSON-RPC binding sends them: each event wrapped in
//! a JSON-RPC result envelope, written as one `data:` + `id:` event by axum's SSE body with its
//! keep-alive (the same steps as `a2a-server/src/http/sse.rs` and `jsonrpc.rs`).
//!
//! `cargo bench -p a2a-server --bench sse`

#![allow(missing_docs)] // `criterion_group!` generates an undocumented `pub fn`

use a2a_core::jsonrpc::{Id, Response as RpcResponse};
use a2a_core::{
    Artifact, StreamResponse, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};
use axum::response::IntoResponse as _;
use axum::response::sse::{Event, KeepAlive, Sse};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use http_body_util::BodyExt as _;
use std::convert::Infallible;

const EVENTS: usize = 64;

fn events() -> Vec<(u64, StreamResponse)> {
    let task = Task::new(
        "bench-task",
        "bench-context",
        TaskStatus::new(TaskState::Working),
    );
    (0..EVENTS as u64)
        .map(|i| {
            let event = if i % 2 == 0 {
                StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                    task_id: task.id.clone(),
                    context_id: task.context_id.clone(),
                    status: TaskStatus::new(TaskState::Working),
                    metadata: None,
                    generation: 0,
                })
            } else {
                StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                    task_id: task.id.clone(),
                    context_id: task.context_id.clone(),
                    artifact: Artifact::text("countdown", format!("{i}\n")),
                    append: true,
                    last_chunk: false,
                    metadata: None,
                    generation: 0,
                })
            };
            (i + 1, event)
        })
        .collect()
}

fn sse(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    // KeepAlive's timer is made in the runtime's context.
    let _runtime = rt.enter();
    let events = events();
    let id = Id::from(7);
    let mut g = c.benchmark_group("sse");
    g.throughput(Throughput::Elements(EVENTS as u64));
    g.bench_function("encode JSON-RPC event frames", |b| {
        b.iter(|| {
            let frames: Vec<Result<Event, Infallible>> = events
                .iter()
                .map(|(seq, e)| {
                    let mut json = Vec::with_capacity(2048);
                    serde_json::to_writer(&mut json, &RpcResponse::result(id.clone(), e))
                        .expect("serializes");
                    let event = Event::default().data(std::str::from_utf8(&json).expect("UTF-8"));
                    Ok(event.id(seq.to_string()))
                })
                .collect();
            let keep_alive = KeepAlive::new()
                .interval(std::time::Duration::from_secs(15))
                .text("keep-alive");
            let body = Sse::new(futures::stream::iter(frames))
                .keep_alive(keep_alive)
                .into_response()
                .into_body();
            rt.block_on(body.collect())
                .expect("a body")
                .to_bytes()
                .len()
        })
    });
    g.finish();
}

criterion_group!(benches, sse);
criterion_main!(benches);
