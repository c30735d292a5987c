//! `a2a-server`: serves the demo agent over A2A (JSON-RPC, HTTP+JSON, SSE, gRPC), storing tasks in
//! sled under `./a2a-data` by default (or fjall there, `--store fjall`), or in PostgreSQL
//! (`--postgres URL`), where several replicas share the database.

use a2a_server::auth::BearerTokens;
use a2a_server::demo::DemoAgent;
use a2a_server::postgres::{PgOptions, PgStore};
use a2a_server::push::PushSettings;
use a2a_server::{EventBus, FjallStore, Leases, MemoryStore, Server, SledStore, Store};
use clap::Parser;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[path = "cli/allocator.rs"]
mod allocator;
#[path = "cli/observe.rs"]
mod observe;

/// A line on standard output for scripts and tests. Unlike `println!`, it does not panic when
/// nothing reads the output any more (`a2a-server | head -1`): the server goes on.
fn announce(line: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}

/// An A2A agent server running the demo agent.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// Address to listen on.
    #[arg(long, env = "A2A_LISTEN", default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// The base URL clients use, as advertised in the agent card (default: http://<listen>).
    #[arg(long, env = "A2A_PUBLIC_URL")]
    public_url: Option<String>,
    /// Also serve the gRPC binding on this address of its own (it is always served on
    /// `--listen` too, to requests with `content-type: application/grpc`).
    #[arg(long, env = "A2A_GRPC_LISTEN")]
    grpc_listen: Option<SocketAddr>,
    /// The `host:port` gRPC clients use, as advertised in the agent card (default: the host of
    /// the public URL, with the port of `--grpc-listen` if given, else of the public URL).
    #[arg(long, env = "A2A_GRPC_PUBLIC_URL")]
    grpc_public_url: Option<String>,
    /// Where the embedded store (`--store`) keeps the tasks.
    #[arg(long, env = "A2A_DATA_DIR", default_value = "./a2a-data")]
    data_dir: PathBuf,
    /// The embedded store in `--data-dir`: `sled` (the default) or `fjall`. A directory keeps
    /// the store it was created with: each opens only its own.
    #[arg(
        long,
        env = "A2A_STORE",
        value_enum,
        default_value_t = Embedded::Sled,
        conflicts_with_all = ["memory", "postgres"]
    )]
    store: Embedded,
    /// Keep tasks in memory only (nothing survives a restart).
    #[arg(long, env = "A2A_MEMORY", conflicts_with = "data_dir")]
    memory: bool,
    /// With --memory: keep at most this many tasks, evicting the oldest finished ones first
    /// (running tasks, tasks waiting for input and undelivered webhooks are kept).
    #[arg(long, env = "A2A_MAX_TASKS", requires = "memory")]
    max_tasks: Option<usize>,
    /// Keep tasks in PostgreSQL at this URL (e.g. `postgres://postgres@127.0.0.1/test`):
    /// several replicas started with the same URL share tasks, streams, cancels, recovery and
    /// webhook deliveries. The schema is created (and migrated) at start.
    #[arg(long, env = "A2A_POSTGRES_URL", conflicts_with_all = ["memory", "data_dir"])]
    postgres: Option<String>,
    /// The PostgreSQL schema for the tables (default: the connection's `search_path`).
    #[arg(long, env = "A2A_POSTGRES_SCHEMA", requires = "postgres")]
    postgres_schema: Option<String>,
    /// PostgreSQL connections in this replica's pool (plus one that listens).
    #[arg(
        long,
        env = "A2A_POSTGRES_POOL",
        default_value_t = 16,
        requires = "postgres"
    )]
    postgres_pool: usize,
    /// This replica's name in the execution and webhook leases (default: a random UUID).
    #[arg(long, env = "A2A_REPLICA_ID", requires = "postgres")]
    replica_id: Option<String>,
    /// Seconds a replica's leases outlive its last heartbeat (heartbeats come every third of
    /// it): how soon the tasks of a replica that died are resumed by another.
    #[arg(
        long,
        env = "A2A_LEASE_TTL_SECS",
        default_value_t = 30.0,
        requires = "postgres"
    )]
    lease_ttl_secs: f64,
    /// Seconds an A2A 1.1 long-poll GetTask (`currentGeneration`) is held at most.
    #[arg(long, env = "A2A_LONG_POLL_WAIT_SECS", default_value_t = 30.0)]
    long_poll_wait_secs: f64,
    /// Long-poll GetTask requests held at once at most (more are answered at once).
    #[arg(long, env = "A2A_MAX_LONG_POLLS", default_value_t = 4096)]
    max_long_polls: usize,
    /// Delete finished tasks this many hours after their last change (0: keep forever).
    #[arg(long, env = "A2A_RETENTION_HOURS", default_value_t = 168)]
    retention_hours: u64,
    /// Require `Authorization: Bearer TOKEN` (repeatable; each token is its own principal and
    /// sees only its own tasks).
    #[arg(
        long = "bearer-token",
        env = "A2A_BEARER_TOKENS",
        value_delimiter = ',',
        hide_env_values = true
    )]
    bearer_tokens: Vec<String>,
    /// Require OAuth 2.0 / OpenID Connect bearer JWTs issued by this issuer (its `iss`; its
    /// keys come from <issuer>/.well-known/openid-configuration unless --oauth-jwks-url says).
    /// Each token's `sub` is its own principal. Needs --oauth-audience.
    #[arg(long, env = "A2A_OAUTH_ISSUER", value_name = "URL")]
    oauth_issuer: Option<String>,
    /// The audience (`aud`) tokens must be for: this agent.
    #[arg(long, env = "A2A_OAUTH_AUDIENCE", requires = "oauth_issuer")]
    oauth_audience: Option<String>,
    /// The issuer's JWK set, instead of the discovery document's `jwks_uri`.
    #[arg(
        long,
        env = "A2A_OAUTH_JWKS_URL",
        value_name = "URL",
        requires = "oauth_issuer"
    )]
    oauth_jwks_url: Option<String>,
    /// The issuer's token endpoint, declared in the card as the client-credentials flow
    /// (without it the card declares OpenID Connect discovery).
    #[arg(
        long,
        env = "A2A_OAUTH_TOKEN_URL",
        value_name = "URL",
        requires = "oauth_issuer"
    )]
    oauth_token_url: Option<String>,
    /// A scope every operation requires (repeatable).
    #[arg(long = "oauth-scope", value_delimiter = ',', requires = "oauth_issuer")]
    oauth_scopes: Vec<String>,
    /// Sign the agent card with this private key (PEM, PKCS#8: P-256 signs ES256, RSA RS256,
    /// Ed25519 EdDSA; repeatable, one signature per key). The key id is the key's RFC 7638
    /// thumbprint; the public keys are served at /.well-known/jwks.json, which each signature
    /// names as its `jku`.
    #[arg(long = "card-signing-key", value_name = "FILE")]
    card_signing_keys: Vec<std::path::PathBuf>,
    /// Webhook destination exempt from the SSRF guard: a host name or an address range
    /// (repeatable), e.g. `127.0.0.1` or `10.0.0.0/8`.
    #[arg(long = "push-allow", env = "A2A_PUSH_ALLOW", value_delimiter = ',')]
    push_allow: Vec<String>,
    /// Send webhook deliveries through this HTTP proxy (the proxy environment variables are
    /// ignored), e.g. `http://proxy.internal:3128`.
    #[arg(long = "push-proxy", env = "A2A_PUSH_PROXY")]
    push_proxy: Option<String>,
    /// Webhook registrations allowed per task.
    #[arg(long = "push-max-configs", env = "A2A_PUSH_MAX_CONFIGS", default_value_t = a2a_server::push::DEFAULT_MAX_CONFIGS_PER_TASK)]
    push_max_configs: usize,
    /// Seconds between SSE keep-alive comments.
    #[arg(long, env = "A2A_KEEP_ALIVE_SECS", default_value_t = 15)]
    keep_alive_secs: u64,
    /// The most client connections open at once; beyond it, new ones get a 503 and are closed
    /// (default: from the open-file limit, 3/4 of it minus 64).
    #[arg(long, env = "A2A_MAX_CONNECTIONS")]
    max_connections: Option<usize>,
    /// Close a connection with no request in flight (an open stream counts) after this many
    /// seconds.
    #[arg(long, env = "A2A_IDLE_TIMEOUT_SECS", default_value_t = 60)]
    idle_timeout_secs: u64,
    /// Close a connection whose HTTP/1.1 request head takes longer than this many seconds to
    /// arrive (timed from its first byte; the first request's from the connection's opening).
    #[arg(long, env = "A2A_HEADER_TIMEOUT_SECS", default_value_t = 10)]
    header_timeout_secs: u64,
    /// Close a connection whose output has waited this many seconds for a client that reads
    /// nothing (a full socket, or a closed HTTP/2 flow-control window; nginx's send_timeout).
    #[arg(long, env = "A2A_SEND_TIMEOUT_SECS", default_value_t = 30)]
    send_timeout_secs: u64,
    /// The most MiB of answers held for clients that have not read them, all connections
    /// together; beyond it, answers are refused with 503 / RESOURCE_EXHAUSTED (default: an
    /// eighth of the memory, between 64 MiB and 4 GiB).
    #[arg(long, env = "A2A_MAX_OUTPUT_MIB")]
    max_output_mib: Option<u64>,
    /// The most MiB of answers held for one connection; beyond it, its requests are refused
    /// with 503 / RESOURCE_EXHAUSTED (default: a sixteenth of --max-output-mib's default,
    /// between 8 and 64 MiB).
    #[arg(long, env = "A2A_MAX_CONNECTION_OUTPUT_MIB")]
    max_connection_output_mib: Option<u64>,
    /// Export traces over OTLP/HTTP (protobuf) to this collector, e.g. `http://127.0.0.1:4318`
    /// (`/v1/traces` is appended). Off by default; also on when the standard
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set. The other
    /// standard variables (`OTEL_SERVICE_NAME`, `OTEL_EXPORTER_OTLP_HEADERS`, `…_TIMEOUT`,
    /// `OTEL_TRACES_SAMPLER`, `OTEL_SDK_DISABLED`, …) are honoured.
    #[arg(long, value_name = "URL")]
    otlp_endpoint: Option<String>,
    /// Serve Prometheus metrics at `http://ADDR/metrics` (off by default).
    #[arg(long, env = "A2A_METRICS_LISTEN", value_name = "ADDR")]
    metrics_listen: Option<SocketAddr>,
    /// The format of the log lines on stderr: `text`, or `json` (one object per line, with the
    /// trace and task ids of the request it belongs to).
    #[arg(long, env = "A2A_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
}

/// The embedded stores.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Embedded {
    /// sled (`SledStore`).
    Sled,
    /// fjall (`FjallStore`).
    Fjall,
}

/// The format of the log lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    allocator::return_freed_memory();
    let tracing = observe::init(&args);
    let mut replication: Option<(Arc<dyn EventBus>, Arc<dyn Leases>)> = None;
    let (store, described): (Arc<dyn Store>, String) = if let Some(url) = &args.postgres {
        let options = PgOptions {
            pool_size: args.postgres_pool,
            schema: args.postgres_schema.clone(),
            ..PgOptions::default()
        };
        let pg = PgStore::connect_with(url, options)
            .await
            .map_err(|e| format!("cannot open the task store in PostgreSQL: {e}"))?;
        let bus = pg
            .event_bus()
            .await
            .map_err(|e| format!("cannot listen for other replicas' events: {e}"))?;
        let leases = pg.leases();
        if let Some(id) = &args.replica_id {
            // Two live processes with one id would each take the other's tasks for their own.
            if let Ok(live) = leases.replicas().await
                && live.iter().any(|(other, _)| other == id)
            {
                tracing::warn!(
                    replica = %id,
                    "a live replica already uses this id (its heartbeat has not run out): \
                     unless it is this replica's previous run, give each replica its own \
                     --replica-id"
                );
            }
        }
        replication = Some((bus, leases));
        (Arc::new(pg), "postgres".to_owned())
    } else if args.memory {
        let store = match args.max_tasks {
            Some(max) => MemoryStore::with_max_tasks(max),
            None => MemoryStore::new(),
        };
        (Arc::new(store), "memory".to_owned())
    } else {
        let dir = &args.data_dir;
        let failed = |e| format!("cannot open the task store in {}: {e}", dir.display());
        match args.store {
            Embedded::Sled => (
                Arc::new(SledStore::open(dir).map_err(failed)?),
                format!("sled at {}", dir.display()),
            ),
            Embedded::Fjall => (
                Arc::new(FjallStore::open(dir).map_err(failed)?),
                format!("fjall at {}", dir.display()),
            ),
        }
    };
    let mut push = PushSettings::default().max_configs_per_task(args.push_max_configs);
    if let Some(proxy) = &args.push_proxy {
        push = push
            .proxy(proxy)
            .map_err(|e| format!("--push-proxy {proxy}: {e}"))?;
    }
    for rule in &args.push_allow {
        push = push
            .allow(rule)
            .map_err(|e| format!("--push-allow {rule}: {e}"))?;
    }
    // Bind first, so that `--listen 127.0.0.1:0` advertises the port it actually got.
    let listener = a2a_server::serve::bind(args.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", args.listen))?;
    let local = listener.local_addr()?;
    let public_url = args
        .public_url
        .clone()
        .unwrap_or_else(|| format!("http://{local}"));
    let metrics = match args.metrics_listen {
        Some(addr) => Some(observe::serve_metrics(addr).await?),
        None => None,
    };
    let long_poll_wait = Duration::try_from_secs_f64(args.long_poll_wait_secs)
        .map_err(|e| format!("--long-poll-wait-secs {}: {e}", args.long_poll_wait_secs))?;
    let server = Server::builder(DemoAgent)
        .agent_card(DemoAgent::card())
        .long_poll(long_poll_wait, args.max_long_polls)
        .task_store_arc(store)
        .public_url(&public_url)
        .keep_alive(Duration::from_secs(args.keep_alive_secs.max(1)))
        .push_notifications(push)
        .idle_timeout(Duration::from_secs(args.idle_timeout_secs.max(1)))
        .header_read_timeout(Duration::from_secs(args.header_timeout_secs.max(1)))
        .send_timeout(Duration::from_secs(args.send_timeout_secs.max(1)));
    let server = match args.max_output_mib {
        Some(mib) => server.max_output(mib.saturating_mul(1 << 20)),
        None => server,
    };
    let server = match args.max_connection_output_mib {
        Some(mib) => server.max_output_per_connection(mib.saturating_mul(1 << 20)),
        None => server,
    };
    let server = match replication {
        Some((bus, leases)) => {
            let ttl = Duration::try_from_secs_f64(args.lease_ttl_secs)
                .map_err(|e| format!("--lease-ttl-secs {}: {e}", args.lease_ttl_secs))?;
            let server = server.event_bus(bus).leases(leases).lease_ttl(ttl);
            match &args.replica_id {
                Some(id) => server.replica_id(id),
                None => server,
            }
        }
        None => server,
    };
    let mut server = match &args.grpc_public_url {
        Some(url) => server.grpc_public_url(url),
        None => server,
    };
    let grpc_local = match args.grpc_listen {
        Some(addr) => {
            let listener = a2a_server::serve::bind(addr)
                .await
                .map_err(|e| format!("cannot listen for gRPC on {addr}: {e}"))?;
            let local = listener.local_addr()?;
            server = server.grpc_listener(listener);
            Some(local)
        }
        None => None,
    };
    let server = match args.max_connections {
        Some(max) => server.max_connections(max),
        None => server,
    };
    let server = match metrics {
        Some(metrics) => server.metrics(metrics),
        None => server,
    };
    let server = match (&args.oauth_issuer, args.bearer_tokens.is_empty()) {
        (Some(_), false) => {
            return Err("--oauth-issuer and --bearer-token: choose one way to authenticate".into());
        }
        (Some(issuer), true) => {
            let audience = args
                .oauth_audience
                .as_deref()
                .ok_or("--oauth-issuer needs --oauth-audience (the `aud` tokens are for)")?;
            let mut auth = a2a_server::auth::JwtBearer::new(issuer, audience)
                .require_scopes(args.oauth_scopes.iter().cloned());
            if let Some(url) = &args.oauth_jwks_url {
                auth = auth.jwks_url(url);
            }
            if let Some(url) = &args.oauth_token_url {
                auth = auth.token_url(url);
            }
            server.authenticator(auth)
        }
        (None, true) => server,
        (None, false) => server.authenticator(BearerTokens::each_its_own(
            args.bearer_tokens.iter().cloned(),
        )),
    };
    let mut server = server;
    for path in &args.card_signing_keys {
        let pem = std::fs::read_to_string(path)
            .map_err(|e| format!("--card-signing-key {}: {e}", path.display()))?;
        let key = a2a_core::signing::CardSigningKey::from_pem(&pem)
            .map_err(|e| format!("--card-signing-key {}: {e}", path.display()))?;
        tracing::info!(
            kid = key.kid(),
            alg = key.algorithm(),
            "signing the agent card"
        );
        server = server.card_signing_key(key);
    }
    let server = if args.retention_hours > 0 {
        server.retention(Duration::from_secs(args.retention_hours * 3600))
    } else {
        server
    }
    .build()?;
    // Usable after `serve`, which consumes the server.
    let handle = server.handle();
    tracing::info!(
        listen = %local,
        card = %format!("{public_url}{}", a2a_core::AGENT_CARD_PATH),
        store = %described,
        "A2A server ready"
    );
    // One line on stdout for scripts and tests that start the server on port 0 (and one for
    // the gRPC listener, after it).
    announce(format_args!("a2a-server listening on http://{local}"));
    if let Some(grpc) = grpc_local {
        tracing::info!(listen = %grpc, "gRPC listener ready");
        announce(format_args!("a2a-server gRPC listening on {grpc}"));
    }
    server
        .serve_with_shutdown(listener, async move {
            wait_for_signal().await;
            tracing::info!("shutting down: closing streams, flushing the store");
        })
        .await?;
    handle.flush().await?;
    tracing::info!("stopped");
    tracing.shutdown();
    Ok(())
}

async fn wait_for_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
}
