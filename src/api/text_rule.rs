//! The rule on text every request obeys, stated in the schemas of the API description: no
//! U+0000 anywhere (CONTRACT.md 1: a 400 `VALIDATION_FAILED`; PostgreSQL can't store it).
//! The check is one, in the JSON, path and query extractors, so the statement is one too:
//! a pass over the finished document that gives every string schema without a pattern of
//! its own [`NO_NUL`] and makes every "any JSON value" schema [`ANY_VALUE`], whose strings
//! and keys carry it at every depth. Patterns written in the code (`pins::KEY_PATTERN`,
//! `pins::NOT_BLANK`, ...) are anchored and admit no U+0000 themselves (a test checks each).

use serde_json::{json, Map, Value};

use crate::wire::body::NO_NUL;

/// The component every "any JSON value" schema refers to.
pub const ANY_VALUE: &str = "JsonValue";

/// The error envelope: its `message` and `details.field` name the refused part of a
/// request as it was sent, U+0000 included (a key holding one), so it is left as it is.
const ECHOES: &str = "Error";

/// Keywords whose value is one subschema.
const ONE: [&str; 10] = [
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
];
/// Keywords whose value is a list of subschemas.
const LIST: [&str; 4] = ["anyOf", "oneOf", "allOf", "prefixItems"];
/// Keywords whose value maps names to subschemas.
const MAP: [&str; 4] = [
    "properties",
    "patternProperties",
    "$defs",
    "dependentSchemas",
];
/// Keywords that say nothing about a value: a schema of only these admits any value.
const ANNOTATIONS: [&str; 6] = [
    "description",
    "title",
    "default",
    "examples",
    "example",
    "deprecated",
];

/// States the rule in `doc`: its component schemas and headers, and the schemas of its
/// parameters, request bodies and responses.
pub fn state(doc: &mut Value) {
    if let Some(schemas) = doc
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
    {
        schemas
            .iter_mut()
            .filter(|(name, _)| *name != ECHOES)
            .for_each(|(_, value)| schema(value));
        schemas.insert(ANY_VALUE.into(), any_value());
    }
    // Response headers: HTTP carries no U+0000 in a header value.
    for header in doc
        .pointer_mut("/components/headers")
        .and_then(Value::as_object_mut)
        .into_iter()
        .flat_map(|h| h.values_mut())
    {
        header.get_mut("schema").map(schema);
    }
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    for operation in paths
        .values_mut()
        .filter_map(Value::as_object_mut)
        .flat_map(|item| item.values_mut())
    {
        for parameter in operation
            .get_mut("parameters")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            parameter.get_mut("schema").map(schema);
        }
        if let Some(body) = operation.get_mut("requestBody") {
            json_contents(body);
        }
        for response in operation
            .get_mut("responses")
            .and_then(Value::as_object_mut)
            .into_iter()
            .flat_map(|r| r.values_mut())
        {
            json_contents(response);
        }
    }
}

/// The schemas of a request body's or a response's JSON media types (HTML, text and
/// event streams are not JSON values).
fn json_contents(holder: &mut Value) {
    for (media, content) in holder
        .get_mut("content")
        .and_then(Value::as_object_mut)
        .into_iter()
        .flatten()
    {
        if media.ends_with("json") {
            content.get_mut("schema").map(schema);
        }
    }
}

/// Any JSON value without U+0000 in a string or an object key, at any depth.
fn any_value() -> Value {
    let itself = json!({ "$ref": format!("#/components/schemas/{ANY_VALUE}") });
    json!({
        "description": "Any JSON value; no text in it (strings, object keys) holds U+0000.",
        "pattern": NO_NUL,
        "propertyNames": { "pattern": NO_NUL },
        "items": itself,
        "additionalProperties": itself,
    })
}

fn is_string(kind: &Value) -> bool {
    match kind {
        Value::String(kind) => kind == "string",
        Value::Array(kinds) => kinds.iter().any(|k| k == "string"),
        _ => false,
    }
}

/// Whether `object` admits any value (`{}`, or only annotations).
fn admits_anything(object: &Map<String, Value>) -> bool {
    object.keys().all(|key| ANNOTATIONS.contains(&key.as_str()))
}

/// States the rule in one schema and its subschemas.
fn schema(value: &mut Value) {
    if value == &Value::Bool(true) {
        *value = json!({ "$ref": format!("#/components/schemas/{ANY_VALUE}") });
        return;
    }
    let Some(object) = value.as_object_mut() else {
        return;
    };
    if admits_anything(object) {
        object.insert(
            "$ref".into(),
            format!("#/components/schemas/{ANY_VALUE}").into(),
        );
        return;
    }
    if object.get("type").is_some_and(is_string) && !object.contains_key("pattern") {
        object.insert("pattern".into(), NO_NUL.into());
    }
    for (key, sub) in object.iter_mut() {
        let key = key.as_str();
        if ONE.contains(&key) {
            schema(sub);
        } else if LIST.contains(&key) {
            sub.as_array_mut().into_iter().flatten().for_each(schema);
        } else if MAP.contains(&key) {
            sub.as_object_mut()
                .into_iter()
                .flat_map(|m| m.values_mut())
                .for_each(schema);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_get_the_rule_and_any_value_the_component() {
        let mut doc = json!({"components": {"schemas": {
            "Body": {"type": "object", "properties": {
                "name": {"type": "string"},
                "key": {"type": "string", "pattern": "^[a-z]$"},
                "note": {"type": ["string", "null"]},
                "data": {"description": "anything"},
                "cells": {"type": "object", "additionalProperties": true},
                "list": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "null"}]}}
            }}
        }}, "paths": {}});
        state(&mut doc);
        let body = &doc["components"]["schemas"]["Body"]["properties"];
        let any = json!(format!("#/components/schemas/{ANY_VALUE}"));
        assert_eq!(body["name"]["pattern"], json!(NO_NUL));
        assert_eq!(body["key"]["pattern"], json!("^[a-z]$"));
        assert_eq!(body["note"]["pattern"], json!(NO_NUL));
        assert_eq!(body["data"]["$ref"], any);
        assert_eq!(body["data"]["description"], json!("anything"));
        assert_eq!(body["cells"]["additionalProperties"]["$ref"], any);
        assert_eq!(body["list"]["items"]["anyOf"][0]["pattern"], json!(NO_NUL));
        assert!(doc["components"]["schemas"][ANY_VALUE].is_object());
    }
}
