//! [`Db`]: the connection pool, with one call per statement: take a connection, prepare the
//! statement (cached per connection), run it, and report failures as [`StoreError`]s. It
//! counts the transactions it runs (see [`PgStore::transactions`](super::PgStore::transactions)).

use super::backend;
use crate::store::StoreError;
use deadpool_postgres::{Object, Pool};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

/// Parameters of a statement.
pub(super) type Params<'a> = [&'a (dyn ToSql + Sync)];

/// The pool of a [`PgStore`](super::PgStore), shared by its bus and leases.
#[derive(Clone)]
pub(super) struct Db {
    pool: Pool,
    /// Which pool: the same for every clone (the store's, its leases', its bus's), another
    /// for each [`Db::new`].
    id: u64,
    /// The transactions run through this handle and its clones (see [`Db::counted`]).
    transactions: Arc<AtomicU64>,
}

impl Db {
    /// A handle on `pool`, with an id no other pool of this process has.
    pub(super) fn new(pool: Pool) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Self {
            pool,
            id: NEXT.fetch_add(1, Ordering::Relaxed),
            transactions: Arc::default(),
        }
    }

    /// The same pool, with a count of its own (the bus's wake-ups, counted apart from the
    /// store's writes).
    pub(super) fn counted_apart(&self) -> Self {
        Self {
            pool: self.pool.clone(),
            id: self.id,
            transactions: Arc::default(),
        }
    }

    /// Which pool this is (see [`JointWrites::database`](crate::store::JointWrites::database)).
    pub(super) fn id(&self) -> u64 {
        self.id
    }

    /// How many transactions ran through this handle and the clones sharing its count: each
    /// statement run alone is one, and so is each explicit transaction
    /// ([`Db::count_transaction`]).
    pub(super) fn transactions(&self) -> u64 {
        self.transactions.load(Ordering::Relaxed)
    }

    /// Counts a transaction run on a [`Db::client`] connection.
    pub(super) fn count_transaction(&self) {
        self.transactions.fetch_add(1, Ordering::Relaxed);
    }

    /// A pooled connection, for several statements on one connection (pipelined, or in a
    /// transaction): its caller counts what it runs ([`Db::count_transaction`]).
    pub(super) async fn client(&self) -> Result<Object, StoreError> {
        self.pool.get().await.map_err(backend)
    }

    /// Runs a statement; returns how many rows it changed.
    pub(super) async fn execute(&self, sql: &str, params: &Params<'_>) -> Result<u64, StoreError> {
        let client = self.client().await?;
        self.count_transaction();
        let statement = client.prepare_cached(sql).await.map_err(backend)?;
        client.execute(&statement, params).await.map_err(backend)
    }

    /// Runs a query; returns its rows.
    pub(super) async fn query(
        &self,
        sql: &str,
        params: &Params<'_>,
    ) -> Result<Vec<Row>, StoreError> {
        let client = self.client().await?;
        self.count_transaction();
        let statement = client.prepare_cached(sql).await.map_err(backend)?;
        client.query(&statement, params).await.map_err(backend)
    }

    /// Runs a query of at most one row.
    pub(super) async fn query_opt(
        &self,
        sql: &str,
        params: &Params<'_>,
    ) -> Result<Option<Row>, StoreError> {
        let client = self.client().await?;
        self.count_transaction();
        let statement = client.prepare_cached(sql).await.map_err(backend)?;
        client.query_opt(&statement, params).await.map_err(backend)
    }

    /// Runs a query of exactly one row.
    pub(super) async fn query_one(
        &self,
        sql: &str,
        params: &Params<'_>,
    ) -> Result<Row, StoreError> {
        let client = self.client().await?;
        self.count_transaction();
        let statement = client.prepare_cached(sql).await.map_err(backend)?;
        client.query_one(&statement, params).await.map_err(backend)
    }
}
