//! Every read the client makes is bounded, against a hostile agent (`common::hostile`) on every
//! binding: an answer declared or sent over its size limit fails with `Error::TooLarge` naming
//! the limit, long before it could be read; a trickling answer fails within the call's timeout;
//! a stream that sends no event fails within its idle timeout. Limits are set small (1-2 s) so
//! that each test takes about as long as its limit.

mod common;

use a2a_client::{Binding, Client, ClientBuilder, Error, Limit, RetryPolicy};
use a2a_core::{BINDING_HTTP_JSON, BINDING_JSONRPC, Message, SendMessageRequest};
use common::hostile::{Attack, HUGE, HostileAgent, Target};
use common::{binding_name, each_binding, http_bindings, within};
use futures::StreamExt as _;
use std::time::{Duration, Instant};

/// The call timeout and idle timeout the tests configure.
const LIMIT: Duration = Duration::from_secs(1);
/// How much later than its limit a failure may come (a loaded machine).
const SLACK: Duration = Duration::from_secs(3);

fn builder() -> ClientBuilder {
    Client::builder()
        .timeout(LIMIT)
        .idle_timeout(LIMIT)
        .retry(RetryPolicy::none())
}

async fn client(agent: &HostileAgent, builder: ClientBuilder) -> Client {
    within("the card", builder.connect(&agent.url))
        .await
        .expect("the hostile agent's card is fine")
}

fn send() -> SendMessageRequest {
    SendMessageRequest::new(Message::user_text("hi"))
}

/// Asserts `e` is `TooLarge` for `limit`, with a message naming the setter that raises it.
fn assert_too_large(e: &Error, limit: Limit) {
    match e {
        Error::TooLarge { limit: l, .. } => assert_eq!(*l, limit, "{e}"),
        other => panic!("expected TooLarge {limit:?}, got {other:?}"),
    }
    let text = e.to_string();
    assert!(text.contains(limit.setter()), "{text}");
    assert!(text.contains(limit.flag()), "{text}");
}

/// Asserts `e` is (or wraps) a timeout whose message names `setter`.
fn assert_timeout(e: &Error, setter: &str) {
    let mut chain = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        chain.push_str(&format!(": {s}"));
        source = s.source();
    }
    assert!(
        matches!(e, Error::Timeout(_) | Error::StreamEnded(_)),
        "expected a timeout, got {e:?}"
    );
    assert!(chain.contains(setter), "{chain}");
}

#[tokio::test]
async fn a_card_declared_over_its_limit_is_refused_before_its_body_is_read() {
    let agent = HostileAgent::start(BINDING_JSONRPC, Attack::Huge, Target::Card).await;
    let started = Instant::now();
    let e = within("the card", builder().connect(&agent.url))
        .await
        .unwrap_err();
    assert_too_large(&e, Limit::Card);
    assert!(e.to_string().contains(&agent.url), "{e}");
    assert!(started.elapsed() < SLACK, "{:?}", started.elapsed());
    assert!(agent.sent() < HUGE / 100, "read {} bytes", agent.sent());
}

#[tokio::test]
async fn an_endless_card_is_refused_once_it_passes_the_limit() {
    let agent = HostileAgent::start(BINDING_JSONRPC, Attack::Endless, Target::Card).await;
    let e = within(
        "the card",
        builder().max_card_bytes(100_000).connect(&agent.url),
    )
    .await
    .unwrap_err();
    assert_too_large(&e, Limit::Card);
    match e {
        Error::TooLarge { max, .. } => assert_eq!(max, 100_000),
        _ => unreachable!(),
    }
}

#[tokio::test]
async fn a_trickling_card_fails_within_the_timeout() {
    let agent = HostileAgent::start(BINDING_HTTP_JSON, Attack::Trickle, Target::Card).await;
    let started = Instant::now();
    let e = within("the card", builder().connect(&agent.url))
        .await
        .unwrap_err();
    assert_timeout(&e, "ClientBuilder::timeout");
    let took = started.elapsed();
    assert!(took >= LIMIT && took < LIMIT + SLACK, "{took:?}");
}

each_binding! {
    async fn a_unary_answer_declared_over_its_limit_is_refused(binding) {
        let agent = HostileAgent::start(binding_name(binding), Attack::Huge, Target::Calls).await;
        let client = client(&agent, builder()).await;
        let started = Instant::now();
        let e = within("SendMessage", client.send_message(&send())).await.unwrap_err();
        assert_too_large(&e, Limit::Response);
        assert!(started.elapsed() < SLACK, "{:?}", started.elapsed());
        assert!(agent.sent() < HUGE / 100, "read {} bytes", agent.sent());
    }
}

http_bindings! {
    async fn an_endless_unary_answer_is_refused_once_it_passes_the_limit(binding) {
        let agent = HostileAgent::start(binding_name(binding), Attack::Endless, Target::Calls).await;
        let client = client(&agent, builder().max_response_bytes(1 << 20)).await;
        let e = within("SendMessage", client.send_message(&send())).await.unwrap_err();
        assert_too_large(&e, Limit::Response);
    }
}

each_binding! {
    async fn a_trickling_unary_answer_fails_within_the_timeout(binding) {
        let agent = HostileAgent::start(binding_name(binding), Attack::Trickle, Target::Calls).await;
        let client = client(&agent, builder()).await;
        let started = Instant::now();
        let e = within("SendMessage", client.send_message(&send())).await.unwrap_err();
        assert_timeout(&e, "ClientBuilder::timeout");
        let took = started.elapsed();
        assert!(took >= LIMIT && took < LIMIT + SLACK, "{took:?}");
    }
}

each_binding! {
    async fn a_stream_event_over_its_limit_ends_the_stream(binding) {
        let agent = HostileAgent::start(binding_name(binding), Attack::Huge, Target::Calls).await;
        let client = client(&agent, builder().max_event_bytes(1 << 20)).await;
        let started = Instant::now();
        let mut stream = within("open", client.send_streaming_message(&send()))
            .await
            .expect("the stream opens");
        let e = within("the first event", stream.next())
            .await
            .expect("an item")
            .unwrap_err();
        let inner = match &e {
            Error::StreamEnded(inner) => inner
                .source()
                .and_then(|s| s.downcast_ref::<Error>())
                .unwrap_or_else(|| panic!("{e:?}")),
            other => other,
        };
        assert_too_large(inner, Limit::Event);
        assert!(started.elapsed() < SLACK, "{:?}", started.elapsed());
        assert!(within("the end", stream.next()).await.is_none());
    }
}

each_binding! {
    async fn a_stream_without_events_fails_within_the_idle_timeout(binding) {
        let agent = HostileAgent::start(binding_name(binding), Attack::Trickle, Target::Calls).await;
        let client = client(&agent, builder()).await;
        let started = Instant::now();
        let mut stream = within("open", client.send_streaming_message(&send()))
            .await
            .expect("the stream opens");
        let e = within("the first event", stream.next())
            .await
            .expect("an item")
            .unwrap_err();
        assert_timeout(&e, "ClientBuilder::idle_timeout");
        let took = started.elapsed();
        assert!(took >= LIMIT && took < LIMIT + SLACK, "{took:?}");
    }
}

#[test]
fn the_defaults_are_documented_values() {
    let limits = a2a_client::Limits::default();
    assert_eq!(limits.card_bytes, 1 << 20);
    assert_eq!(limits.jwks_bytes, 1 << 20);
    assert_eq!(limits.response_bytes, 32 << 20);
    assert_eq!(limits.event_bytes, 16 << 20);
    assert_eq!(limits.idle_timeout, Duration::from_secs(300));
    let _ = Binding::JsonRpc;
}
