//! [`Upkeep`]: the server's background work (start-up recovery, webhook resumption, retention
//! sweeps), which [`Server::serve`] runs itself and which whoever mounts
//! [`Server::into_router`] spawns explicitly.

use super::{Maintenance, Server};
use crate::handler::RequestHandler;
use futures::future::BoxFuture;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// A server's background upkeep, as a future to spawn: start-up recovery of the tasks a previous
/// process left running and resumption of the webhook deliveries it left pending
/// ([`RequestHandler::recover`]), then, every minute, retention and the expiry of remembered
/// message ids ([`RequestHandler::sweep`]). It completes once [`Server::shutdown_token`] is
/// cancelled.
///
/// [`Server::serve`] runs it; spawn it yourself when you mount [`Server::into_router`] in your
/// own app:
///
/// ```no_run
/// # use a2a_core::Error;
/// # use a2a_server::{Agent, RequestContext, Server, TaskEvents};
/// # struct Echo;
/// # impl Agent for Echo {
/// #     async fn execute(&self, _: RequestContext, e: TaskEvents) -> Result<(), Error> { e.complete(None).await }
/// # }
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let server = Server::builder(Echo).public_url("http://127.0.0.1:8080").build()?;
/// tokio::spawn(server.upkeep());
/// let app = axum::Router::new().nest("/a2a", server.into_router());
/// # let _ = app;
/// # Ok(()) }
/// ```
///
/// Without it, nothing is lost but the sweeps: recovery and webhook resumption also run before
/// the first request is handled (every operation waits for them), so only finished tasks are
/// never deleted and remembered message ids never expire.
#[must_use = "the upkeep does nothing unless spawned (`tokio::spawn(server.upkeep())`) or awaited"]
pub struct Upkeep(BoxFuture<'static, ()>);

impl fmt::Debug for Upkeep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Upkeep").finish_non_exhaustive()
    }
}

impl Future for Upkeep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.0.as_mut().poll(cx)
    }
}

impl Server {
    /// The server's background upkeep ([`Upkeep`]): spawn it once (`tokio::spawn(server.upkeep())`)
    /// when you serve [`Server::into_router`] yourself. [`Server::serve`] runs it for you.
    pub fn upkeep(&self) -> Upkeep {
        Upkeep(Box::pin(maintain(
            self.state.handler.clone(),
            self.state.maintenance,
        )))
    }
}

/// Start-up recovery (with webhook resumption), then periodic retention and message-id expiry
/// (and, with shared leases, the heartbeat and the search for orphans), until shutdown.
async fn maintain(handler: Arc<RequestHandler>, m: Maintenance) {
    if let Err(e) = handler.recover().await {
        tracing::error!(error = %e, "start-up recovery failed");
    }
    if let Some(ttl) = m.lease_ttl {
        tokio::join!(sweep(&handler, m), replicate(&handler, ttl));
    } else {
        sweep(&handler, m).await;
    }
}

/// With shared leases: renews this replica's leases every third of their time to live, and
/// takes the orphans (tasks and webhook deliveries) of replicas that stopped renewing theirs
/// once per time to live.
async fn replicate(handler: &RequestHandler, ttl: std::time::Duration) {
    let shutdown = handler.rt.shutdown.clone();
    let mut beats = 0u32;
    // The first heartbeat at start: the replica is known alive before it holds any lease.
    if let Err(e) = handler.rt.heartbeat().await {
        tracing::error!(error = %e, "renewing execution leases failed");
    }
    loop {
        tokio::select! {
            () = tokio::time::sleep(ttl / 3) => {}
            () = shutdown.cancelled() => return,
        }
        if let Err(e) = handler.rt.heartbeat().await {
            tracing::error!(error = %e, "renewing execution leases failed");
        }
        beats += 1;
        if beats.is_multiple_of(3) {
            match handler.claim_orphans().await {
                Ok(0) => {}
                Ok(n) => tracing::info!(tasks = n, "resumed tasks of a replica that stopped"),
                Err(e) => tracing::error!(error = %e, "looking for orphaned tasks failed"),
            }
            // Webhooks too: a worker here takes over the deliveries of a replica whose delivery
            // lease expired (the delivery lease keeps every event posted once).
            if let Some(pusher) = &handler.rt.pusher
                && let Err(e) = pusher.resume_all().await
            {
                tracing::error!(error = %e, "resuming webhook deliveries failed");
            }
        }
    }
}

/// Retention and message-id expiry, every sweep interval.
async fn sweep(handler: &RequestHandler, m: Maintenance) {
    let shutdown = handler.rt.shutdown.clone();
    loop {
        tokio::select! {
            () = tokio::time::sleep(m.sweep_interval) => {}
            () = shutdown.cancelled() => return,
        }
        if let Err(e) = handler.sweep(m.retention, m.dedup_window).await {
            tracing::error!(error = %e, "retention sweep failed");
        }
    }
}
