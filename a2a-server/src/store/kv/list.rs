//! Listing on sled: the `task_lists` tree (see `store::index`), its counts at open, the
//! one-time migrations of a database written before it existed or with four keys per task, and
//! `ListTasks` itself.

use super::{EmbeddedStore, Kv, KvTree, backend, engine, relist};
use crate::store::index::{self, Counts, Listed};
use crate::store::{ListPage, ListQuery, Scope, StoreError};
use a2a_core::{TaskId, TaskState, Timestamp};
use std::ops::Bound;

/// The key in tree `store_meta` that records that `task_lists` covers every task with two
/// keys (`T` and `B`, see `store::index`).
pub(super) const LISTS_BUILT: &[u8] = b"task_lists_v2";

/// The key in tree `store_meta` with which binaries before 2026-11-26 record that `task_lists`
/// covers every task with four keys. Found at open, it means that keys under the retired
/// prefixes (`index::RETIRED_KINDS`) may be there: they are removed, and so is this key, so
/// that such a binary, if it opens the database again, rebuilds its four keys per task rather
/// than list from prefixes no longer written.
const LISTS_BUILT_V1: &[u8] = b"task_lists_v1";

/// The indexed fields of a task record, decoded without the rest of the task.
#[derive(serde::Deserialize)]
struct Brief {
    task: BriefTask,
    #[serde(default)]
    scope: Scope,
    /// The relist generation the record was written in (0 before relists existed, when every
    /// write wrote its keys).
    #[serde(default)]
    lists: u64,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct BriefTask {
    id: String,
    context_id: String,
    #[serde(default)]
    status: BriefStatus,
}

#[derive(Default, serde::Deserialize)]
struct BriefStatus {
    #[serde(default)]
    state: TaskState,
    #[serde(default)]
    timestamp: Option<Timestamp>,
}

impl From<Brief> for Listed {
    fn from(b: Brief) -> Self {
        Self {
            scope: b.scope,
            context: b.task.context_id,
            state: b.task.status.state.as_str().to_owned(),
            millis: b.task.status.timestamp.map_or(0, Timestamp::unix_millis),
            id: b.task.id,
        }
    }
}

/// The indexed fields of a task record, decoded without the rest of the task.
pub(super) fn listed(record: &[u8]) -> Result<Listed, StoreError> {
    Ok(Listed::from(
        serde_json::from_slice::<Brief>(record).map_err(backend)?,
    ))
}

/// Counts the tasks of every listing prefix, reading only the indexed fields of each record,
/// and writes the listing keys of the records written in a generation not recorded as listed
/// (a crash came before their relist). When the database predates the listing indexes, writes
/// every record's keys in the same pass and then records that they are built; when it has
/// keys under the retired prefixes, removes them first. Returns the counts and the generation
/// to stamp new writes with (above every stamp read).
pub(super) fn open_indexes<K: Kv>(
    db: &K,
    tasks: &K::Tree,
    lists: &K::Tree,
) -> Result<(Counts, u64), StoreError> {
    let meta = db.open_tree(super::META).map_err(backend)?;
    let four_keys = meta.get(LISTS_BUILT_V1).map_err(backend)?.is_some();
    let build = !four_keys && meta.get(LISTS_BUILT).map_err(backend)?.is_none();
    if four_keys {
        let mut removed = 0usize;
        for kind in index::RETIRED_KINDS {
            for key in engine::keys(lists.scan_prefix([kind])) {
                lists.remove(key.map_err(backend)?).map_err(backend)?;
                removed += 1;
            }
        }
        tracing::info!(removed, "removed the listing keys of the retired prefixes");
    }
    let listed_up_to = relist::listed_up_to(&meta)?;
    let (mut counts, mut newest, mut wrote) = (Counts::default(), listed_up_to, false);
    for entry in tasks.iter() {
        let (_, bytes) = entry.map_err(backend)?;
        let brief = serde_json::from_slice::<Brief>(&bytes).map_err(backend)?;
        let lagging = brief.lists > listed_up_to;
        newest = newest.max(brief.lists);
        let listed = Listed::from(brief);
        if build || lagging {
            for k in index::keys(&listed) {
                lists.insert(k, &[] as &[u8]).map_err(backend)?;
            }
            wrote = true;
        }
        counts.apply(&listed, true);
    }
    if wrote || build || four_keys {
        // The entries are durable before the markers that say they exist (or, for a database
        // with four keys per task, that the retired ones are gone).
        db.flush().map_err(backend)?;
        meta.insert(LISTS_BUILT, &[1u8] as &[u8]).map_err(backend)?;
        meta.remove(LISTS_BUILT_V1).map_err(backend)?;
        meta.insert(relist::LISTED_UP_TO, newest.to_be_bytes())
            .map_err(backend)?;
        db.flush().map_err(backend)?;
    }
    Ok((counts, newest + 1))
}

/// One range of a listing's merge: its prefix, the keys after the page token under it, and
/// the next of them at or after `statusTimestampAfter`.
struct Lane<T: KvTree> {
    prefix: Vec<u8>,
    keys: engine::Entries<T>,
    next: Option<T::Bytes>,
}

impl<T: KvTree> Lane<T> {
    fn open(
        lists: &T,
        prefix: Vec<u8>,
        token: Option<&(std::cmp::Reverse<i64>, String)>,
        after: Option<i64>,
    ) -> Result<Self, StoreError> {
        let start = index::start_key(&prefix, token);
        let keys = lists.range((Bound::Excluded(start), Bound::Unbounded));
        let mut lane = Self {
            prefix,
            keys,
            next: None,
        };
        lane.advance(after)?;
        Ok(lane)
    }

    fn advance(&mut self, after: Option<i64>) -> Result<(), StoreError> {
        self.next = match self.keys.next().transpose().map_err(backend)? {
            Some((key, _))
                if key.starts_with(&self.prefix)
                    && index::at_or_after(&key, self.prefix.len(), after) =>
            {
                Some(key)
            }
            _ => None,
        };
        Ok(())
    }

    /// The order part of the next key (inverted millis, then id): the same in every lane.
    fn order(&self) -> Option<&[u8]> {
        self.next.as_deref().map(|k| &k[self.prefix.len()..])
    }
}

impl<K: Kv> EmbeddedStore<K> {
    /// `ListTasks` (on a blocking thread): the page is the merge, newest first, of the index
    /// ranges that answer the filters (one per state without a `status` filter), each starting
    /// after the page token and ending at `statusTimestampAfter`; only the page's records are
    /// read. `totalSize` is the filters' count, or with `statusTimestampAfter` a walk over
    /// index keys (no records) of the shorter side of that time in each range (see
    /// `index::count_after`).
    pub(super) fn list_blocking(&self, query: &ListQuery) -> Result<ListPage, StoreError> {
        let token = query.start_after()?;
        let after = query.status_timestamp_after.map(Timestamp::unix_millis);
        let mut lanes = (index::query_ranges(query).into_iter())
            .map(|prefix| Lane::open(&self.lists, prefix, token.as_ref(), after))
            .collect::<Result<Vec<_>, _>>()?;
        let mut tasks = Vec::with_capacity(query.page_size.min(128));
        let mut more = false;
        let mut stale = Vec::new();
        while let Some(lane) = (lanes.iter_mut())
            .filter(|l| l.next.is_some())
            .min_by(|a, b| a.order().cmp(&b.order()))
        {
            let key = lane.next.take().expect("a lane with a next key");
            #[cfg(test)]
            self.visited
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            match self.current(&key, lane.prefix.len())? {
                None => stale.push((key, lane.prefix.len())),
                Some(_) if tasks.len() == query.page_size => {
                    more = true;
                    break;
                }
                Some(t) => tasks.push(t),
            }
            lane.advance(after)?;
        }
        for (key, prefix_len) in stale {
            self.remove_if_stale(&key, prefix_len)?;
        }
        let counts = self.counts.lock().expect("counts lock");
        let total_size = match after {
            None => counts.get(&index::query_prefix(query)),
            Some(_) => {
                let totals: Vec<usize> = lanes.iter().map(|l| counts.get(&l.prefix)).collect();
                drop(counts);
                let mut sum = 0;
                for (lane, total) in lanes.iter().zip(totals) {
                    let side = |k: Result<<K::Tree as KvTree>::Bytes, K::Error>| {
                        k.map(|k| index::at_or_after(&k, lane.prefix.len(), after))
                            .map_err(backend)
                    };
                    let range =
                        || (self.lists).range(lane.prefix.clone()..index::end_key(&lane.prefix));
                    sum += index::count_after(
                        total,
                        engine::keys(range()).map(side),
                        engine::keys(range()).rev().map(side),
                    )?;
                }
                sum
            }
        };
        Ok(ListPage::new(tasks, more, total_size))
    }

    /// The task a listing key points to, if the key is current: it is one of the keys of the
    /// task's committed record. Any other key is left over from a write in flight or cut short
    /// by a crash, and is skipped.
    pub(super) fn current(
        &self,
        key: &[u8],
        prefix_len: usize,
    ) -> Result<Option<crate::store::StoredTask>, StoreError> {
        let Some(id) = index::id_of(key, prefix_len) else {
            return Ok(None);
        };
        let Some(record) = self.load(&TaskId::from(id))? else {
            return Ok(None);
        };
        let listed = Listed::of(&record.stored);
        Ok(
            (index::key_under(&listed, &key[..prefix_len]).as_deref() == Some(key))
                .then_some(record.stored),
        )
    }

    /// Removes a listing key that pointed at no committed record, unless a write made it
    /// current meanwhile: checked again under the task's write lock, which a write holds from
    /// inserting its keys to committing its record.
    pub(super) fn remove_if_stale(&self, key: &[u8], prefix_len: usize) -> Result<(), StoreError> {
        let Some(id) = index::id_of(key, prefix_len) else {
            return Ok(()); // not a key this store writes; leave it
        };
        let _stripe = self.stripe(id);
        if self.current(key, prefix_len)?.is_none() {
            self.lists.remove(key).map_err(backend)?;
        }
        Ok(())
    }
}
