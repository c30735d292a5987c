//! Support for testing agents and stores (feature `testing`).
//!
//! [`record`] runs an [`Agent`]'s methods without a server: the [`TaskEvents`]
//! it returns check and store every event exactly as a server would (lifecycle, artifacts,
//! replies), in memory, and the [`Recording`] reads the outcome back.
//!
//! ```
//! use a2a_core::{Artifact, Error, Message, TaskState};
//! use a2a_server::{Agent, RequestContext, TaskEvents, testing};
//!
//! struct Echo;
//!
//! impl Agent for Echo {
//!     async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
//!         events.artifact(Artifact::text("echo", cx.message.text())).await?;
//!         events.complete(None).await
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let cx = RequestContext::new(Message::user_text("hello"));
//! let (events, recording) = testing::record(&cx).await;
//! Echo.execute(cx, events).await.unwrap();
//! let task = recording.task().await.expect("a task");
//! assert_eq!(task.status.state, TaskState::Completed);
//! assert_eq!(task.artifacts[0].text_content(), "hello");
//! # });
//! ```

use crate::agent::{Agent, RequestContext};
use crate::engine::{Change, Engine, LocalBus, TaskCell};
use crate::events::TaskEvents;
use crate::store::{MemoryStore, Store};
use a2a_core::{Error, ErrorKind, Message, StreamResponse, Task};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// What an agent under test reported through the [`TaskEvents`] of [`record`].
#[derive(Debug)]
pub struct Recording {
    engine: Arc<Engine>,
    cell: Arc<TaskCell>,
}

/// Never runs: [`record`] calls the agent's methods itself.
struct Unused;

impl Agent for Unused {
    async fn execute(&self, _cx: RequestContext, _events: TaskEvents) -> Result<(), Error> {
        Err(Error::new(ErrorKind::Internal, "not run"))
    }
}

/// [`TaskEvents`] for the call `cx`, and the [`Recording`] of what the agent reports through
/// them. For a continuation (`cx.stored_task` set), the stored task is stored first and moved to
/// WORKING with `cx.message`, as a server does before calling `execute`.
///
/// # Panics
///
/// If `cx.stored_task` is set but is not waiting for input (a server would refuse the
/// continuation before calling the agent).
pub async fn record(cx: &RequestContext) -> (TaskEvents, Recording) {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let engine = Engine::new(
        store.clone(),
        Arc::new(Unused),
        CancellationToken::new(),
        None,
        Arc::new(LocalBus::new()),
        None,
    );
    let cell = match &cx.stored_task {
        None => engine.cell_for_new(
            cx.task_id.clone(),
            cx.context_id.clone(),
            cx.scope.clone(),
            cx.message.clone(),
            None,
        ),
        Some(task) => {
            let stored = store
                .create(Arc::new(task.clone()), cx.scope.clone())
                .await
                .expect("a memory store takes a new task");
            let cell = engine.cell_for(stored);
            cell.apply(&engine, Change::Continue(cx.message.clone()), false)
                .await
                .expect("the stored task waits for input");
            cell
        }
    };
    let events = TaskEvents::new(engine.clone(), cell.clone());
    (events, Recording { engine, cell })
}

impl Recording {
    /// The task as stored now (`None` if the agent created none: it replied, or did nothing).
    pub async fn task(&self) -> Option<Task> {
        let stored = self.engine.store.get(&self.cell.id).await.ok()??;
        Some(Task::clone(&stored.task))
    }

    /// The events stored so far, in order: the task's creation, then one per change (with a
    /// continuation, the task as given first, then the move to WORKING, then the agent's).
    pub async fn events(&self) -> Vec<StreamResponse> {
        let mut events = Vec::new();
        let mut after = 0;
        while let Ok(page) = self.engine.store.events(&self.cell.id, after, 256).await {
            let Some(last) = page.last() else { break };
            after = last.seq;
            events.extend(page.into_iter().map(|e| e.event));
        }
        events
    }

    /// The message the agent answered with instead of a task, if it did.
    pub async fn reply(&self) -> Option<Message> {
        self.cell.reply().await
    }
}
