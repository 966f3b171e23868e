//! Properties of pin configuration validation: it never panics, whatever the
//! JSON, and an unknown key at the root is always refused by name.

use corkboard::pin_types::{validate, PinType};
use proptest::prelude::*;
use serde_json::{Map, Value};

/// Field names of the pin types, so generated objects reach past the first key.
const KEYS: &[&str] = &[
    "cards",
    "title",
    "value",
    "trend",
    "trend_good",
    "label",
    "sparkline",
    "labels",
    "series",
    "name",
    "data",
    "slices",
    "points",
    "x",
    "y",
    "x_labels",
    "y_labels",
    "values",
    "min",
    "max",
    "thresholds",
    "color",
    "items",
    "columns",
    "rows",
    "id",
    "type",
    "cells",
    "text",
    "url",
    "language",
    "code",
    "events",
    "time",
    "status",
    "checked",
    "stacked",
    "donut",
];

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from), // NaN and infinities become null
        prop_oneof![
            Just("up".to_owned()),
            Just("ok".to_owned()),
            Just("2024-02-29".to_owned()),
            Just("https://example.com".to_owned()),
            "\\PC{0,12}",
        ]
        .prop_map(Value::String),
    ]
}

/// Arbitrary JSON trees: depth at most 5, about 64 nodes.
fn json_value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(5, 64, 8, |inner| {
        let key = prop_oneof![3 => proptest::sample::select(KEYS).prop_map(str::to_owned),
                              1 => "\\PC{0,8}"];
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::vec((key, inner), 0..8)
                .prop_map(|members| Value::Object(members.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// JSON pointers to every node of `value`, the root ("") included.
fn pointers(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let key = key.replace('~', "~0").replace('/', "~1");
                pointers(child, format!("{at}/{key}"), out);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                pointers(child, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
    out.push(at);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn validate_never_panics_on_arbitrary_json(value in json_value()) {
        for &t in PinType::ALL {
            let _ = validate(t, &value);
        }
    }

    #[test]
    fn validate_never_panics_on_mutated_examples(pick in any::<usize>(), node in json_value()) {
        for &t in PinType::ALL {
            let mut config = t.example();
            let mut all = Vec::new();
            pointers(&config, String::new(), &mut all);
            let pointer = &all[pick % all.len()];
            *config.pointer_mut(pointer).expect("a node of the example") = node.clone();
            let _ = validate(t, &config);
        }
    }

    #[test]
    fn unknown_root_keys_are_refused_by_name(key in "\\PC{1,16}", extra in json_value()) {
        for &t in PinType::ALL {
            let schema = t.schema();
            prop_assume!(schema["properties"].get(&key).is_none());
            let mut config = t.example();
            config.as_object_mut().expect("an object").insert(key.clone(), extra.clone());
            let err = validate(t, &config).expect_err("an unknown key");
            prop_assert_eq!(&err.path, &key, "{}", t.as_str());
            prop_assert!(err.expected.starts_with("no such field"), "{}", err.expected);
        }
    }
}
