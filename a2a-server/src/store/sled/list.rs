//! Listing on sled: the `task_lists` tree (see `store::index`), its counts at open, the
//! one-time migration of a database written before it existed, and `ListTasks` itself.

use super::{SledStore, backend, relist};
use crate::store::index::{self, Counts, Listed};
use crate::store::{ListPage, ListQuery, Scope, StoreError};
use a2a_core::{TaskId, TaskState, Timestamp};
use std::ops::Bound;

/// The key in tree `store_meta` that records that `task_lists` covers every task.
pub(super) const LISTS_BUILT: &[u8] = b"task_lists_v1";

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
/// every record's keys in the same pass and then records that they are built. Returns the
/// counts and the generation to stamp new writes with (above every stamp read).
pub(super) fn open_indexes(
    db: &sled::Db,
    tasks: &sled::Tree,
    lists: &sled::Tree,
) -> Result<(Counts, u64), StoreError> {
    let meta = db.open_tree(super::META).map_err(backend)?;
    let build = meta.get(LISTS_BUILT).map_err(backend)?.is_none();
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
    if wrote || build {
        // The entries are durable before the markers that say they exist.
        db.flush().map_err(backend)?;
        meta.insert(LISTS_BUILT, &[1u8] as &[u8]).map_err(backend)?;
        meta.insert(relist::LISTED_UP_TO, &newest.to_be_bytes())
            .map_err(backend)?;
        db.flush().map_err(backend)?;
    }
    Ok((counts, newest + 1))
}

impl SledStore {
    /// `ListTasks` (on a blocking thread): the page is a range of the index whose prefix
    /// matches the filters, starting after the page token and ending at `statusTimestampAfter`;
    /// only the page's records are read. `totalSize` is the prefix's count, or with
    /// `statusTimestampAfter` a walk over index keys (no records) of the shorter side of that
    /// time (see `index::count_after`).
    pub(super) fn list_blocking(&self, query: &ListQuery) -> Result<ListPage, StoreError> {
        let token = query.start_after()?;
        let prefix = index::query_prefix(query);
        let after = query.status_timestamp_after.map(Timestamp::unix_millis);
        let start = index::start_key(&prefix, token.as_ref());
        let mut tasks = Vec::with_capacity(query.page_size.min(128));
        let mut more = false;
        let mut stale = Vec::new();
        for entry in self.lists.range((Bound::Excluded(start), Bound::Unbounded)) {
            let (key, _) = entry.map_err(backend)?;
            if !key.starts_with(&prefix) || !index::at_or_after(&key, prefix.len(), after) {
                break;
            }
            #[cfg(test)]
            self.visited
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(t) = self.current(&key, prefix.len())? else {
                stale.push(key);
                continue;
            };
            if tasks.len() == query.page_size {
                more = true;
                break;
            }
            tasks.push(t);
        }
        for key in stale {
            self.remove_if_stale(&key, prefix.len())?;
        }
        let total = self.counts.lock().expect("counts lock").get(&prefix);
        let total_size = match after {
            None => total,
            Some(_) => {
                let side = |k: Result<sled::IVec, sled::Error>| {
                    k.map(|k| index::at_or_after(&k, prefix.len(), after))
                        .map_err(backend)
                };
                let range = || self.lists.range(prefix.clone()..index::end_key(&prefix));
                index::count_after(
                    total,
                    range().keys().map(side),
                    range().keys().rev().map(side),
                )?
            }
        };
        Ok(ListPage::new(tasks, more, total_size))
    }

    /// The task a listing key points to, if the key is current: it is one of the keys of the
    /// task's committed record. Any other key is left over from a write in flight or cut short
    /// by a crash, and is skipped.
    fn current(
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
    fn remove_if_stale(&self, key: &[u8], prefix_len: usize) -> Result<(), StoreError> {
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
