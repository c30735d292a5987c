//! The end-to-end harness of the A2A server: every test talks to a real server over a real
//! socket, with raw HTTP, so that it checks the exact JSON on the wire.
//!
//! - [`TestServer`] binds `127.0.0.1:0`, builds a [`Server`](a2a_server::Server) whose public
//!   URL is the bound address, and serves it with `Server::serve`.
//! - [`TestServer::call`] runs one operation in any [`Binding`] (JSON-RPC; HTTP+JSON, with
//!   the `/{tenant}` prefix taken from `params.tenant`; gRPC, with the params protobuf-encoded)
//!   and returns the result or an [`ApiError`], after checking the envelope (JSON-RPC
//!   `jsonrpc`/`id`, REST status body, gRPC status with its `google.rpc.Status`).
//! - [`SseStream`] reads `text/event-stream` responses (`id:`, `event:`, `data:`, comments),
//!   and gRPC streams as the same events (`id` from the resumable-streams metadata).
//! - [`agents`] holds the test agents; [`shape`] the wire-shape assertions applied to every
//!   successful v1.0 response and stream event.
//!
//! Every await that could hang is wrapped in [`within`] (a `tokio::time::timeout`); tests never
//! sleep to wait for something.
pub mod agents;
mod answer;
pub mod broken;
pub mod broken_generations;
pub mod doc_shell;
mod grpc;
#[cfg(doctest)]
mod guide;
pub mod issuer;
pub mod keys;
mod params;
mod request;
mod server;
pub mod shape;
pub mod sse;

pub use answer::{ApiError, Kind, Reply, header_str};
pub use params::{message_id, reply_params, send_params, str_at, texts, user_message};
pub use request::{encode_segment, send_json, with_version};
pub use server::TestServer;
pub use shape::{assert_v1_shape, is_millis_utc};
pub use sse::{SseEvent, SseStream};

use std::future::Future;
use std::time::Duration;

/// How long any single await of a test may take before the test fails.
pub const TIMEOUT: Duration = Duration::from_secs(15);

/// Awaits `f`, failing the test with `what` if it takes longer than [`TIMEOUT`].
pub async fn within<F: Future>(what: &str, f: F) -> F::Output {
    match tokio::time::timeout(TIMEOUT, f).await {
        Ok(v) => v,
        Err(_) => panic!("timed out after {TIMEOUT:?}: {what}"),
    }
}

/// The three bindings of A2A.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binding {
    /// JSON-RPC 2.0 at `POST /`.
    JsonRpc,
    /// HTTP+JSON (REST) routes.
    Rest,
    /// gRPC (`lf.a2a.v1.A2AService`) on the same port.
    Grpc,
}

/// The two HTTP bindings, for tests of what only they have (HTTP statuses, SSE framing).
pub const BOTH: [Binding; 2] = [Binding::JsonRpc, Binding::Rest];

/// Every binding, for the behaviour that all three must share.
pub const ALL: [Binding; 3] = [Binding::JsonRpc, Binding::Rest, Binding::Grpc];

/// An A2A operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `SendMessage` / `POST /message:send`.
    SendMessage,
    /// `SendStreamingMessage` / `POST /message:stream`.
    SendStreamingMessage,
    /// `GetTask` / `GET /tasks/{id}`.
    GetTask,
    /// `ListTasks` / `GET /tasks`.
    ListTasks,
    /// `CancelTask` / `POST /tasks/{id}:cancel`.
    CancelTask,
    /// `SubscribeToTask` / `GET /tasks/{id}:subscribe`.
    SubscribeToTask,
    /// `CreateTaskPushNotificationConfig` / `POST /tasks/{taskId}/pushNotificationConfigs`.
    CreatePushConfig,
    /// `GetTaskPushNotificationConfig` / `GET /tasks/{taskId}/pushNotificationConfigs/{id}`.
    GetPushConfig,
    /// `ListTaskPushNotificationConfigs` / `GET /tasks/{taskId}/pushNotificationConfigs`.
    ListPushConfigs,
    /// `DeleteTaskPushNotificationConfig` / `DELETE /tasks/{taskId}/pushNotificationConfigs/{id}`.
    DeletePushConfig,
    /// `GetExtendedAgentCard` / `GET /extendedAgentCard`.
    GetExtendedAgentCard,
}

impl Op {
    /// Every operation.
    pub const ALL: [Op; 11] = [
        Op::SendMessage,
        Op::SendStreamingMessage,
        Op::GetTask,
        Op::ListTasks,
        Op::CancelTask,
        Op::SubscribeToTask,
        Op::CreatePushConfig,
        Op::GetPushConfig,
        Op::ListPushConfigs,
        Op::DeletePushConfig,
        Op::GetExtendedAgentCard,
    ];

    /// The JSON-RPC method name.
    pub fn method(self) -> &'static str {
        match self {
            Op::SendMessage => "SendMessage",
            Op::SendStreamingMessage => "SendStreamingMessage",
            Op::GetTask => "GetTask",
            Op::ListTasks => "ListTasks",
            Op::CancelTask => "CancelTask",
            Op::SubscribeToTask => "SubscribeToTask",
            Op::CreatePushConfig => "CreateTaskPushNotificationConfig",
            Op::GetPushConfig => "GetTaskPushNotificationConfig",
            Op::ListPushConfigs => "ListTaskPushNotificationConfigs",
            Op::DeletePushConfig => "DeleteTaskPushNotificationConfig",
            Op::GetExtendedAgentCard => "GetExtendedAgentCard",
        }
    }

    /// Whether the operation answers with an SSE stream.
    pub fn is_streaming(self) -> bool {
        matches!(self, Op::SendStreamingMessage | Op::SubscribeToTask)
    }
}
