//! The production store: PostgreSQL, shared by any number of replicas. Each request's
//! statements share one connection (`conn.rs`); single creates without an
//! `Idempotency-Key` are group-committed (`commit.rs`), others are one statement (pins
//! inserted from arrays, the idempotency claim in the same statement, `insert.rs`);
//! updates and deletes lock their rows in id order, so concurrent batches can't deadlock.
//! Lists of strings (tags, a batch's ids) are `text[]`.

mod breaker;
pub(super) mod commit;
pub(crate) mod conn;
pub(super) mod events;
pub(super) mod insert;

use std::{str::FromStr, sync::Arc, time::Duration};

use sqlx::{
    postgres::{PgConnectOptions, PgPoolOptions, PgRow},
    Connection, PgConnection, Postgres, Row,
};

use super::auth_epoch::AuthEpoch;
use super::events::{Commits, NewEvent, Render};
use super::group_commit::{Committer, Outcome, Update};
use super::pins::pin_from_row;
use super::pins::{bind_list_query, list_pin_keys_sql};
use super::sql::{dialect, Backend, Column, Run};
use super::{Created, Idempotent, Pin, PinKey, PinQuery};
use crate::{error::Result, Error};

/// The workspace's pins among `ids` (`GET /pins/{id}` and batch gets).
///
/// `(workspace_id = $1) IS TRUE` is `workspace_id = $1` that no index can serve. A prepared
/// statement's generic plan can't know how many ids `$2` holds; planned while the table was
/// small, it read the workspace's whole `(workspace_id, ...)` index beside the primary key's
/// (a `BitmapAnd`), and kept doing so as the workspace grew: 72 ms a PATCH at 35,000 pins.
/// The ids alone find every row through the primary key.
pub(crate) const GET_PINS: &str = concat!(
    "SELECT ",
    pin_columns!(),
    " FROM pins WHERE id = ANY($2) AND (workspace_id = $1) IS TRUE"
);

/// [`GET_PINS`] for one pin (`GET /pins/{id}`, an update's read). With `id = ANY($2)`
/// PostgreSQL plans the read anew on every run: its generic plan is costed for ten ids, so a
/// plan made for the one id given always looks cheaper, and planning cost ~0.2 ms a read.
pub(crate) const GET_PIN: &str = concat!(
    "SELECT ",
    pin_columns!(),
    " FROM pins WHERE id = $2 AND (workspace_id = $1) IS TRUE"
);

const AUTH_CHANGES: &str = "SELECT n FROM auth_changes WHERE one";

/// The end of a list's statement, before its limit (a literal here, see `list_pin_keys`).
pub(crate) const NEWEST_FIRST: &str = " ORDER BY seq DESC LIMIT ";

/// How long a request waits for a connection (the pool's, or the commit loop's new one)
/// before it is answered 503.
pub(super) const WAIT_FOR_CONNECTION: Duration = Duration::from_secs(5);

#[derive(Clone)]
pub struct PgStore {
    conns: conn::Connections,
    committer: Committer,
    render: Arc<dyn Render>,
    commits: Commits,
    /// Hears every replica's commits (see `events.rs`); stopped by `close`.
    listener: Arc<tokio::task::JoinHandle<()>>,
    auth: Arc<AuthEpoch>,
}

fn list_column(row: &PgRow, column: impl Column) -> Result<Vec<String>> {
    Ok(row.try_get(column)?)
}

fn bind_list<'q>(
    query: sqlx::query::Query<'q, Postgres, <Postgres as sqlx::Database>::Arguments<'q>>,
    list: &'q [String],
) -> sqlx::query::Query<'q, Postgres, <Postgres as sqlx::Database>::Arguments<'q>> {
    query.bind(list)
}

dialect!(Postgres, PgConnection, PgRow, list_column, bind_list);

impl PgStore {
    pub fn connections(&self) -> conn::Connections {
        self.conns.clone()
    }

    pub(super) fn pools(&self) -> Vec<crate::metrics::PoolUse> {
        vec![self.conns.usage()]
    }

    /// The count of changes to keys, memberships and roles (`auth_changes`, kept by triggers).
    pub(super) async fn auth_changes(&self) -> Result<i64> {
        Ok(sqlx::query_scalar(AUTH_CHANGES)
            .fetch_one(&mut *self.conn().await?)
            .await?)
    }

    /// A connection for the next statement (the request's, see [`conn`]).
    pub(super) async fn conn(&self) -> Result<conn::Conn> {
        self.conns.get().await
    }

    pub async fn open(url: &str, max_connections: u32, render: Arc<dyn Render>) -> Result<Self> {
        let options = PgConnectOptions::from_str(url)?.application_name("corkboard");
        let pool = PgPoolOptions::new()
            .max_connections(max_connections)
            .acquire_timeout(WAIT_FOR_CONNECTION)
            // A broken connection fails its query (503, retried by the client); pinging
            // before every use would cost a round trip per query.
            .test_before_acquire(false)
            // A safety net: PostgreSQL ends a request connection left idle inside a
            // transaction, which would otherwise hold its row locks (a rate-limit row: every
            // request of that key) until the pool closes it. The one known way in, a `BEGIN`
            // cancelled before its answer (sqlx#4393), is closed by `conn::Conn`'s `begin`;
            // the timeout only helps while the connection then sits unused, since every
            // statement run inside the stray transaction restarts it.
            .connect_with(
                options
                    .clone()
                    .options([("idle_in_transaction_session_timeout", "5s")]),
            )
            .await?;
        sqlx::migrate!("./migrations/postgres")
            .run(&pool)
            .await
            .map_err(|e| Error::internal_in("migrating", e))?;
        let commits = Commits::default();
        let auth = Arc::new(AuthEpoch::in_process());
        Ok(PgStore {
            // A pool of its own: a listener holds its connection for good, which must not
            // come out of the requests' pool.
            listener: Arc::new(events::listen(
                PgPoolOptions::new()
                    .max_connections(1)
                    .connect_lazy_with(options.clone()),
                commits.clone(),
            )),
            conns: conn::Connections::new(pool),
            committer: commit::start(options)?,
            render,
            commits,
            auth,
        })
    }
}

impl Backend for PgStore {
    type Db = PgConnection;
    type Conn = conn::Conn;

    async fn reader(&self) -> Result<Self::Conn> {
        self.conn().await
    }

    async fn writer(&self) -> Result<Self::Conn> {
        self.conn().await
    }

    const FOR_UPDATE: &'static str = " FOR UPDATE";
    const FOR_KEY_SHARE: &'static str = " FOR KEY SHARE";
    const SKIP_LOCKED: &'static str = " FOR UPDATE SKIP LOCKED";
    // The ids find the rows, not the workspace: see GET_PINS.
    const LOCK_PINS: &'static str = concat!(
        "SELECT ",
        pin_columns!(),
        " FROM pins WHERE id = ANY($2) AND (workspace_id = $1) IS TRUE ORDER BY id FOR UPDATE"
    );
    const UNPLACE_PINS: &'static str = "DELETE FROM placements WHERE pin_id = ANY($1)";
    const DELETE_PINS: &'static str =
        "DELETE FROM pins WHERE id = ANY($2) AND (workspace_id = $1) IS TRUE";
    const INSERT_DELIVERIES: &'static str = "INSERT INTO webhook_deliveries (webhook_id, \
         event_id, event_type, status_code, duration_ms, error, at) \
         SELECT $1, (a ->> 0)::bigint, a ->> 1, (a ->> 2)::bigint, (a ->> 3)::bigint, a ->> 4, \
         (a ->> 5)::bigint FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS t(a, n) \
         ORDER BY n";

    fn in_list(column: &str, n: u8) -> String {
        format!("{column} = ANY(${n})")
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

    /// The commit's own `NOTIFY` tells every replica (`events.rs`).
    fn committed(&self, _ws: &str) {}

    fn append_events<'c>(tx: &'c mut PgConnection, events: &'c [NewEvent]) -> Run<'c, ()> {
        events::append(tx, events)
    }

    async fn close(&self) {
        self.listener.abort();
        self.conns.close().await;
    }

    async fn insert_pins(
        &self,
        ws: &str,
        pins: &[Pin],
        idem: Option<&Idempotent>,
    ) -> Result<Created> {
        // A batch already shares one statement and one commit among its pins, and batches
        // in one group would queue on the loop's one connection instead of running side by
        // side on their own (A/B: 250 batches/s through the loop, 343 without).
        let events = super::events::created(ws, pins, &*self.render)?;
        if let ([_], None) = (pins, idem) {
            return self.committer.insert(ws, pins, None, events).await;
        }
        let rows: Vec<(&str, &Pin)> = pins.iter().map(|pin| (ws, pin)).collect();
        let mut conn = self.conn().await?;
        let mut tx = conn.begin().await?;
        if insert::insert_rows(&mut tx, &rows, idem).await? == 0 {
            return Ok(Created::KeyTaken);
        }
        events::append(&mut tx, &events).await?;
        tx.commit().await?;
        Ok(Created::Stored)
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
        let query = match ids {
            [id] => sqlx::query(GET_PIN).bind(ws).bind(id),
            _ => sqlx::query(GET_PINS).bind(ws).bind(ids),
        };
        let rows = query.fetch_all(&mut *self.conn().await?).await?;
        rows.iter().map(pin_from_row).collect()
    }

    async fn list_pin_keys(&self, ws: &str, query: &PinQuery) -> Result<Vec<PinKey>> {
        let tag = " AND tags @> ARRAY[$4::text] AND tags <> '{}'";
        // The limit is part of the text (an integer the API bounds): with `LIMIT $n` the
        // generic plan's cost assumes a tenth of the table, so PostgreSQL planned every page
        // anew (4% of the machine during a list benchmark).
        let sql = format!(
            "{}{NEWEST_FIRST}{}",
            list_pin_keys_sql(query, tag, &Self::in_list("key", 7)),
            query.limit
        );
        let rows = bind_list_query(Self::query(&sql), ws, query)
            .fetch_all(&mut *self.conn().await?)
            .await?;
        rows.iter()
            .map(|r| {
                Ok(PinKey {
                    seq: r.try_get(0)?,
                    id: r.try_get(1)?,
                    version: r.try_get(2)?,
                    updated_at: r.try_get(3)?,
                    last_pushed_at: r.try_get(4)?,
                    expected_every_secs: r.try_get(5)?,
                })
            })
            .collect()
    }
}
