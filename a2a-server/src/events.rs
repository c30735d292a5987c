//! [`TaskEvents`]: how an agent reports progress.

use crate::engine::{Change, Engine, TaskCell};
use a2a_core::{Artifact, ContextId, Error, Message, TaskId, TaskState, TaskStatus};
use std::future::Future;
use std::sync::Arc;

/// The handle an agent reports through. Every method stores the change before any client sees
/// it, and fails with an error (leaving the task untouched) when the change is illegal: a
/// transition the lifecycle forbids, anything after a terminal state, an empty artifact.
///
/// A method returns once the change is checked, without waiting for the disk: on a store that
/// flushes (sled), the changes are written together, and flushed, when first revealed (the
/// answer of a blocking send, a stream's next event, a read by another caller; see
/// [`TaskEvents::flush`]), and clients see them only then, in order. An agent that reports
/// several changes in a row waits for no flush, except on the change that ends a blocking wait
/// (a terminal or interrupted state), which returns once durable; the request that ran it is
/// answered after its last change is durable.
///
/// The first call decides what the client gets: [`TaskEvents::reply`] answers with a single
/// message and no task; any other call creates the task.
#[derive(Clone)]
pub struct TaskEvents {
    rt: Arc<Engine>,
    cell: Arc<TaskCell>,
}

impl std::fmt::Debug for TaskEvents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskEvents")
            .field("task_id", &self.cell.id)
            .finish_non_exhaustive()
    }
}

fn agent_message(text: impl Into<String>) -> Option<Message> {
    let text = text.into();
    (!text.is_empty()).then(|| Message::agent_text(text))
}

impl TaskEvents {
    pub(crate) fn new(rt: Arc<Engine>, cell: Arc<TaskCell>) -> Self {
        Self { rt, cell }
    }

    /// Records `change`. Not an `async fn`: the change is boxed before the record's future is
    /// made, so that the futures between the agent's and the write (each of which would keep
    /// its own copy of a change passed by value) hold a pointer.
    fn apply(&self, change: Change) -> impl Future<Output = Result<(), Error>> + Send + '_ {
        self.cell.record(&self.rt, Box::new(change))
    }

    /// The task's id.
    pub fn task_id(&self) -> &TaskId {
        &self.cell.id
    }

    /// The task's context id.
    pub fn context_id(&self) -> &ContextId {
        &self.cell.context_id
    }

    /// Whether the task was canceled (or the server is shutting down).
    pub fn is_canceled(&self) -> bool {
        self.cell.cancel.is_cancelled()
    }

    /// Sets any status. The helpers below cover the usual cases.
    pub async fn status(&self, status: TaskStatus) -> Result<(), Error> {
        self.apply(Change::Status(status)).await
    }

    /// WORKING, with a progress message (none if `text` is empty).
    pub async fn working(&self, text: impl Into<String>) -> Result<(), Error> {
        self.set(TaskState::Working, agent_message(text)).await
    }

    /// INPUT_REQUIRED, with the question for the client.
    pub async fn input_required(&self, question: impl Into<String>) -> Result<(), Error> {
        self.set(TaskState::InputRequired, agent_message(question))
            .await
    }

    /// AUTH_REQUIRED, with an explanation for the client.
    pub async fn auth_required(&self, text: impl Into<String>) -> Result<(), Error> {
        self.set(TaskState::AuthRequired, agent_message(text)).await
    }

    /// COMPLETED, with an optional final message.
    pub async fn complete(&self, message: Option<Message>) -> Result<(), Error> {
        self.set(TaskState::Completed, message).await
    }

    /// FAILED, with the reason.
    pub async fn fail(&self, reason: impl Into<String>) -> Result<(), Error> {
        self.set(TaskState::Failed, agent_message(reason)).await
    }

    /// REJECTED: the agent declines the work, saying why.
    pub async fn reject(&self, reason: impl Into<String>) -> Result<(), Error> {
        self.set(TaskState::Rejected, agent_message(reason)).await
    }

    /// A status change to `state` (not an `async fn`, as [`TaskEvents::apply`]).
    fn set(
        &self,
        state: TaskState,
        message: Option<Message>,
    ) -> impl Future<Output = Result<(), Error>> + Send + '_ {
        let mut status = TaskStatus::new(state);
        status.message = message.map(Box::new);
        self.apply(Change::Status(status))
    }

    /// A whole artifact (replaces an earlier one with the same id).
    pub async fn artifact(&self, artifact: Artifact) -> Result<(), Error> {
        self.artifact_chunk(artifact, false, true).await
    }

    /// One chunk of an artifact: `append` adds its parts to the artifact with the same id (the
    /// stored task holds the merged result); `last_chunk` says no more chunks follow.
    pub async fn artifact_chunk(
        &self,
        artifact: Artifact,
        append: bool,
        last_chunk: bool,
    ) -> Result<(), Error> {
        self.apply(Change::Artifact {
            artifact,
            append,
            last_chunk,
        })
        .await
    }

    /// An agent message in the task (added to its history and streamed).
    pub async fn message(&self, message: Message) -> Result<(), Error> {
        self.apply(Change::Message(message)).await
    }

    /// Makes every change reported so far durable and shows it to clients, before the agent
    /// does something outside the server that depends on it (calls another service, sends a
    /// mail): on a store that flushes (sled), and for a new task on PostgreSQL, changes wait
    /// unwritten until someone can see them (the answer of a blocking send, a stream, a read),
    /// so that a task done inside one request is written once; a crash before then loses them,
    /// and a retried send runs the agent again. On PostgreSQL this is also where a duplicate
    /// of the message (a retry of a send already written, or one sent to another replica
    /// that was written first) is found: the call fails, and the agent should stop. Costs
    /// nothing when nothing waits.
    pub async fn flush(&self) -> Result<(), Error> {
        Ok(self.cell.flush(&self.rt).await?)
    }

    /// Answers with a single message and no task. Only allowed as the first event.
    pub async fn reply(&self, message: Message) -> Result<(), Error> {
        self.apply(Change::Reply(message)).await
    }
}
