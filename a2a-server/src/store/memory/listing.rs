//! The memory store's listing indexes: for each prefix of `index::prefixes` (scope, scope and
//! context, scope and state, all three), its tasks in list order, newest status first, ties
//! by id. A listing reads a range of one prefix; its count is the prefix's length.

use crate::store::FastMap;
use a2a_core::TaskId;
use std::cmp::Reverse;
use std::collections::{BTreeSet, btree_set};
use std::ops::Bound;

/// A task's place in a listing: its status time, newest first, then its id.
pub(super) type Key = (Reverse<i64>, TaskId);

/// Up to this many tasks, a prefix keeps them in a sorted vector.
const SMALL: usize = 16;

/// The tasks under one prefix. Most prefixes are a context's, holding a task or two: a short
/// sorted vector, exactly as long as it is, costs a few dozen bytes where a B-tree set would
/// allocate a whole node. A prefix that grows past [`SMALL`] becomes a set.
#[derive(Debug)]
enum Bucket {
    Small(Vec<Key>),
    Large(BTreeSet<Key>),
}

impl Bucket {
    fn insert(&mut self, key: Key) {
        match self {
            Bucket::Small(keys) => {
                let Err(at) = keys.binary_search(&key) else {
                    return;
                };
                if keys.len() < SMALL {
                    keys.reserve_exact(1);
                    keys.insert(at, key);
                } else {
                    let mut set: BTreeSet<Key> = std::mem::take(keys).into_iter().collect();
                    set.insert(key);
                    *self = Bucket::Large(set);
                }
            }
            Bucket::Large(set) => {
                set.insert(key);
            }
        }
    }
}

/// Every prefix's tasks.
#[derive(Debug, Default)]
pub(super) struct Listing(FastMap<Box<[u8]>, Bucket>);

impl Listing {
    /// Lists `key` under `prefix`.
    pub(super) fn insert(&mut self, prefix: Vec<u8>, key: Key) {
        match self.0.get_mut(&prefix[..]) {
            Some(bucket) => bucket.insert(key),
            None => {
                self.0.insert(prefix.into(), Bucket::Small(vec![key]));
            }
        }
    }

    /// Takes `key` out of `prefix`.
    pub(super) fn remove(&mut self, prefix: &[u8], key: &Key) {
        let empty = match self.0.get_mut(prefix) {
            Some(Bucket::Small(keys)) => {
                if let Ok(at) = keys.binary_search(key) {
                    keys.remove(at);
                    keys.shrink_to_fit();
                }
                keys.is_empty()
            }
            Some(Bucket::Large(set)) => {
                set.remove(key);
                set.is_empty()
            }
            None => false,
        };
        if empty {
            self.0.remove(prefix);
        }
    }

    /// How many tasks `prefix` holds.
    pub(super) fn count(&self, prefix: &[u8]) -> usize {
        match self.0.get(prefix) {
            Some(Bucket::Small(keys)) => keys.len(),
            Some(Bucket::Large(set)) => set.len(),
            None => 0,
        }
    }

    /// The tasks of `prefix` from `start` on, in list order (or backwards, from the oldest).
    pub(super) fn range<'a>(&'a self, prefix: &[u8], start: Bound<&Key>) -> Range<'a> {
        match self.0.get(prefix) {
            Some(Bucket::Small(keys)) => {
                let from = match start {
                    Bound::Unbounded => 0,
                    Bound::Included(k) => keys.partition_point(|e| e < k),
                    Bound::Excluded(k) => keys.partition_point(|e| e <= k),
                };
                Range::Small(keys[from..].iter())
            }
            Some(Bucket::Large(set)) => Range::Large(set.range((start, Bound::Unbounded))),
            None => Range::Small([].iter()),
        }
    }
}

/// The iterator of [`Listing::range`].
pub(super) enum Range<'a> {
    Small(std::slice::Iter<'a, Key>),
    Large(btree_set::Range<'a, Key>),
}

impl<'a> Iterator for Range<'a> {
    type Item = &'a Key;

    fn next(&mut self) -> Option<&'a Key> {
        match self {
            Range::Small(it) => it.next(),
            Range::Large(it) => it.next(),
        }
    }
}

impl DoubleEndedIterator for Range<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match self {
            Range::Small(it) => it.next_back(),
            Range::Large(it) => it.next_back(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(ms: i64, id: &str) -> Key {
        (Reverse(ms), TaskId::from(id))
    }

    #[test]
    fn a_prefix_reads_the_same_small_and_large() {
        let mut listing = Listing::default();
        // Inserted out of order, past the small size, with removals on the way.
        let mut expected = Vec::new();
        for i in 0..(SMALL as i64 * 3) {
            let k = key((i * 7) % 40, &format!("t{i:03}"));
            listing.insert(b"p".to_vec(), k.clone());
            expected.push(k);
            if i % 5 == 0 {
                let gone = expected.remove(expected.len() / 2);
                listing.remove(b"p", &gone);
            }
            expected.sort();
            let all: Vec<Key> = listing.range(b"p", Bound::Unbounded).cloned().collect();
            assert_eq!(all, expected, "after {i}");
            assert_eq!(listing.count(b"p"), expected.len());
            let Some(mid) = expected.get(expected.len() / 2) else {
                continue;
            };
            let after: Vec<Key> = listing.range(b"p", Bound::Excluded(mid)).cloned().collect();
            assert_eq!(after, expected[expected.len() / 2 + 1..]);
            let back: Vec<Key> = listing
                .range(b"p", Bound::Unbounded)
                .rev()
                .cloned()
                .collect();
            assert!(back.iter().rev().eq(expected.iter()));
        }
        assert_eq!(listing.count(b"other"), 0);
        for k in expected {
            listing.remove(b"p", &k);
        }
        assert!(listing.0.is_empty(), "an empty prefix is dropped");
    }
}
