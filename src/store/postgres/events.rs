//! PostgreSQL's side of the event log: appending in commit order, and telling every
//! replica of the commits.
//!
//! Ids are drawn from one sequence, but PostgreSQL takes a sequence value before the commit,
//! so two transactions can commit in the other order than their ids: a reader of "after id
//! N" would skip the event that commits late. Each append therefore first takes a
//! transaction-scoped advisory lock on its workspace (held to the commit) and only then
//! draws its ids: within a workspace, id order is commit order. Appends are the last
//! statement of their transaction, so the lock covers only the commit itself, and other
//! workspaces never wait.
//!
//! The news of a commit goes out after it ([`Notifier`]): this replica's feeds are told in
//! process, the others through a `NOTIFY` on a connection of its own. A `NOTIFY` inside the
//! writing transaction would be delivered at its commit too, but PostgreSQL lets only one
//! notifying transaction commit at a time, holding the turn through the commit's WAL flush:
//! every event-writing commit of every replica would wait for the previous one's flush
//! (pgbench, 8 clients, an update and its event: 2,180-2,870 tps alone, 1,180-1,280 with the
//! `NOTIFY` inside, 2,380-2,860 with it sent after the commit). A `NOTIFY` alone writes no
//! WAL and waits for no flush.

use std::{
    collections::HashSet,
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

use sqlx::{
    postgres::{PgConnectOptions, PgListener},
    Connection, PgConnection, PgPool,
};
use tokio::{sync::Notify, task::JoinHandle};

use super::WAIT_FOR_CONNECTION;
use crate::store::{
    events::{Commits, NewEvent},
    sql::Run,
};

/// The notification channel; the payload is a workspace id, a space and the sending
/// replica's [`Notifier`] origin.
const CHANNEL: &str = "corkboard_events";

/// Locks the workspaces (in order, so two appends can't deadlock), then inserts the events
/// in their order.
pub(crate) const APPEND_EVENTS: &str = "WITH locked AS MATERIALIZED ( \
     SELECT pg_advisory_xact_lock(7277, hashtext(w)) FROM (SELECT DISTINCT unnest($1::text[]) AS w ORDER BY 1) ws) \
     INSERT INTO events (workspace_id, event, resource_id, version, boards, at, data) \
     SELECT e.ws, e.event, e.id, e.version, ARRAY(SELECT jsonb_array_elements_text(e.boards::jsonb)), e.at, e.data \
     FROM UNNEST($1::text[], $2::text[], $3::text[], $4::int8[], $5::text[], $6::int8[], $7::text[]) \
     WITH ORDINALITY AS e (ws, event, id, version, boards, at, data, n) \
     WHERE (SELECT count(*) FROM locked) >= 0 ORDER BY e.n";

/// One notification for each workspace of `$1`, from the origin `$2`.
pub(crate) const NOTIFY: &str =
    "SELECT count(pg_notify('corkboard_events', w || ' ' || $2)) FROM unnest($1::text[]) w";

pub(super) fn append<'c>(tx: &'c mut PgConnection, events: &'c [NewEvent]) -> Run<'c, ()> {
    Box::pin(async move {
        if events.is_empty() {
            return Ok(());
        }
        let column = |f: fn(&NewEvent) -> &str| events.iter().map(f).collect::<Vec<_>>();
        let boards: Vec<String> = events
            .iter()
            .map(|e| serde_json::to_string(&e.boards).unwrap_or_else(|_| "[]".into()))
            .collect();
        sqlx::query(APPEND_EVENTS)
            .bind(column(|e| &e.workspace_id))
            .bind(column(|e| e.kind.as_str()))
            .bind(column(|e| &e.resource_id))
            .bind(events.iter().map(|e| e.version).collect::<Vec<_>>())
            .bind(boards)
            .bind(events.iter().map(|e| e.at).collect::<Vec<_>>())
            .bind(column(|e| &e.data))
            .execute(tx)
            .await?;
        crate::metrics::logged(events.len());
        Ok(())
    })
}

/// Tells which workspaces have new events once they are committed: this replica's feeds at
/// once, in process, and every other replica through a `NOTIFY` sent by a task of its own on
/// a connection of its own. The workspaces waiting for their `NOTIFY` are a set, so while
/// one is sent (or the connection is down) the next gathers each workspace once however many
/// commits it had: it holds at most one entry per workspace. A replica killed between a
/// commit and its `NOTIFY` leaves the others to find the events at their feeds' periodic
/// read of the log (every `events.heartbeat_secs`): late, not lost.
#[derive(Clone)]
pub(super) struct Notifier(Arc<Waiting>);

struct Waiting {
    commits: Commits,
    /// This replica's mark on its notifications, for its listener to skip them: its feeds
    /// were told in process.
    origin: String,
    workspaces: Mutex<HashSet<String>>,
    wake: Notify,
}

impl Notifier {
    /// The notifier and its task, which connects when the first commit comes, and again
    /// after a failure.
    pub(super) fn start(options: PgConnectOptions, commits: Commits) -> (Notifier, JoinHandle<()>) {
        let notifier = Notifier(Arc::new(Waiting {
            commits,
            origin: uuid::Uuid::new_v4().simple().to_string(),
            workspaces: Mutex::default(),
            wake: Notify::new(),
        }));
        let task = tokio::spawn(notifier.clone().notify_in_background(options));
        (notifier, task)
    }

    /// `ws` has new events, committed.
    pub(super) fn committed(&self, ws: &str) {
        self.0.commits.send(Some(ws));
        let mut waiting = self
            .0
            .workspaces
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if !waiting.contains(ws) {
            waiting.insert(ws.to_owned());
        }
        drop(waiting);
        self.0.wake.notify_one();
    }

    /// Sends what is waiting, and on a failure sends it again (with what came meanwhile)
    /// after a growing pause on a new connection.
    async fn notify_in_background(self, options: PgConnectOptions) {
        let mut conn: Option<PgConnection> = None;
        let mut workspaces: Vec<String> = Vec::new();
        let mut pause = Duration::from_millis(100);
        loop {
            if workspaces.is_empty() {
                self.0.wake.notified().await;
            }
            let waiting = std::mem::take(
                &mut *self
                    .0
                    .workspaces
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner),
            );
            workspaces.extend(waiting);
            workspaces.sort_unstable();
            workspaces.dedup();
            if workspaces.is_empty() {
                continue;
            }
            match self.notify(&mut conn, &options, &workspaces).await {
                Ok(()) => {
                    workspaces.clear();
                    pause = Duration::from_millis(100);
                }
                Err(e) => {
                    tracing::warn!(error = %e, "event notifier: NOTIFY");
                    conn = None;
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(5));
                }
            }
        }
    }

    async fn notify(
        &self,
        conn: &mut Option<PgConnection>,
        options: &PgConnectOptions,
        workspaces: &[String],
    ) -> crate::error::Result<()> {
        let live = match conn {
            Some(live) => live,
            None => conn.insert(
                tokio::time::timeout(WAIT_FOR_CONNECTION, PgConnection::connect_with(options))
                    .await
                    .map_err(|_| crate::Error::Unavailable)??,
            ),
        };
        sqlx::query(NOTIFY)
            .bind(workspaces)
            .bind(&self.0.origin)
            .execute(live)
            .await?;
        Ok(())
    }

    /// The workspace a notification names, unless it came from this replica. One without
    /// an origin comes from a replica of a version that sent its `NOTIFY` inside the commit
    /// (during a rolling upgrade), and is news too.
    fn news<'p>(&self, payload: &'p str) -> Option<&'p str> {
        match payload.rsplit_once(' ') {
            Some((_, origin)) if origin == self.0.origin => None,
            Some((ws, _)) => Some(ws),
            None => Some(payload),
        }
    }
}

/// Listens on one connection of its own for the other replicas' commits and passes each on
/// to the feeds; after the connection was lost it tells every reader to catch up from the
/// log (notifications sent meanwhile are gone), reconnecting with a growing pause.
pub(super) fn listen(pool: PgPool, notifier: Notifier) -> JoinHandle<()> {
    tokio::spawn(async move {
        let commits = &notifier.0.commits;
        let mut pause = Duration::from_millis(100);
        loop {
            let mut listener = match PgListener::connect_with(&pool).await {
                Ok(listener) => listener,
                Err(e) => {
                    tracing::warn!(error = %e, "event listener: connecting");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(5));
                    continue;
                }
            };
            if let Err(e) = listener.listen(CHANNEL).await {
                tracing::warn!(error = %e, "event listener: LISTEN");
                tokio::time::sleep(pause).await;
                continue;
            }
            pause = Duration::from_millis(100);
            // Whatever committed while nobody listened is in the log.
            commits.send(None);
            loop {
                match listener.try_recv().await {
                    Ok(Some(note)) => {
                        if let Some(ws) = notifier.news(note.payload()) {
                            commits.send(Some(ws));
                        }
                    }
                    Ok(None) => {
                        tracing::warn!("event listener: connection lost");
                        break;
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "event listener: lost");
                        break;
                    }
                }
            }
            tokio::time::sleep(pause).await;
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A replica's listener passes on the other replicas' news, and skips its own: its
    /// feeds were told in process.
    #[tokio::test]
    async fn a_listener_skips_only_its_own_replicas_news() {
        // Nothing is committed, so neither notifier connects.
        let options = PgConnectOptions::new().port(1);
        let (ours, our_task) = Notifier::start(options.clone(), Commits::default());
        let (theirs, their_task) = Notifier::start(options, Commits::default());
        let from = |notifier: &Notifier| format!("ws-a {}", notifier.0.origin);
        assert_eq!(ours.news(&from(&ours)), None);
        assert_eq!(ours.news(&from(&theirs)), Some("ws-a"));
        assert_eq!(ours.news("ws-a"), Some("ws-a"));
        our_task.abort();
        their_task.abort();
    }
}
