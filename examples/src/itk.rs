//! An ITK agent: the agent that the A2A project's interoperability test kit (a2a-itk) and its
//! conformance suite, ACTS, drive. It is built on `a2a-server` as any agent is, serves JSON-RPC
//! and HTTP+JSON on one port and gRPC on another (all three in its card), and implements every
//! `tck-*` behaviour of the corpus ([`TckAgent`]), answering `tck-client-parse` with this
//! project's client library.
//!
//! Three modes, one per ACTS pass ([`Mode`]): the normal one (no credential needed, but a
//! bearer token for the extended card), `ITK_ACTS_AUTH=1` (every call needs the token) and
//! `ITK_ACTS_REDUCED_CAPABILITIES=1` (no streaming, push or extended card, and the operations
//! they gate refused). `itk-valid-token` is authorized; `itk-insufficient-token` is a known
//! caller without access, refused with 403.
//!
//! It also follows the ITK traversal contract ([`instruction`]): a message carrying an
//! instruction makes it answer, run steps, or call the next agent of a chain (another SDK's,
//! over the binding named) with this project's client.

mod behaviour;
mod client_parse;
pub mod instruction;
mod traversal;

pub use behaviour::TckAgent;

use a2a_core::{AgentCard, AgentSkill};
use a2a_server::auth::BearerTokens;
use a2a_server::push::PushSettings;
use a2a_server::{Server, ServerHandle};
use std::net::SocketAddr;

/// The token the ACTS runner presents, authorized.
pub const VALID_TOKEN: &str = "itk-valid-token";
/// A token that authenticates a caller who is not authorized (403).
pub const INSUFFICIENT_TOKEN: &str = "itk-insufficient-token";

/// What the agent offers, per ACTS pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Every capability; calls need no credential, the extended card a valid token.
    #[default]
    Normal,
    /// Every capability, and every call needs a valid token (`ITK_ACTS_AUTH=1`).
    Auth,
    /// No optional capability: no streaming, push notifications or extended card
    /// (`ITK_ACTS_REDUCED_CAPABILITIES=1`).
    Reduced,
}

impl Mode {
    /// The mode the environment asks for (`ITK_ACTS_AUTH`, `ITK_ACTS_REDUCED_CAPABILITIES`:
    /// set and not `0` or empty).
    pub fn from_env() -> Self {
        let on = |name: &str| std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0");
        if on("ITK_ACTS_REDUCED_CAPABILITIES") {
            Mode::Reduced
        } else if on("ITK_ACTS_AUTH") {
            Mode::Auth
        } else {
            Mode::Normal
        }
    }
}

/// The agent's public card (interfaces and capabilities are filled in by the server).
pub fn card() -> AgentCard {
    AgentCard::builder(
        "a2a-rust ITK agent",
        "The A2A interoperability test kit's agent, on the a2a Rust crates: every tck-* behaviour",
    )
    .version(env!("CARGO_PKG_VERSION"))
    .provider(
        "a2a Rust workspace",
        "https://github.com/a2aproject/a2a-itk",
    )
    // application/x-protobuf: the ITK traversal instructions.
    .input_modes(["text/plain", "application/json", "application/x-protobuf"])
    .output_modes(["text/plain", "application/json", "application/pdf"])
    .skill(
        AgentSkill::new(
            "tck",
            "Conformance behaviours",
            "Answers each tck-* prefix as the ACTS corpus expects",
        )
        .with_tags(["conformance", "itk"]),
    )
    .build()
}

/// The card served to authenticated callers: the public one with one more skill.
fn extended_card() -> AgentCard {
    let mut card = card();
    card.description = format!("{} (extended, for authenticated callers)", card.description);
    card.skills.push(
        AgentSkill::new(
            "tck-extended",
            "Extended conformance behaviours",
            "A skill listed only on the extended card",
        )
        .with_tags(["extended"]),
    );
    card
}

/// Serves the agent in `mode`: JSON-RPC and HTTP+JSON on `http`, gRPC on `grpc` (both
/// `127.0.0.1` addresses in the card), until `shutdown` resolves.
pub async fn serve(
    mode: Mode,
    http: tokio::net::TcpListener,
    grpc: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<ServerHandle, Box<dyn std::error::Error + Send + Sync>> {
    let server = build(mode, http.local_addr()?, grpc)?;
    let handle = server.handle();
    tokio::spawn(async move {
        if let Err(e) = server.serve_with_shutdown(http, shutdown).await {
            eprintln!("itk agent: the server stopped: {e}");
        }
    });
    Ok(handle)
}

fn build(
    mode: Mode,
    http: SocketAddr,
    grpc: tokio::net::TcpListener,
) -> Result<Server, Box<dyn std::error::Error + Send + Sync>> {
    let grpc_addr = grpc.local_addr()?;
    let tokens = BearerTokens::new()
        .token(VALID_TOKEN, "itk")
        .denied(INSUFFICIENT_TOKEN, "itk-insufficient");
    let mut builder = Server::builder(TckAgent)
        .agent_card(card())
        .public_url(format!("http://{http}"))
        .grpc_listener(grpc)
        .grpc_public_url(grpc_addr.to_string())
        .authenticator(tokens)
        // Only contexts this server issued are continued: a client's own contextId for a new
        // conversation is refused, not silently replaced.
        .client_context_ids(false)
        // Tolerant of clients that leave out the messageId (ACTS DM-EXTRA-001 sends none).
        .message_id_required(false);
    builder = match mode {
        Mode::Reduced => builder.streaming(false).anonymous_access(true),
        Mode::Normal | Mode::Auth => builder
            .anonymous_access(mode == Mode::Normal)
            .extended_agent_card(extended_card())
            // The conformance suite's webhook receiver listens on the loopback interface.
            .push_notifications(
                PushSettings::default()
                    .allow("127.0.0.1")?
                    .allow("::1")?
                    .allow("localhost")?
                    .max_attempts(3),
            ),
    };
    Ok(builder.build()?)
}
