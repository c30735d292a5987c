//! [`Db`]: the connection pool, with one call per statement: take a connection, prepare the
//! statement (cached per connection), run it, and report failures as [`StoreError`]s.

use super::backend;
use crate::store::StoreError;
use deadpool_postgres::{Object, Pool};
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

/// Parameters of a statement.
pub(super) type Params<'a> = [&'a (dyn ToSql + Sync)];

/// The pool of a [`PgStore`](super::PgStore), shared by its bus and leases.
#[derive(Clone)]
pub(super) struct Db(pub(super) Pool);

impl Db {
    /// A pooled connection, for several statements on one connection (pipelined, or in a
    /// transaction).
    pub(super) async fn client(&self) -> Result<Object, StoreError> {
        self.0.get().await.map_err(backend)
    }

    /// Runs a statement; returns how many rows it changed.
    pub(super) async fn execute(&self, sql: &str, params: &Params<'_>) -> Result<u64, StoreError> {
        let client = self.client().await?;
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
        let statement = client.prepare_cached(sql).await.map_err(backend)?;
        client.query_one(&statement, params).await.map_err(backend)
    }
}
