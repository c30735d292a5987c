//! The sled store's message claims: tree `message_claims` maps a deduplication key to its
//! claim, and tree `message_claim_times` maps `time_key(received_ms, key)` to nothing, so that
//! expiry walks only the claims received before its time, oldest first.
//!
//! A claim's time entry is written before the claim, so every claim has one; an entry whose
//! claim is gone or was received at another time (released, replaced) is removed when expiry
//! meets it.

use super::{SledStore, backend};
use crate::store::{ClaimStore, MessageClaim, StoreError};
use async_trait::async_trait;

/// The key in tree `store_meta` that records that `message_claim_times` covers every claim.
const CLAIM_TIMES_BUILT: &[u8] = b"message_claim_times_v1";

/// `received_ms` (order-preserving over every `i64`: the sign bit flipped, big-endian), then
/// the claim's key.
fn time_key(received_ms: i64, key: &str) -> Vec<u8> {
    #[allow(
        clippy::cast_sign_loss,
        reason = "the bits are kept; the sign bit is flipped"
    )]
    let order = (received_ms as u64) ^ (1 << 63);
    let mut out = Vec::with_capacity(8 + key.len());
    out.extend_from_slice(&order.to_be_bytes());
    out.extend_from_slice(key.as_bytes());
    out
}

fn decode(bytes: &[u8]) -> Result<MessageClaim, StoreError> {
    serde_json::from_slice(bytes).map_err(backend)
}

/// Opens tree `message_claim_times`; for a database written before it existed, adds the time
/// entry of every claim, once.
pub(super) fn open_claim_times(
    db: &sled::Db,
    claims: &sled::Tree,
) -> Result<sled::Tree, StoreError> {
    let times = db.open_tree("message_claim_times").map_err(backend)?;
    let meta = db.open_tree("store_meta").map_err(backend)?;
    if meta.get(CLAIM_TIMES_BUILT).map_err(backend)?.is_none() {
        for entry in claims.iter() {
            let (key, value) = entry.map_err(backend)?;
            let key = std::str::from_utf8(&key).map_err(super::backend_msg)?;
            times
                .insert(time_key(decode(&value)?.received_ms, key), &[] as &[u8])
                .map_err(backend)?;
        }
        // The entries are durable before the marker that says they exist.
        db.flush().map_err(backend)?;
        meta.insert(CLAIM_TIMES_BUILT, &[1u8] as &[u8])
            .map_err(backend)?;
        db.flush().map_err(backend)?;
    }
    Ok(times)
}

impl SledStore {
    /// `ClaimStore::expire_claims` (on a blocking thread): walks the time entries before
    /// `before_ms` and removes each claim that was received then (unless it changed meanwhile:
    /// the removal is a compare-and-swap), and the entry.
    fn expire_claims_blocking(&self, before_ms: i64) -> Result<usize, StoreError> {
        let mut n = 0;
        let end = time_key(before_ms, "");
        for entry in self.claim_times.range(..end) {
            let (time, _) = entry.map_err(backend)?;
            let key = time.get(8..).unwrap_or_default();
            if let Some(value) = self.claims.get(key).map_err(backend)? {
                if decode(&value)?.received_ms < before_ms
                    && self
                        .claims
                        .compare_and_swap(key, Some(value), None as Option<&[u8]>)
                        .map_err(backend)?
                        .is_ok()
                {
                    n += 1;
                }
            }
            self.claim_times.remove(time).map_err(backend)?;
        }
        if n > 0 {
            self.wrote();
        }
        Ok(n)
    }
}

#[async_trait]
impl ClaimStore for SledStore {
    async fn claim_message(
        &self,
        key: &str,
        claim: MessageClaim,
    ) -> Result<Option<MessageClaim>, StoreError> {
        let value = serde_json::to_vec(&claim).map_err(backend)?;
        let time = time_key(claim.received_ms, key);
        self.claim_times
            .insert(time.as_slice(), &[] as &[u8])
            .map_err(backend)?;
        match self
            .claims
            .compare_and_swap(key.as_bytes(), None as Option<&[u8]>, Some(value))
            .map_err(backend)?
        {
            Ok(()) => {
                self.wrote();
                Ok(None)
            }
            Err(e) => match e.current {
                Some(bytes) => {
                    let existing = decode(&bytes)?;
                    if existing.received_ms != claim.received_ms {
                        self.claim_times.remove(time).map_err(backend)?;
                    }
                    Ok(Some(existing))
                }
                None => Ok(None),
            },
        }
    }

    async fn update_claim(&self, key: &str, claim: MessageClaim) -> Result<(), StoreError> {
        let value = serde_json::to_vec(&claim).map_err(backend)?;
        self.claim_times
            .insert(time_key(claim.received_ms, key), &[] as &[u8])
            .map_err(backend)?;
        let old = self.claims.insert(key.as_bytes(), value).map_err(backend)?;
        if let Some(old) = old {
            let old = decode(&old)?.received_ms;
            if old != claim.received_ms {
                self.claim_times
                    .remove(time_key(old, key))
                    .map_err(backend)?;
            }
        }
        self.wrote();
        Ok(())
    }

    async fn release_claim(&self, key: &str) -> Result<(), StoreError> {
        if let Some(old) = self.claims.remove(key.as_bytes()).map_err(backend)? {
            self.claim_times
                .remove(time_key(decode(&old)?.received_ms, key))
                .map_err(backend)?;
        }
        Ok(())
    }

    async fn expire_claims(&self, before_ms: i64) -> Result<usize, StoreError> {
        self.blocking(move |store| store.expire_claims_blocking(before_ms))
            .await
    }
}
