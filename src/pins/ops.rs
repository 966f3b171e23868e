//! The pin operations, as plain functions over the application state and the caller. HTTP
//! handlers, MCP tools and pages call them; each returns the records it made or read.

use std::{
    collections::HashMap,
    sync::atomic::{AtomicUsize, Ordering},
};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    check_key,
    records::Record,
    rendered::{self, PinRead},
    CreateBody, CreatedPin, PinRecord, UpdateBody, UpdatedPin, BATCH_ITEMS, KEY_PATTERN,
};
use crate::{
    app::AppState,
    auth::{also_needs, Principal, Scope},
    clock,
    error::{Error, Result},
    store::{Created, Idempotent, Logged, Pin, PinKey, PinQuery, Serialized},
    wire::{
        body::NO_NUL,
        idempotency::{live_since, replay},
        page::{self, CURSOR_PATTERN, PAGE_MAX},
        parse_body, Deleted, Found, IdempotencyKey, Outcome, Page, PageParams, Precondition,
    },
};

/// A template is a read of a dataset (CONTRACT.md 7): rendering one, or writing one into a
/// pin, needs `datasets:read` besides the operation's own scope. Pages render what the
/// board's owner templated without asking their visitors.
pub(crate) fn reads_datasets(who: &Principal, templated: bool) -> Result<()> {
    if templated {
        also_needs(who, Scope::DatasetsRead)
    } else {
        Ok(())
    }
}

/// Wakes the status sweep when one of `written` asks it to read the pin against its
/// datasets (a templated pin with status rules: [`Pin::status_due`]).
pub(crate) fn statuses_due<'p>(state: &AppState, written: impl IntoIterator<Item = &'p Pin>) {
    if written.into_iter().any(|pin| pin.status_due().is_some()) {
        state.events.statuses_due();
    }
}

/// What a create answers: one record, or a batch's records in request order.
pub type Creates = Vec<CreatedPin>;

/// A write's answer: what it did, or with `?dry_run=true` (CONTRACT.md 14) the records as
/// they would be stored, every check of the real write having passed and nothing written.
pub enum Written<T> {
    Done(T),
    DryRun(Vec<PinRecord>),
}

impl<T> Written<T> {
    /// What a write that is no dry run did.
    pub fn done(self) -> Result<T> {
        match self {
            Written::Done(done) => Ok(done),
            Written::DryRun(_) => Err(Error::internal("a write answered as a dry run")),
        }
    }

    pub(crate) fn dry_run(state: &AppState, pins: &[Pin]) -> Result<Self> {
        pins.iter()
            .map(|pin| PinRecord::new(pin, state.public_base()))
            .collect::<Result<_>>()
            .map(Written::DryRun)
    }
}

/// How a request names a pin: by id (`/pins/{id}`) or by key (`/pins/by-key/{key}`).
#[derive(Debug, Clone)]
pub enum PinRef {
    Id(String),
    Key(String),
}

impl PinRef {
    /// The id of the pin named, as the store has it now (404 when none).
    pub(crate) async fn id(&self, state: &AppState, ws: &str) -> Result<String> {
        match self {
            PinRef::Id(id) => Ok(id.clone()),
            PinRef::Key(_) => Ok(self.find(state, ws).await?.id),
        }
    }

    /// The pin named (404 when none).
    pub(crate) async fn find(&self, state: &AppState, ws: &str) -> Result<Pin> {
        let found = match self {
            PinRef::Id(id) => state.store.get_pins(ws, std::slice::from_ref(id)).await?,
            PinRef::Key(key) => {
                check_key(key, "key")?;
                state
                    .store
                    .pins_by_key(ws, std::slice::from_ref(key))
                    .await?
            }
        };
        found.into_iter().next().ok_or_else(pin_not_found)
    }

    /// Inside the write: the locked pin is still the one named (a key may have moved to
    /// another pin, or gone, since it was looked up).
    fn check(&self, pin: &Pin) -> Result<()> {
        match self {
            PinRef::Key(key) if pin.key.as_deref() != Some(key) => Err(pin_not_found()),
            _ => Ok(()),
        }
    }
}

fn pin_not_found() -> Error {
    Error::NotFound {
        what: "pin",
        index: None,
    }
}

/// `?dry_run=true` of the writes that take it (CONTRACT.md 14).
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct WriteParams {
    /// `true` runs every check of the write and answers `{success, dry_run: true, data}`
    /// with the record(s) as they would be stored; nothing is written and no event sent.
    #[serde(default)]
    #[schemars(with = "bool")]
    pub dry_run: Option<String>,
}

impl WriteParams {
    pub fn dry_run(&self) -> Result<bool> {
        match self.dry_run.as_deref() {
            None | Some("false") => Ok(false),
            Some("true") => Ok(true),
            Some(_) => Err(Error::validation("dry_run", "true or false")),
        }
    }
}

/// A dry run's stand-in for the unique index on keys: a key that another pin of the
/// workspace holds is the 409 the write would meet.
async fn check_keys_free(state: &AppState, ws: &str, pins: &[Pin], batch: bool) -> Result<()> {
    let keyed: Vec<(&str, Option<&str>)> = pins
        .iter()
        .map(|p| (p.id.as_str(), p.key.as_deref()))
        .collect();
    match first_taken(state, ws, &keyed).await? {
        Some(i) => Err(key_taken(i, batch)),
        None => Ok(()),
    }
}

/// The first of `(pin id, key)` whose key another pin of the workspace holds.
async fn first_taken(
    state: &AppState,
    ws: &str,
    keyed: &[(&str, Option<&str>)],
) -> Result<Option<usize>> {
    let keys: Vec<String> = keyed
        .iter()
        .filter_map(|(_, key)| key.map(str::to_owned))
        .collect();
    if keys.is_empty() {
        return Ok(None);
    }
    let holders = state.store.pins_by_key(ws, &keys).await?;
    Ok(keyed.iter().position(|(id, key)| {
        holders
            .iter()
            .any(|h| key.is_some() && h.key.as_deref() == *key && h.id != *id)
    }))
}

/// The 409 of a taken key: `details.field` is `key` (CONTRACT.md 14), with the item's
/// `details.index` in a batch.
fn key_taken(i: usize, batch: bool) -> Error {
    let error = Error::taken("key", "another pin of this workspace has this key");
    if batch {
        error.at_index(i)
    } else {
        error
    }
}

/// A batch's keys must differ: two items with one key would be one pin (400 at the second).
fn check_distinct_keys(pins: &[Pin]) -> Result<()> {
    for (i, pin) in pins.iter().enumerate() {
        if pin.key.is_some() && pins[..i].iter().any(|p| p.key == pin.key) {
            return Err(Error::validation(
                format!("pins[{i}].key"),
                "a key not already in this batch",
            )
            .at_index(i));
        }
    }
    Ok(())
}

/// A batch write refused by the unique index names no item: the batch's first item whose
/// key another pin holds now is the one reported.
async fn locate_taken(state: &AppState, ws: &str, pins: &[Pin], error: Error) -> Error {
    if !matches!(error, Error::Taken { index: None, .. }) {
        return error;
    }
    match check_keys_free(state, ws, pins, true).await {
        Err(located @ Error::Taken { .. }) => located,
        _ => error,
    }
}

/// Stores `pins` (one transaction), honouring an idempotency key; `data` is the answer
/// `answer` makes of the records.
async fn store_new<T: serde::Serialize>(
    state: &AppState,
    who: &Principal,
    pins: &[Pin],
    idem: Option<IdempotencyKey>,
    answer: impl FnOnce(Creates) -> Result<T>,
) -> Result<Outcome<T>> {
    let ws = &who.workspace_id;
    let now = pins.first().map_or_else(clock::now_ms, |p| p.created_at);
    if let Some(idem) = &idem {
        if let Some(outcome) = replay(state, ws, idem, now).await? {
            return Ok(outcome);
        }
    }
    let created = pins
        .iter()
        .map(|p| CreatedPin::new(p, state.public_base()))
        .collect::<Result<Creates>>()?;
    let data = Serialized::new(&answer(created)?)?;
    let record = idem.as_ref().map(|i| Idempotent {
        key: i.key.clone(),
        request_hash: i.request_hash.clone(),
        response: data.as_str().to_owned(),
        created_at: now,
        live_since: live_since(state, now),
    });
    let created = state.store.insert_pins(ws, pins, record.as_ref()).await?;
    statuses_due(state, pins);
    match created {
        Created::Stored => Ok(Outcome {
            data,
            replayed: false,
        }),
        Created::KeyTaken => match &idem {
            Some(idem) => replay(state, ws, idem, now).await?.ok_or_else(|| {
                Error::Conflict("Idempotency-Key is in use by a concurrent request".into())
            }),
            None => Err(Error::internal("idempotency claim without a key")),
        },
    }
}

/// `POST /pins`.
pub async fn create(
    state: &AppState,
    who: &Principal,
    body: CreateBody,
    idem: Option<IdempotencyKey>,
    dry_run: bool,
) -> Result<Written<Outcome<CreatedPin>>> {
    let pin = body.into_pin("", state.limits(), clock::now_ms())?;
    reads_datasets(who, crate::templates::json_names_any(&pin.pin_config))?;
    let mut pins = vec![pin];
    super::status::read_new(&state.store, &who.workspace_id, &mut pins).await?;
    if dry_run {
        check_keys_free(state, &who.workspace_id, &pins, false).await?;
        return Written::dry_run(state, &pins);
    }
    store_new(state, who, &pins, idem, |created| {
        created
            .into_iter()
            .next()
            .ok_or_else(|| Error::internal("a create made no record"))
    })
    .await
    .map(Written::Done)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(example = serde_json::json!({"pins": [super::create_example()]}))]
pub struct BatchCreateBody {
    /// 1 to `limits.batch_items` (default 100) pin create bodies, stored all or none.
    #[schemars(with = "Vec<CreateBody>", length(min = 1, max = BATCH_ITEMS))]
    pub pins: Vec<Value>,
}

pub(crate) fn check_batch_len(len: usize, field: &str, state: &AppState) -> Result<()> {
    let max = state.limits().batch_items;
    if len == 0 || len > max {
        return Err(Error::validation(field, format!("1 to {max} items")));
    }
    Ok(())
}

/// `POST /pins/batch`: all or nothing.
pub async fn create_batch(
    state: &AppState,
    who: &Principal,
    body: BatchCreateBody,
    idem: Option<IdempotencyKey>,
    dry_run: bool,
) -> Result<Written<Outcome<Creates>>> {
    check_batch_len(body.pins.len(), "pins", state)?;
    let now = clock::now_ms();
    let mut pins = body
        .pins
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let prefix = format!("pins[{i}].");
            parse_body::<CreateBody>(item, &format!("pins[{i}]"))
                .and_then(|b| b.into_pin(&prefix, state.limits(), now))
                .map_err(|e| e.at_index(i))
        })
        .collect::<Result<Vec<_>>>()?;
    reads_datasets(
        who,
        pins.iter()
            .any(|p| crate::templates::json_names_any(&p.pin_config)),
    )?;
    check_distinct_keys(&pins)?;
    let ws = &who.workspace_id;
    super::status::read_new(&state.store, ws, &mut pins).await?;
    if dry_run {
        check_keys_free(state, ws, &pins, true).await?;
        return Written::dry_run(state, &pins);
    }
    match store_new(state, who, &pins, idem, Ok).await {
        Ok(outcome) => Ok(Written::Done(outcome)),
        Err(e) => Err(locate_taken(state, ws, &pins, e).await),
    }
}

/// `GET /pins/{id}`: the record (with `render`, resolved: [`super::rendered`]); its
/// version is the `ETag`.
pub async fn get(
    state: &AppState,
    who: &Principal,
    target: &PinRef,
    render: bool,
) -> Result<PinRead> {
    reads_datasets(who, render)?;
    let pin = target.find(state, &who.workspace_id).await?;
    if render {
        let resolved = rendered::resolve(state, &who.workspace_id, vec![pin]).await?;
        let one = resolved.into_iter().next().ok_or_else(pin_not_found)?;
        return Ok(one.into_record(state.public_base())?.into());
    }
    Ok(PinRecord::from_pin(pin, state.public_base())?.into())
}

/// `?render=true` of the pin reads: templates resolved and blocks evaluated.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct RenderParams {
    /// `true` resolves `{{dataset.path}}` templates and adds the evaluated `blocks` and
    /// `render.warnings` to each record.
    #[serde(default)]
    #[schemars(with = "bool")]
    pub render: Option<String>,
}

/// Reads a `render` flag: `true` or `false`.
pub fn render_flag(render: Option<&str>) -> Result<bool> {
    match render {
        None | Some("false") => Ok(false),
        Some("true") => Ok(true),
        Some(_) => Err(Error::validation("render", "true or false")),
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchGetBody {
    /// 1 to `limits.batch_items` (default 100) pin ids.
    #[schemars(length(min = 1, max = BATCH_ITEMS))]
    pub pin_ids: Vec<String>,
}

/// `POST /pins/batch/get`: found records in request order, and the ids not found.
pub async fn get_batch(
    state: &AppState,
    who: &Principal,
    body: BatchGetBody,
    render: bool,
) -> Result<Found<PinRead>> {
    check_batch_len(body.pin_ids.len(), "pin_ids", state)?;
    reads_datasets(who, render)?;
    let pins = state
        .store
        .get_pins(&who.workspace_id, &body.pin_ids)
        .await?;
    let missing = body
        .pin_ids
        .iter()
        .filter(|id| !pins.iter().any(|p| &p.id == *id))
        .cloned()
        .collect();
    let mut data = Vec::with_capacity(pins.len());
    if render {
        let mut resolved: HashMap<String, rendered::Resolved> =
            rendered::resolve(state, &who.workspace_id, pins)
                .await?
                .into_iter()
                .map(|r| (r.pin.id.clone(), r))
                .collect();
        for id in &body.pin_ids {
            if let Some(one) = resolved.remove(id) {
                data.push(one.into_record(state.public_base())?.into());
            }
        }
    } else {
        for id in &body.pin_ids {
            if let Some(pin) = pins.iter().find(|p| &p.id == id) {
                data.push(PinRecord::new(pin, state.public_base())?.into());
            }
        }
    }
    Ok(Found { data, missing })
}

/// Query of `GET /pins` and `GET /pins/{id}/versions`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct ListParams {
    /// Page size, 1 to 200 (default 50).
    #[serde(default)]
    #[schemars(with = "u8", range(min = 1, max = PAGE_MAX))]
    pub limit: Option<String>,
    /// `pagination.next_cursor` of the previous page.
    #[serde(default)]
    #[schemars(with = "String", regex(pattern = CURSOR_PATTERN))]
    pub cursor: Option<String>,
    /// Only pins of this type.
    #[serde(default)]
    #[schemars(schema_with = "crate::pin_types::pin_type_schema")]
    pub pin_type: Option<String>,
    /// Only pins carrying this tag.
    #[serde(default)]
    #[schemars(with = "String")]
    pub tag: Option<String>,
    /// Only pins updated at or after this instant (RFC 3339).
    #[serde(default)]
    #[schemars(with = "String", extend("format" = "date-time"))]
    pub updated_since: Option<String>,
    /// Only pins placed on this pinboard (404 when there is no such board).
    #[serde(default)]
    #[schemars(with = "String")]
    pub pinboard_id: Option<String>,
    /// `true` resolves templates and adds the evaluated `blocks` and `render.warnings`.
    #[serde(default)]
    #[schemars(with = "bool")]
    pub render: Option<String>,
    /// `true`: only stale pins (an expected push overdue); `false`: only the others.
    #[serde(default)]
    #[schemars(with = "bool")]
    pub stale: Option<String>,
    /// Only the pins with these keys (`?key=a&key=b`, at most `limits.batch_items`).
    #[serde(default)]
    #[schemars(length(max = BATCH_ITEMS), inner(regex(pattern = KEY_PATTERN)))]
    pub key: Vec<String>,
}

/// `GET /pins`: newest first, keyset-paginated; `pinboard_id` keeps the pins placed on that
/// board.
pub async fn list(
    state: &AppState,
    who: &Principal,
    params: &ListParams,
) -> Result<Page<Serialized<PinRead>>> {
    let (limit, before_seq) = page::window(params.limit.as_deref(), params.cursor.as_deref())?;
    let pin_type = params
        .pin_type
        .as_deref()
        .map(|name| super::parse_pin_type(name, "pin_type").map(|t| t.as_str().to_owned()))
        .transpose()?;
    let updated_since = params
        .updated_since
        .as_deref()
        .map(|text| {
            chrono::DateTime::parse_from_rfc3339(text)
                .map(|t| t.timestamp_millis())
                .map_err(|_| {
                    Error::validation(
                        "updated_since",
                        "an ISO 8601 date-time, e.g. 2026-01-31T12:00:00Z",
                    )
                })
        })
        .transpose()?;
    let render = render_flag(params.render.as_deref())?;
    reads_datasets(who, render)?;
    if params.key.len() > state.limits().batch_items {
        return Err(Error::validation(
            "key",
            format!("at most {} keys", state.limits().batch_items),
        ));
    }
    for key in &params.key {
        check_key(key, "key")?;
    }
    // An unknown board is a 404 rather than an empty page: a mistyped id must not look
    // like an empty dashboard.
    if let Some(board) = &params.pinboard_id {
        if state
            .store
            .get_pinboard(&who.workspace_id, board)
            .await?
            .is_none()
        {
            return Err(Error::NotFound {
                what: "pinboard",
                index: None,
            });
        }
    }
    let query = PinQuery {
        limit: limit + 1,
        before_seq,
        pin_type,
        tag: params.tag.clone(),
        updated_since,
        pinboard_id: params.pinboard_id.clone(),
        keys: params.key.clone(),
        stale: match params.stale.as_deref() {
            None => None,
            Some("true") => Some(true),
            Some("false") => Some(false),
            Some(_) => return Err(Error::validation("stale", "true or false")),
        },
        now: clock::now_ms(),
    };
    let keys = state.store.list_pin_keys(&who.workspace_id, &query).await?;
    let keys = Page::of(keys, limit, |key| key.seq);
    let data = if render {
        rendered::list_records(state, &who.workspace_id, &keys.data)
            .await?
            .into_iter()
            .map(Serialized::widen)
            .collect()
    } else {
        kept_records(state, who, &keys.data)
            .await?
            .into_iter()
            .map(Serialized::widen)
            .collect()
    };
    Ok(Page {
        data,
        pagination: keys.pagination,
    })
}

/// The record of each listed pin: kept ones as they are, the others read and rendered (and
/// kept). A pin deleted between the two reads is left out; one changed between them is shown
/// as it is now.
async fn kept_records(state: &AppState, who: &Principal, keys: &[PinKey]) -> Result<Vec<Record>> {
    let mut found = state.records.find(keys, clock::now_ms());
    let missing: Vec<String> = keys
        .iter()
        .zip(&found)
        .filter(|(_, record)| record.is_none())
        .map(|(key, _)| key.id.clone())
        .collect();
    if !missing.is_empty() {
        let pins = state.store.get_pins(&who.workspace_id, &missing).await?;
        let pins: HashMap<&str, &Pin> = pins.iter().map(|pin| (pin.id.as_str(), pin)).collect();
        for (key, record) in keys.iter().zip(found.iter_mut()) {
            if let (None, Some(pin)) = (&record, pins.get(key.id.as_str())) {
                let rendered = PinRecord::new(pin, state.public_base())?;
                let freshness = (pin.last_pushed_at, rendered.stale);
                let fresh = Serialized::new(&rendered)?;
                state.records.keep(
                    &pin.id,
                    (pin.version, pin.updated_at),
                    freshness,
                    fresh.clone(),
                );
                *record = Some(fresh);
            }
        }
    }
    Ok(found.into_iter().flatten().collect())
}

/// `GET /pins/{id}/versions`: past versions, newest first.
pub async fn versions(
    state: &AppState,
    who: &Principal,
    id: &str,
    params: &PageParams,
) -> Result<Page<PinRecord>> {
    let (limit, before) = params.window()?;
    let rows = state
        .store
        .list_versions(
            &who.workspace_id,
            id,
            state.limits().version_retention,
            before,
            limit + 1,
        )
        .await?
        .ok_or(Error::NotFound {
            what: "pin",
            index: None,
        })?;
    let base = state.public_base();
    Page::of(rows, limit, |p| p.version).try_map(|pin| PinRecord::new(&pin, base))
}

/// `PUT`/`PATCH /pins/{id}` and `/pins/by-key/{key}`.
pub async fn update(
    state: &AppState,
    who: &Principal,
    target: &PinRef,
    body: UpdateBody,
    precondition: Precondition,
    dry_run: bool,
) -> Result<Written<UpdatedPin>> {
    let change = body.into_change("", state.limits())?;
    reads_datasets(who, change.names_datasets())?;
    let limits = state.limits();
    let now = clock::now_ms();
    let apply = |pin: Pin| {
        precondition.check_version(pin.version)?;
        change.apply(pin, "", limits, now)
    };
    write_one(state, who, target, dry_run, apply).await
}

/// `PATCH /pins/{id}` (and by key) with a merge patch ([`super::merge`]).
pub async fn merge_patch(
    state: &AppState,
    who: &Principal,
    target: &PinRef,
    patch: &Value,
    precondition: Precondition,
    dry_run: bool,
) -> Result<Written<UpdatedPin>> {
    let limits = state.limits();
    let now = clock::now_ms();
    let apply = |pin: Pin| {
        precondition.check_version(pin.version)?;
        let change = super::merge::change(&pin, patch, limits)?;
        reads_datasets(who, change.names_datasets())?;
        change.apply(pin, "", limits, now)
    };
    write_one(state, who, target, dry_run, apply).await
}

/// The answer of an append: the pin's new version and how many entries it holds.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct AppendedPin {
    pub id: String,
    /// Milliseconds since the Unix epoch.
    pub updated_at: i64,
    pub version: i64,
    /// Entries of the collection after the append (labels, rows, events, items, points).
    pub size: usize,
}

/// `POST /pins/{id}/append` (and by key): adds to the pin's collection inside the write, so
/// concurrent appends each land (CONTRACT.md 14).
pub async fn append(
    state: &AppState,
    who: &Principal,
    target: &PinRef,
    body: &Value,
    dry_run: bool,
) -> Result<Written<AppendedPin>> {
    let limits = state.limits();
    let now = clock::now_ms();
    let size = AtomicUsize::new(0);
    let apply = |mut pin: Pin| {
        let pin_type = super::parse_pin_type(&pin.pin_type, "pin_type")?;
        let config: Value = serde_json::from_str(&pin.pin_config)
            .map_err(|e| Error::internal_in("stored configuration", e))?;
        let appended = super::append::append(pin_type, config, body)?;
        reads_datasets(who, crate::templates::names_any(&appended.config))?;
        let text = serde_json::to_string(&appended.config).map_err(Error::internal)?;
        if text.len() > limits.pin_config_bytes {
            return Err(Error::validation(
                "pin_config",
                format!(
                    "a configuration of at most {} bytes of JSON after the append (lower max_*)",
                    limits.pin_config_bytes
                ),
            ));
        }
        size.store(appended.size, Ordering::Relaxed);
        pin.pin_config = text;
        super::status::restate(&mut pin)?;
        pin.version += 1;
        pin.updated_at = now.max(pin.updated_at);
        pin.last_pushed_at = now.max(pin.last_pushed_at);
        Ok(pin)
    };
    Ok(match write_one(state, who, target, dry_run, apply).await? {
        Written::Done(pin) => Written::Done(AppendedPin {
            id: pin.id,
            updated_at: pin.updated_at,
            version: pin.version,
            size: size.load(Ordering::Relaxed),
        }),
        Written::DryRun(records) => Written::DryRun(records),
    })
}

/// One pin's write, as [`update`], the merge patch and the append make it: `apply` decides
/// what the pin named by `target` becomes, from a read of it; the change is stored in a
/// group commit with other requests' writes if the pin is still at the version read, else
/// decided again (CONTRACT.md 10: no lost update; an If-Match is checked against the
/// version that is replaced). A dry run only decides.
pub(crate) async fn write_one(
    state: &AppState,
    who: &Principal,
    target: &PinRef,
    dry_run: bool,
    apply: impl Fn(Pin) -> Result<Pin> + Send + Sync,
) -> Result<Written<UpdatedPin>> {
    let ws = &who.workspace_id;
    if dry_run {
        let new = apply(target.find(state, ws).await?)?;
        check_keys_free(state, ws, std::slice::from_ref(&new), false).await?;
        return Written::dry_run(state, &[new]);
    }
    let retention = state.limits().version_retention;
    let mut tries = 0;
    // First from the state this replica last wrote ([`super::known`]), once its earlier
    // writes of the pin are done.
    let (guessed, writing) = match target {
        PinRef::Id(id) => {
            let writing = state.known_pins.turn(id).await;
            (state.known_pins.find(ws, id), Some(writing))
        }
        PinRef::Key(key) => state.known_pins.guess_by_key(ws, key).await,
    };
    if let Some(old) = guessed {
        tries += 1;
        if let Ok(new) = apply(old.clone()) {
            if let Some(pin) = store_decided(state, ws, old, new, retention).await? {
                return Ok(written(state, ws, pin));
            }
        }
    }
    while tries < DECIDED_TRIES {
        let old = target.find(state, ws).await?;
        if tries == 1 && state.known_pins.moved_by_another(ws, &old) {
            state.known_pins.missed(&old.id, clock::now_ms());
        }
        // A write by key that had no copy counts too, once its pin is known.
        let _writing_read = writing.is_none().then(|| state.known_pins.writing(&old.id));
        tries += 1;
        let new = apply(old.clone())?;
        if let Some(pin) = store_decided(state, ws, old, new, retention).await? {
            return Ok(written(state, ws, pin));
        }
    }
    // The pin kept moving (many writers of one pin): decide inside the write, holding it.
    let id = target.id(state, ws).await?;
    let mut change = |_: usize, pin: Pin| {
        target.check(&pin)?;
        apply(pin)
    };
    let write = state
        .store
        .update_pins(ws, std::slice::from_ref(&id), retention, &mut change);
    let updated = state
        .known_pins
        .sent(&id, write)
        .await
        .map_err(without_index)?;
    let pin = updated
        .into_iter()
        .next()
        .ok_or_else(|| Error::internal("update returned no pin"))?;
    Ok(written(state, ws, pin))
}

/// Stores `new`, decided from `old`, unless the pin moved on from `old`'s version (`None`);
/// what is kept of the pin is forgotten if no answer comes ([`super::known::KnownPins::sent`]).
pub(crate) async fn store_decided(
    state: &AppState,
    ws: &str,
    old: Pin,
    new: Pin,
    retention: u32,
) -> Result<Option<Pin>> {
    let id = old.id.clone();
    let write = state
        .store
        .update_read(ws, old, new, retention, Logged::Write);
    state.known_pins.sent(&id, write).await
}

/// A single-pin write's answer, once stored: the pin kept for its next update, its status
/// sweep woken if it needs one.
fn written(state: &AppState, ws: &str, pin: Pin) -> Written<UpdatedPin> {
    state.known_pins.keep(ws, &pin, clock::now_ms());
    statuses_due(state, [&pin]);
    Written::Done(UpdatedPin::of(&pin))
}

/// How many times a single-pin write is decided from a read and sent to the group commit
/// before it is decided inside a write of its own: each try loses only to another write of
/// the same pin that committed meanwhile, so more than a few mean a pin many clients write
/// at once, where holding the pin costs less than deciding again.
const DECIDED_TRIES: usize = 3;

/// Single-pin operations report a missing pin without a batch index.
fn without_index(e: Error) -> Error {
    match e {
        Error::NotFound { what, .. } => Error::NotFound { what, index: None },
        other => other,
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchUpdateBody {
    /// 1 to `limits.batch_items` (default 100) updates, applied all or none.
    #[schemars(with = "Vec<BatchUpdateItem>", length(min = 1, max = BATCH_ITEMS))]
    pub pins: Vec<Value>,
}

/// One item of a batch update: the pin's `id` (each at most once in a batch, else 400)
/// and at least one field of an update body.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields, extend("minProperties" = 2))]
pub struct BatchUpdateItem {
    pub id: String,
    #[serde(flatten)]
    pub update: UpdateBody,
}

fn check_unique(ids: &[String], field: impl Fn(usize) -> String) -> Result<()> {
    for (i, id) in ids.iter().enumerate() {
        if ids[..i].contains(id) {
            return Err(Error::validation(field(i), "an id not already in this batch").at_index(i));
        }
    }
    Ok(())
}

/// `POST /pins/batch/update`: all or nothing.
pub async fn update_batch(
    state: &AppState,
    who: &Principal,
    body: BatchUpdateBody,
) -> Result<Vec<UpdatedPin>> {
    check_batch_len(body.pins.len(), "pins", state)?;
    let limits = state.limits();
    let mut ids = Vec::with_capacity(body.pins.len());
    let mut changes = Vec::with_capacity(body.pins.len());
    for (i, item) in body.pins.iter().enumerate() {
        let (id, update) = split_id(item, i)?;
        changes.push(
            update
                .into_change(&format!("pins[{i}]."), limits)
                .map_err(|e| e.at_index(i))?,
        );
        ids.push(id);
    }
    check_unique(&ids, |i| format!("pins[{i}].id"))?;
    reads_datasets(who, changes.iter().any(|c| c.names_datasets()))?;
    let now = clock::now_ms();
    let mut apply = |i: usize, pin: Pin| {
        changes[i]
            .apply(pin, &format!("pins[{i}]."), limits, now)
            .map_err(|e| e.at_index(i))
    };
    let updated = state
        .store
        .update_pins(
            &who.workspace_id,
            &ids,
            limits.version_retention,
            &mut apply,
        )
        .await;
    match updated {
        Ok(updated) => {
            statuses_due(state, &updated);
            Ok(updated.iter().map(UpdatedPin::of).collect())
        }
        Err(e @ Error::Taken { index: None, .. }) => {
            // The index names no item: the first whose new key another pin holds.
            let keyed: Vec<(&str, Option<&str>)> = ids
                .iter()
                .zip(&changes)
                .map(|(id, change)| (id.as_str(), change.key.as_ref().and_then(Option::as_deref)))
                .collect();
            match first_taken(state, &who.workspace_id, &keyed).await {
                Ok(Some(i)) => Err(key_taken(i, true)),
                _ => Err(e),
            }
        }
        Err(e) => Err(e),
    }
}

/// A batch update item is `{id, ...update fields}`: the id is taken out and the rest parsed
/// as an update body, so unknown keys are still refused with their path.
fn split_id(item: &Value, i: usize) -> Result<(String, UpdateBody)> {
    let field = format!("pins[{i}]");
    let mut fields = item
        .as_object()
        .cloned()
        .ok_or_else(|| Error::validation(&field, "a JSON object").at_index(i))?;
    let id = match fields.remove("id") {
        Some(Value::String(id)) => id,
        _ => {
            return Err(
                Error::validation(format!("{field}.id"), "a pin id string (required)").at_index(i),
            )
        }
    };
    let update = parse_body(&Value::Object(fields), &field).map_err(|e| e.at_index(i))?;
    Ok((id, update))
}

/// `DELETE /pins/{id}` and `/pins/by-key/{key}`.
pub async fn delete(
    state: &AppState,
    who: &Principal,
    target: &PinRef,
    precondition: Precondition,
) -> Result<Deleted> {
    let ws = &who.workspace_id;
    let id = target.id(state, ws).await?;
    state
        .store
        .delete_pins(ws, std::slice::from_ref(&id), &mut |_, pin| {
            target.check(pin)?;
            precondition.check_version(pin.version)
        })
        .await
        .map_err(without_index)?;
    state.known_pins.forget(std::slice::from_ref(&id));
    Ok(Deleted::new(id))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchDeleteBody {
    /// 1 to `limits.batch_items` (default 100) distinct pin ids, deleted all or none.
    #[schemars(
        length(min = 1, max = BATCH_ITEMS),
        extend("uniqueItems" = true),
        inner(regex(pattern = NO_NUL))
    )]
    pub pin_ids: Vec<String>,
}

/// `POST /pins/batch/delete`: all or nothing.
pub async fn delete_batch(
    state: &AppState,
    who: &Principal,
    body: BatchDeleteBody,
) -> Result<Vec<Deleted>> {
    check_batch_len(body.pin_ids.len(), "pin_ids", state)?;
    check_unique(&body.pin_ids, |i| format!("pin_ids[{i}]"))?;
    state
        .store
        .delete_pins(&who.workspace_id, &body.pin_ids, &mut |_, _| Ok(()))
        .await?;
    state.known_pins.forget(&body.pin_ids);
    Ok(body.pin_ids.into_iter().map(Deleted::new).collect())
}
