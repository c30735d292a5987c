//! Run with: cargo run -p a2a-examples --example echo_agent [ADDR]
//!
//! The smallest A2A agent: it answers every message with an artifact holding the same text.
//! Try it with `cargo run -p a2a-client --features cli --bin a2a -- send http://127.0.0.1:9001 hello`.

use a2a_core::{AgentCard, AgentSkill, Artifact, Error};
use a2a_server::{Agent, RequestContext, TaskEvents};

struct Echo;

impl Agent for Echo {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        events.working("echoing").await?;
        events
            .artifact(Artifact::text("echo", cx.message.text()))
            .await?;
        events.complete(None).await
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let card = AgentCard::builder("Echo", "Repeats what you say")
        .skill(AgentSkill::new("echo", "Echo", "Repeats the text").with_tags(["echo"]))
        .build();
    let url = a2a_examples::serve(Echo, card, &a2a_examples::addr_arg("127.0.0.1:9001")).await?;
    println!("echo agent at {url} (card: {url}/.well-known/agent-card.json); Ctrl-C to stop");
    tokio::signal::ctrl_c().await?;
    Ok(())
}
