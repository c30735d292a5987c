//! Background upkeep of the handler: start-up recovery (and webhook resumption) and retention.

use super::RequestHandler;
use crate::agent::RequestContext;
use a2a_core::{Error, Task};

impl RequestHandler {
    /// Start-up recovery: every task left SUBMITTED or WORKING by a previous process is handed
    /// to the agent's [`Agent::resume`](crate::Agent::resume) hook (by default: failed with a
    /// status message saying the server restarted); then the webhook deliveries it left
    /// pending are resumed (with push notifications on). Returns how many tasks it found.
    ///
    /// It runs once per handler, before any operation touches a task: the first operation (or
    /// the server's [upkeep](crate::Server::upkeep), whichever comes first) runs it and the
    /// others wait for it, so no request can open an orphaned task before it is claimed, and a
    /// server whose upkeep nobody runs still resumes its webhooks. Later calls return the first
    /// count. A store error while looking for orphaned tasks is returned, and the next call
    /// tries again; one while resuming webhooks is logged.
    pub async fn recover(&self) -> Result<usize, Error> {
        self.recovered
            .get_or_try_init(|| self.recover_orphans())
            .await
            .copied()
    }

    /// Waits until [`RequestHandler::recover`] has run (running it if nobody has yet).
    pub(super) async fn ready(&self) -> Result<(), Error> {
        if self.recovered.initialized() {
            return Ok(());
        }
        self.recover().await.map(drop)
    }

    async fn recover_orphans(&self) -> Result<usize, Error> {
        let n = self.claim_orphans().await?;
        if n > 0 {
            tracing::info!(tasks = n, "recovered tasks interrupted by a restart");
        }
        if let Some(pusher) = &self.rt.pusher
            && let Err(e) = pusher.resume_all().await
        {
            tracing::error!(error = %e, "resuming webhook deliveries failed");
        }
        Ok(n)
    }

    /// Hands every orphaned task to the agent's [`Agent::resume`](crate::Agent::resume) hook:
    /// a task left SUBMITTED or WORKING whose execution lease this engine could take (see
    /// [`Leases`](crate::Leases)). Without shared leases that is every such task not running
    /// here, as after a restart; with them, only those whose replica stopped renewing its lease,
    /// each taken by exactly one replica. The upkeep calls it periodically when leases are
    /// shared. It reads the active tasks a page at a time. Returns how many tasks it resumed.
    pub async fn claim_orphans(&self) -> Result<usize, Error> {
        const PAGE: usize = 256;
        let mut n = 0;
        let mut after: Option<a2a_core::TaskId> = None;
        loop {
            let page = self
                .rt
                .store
                .tasks_in_states(&ACTIVE, after.as_ref(), PAGE)
                .await?;
            let last_page = page.len() < PAGE;
            after = page.last().map(|t| t.task.id.clone());
            // One read for the page: the tasks other live replicas run are not tried.
            let ids: Vec<_> = page.iter().map(|t| t.task.id.clone()).collect();
            let elsewhere = self.rt.leased_elsewhere(&ids).await?;
            for stored in page {
                if elsewhere.contains(&stored.task.id) {
                    continue;
                }
                if self.claim_orphan(stored).await? {
                    n += 1;
                }
            }
            if last_page {
                return Ok(n);
            }
        }
    }

    /// Hands one SUBMITTED or WORKING task to the agent's `resume` hook unless it is worked
    /// on here or leased by a live replica. Returns whether it did.
    async fn claim_orphan(&self, stored: crate::store::StoredTask) -> Result<bool, Error> {
        let id = stored.task.id.clone();
        if self.rt.live_cell(&id).is_some() || !self.rt.lease(&id, false).await? {
            return Ok(false); // worked on here, or leased by a live replica
        }
        // Read again now that the lease is ours: another replica may have taken the lease,
        // resumed the task and finished it since the page was read (its lease then free again).
        let stored = match self.rt.store.get(&id).await? {
            Some(fresh) if is_active(&fresh) => fresh,
            _ => {
                self.rt.unlease(&id).await;
                return Ok(false);
            }
        };
        let task = Task::clone(&stored.task);
        let scope = stored.scope.clone();
        let cell = self.rt.cell_for(stored);
        let mut rcx = RequestContext::for_task(task, None).with_scope(scope);
        rcx.cancel = cell.cancel.clone();
        self.rt.spawn_resume(cell, rcx);
        Ok(true)
    }

    /// Retention: deletes terminal tasks (and their logs) whose status is older than `ttl`,
    /// and forgets message ids older than `dedup_window`. Returns how many tasks it deleted.
    pub async fn sweep(
        &self,
        ttl: Option<std::time::Duration>,
        dedup_window: std::time::Duration,
    ) -> Result<usize, Error> {
        let now = a2a_core::Timestamp::now().unix_millis();
        let ms = |d: std::time::Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
        let mut deleted = 0;
        if let Some(ttl) = ttl {
            let before = a2a_core::Timestamp::from_unix_millis(now.saturating_sub(ms(ttl)))
                .unwrap_or_else(a2a_core::Timestamp::now);
            loop {
                let ids = self.rt.store.terminal_before(before, 500).await?;
                let mut progressed = false;
                for id in &ids {
                    if self.rt.live_cell(id).is_none() && self.rt.store.delete(id).await? {
                        self.serialized.remove(id);
                        deleted += 1;
                        progressed = true;
                    }
                }
                if ids.len() < 500 || !progressed {
                    break;
                }
            }
        }
        self.rt
            .store
            .expire_claims(now.saturating_sub(ms(dedup_window)))
            .await?;
        if deleted > 0 {
            self.rt.store.sync().await?;
            tracing::info!(deleted, "retention removed expired tasks");
        }
        Ok(deleted)
    }
}

/// The states of the tasks recovery resumes.
const ACTIVE: [a2a_core::TaskState; 2] =
    [a2a_core::TaskState::Submitted, a2a_core::TaskState::Working];

/// Whether recovery resumes this task.
fn is_active(stored: &crate::store::StoredTask) -> bool {
    ACTIVE.contains(&stored.task.status.state)
}
