//! `a2a`: talk to any A2A agent from the command line.
//!
//! Exit codes: 0 done (task completed, or accepted with `--no-wait`); 1 the task failed, was
//! rejected or canceled; 2 bad usage; 3 the agent returned an A2A error; 4 the agent (or its
//! token endpoint) could not be reached or refused; 5 the task needs input or authentication;
//! 6 any other error. `a2a check`
//! exits 0 when every MUST holds and 1 otherwise; `a2a card --verify` 0 when a signature
//! verifies with a trusted key and 1 when none does. Once nothing reads its standard output
//! (`a2a stream URL "..." | head -3`) the command ends at once with 0; it ends with 74 when
//! its output cannot be written for another reason.

use a2a_client::{Binding, Client, ClientBuilder, Error};
use a2a_core::{
    AgentCard, ListTasksRequest, Message, Part, SendMessageRequest, SendMessageResponse,
    StreamResponse, Task, TaskState,
};
use clap::{Args, Parser, Subcommand, ValueEnum};
use futures::StreamExt as _;
use std::io::{IsTerminal as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// `print!` to standard output, ending the program quietly once nothing reads it any more
/// (`a2a stream URL "..." | head -3`), where `print!` would panic. Flushed at once: progress
/// lines are drawn without a newline.
macro_rules! out {
    ($($arg:tt)*) => {
        emit(format_args!($($arg)*))
    };
}

/// [`out!`] with a newline, as `println!`.
macro_rules! outln {
    () => {
        emit(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        emit(format_args!("{}\n", format_args!($($arg)*)))
    };
}

fn emit(args: std::fmt::Arguments<'_>) {
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("a2a: cannot write to standard output: {e}");
        std::process::exit(74); // EX_IOERR
    }
}

#[derive(Debug, Parser)]
#[command(name = "a2a", version, about = "Talk to any A2A agent", long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    global: Global,
}

#[derive(Debug, Args)]
struct Global {
    /// Print machine-readable JSON (one object per line for streams).
    #[arg(long, global = true)]
    json: bool,
    /// Preferred binding (for `check`: the binding to check; default all).
    #[arg(long, global = true, value_enum)]
    binding: Option<BindingArg>,
    /// Bearer token (Authorization: Bearer …).
    #[arg(long, global = true, env = "A2A_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// API key, sent where the agent's card says.
    #[arg(long, global = true, env = "A2A_API_KEY", hide_env_values = true)]
    api_key: Option<String>,
    /// OAuth 2.0 client credentials: the client id (tokens from the card's client-credentials
    /// flow, or from --oauth-token-url).
    #[arg(
        long,
        global = true,
        env = "A2A_OAUTH_CLIENT_ID",
        requires = "oauth_client_secret"
    )]
    oauth_client_id: Option<String>,
    /// The client secret.
    #[arg(
        long,
        global = true,
        env = "A2A_OAUTH_CLIENT_SECRET",
        hide_env_values = true
    )]
    oauth_client_secret: Option<String>,
    /// The token endpoint, instead of the card's.
    #[arg(long, global = true, value_name = "URL")]
    oauth_token_url: Option<String>,
    /// A scope to ask for (repeatable; default: every scope of the card's flow).
    #[arg(long = "oauth-scope", global = true, value_delimiter = ',')]
    oauth_scopes: Vec<String>,
    /// Extra header, `Name: value` (repeatable).
    #[arg(long = "header", short = 'H', global = true)]
    headers: Vec<String>,
    /// Timeout of each call, in seconds: the whole of each attempt (connect, headers and body;
    /// a failed call is tried up to 4 times), the opening of a stream, and each card or JWK
    /// set fetch.
    #[arg(long, global = true, default_value_t = 300, value_name = "SECONDS")]
    timeout: u64,
    /// How long a stream may go without an event (or a keep-alive) before it is resumed, or
    /// fails when it cannot be, in seconds.
    #[arg(long, global = true, default_value_t = a2a_client::DEFAULT_IDLE_TIMEOUT.as_secs(), value_name = "SECONDS")]
    idle_timeout: u64,
    /// The largest agent card read, in bytes.
    #[arg(long, global = true, default_value_t = a2a_client::DEFAULT_MAX_CARD_BYTES, value_name = "BYTES")]
    max_card_bytes: usize,
    /// The largest JWK set read (`card --jwks`), in bytes.
    #[arg(long, global = true, default_value_t = a2a_client::DEFAULT_MAX_JWKS_BYTES, value_name = "BYTES")]
    max_jwks_bytes: usize,
    /// The largest answer to a call read, in bytes.
    #[arg(long, global = true, default_value_t = a2a_client::DEFAULT_MAX_RESPONSE_BYTES, value_name = "BYTES")]
    max_response_bytes: usize,
    /// The largest event of a stream read, in bytes.
    #[arg(long, global = true, default_value_t = a2a_client::DEFAULT_MAX_EVENT_BYTES, value_name = "BYTES")]
    max_event_bytes: usize,
}

impl Global {
    /// The credentials the flags give: `--header`s, `--token`, `--api-key`, `--oauth-*`.
    fn credentials(&self) -> Result<a2a_client::Credentials, Error> {
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

    /// A client builder with the call timeout and the read limits.
    fn builder(&self) -> ClientBuilder {
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
enum BindingArg {
    Jsonrpc,
    Rest,
    Grpc,
    /// Every binding (what `check` does by default; elsewhere, no preference).
    All,
}

#[derive(Debug, Subcommand)]
enum Command {
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
struct InspectArgs {
    /// The agent to connect to when the page opens.
    url: Option<String>,
    /// Where the inspector listens (loopback by default: anyone who can reach it with the
    /// printed token drives it).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    listen: std::net::SocketAddr,
}

#[derive(Debug, Args)]
struct McpArgs {
    /// The agent's base URL (or its card's URL).
    url: String,
    /// Serve MCP streamable HTTP on this address (at /mcp) instead of stdio.
    #[arg(long, value_name = "ADDR")]
    http: Option<std::net::SocketAddr>,
    /// A `Host` the HTTP endpoint accepts (repeatable; default: loopback only, against DNS
    /// rebinding).
    #[arg(long = "allowed-host", requires = "http")]
    allowed_hosts: Vec<String>,
}

#[derive(Debug, Args)]
struct CardArgs {
    /// The agent's base URL (or its card's URL).
    url: String,
    /// Verify the card's signatures against the keys given by --jwks and --key (exit 1 when
    /// none verifies).
    #[arg(long)]
    verify: bool,
    /// A JWK set URL to trust (repeatable).
    #[arg(long, value_name = "URL")]
    jwks: Vec<String>,
    /// A public key (or private key) in PEM to trust, or a JWK set in JSON (repeatable).
    #[arg(long, value_name = "FILE")]
    key: Vec<PathBuf>,
    /// Canonicalize as the official SDKs do (empty values dropped before RFC 8785), for cards
    /// they signed.
    #[arg(long)]
    sdk_canonicalization: bool,
}

#[derive(Debug, Args)]
struct CheckArgs {
    /// The agent's base URL (or its card's URL).
    url: String,
    /// Run only these groups: card, interfaces, errors, tasks, streaming, push, auth
    /// (`--only card errors`, `--only card,errors` or the flag repeated).
    #[arg(long, value_parser = group, num_args = 1.., value_delimiter = ',')]
    only: Vec<a2a_client::check::Group>,
    /// At most this many requests a second.
    #[arg(long, default_value_t = 10.0)]
    rate: f64,
    /// Stop after this many seconds, reporting what did not run as skipped.
    #[arg(long, default_value_t = 120)]
    max_time: u64,
    /// The webhook URL of the push configs the checker creates (default: a closed port on
    /// 127.0.0.1, so that no one is called).
    #[arg(long, value_name = "URL")]
    allow_webhook: Option<String>,
}

fn group(name: &str) -> Result<a2a_client::check::Group, String> {
    a2a_client::check::Group::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = a2a_client::check::Group::ALL
            .iter()
            .map(|g| g.name())
            .collect();
        format!("one of {}", names.join(", "))
    })
}

#[derive(Debug, Args)]
struct SendArgs {
    /// The agent's base URL (its card is at /.well-known/agent-card.json).
    url: String,
    /// The message text.
    text: Option<String>,
    /// Attach a file (inline bytes).
    #[arg(long)]
    file: Vec<PathBuf>,
    /// Attach structured data (JSON).
    #[arg(long)]
    data: Vec<String>,
    /// Context to continue.
    #[arg(long)]
    context: Option<String>,
    /// Task to continue (answer an input-required task).
    #[arg(long)]
    task: Option<String>,
    /// Return as soon as the task exists.
    #[arg(long)]
    no_wait: bool,
}

/// How the process ends.
enum Outcome {
    Done,
    TaskUnsuccessful,
    NeedsInput,
}

fn fail(code: u8, message: impl std::fmt::Display) -> ExitCode {
    eprintln!("a2a: {message}");
    ExitCode::from(code)
}

fn exit_for(error: &Error) -> u8 {
    match error {
        Error::Remote { .. } | Error::Http { .. } => 3,
        Error::Transport(_)
        | Error::Grpc { .. }
        | Error::Timeout(_)
        | Error::StreamEnded(_)
        | Error::TooLarge { .. } => 4,
        Error::Config(_) => 2,
        Error::Untrusted { .. } => 1,
        Error::Token(_) => 4,
        _ => 6,
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let ui = Ui::new(cli.global.json);
    match run(cli, &ui).await {
        Ok(Outcome::Done) => ExitCode::SUCCESS,
        Ok(Outcome::TaskUnsuccessful) => ExitCode::from(1),
        Ok(Outcome::NeedsInput) => ExitCode::from(5),
        Err(e) => fail(exit_for(&e), &e),
    }
}

async fn connect(url: &str, g: &Global) -> Result<Client, Error> {
    let mut builder = g.builder();
    let preferred = match g.binding {
        None | Some(BindingArg::All) => None,
        Some(BindingArg::Jsonrpc) => Some(Binding::JsonRpc),
        Some(BindingArg::Rest) => Some(Binding::HttpJson),
        Some(BindingArg::Grpc) => Some(Binding::Grpc),
    };
    if let Some(b) = preferred {
        builder = builder.prefer([b]);
    }
    let credentials = g.credentials()?;
    let card = builder.card_resolver()?.resolve(url).await?;
    credentials
        .apply(builder, Some(&card))?
        .build_from_card(card)
}

fn media_type(path: &std::path::Path) -> &'static str {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("txt") => "text/plain",
        Some("md") => "text/markdown",
        Some("json") => "application/json",
        Some("pdf") => "application/pdf",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("csv") => "text/csv",
        Some("html") => "text/html",
        _ => "application/octet-stream",
    }
}

fn build_message(args: &SendArgs) -> Result<Message, Error> {
    let mut parts = Vec::new();
    if let Some(t) = &args.text {
        parts.push(Part::text(t));
    }
    for path in &args.file {
        let bytes = std::fs::read(path)
            .map_err(|e| Error::Config(format!("cannot read {}: {e}", path.display())))?;
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
        parts.push(
            Part::raw(bytes)
                .with_filename(name)
                .with_media_type(media_type(path)),
        );
    }
    for d in &args.data {
        let v: serde_json::Value = serde_json::from_str(d)
            .map_err(|e| Error::Config(format!("--data is not JSON: {e}")))?;
        parts.push(Part::data(v).with_media_type("application/json"));
    }
    if parts.is_empty() {
        return Err(Error::Config(
            "nothing to send: give TEXT, --file or --data".into(),
        ));
    }
    let mut m = Message::new(a2a_core::Role::User, parts);
    m.task_id = args.task.clone().map(Into::into);
    m.context_id = args.context.clone().map(Into::into);
    Ok(m)
}

/// The keys `card --verify` trusts: each JWK set URL fetched, each file read (PEM or JSON).
async fn trusted_keys(
    args: &CardArgs,
    builder: &ClientBuilder,
) -> Result<a2a_core::signing::TrustedKeys, Error> {
    let mut sources = a2a_client::credentials::KeySources::default();
    for url in &args.jwks {
        sources = sources.with_jwks_url(url);
    }
    for path in &args.key {
        let label = format!("--key {}", path.display());
        let text =
            std::fs::read_to_string(path).map_err(|e| Error::Config(format!("{label}: {e}")))?;
        sources = sources.with_key(label, text);
    }
    sources.load(builder).await
}

async fn card(args: CardArgs, g: &Global, ui: &Ui) -> Result<Outcome, Error> {
    let builder = g.builder();
    let resolver = builder.card_resolver()?;
    if !(args.verify || !args.jwks.is_empty() || !args.key.is_empty()) {
        ui.card(&resolver.resolve(&args.url).await?);
        return Ok(Outcome::Done);
    }
    if args.jwks.is_empty() && args.key.is_empty() {
        return Err(Error::Config(
            "--verify needs the keys to trust: --jwks URL or --key FILE (a card is never verified against keys it names itself)".into(),
        ));
    }
    let form = if args.sdk_canonicalization {
        a2a_core::signing::Canonicalization::Sdk
    } else {
        a2a_core::signing::Canonicalization::Jcs
    };
    let keys = trusted_keys(&args, &builder).await?;
    let (card, verified) = resolver
        .verify_with(keys, form)
        .resolve_verified(&args.url)
        .await?;
    ui.card(&card);
    eprintln!(
        "a2a: signature {} verified: kid {}, {}",
        verified.index,
        verified.kid.as_deref().unwrap_or("(none)"),
        verified.algorithm
    );
    Ok(Outcome::Done)
}

/// `a2a mcp`: the agent as an MCP server. Nothing but MCP messages goes to stdout.
async fn mcp(args: McpArgs, g: &Global) -> Result<Outcome, Error> {
    let client = match connect(&args.url, g).await {
        Ok(client) => client,
        Err(e) => {
            // The host waits for an answer to `initialize`: it gets the error.
            if args.http.is_none() {
                a2a_client::mcp::refuse_stdio(&e).await;
            }
            return Err(e);
        }
    };
    let card = client
        .card()
        .cloned()
        .ok_or_else(|| Error::Config("the agent has no card".into()))?;
    let bridge = a2a_client::mcp::Bridge::new(client, card);
    let io = |e: std::io::Error| Error::Config(format!("MCP: {e}"));
    match args.http {
        None => a2a_client::mcp::serve_stdio(bridge).await.map_err(io)?,
        Some(addr) => {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| Error::Config(format!("cannot listen on {addr}: {e}")))?;
            let local = listener.local_addr().map_err(io)?;
            // One line on stderr for scripts that listen on port 0.
            eprintln!(
                "a2a mcp: listening on http://{local}{}",
                a2a_client::mcp::HTTP_PATH
            );
            let router = a2a_client::mcp::http_router(bridge, args.allowed_hosts);
            axum::serve(listener, router).await.map_err(io)?;
        }
    }
    Ok(Outcome::Done)
}

/// `a2a inspect`: serves the inspector until interrupted; its URL (with the token) on stdout.
async fn inspect(args: InspectArgs, g: &Global) -> Result<Outcome, Error> {
    let mut options = a2a_client::inspect::Options::new(args.listen, args.url, g.credentials()?);
    options.timeout = Duration::from_secs(g.timeout);
    let io = |e: std::io::Error| Error::Config(format!("a2a inspect: {e}"));
    let inspector = a2a_client::inspect::Inspector::bind(options)
        .await
        .map_err(io)?;
    outln!("a2a inspect: open {}", inspector.url());
    inspector.serve().await.map_err(io)?;
    Ok(Outcome::Done)
}

/// The credentials `check` sends: `--header`s, `--token`, and `--api-key` where the card puts it.
async fn check_headers(url: &str, g: &Global) -> Result<reqwest::header::HeaderMap, Error> {
    let credentials = g.credentials()?;
    let card = match &credentials.api_key {
        Some(_) => Some(g.builder().card_resolver()?.resolve(url).await?),
        None => None,
    };
    credentials.headers(card.as_ref())
}

async fn check(args: CheckArgs, g: &Global, ui: &Ui) -> Result<Outcome, Error> {
    let mut options = a2a_client::check::Options::default();
    options.headers = check_headers(&args.url, g).await?;
    options.only = args.only;
    options.rate = args.rate;
    options.deadline = Duration::from_secs(args.max_time);
    options.request_timeout = Duration::from_secs(g.timeout.min(10));
    options.webhook = args.allow_webhook;
    options.bindings = match g.binding {
        None | Some(BindingArg::All) => vec![],
        Some(BindingArg::Jsonrpc) => vec![a2a_core::BINDING_JSONRPC],
        Some(BindingArg::Rest) => vec![a2a_core::BINDING_HTTP_JSON],
        Some(BindingArg::Grpc) => vec![a2a_core::BINDING_GRPC],
    };
    let report = a2a_client::check::run(&args.url, &options).await;
    let mut out = std::io::stdout().lock();
    let written = if ui.json {
        writeln!(out, "{}", report.to_json())
    } else {
        write!(out, "{}", report.table())
    };
    written.map_err(|e| Error::Config(format!("cannot write the report: {e}")))?;
    Ok(if report.passed() {
        Outcome::Done
    } else {
        Outcome::TaskUnsuccessful
    })
}

async fn run(cli: Cli, ui: &Ui) -> Result<Outcome, Error> {
    let g = &cli.global;
    match cli.command {
        Command::Check(args) => check(args, g, ui).await,
        Command::Mcp(args) => mcp(args, g).await,
        Command::Inspect(args) => inspect(args, g).await,
        Command::Card(args) => card(args, g, ui).await,
        Command::Send(args) => {
            let client = connect(&args.url, g).await?;
            let request = SendMessageRequest::new(build_message(&args)?)
                .with_return_immediately(args.no_wait);
            if args.no_wait || ui.json {
                let response = client.send_message(&request).await?;
                return Ok(ui.response(&response));
            }
            // For people: follow the task live (streaming or polling) with a status line.
            let options = a2a_client::DelegateOptions::default();
            let mut seen = Vec::new();
            let response = client
                .delegate_with(request.message, options, |e| {
                    if ui.tty {
                        ui.progress(e, &mut seen);
                    }
                })
                .await?;
            ui.clear_line();
            Ok(ui.response(&response))
        }
        Command::Stream(args) => {
            let client = connect(&args.url, g).await?;
            let request = SendMessageRequest::new(build_message(&args)?);
            let stream = client.send_streaming_message(&request).await?;
            follow(ui, stream).await
        }
        Command::Get {
            url,
            task_id,
            history,
            wait,
            after,
        } => {
            let client = connect(&url, g).await?;
            let mut req = a2a_core::GetTaskRequest::new(task_id);
            req.history_length = history;
            let mut task = client.call(&req).await?;
            if wait {
                task = wait_for_change(&client, req, task, after).await?;
            }
            Ok(ui.task(&task))
        }
        Command::List {
            url,
            context,
            status,
            page_size,
            page_token,
            artifacts,
        } => {
            let client = connect(&url, g).await?;
            let status = status.map(|s| {
                let v1 = TaskState::from_wire(&s);
                if v1.is_known() {
                    v1
                } else {
                    a2a_core::v03::decode_state(&s)
                }
            });
            let req = ListTasksRequest {
                context_id: context.map(Into::into),
                status,
                page_size,
                page_token,
                include_artifacts: artifacts.then_some(true),
                ..Default::default()
            };
            let page = client.list_tasks(&req).await?;
            ui.list(&page);
            Ok(Outcome::Done)
        }
        Command::Cancel { url, task_id } => {
            let client = connect(&url, g).await?;
            let task = client.cancel_task(task_id).await?;
            ui.task(&task);
            Ok(Outcome::Done)
        }
        Command::Subscribe { url, task_id } => {
            let client = connect(&url, g).await?;
            let stream = client.subscribe(task_id).await?;
            follow(ui, stream).await
        }
    }
}

async fn follow(ui: &Ui, mut stream: a2a_client::EventStream) -> Result<Outcome, Error> {
    let mut last: Option<TaskState> = None;
    let mut seen = Vec::new();
    while let Some(event) = stream.next().await {
        let event = event?;
        if ui.json {
            outln!("{}", serde_json::to_string(&event).unwrap_or_default());
        } else {
            ui.progress(&event, &mut seen);
        }
        if let Some(s) = event.state() {
            last = Some(s.clone());
        }
        if let StreamResponse::Message(m) = &event
            && m.task_id.is_none()
        {
            return Ok(Outcome::Done);
        }
    }
    ui.clear_line();
    Ok(match last {
        Some(TaskState::Completed) => Outcome::Done,
        Some(s) if s.is_interrupted() => Outcome::NeedsInput,
        Some(s) if s.is_terminal() => Outcome::TaskUnsuccessful,
        _ => Outcome::Done,
    })
}

/// Output for people (colors and a live status line on a terminal) or for scripts (`--json`).
struct Ui {
    json: bool,
    tty: bool,
}

impl Ui {
    fn new(json: bool) -> Self {
        Self {
            json,
            tty: std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
        }
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.tty {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    fn state(&self, s: &TaskState) -> String {
        let name = a2a_core::v03::encode_state(s);
        let code = match s {
            TaskState::Completed => "32",
            TaskState::Failed | TaskState::Rejected | TaskState::Canceled => "31",
            TaskState::InputRequired | TaskState::AuthRequired => "33",
            _ => "36",
        };
        self.paint(code, name)
    }

    fn clear_line(&self) {
        if self.tty && !self.json {
            out!("\r\x1b[2K");
        }
    }

    fn status_line(&self, text: &str) {
        if self.tty {
            out!("\r\x1b[2K{text}");
        } else {
            outln!("{text}");
        }
    }

    /// One event for people: status on the status line, artifact text as it arrives.
    fn progress(&self, event: &StreamResponse, printed: &mut Vec<String>) {
        match event {
            StreamResponse::Task(t) => {
                self.status_line(&format!("task {} {}", t.id, self.state(&t.status.state)));
                for a in &t.artifacts {
                    if !printed.contains(&a.artifact_id.to_string()) {
                        printed.push(a.artifact_id.to_string());
                        self.clear_line();
                        outln!("{}", a.text_content().trim_end());
                    }
                }
            }
            StreamResponse::StatusUpdate(s) => {
                let note = s
                    .status
                    .message
                    .as_deref()
                    .map(Message::text)
                    .unwrap_or_default();
                self.status_line(&format!(
                    "task {} {} {note}",
                    s.task_id,
                    self.state(&s.status.state)
                ));
            }
            StreamResponse::ArtifactUpdate(a) => {
                self.clear_line();
                let text = a.artifact.text_content();
                out!("{text}");
                if (a.last_chunk || !a.append) && !text.ends_with('\n') {
                    outln!();
                }
            }
            StreamResponse::Message(m) => {
                self.clear_line();
                outln!("{}", m.text());
            }
        }
    }

    fn response(&self, response: &SendMessageResponse) -> Outcome {
        match response {
            SendMessageResponse::Task(t) => self.task(t),
            SendMessageResponse::Message(m) => {
                if self.json {
                    outln!("{}", serde_json::to_string(response).unwrap_or_default());
                } else {
                    outln!("{}", m.text());
                }
                Outcome::Done
            }
        }
    }

    fn task(&self, t: &Task) -> Outcome {
        if self.json {
            outln!("{}", serde_json::to_string(t).unwrap_or_default());
        } else {
            outln!(
                "task {}  context {}  {}",
                t.id,
                t.context_id,
                self.state(&t.status.state)
            );
            if let Some(m) = &t.status.message {
                let text = m.text();
                if t.status.state.is_interrupted() {
                    outln!("{} {text}", self.paint("33", "agent asks:"));
                    outln!("answer with: a2a send URL \"...\" --task {}", t.id);
                } else if !text.is_empty() {
                    outln!("{text}");
                }
            }
            for a in &t.artifacts {
                let name = a.name.as_deref().unwrap_or(a.artifact_id.as_str());
                outln!(
                    "{} {}",
                    self.paint("1", &format!("[{name}]")),
                    a.text_content()
                );
            }
        }
        match &t.status.state {
            TaskState::Completed | TaskState::Submitted | TaskState::Working => Outcome::Done,
            s if s.is_interrupted() => Outcome::NeedsInput,
            _ => Outcome::TaskUnsuccessful,
        }
    }

    fn card(&self, card: &AgentCard) {
        if self.json {
            outln!("{}", serde_json::to_string(card).unwrap_or_default());
            return;
        }
        outln!("{} {}", self.paint("1", &card.name), card.version);
        outln!("{}", card.description);
        for i in &card.supported_interfaces {
            outln!("  {} {} {}", i.protocol_binding, i.protocol_version, i.url);
        }
        let c = &card.capabilities;
        outln!(
            "  streaming: {}  push: {}  extended card: {}",
            c.streaming(),
            c.push_notifications(),
            c.extended_agent_card()
        );
        for s in &card.skills {
            outln!(
                "  skill {}: {} [{}]",
                self.paint("1", &s.id),
                s.description,
                s.tags.join(", ")
            );
        }
    }

    fn list(&self, page: &a2a_core::ListTasksResponse) {
        if self.json {
            outln!("{}", serde_json::to_string(page).unwrap_or_default());
            return;
        }
        for t in &page.tasks {
            let when = t
                .status
                .timestamp
                .map(|t| t.to_string())
                .unwrap_or_default();
            outln!(
                "{}  {}  {}  {}",
                t.id,
                self.state(&t.status.state),
                when,
                t.context_id
            );
        }
        outln!("{} of {} tasks", page.tasks.len(), page.total_size);
        if !page.next_page_token.is_empty() {
            outln!("next page: --page-token {}", page.next_page_token);
        }
    }
}

/// `a2a get --wait`: the task once it changes: to an agent that speaks 1.1, long polls until
/// its generation is past `after` (default: `first`'s), each held by the agent and asked again
/// when the agent's wait (or this client's timeout) runs out; to a 1.0 agent, a read every half
/// second until the task differs from `first`. An ended task is returned at once.
async fn wait_for_change(
    client: &Client,
    mut req: a2a_core::GetTaskRequest,
    first: a2a_core::Task,
    after: Option<i64>,
) -> Result<a2a_core::Task, Error> {
    if !client.speaks_generations() {
        loop {
            if first.status.state.is_terminal() {
                return Ok(first);
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
            let next = client.call(&req).await?;
            if next != first {
                return Ok(next);
            }
        }
    }
    let after = after.unwrap_or(first.generation);
    req.current_generation = Some(after);
    let mut task = first;
    while task.generation <= after && !task.status.state.is_terminal() {
        task = match client.call(&req).await {
            Ok(task) => task,
            Err(Error::Timeout(_)) => task,
            Err(e) => return Err(e),
        };
    }
    Ok(task)
}
