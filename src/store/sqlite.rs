//! The embedded default store: one SQLite file in WAL mode with full sync on commit.
//! Writes go through a single writer connection (no `SQLITE_BUSY` between our own writers);
//! reads use a pool of reader connections. Creates are group-committed ([`Committer`]).

use std::{borrow::Cow, str::FromStr, time::Duration};

use serde_json::value::RawValue;
use sqlx::{
    sqlite::{
        SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteRow, SqliteSynchronous,
    },
    Row, SqliteConnection, SqlitePool,
};

use super::{group_commit::Committer, sqlite_commit, *};

#[derive(Clone)]
pub struct SqliteStore {
    pub(super) writer: SqlitePool,
    pub(super) reader: SqlitePool,
    /// Creates go through here: many requests' inserts share one commit (one fsync).
    committer: Committer,
}

pub(super) fn pin_from_row(row: &SqliteRow) -> Result<Pin> {
    let tags: String = row.try_get("tags")?;
    Ok(Pin {
        id: row.try_get("id")?,
        pin_type: row.try_get("pin_type")?,
        pin_config: row.try_get("pin_config")?,
        pin_layout: row.try_get("pin_layout")?,
        is_public: row.try_get("is_public")?,
        allow_edit: row.try_get("allow_edit")?,
        require_sign_in: row.try_get("require_sign_in")?,
        allow_comments: row.try_get("allow_comments")?,
        title: row.try_get("title")?,
        tags: serde_json::from_str(&tags)
            .map_err(|e| Error::Internal(format!("stored tags: {e}")))?,
        provenance: row.try_get("provenance")?,
        version: row.try_get("version")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

/// One pin of a many-pin read, which comes back as one JSON array of rows: [`PIN_COLUMNS`]
/// in order (flags as 0/1; config, tags and provenance as JSON, see [`PAGE_ROW`]). Decoding
/// it costs a fraction of what sqlx-sqlite spends on each row of a many-row result.
#[derive(serde::Deserialize)]
struct PageRow<'a>(
    String,
    String,
    #[serde(borrow)] &'a RawValue,
    String,
    i64,
    i64,
    i64,
    i64,
    Option<String>,
    Vec<String>,
    #[serde(borrow)] Option<&'a RawValue>,
    i64,
    i64,
    i64,
);

/// A [`PageRow`] in SQL. The stored JSON columns go in as JSON (`json(...)`), not as
/// strings: escaping them as strings, and unescaping them here, cost more than the rest of
/// the page.
const PAGE_ROW: &str = "json_array(id, pin_type, json(pin_config), pin_layout, is_public, \
     allow_edit, require_sign_in, allow_comments, title, json(tags), json(provenance), version, \
     created_at, updated_at)";

impl PageRow<'_> {
    /// The pins of a page, in no particular order.
    fn decode(page: &str) -> Result<Vec<Pin>> {
        let rows: Vec<PageRow> =
            serde_json::from_str(page).map_err(|e| Error::Internal(format!("stored page: {e}")))?;
        Ok(rows.into_iter().map(PageRow::into_pin).collect())
    }

    fn into_pin(self) -> Pin {
        let PageRow(
            id,
            pin_type,
            pin_config,
            pin_layout,
            is_public,
            allow_edit,
            require_sign_in,
            allow_comments,
            title,
            tags,
            provenance,
            version,
            created_at,
            updated_at,
        ) = self;
        Pin {
            id,
            pin_type,
            pin_config: pin_config.get().to_owned(),
            pin_layout,
            is_public: is_public != 0,
            allow_edit: allow_edit != 0,
            require_sign_in: require_sign_in != 0,
            allow_comments: allow_comments != 0,
            title,
            tags,
            provenance: provenance.map(|raw| raw.get().to_owned()),
            version,
            created_at,
            updated_at,
        }
    }
}

pub(super) fn key_from_row(row: &SqliteRow) -> Result<KeyRow> {
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

pub(super) fn tags_json(tags: &[String]) -> String {
    serde_json::to_string(tags).unwrap_or_else(|_| "[]".into())
}

/// Rows per INSERT of a batch: one statement instead of one per pin (12 parameters a row,
/// far below SQLite's 32766).
pub(super) const INSERT_CHUNK: usize = 100;

/// [`INSERT_PIN`] for `rows` rows. Several rows take anonymous `?` parameters: binding
/// numbered ones makes SQLite search their names, a cost that grows with the square of the
/// count (27% of a batch's CPU with 1200 of them).
fn insert_rows(rows: usize) -> Cow<'static, str> {
    if rows == 1 {
        return Cow::Borrowed(INSERT_PIN);
    }
    let row = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    Cow::Owned(format!(
        "{} VALUES {}",
        insert_pins_into!(),
        vec![row; rows].join(", ")
    ))
}

/// One create (an idempotency claim, then its pins) inside the caller's transaction.
pub(super) async fn insert_in(
    conn: &mut SqliteConnection,
    ws: &str,
    pins: &[Pin],
    idem: Option<&Idempotent>,
) -> Result<Created> {
    if let Some(idem) = idem {
        let claimed = sqlx::query(
            "INSERT INTO idempotency_keys (workspace_id, key, request_hash, response, created_at) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (workspace_id, key) DO UPDATE SET request_hash = excluded.request_hash, response = excluded.response, created_at = excluded.created_at \
             WHERE idempotency_keys.created_at < $6",
        )
        .bind(ws)
        .bind(&idem.key)
        .bind(&idem.request_hash)
        .bind(&idem.response)
        .bind(idem.created_at)
        .bind(idem.live_since)
        .execute(&mut *conn)
        .await?;
        if claimed.rows_affected() == 0 {
            return Ok(Created::KeyTaken);
        }
    }
    let rows: Vec<_> = pins.iter().map(|pin| (ws, pin)).collect();
    insert_rows_in(conn, &rows).await?;
    Ok(Created::Stored)
}

/// Inserts `(workspace, pin)` rows, [`INSERT_CHUNK`] to a statement. Outside a transaction
/// each statement commits on its own: a caller with more rows than one statement takes must
/// open one for all or none.
pub(super) async fn insert_rows_in(
    conn: &mut SqliteConnection,
    rows: &[(&str, &Pin)],
) -> Result<()> {
    for chunk in rows.chunks(INSERT_CHUNK) {
        let sql = insert_rows(chunk.len());
        let mut insert = sqlx::query(&sql);
        for &(ws, pin) in chunk {
            insert = insert
                .bind(&pin.id)
                .bind(ws)
                .bind(&pin.pin_type)
                .bind(&pin.pin_config)
                .bind(&pin.pin_layout)
                .bind(pin.is_public)
                .bind(&pin.title)
                .bind(tags_json(&pin.tags))
                .bind(&pin.provenance)
                .bind(pin.version)
                .bind(pin.created_at)
                .bind(pin.updated_at);
        }
        insert.execute(&mut *conn).await?;
    }
    Ok(())
}

impl SqliteStore {
    pub async fn open(url: &str, max_connections: u32) -> Result<Self> {
        let options = SqliteConnectOptions::from_str(url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true)
            // A SAVEPOINT's journal (one per create in a group commit) stays in memory
            // instead of a temporary file created and deleted each time.
            .pragma("temp_store", "memory")
            .busy_timeout(Duration::from_secs(5));
        if let Some(dir) = options.get_filename().parent() {
            if !dir.as_os_str().is_empty() {
                std::fs::create_dir_all(dir)
                    .map_err(|e| Error::Internal(format!("creating {}: {e}", dir.display())))?;
            }
        }
        let writer = SqlitePoolOptions::new()
            .max_connections(1)
            .acquire_timeout(Duration::from_secs(10))
            .connect_with(options.clone())
            .await?;
        sqlx::migrate!("./migrations/sqlite")
            .run(&writer)
            .await
            .map_err(|e| Error::Internal(format!("migrating: {e}")))?;
        let reader = SqlitePoolOptions::new()
            .max_connections(max_connections)
            .acquire_timeout(Duration::from_secs(10))
            .connect_with(options.read_only(true))
            .await?;
        let committer = sqlite_commit::start(writer.clone())?;
        Ok(SqliteStore {
            writer,
            reader,
            committer,
        })
    }
}

impl Backend for SqliteStore {
    async fn ping(&self) -> Result<()> {
        sqlx::query("SELECT 1").execute(&self.reader).await?;
        Ok(())
    }

    async fn close(&self) {
        self.writer.close().await;
        self.reader.close().await;
    }

    async fn ensure_workspace(&self, name: &str) -> Result<String> {
        sqlx::query("INSERT INTO workspaces (id, name, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING")
            .bind(crate::ids::new_id("ws-"))
            .bind(name)
            .bind(crate::clock::now_ms())
            .execute(&self.writer)
            .await?;
        Ok(
            sqlx::query_scalar("SELECT id FROM workspaces WHERE name = $1")
                .bind(name)
                .fetch_one(&self.writer)
                .await?,
        )
    }

    async fn claim_bootstrap(&self) -> Result<bool> {
        let done = sqlx::query("INSERT INTO meta (key, value) VALUES ('bootstrapped', '1') ON CONFLICT (key) DO NOTHING")
            .execute(&self.writer)
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
            .execute(&self.writer)
            .await?;
        Ok(())
    }

    async fn find_key(&self, lookup: &str) -> Result<Option<KeyRow>> {
        let row = sqlx::query(FIND_KEY)
            .bind(lookup)
            .fetch_optional(&self.reader)
            .await?;
        row.as_ref().map(key_from_row).transpose()
    }

    async fn list_keys(&self) -> Result<Vec<(KeyRow, String)>> {
        let rows = sqlx::query("SELECT k.*, w.name AS workspace_name FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id ORDER BY k.created_at DESC, k.id")
            .fetch_all(&self.reader)
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
                .execute(&self.writer)
                .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn touch_key(&self, id: &str, at: i64) -> Result<()> {
        sqlx::query("UPDATE api_keys SET last_used_at = $2 WHERE id = $1")
            .bind(id)
            .bind(at)
            .execute(&self.writer)
            .await?;
        Ok(())
    }

    async fn insert_pins(
        &self,
        ws: &str,
        pins: &[Pin],
        idem: Option<&Idempotent>,
    ) -> Result<Created> {
        self.committer.insert(ws, pins, idem).await
    }

    async fn get_pins(&self, ws: &str, ids: &[String]) -> Result<Vec<Pin>> {
        let ids_json = serde_json::to_string(ids).unwrap_or_else(|_| "[]".into());
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
        let mut sql = LIST_PIN_KEYS.to_owned();
        if query.before_seq.is_some() {
            sql.push_str(" AND seq < $2");
        }
        if query.pin_type.is_some() {
            sql.push_str(" AND pin_type = $3");
        }
        if query.tag.is_some() {
            sql.push_str(
                " AND EXISTS (SELECT 1 FROM json_each(pins.tags) WHERE json_each.value = $4)",
            );
        }
        if query.updated_since.is_some() {
            sql.push_str(" AND updated_at >= $5");
        }
        if query.pinboard_id.is_some() {
            sql.push_str(
                " AND EXISTS (SELECT 1 FROM placements pl WHERE pl.pinboard_id = $7 AND pl.pin_id = pins.id)",
            );
        }
        sql.push_str(" ORDER BY seq DESC LIMIT $6");
        // One JSON array for the page, as in `get_pins`, sorted here: an ORDER BY in the
        // aggregate sorts the page through a temporary B-tree, which doubled SQLite's time
        // for a page; the rows come in order already, which this sort checks in one pass.
        let page: String = sqlx::query_scalar(&format!(
            "SELECT json_group_array(json_array(seq, id, version, updated_at)) FROM ({sql})"
        ))
        .bind(ws)
        .bind(query.before_seq)
        .bind(&query.pin_type)
        .bind(&query.tag)
        .bind(query.updated_since)
        .bind(query.limit)
        .bind(&query.pinboard_id)
        .fetch_one(&self.reader)
        .await?;
        let mut keys: Vec<(i64, String, i64, i64)> = serde_json::from_str(&page)
            .map_err(|e| Error::Internal(format!("stored page: {e}")))?;
        keys.sort_by_key(|(seq, ..)| std::cmp::Reverse(*seq));
        Ok(keys
            .into_iter()
            .map(|(seq, id, version, updated_at)| PinKey {
                seq,
                id,
                version,
                updated_at,
            })
            .collect())
    }

    async fn update_pins(
        &self,
        ws: &str,
        ids: &[String],
        retention: u32,
        change: &mut Change<'_>,
    ) -> Result<Vec<Pin>> {
        let mut tx = self.writer.begin().await?;
        let mut updated = Vec::with_capacity(ids.len());
        for (i, id) in ids.iter().enumerate() {
            let row = sqlx::query(&format!(
                "SELECT {PIN_COLUMNS} FROM pins WHERE workspace_id = $1 AND id = $2"
            ))
            .bind(ws)
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or_else(|| pin_missing(i))?;
            let new = change(i, pin_from_row(&row)?)?;
            sqlx::query(SAVE_VERSION).bind(id).execute(&mut *tx).await?;
            sqlx::query(UPDATE_PIN)
                .bind(id)
                .bind(&new.pin_type)
                .bind(&new.pin_config)
                .bind(&new.pin_layout)
                .bind(new.is_public)
                .bind(&new.title)
                .bind(tags_json(&new.tags))
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
        let mut tx = self.writer.begin().await?;
        for (i, id) in ids.iter().enumerate() {
            let row = sqlx::query(&format!(
                "SELECT {PIN_COLUMNS} FROM pins WHERE workspace_id = $1 AND id = $2"
            ))
            .bind(ws)
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or_else(|| pin_missing(i))?;
            check(i, &pin_from_row(&row)?)?;
            sqlx::query("DELETE FROM placements WHERE pin_id = $1")
                .bind(id)
                .execute(&mut *tx)
                .await?;
            sqlx::query("DELETE FROM pins WHERE id = $1")
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
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
            .fetch_optional(&self.reader)
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
        .fetch_all(&self.reader)
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
            .fetch_optional(&self.reader)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_row_inserts_with_insert_pin_and_more_take_twelve_parameters_each() {
        assert_eq!(insert_rows(1), INSERT_PIN);
        let sql = insert_rows(3);
        assert!(sql.starts_with(insert_pins_into!()));
        assert_eq!(sql.matches('?').count(), 36);
    }
}
