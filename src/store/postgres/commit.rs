//! Group commit for PostgreSQL's single creates without an `Idempotency-Key`
//! ([`super::group_commit`]).
//!
//! One connection of its own, outside the request pool, inserts every create waiting in one
//! statement and one transaction: a group of N single creates costs PostgreSQL one statement
//! and one WAL flush instead of N of each, and each request one round trip fewer on its own
//! connection. Keyed creates keep their one statement on the request's connection, where the
//! claim and the insert are made together, and so do batches, which already share one. Each
//! replica has its own loop.

use std::sync::Arc;

use sqlx::{postgres::PgConnectOptions, Connection, PgConnection};
use tokio::sync::mpsc;

use super::{events::append, insert::insert_rows, WAIT_FOR_CONNECTION};
use crate::store::{
    events::NewEvent,
    group_commit::{answer, same_failure, Committer, Job, MAX_GROUP},
    Created, Pin,
};
use crate::{error::Result, Error};

/// Starts the loop; it connects when the first create comes, and again after a failure
/// (waiting at most as long as a request waits for the pool).
pub(super) fn start(options: PgConnectOptions) -> Result<Committer> {
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

/// Writes the group in one transaction: one statement for the pins, one for their events.
/// Jobs here carry no idempotency claim (keyed creates don't come to this loop; see
/// `PgStore::insert_pins`). When PostgreSQL refuses it, each create is retried on its own,
/// so only the refused one fails. Returns one result per create, and false when the
/// connection can't be trusted any more (a create that met that is answered 503: its
/// outcome is unknown, as when any connection breaks mid-statement).
async fn commit(conn: &mut PgConnection, group: &[Job]) -> (Vec<Result<Created>>, bool) {
    let error = match store(conn, group.iter()).await {
        Ok(()) => return (group.iter().map(|_| Ok(Created::Stored)).collect(), true),
        // A lone create refused (a taken key) is answered with its own error.
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
    tracing::debug!(%error, creates = group.len(), "a group insert was refused; retrying each create");
    let mut results = Vec::with_capacity(group.len());
    for job in group {
        match store(conn, std::iter::once(job)).await {
            Ok(()) => results.push(Ok(Created::Stored)),
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

/// Stores the jobs' pins and events in one transaction.
async fn store<'a>(
    conn: &mut PgConnection,
    jobs: impl Iterator<Item = &'a Job> + Clone,
) -> Result<(), sqlx::Error> {
    let rows: Vec<(&str, &Pin)> = jobs
        .clone()
        .flat_map(|job| job.pins.iter().map(|pin| (job.ws.as_str(), pin)))
        .collect();
    let events: Vec<NewEvent> = jobs.flat_map(|job| job.events.iter().cloned()).collect();
    let mut tx = conn.begin().await?;
    insert_rows(&mut tx, &rows, None).await?;
    append(&mut tx, &events).await?;
    tx.commit().await
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
        group_commit::tests::{job, pin, stored_unless_poisoned},
        keys::KeyStore,
        postgres::PgStore,
        sql::Backend,
    };

    /// A server that accepts the connection and never answers: the loop gives up connecting
    /// after [`WAIT_FOR_CONNECTION`], and the create gets a 503 rather than waiting forever.
    #[tokio::test]
    async fn a_server_that_never_answers_is_a_503_not_a_hang() {
        let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = silent.local_addr().unwrap().port();
        let hold = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = silent.accept().await {
                held.push(socket);
            }
        });
        let options = PgConnectOptions::new()
            .host("127.0.0.1")
            .port(port)
            .username("corkboard")
            .database("corkboard");
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
    /// others, on a database of its own (`TEST_PG_URL`, as the API tests): only that create
    /// fails, the others are stored, and the connection stays usable. (The API test
    /// `pins::a_create_the_database_refuses_fails_alone` meets a shared group only when the
    /// timing makes one.)
    #[tokio::test]
    async fn a_refused_create_fails_alone_in_every_kind_of_group() {
        let admin = std::env::var("TEST_PG_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".into());
        let name = format!("corkboard_commit_{}", uuid::Uuid::new_v4().simple());
        let required = ["TEST_PG_URL", "CI"]
            .iter()
            .any(|name| std::env::var(name).is_ok_and(|v| !v.is_empty()));
        let mut server = match PgConnection::connect(&format!("{admin}/postgres")).await {
            Ok(server) => server,
            Err(e) if !required => {
                eprintln!("PostgreSQL is not running on {admin} ({e}): this test was left out");
                return;
            }
            Err(e) => panic!("PostgreSQL at {admin} (TEST_PG_URL or CI is set): {e}"),
        };
        sqlx::query(&format!("CREATE DATABASE {name}"))
            .execute(&mut server)
            .await
            .unwrap();
        let url = format!("{admin}/{name}");
        let store = PgStore::open(&url, 2, crate::events::Records::shared("http://test"))
            .await
            .unwrap();
        let ws = store.ensure_workspace("default").await.unwrap();
        let mut conn = PgConnection::connect(&url).await.unwrap();
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
        let _ = conn.close().await;
        store.close().await;
        drop(store);
        sqlx::query(&format!("DROP DATABASE {name} WITH (FORCE)"))
            .execute(&mut server)
            .await
            .unwrap();
    }
}
