//! JSON-RPC decode and encode of a SendMessage, the wire work of every blocking call.
//!
//! `cargo bench -p a2a-core --bench jsonrpc`

#![allow(missing_docs)] // `criterion_group!` generates an undocumented `pub fn`

use a2a_core::jsonrpc::{Id, RawRequest, Response};
use a2a_core::{
    Artifact, Message, SendMessageRequest, SendMessageResponse, Task, TaskState, TaskStatus,
    Validate,
};
use criterion::{Criterion, Throughput, black_box, criterion_group, criterion_main};

const SEND: &[u8] = br#"{"jsonrpc":"2.0","id":42,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","parts":[{"text":"hello"}],"messageId":"9f5c3e0a-3f5e-4a7e-9d57-2f1c4b8e6a10"},"configuration":{"acceptedOutputModes":["text/plain"]}}}"#;

fn completed_task() -> Task {
    let mut user = Message::user_text("hello");
    user.task_id = Some("3f0b8d51-1c2e-4b8a-9d0e-6a7b8c9d0e1f".into());
    user.context_id = Some("7a1c2d3e-4f50-4617-8293-a4b5c6d7e8f9".into());
    let mut task = Task::new(
        "3f0b8d51-1c2e-4b8a-9d0e-6a7b8c9d0e1f",
        "7a1c2d3e-4f50-4617-8293-a4b5c6d7e8f9",
        TaskStatus::new(TaskState::Completed),
    );
    task.history.push(user);
    task.apply_artifact(Artifact::text("echo", "echo: hello"), false);
    task
}

fn decode(c: &mut Criterion) {
    let mut g = c.benchmark_group("jsonrpc");
    g.throughput(Throughput::Bytes(SEND.len() as u64));
    g.bench_function("decode SendMessage", |b| {
        b.iter(|| {
            let req = RawRequest::parse(black_box(SEND)).expect("a valid request");
            let params: SendMessageRequest = req.params_as().expect("valid params");
            params.validate().expect("valid");
            black_box((req.id, params))
        })
    });
    let response = Response::result(Id::from(42), SendMessageResponse::Task(completed_task()));
    let size = serde_json::to_vec(&response).expect("serializes").len();
    g.throughput(Throughput::Bytes(size as u64));
    g.bench_function("encode SendMessage result", |b| {
        let mut buf = Vec::with_capacity(2 * size);
        b.iter(|| {
            buf.clear();
            serde_json::to_writer(&mut buf, black_box(&response)).expect("serializes");
            black_box(buf.len())
        })
    });
    g.finish();
}

criterion_group!(benches, decode);
criterion_main!(benches);
