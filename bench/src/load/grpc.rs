//! The gRPC load: `send`, `stream` and `get` over the A2A gRPC binding
//! (`lf.a2a.v1.A2AService`), with tonic's HTTP/2 client and a2a-core's protobuf codec.
//!
//! The workers share `--grpc-connections` HTTP/2 connections (one by default, plain HTTP/2 with
//! prior knowledge, `TCP_NODELAY` on), as the callers of one gRPC channel do: at `-c 64` one
//! connection carries 64 concurrent streams. Each worker keeps one call in flight. The
//! requests are the JSON-RPC load's: the same message (`ROLE_USER`, one text part, a fresh
//! `messageId`) to the same demo echo agent, with `a2a-version: 1.0`; every answer is decoded and
//! checked (the completed echo task, the task asked for, a stream that ends COMPLETED).

use super::{Plan, Scenario, WorkerStats, record};
use a2a_core::proto::{self, BytesCodec};
use a2a_core::{Method, SendMessageResponse, StreamResponse, Task, TaskState};
use bytes::Bytes;
use http::uri::PathAndQuery;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tonic::client::Grpc;
use tonic::metadata::MetadataValue;
use tonic::transport::{Channel, Endpoint};

/// Opens `n` HTTP/2 connections to `addr`, each its own channel.
pub(super) async fn connect(addr: SocketAddr, n: usize) -> Result<Vec<Channel>, String> {
    let endpoint = Endpoint::from_shared(format!("http://{addr}"))
        .map_err(|e| format!("{addr}: {e}"))?
        .tcp_nodelay(true)
        .connect_timeout(Duration::from_secs(5));
    let mut channels = Vec::with_capacity(n.max(1));
    for _ in 0..n.max(1) {
        let channel = endpoint
            .connect()
            .await
            .map_err(|e| format!("gRPC connection to {addr}: {e}"))?;
        channels.push(channel);
    }
    Ok(channels)
}

fn path(method: Method) -> PathAndQuery {
    PathAndQuery::try_from(proto::path(method)).expect("a valid gRPC path")
}

/// A request carrying `params` (ProtoJSON) encoded as `method`'s request message.
fn request(method: Method, params: &Value) -> Result<tonic::Request<Bytes>, String> {
    let body = proto::encode(params, proto::messages(method).0)
        .map_err(|e| format!("{method} request does not encode: {e}"))?;
    let mut request = tonic::Request::new(Bytes::from(body));
    request
        .metadata_mut()
        .insert("a2a-version", MetadataValue::from_static("1.0"));
    Ok(request)
}

/// The `SendMessageRequest` of the JSON-RPC load's `send_body`.
fn send_params(plan: &Plan, w: usize, n: u64) -> Value {
    let mut message = json!({
        "role": "ROLE_USER",
        "parts": [{"text": plan.args.text}],
        "messageId": format!("{}-m{w}-{n}", plan.run_id),
    });
    if plan.args.client_task_ids {
        message["taskId"] = json!(format!("{}-t{w}-{n}", plan.run_id));
    }
    json!({ "message": message })
}

fn status_error(status: &tonic::Status) -> String {
    format!("gRPC {:?}: {}", status.code(), status.message())
}

fn snippet(task: &Task) -> String {
    let mut s = format!("{task:?}");
    s.truncate(300);
    s
}

/// What every call of one worker needs.
struct Calls {
    grpc: Grpc<Channel>,
    /// The demo agent's artifact for the message text.
    echo: String,
}

impl Calls {
    async fn ready(&mut self) -> Result<(), String> {
        self.grpc
            .ready()
            .await
            .map_err(|e| format!("gRPC channel not ready: {e}"))
    }

    /// Blocking SendMessage: the answer must be the completed echo task.
    async fn send(&mut self, req: tonic::Request<Bytes>) -> Result<(), String> {
        self.ready().await?;
        let bytes = self
            .grpc
            .unary(req, path(Method::SendMessage), BytesCodec)
            .await
            .map_err(|s| status_error(&s))?
            .into_inner();
        let answer: SendMessageResponse =
            proto::decode(&bytes, proto::messages(Method::SendMessage).1)
                .map_err(|e| format!("SendMessageResponse does not decode: {e}"))?;
        let SendMessageResponse::Task(task) = answer else {
            return Err("SendMessage answered a message, not a task".into());
        };
        let echoed = task.artifacts.iter().any(|a| a.text_content() == self.echo);
        if task.status.state != TaskState::Completed || !echoed {
            return Err(format!("not the completed echo task: {}", snippet(&task)));
        }
        Ok(())
    }

    /// GetTask: the answer must be the task asked for, completed.
    async fn get(&mut self, id: &str) -> Result<(), String> {
        self.ready().await?;
        let req = request(Method::GetTask, &json!({ "id": id }))?;
        let bytes = self
            .grpc
            .unary(req, path(Method::GetTask), BytesCodec)
            .await
            .map_err(|s| status_error(&s))?
            .into_inner();
        let task: Task = proto::decode(&bytes, proto::messages(Method::GetTask).1)
            .map_err(|e| format!("Task does not decode: {e}"))?;
        if task.id.as_str() != id || task.status.state != TaskState::Completed {
            return Err(format!("not the completed task {id}: {}", snippet(&task)));
        }
        Ok(())
    }

    /// SendStreamingMessage, read to the end: every event must decode, the last be COMPLETED,
    /// and the call end with status OK.
    async fn stream(
        &mut self,
        req: tonic::Request<Bytes>,
        first_event: &mut Option<Instant>,
    ) -> Result<(), String> {
        self.ready().await?;
        let mut events = self
            .grpc
            .server_streaming(req, path(Method::SendStreamingMessage), BytesCodec)
            .await
            .map_err(|s| status_error(&s))?
            .into_inner();
        let ty = proto::messages(Method::SendStreamingMessage).1;
        let (mut count, mut completed) = (0u32, false);
        while let Some(bytes) = events.message().await.map_err(|s| status_error(&s))? {
            first_event.get_or_insert_with(Instant::now);
            count += 1;
            let event: StreamResponse = proto::decode(&bytes, ty)
                .map_err(|e| format!("event {count} does not decode: {e}"))?;
            completed = match &event {
                StreamResponse::Task(t) => t.status.state == TaskState::Completed,
                StreamResponse::StatusUpdate(u) => u.status.state == TaskState::Completed,
                _ => false,
            };
        }
        if !completed {
            return Err(format!(
                "the stream ended after {count} events, not completed"
            ));
        }
        Ok(())
    }
}

/// One closed-loop worker: one call in flight on its shared connection until the run ends.
pub(super) async fn worker(plan: Arc<Plan>, w: usize) -> WorkerStats {
    let mut stats = WorkerStats::default();
    let channel = plan.channels[w % plan.channels.len()].clone();
    let mut calls = Calls {
        grpc: Grpc::new(channel),
        echo: format!("echo: {}", plan.args.text),
    };
    let timeout = Duration::from_secs_f64(plan.args.timeout);
    let mut n: u64 = 0;
    while plan.running() {
        n += 1;
        let started = Instant::now();
        let mut first_event: Option<Instant> = None;
        let call = async {
            match plan.args.scenario {
                Scenario::Send => {
                    let req = request(Method::SendMessage, &send_params(&plan, w, n))?;
                    calls.send(req).await
                }
                Scenario::Stream => {
                    let req = request(Method::SendStreamingMessage, &send_params(&plan, w, n))?;
                    calls.stream(req, &mut first_event).await
                }
                Scenario::Get => {
                    let id = &plan.task_ids[(w * 7919 + n as usize) % plan.task_ids.len()];
                    calls.get(id).await
                }
                other => Err(format!("{} is not a gRPC scenario", other.name())),
            }
        };
        let outcome = tokio::time::timeout(timeout, call)
            .await
            .unwrap_or_else(|_| Err("request timed out".to_owned()));
        record(&plan, &mut stats, started, first_event, outcome);
    }
    stats
}
