//! Block bodies, `{block_type, config}`: their checks, evaluation and schemas
//! (CONTRACT.md section 7).
//!
//! Configurations are checked on the JSON itself rather than through serde, so every
//! refusal names the exact field (`config.then[0].config.url`) and says what was
//! expected, the way a person fixing a request needs it. The checks of single strings
//! (lengths, web URLs) are the pin types' rules, refusals are their [`ConfigError`]s.
//! Checked bodies are stored as written; [`evaluate`] turns them into what a reader sees
//! (conditionals replaced by their chosen branch, templates resolved).

use std::collections::BTreeSet;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::pin_types::rules::{
    join, max_bytes, max_chars, web_url, MAX_URL_CHARS, WEB_URL_PATTERN,
};
use crate::pin_types::ConfigError;
use crate::templates::{self, holds, Op, Renderer};
use crate::wire::body::{discriminated, Variant};
use crate::{Error, Result};

/// How deep conditionals nest: a top-level conditional is at depth 1, one inside its
/// `then` at depth 2. Bounds the work of checking and evaluating one block.
pub const MAX_DEPTH: usize = 4;
/// Longest `text` (markdown) and `code` (code), in bytes.
pub const MAX_TEXT_BYTES: usize = 64 * 1024;
/// Longest `language`, `alt` and conditional `var`, in characters.
pub const MAX_SHORT_CHARS: usize = 200;
/// Most block bodies in one `then` or `else`.
pub const MAX_BRANCH_ITEMS: usize = 100;

const TYPE_EXPECTED: &str = "one of markdown, image, code, conditional";
const TOO_DEEP: &str = "one of markdown, image, code (conditionals nest at most 4 deep)";
const VAR_EXPECTED: &str = "a template path without braces, such as sales.regions[0].total";
const OP_EXPECTED: &str = "one of eq, ne, gt, gte, lt, lte, contains, exists";
const BODY_EXPECTED: &str = "a block body {block_type, config}";
const BRANCH_EXPECTED: &str = "an array of block bodies";

/// The kind of a block, which decides the shape of its `config`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum BlockType {
    Markdown,
    Image,
    Code,
    Conditional,
}

impl BlockType {
    /// Every block type, in the order error messages list them.
    pub const ALL: [BlockType; 4] = [
        BlockType::Markdown,
        BlockType::Image,
        BlockType::Code,
        BlockType::Conditional,
    ];

    /// The wire name (`"markdown"`), as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            BlockType::Markdown => "markdown",
            BlockType::Image => "image",
            BlockType::Code => "code",
            BlockType::Conditional => "conditional",
        }
    }

    /// The block type of a wire name; None for anything else.
    pub fn from_name(name: &str) -> Option<BlockType> {
        BlockType::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

/// Parses a block_type string (top-level bodies): unknown -> Error::validation("block_type", "one of markdown, image, code, conditional").
pub fn parse_type(s: &str) -> Result<BlockType> {
    BlockType::from_name(s).ok_or_else(|| Error::validation("block_type", TYPE_EXPECTED))
}

/// Checks `config` for `block_type`; errors are `crate::Error::validation(field, expected)` with fields like
/// `config.url`, `config.if.op`, `config.then[0].config.text`, `config.then[1].block_type`, relative to the block body
/// whose config is passed: pass `prefix` = "config" for a top-level block. Unknown/missing block_type in a nested body is
/// reported at e.g. `config.then[0].block_type`.
///
/// Within one object, an unknown key is reported first, then the fields in the order the
/// contract lists them. A conditional nested deeper than [`MAX_DEPTH`] is refused at its
/// `block_type`. `null` counts as absent for the optional fields (`alt`, `value`, `else`).
pub fn check(block_type: &BlockType, config: &Value, prefix: &str) -> Result<()> {
    check_at(*block_type, config, "", 1)
        .map_err(|refusal| Error::validation(refusal.field(prefix), refusal.expected))
}

/// [`check`] for a config at `path` (relative to the top-level config) whose conditional
/// (if it is one) sits at `depth`.
fn check_at(
    block_type: BlockType,
    config: &Value,
    path: &str,
    depth: usize,
) -> Result<(), ConfigError> {
    let fields = config
        .as_object()
        .ok_or_else(|| ConfigError::new(path, "an object"))?;
    match block_type {
        BlockType::Markdown => {
            only(fields, path, &["text"])?;
            string(fields, path, "text", Rule::Bytes(MAX_TEXT_BYTES), true)?;
        }
        BlockType::Image => {
            only(fields, path, &["url", "alt"])?;
            string(fields, path, "url", Rule::WebUrl, true)?;
            string(fields, path, "alt", Rule::Chars(MAX_SHORT_CHARS), false)?;
        }
        BlockType::Code => {
            only(fields, path, &["language", "code"])?;
            string(fields, path, "language", Rule::Chars(MAX_SHORT_CHARS), true)?;
            string(fields, path, "code", Rule::Bytes(MAX_TEXT_BYTES), true)?;
        }
        BlockType::Conditional => {
            only(fields, path, &["if", "then", "else"])?;
            condition(fields.get("if"), &join(path, "if"))?;
            branch(fields.get("then"), &join(path, "then"), depth, true)?;
            branch(fields.get("else"), &join(path, "else"), depth, false)?;
        }
    }
    Ok(())
}

/// Checks a conditional's `if` at `path`: `{var, op, value?}`.
fn condition(value: Option<&Value>, path: &str) -> Result<(), ConfigError> {
    const EXPECTED: &str = "an object {var, op, value?}";
    let fields = match value {
        Some(Value::Object(fields)) => fields,
        None | Some(Value::Null) => {
            return Err(ConfigError::new(path, format!("{EXPECTED} (required)")))
        }
        Some(_) => return Err(ConfigError::new(path, EXPECTED)),
    };
    only(fields, path, &["var", "op", "value"])?;
    let var = string(fields, path, "var", Rule::Chars(MAX_SHORT_CHARS), true)?;
    if templates::dataset_of(var.unwrap_or_default()).is_none() {
        return Err(ConfigError::new(join(path, "var"), VAR_EXPECTED));
    }
    let op = fields.get("op").and_then(Value::as_str);
    if op.and_then(Op::from_name).is_none() {
        return Err(ConfigError::new(join(path, "op"), OP_EXPECTED));
    }
    Ok(())
}

/// Checks a `then` / `else` at `path` of a conditional at `depth`.
fn branch(
    value: Option<&Value>,
    path: &str,
    depth: usize,
    required: bool,
) -> Result<(), ConfigError> {
    let items = match value {
        Some(Value::Array(items)) => items,
        None | Some(Value::Null) if !required => return Ok(()),
        None | Some(Value::Null) => {
            return Err(ConfigError::new(
                path,
                format!("{BRANCH_EXPECTED} (required)"),
            ))
        }
        Some(_) => return Err(ConfigError::new(path, BRANCH_EXPECTED)),
    };
    if items.len() > MAX_BRANCH_ITEMS {
        return Err(ConfigError::new(
            path,
            format!("at most {MAX_BRANCH_ITEMS} block bodies"),
        ));
    }
    for (i, item) in items.iter().enumerate() {
        body(item, &format!("{path}[{i}]"), depth + 1)?;
    }
    Ok(())
}

/// Checks a nested block body at `path` whose conditional (if it is one) is at `depth`.
fn body(item: &Value, path: &str, depth: usize) -> Result<(), ConfigError> {
    let fields = item
        .as_object()
        .ok_or_else(|| ConfigError::new(path, BODY_EXPECTED))?;
    only(fields, path, &["block_type", "config"])?;
    let block_type = fields
        .get("block_type")
        .and_then(Value::as_str)
        .and_then(BlockType::from_name)
        .ok_or_else(|| ConfigError::new(join(path, "block_type"), TYPE_EXPECTED))?;
    if block_type == BlockType::Conditional && depth > MAX_DEPTH {
        return Err(ConfigError::new(join(path, "block_type"), TOO_DEEP));
    }
    let config_path = join(path, "config");
    let config = fields
        .get("config")
        .ok_or_else(|| ConfigError::new(&config_path, "an object (required)"))?;
    check_at(block_type, config, &config_path, depth)
}

/// Refuses the first key of `fields` (at `path`) not in `allowed`.
fn only(fields: &Map<String, Value>, path: &str, allowed: &[&str]) -> Result<(), ConfigError> {
    match fields.keys().find(|key| !allowed.contains(&key.as_str())) {
        Some(key) => Err(ConfigError::new(
            join(path, key),
            format!("no such field (allowed: {})", allowed.join(", ")),
        )),
        None => Ok(()),
    }
}

/// What a string field must be, checked by the pin types' rules: texts that are stored and
/// rendered are capped in bytes, short labels in characters (what a person counts), and a
/// URL is a web URL of a pin configuration's length.
#[derive(Debug, Clone, Copy)]
enum Rule {
    Bytes(usize),
    Chars(usize),
    WebUrl,
}

/// The string field `name` of `fields` (at `path`), within `rule`; None when absent (or
/// `null`) and not `required`.
fn string<'v>(
    fields: &'v Map<String, Value>,
    path: &str,
    name: &str,
    rule: Rule,
    required: bool,
) -> Result<Option<&'v str>, ConfigError> {
    let at = || join(path, name);
    let text = match fields.get(name) {
        Some(Value::String(text)) => text,
        None | Some(Value::Null) if !required => return Ok(None),
        None | Some(Value::Null) => return Err(ConfigError::new(at(), "a string (required)")),
        Some(_) => return Err(ConfigError::new(at(), "a string")),
    };
    match rule {
        Rule::Bytes(max) => max_bytes(at, text, max)?,
        Rule::Chars(max) => max_chars(at, text, max)?,
        Rule::WebUrl => web_url(at, text)?,
    }
    Ok(Some(text))
}

/// An evaluated block body: conditionals replaced by their chosen branch's (evaluated) bodies, templates resolved.
///
/// `field` is the path of `config` in the response (`blocks[2].config`); nested bodies'
/// warnings are named below it (`blocks[2].config.then[0].config.text`). A conditional
/// tests `holds(lookup(var), op, value)`; its `value` is a literal, never templated. A
/// missing `var` is no warning: `exists` and `ne` are there to test for it. Expects a
/// checked config: a conditional or nested body it cannot read yields no blocks.
pub fn evaluate(
    block_type: &BlockType,
    config: &Value,
    field: &str,
    renderer: &mut Renderer,
) -> Vec<(BlockType, Value)> {
    let mut out = Vec::new();
    evaluate_into(*block_type, config, field, renderer, &mut out);
    out
}

/// [`evaluate`], appending to `out`.
fn evaluate_into(
    block_type: BlockType,
    config: &Value,
    field: &str,
    renderer: &mut Renderer,
    out: &mut Vec<(BlockType, Value)>,
) {
    if block_type != BlockType::Conditional {
        out.push((block_type, renderer.value(config, field)));
        return;
    }
    let test = config.get("if");
    let var = test.and_then(|t| t.get("var")).and_then(Value::as_str);
    let op = test
        .and_then(|t| t.get("op"))
        .and_then(Value::as_str)
        .and_then(Op::from_name);
    let (Some(var), Some(op)) = (var, op) else {
        return;
    };
    let expected = test.and_then(|t| t.get("value"));
    let chosen = if holds(renderer.lookup(var), op, expected) {
        "then"
    } else {
        "else"
    };
    let Some(Value::Array(items)) = config.get(chosen) else {
        return;
    };
    for (i, item) in items.iter().enumerate() {
        let nested = item
            .get("block_type")
            .and_then(Value::as_str)
            .and_then(BlockType::from_name);
        if let (Some(nested), Some(config)) = (nested, item.get("config")) {
            let field = format!("{}[{i}].config", join(field, chosen));
            evaluate_into(nested, config, &field, renderer, out);
        }
    }
}

/// Dataset names referenced by a block's config (its templates and conditionals' var), recursively.
///
/// Both branches count, whichever is chosen later, so the caller loads every dataset
/// evaluation may need in one go. A conditional's `value` is a literal and does not count.
/// A config with an `if` key is taken for a conditional's (no other block type has one).
pub fn referenced(config: &Value, names: &mut BTreeSet<String>) {
    let Some(fields) = config.as_object().filter(|f| f.contains_key("if")) else {
        templates::referenced(config, names);
        return;
    };
    let var = config.pointer("/if/var").and_then(Value::as_str);
    if let Some(name) = var.and_then(templates::dataset_of) {
        names.insert(name.to_owned());
    }
    for branch in ["then", "else"] {
        if let Some(Value::Array(items)) = fields.get(branch) {
            for nested in items.iter().filter_map(|item| item.get("config")) {
                referenced(nested, names);
            }
        }
    }
}

/// `markdown`: text rendered as CommonMark.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MarkdownConfig {
    /// CommonMark text, at most 65536 bytes; may hold templates.
    #[schemars(length(max = MAX_TEXT_BYTES))]
    pub text: String,
}

/// `image`: a picture from an http(s) URL.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImageConfig {
    /// Absolute `http` or `https` URL, at most 2048 characters (the pattern states the
    /// scheme; the service also checks that it parses, with a host).
    #[schemars(url, regex(pattern = WEB_URL_PATTERN), length(max = MAX_URL_CHARS))]
    pub url: String,
    /// Text for readers who cannot see the picture, at most 200 characters.
    #[schemars(length(max = MAX_SHORT_CHARS))]
    pub alt: Option<String>,
}

/// `code`: a source listing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CodeConfig {
    /// Language name for highlighting (`rust`), at most 200 characters.
    #[schemars(length(max = MAX_SHORT_CHARS))]
    pub language: String,
    /// The source, at most 65536 bytes; may hold templates.
    #[schemars(length(max = MAX_TEXT_BYTES))]
    pub code: String,
}

/// `conditional`: shows the bodies of `then` when the test holds, else those of `else`.
/// Conditionals nest at most 4 deep. Its schema is written out per depth
/// ([`conditional_at`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConditionalConfig {
    /// The test.
    #[serde(rename = "if")]
    pub test: Condition,
    /// Shown when the test holds; at most 100 bodies.
    pub then: Vec<BlockBody>,
    /// Shown otherwise; at most 100 bodies.
    #[serde(rename = "else")]
    pub otherwise: Option<Vec<BlockBody>>,
}

impl JsonSchema for ConditionalConfig {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ConditionalConfig".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        conditional_at(generator, 1)
    }
}

/// The schema of a conditional's config at `depth` (1: a block's own config): its
/// branches hold bodies of `depth + 1`, and past [`MAX_DEPTH`] a body can't be a
/// conditional, so the schema states the limit [`check`] enforces. Each depth is a
/// component of its own (`ConditionalConfig`, then `ConditionalConfigDepth2`, ...).
fn conditional_at(generator: &mut SchemaGenerator, depth: usize) -> Schema {
    let bodies = if depth == 1 {
        generator.subschema_for::<BlockBody>()
    } else {
        let name = format!("BlockBodyDepth{}", depth + 1);
        let suffix = format!("BlockDepth{}", depth + 1);
        named(generator, &name, |g| {
            typed_bodies(g, &suffix, None, depth + 1)
        })
    };
    json_schema!({
        "description": "`conditional`: shows the bodies of `then` when the test holds, else \
            those of `else`. Conditionals nest at most 4 deep.",
        "type": "object",
        "additionalProperties": false,
        "required": ["if", "then"],
        "properties": {
            "if": generator.subschema_for::<Condition>(),
            "then": {
                "description": "Shown when the test holds; at most 100 bodies.",
                "type": "array",
                "maxItems": MAX_BRANCH_ITEMS,
                "items": bodies,
            },
            "else": {
                "description": "Shown otherwise; at most 100 bodies.",
                "type": ["array", "null"],
                "maxItems": MAX_BRANCH_ITEMS,
                "items": bodies,
            },
        },
    })
}

/// A reference to the component `name`, made by `build` the first time it is asked for.
fn named(
    generator: &mut SchemaGenerator,
    name: &str,
    build: impl FnOnce(&mut SchemaGenerator) -> Schema,
) -> Schema {
    if !generator.definitions().contains_key(name) {
        let schema = build(generator);
        generator
            .definitions_mut()
            .insert(name.to_owned(), schema.to_value());
    }
    json_schema!({ "$ref": crate::wire::body::reference(generator, name) })
}

/// A conditional's test: `op` applied to the value at `var` and `value`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    /// A template path without braces (`sales.regions[0].total`), at most 200 characters.
    #[schemars(length(max = MAX_SHORT_CHARS))]
    pub var: String,
    /// How to compare: `exists` (present and not null); `eq`/`ne` (JSON equality, numbers
    /// by value); `gt`/`gte`/`lt`/`lte` (two numbers or two strings, else false);
    /// `contains` (substring, array element or object key).
    pub op: Op,
    /// What to compare with, a literal (not templated); absent means `null`.
    pub value: Option<Value>,
}

/// A block inside a conditional's branch. Its schema is one variant per [`BlockType`]
/// ([`typed_bodies`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlockBody {
    /// The kind of block.
    pub block_type: BlockType,
    /// Its configuration, the schema of `block_type`.
    pub config: Value,
}

impl JsonSchema for BlockBody {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "BlockBody".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        typed_bodies(generator, "Block", None, 2)
    }
}

/// The schema of a block's own `config` of `block_type`.
pub fn config_of(generator: &mut SchemaGenerator, block_type: BlockType) -> Schema {
    config_at(generator, block_type, 1)
}

/// The schema of a `config` of `block_type` in a body at `depth` (1: a block's own).
fn config_at(generator: &mut SchemaGenerator, block_type: BlockType, depth: usize) -> Schema {
    match block_type {
        BlockType::Markdown => generator.subschema_for::<MarkdownConfig>(),
        BlockType::Image => generator.subschema_for::<ImageConfig>(),
        BlockType::Code => generator.subschema_for::<CodeConfig>(),
        BlockType::Conditional if depth == 1 => generator.subschema_for::<ConditionalConfig>(),
        BlockType::Conditional => {
            named(generator, &format!("ConditionalConfigDepth{depth}"), |g| {
                conditional_at(g, depth)
            })
        }
    }
}

/// The schema of a block body `{block_type, config}` at `depth` (1: a block, 2: a body in
/// its conditional's branch, ...) plus `extra`, a property name and its schema: one
/// variant per block type, named `<Type><suffix>` (`MarkdownBlock`), whose `config` is
/// that type's schema, with a discriminator on `block_type`; past [`MAX_DEPTH`] there is
/// no conditional. [`check`] enforces what a schema cannot (that a URL parses).
pub fn typed_bodies(
    generator: &mut SchemaGenerator,
    suffix: &str,
    extra: Option<(&str, Value)>,
    depth: usize,
) -> Schema {
    let variants = BlockType::ALL
        .into_iter()
        .filter(|block_type| *block_type != BlockType::Conditional || depth <= MAX_DEPTH)
        .map(|block_type| {
            let name = block_type.as_str();
            let mut properties = Map::new();
            properties.insert("block_type".into(), json!({ "const": name }));
            properties.insert(
                "config".into(),
                config_at(generator, block_type, depth).to_value(),
            );
            if let Some((key, schema)) = &extra {
                properties.insert((*key).to_owned(), schema.clone());
            }
            let title = format!("{}{}", name[..1].to_uppercase(), &name[1..]);
            Variant {
                value: name,
                name: format!("{title}{suffix}"),
                schema: json_schema!({
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["block_type", "config"],
                    "properties": properties,
                }),
            }
        })
        .collect();
    discriminated(generator, "block_type", variants)
}

/// The rule of an update that sends both `block_type` and `config`: the config is of that
/// type (one `if`/`then` per type). A config sent alone is checked against the stored
/// type, which no schema can see.
pub fn config_by_type(generator: &mut SchemaGenerator) -> Value {
    let rules: Vec<Value> = BlockType::ALL
        .into_iter()
        .map(|block_type| {
            json!({
                "if": {
                    "properties": { "block_type": { "const": block_type.as_str() } },
                    "required": ["block_type", "config"],
                },
                "then": { "properties": { "config": config_of(generator, block_type) } },
            })
        })
        .collect();
    rules.into()
}

/// The schema of a block `config` of any type: one of the four types' schemas. Which one
/// applies is given by `block_type`, which the body's schema states where it is sent
/// with the config ([`typed_bodies`], [`config_by_type`]).
pub fn config_schema(generator: &mut SchemaGenerator) -> Schema {
    let any_of: Vec<Schema> = BlockType::ALL
        .into_iter()
        .map(|block_type| config_of(generator, block_type))
        .collect();
    json_schema!({
        "description": "The configuration of the block's `block_type`.",
        "anyOf": any_of,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pin_types::rules::URL_EXPECTED;
    use crate::templates::Datasets;
    use serde_json::json;

    /// The (field, expected) of a refusal.
    fn refusal(block_type: BlockType, config: Value) -> (String, String) {
        match check(&block_type, &config, "config") {
            Err(Error::Validation {
                field, expected, ..
            }) => (field, expected),
            other => panic!("expected a refusal of {config}, got {other:?}"),
        }
    }

    fn md(text: &str) -> Value {
        json!({"block_type": "markdown", "config": {"text": text}})
    }

    /// A conditional config testing `var` with `op`/`value`.
    fn cond(var: &str, op: &str, value: Value, then: Value, otherwise: Value) -> Value {
        json!({"if": {"var": var, "op": op, "value": value}, "then": then, "else": otherwise})
    }

    /// A conditional body nested `depth` deep (depth 1 is the config itself).
    fn nested(depth: usize) -> Value {
        let mut config = json!({"if": {"var": "a", "op": "exists"}, "then": [md("x")]});
        for _ in 1..depth {
            config = json!({"if": {"var": "a", "op": "exists"},
                            "then": [{"block_type": "conditional", "config": config}]});
        }
        config
    }

    #[test]
    fn valid_configs_pass() {
        let cases = [
            (BlockType::Markdown, json!({"text": "# Hi {{sales.total}}"})),
            (BlockType::Markdown, json!({"text": ""})),
            (
                BlockType::Image,
                json!({"url": "https://example.com/a.png"}),
            ),
            (
                BlockType::Image,
                json!({"url": "http://x.org/a", "alt": "A"}),
            ),
            (
                BlockType::Image,
                json!({"url": "http://x.org/a", "alt": null}),
            ),
            (
                BlockType::Code,
                json!({"language": "rust", "code": "fn main() {}"}),
            ),
            (
                BlockType::Conditional,
                cond(
                    "sales.regions[0].total",
                    "gt",
                    json!(5),
                    json!([md("a")]),
                    json!([]),
                ),
            ),
            (
                BlockType::Conditional,
                json!({"if": {"var": "notes", "op": "exists"}, "then": []}),
            ),
            (BlockType::Conditional, nested(MAX_DEPTH)),
        ];
        for (block_type, config) in cases {
            assert!(
                check(&block_type, &config, "config").is_ok(),
                "{block_type:?} {config}"
            );
        }
        assert!(check(
            &BlockType::Markdown,
            &json!({"text": "x".repeat(MAX_TEXT_BYTES)}),
            "config"
        )
        .is_ok());
    }

    #[test]
    fn parse_type_knows_the_four_types() {
        for t in BlockType::ALL {
            assert_eq!(parse_type(t.as_str()).ok(), Some(t));
            assert_eq!(json!(t), json!(t.as_str()));
        }
        match parse_type("video") {
            Err(Error::Validation {
                field, expected, ..
            }) => {
                assert_eq!(field, "block_type");
                assert_eq!(expected, "one of markdown, image, code, conditional");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn refusals_name_the_exact_field() {
        let long = "x".repeat(MAX_SHORT_CHARS + 1);
        let cases = [
            (BlockType::Markdown, json!("text"), "config", "an object"),
            (
                BlockType::Markdown,
                json!({}),
                "config.text",
                "a string (required)",
            ),
            (
                BlockType::Markdown,
                json!({"text": 5}),
                "config.text",
                "a string",
            ),
            (
                BlockType::Markdown,
                json!({"text": "x".repeat(MAX_TEXT_BYTES + 1)}),
                "config.text",
                "at most 65536 bytes",
            ),
            (
                BlockType::Markdown,
                json!({"text": "a", "title": "b"}),
                "config.title",
                "no such field (allowed: text)",
            ),
            (
                BlockType::Image,
                json!({"alt": "a"}),
                "config.url",
                "a string (required)",
            ),
            (
                BlockType::Image,
                json!({"url": format!("https://x.org/{}", "a".repeat(2048))}),
                "config.url",
                "at most 2048 characters",
            ),
            (
                BlockType::Image,
                json!({"url": "https://x.org/a", "alt": long}),
                "config.alt",
                "at most 200 characters",
            ),
            (
                BlockType::Image,
                json!({"url": "https://x.org/a", "width": 3}),
                "config.width",
                "no such field (allowed: url, alt)",
            ),
            (
                BlockType::Code,
                json!({"code": "x"}),
                "config.language",
                "a string (required)",
            ),
            (
                BlockType::Code,
                json!({"language": "rust"}),
                "config.code",
                "a string (required)",
            ),
            (
                BlockType::Code,
                json!({"language": long, "code": ""}),
                "config.language",
                "at most 200 characters",
            ),
            (
                BlockType::Conditional,
                json!({"then": []}),
                "config.if",
                "an object {var, op, value?} (required)",
            ),
            (
                BlockType::Conditional,
                json!({"if": "x", "then": []}),
                "config.if",
                "an object {var, op, value?}",
            ),
            (
                BlockType::Conditional,
                json!({"if": {"var": "a", "op": "exists", "x": 1}, "then": []}),
                "config.if.x",
                "no such field (allowed: var, op, value)",
            ),
            (
                BlockType::Conditional,
                json!({"if": {"op": "exists"}, "then": []}),
                "config.if.var",
                "a string (required)",
            ),
            (
                BlockType::Conditional,
                json!({"if": {"var": "{{a}}", "op": "exists"}, "then": []}),
                "config.if.var",
                VAR_EXPECTED,
            ),
            (
                BlockType::Conditional,
                json!({"if": {"var": "a", "op": "matches"}, "then": []}),
                "config.if.op",
                "one of eq, ne, gt, gte, lt, lte, contains, exists",
            ),
            (
                BlockType::Conditional,
                json!({"if": {"var": "a"}, "then": []}),
                "config.if.op",
                OP_EXPECTED,
            ),
            (
                BlockType::Conditional,
                json!({"if": {"var": "a", "op": "exists"}}),
                "config.then",
                "an array of block bodies (required)",
            ),
            (
                BlockType::Conditional,
                json!({"if": {"var": "a", "op": "exists"}, "then": [], "else": {}}),
                "config.else",
                "an array of block bodies",
            ),
            (
                BlockType::Conditional,
                json!({"if": {"var": "a", "op": "exists"}, "then": vec![md("x"); 101]}),
                "config.then",
                "at most 100 block bodies",
            ),
            (
                BlockType::Conditional,
                json!({"if": {"var": "a", "op": "exists"}, "then": [], "when": 1}),
                "config.when",
                "no such field (allowed: if, then, else)",
            ),
            (
                BlockType::Conditional,
                json!({"if": {"var": "a", "op": "exists"}, "then": [md("x"), "y"]}),
                "config.then[1]",
                BODY_EXPECTED,
            ),
            (
                BlockType::Conditional,
                json!({"if": {"var": "a", "op": "exists"}, "then": [{"config": {}}]}),
                "config.then[0].block_type",
                TYPE_EXPECTED,
            ),
            (
                BlockType::Conditional,
                json!({"if": {"var": "a", "op": "exists"}, "then": [],
                       "else": [md("x"), {"block_type": "video", "config": {}}]}),
                "config.else[1].block_type",
                TYPE_EXPECTED,
            ),
            (
                BlockType::Conditional,
                json!({"if": {"var": "a", "op": "exists"},
                       "then": [{"block_type": "markdown"}]}),
                "config.then[0].config",
                "an object (required)",
            ),
            (
                BlockType::Conditional,
                json!({"if": {"var": "a", "op": "exists"},
                       "then": [{"block_type": "markdown", "config": {"text": "a"}, "id": 1}]}),
                "config.then[0].id",
                "no such field (allowed: block_type, config)",
            ),
            (
                BlockType::Conditional,
                json!({"if": {"var": "a", "op": "exists"},
                       "then": [{"block_type": "image", "config": {"url": "javascript:alert(1)"}}]}),
                "config.then[0].config.url",
                URL_EXPECTED,
            ),
            (
                BlockType::Conditional,
                json!({"if": {"var": "a", "op": "exists"},
                       "then": [md("x"), {"block_type": "markdown", "config": {"text": 1}}]}),
                "config.then[1].config.text",
                "a string",
            ),
        ];
        for (block_type, config, field, expected) in cases {
            assert_eq!(
                refusal(block_type, config.clone()),
                (field.to_owned(), expected.to_owned()),
                "{block_type:?} {config}"
            );
        }
    }

    /// The markdown, image and code blocks are documented with limits of their own
    /// (CONTRACT.md 7, the API description's block schemas), not the pin types' ones.
    #[test]
    fn block_limits_are_not_the_pin_types() {
        for (block_type, config) in [
            (BlockType::Markdown, json!({"text": "x".repeat(50_001)})),
            (BlockType::Code, json!({"language": "c plus", "code": ""})),
            (BlockType::Code, json!({"language": "", "code": ""})),
            (
                BlockType::Image,
                json!({"url": "https://x.org/a", "alt": "x".repeat(200)}),
            ),
        ] {
            assert!(
                check(&block_type, &config, "config").is_ok(),
                "{block_type:?} {config}"
            );
        }
        assert_eq!(
            refusal(
                BlockType::Image,
                json!({"url": "https://x.org/a", "caption": "c"})
            ),
            (
                "config.caption".to_owned(),
                "no such field (allowed: url, alt)".to_owned()
            )
        );
        assert_eq!(
            refusal(
                BlockType::Markdown,
                json!({"text": "é".repeat(32 * 1024 + 1)})
            ),
            ("config.text".to_owned(), "at most 65536 bytes".to_owned())
        );
    }

    #[test]
    fn image_urls_must_be_http_or_https() {
        for url in [
            "javascript:alert(1)",
            "data:image/png;base64,AA",
            "/img.png",
            "ftp://x.org/a",
            "not a url",
            "",
        ] {
            assert_eq!(
                refusal(BlockType::Image, json!({ "url": url })),
                ("config.url".to_owned(), URL_EXPECTED.to_owned()),
                "{url}"
            );
        }
    }

    #[test]
    fn nesting_deeper_than_four_is_refused_at_the_deepest_block_type() {
        let field = "config.then[0].config.then[0].config.then[0].config.then[0].block_type";
        assert_eq!(
            refusal(BlockType::Conditional, nested(MAX_DEPTH + 1)),
            (field.to_owned(), TOO_DEEP.to_owned())
        );
        // The prefix is the caller's: nested fields hang below it.
        let err = check(&BlockType::Conditional, &nested(MAX_DEPTH + 1), "");
        assert!(matches!(err, Err(Error::Validation { field, .. })
            if field == "then[0].config.then[0].config.then[0].config.then[0].block_type"));
    }

    fn datasets() -> Datasets {
        let mut d = Datasets::new();
        d.insert("sales".into(), json!({"total": 7, "label": "Q1"}));
        d
    }

    #[test]
    fn evaluation_takes_then_when_the_test_holds() {
        let d = datasets();
        let mut r = Renderer::new(&d);
        let config = cond(
            "sales.total",
            "gt",
            json!(5),
            json!([md("big {{sales.label}}"), {"block_type": "code",
                   "config": {"language": "txt", "code": "{{sales.total}}"}}]),
            json!([md("small")]),
        );
        let out = evaluate(&BlockType::Conditional, &config, "blocks[2].config", &mut r);
        assert_eq!(
            out,
            vec![
                (BlockType::Markdown, json!({"text": "big Q1"})),
                (BlockType::Code, json!({"language": "txt", "code": "7"})),
            ]
        );
        assert!(r.into_warnings().is_empty());
    }

    #[test]
    fn evaluation_takes_else_otherwise_and_names_nested_fields() {
        let d = datasets();
        let mut r = Renderer::new(&d);
        let config = cond(
            "sales.total",
            "lt",
            json!(5),
            json!([md("small")]),
            json!([md("a"), md("{{nope}}")]),
        );
        let out = evaluate(&BlockType::Conditional, &config, "blocks[2].config", &mut r);
        assert_eq!(
            out,
            vec![
                (BlockType::Markdown, json!({"text": "a"})),
                (BlockType::Markdown, json!({"text": ""})),
            ]
        );
        let warnings = r.into_warnings();
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].field, "blocks[2].config.else[1].config.text");
        assert_eq!(warnings[0].reason, "dataset_not_found");
    }

    #[test]
    fn evaluation_without_else_or_var_yields_nothing_and_no_warning() {
        let d = datasets();
        let mut r = Renderer::new(&d);
        let config = json!({"if": {"var": "missing.x", "op": "exists"}, "then": [md("x")]});
        assert!(evaluate(&BlockType::Conditional, &config, "c", &mut r).is_empty());
        assert!(r.into_warnings().is_empty());
    }

    #[test]
    fn evaluation_nests_and_keeps_the_value_literal() {
        let d = datasets();
        let mut r = Renderer::new(&d);
        let inner = cond(
            "sales.label",
            "eq",
            json!("{{sales.label}}"),
            json!([md("templated value")]),
            json!([md("literal value {{sales.label}}")]),
        );
        let config = cond(
            "sales.label",
            "eq",
            json!("Q1"),
            json!([md("one"), {"block_type": "conditional", "config": inner}]),
            json!([]),
        );
        let out = evaluate(&BlockType::Conditional, &config, "c", &mut r);
        assert_eq!(
            out,
            vec![
                (BlockType::Markdown, json!({"text": "one"})),
                (BlockType::Markdown, json!({"text": "literal value Q1"})),
            ]
        );
    }

    #[test]
    fn evaluation_of_plain_blocks_resolves_templates() {
        let d = datasets();
        let mut r = Renderer::new(&d);
        let config = json!({"url": "https://x.org/{{sales.label}}.png", "alt": "{{sales.total}}"});
        assert_eq!(
            evaluate(&BlockType::Image, &config, "blocks[0].config", &mut r),
            vec![(
                BlockType::Image,
                json!({"url": "https://x.org/Q1.png", "alt": "7"})
            )]
        );
    }

    #[test]
    fn referenced_covers_vars_and_both_branches_but_not_values() {
        let inner = cond(
            "deep.x",
            "eq",
            json!("{{literal}}"),
            json!([md("{{in_then}}")]),
            json!([]),
        );
        let config = cond(
            "top[0]",
            "eq",
            json!("{{literal}}"),
            json!([{"block_type": "conditional", "config": inner}]),
            json!([md("{{in_else.a}}")]),
        );
        let mut names = BTreeSet::new();
        referenced(&config, &mut names);
        let names: Vec<_> = names.into_iter().collect();
        assert_eq!(names, ["deep", "in_else", "in_then", "top"]);

        let mut names = BTreeSet::new();
        referenced(&json!({"text": "{{a.b}} {{c}}"}), &mut names);
        assert_eq!(names.into_iter().collect::<Vec<_>>(), ["a", "c"]);
    }

    #[test]
    fn the_config_schema_lists_the_four_types() {
        let mut generator = SchemaGenerator::default();
        let schema = config_schema(&mut generator);
        let any_of = schema.get("anyOf").and_then(Value::as_array).map(Vec::len);
        assert_eq!(any_of, Some(4));
        let bodies = typed_bodies(&mut generator, "Block", None, 2);
        let one_of = bodies.get("oneOf").and_then(Value::as_array).map(Vec::len);
        assert_eq!(one_of, Some(4));
        assert_eq!(
            bodies.get("discriminator").map(|d| &d["mapping"]["image"]),
            Some(&json!("#/$defs/ImageBlock"))
        );
        let defs = generator.definitions();
        for name in [
            "MarkdownConfig",
            "ImageConfig",
            "CodeConfig",
            "ConditionalConfig",
            "BlockBody",
            "CodeBlock",
            "ConditionalConfigDepth4",
            "BlockBodyDepth5",
        ] {
            assert!(defs.contains_key(name), "{name}");
        }
        // Bodies past the depth limit can't be conditionals.
        let deepest = defs["BlockBodyDepth5"]["discriminator"]["mapping"].clone();
        assert_eq!(deepest.as_object().map(|m| m.len()), Some(3));
        assert!(deepest.get("conditional").is_none());
        assert!(!defs.contains_key("ConditionalConfigDepth5"));
    }
}
