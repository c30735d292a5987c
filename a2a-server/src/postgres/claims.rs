//! [`ClaimStore`] on PostgreSQL: `a2a_claims`, by key, with an index by receipt time.

use super::{PgStore, backend, json_opt};
use crate::store::{ClaimStore, MessageClaim, StoreError};
use a2a_core::{Message, TaskId};
use async_trait::async_trait;
use tokio_postgres::types::Json;

#[async_trait]
impl ClaimStore for PgStore {
    async fn claim_message(
        &self,
        key: &str,
        claim: MessageClaim,
    ) -> Result<Option<MessageClaim>, StoreError> {
        let reply = json_opt(claim.reply.as_ref())?;
        loop {
            let inserted = self
                .db
                .execute(
                    relaxed!(
                        "INSERT INTO a2a_claims (key, task_id, reply, received_ms)
                         SELECT $1::text, $2::text, $3::text::json, $4::bigint FROM relaxed
                         ON CONFLICT (key) DO NOTHING"
                    ),
                    &[&key, &claim.task_id.as_str(), &reply, &claim.received_ms],
                )
                .await?;
            if inserted == 1 {
                return Ok(None);
            }
            // Taken. Read it in a statement of its own: the insert waited for the claim's
            // writer to commit, and only a later statement sees what it committed.
            let taken = self
                .db
                .query_opt(
                    "SELECT task_id, reply, received_ms FROM a2a_claims WHERE key = $1",
                    &[&key],
                )
                .await?;
            if let Some(row) = taken {
                let reply: Option<Json<Message>> = row.try_get(1).map_err(backend)?;
                return Ok(Some(MessageClaim {
                    task_id: TaskId::from(row.get::<_, &str>(0)),
                    reply: reply.map(|r| r.0),
                    received_ms: row.get(2),
                }));
            }
            // Released in between: claim it again.
        }
    }

    async fn update_claim(&self, key: &str, claim: MessageClaim) -> Result<(), StoreError> {
        let reply = json_opt(claim.reply.as_ref())?;
        self.db
            .execute(
                "INSERT INTO a2a_claims (key, task_id, reply, received_ms)
                 VALUES ($1, $2, $3::text::json, $4)
                 ON CONFLICT (key) DO UPDATE SET task_id = excluded.task_id,
                     reply = excluded.reply, received_ms = excluded.received_ms",
                &[&key, &claim.task_id.as_str(), &reply, &claim.received_ms],
            )
            .await?;
        Ok(())
    }

    async fn release_claim(&self, key: &str) -> Result<(), StoreError> {
        self.db
            .execute("DELETE FROM a2a_claims WHERE key = $1", &[&key])
            .await?;
        Ok(())
    }

    async fn expire_claims(&self, before_ms: i64) -> Result<usize, StoreError> {
        // Served by the index by receipt time: only the expired claims are read.
        let n = self
            .db
            .execute(
                relaxed!("DELETE FROM a2a_claims c USING relaxed WHERE c.received_ms < $1"),
                &[&before_ms],
            )
            .await?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }
}
