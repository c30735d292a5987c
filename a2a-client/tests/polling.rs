//! The polling fallback: `delegate` against an agent whose card says `streaming: false` sends
//! with `returnImmediately` and polls GetTask (with a growing interval) until the task ends.

mod common;

use a2a_client::DelegateOptions;
use a2a_core::{Message, SendMessageResponse, StreamResponse, TaskState};
use a2a_server::demo::DemoAgent;
use common::{Stepper, TestServer, collect, each_binding, task_of, within};
use std::time::Duration;

fn fast_polling() -> DelegateOptions {
    DelegateOptions::default()
        .poll_interval(Duration::from_millis(10), Duration::from_millis(50))
        .deadline(common::WAIT)
}

async fn no_streaming() -> TestServer {
    TestServer::start(DemoAgent, |b| {
        b.agent_card(DemoAgent::card()).streaming(false)
    })
    .await
}

each_binding! {
    async fn delegate_polls_an_agent_that_cannot_stream_until_the_task_completes(binding) {
        let server = no_streaming().await;
        let client = server.client(binding).await;
        assert!(!client.supports_streaming());

        let outcome = within(
            "delegate",
            client.delegate(Message::user_text("countdown 2"), fast_polling()),
        )
        .await
        .expect("delegate");
        let task = task_of(outcome);
        assert_eq!(task.status.state, TaskState::Completed);
        assert_eq!(task.artifacts.len(), 1);
        assert_eq!(task.artifacts[0].text_content(), "2\n1\n");

        let sends = server.seen.calls_of("SendMessage");
        assert_eq!(sends.len(), 1);
        assert_eq!(sends[0].params()["configuration"]["returnImmediately"], true);
        assert!(server.seen.calls_of("SendStreamingMessage").is_empty());
        assert!(!server.seen.calls_of("GetTask").is_empty(), "polled");
    }
}

each_binding! {
    async fn delegate_stream_yields_a_snapshot_for_each_change_polling_sees(binding) {
        let agent = Stepper::new(2);
        let server = TestServer::start(agent.clone(), |b| b.streaming(false)).await;
        let client = server.client(binding).await;
        agent.open(3);
        let stream = within(
            "delegate",
            client.delegate_stream(Message::user_text("go"), &fast_polling()),
        )
        .await
        .expect("delegate");
        let events = collect(stream).await;
        assert!(
            events.iter().all(|e| matches!(e, StreamResponse::Task(_))),
            "polling yields task snapshots only"
        );
        for pair in events.windows(2) {
            assert_ne!(pair[0], pair[1], "a snapshot is yielded only when something changed");
        }
        let StreamResponse::Task(last) = events.last().expect("events") else { unreachable!() };
        assert_eq!(last.status.state, TaskState::Completed);
        assert_eq!(last.artifacts[0].text_content(), "1;2;");
    }
}

each_binding! {
    async fn delegate_stops_polling_when_the_task_needs_input(binding) {
        let server = no_streaming().await;
        let client = server.client(binding).await;
        let asked = task_of(
            within("delegate", client.delegate(Message::user_text("greet"), fast_polling()))
                .await
                .expect("delegate"),
        );
        assert_eq!(asked.status.state, TaskState::InputRequired);

        let done = task_of(
            within(
                "reply",
                client.reply(&asked, Message::user_text("Grace"), fast_polling()),
            )
            .await
            .expect("reply"),
        );
        assert_eq!(done.id, asked.id);
        assert_eq!(done.status.message.expect("greeting").text(), "Hello, Grace!");
    }
}

each_binding! {
    async fn force_polling_polls_an_agent_that_could_stream(binding) {
        let server = TestServer::demo().await;
        let client = server.client(binding).await;
        assert!(client.supports_streaming());
        let outcome = within(
            "delegate",
            client.delegate(Message::user_text("countdown 1"), fast_polling().force_polling(true)),
        )
        .await
        .expect("delegate");
        let SendMessageResponse::Task(task) = outcome else { panic!("a task") };
        assert_eq!(task.status.state, TaskState::Completed);
        assert!(server.seen.calls_of("SendStreamingMessage").is_empty());
        assert_eq!(server.seen.calls_of("SendMessage").len(), 1);
        assert!(!server.seen.calls_of("GetTask").is_empty());
    }
}
