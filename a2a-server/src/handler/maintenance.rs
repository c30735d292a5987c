//! Background upkeep of the handler: start-up recovery (and webhook resumption) and retention.

use super::RequestHandler;
use a2a_core::Error;

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
        // Boxed: it runs once, and inline it would make every send's future larger.
        Box::pin(self.recover()).await.map(drop)
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
        self.rt.resume_orphans().await
    }

    /// Retention: deletes terminal tasks (and their logs) whose status is older than `ttl`,
    /// and forgets message ids older than `dedup_window`. Returns how many tasks it deleted.
    pub async fn sweep(
        &self,
        ttl: Option<std::time::Duration>,
        dedup_window: std::time::Duration,
    ) -> Result<usize, Error> {
        let deleted = (self.rt)
            .sweep(ttl, dedup_window, |id| self.serialized.remove(id))
            .await?;
        if deleted > 0 {
            tracing::info!(deleted, "retention removed expired tasks");
        }
        Ok(deleted)
    }
}
