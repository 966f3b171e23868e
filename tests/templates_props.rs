//! Properties of template resolution: it never panics, text without variables is left
//! alone, resolution never recurses, growth stays within the budget, the renderer and
//! `referenced` agree on which datasets a text names, and the comparison operators are
//! consistent with one another.

use std::collections::BTreeSet;

use corkboard::templates::{dataset_of, holds, referenced, Datasets, Op, Renderer};
use proptest::prelude::*;
use serde_json::{json, Value};

/// Dataset names the generated texts use; only some of them exist.
const NAMES: &[&str] = &["sales", "notes", "grid", "missing", "a_1"];

/// Datasets with every kind of value, some holding template syntax themselves.
fn datasets() -> Datasets {
    let mut d = Datasets::new();
    d.insert(
        "sales".into(),
        json!({"total": 3.5, "label": "{{sales.total}}", "regions": [{"total": 7}],
               "flag": false, "none": null, "long": "x".repeat(300)}),
    );
    d.insert("notes".into(), json!("# {{notes}} }} {{"));
    d.insert("grid".into(), json!([[1, 2], [3, 4]]));
    d
}

/// Paths that parse: a name, then keys and indexes.
fn path() -> impl Strategy<Value = String> {
    let step = prop_oneof![
        proptest::sample::select(&["total", "label", "regions", "flag", "none", "long", "x-y"][..])
            .prop_map(|k| format!(".{k}")),
        (0usize..3).prop_map(|i| format!("[{i}]")),
    ];
    (
        proptest::sample::select(NAMES),
        prop::collection::vec(step, 0..4),
    )
        .prop_map(|(name, steps)| format!("{name}{}", steps.concat()))
}

/// Texts mixing prose, stray braces, spaces and well-formed variables.
fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "\\PC{0,6}",
        proptest::sample::select(&["{", "}", "{{", "}}", " ", "[", "]", ".", "{{}}", "{{ "][..])
            .prop_map(str::to_owned),
        path().prop_map(|p| format!("{{{{{p}}}}}")),
        path().prop_map(|p| format!("{{{{ {p} }}}}")),
        path(),
    ];
    prop::collection::vec(piece, 0..12).prop_map(|pieces| pieces.concat())
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..3).prop_map(Value::from),
        (-3i64..3).prop_map(|n| Value::from(n as f64)),
        any::<f64>().prop_map(Value::from),
        proptest::sample::select(&["", "a", "ab", "b", "ba"][..]).prop_map(Value::from),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                proptest::sample::select(&["", "a", "b"][..]).prop_map(str::to_owned),
                inner,
                0..3
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn rendering_never_panics_and_stays_within_the_budget(text in text(), budget in 0usize..64) {
        let d = datasets();
        let mut renderer = Renderer::with_budget(&d, budget);
        let out = renderer.text(&text, "f");
        prop_assert!(out.len() <= text.len() + budget, "{} > {} + {}", out.len(), text.len(), budget);
        for warning in renderer.into_warnings() {
            prop_assert_eq!(&warning.field, "f");
            prop_assert!(
                ["dataset_not_found", "path_not_found", "size_limit"].contains(&warning.reason.as_str()),
                "{}", warning.reason
            );
            prop_assert!(dataset_of(&warning.variable).is_some(), "{}", warning.variable);
        }
    }

    #[test]
    fn text_without_variables_is_left_alone(text in "[^{]{0,40}|\\PC{0,40}") {
        let d = datasets();
        let mut renderer = Renderer::new(&d);
        prop_assume!(!text.contains("{{"));
        prop_assert_eq!(renderer.text(&text, "f"), text);
        prop_assert!(renderer.into_warnings().is_empty());
    }

    #[test]
    fn a_resolved_string_is_inserted_literally(content in "\\PC{0,20}|[{} a-z.]{0,20}") {
        let mut d = Datasets::new();
        d.insert("d".into(), Value::String(content.clone()));
        d.insert("e".into(), json!(1));
        let mut renderer = Renderer::new(&d);
        prop_assert_eq!(renderer.text("{{d}}", "f"), content.clone());
        prop_assert_eq!(renderer.text("<{{ d }}>", "f"), format!("<{content}>"));
        prop_assert!(renderer.into_warnings().is_empty());
    }

    #[test]
    fn a_variable_renders_what_lookup_finds(p in path(), pad in " {0,2}") {
        let d = datasets();
        let mut renderer = Renderer::new(&d);
        let expected = match renderer.lookup(&p) {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        };
        let found = renderer.lookup(&p).is_some();
        prop_assert_eq!(dataset_of(&p), p.split(['.', '[']).next());
        prop_assert_eq!(renderer.text(&format!("{{{{{pad}{p}{pad}}}}}"), "f"), expected);
        let warnings = renderer.into_warnings();
        prop_assert_eq!(warnings.len(), usize::from(!found));
        if let Some(warning) = warnings.first() {
            prop_assert_eq!(&warning.variable, &p);
        }
    }

    #[test]
    fn referenced_names_exactly_the_datasets_the_renderer_looks_for(texts in prop::collection::vec(text(), 0..4)) {
        let value = Value::Array(texts.into_iter().map(Value::String).collect());
        let mut names = BTreeSet::new();
        referenced(&value, &mut names);
        // With no datasets at all, every variable warns dataset_not_found once.
        let empty = Datasets::new();
        let mut renderer = Renderer::new(&empty);
        let out = renderer.value(&value, "v");
        let warned: BTreeSet<String> = renderer
            .into_warnings()
            .iter()
            .map(|w| {
                assert_eq!(w.reason, "dataset_not_found");
                dataset_of(&w.variable).map(str::to_owned).unwrap_or_default()
            })
            .collect();
        prop_assert_eq!(names, warned);
        prop_assert!(out.as_array().is_some_and(|items| items.iter().all(Value::is_string)));
    }

    #[test]
    fn eq_and_ne_are_opposites(actual in proptest::option::of(json_value()), expected in proptest::option::of(json_value())) {
        let (a, e) = (actual.as_ref(), expected.as_ref());
        prop_assert_ne!(holds(a, Op::Eq, e), holds(a, Op::Ne, e));
        if let (Some(a), Some(e)) = (a, e) {
            prop_assert_eq!(holds(Some(a), Op::Eq, Some(e)), holds(Some(e), Op::Eq, Some(a)));
        }
        if let Some(a) = a {
            prop_assert!(holds(Some(a), Op::Eq, Some(a)));
        }
        prop_assert_eq!(holds(a, Op::Exists, e), a.is_some_and(|v| !v.is_null()));
    }

    #[test]
    fn ordering_ops_agree_with_each_other(actual in proptest::option::of(json_value()), expected in proptest::option::of(json_value())) {
        let (a, e) = (actual.as_ref(), expected.as_ref());
        let [gt, gte, lt, lte] = [Op::Gt, Op::Gte, Op::Lt, Op::Lte].map(|op| holds(a, op, e));
        prop_assert!(!(gt && lt));
        prop_assert_eq!(gte, gt || (gte && lte));
        prop_assert_eq!(gt, holds(e, Op::Lt, a));
        prop_assert_eq!(gte, holds(e, Op::Lte, a));
        if gte && lte {
            prop_assert!(holds(a, Op::Eq, e));
        }
        let comparable = matches!((a, e), (Some(Value::Number(_)), Some(Value::Number(_))) | (Some(Value::String(_)), Some(Value::String(_))));
        prop_assert_eq!(comparable, gte || lt);
    }

    #[test]
    fn contains_finds_every_element_and_substring(items in prop::collection::vec(json_value(), 1..5), pick in any::<usize>(), s in "[a-c]{0,6}", start in 0usize..7, len in 0usize..7) {
        let element = &items[pick % items.len()];
        prop_assert!(holds(Some(&Value::Array(items.clone())), Op::Contains, Some(element)));
        let start = start.min(s.len());
        let end = (start + len).min(s.len());
        let part = Value::from(&s[start..end]);
        prop_assert!(holds(Some(&Value::from(s.as_str())), Op::Contains, Some(&part)));
    }
}
