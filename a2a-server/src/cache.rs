//! A first-in, first-out cache of one value per task, bounded by the values' encoded size:
//! the sled store's decoded records, the memory store's decoded finished tasks, and the
//! handler's serialized tasks.

use crate::store::FastMap;
use a2a_core::TaskId;
use std::collections::VecDeque;

/// A value's weight against the cache's bound: the size of its encoded form.
pub(crate) trait Weigh {
    /// Bytes counted against the bound.
    fn weight(&self) -> usize;
}

/// The cache. Not synchronized: callers keep it behind their own lock.
///
/// Each value has the serial number of its arrival, and `order` lists arrivals oldest first.
/// Removing a value leaves its arrival in `order` (finding it there would cost a walk over
/// the whole cache, on every delete of a cached task); an arrival whose value has gone, or
/// whose id has since arrived again, is skipped when its turn comes, and the skipped ones are
/// swept out once they are as many as the live ones, so `order` stays at most about twice the
/// cache.
#[derive(Debug)]
pub(crate) struct Fifo<V> {
    values: FastMap<TaskId, (V, u64)>,
    order: VecDeque<(TaskId, u64)>,
    /// The serial number of the next arrival.
    next: u64,
    /// Arrivals in `order` whose value has gone.
    stale: usize,
    bytes: usize,
    limit: usize,
}

impl<V: Clone + Weigh> Fifo<V> {
    /// An empty cache holding at most `limit` bytes of values.
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            values: FastMap::default(),
            order: VecDeque::new(),
            next: 0,
            stale: 0,
            bytes: 0,
            limit,
        }
    }

    /// A copy of the value of `id`, if cached.
    pub(crate) fn get(&self, id: &TaskId) -> Option<V> {
        self.values.get(id).map(|(v, _)| v.clone())
    }

    /// Caches `value` for `id` (replacing any value it had, which keeps its place in line),
    /// then evicts the oldest entries until the bound holds again.
    pub(crate) fn put(&mut self, id: TaskId, value: V) {
        self.bytes += value.weight();
        match self.values.get_mut(&id) {
            Some((old, _)) => {
                self.bytes -= old.weight();
                *old = value;
            }
            None => {
                let serial = self.next;
                self.next += 1;
                self.order.push_back((id.clone(), serial));
                self.values.insert(id, (value, serial));
            }
        }
        while self.bytes > self.limit {
            let Some((oldest, serial)) = self.order.pop_front() else {
                break;
            };
            match self.values.get(&oldest) {
                Some((_, s)) if *s == serial => {
                    let (old, _) = self.values.remove(&oldest).expect("just read");
                    self.bytes -= old.weight();
                }
                _ => self.stale = self.stale.saturating_sub(1),
            }
        }
    }

    /// Forgets the value of `id`.
    pub(crate) fn remove(&mut self, id: &TaskId) {
        let Some((old, _)) = self.values.remove(id) else {
            return;
        };
        self.bytes -= old.weight();
        self.stale += 1;
        if self.stale > self.values.len() {
            let values = &self.values;
            self.order
                .retain(|(id, serial)| values.get(id).is_some_and(|(_, s)| s == serial));
            self.stale = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Weigh for String {
        fn weight(&self) -> usize {
            self.len()
        }
    }

    #[test]
    fn the_oldest_values_go_first_once_the_bound_is_passed() {
        let mut cache = Fifo::new(10);
        cache.put(TaskId::from("a"), "1234".to_owned());
        cache.put(TaskId::from("b"), "1234".to_owned());
        cache.put(TaskId::from("a"), "12".to_owned()); // replaced: still first in line
        assert_eq!(cache.bytes, 6);
        cache.put(TaskId::from("c"), "12345".to_owned());
        assert_eq!(cache.get(&TaskId::from("a")), None);
        assert_eq!(cache.get(&TaskId::from("b")).as_deref(), Some("1234"));
        assert_eq!(cache.get(&TaskId::from("c")).as_deref(), Some("12345"));
        cache.remove(&TaskId::from("b"));
        assert_eq!(cache.get(&TaskId::from("b")), None);
        assert_eq!(cache.bytes, 5);
        cache.put(TaskId::from("d"), "12345678901".to_owned()); // alone over the bound
        assert_eq!(cache.bytes, 0);
        assert_eq!(cache.get(&TaskId::from("c")), None);
    }

    /// A value removed and cached again takes a new place at the end of the line: its old
    /// place does not evict it early. Removing values never lets the line grow past about
    /// twice the cache.
    #[test]
    fn a_removed_value_cached_again_waits_its_new_turn_and_the_line_stays_short() {
        let mut cache = Fifo::new(6);
        cache.put(TaskId::from("a"), "11".to_owned());
        cache.put(TaskId::from("b"), "22".to_owned());
        cache.remove(&TaskId::from("a"));
        cache.put(TaskId::from("a"), "33".to_owned()); // now after b
        cache.put(TaskId::from("c"), "44".to_owned());
        cache.put(TaskId::from("d"), "55".to_owned()); // over the bound: b goes, not a
        assert_eq!(cache.get(&TaskId::from("b")), None);
        assert_eq!(cache.get(&TaskId::from("a")).as_deref(), Some("33"));
        assert_eq!(cache.bytes, 6);

        let mut cache = Fifo::new(1_000_000);
        cache.put(TaskId::from("kept"), "x".to_owned());
        for i in 0..10_000 {
            let id = TaskId::from(format!("t{}", i % 3));
            cache.put(id.clone(), "y".to_owned());
            cache.remove(&id);
            assert!(cache.order.len() <= 2 * cache.values.len() + 2, "at {i}");
        }
        assert_eq!(cache.get(&TaskId::from("kept")).as_deref(), Some("x"));
        assert_eq!(cache.bytes, 1);
    }
}
