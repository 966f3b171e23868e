//! Datasets (CONTRACT.md 7): JSON or markdown stored once per workspace and referred to by
//! pins and blocks as `{{name.path}}` ([`crate::templates`]). This module parses request
//! bodies into checked [`Dataset`]s and shapes the record; `ops.rs` has the operations.

mod named;
pub mod ops;

pub use named::DataWrite;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::{
    clock,
    error::{Error, Result},
    pinboards::{check_description, DESCRIPTION_CHARS},
    store::{Dataset, JsonText},
    wire::body::{any_value, discriminated, non_empty, nullable, present, Variant},
};

/// Largest serialised `data` of a dataset (1 MiB).
pub const MAX_DATA_BYTES: usize = 1 << 20;
/// A dataset name: what `{{name...}}` refers to.
pub const NAME_PATTERN: &str = "^[a-z0-9_]{1,64}$";

/// How a dataset's `data` is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Any JSON value; templates index into it.
    Json,
    /// A string of markdown; `{{name}}` is the whole text.
    Markdown,
}

impl Format {
    fn as_str(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Markdown => "markdown",
        }
    }

    /// The name of the format's variants in the API description (`CreateJsonDataset`).
    fn title(self) -> &'static str {
        match self {
            Format::Json => "Json",
            Format::Markdown => "Markdown",
        }
    }

    fn parse(text: &str) -> Result<Format> {
        match text {
            "json" => Ok(Format::Json),
            "markdown" => Ok(Format::Markdown),
            _ => Err(Error::validation("format", "json or markdown")),
        }
    }
}

/// `POST /datasets` body. Its schema is one variant per [`Format`] ([`create_schema`]).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateDatasetBody {
    pub name: String,
    pub format: Format,
    pub data: Value,
    #[serde(default)]
    pub description: Option<String>,
}

impl JsonSchema for CreateDatasetBody {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "CreateDatasetBody".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let variants = [
            (
                Format::Json,
                json!({"description": "Any JSON value, at most 1 MiB serialised (else 400)."}),
            ),
            (
                Format::Markdown,
                json!({"type": "string", "description": "The markdown text, at most 1 MiB serialised (else 400)."}),
            ),
        ];
        let variants = variants
            .into_iter()
            .map(|(format, data)| Variant {
                value: format.as_str(),
                name: format!("Create{}Dataset", format.title()),
                schema: json_schema!({
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["name", "format", "data"],
                    "properties": {
                        "name": {
                            "description": "Unique in the workspace (409 otherwise); what templates name (`{{sales.total}}`).",
                            "type": "string",
                            "pattern": NAME_PATTERN,
                        },
                        "format": { "const": format.as_str() },
                        "data": data,
                        "description": { "type": ["string", "null"], "maxLength": DESCRIPTION_CHARS },
                    },
                }),
            })
            .collect();
        let mut schema = discriminated(generator, "format", variants);
        schema.insert("description".into(), "`POST /datasets` body: `data` is any JSON value for a `json` dataset, a string for a `markdown` one.".into());
        schema.insert(
            "examples".into(),
            json!([{"name": "sales", "format": "json", "data": {"total": 1250, "regions": [{"name": "EU", "total": 700}]}}]),
        );
        schema
    }
}

/// `PUT`/`PATCH /datasets/{id}` body: only the fields sent change. With `PATCH`, `data` is
/// a JSON Merge Patch (RFC 7396) of a `json` dataset's data; a string replaces a
/// `markdown` dataset's text. `description: null` clears the description.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    example = serde_json::json!({"data": {"total": 1300}}),
    transform = non_empty,
    transform = markdown_is_text
)]
pub struct UpdateDatasetBody {
    /// Unique in the workspace (409 otherwise).
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "String", regex(pattern = NAME_PATTERN))]
    pub name: Option<String>,
    /// A new format needs `data` of that format (else 400): the schema says so when both
    /// are sent; without `data`, the stored data must be of the new format.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "Format")]
    pub format: Option<Format>,
    /// A string for a `markdown` dataset (else 400: the schema says so when `format` is
    /// sent; without it, the stored format decides); at most 1 MiB serialised.
    #[serde(default, deserialize_with = "nullable")]
    #[schemars(schema_with = "any_value")]
    pub data: Option<Option<Value>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schemars(with = "Option<String>", length(max = DESCRIPTION_CHARS))]
    pub description: Option<Option<String>>,
}

/// An update that sends `format: markdown` and `data` carries the text as a string.
fn markdown_is_text(schema: &mut Schema) {
    schema.insert(
        "if".into(),
        json!({"properties": {"format": {"const": "markdown"}}, "required": ["format", "data"]}),
    );
    schema.insert(
        "then".into(),
        json!({"properties": {"data": {"type": "string"}}}),
    );
}

/// Whether `name` matches [`NAME_PATTERN`].
fn check_name(name: &str) -> Result<()> {
    check_name_at("name", name)
}

/// Whether `name`, sent at `field`, matches [`NAME_PATTERN`]: a dataset's name wherever it
/// is written (a hook names the dataset it writes).
pub(crate) fn check_name_at(field: &str, name: &str) -> Result<()> {
    let ok = (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(Error::validation(
            field,
            "1 to 64 characters of a-z, 0-9 and _",
        ))
    }
}

/// The stored text of `data` for `format`: a markdown dataset's data must be a string, and
/// any data at most [`MAX_DATA_BYTES`] serialised.
fn data_text(format: Format, data: &Value) -> Result<String> {
    if format == Format::Markdown && !data.is_string() {
        return Err(Error::validation(
            "data",
            "a string (the markdown text) for a markdown dataset",
        ));
    }
    let text = data.to_string();
    if text.len() > MAX_DATA_BYTES {
        return Err(Error::validation(
            "data",
            format!("at most {MAX_DATA_BYTES} bytes of JSON"),
        ));
    }
    Ok(text)
}

impl CreateDatasetBody {
    /// Checks everything and builds the dataset to store.
    pub fn into_dataset(self, now: i64) -> Result<Dataset> {
        check_name(&self.name)?;
        if let Some(description) = &self.description {
            check_description(description)?;
        }
        Ok(Dataset {
            id: crate::ids::new_id("ds-"),
            data: data_text(self.format, &self.data)?,
            name: self.name,
            format: self.format.as_str().to_owned(),
            description: self.description,
            version: 1,
            created_at: now,
            updated_at: now,
        })
    }
}

/// A checked update, applied to the stored dataset inside the write transaction.
#[derive(Debug)]
pub struct DatasetUpdate {
    body: UpdateDatasetBody,
    merge: bool,
}

impl UpdateDatasetBody {
    /// Checks what can be checked without the stored dataset. `merge` is PATCH's reading of
    /// `data` (a merge patch) rather than PUT's (a replacement).
    pub fn into_update(self, merge: bool) -> Result<DatasetUpdate> {
        if self.name.is_none()
            && self.format.is_none()
            && self.data.is_none()
            && self.description.is_none()
        {
            return Err(Error::validation(
                "body",
                "at least one of name, format, data, description",
            ));
        }
        if let Some(name) = &self.name {
            check_name(name)?;
        }
        if let Some(Some(description)) = &self.description {
            check_description(description)?;
        }
        Ok(DatasetUpdate { body: self, merge })
    }
}

impl DatasetUpdate {
    /// The dataset after the update, at `now`.
    pub fn apply(&self, mut dataset: Dataset, now: i64) -> Result<Dataset> {
        let old_format = Format::parse(&dataset.format)?;
        let format = self.body.format.unwrap_or(old_format);
        let data = match &self.body.data {
            None if format == old_format => None,
            None => return Err(Error::validation("data", "new data for the new format")),
            // `data: null` is a JSON value of its own (and, as a merge patch, clears the data).
            Some(patch) => {
                let patch = patch.clone().unwrap_or(Value::Null);
                if self.merge && format == Format::Json && old_format == Format::Json {
                    let mut merged: Value =
                        serde_json::from_str(&dataset.data).map_err(Error::internal)?;
                    json_patch::merge(&mut merged, &patch);
                    Some(merged)
                } else {
                    Some(patch)
                }
            }
        };
        if let Some(data) = data {
            dataset.data = data_text(format, &data)?;
        }
        if let Some(name) = &self.body.name {
            dataset.name.clone_from(name);
        }
        if let Some(description) = &self.body.description {
            dataset.description.clone_from(description);
        }
        dataset.format = format.as_str().to_owned();
        dataset.version += 1;
        dataset.updated_at = now.max(dataset.updated_at);
        Ok(dataset)
    }
}

/// The dataset record (CONTRACT.md 7) of every dataset read and write.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "Dataset", deny_unknown_fields)]
pub struct DatasetRecord {
    pub id: String,
    pub name: String,
    pub format: Format,
    #[schemars(schema_with = "any_value")]
    pub data: JsonText,
    pub description: Option<String>,
    pub version: i64,
    #[schemars(extend("format" = "date-time"))]
    pub created_at: String,
    #[schemars(extend("format" = "date-time"))]
    pub updated_at: String,
}

impl DatasetRecord {
    pub fn new(dataset: &Dataset) -> Result<Self> {
        Ok(DatasetRecord {
            id: dataset.id.clone(),
            name: dataset.name.clone(),
            format: Format::parse(&dataset.format)?,
            data: JsonText::stored(dataset.data.as_str())?,
            description: dataset.description.clone(),
            version: dataset.version,
            created_at: clock::iso(dataset.created_at),
            updated_at: clock::iso(dataset.updated_at),
        })
    }
}
