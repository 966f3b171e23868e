//! Pins as `?render=true` reads, share pages and live pages show them: templates resolved
//! against the workspace's datasets and blocks evaluated (CONTRACT.md 7). One path for all
//! of them: [`resolve`] reads every dataset and block the pins need in one query each.
//! Rendering never writes: the stored configuration keeps its braces and its version.

use std::{
    collections::{BTreeSet, HashMap},
    hash::{DefaultHasher, Hash, Hasher},
    sync::Arc,
};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    records::{Generational, Weight},
    PinRecord,
};
use crate::{
    app::AppState,
    blocks::ops::{evaluate, referenced, BlockRecord, Evaluated},
    error::{Error, Result},
    store::{Block, Pin, PinKey, Serialized},
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
    pub fn into_record(self, public_base: &str) -> Result<RenderedPin> {
        let blocks = self.blocks().map(|e| e.record()).collect::<Result<_>>()?;
        Ok(RenderedPin {
            record: PinRecord::from_pin(self.pin, public_base)?,
            blocks,
            render: RenderInfo {
                warnings: self.warnings,
            },
        })
    }
}

/// A pin record read with `?render=true`.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "RenderedPin")]
pub struct RenderedPin {
    #[serde(flatten)]
    pub record: PinRecord,
    /// The pin's blocks, evaluated: each conditional replaced by its chosen branch.
    pub blocks: Vec<BlockRecord>,
    pub render: RenderInfo,
}

/// What a pin read returns: the record, or with `?render=true` the rendered record (the
/// API description's shape of those reads).
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum PinRead {
    Stored(PinRecord),
    Rendered(RenderedPin),
}

impl From<PinRecord> for PinRead {
    fn from(record: PinRecord) -> Self {
        PinRead::Stored(record)
    }
}

impl From<RenderedPin> for PinRead {
    fn from(record: RenderedPin) -> Self {
        PinRead::Rendered(record)
    }
}

impl PinRead {
    /// The pin's version (its `ETag`).
    pub fn version(&self) -> i64 {
        match self {
            PinRead::Stored(record) => record.version,
            PinRead::Rendered(rendered) => rendered.record.version,
        }
    }
}

/// What rendering could not resolve.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RenderInfo {
    /// One per variable that resolved to nothing (and became the empty string).
    pub warnings: Vec<Warning>,
}

/// What rendering may hold in memory (`[render]`).
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct RenderSettings {
    /// Bytes of rendered records kept for the lists and of pins kept for their next update
    /// ([`super::known`]), a third each.
    pub cache_bytes: usize,
    /// Bytes the templates of one response (a list's page, a batch, a share page) may add
    /// in all; past it, values are left empty with `size_limit` warnings. Each pin also
    /// has [`templates::MAX_RENDERED_BYTES`] of its own.
    pub max_response_bytes: usize,
}

/// What is left of one response's substitution budget: each pin renders within the lesser
/// of it and its own, and what it adds is taken from it.
pub struct Budget(usize);

impl Budget {
    /// The budget of one response.
    pub fn of(state: &AppState) -> Budget {
        Budget(state.settings.render.max_response_bytes)
    }

    /// The budget of the next pin.
    fn next(&self) -> usize {
        self.0.min(templates::MAX_RENDERED_BYTES)
    }

    fn spend(&mut self, bytes: usize) {
        self.0 = self.0.saturating_sub(bytes);
    }
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
    let mut sources = Vec::with_capacity(pins.len());
    let mut names = BTreeSet::new();
    for pin in pins {
        let of_pin = blocks.remove(&pin.id).unwrap_or_default();
        let source = Source::new(pin, of_pin)?;
        names.extend(source.refs.iter().cloned());
        sources.push(source);
    }
    let datasets = crate::datasets::ops::for_templates(state, ws, &names).await?;
    let mut budget = Budget::of(state);
    sources
        .into_iter()
        .map(|s| {
            s.render(&datasets, &mut budget)
                .map(|(resolved, _)| resolved)
        })
        .collect()
}

/// A pin with what rendering it needs: its parsed configuration, its blocks and the
/// datasets they name.
struct Source {
    pin: Pin,
    config: Value,
    blocks: Vec<Block>,
    refs: Vec<String>,
}

impl Source {
    fn new(pin: Pin, blocks: Vec<Block>) -> Result<Self> {
        let config: Value = serde_json::from_str(&pin.pin_config)
            .map_err(|e| Error::internal_in("stored pin config", e))?;
        let mut names = BTreeSet::new();
        templates::referenced(&config, &mut names);
        referenced(&blocks, &mut names)?;
        Ok(Source {
            pin,
            config,
            blocks,
            refs: names.into_iter().collect(),
        })
    }

    /// The pin resolved against `datasets`, within what is left of the response's `budget`
    /// (and its own); also what it added, and whether that is what any response would get
    /// (it was not cut short by the response's budget).
    fn render(
        mut self,
        datasets: &templates::Datasets,
        budget: &mut Budget,
    ) -> Result<(Resolved, Rendered)> {
        let allowed = budget.next();
        let mut renderer = Renderer::with_budget(datasets, allowed);
        self.pin.pin_config = renderer.value(&self.config, "pin_config").to_string();
        let evaluated = evaluate(&self.blocks, &mut renderer)?
            .into_iter()
            .map(|e| {
                let source = self
                    .blocks
                    .iter()
                    .position(|b| b.id == e.block.id)
                    .unwrap_or_default();
                (e.block_type, e.config, source)
            })
            .collect();
        let spent = renderer.spent();
        budget.spend(spent);
        let rendered = Rendered {
            spent,
            whole: allowed == templates::MAX_RENDERED_BYTES || !renderer.ran_out(),
        };
        Ok((
            Resolved {
                pin: self.pin,
                warnings: renderer.into_warnings(),
                evaluated,
                blocks: self.blocks,
            },
            rendered,
        ))
    }
}

/// What rendering one pin added to its response.
#[derive(Clone, Copy)]
struct Rendered {
    spent: usize,
    /// Whether the pin had its own whole budget (or didn't need it): such a record is what
    /// any response shows, and may be kept.
    whole: bool,
}

/// Rendered list records, kept by pin like [`super::records`]: a record stands for its pin's
/// version (blocks included: their writes bump it) and for the versions of the datasets it
/// names (its `stamp`). The datasets a pin names are kept with it, so a page whose pins and
/// datasets haven't changed costs the list's keys and one small query for the datasets'
/// versions, and no pin is read or rendered.
pub type RenderedCache = Generational<KeptRender>;

#[derive(Clone)]
pub struct KeptRender {
    version: i64,
    updated_at: i64,
    /// `last_pushed_at` and `stale` as the record says them.
    freshness: (i64, bool),
    refs: Arc<[String]>,
    stamp: u64,
    /// What its templates added: it counts against each response it is served in.
    spent: usize,
    record: Serialized<RenderedPin>,
}

impl Weight for KeptRender {
    fn bytes(&self) -> usize {
        self.record.as_str().len() + self.refs.iter().map(String::len).sum::<usize>()
    }
}

/// What a rendered record depends on beyond its pin: each named dataset's id and version,
/// or its absence.
fn stamp(refs: &[String], stamps: &HashMap<String, (String, i64)>) -> u64 {
    let mut hasher = DefaultHasher::new();
    for name in refs {
        name.hash(&mut hasher);
        stamps.get(name).hash(&mut hasher);
    }
    hasher.finish()
}

/// The rendered records of a list's page, in its order (a pin deleted meanwhile is left out).
pub async fn list_records(
    state: &AppState,
    ws: &str,
    keys: &[PinKey],
) -> Result<Vec<Serialized<RenderedPin>>> {
    let now = crate::clock::now_ms();
    let kept = state
        .rendered
        .find(keys.iter().map(|k| k.id.as_str()), |i, kept| {
            keys.get(i).is_some_and(|k| {
                kept.version == k.version
                    && kept.updated_at == k.updated_at
                    && kept.freshness == k.freshness(now)
            })
        });
    // Pins whose state was never rendered: read them to learn what they name.
    let unknown: Vec<String> = keys
        .iter()
        .zip(&kept)
        .filter(|(_, kept)| kept.is_none())
        .map(|(k, _)| k.id.clone())
        .collect();
    let mut sources = read_sources(state, ws, &unknown).await?;
    let refs_of = |i: usize, key: &PinKey| -> Vec<String> {
        match kept.get(i).and_then(Option::as_ref) {
            Some(kept) => kept.refs.to_vec(),
            None => sources
                .get(&key.id)
                .map(|s| s.refs.clone())
                .unwrap_or_default(),
        }
    };
    let mut names = BTreeSet::new();
    for (i, key) in keys.iter().enumerate() {
        names.extend(refs_of(i, key));
    }
    let names: Vec<String> = names.into_iter().collect();
    let stamps: HashMap<String, (String, i64)> = state
        .store
        .dataset_stamps(ws, &names)
        .await?
        .into_iter()
        .map(|(name, id, version)| (name, (id, version)))
        .collect();
    let stamps_now: Vec<u64> = keys
        .iter()
        .enumerate()
        .map(|(i, key)| stamp(&refs_of(i, key), &stamps))
        .collect();
    // Kept records whose datasets changed are rendered again: read those pins too.
    let stale: Vec<String> = keys
        .iter()
        .enumerate()
        .filter(|(i, _)| {
            kept.get(*i)
                .and_then(Option::as_ref)
                .is_some_and(|k| Some(&k.stamp) != stamps_now.get(*i))
        })
        .map(|(_, k)| k.id.clone())
        .collect();
    sources.extend(read_sources(state, ws, &stale).await?);
    let mut needed = BTreeSet::new();
    for source in sources.values() {
        needed.extend(source.refs.iter().cloned());
    }
    let datasets = crate::datasets::ops::for_templates(state, ws, &needed).await?;
    let mut budget = Budget::of(state);
    let mut records = Vec::with_capacity(keys.len());
    // Kept records that don't fit what is left of the response's budget: rendered again
    // within it, after the others.
    let mut over = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        let current = stamps_now.get(i).copied().unwrap_or_default();
        match (
            kept.get(i).and_then(Option::as_ref),
            sources.remove(&key.id),
        ) {
            // A stale one without a source was deleted meanwhile.
            (Some(kept), None) if kept.stamp == current => {
                if kept.spent <= budget.0 {
                    budget.spend(kept.spent);
                    records.push(Some(kept.record.clone()));
                } else {
                    over.push(i);
                    records.push(None);
                }
            }
            (_, Some(source)) => {
                let refs: Arc<[String]> = source.refs.clone().into();
                let (resolved, rendered) = source.render(&datasets, &mut budget)?;
                let (version, updated_at) = (resolved.pin.version, resolved.pin.updated_at);
                let pushed = resolved.pin.last_pushed_at;
                let rendered_record = resolved.into_record(state.public_base())?;
                let freshness = (pushed, rendered_record.record.stale);
                let record = Serialized::new(&rendered_record)?;
                if rendered.whole {
                    state.rendered.keep(
                        &key.id,
                        KeptRender {
                            version,
                            updated_at,
                            freshness,
                            refs,
                            stamp: current,
                            spent: rendered.spent,
                            record: record.clone(),
                        },
                    );
                }
                records.push(Some(record));
            }
            _ => records.push(None),
        }
    }
    if !over.is_empty() {
        let ids: Vec<String> = over
            .iter()
            .filter_map(|&i| keys.get(i))
            .map(|k| k.id.clone())
            .collect();
        let mut late = read_sources(state, ws, &ids).await?;
        let names: BTreeSet<String> = late.values().flat_map(|s| s.refs.clone()).collect();
        let datasets = crate::datasets::ops::for_templates(state, ws, &names).await?;
        for i in over {
            let source = keys.get(i).and_then(|k| late.remove(&k.id));
            if let (Some(source), Some(slot)) = (source, records.get_mut(i)) {
                let (resolved, _) = source.render(&datasets, &mut budget)?;
                *slot = Some(Serialized::new(
                    &resolved.into_record(state.public_base())?,
                )?);
            }
        }
    }
    Ok(records.into_iter().flatten().collect())
}

/// The pins among `ids` with their blocks, by id.
async fn read_sources(
    state: &AppState,
    ws: &str,
    ids: &[String],
) -> Result<HashMap<String, Source>> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let pins = state.store.get_pins(ws, ids).await?;
    let mut blocks = state.store.blocks_of(ws, ids).await?;
    pins.into_iter()
        .map(|pin| {
            let of_pin = blocks.remove(&pin.id).unwrap_or_default();
            Ok((pin.id.clone(), Source::new(pin, of_pin)?))
        })
        .collect()
}
