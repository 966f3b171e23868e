//! The pin operations, as plain functions over the application state and the caller. HTTP
//! handlers call them; so will MCP tools and pages. Each returns its `data` already
//! serialised, which is also what an idempotent retry replays.

use std::collections::HashMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{value::RawValue, Value};
use sha2::{Digest, Sha256};

use super::{
    records::Record, rendered, CreateBody, CreatedPin, PinRecord, UpdateBody, UpdatedPin,
    BATCH_ITEMS,
};
use crate::{
    app::AppState,
    auth::Principal,
    clock,
    error::{Error, Result},
    store::{Created, Idempotent, Pin, PinKey, PinQuery},
};

/// Serialised `data` of a successful operation.
pub type Data = Box<RawValue>;

/// The answer to a create: fresh, or the replay of an earlier identical request.
pub struct Outcome {
    pub data: Data,
    pub replayed: bool,
}

/// A client's `Idempotency-Key` with what identifies its request.
pub struct IdempotencyKey {
    pub key: String,
    /// Operation name plus the exact body bytes.
    request_hash: String,
}

impl IdempotencyKey {
    /// What a key may be: 1 to 255 visible ASCII characters (the header's schema).
    pub const PATTERN: &'static str = "^[!-~]{1,255}$";

    /// Accepts 1 to 255 visible ASCII characters ([`Self::PATTERN`]).
    pub fn new(key: &str, operation: &str, body: &[u8]) -> Result<Self> {
        if key.is_empty() || key.len() > 255 || !key.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(Error::validation(
                "Idempotency-Key",
                "1 to 255 visible ASCII characters",
            ));
        }
        let mut hash = Sha256::new();
        hash.update(operation.as_bytes());
        hash.update([0]);
        hash.update(body);
        Ok(IdempotencyKey {
            key: key.to_owned(),
            request_hash: hex::encode(hash.finalize()),
        })
    }
}

pub(crate) fn to_data<T: Serialize + ?Sized>(value: &T) -> Result<Data> {
    serde_json::value::to_raw_value(value).map_err(Error::internal)
}

fn records<'a>(state: &AppState, pins: &'a [Pin]) -> Result<Vec<PinRecord<'a>>> {
    pins.iter()
        .map(|p| PinRecord::new(p, state.public_base()))
        .collect()
}

fn created_data(state: &AppState, pins: &[Pin], single: bool) -> Result<Data> {
    let created = pins
        .iter()
        .map(|p| {
            Ok(CreatedPin {
                pin_id: &p.id,
                record: PinRecord::new(p, state.public_base())?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    match created.as_slice() {
        [one] if single => to_data(one),
        all => to_data(all),
    }
}

/// Stores `pins` (one transaction), honouring an idempotency key.
async fn store_new(
    state: &AppState,
    who: &Principal,
    pins: Vec<Pin>,
    single: bool,
    idem: Option<IdempotencyKey>,
) -> Result<Outcome> {
    let ws = &who.workspace_id;
    let now = pins.first().map_or_else(clock::now_ms, |p| p.created_at);
    if let Some(idem) = &idem {
        if let Some(outcome) = replay(state, ws, idem, now).await? {
            return Ok(outcome);
        }
    }
    let data = created_data(state, &pins, single)?;
    let record = idem.as_ref().map(|i| Idempotent {
        key: i.key.clone(),
        request_hash: i.request_hash.clone(),
        response: data.get().to_owned(),
        created_at: now,
        live_since: live_since(state, now),
    });
    match state.store.insert_pins(ws, &pins, record.as_ref()).await? {
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

/// Idempotency records older than the configured window no longer replay.
fn live_since(state: &AppState, now: i64) -> i64 {
    let ttl_ms = state.limits().idempotency_ttl_secs.saturating_mul(1000);
    now - i64::try_from(ttl_ms).unwrap_or(i64::MAX)
}

async fn replay(
    state: &AppState,
    ws: &str,
    idem: &IdempotencyKey,
    now: i64,
) -> Result<Option<Outcome>> {
    let Some(first) = state
        .store
        .find_idempotent(ws, &idem.key, live_since(state, now))
        .await?
    else {
        return Ok(None);
    };
    if first.request_hash != idem.request_hash {
        return Err(Error::Conflict(
            "Idempotency-Key was already used with a different request body".into(),
        ));
    }
    let data = RawValue::from_string(first.response).map_err(Error::internal)?;
    Ok(Some(Outcome {
        data,
        replayed: true,
    }))
}

/// `POST /pins`.
pub async fn create(
    state: &AppState,
    who: &Principal,
    body: CreateBody,
    idem: Option<IdempotencyKey>,
) -> Result<Outcome> {
    let pin = body.into_pin("", state.limits(), clock::now_ms())?;
    store_new(state, who, vec![pin], true, idem).await
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(example = serde_json::json!({"pins": [super::create_example()]}))]
pub struct BatchCreateBody {
    /// 1 to `limits.batch_items` (default 100) pin create bodies, stored all or none.
    #[schemars(with = "Vec<CreateBody>", length(min = 1, max = BATCH_ITEMS))]
    pub pins: Vec<Value>,
}

fn check_batch_len(len: usize, field: &str, state: &AppState) -> Result<()> {
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
) -> Result<Outcome> {
    check_batch_len(body.pins.len(), "pins", state)?;
    let now = clock::now_ms();
    let pins = body
        .pins
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let prefix = format!("pins[{i}].");
            super::parse_body::<CreateBody>(item, &format!("pins[{i}]"))
                .and_then(|b| b.into_pin(&prefix, state.limits(), now))
                .map_err(|e| e.at_index(i))
        })
        .collect::<Result<Vec<_>>>()?;
    store_new(state, who, pins, false, idem).await
}

/// `GET /pins/{id}`: the record (with `render`, resolved: [`super::rendered`]) and its
/// version (for `ETag`).
pub async fn get(state: &AppState, who: &Principal, id: &str, render: bool) -> Result<(Data, i64)> {
    let pins = state
        .store
        .get_pins(&who.workspace_id, &[id.to_owned()])
        .await?;
    let pin = pins.first().ok_or(Error::NotFound {
        what: "pin",
        index: None,
    })?;
    let version = pin.version;
    if render {
        let resolved = rendered::resolve(state, &who.workspace_id, pins).await?;
        let one = resolved.first().ok_or(Error::NotFound {
            what: "pin",
            index: None,
        })?;
        return Ok((one.record(state.public_base())?, version));
    }
    Ok((
        to_data(&PinRecord::new(pin, state.public_base())?)?,
        version,
    ))
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
) -> Result<(Data, Data)> {
    check_batch_len(body.pin_ids.len(), "pin_ids", state)?;
    let pins = state
        .store
        .get_pins(&who.workspace_id, &body.pin_ids)
        .await?;
    let missing: Vec<&str> = body
        .pin_ids
        .iter()
        .filter(|id| !pins.iter().any(|p| &p.id == *id))
        .map(String::as_str)
        .collect();
    let mut found = Vec::with_capacity(pins.len());
    if render {
        let resolved = rendered::resolve(state, &who.workspace_id, pins).await?;
        for id in &body.pin_ids {
            if let Some(one) = resolved.iter().find(|r| &r.pin.id == id) {
                found.push(one.record(state.public_base())?);
            }
        }
    } else {
        for id in &body.pin_ids {
            if let Some(pin) = pins.iter().find(|p| &p.id == id) {
                found.push(to_data(&PinRecord::new(pin, state.public_base())?)?);
            }
        }
    }
    Ok((to_data(&found)?, to_data(&missing)?))
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
}

/// Query of the lists without filters: `GET /pinboards`, `GET /pins/{id}/versions`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct PageParams {
    /// Page size, 1 to 200 (default 50).
    #[serde(default)]
    #[schemars(with = "u8", range(min = 1, max = PAGE_MAX))]
    pub limit: Option<String>,
    /// `pagination.next_cursor` of the previous page.
    #[serde(default)]
    #[schemars(with = "String", regex(pattern = CURSOR_PATTERN))]
    pub cursor: Option<String>,
}

/// `pagination` of a list response.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Pagination {
    pub next_cursor: Option<String>,
    pub has_more: bool,
}

/// Text without U+0000, which no request may carry anywhere (the description says so once;
/// this states it where generators draw distinct values without their usual alphabet).
const NO_NUL: &str = "^[^\\x00]*$";

/// Largest page of a list.
pub const PAGE_MAX: i64 = 200;
/// Page size of a list without `limit`.
const PAGE_DEFAULT: i64 = 50;

pub(crate) fn page_limit(limit: Option<&str>) -> Result<i64> {
    match limit {
        None => Ok(PAGE_DEFAULT),
        Some(text) => text
            .parse::<i64>()
            .ok()
            .filter(|n| (1..=PAGE_MAX).contains(n))
            .ok_or_else(|| Error::validation("limit", format!("an integer from 1 to {PAGE_MAX}"))),
    }
}

/// Most digits of a cursor's position (so it always fits an i64).
const CURSOR_DIGITS: usize = 18;

/// Every cursor [`decode_cursor`] accepts, and no other: `c1.` and 1 to 18 digits, in
/// URL-safe base64 without padding. `c1.` is `YzEu`; each 3 digits are 4 characters (the
/// first digit gives `M`/`N`/`O`, ...), a last 1 or 2 digits 2 or 3 characters.
pub const CURSOR_PATTERN: &str = concat!(
    "^YzEu(?:",
    "(?:(?:[MN][DTjz]|O[DT])[AEIMQUYcgk][w-z0-5]){1,6}",
    "|(?:(?:[MN][DTjz]|O[DT])[AEIMQUYcgk][w-z0-5]){0,5}",
    "(?:[MN][AQgw]|O[AQ]|(?:[MN][DTjz]|O[DT])[AEIMQUYcgk])",
    ")$"
);

/// Cursors are opaque to clients: `c1.<position>` in URL-safe base64.
fn encode_cursor(position: i64) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("c1.{position}"))
}

pub(crate) fn decode_cursor(cursor: &str) -> Result<i64> {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .and_then(|text| {
            let digits = text.strip_prefix("c1.")?;
            let ok = (1..=CURSOR_DIGITS).contains(&digits.len())
                && digits.bytes().all(|b| b.is_ascii_digit());
            digits.parse().ok().filter(|_| ok)
        })
        .ok_or_else(|| Error::validation("cursor", "a cursor returned by a previous page"))
}

pub(crate) fn page<T>(
    mut rows: Vec<T>,
    limit: i64,
    position: impl Fn(&T) -> i64,
) -> (Vec<T>, Pagination) {
    let has_more = rows.len() as i64 > limit;
    rows.truncate(limit as usize);
    let next_cursor = has_more
        .then(|| rows.last().map(|r| encode_cursor(position(r))))
        .flatten();
    (
        rows,
        Pagination {
            next_cursor,
            has_more,
        },
    )
}

/// `GET /pins`: newest first, keyset-paginated; `pinboard_id` keeps the pins placed on that
/// board.
pub async fn list(
    state: &AppState,
    who: &Principal,
    params: &ListParams,
) -> Result<(Data, Pagination)> {
    let limit = page_limit(params.limit.as_deref())?;
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
    let before_seq = params.cursor.as_deref().map(decode_cursor).transpose()?;
    let render = render_flag(params.render.as_deref())?;
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
    };
    let keys = state.store.list_pin_keys(&who.workspace_id, &query).await?;
    let (keys, pagination) = page(keys, limit, |key| key.seq);
    if render {
        let records = rendered::list_records(state, &who.workspace_id, &keys).await?;
        let records: Vec<&RawValue> = records.iter().map(|record| &**record).collect();
        return Ok((to_data(&records)?, pagination));
    }
    let records = rendered(state, who, &keys).await?;
    let records: Vec<&RawValue> = records.iter().map(|record| &**record).collect();
    Ok((to_data(&records)?, pagination))
}

/// The record of each listed pin: kept ones as they are, the others read and rendered (and
/// kept). A pin deleted between the two reads is left out; one changed between them is shown
/// as it is now.
async fn rendered(state: &AppState, who: &Principal, keys: &[PinKey]) -> Result<Vec<Record>> {
    let mut found = state.records.find(keys);
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
                let fresh: Record = to_data(&PinRecord::new(pin, state.public_base())?)?.into();
                state
                    .records
                    .keep(&pin.id, pin.version, pin.updated_at, fresh.clone());
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
) -> Result<(Data, Pagination)> {
    let limit = page_limit(params.limit.as_deref())?;
    let before = params.cursor.as_deref().map(decode_cursor).transpose()?;
    let rows = state
        .store
        .list_versions(&who.workspace_id, id, before, limit + 1)
        .await?
        .ok_or(Error::NotFound {
            what: "pin",
            index: None,
        })?;
    let (pins, pagination) = page(rows, limit, |p| p.version);
    Ok((to_data(&records(state, &pins)?)?, pagination))
}

/// An `If-Match` precondition: the versions the client accepts (`None` = any).
#[derive(Debug, Clone, Default)]
pub struct Precondition(pub Option<Vec<i64>>);

impl Precondition {
    fn check(&self, pin: &Pin) -> Result<()> {
        self.check_version(pin.version)
    }

    /// 412 `PRECONDITION_FAILED` unless the client accepts version `current`.
    pub fn check_version(&self, current: i64) -> Result<()> {
        match &self.0 {
            Some(versions) if !versions.contains(&current) => {
                Err(Error::PreconditionFailed { current })
            }
            _ => Ok(()),
        }
    }
}

/// `PUT`/`PATCH /pins/{id}`.
pub async fn update(
    state: &AppState,
    who: &Principal,
    id: &str,
    body: UpdateBody,
    precondition: Precondition,
) -> Result<UpdatedPin> {
    let change = body.into_change("", state.limits())?;
    let limits = state.limits();
    let now = clock::now_ms();
    let mut apply = |_: usize, pin: Pin| {
        precondition.check(&pin)?;
        change.apply(pin, "", limits, now)
    };
    let updated = state
        .store
        .update_pins(
            &who.workspace_id,
            &[id.to_owned()],
            limits.version_retention,
            &mut apply,
        )
        .await
        .map_err(without_index)?;
    let pin = updated
        .first()
        .ok_or_else(|| Error::internal("update returned no pin"))?;
    Ok(UpdatedPin {
        id: pin.id.clone(),
        updated_at: pin.updated_at,
        version: pin.version,
    })
}

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
) -> Result<Data> {
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
        .await?;
    to_data(
        &updated
            .iter()
            .map(|p| UpdatedPin {
                id: p.id.clone(),
                updated_at: p.updated_at,
                version: p.version,
            })
            .collect::<Vec<_>>(),
    )
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
    let update = super::parse_body(&Value::Object(fields), &field).map_err(|e| e.at_index(i))?;
    Ok((id, update))
}

#[derive(Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Deleted<'a> {
    pub id: &'a str,
    #[schemars(extend("const" = true))]
    pub deleted: bool,
}

/// `DELETE /pins/{id}`.
pub async fn delete(
    state: &AppState,
    who: &Principal,
    id: &str,
    precondition: Precondition,
) -> Result<Data> {
    let ids = [id.to_owned()];
    state
        .store
        .delete_pins(&who.workspace_id, &ids, &mut |_, pin| {
            precondition.check(pin)
        })
        .await
        .map_err(without_index)?;
    to_data(&Deleted { id, deleted: true })
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
) -> Result<Data> {
    check_batch_len(body.pin_ids.len(), "pin_ids", state)?;
    check_unique(&body.pin_ids, |i| format!("pin_ids[{i}]"))?;
    state
        .store
        .delete_pins(&who.workspace_id, &body.pin_ids, &mut |_, _| Ok(()))
        .await?;
    to_data(
        &body
            .pin_ids
            .iter()
            .map(|id| Deleted { id, deleted: true })
            .collect::<Vec<_>>(),
    )
}
