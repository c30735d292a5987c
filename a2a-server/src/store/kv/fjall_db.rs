//! The store on [fjall](https://docs.rs/fjall) (feature `fjall`): [`FjallStore`], the same
//! records, keys and guarantees as `SledStore`, in a fjall keyspace (an LSM tree per partition,
//! one journal for all of them) under `DIR/keyspace`. Each tree of the store is a partition of
//! the same name. A write appends to the journal's buffer and to a memtable;
//! [`TaskStore::sync`](crate::TaskStore::sync) writes the buffer out and `fdatasync`s the
//! journal (what fjall's `PersistMode::SyncData` does, but with the `fdatasync` outside fjall's
//! journal lock: see [`Kv::flush`] for `FjallDb`), once for every write it covers (group
//! commit). The
//! journal is replayed in order at open, so a crash keeps a prefix of the writes, which is what
//! the store's commit points need (see `kv/record.rs`).
//!
//! fjall has no compare-and-swap outside its transactional keyspace, so each [`FjallTree`]
//! serializes its own writes with a lock: a compare-and-swap (a message claim, a webhook
//! delivery cursor) reads and writes under it, and every other write of the tree takes it too,
//! so that none slips between the read and the write. fjall does not lock its directory; the
//! store does (`DIR/a2a.lock`, `flock`), so that this process is the keyspace's only writer.

use super::engine::{Entries, Kv, KvTree, Sealed, owned_bounds};
use super::open::{FJALL_KEYSPACE, open_locked, refuse_other_engine};
use super::{DEFAULT_CACHE_BYTES, EmbeddedStore};
use crate::store::StoreError;
use std::ops::RangeBounds;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The task store on fjall: `FjallStore::open(dir)`.
pub type FjallStore = EmbeddedStore<FjallDb>;

/// A fjall keyspace, as an [`EmbeddedStore`]'s engine, with the lock on its directory.
#[derive(Clone)]
pub struct FjallDb {
    keyspace: fjall::Keyspace,
    /// The keyspace's directory (its journals are in `journals/`).
    path: Arc<Path>,
    /// The journal the last flush found active, open (see [`Kv::flush`] for `FjallDb`).
    journal: Arc<Mutex<Option<Journal>>>,
    /// The directory's lock file, held (locked) while any clone is alive.
    _lock: Arc<DirLock>,
}

impl std::fmt::Debug for FjallDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FjallDb").finish_non_exhaustive()
    }
}

impl FjallDb {
    /// The keyspace.
    pub fn keyspace(&self) -> &fjall::Keyspace {
        &self.keyspace
    }

    /// The journal fjall writes now: the highest-numbered file of `journals/` (fjall 2.x names
    /// them 0, 1, 2, … and makes the previous one durable before it starts the next).
    pub(in crate::store::kv) fn active_journal(&self) -> std::io::Result<Option<Journal>> {
        let dir = self.path.join("journals");
        let newest = std::fs::read_dir(&dir)?
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u64>().ok())
            .max();
        newest
            .map(|id| {
                let file = std::fs::File::open(dir.join(id.to_string()))?;
                Ok(Journal { id, file })
            })
            .transpose()
    }

    /// `fdatasync`s the journal that was active when this is called (or a newer one), keeping
    /// it open for the next flush: fjall creates journal `id + 1` when it leaves `id`, so while
    /// no such file exists the kept one is still the active one, and one `statx` replaces the
    /// directory scan and the `open` and `close`. `false` when no journal is found.
    fn sync_active_journal(&self) -> std::io::Result<bool> {
        let mut kept = self
            .journal
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let current = match &*kept {
            Some(j) => !(self.path.join("journals"))
                .join((j.id + 1).to_string())
                .try_exists()?,
            None => false,
        };
        if !current {
            *kept = self.active_journal()?;
        }
        match &*kept {
            Some(j) => j.file.sync_data().map(|()| true),
            None => Ok(false),
        }
    }
}

#[cfg(test)]
impl FjallDb {
    /// The number of the journal the last flush kept open.
    pub(in crate::store::kv) fn kept_journal(&self) -> Option<u64> {
        self.journal.lock().unwrap().as_ref().map(|j| j.id)
    }
}

/// A journal file of the keyspace, open.
#[derive(Debug)]
pub(in crate::store::kv) struct Journal {
    /// Its number (its file name).
    pub(in crate::store::kv) id: u64,
    file: std::fs::File,
}

/// A partition of a [`FjallDb`], with the lock that serializes its writes.
#[derive(Clone)]
pub struct FjallTree {
    partition: fjall::PartitionHandle,
    writes: Arc<Mutex<()>>,
    /// The directory's lock: held until the last handle on the keyspace is gone.
    _lock: Arc<DirLock>,
}

impl std::fmt::Debug for FjallTree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FjallTree")
            .field("partition", &self.partition.name)
            .finish_non_exhaustive()
    }
}

impl FjallTree {
    fn write_lock(&self) -> std::sync::MutexGuard<'_, ()> {
        // A panic under the lock leaves no half-done state of ours: each write is one call.
        self.writes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// An exclusive advisory lock on `dir/a2a.lock` (`flock`), released when dropped (and by the
/// kernel when the process dies).
struct DirLock {
    #[cfg(unix)]
    _file: std::fs::File,
}

/// Why a directory could not be locked.
#[derive(Debug, thiserror::Error)]
enum LockError {
    #[error("the lock is taken")]
    Taken,
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl DirLock {
    fn take(dir: &Path) -> Result<Self, LockError> {
        std::fs::create_dir_all(dir)?;
        #[cfg(unix)]
        {
            use rustix::fs::{FlockOperation, flock};
            let file = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(dir.join("a2a.lock"))?;
            match flock(&file, FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => Ok(Self { _file: file }),
                Err(e) if e == rustix::io::Errno::WOULDBLOCK => Err(LockError::Taken),
                Err(e) => Err(LockError::Io(e.into())),
            }
        }
        #[cfg(not(unix))]
        Ok(Self {})
    }
}

impl EmbeddedStore<FjallDb> {
    /// Opens (or creates) the keyspace in `dir` with the default block cache size
    /// ([`DEFAULT_CACHE_BYTES`]).
    pub fn open(dir: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::open_with_cache(dir, DEFAULT_CACHE_BYTES)
    }

    /// Opens (or creates) the keyspace in `dir` with a block cache of `cache_bytes`.
    ///
    /// The directory is locked while the store is open (file `a2a.lock`); a lock that is taken
    /// is retried for up to [`LOCK_WAIT`](super::LOCK_WAIT) (a store of this process being
    /// dropped), then refused with an error that names the directory.
    pub fn open_with_cache(dir: impl AsRef<Path>, cache_bytes: u64) -> Result<Self, StoreError> {
        let dir = dir.as_ref();
        refuse_other_engine(dir, "fjall")?;
        let lock = open_locked(
            dir,
            "fjall",
            || DirLock::take(dir),
            |e| matches!(e, LockError::Taken),
        )?;
        let keyspace = fjall::Config::new(dir.join(FJALL_KEYSPACE))
            .cache_size(cache_bytes)
            .manual_journal_persist(true)
            .open()
            .map_err(super::backend)?;
        Self::from_engine(FjallDb {
            keyspace,
            path: dir.join(FJALL_KEYSPACE).into(),
            journal: Arc::default(),
            _lock: Arc::new(lock),
        })
    }
}

/// How the store opens a partition: its writes stay in the journal's buffer until a flush
/// (`manual_journal_persist`) instead of one `write` system call each, since nothing is
/// revealed before [`TaskStore::sync`](crate::TaskStore::sync) flushes them (durable before
/// revealed): a crash loses only writes no one was shown, as on sled.
fn partition_options() -> fjall::PartitionCreateOptions {
    fjall::PartitionCreateOptions::default().manual_journal_persist(true)
}

impl Sealed for FjallDb {}

impl Kv for FjallDb {
    type Tree = FjallTree;
    type Error = fjall::Error;
    const NAME: &'static str = "fjall";

    fn open_tree(&self, name: &str) -> Result<FjallTree, fjall::Error> {
        let partition = self.keyspace.open_partition(name, partition_options())?;
        Ok(FjallTree {
            partition,
            writes: Arc::default(),
            _lock: self._lock.clone(),
        })
    }

    fn drop_tree(&self, name: &str) -> Result<(), fjall::Error> {
        if !self.keyspace.partition_exists(name) {
            return Ok(());
        }
        let partition = self.keyspace.open_partition(name, partition_options())?;
        self.keyspace.delete_partition(partition)
    }

    /// The journal's buffer written out under fjall's journal lock (a `write`), then the
    /// journal `fdatasync`ed outside it, so that writes go on during the disk's flush:
    /// fjall's own `PersistMode::SyncData` holds the lock, and every insert, across the
    /// `fdatasync` (bench/HISTORY.md, "sled against fjall"). The same guarantee: the data
    /// written out is the journal file's, and `fdatasync` on any descriptor of it makes it
    /// durable; if fjall started a new journal meanwhile, it made the old one durable first.
    /// The journal's descriptor is kept from one flush to the next (`sync_active_journal`).
    /// When no journal is found (another layout), fjall's own `SyncData`.
    fn flush(&self) -> Result<(), fjall::Error> {
        self.keyspace.persist(fjall::PersistMode::Buffer)?;
        match self.sync_active_journal() {
            Ok(true) => Ok(()),
            Ok(false) => self.keyspace.persist(fjall::PersistMode::SyncData),
            Err(e) => Err(e.into()),
        }
    }
}

impl KvTree for FjallTree {
    type Bytes = fjall::Slice;
    type Error = fjall::Error;

    fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<fjall::Slice>, fjall::Error> {
        self.partition.get(key)
    }

    fn contains_key(&self, key: impl AsRef<[u8]>) -> Result<bool, fjall::Error> {
        self.partition.contains_key(key)
    }

    fn insert(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<(), fjall::Error> {
        let _writes = self.write_lock();
        self.partition.insert(key.as_ref(), value.as_ref())
    }

    fn remove(&self, key: impl AsRef<[u8]>) -> Result<(), fjall::Error> {
        let _writes = self.write_lock();
        self.partition.remove(key.as_ref())
    }

    fn swap(
        &self,
        key: impl AsRef<[u8]>,
        value: Option<&[u8]>,
    ) -> Result<Option<fjall::Slice>, fjall::Error> {
        let key = key.as_ref();
        let _writes = self.write_lock();
        let previous = self.partition.get(key)?;
        match value {
            Some(v) => self.partition.insert(key, v)?,
            None if previous.is_some() => self.partition.remove(key)?,
            None => {}
        }
        Ok(previous)
    }

    fn compare_and_swap(
        &self,
        key: impl AsRef<[u8]>,
        old: Option<&[u8]>,
        new: Option<&[u8]>,
    ) -> Result<Result<(), Option<fjall::Slice>>, fjall::Error> {
        let key = key.as_ref();
        let _writes = self.write_lock();
        let current = self.partition.get(key)?;
        if current.as_deref() != old {
            return Ok(Err(current));
        }
        match new {
            Some(v) => self.partition.insert(key, v)?,
            None if current.is_some() => self.partition.remove(key)?,
            None => {}
        }
        Ok(Ok(()))
    }

    fn range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Entries<Self> {
        Box::new(self.partition.range(owned_bounds(&range)))
    }

    fn scan_prefix(&self, prefix: impl AsRef<[u8]>) -> Entries<Self> {
        Box::new(self.partition.prefix(prefix.as_ref().to_vec()))
    }

    fn iter(&self) -> Entries<Self> {
        Box::new(self.partition.iter())
    }
}
