//! PostgreSQL, for several server replicas on one database (feature `postgres`): [`PgStore`]
//! keeps tasks, event logs, message claims and webhook registrations; [`PgBus`] carries the
//! replicas' wake-ups and cancel requests over `LISTEN`/`NOTIFY`; [`PgLeases`] says which
//! replica runs each task, from heartbeats in the database.
//!
//! ```no_run
//! # use a2a_core::Error;
//! # use a2a_server::{Agent, RequestContext, Server, TaskEvents};
//! # struct Echo;
//! # impl Agent for Echo {
//! #     async fn execute(&self, _: RequestContext, e: TaskEvents) -> Result<(), Error> { e.complete(None).await }
//! # }
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use a2a_server::postgres::PgStore;
//!
//! let pg = PgStore::connect("postgres://postgres@127.0.0.1/test").await?;
//! let server = Server::builder(Echo)
//!     .task_store(pg.clone())
//!     .event_bus(pg.event_bus().await?)
//!     .leases(pg.leases())
//!     .public_url("http://127.0.0.1:8080")
//!     .build()?;
//! # let _ = server;
//! # Ok(()) }
//! ```
//!
//! **One statement per write.** Every write is a single SQL statement, so PostgreSQL commits
//! it whole: a task's new version and its log event are one transaction. The wake-up of the
//! other replicas' followers follows the commit (see [`PgBus`] for why not inside it), so no
//! replica hears of an event it cannot read yet.
//!
//! **A SendMessage in one or two transactions.** When the server's message claims are this
//! store's and its leases are this store's [`PgLeases`] (the example above), a new task is
//! written once, at its first reveal ([`JointWrites`](crate::store::JointWrites), and
//! `engine/cell/outbox.rs` for the engine's side): its message claim, its execution lease
//! and the task with every change made so far (its log from version 1) are one statement. A
//! task that finishes before anyone sees it (a blocking send answered when it completes)
//! takes no lease: its send is that one transaction. A task seen before it finishes (a stream)
//! writes each later change at once, and the write that finishes it also deletes its lease:
//! two transactions for a task streamed from creation to end with no change in between. Before
//! this, a send was five: claim, lease, creation, final write, release.
//!
//! What it keeps: the claim's unique key is checked by that statement, so of two sends of one
//! message (a retry, or a duplicate on another replica) exactly one writes its task and the
//! other is answered with it (having run its agent up to its first reveal, unwritten); a task
//! is never in the table without its lease while it is unfinished (no replica takes it for an
//! orphan); versions start at 1 in that statement and are continued with a compare-and-swap.
//!
//! **Durability.** A write that answers a client (a task's first write with its claim and
//! lease, every later change, a reply, a webhook's delivery cursor) commits durably, flushed
//! to the WAL, before the client or any replica sees it. A crash before a new task's first
//! write loses the task, its claim and its lease, none of which anyone saw: its send was not
//! answered, and a retry runs afresh. Other message claims (a continuation's), leases and
//! heartbeats commit without waiting for the flush: each is followed by a durable write before
//! anyone is told anything, which makes it durable too (see `relaxed!` in the source).
//!
//! **Time** is the database's (`now()`), for every lease: the replicas' clocks need not agree.

use crate::store::{BoxError, StoreError};
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use std::sync::Arc;
use std::time::Duration;
use tokio_postgres::NoTls;

/// A write whose commit need not wait for the WAL flush: `synchronous_commit` off for its
/// own transaction (the statement runs `set_config` in a CTE named `relaxed`, which it must
/// read: `FROM relaxed`, `USING relaxed`).
///
/// For the writes nobody is told about until a later write is durable: a message claim is
/// followed by the task it creates (or its reply, stored durably), a lease by the task's first
/// write, a heartbeat or a lease given up by nothing, and is harmless when lost. PostgreSQL
/// flushes its WAL in order, so the flush of that later write makes the earlier one durable too;
/// and if the database crashes before it, nothing was acknowledged. It saves a flush wait on
/// the claim, lease and release of a send whose task is not written with them (a continuation,
/// or a server whose claims or leases are kept elsewhere).
macro_rules! relaxed {
    ($sql:literal) => {
        concat!(
            "WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true)) ",
            $sql
        )
    };
}

mod bus;
mod claims;
mod db;
mod joint;
mod leases;
mod migrate;
mod push;
mod tasks;

pub use bus::PgBus;
pub use leases::PgLeases;
pub use tasks::SNAPSHOT_EVERY;

/// How a [`PgStore`] connects (see [`PgStore::connect_with`]).
#[derive(Clone, Debug)]
pub struct PgOptions {
    /// Connections in the pool (default 16). Each replica holds up to this many, plus one
    /// listening connection for its [`PgBus`].
    pub pool_size: usize,
    /// The schema the tables live in (default: the connection's `search_path`, usually
    /// `public`). Created if missing. Lowercase letters, digits and `_` only.
    pub schema: Option<String>,
    /// How long a call waits for a pooled connection before failing (default 10 s).
    pub wait_timeout: Duration,
}

impl Default for PgOptions {
    fn default() -> Self {
        Self {
            pool_size: 16,
            schema: None,
            wait_timeout: Duration::from_secs(10),
        }
    }
}

/// A [`Store`](crate::Store) on PostgreSQL, shared by every replica of a server: tasks with a
/// row each (real columns for what listings filter and order by), their event logs as rows
/// keyed `(task_id, seq)`, message claims, and webhook registrations with their delivery
/// cursors and leases. Its migrations are embedded and applied by [`PgStore::connect`].
///
/// Like the sled store, it writes a task whole only at status updates and once every
/// [`SNAPSHOT_EVERY`] events; an artifact chunk writes its event row and bumps the version.
///
/// Cloning is cheap: clones share the pool.
#[derive(Clone)]
pub struct PgStore {
    db: db::Db,
    /// The `NOTIFY` channel of this schema: wake-ups (`e <seq> <task>`) and cancel requests
    /// (`c <task>`).
    channel: Arc<str>,
    config: tokio_postgres::Config,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("channel", &self.channel)
            .finish_non_exhaustive()
    }
}

impl PgStore {
    /// Connects to the database at `url` (`postgres://user@host:port/db` or `key=value`
    /// form) with default [`PgOptions`], and brings its schema up to date.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::connect_with(url, PgOptions::default()).await
    }

    /// Connects with these options, and brings the schema up to date (see
    /// [`PgStore::connect`]). Replicas starting together apply each migration once: they
    /// take turns on an advisory lock.
    pub async fn connect_with(url: &str, options: PgOptions) -> Result<Self, StoreError> {
        let mut config: tokio_postgres::Config = url.parse().map_err(backend)?;
        // Notice a database that went away (a network cut) within about a minute, even on a
        // connection that is only listening.
        config
            .keepalives(true)
            .keepalives_idle(Duration::from_secs(15))
            .keepalives_interval(Duration::from_secs(5))
            .keepalives_retries(3);
        if config.get_application_name().is_none() {
            config.application_name("a2a-server");
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(10));
        }
        let channel = match &options.schema {
            Some(schema) => {
                // What PostgreSQL reads the same quoted or not, so that `search_path` and the
                // quoted names in our SQL agree.
                let plain = schema.len() <= 48
                    && schema.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
                    && schema
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
                if !plain {
                    return Err(backend_msg(format!(
                        "schema name {schema:?} must be 1 to 48 lowercase letters, digits or _, \
                         starting with a letter or _"
                    )));
                }
                // Kept with any options the URL gives.
                let options = match config.get_options() {
                    Some(given) => format!("{given} -c search_path={schema}"),
                    None => format!("-c search_path={schema}"),
                };
                config.options(options);
                format!("a2a_{schema}")
            }
            None => "a2a".to_owned(),
        };
        let manager = Manager::from_config(
            config.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(options.pool_size.max(1))
            .wait_timeout(Some(options.wait_timeout))
            .create_timeout(Some(Duration::from_secs(10)))
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .build()
            .map_err(backend)?;
        let store = Self {
            db: db::Db::new(pool),
            channel: channel.into(),
            config,
        };
        let mut client = store.db.client().await?;
        migrate::run(&mut client, options.schema.as_deref()).await?;
        drop(client);
        Ok(store)
    }

    /// The [`EventBus`](crate::EventBus) of the replicas on this database: one listening
    /// connection for this process (see [`PgBus`]). Returns once it listens.
    pub async fn event_bus(&self) -> Result<Arc<PgBus>, StoreError> {
        PgBus::start(
            self.config.clone(),
            self.db.counted_apart(),
            self.channel.clone(),
        )
        .await
    }

    /// The execution [`Leases`](crate::Leases) of the replicas on this database.
    pub fn leases(&self) -> Arc<PgLeases> {
        Arc::new(PgLeases::new(self.db.clone()))
    }

    /// How many transactions this store and its [`PgLeases`] have run since it connected
    /// (each statement run alone is one; a failed one counts too), not counting the
    /// [`PgBus`]'s wake-ups: what a test or an operator compares with the requests served.
    pub fn transactions(&self) -> u64 {
        self.db.transactions()
    }

    /// Drops every table of this store, and its schema if [`PgOptions::schema`] named one
    /// (for tests that made their own).
    pub async fn drop_schema(&self) -> Result<(), StoreError> {
        let client = self.db.client().await?;
        let schema: String = client
            .query_one("SELECT current_schema()", &[])
            .await
            .map_err(backend)?
            .get(0);
        if schema == "public" {
            client
                .batch_execute(migrate::DROP_ALL)
                .await
                .map_err(backend)
        } else {
            client
                .batch_execute(&format!("DROP SCHEMA \"{schema}\" CASCADE"))
                .await
                .map_err(backend)
        }
    }
}

fn backend(e: impl Into<BoxError>) -> StoreError {
    StoreError::Backend(e.into())
}

fn backend_msg(msg: String) -> StoreError {
    StoreError::Backend(msg.into())
}

/// A value as JSON text, for a `$n::text::json` parameter (`json` keeps the text as given, and
/// accepts `\u0000`, which `jsonb` refuses).
fn json(value: &impl serde::Serialize) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(backend)
}

/// [`json`] of an optional value (`NULL` for `None`).
fn json_opt(value: Option<&impl serde::Serialize>) -> Result<Option<String>, StoreError> {
    value.map(json).transpose()
}

/// A count or sequence number as PostgreSQL's `bigint`.
fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// A `bigint` back (never negative in our tables).
fn uint(n: i64) -> u64 {
    u64::try_from(n).unwrap_or_default()
}

/// A duration as seconds, for `make_interval(secs => …)`.
fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}
