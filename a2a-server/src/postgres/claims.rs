//! [`ClaimStore`] on PostgreSQL: `a2a_claims`, by key, with an index by receipt time.

use super::{PgStore, backend, json_opt};
use crate::store::{ClaimStore, MessageClaim, StoreError};
use a2a_core::{Message, TaskId};
use async_trait::async_trait;
use tokio_postgres::types::Json;

impl PgStore {
    /// `ClaimStore::claim_message`; with `durable`, committed durably (a claim that is the
    /// first write of its send, see `JointWrites::claim_reply`), else without waiting for the
    /// flush (a later durable write of the send covers it, see `relaxed!`).
    pub(super) async fn take_claim(
        &self,
        key: &str,
        claim: &MessageClaim,
        durable: bool,
    ) -> Result<Option<MessageClaim>, StoreError> {
        let reply = json_opt(claim.reply.as_ref())?;
        let sql = if durable {
            "INSERT INTO a2a_claims (key, task_id, reply, received_ms)
             VALUES ($1, $2, $3::text::json, $4)
             ON CONFLICT (key) DO NOTHING"
        } else {
            relaxed!(
                "INSERT INTO a2a_claims (key, task_id, reply, received_ms)
                 SELECT $1::text, $2::text, $3::text::json, $4::bigint FROM relaxed
                 ON CONFLICT (key) DO NOTHING"
            )
        };
        loop {
            let params: [&(dyn tokio_postgres::types::ToSql + Sync); 4] =
                [&key, &claim.task_id.as_str(), &reply, &claim.received_ms];
            if self.db.execute(sql, &params).await? == 1 {
                return Ok(None);
            }
            // Taken. Read it in a statement of its own: the insert waited for the claim's
            // writer to commit, and only a later statement sees what it committed.
            if let Some(taken) = self.find_claim(key).await? {
                return Ok(Some(taken));
            }
            // Released in between: claim it again.
        }
    }

    /// The claim under `key`, if any.
    pub(super) async fn find_claim(&self, key: &str) -> Result<Option<MessageClaim>, StoreError> {
        let row = self
            .db
            .query_opt(
                "SELECT task_id, reply, received_ms FROM a2a_claims WHERE key = $1",
                &[&key],
            )
            .await?;
        row.map(|row| {
            let reply: Option<Json<Message>> = row.try_get(1).map_err(backend)?;
            Ok(MessageClaim {
                task_id: TaskId::from(row.get::<_, &str>(0)),
                reply: reply.map(|r| r.0),
                received_ms: row.get(2),
            })
        })
        .transpose()
    }
}

#[async_trait]
impl ClaimStore for PgStore {
    async fn claim_message(
        &self,
        key: &str,
        claim: MessageClaim,
    ) -> Result<Option<MessageClaim>, StoreError> {
        self.take_claim(key, &claim, false).await
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
