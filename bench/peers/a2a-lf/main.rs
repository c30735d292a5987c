//! The official Rust A2A SDK (repository a2aproject/a2a-rs; crates.io `a2a-server-lf` 0.5.3,
//! `a2a-lf` 0.4.2) serving the benchmark's echo agent, set up as the SDK's own helloworld
//! example does: `DefaultRequestHandler` with its `InMemoryTaskStore`, the JSON-RPC router,
//! the HTTP+JSON (REST) router and the agent card router on one axum app. Two differences from
//! the example: both bindings are mounted at the root (the load generator posts JSON-RPC to
//! `/`), and accepted connections get `TCP_NODELAY` (the app owns the listener).
//!
//! Usage: `a2a-lf-echo [ADDR]` (default `127.0.0.1:0`); prints
//! `a2a-lf-echo listening on http://ADDR` once bound.

use std::sync::Arc;

use a2a::*;
use a2a_server::*;
use axum::serve::ListenerExt as _;
use futures::stream::{self, BoxStream};

/// The benchmark's echo agent: the handler has already stored the task SUBMITTED with the
/// user message in its history; the agent adds one artifact `echo: <text>` and completes it.
struct Echo;

impl AgentExecutor for Echo {
    fn execute(&self, ctx: ExecutorContext) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        let text = ctx.message.as_ref().and_then(|m| m.text()).unwrap_or("").to_owned();
        let artifact = StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: ctx.task_id.clone(),
            context_id: ctx.context_id.clone(),
            artifact: Artifact {
                artifact_id: new_artifact_id(),
                name: None,
                description: None,
                parts: vec![Part::text(format!("echo: {text}"))],
                metadata: None,
                extensions: None,
            },
            append: None,
            last_chunk: Some(true),
            metadata: None,
        });
        let completed = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: ctx.task_id,
            context_id: ctx.context_id,
            status: TaskStatus {
                state: TaskState::Completed,
                message: None,
                timestamp: None, // the handler stamps it
            },
            metadata: None,
        });
        Box::pin(stream::iter([Ok(artifact), Ok(completed)]))
    }

    fn cancel(&self, ctx: ExecutorContext) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        Box::pin(stream::once(async move {
            Ok(StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                task_id: ctx.task_id,
                context_id: ctx.context_id,
                status: TaskStatus {
                    state: TaskState::Canceled,
                    message: None,
                    timestamp: None, // the handler stamps it
                },
                metadata: None,
            }))
        }))
    }
}

fn card(base: &str) -> AgentCard {
    AgentCard {
        name: "echo".to_owned(),
        description: "Echoes the message's text as an artifact.".to_owned(),
        version: "1.0.0".to_owned(),
        supported_interfaces: vec![
            AgentInterface::new(base, TRANSPORT_PROTOCOL_JSONRPC),
            AgentInterface::new(base, TRANSPORT_PROTOCOL_HTTP_JSON),
        ],
        capabilities: AgentCapabilities {
            streaming: Some(true),
            push_notifications: Some(false),
            extensions: None,
            extended_agent_card: None,
        },
        default_input_modes: vec!["text/plain".to_owned()],
        default_output_modes: vec!["text/plain".to_owned()],
        skills: vec![AgentSkill {
            id: "echo".to_owned(),
            name: "Echo".to_owned(),
            description: "Echoes the text.".to_owned(),
            tags: vec!["echo".to_owned()],
            examples: None,
            input_modes: None,
            output_modes: None,
            security_requirements: None,
        }],
        provider: None,
        documentation_url: None,
        icon_url: None,
        security_schemes: None,
        security_requirements: None,
        signatures: None,
    }
}

// A multi-thread runtime (tokio's default: one worker per core the process may use).
#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let address = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:0".to_owned());
    let listener = tokio::net::TcpListener::bind(&address).await?;
    let base = format!("http://{}", listener.local_addr()?);

    let handler = Arc::new(
        DefaultRequestHandler::new(Echo, InMemoryTaskStore::new())
            .with_capabilities(card(&base).capabilities),
    );
    let app = axum::Router::new()
        .merge(a2a_server::jsonrpc::jsonrpc_router(handler.clone()))
        .merge(a2a_server::rest::rest_router(handler))
        .merge(a2a_server::agent_card::agent_card_router(Arc::new(StaticAgentCard::new(card(&base)))));

    println!("a2a-lf-echo listening on {base}");
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, app).await?;
    Ok(())
}
