//! Group commit for SQLite creates. SQLite has one writer and `synchronous=FULL` makes every
//! commit wait for the disk, so one commit per request caps creates at the disk's sync rate.
//! Instead, creates queue here; one loop, on a thread of its own, takes every create waiting,
//! writes them together (see [`commit`]: a failing create fails alone), commits once, and only
//! then answers each caller: durable on acknowledgement, one sync for the group.

use std::time::{Duration, Instant};

use sqlx::{Connection, SqliteConnection, SqlitePool};
use tokio::sync::{mpsc, oneshot};

use super::{
    sqlite::{insert_in, insert_rows_in, INSERT_CHUNK},
    Created, Idempotent, Pin,
};
use crate::{error::Result, Error};

/// Most creates sharing one commit.
const MAX_GROUP: usize = 256;

/// How long the commit loop keeps the writer connection while creates keep coming. Giving it
/// back costs a round trip to SQLite's thread (sqlx's release ping), and lets the other
/// writes (updates, deletes, keys) take their turn.
const HOLD_FOR: Duration = Duration::from_millis(10);

struct Job {
    ws: String,
    pins: Vec<Pin>,
    idem: Option<Idempotent>,
    reply: oneshot::Sender<Result<Created>>,
}

/// The queue of creates; the task behind it ends when the last store clone is dropped.
#[derive(Clone)]
pub(super) struct Committer {
    jobs: mpsc::Sender<Job>,
}

impl Committer {
    /// Starts the commit loop on a thread of its own. On the request runtime each of its
    /// wake-ups would queue behind every ready request, and commits are one at a time: at 32
    /// connections a group took ~2 ms there, most of it waiting for a turn.
    pub(super) fn start(writer: SqlitePool) -> Result<Committer> {
        let (jobs, queue) = mpsc::channel(4 * MAX_GROUP);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::Internal(format!("starting the commit thread: {e}")))?;
        std::thread::Builder::new()
            .name("corkboard-commit".into())
            .spawn(move || runtime.block_on(run(writer, queue)))
            .map_err(|e| Error::Internal(format!("starting the commit thread: {e}")))?;
        Ok(Committer { jobs })
    }

    /// Stores `pins` (and the idempotency claim) and returns once they are committed.
    pub(super) async fn insert(
        &self,
        ws: &str,
        pins: &[Pin],
        idem: Option<&Idempotent>,
    ) -> Result<Created> {
        let (reply, answer) = oneshot::channel();
        let job = Job {
            ws: ws.to_owned(),
            pins: pins.to_vec(),
            idem: idem.cloned(),
            reply,
        };
        self.jobs.send(job).await.map_err(|_| Error::Unavailable)?;
        answer.await.map_err(|_| Error::Unavailable)?
    }
}

async fn run(writer: SqlitePool, mut queue: mpsc::Receiver<Job>) {
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

/// Sends each create of the group its result, or the group's failure.
fn answer(group: &mut Vec<Job>, done: Result<Vec<Result<Created>>>) {
    match done {
        Ok(results) => {
            for (job, result) in group.drain(..).zip(results) {
                let _ = job.reply.send(result);
            }
        }
        Err(e) => {
            tracing::warn!(error = %e, creates = group.len(), "group commit failed");
            for job in group.drain(..) {
                let _ = job.reply.send(Err(same_failure(&e)));
            }
        }
    }
}

/// One commit for the whole group, in as few statements as it takes: creates without an
/// `Idempotency-Key` share one INSERT per [`INSERT_CHUNK`] rows (with no BEGIN or COMMIT when
/// they fit one), the others get a SAVEPOINT each. When a shared INSERT fails, its creates
/// are retried one SAVEPOINT each, so only the failing one fails.
async fn commit(conn: &mut SqliteConnection, group: &[Job]) -> Result<Vec<Result<Created>>> {
    let plain: Vec<(&str, &Pin)> = group
        .iter()
        .filter(|job| job.idem.is_none())
        .flat_map(|job| job.pins.iter().map(|pin| (job.ws.as_str(), pin)))
        .collect();
    let plain_jobs = group.iter().filter(|job| job.idem.is_none()).count();
    let all_plain = plain_jobs == group.len();
    if all_plain && insert_together(conn, &plain).await? {
        return Ok(group.iter().map(|_| Ok(Created::Stored)).collect());
    }
    let mut tx = Connection::begin(conn).await?;
    // Inside the transaction, a failed shared INSERT undoes only itself (or its SAVEPOINT).
    let shared = !all_plain && plain_jobs > 1 && insert_together(&mut tx, &plain).await?;
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

/// The group's failure, for each of its callers.
fn same_failure(e: &Error) -> Error {
    match e {
        Error::Unavailable => Error::Unavailable,
        Error::Internal(cause) => Error::Internal(cause.clone()),
        other => Error::Internal(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{sqlite::SqliteStore, Backend};

    fn pin(title: &str) -> Pin {
        Pin {
            id: crate::ids::new_id("p-"),
            pin_type: "json".into(),
            pin_config: r#"{"data":1}"#.into(),
            pin_layout: "1x1".into(),
            is_public: false,
            allow_edit: false,
            require_sign_in: false,
            allow_comments: false,
            title: Some(title.into()),
            tags: Vec::new(),
            provenance: None,
            version: 1,
            created_at: 0,
            updated_at: 0,
        }
    }

    fn job(ws: &str, titles: &[&str], key: Option<&str>) -> Job {
        Job {
            ws: ws.into(),
            pins: titles.iter().map(|t| pin(t)).collect(),
            idem: key.map(|key| Idempotent {
                key: key.into(),
                request_hash: "hash".into(),
                response: "{}".into(),
                created_at: 0,
                live_since: -1,
            }),
            reply: oneshot::channel().0,
        }
    }

    /// Each of `commit`'s ways of writing a group, with one create the database refuses (a
    /// trigger) among others: only that one fails, the others are stored.
    #[tokio::test]
    async fn a_refused_create_fails_alone_in_every_kind_of_group() {
        let dir = std::env::temp_dir().join(format!("corkboard-commit-{}", uuid::Uuid::new_v4()));
        let store = SqliteStore::open(&format!("sqlite://{}/c.db", dir.display()), 2)
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
            for (job, result) in group.iter().zip(&results) {
                let poisoned = job
                    .pins
                    .iter()
                    .any(|p| p.title.as_deref() == Some("poison"));
                assert_eq!(result.is_err(), poisoned, "{:?}", job.pins[0].title);
                if !poisoned {
                    stored += job.pins.len();
                }
            }
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
}
