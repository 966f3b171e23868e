//! PostgreSQL's side of the event log: appending in commit order, and hearing every
//! replica's commits.
//!
//! Ids are drawn from one sequence, but PostgreSQL takes a sequence value before the commit,
//! so two transactions can commit in the other order than their ids: a reader of "after id
//! N" would skip the event that commits late. Each append therefore first takes a
//! transaction-scoped advisory lock on its workspace (held to the commit) and only then
//! draws its ids: within a workspace, id order is commit order. Appends are the last
//! statement of their transaction, so the lock covers only the commit itself, and other
//! workspaces never wait. The same statement `NOTIFY`s each workspace, which PostgreSQL
//! delivers at the commit (never for a rollback) to every replica's listener.

use std::time::Duration;

use sqlx::{postgres::PgListener, PgConnection, PgPool};

use crate::store::{
    events::{Commits, NewEvent},
    sql::Run,
};

/// The notification channel; the payload is a workspace id.
const CHANNEL: &str = "corkboard_events";

/// Locks the workspaces (in order, so two appends can't deadlock), then inserts the events
/// in their order, then notifies each workspace once.
pub(crate) const APPEND_EVENTS: &str = "WITH locked AS MATERIALIZED ( \
     SELECT pg_advisory_xact_lock(7277, hashtext(w)) FROM (SELECT DISTINCT unnest($1::text[]) AS w ORDER BY 1) ws), \
     appended AS (INSERT INTO events (workspace_id, event, resource_id, version, boards, at, data) \
     SELECT e.ws, e.event, e.id, e.version, ARRAY(SELECT jsonb_array_elements_text(e.boards::jsonb)), e.at, e.data \
     FROM UNNEST($1::text[], $2::text[], $3::text[], $4::int8[], $5::text[], $6::int8[], $7::text[]) \
     WITH ORDINALITY AS e (ws, event, id, version, boards, at, data, n) \
     WHERE (SELECT count(*) FROM locked) >= 0 ORDER BY e.n RETURNING workspace_id) \
     SELECT count(pg_notify('corkboard_events', w)) FROM (SELECT DISTINCT workspace_id AS w FROM appended) n";

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

/// Listens on one connection of its own for every replica's commits and passes each on to
/// `commits`; after the connection was lost it tells every reader to catch up from the log
/// (notifications sent meanwhile are gone), reconnecting with a growing pause.
pub(super) fn listen(pool: PgPool, commits: Commits) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
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
                    Ok(Some(note)) => commits.send(Some(note.payload())),
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
