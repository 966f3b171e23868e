//! The catalogue over HTTP: `GET /v1/pin-types`, every example accepted as a pin, and a wrong
//! variant of every type refused with `PIN_CONFIG_INVALID` at its exact location.

use serde_json::{json, Value};

use crate::both_stores;

const TYPES: [&str; 18] = [
    "stat-cards",
    "kpi",
    "line-chart",
    "area-chart",
    "bar-chart",
    "pie-chart",
    "scatter-chart",
    "heatmap",
    "gauge",
    "progress",
    "flexible-table",
    "markdown",
    "json",
    "code",
    "image",
    "list",
    "timeline",
    "status-grid",
];

fn wrong_variants() -> Vec<(&'static str, Value, &'static str)> {
    vec![
        (
            "stat-cards",
            json!({"cards": [{"title": "a", "value": "1", "trend": "sideways"}]}),
            "pin_config.cards[0].trend",
        ),
        (
            "kpi",
            json!({"label": "x", "value": 1, "trend": "sideways"}),
            "pin_config.trend",
        ),
        (
            "line-chart",
            json!({"labels": ["a", "b"], "series": [{"name": "s", "data": [1]}]}),
            "pin_config.series[0].data",
        ),
        (
            "area-chart",
            json!({"labels": ["a"], "series": [{"name": "s", "data": [1]}, {"name": "t", "data": [1, 2]}]}),
            "pin_config.series[1].data",
        ),
        (
            "bar-chart",
            json!({"labels": ["a"], "series": [{"name": "s", "data": [1]}], "stacked": "yes"}),
            "pin_config.stacked",
        ),
        (
            "pie-chart",
            json!({"slices": [{"label": "a", "value": -1}]}),
            "pin_config.slices[0].value",
        ),
        (
            "scatter-chart",
            json!({"series": [{"name": "s", "points": [{"x": 1}]}]}),
            "pin_config.series[0].points[0].y",
        ),
        (
            "gauge",
            json!({"value": 5, "min": 10, "max": 1}),
            "pin_config.max",
        ),
        (
            "progress",
            json!({"items": [{"label": "a", "value": 1, "max": 0}]}),
            "pin_config.items[0].max",
        ),
        (
            "flexible-table",
            json!({"columns": [{"id": "n", "name": "N", "type": "number"}], "rows": [{"id": "r", "cells": {"n": "1"}}]}),
            "pin_config.rows[0].cells.n",
        ),
        ("markdown", json!({"text": 5}), "pin_config.text"),
        ("json", json!({"data": 1, "extra": 2}), "pin_config.extra"),
        ("code", json!({"language": "rust"}), "pin_config.code"),
        (
            "image",
            json!({"url": "javascript:alert(1)"}),
            "pin_config.url",
        ),
        (
            "list",
            json!({"items": [{"text": "a", "url": "ftp://x"}]}),
            "pin_config.items[0].url",
        ),
        (
            "timeline",
            json!({"events": [{"time": "yesterday", "title": "x"}]}),
            "pin_config.events[0].time",
        ),
        (
            "status-grid",
            json!({"items": [{"name": "a", "status": "meh"}]}),
            "pin_config.items[0].status",
        ),
    ]
}

both_stores! {
    async fn the_catalogue_lists_every_type_with_schema_and_example(app) {
        let r = app.get("/v1/pin-types").await.expect(200);
        let entries = r.data().as_array().unwrap();
        let names: Vec<&str> = entries.iter().map(|e| e["pin_type"].as_str().unwrap()).collect();
        assert_eq!(names, TYPES);
        for entry in entries {
            assert_eq!(entry["schema"]["type"], json!("object"), "{entry}");
            assert_eq!(entry["schema"]["additionalProperties"], json!(false), "{entry}");
            assert!(!entry["description"].as_str().unwrap().is_empty());
            assert!(entry["example"].is_object());
        }
        // The catalogue needs a credential like every API path.
        let anonymous = app.send(app.client.get(format!("{}/v1/pin-types", app.base))).await;
        assert_eq!(anonymous.status, 401);
    }

    async fn every_example_is_accepted_and_stored_as_sent(app) {
        let r = app.get("/v1/pin-types").await.expect(200);
        for entry in r.data().as_array().unwrap() {
            let body = json!({"pin_type": entry["pin_type"], "pin_config": entry["example"]});
            let created = app.post("/v1/pins", &body).await;
            assert_eq!(created.status, 200, "{}: {}", entry["pin_type"], created.body);
            let id = created.data()["pin_id"].as_str().unwrap();
            let read = app.get(&format!("/v1/pins/{id}")).await.expect(200);
            assert_eq!(read.data()["pin_config"], entry["example"]);
        }
    }

    async fn a_wrong_variant_of_every_type_names_type_and_location(app) {
        let cases = wrong_variants();
        assert_eq!(cases.len(), TYPES.len() - 1, "every type but heatmap (below) has a case");
        for (pin_type, config, field) in cases {
            let r = app.post("/v1/pins", &json!({"pin_type": pin_type, "pin_config": config})).await;
            let r = r.expect_error(400, "PIN_CONFIG_INVALID", Some(field));
            let message = r.body["error"]["message"].as_str().unwrap();
            assert!(message.contains(pin_type) && message.contains(field), "{message}");
            assert!(r.body["error"]["details"]["expected"].as_str().is_some_and(|e| !e.is_empty()));
        }
        let heatmap = json!({"pin_type": "heatmap", "pin_config": {"x_labels": ["a", "b"], "y_labels": ["r"], "values": [[1]]}});
        let r = app.post("/v1/pins", &heatmap).await.expect_error(400, "PIN_CONFIG_INVALID", None);
        assert!(r.body["error"]["details"]["field"].as_str().unwrap().starts_with("pin_config.values"));
        assert_eq!(app.get("/v1/pins").await.expect(200).data(), &json!([]));
    }

    async fn unknown_keys_are_refused_in_every_type(app) {
        let r = app.get("/v1/pin-types").await.expect(200);
        for entry in r.data().as_array().unwrap() {
            let mut config = entry["example"].clone();
            config["colour"] = json!("red");
            let body = json!({"pin_type": entry["pin_type"], "pin_config": config});
            app.post("/v1/pins", &body).await.expect_error(400, "PIN_CONFIG_INVALID", Some("pin_config.colour"));
        }
    }

    async fn an_unknown_type_lists_all_eighteen(app) {
        let r = app
            .post("/v1/pins", &json!({"pin_type": "sparkle", "pin_config": {}}))
            .await
            .expect_error(400, "VALIDATION_FAILED", Some("pin_type"));
        let expected = r.body["error"]["details"]["expected"].as_str().unwrap();
        for name in TYPES {
            assert!(expected.contains(name), "{expected} lacks {name}");
        }
    }
}
