//! Shared parts of the examples: the example agents, the ITK agent of the A2A interoperability
//! test kit, and a helper that serves an agent.

pub mod agents {
    //! The example agents.
    mod trip_booker;
    mod writer;
    pub use trip_booker::TripBooker;
    pub use writer::Writer;
}

pub mod embedded;
pub mod itk;

use a2a_core::AgentCard;
use a2a_server::{Agent, Server};

/// Serves `agent` with `card` on `addr` (e.g. `127.0.0.1:9001`) until the process ends, with
/// tasks kept in memory. Returns the base URL once listening.
pub async fn serve<A: Agent>(
    agent: A,
    card: AgentCard,
    addr: &str,
) -> Result<String, Box<dyn std::error::Error>> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let url = format!("http://{}", listener.local_addr()?);
    let server = Server::builder(agent)
        .agent_card(card)
        .public_url(&url)
        .build()?;
    tokio::spawn(async move {
        if let Err(e) = server.serve(listener).await {
            eprintln!("server stopped: {e}");
        }
    });
    Ok(url)
}

/// The address to listen on: the first command-line argument, or `default`.
pub fn addr_arg(default: &str) -> String {
    std::env::args()
        .nth(1)
        .unwrap_or_else(|| default.to_owned())
}
