//! A pin's blocks in the store (CONTRACT.md 7), written once for both databases. Blocks are
//! part of their pin: every block write locks the pin, saves its old state as a version,
//! bumps its `version` and `updated_at` and appends its [`crate::events::EventKind::PinUpdated`] event, all in one
//! transaction ([`super::pins::save_change`]); they are deleted with it (foreign key).

use std::collections::HashMap;

use super::sql::Begin as _;

use super::pins::{lock_pins, save_change};
use super::sql::{Backend, Record};
use crate::error::{Error, Result};

/// A stored block. `config` is JSON text; `position` is its 0-based index in the pin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub id: String,
    pub pin_id: String,
    pub block_type: String,
    pub config: String,
    pub position: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

/// Edits, inside the write transaction, a pin's blocks in their order: insert, change,
/// remove or reorder them in the list. Positions are renumbered from the list's order.
pub type BlockEdit<'a> = dyn FnMut(&mut Vec<Block>) -> Result<()> + Send + 'a;

/// Blocks in the store. Every method takes the caller's workspace id.
pub(crate) trait BlockStore {
    /// The pin's blocks in order; `None` when the workspace has no such pin.
    async fn pin_blocks(&self, ws: &str, pin_id: &str) -> Result<Option<Vec<Block>>>;
    /// The blocks of the workspace's pins among `pin_ids`, by pin, in order (for rendered
    /// reads: one query for a whole list).
    async fn blocks_of(&self, ws: &str, pin_ids: &[String]) -> Result<HashMap<String, Vec<Block>>>;
    /// Applies `edit` to the pin's blocks at `now` and commits what changed with the pin's
    /// new version (keeping at most `retention` past versions); the blocks after the edit.
    /// 404 when the workspace has no such pin.
    async fn write_blocks(
        &self,
        ws: &str,
        pin_id: &str,
        now: i64,
        retention: u32,
        edit: &mut BlockEdit<'_>,
    ) -> Result<Vec<Block>>;
}

/// The columns of a block, in the order [`block_at`] reads them.
macro_rules! block_columns {
    () => {
        "id, pin_id, block_type, config, position, created_at, updated_at"
    };
}

const PIN_BLOCKS: &str = concat!(
    "SELECT ",
    block_columns!(),
    " FROM blocks WHERE pin_id = $1 ORDER BY position"
);
const PIN_EXISTS: &str = "SELECT 1 FROM pins WHERE workspace_id = $1 AND id = $2";
const INSERT_BLOCK: &str = "INSERT INTO blocks (id, pin_id, block_type, config, position, \
     created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7)";
const UPDATE_BLOCK: &str = "UPDATE blocks SET block_type = $2, config = $3, position = $4, \
     updated_at = $5 WHERE id = $1";
const DELETE_BLOCK: &str = "DELETE FROM blocks WHERE id = $1";

fn block_at(row: &impl Record) -> Result<Block> {
    Ok(Block {
        id: row.get(0)?,
        pin_id: row.get(1)?,
        block_type: row.get(2)?,
        config: row.get(3)?,
        position: row.get(4)?,
        created_at: row.get(5)?,
        updated_at: row.get(6)?,
    })
}

fn pin_missing() -> Error {
    Error::NotFound {
        what: "pin",
        index: None,
    }
}

impl<B: Backend> BlockStore for B {
    async fn pin_blocks(&self, ws: &str, pin_id: &str) -> Result<Option<Vec<Block>>> {
        let mut conn = self.reader().await?;
        let exists = B::query(PIN_EXISTS)
            .bind(ws)
            .bind(pin_id)
            .fetch_optional(&mut *conn)
            .await?;
        if exists.is_none() {
            return Ok(None);
        }
        let rows = B::query(PIN_BLOCKS)
            .bind(pin_id)
            .fetch_all(&mut *conn)
            .await?;
        rows.iter().map(block_at).collect::<Result<_>>().map(Some)
    }

    async fn blocks_of(&self, ws: &str, pin_ids: &[String]) -> Result<HashMap<String, Vec<Block>>> {
        let mut by_pin: HashMap<String, Vec<Block>> = HashMap::new();
        if pin_ids.is_empty() {
            return Ok(by_pin);
        }
        let sql = format!(
            "SELECT b.id, b.pin_id, b.block_type, b.config, b.position, b.created_at, b.updated_at \
             FROM blocks b JOIN pins p ON p.id = b.pin_id WHERE p.workspace_id = $1 AND {} \
             ORDER BY b.pin_id, b.position",
            B::in_list("b.pin_id", 2)
        );
        let rows = B::query(&sql)
            .bind(ws)
            .bind_list(pin_ids)
            .fetch_all(&mut *self.reader().await?)
            .await?;
        for row in &rows {
            let block = block_at(row)?;
            by_pin.entry(block.pin_id.clone()).or_default().push(block);
        }
        Ok(by_pin)
    }

    async fn write_blocks(
        &self,
        ws: &str,
        pin_id: &str,
        now: i64,
        retention: u32,
        edit: &mut BlockEdit<'_>,
    ) -> Result<Vec<Block>> {
        let mut conn = self.writer().await?;
        let mut tx = conn.begin().await?;
        let ids = [pin_id.to_owned()];
        let mut pin = lock_pins::<B>(&mut *tx, ws, &ids)
            .await?
            .remove(pin_id)
            .ok_or_else(pin_missing)?;
        let rows = B::query(PIN_BLOCKS)
            .bind(pin_id)
            .fetch_all(&mut *tx)
            .await?;
        let before = rows.iter().map(block_at).collect::<Result<Vec<_>>>()?;
        let mut after = before.clone();
        edit(&mut after)?;
        for (position, block) in after.iter_mut().enumerate() {
            block.position = position as i64;
        }
        let old: HashMap<&str, &Block> = before.iter().map(|b| (b.id.as_str(), b)).collect();
        let kept: Vec<&str> = after.iter().map(|b| b.id.as_str()).collect();
        for gone in before.iter().filter(|b| !kept.contains(&b.id.as_str())) {
            B::query(DELETE_BLOCK)
                .bind(&gone.id)
                .execute(&mut *tx)
                .await?;
        }
        for block in &after {
            match old.get(block.id.as_str()) {
                Some(was) if *was == block => {}
                Some(_) => {
                    B::query(UPDATE_BLOCK)
                        .bind(&block.id)
                        .bind(&block.block_type)
                        .bind(&block.config)
                        .bind(block.position)
                        .bind(block.updated_at)
                        .execute(&mut *tx)
                        .await?;
                }
                None => {
                    B::query(INSERT_BLOCK)
                        .bind(&block.id)
                        .bind(pin_id)
                        .bind(&block.block_type)
                        .bind(&block.config)
                        .bind(block.position)
                        .bind(block.created_at)
                        .bind(block.updated_at)
                        .execute(&mut *tx)
                        .await?;
                }
            }
        }
        pin.version += 1;
        pin.updated_at = now.max(pin.updated_at);
        let event = save_change::<B>(&mut *tx, ws, &pin, retention, self.render()).await?;
        B::append_events(&mut *tx, std::slice::from_ref(&event)).await?;
        tx.commit().await?;
        self.committed(ws);
        Ok(after)
    }
}
