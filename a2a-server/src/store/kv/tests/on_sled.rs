//! The embedded store's tests on sled.

/// The store under test.
type Store = crate::store::SledStore;

#[path = "suite.rs"]
mod suite;
