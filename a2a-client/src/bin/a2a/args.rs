//! The command line: subcommands, their arguments, and the global flags (credentials, binding,
//! timeouts and read limits).

use a2a_client::{ClientBuilder, Error};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Parser)]
#[command(name = "a2a", version, about = "Talk to any A2A agent", long_about = None)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
    #[command(flatten)]
    pub(crate) global: Global,
}

#[derive(Debug, Args)]
pub(crate) struct Global {
    /// Print machine-readable JSON (one object per line for streams).
    #[arg(long, global = true)]
    pub(crate) json: bool,
    /// Preferred binding (for `check`: the binding to check; default all).
    #[arg(long, global = true, value_enum)]
    pub(crate) binding: Option<BindingArg>,
    /// Bearer token (Authorization: Bearer …).
    #[arg(long, global = true, env = "A2A_TOKEN", hide_env_values = true)]
    pub(crate) token: Option<String>,
    /// API key, sent where the agent's card says.
    #[arg(long, global = true, env = "A2A_API_KEY", hide_env_values = true)]
    pub(crate) api_key: Option<String>,
    /// OAuth 2.0 client credentials: the client id (tokens from the card's client-credentials
    /// flow, or from --oauth-token-url).
    #[arg(
        long,
        global = true,
        env = "A2A_OAUTH_CLIENT_ID",
        requires = "oauth_client_secret"
    )]
    pub(crate) oauth_client_id: Option<String>,
    /// The client secret.
    #[arg(
        long,
        global = true,
        env = "A2A_OAUTH_CLIENT_SECRET",
        hide_env_values = true
    )]
    pub(crate) oauth_client_secret: Option<String>,
    /// The token endpoint, instead of the card's.
    #[arg(long, global = true, value_name = "URL")]
    pub(crate) oauth_token_url: Option<String>,
    /// A scope to ask for (repeatable; default: every scope of the card's flow).
    #[arg(long = "oauth-scope", global = true, value_delimiter = ',')]
    pub(crate) oauth_scopes: Vec<String>,
    /// Extra header, `Name: value` (repeatable).
    #[arg(long = "header", short = 'H', global = true)]
    pub(crate) headers: Vec<String>,
    /// Timeout of each call, in seconds: the whole of it (connect, headers and body, and every
    /// retry with its backoff: a failed call is tried up to 4 times while time is left), the
    /// opening of a stream, each card fetch, and `card` as a whole (its JWK sets and card).
    #[arg(long, global = true, default_value_t = 300, value_name = "SECONDS")]
    pub(crate) timeout: u64,
    /// How long a stream may go without an event (or a keep-alive) before it is resumed, or
    /// fails when it cannot be, in seconds.
    #[arg(long, global = true, default_value_t = a2a_client::DEFAULT_IDLE_TIMEOUT.as_secs(), value_name = "SECONDS")]
    pub(crate) idle_timeout: u64,
    /// The largest agent card read, in bytes.
    #[arg(long, global = true, default_value_t = a2a_client::DEFAULT_MAX_CARD_BYTES, value_name = "BYTES")]
    pub(crate) max_card_bytes: usize,
    /// The largest JWK set read (`card --jwks`), in bytes.
    #[arg(long, global = true, default_value_t = a2a_client::DEFAULT_MAX_JWKS_BYTES, value_name = "BYTES")]
    pub(crate) max_jwks_bytes: usize,
    /// The largest answer to a call read, in bytes.
    #[arg(long, global = true, default_value_t = a2a_client::DEFAULT_MAX_RESPONSE_BYTES, value_name = "BYTES")]
    pub(crate) max_response_bytes: usize,
    /// The largest event of a stream read, in bytes.
    #[arg(long, global = true, default_value_t = a2a_client::DEFAULT_MAX_EVENT_BYTES, value_name = "BYTES")]
    pub(crate) max_event_bytes: usize,
}

impl Global {
    /// The credentials the flags give: `--header`s, `--token`, `--api-key`, `--oauth-*`.
    pub(crate) fn credentials(&self) -> Result<a2a_client::Credentials, Error> {
        let mut credentials = self
            .headers
            .iter()
            .try_fold(a2a_client::Credentials::default(), |c, h| {
                c.with_header_line(h)
            })?;
        credentials.bearer = self.token.clone();
        credentials.api_key = self.api_key.clone();
        if let (Some(id), Some(secret)) = (&self.oauth_client_id, &self.oauth_client_secret) {
            let mut oauth = a2a_client::credentials::OAuth::new(id, secret);
            oauth.token_url = self.oauth_token_url.clone();
            oauth.scopes = self.oauth_scopes.clone();
            oauth.max_token_bytes = self.max_response_bytes;
            credentials.oauth = Some(oauth);
        }
        Ok(credentials)
    }

    /// `builder`'s card resolver, sending the `--header`s and the `--token` with every card
    /// fetch (an agent may serve its card only to callers it knows). An API key goes where the
    /// card says, and OAuth tokens come from the card's flow, so neither is sent for the card.
    pub(crate) fn card_resolver(
        &self,
        builder: &ClientBuilder,
    ) -> Result<a2a_client::CardResolver, Error> {
        let headers = self.credentials()?.headers(None)?;
        Ok(builder.card_resolver()?.headers(headers))
    }

    /// A client builder with the call timeout and the read limits.
    pub(crate) fn builder(&self) -> ClientBuilder {
        ClientBuilder::default()
            .timeout(Duration::from_secs(self.timeout))
            .limits(a2a_client::Limits {
                card_bytes: self.max_card_bytes,
                jwks_bytes: self.max_jwks_bytes,
                response_bytes: self.max_response_bytes,
                event_bytes: self.max_event_bytes,
                idle_timeout: Duration::from_secs(self.idle_timeout),
            })
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum BindingArg {
    Jsonrpc,
    Rest,
    Grpc,
    /// Every binding (what `check` does by default; elsewhere, no preference).
    All,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Show an agent's card (and verify its signatures with `--verify`).
    Card(CardArgs),
    /// Send a message and wait for the result.
    Send(SendArgs),
    /// Send a message and print events as they stream in.
    Stream(SendArgs),
    /// Show a task.
    Get {
        url: String,
        task_id: String,
        /// Keep only the N most recent history messages.
        #[arg(long)]
        history: Option<i32>,
        /// Wait until the task changes (A2A 1.1 long poll; interval polling for a 1.0 agent).
        #[arg(long)]
        wait: bool,
        /// With --wait: wait until the task's generation is past N (default: its current one).
        #[arg(long, value_name = "N", requires = "wait")]
        after: Option<i64>,
    },
    /// List tasks.
    List {
        url: String,
        #[arg(long)]
        context: Option<String>,
        /// A state, e.g. TASK_STATE_WORKING or working.
        #[arg(long)]
        status: Option<String>,
        #[arg(long)]
        page_size: Option<i32>,
        #[arg(long)]
        page_token: Option<String>,
        /// Include artifacts.
        #[arg(long)]
        artifacts: bool,
    },
    /// Cancel a task.
    Cancel { url: String, task_id: String },
    /// Follow a task's events.
    Subscribe { url: String, task_id: String },
    /// Test an agent's conformance to A2A v1.0, over every interface its card declares.
    Check(CheckArgs),
    /// Serve the agent as an MCP server: over stdio (for MCP hosts that start it), or over
    /// streamable HTTP with --http.
    Mcp(McpArgs),
    /// Open a web inspector for an agent (card, chat, tasks, wire console, push, check) and
    /// print its address.
    Inspect(InspectArgs),
}

#[derive(Debug, Args)]
pub(crate) struct InspectArgs {
    /// The agent to connect to when the page opens.
    pub(crate) url: Option<String>,
    /// Where the inspector listens (loopback by default: anyone who can reach it with the
    /// printed token drives it).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    pub(crate) listen: std::net::SocketAddr,
}

#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    /// The agent's base URL (or its card's URL).
    pub(crate) url: String,
    /// Serve MCP streamable HTTP on this address (at /mcp) instead of stdio.
    #[arg(long, value_name = "ADDR")]
    pub(crate) http: Option<std::net::SocketAddr>,
    /// A `Host` the HTTP endpoint accepts (repeatable; default: loopback only, against DNS
    /// rebinding).
    #[arg(long = "allowed-host", requires = "http")]
    pub(crate) allowed_hosts: Vec<String>,
}

#[derive(Debug, Args)]
pub(crate) struct CardArgs {
    /// The agent's base URL (or its card's URL).
    pub(crate) url: String,
    /// Verify the card's signatures against the keys given by --jwks and --key (exit 1 when
    /// none verifies).
    #[arg(long)]
    pub(crate) verify: bool,
    /// A JWK set URL to trust (repeatable).
    #[arg(long, value_name = "URL")]
    pub(crate) jwks: Vec<String>,
    /// A public key (or private key) in PEM to trust, or a JWK set in JSON (repeatable).
    #[arg(long, value_name = "FILE")]
    pub(crate) key: Vec<PathBuf>,
    /// Canonicalize as the official SDKs do (empty values dropped before RFC 8785), for cards
    /// they signed.
    #[arg(long)]
    pub(crate) sdk_canonicalization: bool,
}

#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// The agent's base URL (or its card's URL).
    pub(crate) url: String,
    /// Run only these groups: card, interfaces, errors, tasks, streaming, push, generations,
    /// auth (`--only card errors`, `--only card,errors` or the flag repeated).
    #[arg(long, value_parser = group, num_args = 1.., value_delimiter = ',')]
    pub(crate) only: Vec<a2a_client::check::Group>,
    /// At most this many requests a second.
    #[arg(long, default_value_t = 10.0)]
    pub(crate) rate: f64,
    /// Stop after this many seconds, reporting what did not run as skipped.
    #[arg(long, default_value_t = 120)]
    pub(crate) max_time: u64,
    /// The webhook URL of the push configs the checker creates (default: a closed port on
    /// 127.0.0.1, so that no one is called).
    #[arg(long, value_name = "URL")]
    pub(crate) allow_webhook: Option<String>,
    /// The text of a message that keeps the agent working for a second or more, for the
    /// long-poll check of A2A 1.1 interfaces (the demo agent's `countdown 5`).
    #[arg(long, value_name = "TEXT")]
    pub(crate) long_task: Option<String>,
}

pub(crate) fn group(name: &str) -> Result<a2a_client::check::Group, String> {
    a2a_client::check::Group::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = a2a_client::check::Group::ALL
            .iter()
            .map(|g| g.name())
            .collect();
        format!("one of {}", names.join(", "))
    })
}

#[derive(Debug, Args)]
pub(crate) struct SendArgs {
    /// The agent's base URL (its card is at /.well-known/agent-card.json).
    pub(crate) url: String,
    /// The message text.
    pub(crate) text: Option<String>,
    /// Attach a file (inline bytes).
    #[arg(long)]
    pub(crate) file: Vec<PathBuf>,
    /// Attach structured data (JSON).
    #[arg(long)]
    pub(crate) data: Vec<String>,
    /// Context to continue.
    #[arg(long)]
    pub(crate) context: Option<String>,
    /// Task to continue (answer an input-required task).
    #[arg(long)]
    pub(crate) task: Option<String>,
    /// Return as soon as the task exists.
    #[arg(long)]
    pub(crate) no_wait: bool,
}
