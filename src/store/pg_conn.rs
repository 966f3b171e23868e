//! One pooled PostgreSQL connection per request.
//!
//! sqlx returns a connection to its pool with a round trip (a `Sync` and its
//! `ReadyForQuery`), so three statements on the pool cost six round trips: the key lookup,
//! the rate-limit check and the handler's statement would each take and return a
//! connection. Inside [`with_request_connection`] they share one instead: the first statement
//! takes it from the pool, the next ones reuse it, and it goes back when the request is
//! answered. Outside such a scope (the CLI, background tasks) every statement takes its own.
//!
//! The slot is task-local, so the store's methods keep their signatures and the operations
//! stay plain functions of the store: HTTP, MCP or pages decide whether a call shares a
//! connection by whether they run it inside a scope.

use std::{
    cell::RefCell,
    future::Future,
    ops::{Deref, DerefMut},
};

use sqlx::{pool::PoolConnection, PgConnection, PgPool, Postgres};

use crate::error::Result;

tokio::task_local! {
    static REQUEST_CONNECTION: RefCell<Option<PoolConnection<Postgres>>>;
}

/// Runs `work` so that the PostgreSQL statements it runs share one pooled connection.
pub async fn with_request_connection<F: Future>(work: F) -> F::Output {
    REQUEST_CONNECTION.scope(RefCell::new(None), work).await
}

/// Gives the request's connection back to the pool now, before the request ends: for work
/// that may wait on the client (reading a slow body) and must not hold a connection meanwhile.
pub fn release_request_connection() {
    let released = REQUEST_CONNECTION.try_with(|slot| slot.borrow_mut().take());
    drop(released);
}

/// A connection for the next statement: the request's when in a scope, else the pool's.
pub(crate) async fn connection(pool: &PgPool) -> Result<Conn> {
    let (shared, held) = match REQUEST_CONNECTION.try_with(|slot| slot.borrow_mut().take()) {
        Ok(held) => (true, held),
        Err(_) => (false, None),
    };
    let conn = match held {
        Some(conn) => conn,
        None => pool.acquire().await?,
    };
    Ok(Conn {
        conn: Some(conn),
        shared,
    })
}

/// A pooled connection that, when dropped inside a request scope, goes back to the scope's
/// slot for the request's next statement.
pub(crate) struct Conn {
    conn: Option<PoolConnection<Postgres>>,
    shared: bool,
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
        if let (true, Some(conn)) = (self.shared, self.conn.take()) {
            // Outside the scope (it ended first) the connection simply returns to the pool.
            let _ = REQUEST_CONNECTION.try_with(|slot| slot.borrow_mut().replace(conn));
        }
    }
}
