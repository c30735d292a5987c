//! Serving a [`Bridge`]: over stdio (or refusing there, when the agent cannot be read), or as
//! a streamable HTTP endpoint.

use super::Bridge;
use crate::Error;
use rmcp::ErrorData as McpError;
use rmcp::ServerHandler;
use rmcp::service::{RequestContext, RoleServer};
use std::sync::Arc;

/// Serves `bridge` over MCP stdio (one session) until the host closes it.
pub async fn serve_stdio(bridge: Bridge) -> std::io::Result<()> {
    use rmcp::ServiceExt as _;
    let running = bridge
        .serve(rmcp::transport::stdio())
        .await
        .map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}

/// An MCP server for an agent that could not be reached or read: it answers `initialize` with
/// an error saying why, so that the host shows that rather than a server that exited.
#[derive(Clone, Debug)]
struct Refusal(String);

impl ServerHandler for Refusal {
    async fn initialize(
        &self,
        _request: rmcp::model::InitializeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::InitializeResult, McpError> {
        Err(McpError::internal_error(self.0.clone(), None))
    }
}

/// Answers one MCP stdio session's `initialize` with `error` (why the bridge cannot serve:
/// the agent's card could not be had), then returns.
pub async fn refuse_stdio(error: &Error) {
    use rmcp::ServiceExt as _;
    let refusal = Refusal(format!("the A2A agent's card could not be read: {error}"));
    // The handshake fails by design: its error is the answer.
    if let Ok(running) = refusal.serve(rmcp::transport::stdio()).await {
        let _ = running.cancel().await;
    }
}

/// The path the streamable HTTP endpoint is served at.
pub const HTTP_PATH: &str = "/mcp";

/// `bridge` as an MCP streamable HTTP endpoint at [`HTTP_PATH`] (sessions for protocol
/// versions that have them, events replayed after `Last-Event-ID` when a client reconnects),
/// for `axum::serve`. `allowed_hosts`: the `Host` values accepted (DNS-rebinding protection;
/// loopback by default).
pub fn http_router(bridge: Bridge, allowed_hosts: Vec<String>) -> axum::Router {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let mut config = StreamableHttpServerConfig::default();
    if !allowed_hosts.is_empty() {
        config.allowed_hosts = allowed_hosts;
    }
    let service = StreamableHttpService::new(
        move || Ok(bridge.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    axum::Router::new().nest_service(HTTP_PATH, service)
}
