//! Inbound hooks in the store (CONTRACT.md 14): the stored shape and [`HookStore`], written
//! once for both databases. A hook's token is stored as an API key's secret is: a lookup
//! handle and a hash, never the token itself.

use super::sql::{Backend, Record};
use crate::error::Result;

/// A stored hook.
#[derive(Debug, Clone)]
pub struct HookRow {
    pub id: String,
    pub workspace_id: String,
    pub name: String,
    /// The name of the dataset it writes (created on its first call when missing).
    pub dataset: String,
    pub mode: String,
    pub max_items: i64,
    /// The token's first characters: indexed, what a call is looked up by.
    pub lookup: String,
    /// SHA-256 of the whole token, hex.
    pub token_hash: String,
    pub signature_scheme: Option<String>,
    pub signature_secret: Option<String>,
    pub created_at: i64,
}

/// Position of one page of `GET /hooks`, newest first.
#[derive(Debug, Clone, Default)]
pub struct HookQuery {
    /// Rows to fetch (one more than shown, to learn `has_more`).
    pub limit: i64,
    /// Only hooks created before this position (from the cursor).
    pub before_seq: Option<i64>,
}

/// Hooks in the store. Every method but [`HookStore::find_hook`] takes the workspace id:
/// a call to a hook's url names no workspace, only the token, whose row says which.
pub(crate) trait HookStore {
    async fn insert_hook(&self, hook: &HookRow) -> Result<()>;
    /// The hook whose token has this lookup handle (its hash is the caller's to compare).
    async fn find_hook(&self, lookup: &str) -> Result<Option<HookRow>>;
    async fn list_hooks(&self, ws: &str, query: &HookQuery) -> Result<Vec<(i64, HookRow)>>;
    /// False when the workspace has no hook of that id.
    async fn delete_hook(&self, ws: &str, id: &str) -> Result<bool>;
}

/// The columns of a hook, in the order [`hook_at`] reads them.
macro_rules! hook_columns {
    () => {
        "id, workspace_id, name, dataset, mode, max_items, lookup, token_hash, \
         signature_scheme, signature_secret, created_at"
    };
}

const INSERT_HOOK: &str = concat!(
    "INSERT INTO hooks (",
    hook_columns!(),
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
);
/// The first statement of every call to a hook's url.
const FIND_HOOK: &str = concat!("SELECT ", hook_columns!(), " FROM hooks WHERE lookup = $1");
const LIST_HOOKS: &str = concat!(
    "SELECT seq, ",
    hook_columns!(),
    " FROM hooks WHERE workspace_id = $1 AND ($2 IS NULL OR seq < $2) ORDER BY seq DESC LIMIT $3"
);
const DELETE_HOOK: &str = "DELETE FROM hooks WHERE workspace_id = $1 AND id = $2";

/// A hook from the hook columns at column `first` on.
fn hook_at(row: &impl Record, first: usize) -> Result<HookRow> {
    Ok(HookRow {
        id: row.get(first)?,
        workspace_id: row.get(first + 1)?,
        name: row.get(first + 2)?,
        dataset: row.get(first + 3)?,
        mode: row.get(first + 4)?,
        max_items: row.get(first + 5)?,
        lookup: row.get(first + 6)?,
        token_hash: row.get(first + 7)?,
        signature_scheme: row.get(first + 8)?,
        signature_secret: row.get(first + 9)?,
        created_at: row.get(first + 10)?,
    })
}

impl<B: Backend> HookStore for B {
    async fn insert_hook(&self, hook: &HookRow) -> Result<()> {
        B::query(INSERT_HOOK)
            .bind(&hook.id)
            .bind(&hook.workspace_id)
            .bind(&hook.name)
            .bind(&hook.dataset)
            .bind(&hook.mode)
            .bind(hook.max_items)
            .bind(&hook.lookup)
            .bind(&hook.token_hash)
            .bind(&hook.signature_scheme)
            .bind(&hook.signature_secret)
            .bind(hook.created_at)
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(())
    }

    async fn find_hook(&self, lookup: &str) -> Result<Option<HookRow>> {
        B::query(FIND_HOOK)
            .bind(lookup)
            .fetch_optional(&mut *self.reader().await?)
            .await?
            .map(|row| hook_at(&row, 0))
            .transpose()
    }

    async fn list_hooks(&self, ws: &str, query: &HookQuery) -> Result<Vec<(i64, HookRow)>> {
        let rows = B::query(LIST_HOOKS)
            .bind(ws)
            .bind(query.before_seq)
            .bind(query.limit)
            .fetch_all(&mut *self.reader().await?)
            .await?;
        rows.iter()
            .map(|row| Ok((row.get(0)?, hook_at(row, 1)?)))
            .collect()
    }

    async fn delete_hook(&self, ws: &str, id: &str) -> Result<bool> {
        let done = B::query(DELETE_HOOK)
            .bind(ws)
            .bind(id)
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(done == 1)
    }
}
