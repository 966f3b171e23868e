//! The block operations (CONTRACT.md 7), plain functions over the state and the caller.
//! Every write goes through [`crate::store::Store::write_blocks`], which commits the blocks
//! with their pin's new version and its `pin.updated` event.

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::body::{self, BlockType};
use crate::{
    app::AppState,
    auth::Principal,
    clock,
    error::{Error, Result},
    pins::ops::reads_datasets,
    store::{Block, JsonText},
    templates::Renderer,
    wire::{body::present, Deleted},
};

/// Most blocks one pin may have.
pub const MAX_BLOCKS: usize = 100;

/// `POST /pins/{id}/blocks` body. Its schema is one variant per block type
/// (`body::typed_bodies`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateBlockBody {
    pub block_type: BlockType,
    pub config: Value,
    #[serde(default, deserialize_with = "present")]
    pub position: Option<i64>,
}

/// A block `position`: an index of the pin's blocks.
fn position_schema(description: &str) -> Value {
    json!({
        "description": description,
        "type": "integer",
        "minimum": 0,
        "maximum": MAX_BLOCKS - 1,
    })
}

impl JsonSchema for CreateBlockBody {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "CreateBlockBody".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let position = position_schema(
            "Index to insert at (0 = first), at most the number of blocks the pin has (else \
             400); without it, last. A pin has at most 100 blocks (else 400).",
        );
        let mut schema =
            body::typed_bodies(generator, "BlockCreate", Some(("position", position)), 1);
        schema.insert(
            "description".into(),
            "`POST /pins/{id}/blocks` body: `config` of the `block_type` (`markdown {text}`, \
             `image {url, alt?}`, `code {language, code}`, or `conditional {if: {var, op, \
             value?}, then: [{block_type, config}], else?: [...]}`); image URLs http(s) and \
             conditionals nested at most 4 deep (else 400)."
                .into(),
        );
        schema.insert(
            "examples".into(),
            json!([{"block_type": "markdown", "config": {"text": "Total: **{{sales.total}}**"}}]),
        );
        schema
    }
}

/// `PUT`/`PATCH /pins/{id}/blocks/{blockId}` body: only the fields sent change, at least
/// one (`config` replaces the config; a new `block_type` needs a config valid for it, sent
/// or stored; `position` moves the block, to at most the last index).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpdateBlockBody {
    #[serde(default, deserialize_with = "present")]
    pub block_type: Option<BlockType>,
    #[serde(default, deserialize_with = "present")]
    pub config: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub position: Option<i64>,
}

impl JsonSchema for UpdateBlockBody {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "UpdateBlockBody".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "`PUT`/`PATCH /pins/{id}/blocks/{blockId}` body: only the fields \
                sent change, at least one. `config` replaces the config: of `block_type` when \
                both are sent, else of the stored type (400); a new `block_type` alone needs \
                the stored config to be valid for it (400).",
            "type": "object",
            "additionalProperties": false,
            "minProperties": 1,
            "properties": {
                "block_type": generator.subschema_for::<BlockType>(),
                "config": body::config_schema(generator),
                "position": position_schema(
                    "The block's new index, at most the last one (else 400).",
                ),
            },
            "allOf": body::config_by_type(generator),
        })
    }
}

/// `PUT /pins/{id}/blocks/order` body.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OrderBody {
    /// Every block of the pin, exactly once, in the new order (else 400).
    #[schemars(length(max = MAX_BLOCKS), extend("uniqueItems" = true))]
    pub block_ids: Vec<String>,
}

fn object(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "object"})
}

/// The block record (CONTRACT.md 7).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "Block", deny_unknown_fields)]
pub struct BlockRecord {
    pub id: String,
    pub pin_id: String,
    pub block_type: BlockType,
    #[schemars(schema_with = "object")]
    pub config: JsonText,
    pub position: i64,
    #[schemars(extend("format" = "date-time"))]
    pub created_at: String,
    #[schemars(extend("format" = "date-time"))]
    pub updated_at: String,
}

impl BlockRecord {
    fn new(block: &Block) -> Result<Self> {
        Ok(BlockRecord {
            id: block.id.clone(),
            pin_id: block.pin_id.clone(),
            block_type: body::parse_type(&block.block_type)?,
            config: JsonText::stored(block.config.as_str())?,
            position: block.position,
            created_at: clock::iso(block.created_at),
            updated_at: clock::iso(block.updated_at),
        })
    }

    /// The same block with `config` in place of its own (an evaluated block).
    fn with(block: &Block, block_type: BlockType, config: &Value) -> Result<Self> {
        Ok(BlockRecord {
            block_type,
            config: JsonText::new(config)?,
            ..BlockRecord::new(block)?
        })
    }
}

fn records(blocks: &[Block]) -> Result<Vec<BlockRecord>> {
    blocks.iter().map(BlockRecord::new).collect()
}

fn block_missing() -> Error {
    Error::NotFound {
        what: "block",
        index: None,
    }
}

/// The stored text of a checked config: at most `limits.pin_config_bytes`, like a pin's.
fn config_text(state: &AppState, block_type: &BlockType, config: &Value) -> Result<String> {
    body::check(block_type, config, "config")?;
    let text = config.to_string();
    let max = state.limits().pin_config_bytes;
    if text.len() > max {
        return Err(Error::validation(
            "config",
            format!("at most {max} bytes of JSON"),
        ));
    }
    Ok(text)
}

fn position_within(position: i64, len: usize) -> Result<usize> {
    usize::try_from(position)
        .ok()
        .filter(|p| *p <= len)
        .ok_or_else(|| Error::validation("position", format!("an index from 0 to {len}")))
}

/// `GET /pins/{id}/blocks`: in order; with `render`, evaluated (conditionals replaced by
/// their chosen branch, templates resolved).
pub async fn list(
    state: &AppState,
    who: &Principal,
    pin_id: &str,
    render: bool,
) -> Result<Vec<BlockRecord>> {
    reads_datasets(who, render)?;
    let blocks = state
        .store
        .pin_blocks(&who.workspace_id, pin_id)
        .await?
        .ok_or(Error::NotFound {
            what: "pin",
            index: None,
        })?;
    if !render {
        return records(&blocks);
    }
    let mut names = std::collections::BTreeSet::new();
    referenced(&blocks, &mut names)?;
    let datasets = crate::datasets::ops::for_templates(state, &who.workspace_id, &names).await?;
    let mut renderer = Renderer::new(&datasets);
    let evaluated = evaluate(&blocks, &mut renderer)?;
    evaluated.iter().map(Evaluated::record).collect()
}

fn stored_config(block: &Block) -> Result<Value> {
    serde_json::from_str(&block.config).map_err(|e| Error::internal_in("stored block config", e))
}

/// A block as a rendered read shows it: a stored block, or one of the blocks of a
/// conditional's chosen branch (which carries the conditional's id and position).
pub struct Evaluated<'a> {
    pub block: &'a Block,
    pub block_type: BlockType,
    pub config: Value,
}

impl Evaluated<'_> {
    pub fn record(&self) -> Result<BlockRecord> {
        BlockRecord::with(self.block, self.block_type, &self.config)
    }
}

/// A pin's blocks evaluated: conditionals replaced by the blocks of their chosen branch,
/// templates resolved; warnings go to `renderer`, named `blocks[i].config...`.
pub fn evaluate<'a>(
    blocks: &'a [Block],
    renderer: &mut Renderer<'_>,
) -> Result<Vec<Evaluated<'a>>> {
    let mut out = Vec::with_capacity(blocks.len());
    for (i, block) in blocks.iter().enumerate() {
        let block_type = body::parse_type(&block.block_type)?;
        let config = stored_config(block)?;
        let field = format!("blocks[{i}].config");
        for (kind, config) in body::evaluate(&block_type, &config, &field, renderer) {
            out.push(Evaluated {
                block,
                block_type: kind,
                config,
            });
        }
    }
    Ok(out)
}

/// The dataset names a pin's blocks refer to.
pub fn referenced(blocks: &[Block], names: &mut std::collections::BTreeSet<String>) -> Result<()> {
    for block in blocks {
        body::referenced(&stored_config(block)?, names);
    }
    Ok(())
}

/// `GET /pins/{id}/blocks/{blockId}`.
pub async fn get(
    state: &AppState,
    who: &Principal,
    pin_id: &str,
    block_id: &str,
) -> Result<BlockRecord> {
    let blocks = state
        .store
        .pin_blocks(&who.workspace_id, pin_id)
        .await?
        .ok_or_else(block_missing)?;
    let block = blocks
        .iter()
        .find(|b| b.id == block_id)
        .ok_or_else(block_missing)?;
    BlockRecord::new(block)
}

/// Whether a block config names a dataset (a conditional's `var` too).
fn names_datasets(config: &Value) -> bool {
    let mut names = std::collections::BTreeSet::new();
    body::referenced(config, &mut names);
    !names.is_empty()
}

/// `POST /pins/{id}/blocks`.
pub async fn create(
    state: &AppState,
    who: &Principal,
    pin_id: &str,
    body: CreateBlockBody,
) -> Result<BlockRecord> {
    let config = config_text(state, &body.block_type, &body.config)?;
    reads_datasets(who, names_datasets(&body.config))?;
    let now = clock::now_ms();
    let new = Block {
        id: crate::ids::new_id("blk-"),
        pin_id: pin_id.to_owned(),
        block_type: body.block_type.as_str().to_owned(),
        config,
        position: 0,
        created_at: now,
        updated_at: now,
    };
    let id = new.id.clone();
    let blocks = write(state, who, pin_id, now, &mut |blocks| {
        if blocks.len() >= MAX_BLOCKS {
            return Err(Error::validation(
                "blocks",
                format!("at most {MAX_BLOCKS} blocks per pin"),
            ));
        }
        let at = match body.position {
            Some(position) => position_within(position, blocks.len())?,
            None => blocks.len(),
        };
        blocks.insert(at, new.clone());
        Ok(())
    })
    .await?;
    one(&blocks, &id)
}

/// `PUT`/`PATCH /pins/{id}/blocks/{blockId}`.
pub async fn update(
    state: &AppState,
    who: &Principal,
    pin_id: &str,
    block_id: &str,
    body: UpdateBlockBody,
) -> Result<BlockRecord> {
    if body.block_type.is_none() && body.config.is_none() && body.position.is_none() {
        return Err(Error::validation(
            "body",
            "at least one of block_type, config, position",
        ));
    }
    if body.block_type.is_some() && body.config.is_none() {
        return Err(Error::validation(
            "config",
            "a config for the new block_type",
        ));
    }
    reads_datasets(who, body.config.as_ref().is_some_and(names_datasets))?;
    let now = clock::now_ms();
    let blocks = write(state, who, pin_id, now, &mut |blocks| {
        let at = blocks
            .iter()
            .position(|b| b.id == block_id)
            .ok_or_else(block_missing)?;
        let mut block = blocks.remove(at);
        let block_type = match &body.block_type {
            Some(kind) => *kind,
            None => body::parse_type(&block.block_type)?,
        };
        if let Some(config) = &body.config {
            block.config = config_text(state, &block_type, config)?;
            block.block_type = block_type.as_str().to_owned();
        }
        block.updated_at = now.max(block.updated_at);
        let to = match body.position {
            Some(position) => position_within(position, blocks.len())?,
            None => at,
        };
        blocks.insert(to, block);
        Ok(())
    })
    .await?;
    one(&blocks, block_id)
}

/// `DELETE /pins/{id}/blocks/{blockId}`: the blocks after it move up.
pub async fn delete(
    state: &AppState,
    who: &Principal,
    pin_id: &str,
    block_id: &str,
) -> Result<Deleted> {
    write(state, who, pin_id, clock::now_ms(), &mut |blocks| {
        let at = blocks
            .iter()
            .position(|b| b.id == block_id)
            .ok_or_else(block_missing)?;
        blocks.remove(at);
        Ok(())
    })
    .await?;
    Ok(Deleted::new(block_id))
}

/// `PUT /pins/{id}/blocks/order`: the records in their new order.
pub async fn reorder(
    state: &AppState,
    who: &Principal,
    pin_id: &str,
    body: OrderBody,
) -> Result<Vec<BlockRecord>> {
    let blocks = write(state, who, pin_id, clock::now_ms(), &mut |blocks| {
        let every_once =
            || Error::validation("block_ids", "every block id of the pin, each exactly once");
        if body.block_ids.len() != blocks.len() {
            return Err(every_once());
        }
        let mut ordered = Vec::with_capacity(blocks.len());
        for id in &body.block_ids {
            let at = blocks
                .iter()
                .position(|b| &b.id == id)
                .ok_or_else(every_once)?;
            ordered.push(blocks.swap_remove(at));
        }
        *blocks = ordered;
        Ok(())
    })
    .await?;
    records(&blocks)
}

async fn write(
    state: &AppState,
    who: &Principal,
    pin_id: &str,
    now: i64,
    edit: &mut crate::store::BlockEdit<'_>,
) -> Result<Vec<Block>> {
    state
        .store
        .write_blocks(
            &who.workspace_id,
            pin_id,
            now,
            state.limits().version_retention,
            edit,
        )
        .await
}

fn one(blocks: &[Block], id: &str) -> Result<BlockRecord> {
    let block = blocks
        .iter()
        .find(|b| b.id == id)
        .ok_or_else(block_missing)?;
    BlockRecord::new(block)
}
