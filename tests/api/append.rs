//! Append (CONTRACT.md 14): `POST /pins/{id}/append` and `/pins/by-key/{key}/append` grow a
//! chart, table, timeline, list or scatter chart, drop the oldest entries beyond `max_*` or
//! the type's cap, refuse a bad item at its path in the request writing nothing, and make
//! one version and one `pin.updated` event each, atomically under concurrency.

use reqwest::Method;
use serde_json::{json, Value};

use crate::{both_stores, datasets::iso_ms, helpers::*};

/// A line-chart configuration: two labels, series `p50` and `p95`.
pub fn line_chart() -> Value {
    json!({
        "labels": ["Mon", "Tue"],
        "series": [{"name": "p50", "data": [120, 130]}, {"name": "p95", "data": [300, 310]}],
        "y_label": "ms"
    })
}

/// A flexible-table configuration with rows `r1` and `r2`.
fn table() -> Value {
    json!({
        "columns": [{"id": "name", "name": "Name", "type": "text"}, {"id": "n", "name": "N", "type": "number"}],
        "rows": [{"id": "r1", "cells": {"name": "a", "n": 1}}, {"id": "r2", "cells": {"name": "b", "n": 2}}]
    })
}

/// Creates a pin of `pin_type` with `config` (and `key`, when given) and returns its id.
pub async fn new_pin(app: &TestApp, pin_type: &str, config: Value, key: Option<&str>) -> String {
    let mut body =
        json!({"pin_type": pin_type, "pin_config": config, "metadata": {"title": pin_type}});
    if let Some(key) = key {
        body["key"] = json!(key);
    }
    app.create_pin(&body).await["pin_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn append(app: &TestApp, id: &str, body: &Value) -> Resp {
    app.post(&format!("/v1/pins/{id}/append"), body).await
}

async fn append_by_key(app: &TestApp, key: &str, body: &Value) -> Resp {
    app.post(&format!("/v1/pins/by-key/{key}/append"), body)
        .await
}

async fn read(app: &TestApp, id: &str) -> Value {
    app.get(&format!("/v1/pins/{id}"))
        .await
        .expect(200)
        .data()
        .clone()
}

/// Asserts a successful append's answer, `{id, updated_at, version, size}`, against the
/// stored pin; returns the stored configuration.
async fn appended(app: &TestApp, res: Resp, id: &str, version: i64, size: u64) -> Value {
    let res = res.expect(200);
    let data = res.data().as_object().unwrap();
    let mut fields: Vec<&str> = data.keys().map(String::as_str).collect();
    fields.sort_unstable();
    assert_eq!(
        fields,
        ["id", "size", "updated_at", "version"],
        "{}",
        res.body
    );
    assert_eq!(data["id"], json!(id));
    assert_eq!(data["version"], json!(version));
    assert_eq!(data["size"], json!(size));
    let stored = read(app, id).await;
    assert_eq!(stored["version"], json!(version));
    assert_eq!(
        data["updated_at"].as_i64(),
        Some(iso_ms(&stored["updated_at"])),
        "epoch ms"
    );
    stored["pin_config"].clone()
}

/// The numbers of a JSON array (`null` as `None`): a stored 5.0 equals a sent 5.
fn numbers(values: &Value) -> Vec<Option<f64>> {
    values
        .as_array()
        .unwrap_or_else(|| panic!("no array: {values}"))
        .iter()
        .map(Value::as_f64)
        .collect()
}

/// The `(x, y)` of a scatter series' points.
fn xy(points: &Value) -> Vec<(f64, f64)> {
    points
        .as_array()
        .unwrap_or_else(|| panic!("no array: {points}"))
        .iter()
        .map(|p| (p["x"].as_f64().unwrap(), p["y"].as_f64().unwrap()))
        .collect()
}

/// Asserts a 400 `VALIDATION_FAILED` naming `field`.
#[track_caller]
fn refused_at(res: Resp, field: &str) {
    res.expect_error(400, "VALIDATION_FAILED", Some(field));
}

/// Asserts that pin `id` is still at version 1 with `config`.
async fn unchanged(app: &TestApp, id: &str, config: &Value) {
    let stored = read(app, id).await;
    assert_eq!(stored["version"], json!(1), "nothing written");
    assert_eq!(&stored["pin_config"], config, "nothing written");
}

both_stores! {
    async fn a_line_chart_point_adds_a_label_and_a_value_to_every_series(app) {
        let id = new_pin(&app, "line-chart", line_chart(), Some("latency")).await;
        let body = json!({"points": [{"label": "Wed", "values": {"p95": 305.5, "p50": 125}}]});
        let config = appended(&app, append(&app, &id, &body).await, &id, 2, 3).await;
        assert_eq!(config["labels"], json!(["Mon", "Tue", "Wed"]));
        assert_eq!(config["series"][0]["name"], json!("p50"));
        assert_eq!(numbers(&config["series"][0]["data"]), [Some(120.0), Some(130.0), Some(125.0)]);
        assert_eq!(config["series"][1]["name"], json!("p95"));
        assert_eq!(numbers(&config["series"][1]["data"]), [Some(300.0), Some(310.0), Some(305.5)]);
        assert_eq!(config["y_label"], json!("ms"));

        let two = json!({"points": [
            {"label": "Thu", "values": {"p50": 1, "p95": 2}},
            {"label": "Fri", "values": {"p50": 3, "p95": 4}}
        ]});
        let config = appended(&app, append_by_key(&app, "latency", &two).await, &id, 3, 5).await;
        assert_eq!(config["labels"], json!(["Mon", "Tue", "Wed", "Thu", "Fri"]));

        // max_points keeps the newest.
        let capped = json!({"points": [{"label": "Sat", "values": {"p50": 5, "p95": 6}}], "max_points": 3});
        let config = appended(&app, append(&app, &id, &capped).await, &id, 4, 3).await;
        assert_eq!(config["labels"], json!(["Thu", "Fri", "Sat"]));
        assert_eq!(numbers(&config["series"][0]["data"]), [Some(1.0), Some(3.0), Some(5.0)]);
        assert_eq!(numbers(&config["series"][1]["data"]), [Some(2.0), Some(4.0), Some(6.0)]);
        assert_eq!(config["y_label"], json!("ms"));
    }

    async fn area_and_bar_charts_take_points_too(app) {
        let area = json!({"labels": ["Q1", "Q2"], "series": [{"name": "Free", "data": [9, 11]}]});
        let id = new_pin(&app, "area-chart", area, None).await;
        let body = json!({"points": [{"label": "Q3", "values": {"Free": 13}}], "max_points": 2});
        let config = appended(&app, append(&app, &id, &body).await, &id, 2, 2).await;
        assert_eq!(config["labels"], json!(["Q2", "Q3"]));
        assert_eq!(numbers(&config["series"][0]["data"]), [Some(11.0), Some(13.0)]);

        let bar = json!({"labels": ["EU"], "series": [{"name": "2024", "data": [40]}, {"name": "2025", "data": [48]}], "stacked": true});
        let id = new_pin(&app, "bar-chart", bar, Some("regions")).await;
        let body = json!({"points": [{"label": "US", "values": {"2024": 55, "2025": 60}}]});
        let config = appended(&app, append_by_key(&app, "regions", &body).await, &id, 2, 2).await;
        assert_eq!(config["labels"], json!(["EU", "US"]));
        assert_eq!(numbers(&config["series"][1]["data"]), [Some(48.0), Some(60.0)]);
        assert_eq!(config["stacked"], json!(true));
    }

    async fn a_bad_chart_point_is_refused_at_its_path_and_nothing_is_written(app) {
        let id = new_pin(&app, "line-chart", line_chart(), None).await;
        let point = |values: Value| json!({"points": [{"label": "Wed", "values": values}]});
        refused_at(append(&app, &id, &point(json!({"p50": 1, "p95": "fast"}))).await, "points[0].values.p95");
        refused_at(append(&app, &id, &point(json!({"p50": 1}))).await, "points[0].values.p95");
        refused_at(append(&app, &id, &point(json!({"p50": 1, "p95": 2, "p99": 3}))).await, "points[0].values.p99");
        let second_bad = json!({"points": [
            {"label": "Wed", "values": {"p50": 1, "p95": 2}},
            {"label": "Thu", "values": {"p50": true, "p95": 2}}
        ]});
        refused_at(append(&app, &id, &second_bad).await, "points[1].values.p50");
        let long_label = json!({"points": [{"label": "x".repeat(201), "values": {"p50": 1, "p95": 2}}]});
        refused_at(append(&app, &id, &long_label).await, "points[0].label");
        let good = point(json!({"p50": 1, "p95": 2}));
        for max in [json!(0), json!(1001), json!("3")] {
            let mut body = good.clone();
            body["max_points"] = max;
            refused_at(append(&app, &id, &body).await, "max_points");
        }
        append(&app, &id, &json!({"points": []})).await.expect_error(400, "VALIDATION_FAILED", None);
        append(&app, &id, &json!({})).await.expect_error(400, "VALIDATION_FAILED", None);
        let rows = json!({"rows": [{"id": "r1", "cells": {}}]});
        refused_at(append(&app, &id, &rows).await, "rows");
        unchanged(&app, &id, &line_chart()).await;
    }

    async fn table_rows_replace_by_id_in_place_and_new_rows_go_last(app) {
        let id = new_pin(&app, "flexible-table", table(), Some("stock")).await;
        let body = json!({"rows": [
            {"id": "r3", "cells": {"name": "c", "n": 3}},
            {"id": "r1", "cells": {"name": "a2", "n": 10}}
        ]});
        let config = appended(&app, append(&app, &id, &body).await, &id, 2, 3).await;
        assert_eq!(config["rows"], json!([
            {"id": "r1", "cells": {"name": "a2", "n": 10}},
            {"id": "r2", "cells": {"name": "b", "n": 2}},
            {"id": "r3", "cells": {"name": "c", "n": 3}}
        ]));
        assert_eq!(config["columns"], table()["columns"]);

        let capped = json!({"rows": [{"id": "r4", "cells": {"n": 4}}], "max_rows": 2});
        let config = appended(&app, append_by_key(&app, "stock", &capped).await, &id, 3, 2).await;
        assert_eq!(config["rows"], json!([
            {"id": "r3", "cells": {"name": "c", "n": 3}},
            {"id": "r4", "cells": {"n": 4}}
        ]));

        let before = read(&app, &id).await;
        let bad = |cells: Value| json!({"rows": [{"id": "r5", "cells": {"n": 5}}, {"id": "r6", "cells": cells}]});
        refused_at(append(&app, &id, &bad(json!({"n": "ten"}))).await, "rows[1].cells.n");
        refused_at(append(&app, &id, &bad(json!({"nope": 1}))).await, "rows[1].cells.nope");
        refused_at(append(&app, &id, &json!({"rows": [{"id": "r5", "cells": {}}], "max_rows": 0})).await, "max_rows");
        refused_at(append(&app, &id, &json!({"points": [{"label": "x", "values": {}}]})).await, "points");
        assert_eq!(read(&app, &id).await, before, "nothing written");
    }

    async fn timeline_events_append_and_keep_the_newest(app) {
        let timeline = json!({"events": [{"time": "2024-03-01", "title": "Start"}, {"time": "2024-03-02", "title": "Build"}]});
        let id = new_pin(&app, "timeline", timeline.clone(), None).await;
        let body = json!({"events": [{"time": "2024-03-03T09:30:00Z", "title": "Deploy", "status": "ok"}]});
        let config = appended(&app, append(&app, &id, &body).await, &id, 2, 3).await;
        assert_eq!(config["events"][2], json!({"time": "2024-03-03T09:30:00Z", "title": "Deploy", "status": "ok"}));
        assert_eq!(config["events"][0]["title"], json!("Start"));

        let capped = json!({"events": [{"time": "2024-03-04", "title": "Incident", "status": "error"}], "max_events": 2});
        let config = appended(&app, append(&app, &id, &capped).await, &id, 3, 2).await;
        let titles: Vec<&Value> = config["events"].as_array().unwrap().iter().map(|e| &e["title"]).collect();
        assert_eq!(titles, [&json!("Deploy"), &json!("Incident")]);

        let before = read(&app, &id).await;
        let bad = json!({"events": [{"time": "2024-03-05", "title": "ok"}, {"time": "yesterday", "title": "bad"}]});
        refused_at(append(&app, &id, &bad).await, "events[1].time");
        let long = json!({"events": [{"time": "2024-03-05", "title": "x".repeat(201)}]});
        refused_at(append(&app, &id, &long).await, "events[0].title");
        refused_at(append(&app, &id, &json!({"events": [{"time": "2024-03-05", "title": "t"}], "max_events": 501})).await, "max_events");
        assert_eq!(read(&app, &id).await, before, "nothing written");
    }

    async fn list_items_append_up_to_the_type_cap(app) {
        let id = new_pin(&app, "list", json!({"items": [{"text": "one"}, {"text": "two"}]}), Some("todo")).await;
        let body = json!({"items": [{"text": "three", "checked": false}, {"text": "four", "url": "https://example.com/4"}]});
        let config = appended(&app, append_by_key(&app, "todo", &body).await, &id, 2, 4).await;
        assert_eq!(config["items"], json!([
            {"text": "one"}, {"text": "two"}, {"text": "three", "checked": false},
            {"text": "four", "url": "https://example.com/4"}
        ]));
        let capped = json!({"items": [{"text": "five"}], "max_items": 1});
        let config = appended(&app, append(&app, &id, &capped).await, &id, 3, 1).await;
        assert_eq!(config["items"], json!([{"text": "five"}]));
        let before = read(&app, &id).await;
        refused_at(append(&app, &id, &json!({"items": [{"text": "t", "url": "javascript:alert(1)"}]})).await, "items[0].url");
        refused_at(append(&app, &id, &json!({"items": [{"text": "t"}, {"txt": "t"}]})).await, "items[1].txt");
        assert_eq!(read(&app, &id).await, before, "nothing written");

        // A full list (500 items, the type's cap) drops its oldest: an append never fails for size.
        let full: Vec<Value> = (0..500).map(|i| json!({"text": format!("item {i}")})).collect();
        let id = new_pin(&app, "list", json!({ "items": full }), None).await;
        let config = appended(&app, append(&app, &id, &json!({"items": [{"text": "newest"}]})).await, &id, 2, 500).await;
        let items = config["items"].as_array().unwrap();
        assert_eq!(items.len(), 500);
        assert_eq!(items[0], json!({"text": "item 1"}));
        assert_eq!(items[499], json!({"text": "newest"}));
    }

    async fn scatter_points_join_their_series(app) {
        let scatter = json!({"series": [
            {"name": "Requests", "points": [{"x": 1, "y": 120}, {"x": 2, "y": 180}]},
            {"name": "Errors", "points": [{"x": 1, "y": 3}]}
        ]});
        let id = new_pin(&app, "scatter-chart", scatter, None).await;
        let body = json!({"points": {"Errors": [{"x": 2, "y": 5}, {"x": 3, "y": 4}]}});
        // size: every point of every series.
        let config = appended(&app, append(&app, &id, &body).await, &id, 2, 5).await;
        assert_eq!(xy(&config["series"][0]["points"]), [(1.0, 120.0), (2.0, 180.0)]);
        assert_eq!(config["series"][1]["name"], json!("Errors"));
        assert_eq!(xy(&config["series"][1]["points"]), [(1.0, 3.0), (2.0, 5.0), (3.0, 4.0)]);
        let before = read(&app, &id).await;
        refused_at(append(&app, &id, &json!({"points": {"Requests": [{"x": 3, "y": "high"}]}})).await, "points.Requests[0].y");
        refused_at(append(&app, &id, &json!({"points": {"Requests": [{"x": 3}]}})).await, "points.Requests[0].y");
        assert_eq!(read(&app, &id).await, before, "nothing written");
    }

    async fn other_pin_types_unknown_pins_and_other_callers_are_refused(app) {
        let cards = app.create_pin(&with_key(stat_cards("Cards"), "cards")).await;
        let cards_id = cards["pin_id"].as_str().unwrap();
        let body = json!({"items": [{"text": "x"}]});
        refused_at(append(&app, cards_id, &body).await, "pin_type");
        refused_at(append_by_key(&app, "cards", &body).await, "pin_type");
        unchanged(&app, cards_id, &cards["pin_config"]).await;
        let kpi = json!({"label": "p95", "value": 182.5, "sparkline": [1, 2]});
        let kpi_id = new_pin(&app, "kpi", kpi.clone(), None).await;
        refused_at(append(&app, &kpi_id, &json!({"points": [{"label": "x", "values": {}}]})).await, "pin_type");
        unchanged(&app, &kpi_id, &kpi).await;

        append(&app, "p-doesnotexist0000000000", &body).await.expect_error(404, "NOT_FOUND", None);
        append_by_key(&app, "nothing-here", &body).await.expect_error(404, "NOT_FOUND", None);
        let list = new_pin(&app, "list", json!({"items": []}), Some("todo")).await;
        let reader = app.key_with("pins:read").await;
        let path = format!("/v1/pins/{list}/append");
        call(&app, &reader, Method::POST, &path, Some(&body)).await.expect_error(403, "SCOPE_REQUIRED", None);
        let other = app.key_in("team-b", "*").await;
        call(&app, &other, Method::POST, &path, Some(&body)).await.expect_error(404, "NOT_FOUND", None);
        call(&app, &other, Method::POST, "/v1/pins/by-key/todo/append", Some(&body)).await
            .expect_error(404, "NOT_FOUND", None);
        unchanged(&app, &list, &json!({"items": []})).await;
        // Unprefixed, as every API path.
        let res = app.post(&format!("/pins/{list}/append"), &body).await;
        appended(&app, res, &list, 2, 1).await;
    }

    async fn each_append_is_one_version_and_one_event(app) {
        let id = new_pin(&app, "list", json!({"items": []}), Some("feed")).await;
        let mut stream = event_stream(&app).await;
        append(&app, &id, &json!({"items": [{"text": "a"}, {"text": "b"}]})).await.expect(200);
        append_by_key(&app, "feed", &json!({"items": [{"text": "c"}]})).await.expect(200);
        let events = stream.events(2).await;
        for (event, version) in events.iter().zip([2, 3]) {
            assert_eq!(event.event.as_deref(), Some("pin.updated"), "{event:?}");
            assert_eq!(event.data["id"], json!(id));
            assert_eq!(event.data["data"]["version"], json!(version));
        }
        assert_eq!(events[1].data["data"], read(&app, &id).await);
        let versions = app.get(&format!("/v1/pins/{id}/versions")).await.expect(200);
        let past: Vec<&Value> = versions.data().as_array().unwrap().iter().map(|v| &v["version"]).collect();
        assert_eq!(past, [&json!(2), &json!(1)]);
        assert_eq!(versions.data()[0]["pin_config"]["items"], json!([{"text": "a"}, {"text": "b"}]));
        // A refused append publishes nothing.
        append(&app, &id, &json!({"items": [{"text": 5}]})).await.expect(400);
        assert_no_event(&app, &mut stream).await;
    }

    async fn concurrent_appends_each_land_once(app) {
        let id = new_pin(&app, "flexible-table", table(), None).await;
        let appends = (0..20).map(|i| {
            let (app, id) = (&app, &id);
            async move {
                let row = json!({"rows": [{"id": format!("c{i}"), "cells": {"n": i}}]});
                append(app, id, &row).await
            }
        });
        let answers = futures::future::join_all(appends).await;
        let mut versions = Vec::new();
        let mut sizes = Vec::new();
        for answer in answers {
            let answer = answer.expect(200);
            versions.push(answer.data()["version"].as_i64().unwrap());
            sizes.push(answer.data()["size"].as_i64().unwrap());
        }
        versions.sort_unstable();
        sizes.sort_unstable();
        assert_eq!(versions, (2..=21).collect::<Vec<i64>>(), "each append its own version");
        assert_eq!(sizes, (3..=22).collect::<Vec<i64>>(), "each append saw the ones before it");
        let stored = read(&app, &id).await;
        assert_eq!(stored["version"], json!(21));
        let rows = stored["pin_config"]["rows"].as_array().unwrap();
        assert_eq!(rows.len(), 22);
        let mut ids: Vec<&str> = rows[2..].iter().map(|r| r["id"].as_str().unwrap()).collect();
        ids.sort_unstable();
        let mut expected: Vec<String> = (0..20).map(|i| format!("c{i}")).collect();
        expected.sort();
        assert_eq!(ids, expected);
        assert_eq!(rows[0]["id"], json!("r1"));
        assert_eq!(rows[1]["id"], json!("r2"));
    }
}
