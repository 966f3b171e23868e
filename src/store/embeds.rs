//! The share setting `embed_origins` of pins and boards (CONTRACT.md 17) in the store: one
//! row per item that has any, beside the item rather than in it, so a pin's hot paths (its
//! columns, its versions, the group commit) stay as they are. The row names its pin or its
//! board by a foreign key and goes with it.

use super::sql::Begin as _;

use super::sql::{Backend, Record};
use crate::error::Result;

/// `embed_origins` in the store.
pub(crate) trait EmbedStore {
    /// The origins that may frame item `id` of workspace `ws` (empty without a row).
    async fn embed_origins(&self, ws: &str, id: &str) -> Result<Vec<String>>;
    /// Replaces them; false when the workspace has no such pin or board.
    async fn set_embed_origins(&self, ws: &str, id: &str, origins: &[String]) -> Result<bool>;
}

/// The item's table and the column of `embed_origins` that names it, by the id's prefix.
fn item_of(id: &str) -> (&'static str, &'static str) {
    if id.starts_with("pb-") {
        ("pinboards", "pinboard_id")
    } else {
        ("pins", "pin_id")
    }
}

const EMBED_ORIGINS: &str =
    "SELECT origins FROM embed_origins WHERE workspace_id = $1 AND item_id = $2";
const DELETE_EMBED_ORIGINS: &str =
    "DELETE FROM embed_origins WHERE workspace_id = $1 AND item_id = $2";

impl<B: Backend> EmbedStore for B {
    async fn embed_origins(&self, ws: &str, id: &str) -> Result<Vec<String>> {
        let row = B::query(EMBED_ORIGINS)
            .bind(ws)
            .bind(id)
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        Ok(row.map(|r| r.list(0)).transpose()?.unwrap_or_default())
    }

    async fn set_embed_origins(&self, ws: &str, id: &str, origins: &[String]) -> Result<bool> {
        let (table, column) = item_of(id);
        let mut conn = self.writer().await?;
        let mut tx = conn.begin().await?;
        // The item, kept from going away until the commit.
        let sql = format!(
            "SELECT id FROM {table} WHERE workspace_id = $1 AND id = $2{}",
            B::FOR_KEY_SHARE
        );
        let found = B::query(&sql)
            .bind(ws)
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?;
        if found.is_none() {
            return Ok(false);
        }
        B::query(DELETE_EMBED_ORIGINS)
            .bind(ws)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        if !origins.is_empty() {
            let sql = format!(
                "INSERT INTO embed_origins (item_id, workspace_id, {column}, origins) \
                 VALUES ($1, $2, $1, $3)"
            );
            B::query(&sql)
                .bind(id)
                .bind(ws)
                .bind_list(origins)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(true)
    }
}
