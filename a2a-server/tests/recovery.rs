//! Start-up recovery comes before every request: a task a previous process left running is
//! claimed (handed to `Agent::resume`) before any operation can open it, however the handler
//! is mounted and however soon the first request arrives.

use a2a_core::{
    Artifact, Error, GetTaskRequest, ListTasksRequest, Message, StreamResponse,
    SubscribeToTaskRequest, Task, TaskId, TaskState, TaskStatus,
};
use a2a_server::{
    Agent, CallContext, MemoryStore, RESTART_MESSAGE, RequestContext, Scope, Server, TaskEvents,
    TaskStore,
};
use futures::StreamExt as _;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::timeout;

const WAIT: Duration = Duration::from_secs(10);

/// Fails every new message; finishes a resumed task with an artifact.
struct Resumer;

impl Agent for Resumer {
    async fn execute(&self, _cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        events.fail("not for new work").await
    }

    async fn resume(&self, _cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        events.working("picking the work up again").await?;
        events
            .artifact(Artifact::text("result", "done after restart"))
            .await?;
        events.complete(None).await
    }
}

/// A store holding `n` tasks left WORKING by a "previous process".
async fn store_with_orphans(n: usize) -> (Arc<MemoryStore>, Vec<TaskId>) {
    let store = Arc::new(MemoryStore::new());
    let mut ids = Vec::new();
    for i in 0..n {
        let mut task = Task::new(
            TaskId::random(),
            a2a_core::ContextId::random(),
            TaskStatus::new(TaskState::Working),
        );
        task.history.push(Message::user_text(format!("job {i}")));
        ids.push(task.id.clone());
        store
            .create(Arc::new(task), Scope::default())
            .await
            .expect("create");
    }
    (store, ids)
}

fn cx() -> CallContext {
    CallContext::new(Scope::default(), Default::default())
}

/// A handler used on its own (a custom transport): nothing runs the upkeep, so only
/// the requests themselves can bring recovery about.
#[tokio::test]
async fn a_subscription_right_after_start_sees_the_orphaned_task_finish() {
    let (store, ids) = store_with_orphans(50).await;
    let server = Server::builder(Resumer)
        .task_store_arc(store.clone())
        .build()
        .expect("server");
    let handler = server.handler();
    // The very first request opens an orphan: recovery has claimed it by then.
    let stream = timeout(
        WAIT,
        handler.subscribe_to_task(&cx(), SubscribeToTaskRequest::new(ids[7].clone())),
    )
    .await
    .expect("subscribe answers");
    let events: Vec<_> = match stream {
        Ok(stream) => timeout(WAIT, stream.collect::<Vec<_>>())
            .await
            .expect("the stream ends: the task is not left WORKING"),
        // Recovery may finish the task before the subscription looks at it.
        Err(e) => {
            assert!(e.message.contains("COMPLETED"), "{e}");
            Vec::new()
        }
    };
    if let Some(last) = events.last() {
        assert!(
            matches!(&last.event, StreamResponse::StatusUpdate(u) if u.status.state == TaskState::Completed),
            "{events:#?}"
        );
    }
    // Every orphan is resumed exactly once (a second resume would fail: COMPLETED is final).
    for id in &ids {
        let task = wait_for_terminal(&handler, id).await;
        assert_eq!(task.status.state, TaskState::Completed, "{id}");
        assert_eq!(task.artifacts.len(), 1, "{id}: resumed once");
    }
    assert_eq!(
        handler.recover().await.expect("recover"),
        50,
        "counted once"
    );
}

async fn wait_for_terminal(handler: &a2a_server::RequestHandler, id: &TaskId) -> Task {
    timeout(WAIT, async {
        loop {
            let task = handler
                .get_task(&cx(), GetTaskRequest::new(id.clone()))
                .await
                .expect("get");
            if task.status.state.is_terminal() {
                return task.into_task();
            }
            tokio::task::yield_now().await;
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the task ends")
}

#[tokio::test]
async fn get_task_and_list_tasks_wait_for_recovery_too() {
    let (store, ids) = store_with_orphans(3).await;
    let server = Server::builder(a2a_server::demo::DemoAgent)
        .task_store_arc(store)
        .build()
        .expect("server");
    let handler = server.handler();
    // The first request is a listing: by the time it answers, recovery has claimed every orphan
    // (the default resume fails it with the restart message).
    timeout(WAIT, handler.list_tasks(&cx(), ListTasksRequest::default()))
        .await
        .expect("list answers")
        .expect("list");
    for id in &ids {
        let task = wait_for_terminal(&handler, id).await;
        assert_eq!(task.status.state, TaskState::Failed);
        let why = task.status.message.expect("a status message");
        assert_eq!(why.text(), RESTART_MESSAGE);
    }
}
