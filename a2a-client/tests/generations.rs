//! A2A 1.1 in the client: delegation by polling long-polls an agent that speaks 1.1 (no
//! interval) and polls on its interval otherwise; `ifGenerationMatch` on sends, its mismatch a
//! typed error.

mod common;

use a2a_client::{DelegateOptions, Error};
use a2a_core::{ErrorKind, Message, SendMessageRequest, TaskState};
use common::{TestServer, each_binding, task_of, within};
use std::time::{Duration, Instant};

/// Polling only, on an interval far longer than the countdown takes.
fn polling() -> DelegateOptions {
    let interval = Duration::from_secs(20);
    DelegateOptions::default()
        .deadline(common::WAIT * 4)
        .force_polling(true)
        .poll_interval(interval, interval)
}

each_binding! {
    async fn delegation_by_polling_long_polls_an_agent_that_speaks_1_1(binding) {
        let server = TestServer::demo().await;
        let client = server.client(binding).await;
        assert!(client.speaks_generations());
        let started = Instant::now();
        let task = task_of(
            within("delegate", client.delegate(Message::user_text("countdown 3"), polling()))
                .await
                .expect("delegate"),
        );
        assert_eq!(task.status.state, TaskState::Completed);
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "no 20 s interval: each poll returned on a change ({:?})",
            started.elapsed()
        );
        // The countdown makes 7 changes, each answering at most one held poll.
        let polls = server.seen.calls_of("GetTask").len();
        assert!((1..=7).contains(&polls), "{polls} GetTask calls");
        assert_eq!(task.generation, 7);
    }
}

#[tokio::test]
async fn delegation_by_polling_a_1_0_agent_polls_on_its_interval() {
    let server = TestServer::demo().await;
    // Built for a URL, without the card: a 1.0 client.
    let client = a2a_client::Client::builder()
        .build_jsonrpc(&server.url)
        .expect("client");
    assert!(!client.speaks_generations());
    let interval = Duration::from_millis(300);
    let options = DelegateOptions::default()
        .deadline(common::WAIT)
        .force_polling(true)
        .poll_interval(interval, interval);
    let started = Instant::now();
    let task = task_of(
        within(
            "delegate",
            client.delegate(Message::user_text("countdown 2"), options),
        )
        .await
        .expect("delegate"),
    );
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(task.generation, 0, "a 1.0 answer has none");
    let polls = server.seen.calls_of("GetTask").len();
    assert!(polls >= 1 && started.elapsed() >= interval, "{polls} polls");
}

each_binding! {
    async fn an_answer_at_a_stale_generation_is_a_typed_mismatch(binding) {
        let server = TestServer::demo().await;
        let client = server.client(binding).await;
        let options = DelegateOptions::default().deadline(common::WAIT);
        let asked = task_of(
            within("delegate", client.delegate(Message::user_text("greet"), options))
                .await
                .expect("delegate"),
        );
        assert_eq!(asked.status.state, TaskState::InputRequired);
        let answer = |generation| {
            let m = Message::user_text("Ada")
                .with_task_id(asked.id.clone())
                .with_context_id(asked.context_id.clone());
            SendMessageRequest::new(m).with_if_generation_match(generation)
        };
        match client.send_message(&answer(asked.generation + 1)).await {
            Err(e @ Error::Remote { .. }) => {
                assert_eq!(e.kind(), Some(ErrorKind::TaskGenerationMismatch), "{e}");
            }
            other => panic!("a mismatch expected, got {other:?}"),
        }
        let done = client.send_message(&answer(asked.generation)).await.expect("at its generation");
        assert_eq!(task_of(done).status.state, TaskState::Completed);
    }
}
