//! Peers that ask for large answers and never read them, against `Server::serve`: HTTP/2
//! connections whose flow-control window is closed (`INITIAL_WINDOW_SIZE = 0`) with many
//! streams, over gRPC, HTTP+JSON and JSON-RPC, and HTTP/1.1 connections that never read. The
//! output held for them stays under the caps (answers beyond are refused: `RESOURCE_EXHAUSTED`
//! or `503`), their connections are closed after the send timeout, and what they held is
//! released; in a process of its own, the server's RSS stays under the cap plus 100 MB with
//! 200 such streams and returns to its baseline once they leave.

mod slow;

use a2a_core::{Artifact, Error};
use a2a_server::serve::Protections;
use a2a_server::{Agent, RequestContext, Server, ServerBuilder, TaskEvents};
use serde_json::{Value, json};
use slow::{Began, Binding, MIB, WAIT, non_reading_h2};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::time::{Instant, timeout};

/// The size of the text artifact of a task: its GetTask answer is a little more.
const BIG: usize = 1 << 20;
/// The size of the text artifact of the task of the RSS scenario (the issue's).
const HUGE: usize = 4 << 20;
/// The send timeout of these tests.
const SEND: Duration = Duration::from_secs(1);
/// Long enough never to fire during a test.
const LONG: Duration = Duration::from_secs(120);

/// Completes every task with an artifact of as many bytes of text as the message says.
struct Big;

impl Agent for Big {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        let size = cx.message.text().parse().unwrap_or(0);
        events
            .artifact(Artifact::text("big", "x".repeat(size)))
            .await?;
        events.complete(None).await
    }
}

/// Serves on a free loopback port with `configure`d caps; the address and the protections
/// (whose counter is the server's).
async fn start(
    configure: impl FnOnce(ServerBuilder) -> ServerBuilder,
) -> (SocketAddr, Protections) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let builder = Server::builder(Big)
        .public_url(format!("http://{addr}"))
        .send_timeout(SEND)
        .idle_timeout(LONG)
        .header_read_timeout(LONG);
    let server = configure(builder).build().unwrap();
    let protections = server.protections();
    tokio::spawn(async move { server.serve(listener).await });
    (addr, protections)
}

/// Creates a task with an artifact of `size` bytes (its answers are a little more) and returns
/// its id.
async fn big_task(addr: SocketAddr, size: usize) -> String {
    let response: Value = reqwest::Client::new()
        .post(format!("http://{addr}/"))
        .header("a2a-version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
            "message": {"messageId": uuid(), "role": "ROLE_USER", "parts": [{"text": size.to_string()}]}
        }}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let task = &response["result"]["task"];
    assert_eq!(
        task["status"]["state"], "TASK_STATE_COMPLETED",
        "{task:.300}"
    );
    task["id"].as_str().unwrap().to_owned()
}

fn uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// The most output the server held since [`Peak::watch`], sampled every millisecond.
struct Peak(
    std::sync::Arc<std::sync::atomic::AtomicU64>,
    tokio::task::JoinHandle<()>,
);

impl Peak {
    fn watch(protections: &Protections) -> Self {
        let peak = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let (seen, protections) = (peak.clone(), protections.clone());
        let sampler = tokio::spawn(async move {
            loop {
                seen.fetch_max(
                    protections.output_held(),
                    std::sync::atomic::Ordering::Relaxed,
                );
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        });
        Self(peak, sampler)
    }

    fn get(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Drop for Peak {
    fn drop(&mut self) {
        self.1.abort();
    }
}

/// Waits until the server holds no output (at most [`WAIT`]).
async fn released(protections: &Protections) {
    timeout(WAIT, async {
        while protections.output_held() > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("still {} bytes held", protections.output_held()));
}

/// Caps that take two answers of `size` per connection and three in all.
fn three_answers(size: usize) -> impl FnOnce(ServerBuilder) -> ServerBuilder {
    let size = size as u64;
    move |builder| {
        builder
            .max_output_per_connection(size * 5 / 2)
            .max_output(size * 7 / 2)
    }
}

/// Three HTTP/2 connections with their window closed, 8 GetTask streams each over
/// `binding`: each connection holds at most two answers (its cap), all together at most
/// three (the total cap), the rest are refused; the connections are closed after the send
/// timeout and everything they held is released.
async fn closed_windows_are_bounded_and_closed(binding: Binding) {
    let (addr, protections) = start(three_answers(BIG)).await;
    let id = big_task(addr, BIG).await;
    released(&protections).await;
    let peak = Peak::watch(&protections);
    let mut connections = Vec::new();
    for _ in 0..3 {
        let opened = Instant::now();
        connections.push((opened, non_reading_h2(addr, binding, &id, 8).await));
    }
    let mut coming = 0;
    for (_, (began, _, _)) in &connections {
        let here = began.iter().filter(|b| **b == Began::Coming).count();
        assert!(
            here <= 2,
            "{binding:?}: {here} answers under a connection's cap of two"
        );
        assert!(began.contains(&Began::Refused), "{binding:?}: {began:?}");
        coming += here;
    }
    assert!(coming >= 3, "{binding:?}: {coming} answers sent");
    let mut kept = Vec::new();
    for (opened, (began, bodies, driver)) in connections {
        if !began.contains(&Began::Coming) {
            // Every answer refused: it holds nothing, and is not closed.
            kept.push((bodies, driver));
            continue;
        }
        timeout(WAIT, driver)
            .await
            .expect("the server closes a connection that reads nothing")
            .unwrap();
        assert!(opened.elapsed() >= SEND, "not before the send timeout");
    }
    released(&protections).await;
    for (_, driver) in kept {
        assert!(
            !driver.is_finished(),
            "{binding:?}: a connection holding nothing is kept"
        );
    }
    let peak = peak.get();
    assert!(
        peak > 2 * BIG as u64 && peak <= BIG as u64 * 7 / 2,
        "{binding:?}: at most {peak} bytes held; the total cap is three answers"
    );
}

#[tokio::test]
async fn grpc_streams_with_a_closed_window_are_capped_and_closed_after_the_send_timeout() {
    closed_windows_are_bounded_and_closed(Binding::Grpc).await;
}

#[tokio::test]
async fn rest_streams_with_a_closed_window_are_capped_and_closed_after_the_send_timeout() {
    closed_windows_are_bounded_and_closed(Binding::Rest).await;
}

#[tokio::test]
async fn jsonrpc_streams_with_a_closed_window_are_capped_and_closed_after_the_send_timeout() {
    closed_windows_are_bounded_and_closed(Binding::JsonRpc).await;
}

/// An HTTP/1.1 request for task `id` over `binding` (REST or JSON-RPC).
fn http1_request(binding: Binding, id: &str) -> Vec<u8> {
    match binding {
        Binding::Rest => format!("GET /tasks/{id} HTTP/1.1\r\nhost: a2a\r\n\r\n").into_bytes(),
        _ => {
            let body =
                json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": id}})
                    .to_string();
            format!(
                "POST / HTTP/1.1\r\nhost: a2a\r\ncontent-type: application/json\r\na2a-version: 1.0\r\n\
                 content-length: {}\r\n\r\n{body}",
                body.len()
            )
            .into_bytes()
        }
    }
}

/// Eight HTTP/1.1 connections ask for the huge task over `binding` and never read (with a
/// small receive buffer; the answers are larger than the sockets' buffers): the output held
/// stays under the total cap (three answers), the answers beyond it are refused with `503`,
/// and the stalled connections are closed after the send timeout, their answers cut short.
async fn non_reading_http1_is_bounded_and_closed(binding: Binding) {
    let (addr, protections) = start(three_answers(HUGE)).await;
    let id = big_task(addr, HUGE).await;
    released(&protections).await;
    let peak = Peak::watch(&protections);
    let asked = Instant::now();
    let mut connections = Vec::new();
    for _ in 0..8 {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.set_recv_buffer_size(4096).unwrap();
        let mut tcp = socket.connect(addr).await.unwrap();
        tcp.write_all(&http1_request(binding, &id)).await.unwrap();
        connections.push(tcp);
    }
    // The answers stall, and are released once their connections are closed.
    timeout(WAIT, async {
        while peak.get() < BIG as u64 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("answers held");
    released(&protections).await;
    assert!(asked.elapsed() >= SEND, "not before the send timeout");
    let (mut cut, mut refused) = (0, 0);
    for mut tcp in connections {
        let mut seen = Vec::new();
        // A refused connection is kept alive: its 503 is all there is to read.
        let _ = timeout(Duration::from_millis(500), tcp.read_to_end(&mut seen)).await;
        let text = String::from_utf8_lossy(&seen[..seen.len().min(64)]).into_owned();
        if text.starts_with("HTTP/1.1 503") {
            refused += 1;
        } else {
            assert!(text.starts_with("HTTP/1.1 200"), "{binding:?}: {text}");
            assert!(
                seen.len() < HUGE,
                "{binding:?}: the stalled answer was cut short"
            );
            cut += 1;
        }
    }
    assert_eq!(cut + refused, 8);
    assert!(
        cut >= 3 && refused >= 1,
        "{binding:?}: {cut} cut, {refused} refused"
    );
    let peak = peak.get();
    assert!(
        peak <= HUGE as u64 * 7 / 2,
        "{binding:?}: {peak} bytes held"
    );
}

#[tokio::test]
async fn rest_http1_clients_that_never_read_are_capped_and_closed_after_the_send_timeout() {
    non_reading_http1_is_bounded_and_closed(Binding::Rest).await;
}

#[tokio::test]
async fn jsonrpc_http1_clients_that_never_read_are_capped_and_closed_after_the_send_timeout() {
    non_reading_http1_is_bounded_and_closed(Binding::JsonRpc).await;
}

#[tokio::test]
async fn a_reader_on_a_connection_at_its_cap_gets_its_answer_once_it_reads() {
    // A peer that reads is never cut: one stream's answer larger than the connection's cap is
    // sent whole, since nothing else is held.
    let (addr, protections) = start(|b| b.max_output_per_connection(MIB / 2)).await;
    let id = big_task(addr, BIG).await;
    let client = reqwest::Client::builder()
        .http2_prior_knowledge()
        .build()
        .unwrap();
    let body = client
        .get(format!("http://{addr}/tasks/{id}"))
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert!(body.len() > BIG, "the whole answer");
    released(&protections).await;
}

/// The environment variable that makes [`serve_big_answers`] serve (it is run as a child
/// process by [`rss_stays_under_the_cap_with_200_non_reading_streams_and_returns_after`]).
const CHILD: &str = "A2A_SLOW_READERS_CHILD";
/// The child's total output cap.
const RSS_CAP: u64 = 64 * MIB;
/// Its per-connection cap.
const RSS_CONNECTION_CAP: u64 = 16 * MIB;

/// The child process: serves [`Big`] on a free port with [`RSS_CAP`], prints the port, and
/// serves for at most two minutes.
#[tokio::test]
#[ignore = "a child process of another test"]
async fn serve_big_answers() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = Server::builder(Big)
        .public_url(format!("http://{addr}"))
        .send_timeout(2 * SEND)
        .max_output(RSS_CAP)
        .max_output_per_connection(RSS_CONNECTION_CAP)
        .build()
        .unwrap();
    println!("serving on {addr}");
    let _ = timeout(Duration::from_secs(120), server.serve(listener)).await;
}

/// The scenario, in a server process of its own: four HTTP/2 connections with their
/// window closed and 50 gRPC GetTask streams each (200 answers of 4 MiB asked for, 800 MiB
/// unbounded): the server's RSS stays under its output cap plus 100 MB, and once the peers
/// leave it returns near its baseline within the send timeout.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn rss_stays_under_the_cap_with_200_non_reading_streams_and_returns_after() {
    use tokio::io::AsyncBufReadExt as _;
    let test = std::env::current_exe().unwrap();
    let mut child = tokio::process::Command::new(test)
        .args(["--exact", "serve_big_answers", "--ignored"])
        .args(["--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        // glibc's dynamic mmap threshold decides how much freed memory the heap keeps, and that
        // differs from machine to machine (12-24 MiB on one, 45 MiB on another, in the same
        // scenario); a fixed threshold gives large buffers back when they are freed, so that what
        // stays is what the server still holds (docs/server-limits.md, "Memory after an attack").
        .env("GLIBC_TUNABLES", "glibc.malloc.mmap_threshold=131072")
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = child.id().unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let addr: SocketAddr = timeout(WAIT, async {
        loop {
            let line = lines.next_line().await.unwrap().expect("the child serves");
            if let Some((_, addr)) = line.split_once("serving on ") {
                return addr.trim().parse().unwrap();
            }
        }
    })
    .await
    .expect("the child announces its port");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });

    let id = big_task(addr, HUGE).await;
    // Back within 32 MiB of the RSS after a few answers were read whole.
    slow::rss_scenario(addr, pid, &id, RSS_CAP, 2 * SEND, 32 * MIB, None).await;
    child.kill().await.unwrap();
}
