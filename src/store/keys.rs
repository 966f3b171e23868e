//! Workspaces, the first-start claim and API keys, written once for both databases.

use super::sql::{Backend, Record};
use crate::error::Result;

/// A stored API key (the secret itself is never stored).
#[derive(Debug, Clone)]
pub struct KeyRow {
    pub id: String,
    pub workspace_id: String,
    pub name: String,
    pub lookup: String,
    pub secret_hash: String,
    pub scopes: String,
    pub tier: String,
    pub created_at: i64,
    pub last_used_at: Option<i64>,
    pub revoked_at: Option<i64>,
    /// Past this instant the key no longer authenticates.
    pub expires_at: Option<i64>,
    /// The user whose current role bounds what the key may do (`None`: made with the CLI).
    pub created_by: Option<String>,
}

/// Finds an API key by its public lookup part: the first statement of every request.
pub(super) const FIND_KEY: &str = "SELECT * FROM api_keys WHERE lookup = $1";
pub(super) const ENSURE_WORKSPACE: &str =
    "INSERT INTO workspaces (id, name, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING";
const WORKSPACE_ID: &str = "SELECT id FROM workspaces WHERE name = $1";
const CLAIM_BOOTSTRAP: &str =
    "INSERT INTO meta (key, value) VALUES ('bootstrapped', '1') ON CONFLICT (key) DO NOTHING";
const INSERT_KEY: &str =
    "INSERT INTO api_keys (id, workspace_id, name, lookup, secret_hash, scopes, tier, \
     created_at, expires_at, created_by) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";
const LIST_KEYS: &str = "SELECT k.*, w.name AS workspace_name FROM api_keys k \
     JOIN workspaces w ON w.id = k.workspace_id ORDER BY k.created_at DESC, k.id";
const REVOKE_KEY: &str = "UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL";
const LIVE_KEYS: &str =
    "SELECT COUNT(*) FROM api_keys WHERE workspace_id = $1 AND revoked_at IS NULL";
const TOUCH_KEY: &str = "UPDATE api_keys SET last_used_at = $2 WHERE id = $1";

pub(super) fn key_from_row(row: &impl Record) -> Result<KeyRow> {
    Ok(KeyRow {
        id: row.get("id")?,
        workspace_id: row.get("workspace_id")?,
        name: row.get("name")?,
        lookup: row.get("lookup")?,
        secret_hash: row.get("secret_hash")?,
        scopes: row.get("scopes")?,
        tier: row.get("tier")?,
        created_at: row.get("created_at")?,
        last_used_at: row.get("last_used_at")?,
        revoked_at: row.get("revoked_at")?,
        expires_at: row.get("expires_at")?,
        created_by: row.get("created_by")?,
    })
}

/// The store's liveness, workspaces and keys.
pub(crate) trait KeyStore {
    async fn ping(&self) -> Result<()>;
    /// The id of the workspace named `name`, created when new.
    async fn ensure_workspace(&self, name: &str) -> Result<String>;
    /// True exactly once per store: the caller then creates the first key.
    async fn claim_bootstrap(&self) -> Result<bool>;
    async fn insert_key(&self, key: &KeyRow) -> Result<()>;
    async fn find_key(&self, lookup: &str) -> Result<Option<KeyRow>>;
    /// Every key with its workspace's name, newest first (the CLI's list).
    async fn list_keys(&self) -> Result<Vec<(KeyRow, String)>>;
    /// False when there is no live key of that id.
    async fn revoke_key(&self, id: &str, at: i64) -> Result<bool>;
    async fn touch_key(&self, id: &str, at: i64) -> Result<()>;
    /// How many keys of the workspace are not revoked.
    async fn live_keys(&self, ws: &str) -> Result<i64>;
}

impl<B: Backend> KeyStore for B {
    async fn ping(&self) -> Result<()> {
        B::query("SELECT 1")
            .execute(&mut *self.reader().await?)
            .await?;
        Ok(())
    }

    async fn ensure_workspace(&self, name: &str) -> Result<String> {
        let mut conn = self.writer().await?;
        B::query(ENSURE_WORKSPACE)
            .bind(crate::ids::new_id("ws-"))
            .bind(name)
            .bind(crate::clock::now_ms())
            .execute(&mut *conn)
            .await?;
        let row = B::query(WORKSPACE_ID)
            .bind(name)
            .fetch_optional(&mut *conn)
            .await?
            .ok_or(sqlx::Error::RowNotFound)?;
        Ok(row.get(0)?)
    }

    async fn claim_bootstrap(&self) -> Result<bool> {
        let done = B::query(CLAIM_BOOTSTRAP)
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(done == 1)
    }

    async fn insert_key(&self, key: &KeyRow) -> Result<()> {
        B::query(INSERT_KEY)
            .bind(&key.id)
            .bind(&key.workspace_id)
            .bind(&key.name)
            .bind(&key.lookup)
            .bind(&key.secret_hash)
            .bind(&key.scopes)
            .bind(&key.tier)
            .bind(key.created_at)
            .bind(key.expires_at)
            .bind(&key.created_by)
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(())
    }

    async fn live_keys(&self, ws: &str) -> Result<i64> {
        let row = B::query(LIVE_KEYS)
            .bind(ws)
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        Ok(row.map(|r| r.get(0)).transpose()?.unwrap_or(0))
    }

    async fn find_key(&self, lookup: &str) -> Result<Option<KeyRow>> {
        let row = B::query(FIND_KEY)
            .bind(lookup)
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        row.as_ref().map(key_from_row).transpose()
    }

    async fn list_keys(&self) -> Result<Vec<(KeyRow, String)>> {
        let rows = B::query(LIST_KEYS)
            .fetch_all(&mut *self.reader().await?)
            .await?;
        rows.iter()
            .map(|r| Ok((key_from_row(r)?, r.get("workspace_name")?)))
            .collect()
    }

    async fn revoke_key(&self, id: &str, at: i64) -> Result<bool> {
        let done = B::query(REVOKE_KEY)
            .bind(id)
            .bind(at)
            .execute(&mut *self.writer().await?)
            .await;
        self.auth().changed();
        Ok(done? == 1)
    }

    async fn touch_key(&self, id: &str, at: i64) -> Result<()> {
        B::query(TOUCH_KEY)
            .bind(id)
            .bind(at)
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(())
    }
}
