//! The sled store's message claims: tree `message_claims` maps a deduplication key to its
//! claim (with its receipt time).
//!
//! Expiry walks the claims with a cursor, at most [`CLAIM_EXPIRY_WALK`] per call, from where
//! the previous call stopped, and removes those received before its time: a send writes its
//! claim and nothing else (an index by time would be a second write on every send, for a
//! sweep that runs once a minute).

use super::{EmbeddedStore, Kv, KvTree, backend};
use crate::store::{ClaimStore, MessageClaim, StoreError};
use async_trait::async_trait;
use std::ops::Bound;

/// How many claims one `expire_claims` call reads at most (on the blocking pool). With the
/// default sweep every minute, a server that receives more than this many messages a minute
/// expires its claims over several sweeps, later than their time, never earlier.
pub const CLAIM_EXPIRY_WALK: usize = 200_000;

fn decode(bytes: &[u8]) -> Result<MessageClaim, StoreError> {
    serde_json::from_slice(bytes).map_err(backend)
}

/// Drops the claims' time index that an earlier version kept (tree `message_claim_times`).
pub(super) fn drop_claim_times<K: Kv>(db: &K) -> Result<(), StoreError> {
    db.drop_tree("message_claim_times").map_err(backend)?;
    let meta = db.open_tree("store_meta").map_err(backend)?;
    meta.remove(b"message_claim_times_v1").map_err(backend)?;
    Ok(())
}

impl<K: Kv> EmbeddedStore<K> {
    /// `ClaimStore::expire_claims` (on a blocking thread): reads up to `walk` claims from the
    /// cursor on (wrapping around to the first), and removes each received before `before_ms`
    /// (unless it changed meanwhile: the removal is a compare-and-swap). The cursor stays where
    /// the walk stopped, or goes back to the start after a whole round.
    pub(super) fn expire_claims_blocking(
        &self,
        before_ms: i64,
        walk: usize,
    ) -> Result<usize, StoreError> {
        let mut cursor = self.claim_cursor.lock().expect("claim cursor lock");
        let from = cursor.take();
        let after = match &from {
            Some(k) => Bound::Excluded(k.clone()),
            None => Bound::Unbounded,
        };
        // From the cursor to the end, then from the start up to the cursor.
        let upto = match &from {
            Some(k) => Bound::Included(k.clone()),
            None => Bound::Excluded(Vec::new()),
        };
        let rounds = self
            .claims
            .range::<Vec<u8>, _>((after, Bound::Unbounded))
            .chain(self.claims.range::<Vec<u8>, _>((Bound::Unbounded, upto)));
        let (mut n, mut read) = (0, 0);
        for entry in rounds {
            let (key, value) = entry.map_err(backend)?;
            if read == walk {
                // Stop before this one: the next call starts with it.
                break;
            }
            read += 1;
            *cursor = Some(key.to_vec());
            if decode(&value)?.received_ms < before_ms
                && self
                    .claims
                    .compare_and_swap(&key, Some(&value), None)
                    .map_err(backend)?
                    .is_ok()
            {
                n += 1;
            }
        }
        if read < walk {
            *cursor = None; // a whole round: the next call starts at the first claim
        }
        if n > 0 {
            self.wrote();
        }
        Ok(n)
    }
}

#[async_trait]
impl<K: Kv> ClaimStore for EmbeddedStore<K> {
    async fn claim_message(
        &self,
        key: &str,
        claim: MessageClaim,
    ) -> Result<Option<MessageClaim>, StoreError> {
        let value = serde_json::to_vec(&claim).map_err(backend)?;
        match self
            .claims
            .compare_and_swap(key.as_bytes(), None, Some(&value))
            .map_err(backend)?
        {
            Ok(()) => {
                self.wrote();
                Ok(None)
            }
            Err(current) => current.map(|bytes| decode(&bytes)).transpose(),
        }
    }

    async fn update_claim(&self, key: &str, claim: MessageClaim) -> Result<(), StoreError> {
        let value = serde_json::to_vec(&claim).map_err(backend)?;
        self.claims.insert(key.as_bytes(), value).map_err(backend)?;
        self.wrote();
        Ok(())
    }

    async fn release_claim(&self, key: &str) -> Result<(), StoreError> {
        self.claims.remove(key.as_bytes()).map_err(backend)?;
        Ok(())
    }

    async fn expire_claims(&self, before_ms: i64) -> Result<usize, StoreError> {
        self.blocking(move |store| store.expire_claims_blocking(before_ms, CLAIM_EXPIRY_WALK))
            .await
    }
}
