//! The dataset operations, plain functions over the state and the caller (HTTP handlers call
//! them; so do MCP tools). Each returns the record it made or read.

use std::collections::BTreeSet;

use super::{check_name_at, CreateDatasetBody, DataWrite, DatasetRecord, UpdateDatasetBody};
use crate::{
    app::AppState,
    auth::Principal,
    clock,
    error::{Error, Result},
    store::{DatasetQuery, Store},
    templates::Datasets,
    wire::{Deleted, Page, PageParams, Precondition},
};

fn dataset_missing() -> Error {
    Error::NotFound {
        what: "dataset",
        index: None,
    }
}

/// `POST /datasets`.
pub async fn create(
    state: &AppState,
    who: &Principal,
    body: CreateDatasetBody,
) -> Result<DatasetRecord> {
    let dataset = body.into_dataset(clock::now_ms())?;
    state
        .store
        .insert_dataset(&who.workspace_id, &dataset)
        .await?;
    state.events.statuses_due();
    DatasetRecord::new(&dataset)
}

/// `GET /datasets/{id}`: the record (its version is the `ETag`).
pub async fn get(state: &AppState, who: &Principal, id: &str) -> Result<DatasetRecord> {
    let dataset = state
        .store
        .get_dataset(&who.workspace_id, id)
        .await?
        .ok_or_else(dataset_missing)?;
    DatasetRecord::new(&dataset)
}

/// `GET /datasets`: newest first, keyset-paginated like `GET /pins`.
pub async fn list(
    state: &AppState,
    who: &Principal,
    params: &PageParams,
) -> Result<Page<DatasetRecord>> {
    let (limit, before_seq) = params.window()?;
    let query = DatasetQuery {
        limit: limit + 1,
        before_seq,
    };
    let rows = state.store.list_datasets(&who.workspace_id, &query).await?;
    Page::of(rows, limit, |(seq, _)| *seq).try_map(|(_, d)| DatasetRecord::new(&d))
}

/// `PUT /datasets/{id}` (`merge: false`) and `PATCH` (`merge: true`, `data` a JSON Merge
/// Patch): the updated record.
pub async fn update(
    state: &AppState,
    who: &Principal,
    id: &str,
    body: UpdateDatasetBody,
    merge: bool,
    precondition: Precondition,
) -> Result<DatasetRecord> {
    let update = body.into_update(merge)?;
    let now = clock::now_ms();
    let dataset = state
        .store
        .update_dataset(&who.workspace_id, id, &mut |d| {
            precondition.check_version(d.version)?;
            update.apply(d, now)
        })
        .await?;
    state.events.statuses_due();
    DatasetRecord::new(&dataset)
}

/// `DELETE /datasets/{id}`. Pins that refer to it render its variables empty, with a
/// warning, until a dataset of that name exists again.
pub async fn delete(
    state: &AppState,
    who: &Principal,
    id: &str,
    precondition: Precondition,
) -> Result<Deleted> {
    state
        .store
        .delete_dataset(&who.workspace_id, id, &mut |d| {
            precondition.check_version(d.version)
        })
        .await?;
    state.events.statuses_due();
    Ok(Deleted::new(id))
}

/// Writes the data of the workspace's dataset `name` (at `field` of the caller's input), a
/// json dataset made when there is none: one version and one event (`dataset.created` for
/// the write that makes it, `dataset.updated` after), like any dataset write. Inbound hooks
/// write this way.
pub async fn write_named(
    state: &AppState,
    who: &Principal,
    field: &str,
    name: &str,
    write: &DataWrite,
) -> Result<DatasetRecord> {
    check_name_at(field, name)?;
    let now = clock::now_ms();
    let mut change = |stored| write.apply(name, stored, now);
    let written = state
        .store
        .write_dataset_named(&who.workspace_id, name, &mut change)
        .await;
    let dataset = match written {
        // Another writer made it between this one's read and its insert: it is there now.
        // (A conflict of the write itself, an append to data that is no array, comes back
        // the same from the second try.)
        Err(Error::Conflict(_)) => {
            state
                .store
                .write_dataset_named(&who.workspace_id, name, &mut change)
                .await?
        }
        other => other?,
    };
    state.events.statuses_due();
    DatasetRecord::new(&dataset)
}

/// The workspace's datasets among `names`, read in one query, as templates resolve them.
pub async fn for_templates(
    state: &AppState,
    workspace_id: &str,
    names: &BTreeSet<String>,
) -> Result<Datasets> {
    named_in(&state.store, workspace_id, names).await
}

/// [`for_templates`] from the store itself (the status sweep has no request).
pub async fn named_in(
    store: &Store,
    workspace_id: &str,
    names: &BTreeSet<String>,
) -> Result<Datasets> {
    let names: Vec<String> = names.iter().cloned().collect();
    let found = store.datasets_named(workspace_id, &names).await?;
    found
        .into_iter()
        .map(|d| {
            let data = serde_json::from_str(&d.data)
                .map_err(|e| Error::internal_in("stored dataset data", e))?;
            Ok((d.name, data))
        })
        .collect()
}
