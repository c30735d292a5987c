//! `a2a_server::testing`: an agent's methods run without a server, with the events checked and
//! stored as a server would.
#![cfg(feature = "testing")]

use a2a_core::{Error, ErrorKind, Message, StreamResponse, Task, TaskState, TaskStatus};
use a2a_server::{Agent, RequestContext, TaskEvents, testing};

/// Replies to "hi"; asks a question otherwise, and completes when answered.
struct Desk;

impl Agent for Desk {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        if cx.stored_task.is_some() {
            let answer = Message::agent_text(format!("noted: {}", cx.message.text()));
            return events.complete(Some(answer)).await;
        }
        if cx.message.text() == "hi" {
            return events.reply(Message::agent_text("hello")).await;
        }
        events.input_required("which date?").await
    }
}

#[tokio::test]
async fn a_reply_creates_no_task() {
    let cx = RequestContext::new(Message::user_text("hi"));
    let (events, recording) = testing::record(&cx).await;
    Desk.execute(cx, events).await.expect("runs");
    assert_eq!(
        recording.reply().await.map(|m| m.text()).as_deref(),
        Some("hello")
    );
    assert!(recording.task().await.is_none());
    assert!(recording.events().await.is_empty());
}

#[tokio::test]
async fn a_question_then_its_answer() {
    let cx = RequestContext::new(Message::user_text("book a room"));
    let task_id = cx.task_id.clone();
    let (events, recording) = testing::record(&cx).await;
    Desk.execute(cx, events).await.expect("runs");
    let asked = recording.task().await.expect("a task");
    assert_eq!(asked.id, task_id);
    assert_eq!(asked.status.state, TaskState::InputRequired);
    assert_eq!(asked.history[0].text(), "book a room");

    // The continuation: the stored task and the client's answer.
    let answer = Message::user_text("Friday").with_task_id(task_id.clone());
    let cx = RequestContext::for_task(asked, Some(answer));
    let (events, recording) = testing::record(&cx).await;
    Desk.execute(cx, events).await.expect("runs");
    let done = recording.task().await.expect("the task");
    assert_eq!(done.status.state, TaskState::Completed);
    let texts: Vec<String> = done.history.iter().map(Message::text).collect();
    assert_eq!(
        texts,
        ["book a room", "which date?", "Friday", "noted: Friday"]
    );
    let states: Vec<Option<TaskState>> = recording
        .events()
        .await
        .iter()
        .map(|e| e.state().cloned())
        .collect();
    assert_eq!(
        states,
        [
            Some(TaskState::InputRequired),
            Some(TaskState::Working),
            Some(TaskState::Completed)
        ]
    );
}

#[tokio::test]
async fn illegal_changes_are_refused_as_a_server_would() {
    let cx = RequestContext::new(Message::user_text("x"));
    let (events, recording) = testing::record(&cx).await;
    events.complete(None).await.expect("completes");
    let err = events
        .working("again")
        .await
        .expect_err("nothing after COMPLETED");
    assert_eq!(err.kind(), Some(ErrorKind::InvalidAgentResponse));
    let err = events
        .reply(Message::agent_text("late"))
        .await
        .expect_err("no reply once a task exists");
    assert_eq!(err.kind(), Some(ErrorKind::InvalidAgentResponse));
    assert!(matches!(
        recording.events().await.as_slice(),
        [StreamResponse::Task(Task {
            status: TaskStatus {
                state: TaskState::Completed,
                ..
            },
            ..
        })]
    ));
}
