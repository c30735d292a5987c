//! Retries: transient failures (HTTP 503, a dropped connection) are retried with backoff for
//! idempotent calls and for SendMessage (with the same `messageId`); A2A errors like a 400 are
//! not; non-idempotent calls are not retried once the request may have arrived.

mod common;

use a2a_client::{Binding, Client, Error, RetryPolicy};
use a2a_core::{ErrorKind, ListTasksRequest, Message, SendMessageRequest, TaskState};
use common::{
    Seen, TestServer, a2a_error_body, each_binding, fast_retry, http_bindings, task_of, within,
};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

/// Whether `err` is the binding's "service unavailable": HTTP 503, or gRPC `UNAVAILABLE`.
fn unavailable(err: &Error, binding: Binding) -> bool {
    match binding {
        Binding::Grpc => matches!(
            err,
            Error::Grpc {
                code: "UNAVAILABLE",
                ..
            }
        ),
        _ => matches!(err, Error::Http { status: 503, .. }),
    }
}

fn is(op: &'static str) -> impl Fn(&Seen) -> bool + Send + Sync + 'static {
    move |s: &Seen| s.op() == op
}

each_binding! {
    async fn get_task_succeeds_after_two_503_answers(binding) {
        let server = TestServer::demo().await;
        let client = server.client(binding).await;
        let task = task_of(within("send", client.send_text("hello")).await.expect("send"));
        server.faults.fail(2, is("GetTask"), 503, json!("Service Unavailable"));
        let got = within("get", client.get_task(task.id.clone())).await.expect("get after retries");
        assert_eq!(got.id, task.id);
        assert_eq!(server.seen.calls_of("GetTask").len(), 3);
    }
}

http_bindings! {
    async fn a_503_carrying_an_a2a_error_is_retried_too(binding) {
        let server = TestServer::demo().await;
        let client = server.client(binding).await;
        let body = a2a_error_body(binding, ErrorKind::Internal, "overloaded, try again");
        server.faults.fail(1, is("ListTasks"), 503, body);
        within("list", client.list_tasks(&ListTasksRequest::default()))
            .await
            .expect("list after a retry");
        assert_eq!(server.seen.calls_of("ListTasks").len(), 2);
    }
}

each_binding! {
    async fn send_message_retried_after_503_carries_the_same_message_id(binding) {
        let server = TestServer::demo().await;
        let client = server.client(binding).await;
        server.faults.fail(2, is("SendMessage"), 503, json!("Service Unavailable"));
        let message = Message::user_text("hello");
        let id = message.message_id.clone();
        let task = task_of(
            within("send", client.send_message(&SendMessageRequest::new(message)))
                .await
                .expect("send after retries"),
        );
        assert_eq!(task.status.state, TaskState::Completed);

        let sends = server.seen.calls_of("SendMessage");
        assert_eq!(sends.len(), 3);
        for send in &sends {
            assert_eq!(send.params()["message"]["messageId"], id.as_str());
            assert_eq!(send.params(), sends[0].params(), "every attempt sends the same request");
        }
        let all = within("list", client.list_tasks(&ListTasksRequest::default()))
            .await
            .expect("list");
        assert_eq!(all.total_size, 1, "only the last attempt reached the agent");
    }
}

each_binding! {
    async fn a_400_a2a_error_is_not_retried(binding) {
        let server = TestServer::demo().await;
        let client = server.client(binding).await;
        let body = a2a_error_body(binding, ErrorKind::InvalidParams, "historyLength: must be >= 0");
        server.faults.fail(1, is("GetTask"), 400, body);
        let err = within("get", client.get_task("t-1")).await.expect_err("a 400");
        let status = if binding == Binding::Grpc { 200 } else { 400 };
        assert!(matches!(err, Error::Remote { status: s, .. } if s == status), "{err}");
        assert_eq!(err.kind(), Some(ErrorKind::InvalidParams), "{err}");
        assert_eq!(server.seen.calls_of("GetTask").len(), 1);
    }
}

each_binding! {
    async fn cancel_task_is_not_retried_after_a_503(binding) {
        let server = TestServer::demo().await;
        let client = server.client(binding).await;
        server.faults.fail(1, is("CancelTask"), 503, json!("Service Unavailable"));
        let err = within("cancel", client.cancel_task("t-1"))
            .await
            .expect_err("a 503");
        assert!(unavailable(&err, binding), "{err}");
        assert_eq!(server.seen.calls_of("CancelTask").len(), 1);
    }
}

each_binding! {
    async fn retries_stop_after_the_last_attempt(binding) {
        let server = TestServer::demo().await;
        let client = server.client(binding).await;
        server.faults.fail(10, is("GetTask"), 503, json!("Service Unavailable"));
        let err = within("get", client.get_task("t-1")).await.expect_err("always 503");
        assert!(unavailable(&err, binding), "{err}");
        let attempts = fast_retry().max_attempts as usize;
        assert_eq!(server.seen.calls_of("GetTask").len(), attempts);
    }
}

#[tokio::test]
async fn retry_policy_none_tries_once() {
    let server = TestServer::demo().await;
    let client = server
        .builder(Binding::JsonRpc)
        .retry(RetryPolicy::none())
        .connect(&server.url)
        .await
        .expect("connect");
    server
        .faults
        .fail(1, is("GetTask"), 503, json!("Service Unavailable"));
    let err = within("get", client.get_task("t-1"))
        .await
        .expect_err("a 503");
    assert!(err.is_retryable(), "{err}");
    assert_eq!(server.seen.calls_of("GetTask").len(), 1);
}

/// A TCP proxy that breaks its first connections: it reads the whole request and closes the
/// connection without an answer, either before the request reaches the server or after (the
/// answer is lost). Later connections are passed to the server.
struct DroppingProxy {
    url: String,
    /// The requests of the broken connections, raw.
    dropped: Arc<Mutex<Vec<String>>>,
}

impl DroppingProxy {
    /// Drops the requests of the first `first` connections.
    async fn start(upstream: &str, first: usize) -> Self {
        Self::start_with(upstream, first, false).await
    }

    /// Passes the requests of the first `first` connections to the server, and drops the
    /// answers.
    async fn losing_answers(upstream: &str, first: usize) -> Self {
        Self::start_with(upstream, first, true).await
    }

    async fn start_with(upstream: &str, first: usize, deliver: bool) -> Self {
        let (listener, url) = common::listen().await;
        let upstream = upstream.trim_start_matches("http://").to_owned();
        let dropped = Arc::new(Mutex::new(Vec::new()));
        let record = dropped.clone();
        tokio::spawn(async move {
            let mut accepted = 0;
            loop {
                let Ok((mut inbound, _)) = listener.accept().await else {
                    return;
                };
                accepted += 1;
                if accepted <= first {
                    let request = read_request(&mut inbound).await;
                    if deliver {
                        // The server answers and closes; the answer goes nowhere.
                        let request =
                            request.replacen("\r\n\r\n", "\r\nConnection: close\r\n\r\n", 1);
                        let mut outbound = TcpStream::connect(&upstream).await.expect("upstream");
                        outbound
                            .write_all(request.as_bytes())
                            .await
                            .expect("forward");
                        let mut answer = Vec::new();
                        let _ = within("the lost answer", outbound.read_to_end(&mut answer)).await;
                        assert!(
                            answer.starts_with(b"HTTP/1.1 200"),
                            "{}",
                            String::from_utf8_lossy(&answer)
                        );
                    }
                    record.lock().expect("dropped").push(request);
                    let _ = inbound.shutdown().await;
                    drop(inbound);
                    continue;
                }
                let upstream = upstream.clone();
                tokio::spawn(async move {
                    if let Ok(mut outbound) = TcpStream::connect(&upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
            }
        });
        Self { url, dropped }
    }

    fn dropped(&self) -> Vec<String> {
        self.dropped.lock().expect("dropped").clone()
    }

    /// A client for `server`, through this proxy.
    fn client(&self, server: &TestServer, binding: Binding) -> Client {
        let mut card = server.card.clone();
        for interface in &mut card.supported_interfaces {
            interface.url = self.url.clone();
        }
        server
            .builder(binding)
            .build_from_card(card)
            .expect("client")
    }
}

/// Reads one HTTP/1.1 request (head and `Content-Length` body).
async fn read_request(stream: &mut TcpStream) -> String {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&buf).into_owned();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            if buf.len() >= end + 4 + length {
                return text;
            }
        }
        match within("read a request", stream.read(&mut chunk)).await {
            Ok(0) | Err(_) => return String::from_utf8_lossy(&buf).into_owned(),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// The JSON body of a raw HTTP request.
fn body_of(raw: &str) -> Value {
    let body = raw.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    serde_json::from_str(body).expect("a JSON body")
}

each_binding! {
    async fn send_message_is_retried_after_the_connection_drops_with_the_same_message_id(binding) {
        let server = TestServer::demo().await;
        let proxy = DroppingProxy::start(&server.url, 2).await;
        let client = proxy.client(&server, binding);
        let message = Message::user_text("hello");
        let id = message.message_id.clone();
        let task = task_of(
            within("send", client.send_message(&SendMessageRequest::new(message)))
                .await
                .expect("send after retries"),
        );
        assert_eq!(task.status.state, TaskState::Completed);

        let dropped = proxy.dropped();
        assert_eq!(dropped.len(), 2);
        // (A gRPC client's connection is dropped after its HTTP/2 preface, before the call.)
        for raw in dropped.iter().filter(|_| binding != Binding::Grpc) {
            let body = body_of(raw);
            let sent = match binding {
                Binding::JsonRpc => &body["params"]["message"],
                _ => &body["message"],
            };
            assert_eq!(sent["messageId"], id.as_str());
        }
        let delivered = server.seen.calls_of("SendMessage");
        assert_eq!(delivered.len(), 1);
        assert_eq!(delivered[0].params()["message"]["messageId"], id.as_str());
    }
}

each_binding! {
    async fn get_task_is_retried_after_the_connection_drops(binding) {
        let server = TestServer::demo().await;
        let direct = server.client(binding).await;
        let task = task_of(within("send", direct.send_text("hello")).await.expect("send"));
        let proxy = DroppingProxy::start(&server.url, 1).await;
        let client = proxy.client(&server, binding);
        let got = within("get", client.get_task(task.id.clone())).await.expect("get");
        assert_eq!(got.id, task.id);
        assert_eq!(proxy.dropped().len(), 1);
    }
}

each_binding! {
    async fn cancel_task_is_not_retried_after_the_connection_drops(binding) {
        let server = TestServer::demo().await;
        let proxy = DroppingProxy::start(&server.url, 1).await;
        let client = proxy.client(&server, binding);
        let err = within("cancel", client.cancel_task("t-1"))
            .await
            .expect_err("the request may have arrived");
        assert!(matches!(err, Error::Transport(_) | Error::Grpc { .. }), "{err}");
        assert!(!err.is_before_send(), "{err}");
        assert_eq!(proxy.dropped().len(), 1);
        assert!(server.seen.calls().is_empty());
    }
}

http_bindings! {
    async fn a_send_whose_answer_was_lost_is_retried_and_answered_with_the_same_task(binding) {
        let server = TestServer::demo().await;
        let proxy = DroppingProxy::losing_answers(&server.url, 1).await;
        let client = proxy.client(&server, binding);
        let message = Message::user_text("exactly once");
        let id = message.message_id.clone();
        let task = task_of(
            within("send", client.send_message(&SendMessageRequest::new(message)))
                .await
                .expect("send after a retry"),
        );
        assert_eq!(task.status.state, TaskState::Completed);
        assert_eq!(task.artifacts[0].text_content(), "echo: exactly once");

        // Both attempts reached the server with the same messageId; it ran the task once.
        let sends = server.seen.calls_of("SendMessage");
        assert_eq!(sends.len(), 2);
        assert!(sends.iter().all(|s| s.params()["message"]["messageId"] == id.as_str()));
        let direct = server.client(binding).await;
        let all = within("list", direct.list_tasks(&ListTasksRequest::default()))
            .await
            .expect("list");
        assert_eq!(all.total_size, 1, "the retry did not start a second task");
        assert_eq!(all.tasks[0].id, task.id);
    }
}

#[tokio::test]
async fn an_attempt_that_takes_too_long_times_out_and_is_retried() {
    // A server that accepts connections, reads, and never answers.
    let (listener, url) = common::listen().await;
    let accepted = Arc::new(Mutex::new(0usize));
    let count = accepted.clone();
    tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            *count.lock().expect("count") += 1;
            open.push(stream); // kept open, never answered
        }
    });
    let client = Client::builder()
        .retry(fast_retry())
        .attempt_timeout(std::time::Duration::from_millis(100))
        .build_jsonrpc(&url)
        .expect("client");
    let err = within("get", client.get_task("t-1"))
        .await
        .expect_err("no answer");
    assert!(matches!(err, Error::Timeout(_)), "{err}");
    assert!(
        err.to_string().contains("ClientBuilder::attempt_timeout"),
        "{err}"
    );
    assert_eq!(
        *accepted.lock().expect("count"),
        fast_retry().max_attempts as usize,
        "each attempt on a new connection"
    );
}
