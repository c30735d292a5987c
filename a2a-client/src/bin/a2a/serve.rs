//! `a2a mcp` and `a2a inspect`: the agent served to others (an MCP host, a browser).

use crate::Outcome;
use crate::args::{Global, InspectArgs, McpArgs};
use crate::tasks::connect;
use a2a_client::Error;
use std::time::Duration;

/// `a2a mcp`: the agent as an MCP server. Nothing but MCP messages goes to stdout.
pub(crate) async fn mcp(args: McpArgs, g: &Global) -> Result<Outcome, Error> {
    let client = match connect(&args.url, g).await {
        Ok(client) => client,
        Err(e) => {
            // The host waits for an answer to `initialize`: it gets the error.
            if args.http.is_none() {
                a2a_client::mcp::refuse_stdio(&e).await;
            }
            return Err(e);
        }
    };
    let card = client
        .card()
        .cloned()
        .ok_or_else(|| Error::Config("the agent has no card".into()))?;
    let bridge = a2a_client::mcp::Bridge::new(client, card);
    let io = |e: std::io::Error| Error::Config(format!("MCP: {e}"));
    match args.http {
        None => a2a_client::mcp::serve_stdio(bridge).await.map_err(io)?,
        Some(addr) => {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| Error::Config(format!("cannot listen on {addr}: {e}")))?;
            let local = listener.local_addr().map_err(io)?;
            // One line on stderr for scripts that listen on port 0.
            eprintln!(
                "a2a mcp: listening on http://{local}{}",
                a2a_client::mcp::HTTP_PATH
            );
            let router = a2a_client::mcp::http_router(bridge, args.allowed_hosts);
            axum::serve(listener, router).await.map_err(io)?;
        }
    }
    Ok(Outcome::Done)
}

/// `a2a inspect`: serves the inspector until interrupted; its URL (with the token) on stdout.
pub(crate) async fn inspect(args: InspectArgs, g: &Global) -> Result<Outcome, Error> {
    let mut options = a2a_client::inspect::Options::new(args.listen, args.url, g.credentials()?);
    options.timeout = Duration::from_secs(g.timeout);
    let io = |e: std::io::Error| Error::Config(format!("a2a inspect: {e}"));
    let inspector = a2a_client::inspect::Inspector::bind(options)
        .await
        .map_err(io)?;
    outln!("a2a inspect: open {}", inspector.url());
    inspector.serve().await.map_err(io)?;
    Ok(Outcome::Done)
}
