//! Run with: cargo run -p a2a-examples --example mcp_orchestrator
//!
//! The other direction of the MCP bridge: `a2a mcp URL` serves an A2A agent as an MCP server;
//! this is an A2A agent that does its work with an MCP server's tools, through rmcp's client.
//!
//! At start-up it runs the MCP server whose command line is in `MCP_SERVER` (split on
//! whitespace) as a child process, lists its tools, and publishes a card with one skill per
//! tool. A message `TOOL REST` calls the tool named by its first word (or, when no tool has that
//! name, the first tool with the whole text): with `{"text": REST}` when the tool's input schema
//! has a `text` property, else with REST parsed as a JSON object. MCP maps onto A2A like this:
//!
//! | MCP | A2A |
//! |---|---|
//! | a tool | a skill of the card |
//! | progress notifications | WORKING status updates with the progress message, in order |
//! | the tool result (text, structured content) | one artifact (text parts, a data part), then COMPLETED |
//! | a tool error (`isError`) | FAILED, with the error text |
//! | a protocol error, the server gone | FAILED, saying so |
//! | (A2A CancelTask) | `notifications/cancelled` for the call |
//!
//! It listens on 127.0.0.1:8090 (`A2A_LISTEN` to change). A round trip A2A → MCP → A2A through
//! our own bridge, in three terminals:
//!
//! ```text
//! $ cargo run --release -p a2a-server --features cli          # the demo agent, 127.0.0.1:8080
//! $ cargo build --release -p a2a-client --features cli --bin a2a
//! $ MCP_SERVER="target/release/a2a mcp http://127.0.0.1:8080" \
//!     cargo run -p a2a-examples --example mcp_orchestrator
//! MCP server "a2a-mcp: a2a-rust demo agent" offers 4 tools: echo, countdown, greet, send_message
//! MCP orchestrator at http://127.0.0.1:8090 (card: http://127.0.0.1:8090/.well-known/agent-card.json); Ctrl-C to stop
//! $ target/release/a2a send http://127.0.0.1:8090 "countdown countdown 3"
//! ```
//!
//! The orchestrator calls the MCP tool `countdown` with `{"text": "countdown 3"}`; the bridge
//! sends that to the demo agent, whose status updates come back as MCP progress
//! notifications and become the orchestrator's own status updates. `a2a send` prints the
//! completed task and its artifact:
//!
//! ```text
//! task 01a21596-…  context 01a21596-…  completed
//! [countdown] 3
//! 2
//! 1
//! ```
//!
//! and `a2a stream` (same arguments) shows the updates as they come: WORKING `calling the MCP
//! tool countdown`, `3...`, `2...`, `1...`, `Liftoff!` (the demo agent's final status message,
//! which the bridge reports as progress too), then COMPLETED. Any stdio MCP server works the
//! same way: a tool without a `text` argument takes JSON, e.g. `add {"a": 2, "b": 3}`.

use a2a_core::{AgentCard, AgentSkill, Artifact, Error, ErrorKind, Part};
use a2a_server::{Agent, RequestContext, TaskEvents};
use futures::{FutureExt as _, StreamExt as _};
use rmcp::handler::client::progress::ProgressDispatcher;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientCapabilities, ClientConfig, ClientRequest, Implementation, ProgressNotificationParam,
    ServerResult, Tool,
};
use rmcp::service::{NotificationContext, Peer, PeerRequestOptions, RoleClient, ServiceError};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ServiceExt as _};
use serde_json::{Map, Value, json};

/// The MCP client side: it hands each progress notification to the tool call it belongs to.
#[derive(Clone, Default)]
struct McpHost {
    progress: ProgressDispatcher,
}

impl ClientHandler for McpHost {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.handle_notification(params).await;
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("a2a-mcp-orchestrator", env!("CARGO_PKG_VERSION")),
        )
    }
}

/// The A2A agent: each task is one call of one of the MCP server's tools.
struct McpOrchestrator {
    peer: Peer<RoleClient>,
    progress: ProgressDispatcher,
    tools: Vec<Tool>,
}

/// Whether `tool` takes a `text` argument.
fn takes_text(tool: &Tool) -> bool {
    tool.input_schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| p.contains_key("text"))
}

/// A tool as a skill: same id, its title (or name) and description.
fn skill_of(tool: &Tool) -> AgentSkill {
    let title = tool
        .title
        .clone()
        .or_else(|| tool.annotations.as_ref().and_then(|a| a.title.clone()))
        .unwrap_or_else(|| tool.name.to_string());
    let description = tool.description.as_deref().unwrap_or(&title).to_owned();
    let example = if takes_text(tool) {
        format!("{} <text>", tool.name)
    } else {
        format!("{} <arguments as a JSON object>", tool.name)
    };
    AgentSkill::new(tool.name.to_string(), title, description)
        .with_tags(["mcp"])
        .with_examples([example])
}

/// What a progress notification says, for a status update.
fn progress_text(p: &ProgressNotificationParam) -> String {
    match (&p.message, p.total) {
        (Some(m), _) if !m.is_empty() => m.clone(),
        (_, Some(total)) => format!("progress {}/{total}", p.progress),
        _ => format!("progress {}", p.progress),
    }
}

/// The text blocks of a tool result, one per line.
fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A failed call, for the task's status.
fn describe(tool: &str, e: &ServiceError) -> String {
    match e {
        ServiceError::McpError(e) => format!(
            "the MCP server refused the call of {tool}: {} (JSON-RPC error {})",
            e.message, e.code.0
        ),
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
            format!("the MCP server is gone (its connection closed) while calling {tool}")
        }
        other => format!("the MCP call of {tool} failed: {other}"),
    }
}

impl McpOrchestrator {
    /// The tool and its arguments a message asks for.
    fn plan(&self, text: &str) -> Result<(&Tool, Map<String, Value>), Error> {
        let text = text.trim();
        let (first, rest) = text
            .split_once(char::is_whitespace)
            .map_or((text, ""), |(f, r)| (f, r.trim_start()));
        let (tool, rest) = match self.tools.iter().find(|t| t.name == first) {
            Some(tool) => (tool, rest),
            None => (&self.tools[0], text),
        };
        if takes_text(tool) {
            return Ok((tool, Map::from_iter([("text".to_owned(), json!(rest))])));
        }
        if rest.is_empty() {
            return Ok((tool, Map::new()));
        }
        match serde_json::from_str(rest) {
            Ok(Value::Object(arguments)) => Ok((tool, arguments)),
            _ => Err(Error::new(
                ErrorKind::InvalidParams,
                format!(
                    "the MCP tool {} takes its arguments as a JSON object, not {rest:?}",
                    tool.name
                ),
            )),
        }
    }
}

impl Agent for McpOrchestrator {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        // A bad request is refused before any task exists.
        let (tool, arguments) = self.plan(&cx.message.text())?;
        let name = tool.name.to_string();
        events
            .working(format!("calling the MCP tool {name}"))
            .await?;
        let mut params = CallToolRequestParams::new(name.clone());
        params.arguments = Some(arguments);
        // A cancellable request, to know its progress token (and its id, to cancel it).
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = match self
            .peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
        {
            Ok(handle) => handle,
            Err(e) => return events.fail(describe(&name, &e)).await,
        };
        let mut progress = self.progress.subscribe(handle.progress_token.clone()).await;
        let request_id = handle.id.clone();
        let response = handle.await_response();
        tokio::pin!(response);
        let outcome = loop {
            tokio::select! {
                biased;
                () = cx.cancel.cancelled() => {
                    let reason = "the A2A task was canceled".to_owned();
                    let cancel = CancelledNotificationParam::new(Some(request_id), Some(reason));
                    let _ = self.peer.notify_cancelled(cancel).await;
                    return Ok(());
                }
                Some(p) = progress.next() => events.working(progress_text(&p)).await?,
                outcome = &mut response => break outcome,
            }
        };
        // rmcp handles each notification in a task of its own: let those that arrived just
        // before the result be reported before it.
        tokio::task::yield_now().await;
        while let Some(Some(p)) = progress.next().now_or_never() {
            events.working(progress_text(&p)).await?;
        }
        let result = match outcome {
            Ok(ServerResult::CallToolResult(result)) => result,
            Ok(ServerResult::EmptyResult(_)) => CallToolResult::success(vec![]),
            Ok(other) => {
                return events
                    .fail(format!(
                        "the MCP server answered the call of {name} with something else than a tool result: {other:?}"
                    ))
                    .await;
            }
            Err(e) => return events.fail(describe(&name, &e)).await,
        };
        let text = text_of(&result);
        if result.is_error == Some(true) {
            let reason = if text.is_empty() {
                format!("the MCP tool {name} failed without saying why")
            } else {
                format!("the MCP tool {name} failed: {text}")
            };
            return events.fail(reason).await;
        }
        let mut parts = Vec::new();
        if !text.is_empty() {
            parts.push(Part::text(text));
        }
        if let Some(data) = result.structured_content {
            parts.push(Part::data(data).with_media_type("application/json"));
        }
        if parts.is_empty() {
            return events
                .complete(Some(a2a_core::Message::agent_text(format!(
                    "the MCP tool {name} returned nothing"
                ))))
                .await;
        }
        events
            .artifact(Artifact::new(parts).with_name(name))
            .await?;
        events.complete(None).await
    }

    async fn cancel(&self, _cx: RequestContext, _events: TaskEvents) -> Result<(), Error> {
        // Accept: the server then triggers the running `execute`'s token, which cancels the
        // MCP call.
        Ok(())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let command_line = std::env::var("MCP_SERVER").unwrap_or_default();
    let mut words = command_line.split_whitespace();
    let Some(program) = words.next() else {
        return Err("set MCP_SERVER to the MCP server's command line, e.g. \
             MCP_SERVER=\"target/release/a2a mcp http://127.0.0.1:8080\""
            .into());
    };
    let mut command = tokio::process::Command::new(program);
    command.args(words);
    let transport = TokioChildProcess::new(command)
        .map_err(|e| format!("cannot start the MCP server {command_line:?}: {e}"))?;
    let host = McpHost::default();
    let progress = host.progress.clone();
    let running = host
        .serve(transport)
        .await
        .map_err(|e| format!("the MCP server {command_line:?} did not initialize: {e}"))?;
    let tools = running.list_all_tools().await?;
    let server = running
        .peer_info()
        .and_then(|i| i.server_info.clone())
        .map_or_else(|| command_line.clone(), |i| i.name);
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    println!(
        "MCP server {server:?} offers {} tools: {}",
        tools.len(),
        names.join(", ")
    );
    if tools.is_empty() {
        return Err(format!("the MCP server {server:?} offers no tools").into());
    }

    let mut card = AgentCard::builder(
        "MCP orchestrator",
        format!("Does its work with the tools of the MCP server {server:?}; say `TOOL TEXT`."),
    );
    for tool in &tools {
        card = card.skill(skill_of(tool));
    }
    let agent = McpOrchestrator {
        peer: running.peer().clone(),
        progress,
        tools,
    };
    let addr = std::env::var("A2A_LISTEN").unwrap_or_else(|_| "127.0.0.1:8090".to_owned());
    let url = a2a_examples::serve(agent, card.build(), &addr).await?;
    println!("MCP orchestrator at {url} (card: {url}/.well-known/agent-card.json); Ctrl-C to stop");

    let stop = running.cancellation_token();
    let mut session = tokio::spawn(running.waiting());
    tokio::select! {
        signal = tokio::signal::ctrl_c() => {
            signal?;
            // Closes the MCP session (the server's stdin), then the child is gone.
            stop.cancel();
            let _ = session.await;
            Ok(())
        }
        _ = &mut session => Err(format!("the MCP server {server:?} ended the session").into()),
    }
}
