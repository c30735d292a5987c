//! Opening an embedded store: the directory lock, the trees, and the listing counts.

use super::{
    EmbeddedStore, Kv, KvTree, LOCK_WAIT, RECENT_CACHE_BYTES, backend, list, record, relist,
};
use crate::cache::Fifo;
use crate::store::StoreError;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Runs `open` until it succeeds, fails otherwise than with a taken lock (`taken`), or
/// [`LOCK_WAIT`] has passed: a store dropped a moment ago in this process can still hold its
/// directory's lock for a few milliseconds (the engine's threads release it after the last
/// write they were flushing). The error of a lock still taken names the directory.
pub(super) fn open_locked<T, E: std::error::Error + Send + Sync + 'static>(
    dir: &Path,
    engine: &str,
    mut open: impl FnMut() -> Result<T, E>,
    taken: impl Fn(&E) -> bool,
) -> Result<T, StoreError> {
    let started = Instant::now();
    loop {
        match open() {
            Ok(db) => return Ok(db),
            Err(e) if taken(&e) && started.elapsed() < LOCK_WAIT => {
                #[allow(
                    clippy::disallowed_methods,
                    reason = "opening is synchronous and rare; this waits out a drop in flight"
                )]
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) if taken(&e) => {
                return Err(StoreError::Backend(
                    format!(
                        "the {engine} database in {} is in use by another process (its lock \
                         was still held after {} s)",
                        dir.display(),
                        LOCK_WAIT.as_secs()
                    )
                    .into(),
                ));
            }
            Err(e) => return Err(backend(e)),
        }
    }
}

/// The directory `fjall` keeps its keyspace in, under a store's directory.
pub(super) const FJALL_KEYSPACE: &str = "keyspace";

/// Refuses to open `dir` with `engine` when it holds the other engine's store: opening it would
/// start an empty store beside the tasks, which would seem lost.
pub(super) fn refuse_other_engine(dir: &Path, engine: &str) -> Result<(), StoreError> {
    let sled = dir.join("conf").is_file() && dir.join("db").is_file();
    let fjall = dir.join(FJALL_KEYSPACE).is_dir();
    let other = match engine {
        "sled" if fjall => "fjall",
        "fjall" if sled => "sled",
        _ => return Ok(()),
    };
    Err(StoreError::Backend(
        format!(
            "{} holds a {other} store, not a {engine} one: open it with {other} (`--store {other}`)",
            dir.display()
        )
        .into(),
    ))
}

#[cfg(feature = "sled")]
impl EmbeddedStore<sled::Db> {
    /// Opens (or creates) the database in `dir` with the default cache size.
    pub fn open(dir: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::open_with_cache(dir, super::DEFAULT_CACHE_BYTES)
    }

    /// Opens (or creates) the database in `dir` with a page cache of `cache_bytes`.
    ///
    /// sled holds an exclusive lock on the directory while a database is open. A store dropped
    /// a moment ago in this process can still hold it for a few milliseconds (sled's I/O
    /// threads release it after the last write they were flushing), so a lock that is taken is
    /// retried for up to [`LOCK_WAIT`] before giving up with an error that names the directory.
    pub fn open_with_cache(dir: impl AsRef<Path>, cache_bytes: u64) -> Result<Self, StoreError> {
        let dir = dir.as_ref();
        refuse_other_engine(dir, "sled")?;
        let config = sled::Config::new().path(dir).cache_capacity(cache_bytes);
        // sled reports a taken lock only as an I/O error with this message.
        let taken = |e: &sled::Error| matches!(e, sled::Error::Io(io) if io.to_string().starts_with("could not acquire lock"));
        let db = open_locked(dir, "sled", || config.open(), taken)?;
        Self::from_db(db)
    }

    /// Uses an already opened database (its trees `tasks`, `task_events`, `task_lists`, …): see
    /// [`EmbeddedStore::from_engine`].
    pub fn from_db(db: sled::Db) -> Result<Self, StoreError> {
        Self::from_engine(db)
    }
}

impl<K: Kv> EmbeddedStore<K> {
    /// Uses an already opened engine (its trees `tasks`, `task_events`, `task_lists`, …).
    ///
    /// Opening reads the indexed fields of every task record to count the tasks of each
    /// listing prefix, and writes the listing keys that a crash kept a relist from writing
    /// (see `kv/relist.rs`). A database written before the listing indexes (or the claims'
    /// time index) existed gets them built, once (marker keys in tree `store_meta` record
    /// it); the deletes a crash cut short are finished; heads written before issue 41 are
    /// rewritten to carry their creation event, and the retention tree they kept is dropped
    /// (see `kv/open.rs`).
    pub fn from_engine(db: K) -> Result<Self, StoreError> {
        let tasks = db.open_tree("tasks").map_err(backend)?;
        let lists = db.open_tree("task_lists").map_err(backend)?;
        let (counts, generation) = list::open_indexes(&db, &tasks, &lists)?;
        super::finish_deletes(&db, &tasks)?;
        let events = db.open_tree("task_events").map_err(backend)?;
        carry_creations(&db, &tasks, &events)?;
        // Retention reads the listing keys now (`kv/scan.rs`): the tree of finished tasks that
        // stores before issue 41 kept for it goes (dropping a tree that is not there is a no-op).
        db.drop_tree(RETIRED_RETENTION_TREE).map_err(backend)?;
        let claims = db.open_tree("message_claims").map_err(backend)?;
        super::claims::drop_claim_times(&db)?;
        let pushes = db.open_tree("push_configs").map_err(backend)?;
        let push_ids = db.open_tree("push_config_ids").map_err(backend)?;
        super::index_push_ids(&pushes, &push_ids)?;
        Ok(Self {
            tasks,
            lists,
            stripes: (0..64).map(|_| Mutex::new(())).collect(),
            #[cfg(test)]
            visited: Arc::default(),
            events,
            claims,
            claim_cursor: Arc::default(),
            pushes,
            push_ids,
            push_counts: Arc::default(),
            commit: Arc::default(),
            counts: Arc::new(Mutex::new(counts)),
            recent: Arc::new(Mutex::new(Fifo::new(RECENT_CACHE_BYTES))),
            leases: Arc::default(),
            waiting: Arc::new(Mutex::new(relist::Waiting::new(generation))),
            relisting: Arc::default(),
            db,
        })
    }
}

/// The tree of finished tasks by status time that retention read before issue 41.
pub(super) const RETIRED_RETENTION_TREE: &str = "task_index";

/// The `store_meta` key marking that every head carries its creation event.
const CARRIED: &[u8] = b"heads_carry_creation";

/// Migration, once per database: rewrites every head written before issue 41 (its creation
/// event as the log's entry 1) to carry its creation event, then removes that entry (see
/// `kv/record.rs`), and records that it is done. Idempotent: a crash between a head's rewrite
/// and the entry's removal leaves an entry no read looks at (a head that carries its creation
/// never reads the log's entry 1), and the next open finishes the job. Returns how many heads
/// it rewrote.
pub(super) fn carry_creations<K: Kv>(
    db: &K,
    tasks: &K::Tree,
    events: &K::Tree,
) -> Result<usize, StoreError> {
    let meta = db.open_tree(super::META).map_err(backend)?;
    if meta.contains_key(CARRIED).map_err(backend)? {
        return Ok(0);
    }
    let mut rewritten = 0;
    for entry in tasks.iter() {
        let (key, value) = entry.map_err(backend)?;
        if !value.starts_with(record::HEAD) {
            continue;
        }
        let head: record::HeadIn<'_> = serde_json::from_slice(&value).map_err(backend)?;
        let id = std::str::from_utf8(&key).map_err(backend)?;
        let first = super::log_key(id, 1);
        if head.created.is_none()
            && let Some(created) = events.get(&first).map_err(backend)?
        {
            tasks
                .insert(
                    &key,
                    record::with_carried(value.to_vec(), &[created.to_vec().into_boxed_slice()]),
                )
                .map_err(backend)?;
            rewritten += 1;
        }
        events.remove(first).map_err(backend)?;
    }
    meta.insert(CARRIED, &[] as &[u8]).map_err(backend)?;
    Ok(rewritten)
}
