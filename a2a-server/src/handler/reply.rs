//! What the handler answers with: tasks shared with the store rather than copied, and
//! serialized at most once per version.

use crate::cache::{Fifo, Weigh};
use a2a_core::{Error, ErrorKind, Message, SendMessageResponse, Task, TaskId};
use bytes::Bytes;
use serde::Serialize;
use serde_json::value::RawValue;
use std::sync::{Arc, Mutex};

/// How many bytes of serialized tasks a handler keeps for `GetTask`.
pub(crate) const SERIALIZED_CACHE_BYTES: usize = 8 * 1024 * 1024;

/// One version of a task, serialized: as JSON, and as protobuf (each once asked for).
#[derive(Clone, Debug)]
struct SerializedTask {
    version: u64,
    json: Option<Arc<RawValue>>,
    proto: Option<Bytes>,
}

impl Weigh for SerializedTask {
    fn weight(&self) -> usize {
        self.json.as_ref().map_or(0, |j| j.get().len()) + self.proto.as_ref().map_or(0, Bytes::len)
    }
}

/// The JSON of recently read tasks, by version: `GetTask` of an unchanged task (a polling
/// client's usual read) is answered with it instead of serializing the task again.
#[derive(Debug)]
pub(crate) struct SerializedTasks(Mutex<Fifo<SerializedTask>>);

impl SerializedTasks {
    pub(crate) fn new(bytes: usize) -> Self {
        Self(Mutex::new(Fifo::new(bytes)))
    }

    /// The JSON of `task` at `version`: kept from an earlier answer, or serialized now (and
    /// kept).
    fn json(&self, task: &Task, version: u64) -> Result<Arc<RawValue>, Error> {
        self.get_or_encode(
            task,
            version,
            |e| e.json.clone(),
            || {
                serde_json::value::to_raw_value(task)
                    .map(Arc::from)
                    .map_err(|e| format!("task not serializable: {e}"))
            },
            |e, json| e.json = Some(json),
        )
    }

    /// The protobuf encoding (`lf.a2a.v1.Task`, for the gRPC binding) of `task` at `version`,
    /// kept like the JSON.
    fn proto(&self, task: &Task, version: u64) -> Result<Bytes, Error> {
        self.get_or_encode(
            task,
            version,
            |e| e.proto.clone(),
            || {
                a2a_core::proto::encode(task, &a2a_core::proto::schema::TASK)
                    .map(Bytes::from)
                    .map_err(|e| format!("task not encodable: {e}"))
            },
            |e, proto| e.proto = Some(proto),
        )
    }

    /// One form of `task` at `version`: `take` reads it from the entry, `encode` makes it,
    /// `keep` stores it (beside the other form, when that is of the same version).
    fn get_or_encode<T: Clone>(
        &self,
        task: &Task,
        version: u64,
        take: impl Fn(&SerializedTask) -> Option<T>,
        encode: impl FnOnce() -> Result<T, String>,
        keep: impl FnOnce(&mut SerializedTask, T),
    ) -> Result<T, Error> {
        let cached = self.0.lock().expect("cache lock").get(&task.id);
        let mut entry = match cached.filter(|c| c.version == version) {
            Some(entry) => match take(&entry) {
                Some(hit) => return Ok(hit),
                None => entry,
            },
            None => SerializedTask {
                version,
                json: None,
                proto: None,
            },
        };
        let encoded = encode().map_err(|e| Error::new(ErrorKind::Internal, e))?;
        keep(&mut entry, encoded.clone());
        self.0
            .lock()
            .expect("cache lock")
            .put(task.id.clone(), entry);
        Ok(encoded)
    }

    /// Forgets a deleted task.
    pub(crate) fn remove(&self, id: &TaskId) {
        self.0.lock().expect("cache lock").remove(id);
    }
}

/// A task as [`RequestHandler`](crate::RequestHandler) answers it: shared with the store
/// rather than copied. It reads as a [`Task`] (`Deref`); [`TaskReply::into_task`] takes it.
/// Serialized (with `serde_json`), it writes the task's JSON, which for `GetTask` of an
/// unchanged task is the JSON of an earlier answer.
#[derive(Clone, Debug)]
pub struct TaskReply {
    task: Arc<Task>,
    /// The stored version and the handler's serialized tasks, when this is the stored task
    /// (its history not cut).
    cache: Option<(u64, Arc<SerializedTasks>)>,
}

impl TaskReply {
    pub(crate) fn new(task: Arc<Task>) -> Self {
        Self { task, cache: None }
    }

    /// The stored task at `version`, serialized through `cache`.
    pub(crate) fn cached(task: Arc<Task>, version: u64, cache: Arc<SerializedTasks>) -> Self {
        Self {
            task,
            cache: Some((version, cache)),
        }
    }

    /// The task (copied only if the store still shares it).
    pub fn into_task(self) -> Task {
        Arc::unwrap_or_clone(self.task)
    }

    /// The task, shared.
    pub fn shared(&self) -> &Arc<Task> {
        &self.task
    }

    /// The task's protobuf encoding (`lf.a2a.v1.Task`): for `GetTask` of an unchanged task,
    /// the encoding of an earlier answer.
    pub(crate) fn proto(&self) -> Result<Bytes, Error> {
        match &self.cache {
            Some((version, cache)) => cache.proto(&self.task, *version),
            None => a2a_core::proto::encode(&*self.task, &a2a_core::proto::schema::TASK)
                .map(Bytes::from)
                .map_err(|e| Error::new(ErrorKind::Internal, format!("task not encodable: {e}"))),
        }
    }
}

impl std::ops::Deref for TaskReply {
    type Target = Task;

    fn deref(&self) -> &Task {
        &self.task
    }
}

impl From<TaskReply> for Task {
    fn from(reply: TaskReply) -> Self {
        reply.into_task()
    }
}

impl PartialEq for TaskReply {
    fn eq(&self, other: &Self) -> bool {
        self.task == other.task
    }
}

impl PartialEq<Task> for TaskReply {
    fn eq(&self, other: &Task) -> bool {
        *self.task == *other
    }
}

impl Serialize for TaskReply {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.cache {
            Some((version, cache)) => cache
                .json(&self.task, *version)
                .map_err(serde::ser::Error::custom)?
                .serialize(serializer),
            None => self.task.serialize(serializer),
        }
    }
}

/// A `SendMessage` answer: the same JSON as [`SendMessageResponse`] (into which it converts),
/// with the task shared rather than copied.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum SendReply {
    /// The task the message created or continued.
    Task(TaskReply),
    /// The agent's direct answer, with no task.
    Message(Message),
}

impl From<SendReply> for SendMessageResponse {
    fn from(reply: SendReply) -> Self {
        match reply {
            SendReply::Task(task) => Self::Task(task.into_task()),
            SendReply::Message(m) => Self::Message(m),
        }
    }
}
