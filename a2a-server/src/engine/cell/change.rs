//! [`Change`]: what an agent (or the server) does to a task, checked against the task's
//! lifecycle and turned into the event that announces it. The stored task changes only through
//! [`Task::apply`] of that event, so a task is always the fold of its log.

use super::TaskCell;
use a2a_core::{
    Artifact, Error, ErrorKind, Message, Role, StreamResponse, Task, TaskArtifactUpdateEvent,
    TaskState, TaskStatus, TaskStatusUpdateEvent, Validate,
};
/// A change an agent (or the server) makes to a task.
#[derive(Debug)]
pub(crate) enum Change {
    Status(TaskStatus),
    Artifact {
        artifact: Artifact,
        append: bool,
        last_chunk: bool,
    },
    Message(Message),
    /// A direct message answer, with no task (only before the task exists).
    Reply(Message),
    /// A follow-up user message to an interrupted task: appended, and the task moves to WORKING;
    /// with a generation (`ifGenerationMatch`), only if the task is still at it.
    Continue(Message, Option<i64>),
}

impl TaskCell {
    pub(super) fn illegal(what: impl std::fmt::Display) -> Error {
        Error::new(ErrorKind::InvalidAgentResponse, what.to_string())
    }

    /// Completes an agent-produced message: role agent, this task's context, and this task's
    /// id when the message belongs to the task. A direct reply creates no task, so it names
    /// none (an agent message carries a `taskId` only if the task exists).
    pub(super) fn own_message(&self, mut m: Message, in_task: bool) -> Message {
        if m.role == Role::Unspecified {
            m.role = Role::Agent;
        }
        if in_task {
            m.task_id.get_or_insert_with(|| self.id.clone());
        } else {
            m.task_id = None;
        }
        m.context_id.get_or_insert_with(|| self.context_id.clone());
        m
    }

    /// `task` after `event` (and, for a continuation, the user's message `received`): the task
    /// changes only through [`Task::apply`], so the stored task is the fold of its events.
    pub(super) fn fold(
        mut task: Task,
        received: Option<Message>,
        event: &StreamResponse,
    ) -> Result<Task, Error> {
        task.history.extend(received);
        // Refused only for an event of another task, which `check` never builds.
        task.apply(event)
            .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
        // A pushed vector doubles its capacity; a stored task is kept as it is, possibly
        // for days: its vectors hold no spare room (the next change copies them anyway).
        task.history.shrink_to_fit();
        task.artifacts.shrink_to_fit();
        Ok(task)
    }

    /// Checks `change` against `task` and builds the event that announces it. A continuation
    /// also returns the user's message, which no event carries (the client sent it).
    pub(super) fn check(
        &self,
        task: &Task,
        change: Change,
    ) -> Result<(Option<Message>, StreamResponse), Error> {
        let state = &task.status.state;
        let status_update = |status| {
            StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                task_id: task.id.clone(),
                context_id: task.context_id.clone(),
                status,
                metadata: None,
                generation: 0,
            })
        };
        match change {
            Change::Status(mut status) => {
                if !state.can_transition_to(&status.state) {
                    return Err(Self::illegal(format_args!(
                        "illegal transition of task {} from {state} to {}",
                        task.id, status.state
                    )));
                }
                status.message = status.message.map(|m| Box::new(self.own_message(*m, true)));
                Ok((None, status_update(status)))
            }
            Change::Artifact {
                artifact,
                append,
                last_chunk,
            } => {
                if state.is_terminal() {
                    return Err(Self::illegal(format_args!(
                        "task {} is {state}: no more artifacts",
                        task.id
                    )));
                }
                artifact
                    .validate()
                    .map_err(|e| Self::illegal(format_args!("invalid artifact: {}", e.message)))?;
                let update = TaskArtifactUpdateEvent {
                    task_id: task.id.clone(),
                    context_id: task.context_id.clone(),
                    artifact,
                    append,
                    last_chunk,
                    metadata: None,
                    generation: 0,
                };
                Ok((None, StreamResponse::ArtifactUpdate(update)))
            }
            Change::Message(m) => {
                if state.is_terminal() {
                    return Err(Self::illegal(format_args!(
                        "task {} is {state}: no more messages",
                        task.id
                    )));
                }
                let m = self.own_message(m, true);
                if let Some(other) = m.task_id.as_ref().filter(|id| **id != task.id) {
                    return Err(Self::illegal(format_args!(
                        "a message of task {} names task {other}",
                        task.id
                    )));
                }
                Ok((None, StreamResponse::Message(m)))
            }
            Change::Continue(m, _) => {
                if !state.is_interrupted() {
                    return Err(Error::new(
                        ErrorKind::UnsupportedOperation,
                        format!("Task {} is {state} and does not expect a message", task.id),
                    ));
                }
                Ok((Some(m), status_update(TaskStatus::new(TaskState::Working))))
            }
            Change::Reply(_) => Err(Self::illegal(
                "a task exists already: send agent messages with TaskEvents::message",
            )),
        }
    }
}

impl Change {
    /// The generation a continuation requires the task to be at (`ifGenerationMatch`).
    pub(super) fn required_generation(&self) -> Option<i64> {
        match self {
            Change::Continue(_, generation) => *generation,
            _ => None,
        }
    }

    /// The change again, from what [`TaskCell::check`] made of it, to check it against a task
    /// that changed meanwhile.
    pub(super) fn redo(received: Option<Message>, event: StreamResponse) -> Result<Self, Error> {
        if let Some(m) = received {
            // The generation was checked against the task as it was read before this redo, and
            // is checked again by the caller, which keeps it.
            return Ok(Self::Continue(m, None));
        }
        Ok(match event {
            StreamResponse::StatusUpdate(u) => Self::Status(u.status),
            StreamResponse::ArtifactUpdate(u) => Self::Artifact {
                artifact: u.artifact,
                append: u.append,
                last_chunk: u.last_chunk,
            },
            StreamResponse::Message(m) => Self::Message(m),
            // `check` never builds a snapshot (creation is not a change of a stored task).
            StreamResponse::Task(_) => {
                return Err(Error::new(
                    ErrorKind::Internal,
                    "a task snapshot is no change",
                ));
            }
        })
    }
}
