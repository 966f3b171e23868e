//! API keys' principals kept between requests, each under the [`crate::store::AuthEpoch`]
//! count read before its rows were: a kept principal is used only while that count stands,
//! so a revocation, a change of a key's power or of its creator's role counts at once.
//! Edits that no count can see (a SQLite file changed with `sqlite3` while the server runs)
//! count within [`KEPT_FOR_MS`]: a kept principal is read again after that long.
//!
//! Only a key that authenticated is kept, with its secret's hash: each use still compares
//! the presented secret and checks the expiry against the clock. At most [`KEPT`] keys:
//! past that, the entries kept under an older count go, and if that isn't enough, all of
//! them (the next requests refill it).

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use super::{Scopes, Tier};

/// How many keys' principals one process keeps.
const KEPT: usize = 10_000;
/// How long a principal is kept, at most (milliseconds).
pub const KEPT_FOR_MS: i64 = 1_000;

/// A key as the requests that follow need it.
#[derive(Debug)]
pub(super) struct KeptKey {
    pub id: String,
    pub workspace_id: String,
    pub secret_hash: String,
    pub expires_at: Option<i64>,
    /// The key's scopes within its creator's role when it was kept.
    pub scopes: Scopes,
    pub tier: Tier,
    /// PostgreSQL: `auth_changes` read before the key's rows were.
    pub changes: Option<i64>,
}

#[derive(Default)]
pub struct KeyCache {
    /// By the key's public part.
    kept: Mutex<HashMap<String, Entry>>,
}

struct Entry {
    /// The count it was kept under.
    epoch: u64,
    /// When it was kept (milliseconds).
    at: i64,
    key: Arc<KeptKey>,
}

impl KeyCache {
    /// The key of public part `lookup` kept under count `epoch` less than [`KEPT_FOR_MS`]
    /// before `now` (milliseconds).
    pub(super) fn get(&self, lookup: &str, epoch: u64, now: i64) -> Option<Arc<KeptKey>> {
        let kept = self.kept.lock().ok()?;
        kept.get(lookup)
            .filter(|e| e.epoch == epoch && (0..KEPT_FOR_MS).contains(&(now - e.at)))
            .map(|e| e.key.clone())
    }

    /// Keeps `key` under count `epoch`, read before its rows were, at `now`.
    pub(super) fn keep(&self, lookup: &str, epoch: u64, now: i64, key: Arc<KeptKey>) {
        let Ok(mut kept) = self.kept.lock() else {
            return;
        };
        if kept.len() >= KEPT && !kept.contains_key(lookup) {
            kept.retain(|_, e| e.epoch == epoch);
            if kept.len() >= KEPT {
                kept.clear();
            }
        }
        kept.insert(
            lookup.to_owned(),
            Entry {
                epoch,
                at: now,
                key,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(id: &str) -> Arc<KeptKey> {
        Arc::new(KeptKey {
            id: id.into(),
            workspace_id: "ws".into(),
            secret_hash: "hash".into(),
            expires_at: None,
            scopes: Scopes::default(),
            tier: Tier::Team,
            changes: None,
        })
    }

    #[test]
    fn a_key_kept_under_an_older_count_is_not_used() {
        let cache = KeyCache::default();
        cache.keep("abc", 1, 0, key("k1"));
        assert_eq!(
            cache.get("abc", 1, 0).map(|k| k.id.clone()),
            Some("k1".into())
        );
        assert!(cache.get("abc", 2, 0).is_none());
        assert!(cache.get("other", 1, 0).is_none());
    }

    #[test]
    fn a_key_is_read_again_after_a_second_or_when_the_clock_went_back() {
        let cache = KeyCache::default();
        cache.keep("abc", 1, 5_000, key("k1"));
        assert!(cache.get("abc", 1, 5_000 + KEPT_FOR_MS - 1).is_some());
        assert!(cache.get("abc", 1, 5_000 + KEPT_FOR_MS).is_none());
        assert!(cache.get("abc", 1, 4_999).is_none());
    }

    #[test]
    fn a_full_cache_makes_room_without_growing() {
        let cache = KeyCache::default();
        for n in 0..KEPT {
            cache.keep(&format!("l{n}"), 1, 0, key("k"));
        }
        cache.keep("new", 1, 0, key("k"));
        let held = cache.kept.lock().map(|k| k.len()).unwrap_or(usize::MAX);
        assert!(held <= KEPT, "{held}");
        assert!(cache.get("new", 1, 0).is_some());
    }
}
