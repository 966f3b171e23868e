//! Rate limits (SPEC.md 8, CONTRACT.md 9) as a middleware on the API routes: it authenticates
//! the caller, prices the request, charges every window it touches in one step, and writes the
//! `X-RateLimit-*` headers on every authenticated response. Handlers know nothing about it.
//!
//! Windows start at a key's first request and last their length (a minute, an hour, the write
//! bucket's `window_secs`); a request is granted only if its cost fits in all of them, and a
//! refused request charges nothing.

mod guard;
mod middleware;
mod open;
pub(crate) mod postgres;

pub use guard::{AddressGuard, PasswordGuard, PASSWORD_FAILURES, PASSWORD_WINDOW_MS};
pub use middleware::enforce;
pub(crate) use middleware::{
    body_error, client_address, count_hook_call, count_share_request, count_user_request,
    guarded_authenticate,
};
pub(crate) use open::count_in_flight;
pub use open::{OpenPerAddress, Place};

use std::{collections::HashMap, sync::Mutex, time::Duration};

use serde::{Deserialize, Serialize};

use crate::{auth::Tier, error::Result};

/// `[rate_limits]` settings; the defaults are SPEC.md 8.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct RateLimitSettings {
    pub tiers: Tiers,
    pub write_bucket: WriteBucket,
    pub auth_failures: AuthFailures,
    /// Requests to pages (share pages, signed-in pages, their fragments and streams) per
    /// client address (the address as `auth_failures.client_ip_header` says), and to
    /// signed-in pages per user as well.
    pub share: ShareLimit,
    /// Where a 429 sends the caller for more; empty means `<public_url>/upgrade`.
    pub upgrade_url: String,
    /// `closed` (refuse with 503) or `open` (let requests through) when the limiter's store
    /// can't answer within `timeout_ms`.
    pub failure_mode: FailureMode,
    pub timeout_ms: u64,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct Tiers {
    pub starter: TierLimits,
    pub professional: TierLimits,
    pub team: TierLimits,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize)]
pub struct TierLimits {
    pub per_minute: u32,
    pub per_hour: u32,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize)]
pub struct WriteBucket {
    pub capacity: u32,
    pub window_secs: u64,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct AuthFailures {
    /// Failed authentications allowed per client address per minute.
    pub per_minute: u32,
    /// A header set by a trusted proxy that names the client (its first address counts),
    /// e.g. `x-forwarded-for`; empty means the TCP peer address.
    pub client_ip_header: String,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct ShareLimit {
    /// Page requests allowed per client address, and per signed-in user, per minute.
    pub per_minute: u32,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum FailureMode {
    Open,
    Closed,
}

impl RateLimitSettings {
    pub fn tier(&self, tier: Tier) -> TierLimits {
        match tier {
            Tier::Starter => self.tiers.starter,
            Tier::Professional => self.tiers.professional,
            Tier::Team => self.tiers.team,
        }
    }
}

pub const MINUTE_MS: i64 = 60_000;
pub const HOUR_MS: i64 = 3_600_000;

/// What a request costs, and in which windows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cost {
    pub tokens: u32,
    pub write: bool,
}

impl Cost {
    /// What it draws on the write bucket: all its tokens for a write, none for a read.
    pub fn write_tokens(self) -> u32 {
        if self.write {
            self.tokens
        } else {
            0
        }
    }
}

/// The limits one check is held to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quota {
    pub per_minute: u32,
    pub per_hour: u32,
    pub write_capacity: u32,
    pub write_window_ms: i64,
}

/// One window's state: when it started and what it has used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Window {
    pub start: i64,
    pub used: u32,
}

impl Window {
    /// The window in force at `now`: this one, or a fresh one if it has ended.
    fn at(self, now: i64, length: i64) -> Window {
        if self.start + length > now {
            self
        } else {
            Window {
                start: now,
                used: 0,
            }
        }
    }
}

/// A key's windows after a check, and whether the request was granted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub minute: Window,
    pub hour: Window,
    pub write: Window,
    pub granted: bool,
    /// PostgreSQL: the count of changes to keys, memberships and roles as the check's own
    /// statement read it (`auth_changes`), which confirms a principal kept from an earlier
    /// request (see [`crate::auth::KeyCache`]).
    pub auth_changes: Option<i64>,
}

/// The rule both backends implement: charge `cost` to every window it touches only if it
/// fits in all of them.
pub fn decide(previous: Option<Usage>, now: i64, cost: Cost, quota: &Quota) -> Usage {
    let previous = previous.unwrap_or(Usage {
        minute: Window {
            start: now,
            used: 0,
        },
        hour: Window {
            start: now,
            used: 0,
        },
        write: Window {
            start: now,
            used: 0,
        },
        granted: false,
        auth_changes: None,
    });
    let minute = previous.minute.at(now, MINUTE_MS);
    let hour = previous.hour.at(now, HOUR_MS);
    let write = previous.write.at(now, quota.write_window_ms);
    let write_tokens = cost.write_tokens();
    let fits = minute.used + cost.tokens <= quota.per_minute
        && hour.used + cost.tokens <= quota.per_hour
        && write.used + write_tokens <= quota.write_capacity;
    let (charge, write_charge) = if fits {
        (cost.tokens, write_tokens)
    } else {
        (0, 0)
    };
    Usage {
        minute: Window {
            used: minute.used + charge,
            ..minute
        },
        hour: Window {
            used: hour.used + charge,
            ..hour
        },
        write: Window {
            used: write.used + write_charge,
            ..write
        },
        granted: fits,
        auth_changes: previous.auth_changes,
    }
}

/// Where windows are kept: this process's memory, or PostgreSQL for several replicas.
pub enum Limiter {
    Memory(Mutex<HashMap<String, Usage>>),
    Postgres(postgres::Checks),
}

impl Limiter {
    pub fn for_store(store: &crate::store::Store) -> Limiter {
        match store.pg_connections() {
            Some(conns) => Limiter::Postgres(postgres::Checks::new(conns)),
            None => Limiter::Memory(Mutex::default()),
        }
    }

    /// Checks and charges `cost` for `subject` (a key id) at `now`.
    pub async fn check(
        &self,
        subject: &str,
        now: i64,
        cost: Cost,
        quota: &Quota,
        timeout: Duration,
    ) -> Result<Usage> {
        match self {
            Limiter::Memory(map) => {
                let mut map = map
                    .lock()
                    .map_err(|_| crate::Error::internal("limiter lock poisoned"))?;
                let usage = decide(map.get(subject).copied(), now, cost, quota);
                map.insert(subject.to_owned(), usage);
                Ok(usage)
            }
            Limiter::Postgres(checks) => checks.check(subject, now, cost, quota, timeout).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUOTA: Quota = Quota {
        per_minute: 3,
        per_hour: 5,
        write_capacity: 2,
        write_window_ms: 60_000,
    };
    const READ: Cost = Cost {
        tokens: 1,
        write: false,
    };
    const WRITE: Cost = Cost {
        tokens: 1,
        write: true,
    };

    #[test]
    fn refused_requests_charge_nothing_and_windows_reset() {
        let mut usage = None;
        for _ in 0..3 {
            let u = decide(usage, 1_000, READ, &QUOTA);
            assert!(u.granted);
            usage = Some(u);
        }
        let refused = decide(usage, 2_000, READ, &QUOTA);
        assert!(!refused.granted);
        assert_eq!(refused.minute.used, 3);
        let next_minute = decide(Some(refused), 61_000, READ, &QUOTA);
        assert!(next_minute.granted);
        assert_eq!(
            next_minute.minute,
            Window {
                start: 61_000,
                used: 1
            }
        );
        assert_eq!(
            next_minute.hour,
            Window {
                start: 1_000,
                used: 4
            }
        );
    }

    #[test]
    fn writes_also_draw_on_the_bucket_and_batches_cost_more() {
        let u = decide(None, 0, WRITE, &QUOTA);
        let u = decide(Some(u), 0, WRITE, &QUOTA);
        assert_eq!(u.write.used, 2);
        assert!(!decide(Some(u), 0, WRITE, &QUOTA).granted);
        assert!(decide(Some(u), 0, READ, &QUOTA).granted);
        assert!(
            !decide(
                None,
                0,
                Cost {
                    tokens: 4,
                    write: false
                },
                &QUOTA
            )
            .granted
        );
    }
}
