//! The dataset operations, plain functions over the state and the caller (HTTP handlers call
//! them; so do MCP tools). Each returns its `data` serialised.

use std::collections::BTreeSet;

use super::{CreateDatasetBody, DatasetRecord, UpdateDatasetBody};
use crate::{
    app::AppState,
    auth::Principal,
    clock,
    error::{Error, Result},
    pins::ops::{
        decode_cursor, page, page_limit, to_data, Data, Deleted, PageParams, Pagination,
        Precondition,
    },
    store::{Dataset, DatasetQuery},
    templates::Datasets,
};

fn dataset_missing() -> Error {
    Error::NotFound {
        what: "dataset",
        index: None,
    }
}

fn record(dataset: &Dataset) -> Result<Data> {
    to_data(&DatasetRecord::new(dataset)?)
}

/// `POST /datasets`.
pub async fn create(state: &AppState, who: &Principal, body: CreateDatasetBody) -> Result<Data> {
    let dataset = body.into_dataset(clock::now_ms())?;
    state
        .store
        .insert_dataset(&who.workspace_id, &dataset)
        .await?;
    record(&dataset)
}

/// `GET /datasets/{id}`: the record and its version (for `ETag`).
pub async fn get(state: &AppState, who: &Principal, id: &str) -> Result<(Data, i64)> {
    let dataset = state
        .store
        .get_dataset(&who.workspace_id, id)
        .await?
        .ok_or_else(dataset_missing)?;
    Ok((record(&dataset)?, dataset.version))
}

/// `GET /datasets`: newest first, keyset-paginated like `GET /pins`.
pub async fn list(
    state: &AppState,
    who: &Principal,
    params: &PageParams,
) -> Result<(Data, Pagination)> {
    let limit = page_limit(params.limit.as_deref())?;
    let query = DatasetQuery {
        limit: limit + 1,
        before_seq: params.cursor.as_deref().map(decode_cursor).transpose()?,
    };
    let rows = state.store.list_datasets(&who.workspace_id, &query).await?;
    let (rows, pagination) = page(rows, limit, |(seq, _)| *seq);
    let records = rows
        .iter()
        .map(|(_, d)| DatasetRecord::new(d))
        .collect::<Result<Vec<_>>>()?;
    Ok((to_data(&records)?, pagination))
}

/// `PUT /datasets/{id}` (`merge: false`) and `PATCH` (`merge: true`, `data` a JSON Merge
/// Patch): the updated record and its version.
pub async fn update(
    state: &AppState,
    who: &Principal,
    id: &str,
    body: UpdateDatasetBody,
    merge: bool,
    precondition: Precondition,
) -> Result<(Data, i64)> {
    let update = body.into_update(merge)?;
    let now = clock::now_ms();
    let dataset = state
        .store
        .update_dataset(&who.workspace_id, id, &mut |d| {
            precondition.check_version(d.version)?;
            update.apply(d, now)
        })
        .await?;
    Ok((record(&dataset)?, dataset.version))
}

/// `DELETE /datasets/{id}`. Pins that refer to it render its variables empty, with a
/// warning, until a dataset of that name exists again.
pub async fn delete(
    state: &AppState,
    who: &Principal,
    id: &str,
    precondition: Precondition,
) -> Result<Data> {
    state
        .store
        .delete_dataset(&who.workspace_id, id, &mut |d| {
            precondition.check_version(d.version)
        })
        .await?;
    to_data(&Deleted { id, deleted: true })
}

/// The workspace's datasets among `names`, read in one query, as templates resolve them.
pub async fn for_templates(
    state: &AppState,
    workspace_id: &str,
    names: &BTreeSet<String>,
) -> Result<Datasets> {
    let names: Vec<String> = names.iter().cloned().collect();
    let found = state.store.datasets_named(workspace_id, &names).await?;
    found
        .into_iter()
        .map(|d| {
            let data = serde_json::from_str(&d.data)
                .map_err(|e| Error::internal_in("stored dataset data", e))?;
            Ok((d.name, data))
        })
        .collect()
}
