//! Group commit: [`TaskStore::sync`](crate::store::TaskStore::sync) on an embedded store. A
//! write is counted once it has returned (`wrote`); a flush makes durable every write that
//! returned before the engine's flush was called ([`Kv::flush`]), so it covers every write
//! counted by then, and a caller whose writes an earlier flush covered does not flush again.
//!
//! Flushes run one at a time, on tokio's blocking pool (the engine blocks while the disk
//! works). What a flush covers is read on the blocking thread, right before the engine's
//! flush: the writes made while the flush waited for its thread (other requests keep the
//! runtime's core busy meanwhile) are in it, and their callers need no flush of their own.
//!
//! sled's `flush_async` would run on sled's own small thread pool, and the write it waits for
//! may be queued on that same pool: enough concurrent `flush_async` calls starve it and
//! deadlock; hence the blocking pool and one flush at a time.

use super::{Kv, backend};
use crate::store::StoreError;
use std::sync::atomic::{AtomicU64, Ordering};

/// The write and flush counts of an embedded store, and the turn of its flushes.
#[derive(Debug, Default)]
pub(super) struct GroupCommit {
    lock: tokio::sync::Mutex<()>,
    /// Writes that have returned.
    written: AtomicU64,
    /// The writes the last flush covered (a count of `written`).
    flushed: AtomicU64,
    /// The engine flushes made (for tests and accounting).
    flushes: AtomicU64,
}

impl GroupCommit {
    /// Notes a write that has returned.
    pub(super) fn wrote(&self) {
        self.written.fetch_add(1, Ordering::SeqCst);
    }

    /// How many engine flushes this store made.
    #[cfg_attr(not(test), allow(dead_code, reason = "read by tests"))]
    pub(super) fn flushes(&self) -> u64 {
        self.flushes.load(Ordering::Relaxed)
    }

    /// Returns once every write counted before the call is durable, flushing `db` unless a
    /// flush that covers them has ended or ends meanwhile.
    pub(super) async fn sync<K: Kv>(self: &std::sync::Arc<Self>, db: &K) -> Result<(), StoreError> {
        let wanted = self.written.load(Ordering::SeqCst);
        if self.flushed.load(Ordering::SeqCst) >= wanted {
            return Ok(());
        }
        let _turn = self.lock.lock().await;
        if self.flushed.load(Ordering::SeqCst) >= wanted {
            return Ok(()); // the flush we waited for covered our writes
        }
        let (commit, db) = (self.clone(), db.clone());
        let covered = tokio::task::spawn_blocking(move || {
            // Every write counted here has returned, so the flush below covers it.
            let covered = commit.written.load(Ordering::SeqCst);
            commit.flushes.fetch_add(1, Ordering::Relaxed);
            db.flush().map(|()| covered)
        })
        .await
        .map_err(backend)?
        .map_err(backend)?;
        self.flushed.fetch_max(covered, Ordering::SeqCst);
        Ok(())
    }
}

#[cfg(all(test, feature = "sled"))]
mod tests {
    use super::GroupCommit;
    use std::sync::Arc;

    /// A write made while a flush waits for its blocking thread is covered by that flush: its
    /// caller's `sync` makes no flush of its own.
    #[test]
    fn a_flush_covers_the_writes_made_while_it_waited_for_its_thread() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .max_blocking_threads(1)
            .build()
            .unwrap();
        rt.block_on(async {
            let db = sled::Config::new().temporary(true).open().unwrap();
            let commit = Arc::new(GroupCommit::default());
            // The blocking pool's only thread, busy until released.
            let (release, busy) = std::sync::mpsc::channel::<()>();
            let busy = tokio::task::spawn_blocking(move || busy.recv());
            let sync = |commit: &Arc<GroupCommit>| {
                let (commit, db) = (commit.clone(), db.clone());
                tokio::spawn(async move { commit.sync(&db).await })
            };
            commit.wrote();
            let first = sync(&commit);
            // The first caller takes the turn and queues its flush.
            for _ in 0..3 {
                tokio::task::yield_now().await;
            }
            commit.wrote();
            let second = sync(&commit);
            for _ in 0..3 {
                tokio::task::yield_now().await;
            }
            release.send(()).unwrap();
            first.await.unwrap().unwrap();
            second.await.unwrap().unwrap();
            busy.await.unwrap().unwrap();
            assert_eq!(commit.flushes(), 1, "one flush for both writes");
        });
    }
}
