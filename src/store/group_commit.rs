//! Group commit: creates queue for one loop, on a thread of its own, that writes every create
//! waiting in as few statements as it can, commits once, and only then answers each caller:
//! durable on acknowledgement, one commit (and one disk sync) for the group. Each store
//! brings the loop (`sqlite/commit.rs`, `postgres/commit.rs`); a failing create fails alone
//! in both, and each create's events commit with it.

use std::{future::Future, sync::Arc};

use tokio::sync::{mpsc, oneshot};

use super::{events::NewEvent, Created, Idempotent, Pin};
use crate::{error::Result, Error};

/// Most creates sharing one commit.
pub(super) const MAX_GROUP: usize = 256;

/// One create waiting for its commit.
pub(super) struct Job {
    pub ws: String,
    pub pins: Vec<Pin>,
    pub idem: Option<Idempotent>,
    /// One [`crate::events::EventKind::PinCreated`] per pin, appended in the same transaction.
    pub events: Vec<NewEvent>,
    pub reply: oneshot::Sender<Result<Created>>,
}

/// The queue of creates; the loop behind it ends when the last store clone is dropped.
#[derive(Clone)]
pub(super) struct Committer {
    jobs: mpsc::Sender<Job>,
}

impl Committer {
    /// Starts `run` on a thread of its own, with a single-threaded runtime. On the request
    /// runtime each of the loop's wake-ups would queue behind every ready request, and groups
    /// commit one at a time: at 32 connections a SQLite group took ~2 ms there, most of it
    /// waiting for a turn.
    pub(super) fn start<F, Fut>(name: &str, run: F) -> Result<Committer>
    where
        F: FnOnce(mpsc::Receiver<Job>) -> Fut + Send + 'static,
        Fut: Future<Output = ()>,
    {
        let (jobs, queue) = mpsc::channel(4 * MAX_GROUP);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::internal_in("starting the commit thread", e))?;
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || runtime.block_on(run(queue)))
            .map_err(|e| Error::internal_in("starting the commit thread", e))?;
        Ok(Committer { jobs })
    }

    /// Stores `pins` (and the idempotency claim) and returns once they are committed.
    pub(super) async fn insert(
        &self,
        ws: &str,
        pins: &[Pin],
        idem: Option<&Idempotent>,
        events: Vec<NewEvent>,
    ) -> Result<Created> {
        let (reply, answer) = oneshot::channel();
        let job = Job {
            ws: ws.to_owned(),
            pins: pins.to_vec(),
            idem: idem.cloned(),
            events,
            reply,
        };
        self.jobs.send(job).await.map_err(|_| Error::Unavailable)?;
        answer.await.map_err(|_| Error::Unavailable)?
    }
}

/// Sends each create of the group its result, or the group's failure.
pub(super) fn answer(group: &mut Vec<Job>, done: Result<Vec<Result<Created>>>) {
    match done {
        Ok(results) => {
            for (job, result) in group.drain(..).zip(results) {
                let _ = job.reply.send(result);
            }
        }
        Err(e) => {
            tracing::warn!(error = %e, creates = group.len(), "group commit failed");
            let e = Arc::new(e);
            for job in group.drain(..) {
                let _ = job.reply.send(Err(same_failure(&e)));
            }
        }
    }
}

/// A failure shared by several callers: 503 if it was one, else a 500 caused by it.
pub(super) fn same_failure(e: &Arc<Error>) -> Error {
    match **e {
        Error::Unavailable => Error::Unavailable,
        _ => Error::internal(Arc::clone(e)),
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::events::EventKind;

    /// A small `json` pin titled `title`.
    pub(in crate::store) fn pin(title: &str) -> Pin {
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
            key: None,
            version: 1,
            created_at: 0,
            updated_at: 0,
        }
    }

    /// A create of pins with these titles, keyed when `key` is given.
    pub(in crate::store) fn job(ws: &str, titles: &[&str], key: Option<&str>) -> Job {
        let pins: Vec<Pin> = titles.iter().map(|t| pin(t)).collect();
        let events = pins
            .iter()
            .map(|p| NewEvent::deleted(ws, EventKind::PinCreated, &p.id, Vec::new(), 0))
            .collect();
        Job {
            ws: ws.into(),
            pins,
            events,
            idem: key.map(|key| Idempotent {
                key: key.into(),
                request_hash: "hash".into(),
                response: "{}".into(),
                created_at: 0,
                live_since: -1,
            }),
            reply: tokio::sync::oneshot::channel().0,
        }
    }

    /// Checks that exactly the creates holding a pin titled `poison` failed, and returns how
    /// many pins the others stored.
    pub(in crate::store) fn stored_unless_poisoned(
        group: &[Job],
        results: &[Result<Created>],
    ) -> usize {
        assert_eq!(group.len(), results.len());
        let mut stored = 0;
        for (job, result) in group.iter().zip(results) {
            let poisoned = job
                .pins
                .iter()
                .any(|p| p.title.as_deref() == Some("poison"));
            assert_eq!(result.is_err(), poisoned, "{:?}", job.pins[0].title);
            if !poisoned {
                stored += job.pins.len();
            }
        }
        stored
    }
}
