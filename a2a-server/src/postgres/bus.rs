//! [`PgBus`]: the replicas' [`EventBus`] over PostgreSQL's `LISTEN`/`NOTIFY`.

use super::backend;
use super::db::Db;
use crate::engine::{CancelHandler, EventBus, LocalBus};
use crate::store::StoreError;
use a2a_core::TaskId;
use futures::stream::BoxStream;
use std::sync::Arc;
use std::time::Duration;
use tokio_postgres::{AsyncMessage, NoTls};
use tokio_util::sync::{CancellationToken, DropGuard};

/// How often the listening connection proves it is alive; a check that takes longer than
/// this counts as a lost connection.
const PING_EVERY: Duration = Duration::from_secs(5);

/// How often a follower reads the log without a notification (see
/// [`EventBus::poll_interval`]).
const SAFETY_POLL: Duration = Duration::from_secs(30);

/// The longest wait between two attempts to listen again.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// The [`EventBus`] of replicas sharing a [`PgStore`](super::PgStore), from
/// [`PgStore::event_bus`](super::PgStore::event_bus).
///
/// **Wake-ups.** After each write commits, the engine publishes the task id and the sequence
/// number it reached; a notifier sends them as `NOTIFY`, many in one statement when writes come
/// faster than one round trip (the latest per task). Each process keeps one connection
/// listening, and fans what it hears out to its subscribers in process (a [`LocalBus`]). A
/// notification is only a wake-up: subscribers read the log after their own cursor.
///
/// Why not `NOTIFY` inside each write's transaction: PostgreSQL holds one database-wide lock
/// from a notifying transaction's commit until its WAL is flushed, so notifying writes commit
/// one at a time instead of sharing flushes; measured on SendMessage, that halved throughput
/// (bench/HISTORY.md, "Several replicas on PostgreSQL"). Sent after the commit, a wake-up never announces an event that cannot be
/// read yet. A replica that dies between a commit and its wake-up (a few milliseconds) leaves
/// the followers of that event to the task's next write (the survivor that recovers the task
/// writes one) or to their safety poll.
///
/// **Reconnects.** PostgreSQL drops the notifications sent while a listener is away (the
/// database restarted, the connection was killed or cut). The listener checks its connection
/// every few seconds, listens again as soon as it can, and then wakes every subscriber of
/// this process to re-read the log after its cursor, so nothing sent meanwhile is missed.
///
/// **Cancels** travel on the same channel: a `CancelTask` on any replica reaches the handler
/// of every replica, and this process's at once.
pub struct PgBus {
    local: Arc<LocalBus>,
    channel: Arc<str>,
    /// To the notifier, which sends what is published (and ends when the bus is dropped).
    outbox: tokio::sync::mpsc::UnboundedSender<Outgoing>,
    /// Stops the listener when the bus is dropped.
    _listening: DropGuard,
}

/// What the notifier sends.
#[derive(Debug)]
enum Outgoing {
    Event(TaskId, u64),
    Cancel(TaskId),
}

impl std::fmt::Debug for PgBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgBus")
            .field("channel", &self.channel)
            .finish_non_exhaustive()
    }
}

/// What a notification on the channel says.
#[derive(Debug, PartialEq)]
enum Note<'a> {
    /// `e <seq> <task>`: the task's log reached seq.
    Event(u64, &'a str),
    /// `c <task>`: stop the task's execution.
    Cancel(&'a str),
}

impl Outgoing {
    /// The notification's payload, as [`parse`] reads it.
    fn payload(&self) -> String {
        match self {
            Self::Event(task, seq) => format!("e {seq} {task}"),
            Self::Cancel(task) => format!("c {task}"),
        }
    }
}

/// What a notification's payload says (see [`Outgoing::payload`]).
fn parse(payload: &str) -> Option<Note<'_>> {
    if let Some(rest) = payload.strip_prefix("e ") {
        let (seq, task) = rest.split_once(' ')?;
        return Some(Note::Event(seq.parse().ok()?, task));
    }
    payload.strip_prefix("c ").map(Note::Cancel)
}

impl PgBus {
    /// Starts the listener; returns once it listens (or with the error of the first attempt).
    pub(super) async fn start(
        mut config: tokio_postgres::Config,
        db: Db,
        channel: Arc<str>,
    ) -> Result<Arc<Self>, StoreError> {
        // Named, for operators (and tests) to find in `pg_stat_activity`.
        config.application_name(format!("a2a-bus {channel}"));
        let local = Arc::new(LocalBus::new());
        let stop = CancellationToken::new();
        let listener = Listener {
            config,
            channel: channel.clone(),
            local: local.clone(),
            stop: stop.clone(),
        };
        // The first connection is made here, so that a wrong URL fails the start-up.
        let first = listener.listen().await?;
        tokio::spawn(listener.run(first));
        let (outbox, queue) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(notify(db, channel.clone(), queue));
        Ok(Arc::new(Self {
            local,
            channel,
            outbox,
            _listening: stop.drop_guard(),
        }))
    }
}

impl EventBus for PgBus {
    fn publish(&self, task: &TaskId, seq: u64) {
        let _ = self.outbox.send(Outgoing::Event(task.clone(), seq));
    }

    fn subscribe(&self, task: &TaskId) -> BoxStream<'static, u64> {
        self.local.subscribe(task)
    }

    fn request_cancel(&self, task: &TaskId) {
        // This process's executions stop at once; the others' when the notification arrives.
        self.local.request_cancel(task);
        let _ = self.outbox.send(Outgoing::Cancel(task.clone()));
    }

    fn on_cancel(&self, handler: CancelHandler) {
        self.local.on_cancel(handler);
    }

    fn poll_interval(&self) -> Duration {
        // A safety net only: every write is followed by a wake-up, and a listener that was
        // away wakes everyone when it is back. (Followers polling every 2 s would cost the
        // database a query per open stream every 2 s.)
        SAFETY_POLL
    }
}

/// The most notifications one statement sends.
const BATCH: usize = 512;

/// Sends what the bus publishes as `NOTIFY`, in batches: everything queued while the previous
/// statement was in flight goes in the next one, each task's events as one wake-up for the
/// latest. A batch that fails is tried once more; after that its followers rely on their
/// safety poll (the database is probably down, and the listeners' reconnects wake everyone).
async fn notify(
    db: Db,
    channel: Arc<str>,
    mut queue: tokio::sync::mpsc::UnboundedReceiver<Outgoing>,
) {
    let mut batch = Vec::with_capacity(BATCH);
    while queue.recv_many(&mut batch, BATCH).await > 0 {
        let mut payloads: Vec<String> = Vec::with_capacity(batch.len());
        let mut latest: crate::store::FastMap<&TaskId, u64> = crate::store::FastMap::default();
        for note in &batch {
            match note {
                Outgoing::Event(task, seq) => {
                    let at = latest.entry(task).or_default();
                    *at = (*at).max(*seq);
                }
                Outgoing::Cancel(_) => payloads.push(note.payload()),
            }
        }
        payloads.extend(
            latest
                .into_iter()
                .map(|(task, seq)| Outgoing::Event(task.clone(), seq).payload()),
        );
        // A payload must stay under 8000 bytes; our task ids are far shorter.
        payloads.retain(|p| p.len() < 7900);
        for attempt in 0..2 {
            let sent = db
                .execute(
                    "SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p",
                    &[&&*channel, &payloads],
                )
                .await;
            match sent {
                Ok(_) => break,
                Err(e) if attempt == 0 => {
                    tracing::debug!(error = %e, "sending wake-ups failed; trying again");
                }
                Err(e) => {
                    tracing::warn!(error = %e, notes = payloads.len(), "could not wake the other replicas");
                }
            }
        }
        batch.clear();
    }
}

/// The one listening connection of a [`PgBus`].
struct Listener {
    config: tokio_postgres::Config,
    channel: Arc<str>,
    local: Arc<LocalBus>,
    stop: CancellationToken,
}

/// A connection that listens: the client (to ping) and the stream of what the server sends.
type Listening = (
    tokio_postgres::Client,
    futures::channel::mpsc::UnboundedReceiver<AsyncMessage>,
    tokio::task::JoinHandle<()>,
);

impl Listener {
    /// Connects and listens on the channel.
    async fn listen(&self) -> Result<Listening, StoreError> {
        let (client, mut connection) = self.config.connect(NoTls).await.map_err(backend)?;
        let (tx, rx) = futures::channel::mpsc::unbounded();
        let driver = tokio::spawn(async move {
            let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
            while let Some(Ok(message)) = futures::StreamExt::next(&mut messages).await {
                if tx.unbounded_send(message).is_err() {
                    return;
                }
            }
        });
        // The channel name is ours ("a2a" or "a2a_" and a checked schema name).
        client
            .batch_execute(&format!("LISTEN \"{}\"", self.channel))
            .await
            .map_err(backend)?;
        Ok((client, rx, driver))
    }

    /// Hears notifications until the bus is dropped, listening again whenever the
    /// connection is lost.
    async fn run(self, first: Listening) {
        let mut listening = Some(first);
        let mut backoff = Duration::from_millis(50);
        loop {
            let current = match listening.take() {
                Some(l) => l,
                None => {
                    tokio::select! {
                        () = tokio::time::sleep(backoff) => {}
                        () = self.stop.cancelled() => return,
                    }
                    match self.listen().await {
                        Ok(l) => {
                            tracing::info!("listening for other replicas' events again");
                            l
                        }
                        Err(e) => {
                            backoff = (backoff * 2).min(MAX_BACKOFF);
                            tracing::warn!(error = %e, "cannot listen for other replicas' events; retrying");
                            continue;
                        }
                    }
                }
            };
            backoff = Duration::from_millis(50);
            // Whatever was sent while nobody listened is lost: every follower re-reads.
            self.local.wake_all();
            if self.hear(current).await {
                return;
            }
            tracing::warn!("lost the connection that listens for other replicas' events");
        }
    }

    /// Fans out what one connection hears until it fails (`false`) or the bus is dropped
    /// (`true`).
    async fn hear(&self, (client, mut messages, driver): Listening) -> bool {
        use futures::StreamExt as _;
        let mut ping = tokio::time::interval(PING_EVERY);
        ping.tick().await;
        let stopped = loop {
            tokio::select! {
                message = messages.next() => match message {
                    Some(AsyncMessage::Notification(n)) => self.deliver(n.payload()),
                    Some(_) => {}
                    None => break false,
                },
                _ = ping.tick() => {
                    let alive = tokio::time::timeout(PING_EVERY, client.simple_query("")).await;
                    if !matches!(alive, Ok(Ok(_))) {
                        break false;
                    }
                }
                () = self.stop.cancelled() => break true,
            }
        };
        driver.abort();
        stopped
    }

    fn deliver(&self, payload: &str) {
        match parse(payload) {
            Some(Note::Event(seq, task)) => self.local.publish(&TaskId::from(task), seq),
            Some(Note::Cancel(task)) => self.local.request_cancel(&TaskId::from(task)),
            None => tracing::debug!(payload, "ignored a notification that is not ours"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Note, Outgoing, parse};
    use a2a_core::TaskId;

    #[test]
    fn notifications_name_the_task_and_what_happened() {
        let task = TaskId::from("t 1");
        let event = Outgoing::Event(task.clone(), 7).payload();
        assert_eq!(parse(&event), Some(Note::Event(7, "t 1")));
        let cancel = Outgoing::Cancel(task).payload();
        assert_eq!(parse(&cancel), Some(Note::Cancel("t 1")));
        assert_eq!(parse("e 7 t-1"), Some(Note::Event(7, "t-1")));
        assert_eq!(
            parse("e 7 t with spaces"),
            Some(Note::Event(7, "t with spaces"))
        );
        assert_eq!(parse("c t-1"), Some(Note::Cancel("t-1")));
        assert_eq!(parse("e x t"), None);
        assert_eq!(parse("hello"), None);
    }
}
