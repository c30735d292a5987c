//! A task's event log in the memory store, compacted when the task ends.
//!
//! While a task runs its entries are kept as written (the creation snapshot shares the created
//! task). Once the task is terminal it no longer changes, so every entry the final task already
//! holds becomes a few bytes saying where: the creation snapshot is the final task's first
//! messages and artifacts with another status, an artifact update is one of its artifacts, a status update is
//! a state and a time. A finished echo task's log then costs about a hundred bytes instead of
//! three copies of the task. Replaying gives back the same events, equal field for field.

use a2a_core::{
    StreamResponse, Task, TaskArtifactUpdateEvent, TaskStatus, TaskStatusUpdateEvent, Timestamp,
};
use std::sync::Arc;

/// The log; entry `i` has seq `i + 1`.
#[derive(Debug, Default)]
pub(super) struct Log(Vec<Logged>);

#[derive(Debug)]
enum Logged {
    /// The creation snapshot, shared with the task as created.
    Created(Arc<Task>),
    /// An event as written.
    Event(Box<StreamResponse>),
    /// The creation snapshot of a finished task: the task with its first `history` messages
    /// and `artifacts` artifacts, and the status `state` (`state_byte`) at `timestamp`
    /// (without a message).
    CreatedAs {
        history: u32,
        artifacts: u32,
        state: u8,
        timestamp: Option<Timestamp>,
    },
    /// An artifact update that set the finished task's artifact `index` as it is now.
    Artifact { index: u32, last_chunk: bool },
    /// A status update of the finished task to `state` (`state_byte`) at `timestamp`, without
    /// a message.
    Status {
        state: u8,
        timestamp: Option<Timestamp>,
    },
}

impl Log {
    /// A log holding the creation snapshot.
    pub(super) fn created(task: Arc<Task>) -> Self {
        Self(vec![Logged::Created(task)])
    }

    /// Entries in the log.
    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    /// Appends `event`. `task` is the task before it: if the log was compacted (the task had
    /// ended, and the store is told it changes all the same), its entries are first expanded
    /// against that task, the one they refer to.
    pub(super) fn push(&mut self, task: &Task, event: &StreamResponse) {
        if self.0.iter().any(|e| !matches!(e, Logged::Event(_))) {
            self.expand(task);
        }
        self.0.push(Logged::Event(Box::new(event.clone())));
    }

    /// Entry `i` as the event it stands for; `task` is the task as stored now.
    pub(super) fn event(&self, i: usize, task: &Task) -> Option<StreamResponse> {
        Some(match self.0.get(i)? {
            Logged::Created(t) => StreamResponse::Task(Task::clone(t)),
            Logged::Event(e) => StreamResponse::clone(e),
            Logged::CreatedAs {
                history,
                artifacts,
                state,
                timestamp,
            } => StreamResponse::Task(Task {
                id: task.id.clone(),
                context_id: task.context_id.clone(),
                status: status(*state, *timestamp),
                artifacts: task.artifacts[..at(*artifacts)].to_vec(),
                history: task.history[..at(*history)].to_vec(),
                metadata: task.metadata.clone(),
                generation: 0,
            }),
            Logged::Artifact { index, last_chunk } => {
                StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                    task_id: task.id.clone(),
                    context_id: task.context_id.clone(),
                    artifact: task.artifacts[at(*index)].clone(),
                    append: false,
                    last_chunk: *last_chunk,
                    metadata: None,
                    generation: 0,
                })
            }
            Logged::Status { state, timestamp } => {
                StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                    task_id: task.id.clone(),
                    context_id: task.context_id.clone(),
                    status: status(*state, *timestamp),
                    metadata: None,
                    generation: 0,
                })
            }
        })
    }

    /// Replaces each entry that `task`, finished, holds as it is by where it holds it.
    pub(super) fn compact(&mut self, task: &Task) {
        for entry in &mut self.0 {
            if let Some(compact) = compacted(entry, task) {
                *entry = compact;
            }
        }
        self.0.shrink_to_fit();
    }

    /// Turns every compacted entry back into the event it stands for in `task`.
    fn expand(&mut self, task: &Task) {
        for i in 0..self.0.len() {
            if !matches!(self.0[i], Logged::Event(_) | Logged::Created(_)) {
                let event = self.event(i, task).expect("in the log");
                self.0[i] = Logged::Event(Box::new(event));
            }
        }
    }
}

fn status(state: u8, timestamp: Option<Timestamp>) -> TaskStatus {
    TaskStatus {
        state: super::byte_state(state).clone(),
        message: None,
        timestamp,
    }
}

/// A position kept as `u32` (the entries of a finished task's log are kept small).
fn at(position: u32) -> usize {
    usize::try_from(position).unwrap_or(usize::MAX)
}

/// `entry` as a reference into the finished `task`, when `task` holds it exactly.
fn compacted(entry: &Logged, task: &Task) -> Option<Logged> {
    let plain = |s: &TaskStatus| s.message.is_none();
    match entry {
        Logged::Created(t)
            if t.id == task.id
                && t.context_id == task.context_id
                && t.metadata == task.metadata
                && plain(&t.status)
                && prefix(&t.history, &task.history)
                && prefix(&t.artifacts, &task.artifacts) =>
        {
            Some(Logged::CreatedAs {
                history: u32::try_from(t.history.len()).ok()?,
                artifacts: u32::try_from(t.artifacts.len()).ok()?,
                state: super::state_byte(&t.status.state)?,
                timestamp: t.status.timestamp,
            })
        }
        Logged::Event(e) => match &**e {
            StreamResponse::ArtifactUpdate(a)
                if !a.append
                    && a.metadata.is_none()
                    && a.task_id == task.id
                    && a.context_id == task.context_id =>
            {
                let index = task
                    .artifacts
                    .iter()
                    .position(|t| t.artifact_id == a.artifact.artifact_id)?;
                (task.artifacts[index] == a.artifact).then_some(Logged::Artifact {
                    index: u32::try_from(index).ok()?,
                    last_chunk: a.last_chunk,
                })
            }
            StreamResponse::StatusUpdate(s)
                if plain(&s.status)
                    && s.metadata.is_none()
                    && s.task_id == task.id
                    && s.context_id == task.context_id =>
            {
                Some(Logged::Status {
                    state: super::state_byte(&s.status.state)?,
                    timestamp: s.status.timestamp,
                })
            }
            _ => None,
        },
        _ => None,
    }
}

fn prefix<T: PartialEq>(short: &[T], long: &[T]) -> bool {
    long.get(..short.len()) == Some(short)
}

#[cfg(test)]
mod tests {
    use super::*;
    use a2a_core::TaskState;
    use a2a_core::{Artifact, Message};

    fn event_log() -> (Vec<StreamResponse>, Task) {
        let mut created = Task::new("t", "c", TaskStatus::new(TaskState::Submitted));
        created.history.push(
            Message::user_text("hi")
                .with_task_id("t")
                .with_context_id("c"),
        );
        // An agent's first change is folded into the task it creates.
        created
            .artifacts
            .push(Artifact::text("a", "zero").with_id("a-0"));
        let working = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: "t".into(),
            context_id: "c".into(),
            status: TaskStatus::new(TaskState::Working)
                .with_message(Message::agent_text("thinking")),
            metadata: None,
            generation: 0,
        });
        let chunk = |text: &str, id: &str, append| {
            StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                task_id: "t".into(),
                context_id: "c".into(),
                artifact: Artifact::text("a", text).with_id(id),
                append,
                last_chunk: true,
                metadata: None,
                generation: 0,
            })
        };
        let done = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: "t".into(),
            context_id: "c".into(),
            status: TaskStatus::new(TaskState::Completed),
            metadata: None,
            generation: 0,
        });
        let events = vec![
            StreamResponse::Task(created),
            working,
            chunk("whole", "a-1", false),
            chunk("first ", "a-2", false),
            chunk("second", "a-2", true),
            chunk("replaced", "a-3", false),
            chunk("again", "a-3", false),
            done,
        ];
        let mut task = Task::new("t", "c", TaskStatus::new(TaskState::Submitted));
        for e in &events {
            task.apply(e).expect("same task");
        }
        (events, task)
    }

    fn log_of(events: &[StreamResponse]) -> (Log, Task) {
        let StreamResponse::Task(first) = &events[0] else {
            panic!("a snapshot first")
        };
        let mut task = first.clone();
        let mut log = Log::created(Arc::new(task.clone()));
        for e in &events[1..] {
            log.push(&task, e);
            task.apply(e).expect("same task");
        }
        (log, task)
    }

    #[test]
    fn a_compacted_log_replays_the_same_events() {
        let (events, task) = event_log();
        let (mut log, stored) = log_of(&events);
        assert_eq!(stored, task);
        log.compact(&task);
        let compacted = log
            .0
            .iter()
            .filter(|e| !matches!(e, Logged::Event(_)))
            .count();
        // The snapshot, the whole artifact, the last replacement of a-3 and the final status;
        // not the status with a message, the appended chunks, nor a-3's replaced version.
        assert_eq!(compacted, 4, "{log:?}");
        let replayed: Vec<_> = (0..log.len())
            .map(|i| log.event(i, &task).unwrap())
            .collect();
        assert_eq!(replayed, events);
    }

    #[test]
    fn a_compacted_log_that_grows_again_expands_against_the_task_it_refers_to() {
        let (events, mut task) = event_log();
        let (mut log, _) = log_of(&events);
        log.compact(&task);
        let late = StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: "t".into(),
            context_id: "c".into(),
            artifact: Artifact::text("a", "late").with_id("a-1"),
            append: false,
            last_chunk: true,
            metadata: None,
            generation: 0,
        });
        log.push(&task, &late);
        task.apply(&late).expect("same task");
        let replayed: Vec<_> = (0..log.len())
            .map(|i| log.event(i, &task).unwrap())
            .collect();
        let mut expected = events;
        expected.push(late);
        assert_eq!(replayed, expected);
    }
}
