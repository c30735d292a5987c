//! `ClientBuilder::timeout` bounds a unary call as a whole: every attempt, and the backoff
//! between them, against one deadline from the call's start. An agent that trickles or hangs
//! on every attempt costs the caller the timeout, not the timeout times the attempts.

mod common;

use a2a_client::{Client, Error, RetryPolicy};
use a2a_core::{Message, SendMessageRequest};
use common::hostile::{Attack, HostileAgent, Target};
use common::{binding_name, each_binding, within};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt as _;

/// The call timeout the tests configure.
const TIMEOUT: Duration = Duration::from_secs(2);
/// How much later than its timeout a call may fail (a loaded machine); less than a second
/// attempt would take.
const SLACK: Duration = Duration::from_millis(1500);

/// The text of `e` and of its sources.
fn chain(e: &Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text
}

/// Asserts `e` is the call's deadline: a timeout naming `ClientBuilder::timeout`.
fn assert_deadline(e: &Error) {
    assert!(
        matches!(e, Error::Timeout(_)),
        "expected a timeout, got {e:?}"
    );
    assert!(e.to_string().contains("ClientBuilder::timeout"), "{e}");
}

/// A listener that accepts connections, counts them, and never answers (nor closes them).
async fn silent_agent() -> (String, Arc<AtomicUsize>) {
    let (listener, url) = common::listen().await;
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((tcp, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::Relaxed);
            open.push(tcp);
        }
    });
    (url, accepted)
}

each_binding! {
    async fn a_trickling_answer_fails_at_the_timeout_however_many_attempts_are_left(binding) {
        let agent = HostileAgent::start(binding_name(binding), Attack::Trickle, Target::Calls).await;
        // The default policy: 4 attempts.
        let client = within("the card", Client::builder().timeout(TIMEOUT).connect(&agent.url))
            .await
            .expect("the card is fine");
        let started = Instant::now();
        let send = SendMessageRequest::new(Message::user_text("hi"));
        let e = within("SendMessage", client.send_message(&send)).await.unwrap_err();
        let took = started.elapsed();
        assert_deadline(&e);
        assert!(took >= TIMEOUT && took < TIMEOUT + SLACK, "{took:?}");
    }
}

#[tokio::test]
async fn attempts_that_hang_are_retried_until_the_deadline_and_no_further() {
    for rest in [false, true] {
        let (url, accepted) = silent_agent().await;
        let builder = Client::builder()
            .timeout(TIMEOUT)
            .attempt_timeout(Duration::from_millis(500))
            .retry(RetryPolicy {
                max_attempts: 100,
                initial_backoff: Duration::from_millis(10),
                max_backoff: Duration::from_millis(40),
            });
        let client = if rest {
            builder.build_rest(&url)
        } else {
            builder.build_jsonrpc(&url)
        }
        .expect("client");
        let started = Instant::now();
        let e = within("GetTask", client.get_task("t-1")).await.unwrap_err();
        let took = started.elapsed();
        assert!(matches!(e, Error::Timeout(_)), "{e:?}");
        assert!(
            chain(&e).contains("ClientBuilder::timeout"),
            "{}",
            chain(&e)
        );
        assert!(took < TIMEOUT + SLACK, "{took:?}");
        // Each attempt timed out on its own and was retried, on a new connection.
        let attempts = accepted.load(Ordering::Relaxed);
        assert!((3..=5).contains(&attempts), "{attempts} attempts");
    }
}

#[tokio::test]
async fn a_retry_whose_backoff_would_end_past_the_deadline_is_not_made() {
    // Every request answered at once with 503 (retryable); the backoff is longer than the
    // timeout, so the call gives up after its first attempt instead of sleeping past it.
    let (listener, url) = common::listen().await;
    let answered = Arc::new(AtomicUsize::new(0));
    let count = answered.clone();
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            let count = count.clone();
            tokio::spawn(async move {
                let mut head = [0u8; 4096];
                let _ = tokio::io::AsyncReadExt::read(&mut tcp, &mut head).await;
                count.fetch_add(1, Ordering::Relaxed);
                let _ = tcp
                    .write_all(b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 4\r\nconnection: close\r\n\r\nbusy")
                    .await;
            });
        }
    });
    let client = Client::builder()
        .timeout(TIMEOUT)
        .retry(RetryPolicy {
            max_attempts: 4,
            initial_backoff: TIMEOUT * 2,
            max_backoff: TIMEOUT * 4,
        })
        .build_jsonrpc(&url)
        .expect("client");
    let started = Instant::now();
    let e = within("GetTask", client.get_task("t-1")).await.unwrap_err();
    let took = started.elapsed();
    assert_deadline(&e);
    let text = chain(&e);
    assert!(text.contains("could not be retried"), "{text}");
    assert!(
        text.contains("503"),
        "the last attempt's failure is its source: {text}"
    );
    assert!(took < TIMEOUT, "{took:?}");
    assert_eq!(answered.load(Ordering::Relaxed), 1);
}
