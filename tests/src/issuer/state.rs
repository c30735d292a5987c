//! What the issuer's handle and its endpoints share: the keys, the registered clients, the
//! JWKS mode, the counters, and the claims of the tokens.

use super::keys::{Key, sign};
use super::{AUDIENCE, JwksMode};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::atomic::AtomicUsize;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};
use tokio_util::sync::CancellationToken;

pub(super) struct Client {
    pub(super) secret: String,
    pub(super) sub: String,
    pub(super) scopes: Vec<String>,
}

pub(super) struct Inner {
    pub(super) keys: Vec<Key>,
    /// The kid of the key that signs ([`Signing::Current`](super::Signing::Current) and `/token`).
    pub(super) current: String,
    /// How many RSA keys were made (`rsa-N`).
    pub(super) rsa_count: usize,
    pub(super) clients: HashMap<String, Client>,
    pub(super) jwks_mode: JwksMode,
    pub(super) token_ttl: u64,
}

pub(super) struct Shared {
    pub(super) url: String,
    pub(super) state: Mutex<Inner>,
    /// The key of [`Signing::Unknown`](super::Signing::Unknown), made on first use.
    pub(super) ghost: OnceLock<Key>,
    pub(super) jwks_fetches: AtomicUsize,
    pub(super) token_requests: AtomicUsize,
    pub(super) shutdown: CancellationToken,
}

impl Shared {
    pub(super) fn state(&self) -> MutexGuard<'_, Inner> {
        // A panicking test thread must not make every later call panic too.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The default claims, merged with `claims` (a key set to null is removed).
    pub(super) fn claims(&self, sub: &str, ttl: u64, claims: Value) -> Value {
        let now = now();
        let mut merged = Map::new();
        merged.insert("iss".into(), json!(self.url));
        merged.insert("sub".into(), json!(sub));
        merged.insert("aud".into(), json!(AUDIENCE));
        merged.insert("iat".into(), json!(now));
        merged.insert("nbf".into(), json!(now));
        merged.insert("exp".into(), json!(now + ttl));
        match claims {
            Value::Object(extra) => {
                for (k, v) in extra {
                    if v.is_null() {
                        merged.remove(&k);
                    } else {
                        merged.insert(k, v);
                    }
                }
            }
            Value::Null => {}
            other => panic!("TestIssuer: the claims must be a JSON object, not {other}"),
        }
        Value::Object(merged)
    }

    /// Signs `claims` with the current key.
    pub(super) fn sign_current(&self, claims: &Value) -> String {
        let state = self.state();
        let key = state
            .keys
            .iter()
            .find(|k| k.kid == state.current)
            .expect("the current key exists");
        sign(key, claims)
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs()
}
