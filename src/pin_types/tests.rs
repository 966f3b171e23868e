//! Tests across all pin types, and the helpers the per-type tests share.

use super::*;
use serde_json::json;

/// One wrong variant of a type's example: the JSON pointer to change, its new
/// value (`None` removes it), then the expected error path and a part of the
/// expected text.
pub(super) type Case = (&'static str, Option<Value>, &'static str, &'static str);

/// `config` with the value at JSON `pointer` replaced or inserted (`Some`) or
/// removed (`None`). Panics when the parent of `pointer` does not exist.
pub(super) fn edited(mut config: Value, pointer: &str, value: Option<Value>) -> Value {
    let (parent, key) = pointer.rsplit_once('/').expect("a JSON pointer");
    match (config.pointer_mut(parent).expect("parent exists"), value) {
        (Value::Object(map), Some(value)) => drop(map.insert(key.to_owned(), value)),
        (Value::Object(map), None) => drop(map.remove(key)),
        (Value::Array(items), value) => {
            let index: usize = key.parse().expect("an index");
            match value {
                Some(value) => items[index] = value,
                None => drop(items.remove(index)),
            }
        }
        (other, _) => panic!("cannot edit inside {other}"),
    }
    config
}

/// Asserts that each case's edit of `pin_type`'s example is refused with the
/// case's path and an `expected` containing the case's text.
pub(super) fn assert_refusals(pin_type: PinType, cases: Vec<Case>) {
    for (pointer, value, path, expected) in cases {
        let config = edited(pin_type.example(), pointer, value.clone());
        let err = validate(pin_type, &config).expect_err(&format!("{pointer} = {value:?}"));
        assert_eq!(err.path, path, "{pointer} = {value:?}: {err:?}");
        assert!(
            err.expected.contains(expected),
            "{pointer} = {value:?}: {:?} lacks {expected:?}",
            err.expected
        );
    }
}

#[test]
fn pin_type_names_round_trip() {
    for &t in PinType::ALL {
        assert_eq!(PinType::parse(t.as_str()), Some(t));
    }
    assert_eq!(PinType::parse("Stat-Cards"), None);
    assert_eq!(PinType::parse(""), None);
    assert_eq!(
        PinType::expected_list(),
        "stat-cards, kpi, line-chart, area-chart, bar-chart, pie-chart, scatter-chart, \
         heatmap, gauge, progress, flexible-table, markdown, json, code, image, list, \
         timeline, status-grid"
    );
}

#[test]
fn root_must_be_an_object() {
    for pin_type in PinType::ALL {
        for config in [json!([]), json!("x"), json!(null), json!(1)] {
            let err = validate(*pin_type, &config).unwrap_err();
            assert_eq!(err, ConfigError::new("", "a JSON object"));
        }
    }
}

#[test]
fn every_example_validates() {
    for &t in PinType::ALL {
        assert_eq!(validate(t, &t.example()), Ok(()), "{}", t.as_str());
    }
}

#[test]
fn unknown_root_keys_are_refused() {
    for &t in PinType::ALL {
        let err = validate(t, &edited(t.example(), "/colour", Some(json!(1)))).unwrap_err();
        assert_eq!(err.path, "colour", "{}", t.as_str());
        assert!(err.expected.starts_with("no such field (allowed: "));
    }
}

#[test]
fn descriptions_are_one_line() {
    for &t in PinType::ALL {
        let text = t.description();
        assert!(!text.is_empty() && !text.contains('\n') && text.ends_with('.'));
    }
}

/// Every object schema with `properties` anywhere in `schema` (root and `$defs`).
fn object_schemas(schema: &Value, out: &mut Vec<Value>) {
    match schema {
        Value::Object(map) => {
            if map.contains_key("properties") {
                out.push(schema.clone());
            }
            map.values().for_each(|v| object_schemas(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| object_schemas(v, out)),
        _ => {}
    }
}

#[test]
fn schemas_are_closed_objects_matching_the_examples() {
    for &t in PinType::ALL {
        let schema = t.schema();
        let name = t.as_str();
        assert_eq!(
            schema["$schema"], "https://json-schema.org/draft/2020-12/schema",
            "{name}"
        );
        assert_eq!(schema["title"], name);
        assert_eq!(schema["type"], "object", "{name}");
        assert_eq!(schema["additionalProperties"], false, "{name}");
        assert!(
            !schema.to_string().contains("\\n "),
            "{name}: untidy description"
        );
        let mut objects = Vec::new();
        object_schemas(&schema, &mut objects);
        for object in objects {
            assert_eq!(object["additionalProperties"], false, "{name}: {object}");
        }
        let example = t.example();
        let properties = schema["properties"].as_object().expect("properties");
        for key in example.as_object().expect("an object").keys() {
            assert!(properties.contains_key(key), "{name}: {key}");
        }
        for key in schema["required"].as_array().expect("required") {
            assert!(
                example.get(key.as_str().expect("a name")).is_some(),
                "{name}: {key}"
            );
        }
    }
}
