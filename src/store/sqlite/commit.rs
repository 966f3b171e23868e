//! Group commit for SQLite creates and updates ([`super::group_commit`]). SQLite has one writer and
//! `synchronous=FULL` makes every commit wait for the disk, so one commit per request caps
//! creates at the disk's sync rate.

use std::{
    borrow::Cow,
    time::{Duration, Instant},
};

use sqlx::{Connection, SqliteConnection, SqlitePool};
use tokio::sync::mpsc;

use super::SqliteStore;
use crate::error::Result;
use crate::store::{
    events::Commits,
    group_commit::{answer, first_of_each_pin, Committer, Job, Outcome, Write, MAX_GROUP},
    pins::{bind_new_pin, store_update, Grouped, INSERT_PIN},
    sql::Backend,
    Idempotent, Pin,
};

/// How long the commit loop keeps the writer connection while writes keep coming. Giving it
/// back costs a round trip to SQLite's thread (sqlx's release ping), and lets the other
/// writes (batches, deletes, keys) take their turn.
const HOLD_FOR: Duration = Duration::from_millis(10);

/// Starts the loop that commits `writer`'s grouped writes.
pub(super) fn start(writer: SqlitePool, commits: Commits) -> Result<Committer> {
    Committer::start("corkboard-commit", move |queue| run(writer, commits, queue))
}

async fn run(writer: SqlitePool, commits: Commits, mut queue: mpsc::Receiver<Job>) {
    let mut group = Vec::with_capacity(MAX_GROUP);
    while queue.recv_many(&mut group, MAX_GROUP).await > 0 {
        let held_since = Instant::now();
        let mut conn = match writer.acquire().await {
            Ok(conn) => conn,
            Err(e) => {
                answer(&mut group, Err(e.into()));
                continue;
            }
        };
        loop {
            let done = commit(&mut conn, &group).await;
            let committed = done.is_ok();
            if let Ok(results) = &done {
                tell(&commits, &group, results);
            }
            answer(&mut group, done);
            if !committed || held_since.elapsed() >= HOLD_FOR {
                break;
            }
            while group.len() < MAX_GROUP {
                match queue.try_recv() {
                    Ok(job) => group.push(job),
                    Err(_) => break,
                }
            }
            if group.is_empty() {
                break;
            }
        }
    }
}

/// Tells the streams which workspaces have new events (each once).
fn tell(commits: &Commits, group: &[Job], results: &[Result<Outcome>]) {
    let mut told: Vec<&str> = Vec::new();
    for (job, result) in group.iter().zip(results) {
        if matches!(result, Ok(Outcome::Stored)) && !told.contains(&job.ws.as_str()) {
            commits.send(Some(&job.ws));
            told.push(&job.ws);
        }
    }
}

/// One commit for the whole group, with the events of every write it stores: creates
/// without an `Idempotency-Key` share one INSERT per [`INSERT_CHUNK`] rows, the others get a
/// SAVEPOINT each. When a shared INSERT fails, its creates are retried one SAVEPOINT each,
/// so only the failing one fails. Updates are a compare-and-set each ([`store_update`]),
/// which SQLite undoes alone when it is refused (a taken key): the transaction goes on.
async fn commit(conn: &mut SqliteConnection, group: &[Job]) -> Result<Vec<Result<Outcome>>> {
    let plain: Vec<(&str, &Pin)> = group
        .iter()
        .filter_map(|job| {
            job.creates()
                .filter(|(_, idem)| idem.is_none())
                .map(|(pins, _)| (job, pins))
        })
        .flat_map(|(job, pins)| pins.iter().map(|pin| (job.ws.as_str(), pin)))
        .collect();
    let mut tx = Connection::begin(conn).await?;
    // Inside the transaction, a failed shared INSERT undoes only itself (or its SAVEPOINT).
    let shared = !plain.is_empty() && insert_together(&mut tx, &plain).await?;
    let standing = first_of_each_pin(group);
    let mut results = Vec::with_capacity(group.len());
    let mut events = Vec::new();
    for (job, stands) in group.iter().zip(standing) {
        // The boards an updated pin is placed on, for its event.
        let mut boards = Vec::new();
        let result = match &job.write {
            Write::Create { idem: None, .. } if shared => Ok(Outcome::Stored),
            Write::Create { pins, idem } => {
                let mut savepoint = Connection::begin(&mut *tx).await?;
                match insert_in(&mut savepoint, &job.ws, pins, idem.as_ref()).await {
                    Ok(Outcome::Stored) => {
                        savepoint.commit().await?;
                        Ok(Outcome::Stored)
                    }
                    other => {
                        savepoint.rollback().await?;
                        other
                    }
                }
            }
            Write::Update(_) if !stands => Ok(Outcome::Moved),
            Write::Update(update) => {
                match store_update::<SqliteStore>(&mut tx, &job.ws, update).await {
                    Ok(Grouped::Moved) => Ok(Outcome::Moved),
                    Ok(Grouped::Stored(placed_on)) => {
                        boards = placed_on;
                        Ok(Outcome::Stored)
                    }
                    Err(e) if refused(&e) => Err(e.into()),
                    Err(e) => return Err(e.into()),
                }
            }
        };
        if matches!(result, Ok(Outcome::Stored)) {
            events.extend(job.events.iter().cloned().map(|mut event| {
                if let Write::Update(_) = job.write {
                    event.boards.clone_from(&boards);
                }
                event
            }));
        }
        results.push(result);
    }
    SqliteStore::append_events(&mut tx, &events).await?;
    tx.commit().await?;
    Ok(results)
}

/// SQLite refused the statement itself (a constraint): it undid that statement alone, and
/// the transaction goes on.
fn refused(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(db) if db.code().is_some_and(|code| {
        // SQLITE_CONSTRAINT and its extended codes (`19 | n << 8`).
        code.parse::<i32>().is_ok_and(|code| code & 0xff == 19)
    }))
}

/// Writes all `rows` or none: one statement when they fit one, else a transaction (a
/// SAVEPOINT when `conn` is already in one). False when an INSERT failed (nothing was
/// written).
async fn insert_together(conn: &mut SqliteConnection, rows: &[(&str, &Pin)]) -> Result<bool> {
    if rows.len() <= INSERT_CHUNK {
        return Ok(insert_rows_in(conn, rows).await.is_ok());
    }
    let mut tx = Connection::begin(conn).await?;
    if insert_rows_in(&mut tx, rows).await.is_ok() {
        tx.commit().await?;
        return Ok(true);
    }
    tx.rollback().await?;
    Ok(false)
}

/// Rows per INSERT of a batch: one statement instead of one per pin (19 parameters a row,
/// far below SQLite's 32766).
const INSERT_CHUNK: usize = 100;

/// [`INSERT_PIN`] for `rows` rows. Several rows take anonymous `?` parameters: binding
/// numbered ones makes SQLite search their names, a cost that grows with the square of the
/// count (27% of a batch's CPU with 1200 of them).
fn insert_rows(rows: usize) -> Cow<'static, str> {
    if rows == 1 {
        return Cow::Borrowed(INSERT_PIN);
    }
    let row = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    Cow::Owned(format!(
        "{} VALUES {}",
        insert_pins_into!(),
        vec![row; rows].join(", ")
    ))
}

/// One create (an idempotency claim, then its pins) inside the caller's transaction.
async fn insert_in(
    conn: &mut SqliteConnection,
    ws: &str,
    pins: &[Pin],
    idem: Option<&Idempotent>,
) -> Result<Outcome> {
    if let Some(idem) = idem {
        let claimed = sqlx::query(
            "INSERT INTO idempotency_keys (workspace_id, key, request_hash, response, created_at) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (workspace_id, key) DO UPDATE SET request_hash = excluded.request_hash, response = excluded.response, created_at = excluded.created_at \
             WHERE idempotency_keys.created_at < $6",
        )
        .bind(ws)
        .bind(&idem.key)
        .bind(&idem.request_hash)
        .bind(&idem.response)
        .bind(idem.created_at)
        .bind(idem.live_since)
        .execute(&mut *conn)
        .await?;
        if claimed.rows_affected() == 0 {
            return Ok(Outcome::KeyTaken);
        }
    }
    let rows: Vec<_> = pins.iter().map(|pin| (ws, pin)).collect();
    insert_rows_in(conn, &rows).await?;
    Ok(Outcome::Stored)
}

/// Inserts `(workspace, pin)` rows, [`INSERT_CHUNK`] to a statement. Outside a transaction
/// each statement commits on its own: a caller with more rows than one statement takes must
/// open one for all or none.
async fn insert_rows_in(conn: &mut SqliteConnection, rows: &[(&str, &Pin)]) -> Result<()> {
    for chunk in rows.chunks(INSERT_CHUNK) {
        let sql = insert_rows(chunk.len());
        let mut insert = SqliteStore::query(&sql);
        for &(ws, pin) in chunk {
            insert = bind_new_pin(insert, ws, pin);
        }
        insert.execute(&mut *conn).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{
        group_commit::tests::{
            check_update_outcomes, job, stored_unless_poisoned, update_groups, UPDATE_STATE,
        },
        keys::KeyStore,
        sql::Backend,
        sqlite::SqliteStore,
    };

    /// Each of `commit`'s ways of writing a group, with one create the database refuses (a
    /// trigger) among others: only that one fails, the others are stored.
    #[tokio::test]
    async fn a_refused_create_fails_alone_in_every_kind_of_group() {
        let dir = std::env::temp_dir().join(format!("corkboard-commit-{}", uuid::Uuid::new_v4()));
        let store = SqliteStore::open(
            &format!("sqlite://{}/c.db", dir.display()),
            2,
            crate::events::Records::shared("http://test"),
        )
        .await
        .unwrap();
        let ws = store.ensure_workspace("default").await.unwrap();
        let mut conn = store.writer.acquire().await.unwrap();
        sqlx::raw_sql(
            "CREATE TRIGGER poison BEFORE INSERT ON pins WHEN NEW.title = 'poison' \
             BEGIN SELECT RAISE(ABORT, 'poisoned'); END;",
        )
        .execute(&mut *conn)
        .await
        .unwrap();
        let many: Vec<String> = (0..60).map(|i| format!("many {i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let groups = [
            // All plain, one statement; then all plain past INSERT_CHUNK rows.
            vec![
                job(&ws, &["a"], None),
                job(&ws, &["poison"], None),
                job(&ws, &["b"], None),
            ],
            vec![
                job(&ws, &many[..], None),
                job(&ws, &["poison"], None),
                job(&ws, &many[..], None),
            ],
            // Mixed: the plain ones share an INSERT, the keyed ones get a SAVEPOINT each.
            vec![
                job(&ws, &["c"], Some("k1")),
                job(&ws, &["d", "poison"], None),
                job(&ws, &["e"], None),
                job(&ws, &["poison"], Some("k2")),
                job(&ws, &["f"], Some("k3")),
            ],
        ];
        let mut stored = 0;
        for group in &groups {
            let results = commit(&mut conn, group).await.unwrap();
            stored += stored_unless_poisoned(group, &results);
        }
        let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM pins")
            .fetch_one(&mut *conn)
            .await
            .unwrap();
        assert_eq!(rows, i64::try_from(stored).unwrap());
        let claims: i64 = sqlx::query_scalar("SELECT count(*) FROM idempotency_keys")
            .fetch_one(&mut *conn)
            .await
            .unwrap();
        assert_eq!(claims, 2, "the refused keyed create left no claim");
        drop(conn);
        store.close().await;
        let _ = std::fs::remove_dir_all(dir);
    }

    /// A group of updates where each way an update ends is met once
    /// ([`update_groups`]): only the stored ones changed the store, with one past version and
    /// one event each.
    #[tokio::test]
    async fn each_update_of_a_group_ends_on_its_own() {
        let dir = std::env::temp_dir().join(format!("corkboard-commit-{}", uuid::Uuid::new_v4()));
        let store = SqliteStore::open(
            &format!("sqlite://{}/c.db", dir.display()),
            2,
            crate::events::Records::shared("http://test"),
        )
        .await
        .unwrap();
        let ws = store.ensure_workspace("default").await.unwrap();
        let mut conn = store.writer.acquire().await.unwrap();
        let [setup, group] = update_groups(&ws);
        let created = commit(&mut conn, &setup).await.unwrap();
        assert!(matches!(created[..], [Ok(Outcome::Stored)]));
        let results = commit(&mut conn, &group).await.unwrap();
        check_update_outcomes(&results);
        let pins: Vec<(String, i64)> = sqlx::query_as(UPDATE_STATE[0])
            .fetch_all(&mut *conn)
            .await
            .unwrap();
        let expected = [("a2", 2), ("b", 1), ("c", 1), ("d", 1), ("e", 1)];
        let expected: Vec<(String, i64)> =
            expected.iter().map(|(t, v)| ((*t).into(), *v)).collect();
        assert_eq!(pins, expected);
        for (sql, count) in UPDATE_STATE[1..].iter().zip([1, 1]) {
            let n: i64 = sqlx::query_scalar(sql).fetch_one(&mut *conn).await.unwrap();
            assert_eq!(n, count, "{sql}");
        }
        drop(conn);
        store.close().await;
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn one_row_inserts_with_insert_pin_and_more_take_nineteen_parameters_each() {
        assert_eq!(insert_rows(1), INSERT_PIN);
        let sql = insert_rows(3);
        assert!(sql.starts_with(insert_pins_into!()));
        assert_eq!(sql.matches('?').count(), 57);
    }
}
