//! The embedded store's tests on fjall.

/// The store under test.
type Store = crate::store::FjallStore;

#[allow(
    clippy::duplicate_mod,
    reason = "the same suite on each engine, its `Store` the only difference"
)]
#[path = "suite.rs"]
mod suite;
