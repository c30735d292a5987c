//! Streaming events and the response wrappers (`StreamResponse`, `SendMessageResponse`).

use crate::ids::{ContextId, TaskId};
use crate::message::{Message, Metadata};
use crate::serde_util::{int64, int64_string, is_false, is_zero, null_as_default};
use crate::task::{Artifact, Task, TaskState, TaskStatus};
use serde::{Deserialize, Serialize};

/// A change of a task's status.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatusUpdateEvent {
    /// The task. REQUIRED.
    #[serde(default, alias = "task_id", deserialize_with = "null_as_default")]
    pub task_id: TaskId,
    /// The task's context. REQUIRED.
    #[serde(default, alias = "context_id", deserialize_with = "null_as_default")]
    pub context_id: ContextId,
    /// The new status. REQUIRED.
    pub status: TaskStatus,
    /// Extension data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// The task's generation after this change (A2A 1.1; 0: not known, or a 1.0 answer). A
    /// gap between two events' generations means an event was missed: re-read the task.
    #[serde(
        default,
        deserialize_with = "int64",
        serialize_with = "int64_string",
        skip_serializing_if = "is_zero"
    )]
    pub generation: i64,
}

/// A new or updated artifact of a task (whole, or one chunk of it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskArtifactUpdateEvent {
    /// The task. REQUIRED.
    #[serde(default, alias = "task_id", deserialize_with = "null_as_default")]
    pub task_id: TaskId,
    /// The task's context. REQUIRED.
    #[serde(default, alias = "context_id", deserialize_with = "null_as_default")]
    pub context_id: ContextId,
    /// The artifact, or the chunk of it. REQUIRED.
    pub artifact: Artifact,
    /// `true`: add these parts to the artifact with the same id; `false`: (re)start it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub append: bool,
    /// `true`: this is the artifact's last chunk.
    #[serde(default, alias = "last_chunk", skip_serializing_if = "is_false")]
    pub last_chunk: bool,
    /// Extension data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// The task's generation after this change (A2A 1.1; 0: not known, or a 1.0 answer). A
    /// gap between two events' generations means an event was missed: re-read the task.
    #[serde(
        default,
        deserialize_with = "int64",
        serialize_with = "int64_string",
        skip_serializing_if = "is_zero"
    )]
    pub generation: i64,
}

/// The result of `SendMessage`: a task, or a direct message reply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SendMessageResponse {
    /// `{"task": …}`
    Task(Task),
    /// `{"message": …}`
    Message(Message),
}

/// One event of a stream (`SendStreamingMessage`, `SubscribeToTask`) or one push notification.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StreamResponse {
    /// `{"task": …}`: a task snapshot (always the first event of a task stream).
    Task(Task),
    /// `{"message": …}`: a message.
    Message(Message),
    /// `{"statusUpdate": …}`
    #[serde(alias = "status_update")]
    StatusUpdate(TaskStatusUpdateEvent),
    /// `{"artifactUpdate": …}`
    #[serde(alias = "artifact_update")]
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

/// The URI of the resumable-streams extension: every event of a stream has an id (its task's
/// sequence number), and `SubscribeToTask` with `Last-Event-ID: <id>` (HTTP header or gRPC
/// metadata) replays exactly the events after it, then continues live. Over SSE the id is the
/// event's `id:`; over gRPC, which has no per-message headers, a client that activates the
/// extension (`a2a-extensions` metadata) finds it in the payload's metadata
/// ([`StreamResponse::take_event_id`]).
pub const RESUMABLE_STREAMS_EXTENSION: &str =
    "https://github.com/a2a-rust/a2a/extensions/resumable-streams/v1";

/// The key, inside the extension's metadata object, of an event's id.
const EVENT_ID: &str = "eventId";

impl StreamResponse {
    /// The payload's `metadata`.
    pub fn metadata_mut(&mut self) -> &mut Option<Metadata> {
        match self {
            StreamResponse::Task(t) => &mut t.metadata,
            StreamResponse::Message(m) => &mut m.metadata,
            StreamResponse::StatusUpdate(e) => &mut e.metadata,
            StreamResponse::ArtifactUpdate(e) => &mut e.metadata,
        }
    }

    /// Records the event's id in the payload's metadata, as
    /// `{"<RESUMABLE_STREAMS_EXTENSION>": {"eventId": "<id>"}}` (a string, as SSE ids are).
    pub fn set_event_id(&mut self, id: u64) {
        let mut entry = Metadata::new();
        entry.insert(EVENT_ID.into(), serde_json::Value::String(id.to_string()));
        self.metadata_mut()
            .get_or_insert_with(Metadata::new)
            .insert(RESUMABLE_STREAMS_EXTENSION.into(), entry.into());
    }

    /// Takes the id [`StreamResponse::set_event_id`] recorded, removing it (and the metadata,
    /// if nothing else is in it).
    pub fn take_event_id(&mut self) -> Option<String> {
        let metadata = self.metadata_mut();
        let map = metadata.as_mut()?;
        let entry = map.remove(RESUMABLE_STREAMS_EXTENSION)?;
        if map.is_empty() {
            *metadata = None;
        }
        entry.get(EVENT_ID)?.as_str().map(str::to_owned)
    }

    /// Sets the task's generation a task snapshot or update carries (A2A 1.1); a message has
    /// none.
    pub fn set_generation(&mut self, generation: i64) {
        match self {
            StreamResponse::Task(t) => t.generation = generation,
            StreamResponse::StatusUpdate(e) => e.generation = generation,
            StreamResponse::ArtifactUpdate(e) => e.generation = generation,
            StreamResponse::Message(_) => {}
        }
    }

    /// The generation a task snapshot or update carries (0: none, or a message).
    pub fn generation(&self) -> i64 {
        match self {
            StreamResponse::Task(t) => t.generation,
            StreamResponse::StatusUpdate(e) => e.generation,
            StreamResponse::ArtifactUpdate(e) => e.generation,
            StreamResponse::Message(_) => 0,
        }
    }

    /// The task this event is about, if any.
    pub fn task_id(&self) -> Option<&TaskId> {
        match self {
            StreamResponse::Task(t) => Some(&t.id),
            StreamResponse::Message(m) => m.task_id.as_ref(),
            StreamResponse::StatusUpdate(e) => Some(&e.task_id),
            StreamResponse::ArtifactUpdate(e) => Some(&e.task_id),
        }
    }

    /// The task state this event announces (a task snapshot or a status update).
    pub fn state(&self) -> Option<&TaskState> {
        match self {
            StreamResponse::Task(t) => Some(&t.status.state),
            StreamResponse::StatusUpdate(e) => Some(&e.status.state),
            _ => None,
        }
    }

    /// Whether a stream ends after this event: a message-only reply, or a state that
    /// [ends the stream](TaskState::ends_stream) (terminal or interrupted).
    pub fn ends_stream(&self) -> bool {
        match self {
            StreamResponse::Message(m) => m.task_id.is_none(),
            _ => self.state().is_some_and(TaskState::ends_stream),
        }
    }
}

impl From<SendMessageResponse> for StreamResponse {
    fn from(r: SendMessageResponse) -> Self {
        match r {
            SendMessageResponse::Task(t) => StreamResponse::Task(t),
            SendMessageResponse::Message(m) => StreamResponse::Message(m),
        }
    }
}
