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
