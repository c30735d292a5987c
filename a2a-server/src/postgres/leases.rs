//! [`PgLeases`]: execution leases in the database, held while their replica heartbeats.

use super::db::Db;
use super::{backend, secs};
use crate::engine::Leases;
use crate::store::StoreError;
use a2a_core::TaskId;
use async_trait::async_trait;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;
use tokio::time::Instant;

/// Execution [`Leases`] in PostgreSQL, from [`PgStore::leases`](super::PgStore::leases).
///
/// Each replica has a row in `a2a_replicas` with the time its heartbeat runs out; the
/// heartbeat ([`Leases::renew`]) moves it, one row whatever the number of tasks. A lease
/// (`a2a_leases`: task, owner) is held while its owner is alive, so when a replica dies all
/// of its leases lapse together, and each is taken by exactly one survivor: taking a lapsed
/// lease is a conditional upsert, and of two replicas racing for it the second waits for the
/// first's row lock and then sees a live owner.
pub struct PgLeases {
    db: Db,
    /// Until when (at the latest) each owner's replica row keeps it alive, as last renewed
    /// from here. A lease is taken only while its owner's row is committed and alive for a
    /// while yet: else another replica could find the owner of a lease just taken dead, and
    /// take the lease too.
    alive_until: Mutex<HashMap<String, Instant>>,
}

impl std::fmt::Debug for PgLeases {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgLeases").finish_non_exhaustive()
    }
}

impl PgLeases {
    pub(super) fn new(db: Db) -> Self {
        Self {
            db,
            alive_until: Mutex::default(),
        }
    }

    /// Makes sure `owner`'s replica row is alive for at least a third of `ttl` more,
    /// renewing it if the last renewal from here is older than that (or there was none).
    async fn alive(&self, owner: &str, ttl: Duration) -> Result<(), StoreError> {
        let fresh = self
            .alive_until
            .lock()
            .expect("lease lock")
            .get(owner)
            .is_some_and(|until| *until > Instant::now() + ttl / 3);
        if fresh {
            Ok(())
        } else {
            self.renew(owner, ttl).await
        }
    }

    /// The live replicas: id and seconds until their heartbeat runs out (for operators and
    /// tests).
    pub async fn replicas(&self) -> Result<Vec<(String, f64)>, StoreError> {
        let rows = self
            .db
            .query(
                "SELECT id, extract(epoch FROM expires - now())::float8 FROM a2a_replicas
                 WHERE expires > now() ORDER BY id",
                &[],
            )
            .await?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    /// Who holds the lease of `task`, if its owner is alive.
    pub async fn holder(&self, task: &TaskId) -> Result<Option<String>, StoreError> {
        let row = self
            .db
            .query_opt(
                "SELECT l.owner FROM a2a_leases l JOIN a2a_replicas r ON r.id = l.owner
                 WHERE l.task_id = $1 AND r.expires > now()",
                &[&task.as_str()],
            )
            .await?;
        Ok(row.map(|r| r.get(0)))
    }
}

#[async_trait]
impl Leases for PgLeases {
    async fn acquire(&self, task: &TaskId, owner: &str, ttl: Duration) -> Result<bool, StoreError> {
        self.alive(owner, ttl).await?;
        let n = self
            .db
            .execute(
                relaxed!(
                    "INSERT INTO a2a_leases AS l (task_id, owner)
                     SELECT $1::text, $2::text FROM relaxed
                     ON CONFLICT (task_id) DO UPDATE SET owner = excluded.owner, since = now()
                     WHERE l.owner = excluded.owner
                        OR NOT EXISTS (SELECT 1 FROM a2a_replicas r
                                       WHERE r.id = l.owner AND r.expires > now())"
                ),
                &[&task.as_str(), &owner],
            )
            .await?;
        Ok(n == 1)
    }

    async fn take_over(
        &self,
        task: &TaskId,
        owner: &str,
        ttl: Duration,
    ) -> Result<Option<String>, StoreError> {
        self.alive(owner, ttl).await?;
        // The row is locked first, so the owner read is the one replaced. (Two replicas
        // taking a lease no one held at the same instant both read none: the later one's
        // `give_back` then frees it rather than handing it to the other.)
        let mut client = self.db.client().await?;
        self.db.count_transaction();
        let tx = client.transaction().await.map_err(backend)?;
        tx.batch_execute("SET LOCAL synchronous_commit = off")
            .await
            .map_err(backend)?;
        let previous = tx
            .query_opt(
                "SELECT owner FROM a2a_leases WHERE task_id = $1 FOR UPDATE",
                &[&task.as_str()],
            )
            .await
            .map_err(backend)?
            .map(|row| row.get::<_, String>(0));
        tx.execute(
            "INSERT INTO a2a_leases (task_id, owner) VALUES ($1, $2)
             ON CONFLICT (task_id) DO UPDATE SET owner = excluded.owner, since = now()",
            &[&task.as_str(), &owner],
        )
        .await
        .map_err(backend)?;
        tx.commit().await.map_err(backend)?;
        Ok(previous)
    }

    async fn give_back(
        &self,
        task: &TaskId,
        owner: &str,
        previous: Option<&str>,
    ) -> Result<(), StoreError> {
        match previous {
            Some(previous) => {
                self.db
                    .execute(
                        relaxed!(
                            "UPDATE a2a_leases l SET owner = $3 FROM relaxed
                             WHERE l.task_id = $1 AND l.owner = $2"
                        ),
                        &[&task.as_str(), &owner, &previous],
                    )
                    .await?
            }
            None => self.release(task, owner).await.map(|()| 0)?,
        };
        Ok(())
    }

    async fn renew(&self, owner: &str, ttl: Duration) -> Result<(), StoreError> {
        // Measured before the request leaves: the row lives at least this long.
        let until = Instant::now() + ttl;
        self.db
            .execute(
                relaxed!(
                    "INSERT INTO a2a_replicas (id, expires)
                     SELECT $1::text, now() + make_interval(secs => $2::float8) FROM relaxed
                     ON CONFLICT (id) DO UPDATE SET expires = excluded.expires"
                ),
                &[&owner, &secs(ttl)],
            )
            .await?;
        self.alive_until
            .lock()
            .expect("lease lock")
            .insert(owner.to_owned(), until);
        Ok(())
    }

    fn database(&self) -> Option<u64> {
        Some(self.db.id())
    }

    async fn keep_alive(&self, owner: &str, ttl: Duration) -> Result<(), StoreError> {
        self.alive(owner, ttl).await
    }

    async fn held_by_others(
        &self,
        tasks: &[TaskId],
        owner: &str,
    ) -> Result<Vec<TaskId>, StoreError> {
        let ids: Vec<&str> = tasks.iter().map(TaskId::as_str).collect();
        Ok(self
            .db
            .query(
                "SELECT l.task_id FROM a2a_leases l JOIN a2a_replicas r ON r.id = l.owner
                 WHERE l.task_id = ANY($1) AND l.owner <> $2 AND r.expires > now()",
                &[&ids, &owner],
            )
            .await?
            .iter()
            .map(|row| TaskId::from(row.get::<_, &str>(0)))
            .collect())
    }

    async fn release(&self, task: &TaskId, owner: &str) -> Result<(), StoreError> {
        self.db
            .execute(
                relaxed!(
                    "DELETE FROM a2a_leases l USING relaxed WHERE l.task_id = $1 AND l.owner = $2"
                ),
                &[&task.as_str(), &owner],
            )
            .await?;
        Ok(())
    }
}
