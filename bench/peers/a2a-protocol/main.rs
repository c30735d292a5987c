//! a2a-protocol-server 0.15.0 with a2a-protocol-types 0.15.0 (crates.io; the server crate of
//! the third-party `a2a-protocol-sdk` family, repository tomtom215/a2a-rust, default features
//! `tracing` + `otel`, plus `sqlite`) serving the benchmark's echo agent, set up as its README's
//! production path: an `agent_executor!` agent emitting through its `EventEmitter`,
//! `RequestHandlerBuilder::new(..).with_agent_card(..).build()`, `Server::bind`, a default
//! `ServeConfig` (header-read and idle timeouts, no connection cap) and `serve_with_shutdown`
//! with its `JsonRpcDispatcher` (default `DispatchConfig`), which answers JSON-RPC `POST` on any
//! path, so at `/`, and the card at `GET /.well-known/agent-card.json`. The crate owns the
//! listener; it sets `TCP_NODELAY` on every accepted connection itself.
//!
//! Storage: the builder's default `InMemoryTaskStore` (its defaults: 10,000 tasks at most, a
//! one-hour TTL), or with `--sqlite PATH` its durable `SqliteTaskStore` on the file PATH, built
//! with `SqliteTaskStore::with_migrations`, which its docs call "the recommended constructor for
//! production deployments"; the crate's own pool: 8 connections, WAL, `synchronous=NORMAL`,
//! `busy_timeout=5000`, `foreign_keys=ON`, `secure_delete=ON`, file created if missing.
//!
//! Differences from the README's example: the agent skips the `Working` status (the handler
//! stores the task SUBMITTED with the user message; the agent adds one artifact `echo: <text>`,
//! id `echo`, then the task is COMPLETED), the card declares streaming, no connection cap and no
//! shutdown signal. Cancel is the crate's default `AgentExecutor::cancel` (CANCELED).
//!
//! The crate is A2A v1.0 strict: a JSON-RPC request without `A2A-Version: 1.0` (header or query
//! parameter) is refused with `VersionNotSupported` (the card is exempt). gRPC is not enabled,
//! so nothing runs protoc.
//!
//! Usage: `a2a-protocol-echo [ADDR] [--sqlite PATH]` (default `127.0.0.1:0`, in memory); prints
//! `a2a-protocol-echo listening on http://ADDR` once bound.

use std::io::Write as _;
use std::sync::Arc;

use a2a_protocol_server::{
    EventEmitter, JsonRpcDispatcher, RequestHandlerBuilder, ServeConfig, Server, SqliteTaskStore,
    agent_executor,
};
use a2a_protocol_types::{
    AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Part, TaskState,
};

/// The benchmark's echo agent: one artifact `echo: <text>`, then COMPLETED.
struct Echo;

agent_executor!(Echo, |ctx, queue| async {
    let text = format!("echo: {}", ctx.message.text().unwrap_or(""));
    let emit = EventEmitter::new(ctx, queue);
    emit.artifact("echo", vec![Part::text(text)], None, Some(true)).await?;
    emit.status(TaskState::Completed).await?;
    Ok(())
});

fn card(base: &str) -> AgentCard {
    AgentCard::new("echo", "1.0.0", AgentInterface::jsonrpc(base))
        .with_description("Echoes the message's text as an artifact.")
        .with_capabilities(AgentCapabilities::none().with_streaming(true))
        .with_skill(AgentSkill::new("echo", "Echo", "Echoes the text.").with_tags(["echo"]))
}

// A multi-thread runtime (tokio's default: one worker per core the process may use).
#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut address = "127.0.0.1:0".to_owned();
    let mut sqlite: Option<String> = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--sqlite" => sqlite = Some(args.next().ok_or("--sqlite needs a path")?),
            _ => address = a,
        }
    }

    let server = Server::bind(&address).await?;
    let base = format!("http://{}", server.local_addr()?);

    let builder = RequestHandlerBuilder::new(Echo).with_agent_card(card(&base));
    let builder = match &sqlite {
        Some(path) => {
            if let Some(dir) = std::path::Path::new(path).parent() {
                std::fs::create_dir_all(dir)?;
            }
            builder.with_task_store(SqliteTaskStore::with_migrations(&format!("sqlite://{path}")).await?)
        }
        None => builder,
    };
    let handler = Arc::new(builder.build()?);

    println!("a2a-protocol-echo listening on {base}");
    std::io::stdout().flush()?;
    let _report = server
        .with_config(ServeConfig::default())
        .serve_with_shutdown(JsonRpcDispatcher::new(handler), std::future::pending::<()>())
        .await;
    Ok(())
}
