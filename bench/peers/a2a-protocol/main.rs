//! a2a-protocol-server 0.15.0 (crates.io; the server crate of the third-party `a2a-protocol` SDK,
//! repository tomtom215/a2a-rust) serving the benchmark's echo agent, set up as its README's
//! production path says: `RequestHandlerBuilder` with the agent card, `Server::bind`, the
//! default `ServeConfig` (header-read and idle timeouts; the crate sets `TCP_NODELAY` on
//! accepted connections itself) and `serve_with_shutdown` with its `JsonRpcDispatcher` (JSON-RPC
//! at `/`). Storage: its `InMemoryTaskStore` (the default), or with `--sqlite PATH` its durable
//! `SqliteTaskStore` on the file PATH (its own pool settings: WAL, `synchronous=NORMAL`).
//!
//! The agent emits one artifact `echo: <text>`, then COMPLETED, through its `EventEmitter`.
//!
//! Usage: `a2a-protocol-echo [ADDR] [--sqlite PATH]` (default `127.0.0.1:0`, in memory); prints
//! `a2a-protocol-echo listening on http://ADDR` once bound.

use std::sync::Arc;

use a2a_protocol_server::{
    EventEmitter, JsonRpcDispatcher, RequestHandlerBuilder, ServeConfig, Server, SqliteTaskStore,
    agent_executor,
};
use a2a_protocol_types::{AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Part, TaskState};

struct Echo;

agent_executor!(Echo, |ctx, queue| async {
    let text = format!("echo: {}", ctx.message.text().unwrap_or(""));
    let emit = EventEmitter::new(ctx, queue);
    emit.artifact("echo", vec![Part::text(text)], None, Some(true))
        .await?;
    emit.status(TaskState::Completed).await?;
    Ok(())
});

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
    let local = server.local_addr()?;
    let base = format!("http://{local}");
    let card = AgentCard::new("echo", "1.0.0", AgentInterface::jsonrpc(&base))
        .with_description("Echoes the message's text as an artifact.")
        .with_capabilities(AgentCapabilities::none().with_streaming(true))
        .with_skill(AgentSkill::new("echo", "Echo", "Echoes the text.").with_tags(["echo"]));
    let builder = RequestHandlerBuilder::new(Echo).with_agent_card(card);
    let builder = match &sqlite {
        Some(path) => {
            if let Some(dir) = std::path::Path::new(path).parent() {
                std::fs::create_dir_all(dir)?;
            }
            builder.with_task_store(SqliteTaskStore::new(&format!("sqlite://{path}?mode=rwc")).await?)
        }
        None => builder,
    };
    let handler = Arc::new(builder.build()?);
    println!("a2a-protocol-echo listening on {base}");
    let _report = server
        .with_config(ServeConfig::default())
        .serve_with_shutdown(JsonRpcDispatcher::new(handler), std::future::pending::<()>())
        .await;
    Ok(())
}
