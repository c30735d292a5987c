//! The `embedded` example's composition (`a2a_examples::embedded`), served on a free port:
//! the application's route and layer, the agent card and a SendMessage answer through it, and
//! the server's protections (the idle timeout, the cap) acting on the application's own
//! `axum::serve`.

use a2a_core::{Error, Message};
use a2a_examples::embedded::{self, SERVED_BY};
use a2a_server::{Agent, RequestContext, Server, ServerBuilder, ServerHandle, TaskEvents};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio::time::{Instant, timeout};

const SHORT: Duration = Duration::from_millis(300);
const LONG: Duration = Duration::from_secs(60);
const WAIT: Duration = Duration::from_secs(10);

struct Echo;

impl Agent for Echo {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        let text = cx.message.text();
        events.complete(Some(Message::agent_text(text))).await
    }
}

/// Serves the example's composition on a free port, until the handle shuts it down.
async fn start(
    configure: impl FnOnce(ServerBuilder) -> ServerBuilder,
) -> (
    SocketAddr,
    ServerHandle,
    tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = configure(Server::builder(Echo).public_url(format!("http://{addr}")))
        .build()
        .unwrap();
    let (handle, serving) = embedded::serve(server, listener);
    (addr, handle, tokio::spawn(serving))
}

/// Waits until the server closes `tcp`.
async fn closed(tcp: &mut TcpStream) {
    let mut chunk = [0u8; 1024];
    while let Ok(n) = tcp.read(&mut chunk).await {
        if n == 0 {
            return;
        }
    }
}

async fn card_ok(addr: SocketAddr) -> bool {
    let url = format!("http://{addr}/.well-known/agent-card.json");
    matches!(reqwest::get(url).await, Ok(r) if r.status() == 200)
}

#[tokio::test]
async fn the_application_and_the_agent_answer_through_one_router_and_shut_down() {
    let (addr, handle, serving) = start(|b| b).await;
    let client = reqwest::Client::new();

    let health = client
        .get(format!("http://{addr}/health"))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    assert_eq!(health.headers()[SERVED_BY], "embedded-example");
    assert_eq!(health.text().await.unwrap(), "ok");

    let card = client
        .get(format!("http://{addr}/.well-known/agent-card.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(card.status(), 200);
    assert_eq!(card.headers()[SERVED_BY], "embedded-example");
    let card: Value = card.json().await.unwrap();
    assert_eq!(
        card["supportedInterfaces"][0]["url"],
        format!("http://{addr}")
    );

    let sent = client
        .post(format!("http://{addr}/"))
        .header("a2a-version", "1.0")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
                "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hello"}]}
            }}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(sent.status(), 200);
    assert_eq!(sent.headers()[SERVED_BY], "embedded-example");
    let sent: Value = sent.json().await.unwrap();
    let task = &sent["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{sent}");
    assert_eq!(
        task["status"]["message"]["parts"][0]["text"], "hello",
        "{sent}"
    );

    handle.shutdown();
    timeout(WAIT, serving)
        .await
        .expect("the application stops on shutdown")
        .unwrap()
        .expect("and flushes the store");
}

#[tokio::test]
async fn the_idle_timeout_closes_a_silent_connection_of_the_application() {
    let (addr, _handle, _serving) =
        start(|b| b.idle_timeout(SHORT).header_read_timeout(LONG)).await;
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    let opened = Instant::now();
    timeout(WAIT, closed(&mut tcp))
        .await
        .expect("a silent connection is closed");
    assert!(opened.elapsed() >= SHORT - Duration::from_millis(50));

    // A kept-alive connection, idle after its answer, too.
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(b"GET /health HTTP/1.1\r\nhost: app\r\n\r\n")
        .await
        .unwrap();
    timeout(WAIT, closed(&mut tcp))
        .await
        .expect("an idle kept-alive connection is closed");
}

#[tokio::test]
async fn at_the_cap_a_silent_connection_makes_room_for_a_real_client() {
    let (addr, _handle, _serving) = start(|b| {
        b.max_connections(3)
            .idle_timeout(LONG)
            .header_read_timeout(LONG)
    })
    .await;
    let mut silent = Vec::new();
    for _ in 0..3 {
        silent.push(TcpStream::connect(addr).await.unwrap());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        timeout(Duration::from_secs(1), card_ok(addr))
            .await
            .unwrap(),
        "a real client is served at the cap"
    );
    timeout(WAIT, closed(&mut silent[0]))
        .await
        .expect("the connection silent longest was closed to make room");
}

#[tokio::test]
async fn a_slowloris_head_is_closed_after_the_header_timeout_as_the_layer_counts_requests() {
    // Bytes keep moving: only a watcher that sees requests (through the layer and the
    // `Connection` connect info) can tell that this head takes too long.
    let (addr, _handle, _serving) =
        start(|b| b.header_read_timeout(SHORT).idle_timeout(LONG)).await;
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    let opened = Instant::now();
    let dribble = async {
        let mut chunk = [0u8; 1024];
        for byte in b"GET /health HTTP/1.1\r\nx-slow: "
            .iter()
            .chain(std::iter::repeat(&b'a'))
        {
            if tcp.write_all(&[*byte]).await.is_err() {
                return;
            }
            if let Ok(Ok(0) | Err(_)) =
                timeout(Duration::from_millis(50), tcp.read(&mut chunk)).await
            {
                return;
            }
        }
    };
    timeout(WAIT, dribble)
        .await
        .expect("a head that never completes is closed");
    assert!(opened.elapsed() >= SHORT - Duration::from_millis(50));
    assert!(opened.elapsed() < LONG / 2, "by the header timeout");
}
