//! [`PushStore`] on PostgreSQL: registrations in `a2a_push_configs` with their delivery
//! cursors, delivery leases in `a2a_delivery_leases` (database time).

use super::{PgStore, backend, int, json, json_opt, secs, uint};
use crate::store::{DeadLetter, PushRecord, PushStore, StoreError};
use a2a_core::{TaskId, TaskPushNotificationConfig};
use async_trait::async_trait;
use std::time::Duration;
use tokio_postgres::Row;
use tokio_postgres::types::Json;

/// The columns a [`PushRecord`] is read from.
const COLUMNS: &str = "config, v03, delivered, dead_letter, generations";

fn record(row: &Row) -> Result<PushRecord, StoreError> {
    let Json(config): Json<TaskPushNotificationConfig> = row.try_get(0).map_err(backend)?;
    let dead_letter: Option<Json<DeadLetter>> = row.try_get(3).map_err(backend)?;
    Ok(PushRecord {
        config,
        v03: row.try_get(1).map_err(backend)?,
        delivered: uint(row.try_get(2).map_err(backend)?),
        dead_letter: dead_letter.map(|d| d.0),
        generations: row.try_get(4).map_err(backend)?,
    })
}

fn task_of(record: &PushRecord) -> &str {
    record.config.task_id.as_ref().map_or("", |t| t.as_str())
}

#[async_trait]
impl PushStore for PgStore {
    async fn put_push_config(&self, record: PushRecord) -> Result<(), StoreError> {
        let config = json(&record.config)?;
        let dead_letter = json_opt(record.dead_letter.as_ref())?;
        self.db
            .execute(
                "INSERT INTO a2a_push_configs (task_id, config_id, config, v03, delivered,
                                               dead_letter, generations)
                 VALUES ($1, $2, $3::text::json, $4, $5, $6::text::json, $7)
                 ON CONFLICT (task_id, config_id) DO UPDATE SET config = excluded.config,
                     v03 = excluded.v03, delivered = excluded.delivered,
                     dead_letter = excluded.dead_letter, generations = excluded.generations",
                &[
                    &task_of(&record),
                    &record.id(),
                    &config,
                    &record.v03,
                    &int(record.delivered),
                    &dead_letter,
                    &record.generations,
                ],
            )
            .await?;
        Ok(())
    }

    async fn push_configs(&self, task: &TaskId) -> Result<Vec<PushRecord>, StoreError> {
        let sql =
            format!("SELECT {COLUMNS} FROM a2a_push_configs WHERE task_id = $1 ORDER BY position");
        self.db
            .query(&sql, &[&task.as_str()])
            .await?
            .iter()
            .map(record)
            .collect()
    }

    async fn push_config(&self, task: &TaskId, id: &str) -> Result<Option<PushRecord>, StoreError> {
        let sql =
            format!("SELECT {COLUMNS} FROM a2a_push_configs WHERE task_id = $1 AND config_id = $2");
        self.db
            .query_opt(&sql, &[&task.as_str(), &id])
            .await?
            .as_ref()
            .map(record)
            .transpose()
    }

    async fn push_config_count(&self, task: &TaskId) -> Result<usize, StoreError> {
        let n: i64 = self
            .db
            .query_one(
                "SELECT count(*) FROM a2a_push_configs WHERE task_id = $1",
                &[&task.as_str()],
            )
            .await?
            .get(0);
        Ok(uint(n) as usize)
    }

    async fn delete_push_config(&self, task: &TaskId, id: &str) -> Result<bool, StoreError> {
        let n: i64 = self
            .db
            .query_one(
                "WITH p AS (DELETE FROM a2a_push_configs WHERE task_id = $1 AND config_id = $2
                            RETURNING 1),
                      d AS (DELETE FROM a2a_delivery_leases WHERE task_id = $1 AND config_id = $2)
                 SELECT count(*) FROM p",
                &[&task.as_str(), &id],
            )
            .await?
            .get(0);
        Ok(n > 0)
    }

    async fn tasks_with_push_configs(
        &self,
        after: Option<&TaskId>,
        limit: usize,
    ) -> Result<Vec<TaskId>, StoreError> {
        let after = after.map(TaskId::as_str);
        Ok(self
            .db
            .query(
                "SELECT DISTINCT task_id FROM a2a_push_configs
                 WHERE $1::text IS NULL OR task_id > $1
                 ORDER BY task_id LIMIT $2",
                &[&after, &int(limit as u64)],
            )
            .await?
            .iter()
            .map(|row| TaskId::from(row.get::<_, &str>(0)))
            .collect())
    }

    async fn advance_delivery(
        &self,
        record: &PushRecord,
        expected: u64,
    ) -> Result<bool, StoreError> {
        let config = json(&record.config)?;
        let dead_letter = json_opt(record.dead_letter.as_ref())?;
        // The same registration: `json` keeps the text it was given, and both are our
        // serialization of a config.
        let n = self
            .db
            .execute(
                "UPDATE a2a_push_configs SET delivered = $3, dead_letter = $4::text::json
                 WHERE task_id = $1 AND config_id = $2 AND config::text = $5
                   AND dead_letter IS NULL AND delivered = $6",
                &[
                    &task_of(record),
                    &record.id(),
                    &int(record.delivered),
                    &dead_letter,
                    &config,
                    &int(expected),
                ],
            )
            .await?;
        Ok(n == 1)
    }

    async fn acquire_delivery(
        &self,
        task: &TaskId,
        id: &str,
        owner: &str,
        ttl: Duration,
    ) -> Result<bool, StoreError> {
        // Taken when free, expired, or already ours (a renewal). Two replicas racing for an
        // expired lease: the second waits for the first's row lock, then sees its live lease.
        let n = self
            .db
            .execute(
                relaxed!(
                    "INSERT INTO a2a_delivery_leases AS l (task_id, config_id, owner, expires)
                     SELECT $1::text, $2::text, $3::text, now() + make_interval(secs => $4::float8)
                     FROM relaxed
                     ON CONFLICT (task_id, config_id) DO UPDATE
                     SET owner = excluded.owner, expires = excluded.expires
                     WHERE l.owner = excluded.owner OR l.expires <= now()"
                ),
                &[&task.as_str(), &id, &owner, &secs(ttl)],
            )
            .await?;
        Ok(n == 1)
    }

    async fn release_delivery(
        &self,
        task: &TaskId,
        id: &str,
        owner: &str,
    ) -> Result<(), StoreError> {
        self.db
            .execute(
                relaxed!(
                    "DELETE FROM a2a_delivery_leases d USING relaxed
                     WHERE d.task_id = $1 AND d.config_id = $2 AND d.owner = $3"
                ),
                &[&task.as_str(), &id, &owner],
            )
            .await?;
        Ok(())
    }
}
