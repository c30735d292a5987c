//! The public store suite (`testing::check_store`) passes for each of our stores, as it must
//! for a backend of someone else's.
#![cfg(feature = "testing")]

use a2a_server::{MemoryStore, testing};

#[tokio::test]
async fn the_memory_store_passes_the_store_suite() {
    testing::check_store(|| async { MemoryStore::new() }).await;
}

#[cfg(feature = "sled")]
#[tokio::test]
async fn the_sled_store_passes_the_store_suite() {
    use a2a_server::SledStore;
    let dirs = std::sync::Mutex::new(Vec::new());
    testing::check_store(|| {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store = SledStore::open(dir.path()).expect("sled opens");
        dirs.lock().expect("dirs").push(dir);
        async move { store }
    })
    .await;
}

#[cfg(feature = "fjall")]
#[tokio::test]
async fn the_fjall_store_passes_the_store_suite() {
    use a2a_server::FjallStore;
    let dirs = std::sync::Mutex::new(Vec::new());
    testing::check_store(|| {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store = FjallStore::open(dir.path()).expect("fjall opens");
        dirs.lock().expect("dirs").push(dir);
        async move { store }
    })
    .await;
}
