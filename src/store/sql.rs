//! What the shared store code writes its statements against, so that the logic of an
//! operation is written once for both databases ([`Backend`]).
//!
//! sqlx's own traits are generic over the database, but code generic over
//! `sqlx::Database` must repeat a wall of higher-ranked bounds on every function (what may
//! be bound, decoded, executed). Here each of those is one trait whose bounds name both
//! databases at once ([`Value`], [`Field`], [`Column`]), so they are implied wherever the
//! trait is, and the statement, row and connection types of each database are stamped from
//! one macro ([`dialect!`]). Lists of strings (a pin's tags, a batch's ids) are the one kind
//! of value the two store differently: a JSON array in SQLite's text, a `text[]` in
//! PostgreSQL.

use sqlx::{
    postgres::PgRow, sqlite::SqliteRow, ColumnIndex, Decode, Encode, Postgres, Sqlite, Type,
};
use std::{future::Future, ops::DerefMut, pin::Pin};

use super::events::{Commits, NewEvent, Render};
use super::{Created, Idempotent, PinKey, PinQuery};
use crate::error::Result;

/// A value either database can bind to a statement.
pub(crate) trait Value<'q>:
    Encode<'q, Sqlite> + Type<Sqlite> + Encode<'q, Postgres> + Type<Postgres> + Send + 'q
{
}

impl<'q, T> Value<'q> for T where
    T: Encode<'q, Sqlite> + Type<Sqlite> + Encode<'q, Postgres> + Type<Postgres> + Send + 'q
{
}

/// A value either database can read from a column.
pub(crate) trait Field:
    for<'r> Decode<'r, Sqlite> + Type<Sqlite> + for<'r> Decode<'r, Postgres> + Type<Postgres>
{
}

impl<T> Field for T where
    T: for<'r> Decode<'r, Sqlite> + Type<Sqlite> + for<'r> Decode<'r, Postgres> + Type<Postgres>
{
}

/// A column, by name or by position.
pub(crate) trait Column: ColumnIndex<SqliteRow> + ColumnIndex<PgRow> + Copy {}

impl<T: ColumnIndex<SqliteRow> + ColumnIndex<PgRow> + Copy> Column for T {}

/// A row of either database.
pub(crate) trait Record: Send {
    fn get<T: Field>(&self, column: impl Column) -> Result<T, sqlx::Error>;
    /// A list of strings (see the module's doc).
    fn list(&self, column: impl Column) -> Result<Vec<String>>;
}

/// A connection of either database (`begin` comes from `sqlx::Connection`), with the
/// statements it runs. Shared code builds them through [`Statement`].
pub(crate) trait Db: sqlx::Connection + Sized {
    type Row: Record;
    type Query<'q>: Send;
    fn query(sql: &str) -> Self::Query<'_>;
    fn bind<'q, T: Value<'q>>(query: Self::Query<'q>, value: T) -> Self::Query<'q>;
    /// Binds a list of strings (see the module's doc).
    fn bind_list<'q>(query: Self::Query<'q>, list: &'q [String]) -> Self::Query<'q>;
    /// Runs it; the number of rows it changed.
    fn execute<'c, 'q: 'c>(&'c mut self, query: Self::Query<'q>) -> Run<'c, u64>;
    fn fetch_optional<'c, 'q: 'c>(
        &'c mut self,
        query: Self::Query<'q>,
    ) -> Run<'c, Option<Self::Row>>;
    fn fetch_all<'c, 'q: 'c>(&'c mut self, query: Self::Query<'q>) -> Run<'c, Vec<Self::Row>>;
}

/// A running statement. Boxed, as sqlx's own are: an `async fn` here would make every
/// request future that awaits one prove its `Send` for all lifetimes, which the compiler
/// can't yet (rust-lang/rust#100013).
pub(crate) type Run<'c, T> = Pin<Box<dyn Future<Output = Result<T, sqlx::Error>> + Send + 'c>>;

/// A statement with its arguments, for a connection of type `C`: what shared code writes
/// as it would write sqlx's `query(...).bind(...).execute(...)`.
pub(crate) struct Statement<'q, C: Db>(C::Query<'q>);

impl<'q, C: Db> Statement<'q, C> {
    pub(crate) fn bind<T: Value<'q>>(self, value: T) -> Self {
        Statement(C::bind(self.0, value))
    }

    /// Binds a list of strings (see the module's doc).
    pub(crate) fn bind_list(self, list: &'q [String]) -> Self {
        Statement(C::bind_list(self.0, list))
    }

    /// Runs it; the number of rows it changed.
    pub(crate) fn execute<'c>(self, conn: &'c mut C) -> Run<'c, u64>
    where
        'q: 'c,
    {
        conn.execute(self.0)
    }

    pub(crate) fn fetch_optional<'c>(self, conn: &'c mut C) -> Run<'c, Option<C::Row>>
    where
        'q: 'c,
    {
        conn.fetch_optional(self.0)
    }

    pub(crate) fn fetch_all<'c>(self, conn: &'c mut C) -> Run<'c, Vec<C::Row>>
    where
        'q: 'c,
    {
        conn.fetch_all(self.0)
    }
}

/// One database: its connections, the statements whose text differs between the two, and
/// the operations whose logic does. What both do alike is written once, as the blanket
/// implementations of [`super::KeyStore`], [`super::PinStore`], [`super::BoardStore`] and
/// [`super::IdentityStore`] over this trait.
pub(crate) trait Backend: Sync {
    type Db: Db;
    async fn close(&self);
    /// Stores new pins in one transaction, behind the idempotency claim when there is one.
    async fn insert_pins(
        &self,
        ws: &str,
        pins: &[super::Pin],
        idem: Option<&Idempotent>,
    ) -> Result<Created>;
    /// The workspace's pins among `ids`, in no particular order.
    /// Queues `update` for the store's group commit ([`super::group_commit`]); `event` is
    /// its event without boards.
    async fn commit_update(
        &self,
        ws: &str,
        update: super::group_commit::Update,
        events: Vec<NewEvent>,
    ) -> Result<super::group_commit::Outcome>;
    async fn get_pins(&self, ws: &str, ids: &[String]) -> Result<Vec<super::Pin>>;
    /// The pins of a page, newest first: which pins and which state of each (the record is
    /// read with [`Backend::get_pins`] only when the caller hasn't rendered that state yet).
    async fn list_pin_keys(&self, ws: &str, query: &PinQuery) -> Result<Vec<PinKey>>;

    type Conn: DerefMut<Target = Self::Db> + Begin + Send;
    /// A connection for reads (on SQLite, a read-only one).
    async fn reader(&self) -> Result<Self::Conn>;
    /// A connection for writes (on SQLite, the one writer).
    async fn writer(&self) -> Result<Self::Conn>;

    /// Ends a `SELECT` inside a write transaction that must keep its rows from changing
    /// until the commit: `FOR UPDATE` on PostgreSQL; nothing on SQLite, whose one writer
    /// already excludes every other.
    const FOR_UPDATE: &'static str;
    /// The same for a row that must only not go away (`FOR KEY SHARE`).
    const FOR_KEY_SHARE: &'static str;
    /// The workspace's (`$1`) pins among the list `$2`, in id order, locked for the
    /// transaction ([`Backend::FOR_UPDATE`]).
    const LOCK_PINS: &'static str;
    /// Ends a `SELECT` that locks the rows it reads and skips those another transaction
    /// holds (PostgreSQL: replicas split the work; SQLite's one writer needs nothing).
    const SKIP_LOCKED: &'static str;
    /// Removes the placements of the pins in the list `$1`.
    const UNPLACE_PINS: &'static str;
    /// Removes the workspace's (`$1`) pins in the list `$2`.
    const DELETE_PINS: &'static str;
    /// Records webhook `$1`'s attempts, `$2` a JSON array of `[event_id, event_type,
    /// status_code, duration_ms, error, at]` in order: one statement of two parameters,
    /// where a row of parameters each would bind hundreds (and SQLite looks each up by name
    /// in a list as long as the statement's: a tenth of a delivery's CPU went there).
    const INSERT_DELIVERIES: &'static str;

    /// Renders the records events carry.
    fn render(&self) -> &dyn Render;
    /// Where the live streams learn of new events.
    fn commits(&self) -> &Commits;
    /// Counts changes to stored credentials ([`super::AuthEpoch`]): the writes of keys,
    /// memberships and roles call its `changed` after their commit.
    fn auth(&self) -> &super::AuthEpoch;
    /// Called after a commit that appended events of workspace `ws`: on SQLite it tells the
    /// streams; on PostgreSQL the commit's own `NOTIFY` does, on every replica.
    fn committed(&self, ws: &str);
    /// Appends `events` inside the caller's transaction, as its last statement before the
    /// commit (on PostgreSQL it serialises the workspace's appends until the commit).
    fn append_events<'c>(tx: &'c mut Self::Db, events: &'c [NewEvent]) -> Run<'c, ()>;

    /// The test that `column` is among the list of strings bound as parameter `$n`
    /// ([`Statement::bind_list`]).
    fn in_list(column: &str, n: u8) -> String;

    fn query(sql: &str) -> Statement<'_, Self::Db> {
        Statement(Self::Db::query(sql))
    }
}

/// Opens a transaction on a connection the store handed out. Store code calls this rather
/// than `sqlx::Connection::begin` on the connection beneath: on PostgreSQL a `begin` cancelled
/// between sending `BEGIN` and reading its answer (a client hanging up mid-request) leaves the
/// session inside a transaction that sqlx neither tracks nor rolls back (sqlx 0.8.6,
/// transact-rs/sqlx#4393), so later statements on that pooled connection would run, and hold
/// their row locks, inside it. The PostgreSQL connection notices the cancelled `BEGIN` and
/// ends it (`postgres/conn.rs`); SQLite's worker thread already does.
pub(crate) trait Begin: DerefMut<Target: sqlx::Connection> {
    fn begin(
        &mut self,
    ) -> impl Future<
        Output = Result<
            sqlx::Transaction<'_, <Self::Target as sqlx::Connection>::Database>,
            sqlx::Error,
        >,
    > + Send;
}

/// Stamps [`Record`] and [`Db`] for one database: `$list_column` reads a list of strings
/// from a row, `$bind_list` binds one to a query.
macro_rules! dialect {
    ($db:ty, $conn:ty, $row:ty, $list_column:path, $bind_list:path) => {
        impl $crate::store::sql::Record for $row {
            fn get<T: $crate::store::sql::Field>(
                &self,
                column: impl $crate::store::sql::Column,
            ) -> Result<T, sqlx::Error> {
                sqlx::Row::try_get(self, column)
            }

            fn list(
                &self,
                column: impl $crate::store::sql::Column,
            ) -> $crate::error::Result<Vec<String>> {
                $list_column(self, column)
            }
        }

        impl $crate::store::sql::Db for $conn {
            type Row = $row;
            type Query<'q> = sqlx::query::Query<'q, $db, <$db as sqlx::Database>::Arguments<'q>>;

            fn query(sql: &str) -> Self::Query<'_> {
                sqlx::query(sql)
            }

            fn bind<'q, T: $crate::store::sql::Value<'q>>(
                query: Self::Query<'q>,
                value: T,
            ) -> Self::Query<'q> {
                query.bind(value)
            }

            fn bind_list<'q>(query: Self::Query<'q>, list: &'q [String]) -> Self::Query<'q> {
                $bind_list(query, list)
            }

            fn execute<'c, 'q: 'c>(
                &'c mut self,
                query: Self::Query<'q>,
            ) -> $crate::store::sql::Run<'c, u64> {
                Box::pin(async move { Ok(query.execute(self).await?.rows_affected()) })
            }

            fn fetch_optional<'c, 'q: 'c>(
                &'c mut self,
                query: Self::Query<'q>,
            ) -> $crate::store::sql::Run<'c, Option<$row>> {
                Box::pin(query.fetch_optional(self))
            }

            fn fetch_all<'c, 'q: 'c>(
                &'c mut self,
                query: Self::Query<'q>,
            ) -> $crate::store::sql::Run<'c, Vec<$row>> {
                Box::pin(query.fetch_all(self))
            }
        }
    };
}

pub(super) use dialect;

/// SQLite's and PostgreSQL's codes for a unique violation.
pub(crate) fn is_unique_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(db) if matches!(db.code().as_deref(), Some("2067" | "1555" | "23505")))
}
