//! Turning a task's log and live broadcast into one stream with no gap and no duplicate.

use super::StreamEvent;
use crate::runtime::{Runtime, TaskCell, Update};
use crate::store::StoredTask;
use a2a_core::{StreamResponse, TaskId};
use futures::stream::BoxStream;
use std::sync::Arc;
use tokio::sync::broadcast::{self, error::RecvError};

/// How many log entries a catching-up stream reads at a time (its memory bound).
const PAGE: usize = 256;

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
/// a page at a time, so a slow reader never blocks the agent and never loses an event.
pub(super) fn follow(
    rt: Arc<Runtime>,
    cell: Arc<TaskCell>,
    first: Option<StreamEvent>,
    cursor: u64,
    mut rx: broadcast::Receiver<Update>,
) -> BoxStream<'static, StreamEvent> {
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
                let page = match rt.store.events(&cell.id, last, PAGE).await {
                    Ok(page) => page,
                    Err(e) => {
                        tracing::error!(task = %cell.id, error = %e, "reading the event log failed; ending the stream");
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
                Ok(Update::Done) | Err(RecvError::Closed) => return,
                Err(RecvError::Lagged(missed)) => {
                    tracing::debug!(task = %cell.id, missed, "slow subscriber catches up from the log");
                    catching_up = true;
                }
            }
        }
    };
    Box::pin(stream)
}

/// [`follow`] opened with `snapshot` (the task as a subscriber first sees it), then every
/// event after it.
pub(super) fn from_snapshot(
    rt: Arc<Runtime>,
    cell: Arc<TaskCell>,
    snapshot: StoredTask,
    rx: broadcast::Receiver<Update>,
) -> BoxStream<'static, StreamEvent> {
    let first = StreamEvent {
        seq: snapshot.version,
        event: StreamResponse::Task(Arc::unwrap_or_clone(snapshot.task)),
    };
    let cursor = first.seq;
    follow(rt, cell, Some(first), cursor, rx)
}

/// The log of a finished task after `cursor`, up to its terminal event.
pub(super) fn replay(rt: Arc<Runtime>, id: TaskId, cursor: u64) -> BoxStream<'static, StreamEvent> {
    let stream = async_stream::stream! {
        let mut last = cursor;
        loop {
            let page = match rt.store.events(&id, last, PAGE).await {
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
