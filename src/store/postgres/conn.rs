//! PostgreSQL connections: one per request, handed from request to request without a round
//! trip.
//!
//! sqlx returns a connection to its pool with a round trip (a `Sync` and its
//! `ReadyForQuery`, `sqlx-core` 0.8 `pool/connection.rs`, not configurable), so the three
//! statements of a request (key lookup, rate-limit check, the handler's) would cost six round
//! trips on the pool. Two things remove the extra ones:
//!
//! - Inside [`with_request_connection`] a request's statements share one connection: the
//!   first takes it, the next ones reuse it.
//! - When the request ends cleanly its connection goes onto [`Connections`]' stack of warm
//!   connections, still checked out of sqlx's pool, and the next request takes it from there
//!   without the ping. A request that saw a connection-level error ([`note_error`], on each
//!   result the store hands out), was
//!   cancelled mid-statement or left a dropped transaction's `ROLLBACK` unsent gives its
//!   connection back to sqlx's pool instead, whose ping closes it if it is broken; so does
//!   every finished connection while some request waits on sqlx's pool (the pool hands it to
//!   the first waiter; the warm stack would starve them), and a warm connection found unused
//!   for longer than [`WARM_FOR`]. A warm connection holds no transaction, so one left
//!   waiting for the next request costs nothing but its idle backend. sqlx's pool still
//!   bounds the number of connections and times out waiting for one.
//!
//! The slot is task-local, so the store's methods keep their signatures and the operations
//! stay plain functions of the store: HTTP, MCP or pages decide whether calls share a
//! connection by running them inside a scope. Outside one (the CLI, background tasks) each
//! statement takes its own connection and returns it through sqlx.

use std::{
    cell::RefCell,
    future::Future,
    ops::{Deref, DerefMut},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use sqlx::{pool::PoolConnection, Connection, PgConnection, PgPool, Postgres, Transaction};

use super::breaker::{Breaker, SUSPECT_AFTER};
use crate::store::sql::Begin;
use crate::{
    error::{Error, Result},
    metrics::PoolUse,
};

/// A warm connection unused for longer goes back through sqlx's pool (and its ping) rather
/// than being reused unchecked.
const WARM_FOR: Duration = Duration::from_secs(1);

tokio::task_local! {
    static REQUEST: RefCell<Slot>;
}

/// The request's connection between statements, where it came from, and whether it may be
/// reused without a check.
#[derive(Default)]
struct Slot {
    held: Option<(PoolConnection<Postgres>, Connections)>,
    suspect: bool,
}

/// sqlx's pool and the warm connections that requests finished with.
#[derive(Clone)]
pub struct Connections {
    pool: PgPool,
    warm: Arc<Mutex<Warm>>,
    breaker: Arc<Breaker>,
}

/// The warm stack, most recently used last, and how many requests wait on sqlx's pool: while
/// any does, a finished connection goes back to the pool, where the first waiter gets it.
#[derive(Default)]
struct Warm {
    stack: Vec<(PoolConnection<Postgres>, Instant)>,
    waiting: usize,
}

impl Connections {
    pub fn new(pool: PgPool) -> Self {
        Connections {
            pool,
            warm: Arc::default(),
            breaker: Arc::default(),
        }
    }

    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// A connection for the next statement: the request's when in a scope, else a warm one
    /// or the pool's.
    pub(crate) async fn get(&self) -> Result<Conn> {
        let held = REQUEST.try_with(|slot| slot.borrow_mut().held.take());
        let shared = held.is_ok();
        let conn = match held {
            Ok(Some((conn, _))) => conn,
            _ => self.acquire().await?,
        };
        Ok(Conn {
            conn: Some(conn),
            home: self.clone(),
            shared,
            beginning: false,
        })
    }

    /// The most recently used warm connection if it is fresh, else one from the pool.
    async fn acquire(&self) -> Result<PoolConnection<Postgres>, sqlx::Error> {
        let stale = {
            let Ok(mut warm) = self.warm.lock() else {
                return self.pooled().await;
            };
            let stale = match warm.stack.pop() {
                Some((conn, since)) if since.elapsed() < WARM_FOR => return Ok(conn),
                // Older ones are below it: all of them go back through the pool's check.
                Some(stale) => {
                    let mut stale = vec![stale];
                    stale.append(&mut warm.stack);
                    stale
                }
                None => Vec::new(),
            };
            // Counted under the same lock, so a connection finished from now on goes to the
            // pool, where this request waits for it.
            warm.waiting += 1;
            stale
        };
        let _waiting = Waiting(&self.warm);
        drop(stale);
        self.pooled().await
    }

    /// A connection from sqlx's pool, or at once `PoolTimedOut` (a 503) while the database
    /// is known to be unreachable ([`Breaker`]).
    async fn pooled(&self) -> Result<PoolConnection<Postgres>, sqlx::Error> {
        if self.breaker.is_open() {
            return Err(sqlx::Error::PoolTimedOut);
        }
        let acquire = self.pool.acquire();
        tokio::pin!(acquire);
        if let Ok(acquired) = tokio::time::timeout(SUSPECT_AFTER, &mut acquire).await {
            return acquired;
        }
        if !self.breaker.reachable(&self.pool.connect_options()).await {
            return Err(sqlx::Error::PoolTimedOut);
        }
        acquire.await
    }

    fn put_warm(&self, conn: PoolConnection<Postgres>) {
        if self.pool.is_closed() {
            return;
        }
        if let Ok(mut warm) = self.warm.lock() {
            if warm.waiting == 0 {
                warm.stack.push((conn, Instant::now()));
            }
        }
    }

    /// How the pool stands: warm connections are checked out of sqlx's pool but wait for a
    /// request, so they are open, not in use.
    pub(crate) fn usage(&self) -> PoolUse {
        let warm = self.warm.lock().map_or(0, |w| w.stack.len());
        let open = self.pool.size();
        let idle = u32::try_from(self.pool.num_idle() + warm).unwrap_or(u32::MAX);
        PoolUse {
            pool: "postgres",
            open,
            in_use: open.saturating_sub(idle),
        }
    }

    /// Gives the warm connections back and closes the pool.
    pub async fn close(&self) {
        let warm = self.warm.lock().map(|mut w| std::mem::take(&mut w.stack));
        drop(warm);
        self.pool.close().await;
    }
}

/// Uncounts a request waiting on the pool when it stops waiting (or is cancelled).
struct Waiting<'a>(&'a Mutex<Warm>);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if let Ok(mut warm) = self.0.lock() {
            warm.waiting = warm.waiting.saturating_sub(1);
        }
    }
}

/// Runs `work` so that the PostgreSQL statements it runs share one connection, which is kept
/// warm for the next request if `work` ends without a connection-level error.
pub async fn with_request_connection<F: Future>(work: F) -> F::Output {
    REQUEST
        .scope(RefCell::default(), async move {
            let output = work.await;
            let finished = REQUEST.with(|slot| {
                let mut slot = slot.borrow_mut();
                let held = slot.held.take();
                (held, slot.suspect)
            });
            if let (Some((conn, home)), false) = finished {
                // A transaction dropped on an error path leaves its ROLLBACK queued, unsent,
                // with the rows still locked: only sqlx's release (whose ping sends it) may
                // take such a connection. sqlx's own pool asks the same question.
                if !conn.should_flush() {
                    home.put_warm(conn);
                }
            }
            output
        })
        .await
}

/// Whether the running request holds a connection (between its statements).
pub fn holds_connection() -> bool {
    REQUEST
        .try_with(|slot| slot.borrow().held.is_some())
        .unwrap_or(false)
}

/// Takes the request's connection now if it holds none; outside a request's scope, nothing.
pub(crate) async fn hold_request_connection(conns: &Connections) -> Result<()> {
    if REQUEST.try_with(|_| ()).is_ok() && !holds_connection() {
        drop(conns.get().await?);
    }
    Ok(())
}

/// Gives the request's connection back to the pool now, before the request ends: for work
/// that may wait on the client (reading a slow body) and must not hold a connection meanwhile.
pub fn release_request_connection() {
    let released = REQUEST.try_with(|slot| slot.borrow_mut().held.take());
    drop(released);
}

/// Marks the request's connection as one to check before reuse when `error` may have come
/// from the connection itself: every failure of the database but those the server reported
/// on a healthy connection (a constraint, a bad value). The store calls it on each result it
/// hands out ([`crate::store::Store`]), and the rate limiter on its own.
pub(crate) fn note_error(error: &Error) {
    let from_connection = match error {
        Error::Unavailable => true,
        Error::Internal(cause) => cause
            .downcast_ref::<sqlx::Error>()
            .is_some_and(|e| !reported_on_healthy_connection(e)),
        _ => false,
    };
    if from_connection {
        mark_suspect();
    }
}

/// Marks the request's connection as one to check before reuse: a statement on it was
/// abandoned midway (a timeout).
pub(crate) fn note_abandoned() {
    mark_suspect();
}

fn reported_on_healthy_connection(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(db)
        if !db.code().is_some_and(|c| c.starts_with("08") || c.starts_with("57")))
}

fn mark_suspect() {
    let _ = REQUEST.try_with(|slot| slot.borrow_mut().suspect = true);
}

/// A pooled connection that, when dropped inside a request scope, goes back to the scope's
/// slot for the request's next statement; outside one, back to sqlx's pool.
pub(crate) struct Conn {
    conn: Option<PoolConnection<Postgres>>,
    home: Connections,
    shared: bool,
    /// Set while a `BEGIN` is in flight: dropped then, the connection may be inside a
    /// transaction sqlx doesn't know of ([`Begin`]).
    beginning: bool,
}

impl Begin for Conn {
    async fn begin(&mut self) -> Result<Transaction<'_, Postgres>, sqlx::Error> {
        let Conn {
            conn, beginning, ..
        } = self;
        let conn = conn.as_deref_mut().expect("present until dropped");
        *beginning = true;
        let tx = conn.begin().await;
        *beginning = false;
        tx
    }
}

/// Ends the transaction a cancelled `BEGIN` may have opened, then lets the connection go
/// back to sqlx's pool (its ping checks it). A `ROLLBACK` outside a transaction is only a
/// warning, so it is sent whether or not the `BEGIN` reached the server.
fn roll_back_in_background(mut conn: PoolConnection<Postgres>) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    runtime.spawn(async move {
        if let Err(error) = sqlx::Executor::execute(&mut *conn, "ROLLBACK").await {
            tracing::debug!(%error, "ending a cancelled BEGIN");
            // Broken or not, this session must not be handed out again.
            let _ = conn.close().await;
        }
    });
}

impl Deref for Conn {
    type Target = PgConnection;

    fn deref(&self) -> &PgConnection {
        self.conn.as_deref().expect("present until dropped")
    }
}

impl DerefMut for Conn {
    fn deref_mut(&mut self) -> &mut PgConnection {
        self.conn.as_deref_mut().expect("present until dropped")
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        if self.beginning {
            if let Some(conn) = self.conn.take() {
                roll_back_in_background(conn);
            }
            return;
        }
        if let (true, Some(conn)) = (self.shared, self.conn.take()) {
            let home = self.home.clone();
            // If the scope ended first, the connection simply returns to the pool.
            let _ = REQUEST.try_with(|slot| slot.borrow_mut().held.replace((conn, home)));
        }
    }
}

/// A PostgreSQL address that accepts connections and never answers (for tests of what waits
/// on the database), and the task holding its connections open.
#[cfg(test)]
pub(crate) async fn silent_server() -> (
    sqlx::postgres::PgConnectOptions,
    tokio::task::JoinHandle<()>,
) {
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = silent.local_addr().unwrap().port();
    let hold = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            held.push(socket);
        }
    });
    let options = sqlx::postgres::PgConnectOptions::new()
        .host("127.0.0.1")
        .port(port)
        .username("corkboard")
        .database("corkboard");
    (options, hold)
}

/// A fresh database of a test's own on the tests' server (`TEST_PG_URL`, as the API tests).
#[cfg(test)]
pub(crate) struct TestDatabase {
    pub url: String,
    name: String,
    server: PgConnection,
}

#[cfg(test)]
impl TestDatabase {
    /// `None`, said on stderr, when no server answers and neither `TEST_PG_URL` nor `CI` is
    /// set: then the test is left out, as the API tests' PostgreSQL half is.
    pub async fn create(prefix: &str) -> Option<TestDatabase> {
        let admin = std::env::var("TEST_PG_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".into());
        let required = ["TEST_PG_URL", "CI"]
            .iter()
            .any(|name| std::env::var(name).is_ok_and(|v| !v.is_empty()));
        let mut server = match PgConnection::connect(&format!("{admin}/postgres")).await {
            Ok(server) => server,
            Err(e) if !required => {
                eprintln!("PostgreSQL is not running on {admin} ({e}): this test was left out");
                return None;
            }
            Err(e) => panic!("PostgreSQL at {admin} (TEST_PG_URL or CI is set): {e}"),
        };
        let name = format!("corkboard_{prefix}_{}", uuid::Uuid::new_v4().simple());
        sqlx::query(&format!("CREATE DATABASE {name}"))
            .execute(&mut server)
            .await
            .unwrap();
        Some(TestDatabase {
            url: format!("{admin}/{name}"),
            name,
            server,
        })
    }

    pub async fn remove(mut self) {
        sqlx::query(&format!("DROP DATABASE {} WITH (FORCE)", self.name))
            .execute(&mut self.server)
            .await
            .unwrap();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the request's connection is marked to be checked after `work`.
    async fn suspect_after(work: impl FnOnce()) -> bool {
        REQUEST
            .scope(RefCell::default(), async {
                work();
                REQUEST.with(|slot| slot.borrow().suspect)
            })
            .await
    }

    #[tokio::test]
    async fn only_failures_that_may_come_from_the_connection_mark_it() {
        assert!(suspect_after(|| note_error(&Error::Unavailable)).await);
        assert!(suspect_after(|| note_error(&Error::from(sqlx::Error::RowNotFound))).await);
        assert!(suspect_after(note_abandoned).await);
        assert!(!suspect_after(|| note_error(&Error::Conflict("taken".into()))).await);
        assert!(!suspect_after(|| note_error(&Error::internal("a bug"))).await);
    }

    /// A `BEGIN` dropped after it was sent, before its answer was read (a client hanging up
    /// mid-request), leaves nothing open: the next use of that connection (the pool's only
    /// one) is not inside a transaction. Needs PostgreSQL (`TEST_PG_URL`, as the API tests).
    #[tokio::test]
    async fn a_cancelled_begin_leaves_no_transaction_open() {
        let admin = std::env::var("TEST_PG_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".into());
        let pool = sqlx::postgres::PgPoolOptions::new()
            .max_connections(1)
            .connect(&format!("{admin}/postgres"))
            .await;
        let pool = match pool {
            Ok(pool) => pool,
            Err(e) if std::env::var("TEST_PG_URL").is_err() && std::env::var("CI").is_err() => {
                eprintln!("PostgreSQL is not running on {admin} ({e}): this test was left out");
                return;
            }
            Err(e) => panic!("PostgreSQL at {admin} (TEST_PG_URL or CI is set): {e}"),
        };
        let conns = Connections::new(pool);
        // Polled once, `begin` has sent BEGIN and waits for the answer; the answer is
        // sometimes there already (then the transaction is sqlx's to end): always, while
        // the other tests keep both cores busy and this thread loses the CPU between the
        // write and the read. So it tries for up to 20 s, not a number of times.
        let mut cancelled = false;
        let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while std::time::Instant::now() < until {
            let mut conn = conns.get().await.unwrap();
            let begin = conn.begin();
            tokio::pin!(begin);
            let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
            if begin.as_mut().poll(&mut cx).is_pending() {
                cancelled = true;
                break;
            }
        }
        assert!(cancelled, "no BEGIN was caught waiting for its answer");
        let mut conn = conns.get().await.unwrap();
        // One simple-protocol statement: outside a transaction its own implicit one starts
        // as it arrives, inside one `now()` is the transaction's start.
        let row = sqlx::raw_sql("SELECT now() <> statement_timestamp()")
            .fetch_one(&mut *conn)
            .await
            .unwrap();
        let in_transaction: bool = sqlx::Row::get(&row, 0);
        assert!(
            !in_transaction,
            "the cancelled BEGIN's transaction is still open"
        );
    }

    #[tokio::test]
    async fn converting_a_database_error_marks_nothing() {
        assert!(
            !suspect_after(|| {
                let _ = Error::from(sqlx::Error::PoolTimedOut);
            })
            .await
        );
    }
}
