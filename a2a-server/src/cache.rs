//! A first-in, first-out cache of one value per task, bounded by the values' encoded size:
//! the sled store's decoded records, and the handler's serialized tasks.

use crate::store::FastMap;
use a2a_core::TaskId;
use std::collections::VecDeque;

/// A value's weight against the cache's bound: the size of its encoded form.
pub(crate) trait Weigh {
    /// Bytes counted against the bound.
    fn weight(&self) -> usize;
}

/// The cache. Not synchronized: callers keep it behind their own lock.
#[derive(Debug)]
pub(crate) struct Fifo<V> {
    values: FastMap<TaskId, V>,
    order: VecDeque<TaskId>,
    bytes: usize,
    limit: usize,
}

impl<V: Clone + Weigh> Fifo<V> {
    /// An empty cache holding at most `limit` bytes of values.
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            values: FastMap::default(),
            order: VecDeque::new(),
            bytes: 0,
            limit,
        }
    }

    /// A copy of the value of `id`, if cached.
    pub(crate) fn get(&self, id: &TaskId) -> Option<V> {
        self.values.get(id).cloned()
    }

    /// Caches `value` for `id` (replacing any value it had), then evicts the oldest entries
    /// until the bound holds again.
    pub(crate) fn put(&mut self, id: TaskId, value: V) {
        self.bytes += value.weight();
        match self.values.insert(id.clone(), value) {
            Some(old) => self.bytes -= old.weight(),
            None => self.order.push_back(id),
        }
        while self.bytes > self.limit {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            if let Some(old) = self.values.remove(&oldest) {
                self.bytes -= old.weight();
            }
        }
    }

    /// Forgets the value of `id`.
    pub(crate) fn remove(&mut self, id: &TaskId) {
        if let Some(old) = self.values.remove(id) {
            self.bytes -= old.weight();
            self.order.retain(|o| o != id);
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
}
