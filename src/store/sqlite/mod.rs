//! The embedded default store: one SQLite file in WAL mode with full sync on commit.
//! Writes go through a single writer connection (no `SQLITE_BUSY` between our own writers);
//! reads use a pool of read-only connections. Creates are group-committed (`commit.rs`).
//! Lists of strings (tags, a batch's ids) are JSON arrays in text.

mod commit;
mod page;

use std::{str::FromStr, sync::Arc, time::Duration};

use serde::Serialize;

use sqlx::{
    pool::PoolConnection,
    sqlite::{
        SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteRow, SqliteSynchronous,
    },
    Row, Sqlite, SqliteConnection, SqlitePool,
};

use super::auth_epoch::AuthEpoch;
use super::events::{self, Commits, NewEvent, Render};
use super::group_commit::{Committer, Outcome, Update};
use super::pins::{bind_list_query, list_pin_keys_sql, pin_from_row, PIN_COLUMNS};
use super::sql::{dialect, Backend, Begin, Column, Record, Run};
use super::{Created, Idempotent, Pin, PinKey, PinQuery};
use crate::{error::Result, metrics::PoolUse, Error};
use page::{PageRow, PAGE_ROW};

#[derive(Clone)]
pub struct SqliteStore {
    pub(super) writer: SqlitePool,
    reader: SqlitePool,
    /// Creates go through here: many requests' inserts share one commit (one fsync).
    committer: Committer,
    render: Arc<dyn Render>,
    commits: Commits,
    auth: Arc<AuthEpoch>,
}

fn list_column(row: &SqliteRow, column: impl Column) -> Result<Vec<String>> {
    let text: String = row.try_get(column)?;
    serde_json::from_str(&text).map_err(|e| Error::internal_in("stored list", e))
}

fn list_json(list: &[String]) -> String {
    serde_json::to_string(list).unwrap_or_else(|_| "[]".into())
}

/// One event of [`events::APPEND_EVENTS`]'s JSON array: the columns as they are stored.
#[derive(Serialize)]
struct EventRow<'a> {
    ws: &'a str,
    event: &'a str,
    id: &'a str,
    version: Option<i64>,
    /// JSON text, as the column holds it.
    boards: String,
    at: i64,
    data: &'a str,
}

impl<'a> EventRow<'a> {
    fn of(e: &'a NewEvent) -> Self {
        EventRow {
            ws: &e.workspace_id,
            event: e.kind.as_str(),
            id: &e.resource_id,
            version: e.version,
            boards: list_json(&e.boards),
            at: e.at,
            data: &e.data,
        }
    }
}

/// `events` as [`events::APPEND_EVENTS`]'s one parameter.
fn event_rows(events: &[NewEvent]) -> Result<String, sqlx::Error> {
    let rows: Vec<EventRow> = events.iter().map(EventRow::of).collect();
    serde_json::to_string(&rows).map_err(|e| sqlx::Error::Encode(Box::new(e)))
}

fn bind_list<'q>(
    query: sqlx::query::Query<'q, Sqlite, <Sqlite as sqlx::Database>::Arguments<'q>>,
    list: &'q [String],
) -> sqlx::query::Query<'q, Sqlite, <Sqlite as sqlx::Database>::Arguments<'q>> {
    query.bind(list_json(list))
}

dialect!(Sqlite, SqliteConnection, SqliteRow, list_column, bind_list);

impl SqliteStore {
    /// The writer's and the readers' pools.
    pub(super) fn pools(&self) -> Vec<PoolUse> {
        [
            ("sqlite_writer", &self.writer),
            ("sqlite_reader", &self.reader),
        ]
        .into_iter()
        .map(|(pool, p)| {
            let idle = u32::try_from(p.num_idle()).unwrap_or(u32::MAX);
            PoolUse {
                pool,
                open: p.size(),
                in_use: p.size().saturating_sub(idle),
            }
        })
        .collect()
    }

    pub async fn open(url: &str, max_connections: u32, render: Arc<dyn Render>) -> Result<Self> {
        let options = SqliteConnectOptions::from_str(url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true)
            // A SAVEPOINT's journal (one per create in a group commit) stays in memory
            // instead of a temporary file created and deleted each time.
            .pragma("temp_store", "memory")
            .busy_timeout(Duration::from_secs(5));
        let in_memory = url.contains(":memory:") || url.contains("mode=memory");
        let auth = Arc::new(if in_memory {
            AuthEpoch::in_process()
        } else {
            AuthEpoch::stamped(options.get_filename())
        });
        if let Some(dir) = options.get_filename().parent() {
            if !dir.as_os_str().is_empty() {
                std::fs::create_dir_all(dir)
                    .map_err(|e| Error::internal_in(format!("creating {}", dir.display()), e))?;
            }
        }
        // Neither pool pings a connection before lending it: a SQLite connection is a file
        // handle on a thread of sqlx's, with no peer to go away, and the ping was a round trip
        // to that thread on every acquire (POST and GET/s +13% without, measured on 32
        // connections; a request makes several).
        let writer = SqlitePoolOptions::new()
            .max_connections(1)
            .test_before_acquire(false)
            .acquire_timeout(Duration::from_secs(10))
            .connect_with(options.clone())
            .await?;
        sqlx::migrate!("./migrations/sqlite")
            .run(&writer)
            .await
            .map_err(|e| Error::internal_in("migrating", e))?;
        let reader = SqlitePoolOptions::new()
            .max_connections(max_connections)
            .test_before_acquire(false)
            .acquire_timeout(Duration::from_secs(10))
            .connect_with(options.read_only(true))
            .await?;
        let commits = Commits::default();
        let committer = commit::start(writer.clone(), commits.clone())?;
        Ok(SqliteStore {
            writer,
            reader,
            committer,
            render,
            commits,
            auth,
        })
    }
}

/// sqlx's SQLite worker rolls back a `BEGIN` whose caller went away by itself.
impl Begin for PoolConnection<Sqlite> {
    fn begin(
        &mut self,
    ) -> impl std::future::Future<Output = Result<sqlx::Transaction<'_, Sqlite>, sqlx::Error>> + Send
    {
        sqlx::Connection::begin(&mut **self)
    }
}

impl Backend for SqliteStore {
    type Db = SqliteConnection;
    type Conn = PoolConnection<Sqlite>;

    async fn reader(&self) -> Result<Self::Conn> {
        Ok(self.reader.acquire().await?)
    }

    async fn writer(&self) -> Result<Self::Conn> {
        Ok(self.writer.acquire().await?)
    }

    const FOR_UPDATE: &'static str = "";
    const FOR_KEY_SHARE: &'static str = "";
    const SKIP_LOCKED: &'static str = "";
    // `+workspace_id` keeps SQLite from walking the workspace's index (every pin of the
    // workspace) instead of looking each id up in its own.
    const LOCK_PINS: &'static str = concat!(
        "SELECT ",
        pin_columns!(),
        " FROM pins WHERE +workspace_id = $1 AND id IN (SELECT value FROM json_each($2)) ORDER BY id"
    );
    const UNPLACE_PINS: &'static str =
        "DELETE FROM placements WHERE pin_id IN (SELECT value FROM json_each($1))";
    const DELETE_PINS: &'static str =
        "DELETE FROM pins WHERE workspace_id = $1 AND id IN (SELECT value FROM json_each($2))";
    const INSERT_DELIVERIES: &'static str = "INSERT INTO webhook_deliveries (webhook_id, \
         event_id, event_type, status_code, duration_ms, error, at) \
         SELECT $1, value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5 \
         FROM json_each($2) ORDER BY key";

    fn in_list(column: &str, n: u8) -> String {
        format!("{column} IN (SELECT value FROM json_each(${n}))")
    }

    fn render(&self) -> &dyn Render {
        &*self.render
    }

    fn commits(&self) -> &Commits {
        &self.commits
    }

    fn auth(&self) -> &AuthEpoch {
        &self.auth
    }

    fn committed(&self, ws: &str) {
        self.commits.send(Some(ws));
    }

    fn append_events<'c>(tx: &'c mut SqliteConnection, events: &'c [NewEvent]) -> Run<'c, ()> {
        Box::pin(async move {
            if events.is_empty() {
                return Ok(());
            }
            sqlx::query(events::APPEND_EVENTS)
                .bind(event_rows(events)?)
                .execute(&mut *tx)
                .await?;
            crate::metrics::logged(events.len());
            Ok(())
        })
    }

    async fn close(&self) {
        self.writer.close().await;
        self.reader.close().await;
    }

    async fn insert_pins(
        &self,
        ws: &str,
        pins: &[Pin],
        idem: Option<&Idempotent>,
    ) -> Result<Created> {
        let events = events::created(ws, pins, &*self.render)?;
        self.committer.insert(ws, pins, idem, events).await
    }

    async fn commit_update(
        &self,
        ws: &str,
        update: Update,
        events: Vec<NewEvent>,
    ) -> Result<Outcome> {
        self.committer.update(ws, update, events).await
    }

    async fn get_pins(&self, ws: &str, ids: &[String]) -> Result<Vec<Pin>> {
        let ids_json = list_json(ids);
        // `+workspace_id` keeps SQLite from walking the workspace's index (every pin of the
        // workspace, 33 GETs/s at 40k pins) instead of looking each id up in its own.
        let found =
            "FROM pins WHERE +workspace_id = $1 AND id IN (SELECT value FROM json_each($2))";
        if let [_] = ids {
            let rows = sqlx::query(&format!("SELECT {PIN_COLUMNS} {found}"))
                .bind(ws)
                .bind(ids_json)
                .fetch_all(&self.reader)
                .await?;
            return rows.iter().map(pin_from_row).collect();
        }
        // Many rows come back as one JSON array: sqlx-sqlite hands each row of a result over
        // from its worker thread, which cost twice the page.
        let page: String =
            sqlx::query_scalar(&format!("SELECT json_group_array({PAGE_ROW}) {found}"))
                .bind(ws)
                .bind(ids_json)
                .fetch_one(&self.reader)
                .await?;
        PageRow::decode(&page)
    }

    async fn list_pin_keys(&self, ws: &str, query: &PinQuery) -> Result<Vec<PinKey>> {
        let tag = " AND EXISTS (SELECT 1 FROM json_each(pins.tags) WHERE json_each.value = $4)";
        // One JSON array for the page, as in `get_pins`, sorted here: an ORDER BY in the
        // aggregate sorts the page through a temporary B-tree, which doubled SQLite's time
        // for a page; the rows come in order already, which this sort checks in one pass.
        let sql = format!(
            "SELECT json_group_array(json_array(seq, id, version, updated_at, last_pushed_at, \
             expected_every_secs)) FROM ({} ORDER BY seq DESC LIMIT $9)",
            list_pin_keys_sql(query, tag, &Self::in_list("key", 7))
        );
        let row = bind_list_query(Self::query(&sql), ws, query)
            .bind(query.limit)
            .fetch_optional(&mut *self.reader().await?)
            .await?
            .ok_or(sqlx::Error::RowNotFound)?;
        let page: String = Record::get(&row, 0)?;
        let mut keys: Vec<(i64, String, i64, i64, i64, Option<i64>)> =
            serde_json::from_str(&page).map_err(|e| Error::internal_in("stored page", e))?;
        keys.sort_by_key(|(seq, ..)| std::cmp::Reverse(*seq));
        Ok(keys
            .into_iter()
            .map(
                |(seq, id, version, updated_at, last_pushed_at, expected_every_secs)| PinKey {
                    seq,
                    id,
                    version,
                    updated_at,
                    last_pushed_at,
                    expected_every_secs,
                },
            )
            .collect())
    }
}
