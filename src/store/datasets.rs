//! Datasets in the store (CONTRACT.md 7): the stored shape and [`DatasetStore`], written once
//! for both databases. Every write appends its `dataset.*` event in its own transaction.

use super::sql::Begin as _;

use super::events::NewEvent;
use super::pins::mark_statuses;
use super::sql::{is_unique_violation, Backend, Record};
use crate::error::{Error, Result};
use crate::events::EventKind;

/// A stored dataset. `data` is JSON text: the value of a `json` dataset, or a `markdown`
/// dataset's text as a JSON string.
#[derive(Debug, Clone)]
pub struct Dataset {
    pub id: String,
    pub name: String,
    pub format: String,
    pub data: String,
    pub description: Option<String>,
    pub version: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

/// Position of one page of `GET /datasets`, newest first.
#[derive(Debug, Clone, Default)]
pub struct DatasetQuery {
    /// Rows to fetch (one more than shown, to learn `has_more`).
    pub limit: i64,
    /// Only datasets created before this position (from the cursor).
    pub before_seq: Option<i64>,
}

/// Decides, inside the write transaction, what a dataset becomes (or refuses it).
pub type DatasetChange<'a> = dyn FnMut(Dataset) -> Result<Dataset> + Send + 'a;
/// Checks, inside the delete transaction, that the dataset may go (`If-Match`).
pub type DatasetCheck<'a> = dyn FnMut(&Dataset) -> Result<()> + Send + 'a;
/// Decides, inside the write transaction, what the dataset of a name becomes: given the
/// stored one, or `None` when the workspace has none of that name (it is then created).
pub type NamedChange<'a> = dyn FnMut(Option<Dataset>) -> Result<Dataset> + Send + 'a;

/// Datasets in the store. Every method takes the caller's workspace id.
pub(crate) trait DatasetStore {
    /// 409 `CONFLICT` when the workspace has a dataset of that name.
    async fn insert_dataset(&self, ws: &str, dataset: &Dataset) -> Result<()>;
    async fn get_dataset(&self, ws: &str, id: &str) -> Result<Option<Dataset>>;
    async fn list_datasets(&self, ws: &str, query: &DatasetQuery) -> Result<Vec<(i64, Dataset)>>;
    /// The workspace's datasets among `names` (for templates: one query per request).
    async fn datasets_named(&self, ws: &str, names: &[String]) -> Result<Vec<Dataset>>;
    /// The id and version of each of the workspace's datasets among `names`, by name: what
    /// a rendered record depends on, read without the data.
    async fn dataset_stamps(
        &self,
        ws: &str,
        names: &[String],
    ) -> Result<Vec<(String, String, i64)>>;
    /// Applies `change`; 404 when absent, 409 when renamed onto another dataset's name.
    async fn update_dataset(
        &self,
        ws: &str,
        id: &str,
        change: &mut DatasetChange<'_>,
    ) -> Result<Dataset>;
    /// Deletes it once `check` allowed; 404 when absent.
    async fn delete_dataset(&self, ws: &str, id: &str, check: &mut DatasetCheck<'_>) -> Result<()>;
    /// Applies `change` to the workspace's dataset named `name`, inserting what it makes of
    /// `None` when there is none; 409 when another writer created it meanwhile.
    async fn write_dataset_named(
        &self,
        ws: &str,
        name: &str,
        change: &mut NamedChange<'_>,
    ) -> Result<Dataset>;
}

fn dataset_missing() -> Error {
    Error::NotFound {
        what: "dataset",
        index: None,
    }
}

fn name_taken(e: sqlx::Error, name: &str) -> Error {
    if is_unique_violation(&e) {
        Error::Conflict(format!("a dataset named `{name}` already exists"))
    } else {
        e.into()
    }
}

/// The columns of a dataset, in the order [`dataset_at`] reads them.
macro_rules! dataset_columns {
    () => {
        "id, name, format, data, description, version, created_at, updated_at"
    };
}

const INSERT_DATASET: &str =
    "INSERT INTO datasets (id, workspace_id, name, format, data, description, \
     version, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";
const GET_DATASET: &str = concat!(
    "SELECT ",
    dataset_columns!(),
    " FROM datasets WHERE workspace_id = $1 AND id = $2"
);
const LIST_DATASETS: &str = concat!(
    "SELECT seq, ",
    dataset_columns!(),
    " FROM datasets WHERE workspace_id = $1 AND ($2 IS NULL OR seq < $2) ORDER BY seq DESC LIMIT $3"
);
const GET_DATASET_NAMED: &str = concat!(
    "SELECT ",
    dataset_columns!(),
    " FROM datasets WHERE workspace_id = $1 AND name = $2"
);
const UPDATE_DATASET: &str =
    "UPDATE datasets SET name = $3, format = $4, data = $5, description = $6, \
     version = $7, updated_at = $8 WHERE workspace_id = $1 AND id = $2";
const DELETE_DATASET: &str = "DELETE FROM datasets WHERE workspace_id = $1 AND id = $2";

/// A dataset from the dataset columns at column `first` on.
fn dataset_at(row: &impl Record, first: usize) -> Result<Dataset> {
    Ok(Dataset {
        id: row.get(first)?,
        name: row.get(first + 1)?,
        format: row.get(first + 2)?,
        data: row.get(first + 3)?,
        description: row.get(first + 4)?,
        version: row.get(first + 5)?,
        created_at: row.get(first + 6)?,
        updated_at: row.get(first + 7)?,
    })
}

/// The workspace's dataset `id`, locked until the transaction ends; 404 when absent.
async fn lock_dataset<B: Backend>(tx: &mut B::Db, ws: &str, id: &str) -> Result<Dataset> {
    let lock = format!("{GET_DATASET}{}", B::FOR_UPDATE);
    let row = B::query(&lock)
        .bind(ws)
        .bind(id)
        .fetch_optional(tx)
        .await?
        .ok_or_else(dataset_missing)?;
    dataset_at(&row, 0)
}

fn dataset_event(ws: &str, kind: EventKind, dataset: &Dataset, data: String) -> NewEvent {
    NewEvent {
        workspace_id: ws.to_owned(),
        kind,
        resource_id: dataset.id.clone(),
        version: Some(dataset.version),
        boards: Vec::new(),
        at: dataset.updated_at,
        data,
    }
}

impl<B: Backend> DatasetStore for B {
    async fn insert_dataset(&self, ws: &str, dataset: &Dataset) -> Result<()> {
        let mut conn = self.writer().await?;
        let mut tx = conn.begin().await?;
        insert::<B>(self, &mut tx, ws, dataset).await?;
        tx.commit().await?;
        self.committed(ws);
        Ok(())
    }

    async fn get_dataset(&self, ws: &str, id: &str) -> Result<Option<Dataset>> {
        B::query(GET_DATASET)
            .bind(ws)
            .bind(id)
            .fetch_optional(&mut *self.reader().await?)
            .await?
            .map(|row| dataset_at(&row, 0))
            .transpose()
    }

    async fn list_datasets(&self, ws: &str, query: &DatasetQuery) -> Result<Vec<(i64, Dataset)>> {
        let rows = B::query(LIST_DATASETS)
            .bind(ws)
            .bind(query.before_seq)
            .bind(query.limit)
            .fetch_all(&mut *self.reader().await?)
            .await?;
        rows.iter()
            .map(|row| Ok((row.get(0)?, dataset_at(row, 1)?)))
            .collect()
    }

    async fn datasets_named(&self, ws: &str, names: &[String]) -> Result<Vec<Dataset>> {
        if names.is_empty() {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT {} FROM datasets WHERE workspace_id = $1 AND {}",
            dataset_columns!(),
            B::in_list("name", 2)
        );
        let rows = B::query(&sql)
            .bind(ws)
            .bind_list(names)
            .fetch_all(&mut *self.reader().await?)
            .await?;
        rows.iter().map(|row| dataset_at(row, 0)).collect()
    }

    async fn dataset_stamps(
        &self,
        ws: &str,
        names: &[String],
    ) -> Result<Vec<(String, String, i64)>> {
        if names.is_empty() {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT name, id, version FROM datasets WHERE workspace_id = $1 AND {}",
            B::in_list("name", 2)
        );
        let rows = B::query(&sql)
            .bind(ws)
            .bind_list(names)
            .fetch_all(&mut *self.reader().await?)
            .await?;
        rows.iter()
            .map(|row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
            .collect()
    }

    async fn update_dataset(
        &self,
        ws: &str,
        id: &str,
        change: &mut DatasetChange<'_>,
    ) -> Result<Dataset> {
        let mut conn = self.writer().await?;
        let mut tx = conn.begin().await?;
        let old = lock_dataset::<B>(&mut tx, ws, id).await?;
        let was = old.name.clone();
        let new = change(old)?;
        update::<B>(self, &mut tx, ws, &new, &was).await?;
        tx.commit().await?;
        self.committed(ws);
        Ok(new)
    }

    async fn delete_dataset(&self, ws: &str, id: &str, check: &mut DatasetCheck<'_>) -> Result<()> {
        let mut conn = self.writer().await?;
        let mut tx = conn.begin().await?;
        let old = lock_dataset::<B>(&mut tx, ws, id).await?;
        check(&old)?;
        B::query(DELETE_DATASET)
            .bind(ws)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        let event = NewEvent::deleted(
            ws,
            EventKind::DatasetDeleted,
            id,
            Vec::new(),
            crate::clock::now_ms(),
        );
        B::append_events(&mut *tx, std::slice::from_ref(&event)).await?;
        mark_statuses::<B>(&mut tx, ws, event.at, &old.name, &old.name).await?;
        tx.commit().await?;
        self.committed(ws);
        Ok(())
    }

    async fn write_dataset_named(
        &self,
        ws: &str,
        name: &str,
        change: &mut NamedChange<'_>,
    ) -> Result<Dataset> {
        let mut conn = self.writer().await?;
        let mut tx = conn.begin().await?;
        let lock = format!("{GET_DATASET_NAMED}{}", B::FOR_UPDATE);
        let stored = B::query(&lock)
            .bind(ws)
            .bind(name)
            .fetch_optional(&mut *tx)
            .await?
            .map(|row| dataset_at(&row, 0))
            .transpose()?;
        let new = match stored {
            Some(dataset) => {
                let new = change(Some(dataset))?;
                update::<B>(self, &mut tx, ws, &new, name).await?;
                new
            }
            None => {
                let new = change(None)?;
                insert::<B>(self, &mut tx, ws, &new).await?;
                new
            }
        };
        tx.commit().await?;
        self.committed(ws);
        Ok(new)
    }
}

/// Inserts `dataset` and logs its `dataset.created`, inside `tx`.
async fn insert<B: Backend>(store: &B, tx: &mut B::Db, ws: &str, dataset: &Dataset) -> Result<()> {
    let event = dataset_event(
        ws,
        EventKind::DatasetCreated,
        dataset,
        store.render().dataset(dataset)?,
    );
    B::query(INSERT_DATASET)
        .bind(&dataset.id)
        .bind(ws)
        .bind(&dataset.name)
        .bind(&dataset.format)
        .bind(&dataset.data)
        .bind(&dataset.description)
        .bind(dataset.version)
        .bind(dataset.created_at)
        .bind(dataset.updated_at)
        .execute(&mut *tx)
        .await
        .map_err(|e| name_taken(e, &dataset.name))?;
    B::append_events(&mut *tx, std::slice::from_ref(&event)).await?;
    let name = &dataset.name;
    mark_statuses::<B>(tx, ws, dataset.updated_at, name, name).await
}

/// Writes `new` over the stored dataset of its id (named `was` before) and logs its
/// `dataset.updated`, inside `tx`.
async fn update<B: Backend>(
    store: &B,
    tx: &mut B::Db,
    ws: &str,
    new: &Dataset,
    was: &str,
) -> Result<()> {
    B::query(UPDATE_DATASET)
        .bind(ws)
        .bind(&new.id)
        .bind(&new.name)
        .bind(&new.format)
        .bind(&new.data)
        .bind(&new.description)
        .bind(new.version)
        .bind(new.updated_at)
        .execute(&mut *tx)
        .await
        .map_err(|e| name_taken(e, &new.name))?;
    let event = dataset_event(
        ws,
        EventKind::DatasetUpdated,
        new,
        store.render().dataset(new)?,
    );
    B::append_events(&mut *tx, std::slice::from_ref(&event)).await?;
    mark_statuses::<B>(tx, ws, new.updated_at, &new.name, was).await
}
