//! [`EventBus`]: what the engines of several replicas sharing one task store tell each other,
//! and [`LocalBus`], the in-process implementation.

use crate::store::FastMap;
use a2a_core::TaskId;
use futures::stream::BoxStream;
use std::pin::Pin;
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::broadcast;

/// Called with the task a cancel request names (see [`EventBus::on_cancel`]).
pub type CancelHandler = Arc<dyn Fn(&TaskId) + Send + Sync>;

/// How the engines of the replicas that share one task store tell each other about tasks.
///
/// A notification only says "task T's log reached sequence number N": a subscriber reads the
/// log after its own cursor when it hears one. A lost, late or coalesced notification can
/// therefore delay an event but never lose or reorder one (subscribers also re-read the log
/// every few seconds), so an implementation may be best-effort (PostgreSQL's `NOTIFY`, a
/// broker's pub/sub).
///
/// The engine publishes after every stored write; streams of a task that no execution on their
/// replica is writing subscribe. The bus also carries cancel requests: `CancelTask` stores the
/// CANCELED state wherever it lands, then asks every replica to stop the agent running the task.
pub trait EventBus: Send + Sync + 'static {
    /// Tells the subscribers of `task`, on every replica, that its log now reaches `seq`.
    /// Called after the write is stored; must not block.
    fn publish(&self, task: &TaskId, seq: u64);

    /// The notifications of `task` from now on, as the sequence numbers its log reached.
    fn subscribe(&self, task: &TaskId) -> BoxStream<'static, u64>;

    /// Asks every replica to stop its execution of `task`, if it runs one.
    fn request_cancel(&self, task: &TaskId);

    /// Registers a replica's handler of cancel requests (each engine registers one when built).
    fn on_cancel(&self, handler: CancelHandler);

    /// How often a subscriber reads the log even without a notification, in case one was lost
    /// (default 2 s). A bus that never loses one unnoticed (it wakes every subscriber whenever
    /// it may have missed some, as `PgBus` does after its listener reconnects) can make it long.
    fn poll_interval(&self) -> Duration {
        Duration::from_secs(2)
    }
}

type Topics = FastMap<TaskId, broadcast::Sender<u64>>;

/// How many notifications a subscriber may fall behind; one that falls further re-reads the
/// log, which the notifications only point to.
const CAPACITY: usize = 16;

/// The in-process [`EventBus`]: one broadcast channel per task that has subscribers. The
/// default of every server; engines built with the same `LocalBus` (tests of several replicas
/// in one process) hear each other.
#[derive(Default)]
pub struct LocalBus {
    /// Read-locked by every write's notification, write-locked only to add or drop a task's
    /// channel.
    topics: Arc<RwLock<Topics>>,
    cancel_handlers: Mutex<Vec<CancelHandler>>,
}

impl std::fmt::Debug for LocalBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalBus").finish_non_exhaustive()
    }
}

impl LocalBus {
    /// A bus with no subscribers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Wakes every subscriber to re-read its task's log (notifications may have been lost).
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) fn wake_all(&self) {
        let topics = self.topics.read().expect("bus lock");
        for tx in topics.values() {
            let _ = tx.send(u64::MAX);
        }
    }
}

impl EventBus for LocalBus {
    fn publish(&self, task: &TaskId, seq: u64) {
        let topics = self.topics.read().expect("bus lock");
        if let Some(tx) = topics.get(task) {
            let _ = tx.send(seq);
        }
    }

    fn subscribe(&self, task: &TaskId) -> BoxStream<'static, u64> {
        let rx = self
            .topics
            .write()
            .expect("bus lock")
            .entry(task.clone())
            .or_insert_with(|| broadcast::channel(CAPACITY).0)
            .subscribe();
        Box::pin(Subscription {
            rx: tokio_util::sync::ReusableBoxFuture::new(recv(rx)),
            task: task.clone(),
            topics: Arc::downgrade(&self.topics),
        })
    }

    fn request_cancel(&self, task: &TaskId) {
        let handlers = self.cancel_handlers.lock().expect("bus lock").clone();
        for handler in handlers {
            handler(task);
        }
    }

    fn on_cancel(&self, handler: CancelHandler) {
        self.cancel_handlers.lock().expect("bus lock").push(handler);
    }
}

type Received = (
    Result<u64, broadcast::error::RecvError>,
    broadcast::Receiver<u64>,
);

async fn recv(mut rx: broadcast::Receiver<u64>) -> Received {
    let r = rx.recv().await;
    (r, rx)
}

/// A [`LocalBus`] subscription; the last one of a task removes the task's channel.
struct Subscription {
    rx: tokio_util::sync::ReusableBoxFuture<'static, Received>,
    task: TaskId,
    topics: Weak<RwLock<Topics>>,
}

impl futures::Stream for Subscription {
    type Item = u64;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<u64>> {
        use broadcast::error::RecvError;
        let (result, rx) = futures::ready!(self.rx.poll(cx));
        self.rx.set(recv(rx));
        Poll::Ready(match result {
            Ok(seq) => Some(seq),
            // Missed notifications: any later number says as much (read the log).
            Err(RecvError::Lagged(_)) => Some(u64::MAX),
            Err(RecvError::Closed) => None,
        })
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let Some(topics) = self.topics.upgrade() else {
            return;
        };
        let mut topics = topics.write().expect("bus lock");
        // This subscription's receiver still counts until the future holding it drops, so the
        // channel is unused when only it remains.
        if topics
            .get(&self.task)
            .is_some_and(|tx| tx.receiver_count() <= 1)
        {
            topics.remove(&self.task);
        }
    }
}
