//! `/pins` routes: thin handlers that authenticate (scope in the signature), parse, call
//! [`crate::pins::ops`] and wrap the result in the envelope.

use aide::{
    axum::{
        routing::{get_with, post_with},
        ApiRouter,
    },
    transform::TransformOperation,
};
use axum::{
    extract::State,
    http::{header, HeaderMap, HeaderValue},
};

use super::{
    docs::{self, Found, One, Page},
    ApiJson, ApiPath, ApiQuery, Envelope, PinPath,
};
use crate::{
    app::AppState,
    auth::{Auth, PinsRead, PinsWrite},
    error::{Error, Result},
    pins::{
        ops::{
            self, BatchCreateBody, BatchDeleteBody, BatchGetBody, BatchUpdateBody, Deleted,
            IdempotencyKey, ListParams, Outcome, PageParams, Precondition, RenderParams,
        },
        rendered::PinRead,
        CreateBody, CreatedPin, PinRecord, UpdateBody, UpdatedPin,
    },
};

type Record = PinRecord<'static>;

fn doc<'a>(op: TransformOperation<'a>, summary: &str) -> TransformOperation<'a> {
    op.summary(summary).tag("pins")
}

pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new()
        .api_route(
            "/pins",
            get_with(list, |op| {
                doc(
                    op,
                    "List pins, newest first (keyset pages; filters by type, tag, time, board)",
                )
                .id("listPins")
            })
            .post_with(create, |op| {
                docs::idempotency_key(doc(op, "Create a pin (shape A or B)").id("createPin"))
            }),
        )
        .api_route(
            "/pins/batch",
            post_with(create_batch, |op| {
                docs::idempotency_key(doc(op, "Create pins, all or none").id("createPins"))
            }),
        )
        .api_route(
            "/pins/batch/get",
            post_with(get_batch, |op| doc(op, "Read pins by id").id("getPins")),
        )
        .api_route(
            "/pins/batch/update",
            post_with(update_batch, |op| {
                doc(op, "Update pins, all or none").id("updatePins")
            }),
        )
        .api_route(
            "/pins/batch/delete",
            post_with(delete_batch, |op| {
                doc(op, "Delete pins, all or none").id("deletePins")
            }),
        )
        .api_route(
            "/pins/{id}",
            get_with(read, |op| {
                doc(op, "Read a pin (with its version as ETag)").id("getPin")
            })
            .put_with(update, |op| {
                docs::if_match(doc(op, "Update a pin (only the fields sent)")).id("putPin")
            })
            .patch_with(update, |op| {
                docs::if_match(doc(op, "Update a pin (only the fields sent)")).id("patchPin")
            })
            .delete_with(delete, |op| {
                docs::if_match(doc(op, "Delete a pin").id("deletePin"))
            }),
        )
        .api_route(
            "/pins/{id}/versions",
            get_with(versions, |op| {
                doc(op, "List a pin's past versions, newest first").id("listPinVersions")
            }),
        )
}

fn idempotency_key(
    headers: &HeaderMap,
    operation: &str,
    body: &[u8],
) -> Result<Option<IdempotencyKey>> {
    headers
        .get("idempotency-key")
        .map(|v| {
            let key = v
                .to_str()
                .map_err(|_| Error::validation("Idempotency-Key", "visible ASCII characters"))?;
            IdempotencyKey::new(key, operation, body)
        })
        .transpose()
}

/// `If-Match`: `*`, or a list of `"<version>"` entity tags (weak ones compare too). A value
/// that names no version can never match.
pub(super) fn precondition(headers: &HeaderMap) -> Precondition {
    let Some(value) = headers.get(header::IF_MATCH) else {
        return Precondition(None);
    };
    let text = value.to_str().unwrap_or("");
    if text.trim() == "*" {
        return Precondition(None);
    }
    let versions = text
        .split(',')
        .filter_map(|tag| {
            let tag = tag.trim();
            let tag = tag.strip_prefix("W/").unwrap_or(tag);
            tag.strip_prefix('"')?.strip_suffix('"')?.parse().ok()
        })
        .collect();
    Precondition(Some(versions))
}

fn created<B>(outcome: Outcome) -> Envelope<B> {
    let envelope = Envelope::new(outcome.data);
    if outcome.replayed {
        envelope.with_header(
            header::HeaderName::from_static("idempotent-replayed"),
            HeaderValue::from_static("true"),
        )
    } else {
        envelope
    }
}

async fn list(
    State(state): State<AppState>,
    auth: Auth<PinsRead>,
    ApiQuery(params): ApiQuery<ListParams>,
) -> Result<Envelope<Page<PinRead<'static>>>> {
    let (data, pagination) = ops::list(&state, &auth.principal, &params).await?;
    Ok(Envelope::paginated(data, &pagination))
}

async fn create(
    State(state): State<AppState>,
    auth: Auth<PinsWrite>,
    headers: HeaderMap,
    ApiJson(body, raw): ApiJson<CreateBody>,
) -> Result<Envelope<One<CreatedPin<'static>>>> {
    let idem = idempotency_key(&headers, "create", &raw)?;
    Ok(created(
        ops::create(&state, &auth.principal, body, idem).await?,
    ))
}

async fn create_batch(
    State(state): State<AppState>,
    auth: Auth<PinsWrite>,
    headers: HeaderMap,
    ApiJson(body, raw): ApiJson<BatchCreateBody>,
) -> Result<Envelope<One<Vec<CreatedPin<'static>>>>> {
    let idem = idempotency_key(&headers, "create_batch", &raw)?;
    Ok(created(
        ops::create_batch(&state, &auth.principal, body, idem).await?,
    ))
}

async fn read(
    State(state): State<AppState>,
    auth: Auth<PinsRead>,
    ApiPath(PinPath { id }): ApiPath<PinPath>,
    ApiQuery(params): ApiQuery<RenderParams>,
) -> Result<Envelope<One<PinRead<'static>>>> {
    let render = ops::render_flag(params.render.as_deref())?;
    let (data, version) = ops::get(&state, &auth.principal, &id, render).await?;
    Ok(Envelope::new(data).with_etag(version))
}

async fn get_batch(
    State(state): State<AppState>,
    auth: Auth<PinsRead>,
    ApiQuery(params): ApiQuery<RenderParams>,
    ApiJson(body, _): ApiJson<BatchGetBody>,
) -> Result<Envelope<Found<PinRead<'static>>>> {
    let render = ops::render_flag(params.render.as_deref())?;
    let (found, missing) = ops::get_batch(&state, &auth.principal, body, render).await?;
    Ok(Envelope::new(found).with_field("missing", missing.get().to_owned()))
}

async fn update(
    State(state): State<AppState>,
    auth: Auth<PinsWrite>,
    ApiPath(PinPath { id }): ApiPath<PinPath>,
    headers: HeaderMap,
    ApiJson(body, _): ApiJson<UpdateBody>,
) -> Result<Envelope<One<UpdatedPin>>> {
    let updated = ops::update(&state, &auth.principal, &id, body, precondition(&headers)).await?;
    let version = updated.version;
    let data = serde_json::value::to_raw_value(&updated).map_err(Error::internal)?;
    Ok(Envelope::new(data).with_etag(version))
}

async fn update_batch(
    State(state): State<AppState>,
    auth: Auth<PinsWrite>,
    ApiJson(body, _): ApiJson<BatchUpdateBody>,
) -> Result<Envelope<One<Vec<UpdatedPin>>>> {
    Ok(Envelope::new(
        ops::update_batch(&state, &auth.principal, body).await?,
    ))
}

async fn delete(
    State(state): State<AppState>,
    auth: Auth<PinsWrite>,
    ApiPath(PinPath { id }): ApiPath<PinPath>,
    headers: HeaderMap,
) -> Result<Envelope<One<Deleted<'static>>>> {
    Ok(Envelope::new(
        ops::delete(&state, &auth.principal, &id, precondition(&headers)).await?,
    ))
}

async fn delete_batch(
    State(state): State<AppState>,
    auth: Auth<PinsWrite>,
    ApiJson(body, _): ApiJson<BatchDeleteBody>,
) -> Result<Envelope<One<Vec<Deleted<'static>>>>> {
    Ok(Envelope::new(
        ops::delete_batch(&state, &auth.principal, body).await?,
    ))
}

async fn versions(
    State(state): State<AppState>,
    auth: Auth<PinsRead>,
    ApiPath(PinPath { id }): ApiPath<PinPath>,
    ApiQuery(params): ApiQuery<PageParams>,
) -> Result<Envelope<Page<Record>>> {
    let (data, pagination) = ops::versions(&state, &auth.principal, &id, &params).await?;
    Ok(Envelope::paginated(data, &pagination))
}
