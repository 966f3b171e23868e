//! `/datasets` routes (`datasets:read` / `datasets:write`): thin handlers over
//! [`crate::datasets::ops`].

use aide::{
    axum::{routing::get_with, ApiRouter},
    transform::TransformOperation,
};
use axum::{extract::State, http::HeaderMap};

use super::{
    docs::{self, One, Page},
    precondition, ApiJson, ApiPath, ApiQuery, DatasetPath, Envelope,
};
use crate::{
    app::AppState,
    auth::{Auth, DatasetsRead, DatasetsWrite, Principal},
    datasets::{ops, CreateDatasetBody, DatasetRecord, UpdateDatasetBody},
    error::Result,
    wire::{Deleted, PageParams},
};

type Record = DatasetRecord;

fn doc<'a>(op: TransformOperation<'a>, summary: &str) -> TransformOperation<'a> {
    op.summary(summary).tag("datasets")
}

const NAME_TAKEN: &str = "The workspace already has a dataset of that name: `CONFLICT`";

pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new()
        .api_route(
            "/datasets",
            get_with(list, |op| {
                doc(op, "List datasets, newest first").id("listDatasets")
            })
            .post_with(create, |op| {
                docs::conflict(doc(op, "Create a dataset").id("createDataset"), NAME_TAKEN)
            }),
        )
        .api_route(
            "/datasets/{id}",
            get_with(read, |op| {
                doc(op, "Read a dataset (with its version as ETag)").id("getDataset")
            })
            .put_with(replace, |op| {
                docs::conflict(
                    docs::if_match(doc(op, "Replace the fields sent").id("putDataset")),
                    NAME_TAKEN,
                )
            })
            .patch_with(patch, |op| {
                docs::conflict(
                    docs::if_match(
                        doc(
                            op,
                            "Update a dataset: `data` is a JSON Merge Patch (RFC 7396) of a json \
                             dataset, a string replaces a markdown one",
                        )
                        .id("patchDataset"),
                    ),
                    NAME_TAKEN,
                )
            })
            .delete_with(delete, |op| {
                docs::if_match(doc(op, "Delete a dataset").id("deleteDataset"))
            }),
        )
}

async fn list(
    State(state): State<AppState>,
    auth: Auth<DatasetsRead>,
    ApiQuery(params): ApiQuery<PageParams>,
) -> Result<Envelope<Page<Record>>> {
    Envelope::page(&ops::list(&state, &auth.principal, &params).await?)
}

async fn create(
    State(state): State<AppState>,
    auth: Auth<DatasetsWrite>,
    ApiJson(body, _): ApiJson<CreateDatasetBody>,
) -> Result<Envelope<One<Record>>> {
    Envelope::of(&ops::create(&state, &auth.principal, body).await?)
}

async fn read(
    State(state): State<AppState>,
    auth: Auth<DatasetsRead>,
    ApiPath(DatasetPath { id }): ApiPath<DatasetPath>,
) -> Result<Envelope<One<Record>>> {
    let record = ops::get(&state, &auth.principal, &id).await?;
    Ok(Envelope::of(&record)?.with_etag(record.version))
}

async fn replace(
    State(state): State<AppState>,
    auth: Auth<DatasetsWrite>,
    ApiPath(DatasetPath { id }): ApiPath<DatasetPath>,
    headers: HeaderMap,
    ApiJson(body, _): ApiJson<UpdateDatasetBody>,
) -> Result<Envelope<One<Record>>> {
    update(&state, &auth.principal, &id, &headers, body, false).await
}

async fn patch(
    State(state): State<AppState>,
    auth: Auth<DatasetsWrite>,
    ApiPath(DatasetPath { id }): ApiPath<DatasetPath>,
    headers: HeaderMap,
    ApiJson(body, _): ApiJson<UpdateDatasetBody>,
) -> Result<Envelope<One<Record>>> {
    update(&state, &auth.principal, &id, &headers, body, true).await
}

/// `PUT` (`merge: false`) and `PATCH` (`data` a merge patch): the record with its `ETag`.
async fn update(
    state: &AppState,
    who: &Principal,
    id: &str,
    headers: &HeaderMap,
    body: UpdateDatasetBody,
    merge: bool,
) -> Result<Envelope<One<Record>>> {
    let record = ops::update(state, who, id, body, merge, precondition(headers)?).await?;
    Ok(Envelope::of(&record)?.with_etag(record.version))
}

async fn delete(
    State(state): State<AppState>,
    auth: Auth<DatasetsWrite>,
    ApiPath(DatasetPath { id }): ApiPath<DatasetPath>,
    headers: HeaderMap,
) -> Result<Envelope<One<Deleted>>> {
    Envelope::of(&ops::delete(&state, &auth.principal, &id, precondition(&headers)?).await?)
}
