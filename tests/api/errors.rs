//! The error envelope everywhere: routing errors, body errors (media type, size, JSON
//! syntax, nesting), validation of create bodies with the exact `details.field`, and
//! `PIN_CONFIG_INVALID` for configurations that don't fit their pin type.

use reqwest::{header::CONTENT_TYPE, Method};
use serde_json::{json, Value};

use crate::{
    both_stores,
    helpers::{stat_cards, table_config, Resp, TestApp},
};

/// `POST /v1/pins` with `body` as raw bytes and the given content type (none if `None`).
async fn post_raw(app: &TestApp, path: &str, content_type: Option<&str>, body: Vec<u8>) -> Resp {
    let mut req = app.req(Method::POST, path).body(body);
    if let Some(ct) = content_type {
        req = req.header(CONTENT_TYPE, ct);
    }
    app.send(req).await
}

/// Asserts that the workspace holds no pin at all (nothing was stored by a refused request).
async fn assert_no_pins(app: &TestApp) {
    let list = app.get("/v1/pins").await.expect(200);
    assert_eq!(list.data(), &json!([]), "body: {}", list.body);
}

/// Asserts the response is a JSON document (never HTML or an empty body).
#[track_caller]
fn assert_json(resp: &Resp) {
    let ct = resp.header("content-type").unwrap_or("");
    assert!(
        ct.starts_with("application/json"),
        "content-type {ct:?}; body: {}",
        resp.body
    );
}

/// A create body (shape A) with this `pin_config`.
fn with_config(pin_type: &str, config: Value) -> Value {
    json!({"pin_type": pin_type, "pin_config": config})
}

/// A stat-cards create body whose only card is `card`.
fn one_card(card: Value) -> Value {
    with_config("stat-cards", json!({"cards": [card]}))
}

/// A flexible-table create body over columns `name` (text), `n` (number), `day` (date),
/// `site` (link) with one row holding `cells`.
fn table_row(cells: Value) -> Value {
    with_config(
        "flexible-table",
        json!({
            "columns": [
                {"id": "name", "name": "Name", "type": "text"},
                {"id": "n", "name": "N", "type": "number"},
                {"id": "day", "name": "Day", "type": "date"},
                {"id": "site", "name": "Site", "type": "link"}
            ],
            "rows": [{"id": "r1", "cells": cells}]
        }),
    )
}

/// Asserts a 400 `PIN_CONFIG_INVALID` at `field` whose message names the type and the field.
#[track_caller]
fn assert_config_invalid(resp: Resp, field: &str, pin_type: &str) {
    let resp = resp.expect_error(400, "PIN_CONFIG_INVALID", Some(field));
    let message = resp.body["error"]["message"].as_str().unwrap_or("");
    assert!(message.contains(pin_type), "message: {message}");
    assert!(message.contains(field), "message: {message}");
    assert!(
        resp.body["error"]["details"]["expected"].is_string(),
        "body: {}",
        resp.body
    );
}

/// Asserts a 400 `VALIDATION_FAILED` at `field` with a non-empty `details.expected`.
#[track_caller]
fn assert_invalid(resp: Resp, field: &str) -> Resp {
    let resp = resp.expect_error(400, "VALIDATION_FAILED", Some(field));
    let expected = resp.body["error"]["details"]["expected"]
        .as_str()
        .unwrap_or("");
    assert!(!expected.is_empty(), "body: {}", resp.body);
    resp
}

/// JSON text nested `depth` deep in total: a create body whose card `description` is a
/// stack of arrays (the body object, `pin_config`, `cards` and the card are 4 levels).
fn nested_body(depth: usize) -> String {
    let arrays = depth - 4;
    format!(
        r#"{{"pin_type":"stat-cards","pin_config":{{"cards":[{{"title":"t","value":"v","description":{}{}}}]}}}}"#,
        "[".repeat(arrays),
        "]".repeat(arrays)
    )
}

/// A valid create body of exactly `len` bytes (JSON padded with trailing whitespace).
fn body_of_len(len: usize) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(&stat_cards("padded")).unwrap();
    assert!(len >= bytes.len(), "{len} < {}", bytes.len());
    bytes.resize(len, b' ');
    bytes
}

/// The body limit against a server configured with `body_bytes = 1000`.
async fn small_body_limit(app: TestApp) {
    let at_limit = post_raw(
        &app,
        "/v1/pins",
        Some("application/json"),
        body_of_len(1000),
    )
    .await;
    at_limit.expect(200);
    let over = post_raw(
        &app,
        "/v1/pins",
        Some("application/json"),
        body_of_len(1001),
    )
    .await;
    let over = over.expect_error(413, "PAYLOAD_TOO_LARGE", None);
    assert_eq!(over.body["error"]["details"]["limit_bytes"], json!(1000));
    // The limit holds on every body-taking route.
    let big = serde_json::to_vec(&json!({"pin_ids": vec!["p-x".repeat(100); 10]})).unwrap();
    assert!(big.len() > 1000);
    post_raw(&app, "/v1/pins/batch/get", Some("application/json"), big)
        .await
        .expect_error(413, "PAYLOAD_TOO_LARGE", None);
    let list = app.get("/v1/pins").await.expect(200);
    assert_eq!(list.data().as_array().map(Vec::len), Some(1));
    // Size comes before the rate limit and the scope (docs/API-DESIGN.md): a read-only key's
    // oversized create is a 413, and it is not charged (no rate-limit headers).
    let reader = app.key_with("pins:read").await;
    let refused = app
        .send(
            app.client
                .post(format!("{}/v1/pins", app.base))
                .bearer_auth(&reader)
                .header(CONTENT_TYPE, "application/json")
                .body(body_of_len(1001)),
        )
        .await
        .expect_error(413, "PAYLOAD_TOO_LARGE", None);
    assert!(refused.header("x-ratelimit-remaining-minute").is_none());
    let small = app
        .send(
            app.client
                .post(format!("{}/v1/pins", app.base))
                .bearer_auth(&reader)
                .json(&stat_cards("no scope")),
        )
        .await;
    small.expect_error(403, "SCOPE_REQUIRED", None);
}

#[tokio::test]
async fn small_body_limit_sqlite() {
    small_body_limit(TestApp::sqlite_with("[limits]\nbody_bytes = 1000").await).await;
}

#[tokio::test]
async fn small_body_limit_postgres() {
    crate::skip_without_postgres!();
    small_body_limit(TestApp::postgres_with("[limits]\nbody_bytes = 1000").await).await;
}

both_stores! {
    async fn unknown_routes_are_404_envelopes(app) {
        for path in ["/v1/nope", "/nope", "/v1/pins/p-x/nope", "/pins/p-x/nope", "/v2/pins", "/v1"] {
            let resp = app.get(path).await;
            assert_eq!(resp.status, 404, "{path}: {}", resp.body);
            assert_json(&resp);
            resp.expect_error(404, "NOT_FOUND", None);
        }
        let resp = app.post("/v1/nope", &json!({})).await;
        resp.expect_error(404, "NOT_FOUND", None);
        // The envelope also comes back without any credential.
        let anon = app.client.get(format!("{}/v1/does-not-exist", app.base)).send().await.unwrap();
        assert_eq!(anon.status().as_u16(), 404);
        let body: Value = anon.json().await.expect("JSON error body");
        assert_eq!(body["success"], json!(false));
        assert_eq!(body["error"]["code"], json!("NOT_FOUND"));
    }

    async fn wrong_methods_are_405_envelopes(app) {
        let id = app.create_pin(&stat_cards("x")).await["pin_id"].as_str().unwrap().to_owned();
        let cases = [
            (Method::DELETE, "/v1/pins".to_owned()),
            (Method::PUT, "/pins".to_owned()),
            (Method::PATCH, "/v1/pins".to_owned()),
            (Method::GET, "/v1/pins/batch/get".to_owned()),
            (Method::DELETE, "/v1/pins/batch/delete".to_owned()),
            (Method::POST, format!("/v1/pins/{id}")),
            (Method::POST, format!("/pins/{id}")),
            (Method::DELETE, format!("/v1/pins/{id}/versions")),
        ];
        for (method, path) in cases {
            let resp = app.send(app.req(method.clone(), &path)).await;
            assert_eq!(resp.status, 405, "{method} {path}: {}", resp.body);
            assert_json(&resp);
            resp.expect_error(405, "METHOD_NOT_ALLOWED", None);
        }
        // None of those touched the pin.
        let read = app.get(&format!("/v1/pins/{id}")).await.expect(200);
        assert_eq!(read.data()["version"], json!(1));
    }

    async fn malformed_json_is_400_validation_failed(app) {
        for text in [r#"{"pin_type": "stat-cards","#, "not json", "", r#"{"a":1} trailing"#] {
            let resp = post_raw(&app, "/v1/pins", Some("application/json"), text.into()).await;
            assert_eq!(resp.status, 400, "{text:?}: {}", resp.body);
            assert_json(&resp);
            assert_invalid(resp, "body");
        }
        let id = app.create_pin(&stat_cards("x")).await["pin_id"].as_str().unwrap().to_owned();
        for method in [Method::PUT, Method::PATCH] {
            let req = app
                .req(method, &format!("/v1/pins/{id}"))
                .header(CONTENT_TYPE, "application/json")
                .body("{\"metadata\": {");
            assert_invalid(app.send(req).await, "body");
        }
        for path in ["/v1/pins/batch", "/v1/pins/batch/get", "/v1/pins/batch/update", "/v1/pins/batch/delete"] {
            let resp = post_raw(&app, path, Some("application/json"), b"[1,".to_vec()).await;
            assert_eq!(resp.status, 400, "{path}: {}", resp.body);
            assert_invalid(resp, "body");
        }
        let read = app.get(&format!("/v1/pins/{id}")).await.expect(200);
        assert_eq!(read.data()["version"], json!(1));
        assert_eq!(app.get("/v1/pins").await.expect(200).data().as_array().map(Vec::len), Some(1));
    }

    async fn wrong_content_type_is_415(app) {
        let body = serde_json::to_vec(&stat_cards("x")).unwrap();
        for ct in [None, Some("text/plain"), Some("application/x-www-form-urlencoded"), Some("application/jsonx")] {
            let resp = post_raw(&app, "/v1/pins", ct, body.clone()).await;
            assert_eq!(resp.status, 415, "{ct:?}: {}", resp.body);
            assert_json(&resp);
            resp.expect_error(415, "UNSUPPORTED_MEDIA_TYPE", None);
        }
        for path in ["/v1/pins/batch", "/v1/pins/batch/get", "/v1/pins/batch/update", "/v1/pins/batch/delete"] {
            let resp = post_raw(&app, path, Some("text/plain"), b"{}".to_vec()).await;
            assert_eq!(resp.status, 415, "{path}: {}", resp.body);
            resp.expect_error(415, "UNSUPPORTED_MEDIA_TYPE", None);
        }
        assert_no_pins(&app).await;
        // JSON with parameters, in any case, is JSON.
        let resp = post_raw(&app, "/v1/pins", Some("Application/JSON; charset=utf-8"), body).await;
        let id = resp.expect(200).data()["pin_id"].as_str().unwrap().to_owned();
        let req = app
            .req(Method::PATCH, &format!("/v1/pins/{id}"))
            .header(CONTENT_TYPE, "text/plain")
            .body(r#"{"metadata": {"title": "changed"}}"#);
        app.send(req).await.expect_error(415, "UNSUPPORTED_MEDIA_TYPE", None);
        let read = app.get(&format!("/v1/pins/{id}")).await.expect(200);
        assert_eq!(read.data()["metadata"]["title"], json!("x"));
    }

    async fn body_over_one_mib_is_413(app) {
        let limit = 1024 * 1024;
        let mut body = stat_cards("big");
        body["metadata"]["title"] = json!("t".repeat(limit));
        let bytes = serde_json::to_vec(&body).unwrap();
        assert!(bytes.len() > limit);
        let resp = post_raw(&app, "/v1/pins", Some("application/json"), bytes).await;
        assert_json(&resp);
        let resp = resp.expect_error(413, "PAYLOAD_TOO_LARGE", None);
        assert_eq!(resp.body["error"]["details"]["limit_bytes"], json!(limit));
        assert_no_pins(&app).await;
    }

    async fn json_nested_deeper_than_32_is_400(app) {
        let resp = post_raw(&app, "/v1/pins", Some("application/json"), nested_body(33).into()).await;
        let resp = assert_invalid(resp, "body");
        let expected = resp.body["error"]["details"]["expected"].as_str().unwrap();
        assert!(expected.contains("32"), "expected: {expected}");
        // 32 deep passes the nesting limit and fails on the field instead.
        let resp = post_raw(&app, "/v1/pins", Some("application/json"), nested_body(32).into()).await;
        assert_config_invalid(resp, "pin_config.cards[0].description", "stat-cards");
        assert_no_pins(&app).await;
    }

    async fn pin_config_over_256_kib_is_400(app) {
        let limit = 256 * 1024;
        // A valid table serialised to exactly the limit is accepted; one byte more is not.
        let config = |len: usize| {
            let rows: Vec<Value> = (0..300)
                .map(|i| json!({"id": format!("r{i}"), "cells": {"name": "x".repeat(800)}}))
                .collect();
            let mut config = json!({
                "columns": [{"id": "name", "name": "Name", "type": "text"}],
                "rows": rows
            });
            let size = serde_json::to_string(&config).unwrap().len();
            let pad = len.checked_sub(size).expect("base config smaller than wanted");
            config["rows"][0]["cells"]["name"] = json!("x".repeat(800 + pad));
            assert_eq!(serde_json::to_string(&config).unwrap().len(), len);
            config
        };
        let over = app.post("/v1/pins", &with_config("flexible-table", config(limit + 1))).await;
        let over = assert_invalid(over, "pin_config");
        let expected = over.body["error"]["details"]["expected"].as_str().unwrap();
        assert!(expected.contains(&limit.to_string()), "expected: {expected}");
        let via_content = json!({"pin_type": "flexible-table", "content": config(limit + 1)});
        assert_invalid(app.post("/v1/pins", &via_content).await, "content");
        assert_no_pins(&app).await;
        app.post("/v1/pins", &with_config("flexible-table", config(limit))).await.expect(200);
        // Too big is checked before the type: an oversized invalid config is still a size error.
        let huge = one_card(json!({"title": "t", "value": "v".repeat(limit), "trend": "sideways"}));
        assert_invalid(app.post("/v1/pins", &huge).await, "pin_config");
    }

    async fn title_longer_than_200_chars_is_400(app) {
        let mut body = stat_cards("");
        body["metadata"]["title"] = json!("t".repeat(201));
        assert_invalid(app.post("/v1/pins", &body).await, "metadata.title");
        assert_no_pins(&app).await;
        // The limit counts characters, not bytes.
        body["metadata"]["title"] = json!("é".repeat(200));
        let created = app.create_pin(&body).await;
        assert_eq!(created["metadata"]["title"], json!("é".repeat(200)));
        let id = created["pin_id"].as_str().unwrap();
        let patch = json!({"metadata": {"title": "t".repeat(201)}});
        assert_invalid(app.patch(&format!("/v1/pins/{id}"), &patch).await, "metadata.title");
        let read = app.get(&format!("/v1/pins/{id}")).await.expect(200);
        assert_eq!(read.data()["metadata"]["title"], json!("é".repeat(200)));
        assert_eq!(read.data()["version"], json!(1));
    }

    async fn tag_limits_are_400_at_the_tag(app) {
        let mut body = stat_cards("tags");
        body["metadata"]["tags"] = json!((0..21).map(|i| format!("t{i}")).collect::<Vec<_>>());
        assert_invalid(app.post("/v1/pins", &body).await, "metadata.tags");
        body["metadata"]["tags"] = json!(["x".repeat(65)]);
        assert_invalid(app.post("/v1/pins", &body).await, "metadata.tags[0]");
        body["metadata"]["tags"] = json!(["ok", "x".repeat(65)]);
        assert_invalid(app.post("/v1/pins", &body).await, "metadata.tags[1]");
        body["metadata"]["tags"] = json!(["ok", 5]);
        assert_invalid(app.post("/v1/pins", &body).await, "metadata.tags[1]");
        assert_no_pins(&app).await;
        // Exactly at the limits is fine.
        let twenty: Vec<String> = (0..19).map(|i| format!("t{i}")).chain(["x".repeat(64)]).collect();
        body["metadata"]["tags"] = json!(twenty);
        let created = app.create_pin(&body).await;
        assert_eq!(created["metadata"]["tags"], json!(twenty));
    }

    async fn pin_type_is_required_and_must_be_known(app) {
        let missing = json!({"pin_config": stat_cards("x")["pin_config"]});
        assert_invalid(app.post("/v1/pins", &missing).await, "pin_type");
        let unknown = with_config("pie-in-the-sky", stat_cards("x")["pin_config"].clone());
        let resp = assert_invalid(app.post("/v1/pins", &unknown).await, "pin_type");
        let expected = resp.body["error"]["details"]["expected"].as_str().unwrap();
        for name in ["stat-cards", "flexible-table"] {
            assert!(expected.contains(name), "expected: {expected}");
        }
        let wrong_type = json!({"pin_type": 7, "pin_config": stat_cards("x")["pin_config"]});
        assert_invalid(app.post("/v1/pins", &wrong_type).await, "pin_type");
        // Names are exact.
        let upper = with_config("Stat-Cards", stat_cards("x")["pin_config"].clone());
        assert_invalid(app.post("/v1/pins", &upper).await, "pin_type");
        assert_no_pins(&app).await;
    }

    async fn configuration_is_required(app) {
        let resp = app.post("/v1/pins", &json!({"pin_type": "stat-cards"})).await;
        assert_invalid(resp, "pin_config");
        let resp = app.post("/v1/pins", &json!({"pin_type": "stat-cards", "pin_config": "cards"})).await;
        assert_config_invalid(resp, "pin_config", "stat-cards");
        assert_no_pins(&app).await;
    }

    async fn data_type_other_than_pin_card_is_400(app) {
        let config = stat_cards("x")["pin_config"].clone();
        for data_type in [json!("chart"), json!("PIN-CARD"), json!("")] {
            let body = json!({"data_type": data_type, "pin_type": "stat-cards", "content": config});
            assert_invalid(app.post("/v1/pins", &body).await, "data_type");
        }
        assert_no_pins(&app).await;
        let body = json!({"data_type": "pin-card", "pin_type": "stat-cards", "pin_layout": "1x1", "content": config});
        app.post("/v1/pins", &body).await.expect(200);
    }

    async fn bad_pin_layout_is_400(app) {
        for layout in ["5x1", "1x0", "abc", "0x0", "1x5", "1X1", "1x1x1", "", " 1x1", "11x1"] {
            let mut body = stat_cards("x");
            body["pin_layout"] = json!(layout);
            let resp = app.post("/v1/pins", &body).await;
            assert_eq!(resp.status, 400, "{layout:?}: {}", resp.body);
            assert_invalid(resp, "pin_layout");
        }
        assert_no_pins(&app).await;
        for layout in ["1x1", "4x4", "2x3"] {
            let mut body = stat_cards("x");
            body["pin_layout"] = json!(layout);
            assert_eq!(app.create_pin(&body).await["pin_layout"], json!(layout));
        }
        let id = app.create_pin(&stat_cards("y")).await["pin_id"].as_str().unwrap().to_owned();
        let resp = app.put(&format!("/v1/pins/{id}"), &json!({"pin_layout": "5x5"})).await;
        assert_invalid(resp, "pin_layout");
        let read = app.get(&format!("/v1/pins/{id}")).await.expect(200);
        assert_eq!(read.data()["pin_layout"], json!("1x1"));
    }

    async fn unknown_keys_are_400_at_the_key(app) {
        let mut body = stat_cards("x");
        body["colour"] = json!("red");
        assert_invalid(app.post("/v1/pins", &body).await, "colour");
        let mut body = stat_cards("x");
        body["metadata"]["subtitle"] = json!("typo");
        assert_invalid(app.post("/v1/pins", &body).await, "metadata.subtitle");
        assert_no_pins(&app).await;
        let id = app.create_pin(&stat_cards("x")).await["pin_id"].as_str().unwrap().to_owned();
        let resp = app.patch(&format!("/v1/pins/{id}"), &json!({"titel": "typo"})).await;
        assert_invalid(resp, "titel");
        let read = app.get(&format!("/v1/pins/{id}")).await.expect(200);
        assert_eq!(read.data()["version"], json!(1));
    }

    async fn stat_cards_config_errors_name_the_field(app) {
        let card = || json!({"title": "Revenue", "value": "$1", "change": "+4%", "trend": "up"});
        let mut sideways = card();
        sideways["trend"] = json!("sideways");
        let resp = app.post("/v1/pins", &one_card(sideways)).await;
        assert_config_invalid(resp, "pin_config.cards[0].trend", "stat-cards");

        let mut number = card();
        number["value"] = json!(1200);
        let resp = app.post("/v1/pins", &one_card(number)).await;
        assert_config_invalid(resp, "pin_config.cards[0].value", "stat-cards");

        for count in [0, 13] {
            let body = with_config("stat-cards", json!({"cards": vec![card(); count]}));
            let resp = app.post("/v1/pins", &body).await;
            assert_config_invalid(resp, "pin_config.cards", "stat-cards");
        }

        let mut extra = card();
        extra["colour"] = json!("red");
        let resp = app.post("/v1/pins", &one_card(extra)).await;
        assert_config_invalid(resp, "pin_config.cards[0].colour", "stat-cards");

        let mut untitled = card();
        untitled.as_object_mut().unwrap().remove("title");
        let resp = app.post("/v1/pins", &one_card(untitled)).await;
        assert_config_invalid(resp, "pin_config.cards[0].title", "stat-cards");

        // The failing card is located by index.
        let body = with_config("stat-cards", json!({"cards": [card(), card(), {"title": "x", "value": "y", "trend": "left"}]}));
        let resp = app.post("/v1/pins", &body).await;
        assert_config_invalid(resp, "pin_config.cards[2].trend", "stat-cards");
        assert_no_pins(&app).await;

        // Twelve cards and trend `flat` are fine.
        let mut flat = card();
        flat["trend"] = json!("flat");
        let body = with_config("stat-cards", json!({"cards": vec![flat; 12]}));
        app.post("/v1/pins", &body).await.expect(200);
    }

    async fn flexible_table_config_errors_name_the_field(app) {
        let body = with_config("flexible-table", json!({
            "columns": [{"id": "a", "name": "A", "type": "text"}, {"id": "a", "name": "B", "type": "number"}],
            "rows": []
        }));
        let resp = app.post("/v1/pins", &body).await;
        assert_config_invalid(resp, "pin_config.columns[1].id", "flexible-table");

        let resp = app.post("/v1/pins", &table_row(json!({"nope": "x"}))).await;
        assert_config_invalid(resp, "pin_config.rows[0].cells.nope", "flexible-table");

        let resp = app.post("/v1/pins", &table_row(json!({"n": "12"}))).await;
        assert_config_invalid(resp, "pin_config.rows[0].cells.n", "flexible-table");

        for bad in ["2024-02-30", "yesterday", "2024-1-5"] {
            let resp = app.post("/v1/pins", &table_row(json!({"day": bad}))).await;
            assert_config_invalid(resp, "pin_config.rows[0].cells.day", "flexible-table");
        }

        for bad in ["javascript:alert(1)", "/relative", "ftp://example.com/x"] {
            let resp = app.post("/v1/pins", &table_row(json!({"site": bad}))).await;
            assert_config_invalid(resp, "pin_config.rows[0].cells.site", "flexible-table");
        }

        let mut config = table_config();
        config["columns"][0]["type"] = json!("money");
        let resp = app.post("/v1/pins", &with_config("flexible-table", config)).await;
        assert_config_invalid(resp, "pin_config.columns[0].type", "flexible-table");
        assert_no_pins(&app).await;

        // Cells that match their columns are stored as sent.
        let cells = json!({"name": "Ada", "n": 1.5, "day": "2024-02-29", "site": "https://example.com/a"});
        let created = app.create_pin(&table_row(cells.clone())).await;
        assert_eq!(created["pin_config"]["rows"][0]["cells"], cells);
    }

    async fn config_sent_as_content_reports_content_field(app) {
        let body = json!({
            "data_type": "pin-card",
            "pin_type": "stat-cards",
            "pin_layout": "1x1",
            "content": {"cards": [{"title": "t", "value": "v", "trend": "sideways"}]},
            "metadata": {"title": "quickstart"}
        });
        let resp = app.post("/v1/pins", &body).await;
        assert_config_invalid(resp, "content.cards[0].trend", "stat-cards");
        let body = json!({"pin_type": "flexible-table", "content": {"columns": [], "rows": []}});
        let resp = app.post("/v1/pins", &body).await;
        assert_config_invalid(resp, "content.columns", "flexible-table");
        assert_no_pins(&app).await;
        // On update too.
        let id = app.create_pin(&stat_cards("x")).await["pin_id"].as_str().unwrap().to_owned();
        let resp = app.put(&format!("/v1/pins/{id}"), &json!({"content": {"cards": []}})).await;
        assert_config_invalid(resp, "content.cards", "stat-cards");
        let resp = app.patch(&format!("/v1/pins/{id}"), &json!({"metadata": {"pin_config": {"cards": [{"title": "t"}]}}})).await;
        assert_config_invalid(resp, "metadata.pin_config.cards[0].value", "stat-cards");
        let read = app.get(&format!("/v1/pins/{id}")).await.expect(200);
        assert_eq!(read.data()["pin_config"], stat_cards("x")["pin_config"]);
    }

    async fn provenance_is_validated(app) {
        let mut body = stat_cards("p");
        body["metadata"]["provenance"] = json!({"run_id": "r1", "colour": "red"});
        assert_invalid(app.post("/v1/pins", &body).await, "metadata.provenance.colour");

        body["metadata"]["provenance"] = json!({"sources": [{"type": "url", "ref": "not a url"}]});
        assert_invalid(app.post("/v1/pins", &body).await, "metadata.provenance.sources[0].ref");

        body["metadata"]["provenance"] = json!({"sources": [
            {"type": "url", "ref": "https://example.com/ok"},
            {"type": "url", "ref": "javascript:alert(1)"}
        ]});
        assert_invalid(app.post("/v1/pins", &body).await, "metadata.provenance.sources[1].ref");

        body["metadata"]["provenance"] = json!({"sources": [{"type": "url"}]});
        assert_invalid(app.post("/v1/pins", &body).await, "metadata.provenance.sources[0].ref");
        assert_no_pins(&app).await;

        // A valid one is stored as sent; a non-URL source type may carry any text.
        let provenance = json!({
            "run_id": "run-42",
            "updated_by": "agent",
            "sources": [{"type": "url", "ref": "https://example.com/report"}, {"type": "sql", "ref": "select 1"}]
        });
        body["metadata"]["provenance"] = provenance.clone();
        let created = app.create_pin(&body).await;
        let id = created["pin_id"].as_str().unwrap();
        let read = app.get(&format!("/v1/pins/{id}")).await.expect(200);
        assert_eq!(read.data()["metadata"]["provenance"], provenance);
    }

    async fn errors_in_batches_carry_the_index(app) {
        let mut bad = stat_cards("bad");
        bad["pin_config"]["cards"][0]["trend"] = json!("sideways");
        let body = json!({"pins": [stat_cards("ok"), bad]});
        let resp = app.post("/v1/pins/batch", &body).await;
        let resp = resp.expect_error(400, "PIN_CONFIG_INVALID", Some("pins[1].pin_config.cards[0].trend"));
        assert_eq!(resp.body["error"]["details"]["index"], json!(1));
        let mut bad = stat_cards("bad");
        bad["pin_layout"] = json!("9x9");
        let resp = app.post("/v1/pins/batch", &json!({"pins": [bad]})).await;
        let resp = resp.expect_error(400, "VALIDATION_FAILED", Some("pins[0].pin_layout"));
        assert_eq!(resp.body["error"]["details"]["index"], json!(0));
        assert_no_pins(&app).await;
    }
}

both_stores! {
    async fn objects_sent_as_arrays_are_refused(app) {
        let body = json!(["stat-cards", {"cards": [{"title": "a", "value": "1"}]}]);
        app.post("/v1/pins", &body).await.expect_error(400, "VALIDATION_FAILED", Some("body"));
        let mut nested = stat_cards("x");
        nested["metadata"] = json!(["title", ["tag"]]);
        app.post("/v1/pins", &nested).await.expect_error(400, "VALIDATION_FAILED", Some("metadata"));
        let all = app.get("/v1/pins").await.expect(200);
        assert_eq!(all.data(), &json!([]));
    }
}

both_stores! {
    async fn undecodable_path_parameters_are_400_envelopes(app) {
        for path in [
            "/v1/pins/%FF",
            "/v1/pins/%FF/versions",
            "/v1/pins/%FF/share",
            "/v1/pinboards/%FF",
            "/v1/pinboards/%FF/share",
        ] {
            let r = app.get(path).await;
            assert_eq!(r.status, 400, "{path}: {:?}", r.body);
            assert_eq!(r.code(), "VALIDATION_FAILED", "{path}");
            assert_eq!(r.body["error"]["details"]["field"], json!("path"), "{path}");
        }
        let moved = app
            .send(app.req(reqwest::Method::DELETE, "/v1/pinboards/pb-x/pins/%FF"))
            .await;
        assert_eq!(moved.code(), "VALIDATION_FAILED");
    }

    async fn a_store_that_is_down_is_503_with_retry_after(app) {
        app.state.store.close().await;
        let r = app.get("/v1/pins").await.expect_error(503, "SERVICE_UNAVAILABLE", None);
        assert_eq!(r.header("retry-after"), Some("1"));
        let ready = app.send(app.client.get(format!("{}/readyz", app.base))).await;
        assert_eq!(ready.status, 503);
        assert_eq!(ready.code(), "SERVICE_UNAVAILABLE");
    }

    async fn nul_characters_are_refused_everywhere_not_a_500(app) {
        app.get("/v1/pins/p-%00").await.expect_error(400, "VALIDATION_FAILED", Some("path"));
        app.get("/v1/pinboards/pb-%00/share").await.expect_error(400, "VALIDATION_FAILED", Some("path"));
        app.get("/v1/pins?tag=a%00").await.expect_error(400, "VALIDATION_FAILED", Some("query"));
        let body = json!({"pin_type": "markdown", "pin_config": {"text": "a\u{0}b"}});
        app.post("/v1/pins", &body).await.expect_error(400, "VALIDATION_FAILED", Some("pin_config.text"));
        let batch = json!({"pin_ids": ["p-\u{0}"]});
        app.post("/v1/pins/batch/get", &batch).await.expect_error(400, "VALIDATION_FAILED", Some("pin_ids[0]"));
        let page = app.send(app.client.get(format!("{}/share/pb-%00", app.base))).await;
        assert_eq!(page.status, 404);
        assert_eq!(app.get("/v1/pins").await.expect(200).data(), &json!([]), "nothing stored");
    }
}
