//! The key-value engine under an [`EmbeddedStore`](super::EmbeddedStore): a database of named
//! ordered trees of byte keys and values, with point reads and writes, ordered range scans in
//! both directions, a compare-and-swap, and a flush that makes every earlier write durable.
//! Implemented for sled (`sled::Db`, the default store) and, with the `fjall` feature, for
//! fjall (`FjallDb`, in `kv/fjall.rs`).
//!
//! What the store needs of an engine beyond the calls: writes are applied in the order they
//! are made, and a crash keeps a prefix of them (each of the store's writes is ordered so that
//! any prefix reads as a committed version, see `kv/record.rs`); a write is visible to every
//! read that starts after it returns.

use std::fmt::Debug;
use std::ops::{Deref, RangeBounds};

/// The entries of a scan, in key order (reversible).
pub type Entries<T> = Box<
    dyn DoubleEndedIterator<
        Item = Result<(<T as KvTree>::Bytes, <T as KvTree>::Bytes), <T as KvTree>::Error>,
    >,
>;

/// A key or a value as the trees of engine `K` return it.
pub(super) type Bytes<K> = <<K as Kv>::Tree as KvTree>::Bytes;

mod sealed {
    /// Only this crate's engines implement [`super::Kv`].
    pub trait Sealed {}
}
pub(crate) use sealed::Sealed;

/// An embedded database of named trees (sled's `Db`, fjall's keyspace): what an
/// [`EmbeddedStore`](super::EmbeddedStore) keeps its records in. Implemented for sled and fjall
/// only (sealed).
pub trait Kv: Clone + Send + Sync + Debug + Sealed + 'static {
    /// One of its trees.
    type Tree: KvTree<Error = Self::Error>;
    /// Its errors.
    type Error: std::error::Error + Send + Sync + 'static;
    /// The engine's name, for messages.
    const NAME: &'static str;

    /// Opens (or creates) the tree `name`.
    fn open_tree(&self, name: &str) -> Result<Self::Tree, Self::Error>;

    /// Deletes the tree `name` and its entries, if it exists.
    fn drop_tree(&self, name: &str) -> Result<(), Self::Error>;

    /// Makes every write that returned before this call durable (the engine's log written and
    /// `fdatasync`ed), blocking until it is.
    fn flush(&self) -> Result<(), Self::Error>;
}

/// One ordered tree of a [`Kv`] database.
pub trait KvTree: Clone + Send + Sync + Debug + 'static {
    /// A key or a value as the tree returns it.
    type Bytes: Deref<Target = [u8]> + AsRef<[u8]> + Clone + Send + Sync + Debug + 'static;
    /// Its errors.
    type Error: std::error::Error + Send + Sync + 'static;

    /// The value of `key`.
    fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Self::Bytes>, Self::Error>;

    /// Whether `key` has a value.
    fn contains_key(&self, key: impl AsRef<[u8]>) -> Result<bool, Self::Error> {
        Ok(self.get(key)?.is_some())
    }

    /// Sets the value of `key`.
    fn insert(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<(), Self::Error>;

    /// Removes `key`.
    fn remove(&self, key: impl AsRef<[u8]>) -> Result<(), Self::Error>;

    /// Sets (`Some`) or removes (`None`) the value of `key`, returning the previous one, as one
    /// step: no other write of `key` comes between the read and the write.
    fn swap(
        &self,
        key: impl AsRef<[u8]>,
        value: Option<&[u8]>,
    ) -> Result<Option<Self::Bytes>, Self::Error>;

    /// Sets (`Some`) or removes (`None`) the value of `key` if its current value is `old`
    /// (`None`: absent); otherwise returns the current value as the error.
    fn compare_and_swap(
        &self,
        key: impl AsRef<[u8]>,
        old: Option<&[u8]>,
        new: Option<&[u8]>,
    ) -> Result<Result<(), Option<Self::Bytes>>, Self::Error>;

    /// The entries whose keys are in `range`.
    fn range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Entries<Self>;

    /// The entries whose keys start with `prefix`.
    fn scan_prefix(&self, prefix: impl AsRef<[u8]>) -> Entries<Self>;

    /// Every entry.
    fn iter(&self) -> Entries<Self> {
        self.range::<&[u8], _>(..)
    }
}

/// The keys of `entries`.
pub(super) fn keys<B, E>(
    entries: impl DoubleEndedIterator<Item = Result<(B, B), E>>,
) -> impl DoubleEndedIterator<Item = Result<B, E>> {
    entries.map(|e| e.map(|(k, _)| k))
}

/// `range`'s bounds as owned keys.
#[cfg(feature = "fjall")]
pub(super) fn owned_bounds<K: AsRef<[u8]>, R: RangeBounds<K>>(
    range: &R,
) -> (std::ops::Bound<Vec<u8>>, std::ops::Bound<Vec<u8>>) {
    let own = |b: std::ops::Bound<&K>| b.map(|k| k.as_ref().to_vec());
    (own(range.start_bound()), own(range.end_bound()))
}

#[cfg(feature = "sled")]
mod sled_engine {
    use super::{Entries, Kv, KvTree, RangeBounds, Sealed};

    impl Sealed for sled::Db {}

    impl Kv for sled::Db {
        type Tree = sled::Tree;
        type Error = sled::Error;
        const NAME: &'static str = "sled";

        fn open_tree(&self, name: &str) -> Result<sled::Tree, sled::Error> {
            sled::Db::open_tree(self, name)
        }

        fn drop_tree(&self, name: &str) -> Result<(), sled::Error> {
            sled::Db::drop_tree(self, name).map(drop)
        }

        fn flush(&self) -> Result<(), sled::Error> {
            sled::Tree::flush(self).map(drop)
        }
    }

    impl KvTree for sled::Tree {
        type Bytes = sled::IVec;
        type Error = sled::Error;

        fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<sled::IVec>, sled::Error> {
            sled::Tree::get(self, key)
        }

        fn contains_key(&self, key: impl AsRef<[u8]>) -> Result<bool, sled::Error> {
            sled::Tree::contains_key(self, key)
        }

        fn insert(
            &self,
            key: impl AsRef<[u8]>,
            value: impl AsRef<[u8]>,
        ) -> Result<(), sled::Error> {
            sled::Tree::insert(self, key, value.as_ref()).map(drop)
        }

        fn remove(&self, key: impl AsRef<[u8]>) -> Result<(), sled::Error> {
            sled::Tree::remove(self, key).map(drop)
        }

        fn swap(
            &self,
            key: impl AsRef<[u8]>,
            value: Option<&[u8]>,
        ) -> Result<Option<sled::IVec>, sled::Error> {
            match value {
                Some(v) => sled::Tree::insert(self, key, v),
                None => sled::Tree::remove(self, key),
            }
        }

        fn compare_and_swap(
            &self,
            key: impl AsRef<[u8]>,
            old: Option<&[u8]>,
            new: Option<&[u8]>,
        ) -> Result<Result<(), Option<sled::IVec>>, sled::Error> {
            Ok(sled::Tree::compare_and_swap(self, key, old, new)?.map_err(|e| e.current))
        }

        fn range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Entries<Self> {
            Box::new(sled::Tree::range(self, range))
        }

        fn scan_prefix(&self, prefix: impl AsRef<[u8]>) -> Entries<Self> {
            Box::new(sled::Tree::scan_prefix(self, prefix))
        }

        fn iter(&self) -> Entries<Self> {
            Box::new(sled::Tree::iter(self))
        }
    }
}
