//! The memory store's message claims: a map by key, and a queue by receipt time that expiry
//! and the store's bound take from its oldest end.

use super::MemoryStore;
use crate::store::{ClaimStore, FastMap, MessageClaim, StoreError};
use a2a_core::TaskId;
use async_trait::async_trait;
use std::collections::VecDeque;
use std::sync::Arc;

/// The claim keys by receipt time, oldest first. Claims arrive nearly in time order, so a new
/// one is appended (or, stamped a little before the last by a concurrent send, placed a few
/// entries back): every send makes one, and a B-tree set cost each a descent. A released or
/// restamped claim leaves its old entry behind, stale; taking from the front skips an entry
/// whose claim is gone or has another time.
#[derive(Debug, Default)]
pub(super) struct Times(VecDeque<(i64, Arc<str>)>);

impl Times {
    fn insert(&mut self, ms: i64, key: Arc<str>) {
        let at = match self.0.back() {
            Some((last, _)) if *last > ms => self.0.partition_point(|(m, _)| *m <= ms),
            _ => self.0.len(),
        };
        self.0.insert(at, (ms, key));
    }

    /// Removes from `claims` the oldest claim received before `before` (or the oldest of all);
    /// whether there was one.
    fn expire_one(&mut self, claims: &mut FastMap<Arc<str>, Kept>, before: Option<i64>) -> bool {
        while let Some((ms, _)) = self.0.front() {
            if before.is_some_and(|b| *ms >= b) {
                break;
            }
            let Some((ms, key)) = self.0.pop_front() else {
                break;
            };
            if claims.get(&key).is_some_and(|c| c.received_ms() == ms) {
                claims.remove(&key);
                return true;
            }
        }
        false
    }
}

/// A claim as kept: nearly every claim names a task, and the rare message answer is large
/// (it sits boxed rather than making every claim its size).
#[derive(Debug)]
pub(super) enum Kept {
    Task { task_id: TaskId, received_ms: i64 },
    Reply(Box<MessageClaim>),
}

impl Kept {
    fn new(claim: MessageClaim) -> Self {
        match claim.reply {
            None => Self::Task {
                task_id: claim.task_id,
                received_ms: claim.received_ms,
            },
            Some(_) => Self::Reply(Box::new(claim)),
        }
    }

    fn claim(&self) -> MessageClaim {
        match self {
            Self::Task {
                task_id,
                received_ms,
            } => MessageClaim {
                task_id: task_id.clone(),
                reply: None,
                received_ms: *received_ms,
            },
            Self::Reply(claim) => MessageClaim::clone(claim),
        }
    }

    fn received_ms(&self) -> i64 {
        match self {
            Self::Task { received_ms, .. } => *received_ms,
            Self::Reply(claim) => claim.received_ms,
        }
    }
}

#[async_trait]
impl ClaimStore for MemoryStore {
    async fn claim_message(
        &self,
        key: &str,
        claim: MessageClaim,
    ) -> Result<Option<MessageClaim>, StoreError> {
        let mut inner = self.inner.write().expect("store lock");
        if let Some(existing) = inner.claims.get(key) {
            return Ok(Some(existing.claim()));
        }
        let key: Arc<str> = key.into();
        inner.claim_times.insert(claim.received_ms, key.clone());
        inner.claims.insert(key, Kept::new(claim));
        if let Some(max) = self.max_tasks {
            let inner = &mut *inner;
            while inner.claims.len() > max {
                if !inner.claim_times.expire_one(&mut inner.claims, None) {
                    break;
                }
            }
        }
        Ok(None)
    }

    async fn update_claim(&self, key: &str, claim: MessageClaim) -> Result<(), StoreError> {
        let mut inner = self.inner.write().expect("store lock");
        let existing = inner
            .claims
            .get_key_value(key)
            .map(|(k, c)| (k.clone(), c.received_ms()));
        let key: Arc<str> = match existing {
            Some((key, ms)) => {
                if ms != claim.received_ms {
                    // Restamped: its old entry goes stale.
                    inner.claim_times.insert(claim.received_ms, key.clone());
                }
                key
            }
            None => {
                let key: Arc<str> = key.into();
                inner.claim_times.insert(claim.received_ms, key.clone());
                key
            }
        };
        inner.claims.insert(key, Kept::new(claim));
        Ok(())
    }

    async fn release_claim(&self, key: &str) -> Result<(), StoreError> {
        // Its time entry goes stale.
        self.inner.write().expect("store lock").claims.remove(key);
        Ok(())
    }

    async fn expire_claims(&self, before_ms: i64) -> Result<usize, StoreError> {
        let mut inner = self.inner.write().expect("store lock");
        let inner = &mut *inner;
        let mut n = 0;
        while inner
            .claim_times
            .expire_one(&mut inner.claims, Some(before_ms))
        {
            n += 1;
        }
        Ok(n)
    }
}
