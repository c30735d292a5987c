//! The embedded store's tests (`tests/suite.rs`), once on each engine.

#[cfg(feature = "fjall")]
mod on_fjall;
#[cfg(feature = "sled")]
mod on_sled;

/// A directory keeps the engine it was created with: the other one refuses it, naming the
/// engine to use, rather than start an empty store beside the tasks.
#[cfg(all(feature = "sled", feature = "fjall"))]
#[test]
fn a_directory_of_one_engine_is_refused_by_the_other() {
    use crate::store::{FjallStore, SledStore};
    let (sled, fjall) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    drop(SledStore::open(sled.path()).unwrap());
    drop(FjallStore::open(fjall.path()).unwrap());
    let err = FjallStore::open(sled.path()).unwrap_err().to_string();
    assert!(err.contains("holds a sled store"), "{err}");
    let err = SledStore::open(fjall.path()).unwrap_err().to_string();
    assert!(err.contains("holds a fjall store"), "{err}");
    assert!(
        !fjall.path().join("conf").exists(),
        "sled wrote nothing there"
    );
    assert!(
        !sled.path().join("keyspace").exists(),
        "fjall wrote nothing there"
    );
    drop(SledStore::open(sled.path()).unwrap());
    drop(FjallStore::open(fjall.path()).unwrap());
}
