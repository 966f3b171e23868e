//! Pins as `?render=true` reads, share pages and live pages show them: templates resolved
//! against the workspace's datasets and blocks evaluated (CONTRACT.md 7). One path for all
//! of them: [`resolve`] reads every dataset and block the pins need in one query each.
//! Rendering never writes: the stored configuration keeps its braces and its version.

use std::collections::BTreeSet;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::PinRecord;
use crate::{
    app::AppState,
    blocks::ops::{evaluate, referenced, BlockRecord, Evaluated},
    error::{Error, Result},
    store::{Block, Pin},
    templates::{self, Renderer, Warning},
};

/// A pin resolved: its configuration with every template replaced, its blocks evaluated,
/// and what could not be resolved.
pub struct Resolved {
    /// The pin with `pin_config` resolved.
    pub pin: Pin,
    pub blocks: Vec<Block>,
    pub warnings: Vec<Warning>,
    evaluated: Vec<(crate::blocks::body::BlockType, Value, usize)>,
}

impl Resolved {
    /// The evaluated blocks, in order.
    pub fn blocks(&self) -> impl Iterator<Item = Evaluated<'_>> {
        self.evaluated
            .iter()
            .map(|(block_type, config, source)| Evaluated {
                block: &self.blocks[*source],
                block_type: *block_type,
                config: config.clone(),
            })
    }

    /// The HTML of the evaluated blocks, drawn by the pin renderer: a block's config is
    /// the config of the pin type of the same name (`markdown`, `image`, `code`).
    pub fn blocks_html(&self) -> String {
        let html: String = self
            .blocks()
            .map(|e| crate::render::pin_body(e.block_type.as_str(), &e.config.to_string()))
            .collect();
        if html.is_empty() {
            html
        } else {
            format!("<div class=\"blocks\">{html}</div>")
        }
    }

    /// The record of a rendered read.
    pub fn record(&self, public_base: &str) -> Result<Box<serde_json::value::RawValue>> {
        let blocks: Vec<Evaluated<'_>> = self.blocks().collect();
        let record = RenderedPin {
            record: PinRecord::new(&self.pin, public_base)?,
            blocks: blocks
                .iter()
                .map(Evaluated::record)
                .collect::<Result<_>>()?,
            render: RenderInfo {
                warnings: &self.warnings,
            },
        };
        super::ops::to_data(&record)
    }
}

/// A pin record read with `?render=true`.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "RenderedPin")]
pub struct RenderedPin<'a> {
    #[serde(flatten)]
    pub record: PinRecord<'a>,
    /// The pin's blocks, evaluated: each conditional replaced by its chosen branch.
    pub blocks: Vec<BlockRecord<'a>>,
    pub render: RenderInfo<'a>,
}

/// What a pin read returns: the record, or with `?render=true` the rendered record (the
/// API description's shape of those reads).
#[derive(Serialize, JsonSchema)]
#[serde(untagged)]
pub enum PinRead<'a> {
    Stored(PinRecord<'a>),
    Rendered(RenderedPin<'a>),
}

/// What rendering could not resolve.
#[derive(Serialize, JsonSchema)]
pub struct RenderInfo<'a> {
    /// One per variable that resolved to nothing (and became the empty string).
    pub warnings: &'a [Warning],
}

/// Resolves the pins of a page of the item `id` (a pin or a board) in the item's workspace.
pub async fn for_page(state: &AppState, id: &str, pins: Vec<Pin>) -> Result<Vec<Resolved>> {
    match state.store.workspace_of(id).await? {
        Some(ws) => resolve(state, &ws, pins).await,
        None => Ok(Vec::new()),
    }
}

/// Resolves `pins` of workspace `ws`: one query for all their blocks, one for every dataset
/// they refer to.
pub async fn resolve(state: &AppState, ws: &str, pins: Vec<Pin>) -> Result<Vec<Resolved>> {
    let ids: Vec<String> = pins.iter().map(|p| p.id.clone()).collect();
    let mut blocks = state.store.blocks_of(ws, &ids).await?;
    let mut configs = Vec::with_capacity(pins.len());
    let mut names = BTreeSet::new();
    for pin in &pins {
        let config: Value = serde_json::from_str(&pin.pin_config)
            .map_err(|e| Error::Internal(format!("stored pin config: {e}")))?;
        templates::referenced(&config, &mut names);
        if let Some(of_pin) = blocks.get(&pin.id) {
            referenced(of_pin, &mut names)?;
        }
        configs.push(config);
    }
    let datasets = crate::datasets::ops::for_templates(state, ws, &names).await?;
    pins.into_iter()
        .zip(configs)
        .map(|(mut pin, config)| {
            let mut renderer = Renderer::new(&datasets);
            pin.pin_config = renderer.value(&config, "pin_config").to_string();
            let pin_blocks = blocks.remove(&pin.id).unwrap_or_default();
            let evaluated = evaluate(&pin_blocks, &mut renderer)?
                .into_iter()
                .map(|e| {
                    let source = pin_blocks
                        .iter()
                        .position(|b| b.id == e.block.id)
                        .unwrap_or_default();
                    (e.block_type, e.config, source)
                })
                .collect();
            Ok(Resolved {
                pin,
                warnings: renderer.into_warnings(),
                evaluated,
                blocks: pin_blocks,
            })
        })
        .collect()
}
