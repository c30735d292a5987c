//! [`TaskStore`] on PostgreSQL: a row per task in `a2a_tasks` (a snapshot plus the columns
//! listings use), its log in `a2a_events`.
//!
//! **Snapshots.** A write that changes the task's status (or replaces it whole) stores the
//! task as its row's snapshot; any other write (an artifact chunk, an agent message) inserts
//! only its event and bumps the row's version, and a read folds the events after the snapshot
//! onto it ([`Task::apply`]), in the same statement. Once [`SNAPSHOT_EVERY`] events have
//! piled up, the writer stores the task it already holds as the new snapshot (a second
//! statement: the snapshot equals the fold, so it is never wrong, only late).

use super::{PgStore, backend, backend_msg, int, json, uint};
use crate::store::{ListPage, ListQuery, LoggedEvent, Scope, StoreError, StoredTask, TaskStore};
use a2a_core::{StreamResponse, Task, TaskId, TaskState, Timestamp};
use async_trait::async_trait;
use std::sync::Arc;
use tokio_postgres::Row;
use tokio_postgres::types::{Json, ToSql};

/// How many events at most a task's row has after its snapshot before the writer refreshes
/// the snapshot: a read folds fewer than this many events.
pub const SNAPSHOT_EVERY: u64 = 64;

/// The columns a [`StoredTask`] is read from (see [`stored`]): the snapshot, the version, the
/// scope, and the events after the snapshot as one JSON array.
const TASK_COLUMNS: &str = "t.snapshot, t.version, t.tenant, t.owner, \
     (SELECT json_agg(e.event ORDER BY e.seq) FROM a2a_events e \
      WHERE e.task_id = t.id AND e.seq > t.snapshot_version) AS tail";

/// The finished tasks whose status is older than `$1`, oldest first: the retention sweep's
/// query, served by the partial index `a2a_tasks_finished` (whose predicate it repeats).
const FINISHED_BEFORE: &str = "SELECT id FROM a2a_tasks
     WHERE state IN ('TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED',
                     'TASK_STATE_REJECTED')
       AND status_ms < $1
     ORDER BY status_ms, id LIMIT $2";

/// A task read with [`TASK_COLUMNS`], its tail folded onto its snapshot.
fn stored(row: &Row) -> Result<StoredTask, StoreError> {
    let Json(mut task): Json<Task> = row.try_get(0).map_err(backend)?;
    let tail: Option<Json<Vec<StreamResponse>>> = row.try_get(4).map_err(backend)?;
    for event in tail.map(|t| t.0).unwrap_or_default() {
        task.apply(&event)
            .map_err(|e| backend_msg(format!("task {}: its log does not fold: {e}", task.id)))?;
    }
    Ok(StoredTask {
        task: Arc::new(task),
        version: uint(row.try_get(1).map_err(backend)?),
        scope: Scope {
            tenant: row.try_get(2).map_err(backend)?,
            owner: row.try_get(3).map_err(backend)?,
        },
    })
}

/// Whether an event is always stored with a snapshot of its version: a status update (a state
/// change, or a continuation, whose user message enters the history without an event of its
/// own) and a whole task.
fn needs_snapshot(event: &StreamResponse) -> bool {
    matches!(
        event,
        StreamResponse::StatusUpdate(_) | StreamResponse::Task(_)
    )
}

impl PgStore {
    /// After a write that matched no row: why.
    async fn conflict(&self, id: &TaskId, expected: u64) -> Result<StoreError, StoreError> {
        let row = self
            .db
            .query_opt(
                "SELECT version FROM a2a_tasks WHERE id = $1",
                &[&id.as_str()],
            )
            .await?;
        Ok(match row {
            None => StoreError::NotFound(id.clone()),
            Some(row) => StoreError::VersionConflict {
                expected,
                found: uint(row.get(0)),
            },
        })
    }
}

/// The creation event (`StreamResponse::Task`) of a task serialized as `snapshot`, without
/// serializing the task again.
pub(super) fn created_event(snapshot: &str) -> String {
    format!("{{\"task\":{snapshot}}}")
}

#[async_trait]
impl TaskStore for PgStore {
    /// Nothing to do: each write is a committed transaction when it returns.
    async fn sync(&self) -> Result<(), StoreError> {
        Ok(())
    }

    fn flushes(&self) -> bool {
        false
    }

    fn joint(&self) -> Option<&dyn crate::store::JointWrites> {
        Some(self)
    }

    async fn get(&self, id: &TaskId) -> Result<Option<StoredTask>, StoreError> {
        let sql = format!("SELECT {TASK_COLUMNS} FROM a2a_tasks t WHERE t.id = $1");
        self.db
            .query_opt(&sql, &[&id.as_str()])
            .await?
            .as_ref()
            .map(stored)
            .transpose()
    }

    async fn create(&self, task: Arc<Task>, scope: Scope) -> Result<StoredTask, StoreError> {
        // The log starts with the task as created; the row's snapshot is the same JSON.
        let snapshot = json(&*task)?;
        let created = created_event(&snapshot);
        let stored = StoredTask {
            task,
            version: 1,
            scope,
        };
        let n = self
            .db
            .execute(
                "WITH t AS (
                     INSERT INTO a2a_tasks (id, context_id, tenant, owner, state, status_ms,
                                            version, snapshot_version, snapshot)
                     VALUES ($1, $2, $3, $4, $5, $6, 1, 1, $7::text::json)
                     ON CONFLICT (id) DO NOTHING
                     RETURNING id)
                 INSERT INTO a2a_events (task_id, seq, event)
                 SELECT id, 1, $8::text::json FROM t",
                &[
                    &stored.task.id.as_str(),
                    &stored.task.context_id.as_str(),
                    &stored.scope.tenant,
                    &stored.scope.owner,
                    &stored.task.status.state.as_str(),
                    &stored.sort_millis(),
                    &snapshot,
                    &created,
                ],
            )
            .await?;
        if n == 0 {
            return Err(StoreError::AlreadyExists(stored.task.id.clone()));
        }
        Ok(stored)
    }

    async fn update(
        &self,
        task: Arc<Task>,
        expected_version: u64,
        event: &StreamResponse,
    ) -> Result<StoredTask, StoreError> {
        let id = task.id.as_str();
        let event_json = json(event)?;
        let expected = int(expected_version);
        let row = if needs_snapshot(event) {
            let snapshot = json(&*task)?;
            let millis = task.status.timestamp.map_or(0, Timestamp::unix_millis);
            self.db
                .query_opt(
                    "WITH t AS (
                         UPDATE a2a_tasks
                         SET version = version + 1, snapshot_version = version + 1,
                             snapshot = $3::text::json, state = $4, status_ms = $5
                         WHERE id = $1 AND version = $2
                         RETURNING version, tenant, owner),
                     e AS (INSERT INTO a2a_events (task_id, seq, event)
                           SELECT $1, version, $6::text::json FROM t),
                     l AS (DELETE FROM a2a_leases
                           WHERE task_id = $1 AND $7::boolean AND EXISTS (SELECT 1 FROM t))
                     SELECT version, version, tenant, owner FROM t",
                    &[
                        &id,
                        &expected,
                        &snapshot,
                        &task.status.state.as_str(),
                        &millis,
                        &event_json,
                        &task.status.state.is_terminal(),
                    ],
                )
                .await?
        } else {
            self.db
                .query_opt(
                    "WITH t AS (
                         UPDATE a2a_tasks SET version = version + 1
                         WHERE id = $1 AND version = $2
                         RETURNING version, snapshot_version, tenant, owner),
                     e AS (INSERT INTO a2a_events (task_id, seq, event)
                           SELECT $1, version, $3::text::json FROM t)
                     SELECT version, snapshot_version, tenant, owner FROM t",
                    &[&id, &expected, &event_json],
                )
                .await?
        };
        let Some(row) = row else {
            return Err(self.conflict(&task.id, expected_version).await?);
        };
        let version = uint(row.get(0));
        let snapshot_version = uint(row.get(1));
        if version - snapshot_version >= SNAPSHOT_EVERY {
            // The task with this event applied is the fold the next read would make.
            let snapshot = json(&*task)?;
            self.db
                .execute(
                    "UPDATE a2a_tasks SET snapshot = $2::text::json, snapshot_version = $3
                     WHERE id = $1 AND snapshot_version < $3 AND version >= $3",
                    &[&id, &snapshot, &int(version)],
                )
                .await?;
        }
        Ok(StoredTask {
            task,
            version,
            scope: Scope {
                tenant: row.get(2),
                owner: row.get(3),
            },
        })
    }

    async fn events(
        &self,
        id: &TaskId,
        after: u64,
        limit: usize,
    ) -> Result<Vec<LoggedEvent>, StoreError> {
        let limit = int(limit as u64);
        self.db
            .query(
                "SELECT seq, event FROM a2a_events WHERE task_id = $1 AND seq > $2
                 ORDER BY seq LIMIT $3",
                &[&id.as_str(), &int(after), &limit],
            )
            .await?
            .iter()
            .map(|row| {
                let Json(event): Json<StreamResponse> = row.try_get(1).map_err(backend)?;
                Ok(LoggedEvent {
                    seq: uint(row.get(0)),
                    event,
                })
            })
            .collect()
    }

    async fn delete(&self, id: &TaskId) -> Result<bool, StoreError> {
        let n: i64 = self
            .db
            .query_one(
                "WITH t AS (DELETE FROM a2a_tasks WHERE id = $1 RETURNING id),
                      e AS (DELETE FROM a2a_events WHERE task_id = $1),
                      p AS (DELETE FROM a2a_push_configs WHERE task_id = $1),
                      d AS (DELETE FROM a2a_delivery_leases WHERE task_id = $1),
                      l AS (DELETE FROM a2a_leases WHERE task_id = $1)
                 SELECT count(*) FROM t",
                &[&id.as_str()],
            )
            .await?
            .get(0);
        Ok(n > 0)
    }

    async fn terminal_before(
        &self,
        before: Timestamp,
        limit: usize,
    ) -> Result<Vec<TaskId>, StoreError> {
        let limit = int(limit as u64);
        Ok(self
            .db
            .query(FINISHED_BEFORE, &[&before.unix_millis(), &limit])
            .await?
            .iter()
            .map(|row| TaskId::from(row.get::<_, &str>(0)))
            .collect())
    }

    async fn list(&self, query: &ListQuery) -> Result<ListPage, StoreError> {
        let token = query.start_after()?;
        let client = self.db.client().await?;
        // Two statements, pipelined: two transactions.
        self.db.count_transaction();
        self.db.count_transaction();
        // The filters, as SQL with numbered parameters. A scope part that is unset must match
        // NULL, written `IS NULL` so that the listing indexes serve it.
        let mut filters = Vec::new();
        let mut params: Vec<&(dyn ToSql + Sync)> = Vec::new();
        match &query.scope.tenant {
            Some(tenant) => {
                params.push(tenant);
                filters.push(format!("tenant = ${}", params.len()));
            }
            None => filters.push("tenant IS NULL".to_owned()),
        }
        match &query.scope.owner {
            Some(owner) => {
                params.push(owner);
                filters.push(format!("owner = ${}", params.len()));
            }
            None => filters.push("owner IS NULL".to_owned()),
        }
        let context = query.context_id.as_ref().map(|c| c.as_str());
        if let Some(context) = &context {
            params.push(context);
            filters.push(format!("context_id = ${}", params.len()));
        }
        let state = query.status.as_ref().map(TaskState::as_str);
        if let Some(state) = &state {
            params.push(state);
            filters.push(format!("state = ${}", params.len()));
        }
        let after = query.status_timestamp_after.map(Timestamp::unix_millis);
        if let Some(after) = &after {
            params.push(after);
            filters.push(format!("status_ms >= ${}", params.len()));
        }
        let filter = filters.join(" AND ");
        let count_sql = format!("SELECT count(*) FROM a2a_tasks WHERE {filter}");
        let count_params = params.clone();
        let (millis, id) = match &token {
            Some((std::cmp::Reverse(millis), id)) => (Some(*millis), Some(id.as_str())),
            None => (None, None),
        };
        let mut page_filter = filter;
        if let (Some(millis), Some(id)) = (&millis, &id) {
            params.push(millis);
            let m = params.len();
            params.push(id);
            let i = params.len();
            page_filter.push_str(&format!(
                " AND (status_ms < ${m} OR (status_ms = ${m} AND id > ${i}))"
            ));
        }
        let limit = int(query.page_size as u64 + 1);
        params.push(&limit);
        let page_sql = format!(
            "SELECT {TASK_COLUMNS} FROM a2a_tasks t WHERE {page_filter}
             ORDER BY status_ms DESC, id LIMIT ${}",
            params.len()
        );
        let (count_statement, page_statement) = tokio::try_join!(
            client.prepare_cached(&count_sql),
            client.prepare_cached(&page_sql)
        )
        .map_err(backend)?;
        // Pipelined on the one connection: one round trip for both.
        let (count, rows) = tokio::try_join!(
            client.query_one(&count_statement, &count_params),
            client.query(&page_statement, &params)
        )
        .map_err(backend)?;
        let total: i64 = count.get(0);
        let mut tasks = rows.iter().map(stored).collect::<Result<Vec<_>, _>>()?;
        let more = tasks.len() > query.page_size;
        tasks.truncate(query.page_size);
        Ok(ListPage::new(tasks, more, uint(total) as usize))
    }

    async fn tasks_in_states(
        &self,
        states: &[TaskState],
        after: Option<&TaskId>,
        limit: usize,
    ) -> Result<Vec<StoredTask>, StoreError> {
        // The states written into the SQL (they are our enum's names), so that the planner
        // sees the partial index of the active tasks (`a2a_tasks_active`) serves recovery's
        // scan; a state this build does not know is passed as a parameter instead.
        let known = states.iter().all(TaskState::is_known);
        let sql = if known {
            let listed: Vec<String> = states.iter().map(|s| format!("'{}'", s.as_str())).collect();
            format!(
                "SELECT {TASK_COLUMNS} FROM a2a_tasks t
                 WHERE t.state IN ({}) AND t.id > $1 ORDER BY t.id LIMIT $2",
                listed.join(", ")
            )
        } else {
            format!(
                "SELECT {TASK_COLUMNS} FROM a2a_tasks t
                 WHERE t.state = ANY($3) AND t.id > $1 ORDER BY t.id LIMIT $2"
            )
        };
        if states.is_empty() {
            return Ok(Vec::new());
        }
        // Every id sorts after the empty string.
        let after = after.map_or("", TaskId::as_str);
        let limit = int(limit as u64);
        let names: Vec<&str> = states.iter().map(TaskState::as_str).collect();
        let rows = if known {
            self.db.query(&sql, &[&after, &limit]).await?
        } else {
            self.db.query(&sql, &[&after, &limit, &names]).await?
        };
        rows.iter().map(stored).collect()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_creation_event_is_the_task_wrapped_as_serde_writes_it() {
        use a2a_core::{StreamResponse, Task, TaskState, TaskStatus};
        let task = Task::new("t", "c", TaskStatus::new(TaskState::Submitted));
        let snapshot = serde_json::to_string(&task).unwrap();
        let event = serde_json::to_string(&StreamResponse::Task(task)).unwrap();
        assert_eq!(super::created_event(&snapshot), event);
    }

    #[test]
    fn the_retention_query_and_its_index_name_every_terminal_state_by_its_wire_name() {
        use a2a_core::TaskState;
        let migration = include_str!("migrations/0001_init.sql");
        for state in [
            TaskState::Completed,
            TaskState::Failed,
            TaskState::Canceled,
            TaskState::Rejected,
        ] {
            let quoted = format!("'{}'", state.as_str());
            assert!(super::FINISHED_BEFORE.contains(&quoted), "{quoted}");
            assert!(migration.contains(&quoted), "{quoted}");
        }
    }
}
