//! Execution leases: which replica runs a task's agent.

use super::{Engine, TakenLease};
use crate::store::{FastMap, StoreError};
use a2a_core::{Error, TaskId};
use async_trait::async_trait;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// The engine's steps on its execution leases.
impl Engine {
    /// Takes the execution lease of `id` unless another live replica holds it. Returns
    /// whether this engine may run the task's agent; always true without shared leases.
    pub(super) async fn lease(&self, id: &TaskId) -> Result<bool, Error> {
        let Some(r) = &self.replication else {
            return Ok(true);
        };
        Ok(r.leases.acquire(id, &r.owner, r.ttl).await?)
    }

    /// Takes the execution lease of `id` whoever holds it, for a continuation. Returns the
    /// lease as it was, for [`Engine::give_back_lease`] (`None` without shared leases).
    pub(super) async fn take_over_lease(&self, id: &TaskId) -> Result<Option<TakenLease>, Error> {
        let Some(r) = &self.replication else {
            return Ok(None);
        };
        let previous = r.leases.take_over(id, &r.owner, r.ttl).await?;
        Ok(Some(TakenLease { previous }))
    }

    /// Gives a lease taken over for a refused continuation back to whoever held it, if this
    /// engine still holds it; a failure is logged (the lease then stays with this replica).
    pub(super) async fn give_back_lease(&self, id: &TaskId, taken: TakenLease) {
        let Some(r) = &self.replication else {
            return;
        };
        if let Err(e) = r
            .leases
            .give_back(id, &r.owner, taken.previous.as_deref())
            .await
        {
            tracing::warn!(task = %id, error = %e, "could not give a lease back");
        }
    }

    /// Of `tasks`, those leased by another live replica (none without shared leases).
    pub(super) async fn leased_elsewhere(&self, tasks: &[TaskId]) -> Result<Vec<TaskId>, Error> {
        match &self.replication {
            Some(r) => Ok(r.leases.held_by_others(tasks, &r.owner).await?),
            None => Ok(Vec::new()),
        }
    }

    /// Renews every lease this engine holds (the heartbeat, from the upkeep).
    pub(crate) async fn heartbeat(&self) -> Result<(), Error> {
        if let Some(r) = &self.replication {
            r.leases.renew(&r.owner, r.ttl).await?;
        }
        Ok(())
    }

    /// Gives up this engine's lease of `id` (a no-op without shared leases).
    pub(super) async fn unlease(&self, id: &TaskId) {
        if let Some(r) = &self.replication
            && let Err(e) = r.leases.release(id, &r.owner).await
        {
            tracing::warn!(task = %id, error = %e, "could not give up an execution lease");
        }
    }
}

/// Who runs each task's agent, when several replicas share one task store.
///
/// An engine takes a task's lease before its agent runs (a new task, a continuation, a
/// recovered orphan), renews every lease it holds from its upkeep (the heartbeat,
/// [`Server::upkeep`](crate::Server::upkeep)), and gives the lease up when the execution
/// ends. A task that is SUBMITTED or WORKING with no lease, or with an expired one, is an
/// orphan: its replica died. Recovery resumes only orphans, and only the replica whose
/// [`Leases::acquire`] succeeds, so each orphan exactly once.
///
/// Without shared leases (the default), the one engine owns every task: start-up recovery
/// resumes every active task, as a single process should.
#[async_trait]
pub trait Leases: Send + Sync + 'static {
    /// Takes the lease of `task` for `owner` until `ttl` from now, unless another owner holds
    /// one that has not expired. Returns whether `owner` holds it now.
    async fn acquire(&self, task: &TaskId, owner: &str, ttl: Duration) -> Result<bool, StoreError>;

    /// Takes the lease of `task` for `owner` whoever holds it: a client continued the task,
    /// which was waiting for input, so whatever ran it before has paused. Returns the owner
    /// it was taken from (`None` when no one held it), for [`Leases::give_back`].
    async fn take_over(
        &self,
        task: &TaskId,
        owner: &str,
        ttl: Duration,
    ) -> Result<Option<String>, StoreError>;

    /// Gives the lease of `task` back to `previous` (or frees it when `None`), if `owner`
    /// still holds it: `owner` took it over for a message the task then refused (it was not
    /// waiting for one, or another continuation won), so the replica that held it before
    /// goes on holding it. If another owner has taken it since, nothing changes.
    async fn give_back(
        &self,
        task: &TaskId,
        owner: &str,
        previous: Option<&str>,
    ) -> Result<(), StoreError>;

    /// Extends every lease `owner` holds to `ttl` from now (the heartbeat).
    async fn renew(&self, owner: &str, ttl: Duration) -> Result<(), StoreError>;

    /// Gives up the lease of `task`, if `owner` holds it.
    async fn release(&self, task: &TaskId, owner: &str) -> Result<(), StoreError>;

    /// The database these leases are kept in, when a task store can take a lease in the same
    /// transaction as its own writes: equal to that store's
    /// [`JointWrites::database`](crate::store::JointWrites::database). The default is `None`
    /// (leases of their own), and the engine takes each lease with [`Leases::acquire`].
    fn database(&self) -> Option<u64> {
        None
    }

    /// Makes sure `owner` stays alive for a while yet (a third of `ttl` at least), so that a
    /// lease a joint write takes for it now is not taken for an orphan's at once. The default
    /// does nothing.
    async fn keep_alive(&self, owner: &str, ttl: Duration) -> Result<(), StoreError> {
        let _ = (owner, ttl);
        Ok(())
    }

    /// Of `tasks`, those whose lease an owner other than `owner` holds and has not let expire:
    /// the search for orphans skips them without trying to take each (one read for a page of
    /// active tasks, where [`Leases::acquire`] is a write per task). The default knows nothing
    /// (an empty list), so that every task is tried.
    async fn held_by_others(
        &self,
        tasks: &[TaskId],
        owner: &str,
    ) -> Result<Vec<TaskId>, StoreError> {
        let _ = (tasks, owner);
        Ok(Vec::new())
    }
}

#[derive(Clone, Debug)]
struct Lease {
    owner: Arc<str>,
    expires: Instant,
}

/// [`Leases`] in this process's memory, for engines that share a store within one process
/// (tests of several replicas). Nothing survives a restart, which is right for a single
/// process: after one, every lease is gone and every active task is an orphan.
#[derive(Debug, Default)]
pub struct LocalLeases {
    leases: Mutex<FastMap<TaskId, Lease>>,
}

impl LocalLeases {
    /// No leases.
    pub fn new() -> Self {
        Self::default()
    }

    /// Who holds the lease of `task`, if anyone holds one that has not expired.
    pub fn holder(&self, task: &TaskId) -> Option<String> {
        let leases = self.leases.lock().expect("lease lock");
        leases
            .get(task)
            .filter(|l| l.expires > Instant::now())
            .map(|l| l.owner.to_string())
    }
}

#[async_trait]
impl Leases for LocalLeases {
    async fn acquire(&self, task: &TaskId, owner: &str, ttl: Duration) -> Result<bool, StoreError> {
        let now = Instant::now();
        let mut leases = self.leases.lock().expect("lease lock");
        if let Some(held) = leases.get(task)
            && &*held.owner != owner
            && held.expires > now
        {
            return Ok(false);
        }
        leases.insert(
            task.clone(),
            Lease {
                owner: owner.into(),
                expires: now + ttl,
            },
        );
        Ok(true)
    }

    async fn take_over(
        &self,
        task: &TaskId,
        owner: &str,
        ttl: Duration,
    ) -> Result<Option<String>, StoreError> {
        let lease = Lease {
            owner: owner.into(),
            expires: Instant::now() + ttl,
        };
        let previous = self
            .leases
            .lock()
            .expect("lease lock")
            .insert(task.clone(), lease);
        Ok(previous.map(|l| l.owner.to_string()))
    }

    async fn give_back(
        &self,
        task: &TaskId,
        owner: &str,
        previous: Option<&str>,
    ) -> Result<(), StoreError> {
        let mut leases = self.leases.lock().expect("lease lock");
        let Some(held) = leases.get_mut(task).filter(|l| &*l.owner == owner) else {
            return Ok(());
        };
        match previous {
            // Its expiry stays: the previous owner's heartbeat renews it, or it lapses.
            Some(previous) => held.owner = previous.into(),
            None => {
                leases.remove(task);
            }
        }
        Ok(())
    }

    async fn renew(&self, owner: &str, ttl: Duration) -> Result<(), StoreError> {
        let expires = Instant::now() + ttl;
        let mut leases = self.leases.lock().expect("lease lock");
        for lease in leases.values_mut().filter(|l| &*l.owner == owner) {
            lease.expires = expires;
        }
        Ok(())
    }

    async fn release(&self, task: &TaskId, owner: &str) -> Result<(), StoreError> {
        let mut leases = self.leases.lock().expect("lease lock");
        if leases.get(task).is_some_and(|l| &*l.owner == owner) {
            leases.remove(task);
        }
        Ok(())
    }

    async fn held_by_others(
        &self,
        tasks: &[TaskId],
        owner: &str,
    ) -> Result<Vec<TaskId>, StoreError> {
        let now = Instant::now();
        let leases = self.leases.lock().expect("lease lock");
        Ok(tasks
            .iter()
            .filter(|t| {
                leases
                    .get(*t)
                    .is_some_and(|l| &*l.owner != owner && l.expires > now)
            })
            .cloned()
            .collect())
    }
}
