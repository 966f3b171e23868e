//! Helpers of request bodies: parsing a JSON value into a request type with the failing
//! field's path, and the serde and schema adjustments the bodies share.

use schemars::{Schema, SchemaGenerator};
use serde::Deserialize;
use serde_json::Value;

use crate::{
    error::{Error, Result},
    pin_types,
};

/// Parses `value` into a request type, turning serde's complaint into `VALIDATION_FAILED`
/// at `prefix.path` (`body` for the whole body).
pub fn parse_body<T: serde::de::DeserializeOwned>(value: &Value, prefix: &str) -> Result<T> {
    pin_types::parse(value).map_err(|e| {
        let field = e.field(prefix);
        let field = if field.is_empty() {
            "body".to_owned()
        } else {
            field
        };
        Error::validation(field, e.expected)
    })
}

/// Text without U+0000, which no request may carry anywhere (CONTRACT.md 1): the pattern
/// the API description gives every string schema without one of its own
/// (`api::text_rule`).
pub const NO_NUL: &str = "^[^\\x00]*$";

/// Any JSON value: the schema `{}` (which many OpenAPI tools read where they refuse `true`).
pub fn any_value(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({})
}

/// An optional field that, when sent, must be a value: `null` is refused (for fields where
/// it would mean nothing, so a body of nulls can't pass for a change).
pub fn present<'de, D, T>(d: D) -> std::result::Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

/// The schema of an optional value that can't be `null`: `null` left out of its types.
pub fn non_null(schema: &mut Schema) {
    if let Some(Value::Array(types)) = schema.remove("type") {
        let mut types: Vec<Value> = types.into_iter().filter(|t| t != "null").collect();
        let kind = match types.len() {
            1 => types.remove(0),
            _ => Value::Array(types),
        };
        schema.insert("type".into(), kind);
    }
}

/// Distinguishes a key sent as `null` (`Some(None)`) from a missing one (`None`).
pub fn nullable<'de, D, T>(d: D) -> std::result::Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// An object schema that needs at least one member: a body of an update that changes
/// nothing is refused.
pub fn non_empty(schema: &mut Schema) {
    schema.insert("minProperties".into(), 1.into());
}

/// One variant of a body whose shape depends on one of its fields (a dataset's `data` on
/// its `format`, a block's `config` on its `block_type`).
pub struct Variant {
    /// The field's value that selects this variant.
    pub value: &'static str,
    /// The variant's component name in the API description.
    pub name: String,
    /// Its schema, whose `property` is `{"const": value}`.
    pub schema: Schema,
}

/// The reference to the component `name`, as schemars writes its own: `#`, the
/// definitions' JSON pointer, `/`, the name.
pub fn reference(generator: &SchemaGenerator, name: &str) -> String {
    let path = &generator.settings().definitions_path;
    let path = path.strip_prefix('#').unwrap_or(path);
    format!("#{}/{name}", path.strip_suffix('/').unwrap_or(path))
}

/// `oneOf` the `variants`, each a component of its own, with an OpenAPI `discriminator`
/// on `property` mapping each value to its variant: the schema states which shape goes
/// with which value.
pub fn discriminated(
    generator: &mut SchemaGenerator,
    property: &str,
    variants: Vec<Variant>,
) -> Schema {
    let mut one_of = Vec::new();
    let mut mapping = serde_json::Map::new();
    for variant in variants {
        let reference = reference(generator, &variant.name);
        one_of.push(serde_json::json!({ "$ref": reference }));
        mapping.insert(variant.value.to_owned(), reference.into());
        generator
            .definitions_mut()
            .insert(variant.name, variant.schema.to_value());
    }
    schemars::json_schema!({
        "oneOf": one_of,
        "discriminator": { "propertyName": property, "mapping": mapping },
    })
}
