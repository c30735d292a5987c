//! [`JointWrites`] on PostgreSQL: a new task's first write, its message claim and its
//! execution lease as one statement, so one transaction, committed durably.
//!
//! The statement inserts the claim (`ON CONFLICT DO NOTHING`), then the task's row and log
//! only if the claim was inserted, then the lease only if the task was. An insert of a claim
//! that another transaction holds waits for that transaction, so of two sends of one message
//! on two replicas exactly one writes its task; the other writes nothing, reads the claim in a
//! statement of its own (which sees what the first committed) and answers as a retry.

use super::tasks::created_event;
use super::{PgStore, backend_msg, int, json};
use crate::store::{
    BatchWrite, JointCreate, JointWrites, MessageClaim, Scope, StoreError, status_millis,
};
use async_trait::async_trait;

/// The first write: claim (if `$9` is set), task row, log, lease (if `$13` is set).
const CREATE_JOINT: &str = "WITH c AS (
         INSERT INTO a2a_claims (key, task_id, reply, received_ms)
         SELECT $9::text, $1::text, NULL, $10::bigint WHERE $9::text IS NOT NULL
         ON CONFLICT (key) DO NOTHING
         RETURNING key),
     t AS (
         INSERT INTO a2a_tasks (id, context_id, tenant, owner, state, status_ms, version,
                                snapshot_version, snapshot)
         SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::bigint, $7::bigint,
                $7::bigint, $8::text::json
         WHERE $9::text IS NULL OR EXISTS (SELECT 1 FROM c)
         RETURNING id),
     e AS (
         INSERT INTO a2a_events (task_id, seq, event)
         SELECT t.id, x.seq, x.event::json
         FROM t, unnest($11::bigint[], $12::text[]) AS x(seq, event)),
     l AS (
         INSERT INTO a2a_leases AS l (task_id, owner)
         SELECT t.id, $13::text FROM t WHERE $13::text IS NOT NULL
         ON CONFLICT (task_id) DO UPDATE SET owner = excluded.owner, since = now()
         WHERE l.owner = excluded.owner
            OR NOT EXISTS (SELECT 1 FROM a2a_replicas r
                           WHERE r.id = l.owner AND r.expires > now()))
     SELECT count(*) FROM t";

#[async_trait]
impl JointWrites for PgStore {
    fn database(&self) -> u64 {
        self.db.id()
    }

    async fn claim_reply(
        &self,
        key: &str,
        claim: &MessageClaim,
    ) -> Result<Option<MessageClaim>, StoreError> {
        self.take_claim(key, claim, true).await
    }

    async fn create_joint(
        &self,
        scope: &Scope,
        changes: &[BatchWrite<'_>],
        claim: Option<(&str, &MessageClaim)>,
        lease: Option<&str>,
    ) -> Result<JointCreate, StoreError> {
        let (Some(first), Some(last)) = (changes.first(), changes.last()) else {
            return Ok(JointCreate::Created);
        };
        if first.event.is_some() || changes[1..].iter().any(|c| c.event.is_none()) {
            return Err(StoreError::AlreadyExists(first.task.id.clone()));
        }
        // The log: the task as created, then each change's event; the row's snapshot is the
        // last task, which is the fold of them all.
        let task = last.task;
        let snapshot = json(&**task)?;
        let mut seqs = Vec::with_capacity(changes.len());
        let mut events = Vec::with_capacity(changes.len());
        for (i, change) in changes.iter().enumerate() {
            seqs.push(int(i as u64 + 1));
            events.push(match change.event {
                None if changes.len() == 1 => created_event(&snapshot),
                None => created_event(&json(&**change.task)?),
                Some(event) => json(event)?,
            });
        }
        let version = int(changes.len() as u64);
        let (key, received_ms) = match claim {
            Some((key, claim)) => (Some(key), claim.received_ms),
            None => (None, 0),
        };
        // A claim taken, then released before it could be read: tried again (a few times).
        for _ in 0..3 {
            let row = self
                .db
                .query_one(
                    CREATE_JOINT,
                    &[
                        &task.id.as_str(),
                        &task.context_id.as_str(),
                        &scope.tenant,
                        &scope.owner,
                        &task.status.state.as_str(),
                        &status_millis(task),
                        &version,
                        &snapshot,
                        &key,
                        &received_ms,
                        &seqs,
                        &events,
                        &lease,
                    ],
                )
                .await?;
            if row.get::<_, i64>(0) == 1 {
                return Ok(JointCreate::Created);
            }
            let Some(key) = key else {
                return Err(StoreError::AlreadyExists(task.id.clone()));
            };
            // The claim is taken: read in a statement of its own, which sees its commit.
            if let Some(claim) = self.find_claim(key).await? {
                return Ok(JointCreate::ClaimTaken(claim));
            }
        }
        Err(backend_msg(format!(
            "task {}: its message's claim kept being taken and released",
            task.id
        )))
    }
}
