//! Moving data out of and between stores (CONTRACT.md 18).
//!
//! - `archive.rs`: one workspace as a JSON archive: [`export`] (the CLI's `export` and
//!   `GET /v1/export`) and [`import`] (the CLI's `import`, into an empty workspace).
//! - `migrate.rs`: [`migrate_store`], a whole store copied into an empty one, SQLite or
//!   PostgreSQL either side.
//! - `rows.rs`: rows of any table as typed cells, read a page at a time (keyset by primary
//!   key or `seq`) and written many to a statement, once for both databases.
//!
//! Everything streams: a page of rows is read, written out, and dropped before the next,
//! so memory stays bounded whatever the store's size. Reads run in one transaction (one
//! snapshot); writes in one transaction of the target, so a refusal writes nothing.

mod archive;
pub mod command;
mod migrate;
mod rows;

pub use archive::{export, import, Imported, RestoredHook, Sink, Workspace, FORMAT, VERSION};
pub use migrate::{migrate_store, Counted};

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

use crate::error::Result;
use crate::store::sql::Backend;

/// What differs between the databases for a transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// Makes the transaction just begun on `conn` one snapshot. SQLite's read transaction
    /// is one already. PostgreSQL's request connections end a transaction idle for 5 s
    /// (`idle_in_transaction_session_timeout`): a transfer waits on its other side (the
    /// target, a slow client), so it gets 10 minutes.
    async fn snapshot<B: Backend>(self, conn: &mut B::Db) -> Result<()> {
        if self == Dialect::Postgres {
            B::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                .execute(&mut *conn)
                .await?;
            self.patient::<B>(conn).await?;
        }
        Ok(())
    }

    /// The statement that begins a transaction which reads and then writes. SQLite's plain
    /// `BEGIN` takes the write lock at the first write, and when another process (a server
    /// running on the same file) committed after this transaction's first read, that write
    /// fails at once with `SQLITE_BUSY`, without waiting: the snapshot it read is gone.
    /// `BEGIN IMMEDIATE` takes the lock first, waiting for it as long as the busy timeout
    /// allows, so the server's writes wait for the transfer instead (up to their own busy
    /// timeout; then they answer 503).
    fn begin_write(self) -> &'static str {
        match self {
            Dialect::Sqlite => "BEGIN IMMEDIATE",
            Dialect::Postgres => "BEGIN",
        }
    }

    /// See [`Dialect::snapshot`].
    async fn patient<B: Backend>(self, conn: &mut B::Db) -> Result<()> {
        if self == Dialect::Postgres {
            B::query("SET LOCAL idle_in_transaction_session_timeout = '10min'")
                .execute(conn)
                .await?;
        }
        Ok(())
    }

    /// The tables of the schema, but the migrations' own.
    fn list_tables(self) -> &'static str {
        match self {
            Dialect::Sqlite => {
                "SELECT name FROM sqlite_master WHERE type = 'table' \
                 AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name <> '_sqlx_migrations'"
            }
            Dialect::Postgres => {
                "SELECT table_name::text FROM information_schema.tables \
                 WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' \
                 AND table_name <> '_sqlx_migrations'"
            }
        }
    }

    /// After rows with their own `seq` went into `table`: PostgreSQL's identity sequence
    /// moves past them (SQLite's `AUTOINCREMENT` follows the largest by itself).
    async fn after_identity_copy<B: Backend>(self, conn: &mut B::Db, table: &str) -> Result<()> {
        if self == Dialect::Postgres {
            let sql = format!(
                "SELECT setval(pg_get_serial_sequence('{table}', 'seq'), \
                 COALESCE((SELECT MAX(seq) FROM {table}), 0) + 1, false)"
            );
            B::query(&sql).execute(conn).await?;
        }
        Ok(())
    }
}

/// A progress bar on stderr when it is a terminal; nothing otherwise (a pipe, a log, a
/// test), so scripts read only the command's own output.
pub struct Progress(Option<ProgressBar>);

impl Progress {
    /// Shown only when stderr is a terminal.
    pub fn on_terminal() -> Progress {
        Progress(std::io::stderr().is_terminal().then(ProgressBar::hidden))
    }

    /// Never shown (the HTTP export).
    pub fn none() -> Progress {
        Progress(None)
    }

    fn shown(&self) -> bool {
        self.0.is_some()
    }

    /// Starts counting towards `total` rows.
    fn start(&self, total: i64) {
        if let Some(bar) = &self.0 {
            bar.set_length(u64::try_from(total).unwrap_or_default());
            bar.set_style(
                ProgressStyle::with_template(
                    "{elapsed_precise} [{wide_bar}] {human_pos}/{human_len} rows ({per_sec}, {eta} left)",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        }
    }

    /// Starts counting rows towards a total not known in advance.
    fn start_unknown(&self) {
        if let Some(bar) = &self.0 {
            bar.set_style(
                ProgressStyle::with_template(
                    "{elapsed_precise} {spinner} {human_pos} rows ({per_sec})",
                )
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        }
    }

    fn advance(&self, rows: usize) {
        if let Some(bar) = &self.0 {
            bar.inc(u64::try_from(rows).unwrap_or_default());
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}

/// A [`Sink`] over anything written asynchronously (a file, stdout).
pub struct Writer<W>(pub W);

impl<W: tokio::io::AsyncWrite + Unpin + Send> Sink for Writer<W> {
    async fn put(&mut self, chunk: Vec<u8>) -> Result<()> {
        use tokio::io::AsyncWriteExt;
        self.0
            .write_all(&chunk)
            .await
            .map_err(|e| crate::Error::internal_in("writing the archive", e))
    }
}
