//! The stored task is the fold of its event log: replaying a task's logged events with
//! [`Task::apply`] gives the task as stored, for every kind of change an agent makes.

use a2a_core::{
    Artifact, Error, ErrorKind, Message, Part, SendMessageRequest, StreamResponse, Task, TaskId,
    TaskState,
};
use a2a_server::{
    Agent, CallContext, MemoryStore, RequestContext, SendReply, Server, TaskEvents, TaskStore,
};
use std::sync::{Arc, Mutex};

/// Streams a poem in chunks, talks, and asks for more; on the answer, adds notes and completes.
/// A message naming another task is refused: the agent records the error and carries on.
#[derive(Default)]
struct Poet {
    refused: Arc<Mutex<Option<Error>>>,
}

impl Agent for Poet {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        if cx.stored_task.is_some() {
            events.working("more it is").await?;
            events
                .artifact(Artifact::text("notes", "a rose").with_id("notes"))
                .await?;
            return events.complete(Some(Message::agent_text("done"))).await;
        }
        events.working("on it").await?;
        let chunk = |text: &str| Artifact::new([Part::text(text)]).with_id("poem");
        events
            .artifact_chunk(chunk("Roses ").with_name("poem"), false, false)
            .await?;
        events.artifact_chunk(chunk("are red"), true, true).await?;
        events
            .artifact(Artifact::text("notes", "draft").with_id("notes"))
            .await?;
        events.message(Message::agent_text("here it is")).await?;
        let stray = Message::agent_text("elsewhere").with_task_id("another-task");
        if let Err(e) = events.message(stray).await {
            *self.refused.lock().unwrap() = Some(e);
        }
        events.input_required("another verse?").await
    }
}

/// The task folded from its whole log, starting from the creation snapshot.
async fn fold_log(store: &dyn TaskStore, id: &TaskId) -> Task {
    let log = store.events(id, 0, 1000).await.unwrap();
    let Some((first, rest)) = log.split_first() else {
        panic!("an empty log")
    };
    let StreamResponse::Task(mut task) = first.event.clone() else {
        panic!("the log starts with the task's snapshot")
    };
    for entry in rest {
        task.apply(&entry.event).unwrap();
    }
    task
}

#[tokio::test]
async fn the_stored_task_is_the_fold_of_its_logged_events() {
    let store = Arc::new(MemoryStore::new());
    let poet = Poet::default();
    let refused = poet.refused.clone();
    let server = Server::builder(poet)
        .task_store_arc(store.clone())
        .build()
        .unwrap();
    let h = server.handler();
    let cx = CallContext::default();

    let request = SendMessageRequest::new(Message::user_text("a poem, please"));
    let SendReply::Task(task) = h.send_message(&cx, request).await.unwrap() else {
        panic!("a task")
    };
    assert_eq!(task.status.state, TaskState::InputRequired);
    let stored = store.get(&task.id).await.unwrap().unwrap().task;
    assert_eq!(fold_log(&*store, &task.id).await, *stored);
    assert_eq!(stored.artifacts[0].text_content(), "Roses are red");
    let texts: Vec<String> = stored.history.iter().map(Message::text).collect();
    assert_eq!(
        texts,
        ["a poem, please", "on it", "here it is", "another verse?"]
    );
    let refused = refused
        .lock()
        .unwrap()
        .take()
        .expect("the stray message is refused");
    assert_eq!(refused.kind(), Some(ErrorKind::InvalidAgentResponse));

    // The answer to the question is the one change no event carries: the client sent it.
    let answer = Message::user_text("yes").with_task_id(task.id.clone());
    let SendReply::Task(done) = h
        .send_message(&cx, SendMessageRequest::new(answer))
        .await
        .unwrap()
    else {
        panic!("a task")
    };
    assert_eq!(done.status.state, TaskState::Completed);
    let stored = store.get(&task.id).await.unwrap().unwrap().task;
    let mut folded = fold_log(&*store, &task.id).await;
    let at = stored
        .history
        .iter()
        .position(|m| m.text() == "yes")
        .unwrap();
    folded.history.insert(at, stored.history[at].clone());
    assert_eq!(folded, *stored);
    assert_eq!(stored.artifacts[1].text_content(), "a rose");
}
