//! The A2A (Agent2Agent) protocol v1.0 wire model.
//!
//! `a2a-core` holds every type that crosses the wire between an A2A client and an A2A agent
//! server, shaped exactly as the normative `a2a.proto` serializes to ProtoJSON: tasks, messages,
//! parts, artifacts, streaming events, agent cards with their security schemes, the request and
//! response of each of the eleven operations, the JSON-RPC 2.0 envelope, and the one error
//! table. It also translates to and from the older v0.3 wire format ([`v03`]). It has no
//! networking: the `a2a-server` and `a2a-client` crates build on it.
//!
//! # Quick start
//!
//! ```
//! use a2a_core::{Message, Part, SendMessageRequest, Task, TaskState};
//!
//! // A user message, ready to send.
//! let request = SendMessageRequest::new(Message::user_text("What is 2 + 2?"));
//! let json = serde_json::to_value(&request).unwrap();
//! assert_eq!(json["message"]["role"], "ROLE_USER");
//! assert_eq!(json["message"]["parts"][0]["text"], "What is 2 + 2?");
//!
//! // A task as an agent returns it.
//! let task: Task = serde_json::from_str(r#"{
//!     "id": "t-1", "contextId": "c-1",
//!     "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-02-03T09:15:27.412Z"},
//!     "artifacts": [{"artifactId": "a-1", "parts": [{"text": "4"}]}]
//! }"#).unwrap();
//! assert!(task.status.state.is_terminal());
//! assert_eq!(task.artifacts[0].text_content(), "4");
//!
//! // The lifecycle lives in one place.
//! assert!(!TaskState::Completed.can_transition_to(&TaskState::Working));
//! ```
//!
//! # What is here
//!
//! | module | contents |
//! |---|---|
//! | [`Task`], [`TaskStatus`], [`TaskState`], [`Artifact`] | tasks, the lifecycle ([`TaskState::can_transition_to`], [`TaskState::ends_stream`]) and the fold of a task's events ([`Task::apply`]) |
//! | [`Message`], [`Role`], [`Part`], [`PartContent`] | messages and their flat, one-content parts |
//! | [`StreamResponse`], [`SendMessageResponse`], [`TaskStatusUpdateEvent`], [`TaskArtifactUpdateEvent`] | events and result wrappers |
//! | [`AgentCard`] and friends | discovery, capabilities, skills, security schemes |
//! | [`SendMessageRequest`], [`ListTasksRequest`], … | each operation's request and response |
//! | [`operation`], [`Method`], [`Operation`], [`Request`] | the operations declared once ([`for_each_operation!`]): name, request and response types, v0.3 name and codec, protobuf messages, routes |
//! | [`jsonrpc`] | the JSON-RPC 2.0 envelope |
//! | [`proto`] | the gRPC binding's protobuf encoding of every message, and `google.rpc.Status` errors |
//! | [`http_json`] | the HTTP+JSON binding's route table: each operation's HTTP method and path |
//! | [`Error`], [`ErrorKind`] | the error table: JSON-RPC code, HTTP status, gRPC status, reason |
//! | [`Validate`] | REQUIRED-field and range checks, with errors that name the field |
//! | [`v03`] | translation to and from the v0.3 wire format |
//!
//! # Features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `signing` | no | agent card signatures: JWS over the RFC 8785 canonical card (ES256, RS256, EdDSA), keys read from PKCS#8 PEM, verification against trusted JWKs |
//! | `tonic` | no | `proto::BytesCodec` and `Error::to_tonic_status`, the glue between [`proto`] and tonic for a gRPC server or client |
//!
//! # ProtoJSON rules
//!
//! Output uses lowerCamelCase names and full enum names (`TASK_STATE_WORKING`); input also
//! accepts snake_case names and enum numbers. Fields at their default are omitted, `optional`
//! fields are emitted when set, REQUIRED fields always. `raw` bytes are standard padded base64
//! on output; URL-safe and unpadded base64 are accepted. Timestamps are RFC 3339 UTC with
//! millisecond precision. Unknown fields are ignored; unknown enum values are kept
//! (`TaskState::Unknown`) so that a newer peer's values pass through.

// docs.rs (nightly, `--cfg docsrs`): each feature-gated item is marked with its feature.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod agent_card;
mod error;
mod event;
pub mod http_json;
mod ids;
#[cfg(feature = "signing")]
pub mod jcs;
pub mod jsonrpc;
mod media_type;
mod message;
pub mod operation;
mod params;
pub mod proto;
mod proto_enum;
mod serde_util;
#[cfg(feature = "signing")]
pub mod signing;
pub mod strict;
mod task;
mod time;
pub mod v03;
mod validate;

pub use agent_card::*;
pub use error::{
    BAD_REQUEST_TYPE, ERROR_DOMAIN, ERROR_INFO_TYPE, Error, ErrorCodes, ErrorKind, ErrorObject,
};
pub use event::{
    RESUMABLE_STREAMS_EXTENSION, SendMessageResponse, StreamResponse, TaskArtifactUpdateEvent,
    TaskStatusUpdateEvent,
};
pub use ids::{ArtifactId, ContextId, MessageId, TaskId};
pub use media_type::media_type_matches;
pub use message::{Message, Metadata, Part, PartContent, Role};
pub use operation::{Method, Operation, Request};
pub use params::*;
pub use task::{ApplyError, Artifact, Task, TaskState, TaskStatus};
pub use time::{Timestamp, TimestampError};
pub use validate::Validate;
