//! Run with: cargo run -p a2a-examples --example embedded [ADDR]
//!
//! An A2A agent inside an application of its own: the application's `/health` route and its
//! own tower layer next to the agent's routes, in the application's own `axum::serve`, with
//! the server's connection protections around it (see `a2a_examples::embedded`). Ctrl-C
//! shuts it down gracefully.

use a2a_core::AgentCard;
use a2a_examples::agents::Writer;
use a2a_server::Server;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let listener = tokio::net::TcpListener::bind(a2a_examples::addr_arg("127.0.0.1:9006")).await?;
    let url = format!("http://{}", listener.local_addr()?);
    let card = AgentCard::builder("Writer", "Writes a short text on a topic").build();
    let server = Server::builder(Writer)
        .agent_card(card)
        .public_url(&url)
        .build()?;
    let (handle, serving) = a2a_examples::embedded::serve(server, listener);
    tokio::spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        handle.shutdown();
    });
    println!(
        "application at {url}: {url}/health, and the agent (card: {url}/.well-known/agent-card.json)"
    );
    serving.await?;
    Ok(())
}
