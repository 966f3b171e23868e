//! Group commit for SQLite creates. SQLite has one writer and `synchronous=FULL` makes every
//! commit wait for the disk, so one commit per request caps creates at the disk's sync rate.
//! Instead, creates queue here; one task takes every create waiting, runs each in its own
//! SAVEPOINT inside one transaction (a failing create rolls back alone), commits once, and
//! only then answers each caller: durable on acknowledgement, one sync for the group.

use sqlx::{Acquire, SqlitePool};
use tokio::sync::{mpsc, oneshot};

use super::{sqlite::insert_in, Created, Idempotent, Pin};
use crate::{error::Result, Error};

/// Most creates sharing one commit.
const MAX_GROUP: usize = 256;

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
    pub(super) fn start(writer: SqlitePool) -> Committer {
        let (jobs, queue) = mpsc::channel(4 * MAX_GROUP);
        tokio::spawn(run(writer, queue));
        Committer { jobs }
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
        match commit(&writer, &group).await {
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
}

/// One transaction for the whole group; a SAVEPOINT per create.
async fn commit(writer: &SqlitePool, group: &[Job]) -> Result<Vec<Result<Created>>> {
    let mut tx = writer.begin().await?;
    let mut results = Vec::with_capacity(group.len());
    for job in group {
        let mut savepoint = (&mut *tx).begin().await?;
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

/// The group's failure, for each of its callers.
fn same_failure(e: &Error) -> Error {
    match e {
        Error::Unavailable => Error::Unavailable,
        Error::Internal(cause) => Error::Internal(cause.clone()),
        other => Error::Internal(other.to_string()),
    }
}
