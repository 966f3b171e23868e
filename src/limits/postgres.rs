//! The PostgreSQL limiter: one statement per check at most, on an UNLOGGED table (counters
//! need not survive a crash). The row lock of the upsert serialises a key's concurrent checks
//! across replicas; every expression reads the old row `r`, so the rule is exactly
//! [`super::decide`].
//!
//! Every request of a key charges that key's one row, so at a few thousand requests a second
//! a key's checks queued on its row lock, and the limiter asked for about half of what
//! PostgreSQL gave (bench/README.md, Updates, Session 30). So one replica's concurrent checks
//! of a key are coalesced: the first runs its check as the group's leader, on its request's
//! connection; those that arrive meanwhile wait, and the first of them then leads them all in
//! one statement charging their sum. If the sum fits, each request is granted as if the group
//! had been checked one by one in arrival order (every prefix of a sum that fits fits too), and
//! its windows are the group's before plus the costs up to its own. If it doesn't fit, nothing
//! was charged and each is checked alone, in order: near a limit a group costs one statement
//! more, and the rule stays [`super::decide`]'s.

use std::{
    collections::HashMap,
    mem,
    sync::{LazyLock, Mutex, MutexGuard, PoisonError},
    time::Duration,
};

use sqlx::Row;
use tokio::sync::oneshot;

use super::{decide, Cost, Quota, Usage, Window, HOUR_MS, MINUTE_MS};
use crate::{
    error::{Error, Result},
    store::postgres::conn::{self, Connections},
};

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

/// One request's check.
#[derive(Clone, Copy)]
struct Ask {
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

/// The checks of this replica, coalesced per key.
pub struct Checks {
    conns: Connections,
    /// Per key with a leader at work: the checks that arrived since its group was formed.
    waiting: Mutex<HashMap<String, Vec<Waiting>>>,
}

impl Checks {
    pub fn new(conns: Connections) -> Self {
        Checks {
            conns,
            waiting: Mutex::default(),
        }
    }

    /// The map holds only whole pushes and takes, so a panic elsewhere leaves it sound.
    fn waiting(&self) -> MutexGuard<'_, HashMap<String, Vec<Waiting>>> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Checks and charges `cost` for `subject` at `now`, with the rest of this replica's
    /// concurrent checks of `subject`. `timeout` bounds the wait for a leader and the
    /// statement, each.
    pub async fn check(
        &self,
        subject: &str,
        now: i64,
        cost: Cost,
        quota: &Quota,
        timeout: Duration,
    ) -> Result<Usage> {
        let ask = Ask {
            now,
            cost,
            quota: *quota,
        };
        let (answer, decided) = oneshot::channel();
        let led = {
            let mut waiting = self.waiting();
            match waiting.get_mut(subject) {
                Some(queue) => {
                    queue.push(Waiting { ask, answer });
                    None
                }
                None => {
                    waiting.insert(subject.to_owned(), Vec::new());
                    Some(Vec::new())
                }
            }
        };
        let followers = match led {
            Some(followers) => followers,
            None => {
                let mut queued = Queued {
                    checks: self,
                    subject,
                    decided,
                };
                match tokio::time::timeout(timeout, &mut queued.decided).await {
                    Ok(Ok(Answer::Decided(usage))) => return usage,
                    Ok(Ok(Answer::Lead(followers))) => followers,
                    Ok(Err(_)) | Err(_) => return Err(Error::Unavailable),
                }
            }
        };
        let mut leading = Leading {
            checks: self,
            subject,
            // A check that gave up waiting is not charged.
            followers: followers
                .into_iter()
                .filter(|f| !f.answer.is_closed())
                .collect(),
            done: false,
        };
        let decided = tokio::time::timeout(timeout, self.decide(subject, ask, &leading.followers))
            .await
            .map_err(|_| {
                // The statement was abandoned midway: check its connection before reuse.
                conn::note_abandoned();
                Error::Unavailable
            })
            .and_then(|decided| decided)
            .inspect_err(conn::note_error);
        // The key goes on to the next group before this one's answers go out.
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
    async fn decide(&self, subject: &str, own: Ask, followers: &[Waiting]) -> Result<Vec<Usage>> {
        let asks: Vec<Ask> = std::iter::once(own)
            .chain(followers.iter().map(|f| f.ask))
            .collect();
        if asks.len() > 1 && asks.iter().all(|a| a.quota == own.quota) {
            let now = asks.iter().map(|a| a.now).max().unwrap_or(own.now);
            let tokens: u64 = asks.iter().map(|a| u64::from(a.cost.tokens)).sum();
            let write_tokens: u64 = asks.iter().map(|a| u64::from(a.cost.write_tokens())).sum();
            let group = charge(&self.conns, subject, now, tokens, write_tokens, &own.quota).await?;
            if group.granted {
                return Ok(shares(group, now, tokens, write_tokens, &asks));
            }
        }
        let mut usages = Vec::with_capacity(asks.len());
        for ask in &asks {
            let tokens = u64::from(ask.cost.tokens);
            let write_tokens = u64::from(ask.cost.write_tokens());
            usages.push(
                charge(
                    &self.conns,
                    subject,
                    ask.now,
                    tokens,
                    write_tokens,
                    &ask.quota,
                )
                .await?,
            );
        }
        Ok(usages)
    }
}

/// Each request's windows after a granted group charge: the group's before plus the costs up
/// to its own, in arrival order, as [`decide`] would have left them one by one.
fn shares(group: Usage, now: i64, tokens: u64, write_tokens: u64, asks: &[Ask]) -> Vec<Usage> {
    let before = |window: Window, charged: u64| Window {
        used: window
            .used
            .saturating_sub(u32::try_from(charged).unwrap_or(u32::MAX)),
        ..window
    };
    let mut usage = Usage {
        minute: before(group.minute, tokens),
        hour: before(group.hour, tokens),
        write: before(group.write, write_tokens),
        granted: false,
    };
    asks.iter()
        .map(|ask| {
            usage = decide(Some(usage), now, ask.cost, &ask.quota);
            usage
        })
        .collect()
}

/// The leader of a key's group while it decides. Dropped, it hands the key on: to the first
/// of its followers if it was dropped before deciding (its request went away; they are checked
/// again, so an abandoned statement may have charged them once already), else to the first
/// check that arrived meanwhile; with none, the key has no leader any more.
struct Leading<'a> {
    checks: &'a Checks,
    subject: &'a str,
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
                match waiting.get_mut(self.subject) {
                    Some(queue) if !queue.is_empty() => next = mem::take(queue),
                    _ => {
                        waiting.remove(self.subject);
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
/// waiting) just as the key was handed to it, it hands the key on: a lead must never be lost,
/// or the key's checks would queue behind no one.
struct Queued<'a> {
    checks: &'a Checks,
    subject: &'a str,
    decided: oneshot::Receiver<Answer>,
}

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        self.decided.close();
        if let Ok(Answer::Lead(followers)) = self.decided.try_recv() {
            drop(Leading {
                checks: self.checks,
                subject: self.subject,
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
        .bind(i64::try_from(tokens).unwrap_or(i64::MAX))
        .bind(i64::try_from(write_tokens).unwrap_or(i64::MAX))
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
                assert_eq!(
                    shares(group, now, 7, 3, &asks),
                    one_by_one,
                    "{before:?} at {now}"
                );
            }
        }
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

    fn start(checks: &Arc<Checks>) -> tokio::task::JoinHandle<Result<Usage>> {
        let checks = checks.clone();
        tokio::spawn(async move {
            let cost = Cost {
                tokens: 1,
                write: false,
            };
            checks
                .check("key", 0, cost, &QUOTA, Duration::from_secs(60))
                .await
        })
    }

    /// Waits (up to 10 s) until the key's queue holds `queued` checks, or, with `None`, until
    /// the key has no leader.
    async fn until(checks: &Checks, queued: Option<usize>) {
        for _ in 0..1_000 {
            if checks.waiting().get("key").map(Vec::len) == queued {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the key's queue never came to {queued:?}");
    }

    /// A key's leader (the first check) and two checks queued behind it, all waiting on the
    /// silent server for up to `wait` a statement.
    async fn one_leading_two_queued(
        wait: Duration,
    ) -> (
        Arc<Checks>,
        tokio::task::JoinHandle<()>,
        [tokio::task::JoinHandle<Result<Usage>>; 3],
    ) {
        let (checks, hold) = silent_checks(wait).await;
        let first = start(&checks);
        until(&checks, Some(0)).await;
        let second = start(&checks);
        let third = start(&checks);
        until(&checks, Some(2)).await;
        (checks, hold, [first, second, third])
    }

    async fn stop(check: tokio::task::JoinHandle<Result<Usage>>) {
        check.abort();
        assert!(check.await.unwrap_err().is_cancelled());
    }

    /// A leader whose request goes away mid-statement hands its key on to the checks that
    /// queued behind it, one after another, and the last one leaves the key free; none is
    /// left waiting for a leader that is gone.
    #[tokio::test]
    async fn a_leader_that_goes_away_hands_its_key_on() {
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

    /// A check dropped just as the key reaches it (its leader and it go away together) hands
    /// the key on rather than losing it with the message.
    #[tokio::test]
    async fn a_check_that_goes_away_as_the_key_reaches_it_hands_it_on() {
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
    /// next group's leader fails the same way; then the key is free.
    #[tokio::test]
    async fn a_failing_statement_fails_its_group_and_frees_the_key() {
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
