//! Support for testing agents and stores (feature `testing`).
//!
//! [`check_store`] runs the behaviour tests our own stores pass against a store of yours.
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
            cell.apply(
                &engine,
                Box::new(Change::Continue(cx.message.clone(), None)),
                false,
            )
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

/// Runs the behaviour tests every [`Store`] must pass (ours do) against stores made by
/// `new_store`, one fresh empty store per case: writes and the version check, a task's JSON
/// if the store gives it out (`TaskStore::task_json`), the event log
/// and its pages, retention, message claims and their expiry, listing (order, filters, pages,
/// page tokens, counts) as tasks change, the paged scans, folding a long append stream, the
/// webhook delivery cursor's compare-and-swap and the delivery lease. Panics at the first
/// difference, naming it.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// a2a_server::testing::check_store(|| async { a2a_server::MemoryStore::new() }).await;
/// # });
/// ```
pub async fn check_store<S, F, Fut>(new_store: F)
where
    S: Store,
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = S>,
{
    use crate::store::{list_tests, scan_tests, tests};
    tests::create_get_update(&new_store().await).await;
    tests::task_json_is_the_tasks_json(&new_store().await).await;
    tests::log_pages_retention_and_claims(&new_store().await).await;
    tests::list_orders_filters_and_pages(&new_store().await).await;
    tests::long_append_stream_reads_back_as_its_fold(&new_store().await).await;
    tests::batch_writes_read_back_as_single_writes(&new_store().await).await;
    let store = new_store().await;
    let model = list_tests::list_follows_updates_and_deletes(&store).await;
    list_tests::check_against_model(&store, &model).await;
    list_tests::pages_stay_stable_under_updates(&new_store().await).await;
    scan_tests::scans_page_with_a_cursor(&new_store().await).await;
    scan_tests::claims_expire_by_receipt_time(&new_store().await).await;
    scan_tests::delivery_cursor_is_compare_and_swap(&new_store().await).await;
    scan_tests::delivery_lease_has_one_owner(&new_store().await).await;
}
