//! turul-a2a 0.2.6 (crates.io; repository aussierobots/turul-a2a, a third-party A2A v1.0
//! server framework) serving the benchmark's echo agent, set up as its README and its
//! `examples/echo-agent` do: an `AgentExecutor` that pushes a text artifact onto the `&mut Task`
//! and completes it, an `AgentCardBuilder` card, and
//! `A2aServer::builder().executor(..).storage(..).build()`. Storage: its `InMemoryA2aStorage`
//! (the default), or with `--sqlite PATH` its durable `SqliteA2aStorage` on the file PATH:
//! `SqliteConfig { database_url: "sqlite://PATH?mode=rwc", max_connections: 1, .. }`, the
//! schema bootstrapped at start. The docs name no settings; one connection is what the crate's
//! own SQLite tests use, "SQLite's actual multi-writer model (one writer at a time)", to avoid
//! lock errors on concurrent deferred transactions: with its default pool of 5, 16 concurrent
//! sends fail with "database is locked" and time out. SQLx and SQLite defaults hold otherwise
//! (the config has no other knob): rollback journal, `synchronous=FULL`, busy timeout 5 s.
//!
//! Differences from the example, which calls `A2aServer::run()` (the crate binds and serves
//! with a plain `axum::serve`):
//! - The app owns the listener and serves the crate's own router (`A2aServer::into_router()`,
//!   what `run()` serves) with `TCP_NODELAY` on accepted connections. What `run()` adds
//!   besides is not started: the cross-instance cancel poller (a cancel on this instance trips
//!   the executor directly), the push reclaim sweep (no push store is wired) and retention
//!   maintenance (off by default).
//! - The crate serves JSON-RPC at `/jsonrpc` (a root `POST /` only with its `compat-v03`
//!   feature, a v0.3 shim not enabled here); the load generator posts to `/`, so requests for
//!   `/` are rewritten to `/jsonrpc` before the crate's router (and its transport layers) see
//!   them (`/jsonrpc` itself is served too, and is the JSON-RPC URL the card advertises). The
//!   HTTP+JSON routes and `/.well-known/agent-card.json` are the crate's, unchanged.
//!
//! The crate is A2A v1.0 strict: every request but the agent card must carry
//! `A2A-Version: 1.0` (absent means 0.3, refused with `VersionNotSupportedError`). It stores the
//! task SUBMITTED with the message, then marks it WORKING, then runs the agent; the agent's
//! artifact is published, then the task COMPLETED. A cancel of a running task is the crate's
//! (it trips the executor's token and commits CANCELED).
//!
//! Usage: `turul-echo [ADDR] [--sqlite PATH]` (default `127.0.0.1:0`, in memory); prints
//! `turul-echo listening on http://ADDR` once bound.

use std::io::Write as _;

use axum::ServiceExt as _;
use axum::http::{Request, Uri};
use axum::serve::ListenerExt as _;
use tower::Layer as _;
use turul_a2a::card_builder::{AgentCardBuilder, AgentSkillBuilder};
use turul_a2a::prelude::*;
use turul_a2a::storage::InMemoryA2aStorage;
use turul_a2a::storage::sqlite::{SqliteA2aStorage, SqliteConfig};

/// The benchmark's echo agent: one artifact `echo: <text>`, then COMPLETED.
struct Echo {
    card: turul_a2a_proto::AgentCard,
}

#[async_trait::async_trait]
impl AgentExecutor for Echo {
    async fn execute(
        &self,
        task: &mut Task,
        message: &Message,
        _ctx: &ExecutionContext,
    ) -> Result<(), A2aError> {
        let text = format!("echo: {}", message.joined_text());
        task.push_text_artifact(uuid::Uuid::now_v7().to_string(), "echo", text);
        task.complete();
        Ok(())
    }

    fn agent_card(&self) -> turul_a2a_proto::AgentCard {
        self.card.clone()
    }
}

fn card(base: &str) -> turul_a2a_proto::AgentCard {
    AgentCardBuilder::new("echo", "1.0.0")
        .description("Echoes the message's text as an artifact.")
        .url(format!("{base}/jsonrpc"), "JSONRPC", "1.0")
        .url(base, "HTTP+JSON", "1.0")
        .streaming(true)
        .push_notifications(false)
        .default_input_modes(vec!["text/plain"])
        .default_output_modes(vec!["text/plain"])
        .skill(
            AgentSkillBuilder::new("echo", "Echo", "Echoes the text.")
                .tags(vec!["echo"])
                .build(),
        )
        .build()
        .expect("a valid agent card")
}

/// `/` (with any query) becomes the crate's JSON-RPC endpoint `/jsonrpc`.
fn root_to_jsonrpc<B>(mut req: Request<B>) -> Request<B> {
    if req.uri().path() == "/" {
        let path = match req.uri().query() {
            Some(q) => format!("/jsonrpc?{q}"),
            None => "/jsonrpc".to_owned(),
        };
        let mut parts = req.uri().clone().into_parts();
        parts.path_and_query = Some(path.parse().expect("a valid path"));
        *req.uri_mut() = Uri::from_parts(parts).expect("a valid URI");
    }
    req
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
    let listener = tokio::net::TcpListener::bind(&address).await?;
    let base = format!("http://{}", listener.local_addr()?);

    let builder = A2aServer::builder().executor(Echo { card: card(&base) });
    if let Some(dir) = sqlite.as_deref().and_then(|p| std::path::Path::new(p).parent()) {
        // A fresh data directory, as compare.sh gives each server.
        std::fs::create_dir_all(dir)?;
    }
    let builder = match &sqlite {
        Some(path) => builder.storage(
            SqliteA2aStorage::new(SqliteConfig {
                database_url: format!("sqlite://{path}?mode=rwc"),
                max_connections: 1,
                ..SqliteConfig::default()
            })
            .await?,
        ),
        None => builder.storage(InMemoryA2aStorage::new()),
    };
    let app = tower::util::MapRequestLayer::new(root_to_jsonrpc::<axum::body::Body>)
        .layer(builder.build()?.into_router());

    println!("turul-echo listening on {base}");
    std::io::stdout().flush()?;
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, app.into_make_service()).await?;
    Ok(())
}
