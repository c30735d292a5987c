//! `delegate`, `delegate_with` and `reply` over a streaming agent: chunked artifacts assembled,
//! interrupted tasks answered in the same task and context, message replies, deadlines.

mod common;

use a2a_client::{DelegateOptions, Error};
use a2a_core::{Message, SendMessageResponse, StreamResponse, TaskState};
use a2a_server::{Agent, RequestContext, TaskEvents};
use common::{Stepper, TestServer, each_binding, task_of, within};
use std::time::Duration;

fn options() -> DelegateOptions {
    DelegateOptions::default().deadline(common::WAIT)
}

each_binding! {
    async fn delegate_assembles_the_chunks_of_a_countdown_into_one_artifact(binding) {
        let server = TestServer::demo().await;
        let client = server.client(binding).await;
        let task = task_of(
            within("delegate", client.delegate(Message::user_text("countdown 3"), options()))
                .await
                .expect("delegate"),
        );
        assert_eq!(task.status.state, TaskState::Completed);
        assert_eq!(task.status.message.as_ref().expect("message").text(), "Liftoff!");
        assert_eq!(task.artifacts.len(), 1, "{:?}", task.artifacts);
        let artifact = &task.artifacts[0];
        assert_eq!(artifact.parts.len(), 3);
        assert_eq!(artifact.text_content(), "3\n2\n1\n");
        assert_eq!(server.seen.calls_of("SendStreamingMessage").len(), 1);

        // What delegate assembled is what the server stored: artifacts, status, history.
        let stored = within("get", client.get_task(task.id.clone())).await.expect("get");
        assert_eq!(stored, task);
    }
}

each_binding! {
    async fn reply_answers_the_greeting_question_in_the_same_task_and_context(binding) {
        let server = TestServer::demo().await;
        let client = server.client(binding).await;
        let asked = task_of(
            within("delegate", client.delegate(Message::user_text("greet"), options()))
                .await
                .expect("delegate"),
        );
        assert_eq!(asked.status.state, TaskState::InputRequired);
        assert_eq!(
            asked.status.message.as_ref().expect("question").text(),
            "What is your name?"
        );

        let done = task_of(
            within("reply", client.reply(&asked, Message::user_text("Ada"), options()))
                .await
                .expect("reply"),
        );
        assert_eq!(done.id, asked.id);
        assert_eq!(done.context_id, asked.context_id);
        assert_eq!(done.status.state, TaskState::Completed);
        assert_eq!(done.status.message.as_ref().expect("greeting").text(), "Hello, Ada!");
        let stored = within("get", client.get_task(done.id.clone())).await.expect("get");
        assert_eq!(stored, done);

        let streams = server.seen.calls_of("SendStreamingMessage");
        assert_eq!(streams.len(), 2);
        let answer = &streams[1].params()["message"];
        assert_eq!(answer["taskId"], asked.id.as_str());
        assert_eq!(answer["contextId"], asked.context_id.as_str());
    }
}

each_binding! {
    async fn delegate_with_reports_every_event_as_it_arrives(binding) {
        let server = TestServer::demo().await;
        let client = server.client(binding).await;
        let mut seen = Vec::new();
        let outcome = within(
            "delegate",
            client.delegate_with(Message::user_text("countdown 2"), options(), |e| {
                seen.push(e.clone());
            }),
        )
        .await
        .expect("delegate");
        let task = task_of(outcome);
        assert_eq!(seen.len(), 5, "{seen:?}");
        assert!(matches!(seen[0], StreamResponse::Task(_)));
        assert_eq!(seen[4].state(), Some(&TaskState::Completed));
        assert_eq!(common::fold(&seen).expect("task").artifacts, task.artifacts);
    }
}

/// Answers every message with a message, creating no task.
struct Replier;

impl Agent for Replier {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), a2a_core::Error> {
        events
            .reply(Message::agent_text(format!(
                "you said: {}",
                cx.message.text()
            )))
            .await
    }
}

each_binding! {
    async fn delegate_returns_a_message_reply_as_a_message(binding) {
        let server = TestServer::start(Replier, |b| b).await;
        let client = server.client(binding).await;
        let outcome = within("delegate", client.delegate(Message::user_text("hi"), options()))
            .await
            .expect("delegate");
        let SendMessageResponse::Message(reply) = outcome else {
            panic!("expected a message, got {outcome:?}");
        };
        assert_eq!(reply.text(), "you said: hi");
    }
}

each_binding! {
    async fn delegate_gives_up_at_its_deadline(binding) {
        let agent = Stepper::new(1);
        let server = TestServer::start(agent.clone(), |b| b).await;
        let client = server.client(binding).await;
        agent.open(1); // the task is created, then waits for ever
        let options = DelegateOptions::default().deadline(Duration::from_millis(200));
        let err = within("delegate", client.delegate(Message::user_text("go"), options))
            .await
            .expect_err("the deadline passes");
        assert!(matches!(err, Error::Timeout(_)), "{err}");
    }
}
