//! The 18 tools of `/mcp` (CONTRACT.md 10): each is its REST route's operation, with that
//! route's scope, price and input types. The input schema comes from the same schemars
//! types the REST bodies are parsed into, so the two can't drift.

use std::sync::{Arc, OnceLock};

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{json, value::RawValue, Map, Value};

use crate::{
    app::AppState,
    auth::{on_board, require, Principal, Scope},
    datasets::{self, CreateDatasetBody, UpdateDatasetBody},
    error::{Error, Result},
    pinboards::{
        self,
        ops::PlaceBody,
        sharing::{self, ShareBody},
        CreateBoardBody, UpdateBoardBody,
    },
    pins::{
        ops::{
            self as pin_ops, render_flag, BatchCreateBody, ListParams, PageParams, Precondition,
            RenderParams,
        },
        parse_body, CreateBody, UpdateBody,
    },
};

/// What a tool takes besides its body: the REST path's id, or nothing.
#[derive(Clone, Copy)]
enum Path {
    None,
    /// `id` of the resource the route's path names.
    Id(&'static str),
}

/// A tool: its name, what it does, and what its REST route asks and costs.
pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    /// The REST route's scope (`None`: any valid credential, like `GET /pin-types`).
    pub scope: Option<Scope>,
    /// Whether it draws on the write bucket, like its REST route.
    pub write: bool,
    /// The array that prices it as a batch (`ceil(n / 10)` tokens), if any.
    pub batch_field: Option<&'static str>,
    path: Path,
    schema: fn() -> Value,
}

fn schema_of<T: JsonSchema>() -> Value {
    let mut settings = schemars::generate::SchemaSettings::draft2020_12();
    settings.meta_schema = None;
    settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

fn empty() -> Value {
    json!({"type": "object", "properties": {}, "additionalProperties": false})
}

macro_rules! tools {
    ($($name:literal => $scope:expr, write: $write:literal, batch: $batch:expr, path: $path:expr,
       schema: $schema:expr, $description:literal;)*) => {
        /// Every tool, in the order `tools/list` gives them.
        pub const TOOLS: &[ToolSpec] = &[$(ToolSpec {
            name: $name,
            description: $description,
            scope: $scope,
            write: $write,
            batch_field: $batch,
            path: $path,
            schema: $schema,
        }),*];
    };
}

tools! {
    "list_pin_types" => None, write: false, batch: None, path: Path::None, schema: empty,
        "The 18 pin types with each one's configuration schema and an example (GET /v1/pin-types).";
    "create_pin" => Some(Scope::PinsWrite), write: true, batch: None, path: Path::None,
        schema: schema_of::<CreateBody>,
        "Create a pin: pin_type, pin_config valid for it, metadata (POST /v1/pins).";
    "create_pins" => Some(Scope::PinsWrite), write: true, batch: Some("pins"), path: Path::None,
        schema: schema_of::<BatchCreateBody>,
        "Create up to 100 pins, all or none (POST /v1/pins/batch).";
    "get_pin" => Some(Scope::PinsRead), write: false, batch: None, path: Path::Id("A pin id (p-...)"),
        schema: schema_of::<RenderParams>,
        "Read a pin; render=true resolves {{dataset}} templates and evaluates blocks (GET /v1/pins/{id}).";
    "list_pins" => Some(Scope::PinsRead), write: false, batch: None, path: Path::None,
        schema: schema_of::<ListParams>,
        "List pins newest first, with filters and keyset pages (GET /v1/pins).";
    "update_pin" => Some(Scope::PinsWrite), write: true, batch: None, path: Path::Id("A pin id (p-...)"),
        schema: schema_of::<UpdateBody>,
        "Update a pin: only the fields sent change (PATCH /v1/pins/{id}).";
    "delete_pin" => Some(Scope::PinsWrite), write: true, batch: None, path: Path::Id("A pin id (p-...)"),
        schema: empty,
        "Delete a pin (DELETE /v1/pins/{id}).";
    "share_pin" => Some(Scope::PinsShare), write: true, batch: None, path: Path::Id("A pin id (p-...)"),
        schema: schema_of::<ShareBody>,
        "Change a pin's share settings, e.g. is_public (PUT /v1/pins/{id}/share).";
    "create_pinboard" => Some(Scope::PinboardsWrite), write: true, batch: None, path: Path::None,
        schema: schema_of::<CreateBoardBody>,
        "Create a pinboard (POST /v1/pinboards).";
    "list_pinboards" => Some(Scope::PinboardsRead), write: false, batch: None, path: Path::None,
        schema: schema_of::<PageParams>,
        "List pinboards newest first (GET /v1/pinboards).";
    "get_pinboard" => Some(Scope::PinboardsRead), write: false, batch: None,
        path: Path::Id("A pinboard id (pb-...)"), schema: empty,
        "Read a pinboard with its placed pins (GET /v1/pinboards/{id}).";
    "update_pinboard" => Some(Scope::PinboardsWrite), write: true, batch: None,
        path: Path::Id("A pinboard id (pb-...)"), schema: schema_of::<UpdateBoardBody>,
        "Update a pinboard: only the fields sent change (PATCH /v1/pinboards/{id}).";
    "place_pin" => Some(Scope::PinboardsWrite), write: true, batch: None,
        path: Path::Id("A pinboard id (pb-...)"), schema: schema_of::<PlaceBody>,
        "Place a pin on a pinboard's 12-column grid (POST /v1/pinboards/{id}/pins).";
    "create_dataset" => Some(Scope::DatasetsWrite), write: true, batch: None, path: Path::None,
        schema: schema_of::<CreateDatasetBody>,
        "Create a dataset that pins refer to as {{name.path}} (POST /v1/datasets).";
    "list_datasets" => Some(Scope::DatasetsRead), write: false, batch: None, path: Path::None,
        schema: schema_of::<PageParams>,
        "List datasets newest first (GET /v1/datasets).";
    "get_dataset" => Some(Scope::DatasetsRead), write: false, batch: None,
        path: Path::Id("A dataset id (ds-...)"), schema: empty,
        "Read a dataset (GET /v1/datasets/{id}).";
    "update_dataset" => Some(Scope::DatasetsWrite), write: true, batch: None,
        path: Path::Id("A dataset id (ds-...)"), schema: schema_of::<UpdateDatasetBody>,
        "Update a dataset: data is a JSON Merge Patch of a json dataset (PATCH /v1/datasets/{id}).";
    "delete_dataset" => Some(Scope::DatasetsWrite), write: true, batch: None,
        path: Path::Id("A dataset id (ds-...)"), schema: empty,
        "Delete a dataset (DELETE /v1/datasets/{id}).";
}

/// The tool called `name`.
pub fn find(name: &str) -> Option<&'static ToolSpec> {
    TOOLS.iter().find(|t| t.name == name)
}

impl ToolSpec {
    /// The tool's input schema: its REST body's schema, with the path's `id` added.
    pub fn input_schema(&self) -> Arc<Map<String, Value>> {
        static SCHEMAS: OnceLock<Vec<Arc<Map<String, Value>>>> = OnceLock::new();
        let all =
            SCHEMAS.get_or_init(|| TOOLS.iter().map(|t| Arc::new(t.build_schema())).collect());
        TOOLS
            .iter()
            .position(|t| t.name == self.name)
            .and_then(|i| all.get(i).cloned())
            .unwrap_or_default()
    }

    fn build_schema(&self) -> Map<String, Value> {
        let mut schema = match (self.schema)() {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        schema.insert("type".into(), json!("object"));
        if let Path::Id(description) = self.path {
            let properties = schema.entry("properties").or_insert_with(|| json!({}));
            if let Value::Object(properties) = properties {
                properties.insert(
                    "id".into(),
                    json!({"type": "string", "minLength": 1, "description": description}),
                );
            }
            let required = schema.entry("required").or_insert_with(|| json!([]));
            if let Value::Array(required) = required {
                required.insert(0, json!("id"));
            }
        }
        schema
    }

    /// Runs the tool for `who` with `arguments`: the REST route's operation, its `data`.
    pub async fn call(
        &self,
        state: &AppState,
        who: Principal,
        arguments: Map<String, Value>,
    ) -> Result<Value> {
        let (id, args) = split_id(self.path, arguments)?;
        // Board routes apply a collaborator's role on that board first, as REST's BoardAuth.
        let who = match (self.name, &id) {
            ("get_pinboard" | "update_pinboard" | "place_pin", Some(board)) => {
                on_board(state, who, board).await?
            }
            _ => who,
        };
        let who = match self.scope {
            Some(scope) => require(who, scope)?,
            None => who,
        };
        let id = id.as_deref().unwrap_or_default();
        let data = match self.name {
            "list_pin_types" => raw(crate::api::pin_types_catalogue())?,
            "create_pin" => pin_ops::create(state, &who, body(args)?, None).await?.data,
            "create_pins" => {
                pin_ops::create_batch(state, &who, body(args)?, None)
                    .await?
                    .data
            }
            "get_pin" => {
                let params: RenderParams = query(args)?;
                let render = render_flag(params.render.as_deref())?;
                pin_ops::get(state, &who, id, render).await?.0
            }
            "list_pins" => {
                let (data, pagination) = pin_ops::list(state, &who, &query(args)?).await?;
                return page(&data, &pagination);
            }
            "update_pin" => {
                let updated =
                    pin_ops::update(state, &who, id, body(args)?, Precondition::default()).await?;
                pin_ops::to_data(&updated)?
            }
            "delete_pin" => {
                no_body(args)?;
                pin_ops::delete(state, &who, id, Precondition::default()).await?
            }
            "share_pin" => sharing::put_pin(state, &who, id, body(args)?).await?,
            "create_pinboard" => pinboards::ops::create(state, &who, body(args)?).await?,
            "list_pinboards" => {
                let (data, pagination) = pinboards::ops::list(state, &who, &query(args)?).await?;
                return page(&data, &pagination);
            }
            "get_pinboard" => {
                no_body(args)?;
                pinboards::ops::get(state, &who, id).await?
            }
            "update_pinboard" => pinboards::ops::update(state, &who, id, body(args)?).await?,
            "place_pin" => pinboards::ops::place(state, &who, id, body(args)?).await?,
            "create_dataset" => datasets::ops::create(state, &who, body(args)?).await?,
            "list_datasets" => {
                let (data, pagination) = datasets::ops::list(state, &who, &query(args)?).await?;
                return page(&data, &pagination);
            }
            "get_dataset" => {
                no_body(args)?;
                datasets::ops::get(state, &who, id).await?.0
            }
            "update_dataset" => {
                datasets::ops::update(state, &who, id, body(args)?, true, Precondition::default())
                    .await?
                    .0
            }
            "delete_dataset" => {
                no_body(args)?;
                datasets::ops::delete(state, &who, id, Precondition::default()).await?
            }
            other => {
                return Err(Error::validation(
                    "name",
                    format!("a tool name, not {other}"),
                ))
            }
        };
        structured(&data)
    }
}

/// Takes the path's `id` out of the arguments.
fn split_id(path: Path, mut args: Map<String, Value>) -> Result<(Option<String>, Value)> {
    let id = match path {
        Path::None => None,
        Path::Id(_) => match args.remove("id") {
            Some(Value::String(id)) if !id.is_empty() => Some(id),
            _ => return Err(Error::validation("id", "the resource's id, a string")),
        },
    };
    Ok((id, Value::Object(args)))
}

/// The arguments as the REST route's JSON body, checked like it (field paths included).
fn body<T: DeserializeOwned>(args: Value) -> Result<T> {
    parse_body(&args, "")
}

/// The arguments as the REST route's query: numbers and booleans stand for their text.
fn query<T: DeserializeOwned>(args: Value) -> Result<T> {
    let args = match args {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| {
                    let v = match v {
                        Value::Number(n) => Value::String(n.to_string()),
                        Value::Bool(b) => Value::String(b.to_string()),
                        other => other,
                    };
                    (k, v)
                })
                .collect(),
        ),
        other => other,
    };
    parse_body(&args, "")
}

fn no_body(args: Value) -> Result<()> {
    match args {
        Value::Object(map) if !map.is_empty() => {
            let field = map.keys().next().cloned().unwrap_or_default();
            Err(Error::validation(
                field,
                "no such field (this tool takes only id)",
            ))
        }
        _ => Ok(()),
    }
}

fn raw(text: &str) -> Result<Box<RawValue>> {
    RawValue::from_string(text.to_owned()).map_err(Error::internal)
}

/// The REST `data` as structured content, which MCP wants to be an object: an array (a
/// batch's results, the catalogue) comes as `{"data": [...]}`.
fn structured(data: &RawValue) -> Result<Value> {
    match serde_json::from_str(data.get()).map_err(Error::internal)? {
        Value::Array(items) => Ok(json!({ "data": items })),
        other => Ok(other),
    }
}

/// A list's structured content: `{data, pagination}`, as the REST body has them (an MCP
/// result's structured content is an object).
fn page(data: &RawValue, pagination: &pin_ops::Pagination) -> Result<Value> {
    Ok(json!({
        "data": serde_json::from_str::<Value>(data.get()).map_err(Error::internal)?,
        "pagination": serde_json::to_value(pagination).map_err(Error::internal)?,
    }))
}
