//! The memory store's message claims: a map by key, and a set by receipt time that expiry
//! walks from its oldest end.

use super::MemoryStore;
use crate::store::{ClaimStore, MessageClaim, StoreError};
use a2a_core::TaskId;
use async_trait::async_trait;
use std::sync::Arc;

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
        inner.claim_times.insert((claim.received_ms, key.clone()));
        inner.claims.insert(key, Kept::new(claim));
        if let Some(max) = self.max_tasks {
            while inner.claims.len() > max {
                let Some((_, oldest)) = inner.claim_times.pop_first() else {
                    break;
                };
                inner.claims.remove(&oldest);
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
                    inner.claim_times.remove(&(ms, key.clone()));
                    inner.claim_times.insert((claim.received_ms, key.clone()));
                }
                key
            }
            None => {
                let key: Arc<str> = key.into();
                inner.claim_times.insert((claim.received_ms, key.clone()));
                key
            }
        };
        inner.claims.insert(key, Kept::new(claim));
        Ok(())
    }

    async fn release_claim(&self, key: &str) -> Result<(), StoreError> {
        let mut inner = self.inner.write().expect("store lock");
        if let Some((key, claim)) = inner.claims.remove_entry(key) {
            inner.claim_times.remove(&(claim.received_ms(), key));
        }
        Ok(())
    }

    async fn expire_claims(&self, before_ms: i64) -> Result<usize, StoreError> {
        let mut inner = self.inner.write().expect("store lock");
        let mut n = 0;
        while let Some(first) = inner.claim_times.first() {
            if first.0 >= before_ms {
                break;
            }
            let Some((_, key)) = inner.claim_times.pop_first() else {
                break;
            };
            inner.claims.remove(&key);
            n += 1;
        }
        Ok(n)
    }
}
