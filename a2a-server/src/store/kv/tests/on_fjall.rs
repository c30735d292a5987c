//! The embedded store's tests on fjall.

/// The store under test.
type Store = crate::store::FjallStore;

#[allow(
    clippy::duplicate_mod,
    reason = "the same suite on each engine, its `Store` the only difference"
)]
#[path = "suite.rs"]
mod suite;

/// The flush finds the journal to `fdatasync` outside fjall's lock (`FjallDb::flush`): a fjall
/// that lays its journals out otherwise fails here rather than fall back unnoticed.
#[tokio::test]
async fn the_flush_finds_fjall_s_active_journal() {
    use crate::store::TaskStore as _;
    use crate::store::kv::{Kv as _, KvTree as _};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let journal = store.db().active_journal().unwrap();
    assert!(
        journal.is_some(),
        "no journal under {}",
        dir.path().display()
    );
    store
        .db()
        .open_tree("probe")
        .unwrap()
        .insert(b"k", b"v")
        .unwrap();
    store.db().flush().unwrap();
    store.sync().await.unwrap();
}

/// The flush keeps the active journal open from one flush to the next, and follows fjall to
/// the next journal when fjall starts one (a memtable rotated): the writes made after the
/// rotation are in the new journal, and it is the one flushed.
#[tokio::test]
async fn the_flush_follows_fjall_to_its_next_journal() {
    use crate::store::kv::{Kv as _, KvTree as _};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let tree = store.db().open_tree("probe").unwrap();
    tree.insert(b"a", b"1").unwrap();
    store.db().flush().unwrap();
    let first = store.db().kept_journal().expect("a journal kept");
    let partition = (store.db().keyspace())
        .open_partition("probe", fjall::PartitionCreateOptions::default())
        .unwrap();
    assert!(partition.rotate_memtable().unwrap(), "the memtable rotated");
    tree.insert(b"b", b"2").unwrap();
    store.db().flush().unwrap();
    let next = store.db().kept_journal().expect("a journal kept");
    assert!(next > first, "journal {next} kept after {first}");
    assert_eq!(
        Some(next),
        store.db().active_journal().unwrap().map(|j| j.id)
    );
}
