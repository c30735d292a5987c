//! An A2A (Agent2Agent) protocol v1.0 agent server on axum.
//!
//! Implement the one trait, [`Agent`], build a [`Server`], and serve it ([`Server::serve`], or
//! mount [`Server::into_router`] in your axum app and spawn its [`Server::upkeep`]): you get
//! the agent card at
//! `/.well-known/agent-card.json` (and `/.well-known/agent.json`), the JSON-RPC binding at
//! `POST /` (v1.0 and v0.3 method names), the HTTP+JSON binding (`/message:send`,
//! `/tasks/{id}`, … also under `/{tenant}`), server-sent-event streams, the gRPC binding
//! (`lf.a2a.v1.A2AService`, on the same port for `content-type: application/grpc`, or on a
//! listener of its own: [`ServerBuilder::grpc_listener`]), and the task lifecycle enforced and
//! stored before anyone sees a change.
//!
//! # Quick start
//!
//! An agent served on a free port, and one call to it with `a2a-client`:
//!
//! ```
//! use a2a_core::{AgentCard, Artifact, Error, SendMessageResponse};
//! use a2a_server::{Agent, RequestContext, Server, SledStore, TaskEvents};
//!
//! struct Echo;
//!
//! impl Agent for Echo {
//!     async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
//!         events.working("echoing").await?;
//!         events.artifact(Artifact::text("echo", cx.message.text())).await?;
//!         events.complete(None).await // stored (and flushed) before any client sees it
//!     }
//! }
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! #   let dir = tempfile::tempdir()?;
//! #   let data = dir.path();
//! #   /*
//!     let data = "./a2a-data";
//! #   */
//!     // Port 0: a free port (use "127.0.0.1:8080" or "0.0.0.0:8080" for a fixed one).
//!     let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//!     let url = format!("http://{}", listener.local_addr()?);
//!     let card = AgentCard::builder("Echo", "Repeats what you say").build();
//!     let server = Server::builder(Echo)
//!         .agent_card(card)
//!         .task_store(SledStore::open(data)?)
//!         .public_url(&url)
//!         .build()?;
//!     let handle = server.handle();
//!     let serving = tokio::spawn(server.serve(listener));
//!
//!     // Any A2A client can talk to it now; here, a2a-client over the card's first binding.
//!     let client = a2a_client::Client::connect(&url).await?;
//!     let SendMessageResponse::Task(task) = client.send_text("hello").await? else {
//!         panic!("Echo answers with a task");
//!     };
//!     assert_eq!(task.artifacts[0].text_content(), "hello");
//!
//!     handle.shutdown(); // stops accepting, ends streams, tells running agents to stop
//!     serving.await??;
//!     handle.flush().await?; // everything stored is durable
//!     Ok(())
//! }
//! ```
//!
//! # Features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `sled` | yes | [`SledStore`], the durable embedded task store |
//! | `fjall` | no | `FjallStore`: the same store on fjall, an LSM tree (less CPU per durable write than sled; see the README's "Choosing a store") |
//! | `postgres` | no | `a2a_server::postgres`: `PgStore`, `PgBus` and `PgLeases`, for several replicas on one PostgreSQL database |
//! | `testing` | no | `a2a_server::testing`: run an agent's methods without a server and read back what it reported |
//! | `trust` | no | the agent card signed with configured keys and their JWK set served (`ServerBuilder::card_signing_key`); OAuth 2.0 / OpenID Connect bearer JWTs (`auth::JwtBearer`) |
//! | `otel` | no | W3C trace context through OpenTelemetry: each request's span continues the caller's trace, and webhook POSTs carry it ([`telemetry`]) |
//! | `cli` | no | the `a2a-server` binary (demo agent, flags, logging, mimalloc): `cargo run -p a2a-server --features cli`; implies `sled`, `fjall`, `postgres`, `trust` and `otel` |
//!
//! # What else is here
//!
//! | item | for |
//! |---|---|
//! | [`SledStore`], [`MemoryStore`], [`Store`] ([`TaskStore`] + [`ClaimStore`] + [`PushStore`]) | durable (or ephemeral) tasks and their event logs, message claims, webhook registrations |
//! | [`auth`] | authentication: [`auth::BearerTokens`], [`auth::ApiKeys`], or your own [`auth::Authenticator`] |
//! | [`telemetry`], [`Metrics`] | a span per operation (OpenTelemetry with `otel`), Prometheus metrics ([`ServerBuilder::metrics`]) |
//! | [`push`] | push notifications: [`push::PushSettings`], delivery from the event log, SSRF guard |
//! | [`Upkeep`] | the background work ([`Server::upkeep`]) to spawn when you mount [`Server::into_router`] yourself |
//! | [`serve`] | the connection protections of [`Server::serve`] (cap, timeouts, `TCP_NODELAY`, shutdown), to put around your own `axum::serve` |
//! | [`ServerHandle`] | shutdown, flush, handler and card of a server that [`Server::serve`] consumed |
//! | [`RequestHandler`], [`HandlerBuilder`] | the operations (one method each), for custom transports |
//! | [`EventBus`], [`LocalBus`], [`Leases`], [`LocalLeases`] | the seams of several replicas on one store: notifications and cancel requests, execution leases |
//! | [`demo::DemoAgent`] | the agent the `a2a-server` binary serves |
//!
//! # Guarantees
//!
//! - Every change to a task is written to the [`TaskStore`] (and, for sled, flushed) before a
//!   response or stream event reveals it.
//! - An illegal transition (anything after a terminal state; a lifecycle step the spec does not
//!   allow) is returned to the agent as an error; the task is not touched.
//! - An agent that returns an error or panics fails its task with a status message; the
//!   server keeps serving. An agent that returns an A2A request error (InvalidParams, …)
//!   before its first event refuses the message: the caller gets that error and no task.
//! - A part whose `mediaType` the card's input modes do not cover is refused with
//!   ContentTypeNotSupported ([`ServerBuilder::check_input_modes`]).
//! - No request touches a task before start-up recovery has claimed the tasks a previous
//!   process left running ([`RequestHandler::recover`]).
//! - Streams end after a terminal or interrupted state; a slow subscriber never blocks the
//!   agent (it catches up from the durable event log); a vanished one disturbs nothing.
//! - A stream resumed with `Last-Event-ID` gets exactly the events it missed
//!   ([`RESUMABLE_STREAMS_EXTENSION`]); a retried `SendMessage` (same `messageId`) does not run
//!   the agent again; tasks left running by a crash go to [`Agent`]'s `resume` hook.

// docs.rs (nightly, `--cfg docsrs`): each feature-gated item is marked with its feature.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod agent;
pub mod auth;
mod cache;
pub mod demo;
mod engine;
mod events;
mod handler;
mod http;
#[cfg(feature = "postgres")]
pub mod postgres;
pub mod push;
pub mod serve;
mod server;
pub mod store;
pub mod telemetry;
#[cfg(feature = "testing")]
pub mod testing;

/// The axum this server is built on ([`Server::into_router`] is an `axum::Router`), with its
/// `axum::http` types that the public traits use: mount the router, or implement an
/// [`auth::Authenticator`], without a direct dependency pinned to the same versions.
pub use axum;

pub use agent::{Agent, RESTART_MESSAGE, RequestContext, ServiceParams};
pub use engine::{CancelHandler, DEFAULT_LEASE_TTL, EventBus, Leases, LocalBus, LocalLeases};
pub use events::TaskEvents;
pub use handler::{
    BuildError, CallContext, DEFAULT_LONG_POLL_WAIT, DEFAULT_MAX_LONG_POLLS, EventStream,
    ExtendedCardFn, HandlerBuilder, RESUMABLE_STREAMS_EXTENSION, RequestHandler, SendReply,
    StreamEvent, TaskReply,
};
#[cfg(feature = "postgres")]
pub use postgres::PgStore;
pub use server::{
    DEFAULT_BODY_LIMIT, DEFAULT_DEDUP_WINDOW, DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_IDLE_TIMEOUT,
    DEFAULT_KEEP_ALIVE, SHUTDOWN_GRACE, Server, ServerBuilder, ServerHandle, Upkeep,
    default_max_connections,
};
#[cfg(any(feature = "sled", feature = "fjall"))]
pub use store::EmbeddedStore;
#[cfg(feature = "fjall")]
pub use store::FjallStore;
#[cfg(feature = "sled")]
pub use store::SledStore;
pub use store::{
    ClaimStore, LoggedEvent, MemoryStore, MessageClaim, PushStore, Scope, Store, StoreError,
    StoredTask, TaskStore,
};
pub use telemetry::Metrics;
