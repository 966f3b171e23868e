//! Upserts (CONTRACT.md 14): `PUT /pins/by-key/{key}` and `POST /pins/batch/upsert` make
//! the pin a key names what the body says, creating it when no pin has the key. An upsert
//! that would change nothing writes nothing: no version, no event.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    ops::{check_batch_len, reads_datasets, statuses_due, Written},
    CreateBody, CreatedPin, PinChange, PinRecord, UpdatedPin, BATCH_ITEMS,
};
use crate::{
    app::AppState,
    auth::Principal,
    clock,
    error::{Error, Result},
    store::{Pin, Upserted},
    templates::json_names_any,
    wire::parse_body,
};

/// The answer of `PUT /pins/by-key/{key}`: the create answer plus `created: true`, or the
/// update answer plus `created: false` and whether anything changed.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum UpsertedPin {
    Created {
        #[serde(flatten)]
        pin: Box<CreatedPin>,
        #[schemars(extend("const" = true))]
        created: bool,
    },
    Updated {
        #[serde(flatten)]
        pin: UpdatedPin,
        #[schemars(extend("const" = false))]
        created: bool,
        /// False when the pin already said what the body says: nothing was written.
        changed: bool,
    },
}

/// One result of `POST /pins/batch/upsert`, in request order.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct UpsertResult {
    pub id: String,
    pub key: String,
    /// Milliseconds since the Unix epoch.
    pub updated_at: i64,
    pub version: i64,
    pub created: bool,
    pub changed: bool,
}

impl UpsertResult {
    fn of(done: &Upserted) -> Self {
        let (pin, created, changed) = match done {
            Upserted::Created(pin) => (pin, true, true),
            Upserted::Updated(pin) => (pin, false, true),
            Upserted::Unchanged(pin) => (pin, false, false),
        };
        UpsertResult {
            id: pin.id.clone(),
            key: pin.key.clone().unwrap_or_default(),
            updated_at: pin.updated_at,
            version: pin.version,
            created,
            changed,
        }
    }
}

/// One item of a batch upsert: a pin create body with its `key`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct BatchUpsertItem {
    /// The pin's key (required): the pin is created when no pin has it, else updated.
    #[schemars(regex(pattern = super::KEY_PATTERN))]
    pub key: String,
    #[serde(flatten)]
    pub body: CreateBody,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchUpsertBody {
    /// 1 to `limits.batch_items` (default 100) upserts with distinct keys, all or none.
    #[schemars(with = "Vec<BatchUpsertItem>", length(min = 1, max = BATCH_ITEMS))]
    pub pins: Vec<Value>,
}

/// How fine an unchanged upsert keeps `last_pushed_at`: an expected interval is at least
/// ten seconds, so a second's precision never turns a fed pin stale.
const TOUCH_EVERY_MS: i64 = 1000;

/// `PUT /pins/by-key/{key}`.
pub async fn upsert(
    state: &AppState,
    who: &Principal,
    key: &str,
    body: CreateBody,
    dry_run: bool,
) -> Result<Written<UpsertedPin>> {
    let limits = state.limits();
    let now = clock::now_ms();
    let (mut new, change) = body.into_upsert(key, "", limits, now)?;
    reads_datasets(who, json_names_any(&new.pin_config))?;
    let ws = &who.workspace_id;
    super::status::read_new(&state.store, ws, std::slice::from_mut(&mut new)).await?;
    // Most upserts of a feed repeat what the pin says: answered from a read, without the
    // writer. One that differs goes to the group commit as decided from the read, as a
    // PATCH does; if the pin moved on meanwhile (or a new key is created), it is decided
    // again inside the write.
    let retention = limits.version_retention;
    // A change is first decided from the state this replica last wrote (see
    // `super::known`); "unchanged" is only ever decided from a read, as the answer says what
    // the store holds.
    let (guessed, writing) = if dry_run {
        (None, None)
    } else {
        state.known_pins.guess_by_key(ws, key).await
    };
    if let Some(old) = guessed.clone() {
        if let Ok(updated) = change.apply(old.clone(), "", limits, now) {
            if !updated.same_content(&old) {
                if let Some(pin) =
                    super::ops::store_decided(state, ws, old, updated, retention).await?
                {
                    return answer(state, ws, Upserted::Updated(pin), false);
                }
            }
        }
    }
    let current = state.store.pins_by_key(ws, &[key.to_owned()]).await?;
    if let Some(old) = current.into_iter().next() {
        if guessed.is_some() && state.known_pins.moved_by_another(ws, &old) {
            state.known_pins.missed(&old.id, now);
        }
        // Counted as a write of the pin by this replica until answered (see `moved_by_another`).
        let _writing_read = writing.is_none().then(|| state.known_pins.writing(&old.id));
        let updated = change.apply(old.clone(), "", limits, now)?;
        if updated.same_content(&old) {
            // Still a push: the pin is fresh again (CONTRACT.md 15). Its push time is kept
            // to the second, so a feed repeating itself many times a second writes once.
            if !dry_run && now.saturating_sub(old.last_pushed_at) >= TOUCH_EVERY_MS {
                state.store.touch_pin(ws, &old.id, old.version, now).await?;
            }
            return answer(state, ws, Upserted::Unchanged(old), dry_run);
        }
        if dry_run {
            return Written::dry_run(state, &[updated]);
        }
        if let Some(pin) = super::ops::store_decided(state, ws, old, updated, retention).await? {
            return answer(state, ws, Upserted::Updated(pin), false);
        }
    } else if dry_run {
        return Written::dry_run(state, &[new]);
    }
    let done = state
        .store
        .upsert_pins(ws, std::slice::from_ref(&new), retention, &mut |_, old| {
            change.apply(old, "", limits, now)
        })
        .await?;
    let done = done
        .into_iter()
        .next()
        .ok_or_else(|| Error::internal("an upsert answered nothing"))?;
    answer(state, ws, done, false)
}

/// The answer of a single upsert; a pin it wrote is kept for its next update.
fn answer(
    state: &AppState,
    ws: &str,
    done: Upserted,
    dry_run: bool,
) -> Result<Written<UpsertedPin>> {
    if let Upserted::Created(pin) | Upserted::Updated(pin) = &done {
        if !dry_run {
            state.known_pins.keep(ws, pin, clock::now_ms());
        }
        statuses_due(state, [pin]);
    }
    Ok(match done {
        Upserted::Unchanged(pin) if dry_run => {
            Written::DryRun(vec![PinRecord::from_pin(pin, state.public_base())?])
        }
        Upserted::Created(pin) => Written::Done(UpsertedPin::Created {
            pin: Box::new(CreatedPin::new(&pin, state.public_base())?),
            created: true,
        }),
        Upserted::Updated(pin) => Written::Done(UpsertedPin::Updated {
            pin: UpdatedPin::of(&pin),
            created: false,
            changed: true,
        }),
        Upserted::Unchanged(pin) => Written::Done(UpsertedPin::Updated {
            pin: UpdatedPin::of(&pin),
            created: false,
            changed: false,
        }),
    })
}

/// `POST /pins/batch/upsert`: all or nothing, results in request order.
pub async fn upsert_batch(
    state: &AppState,
    who: &Principal,
    body: BatchUpsertBody,
    dry_run: bool,
) -> Result<Written<Vec<UpsertResult>>> {
    check_batch_len(body.pins.len(), "pins", state)?;
    let limits = state.limits();
    let now = clock::now_ms();
    let mut news = Vec::with_capacity(body.pins.len());
    let mut changes = Vec::with_capacity(body.pins.len());
    for (i, item) in body.pins.iter().enumerate() {
        let (new, change) = parse_item(item, i, state, now)?;
        if news.iter().any(|p: &Pin| p.key == new.key) {
            return Err(Error::validation(
                format!("pins[{i}].key"),
                "a key not already in this batch",
            )
            .at_index(i));
        }
        news.push(new);
        changes.push(change);
    }
    reads_datasets(who, news.iter().any(|p| json_names_any(&p.pin_config)))?;
    let ws = &who.workspace_id;
    super::status::read_new(&state.store, ws, &mut news).await?;
    if dry_run {
        return preview(state, ws, &news, &changes, now).await;
    }
    let done = state
        .store
        .upsert_pins(ws, &news, limits.version_retention, &mut |i, old| {
            changes[i]
                .apply(old, &format!("pins[{i}]."), limits, now)
                .map_err(|e| e.at_index(i))
        })
        .await?;
    statuses_due(
        state,
        done.iter().filter_map(|done| match done {
            Upserted::Created(pin) | Upserted::Updated(pin) => Some(pin),
            Upserted::Unchanged(_) => None,
        }),
    );
    Ok(Written::Done(done.iter().map(UpsertResult::of).collect()))
}

/// A batch item: `{key, ...create body}`, the key required.
fn parse_item(item: &Value, i: usize, state: &AppState, now: i64) -> Result<(Pin, PinChange)> {
    let field = format!("pins[{i}]");
    let mut fields = item
        .as_object()
        .cloned()
        .ok_or_else(|| Error::validation(&field, "a JSON object").at_index(i))?;
    let key = match fields.remove("key") {
        Some(Value::String(key)) => key,
        _ => {
            return Err(Error::validation(
                format!("{field}.key"),
                "the pin's key, a string (required)",
            )
            .at_index(i))
        }
    };
    parse_body::<CreateBody>(&Value::Object(fields), &field)
        .and_then(|body| body.into_upsert(&key, &format!("{field}."), state.limits(), now))
        .map_err(|e| e.at_index(i))
}

/// A dry run of a batch upsert: each record as the write would leave it.
async fn preview(
    state: &AppState,
    ws: &str,
    news: &[Pin],
    changes: &[PinChange],
    now: i64,
) -> Result<Written<Vec<UpsertResult>>> {
    let keys: Vec<String> = news.iter().filter_map(|p| p.key.clone()).collect();
    let current = state.store.pins_by_key(ws, &keys).await?;
    let mut records = Vec::with_capacity(news.len());
    for (i, (new, change)) in news.iter().zip(changes).enumerate() {
        let pin = match current.iter().find(|p| p.key == new.key) {
            Some(old) => {
                let updated = change
                    .apply(old.clone(), &format!("pins[{i}]."), state.limits(), now)
                    .map_err(|e| e.at_index(i))?;
                if updated.same_content(old) {
                    old.clone()
                } else {
                    updated
                }
            }
            None => new.clone(),
        };
        records.push(PinRecord::new(&pin, state.public_base())?);
    }
    Ok(Written::DryRun(records))
}
