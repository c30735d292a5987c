//! What the handler answers with: tasks shared with the store rather than copied, and
//! serialized at most once per version.

use super::with_history;
use crate::cache::{Fifo, Weigh};
use crate::store::{Store, StoredTask};
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
/// Serialized (with `serde_json`), it writes the task's JSON: the store's own JSON of it when
/// the store keeps one (the memory store does for finished tasks), else for `GetTask` of an
/// unchanged task the JSON of an earlier answer.
#[derive(Clone, Debug)]
pub struct TaskReply {
    task: Arc<Task>,
    json: Json,
}

/// Where a [`TaskReply`]'s JSON comes from.
#[derive(Clone, Debug)]
enum Json {
    /// Serialized from the task.
    Task,
    /// The handler's serialized tasks, at the stored version (the task's history not cut).
    Cached(u64, Arc<SerializedTasks>),
    /// The store's own JSON of the task ([`TaskStore::task_json`]).
    ///
    /// [`TaskStore::task_json`]: crate::store::TaskStore::task_json
    Stored(Box<RawValue>),
}

impl TaskReply {
    pub(crate) fn new(task: Arc<Task>) -> Self {
        Self {
            task,
            json: Json::Task,
        }
    }

    /// `stored`'s task with at most `history_length` messages of history. Unless that cuts
    /// it, it is written as the store's JSON of it when the store keeps one, else through
    /// `cache` if given; a cut task is serialized.
    pub(crate) fn stored(
        store: &dyn Store,
        stored: StoredTask,
        history_length: Option<i32>,
        cache: Option<&Arc<SerializedTasks>>,
    ) -> Self {
        let task = with_history(stored.task.clone(), history_length);
        if !Arc::ptr_eq(&task, &stored.task) {
            return Self::new(task); // cut: not the stored version
        }
        let json = match (store.task_json(&task.id, stored.version), cache) {
            (Some(json), _) => Json::Stored(json),
            (None, Some(cache)) => Json::Cached(stored.version, cache.clone()),
            (None, None) => Json::Task,
        };
        Self { task, json }
    }

    /// The reply as a 1.1 call gets it: the task with its generation (`version`, its stored
    /// version), serialized afresh (the kept JSON is the 1.0 one, without it).
    pub(crate) fn with_generation(self, version: u64) -> Self {
        let mut task = Arc::unwrap_or_clone(self.task);
        task.generation = i64::try_from(version).unwrap_or(i64::MAX);
        Self::new(Arc::new(task))
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
        match &self.json {
            Json::Cached(version, cache) => cache.proto(&self.task, *version),
            Json::Task | Json::Stored(_) => {
                a2a_core::proto::encode(&*self.task, &a2a_core::proto::schema::TASK)
                    .map(Bytes::from)
                    .map_err(|e| {
                        Error::new(ErrorKind::Internal, format!("task not encodable: {e}"))
                    })
            }
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
        match &self.json {
            Json::Cached(version, cache) => cache
                .json(&self.task, *version)
                .map_err(serde::ser::Error::custom)?
                .serialize(serializer),
            Json::Stored(json) => json.serialize(serializer),
            Json::Task => self.task.serialize(serializer),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemoryStore;
    use crate::store::TaskStore as _;
    use crate::store::tests::{status_event, task_at};
    use a2a_core::TaskState;

    /// A reply written from the store's JSON is the task's own JSON. A cut history, or a
    /// version the store has moved past, is serialized from the task; a running task (which a
    /// memory store keeps decoded) goes through the handler's cache when one is given.
    #[tokio::test]
    async fn a_reply_from_the_stores_json_is_the_tasks_json() {
        let memory = MemoryStore::new();
        let store: &dyn Store = &memory;
        let mut t = task_at("t", "c", TaskState::Working, 5);
        t.history = vec![Message::user_text("one"), Message::user_text("two")];
        let scope = crate::Scope::default();
        let running = memory.create(Arc::new(t.clone()), scope).await.unwrap();
        let cache = Arc::new(SerializedTasks::new(1024 * 1024));
        let reply = TaskReply::stored(store, running.clone(), None, Some(&cache));
        assert!(matches!(reply.json, Json::Cached(1, _)));

        t.status = a2a_core::TaskStatus::new(TaskState::Completed);
        let event = status_event(&t);
        let done = memory.update(Arc::new(t.clone()), 1, &event).await.unwrap();
        let json = |r: &TaskReply| serde_json::to_string(r).unwrap();
        let reply = TaskReply::stored(store, done.clone(), None, Some(&cache));
        assert!(matches!(reply.json, Json::Stored(_)));
        assert_eq!(json(&reply), serde_json::to_string(&t).unwrap());
        assert_eq!(*reply, t);

        let cut = TaskReply::stored(store, done, Some(1), None);
        assert!(matches!(cut.json, Json::Task));
        let mut short = t.clone();
        short.truncate_history(Some(1));
        assert_eq!(json(&cut), serde_json::to_string(&short).unwrap());

        let stale = TaskReply::stored(store, running, None, None);
        assert!(matches!(stale.json, Json::Task));
        assert_eq!(stale.status.state, TaskState::Working);
    }
}
