//! Run with: cargo run -p a2a-examples --example streamer [ADDR]
//!
//! A long-running agent: it "writes" a document over several seconds, reporting progress with
//! status messages and streaming the text as artifact chunks (`append`, `lastChunk`). It is
//! cancelable part way: `a2a cancel http://127.0.0.1:9003 <TASK_ID>`.
//!
//! ```text
//! a2a stream http://127.0.0.1:9003 "write about rivers"
//! ```

use a2a_examples::agents::Writer;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The agent itself is in examples/src/agents/writer.rs.
    let url = a2a_examples::serve(
        Writer,
        Writer::card(),
        &a2a_examples::addr_arg("127.0.0.1:9003"),
    )
    .await?;
    println!("writer at {url}; Ctrl-C to stop");
    tokio::signal::ctrl_c().await?;
    Ok(())
}
