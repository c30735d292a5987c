//! Long-poll `GetTask` (A2A 1.1): a `GetTask` with `currentGeneration` N is answered once the
//! task's generation (its stored version, the sequence number of its last event) is past N.
//!
//! The wait is woken by the [`EventBus`](crate::EventBus), which carries every stored write of
//! every replica, so a change made on one replica answers a request held on another, and
//! nothing reads the store on a timer. It is bounded twice: each request waits at most
//! [`LongPoll::wait`] (then gets the task as it is, as the spec allows), and at most
//! [`LongPoll::max_held`] requests wait at once (a request beyond that is answered at once).
//! A task already past N, or ended, is answered at once too: an ended task never changes.

use super::{CallContext, RequestHandler};
use crate::store::StoredTask;
use a2a_core::{Error, TaskId};
use futures::StreamExt as _;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// How long a long-poll `GetTask` is held at most, by default.
pub const DEFAULT_LONG_POLL_WAIT: Duration = Duration::from_secs(30);
/// How many long-poll `GetTask` requests are held at once at most, by default.
pub const DEFAULT_MAX_LONG_POLLS: usize = 4096;

/// The bounds of long-poll `GetTask` (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct LongPoll {
    /// The longest a request is held.
    pub(crate) wait: Duration,
    /// How many requests may be held at once.
    pub(crate) max_held: usize,
    held: Arc<Semaphore>,
}

impl LongPoll {
    pub(crate) fn new(wait: Duration, max_held: usize) -> Self {
        Self {
            wait,
            max_held,
            held: Arc::new(Semaphore::new(max_held)),
        }
    }
}

impl Default for LongPoll {
    fn default() -> Self {
        Self::new(DEFAULT_LONG_POLL_WAIT, DEFAULT_MAX_LONG_POLLS)
    }
}

impl RequestHandler {
    /// The task `id` once its generation is past `after`: at once if it is already, or it has
    /// ended, or the cap on held requests is reached; else when the bus announces a write past
    /// `after`, or when the wait is over or the server shuts down (the task as it is then).
    pub(super) async fn load_past(
        &self,
        cx: &CallContext,
        id: &TaskId,
        after: u64,
    ) -> Result<StoredTask, Error> {
        // Subscribed before the read: a write after it is announced to this subscription.
        let mut notices = self.rt.bus.subscribe(id);
        let stored = self.load(cx, id).await?;
        if stored.version > after || stored.task.status.state.is_terminal() {
            return Ok(stored);
        }
        let Ok(_held) = self.long_poll.held.clone().try_acquire_owned() else {
            tracing::debug!(task = %id, max = self.long_poll.max_held, "long poll answered at once: too many held");
            return Ok(stored);
        };
        let deadline = tokio::time::Instant::now() + self.long_poll.wait;
        let shutdown = &self.rt.shutdown;
        loop {
            tokio::select! {
                biased;
                () = shutdown.cancelled() => break,
                () = tokio::time::sleep_until(deadline) => break,
                notice = notices.next() => match notice {
                    Some(seq) if seq <= after => {}
                    Some(_) => {
                        let fresh = self.load(cx, id).await?;
                        if fresh.version > after || fresh.task.status.state.is_terminal() {
                            return Ok(fresh);
                        }
                    }
                    // The bus dropped the subscription: wait out the deadline.
                    None => notices = Box::pin(futures::stream::pending()),
                },
            }
        }
        self.load(cx, id).await
    }
}
