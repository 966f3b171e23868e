//! Per client address (or per signed-in user), per minute counts, kept in this process's
//! memory: the brute-force guard (failed authentications: only failures count, so working
//! keys never trip it; an address over the limit is refused before any key it sends is
//! looked at) and the pages' limit (every request to `/share/...`, which needs no
//! credential, and to the signed-in pages, counted per address and per user), and the
//! password sign-in guard ([`PasswordGuard`]: per address and per account, 15 minutes).

use std::{collections::HashMap, hash::Hash, net::IpAddr, sync::Mutex};

use super::{Window, MINUTE_MS};

/// Addresses remembered before expired entries are swept.
const SWEEP_AT: usize = 10_000;

/// Counts per window (a minute unless made [`AddressGuard::with_window`]) of each `K`: a
/// client address unless said otherwise.
pub struct AddressGuard<K = IpAddr> {
    failures: Mutex<HashMap<K, Window>>,
    window_ms: i64,
}

impl<K> Default for AddressGuard<K> {
    fn default() -> Self {
        AddressGuard::with_window(MINUTE_MS)
    }
}

impl<K> AddressGuard<K> {
    /// A guard whose windows last `window_ms`, from each key's first event.
    pub fn with_window(window_ms: i64) -> Self {
        AddressGuard {
            failures: Mutex::new(HashMap::new()),
            window_ms,
        }
    }
}

impl<K: Hash + Eq> AddressGuard<K> {
    /// `Some(window)` when `addr` has used up its count (`limit`) for the current window.
    pub fn blocked(&self, addr: &K, now: i64, limit: u32) -> Option<Window> {
        let failures = self.failures.lock().ok()?;
        let window = failures.get(addr)?.at(now, self.window_ms);
        (window.used >= limit).then_some(window)
    }

    /// Counts one event of `addr` unless it has used up its count (`limit`) for the current
    /// window, in one step; the full window otherwise.
    pub fn admit(&self, addr: K, now: i64, limit: u32) -> Result<(), Window> {
        let Ok(mut failures) = self.failures.lock() else {
            return Ok(());
        };
        match failures.get(&addr).map(|w| w.at(now, self.window_ms)) {
            Some(window) if window.used >= limit => Err(window),
            _ => {
                self.count(&mut failures, addr, now);
                Ok(())
            }
        }
    }

    /// Takes one event of `addr` back from the current window.
    pub fn forgive(&self, addr: &K, now: i64) {
        let Ok(mut failures) = self.failures.lock() else {
            return;
        };
        if let Some(window) = failures.get_mut(addr) {
            if window.start + self.window_ms > now {
                window.used = window.used.saturating_sub(1);
            }
        }
    }

    /// Counts one event of `addr` in the current window.
    pub fn record(&self, addr: K, now: i64) {
        let Ok(mut failures) = self.failures.lock() else {
            return;
        };
        self.count(&mut failures, addr, now);
    }

    fn count(&self, failures: &mut HashMap<K, Window>, addr: K, now: i64) {
        if failures.len() >= SWEEP_AT {
            let length = self.window_ms;
            failures.retain(|_, w| w.start + length > now);
        }
        let window = failures
            .get(&addr)
            .copied()
            .unwrap_or_default()
            .at(now, self.window_ms);
        failures.insert(
            addr,
            Window {
                used: window.used + 1,
                ..window
            },
        );
    }
}

/// Failed password sign-ins allowed per client address, and per account, in a window.
pub const PASSWORD_FAILURES: u32 = 10;
/// How long a password window lasts from its first failure (15 minutes).
pub const PASSWORD_WINDOW_MS: i64 = 15 * MINUTE_MS;

/// The password sign-in guard (CONTRACT.md 16): [`PASSWORD_FAILURES`] failures in a window
/// of [`PASSWORD_WINDOW_MS`] per client address or per account refuse every further try,
/// right password or not, until that window ends. The account is the email as typed
/// (lower-case), counted whether or not it has an account, so a refusal tells nothing about
/// which emails do. Kept in this process's memory, as the API's guard is.
pub struct PasswordGuard {
    by_address: AddressGuard<IpAddr>,
    by_account: AddressGuard<String>,
}

impl Default for PasswordGuard {
    fn default() -> Self {
        PasswordGuard {
            by_address: AddressGuard::with_window(PASSWORD_WINDOW_MS),
            by_account: AddressGuard::with_window(PASSWORD_WINDOW_MS),
        }
    }
}

impl PasswordGuard {
    /// Admits a try from `address` for `account`, counted at once as a failure (so tries sent
    /// together can't pass the count between them), or the time (epoch ms) until which tries
    /// are refused, while either is past its failures.
    pub fn admit(&self, address: Option<IpAddr>, account: &str, now: i64) -> Result<(), i64> {
        if let Some(address) = address {
            self.by_address
                .admit(address, now, PASSWORD_FAILURES)
                .map_err(|w| w.start + PASSWORD_WINDOW_MS)?;
        }
        let by_account = self
            .by_account
            .admit(account.to_owned(), now, PASSWORD_FAILURES);
        if let (Err(window), Some(address)) = (by_account, address) {
            self.by_address.forgive(&address, now);
            return Err(window.start + PASSWORD_WINDOW_MS);
        }
        by_account.map_err(|w| w.start + PASSWORD_WINDOW_MS)
    }

    /// Takes back the count of an admitted try that succeeded.
    pub fn succeeded(&self, address: Option<IpAddr>, account: &str, now: i64) {
        if let Some(address) = address {
            self.by_address.forgive(&address, now);
        }
        self.by_account.forgive(&account.to_owned(), now);
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

    #[test]
    fn password_tries_are_refused_per_address_or_account_for_the_window() {
        let guard = PasswordGuard::default();
        let one: IpAddr = [10, 0, 0, 1].into();
        // A success takes its count back.
        assert!(guard.admit(Some(one), "a@x.test", 0).is_ok());
        guard.succeeded(Some(one), "a@x.test", 0);
        for i in 0..PASSWORD_FAILURES {
            // From changing addresses: only the account fills up.
            let addr = IpAddr::from([10, 0, 1, u8::try_from(i).unwrap()]);
            assert!(guard.admit(Some(addr), "a@x.test", 0).is_ok());
        }
        assert_eq!(
            guard.admit(Some(one), "a@x.test", 1_000),
            Err(PASSWORD_WINDOW_MS)
        );
        // The refused try did not count against its address.
        for _ in 0..PASSWORD_FAILURES {
            assert!(guard.admit(Some(one), "b@x.test", 1_000).is_ok());
        }
        assert_eq!(
            guard.admit(Some(one), "c@x.test", 2_000),
            Err(PASSWORD_WINDOW_MS)
        );
        assert!(guard
            .admit(Some(one), "a@x.test", PASSWORD_WINDOW_MS + 1_000)
            .is_ok());
    }
}
