//! The engine's background work: resuming orphaned tasks (after a restart, or a replica that
//! stopped renewing its leases) and retention.

use super::Engine;
use crate::agent::RequestContext;
use crate::store::StoredTask;
use a2a_core::{Error, Task, TaskId, TaskState, Timestamp};
use std::sync::Arc;
use std::time::Duration;

/// The states of the tasks recovery resumes.
const ACTIVE: [TaskState; 2] = [TaskState::Submitted, TaskState::Working];

/// How many tasks recovery reads at a time, and retention deletes at a time.
const PAGE: usize = 256;

/// How many expired tasks retention reads at a time.
const RETENTION_PAGE: usize = 500;

/// Whether recovery resumes this task.
fn is_active(stored: &StoredTask) -> bool {
    ACTIVE.contains(&stored.task.status.state)
}

impl Engine {
    /// Hands every orphaned task to the agent's `resume` hook: a task left SUBMITTED or
    /// WORKING whose execution lease this engine could take. It reads the active tasks a page
    /// at a time. Returns how many tasks it resumed.
    pub(crate) async fn resume_orphans(self: &Arc<Self>) -> Result<usize, Error> {
        let mut n = 0;
        let mut after: Option<TaskId> = None;
        loop {
            let page = self
                .store
                .tasks_in_states(&ACTIVE, after.as_ref(), PAGE)
                .await?;
            let last_page = page.len() < PAGE;
            after = page.last().map(|t| t.task.id.clone());
            // One read for the page: the tasks other live replicas run are not tried.
            let ids: Vec<_> = page.iter().map(|t| t.task.id.clone()).collect();
            let elsewhere = self.leased_elsewhere(&ids).await?;
            for stored in page {
                if elsewhere.contains(&stored.task.id) {
                    continue;
                }
                if self.resume_orphan(stored).await? {
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
    async fn resume_orphan(self: &Arc<Self>, stored: StoredTask) -> Result<bool, Error> {
        let id = stored.task.id.clone();
        if self.live_cell(&id).is_some() || !self.lease(&id).await? {
            return Ok(false); // worked on here, or leased by a live replica
        }
        // Read again now that the lease is ours: another replica may have taken the lease,
        // resumed the task and finished it since the page was read (its lease then free again).
        let stored = match self.store.get(&id).await? {
            Some(fresh) if is_active(&fresh) => fresh,
            _ => {
                self.unlease(&id).await;
                return Ok(false);
            }
        };
        let task = Task::clone(&stored.task);
        let scope = stored.scope.clone();
        let cell = self.cell_for(stored);
        let mut rcx = RequestContext::for_task(task, None).with_scope(scope);
        rcx.cancel = cell.cancel.clone();
        self.spawn_resume(cell, rcx);
        Ok(true)
    }

    /// Retention: deletes terminal tasks (and their logs) whose status is older than `ttl`,
    /// unless worked on here, calling `deleted` with each; and forgets message claims older
    /// than `dedup_window`. Returns how many tasks it deleted.
    pub(crate) async fn sweep(
        &self,
        ttl: Option<Duration>,
        dedup_window: Duration,
        mut deleted: impl FnMut(&TaskId),
    ) -> Result<usize, Error> {
        let now = Timestamp::now().unix_millis();
        let ms = |d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
        let mut n = 0;
        if let Some(ttl) = ttl {
            let before = Timestamp::from_unix_millis(now.saturating_sub(ms(ttl)))
                .unwrap_or_else(Timestamp::now);
            loop {
                let ids = self.store.terminal_before(before, RETENTION_PAGE).await?;
                let mut progressed = false;
                for id in &ids {
                    if self.live_cell(id).is_none() && self.store.delete(id).await? {
                        deleted(id);
                        n += 1;
                        progressed = true;
                    }
                }
                if ids.len() < RETENTION_PAGE || !progressed {
                    break;
                }
            }
        }
        if let Some(claims) = &self.claims {
            claims
                .expire_claims(now.saturating_sub(ms(dedup_window)))
                .await?;
        }
        if n > 0 {
            self.store.sync().await?;
        }
        Ok(n)
    }
}
