//! The scenario of issue 46 against the `a2a-server` binary (its allocator, its flags): a task
//! of 4 MiB of text (an answer of about 8.4 MB), then 200 HTTP/2 GetTask streams that never
//! read it. The server's RSS stays under `--max-output-mib` plus 100 MB, and what it keeps
//! once they leave (freed memory mimalloc has not returned yet) is under the cap.

mod process;
mod slow;

use serde_json::{Value, json};
use std::net::SocketAddr;
use std::time::Duration;

#[tokio::test]
async fn the_binary_stays_under_its_output_cap_with_200_non_reading_streams() {
    let server = process::Process::with_args(&[
        "--memory",
        "--max-output-mib",
        "64",
        "--max-connection-output-mib",
        "16",
        "--send-timeout-secs",
        "2",
    ]);
    let addr: SocketAddr = server.url.strip_prefix("http://").unwrap().parse().unwrap();
    let http = reqwest::Client::new();
    server.ready(&http).await;
    let text = "x".repeat(4 << 20);
    let response: Value = http
        .post(&server.url)
        .header("a2a-version", "1.0")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
                "message": {"messageId": "big", "role": "ROLE_USER", "parts": [{"text": text}]}
            }}),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = response["result"]["task"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    slow::rss_scenario(
        addr,
        server.child.id(),
        &id,
        64 * slow::MIB,
        Duration::from_secs(2),
        // mimalloc keeps freed pages until its next page frees (MIMALLOC_PURGE_DELAY=0 returns
        // them at once; see docs/server-limits.md): at most what was held, under the cap.
        64 * slow::MIB,
    )
    .await;
}
