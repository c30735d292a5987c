//! Tasks, their status and lifecycle, and artifacts.

use crate::event::StreamResponse;
use crate::ids::{ArtifactId, ContextId, TaskId};
use crate::message::{Message, Metadata, Part};
use crate::proto_enum::proto_enum;
use crate::serde_util::{empty_as_none, int64, int64_string, is_zero, null_as_default};
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};

proto_enum! {
    /// The state of a task. See [`TaskState::can_transition_to`] for the lifecycle.
    pub enum TaskState {
        /// Not set; invalid in a task.
        #[default]
        Unspecified = (0, "TASK_STATE_UNSPECIFIED"),
        /// Accepted, not yet started.
        Submitted = (1, "TASK_STATE_SUBMITTED"),
        /// Being worked on.
        Working = (2, "TASK_STATE_WORKING"),
        /// Finished successfully (terminal).
        Completed = (3, "TASK_STATE_COMPLETED"),
        /// Finished with an error (terminal).
        Failed = (4, "TASK_STATE_FAILED"),
        /// Canceled by the client (terminal).
        Canceled = (5, "TASK_STATE_CANCELED"),
        /// Waiting for the client's answer (interrupted).
        InputRequired = (6, "TASK_STATE_INPUT_REQUIRED"),
        /// Declined by the agent (terminal).
        Rejected = (7, "TASK_STATE_REJECTED"),
        /// Waiting for authentication (interrupted).
        AuthRequired = (8, "TASK_STATE_AUTH_REQUIRED"),
    }
}

impl TaskState {
    /// COMPLETED, FAILED, CANCELED or REJECTED: the task will never change again.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            TaskState::Completed | TaskState::Failed | TaskState::Canceled | TaskState::Rejected
        )
    }

    /// INPUT_REQUIRED or AUTH_REQUIRED: the agent waits for the client.
    pub fn is_interrupted(&self) -> bool {
        matches!(self, TaskState::InputRequired | TaskState::AuthRequired)
    }

    /// SUBMITTED or WORKING.
    pub fn is_active(&self) -> bool {
        matches!(self, TaskState::Submitted | TaskState::Working)
    }

    /// Whether a task may be created directly in this state (any known state but UNSPECIFIED).
    pub fn is_valid_initial(&self) -> bool {
        self.is_known() && *self != TaskState::Unspecified
    }

    /// The task lifecycle, in one place.
    ///
    /// | from | allowed next |
    /// |---|---|
    /// | SUBMITTED, WORKING | WORKING, INPUT_REQUIRED, AUTH_REQUIRED, any terminal |
    /// | INPUT_REQUIRED | WORKING, COMPLETED, FAILED, CANCELED, REJECTED |
    /// | AUTH_REQUIRED | WORKING, FAILED, CANCELED, REJECTED |
    /// | terminal, UNSPECIFIED, unknown | nothing |
    ///
    /// SUBMITTED is only ever an initial state; nothing moves back to it.
    pub fn can_transition_to(&self, next: &TaskState) -> bool {
        use TaskState::*;
        match self {
            Submitted | Working => matches!(
                next,
                Working | InputRequired | AuthRequired | Completed | Failed | Canceled | Rejected
            ),
            InputRequired => matches!(next, Working | Completed | Failed | Canceled | Rejected),
            AuthRequired => matches!(next, Working | Failed | Canceled | Rejected),
            Completed | Failed | Canceled | Rejected | Unspecified | Unknown(_) => false,
        }
    }

    /// Whether a stream of the task's events ends at this state: terminal (nothing more will
    /// happen) or interrupted (nothing more happens until the client answers). A blocking
    /// `SendMessage` returns, and a delegation stops following, at the same states.
    ///
    /// A reader of a task's *past* events (a log replay, or the snapshot that opens
    /// `SubscribeToTask`) asks [`is_terminal`](Self::is_terminal) instead: an interrupted
    /// state there may already have been answered, so later events can follow it.
    pub fn ends_stream(&self) -> bool {
        self.is_terminal() || self.is_interrupted()
    }
}

/// The status of a task: its state, an optional agent message explaining it, and when it was set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskStatus {
    /// The state. REQUIRED.
    #[serde(default)]
    pub state: TaskState,
    /// An agent message about this state (e.g. the question for INPUT_REQUIRED). Boxed: most
    /// statuses have none, and a status is part of every task and status update, which would
    /// otherwise each carry room for a whole message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Box<Message>>,
    /// When this status was set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Timestamp>,
}

impl TaskStatus {
    /// A status in `state`, stamped now, with no message.
    pub fn new(state: TaskState) -> Self {
        Self {
            state,
            message: None,
            timestamp: Some(Timestamp::now()),
        }
    }

    /// Sets the status message.
    #[must_use]
    pub fn with_message(mut self, message: Message) -> Self {
        self.message = Some(Box::new(message));
        self
    }
}

/// A unit of work an agent performs for a client.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// Server-generated id. REQUIRED.
    #[serde(default, deserialize_with = "null_as_default")]
    pub id: TaskId,
    /// The context the task belongs to.
    #[serde(
        default,
        alias = "context_id",
        deserialize_with = "null_as_default",
        skip_serializing_if = "ContextId::is_empty"
    )]
    pub context_id: ContextId,
    /// The current status. REQUIRED.
    pub status: TaskStatus,
    /// The results produced so far.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub artifacts: Vec<Artifact>,
    /// The messages exchanged in this task.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub history: Vec<Message>,
    /// Extension data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// The task's generation (A2A 1.1): 1 at creation, then one more with every change that
    /// announces an event, so it equals the sequence number of the task's last event. 0: not
    /// known (a 1.0 server, or a 1.0 answer). Written as ProtoJSON writes an `int64`: `"3"`.
    #[serde(
        default,
        deserialize_with = "int64",
        serialize_with = "int64_string",
        skip_serializing_if = "is_zero"
    )]
    pub generation: i64,
}

impl Task {
    /// A new task with the given ids and status, no artifacts and no history.
    pub fn new(
        id: impl Into<TaskId>,
        context_id: impl Into<ContextId>,
        status: TaskStatus,
    ) -> Self {
        Self {
            id: id.into(),
            context_id: context_id.into(),
            status,
            artifacts: Vec::new(),
            history: Vec::new(),
            metadata: None,
            generation: 0,
        }
    }

    /// Keeps only the `n` most recent history messages; `Some(0)` removes the history.
    /// `None` keeps everything. Negative values must be rejected before calling this.
    pub fn truncate_history(&mut self, history_length: Option<i32>) {
        if let Some(n) = history_length {
            let keep = usize::try_from(n).unwrap_or(0);
            let len = self.history.len();
            if len > keep {
                self.history.drain(..len - keep);
            }
        }
    }

    /// Finds an artifact by id.
    pub fn artifact(&self, id: &ArtifactId) -> Option<&Artifact> {
        self.artifacts.iter().find(|a| &a.artifact_id == id)
    }

    /// Applies an artifact update as the stored task should reflect it: `append` adds the parts
    /// to the artifact with the same id (creating it if absent); otherwise the artifact is
    /// replaced (or added).
    pub fn apply_artifact(&mut self, artifact: Artifact, append: bool) {
        match self
            .artifacts
            .iter_mut()
            .find(|a| a.artifact_id == artifact.artifact_id)
        {
            Some(existing) if append => {
                existing.parts.extend(artifact.parts);
                if artifact.name.is_some() {
                    existing.name = artifact.name;
                }
                if artifact.description.is_some() {
                    existing.description = artifact.description;
                }
                if let Some(meta) = artifact.metadata {
                    existing
                        .metadata
                        .get_or_insert_with(Default::default)
                        .extend(meta);
                }
                for ext in artifact.extensions {
                    if !existing.extensions.contains(&ext) {
                        existing.extensions.push(ext);
                    }
                }
            }
            Some(existing) => *existing = artifact,
            None => self.artifacts.push(artifact),
        }
    }

    /// Folds one event of this task into the task, as a server stores it:
    ///
    /// - a [`Task`](StreamResponse::Task) snapshot replaces the task;
    /// - a status update replaces the status, and its message (if any) is added to the history;
    /// - an artifact update is applied with [`apply_artifact`](Self::apply_artifact);
    /// - a message is added to the history;
    /// - an update that carries a [`generation`](Task::generation) (A2A 1.1) sets the task's.
    ///
    /// The fold does not check the lifecycle ([`TaskState::can_transition_to`]): a server
    /// checks a change before it announces it, and a client takes the server's word. Applying
    /// every event of a task's stream, from its first snapshot on, gives the task as stored.
    ///
    /// # Errors
    ///
    /// An event of another task, or a message that names no task, is refused and the task is
    /// left unchanged.
    ///
    /// ```
    /// use a2a_core::{Artifact, StreamResponse, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus};
    ///
    /// let mut task = Task::new("t-1", "c-1", TaskStatus::new(TaskState::Working));
    /// let chunk = |text: &str, append| StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
    ///     task_id: "t-1".into(),
    ///     context_id: "c-1".into(),
    ///     artifact: Artifact::text("answer", text).with_id("a-1"),
    ///     append,
    ///     last_chunk: append,
    ///     metadata: None,
    ///     generation: 0,
    /// });
    /// task.apply(&chunk("Hello, ", false))?;
    /// task.apply(&chunk("world", true))?;
    /// assert_eq!(task.artifacts[0].text_content(), "Hello, world");
    ///
    /// let other = StreamResponse::Task(Task::new("t-2", "c-1", TaskStatus::new(TaskState::Completed)));
    /// assert!(task.apply(&other).is_err());
    /// # Ok::<(), a2a_core::ApplyError>(())
    /// ```
    pub fn apply(&mut self, event: &StreamResponse) -> Result<(), ApplyError> {
        if event.task_id() != Some(&self.id) {
            return Err(ApplyError::OtherTask {
                task: self.id.clone(),
                event: event.task_id().cloned(),
            });
        }
        match event {
            StreamResponse::Task(t) => self.clone_from(t),
            StreamResponse::StatusUpdate(e) => {
                self.status = e.status.clone();
                self.history.extend(e.status.message.as_deref().cloned());
                self.generation = e.generation.max(self.generation);
            }
            StreamResponse::ArtifactUpdate(e) => {
                self.apply_artifact(e.artifact.clone(), e.append);
                self.generation = e.generation.max(self.generation);
            }
            StreamResponse::Message(m) => self.history.push(m.clone()),
        }
        Ok(())
    }
}

/// Why [`Task::apply`] refused an event.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ApplyError {
    /// The event is about another task (`event`), or is a message that names no task (`None`).
    #[error("an event of task {} cannot be applied to task {task}", display_id(.event))]
    OtherTask {
        /// The task the event was applied to.
        task: TaskId,
        /// The task the event is about, if it names one.
        event: Option<TaskId>,
    },
}

fn display_id(id: &Option<TaskId>) -> &str {
    id.as_ref().map_or("(none)", TaskId::as_str)
}

/// An output of a task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    /// Unique within the task. REQUIRED.
    #[serde(default, alias = "artifact_id", deserialize_with = "null_as_default")]
    pub artifact_id: ArtifactId,
    /// A human-readable name.
    #[serde(
        default,
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub name: Option<String>,
    /// A human-readable description.
    #[serde(
        default,
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub description: Option<String>,
    /// The content: at least one part. REQUIRED.
    #[serde(default, deserialize_with = "null_as_default")]
    pub parts: Vec<Part>,
    /// Extension data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// URIs of the extensions that contributed to this artifact.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub extensions: Vec<String>,
}

impl Artifact {
    /// An artifact with a fresh random id and the given parts.
    pub fn new(parts: impl IntoIterator<Item = Part>) -> Self {
        Self {
            artifact_id: ArtifactId::random(),
            name: None,
            description: None,
            parts: parts.into_iter().collect(),
            metadata: None,
            extensions: Vec::new(),
        }
    }

    /// A named artifact holding one text part: `Artifact::text("answer", "42")`.
    pub fn text(name: impl Into<String>, text: impl Into<String>) -> Self {
        Self::new([Part::text(text)]).with_name(name)
    }

    /// Sets the artifact id.
    #[must_use]
    pub fn with_id(mut self, id: impl Into<ArtifactId>) -> Self {
        self.artifact_id = id.into();
        self
    }

    /// Sets the name.
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Sets the description.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// All text parts concatenated, as chunks streamed with `append` were meant to be read.
    pub fn text_content(&self) -> String {
        self.parts.iter().filter_map(Part::as_text).collect()
    }
}
