//! The tools of `/mcp` (CONTRACT.md 10): each is a table entry naming its REST route's
//! operation, with that route's access (scope, and whether it acts on one board), price and
//! input types. The input schema comes from the same schemars types the REST bodies are
//! parsed into, so the two can't drift.

use std::{
    future::Future,
    pin::Pin,
    sync::{Arc, OnceLock},
};

use schemars::JsonSchema;
use serde::{de::DeserializeOwned, Serialize};
use serde_json::{json, Map, Value};

use crate::{
    app::AppState,
    auth::{authorize, Access, Principal, Scope},
    datasets::{self, CreateDatasetBody, UpdateDatasetBody},
    error::{Error, Result},
    pin_types,
    pinboards::{
        self,
        ops::PlaceBody,
        sharing::{self, ShareBody},
        CreateBoardBody, UpdateBoardBody,
    },
    pins::{
        append::AppendBody,
        ops::{self as pin_ops, render_flag, BatchCreateBody, ListParams, PinRef, RenderParams},
        upsert::{self, BatchUpsertItem},
        CreateBody, UpdateBody,
    },
    wire::{parse_body, PageParams, Precondition},
};

/// What a tool takes besides its body: the REST path's id, or nothing.
#[derive(Clone, Copy)]
enum Path {
    None,
    /// `id` of the resource the route's path names.
    Id(&'static str),
}

/// A tool's run: its operation, called for the caller with the path's id (empty without
/// one) and the other arguments, answering its structured content.
type Call = for<'a> fn(
    &'a AppState,
    Principal,
    String,
    Value,
) -> Pin<Box<dyn Future<Output = Result<Value>> + Send + 'a>>;

/// A tool: its name, what it does, what its REST route asks and costs, and its operation.
pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    /// What the REST route's operation needs of its caller.
    pub access: Access,
    /// Whether it draws on the write bucket, like its REST route.
    pub write: bool,
    /// The array that prices it as a batch (`ceil(n / 10)` tokens), if any.
    pub batch_field: Option<&'static str>,
    path: Path,
    schema: fn() -> Value,
    call: Call,
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

/// A [`Call`] from the body of an async closure over `(state, who, id, args)`.
macro_rules! op {
    (|$state:ident, $who:ident, $id:ident, $args:ident| $body:expr) => {{
        fn call<'a>(
            $state: &'a AppState,
            $who: Principal,
            $id: String,
            $args: Value,
        ) -> Pin<Box<dyn Future<Output = Result<Value>> + Send + 'a>> {
            Box::pin(async move {
                let $who = &$who;
                let $id = $id.as_str();
                structured(&$body)
            })
        }
        call as Call
    }};
}

macro_rules! tools {
    ($($name:literal => $access:expr, write: $write:literal, batch: $batch:expr, path: $path:expr,
       schema: $schema:expr, $description:literal, $call:expr;)*) => {
        /// Every tool, in the order `tools/list` gives them.
        pub const TOOLS: &[ToolSpec] = &[$(ToolSpec {
            name: $name,
            description: $description,
            access: $access,
            write: $write,
            batch_field: $batch,
            path: $path,
            schema: $schema,
            call: $call,
        }),*];
    };
}

use Access as A;
use Scope as S;

tools! {
    "list_pin_types" => A::ANY, write: false, batch: None, path: Path::None, schema: empty,
        "Every pin type with its configuration schema and an example (GET /v1/pin-types).",
        op!(|_s, _who, _id, _args| pin_types::entries());
    "create_pin" => A::workspace(S::PinsWrite), write: true, batch: None, path: Path::None,
        schema: schema_of::<CreateBody>,
        "Create a pin: pin_type, pin_config valid for it, metadata (POST /v1/pins).",
        op!(|s, who, _id, args| pin_ops::create(s, who, body(args)?, None, false).await?.done()?.data);
    "create_pins" => A::workspace(S::PinsWrite), write: true, batch: Some("pins"), path: Path::None,
        schema: schema_of::<BatchCreateBody>,
        "Create up to 100 pins, all or none (POST /v1/pins/batch).",
        op!(|s, who, _id, args| {
            pin_ops::create_batch(s, who, body(args)?, None, false).await?.done()?.data
        });
    "upsert_pin" => A::workspace(S::PinsWrite), write: true, batch: None, path: Path::None,
        schema: schema_of::<BatchUpsertItem>,
        "Create or update the pin with this key: key plus a create body; answers created and changed (PUT /v1/pins/by-key/{key}).",
        op!(|s, who, _id, args| {
            let (key, body) = keyed(args)?;
            upsert::upsert(s, who, &key, body, false).await?.done()?
        });
    "append_to_pin" => A::workspace(S::PinsWrite), write: true, batch: None, path: Path::None,
        schema: append_schema,
        "Append to a pin named by id or key: chart points, table rows, timeline events, list items; the oldest drop beyond max_* (POST /v1/pins/{id}/append).",
        op!(|s, who, _id, args| {
            let (target, body) = named_pin(args)?;
            pin_ops::append(s, who, &target, &body, false).await?.done()?
        });
    "get_pin" => A::workspace(S::PinsRead), write: false, batch: None, path: Path::Id("A pin id (p-...)"),
        schema: schema_of::<RenderParams>,
        "Read a pin; render=true resolves {{dataset}} templates and evaluates blocks (GET /v1/pins/{id}).",
        op!(|s, who, id, args| {
            let params: RenderParams = query(args)?;
            let target = PinRef::Id(id.to_owned());
            pin_ops::get(s, who, &target, render_flag(params.render.as_deref())?).await?
        });
    "list_pins" => A::workspace(S::PinsRead), write: false, batch: None, path: Path::None,
        schema: schema_of::<ListParams>,
        "List pins newest first, with filters and keyset pages (GET /v1/pins).",
        op!(|s, who, _id, args| pin_ops::list(s, who, &query(args)?).await?);
    "update_pin" => A::workspace(S::PinsWrite), write: true, batch: None, path: Path::Id("A pin id (p-...)"),
        schema: schema_of::<UpdateBody>,
        "Update a pin: only the fields sent change (PATCH /v1/pins/{id}).",
        op!(|s, who, id, args| {
            let target = PinRef::Id(id.to_owned());
            pin_ops::update(s, who, &target, body(args)?, Precondition::default(), false).await?.done()?
        });
    "delete_pin" => A::workspace(S::PinsWrite), write: true, batch: None, path: Path::Id("A pin id (p-...)"),
        schema: empty,
        "Delete a pin (DELETE /v1/pins/{id}).",
        op!(|s, who, id, args| {
            no_body(args)?;
            pin_ops::delete(s, who, &PinRef::Id(id.to_owned()), Precondition::default()).await?
        });
    "share_pin" => A::workspace(S::PinsShare), write: true, batch: None, path: Path::Id("A pin id (p-...)"),
        schema: schema_of::<ShareBody>,
        "Change a pin's share settings, e.g. is_public (PUT /v1/pins/{id}/share).",
        op!(|s, who, id, args| sharing::put_pin(s, who, id, body(args)?).await?);
    "create_pinboard" => A::workspace(S::PinboardsWrite), write: true, batch: None, path: Path::None,
        schema: schema_of::<CreateBoardBody>,
        "Create a pinboard (POST /v1/pinboards).",
        op!(|s, who, _id, args| pinboards::ops::create(s, who, body(args)?).await?);
    "list_pinboards" => A::workspace(S::PinboardsRead), write: false, batch: None, path: Path::None,
        schema: schema_of::<PageParams>,
        "List pinboards newest first (GET /v1/pinboards).",
        op!(|s, who, _id, args| pinboards::ops::list(s, who, &query(args)?).await?);
    "get_pinboard" => A::board(S::PinboardsRead), write: false, batch: None,
        path: Path::Id("A pinboard id (pb-...)"), schema: empty,
        "Read a pinboard with its placed pins (GET /v1/pinboards/{id}).",
        op!(|s, who, id, args| { no_body(args)?; pinboards::ops::get(s, who, id).await? });
    "update_pinboard" => A::board(S::PinboardsWrite), write: true, batch: None,
        path: Path::Id("A pinboard id (pb-...)"), schema: schema_of::<UpdateBoardBody>,
        "Update a pinboard: only the fields sent change (PATCH /v1/pinboards/{id}).",
        op!(|s, who, id, args| pinboards::ops::update(s, who, id, body(args)?, None).await?);
    "place_pin" => A::board(S::PinboardsWrite), write: true, batch: None,
        path: Path::Id("A pinboard id (pb-...)"), schema: schema_of::<PlaceBody>,
        "Place a pin on a pinboard's 12-column grid (POST /v1/pinboards/{id}/pins).",
        op!(|s, who, id, args| pinboards::ops::place(s, who, id, body(args)?, None).await?);
    "create_dataset" => A::workspace(S::DatasetsWrite), write: true, batch: None, path: Path::None,
        schema: schema_of::<CreateDatasetBody>,
        "Create a dataset that pins refer to as {{name.path}} (POST /v1/datasets).",
        op!(|s, who, _id, args| datasets::ops::create(s, who, body(args)?).await?);
    "list_datasets" => A::workspace(S::DatasetsRead), write: false, batch: None, path: Path::None,
        schema: schema_of::<PageParams>,
        "List datasets newest first (GET /v1/datasets).",
        op!(|s, who, _id, args| datasets::ops::list(s, who, &query(args)?).await?);
    "get_dataset" => A::workspace(S::DatasetsRead), write: false, batch: None,
        path: Path::Id("A dataset id (ds-...)"), schema: empty,
        "Read a dataset (GET /v1/datasets/{id}).",
        op!(|s, who, id, args| { no_body(args)?; datasets::ops::get(s, who, id).await? });
    "update_dataset" => A::workspace(S::DatasetsWrite), write: true, batch: None,
        path: Path::Id("A dataset id (ds-...)"), schema: schema_of::<UpdateDatasetBody>,
        "Update a dataset: data is a JSON Merge Patch of a json dataset (PATCH /v1/datasets/{id}).",
        op!(|s, who, id, args| {
            datasets::ops::update(s, who, id, body(args)?, true, Precondition::default()).await?
        });
    "delete_dataset" => A::workspace(S::DatasetsWrite), write: true, batch: None,
        path: Path::Id("A dataset id (ds-...)"), schema: empty,
        "Delete a dataset (DELETE /v1/datasets/{id}).",
        op!(|s, who, id, args| {
            no_body(args)?;
            datasets::ops::delete(s, who, id, Precondition::default()).await?
        });
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

    /// Runs the tool for `who` with `arguments`: the REST route's operation, its `data`,
    /// after the one authorisation check its REST route makes.
    pub async fn call(
        &self,
        state: &AppState,
        who: Principal,
        arguments: Map<String, Value>,
    ) -> Result<Value> {
        let (id, args) = split_id(self.path, arguments)?;
        let who = authorize(state, who, self.access, id.as_deref()).await?;
        (self.call)(state, who, id.unwrap_or_default(), args).await
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

/// The arguments as `{key, ...body}`: the key and the REST route's body.
fn keyed<T: DeserializeOwned>(args: Value) -> Result<(String, T)> {
    let Value::Object(mut args) = args else {
        return Err(Error::validation("arguments", "a JSON object"));
    };
    match args.remove("key") {
        Some(Value::String(key)) => Ok((key, body(Value::Object(args))?)),
        _ => Err(Error::validation(
            "key",
            "the pin's key, a string (required)",
        )),
    }
}

/// `append_to_pin`'s input: the append body of its route, each of its shapes taking the
/// pin's `id` or `key` beside its own members.
fn append_schema() -> Value {
    let mut schema = schema_of::<AppendBody>();
    let names = json!({
        "id": {"type": "string", "minLength": 1, "description": "A pin id (p-...); or send key"},
        "key": {"type": "string", "pattern": crate::pins::KEY_PATTERN, "description": "The pin's key; or send id"},
    });
    let shapes: Vec<String> = schema["oneOf"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|shape| shape["$ref"].as_str())
        .filter_map(|path| path.strip_prefix("#/$defs/"))
        .map(str::to_owned)
        .collect();
    for shape in shapes {
        if let (Some(Value::Object(properties)), Value::Object(names)) =
            (schema["$defs"][&shape].get_mut("properties"), &names)
        {
            properties.extend(names.clone());
        }
    }
    schema
}

/// The arguments as `{id | key, ...body}`: the pin named (exactly one of the two) and the
/// rest as the body.
fn named_pin(args: Value) -> Result<(PinRef, Value)> {
    let Value::Object(mut args) = args else {
        return Err(Error::validation("arguments", "a JSON object"));
    };
    let target = match (args.remove("id"), args.remove("key")) {
        (Some(Value::String(id)), None) if !id.is_empty() => PinRef::Id(id),
        (None, Some(Value::String(key))) => PinRef::Key(key),
        _ => {
            return Err(Error::validation(
                "id",
                "a pin id, or instead a key (exactly one of the two)",
            ))
        }
    };
    Ok((target, Value::Object(args)))
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

/// The REST `data` as structured content, which MCP wants to be an object: an array (a
/// batch's results, the catalogue) comes as `{"data": [...]}`; a list's page is
/// `{data, pagination}` as it is.
fn structured<T: Serialize + ?Sized>(data: &T) -> Result<Value> {
    match serde_json::to_value(data).map_err(Error::internal)? {
        Value::Array(items) => Ok(json!({ "data": items })),
        other => Ok(other),
    }
}
