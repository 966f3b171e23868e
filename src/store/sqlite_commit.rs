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
    let mut shared = false;
    if !all_plain && plain_jobs > 1 {
        let mut savepoint = Connection::begin(&mut *tx).await?;
        if insert_rows_in(&mut savepoint, &plain).await.is_ok() {
            savepoint.commit().await?;
            shared = true;
        } else {
            savepoint.rollback().await?;
        }
    }
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

/// Commits all `rows` or none: one statement on its own when they fit one, else a
/// transaction. False when an INSERT failed (nothing was written).
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
