//! The PostgreSQL limiter: one statement per check, on an UNLOGGED table (counters need not
//! survive a crash). The row lock of the upsert serialises a key's concurrent checks across
//! replicas; every expression reads the old row `r`, so the rule is exactly [`super::decide`].

use std::sync::LazyLock;

use sqlx::Row;

use super::{Cost, Quota, Usage, Window, HOUR_MS, MINUTE_MS};
use crate::{error::Result, store::postgres::conn::Connections};

/// The check: `$1` the key id, `$2` now, `$3`/`$4`/`$5` window lengths, `$6` cost, `$7` write
/// cost, `$8`-`$10` limits. Parameters are typed by the statement itself, for clients that
/// send them untyped (pgbench runs this text in `bench/sql/`).
pub(crate) static CHECK: LazyLock<String> = LazyLock::new(|| {
    let minute = "(CASE WHEN r.minute_start + $3 > $2 THEN r.minute_used ELSE 0 END)";
    let hour = "(CASE WHEN r.hour_start + $4 > $2 THEN r.hour_used ELSE 0 END)";
    let write = "(CASE WHEN r.write_start + $5 > $2 THEN r.write_used ELSE 0 END)";
    let fits = format!("({minute} + $6 <= $8 AND {hour} + $6 <= $9 AND {write} + $7 <= $10)");
    // The first use of the counts and limits, so the casts type them for the whole statement.
    let fresh_fits = "($6::int8 <= $8::int8 AND $6::int8 <= $9::int8 AND $7::int8 <= $10::int8)";
    format!(
        "INSERT INTO rate_limit_windows AS r \
         (subject, minute_start, minute_used, hour_start, hour_used, write_start, write_used, granted) \
         VALUES ($1, $2, CASE WHEN {fresh_fits} THEN $6 ELSE 0 END, $2, CASE WHEN {fresh_fits} THEN $6 ELSE 0 END, \
                 $2, CASE WHEN {fresh_fits} THEN $7 ELSE 0 END, {fresh_fits}) \
         ON CONFLICT (subject) DO UPDATE SET \
           minute_start = CASE WHEN r.minute_start + $3 > $2 THEN r.minute_start ELSE $2 END, \
           minute_used = {minute} + CASE WHEN {fits} THEN $6 ELSE 0 END, \
           hour_start = CASE WHEN r.hour_start + $4 > $2 THEN r.hour_start ELSE $2 END, \
           hour_used = {hour} + CASE WHEN {fits} THEN $6 ELSE 0 END, \
           write_start = CASE WHEN r.write_start + $5 > $2 THEN r.write_start ELSE $2 END, \
           write_used = {write} + CASE WHEN {fits} THEN $7 ELSE 0 END, \
           granted = {fits} \
         RETURNING minute_start, minute_used, hour_start, hour_used, write_start, write_used, granted"
    )
});

pub async fn check(
    conns: &Connections,
    subject: &str,
    now: i64,
    cost: Cost,
    quota: &Quota,
) -> Result<Usage> {
    let write_tokens = if cost.write { cost.tokens } else { 0 };
    let row = sqlx::query(&CHECK)
        .bind(subject)
        .bind(now)
        .bind(MINUTE_MS)
        .bind(HOUR_MS)
        .bind(quota.write_window_ms)
        .bind(i64::from(cost.tokens))
        .bind(i64::from(write_tokens))
        .bind(i64::from(quota.per_minute))
        .bind(i64::from(quota.per_hour))
        .bind(i64::from(quota.write_capacity))
        .fetch_one(&mut *conns.get().await?)
        .await?;
    let used = |name: &str| -> Result<u32> {
        let n: i64 = row.try_get(name)?;
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    };
    Ok(Usage {
        minute: Window {
            start: row.try_get("minute_start")?,
            used: used("minute_used")?,
        },
        hour: Window {
            start: row.try_get("hour_start")?,
            used: used("hour_used")?,
        },
        write: Window {
            start: row.try_get("write_start")?,
            used: used("write_used")?,
        },
        granted: row.try_get("granted")?,
    })
}
