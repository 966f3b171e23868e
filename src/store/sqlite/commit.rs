//! Group commit for SQLite creates ([`super::group_commit`]). SQLite has one writer and
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
    events::{Commits, NewEvent},
    group_commit::{answer, Committer, Job, MAX_GROUP},
    pins::{bind_new_pin, INSERT_PIN},
    sql::Backend,
    Created, Idempotent, Pin,
};

/// How long the commit loop keeps the writer connection while creates keep coming. Giving it
/// back costs a round trip to SQLite's thread (sqlx's release ping), and lets the other
/// writes (updates, deletes, keys) take their turn.
const HOLD_FOR: Duration = Duration::from_millis(10);

/// Starts the loop that commits `writer`'s creates.
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
fn tell(commits: &Commits, group: &[Job], results: &[Result<Created>]) {
    let mut told: Vec<&str> = Vec::new();
    for (job, result) in group.iter().zip(results) {
        if matches!(result, Ok(Created::Stored)) && !told.contains(&job.ws.as_str()) {
            commits.send(Some(&job.ws));
            told.push(&job.ws);
        }
    }
}

/// One commit for the whole group, with the events of every create it stores: creates
/// without an `Idempotency-Key` share one INSERT per [`INSERT_CHUNK`] rows, the others get a
/// SAVEPOINT each. When a shared INSERT fails, its creates are retried one SAVEPOINT each,
/// so only the failing one fails.
async fn commit(conn: &mut SqliteConnection, group: &[Job]) -> Result<Vec<Result<Created>>> {
    let plain: Vec<(&str, &Pin)> = group
        .iter()
        .filter(|job| job.idem.is_none())
        .flat_map(|job| job.pins.iter().map(|pin| (job.ws.as_str(), pin)))
        .collect();
    let mut tx = Connection::begin(conn).await?;
    // Inside the transaction, a failed shared INSERT undoes only itself (or its SAVEPOINT).
    let shared = !plain.is_empty() && insert_together(&mut tx, &plain).await?;
    let mut results = Vec::with_capacity(group.len());
    for job in group {
        if shared && job.idem.is_none() {
            results.push(Ok(Created::Stored));
            continue;
        }
        let mut savepoint = Connection::begin(&mut *tx).await?;
        match insert_in(&mut savepoint, &job.ws, &job.pins, job.idem.as_ref()).await {
            Ok(Created::Stored) => {
                savepoint.commit().await?;
                results.push(Ok(Created::Stored));
            }
            other => {
                savepoint.rollback().await?;
                results.push(other);
            }
        }
    }
    let events: Vec<NewEvent> = group
        .iter()
        .zip(&results)
        .filter(|(_, result)| matches!(result, Ok(Created::Stored)))
        .flat_map(|(job, _)| job.events.iter().cloned())
        .collect();
    SqliteStore::append_events(&mut tx, &events).await?;
    tx.commit().await?;
    Ok(results)
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

/// Rows per INSERT of a batch: one statement instead of one per pin (13 parameters a row,
/// far below SQLite's 32766).
const INSERT_CHUNK: usize = 100;

/// [`INSERT_PIN`] for `rows` rows. Several rows take anonymous `?` parameters: binding
/// numbered ones makes SQLite search their names, a cost that grows with the square of the
/// count (27% of a batch's CPU with 1200 of them).
fn insert_rows(rows: usize) -> Cow<'static, str> {
    if rows == 1 {
        return Cow::Borrowed(INSERT_PIN);
    }
    let row = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
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
) -> Result<Created> {
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
            return Ok(Created::KeyTaken);
        }
    }
    let rows: Vec<_> = pins.iter().map(|pin| (ws, pin)).collect();
    insert_rows_in(conn, &rows).await?;
    Ok(Created::Stored)
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
        group_commit::tests::{job, stored_unless_poisoned},
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

    #[test]
    fn one_row_inserts_with_insert_pin_and_more_take_thirteen_parameters_each() {
        assert_eq!(insert_rows(1), INSERT_PIN);
        let sql = insert_rows(3);
        assert!(sql.starts_with(insert_pins_into!()));
        assert_eq!(sql.matches('?').count(), 39);
    }
}
