//! Group commit: creates and updates queue for one loop, on a thread of its own, that writes
//! every write waiting in as few statements as it can, commits once, and only then answers
//! each caller: durable on acknowledgement, one commit (and one disk sync) for the group.
//! Each store brings the loop (`sqlite/commit.rs`, `postgres/commit.rs`); a failing write
//! fails alone in both, and each write's events commit with it.
//!
//! An update comes decided: the request read the pin (or took the state this replica last
//! wrote of it, `pins::known`), checked it and computed its next state outside the loop
//! ([`Update`]), so the loop spends no time on validation or
//! rendering. The loop stores it only if the pin is still at the version that was read
//! (a compare-and-set); otherwise the update is answered [`Outcome::Moved`] and the request
//! decides again from a new read. Two updates of one pin in one group can't both hold: the
//! first stands, the second is moved.

use std::{future::Future, sync::Arc};

use tokio::sync::{mpsc, oneshot};

use super::{events::NewEvent, Created, Idempotent, Pin};
use crate::{error::Result, Error};

/// Most writes sharing one commit.
pub(super) const MAX_GROUP: usize = 256;

/// One write waiting for its commit.
pub(super) struct Job {
    pub ws: String,
    pub write: Write,
    /// The write's events, appended in the same transaction: one
    /// [`crate::events::EventKind::PinCreated`] per created pin, or the update's
    /// [`crate::events::EventKind::PinUpdated`] (and [`crate::events::EventKind::PinStatus`]
    /// when its status changes), whose boards the loop fills in.
    pub events: Vec<NewEvent>,
    pub reply: oneshot::Sender<Result<Outcome>>,
}

/// What a job writes.
pub(super) enum Write {
    Create {
        pins: Vec<Pin>,
        idem: Option<Idempotent>,
    },
    Update(Box<Update>),
}

/// A pin's next state, decided from a read of `old`.
pub(crate) struct Update {
    /// The pin as the request read it (or as this replica last wrote it): `new` replaces it
    /// only if the stored pin is still at its version.
    pub old: Pin,
    pub new: Pin,
    /// Past versions to keep ([`crate::config::Limits::version_retention`]).
    pub retention: u32,
}

/// How a job ended, when its group committed.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Stored,
    /// A create's `Idempotency-Key` was taken by another request first: nothing written.
    KeyTaken,
    /// An update's pin was no longer at the version read (or another update of it came
    /// first in the group): nothing written.
    Moved,
}

impl Job {
    pub(super) fn creates(&self) -> Option<(&[Pin], Option<&Idempotent>)> {
        match &self.write {
            Write::Create { pins, idem } => Some((pins, idem.as_ref())),
            Write::Update(_) => None,
        }
    }
}

/// The queue of writes; the loop behind it ends when the last store clone is dropped.
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
        let write = Write::Create {
            pins: pins.to_vec(),
            idem: idem.cloned(),
        };
        match self.send(ws, write, events).await? {
            Outcome::KeyTaken => Ok(Created::KeyTaken),
            _ => Ok(Created::Stored),
        }
    }

    /// Stores `update` unless its pin has moved on from the version read, and returns once
    /// that is committed; `events` are the update's, without their boards.
    pub(super) async fn update(
        &self,
        ws: &str,
        update: Update,
        events: Vec<NewEvent>,
    ) -> Result<Outcome> {
        self.send(ws, Write::Update(Box::new(update)), events).await
    }

    async fn send(&self, ws: &str, write: Write, events: Vec<NewEvent>) -> Result<Outcome> {
        let (reply, answer) = oneshot::channel();
        let job = Job {
            ws: ws.to_owned(),
            write,
            events,
            reply,
        };
        self.jobs.send(job).await.map_err(|_| Error::Unavailable)?;
        answer.await.map_err(|_| Error::Unavailable)?
    }
}

/// The updates of `group` that may stand, by position: a second update of one pin in the
/// group is moved at once (it read the same version as the first, which will have changed it).
pub(super) fn first_of_each_pin(group: &[Job]) -> Vec<bool> {
    let mut seen = std::collections::HashSet::new();
    group
        .iter()
        .map(|job| match &job.write {
            Write::Update(u) => seen.insert(u.old.id.as_str()),
            Write::Create { .. } => true,
        })
        .collect()
}

/// The updates of `group` that may stand (by [`first_of_each_pin`]), with their workspaces.
pub(super) fn standing_updates<'j>(
    group: &'j [Job],
    standing: &[bool],
) -> Vec<(&'j str, &'j Update)> {
    group
        .iter()
        .zip(standing)
        .filter_map(|(job, stands)| match &job.write {
            Write::Update(update) if *stands => Some((job.ws.as_str(), &**update)),
            _ => None,
        })
        .collect()
}

/// Sends each write of the group its result, or the group's failure.
pub(super) fn answer(group: &mut Vec<Job>, done: Result<Vec<Result<Outcome>>>) {
    match done {
        Ok(results) => {
            for (job, result) in group.drain(..).zip(results) {
                let _ = job.reply.send(result);
            }
        }
        Err(e) => {
            tracing::warn!(error = %e, writes = group.len(), "group commit failed");
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
            title: Some(title.into()),
            ..Pin::new(crate::ids::new_id("p-"), "json", r#"{"data":1}"#)
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
            write: Write::Create {
                pins,
                idem: key.map(|key| Idempotent {
                    key: key.into(),
                    request_hash: "hash".into(),
                    response: "{}".into(),
                    created_at: 0,
                    live_since: -1,
                }),
            },
            events,
            reply: tokio::sync::oneshot::channel().0,
        }
    }

    /// A create of exactly `pins`.
    pub(in crate::store) fn create(ws: &str, pins: &[&Pin]) -> Job {
        let mut job = job(ws, &[], None);
        job.write = Write::Create {
            pins: pins.iter().map(|p| (*p).clone()).collect(),
            idem: None,
        };
        job.events = pins
            .iter()
            .map(|p| NewEvent::deleted(ws, EventKind::PinCreated, &p.id, Vec::new(), 0))
            .collect();
        job
    }

    /// An update of `old` (as read) made by `change`, at the next version.
    pub(in crate::store) fn update(ws: &str, old: &Pin, change: impl FnOnce(&mut Pin)) -> Job {
        let mut new = old.clone();
        change(&mut new);
        new.version = old.version + 1;
        let mut event = NewEvent::deleted(ws, EventKind::PinUpdated, &old.id, Vec::new(), 0);
        event.version = Some(new.version);
        Job {
            ws: ws.into(),
            write: Write::Update(Box::new(Update {
                old: old.clone(),
                new,
                retention: 5,
            })),
            events: vec![event],
            reply: tokio::sync::oneshot::channel().0,
        }
    }

    /// Pins `a`, `b` (keyed `kb`), `c` and `d` to create first, then a group of updates and a
    /// create where each way an update ends is met once: `a` retitled (stored), `c` given
    /// `b`'s key (refused: 409), `a` again from the same read (moved: the first stands), `d`
    /// from a version it never had (moved), and a create beside them (stored).
    pub(in crate::store) fn update_groups(ws: &str) -> [Vec<Job>; 2] {
        let (a, mut b, c, d) = (pin("a"), pin("b"), pin("c"), pin("d"));
        b.key = Some("kb".into());
        let mut stale = d.clone();
        stale.version = 7;
        [
            vec![create(ws, &[&a, &b, &c, &d])],
            vec![
                update(ws, &a, |p| p.title = Some("a2".into())),
                update(ws, &c, |p| p.key = Some("kb".into())),
                update(ws, &a, |p| p.title = Some("a3".into())),
                update(ws, &stale, |p| p.title = Some("d8".into())),
                job(ws, &["e"], None),
            ],
        ]
    }

    /// What [`update_groups`]' second group must answer.
    pub(in crate::store) fn check_update_outcomes(results: &[Result<Outcome>]) {
        assert!(matches!(results[0], Ok(Outcome::Stored)), "{results:?}");
        assert!(
            matches!(results[1], Err(Error::Taken { .. })),
            "a taken key is the update's own 409: {results:?}"
        );
        assert!(matches!(results[2], Ok(Outcome::Moved)), "{results:?}");
        assert!(matches!(results[3], Ok(Outcome::Moved)), "{results:?}");
        assert!(matches!(results[4], Ok(Outcome::Stored)), "{results:?}");
    }

    /// After [`update_groups`]: each pin's title and version by title order, the past
    /// versions kept, and the `pin.updated` events, as the store holds them.
    pub(in crate::store) const UPDATE_STATE: [&str; 3] = [
        "SELECT title, version FROM pins ORDER BY title",
        "SELECT count(*) FROM pin_versions",
        "SELECT count(*) FROM events WHERE event = 'pin.updated'",
    ];

    /// Checks that exactly the creates holding a pin titled `poison` failed, and returns how
    /// many pins the others stored.
    pub(in crate::store) fn stored_unless_poisoned(
        group: &[Job],
        results: &[Result<Outcome>],
    ) -> usize {
        assert_eq!(group.len(), results.len());
        let mut stored = 0;
        for (job, result) in group.iter().zip(results) {
            let (pins, _) = job.creates().expect("a create");
            let poisoned = pins.iter().any(|p| p.title.as_deref() == Some("poison"));
            assert_eq!(result.is_err(), poisoned, "{:?}", pins[0].title);
            if !poisoned {
                stored += pins.len();
            }
        }
        stored
    }
}
