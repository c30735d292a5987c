//! Following a task: its log and its live events as one stream with no gap and no duplicate
//! ([`Watch`], taken before the caller reads the task, so that nothing written after that read
//! goes unheard).

use super::{Engine, Update};
use crate::handler::{EventStream, StreamEvent};
use crate::store::{Scope, StoredTask};
use a2a_core::{StreamResponse, TaskId};
use futures::StreamExt as _;
use futures::stream::BoxStream;
use std::sync::Arc;
use tokio::sync::broadcast::{self, error::RecvError};

/// How many log entries a catching-up stream reads at a time (its memory bound).
const PAGE: usize = 256;

/// Where a stream hears of new events.
pub(super) enum Source {
    /// The broadcast of this process's execution of the task: the events themselves.
    Cell(broadcast::Receiver<Update>),
    /// The bus's notifications (another replica runs the task, or nobody does yet): each says
    /// to read the log.
    Bus(BoxStream<'static, u64>),
}

/// Whether a snapshot or log entry ends the stream: only a terminal state does, not an
/// interrupted one as for live events ([`StreamResponse::ends_stream`]). A client subscribes to
/// an interrupted task to watch it resume, and a replayed entry may have been answered since
/// (a replay that runs out at an interrupted state ends there: see `last_ended`).
fn terminal(e: &StreamResponse) -> bool {
    e.state().is_some_and(|s| s.is_terminal())
}

/// Streams a task's events: `first` (a snapshot) if given, else the log after `cursor`; then
/// every live event, until an event ends the stream, the execution ends, or the server shuts
/// down. Every event comes out once, in sequence order: events already passed are skipped, and
/// a subscriber that fell behind the broadcast (or sees a gap) catches up from the durable log,
/// a page at a time, so a slow reader never blocks the agent and never loses an event. A
/// stream whose execution's cell goes away (the task paused, and its cell was freed) goes on
/// through the bus.
pub(super) fn follow(
    rt: &Arc<Engine>,
    id: &TaskId,
    first: Option<StreamEvent>,
    cursor: u64,
    mut source: Source,
) -> BoxStream<'static, StreamEvent> {
    let rt = rt.clone();
    let id = id.clone();
    let shutdown = rt.shutdown.clone();
    let stream = async_stream::stream! {
        let mut last = cursor;
        let mut catching_up = first.is_none();
        let mut replayed_any = false;
        if let Some(first) = first {
            last = first.seq;
            let end = terminal(&first.event);
            yield first;
            if end {
                return;
            }
        }
        let mut last_ended = false;
        loop {
            if catching_up {
                let page = match read_log(&rt, &id, last).await {
                    Ok(page) => page,
                    Err(e) => {
                        tracing::error!(task = %id, error = %e, "reading the event log failed; ending the stream");
                        return;
                    }
                };
                if page.is_empty() {
                    catching_up = false;
                    // The log's last event is the current state: a replay that ends in a
                    // terminal or interrupted state ends here, as the original stream did.
                    if replayed_any && last_ended {
                        return;
                    }
                    continue;
                }
                for e in page {
                    last = e.seq;
                    replayed_any = true;
                    last_ended = e.event.ends_stream();
                    let end = terminal(&e.event);
                    yield StreamEvent { seq: e.seq, event: e.event };
                    if end {
                        return;
                    }
                }
                continue;
            }
            let rx = match &mut source {
                Source::Cell(rx) => rx,
                Source::Bus(notices) => {
                    tokio::select! {
                        biased;
                        () = shutdown.cancelled() => return,
                        notice = notices.next() => match notice {
                            Some(seq) if seq <= last => continue, // already delivered
                            Some(_) => {}
                            // The bus closed the subscription: the log is still read every
                            // poll interval.
                            None => *notices = Box::pin(futures::stream::pending()),
                        },
                        () = tokio::time::sleep(rt.bus.poll_interval()) => {}
                    }
                    catching_up = true;
                    continue;
                }
            };
            let update = tokio::select! {
                biased;
                u = rx.recv() => u,
                () = shutdown.cancelled() => return,
            };
            match update {
                Ok(Update::Event(e)) => {
                    if e.seq != 0 && e.seq <= last {
                        continue; // already delivered
                    }
                    if e.seq > last + 1 {
                        catching_up = true; // a gap: the log has the missing events
                        continue;
                    }
                    if e.seq != 0 {
                        last = e.seq;
                    }
                    let ends = e.ends_stream();
                    yield StreamEvent { seq: e.seq, event: e.to_response() };
                    if ends {
                        return;
                    }
                }
                Ok(Update::Done) => return,
                Err(RecvError::Closed) => {
                    // The cell was freed: whoever writes next (here or elsewhere) notifies the bus.
                    source = Source::Bus(rt.bus.subscribe(&id));
                    catching_up = true;
                }
                Err(RecvError::Lagged(missed)) => {
                    tracing::debug!(task = %id, missed, "slow subscriber catches up from the log");
                    catching_up = true;
                }
            }
        }
    };
    Box::pin(stream)
}

/// [`follow`] opened with `snapshot` (the task as a subscriber first sees it, read after
/// `source` was subscribed), then every event after it.
pub(super) fn from_snapshot(
    rt: &Arc<Engine>,
    snapshot: StoredTask,
    source: Source,
) -> BoxStream<'static, StreamEvent> {
    let id = snapshot.task.id.clone();
    let first = StreamEvent {
        seq: snapshot.version,
        event: StreamResponse::Task(Arc::unwrap_or_clone(snapshot.task)),
    };
    let cursor = first.seq;
    follow(rt, &id, Some(first), cursor, source)
}

/// A page of the task's log after `cursor`, durable (see `store::durable`): a stream shows
/// only events a crash cannot take back.
async fn read_log(
    rt: &Engine,
    id: &TaskId,
    cursor: u64,
) -> Result<Vec<crate::store::LoggedEvent>, crate::store::StoreError> {
    let page = rt.store.events(id, cursor, PAGE).await?;
    if page.is_empty() {
        return Ok(page);
    }
    crate::store::durable(&*rt.store, page).await
}

/// The log of a finished task after `cursor`, up to its terminal event.
fn replay(rt: &Arc<Engine>, id: &TaskId, cursor: u64) -> BoxStream<'static, StreamEvent> {
    let rt = rt.clone();
    let id = id.clone();
    let stream = async_stream::stream! {
        let mut last = cursor;
        loop {
            let page = match read_log(&rt, &id, last).await {
                Ok(page) => page,
                Err(e) => {
                    tracing::error!(task = %id, error = %e, "reading the event log failed; ending the stream");
                    return;
                }
            };
            if page.is_empty() {
                return;
            }
            for e in page {
                last = e.seq;
                let end = terminal(&e.event);
                yield StreamEvent { seq: e.seq, event: e.event };
                if end {
                    return;
                }
            }
        }
    };
    Box::pin(stream)
}

/// A subscription to a task's events, taken before the caller reads the task: to this
/// process's execution of the task if one runs here (its events themselves), else to the bus
/// (notices to read the log). Whatever is written after it was taken reaches its stream.
pub(crate) struct Watch {
    id: TaskId,
    source: Source,
    /// The task as this process's execution published it when the watch was taken, and that
    /// execution's scope.
    running: Option<(Option<StoredTask>, Scope)>,
    /// Taken when the execution here has not created the task yet: a stream that opens with a
    /// snapshot then follows the bus, subscribed before the caller's read.
    fallback: Option<BoxStream<'static, u64>>,
}

impl Engine {
    /// A [`Watch`] of the task `id`, to take before reading the task.
    pub(crate) fn watch(self: &Arc<Self>, id: &TaskId) -> Watch {
        let Some(cell) = self.running_cell(id) else {
            return Watch {
                id: id.clone(),
                source: Source::Bus(self.bus.subscribe(id)),
                running: None,
                fallback: None,
            };
        };
        // Watching is a reveal: what waits unwritten is written, and every change after it.
        cell.watch(self);
        let (snapshot, rx) = cell.subscribe();
        let fallback = snapshot.is_none().then(|| self.bus.subscribe(id));
        Watch {
            id: id.clone(),
            source: Source::Cell(rx),
            running: Some((snapshot, cell.scope.clone())),
            fallback,
        }
    }

    /// The log of the finished task `id` after `cursor`, up to its terminal event.
    pub(crate) fn replay(self: &Arc<Self>, id: &TaskId, cursor: u64) -> EventStream {
        replay(self, id, cursor)
    }
}

impl Watch {
    /// Whether an execution of the task runs in this process for callers of `scope`: then
    /// the stream needs no read of the task to start.
    pub(crate) fn runs_here_for(&self, scope: &Scope) -> bool {
        self.running.as_ref().is_some_and(|(_, s)| s == scope)
    }

    /// The task's events after `cursor`: from its log, then live, until an event ends the
    /// stream (see [`follow`]).
    pub(crate) fn after(self, rt: &Arc<Engine>, cursor: u64) -> EventStream {
        follow(rt, &self.id, None, cursor, self.source)
    }

    /// The task as first seen, then every event after it: the execution's snapshot when one
    /// runs here and has created the task, else `stored` (the caller's read, made after the
    /// watch was taken).
    pub(crate) fn opened_with(self, rt: &Arc<Engine>, stored: StoredTask) -> EventStream {
        match (self.running, self.fallback) {
            (Some((Some(snapshot), _)), _) => from_snapshot(rt, snapshot, self.source),
            (Some((None, _)), Some(notices)) => from_snapshot(rt, stored, Source::Bus(notices)),
            _ => from_snapshot(rt, stored, self.source),
        }
    }
}
