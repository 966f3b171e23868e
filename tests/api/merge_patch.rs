//! `PATCH /pins/{id}` with `Content-Type: application/merge-patch+json` (CONTRACT.md 14):
//! RFC 7396 over the pin's writable document, the result validated as a whole (refused at
//! its path, nothing written), If-Match honoured; `application/json` keeps its meaning.

use reqwest::Method;
use serde_json::{json, Value};

use crate::{both_stores, helpers::*};

const MERGE_PATCH: &str = "application/merge-patch+json";

/// A kpi configuration with every optional member.
fn kpi() -> Value {
    json!({"label": "p95 latency", "value": 182.5, "unit": "ms", "change": "-12%", "trend": "down",
           "sparkline": [240, 221, 198]})
}

/// Creates a kpi pin keyed `latency`, titled and tagged; returns its id.
async fn new_kpi(app: &TestApp) -> String {
    let body = json!({"pin_type": "kpi", "pin_config": kpi(), "key": "latency",
                      "metadata": {"title": "Latency", "tags": ["ops"]}});
    app.create_pin(&body).await["pin_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// `PATCH /v1/pins/{id}` with `patch` as a merge patch (and `If-Match` when given).
async fn merge_patch(app: &TestApp, id: &str, patch: &Value, if_match: Option<&str>) -> Resp {
    let mut req = app
        .req(Method::PATCH, &format!("/v1/pins/{id}"))
        .header("content-type", MERGE_PATCH)
        .body(patch.to_string());
    if let Some(etag) = if_match {
        req = req.header("if-match", etag);
    }
    app.send(req).await
}

async fn read(app: &TestApp, id: &str) -> Value {
    app.get(&format!("/v1/pins/{id}"))
        .await
        .expect(200)
        .data()
        .clone()
}

/// Asserts a merge patch's answer, `{id, updated_at, version}`.
#[track_caller]
fn updated(res: Resp, id: &str, version: i64) {
    let res = res.expect(200);
    let data = res.data().as_object().unwrap();
    let mut fields: Vec<&str> = data.keys().map(String::as_str).collect();
    fields.sort_unstable();
    assert_eq!(fields, ["id", "updated_at", "version"], "{}", res.body);
    assert_eq!(data["id"], json!(id));
    assert_eq!(data["version"], json!(version));
    assert!(data["updated_at"].is_i64(), "epoch ms: {}", res.body);
}

both_stores! {
    async fn a_merge_patch_changes_only_the_members_it_names(app) {
        let id = new_kpi(&app).await;
        let mut stream = event_stream(&app).await;
        updated(merge_patch(&app, &id, &json!({"pin_config": {"value": 175}}), None).await, &id, 2);
        let stored = read(&app, &id).await;
        assert_eq!(stored["pin_config"]["value"].as_f64(), Some(175.0));
        for kept in ["label", "unit", "change", "trend", "sparkline"] {
            assert_eq!(stored["pin_config"][kept], kpi()[kept], "{kept} kept");
        }
        assert_eq!(stored["metadata"]["title"], json!("Latency"));
        assert_eq!(stored["key"], json!("latency"));
        let event = stream.next_event().await;
        assert_eq!(event.event.as_deref(), Some("pin.updated"), "{event:?}");
        assert_eq!(event.data["data"], stored);

        // `null` deletes a member; metadata merges member by member.
        let patch = json!({"pin_config": {"sparkline": null, "change": null}, "metadata": {"title": "p95"}});
        updated(merge_patch(&app, &id, &patch, None).await, &id, 3);
        let stored = read(&app, &id).await;
        let config = stored["pin_config"].as_object().unwrap();
        assert!(!config.contains_key("sparkline") && !config.contains_key("change"), "{config:?}");
        assert_eq!(config["label"], json!("p95 latency"));
        assert_eq!(stored["metadata"]["title"], json!("p95"));
        assert_eq!(stored["metadata"]["tags"], json!(["ops"]));

        updated(merge_patch(&app, &id, &json!({"pin_layout": "2x1", "is_public": true}), None).await, &id, 4);
        let stored = read(&app, &id).await;
        assert_eq!((&stored["pin_layout"], &stored["is_public"]), (&json!("2x1"), &json!(true)));

        updated(merge_patch(&app, &id, &json!({"key": null}), None).await, &id, 5);
        assert_eq!(read(&app, &id).await.get("key"), Some(&Value::Null));
        app.get("/v1/pins/by-key/latency").await.expect_error(404, "NOT_FOUND", None);
        updated(merge_patch(&app, &id, &json!({"key": "p95"}), None).await, &id, 6);
        assert_eq!(app.get("/v1/pins/by-key/p95").await.expect(200).data()["id"], json!(id));
        let past = app.get(&format!("/v1/pins/{id}/versions")).await.expect(200);
        assert_eq!(past.data().as_array().map(Vec::len), Some(5), "one version per patch");
    }

    async fn arrays_are_replaced_whole(app) {
        let id = app.create_pin(&stat_cards("Cards")).await["pin_id"].as_str().unwrap().to_owned();
        let cards = json!({"cards": [{"title": "Users", "value": "42"}, {"title": "Churn", "value": "2%", "trend": "flat"}]});
        updated(merge_patch(&app, &id, &json!({"pin_config": cards}), None).await, &id, 2);
        assert_eq!(read(&app, &id).await["pin_config"], cards);
        let bad = json!({"pin_config": {"cards": [{"title": "Users", "value": "1", "trend": "sideways"}]}});
        merge_patch(&app, &id, &bad, None).await
            .expect_error(400, "PIN_CONFIG_INVALID", Some("pin_config.cards[0].trend"));
        let stored = read(&app, &id).await;
        assert_eq!(stored["pin_config"], cards);
        assert_eq!(stored["version"], json!(2));
    }

    async fn an_invalid_result_is_refused_at_its_path_and_nothing_is_written(app) {
        let id = new_kpi(&app).await;
        let before = read(&app, &id).await;
        let config_errors = [
            (json!({"pin_config": {"label": null}}), "pin_config.label"),
            (json!({"pin_config": {"value": "x".repeat(201)}}), "pin_config.value"),
            (json!({"pin_config": {"trend": "sideways"}}), "pin_config.trend"),
            (json!({"pin_config": {"colour": "red"}}), "pin_config.colour"),
        ];
        for (patch, field) in config_errors {
            merge_patch(&app, &id, &patch, None).await.expect_error(400, "PIN_CONFIG_INVALID", Some(field));
        }
        // The kpi configuration is no list.
        merge_patch(&app, &id, &json!({"pin_type": "list"}), None).await.expect_error(400, "PIN_CONFIG_INVALID", None);
        merge_patch(&app, &id, &json!({"pin_layout": "5x5"}), None).await
            .expect_error(400, "VALIDATION_FAILED", Some("pin_layout"));
        merge_patch(&app, &id, &json!({"key": "-bad"}), None).await
            .expect_error(400, "VALIDATION_FAILED", Some("key"));
        merge_patch(&app, &id, &json!({"colour": "red"}), None).await.expect_error(400, "VALIDATION_FAILED", None);
        merge_patch(&app, &id, &json!({"pin_type": null}), None).await.expect(400);
        merge_patch(&app, &id, &json!({"pin_config": null}), None).await.expect(400);
        merge_patch(&app, &id, &json!([1, 2]), None).await.expect(400);
        let not_json = app.req(Method::PATCH, &format!("/v1/pins/{id}")).header("content-type", MERGE_PATCH).body("{");
        app.send(not_json).await.expect_error(400, "VALIDATION_FAILED", None);
        assert_eq!(read(&app, &id).await, before, "nothing written");
    }

    async fn a_new_type_needs_the_whole_result_valid_for_it(app) {
        let id = new_kpi(&app).await;
        let patch = json!({"pin_type": "list", "pin_config": {
            "label": null, "value": null, "unit": null, "change": null, "trend": null, "sparkline": null,
            "items": [{"text": "Rotate keys", "checked": false}]
        }});
        updated(merge_patch(&app, &id, &patch, None).await, &id, 2);
        let stored = read(&app, &id).await;
        assert_eq!(stored["pin_type"], json!("list"));
        assert_eq!(stored["pin_config"], json!({"items": [{"text": "Rotate keys", "checked": false}]}));
    }

    async fn application_json_keeps_the_update_meaning(app) {
        let id = new_kpi(&app).await;
        // As a plain update, `pin_config` is the whole new configuration: one without a
        // label is refused; as a merge patch the label stays.
        let body = json!({"pin_config": {"value": 175}});
        app.patch(&format!("/v1/pins/{id}"), &body).await
            .expect_error(400, "PIN_CONFIG_INVALID", Some("pin_config.label"));
        assert_eq!(read(&app, &id).await["version"], json!(1));
        updated(merge_patch(&app, &id, &body, None).await, &id, 2);
        assert_eq!(read(&app, &id).await["pin_config"]["label"], json!("p95 latency"));
        let whole = json!({"pin_config": {"label": "Errors", "value": 3}});
        app.patch(&format!("/v1/pins/{id}"), &whole).await.expect(200);
        let stored = read(&app, &id).await;
        assert_eq!(stored["pin_config"]["label"], json!("Errors"));
        assert!(stored["pin_config"].get("sparkline").is_none(), "replaced whole: {stored}");
    }

    async fn if_match_keys_and_callers_are_checked_as_for_any_update(app) {
        let id = new_kpi(&app).await;
        let patch = json!({"pin_config": {"value": 1}});
        merge_patch(&app, &id, &patch, Some("\"2\"")).await.expect_error(412, "PRECONDITION_FAILED", None);
        assert_eq!(read(&app, &id).await["version"], json!(1), "nothing written");
        updated(merge_patch(&app, &id, &patch, Some("\"1\"")).await, &id, 2);
        merge_patch(&app, &id, &json!({"pin_config": {"value": 2}}), Some("\"1\"")).await
            .expect_error(412, "PRECONDITION_FAILED", None);
        assert_eq!(read(&app, &id).await["pin_config"]["value"].as_f64(), Some(1.0));

        app.create_pin(&with_key(stat_cards("Other"), "taken")).await;
        merge_patch(&app, &id, &json!({"key": "taken"}), None).await.expect_error(409, "CONFLICT", Some("key"));
        assert_eq!(read(&app, &id).await["key"], json!("latency"));
        merge_patch(&app, "p-doesnotexist0000000000", &patch, None).await.expect_error(404, "NOT_FOUND", None);

        let reader = app.key_with("pins:read").await;
        let req = app.client.patch(format!("{}/v1/pins/{id}", app.base)).bearer_auth(&reader)
            .header("content-type", MERGE_PATCH).body(patch.to_string());
        app.send(req).await.expect_error(403, "SCOPE_REQUIRED", None);
        let other = app.key_in("team-b", "*").await;
        let req = app.client.patch(format!("{}/v1/pins/{id}", app.base)).bearer_auth(&other)
            .header("content-type", MERGE_PATCH).body(patch.to_string());
        app.send(req).await.expect_error(404, "NOT_FOUND", None);
        assert_eq!(read(&app, &id).await["version"], json!(2));
    }
}
