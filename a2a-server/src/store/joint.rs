//! [`JointWrites`]: a store that keeps tasks, message claims and execution leases in one
//! database (PostgreSQL), so that a new task's first write records its message's claim and
//! takes its execution lease in the same transaction.
//!
//! The engine uses it only when its claims are the task store's own and its
//! [`Leases`](crate::Leases) name the same database ([`Leases::database`](crate::Leases::database)
//! equal to [`JointWrites::database`]). A new task is then written once, at its first reveal
//! (write-behind, see `engine/cell/outbox.rs`): claim, lease and the task with every change
//! made so far are one transaction, which commits durably before anyone is told of the task.
//!
//! The claim is checked by that write, not before the agent runs: a send of a message whose
//! claim is written already (a retry, or a duplicate on another replica that was written
//! first) runs the agent up to its first reveal, writes nothing, and is answered as a retry
//! of the send that holds the claim. An agent that acts outside the server calls
//! [`TaskEvents::flush`](crate::TaskEvents::flush) first, which is such a reveal.

use super::{BatchWrite, MessageClaim, Scope, StoreError};
use async_trait::async_trait;

/// What a [`JointWrites::create_joint`] did.
#[derive(Debug)]
pub enum JointCreate {
    /// The task was created, with its claim and lease as asked.
    Created,
    /// Another send holds the message's claim (committed first): nothing was written.
    ClaimTaken(MessageClaim),
}

/// A new task's first write with its message claim and its execution lease, in one
/// transaction (see the module docs).
#[async_trait]
pub trait JointWrites: Send + Sync {
    /// The database this store writes: equal to [`Leases::database`](crate::Leases::database)
    /// of leases kept in the same one.
    fn database(&self) -> u64;

    /// Records `claim` (a message reply) under `key` unless the key is taken, durably when it
    /// returns: [`ClaimStore::claim_message`](crate::store::ClaimStore::claim_message) for the
    /// first write of a send answered with a message. Returns the claim found if the key is
    /// taken (another send of the message was written first).
    async fn claim_reply(
        &self,
        key: &str,
        claim: &MessageClaim,
    ) -> Result<Option<MessageClaim>, StoreError>;

    /// Creates a task with its first changes (`changes[0]` creates it in `scope`, with no
    /// event; `changes[i]` is version `i + 1`), in one transaction with, when given, the
    /// message `claim` (`key` and record; if the key is taken, nothing is written and the
    /// claim found is returned) and the execution lease of the task for the owner
    /// `lease` (taken as [`Leases::acquire`](crate::Leases::acquire) would). Durable when it
    /// returns.
    async fn create_joint(
        &self,
        scope: &Scope,
        changes: &[BatchWrite<'_>],
        claim: Option<(&str, &MessageClaim)>,
        lease: Option<&str>,
    ) -> Result<JointCreate, StoreError>;
}
