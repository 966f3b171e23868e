//! The production store: PostgreSQL, shared by any number of replicas. Single creates without
//! an `Idempotency-Key` are group-committed ([`super::pg_commit`]); others are one statement
//! (pins inserted from arrays, the idempotency claim in the same statement);
//! updates and deletes lock their rows in id order, so concurrent batches can't deadlock.

use std::{collections::HashMap, str::FromStr, time::Duration};

use sqlx::{
    postgres::{PgConnectOptions, PgPoolOptions, PgRow},
    Connection, PgConnection, Row,
};

use super::{group_commit::Committer, pg_commit, *};

/// The workspace's pins among `ids` (`GET /pins/{id}` and batch gets).
pub(crate) const GET_PINS: &str = concat!(
    "SELECT ",
    pin_columns!(),
    " FROM pins WHERE workspace_id = $1 AND id = ANY($2)"
);

/// The end of a list's statement, before its limit (a literal here, see `list_pin_keys`).
pub(crate) const NEWEST_FIRST: &str = " ORDER BY seq DESC LIMIT ";

/// Pins from arrays, each with its workspace (`$1`); see [`insert_rows`].
macro_rules! insert_from_arrays {
    () => {
        concat!(
            insert_pins_into!(),
            " SELECT u.id, u.ws, u.pin_type, u.pin_config, u.pin_layout, u.is_public, u.title, \
             ARRAY(SELECT jsonb_array_elements_text(u.tags::jsonb)), u.provenance, u.version, \
             u.created_at, u.updated_at FROM UNNEST($1::text[], $2::text[], $3::text[], \
             $4::text[], $5::text[], $6::bool[], $7::text[], $8::text[], $9::text[], $10::int8[], \
             $11::int8[], $12::int8[]) AS u (ws, id, pin_type, pin_config, pin_layout, is_public, \
             title, tags, provenance, version, created_at, updated_at)"
        )
    };
}
pub(crate) const INSERT_PINS: &str = insert_from_arrays!();
/// The same behind an idempotency claim: the pins are inserted only if the claim is taken
/// (no live claim holds the key).
const INSERT_CLAIMED_PINS: &str = concat!(
    "WITH claim AS (INSERT INTO idempotency_keys (workspace_id, key, request_hash, response, created_at) \
     SELECT $1[1], $13, $14, $15, $16 ON CONFLICT (workspace_id, key) DO UPDATE SET \
     request_hash = excluded.request_hash, response = excluded.response, created_at = excluded.created_at \
     WHERE idempotency_keys.created_at < $17 RETURNING 1) ",
    insert_from_arrays!(),
    " WHERE EXISTS (SELECT 1 FROM claim)"
);

/// How long a request waits for a connection (the pool's, or the commit loop's new one)
/// before it is answered 503.
pub(super) const WAIT_FOR_CONNECTION: Duration = Duration::from_secs(5);

#[derive(Clone)]
pub struct PgStore {
    pub(super) conns: pg_conn::Connections,
    committer: Committer,
}

/// A pin from a row that starts with [`PIN_COLUMNS`].
pub(super) fn pin_from_row(row: &PgRow) -> Result<Pin> {
    pin_at(row, 0)
}

/// A pin from [`PIN_COLUMNS`] at column `first` on, read by position: by name, each column
/// cost a hash lookup and string compares, 12% of the server's time for a 200-pin page.
pub(super) fn pin_at(row: &PgRow, first: usize) -> Result<Pin> {
    Ok(Pin {
        id: row.try_get(first)?,
        pin_type: row.try_get(first + 1)?,
        pin_config: row.try_get(first + 2)?,
        pin_layout: row.try_get(first + 3)?,
        is_public: row.try_get(first + 4)?,
        allow_edit: row.try_get(first + 5)?,
        require_sign_in: row.try_get(first + 6)?,
        allow_comments: row.try_get(first + 7)?,
        title: row.try_get(first + 8)?,
        tags: row.try_get(first + 9)?,
        provenance: row.try_get(first + 10)?,
        version: row.try_get(first + 11)?,
        created_at: row.try_get(first + 12)?,
        updated_at: row.try_get(first + 13)?,
    })
}

pub(super) fn key_from_row(row: &PgRow) -> Result<KeyRow> {
    Ok(KeyRow {
        id: row.try_get("id")?,
        workspace_id: row.try_get("workspace_id")?,
        name: row.try_get("name")?,
        lookup: row.try_get("lookup")?,
        secret_hash: row.try_get("secret_hash")?,
        scopes: row.try_get("scopes")?,
        tier: row.try_get("tier")?,
        created_at: row.try_get("created_at")?,
        last_used_at: row.try_get("last_used_at")?,
        revoked_at: row.try_get("revoked_at")?,
        expires_at: row.try_get("expires_at")?,
    })
}

/// Locks the workspace's pins named in `ids`, in id order, and returns them by id.
async fn lock_pins(
    tx: &mut sqlx::PgConnection,
    ws: &str,
    ids: &[String],
) -> Result<HashMap<String, Pin>> {
    let rows = sqlx::query(&format!(
        "SELECT {PIN_COLUMNS} FROM pins WHERE workspace_id = $1 AND id = ANY($2) ORDER BY id FOR UPDATE"
    ))
    .bind(ws)
    .bind(ids)
    .fetch_all(tx)
    .await?;
    rows.iter()
        .map(|r| pin_from_row(r).map(|p| (p.id.clone(), p)))
        .collect()
}

/// Inserts `rows`, each into its workspace, in one statement: [`INSERT_PIN`] for one row,
/// else from arrays (one prepared statement whatever the count). With `claim`, the
/// idempotency claim (in the rows' workspace) is part of the same statement, and the rows
/// are inserted only if the claim is taken: both happen or neither. Returns the rows stored.
pub(super) async fn insert_rows(
    conn: &mut PgConnection,
    rows: &[(&str, &Pin)],
    claim: Option<&Idempotent>,
) -> Result<u64, sqlx::Error> {
    if let ([(ws, pin)], None) = (rows, claim) {
        let done = sqlx::query(INSERT_PIN)
            .bind(&pin.id)
            .bind(ws)
            .bind(&pin.pin_type)
            .bind(&pin.pin_config)
            .bind(&pin.pin_layout)
            .bind(pin.is_public)
            .bind(&pin.title)
            .bind(&pin.tags)
            .bind(&pin.provenance)
            .bind(pin.version)
            .bind(pin.created_at)
            .bind(pin.updated_at)
            .execute(conn)
            .await?;
        return Ok(done.rows_affected());
    }
    let column = |f: fn(&Pin) -> String| rows.iter().map(|(_, p)| f(p)).collect::<Vec<_>>();
    let tags = rows
        .iter()
        .map(|(_, p)| serde_json::to_string(&p.tags).unwrap_or_else(|_| "[]".into()))
        .collect::<Vec<_>>();
    let sql = if claim.is_some() {
        INSERT_CLAIMED_PINS
    } else {
        INSERT_PINS
    };
    let mut query = sqlx::query(sql)
        .bind(rows.iter().map(|(ws, _)| *ws).collect::<Vec<_>>())
        .bind(column(|p| p.id.clone()))
        .bind(column(|p| p.pin_type.clone()))
        .bind(column(|p| p.pin_config.clone()))
        .bind(column(|p| p.pin_layout.clone()))
        .bind(rows.iter().map(|(_, p)| p.is_public).collect::<Vec<_>>())
        .bind(
            rows.iter()
                .map(|(_, p)| p.title.clone())
                .collect::<Vec<_>>(),
        )
        .bind(tags)
        .bind(
            rows.iter()
                .map(|(_, p)| p.provenance.clone())
                .collect::<Vec<_>>(),
        )
        .bind(rows.iter().map(|(_, p)| p.version).collect::<Vec<_>>())
        .bind(rows.iter().map(|(_, p)| p.created_at).collect::<Vec<_>>())
        .bind(rows.iter().map(|(_, p)| p.updated_at).collect::<Vec<_>>());
    if let Some(claim) = claim {
        query = query
            .bind(&claim.key)
            .bind(&claim.request_hash)
            .bind(&claim.response)
            .bind(claim.created_at)
            .bind(claim.live_since);
    }
    Ok(query.execute(conn).await?.rows_affected())
}

impl PgStore {
    pub fn connections(&self) -> pg_conn::Connections {
        self.conns.clone()
    }

    /// A connection for the next statement (the request's, see [`super::pg_conn`]).
    pub(super) async fn conn(&self) -> Result<pg_conn::Conn> {
        self.conns.get().await
    }

    pub async fn open(url: &str, max_connections: u32) -> Result<Self> {
        let options = PgConnectOptions::from_str(url)?.application_name("corkboard");
        let pool = PgPoolOptions::new()
            .max_connections(max_connections)
            .acquire_timeout(WAIT_FOR_CONNECTION)
            // A broken connection fails its query (503, retried by the client); pinging
            // before every use would cost a round trip per query.
            .test_before_acquire(false)
            .connect_with(options.clone())
            .await?;
        sqlx::migrate!("./migrations/postgres")
            .run(&pool)
            .await
            .map_err(|e| Error::Internal(format!("migrating: {e}")))?;
        Ok(PgStore {
            conns: pg_conn::Connections::new(pool),
            committer: pg_commit::start(options)?,
        })
    }
}

impl Backend for PgStore {
    async fn ping(&self) -> Result<()> {
        sqlx::query("SELECT 1")
            .execute(&mut *self.conn().await?)
            .await?;
        Ok(())
    }

    async fn close(&self) {
        self.conns.close().await;
    }

    async fn ensure_workspace(&self, name: &str) -> Result<String> {
        sqlx::query("INSERT INTO workspaces (id, name, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING")
            .bind(crate::ids::new_id("ws-"))
            .bind(name)
            .bind(crate::clock::now_ms())
            .execute(&mut *self.conn().await?)
            .await?;
        Ok(
            sqlx::query_scalar("SELECT id FROM workspaces WHERE name = $1")
                .bind(name)
                .fetch_one(&mut *self.conn().await?)
                .await?,
        )
    }

    async fn claim_bootstrap(&self) -> Result<bool> {
        let done = sqlx::query("INSERT INTO meta (key, value) VALUES ('bootstrapped', '1') ON CONFLICT (key) DO NOTHING")
            .execute(&mut *self.conn().await?)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn insert_key(&self, key: &KeyRow) -> Result<()> {
        sqlx::query("INSERT INTO api_keys (id, workspace_id, name, lookup, secret_hash, scopes, tier, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)")
            .bind(&key.id)
            .bind(&key.workspace_id)
            .bind(&key.name)
            .bind(&key.lookup)
            .bind(&key.secret_hash)
            .bind(&key.scopes)
            .bind(&key.tier)
            .bind(key.created_at)
            .bind(key.expires_at)
            .execute(&mut *self.conn().await?)
            .await?;
        Ok(())
    }

    async fn find_key(&self, lookup: &str) -> Result<Option<KeyRow>> {
        let row = sqlx::query(FIND_KEY)
            .bind(lookup)
            .fetch_optional(&mut *self.conn().await?)
            .await?;
        row.as_ref().map(key_from_row).transpose()
    }

    async fn list_keys(&self) -> Result<Vec<(KeyRow, String)>> {
        let rows = sqlx::query("SELECT k.*, w.name AS workspace_name FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id ORDER BY k.created_at DESC, k.id")
            .fetch_all(&mut *self.conn().await?)
            .await?;
        rows.iter()
            .map(|r| Ok((key_from_row(r)?, r.try_get("workspace_name")?)))
            .collect()
    }

    async fn revoke_key(&self, id: &str, at: i64) -> Result<bool> {
        let done =
            sqlx::query("UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL")
                .bind(id)
                .bind(at)
                .execute(&mut *self.conn().await?)
                .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn touch_key(&self, id: &str, at: i64) -> Result<()> {
        sqlx::query("UPDATE api_keys SET last_used_at = $2 WHERE id = $1")
            .bind(id)
            .bind(at)
            .execute(&mut *self.conn().await?)
            .await?;
        Ok(())
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
        if let ([_], None) = (pins, idem) {
            return self.committer.insert(ws, pins, None).await;
        }
        let rows: Vec<(&str, &Pin)> = pins.iter().map(|pin| (ws, pin)).collect();
        let stored = insert_rows(&mut *self.conn().await?, &rows, idem).await?;
        Ok(if stored == 0 {
            Created::KeyTaken
        } else {
            Created::Stored
        })
    }

    async fn get_pins(&self, ws: &str, ids: &[String]) -> Result<Vec<Pin>> {
        let rows = sqlx::query(GET_PINS)
            .bind(ws)
            .bind(ids)
            .fetch_all(&mut *self.conn().await?)
            .await?;
        rows.iter().map(pin_from_row).collect()
    }

    async fn list_pin_keys(&self, ws: &str, query: &PinQuery) -> Result<Vec<PinKey>> {
        let mut sql = LIST_PIN_KEYS.to_owned();
        if query.before_seq.is_some() {
            sql.push_str(" AND seq < $2");
        }
        if query.pin_type.is_some() {
            sql.push_str(" AND pin_type = $3");
        }
        if query.tag.is_some() {
            sql.push_str(" AND tags @> ARRAY[$4::text] AND tags <> '{}'");
        }
        if query.updated_since.is_some() {
            sql.push_str(" AND updated_at >= $5");
        }
        if query.pinboard_id.is_some() {
            sql.push_str(
                " AND EXISTS (SELECT 1 FROM placements pl WHERE pl.pinboard_id = $6 AND pl.pin_id = pins.id)",
            );
        }
        // The limit is part of the text (an integer the API bounds): with `LIMIT $n` the
        // generic plan's cost assumes a tenth of the table, so PostgreSQL planned every page
        // anew (4% of the machine during a list benchmark).
        sql.push_str(&format!("{NEWEST_FIRST}{}", query.limit));
        let rows = sqlx::query(&sql)
            .bind(ws)
            .bind(query.before_seq)
            .bind(&query.pin_type)
            .bind(&query.tag)
            .bind(query.updated_since)
            .bind(&query.pinboard_id)
            .fetch_all(&mut *self.conn().await?)
            .await?;
        rows.iter()
            .map(|r| {
                Ok(PinKey {
                    seq: r.try_get(0)?,
                    id: r.try_get(1)?,
                    version: r.try_get(2)?,
                    updated_at: r.try_get(3)?,
                })
            })
            .collect()
    }

    async fn update_pins(
        &self,
        ws: &str,
        ids: &[String],
        retention: u32,
        change: &mut Change<'_>,
    ) -> Result<Vec<Pin>> {
        let mut conn = self.conn().await?;
        let mut tx = conn.begin().await?;
        let mut current = lock_pins(&mut tx, ws, ids).await?;
        let mut updated = Vec::with_capacity(ids.len());
        for (i, id) in ids.iter().enumerate() {
            let old = current.remove(id).ok_or_else(|| pin_missing(i))?;
            let new = change(i, old)?;
            sqlx::query(SAVE_VERSION).bind(id).execute(&mut *tx).await?;
            sqlx::query(UPDATE_PIN)
                .bind(id)
                .bind(&new.pin_type)
                .bind(&new.pin_config)
                .bind(&new.pin_layout)
                .bind(new.is_public)
                .bind(&new.title)
                .bind(&new.tags)
                .bind(&new.provenance)
                .bind(new.version)
                .bind(new.updated_at)
                .bind(new.allow_edit)
                .bind(new.require_sign_in)
                .bind(new.allow_comments)
                .execute(&mut *tx)
                .await?;
            sqlx::query(PRUNE_VERSIONS)
                .bind(id)
                .bind(new.version - 1 - i64::from(retention))
                .execute(&mut *tx)
                .await?;
            updated.push(new);
        }
        tx.commit().await?;
        Ok(updated)
    }

    async fn delete_pins(
        &self,
        ws: &str,
        ids: &[String],
        check: &mut DeleteCheck<'_>,
    ) -> Result<()> {
        let mut conn = self.conn().await?;
        let mut tx = conn.begin().await?;
        let current = lock_pins(&mut tx, ws, ids).await?;
        for (i, id) in ids.iter().enumerate() {
            check(i, current.get(id).ok_or_else(|| pin_missing(i))?)?;
        }
        sqlx::query("DELETE FROM placements WHERE pin_id = ANY($1)")
            .bind(ids)
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM pins WHERE workspace_id = $1 AND id = ANY($2)")
            .bind(ws)
            .bind(ids)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn list_versions(
        &self,
        ws: &str,
        id: &str,
        before_version: Option<i64>,
        limit: i64,
    ) -> Result<Option<Vec<Pin>>> {
        let exists = sqlx::query("SELECT 1 FROM pins WHERE workspace_id = $1 AND id = $2")
            .bind(ws)
            .bind(id)
            .fetch_optional(&mut *self.conn().await?)
            .await?;
        if exists.is_none() {
            return Ok(None);
        }
        let rows = sqlx::query(&format!(
            "SELECT pin_id AS {PIN_COLUMNS} FROM pin_versions WHERE pin_id = $1 AND version < $2 ORDER BY version DESC LIMIT $3"
        ))
        .bind(id)
        .bind(before_version.unwrap_or(i64::MAX))
        .bind(limit)
        .fetch_all(&mut *self.conn().await?)
        .await?;
        rows.iter()
            .map(pin_from_row)
            .collect::<Result<_>>()
            .map(Some)
    }

    async fn find_idempotent(&self, ws: &str, key: &str, since: i64) -> Result<Option<Idempotent>> {
        let row = sqlx::query("SELECT key, request_hash, response, created_at FROM idempotency_keys WHERE workspace_id = $1 AND key = $2 AND created_at >= $3")
            .bind(ws)
            .bind(key)
            .bind(since)
            .fetch_optional(&mut *self.conn().await?)
            .await?;
        row.map(|r| {
            Ok(Idempotent {
                key: r.try_get("key")?,
                request_hash: r.try_get("request_hash")?,
                response: r.try_get("response")?,
                created_at: r.try_get("created_at")?,
                live_since: since,
            })
        })
        .transpose()
    }
}
