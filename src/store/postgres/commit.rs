//! Group commit for PostgreSQL's single creates without an `Idempotency-Key`, and for
//! single-pin updates ([`super::group_commit`]).
//!
//! One connection of its own, outside the request pool, inserts every create waiting in one
//! statement and one transaction: a group of N single creates costs PostgreSQL one statement
//! and one WAL flush instead of N of each, and each request one round trip fewer on its own
//! connection. Keyed creates keep their one statement on the request's connection, where the
//! claim and the insert are made together, and so do batches, which already share one. Each
//! replica has its own loop.

use std::{collections::HashMap, sync::Arc};

use sqlx::{postgres::PgConnectOptions, Connection, PgConnection};
use tokio::sync::mpsc;

use super::{events::append, insert::insert_rows, WAIT_FOR_CONNECTION};
use crate::store::{
    events::NewEvent,
    group_commit::{
        answer, first_of_each_pin, same_failure, standing_updates, Committer, Job, Outcome, Update,
        Write, MAX_GROUP,
    },
    pins::{keep_above, prune_above},
    Pin,
};
use crate::{error::Result, Error};

/// Starts the loop; it connects when the first create comes, and again after a failure
/// (waiting at most as long as a request waits for the pool).
///
/// The loop's connection plans with `enable_seqscan = off`: each of its statements finds its
/// rows by key (pins by id, past versions by pin), and none is ever better served by reading
/// a whole table. Without it, a group's update was planned on a store whose tables had no
/// statistics yet (a new store, or a burst of writes before autovacuum's analyze) as hash
/// joins over scans of all of `pins` and all of `pin_versions`, dead rows included; the
/// connection keeps such a plan once it is generic, while the tables grow. After a minute of
/// updates of 200 pins the prune of past versions read 2,900 rows a group for ten it needed,
/// and PATCH/s had fallen by a third.
///
/// It also always uses a statement's generic plan (`plan_cache_mode`): planned for arrays
/// of unknown length, and so for any group. By default PostgreSQL plans a statement anew
/// for each run while that looks cheaper, which for small groups (a quiet store, a lone
/// writer) it always did: ~0.6 ms of planning for each group's update of a pin or two.
pub(super) fn start(options: PgConnectOptions) -> Result<Committer> {
    let options = options.options([
        ("enable_seqscan", "off"),
        ("plan_cache_mode", "force_generic_plan"),
    ]);
    Committer::start("corkboard-commit", move |queue| run(options, queue))
}

async fn run(options: PgConnectOptions, mut queue: mpsc::Receiver<Job>) {
    let mut conn: Option<PgConnection> = None;
    let mut group = Vec::with_capacity(MAX_GROUP);
    while queue.recv_many(&mut group, MAX_GROUP).await > 0 {
        let mut live = match conn.take() {
            Some(live) => live,
            None => {
                match tokio::time::timeout(
                    WAIT_FOR_CONNECTION,
                    PgConnection::connect_with(&options),
                )
                .await
                {
                    Ok(Ok(live)) => live,
                    Ok(Err(e)) => {
                        answer(&mut group, Err(e.into()));
                        continue;
                    }
                    Err(_) => {
                        answer(&mut group, Err(Error::Unavailable));
                        continue;
                    }
                }
            }
        };
        let (results, healthy) = commit(&mut live, &group).await;
        answer(&mut group, Ok(results));
        if healthy {
            conn = Some(live);
        } else {
            let _ = live.close().await;
        }
    }
}

/// Writes the group in one transaction: one statement for the new pins, one for the
/// updates ([`UPDATE_PINS`]), one for the events. Jobs here carry
/// no idempotency claim (keyed creates don't come to this loop; see `PgStore::insert_pins`).
/// When PostgreSQL refuses it (a constraint, a taken key), each write is retried on its
/// own, so only the refused one fails. Returns one result per job, and false when the
/// connection can't be trusted any more (a write that met that is answered 503: its
/// outcome is unknown, as when any connection breaks mid-statement).
async fn commit(conn: &mut PgConnection, group: &[Job]) -> (Vec<Result<Outcome>>, bool) {
    let error = match store(conn, group).await {
        Ok(outcomes) => return (outcomes.into_iter().map(Ok).collect(), true),
        // A lone write refused (a taken key) is answered with its own error.
        Err(e) if refused(&e) && group.len() == 1 => return (vec![Err(e.into())], true),
        Err(e) if refused(&e) => e,
        Err(e) => {
            let healthy = refused(&e);
            let failure = Arc::new(Error::from(e));
            return (
                group.iter().map(|_| Err(same_failure(&failure))).collect(),
                healthy,
            );
        }
    };
    tracing::debug!(%error, writes = group.len(), "a group write was refused; retrying each write");
    let mut results = Vec::with_capacity(group.len());
    // Alone, a second update of a pin finds it moved on by the first.
    for job in group {
        match store(conn, std::slice::from_ref(job)).await {
            Ok(outcome) => results.extend(outcome.into_iter().map(Ok)),
            Err(e) if refused(&e) => results.push(Err(e.into())),
            Err(e) => {
                let failure = Arc::new(Error::from(e));
                results.extend((results.len()..group.len()).map(|_| Err(same_failure(&failure))));
                return (results, false);
            }
        }
    }
    (results, true)
}

/// A group's updates from arrays, in one statement: each pin still at the version read is
/// written, its replaced state saved as a past version (unless none are kept) and its
/// versions beyond the retention pruned; returns each updated pin with the boards it is
/// placed on. The replaced state comes from a second read of the row (`o`), which sees it as
/// it was before the statement. A pin another transaction changes meanwhile is read again
/// by the update once that one commits, and left alone when it moved on, so what is saved is
/// always the state replaced. Rows are locked by the update itself, in the arrays' order,
/// which the caller sorts by id, as every write locks pins (a deadlock PostgreSQL breaks
/// would only send the group's writes one by one). `(p.workspace_id = u.ws) IS TRUE` keeps
/// the planner on the primary key (see [`super::GET_PINS`]).
pub(crate) const UPDATE_PINS: &str = "WITH u AS (SELECT * FROM UNNEST($1::text[], $2::text[], $3::int8[], \
     $4::text[], $5::text[], $6::text[], $7::bool[], $8::text[], $9::text[], $10::text[], $11::int8[], \
     $12::int8[], $13::bool[], $14::bool[], $15::bool[], $16::text[], $17::int8[], $18::int8[], \
     $19::int8[], $20::int8[], $21::text[], $22::text[], $23::int8[], $24::int8[]) \
     AS u (ws, id, expected, pin_type, pin_config, pin_layout, is_public, title, tags, provenance, \
     version, updated_at, allow_edit, require_sign_in, allow_comments, key, keep_above, \
     expected_every_secs, last_pushed_at, stale_due_at, status_rules, status, status_due, prune_above)), \
     changed AS (UPDATE pins p SET pin_type = u.pin_type, pin_config = u.pin_config, \
     pin_layout = u.pin_layout, is_public = u.is_public, title = u.title, \
     tags = ARRAY(SELECT jsonb_array_elements_text(u.tags::jsonb)), provenance = u.provenance, \
     version = u.version, updated_at = u.updated_at, allow_edit = u.allow_edit, \
     require_sign_in = u.require_sign_in, allow_comments = u.allow_comments, key = u.key, \
     expected_every_secs = u.expected_every_secs, last_pushed_at = u.last_pushed_at, \
     stale_due_at = u.stale_due_at, status_rules = u.status_rules, status = u.status, \
     status_due = COALESCE(p.status_due, u.status_due) \
     FROM u, pins o WHERE p.id = u.id AND (p.workspace_id = u.ws) IS TRUE AND p.version = u.expected \
     AND o.id = p.id \
     RETURNING o.id, o.version, o.pin_type, o.pin_config, o.pin_layout, o.is_public, o.allow_edit, \
     o.require_sign_in, o.allow_comments, o.title, o.tags, o.provenance, o.created_at, o.updated_at, \
     o.key, o.expected_every_secs, o.last_pushed_at, o.status_rules, o.status, u.keep_above, \
     u.prune_above), \
     saved AS (INSERT INTO pin_versions (pin_id, version, pin_type, pin_config, pin_layout, is_public, \
     allow_edit, require_sign_in, allow_comments, title, tags, provenance, created_at, updated_at, key, \
     expected_every_secs, last_pushed_at, status_rules, status) \
     SELECT id, version, pin_type, pin_config, pin_layout, is_public, allow_edit, require_sign_in, \
     allow_comments, title, tags, provenance, created_at, updated_at, key, expected_every_secs, \
     last_pushed_at, status_rules, status FROM changed WHERE version > keep_above), \
     pruned AS (DELETE FROM pin_versions v USING changed c WHERE v.pin_id = c.id \
     AND v.version <= c.keep_above AND v.version > c.prune_above) \
     SELECT c.id, COALESCE(array_agg(pl.pinboard_id) FILTER (WHERE pl.pinboard_id IS NOT NULL), '{}') \
     FROM changed c LEFT JOIN placements pl ON pl.pin_id = c.id GROUP BY c.id";

/// Stores the jobs' pins, updates and events in one transaction; each job's outcome.
async fn store(conn: &mut PgConnection, jobs: &[Job]) -> Result<Vec<Outcome>, sqlx::Error> {
    let standing = first_of_each_pin(jobs);
    let rows: Vec<(&str, &Pin)> = jobs
        .iter()
        .filter_map(|job| job.creates().map(|(pins, _)| (job, pins)))
        .flat_map(|(job, pins)| pins.iter().map(|pin| (job.ws.as_str(), pin)))
        .collect();
    let updates = standing_updates(jobs, &standing);
    let mut tx = conn.begin().await?;
    if !rows.is_empty() {
        insert_rows(&mut tx, &rows, None).await?;
    }
    let boards = update_pins(&mut tx, updates).await?;
    let mut outcomes = Vec::with_capacity(jobs.len());
    let mut events: Vec<NewEvent> = Vec::new();
    for (job, stands) in jobs.iter().zip(standing) {
        match &job.write {
            Write::Create { .. } => {
                events.extend(job.events.iter().cloned());
                outcomes.push(Outcome::Stored);
            }
            Write::Update(update) => match boards.get(&update.new.id) {
                Some(boards) if stands => {
                    events.extend(job.events.iter().cloned().map(|mut event| {
                        event.boards.clone_from(boards);
                        event
                    }));
                    outcomes.push(Outcome::Stored);
                }
                _ => outcomes.push(Outcome::Moved),
            },
        }
    }
    append(&mut tx, &events).await?;
    tx.commit().await?;
    Ok(outcomes)
}

/// Writes the `updates` whose pins are still at the versions read ([`UPDATE_PINS`]), and
/// returns the boards of each pin it updated, by id.
async fn update_pins(
    tx: &mut PgConnection,
    mut updates: Vec<(&str, &Update)>,
) -> Result<HashMap<String, Vec<String>>, sqlx::Error> {
    if updates.is_empty() {
        return Ok(HashMap::new());
    }
    updates.sort_unstable_by(|(_, a), (_, b)| a.old.id.cmp(&b.old.id));
    let (ws, current): (Vec<&str>, Vec<&Update>) = updates.into_iter().unzip();
    let text = |f: fn(&Pin) -> &str| current.iter().map(|u| f(&u.new)).collect::<Vec<_>>();
    let maybe = |f: fn(&Pin) -> Option<&str>| current.iter().map(|u| f(&u.new)).collect::<Vec<_>>();
    let flag = |f: fn(&Pin) -> bool| current.iter().map(|u| f(&u.new)).collect::<Vec<_>>();
    let number = |f: fn(&Update) -> i64| current.iter().map(|u| f(u)).collect::<Vec<_>>();
    let tags: Vec<String> = current
        .iter()
        .map(|u| serde_json::to_string(&u.new.tags).unwrap_or_else(|_| "[]".into()))
        .collect();
    let rows: Vec<(String, Vec<String>)> = sqlx::query_as(UPDATE_PINS)
        .bind(ws)
        .bind(text(|p| &p.id))
        .bind(number(|u| u.old.version))
        .bind(text(|p| &p.pin_type))
        .bind(text(|p| &p.pin_config))
        .bind(text(|p| &p.pin_layout))
        .bind(flag(|p| p.is_public))
        .bind(maybe(|p| p.title.as_deref()))
        .bind(tags)
        .bind(maybe(|p| p.provenance.as_deref()))
        .bind(number(|u| u.new.version))
        .bind(number(|u| u.new.updated_at))
        .bind(flag(|p| p.allow_edit))
        .bind(flag(|p| p.require_sign_in))
        .bind(flag(|p| p.allow_comments))
        .bind(maybe(|p| p.key.as_deref()))
        .bind(number(|u| keep_above(u.new.version, u.retention)))
        .bind(
            current
                .iter()
                .map(|u| u.new.expected_every_secs)
                .collect::<Vec<_>>(),
        )
        .bind(number(|u| u.new.last_pushed_at))
        .bind(
            current
                .iter()
                .map(|u| u.new.stale_due_at())
                .collect::<Vec<_>>(),
        )
        .bind(maybe(|p| p.status_rules.as_deref()))
        .bind(maybe(|p| p.status.as_deref()))
        .bind(
            current
                .iter()
                .map(|u| u.new.status_due())
                .collect::<Vec<_>>(),
        )
        .bind(number(|u| prune_above(u.new.version, u.retention)))
        .fetch_all(&mut *tx)
        .await?;
    Ok(rows.into_iter().collect())
}

/// PostgreSQL refused the statement itself (a constraint, a trigger): the connection is fine,
/// and the statement changed nothing. Connection-class (08) and shutdown (57) errors are not.
fn refused(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Database(db) => !db
            .code()
            .is_some_and(|code| code.starts_with("08") || code.starts_with("57")),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{
        group_commit::tests::{
            check_update_outcomes, create, job, pin, stored_unless_poisoned, update, update_groups,
            UPDATE_STATE,
        },
        keys::KeyStore,
        postgres::PgStore,
        sql::Backend,
    };

    /// A server that accepts the connection and never answers: the loop gives up connecting
    /// after [`WAIT_FOR_CONNECTION`], and the create gets a 503 rather than waiting forever.
    #[tokio::test]
    async fn a_server_that_never_answers_is_a_503_not_a_hang() {
        let (options, hold) = crate::store::postgres::conn::silent_server().await;
        let committer = start(options).unwrap();
        let started = std::time::Instant::now();
        let result = committer
            .insert("ws", &[pin("waits")], None, Vec::new())
            .await;
        assert!(matches!(result, Err(Error::Unavailable)), "{result:?}");
        assert!(started.elapsed() < WAIT_FOR_CONNECTION * 2);
        hold.abort();
    }

    /// Each kind of group `commit` writes, with a create PostgreSQL refuses (a trigger) among
    /// others (then updates, as the SQLite loop's test has them), on a database of its own (`TEST_PG_URL`, as the API tests): only that create
    /// fails, the others are stored, and the connection stays usable. (The API test
    /// `pins::a_create_the_database_refuses_fails_alone` meets a shared group only when the
    /// timing makes one.)
    #[tokio::test]
    async fn a_refused_create_fails_alone_in_every_kind_of_group() {
        let Some(opened) = Opened::new("commit").await else {
            return;
        };
        let (ws, mut conn) = (opened.ws.clone(), opened.connect().await);
        sqlx::raw_sql(
            "CREATE FUNCTION poison() RETURNS trigger LANGUAGE plpgsql AS $$ \
             BEGIN IF NEW.title = 'poison' THEN RAISE EXCEPTION 'poisoned'; END IF; RETURN NEW; END $$; \
             CREATE TRIGGER poison BEFORE INSERT ON pins FOR EACH ROW EXECUTE FUNCTION poison();",
        )
        .execute(&mut conn)
        .await
        .unwrap();
        let groups = [
            vec![job(&ws, &["a"], None), job(&ws, &["b"], None)],
            vec![
                job(&ws, &["c"], None),
                job(&ws, &["poison"], None),
                job(&ws, &["d", "e"], None),
                job(&ws, &["poison", "f"], None),
            ],
            vec![job(&ws, &["poison"], None)],
            vec![job(&ws, &["g"], None)],
        ];
        let mut stored = 0;
        for group in &groups {
            let (results, healthy) = commit(&mut conn, group).await;
            assert!(healthy, "a refused statement leaves the connection usable");
            stored += stored_unless_poisoned(group, &results);
        }
        let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM pins")
            .fetch_one(&mut conn)
            .await
            .unwrap();
        assert_eq!(rows, i64::try_from(stored).unwrap());
        sqlx::raw_sql("DROP TRIGGER poison ON pins; DELETE FROM events; DELETE FROM pins")
            .execute(&mut conn)
            .await
            .unwrap();

        // Updates: each way one ends, met once in a group ([`update_groups`]); only the
        // stored ones changed the store, with one past version and one event each.
        let [setup, group] = update_groups(&ws);
        let (created, _) = commit(&mut conn, &setup).await;
        assert!(matches!(created[..], [Ok(Outcome::Stored)]));
        let (results, healthy) = commit(&mut conn, &group).await;
        assert!(healthy);
        check_update_outcomes(&results);
        let pins: Vec<(String, i64)> = sqlx::query_as(UPDATE_STATE[0])
            .fetch_all(&mut conn)
            .await
            .unwrap();
        assert_eq!(
            pins,
            owned(&[("a2", 2), ("b", 1), ("c", 1), ("d", 1), ("e", 1)])
        );
        for (sql, count) in UPDATE_STATE[1..].iter().zip([1, 1]) {
            let n: i64 = sqlx::query_scalar(sql).fetch_one(&mut conn).await.unwrap();
            assert_eq!(n, count, "{sql}");
        }
        opened.remove([conn]).await;
    }

    /// A group's update meets a pin another transaction holds: it waits for that one, then
    /// writes the pin only if it is still at the version read, saving as the past version the
    /// state it replaced. One holder only locks its pin (the update stands and saves the
    /// original); the other moves its pin on (the update is moved: nothing written, nothing
    /// saved). [`UPDATE_PINS`] takes its locks itself, with no `SELECT ... FOR UPDATE` first.
    #[tokio::test]
    async fn an_update_waits_for_another_writer_and_saves_what_it_replaced() {
        let Some(opened) = Opened::new("commit_race").await else {
            return;
        };
        let ws = opened.ws.clone();
        let (mut conn, mut other) = (opened.connect().await, opened.connect().await);
        let (locked, moved) = (pin("locked"), pin("moved"));
        let (created, _) = commit(&mut conn, &[create(&ws, &[&locked, &moved])]).await;
        assert!(matches!(created[..], [Ok(Outcome::Stored)]));
        for (held, moves_on, outcome) in [
            (&locked, false, Outcome::Stored),
            (&moved, true, Outcome::Moved),
        ] {
            let mut tx = other.begin().await.unwrap();
            sqlx::query("SELECT 1 FROM pins WHERE id = $1 FOR UPDATE")
                .bind(&held.id)
                .execute(&mut *tx)
                .await
                .unwrap();
            if moves_on {
                sqlx::query(
                    "UPDATE pins SET version = version + 1, title = 'by another' WHERE id = $1",
                )
                .bind(&held.id)
                .execute(&mut *tx)
                .await
                .unwrap();
            }
            let group = vec![update(&ws, held, |p| p.title = Some("grouped".into()))];
            let writing = tokio::spawn(async move {
                let (results, healthy) = commit(&mut conn, &group).await;
                (results, healthy, conn)
            });
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            assert!(!writing.is_finished(), "waits for the holder");
            tx.commit().await.unwrap();
            let (results, healthy, back) = writing.await.unwrap();
            conn = back;
            assert!(healthy);
            assert!(
                matches!(&results[..], [Ok(o)] if *o == outcome),
                "{results:?}"
            );
        }
        let pins: Vec<(String, i64)> =
            sqlx::query_as("SELECT title, version FROM pins ORDER BY title")
                .fetch_all(&mut conn)
                .await
                .unwrap();
        assert_eq!(pins, owned(&[("by another", 2), ("grouped", 2)]));
        let saved: Vec<(String, i64, String)> =
            sqlx::query_as("SELECT pin_id, version, title FROM pin_versions")
                .fetch_all(&mut conn)
                .await
                .unwrap();
        assert_eq!(saved, vec![(locked.id.clone(), 1, "locked".to_owned())]);
        opened.remove([conn, other]).await;
    }

    /// A database of its own (`TEST_PG_URL`, as the API tests) with the store's schema and
    /// its default workspace; `None` where [`TestDatabase::create`] leaves the test out.
    ///
    /// [`TestDatabase::create`]: crate::store::postgres::conn::TestDatabase::create
    struct Opened {
        database: crate::store::postgres::conn::TestDatabase,
        store: PgStore,
        ws: String,
    }

    impl Opened {
        async fn new(prefix: &str) -> Option<Opened> {
            let database = crate::store::postgres::conn::TestDatabase::create(prefix).await?;
            let store = PgStore::open(
                &database.url,
                2,
                crate::events::Records::shared("http://test"),
            )
            .await
            .unwrap();
            let ws = store.ensure_workspace("default").await.unwrap();
            Some(Opened {
                database,
                store,
                ws,
            })
        }

        /// A connection of the test's own, outside the store's pool.
        async fn connect(&self) -> PgConnection {
            PgConnection::connect(&self.database.url).await.unwrap()
        }

        /// Closes `conns` and the store, and drops the database.
        async fn remove<const N: usize>(self, conns: [PgConnection; N]) {
            for conn in conns {
                let _ = conn.close().await;
            }
            self.store.close().await;
            drop(self.store);
            self.database.remove().await;
        }
    }

    /// `(title, version)` rows as the queries return them.
    fn owned(rows: &[(&str, i64)]) -> Vec<(String, i64)> {
        rows.iter().map(|(t, v)| ((*t).into(), *v)).collect()
    }
}
