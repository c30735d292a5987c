//! The listing indexes shared by both stores: byte keys that sort a scope's tasks newest status
//! first (ties by id), and the per-prefix task counts that give a listing's `totalSize` without
//! reading the tasks.
//!
//! A key is `prefix ++ inverted status millis (u64 big-endian) ++ id`, where the prefix is one
//! of (kind byte, then each part length-prefixed so that no prefix is a prefix of another):
//!
//! | kind | prefix | answers |
//! |---|---|---|
//! | `T` | scope, state | `status`; with no filter, the merge of every state's range |
//! | `B` | scope, context, state | `contextId` and `status`; `contextId` alone, the merge of every state's range under the context |
//!
//! A task has two keys, one under each. A listing walks one range, or merges one per state
//! (nine, [`TaskState::ALL`]), newest first across them: a page still reads only the page,
//! plus one seek per state. Databases written before 2026-11-26 also held keys under `S`
//! (scope) and `C` (scope, context), one range each: two more keys per task, which cost a sled
//! write half of its listing work (see `sled/list.rs` for their removal).
//!
//! The counts keep all four prefixes, `S` and `C` included (they are in memory only).
//!
//! `statusTimestampAfter` needs no index of its own: the newest tasks come first under every
//! prefix, so the tasks at or after a time are the start of the prefix's range.

// The keys, counts and walks are the sled store's (the memory store keeps typed maps of the
// same four indexes, `store/memory/listing.rs`).
#![cfg_attr(not(any(feature = "sled", feature = "fjall")), allow(dead_code))]
use super::{FastMap, ListQuery, Scope, StoredTask};
use a2a_core::{ContextId, TaskState};
use std::collections::BTreeSet;

/// What the indexes know of a task: its scope, context, state, status time and id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Listed {
    pub(crate) scope: Scope,
    pub(crate) context: String,
    pub(crate) state: String,
    pub(crate) millis: i64,
    pub(crate) id: String,
}

/// Whether a write from `old` to `new` leaves the task's listing keys as they are: a task
/// keeps its scope, context and id, so only a new state or status time moves them (an
/// artifact or a message does not).
pub(crate) fn unmoved(old: &StoredTask, new: &StoredTask) -> bool {
    old.task.status.state == new.task.status.state && old.sort_millis() == new.sort_millis()
}

impl Listed {
    /// The indexed fields of a stored task.
    pub(crate) fn of(t: &StoredTask) -> Self {
        Self {
            scope: t.scope.clone(),
            context: t.task.context_id.as_str().to_owned(),
            state: t.task.status.state.as_str().to_owned(),
            millis: t.sort_millis(),
            id: t.task.id.as_str().to_owned(),
        }
    }
}

/// Length of the order part of a key (the inverted status millis) after its prefix.
pub(crate) const MILLIS_LEN: usize = 8;

/// Which index a prefix belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Scope = b'S' as isize,
    Context = b'C' as isize,
    State = b'T' as isize,
    Both = b'B' as isize,
}

fn push_part(out: &mut Vec<u8>, part: Option<&str>) {
    match part {
        None => out.push(0),
        Some(s) => {
            out.push(1);
            out.extend_from_slice(&u32::try_from(s.len()).unwrap_or(u32::MAX).to_be_bytes());
            out.extend_from_slice(s.as_bytes());
        }
    }
}

fn prefix(kind: Kind, scope: &Scope, context: Option<&str>, state: Option<&str>) -> Vec<u8> {
    let mut out = Vec::with_capacity(48);
    out.push(kind as u8);
    push_part(&mut out, scope.tenant.as_deref());
    push_part(&mut out, scope.owner.as_deref());
    if matches!(kind, Kind::Context | Kind::Both) {
        push_part(&mut out, context);
    }
    if matches!(kind, Kind::State | Kind::Both) {
        push_part(&mut out, state);
    }
    out
}

/// The order part of a key: newest first, order-preserving over every `i64`.
pub(crate) fn inverted(millis: i64) -> [u8; MILLIS_LEN] {
    #[allow(
        clippy::cast_sign_loss,
        reason = "the bits are kept; the sign bit is flipped"
    )]
    (u64::MAX - ((millis as u64) ^ (1 << 63))).to_be_bytes()
}

/// The status millis an order part encodes.
pub(crate) fn millis_of(inverted: [u8; MILLIS_LEN]) -> i64 {
    #[allow(clippy::cast_possible_wrap, reason = "the inverse of `inverted`")]
    {
        ((u64::MAX - u64::from_be_bytes(inverted)) ^ (1 << 63)) as i64
    }
}

/// `prefix ++ inverted(millis) ++ id`.
pub(crate) fn key(prefix: &[u8], millis: i64, id: &str) -> Vec<u8> {
    let mut key = Vec::with_capacity(prefix.len() + MILLIS_LEN + id.len());
    key.extend_from_slice(prefix);
    key.extend_from_slice(&inverted(millis));
    key.extend_from_slice(id.as_bytes());
    key
}

/// The four prefixes a task is counted under.
pub(crate) fn prefixes(t: &Listed) -> [Vec<u8>; 4] {
    prefixes_for(&t.scope, &t.context, &t.state)
}

fn prefixes_for(scope: &Scope, context: &str, state: &str) -> [Vec<u8>; 4] {
    let (ctx, state) = (Some(context), Some(state));
    [
        prefix(Kind::Scope, scope, None, None),
        prefix(Kind::Context, scope, ctx, None),
        prefix(Kind::State, scope, None, state),
        prefix(Kind::Both, scope, ctx, state),
    ]
}

/// The two prefixes a task has keys under.
fn key_prefixes(t: &Listed) -> [Vec<u8>; 2] {
    let (ctx, state) = (Some(t.context.as_str()), Some(t.state.as_str()));
    [
        prefix(Kind::State, &t.scope, None, state),
        prefix(Kind::Both, &t.scope, ctx, state),
    ]
}

/// The two index keys of a task.
pub(crate) fn keys(t: &Listed) -> [Vec<u8>; 2] {
    key_prefixes(t).map(|p| key(&p, t.millis, &t.id))
}

/// The prefix whose count is `query`'s `totalSize` (every filter but `statusTimestampAfter`).
pub(crate) fn query_prefix(query: &ListQuery) -> Vec<u8> {
    let ctx = query.context_id.as_ref().map(ContextId::as_str);
    let state = query.status.as_ref().map(TaskState::as_str);
    let kind = match (ctx, state) {
        (None, None) => Kind::Scope,
        (Some(_), None) => Kind::Context,
        (None, Some(_)) => Kind::State,
        (Some(_), Some(_)) => Kind::Both,
    };
    prefix(kind, &query.scope, ctx, state)
}

/// The prefixes of the key ranges whose merge answers `query`: its state's, or with no
/// `status` filter every state's.
pub(crate) fn query_ranges(query: &ListQuery) -> Vec<Vec<u8>> {
    let ctx = query.context_id.as_ref().map(ContextId::as_str);
    let kind = if ctx.is_some() {
        Kind::Both
    } else {
        Kind::State
    };
    match &query.status {
        Some(state) => vec![prefix(kind, &query.scope, ctx, Some(state.as_str()))],
        None => (TaskState::ALL.iter())
            .map(|s| prefix(kind, &query.scope, ctx, Some(s.as_str())))
            .collect(),
    }
}

/// The key of `t` under `prefix` if `prefix` is one of its prefixes: an index entry under
/// `prefix` is current exactly when it equals this key.
#[cfg_attr(not(any(feature = "sled", feature = "fjall")), allow(dead_code))]
pub(crate) fn key_under(t: &Listed, prefix: &[u8]) -> Option<Vec<u8>> {
    key_prefixes(t)
        .into_iter()
        .find(|p| p == prefix)
        .map(|p| key(&p, t.millis, &t.id))
}

/// The kind bytes of the prefixes that databases written before 2026-11-26 also held keys
/// under (scope, and scope and context), which no listing reads now.
pub(crate) const RETIRED_KINDS: [u8; 2] = [Kind::Scope as u8, Kind::Context as u8];

/// Where a listing starts under `prefix`: after the page token's key, or at the prefix.
pub(crate) fn start_key(
    prefix: &[u8],
    token: Option<&(std::cmp::Reverse<i64>, String)>,
) -> Vec<u8> {
    match token {
        Some((millis, id)) => key(prefix, millis.0, id),
        None => prefix.to_vec(),
    }
}

/// A key after every key under `prefix` (UTF-8 ids never contain the byte `0xFF`).
pub(crate) fn end_key(prefix: &[u8]) -> Vec<u8> {
    let mut key = prefix.to_vec();
    key.extend_from_slice(&[0xFF; MILLIS_LEN + 1]);
    key
}

/// Whether a key under `prefix` is at or after `after` millis (`None`: no time filter).
pub(crate) fn at_or_after(key: &[u8], prefix_len: usize, after: Option<i64>) -> bool {
    let Some(after) = after else { return true };
    key.get(prefix_len..prefix_len + MILLIS_LEN)
        .and_then(|b| <[u8; MILLIS_LEN]>::try_from(b).ok())
        .is_some_and(|b| millis_of(b) >= after)
}

/// The id part of a key under a prefix of `prefix_len` bytes.
pub(crate) fn id_of(key: &[u8], prefix_len: usize) -> Option<&str> {
    std::str::from_utf8(key.get(prefix_len + MILLIS_LEN..)?).ok()
}

/// Counts the entries of a prefix at or after a time without walking all of them: walks from
/// the newest entry (`newer`, the ones counted) and from the oldest (`older`, the ones not
/// counted) in step, and stops when either side reaches the time. The cost is the smaller of
/// the two sides, at most half the prefix.
pub(crate) fn count_after<E>(
    total: usize,
    newer: impl Iterator<Item = Result<bool, E>>,
    older: impl Iterator<Item = Result<bool, E>>,
) -> Result<usize, E> {
    // Each item says whether the entry is at or after the time.
    let (mut newer, mut older) = (newer, older);
    let (mut inside, mut outside) = (0usize, 0usize);
    loop {
        match newer.next().transpose()? {
            Some(true) => inside += 1,
            _ => return Ok(inside),
        }
        match older.next().transpose()? {
            Some(false) => outside += 1,
            _ => return Ok(total.saturating_sub(outside)),
        }
    }
}

/// Task counts per prefix, and the scope+state prefixes (kind `T`) of finished states that
/// have tasks: the ranges retention walks (`kv/scan.rs`), one per scope and finished state.
#[derive(Debug, Default)]
pub(crate) struct Counts(FastMap<Vec<u8>, usize>, BTreeSet<Vec<u8>>);

/// The state part of a scope+state prefix (kind `T`): its last part, after the tenant's and
/// the owner's.
fn state_of(prefix: &[u8]) -> Option<&[u8]> {
    let (&kind, mut rest) = prefix.split_first()?;
    if kind != Kind::State as u8 {
        return None;
    }
    let mut part = || -> Option<Option<&[u8]>> {
        let (&tag, tail) = rest.split_first()?;
        if tag == 0 {
            rest = tail;
            return Some(None);
        }
        let len = usize::try_from(u32::from_be_bytes(tail.get(..4)?.try_into().ok()?)).ok()?;
        let value = tail.get(4..4 + len)?;
        rest = &tail[4 + len..];
        Some(Some(value))
    };
    part()?;
    part()?;
    let state = part()??;
    rest.is_empty().then_some(state)
}

/// Whether `prefix` is a scope+state prefix of a finished state.
fn is_finished_prefix(prefix: &[u8]) -> bool {
    state_of(prefix).is_some_and(|state| {
        TaskState::ALL
            .iter()
            .any(|s| s.is_terminal() && s.as_str().as_bytes() == state)
    })
}

impl Counts {
    /// Counts `t` in (`add`) or out of each of its prefixes.
    pub(crate) fn apply(&mut self, t: &Listed, add: bool) {
        for p in prefixes(t) {
            self.bump(p, add);
        }
    }

    /// Moves `t` from the prefixes of `old` to its own (a no-op when they are the same: the
    /// prefixes are made of the scope, context and state only).
    pub(crate) fn replace(&mut self, old: &Listed, new: &Listed) {
        if old.scope != new.scope || old.context != new.context {
            self.apply(old, false);
            self.apply(new, true);
        } else if old.state != new.state {
            // Same task, new state: only the two prefixes with the state move.
            let ctx = Some(new.context.as_str());
            for (kind, context) in [(Kind::State, None), (Kind::Both, ctx)] {
                self.bump(prefix(kind, &old.scope, context, Some(&old.state)), false);
                self.bump(prefix(kind, &new.scope, context, Some(&new.state)), true);
            }
        }
    }

    fn bump(&mut self, prefix: Vec<u8>, add: bool) {
        if add {
            if let Some(n) = self.0.get_mut(&prefix) {
                *n += 1;
            } else {
                if is_finished_prefix(&prefix) {
                    self.1.insert(prefix.clone());
                }
                self.0.insert(prefix, 1);
            }
        } else if let Some(n) = self.0.get_mut(&prefix) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.0.remove(&prefix);
                self.1.remove(&prefix);
            }
        }
    }

    /// The scope+state prefixes of finished states that have tasks, in key order.
    pub(crate) fn finished_prefixes(&self) -> Vec<Vec<u8>> {
        self.1.iter().cloned().collect()
    }

    /// How many tasks are under `prefix`.
    pub(crate) fn get(&self, prefix: &[u8]) -> usize {
        self.0.get(prefix).copied().unwrap_or(0)
    }
}

/// The list order key: newest first, then by id (what the store tests expect of a listing).
#[cfg(any(test, feature = "testing"))]
pub(crate) fn order_key(t: &super::StoredTask) -> (std::cmp::Reverse<i64>, a2a_core::TaskId) {
    (std::cmp::Reverse(t.sort_millis()), t.task.id.clone())
}

/// Page tokens are the order key of the last task of the page: `<millis>.<id>` in base64url.
pub(crate) fn encode_page_token(t: &super::StoredTask) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!(
        "{}.{}",
        t.sort_millis(),
        t.task.id
    ))
}

/// Reads a page token back into its order key.
pub(crate) fn decode_page_token(
    token: &str,
) -> Result<(std::cmp::Reverse<i64>, String), super::StoreError> {
    use base64::Engine as _;
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .map_err(|_| super::StoreError::InvalidPageToken)?;
    let raw = String::from_utf8(raw).map_err(|_| super::StoreError::InvalidPageToken)?;
    let (millis, id) = raw
        .split_once('.')
        .ok_or(super::StoreError::InvalidPageToken)?;
    let millis: i64 = millis
        .parse()
        .map_err(|_| super::StoreError::InvalidPageToken)?;
    Ok((std::cmp::Reverse(millis), id.to_owned()))
}

/// A task's status time in milliseconds (0 when unset): the list and retention order.
pub(crate) fn status_millis(task: &a2a_core::Task) -> i64 {
    task.status
        .timestamp
        .map_or(0, a2a_core::Timestamp::unix_millis)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_know_the_finished_state_ranges_that_have_tasks() {
        let scope = Scope {
            tenant: Some("t".into()),
            owner: None,
        };
        let listed = |state: TaskState, id: &str| Listed {
            scope: scope.clone(),
            context: "c".into(),
            state: state.as_str().into(),
            millis: 1,
            id: id.into(),
        };
        let mut counts = Counts::default();
        counts.apply(&listed(TaskState::Working, "a"), true);
        assert!(counts.finished_prefixes().is_empty());
        counts.replace(
            &listed(TaskState::Working, "a"),
            &listed(TaskState::Completed, "a"),
        );
        counts.apply(&listed(TaskState::Completed, "b"), true);
        let completed = TaskState::Completed.as_str();
        let done = prefix(Kind::State, &scope, None, Some(completed));
        assert_eq!(counts.finished_prefixes(), std::slice::from_ref(&done));
        assert_eq!(state_of(&done), Some(completed.as_bytes()));
        counts.apply(&listed(TaskState::Completed, "a"), false);
        assert_eq!(counts.finished_prefixes(), [done]);
        counts.apply(&listed(TaskState::Completed, "b"), false);
        assert!(counts.finished_prefixes().is_empty());
    }

    #[test]
    fn inverted_millis_sort_newest_first_and_round_trip() {
        let ms = [i64::MIN, -5, 0, 1, 1_700_000_000_000, i64::MAX];
        for w in ms.windows(2) {
            assert!(inverted(w[0]) > inverted(w[1]));
        }
        for m in ms {
            assert_eq!(millis_of(inverted(m)), m);
        }
    }

    #[test]
    fn count_after_takes_the_shorter_side() {
        let entries = [true, true, true, false];
        let ok = |v: &[bool]| v.iter().map(|b| Ok::<_, ()>(*b)).collect::<Vec<_>>();
        let newer = ok(&entries);
        let older = ok(&entries.iter().rev().copied().collect::<Vec<_>>());
        assert_eq!(count_after(4, newer.into_iter(), older.into_iter()), Ok(3));
        for split in 0..=6 {
            let v: Vec<bool> = (0..6).map(|i| i < split).collect();
            let rev: Vec<bool> = v.iter().rev().copied().collect();
            assert_eq!(
                count_after(6, ok(&v).into_iter(), ok(&rev).into_iter()),
                Ok(split)
            );
        }
    }
}
