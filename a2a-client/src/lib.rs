//! An A2A (Agent2Agent) protocol v1.0 client.
//!
//! Discover an agent from its card, pick a binding (JSON-RPC, HTTP+JSON or gRPC, v1.0;
//! JSON-RPC v0.3 through a2a-core's translation), and delegate work by streaming or polling,
//! without losing events when the network drops.
//!
//! # Quick start
//!
//! Delegate a task to an agent and follow it to its end (here the demo agent of
//! `a2a-server`, started on a free port; `a2a-server --features cli` serves the same one):
//!
//! ```
//! use a2a_client::{Client, DelegateOptions};
//! use a2a_core::{Message, SendMessageResponse, TaskState};
//! use std::time::Duration;
//!
//! # #[tokio::main]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! # let url = format!("http://{}", listener.local_addr()?);
//! # let server = a2a_server::Server::builder(a2a_server::demo::DemoAgent)
//! #     .agent_card(a2a_server::demo::DemoAgent::card())
//! #     .public_url(&url)
//! #     .build()?;
//! # let handle = server.handle();
//! # let serving = tokio::spawn(server.serve(listener));
//! // `url` is the agent's base URL, e.g. "http://127.0.0.1:8080": the card says how to talk to it.
//! let client = Client::connect(&url).await?;
//! let options = DelegateOptions::default().deadline(Duration::from_secs(60));
//! match client.delegate(Message::user_text("countdown 3"), options).await? {
//!     SendMessageResponse::Task(task) => {
//!         println!("{}: {}", task.id, task.status.state);
//!         for artifact in &task.artifacts {
//!             println!("{}", artifact.text_content());
//!         }
//!         assert_eq!(task.status.state, TaskState::Completed);
//!     }
//!     SendMessageResponse::Message(reply) => println!("{}", reply.text()),
//! }
//! # handle.shutdown();
//! # serving.await??;
//! # Ok(())
//! # }
//! ```
//!
//! # Features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `trust` | no | signed agent cards: `CardResolver::verify_with`, `ClientBuilder::trust_card_keys`, `fetch_jwks` |
//! | `mcp` | no | `mcp::Bridge`: any A2A agent as an MCP server (`a2a mcp URL`) |
//! | `check` | no | `check::run`: conformance checks of any running agent (`a2a check URL`) |
//! | `cli` | no | the `a2a` command: `cargo run -p a2a-client --features cli --bin a2a -- card URL` |
//! | `otel` | no | W3C trace context (`traceparent`, `tracestate`) on every call, from its span through OpenTelemetry, so that the agent continues the caller's trace |
//! | `inspect` | no | `inspect::Inspector`: the local web inspector (`a2a inspect`) |
//! | `webhook` | no | `webhook::PushReceiver`, an axum endpoint that receives push notifications |
//!
//! # What is here
//!
//! | item | for |
//! |---|---|
//! | [`Client`], [`ClientBuilder`] | every operation, typed; binding selection; retries; resumable streams |
//! | [`Client::delegate`] | send, follow (stream or poll) to a final or interrupted state, assemble artifacts |
//! | [`CardResolver`], [`SkillQuery`] | discovery with an ETag/max-age cache; pick an agent by skill |
//! | [`BearerAuth`], [`ApiKeyAuth`], [`ClientCredentials`], [`Interceptor`] | credentials (static, or OAuth 2.0 client-credentials tokens, refreshed) and headers on every call |
//! | [`Credentials`], `credentials::KeySources` (feature `trust`) | what a person gives (headers, token, API key, OAuth client, keys to trust), turned into the above: what the `a2a` command and the inspector share |
//! | [`Error`] | remote A2A errors with their kind, HTTP, gRPC, transport, decode, … |
//! | [`Limits`] | the bounds on every read: card, JWK set, response and event sizes, a stream's idle timeout |
//! | [`transport`] | the bindings: [`transport::JsonRpcTransport`], [`transport::RestTransport`], [`transport::GrpcTransport`] |
//! | `webhook::PushReceiver` (feature `webhook`) | a webhook endpoint for push notifications: checks credentials, de-duplicates |

// docs.rs (nightly, `--cfg docsrs`): each feature-gated item is marked with its feature.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod auth;
mod card;
#[cfg(feature = "check")]
pub mod check;
mod client;
pub mod credentials;
mod delegate;
mod error;
#[cfg(feature = "inspect")]
pub mod inspect;
mod limits;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod sse;
mod telemetry;
pub mod transport;
#[cfg(feature = "webhook")]
pub mod webhook;

pub use auth::{
    ApiKeyAuth, ApiKeyLocation, BearerAuth, ClientCredentials, DEFAULT_MAX_TOKEN_BYTES, Headers,
    Interceptor,
};
#[cfg(feature = "trust")]
pub use card::fetch_jwks;
pub use card::{
    AGENT_CARD_PATH, CacheOutcome, CardResolver, LEGACY_AGENT_CARD_PATH, SkillQuery, decode_card,
};
pub use client::{Binding, Client, ClientBuilder, EventStream, RetryPolicy};
pub use credentials::Credentials;
pub use delegate::DelegateOptions;
pub use error::{BoxError, Context, Error};
pub use limits::{
    DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_CARD_BYTES, DEFAULT_MAX_EVENT_BYTES, DEFAULT_MAX_JWKS_BYTES,
    DEFAULT_MAX_RESPONSE_BYTES, Limit, Limits,
};
