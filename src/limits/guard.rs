//! Per client address (or per signed-in user), per minute counts, kept in this process's
//! memory: the brute-force guard (failed authentications: only failures count, so working
//! keys never trip it; an address over the limit is refused before any key it sends is
//! looked at) and the pages' limit (every request to `/share/...`, which needs no
//! credential, and to the signed-in pages, counted per address and per user).

use std::{collections::HashMap, hash::Hash, net::IpAddr, sync::Mutex};

use super::{Window, MINUTE_MS};

/// Addresses remembered before expired entries are swept.
const SWEEP_AT: usize = 10_000;

/// Counts per minute of each `K`: a client address unless said otherwise.
pub struct AddressGuard<K = IpAddr> {
    failures: Mutex<HashMap<K, Window>>,
}

impl<K> Default for AddressGuard<K> {
    fn default() -> Self {
        AddressGuard {
            failures: Mutex::new(HashMap::new()),
        }
    }
}

impl<K: Hash + Eq> AddressGuard<K> {
    /// `Some(window)` when `addr` has used up its count for the current minute.
    pub fn blocked(&self, addr: &K, now: i64, per_minute: u32) -> Option<Window> {
        let failures = self.failures.lock().ok()?;
        let window = failures.get(addr)?.at(now, MINUTE_MS);
        (window.used >= per_minute).then_some(window)
    }

    /// Counts one event of `addr` in the current minute.
    pub fn record(&self, addr: K, now: i64) {
        let Ok(mut failures) = self.failures.lock() else {
            return;
        };
        if failures.len() >= SWEEP_AT {
            failures.retain(|_, w| w.start + MINUTE_MS > now);
        }
        let window = failures
            .get(&addr)
            .copied()
            .unwrap_or_default()
            .at(now, MINUTE_MS);
        failures.insert(
            addr,
            Window {
                used: window.used + 1,
                ..window
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_after_the_limit_until_the_minute_ends() {
        let guard = AddressGuard::default();
        let addr: IpAddr = [10, 0, 0, 1].into();
        for _ in 0..3 {
            assert!(guard.blocked(&addr, 0, 3).is_none());
            guard.record(addr, 0);
        }
        assert!(guard.blocked(&addr, 1_000, 3).is_some());
        assert!(guard.blocked(&[10, 0, 0, 2].into(), 1_000, 3).is_none());
        assert!(guard.blocked(&addr, MINUTE_MS, 3).is_none());
    }
}
