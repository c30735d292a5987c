//! The embedded store's tests (`tests/suite.rs`), once on each engine.

#[cfg(feature = "fjall")]
mod on_fjall;
#[cfg(feature = "sled")]
mod on_sled;
