//! Delivery leases kept in this process's memory, for the stores whose data only one process
//! opens (memory, and sled, whose directory is locked by the process that opened it): several
//! servers of that process may share the store, and each takes a registration's lease before
//! posting to its webhook. Nothing survives a restart, which is right for a single process.

use super::{FastMap, PushRecord};
use a2a_core::TaskId;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// The holder of one registration's lease.
#[derive(Debug)]
struct Lease {
    owner: Arc<str>,
    expires: Instant,
}

/// Delivery leases by task, then by config id.
#[derive(Debug, Default)]
pub(crate) struct DeliveryLeases {
    leases: Mutex<FastMap<TaskId, FastMap<String, Lease>>>,
}

impl DeliveryLeases {
    /// `PushStore::acquire_delivery`: takes (or renews) the lease unless another owner holds
    /// an unexpired one.
    pub(crate) fn acquire(&self, task: &TaskId, id: &str, owner: &str, ttl: Duration) -> bool {
        let now = Instant::now();
        let mut leases = self.leases.lock().expect("lease lock");
        let of_task = leases.entry(task.clone()).or_default();
        match of_task.get_mut(id) {
            Some(held) if &*held.owner != owner && held.expires > now => false,
            Some(held) if &*held.owner == owner => {
                held.expires = now + ttl;
                true
            }
            _ => {
                let lease = Lease {
                    owner: owner.into(),
                    expires: now + ttl,
                };
                of_task.insert(id.to_owned(), lease);
                true
            }
        }
    }

    /// `PushStore::release_delivery`: gives the lease up if `owner` holds it.
    pub(crate) fn release(&self, task: &TaskId, id: &str, owner: &str) {
        let mut leases = self.leases.lock().expect("lease lock");
        let Some(of_task) = leases.get_mut(task) else {
            return;
        };
        if of_task.get(id).is_some_and(|l| &*l.owner == owner) {
            of_task.remove(id);
        }
        if of_task.is_empty() {
            leases.remove(task);
        }
    }

    /// Forgets the leases of a deleted task.
    pub(crate) fn forget(&self, task: &TaskId) {
        self.leases.lock().expect("lease lock").remove(task);
    }
}

/// Whether `PushStore::advance_delivery` moves the `stored` registration's cursor from
/// `expected` to that of `record`: it is still the same registration, not dead-lettered, with
/// its cursor where the caller left it.
pub(crate) fn may_advance(stored: &PushRecord, record: &PushRecord, expected: u64) -> bool {
    stored.config == record.config && stored.dead_letter.is_none() && stored.delivered == expected
}
