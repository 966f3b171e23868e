//! The PostgreSQL limiter: one statement per check at most, on an UNLOGGED table (counters
//! need not survive a crash). The row lock of the upsert serialises a key's concurrent checks
//! across replicas; every expression reads the old row `r`, so the rule is exactly
//! [`super::decide`].
//!
//! Every request charges its key's row, so at a few thousand requests a second the checks
//! queued on row locks and statements, and the limiter asked for about half of what PostgreSQL
//! gave (bench/README.md, Updates, Sessions 30-32). So one replica's concurrent checks are
//! coalesced, whatever their keys: the first runs its check as the group's leader, on its
//! request's connection; those that arrive meanwhile wait, and the first of them then leads
//! them all in one statement charging each key the sum of its checks. Where a key's sum fits,
//! each of its requests is granted as if the group had been checked one by one in arrival
//! order (every prefix of a sum that fits fits too), and its windows are the group's before
//! plus the costs up to its own. Where it doesn't, nothing was charged to that key and its
//! checks are made alone, in order: near a limit a group costs one statement more, and the
//! rule stays [`super::decide`]'s.

use std::{
    collections::HashMap,
    mem,
    sync::{LazyLock, Mutex, MutexGuard, PoisonError},
    time::Duration,
};

use sqlx::{postgres::PgRow, Row};
use tokio::sync::oneshot;

use super::{decide, Cost, Quota, Usage, Window, HOUR_MS, MINUTE_MS};
use crate::{
    error::{Error, Result},
    store::postgres::conn::{self, Connections},
};

/// A charge's new windows over the old row `r`, as [`super::decide`] makes them; each term
/// names where the statement keeps that value (a parameter, or a column of its input).
struct Terms {
    now: &'static str,
    minute_ms: &'static str,
    hour_ms: &'static str,
    write_ms: &'static str,
    tokens: &'static str,
    write_tokens: &'static str,
    per_minute: &'static str,
    per_hour: &'static str,
    write_capacity: &'static str,
}

impl Terms {
    /// The SET list of a charge: each window moved on if it ended, the costs added if they fit
    /// every window, and whether they did.
    fn set(&self) -> String {
        let Terms {
            now,
            minute_ms,
            hour_ms,
            write_ms,
            tokens,
            write_tokens,
            per_minute,
            per_hour,
            write_capacity,
        } = self;
        let used = |window: &str, length: &str| {
            format!(
                "(CASE WHEN r.{window}_start + {length} > {now} THEN r.{window}_used ELSE 0 END)"
            )
        };
        let (minute, hour, write) = (
            used("minute", minute_ms),
            used("hour", hour_ms),
            used("write", write_ms),
        );
        let fits = format!(
            "({minute} + {tokens} <= {per_minute} AND {hour} + {tokens} <= {per_hour} \
             AND {write} + {write_tokens} <= {write_capacity})"
        );
        let start = |window: &str, length: &str| {
            format!("{window}_start = CASE WHEN r.{window}_start + {length} > {now} THEN r.{window}_start ELSE {now} END")
        };
        format!(
            "{}, minute_used = {minute} + CASE WHEN {fits} THEN {tokens} ELSE 0 END, \
             {}, hour_used = {hour} + CASE WHEN {fits} THEN {tokens} ELSE 0 END, \
             {}, write_used = {write} + CASE WHEN {fits} THEN {write_tokens} ELSE 0 END, \
             granted = {fits}",
            start("minute", minute_ms),
            start("hour", hour_ms),
            start("write", write_ms),
        )
    }
}

/// The windows a check leaves, as both statements return them.
const WINDOWS: &str =
    "minute_start, minute_used, hour_start, hour_used, write_start, write_used, granted";
/// What both statements return beside the windows: the count of changes to credentials
/// ([`Usage::auth_changes`]), read by the statement that every request makes anyway. By its
/// key (`WHERE one`): on a connection with `enable_seqscan = off` (pgbench's runs of
/// `bench/sql/update.sql`) a scan of the one-row table cost the whole statement enough for
/// PostgreSQL to compile it with JIT on every run (400 -> 11 transactions/s).
const CHANGES: &str = "(SELECT n FROM auth_changes WHERE one) AS auth_changes";

/// The check: `$1` the key id, `$2` now, `$3`/`$4`/`$5` window lengths, `$6` cost, `$7` write
/// cost, `$8`-`$10` limits. Parameters are typed by the statement itself, for clients that
/// send them untyped (pgbench runs this text in `bench/sql/`).
pub(crate) static CHECK: LazyLock<String> = LazyLock::new(|| {
    let set = Terms {
        now: "$2",
        minute_ms: "$3",
        hour_ms: "$4",
        write_ms: "$5",
        tokens: "$6",
        write_tokens: "$7",
        per_minute: "$8",
        per_hour: "$9",
        write_capacity: "$10",
    }
    .set();
    // The first use of the counts and limits, so the casts type them for the whole statement.
    let fresh_fits = "($6::int8 <= $8::int8 AND $6::int8 <= $9::int8 AND $7::int8 <= $10::int8)";
    format!(
        "INSERT INTO rate_limit_windows AS r \
         (subject, minute_start, minute_used, hour_start, hour_used, write_start, write_used, granted) \
         VALUES ($1, $2, CASE WHEN {fresh_fits} THEN $6 ELSE 0 END, $2, CASE WHEN {fresh_fits} THEN $6 ELSE 0 END, \
                 $2, CASE WHEN {fresh_fits} THEN $7 ELSE 0 END, {fresh_fits}) \
         ON CONFLICT (subject) DO UPDATE SET {set} \
         RETURNING {WINDOWS}, {CHANGES}"
    )
});

/// The check of several keys' rows at once: `$1` now, `$2`/`$3` the minute's and hour's
/// lengths, then one array per column of `c`, an element per key. Only rows that exist are
/// charged (a key's first check is [`CHECK`]'s insert); each is locked first, in key order, so
/// two replicas' statements can't deadlock, and READ COMMITTED has the update read each row as
/// its lock found it. Returns the rows charged, with their key.
static CHECK_KEYS: LazyLock<String> = LazyLock::new(|| {
    let set = Terms {
        now: "$1",
        minute_ms: "$2",
        hour_ms: "$3",
        write_ms: "c.write_window",
        tokens: "c.tokens",
        write_tokens: "c.write_tokens",
        per_minute: "c.per_minute",
        per_hour: "c.per_hour",
        write_capacity: "c.write_capacity",
    }
    .set();
    let windows = WINDOWS.replace(", ", ", r.");
    format!(
        "WITH c AS MATERIALIZED (SELECT * FROM UNNEST($4::text[], $5::int8[], $6::int8[], \
                 $7::int8[], $8::int8[], $9::int8[], $10::int8[]) \
               AS c (subject, tokens, write_tokens, per_minute, per_hour, write_capacity, write_window)), \
         locked AS MATERIALIZED (SELECT r.subject FROM rate_limit_windows r JOIN c USING (subject) \
               ORDER BY r.subject FOR UPDATE OF r) \
         UPDATE rate_limit_windows AS r SET {set} \
         FROM c WHERE r.subject = c.subject AND (SELECT count(*) FROM locked) >= 0 \
         RETURNING r.subject, r.{windows}, {CHANGES}"
    )
});

/// One request's check.
#[derive(Clone)]
struct Ask {
    subject: String,
    now: i64,
    cost: Cost,
    quota: Quota,
}

/// A check waiting for its group's leader.
struct Waiting {
    ask: Ask,
    answer: oneshot::Sender<Answer>,
}

enum Answer {
    /// The check, decided.
    Decided(Result<Usage>),
    /// Lead these checks (the receiver's own is checked first).
    Lead(Vec<Waiting>),
}

/// The checks of this replica, coalesced.
pub struct Checks {
    conns: Connections,
    /// With a leader at work: the checks that arrived since its group was formed.
    waiting: Mutex<Option<Vec<Waiting>>>,
}

impl Checks {
    pub fn new(conns: Connections) -> Self {
        Checks {
            conns,
            waiting: Mutex::default(),
        }
    }

    /// The queue sees only whole pushes and takes, so a panic elsewhere leaves it sound.
    fn waiting(&self) -> MutexGuard<'_, Option<Vec<Waiting>>> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Checks and charges `cost` for `subject` at `now`, with the rest of this replica's
    /// concurrent checks. `timeout` bounds the wait for a leader and the statement, each.
    pub async fn check(
        &self,
        subject: &str,
        now: i64,
        cost: Cost,
        quota: &Quota,
        timeout: Duration,
    ) -> Result<Usage> {
        // A queued check waits holding its request's connection, so a check must hold its
        // own before it joins: a leader still waiting on the pool behind its followers'
        // connections would wait for ever. (A request whose key was kept, or that gave its
        // connection back while its body arrived, has none yet.)
        conn::hold_request_connection(&self.conns).await?;
        let ask = Ask {
            subject: subject.to_owned(),
            now,
            cost,
            quota: *quota,
        };
        let (answer, decided) = oneshot::channel();
        let queued = {
            let mut waiting = self.waiting();
            match waiting.as_mut() {
                Some(queue) => {
                    queue.push(Waiting {
                        ask: ask.clone(),
                        answer,
                    });
                    true
                }
                None => {
                    *waiting = Some(Vec::new());
                    false
                }
            }
        };
        let followers = if queued {
            let mut queued = Queued {
                checks: self,
                decided,
            };
            match tokio::time::timeout(timeout, &mut queued.decided).await {
                Ok(Ok(Answer::Decided(usage))) => return usage,
                Ok(Ok(Answer::Lead(followers))) => followers,
                Ok(Err(_)) | Err(_) => return Err(Error::Unavailable),
            }
        } else {
            Vec::new()
        };
        let mut leading = Leading {
            checks: self,
            // A check that gave up waiting is not charged.
            followers: followers
                .into_iter()
                .filter(|f| !f.answer.is_closed())
                .collect(),
            done: false,
        };
        let decided = tokio::time::timeout(timeout, self.decide(&ask, &leading.followers))
            .await
            .map_err(|_| {
                // The statement was abandoned midway: check its connection before reuse.
                conn::note_abandoned();
                Error::Unavailable
            })
            .and_then(|decided| decided)
            .inspect_err(conn::note_error);
        // The lead goes on to the next group before this one's answers go out.
        leading.done = true;
        let followers = mem::take(&mut leading.followers);
        drop(leading);
        // On an error the followers are dropped unanswered: each one's wait in `check` ends
        // with its sender gone, which is `Error::Unavailable`, as the failure mode expects.
        let mut usages = decided?;
        let own = usages.remove(0);
        for (follower, usage) in followers.into_iter().zip(usages) {
            // A follower that gave up has nothing to be told.
            let _ = follower.answer.send(Answer::Decided(Ok(usage)));
        }
        Ok(own)
    }

    /// The usages of the leader's check and its followers', in that order.
    async fn decide(&self, own: &Ask, followers: &[Waiting]) -> Result<Vec<Usage>> {
        let asks: Vec<&Ask> = std::iter::once(own)
            .chain(followers.iter().map(|f| &f.ask))
            .collect();
        let now = asks.iter().map(|a| a.now).max().unwrap_or(own.now);
        let keys = KeyChecks::of(&asks);
        let mut charged = if keys.len() > 1 {
            charge_keys(&self.conns, now, &keys).await?
        } else {
            HashMap::new()
        };
        let mut usages = vec![Usage::default(); asks.len()];
        for key in &keys {
            let group = match (charged.remove(key.subject), key.quota) {
                (Some(usage), _) => Some(usage),
                // Not charged yet: the key's first check, or the group is its alone.
                (None, Some(quota)) if key.checks.len() > 1 => Some(
                    charge(
                        &self.conns,
                        key.subject,
                        now,
                        key.tokens,
                        key.write_tokens,
                        &quota,
                    )
                    .await?,
                ),
                (None, _) => None,
            };
            let decided = match group {
                Some(group) if group.granted => shares(group, now, key),
                _ => self.one_by_one(key).await?,
            };
            for (&(i, _), usage) in key.checks.iter().zip(decided) {
                usages[i] = usage;
            }
        }
        Ok(usages)
    }

    /// A key's checks made alone, in arrival order.
    async fn one_by_one(&self, key: &KeyChecks<'_>) -> Result<Vec<Usage>> {
        let mut usages = Vec::with_capacity(key.checks.len());
        for (_, ask) in &key.checks {
            usages.push(
                charge(
                    &self.conns,
                    key.subject,
                    ask.now,
                    u64::from(ask.cost.tokens),
                    u64::from(ask.cost.write_tokens()),
                    &ask.quota,
                )
                .await?,
            );
        }
        Ok(usages)
    }
}

/// One key's checks in a group.
struct KeyChecks<'a> {
    subject: &'a str,
    /// Its checks with their places in the group, in arrival order.
    checks: Vec<(usize, &'a Ask)>,
    tokens: u64,
    write_tokens: u64,
    /// The quota they all share; `None` if they differ (each is then checked alone).
    quota: Option<Quota>,
}

impl<'a> KeyChecks<'a> {
    /// The group's checks by key, keys in order of their first check.
    fn of(asks: &[&'a Ask]) -> Vec<KeyChecks<'a>> {
        let mut keys: Vec<KeyChecks<'a>> = Vec::new();
        let mut index: HashMap<&str, usize> = HashMap::new();
        for (i, &ask) in asks.iter().enumerate() {
            let at = *index.entry(&ask.subject).or_insert_with(|| {
                keys.push(KeyChecks {
                    subject: &ask.subject,
                    checks: Vec::new(),
                    tokens: 0,
                    write_tokens: 0,
                    quota: Some(ask.quota),
                });
                keys.len() - 1
            });
            let key = &mut keys[at];
            key.checks.push((i, ask));
            key.tokens += u64::from(ask.cost.tokens);
            key.write_tokens += u64::from(ask.cost.write_tokens());
            if key.quota != Some(ask.quota) {
                key.quota = None;
            }
        }
        keys
    }
}

/// Each request's windows after a granted charge of its key's sum: the key's before plus the
/// costs up to its own, in arrival order, as [`decide`] would have left them one by one.
fn shares(group: Usage, now: i64, key: &KeyChecks<'_>) -> Vec<Usage> {
    let before = |window: Window, charged: u64| Window {
        used: window
            .used
            .saturating_sub(u32::try_from(charged).unwrap_or(u32::MAX)),
        ..window
    };
    let mut usage = Usage {
        minute: before(group.minute, key.tokens),
        hour: before(group.hour, key.tokens),
        write: before(group.write, key.write_tokens),
        granted: false,
        auth_changes: group.auth_changes,
    };
    key.checks
        .iter()
        .map(|(_, ask)| {
            usage = decide(Some(usage), now, ask.cost, &ask.quota);
            usage
        })
        .collect()
}

/// The leader of a group while it decides. Dropped, it hands the lead on: to the first of its
/// followers if it was dropped before deciding (its request went away; they are checked again,
/// so an abandoned statement may have charged them once already), else to the first check that
/// arrived meanwhile; with none, there is no leader any more.
struct Leading<'a> {
    checks: &'a Checks,
    followers: Vec<Waiting>,
    done: bool,
}

impl Drop for Leading<'_> {
    fn drop(&mut self) {
        let mut next = if self.done {
            Vec::new()
        } else {
            mem::take(&mut self.followers)
        };
        loop {
            if next.is_empty() {
                let mut waiting = self.checks.waiting();
                match waiting.as_mut() {
                    Some(queue) if !queue.is_empty() => next = mem::take(queue),
                    _ => {
                        *waiting = None;
                        return;
                    }
                }
            }
            let leader = next.remove(0);
            match leader.answer.send(Answer::Lead(next)) {
                // It gave up waiting: the next one leads.
                Err(Answer::Lead(rest)) => next = rest,
                _ => return,
            }
        }
    }
}

/// A check waiting for its group's leader. Dropped (its request went away, or it gave up
/// waiting) just as the lead was handed to it, it hands the lead on: a lead must never be
/// lost, or every check would queue behind no one.
struct Queued<'a> {
    checks: &'a Checks,
    decided: oneshot::Receiver<Answer>,
}

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        self.decided.close();
        if let Ok(Answer::Lead(followers)) = self.decided.try_recv() {
            drop(Leading {
                checks: self.checks,
                followers,
                done: false,
            });
        }
    }
}

/// One statement: charges `tokens` (`write_tokens` of them to the write bucket) if they fit.
async fn charge(
    conns: &Connections,
    subject: &str,
    now: i64,
    tokens: u64,
    write_tokens: u64,
    quota: &Quota,
) -> Result<Usage> {
    let row = sqlx::query(&CHECK)
        .bind(subject)
        .bind(now)
        .bind(MINUTE_MS)
        .bind(HOUR_MS)
        .bind(quota.write_window_ms)
        .bind(count(tokens))
        .bind(count(write_tokens))
        .bind(i64::from(quota.per_minute))
        .bind(i64::from(quota.per_hour))
        .bind(i64::from(quota.write_capacity))
        .fetch_one(&mut *conns.get().await?)
        .await?;
    usage(&row)
}

/// One statement charging each key (those with one quota) its sum where it fits: the usage of
/// each key whose row exists, by key.
async fn charge_keys(
    conns: &Connections,
    now: i64,
    keys: &[KeyChecks<'_>],
) -> Result<HashMap<String, Usage>> {
    let summed: Vec<(&KeyChecks, Quota)> = keys
        .iter()
        .filter_map(|key| Some((key, key.quota?)))
        .collect();
    let column = |f: fn(&KeyChecks, &Quota) -> i64| -> Vec<i64> {
        summed.iter().map(|(key, quota)| f(key, quota)).collect()
    };
    let rows = sqlx::query(&CHECK_KEYS)
        .bind(now)
        .bind(MINUTE_MS)
        .bind(HOUR_MS)
        .bind(
            summed
                .iter()
                .map(|(key, _)| key.subject)
                .collect::<Vec<_>>(),
        )
        .bind(column(|key, _| count(key.tokens)))
        .bind(column(|key, _| count(key.write_tokens)))
        .bind(column(|_, quota| i64::from(quota.per_minute)))
        .bind(column(|_, quota| i64::from(quota.per_hour)))
        .bind(column(|_, quota| i64::from(quota.write_capacity)))
        .bind(column(|_, quota| quota.write_window_ms))
        .fetch_all(&mut *conns.get().await?)
        .await?;
    rows.iter()
        .map(|row| Ok((row.try_get("subject")?, usage(row)?)))
        .collect()
}

fn count(tokens: u64) -> i64 {
    i64::try_from(tokens).unwrap_or(i64::MAX)
}

/// The windows a statement returned.
fn usage(row: &PgRow) -> Result<Usage> {
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
        auth_changes: Some(row.try_get("auth_changes")?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use sqlx::postgres::PgPoolOptions;

    const QUOTA: Quota = Quota {
        per_minute: 20,
        per_hour: 50,
        write_capacity: 9,
        write_window_ms: 30_000,
    };

    fn ask(now: i64, tokens: u32, write: bool) -> Ask {
        Ask {
            subject: "key".to_owned(),
            now,
            cost: Cost { tokens, write },
            quota: QUOTA,
        }
    }

    /// Whatever the windows before (none, part used, ended), a group charged its sum at once
    /// leaves each request exactly where checking them one by one would have.
    #[test]
    fn a_granted_group_leaves_each_request_as_one_by_one_checks_would() {
        let part_used = Usage {
            minute: Window {
                start: 1_000,
                used: 7,
            },
            hour: Window { start: 0, used: 30 },
            write: Window {
                start: 500,
                used: 2,
            },
            granted: true,
            auth_changes: None,
        };
        let asks = [
            ask(40_000, 1, false),
            ask(40_000, 2, true),
            ask(40_000, 3, false),
            ask(40_000, 1, true),
        ];
        for before in [None, Some(part_used)] {
            for now in [40_000, 70_000, 4_000_000] {
                let mut one_by_one = Vec::new();
                let mut usage = before;
                for a in &asks {
                    let next = decide(usage, now, a.cost, &QUOTA);
                    assert!(next.granted);
                    one_by_one.push(next);
                    usage = Some(next);
                }
                // What the statement returns for the sum (7 tokens, 3 of them writes): the
                // minute and hour as for 7 reads, the write bucket as for 3 writes.
                let reads = decide(
                    before,
                    now,
                    Cost {
                        tokens: 7,
                        write: false,
                    },
                    &QUOTA,
                );
                let writes = decide(
                    before,
                    now,
                    Cost {
                        tokens: 3,
                        write: true,
                    },
                    &QUOTA,
                );
                assert!(reads.granted && writes.granted);
                let group = Usage {
                    write: writes.write,
                    ..reads
                };
                let asks: Vec<&Ask> = asks.iter().collect();
                let [key] = &KeyChecks::of(&asks)[..] else {
                    panic!("one key")
                };
                assert_eq!((key.tokens, key.write_tokens), (7, 3));
                assert_eq!(shares(group, now, key), one_by_one, "{before:?} at {now}");
            }
        }
    }

    /// A group's checks by key: in order of each key's first check, each with its places and
    /// sums, and no shared quota where its checks' quotas differ.
    #[test]
    fn a_group_is_split_by_key() {
        let on = |subject: &str, tokens, quota| Ask {
            subject: subject.to_owned(),
            quota,
            ..ask(0, tokens, tokens > 1)
        };
        let other = Quota {
            per_minute: 30,
            ..QUOTA
        };
        let asks = [
            on("b", 1, QUOTA),
            on("a", 2, QUOTA),
            on("b", 3, QUOTA),
            on("a", 1, other),
            on("c", 2, other),
        ];
        let asks: Vec<&Ask> = asks.iter().collect();
        let keys: Vec<_> = KeyChecks::of(&asks)
            .iter()
            .map(|k| {
                (
                    k.subject,
                    k.checks.iter().map(|&(i, _)| i).collect::<Vec<_>>(),
                    k.tokens,
                    k.write_tokens,
                    k.quota,
                )
            })
            .collect();
        assert_eq!(
            keys,
            [
                ("b", vec![0, 2], 4, 3, Some(QUOTA)),
                ("a", vec![1, 3], 3, 2, None),
                ("c", vec![4], 2, 2, Some(other)),
            ]
        );
    }

    /// Checks against a server that accepts connections and never answers; a statement gives
    /// up after `wait`.
    async fn silent_checks(wait: Duration) -> (Arc<Checks>, tokio::task::JoinHandle<()>) {
        let (options, hold) = conn::silent_server().await;
        let pool = PgPoolOptions::new()
            .acquire_timeout(wait)
            .connect_lazy_with(options);
        (Arc::new(Checks::new(Connections::new(pool))), hold)
    }

    fn start(
        checks: &Arc<Checks>,
        subject: &'static str,
    ) -> tokio::task::JoinHandle<Result<Usage>> {
        start_with(checks, subject, 1, false)
    }

    fn start_with(
        checks: &Arc<Checks>,
        subject: &'static str,
        tokens: u32,
        write: bool,
    ) -> tokio::task::JoinHandle<Result<Usage>> {
        let checks = checks.clone();
        tokio::spawn(async move {
            checks
                .check(
                    subject,
                    0,
                    Cost { tokens, write },
                    &QUOTA,
                    Duration::from_secs(60),
                )
                .await
        })
    }

    /// Waits (up to 10 s) until the queue holds `queued` checks, or, with `None`, until there
    /// is no leader.
    async fn until(checks: &Checks, queued: Option<usize>) {
        for _ in 0..1_000 {
            if checks.waiting().as_ref().map(Vec::len) == queued {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the queue never came to {queued:?}");
    }

    /// A leader (the first check) and two checks queued behind it, one of another key, all
    /// waiting on the silent server for up to `wait` a statement.
    async fn one_leading_two_queued(
        wait: Duration,
    ) -> (
        Arc<Checks>,
        tokio::task::JoinHandle<()>,
        [tokio::task::JoinHandle<Result<Usage>>; 3],
    ) {
        let (checks, hold) = silent_checks(wait).await;
        let first = start(&checks, "a");
        until(&checks, Some(0)).await;
        let second = start(&checks, "b");
        let third = start(&checks, "a");
        until(&checks, Some(2)).await;
        (checks, hold, [first, second, third])
    }

    async fn stop(check: tokio::task::JoinHandle<Result<Usage>>) {
        check.abort();
        assert!(check.await.unwrap_err().is_cancelled());
    }

    /// Checks of several keys queued behind one leader are charged in one statement, and each
    /// comes out as checking its key's requests one by one in arrival order would leave it:
    /// keys whose sums fit, a key whose sum doesn't (its checks then made alone) and a key
    /// with no row yet (the upsert). On a database of its own (`TEST_PG_URL`, as the API tests).
    #[tokio::test]
    async fn a_group_of_several_keys_charges_each_as_one_by_one_checks_would() {
        let Some(database) = conn::TestDatabase::create("limits").await else {
            return;
        };
        let pool = PgPoolOptions::new()
            .max_connections(3)
            .connect(&database.url)
            .await
            .unwrap();
        for migration in [
            include_str!("../../migrations/postgres/0002_rate_limits.sql"),
            include_str!("../../migrations/postgres/0021_auth_changes.sql"),
        ] {
            sqlx::raw_sql(migration).execute(&pool).await.unwrap();
        }
        // Minute and hour used so far, the write bucket empty.
        let rows = [("a", 3), ("b", 11), ("c", 18)];
        for (subject, used) in rows {
            sqlx::query("INSERT INTO rate_limit_windows VALUES ($1, 0, $2, 0, $2, 0, 0, true)")
                .bind(subject)
                .bind(i64::from(used))
                .execute(&pool)
                .await
                .unwrap();
        }
        let checks = Arc::new(Checks::new(Connections::new(pool.clone())));
        // Holding a's row keeps the first check (the leader) waiting, so the rest queue.
        let mut hold = pool.begin().await.unwrap();
        sqlx::query("SELECT FROM rate_limit_windows WHERE subject = 'a' FOR UPDATE")
            .execute(&mut *hold)
            .await
            .unwrap();
        let asks = [
            ("a", 1, false),
            ("b", 2, false),
            ("a", 1, true),
            ("c", 1, false),
            ("d", 3, true),
            ("b", 1, true),
            ("c", 1, false),
            ("d", 1, false),
            ("c", 1, false),
            ("a", 2, false),
        ];
        let mut started = Vec::new();
        for (queued, &(subject, tokens, write)) in asks.iter().enumerate() {
            started.push(start_with(&checks, subject, tokens, write));
            until(&checks, Some(queued)).await;
        }
        hold.commit().await.unwrap();
        let mut usages: HashMap<&str, Option<Usage>> = rows
            .iter()
            .map(|&(subject, used)| {
                let window = Window { start: 0, used };
                let usage = Usage {
                    minute: window,
                    hour: window,
                    write: Window::default(),
                    granted: true,
                    auth_changes: None,
                };
                (subject, Some(usage))
            })
            .collect();
        for (&(subject, tokens, write), check) in asks.iter().zip(started) {
            let usage = usages.entry(subject).or_default();
            let expected = decide(*usage, 0, Cost { tokens, write }, &QUOTA);
            *usage = Some(expected);
            let checked = check.await.unwrap().unwrap();
            assert_eq!(checked.auth_changes, Some(0), "{subject}");
            assert_eq!(
                Usage {
                    auth_changes: None,
                    ..checked
                },
                expected,
                "{subject}"
            );
        }
        assert_eq!(
            usages["c"].map(|u| u.minute.used),
            Some(20),
            "c's third is refused"
        );
        until(&checks, None).await;
        pool.close().await;
        database.remove().await;
    }

    /// A leader whose request goes away mid-statement hands the lead on to the checks that
    /// queued behind it, one after another, and the last one leaves the lead free; none is
    /// left waiting for a leader that is gone.
    #[tokio::test]
    async fn a_leader_that_goes_away_hands_the_lead_on() {
        let (checks, hold, [first, second, third]) =
            one_leading_two_queued(Duration::from_secs(60)).await;
        stop(first).await;
        // The second leads now, with the third behind it: the queue was taken.
        until(&checks, Some(0)).await;
        stop(second).await;
        assert!(!third.is_finished());
        stop(third).await;
        until(&checks, None).await;
        hold.abort();
    }

    /// A check dropped just as the lead reaches it (its leader and it go away together) hands
    /// the lead on rather than losing it with the message.
    #[tokio::test]
    async fn a_check_that_goes_away_as_the_lead_reaches_it_hands_it_on() {
        let (checks, hold, [first, second, third]) =
            one_leading_two_queued(Duration::from_secs(60)).await;
        first.abort();
        second.abort();
        assert!(first.await.unwrap_err().is_cancelled());
        assert!(second.await.unwrap_err().is_cancelled());
        until(&checks, Some(0)).await;
        assert!(!third.is_finished());
        stop(third).await;
        until(&checks, None).await;
        hold.abort();
    }

    /// A statement that fails fails its whole group, at once and not by timing out, and the
    /// next group's leader fails the same way; then the lead is free.
    #[tokio::test]
    async fn a_failing_statement_fails_its_group_and_frees_the_lead() {
        let (checks, hold, queued) = one_leading_two_queued(Duration::from_secs(1)).await;
        for check in queued {
            let answer = tokio::time::timeout(Duration::from_secs(10), check)
                .await
                .expect("answered before the check's own 60 s timeout")
                .unwrap();
            assert!(answer.is_err(), "{answer:?}");
        }
        until(&checks, None).await;
        hold.abort();
    }
}
