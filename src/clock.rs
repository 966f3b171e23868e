//! Wall-clock time in the one representation the store keeps: epoch milliseconds.

use chrono::{DateTime, SecondsFormat, Utc};

pub fn now_ms() -> i64 {
    Utc::now().timestamp_millis()
}

/// ISO 8601 UTC with milliseconds, e.g. `2026-11-21T10:00:00.000Z`.
pub fn iso(ms: i64) -> String {
    DateTime::<Utc>::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(SecondsFormat::Millis, true)
}
