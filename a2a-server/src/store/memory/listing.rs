//! The memory store's listing indexes: a scope's tasks in list order (newest status first,
//! ties by id), all of them, by state, by context, and by context and state. A listing reads
//! a range of one of them; its count is that index's length. They answer the same four
//! queries as the byte prefixes of `store::index` (scope, scope and context, scope and state,
//! all three), kept as typed maps instead: a prefix built, allocated and hashed as bytes cost
//! every write twelve of them, and each context held two of its own.

use crate::store::{FastMap, Scope};
use a2a_core::{ContextId, TaskId, TaskState};
use std::cmp::Reverse;
use std::collections::{BTreeSet, btree_set};
use std::ops::Bound;

/// A task's place in a listing: its status time, newest first, then its id.
pub(super) type Key = (Reverse<i64>, TaskId);

/// A state as the indexes tell them apart (`state_byte`). A stored task's state is a known
/// one; an unknown name is indexed as one more state of its own.
type State = u8;

fn state_of(state: &TaskState) -> State {
    super::state_byte(state).unwrap_or(u8::MAX)
}

/// Up to this many tasks, a scope's index or a context keeps them in a sorted vector.
const SMALL: usize = 16;

/// Tasks in list order. Most are few: a short sorted vector, exactly as long as it is, costs a
/// few dozen bytes where a B-tree set would allocate a whole node. Past [`SMALL`] tasks it
/// becomes a set.
#[derive(Debug)]
enum Bucket {
    Small(Vec<Key>),
    Large(BTreeSet<Key>),
}

impl Default for Bucket {
    fn default() -> Self {
        Bucket::Small(Vec::new())
    }
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

    /// Takes `key` out; whether the bucket is then empty.
    fn remove(&mut self, key: &Key) -> bool {
        match self {
            Bucket::Small(keys) => {
                if let Ok(at) = keys.binary_search(key) {
                    keys.remove(at);
                    keys.shrink_to_fit();
                }
                keys.is_empty()
            }
            Bucket::Large(set) => {
                set.remove(key);
                set.is_empty()
            }
        }
    }

    fn len(&self) -> usize {
        match self {
            Bucket::Small(keys) => keys.len(),
            Bucket::Large(set) => set.len(),
        }
    }

    fn range(&self, start: Bound<&Key>) -> Range<'_> {
        match self {
            Bucket::Small(keys) => Range::Small(keys[from(keys, |k| k, start)..].iter()),
            Bucket::Large(set) => Range::Large(set.range((start, Bound::Unbounded))),
        }
    }
}

/// Where `start` falls in sorted `entries`.
fn from<T>(entries: &[T], key: impl Fn(&T) -> &Key, start: Bound<&Key>) -> usize {
    match start {
        Bound::Unbounded => 0,
        Bound::Included(k) => entries.partition_point(|e| key(e) < k),
        Bound::Excluded(k) => entries.partition_point(|e| key(e) <= k),
    }
}

/// A context's tasks. Most contexts hold a task or two: then one short sorted slice of keys
/// with their states answers both the context and the context-and-state queries (a filter
/// over at most [`SMALL`] entries). A larger context keeps a set, and a bucket per state.
#[derive(Debug)]
enum Context {
    Small(Box<[(Key, State)]>),
    Large(Box<LargeContext>),
}

#[derive(Debug, Default)]
struct LargeContext {
    all: BTreeSet<Key>,
    by_state: FastMap<State, Bucket>,
}

impl Context {
    fn insert(&mut self, key: Key, state: State) {
        match self {
            Context::Small(entries) => {
                let Err(at) = entries.binary_search_by(|(k, _)| k.cmp(&key)) else {
                    return;
                };
                if entries.len() < SMALL {
                    let mut grown = std::mem::take(entries).into_vec();
                    grown.reserve_exact(1);
                    grown.insert(at, (key, state));
                    *entries = grown.into_boxed_slice();
                } else {
                    let mut large = LargeContext::default();
                    for (k, s) in std::mem::take(entries).into_vec() {
                        large.insert(k, s);
                    }
                    large.insert(key, state);
                    *self = Context::Large(Box::new(large));
                }
            }
            Context::Large(large) => large.insert(key, state),
        }
    }

    /// Moves the task at `from` (in state `was`) to `to` (in `now`).
    fn moved(&mut self, from: &Key, was: State, to: Key, now: State) {
        if let Context::Small(entries) = self
            && let Ok(at) = entries.binary_search_by(|(k, _)| k.cmp(from))
        {
            entries[at] = (to, now);
            entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            return;
        }
        self.remove(from, was);
        self.insert(to, now);
    }

    /// Takes `key` (in `state`) out; whether the context is then empty.
    fn remove(&mut self, key: &Key, state: State) -> bool {
        match self {
            Context::Small(entries) => {
                if let Ok(at) = entries.binary_search_by(|(k, _)| k.cmp(key)) {
                    let mut left = std::mem::take(entries).into_vec();
                    left.remove(at);
                    *entries = left.into_boxed_slice();
                }
                entries.is_empty()
            }
            Context::Large(large) => {
                large.all.remove(key);
                if let Some(bucket) = large.by_state.get_mut(&state)
                    && bucket.remove(key)
                {
                    large.by_state.remove(&state);
                }
                large.all.is_empty()
            }
        }
    }

    fn count(&self, state: Option<State>) -> usize {
        match (self, state) {
            (Context::Small(entries), None) => entries.len(),
            (Context::Small(entries), Some(s)) => entries.iter().filter(|e| e.1 == s).count(),
            (Context::Large(large), None) => large.all.len(),
            (Context::Large(large), Some(s)) => large.by_state.get(&s).map_or(0, Bucket::len),
        }
    }

    fn range(&self, state: Option<State>, start: Bound<&Key>) -> Range<'_> {
        match (self, state) {
            (Context::Small(entries), state) => {
                let at = from(entries, |e| &e.0, start);
                Range::Context(entries[at..].iter(), state)
            }
            (Context::Large(large), None) => {
                Range::Large(large.all.range((start, Bound::Unbounded)))
            }
            (Context::Large(large), Some(s)) => large
                .by_state
                .get(&s)
                .map_or(Range::Small([].iter()), |b| b.range(start)),
        }
    }
}

impl LargeContext {
    fn insert(&mut self, key: Key, state: State) {
        self.by_state.entry(state).or_default().insert(key.clone());
        self.all.insert(key);
    }
}

/// One scope's indexes.
#[derive(Debug, Default)]
struct ScopeLists {
    all: Bucket,
    by_state: FastMap<State, Bucket>,
    contexts: FastMap<ContextId, Context>,
}

/// Which of a scope's tasks a listing reads: all, or those of a context, of a state, or both.
#[derive(Clone, Copy, Debug)]
pub(super) struct Filter<'a> {
    scope: &'a Scope,
    context: Option<&'a ContextId>,
    state: Option<State>,
}

impl<'a> Filter<'a> {
    pub(super) fn new(
        scope: &'a Scope,
        context: Option<&'a ContextId>,
        state: Option<&TaskState>,
    ) -> Self {
        Self {
            scope,
            context,
            state: state.map(state_of),
        }
    }
}

/// Every scope's indexes.
#[derive(Debug, Default)]
pub(super) struct Listing(FastMap<Scope, ScopeLists>);

impl Listing {
    /// Lists the task at `key` (its status time and id) under its scope, context and state.
    pub(super) fn insert(
        &mut self,
        scope: &Scope,
        context: &ContextId,
        state: &TaskState,
        key: Key,
    ) {
        let state = state_of(state);
        let lists = match self.0.get_mut(scope) {
            Some(lists) => lists,
            None => self.0.entry(scope.clone()).or_default(),
        };
        lists.all.insert(key.clone());
        lists.by_state.entry(state).or_default().insert(key.clone());
        match lists.contexts.get_mut(context) {
            Some(listed) => listed.insert(key, state),
            None => {
                let listed = Context::Small(Box::new([(key, state)]));
                lists.contexts.insert(context.clone(), listed);
            }
        }
    }

    /// Moves a task whose status changed from `from` (its state and key as listed) to `to`,
    /// in its scope and context: one lookup of each, and a context is not taken out and put
    /// back (most hold one task, which a removal would empty).
    pub(super) fn moved(
        &mut self,
        scope: &Scope,
        context: &ContextId,
        from: (&TaskState, &Key),
        to: (&TaskState, Key),
    ) {
        let Some(lists) = self.0.get_mut(scope) else {
            return self.insert(scope, context, to.0, to.1);
        };
        let ((was, old), (now, key)) = ((state_of(from.0), from.1), (state_of(to.0), to.1));
        if *old != key {
            lists.all.remove(old);
            lists.all.insert(key.clone());
        }
        if let Some(bucket) = lists.by_state.get_mut(&was)
            && bucket.remove(old)
        {
            lists.by_state.remove(&was);
        }
        lists.by_state.entry(now).or_default().insert(key.clone());
        match lists.contexts.get_mut(context) {
            Some(listed) => listed.moved(old, was, key, now),
            None => {
                let listed = Context::Small(Box::new([(key, now)]));
                lists.contexts.insert(context.clone(), listed);
            }
        }
    }

    /// Takes the task at `key` out (as it was listed: same scope, context and state).
    pub(super) fn remove(
        &mut self,
        scope: &Scope,
        context: &ContextId,
        state: &TaskState,
        key: &Key,
    ) {
        let state = state_of(state);
        let Some(lists) = self.0.get_mut(scope) else {
            return;
        };
        if let Some(bucket) = lists.by_state.get_mut(&state)
            && bucket.remove(key)
        {
            lists.by_state.remove(&state);
        }
        if let Some(listed) = lists.contexts.get_mut(context)
            && listed.remove(key, state)
        {
            lists.contexts.remove(context);
        }
        if lists.all.remove(key) {
            self.0.remove(scope);
        }
    }

    /// How many tasks `filter` selects.
    pub(super) fn count(&self, filter: Filter<'_>) -> usize {
        let Some(lists) = self.0.get(filter.scope) else {
            return 0;
        };
        match (filter.context, filter.state) {
            (None, None) => lists.all.len(),
            (None, Some(s)) => lists.by_state.get(&s).map_or(0, Bucket::len),
            (Some(c), state) => lists.contexts.get(c).map_or(0, |c| c.count(state)),
        }
    }

    /// The tasks `filter` selects from `start` on, in list order (or backwards, from the
    /// oldest).
    pub(super) fn range<'a>(&'a self, filter: Filter<'_>, start: Bound<&Key>) -> Range<'a> {
        let empty = Range::Small([].iter());
        let Some(lists) = self.0.get(filter.scope) else {
            return empty;
        };
        match (filter.context, filter.state) {
            (None, None) => lists.all.range(start),
            (None, Some(s)) => lists.by_state.get(&s).map_or(empty, |b| b.range(start)),
            (Some(c), state) => lists
                .contexts
                .get(c)
                .map_or(empty, |c| c.range(state, start)),
        }
    }
}

/// The iterator of [`Listing::range`].
pub(super) enum Range<'a> {
    Small(std::slice::Iter<'a, Key>),
    Large(btree_set::Range<'a, Key>),
    /// A small context's entries, those in a state if one is given.
    Context(std::slice::Iter<'a, (Key, State)>, Option<State>),
}

impl<'a> Iterator for Range<'a> {
    type Item = &'a Key;

    fn next(&mut self) -> Option<&'a Key> {
        match self {
            Range::Small(it) => it.next(),
            Range::Large(it) => it.next(),
            Range::Context(it, state) => it.find(|e| state.is_none_or(|s| e.1 == s)).map(|e| &e.0),
        }
    }
}

impl DoubleEndedIterator for Range<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match self {
            Range::Small(it) => it.next_back(),
            Range::Large(it) => it.next_back(),
            Range::Context(it, state) => it.rfind(|e| state.is_none_or(|s| e.1 == s)).map(|e| &e.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{StoredTask, order_key};
    use a2a_core::{Task, TaskStatus, Timestamp};
    use std::sync::Arc;

    impl Listing {
        fn insert_task(&mut self, t: &StoredTask) {
            let task = &t.task;
            self.insert(&t.scope, &task.context_id, &task.status.state, order_key(t));
        }

        fn remove_task(&mut self, t: &StoredTask) {
            let task = &t.task;
            self.remove(
                &t.scope,
                &task.context_id,
                &task.status.state,
                &order_key(t),
            );
        }

        fn move_task(&mut self, from: &StoredTask, to: &StoredTask) {
            let (was, now) = (&from.task.status.state, &to.task.status.state);
            let context = &from.task.context_id;
            let key = order_key(from);
            self.moved(&from.scope, context, (was, &key), (now, order_key(to)));
        }
    }

    fn task(ms: i64, id: &str, context: &str, state: TaskState) -> StoredTask {
        let mut status = TaskStatus::new(state);
        status.timestamp = Timestamp::from_unix_millis(ms);
        StoredTask {
            task: Arc::new(Task::new(
                TaskId::from(id),
                ContextId::from(context),
                status,
            )),
            version: 1,
            scope: Scope::default(),
        }
    }

    /// Every filter reads the same small and large, in order, from any start, both ways.
    #[test]
    fn every_filter_reads_the_same_small_and_large() {
        let mut listing = Listing::default();
        let states = [TaskState::Working, TaskState::Completed, TaskState::Failed];
        // Inserted out of order, well past the small size, with removals and status changes
        // (a new time, a new state, or both) on the way; two contexts, three states.
        let mut expected: Vec<StoredTask> = Vec::new();
        for i in 0..(SMALL as i64 * 5) {
            let t = task(
                (i * 7) % 40,
                &format!("t{i:03}"),
                ["a", "b"][(i % 2) as usize],
                states[(i % 3) as usize].clone(),
            );
            listing.insert_task(&t);
            expected.push(t);
            if i % 5 == 0 {
                let gone = expected.remove(expected.len() / 2);
                listing.remove_task(&gone);
            }
            if i % 4 == 1 {
                let at = expected.len() / 3;
                let from = &expected[at];
                let ms = from.task.status.timestamp.map_or(0, Timestamp::unix_millis);
                let (ms, state) = match i % 3 {
                    0 => (ms + 11, from.task.status.state.clone()),
                    1 => (ms, states[(i as usize / 4) % 3].clone()),
                    _ => (ms + 3, states[(i as usize / 4 + 1) % 3].clone()),
                };
                let to = task(
                    ms,
                    from.task.id.as_str(),
                    from.task.context_id.as_str(),
                    state,
                );
                listing.move_task(from, &to);
                expected[at] = to;
            }
            let scope = Scope::default();
            let contexts = [None, Some(ContextId::from("a")), Some(ContextId::from("b"))];
            for context in &contexts {
                for state in [None, Some(TaskState::Working), Some(TaskState::Failed)] {
                    let filter = Filter::new(&scope, context.as_ref(), state.as_ref());
                    let mut want: Vec<Key> = expected
                        .iter()
                        .filter(|t| context.as_ref().is_none_or(|c| &t.task.context_id == c))
                        .filter(|t| state.as_ref().is_none_or(|s| &t.task.status.state == s))
                        .map(order_key)
                        .collect();
                    want.sort();
                    let what = format!("after {i}, {context:?} {state:?}");
                    let all: Vec<Key> = listing.range(filter, Bound::Unbounded).cloned().collect();
                    assert_eq!(all, want, "{what}");
                    assert_eq!(listing.count(filter), want.len(), "{what}");
                    let back: Vec<Key> = listing
                        .range(filter, Bound::Unbounded)
                        .rev()
                        .cloned()
                        .collect();
                    assert!(back.iter().rev().eq(want.iter()), "{what}");
                    let Some(mid) = want.get(want.len() / 2) else {
                        continue;
                    };
                    let after: Vec<Key> = listing
                        .range(filter, Bound::Excluded(mid))
                        .cloned()
                        .collect();
                    assert_eq!(after, want[want.len() / 2 + 1..], "{what}");
                    let at: Vec<Key> = listing
                        .range(filter, Bound::Included(mid))
                        .cloned()
                        .collect();
                    assert_eq!(at, want[want.len() / 2..], "{what}");
                }
            }
        }
        let other = Scope {
            tenant: Some("other".into()),
            owner: None,
        };
        assert_eq!(listing.count(Filter::new(&other, None, None)), 0);
        for t in expected {
            listing.remove_task(&t);
        }
        assert!(listing.0.is_empty(), "an empty scope is dropped");
    }
}
