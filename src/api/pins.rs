//! `/pins` routes: thin handlers that authenticate (scope in the signature), parse, call
//! [`crate::pins::ops`] and wrap the result in the envelope.

use aide::{
    axum::{
        routing::{get_with, post_with},
        ApiRouter,
    },
    transform::TransformOperation,
};
use axum::{extract::State, http::HeaderMap};

use serde::Serialize;

use super::{
    docs::{self, Found, One, OrDryRun, Page},
    precondition, ApiJson, ApiPath, ApiQuery, Envelope, PatchBody, PinKeyPath, PinPath,
};
use crate::{
    app::AppState,
    auth::{Auth, PinsRead, PinsWrite, Principal},
    error::{Error, Result},
    pins::{
        append::AppendBody,
        ops::{
            self, AppendedPin, BatchCreateBody, BatchDeleteBody, BatchGetBody, BatchUpdateBody,
            ListParams, PinRef, RenderParams, WriteParams, Written,
        },
        rendered::PinRead,
        upsert::{self, BatchUpsertBody, UpsertResult, UpsertedPin},
        CreateBody, CreatedPin, PinRecord, UpdateBody, UpdatedPin,
    },
    wire::{Deleted, IdempotencyKey, PageParams},
};

type Record = PinRecord;

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
                    "List pins, newest first (keyset pages; filters by type, tag, time, board, key)",
                )
                .id("listPins")
            })
            .post_with(create, |op| {
                docs::idempotency_key(
                    key_taken(doc(op, "Create a pin (shape A or B)")).id("createPin"),
                )
            }),
        )
        .api_route(
            "/pins/batch",
            post_with(create_batch, |op| {
                docs::idempotency_key(
                    key_taken(doc(op, "Create pins, all or none")).id("createPins"),
                )
            }),
        )
        .api_route(
            "/pins/batch/get",
            post_with(get_batch, |op| doc(op, "Read pins by id").id("getPins")),
        )
        .api_route(
            "/pins/batch/update",
            post_with(update_batch, |op| {
                key_taken(doc(op, "Update pins, all or none")).id("updatePins")
            }),
        )
        .api_route(
            "/pins/batch/delete",
            post_with(delete_batch, |op| {
                doc(op, "Delete pins, all or none").id("deletePins")
            }),
        )
        .api_route(
            "/pins/batch/upsert",
            post_with(upsert_batch, |op| {
                doc(op, "Upsert pins by key, all or none").id("upsertPins")
            }),
        )
        .api_route(
            "/pins/{id}",
            get_with(read, |op| {
                doc(op, "Read a pin (with its version as ETag)").id("getPin")
            })
            .put_with(update, |op| {
                key_taken(docs::if_match(doc(op, "Update a pin (only the fields sent)")))
                    .id("putPin")
            })
            .patch_with(patch, |op| {
                key_taken(docs::if_match(doc(
                    op,
                    "Update a pin (only the fields sent), or merge-patch it",
                )))
                .id("patchPin")
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
        .api_route(
            "/pins/by-key/{key}",
            get_with(read_by_key, |op| {
                doc(op, "Read a pin by key (with its version as ETag)").id("getPinByKey")
            })
            .put_with(upsert, |op| {
                doc(op, "Upsert a pin by key: create it, or make it what the body says")
                    .id("upsertPin")
            })
            .patch_with(patch_by_key, |op| {
                key_taken(docs::if_match(doc(
                    op,
                    "Update a pin by key (only the fields sent), or merge-patch it",
                )))
                .id("patchPinByKey")
            })
            .delete_with(delete_by_key, |op| {
                docs::if_match(doc(op, "Delete a pin by key").id("deletePinByKey"))
            }),
        )
        .api_route(
            "/pins/{id}/append",
            post_with(append, |op| {
                doc(op, "Append points, rows, events or items to a pin, dropping the oldest beyond max_*")
                    .id("appendToPin")
            }),
        )
        .api_route(
            "/pins/by-key/{key}/append",
            post_with(append_by_key, |op| {
                doc(op, "Append to the pin with this key, dropping the oldest beyond max_*")
                    .id("appendToPinByKey")
            }),
        )
}

/// The 409 of a write that can set a key another pin holds.
fn key_taken(op: TransformOperation<'_>) -> TransformOperation<'_> {
    docs::conflict(
        op,
        "Another pin of the workspace has the `key`: `CONFLICT` with `details.field`",
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

/// A one-pin write's answer: the write's, or the record a dry run would store.
fn one<T: Serialize>(written: Written<T>) -> Result<Envelope<OrDryRun<T, Record>>> {
    match written {
        Written::Done(done) => Envelope::of(&done),
        Written::DryRun(records) => dry_run_one(&records),
    }
}

fn dry_run_one<B>(records: &[Record]) -> Result<Envelope<B>> {
    Envelope::dry_run(
        records
            .first()
            .ok_or_else(|| Error::internal("a dry run made no record"))?,
    )
}

/// An update's answer, with the new version as `ETag`.
fn updated(written: Written<UpdatedPin>) -> Result<Envelope<OrDryRun<UpdatedPin, Record>>> {
    let version = match &written {
        Written::Done(done) => Some(done.version),
        Written::DryRun(_) => None,
    };
    let envelope = one(written)?;
    Ok(match version {
        Some(version) => envelope.with_etag(version),
        None => envelope,
    })
}

/// A batch write's answer, or the records a dry run would store.
fn all<T: Serialize>(written: Written<Vec<T>>) -> Result<Envelope<OrDryRun<Vec<T>, Vec<Record>>>> {
    match written {
        Written::Done(done) => Envelope::of(&done),
        Written::DryRun(records) => Envelope::dry_run(&records),
    }
}

async fn list(
    State(state): State<AppState>,
    auth: Auth<PinsRead>,
    ApiQuery(params): ApiQuery<ListParams>,
) -> Result<Envelope<Page<PinRead>>> {
    Envelope::page(&ops::list(&state, &auth.principal, &params).await?)
}

async fn create(
    State(state): State<AppState>,
    auth: Auth<PinsWrite>,
    headers: HeaderMap,
    ApiQuery(params): ApiQuery<WriteParams>,
    ApiJson(body, raw): ApiJson<CreateBody>,
) -> Result<Envelope<OrDryRun<CreatedPin, Record>>> {
    let idem = idempotency_key(&headers, "create", &raw)?;
    match ops::create(&state, &auth.principal, body, idem, params.dry_run()?).await? {
        Written::Done(outcome) => Envelope::created(outcome),
        Written::DryRun(records) => dry_run_one(&records),
    }
}

async fn create_batch(
    State(state): State<AppState>,
    auth: Auth<PinsWrite>,
    headers: HeaderMap,
    ApiQuery(params): ApiQuery<WriteParams>,
    ApiJson(body, raw): ApiJson<BatchCreateBody>,
) -> Result<Envelope<OrDryRun<Vec<CreatedPin>, Vec<Record>>>> {
    let idem = idempotency_key(&headers, "create_batch", &raw)?;
    match ops::create_batch(&state, &auth.principal, body, idem, params.dry_run()?).await? {
        Written::Done(outcome) => Envelope::created(outcome),
        Written::DryRun(records) => Envelope::dry_run(&records),
    }
}

async fn read(
    State(state): State<AppState>,
    auth: Auth<PinsRead>,
    ApiPath(PinPath { id }): ApiPath<PinPath>,
    ApiQuery(params): ApiQuery<RenderParams>,
) -> Result<Envelope<One<PinRead>>> {
    read_pin(&state, &auth.principal, &PinRef::Id(id), &params).await
}

async fn read_by_key(
    State(state): State<AppState>,
    auth: Auth<PinsRead>,
    ApiPath(PinKeyPath { key }): ApiPath<PinKeyPath>,
    ApiQuery(params): ApiQuery<RenderParams>,
) -> Result<Envelope<One<PinRead>>> {
    read_pin(&state, &auth.principal, &PinRef::Key(key), &params).await
}

async fn read_pin(
    state: &AppState,
    who: &Principal,
    target: &PinRef,
    params: &RenderParams,
) -> Result<Envelope<One<PinRead>>> {
    let render = ops::render_flag(params.render.as_deref())?;
    let record = ops::get(state, who, target, render).await?;
    Ok(Envelope::of(&record)?.with_etag(record.version()))
}

async fn get_batch(
    State(state): State<AppState>,
    auth: Auth<PinsRead>,
    ApiQuery(params): ApiQuery<RenderParams>,
    ApiJson(body, _): ApiJson<BatchGetBody>,
) -> Result<Envelope<Found<PinRead>>> {
    let render = ops::render_flag(params.render.as_deref())?;
    Envelope::found(&ops::get_batch(&state, &auth.principal, body, render).await?)
}

async fn update(
    State(state): State<AppState>,
    auth: Auth<PinsWrite>,
    ApiPath(PinPath { id }): ApiPath<PinPath>,
    headers: HeaderMap,
    ApiQuery(params): ApiQuery<WriteParams>,
    ApiJson(body, _): ApiJson<UpdateBody>,
) -> Result<Envelope<OrDryRun<UpdatedPin, Record>>> {
    let target = PinRef::Id(id);
    let precondition = precondition(&headers)?;
    let dry_run = params.dry_run()?;
    updated(
        ops::update(
            &state,
            &auth.principal,
            &target,
            body,
            precondition,
            dry_run,
        )
        .await?,
    )
}

async fn patch(
    State(state): State<AppState>,
    auth: Auth<PinsWrite>,
    ApiPath(PinPath { id }): ApiPath<PinPath>,
    headers: HeaderMap,
    ApiQuery(params): ApiQuery<WriteParams>,
    body: PatchBody<UpdateBody>,
) -> Result<Envelope<OrDryRun<UpdatedPin, Record>>> {
    patch_pin(
        &state,
        &auth.principal,
        PinRef::Id(id),
        &headers,
        &params,
        body,
    )
    .await
}

async fn patch_by_key(
    State(state): State<AppState>,
    auth: Auth<PinsWrite>,
    ApiPath(PinKeyPath { key }): ApiPath<PinKeyPath>,
    headers: HeaderMap,
    ApiQuery(params): ApiQuery<WriteParams>,
    body: PatchBody<UpdateBody>,
) -> Result<Envelope<OrDryRun<UpdatedPin, Record>>> {
    patch_pin(
        &state,
        &auth.principal,
        PinRef::Key(key),
        &headers,
        &params,
        body,
    )
    .await
}

async fn patch_pin(
    state: &AppState,
    who: &Principal,
    target: PinRef,
    headers: &HeaderMap,
    params: &WriteParams,
    body: PatchBody<UpdateBody>,
) -> Result<Envelope<OrDryRun<UpdatedPin, Record>>> {
    let precondition = precondition(headers)?;
    let dry_run = params.dry_run()?;
    updated(match body {
        PatchBody::Update(body) => {
            ops::update(state, who, &target, body, precondition, dry_run).await?
        }
        PatchBody::Merge(patch) => {
            ops::merge_patch(state, who, &target, &patch, precondition, dry_run).await?
        }
    })
}

async fn upsert(
    State(state): State<AppState>,
    auth: Auth<PinsWrite>,
    ApiPath(PinKeyPath { key }): ApiPath<PinKeyPath>,
    ApiQuery(params): ApiQuery<WriteParams>,
    ApiJson(body, _): ApiJson<CreateBody>,
) -> Result<Envelope<OrDryRun<UpsertedPin, Record>>> {
    one(upsert::upsert(&state, &auth.principal, &key, body, params.dry_run()?).await?)
}

async fn upsert_batch(
    State(state): State<AppState>,
    auth: Auth<PinsWrite>,
    ApiQuery(params): ApiQuery<WriteParams>,
    ApiJson(body, _): ApiJson<BatchUpsertBody>,
) -> Result<Envelope<OrDryRun<Vec<UpsertResult>, Vec<Record>>>> {
    all(upsert::upsert_batch(&state, &auth.principal, body, params.dry_run()?).await?)
}

async fn append(
    State(state): State<AppState>,
    auth: Auth<PinsWrite>,
    ApiPath(PinPath { id }): ApiPath<PinPath>,
    ApiQuery(params): ApiQuery<WriteParams>,
    ApiJson(AppendBody(body), _): ApiJson<AppendBody>,
) -> Result<Envelope<OrDryRun<AppendedPin, Record>>> {
    let target = PinRef::Id(id);
    one(ops::append(&state, &auth.principal, &target, &body, params.dry_run()?).await?)
}

async fn append_by_key(
    State(state): State<AppState>,
    auth: Auth<PinsWrite>,
    ApiPath(PinKeyPath { key }): ApiPath<PinKeyPath>,
    ApiQuery(params): ApiQuery<WriteParams>,
    ApiJson(AppendBody(body), _): ApiJson<AppendBody>,
) -> Result<Envelope<OrDryRun<AppendedPin, Record>>> {
    let target = PinRef::Key(key);
    one(ops::append(&state, &auth.principal, &target, &body, params.dry_run()?).await?)
}

async fn update_batch(
    State(state): State<AppState>,
    auth: Auth<PinsWrite>,
    ApiJson(body, _): ApiJson<BatchUpdateBody>,
) -> Result<Envelope<One<Vec<UpdatedPin>>>> {
    Envelope::of(&ops::update_batch(&state, &auth.principal, body).await?)
}

async fn delete(
    State(state): State<AppState>,
    auth: Auth<PinsWrite>,
    ApiPath(PinPath { id }): ApiPath<PinPath>,
    headers: HeaderMap,
) -> Result<Envelope<One<Deleted>>> {
    let target = PinRef::Id(id);
    Envelope::of(&ops::delete(&state, &auth.principal, &target, precondition(&headers)?).await?)
}

async fn delete_by_key(
    State(state): State<AppState>,
    auth: Auth<PinsWrite>,
    ApiPath(PinKeyPath { key }): ApiPath<PinKeyPath>,
    headers: HeaderMap,
) -> Result<Envelope<One<Deleted>>> {
    let target = PinRef::Key(key);
    Envelope::of(&ops::delete(&state, &auth.principal, &target, precondition(&headers)?).await?)
}

async fn delete_batch(
    State(state): State<AppState>,
    auth: Auth<PinsWrite>,
    ApiJson(body, _): ApiJson<BatchDeleteBody>,
) -> Result<Envelope<One<Vec<Deleted>>>> {
    Envelope::of(&ops::delete_batch(&state, &auth.principal, body).await?)
}

async fn versions(
    State(state): State<AppState>,
    auth: Auth<PinsRead>,
    ApiPath(PinPath { id }): ApiPath<PinPath>,
    ApiQuery(params): ApiQuery<PageParams>,
) -> Result<Envelope<Page<Record>>> {
    Envelope::page(&ops::versions(&state, &auth.principal, &id, &params).await?)
}
