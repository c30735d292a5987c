//! The embedded store's tests on fjall.

/// The store under test.
type Store = crate::store::FjallStore;

#[path = "suite.rs"]
mod suite;
