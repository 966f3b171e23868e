//! Upsert by key (CONTRACT.md 14): `PUT /pins/by-key/{key}` creates (the create answer
//! with `created: true`) or replaces (the update answer with `created: false` and
//! `changed`), writes nothing when nothing would change, and is safe under concurrency;
//! `POST /pins/batch/upsert` does the same for up to 100 keys, all or nothing.

use reqwest::Method;
use serde_json::{json, Value};

use crate::{both_stores, datasets::iso_ms, helpers::*};

async fn upsert(app: &TestApp, key: &str, body: &Value) -> Resp {
    app.put(&format!("/v1/pins/by-key/{key}"), body).await
}

async fn batch_upsert(app: &TestApp, pins: Vec<Value>) -> Resp {
    app.post("/v1/pins/batch/upsert", &json!({ "pins": pins }))
        .await
}

/// A stat-cards create body whose one card shows `value`.
fn cards(title: &str, value: &str) -> Value {
    json!({
        "pin_type": "stat-cards",
        "pin_config": {"cards": [{"title": "Revenue", "value": value, "trend": "up"}]},
        "metadata": {"title": title}
    })
}

/// A stat-cards create body whose trend is not one of up, down, flat.
fn bad_cards() -> Value {
    json!({
        "pin_type": "stat-cards",
        "pin_config": {"cards": [{"title": "Revenue", "value": "1", "trend": "sideways"}]}
    })
}

/// The sorted field names of an object.
fn fields(data: &Value) -> Vec<String> {
    let mut names: Vec<String> = data
        .as_object()
        .unwrap_or_else(|| panic!("no object: {data}"))
        .keys()
        .cloned()
        .collect();
    names.sort();
    names
}

async fn by_key(app: &TestApp, key: &str) -> Value {
    app.get(&format!("/v1/pins/by-key/{key}"))
        .await
        .expect(200)
        .data()
        .clone()
}

/// Every pin of the workspace (up to 200).
async fn all_pins(app: &TestApp) -> Vec<Value> {
    let res = app.get("/v1/pins?limit=200").await.expect(200);
    res.data().as_array().unwrap().clone()
}

/// The `version` of each past version of pin `id`, newest first.
async fn past_versions(app: &TestApp, id: &Value) -> Vec<Value> {
    let id = id.as_str().unwrap();
    let res = app
        .get(&format!("/v1/pins/{id}/versions"))
        .await
        .expect(200);
    res.data()
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].clone())
        .collect()
}

/// `details.index` of an error response.
fn index(res: &Resp) -> &Value {
    &res.body["error"]["details"]["index"]
}

both_stores! {
    async fn a_new_key_is_created_with_the_create_answer(app) {
        let body = cards("Revenue", "$1.2M");
        let res = upsert(&app, "daily-revenue", &body).await.expect(200);
        let created = res.data().clone();
        assert_eq!(created["created"], json!(true), "{created}");
        let id = created["pin_id"].as_str().unwrap();
        assert!(id.starts_with("p-"), "{created}");
        assert_eq!(created["id"], json!(id));
        assert_eq!(created["key"], json!("daily-revenue"));
        assert_eq!(created["version"], json!(1));
        assert_eq!(created["pin_type"], json!("stat-cards"));
        assert_eq!(created["pin_config"], body["pin_config"]);
        assert_eq!(created["pin_layout"], json!("1x1"));
        assert_eq!(created["metadata"]["title"], json!("Revenue"));
        assert!(created["shareable_url"].as_str().is_some_and(|u| u.contains(id)), "{created}");
        iso_ms(&created["created_at"]);

        let mut expected = created.clone();
        let object = expected.as_object_mut().unwrap();
        object.remove("pin_id");
        object.remove("created");
        assert_eq!(by_key(&app, "daily-revenue").await, expected, "the record = create answer");
        assert_eq!(pins_with_keys(&app, &["daily-revenue"]).await.len(), 1);

        // Shape B, and a `key` in the body equal to the path's.
        let shape_b = json!({
            "data_type": "pin-card", "pin_type": "flexible-table", "pin_layout": "2x2",
            "content": table_config(), "key": "inventory", "metadata": {"title": "Stock"}
        });
        let res = upsert(&app, "inventory", &shape_b).await.expect(200);
        assert_eq!(res.data()["created"], json!(true));
        let stored = by_key(&app, "inventory").await;
        assert_eq!(stored["pin_config"], table_config());
        assert_eq!(stored["pin_layout"], json!("2x2"));
        assert_eq!(all_pins(&app).await.len(), 2);
    }

    async fn an_existing_key_is_updated_and_the_answer_says_what_changed(app) {
        let first = upsert(&app, "revenue", &cards("Revenue", "1")).await.expect(200);
        let id = first.data()["pin_id"].clone();

        let res = upsert(&app, "revenue", &cards("Revenue", "2")).await.expect(200);
        let data = res.data();
        assert_eq!(fields(data), ["changed", "created", "id", "updated_at", "version"], "{}", res.body);
        assert_eq!(data["id"], id);
        assert_eq!(data["created"], json!(false));
        assert_eq!(data["changed"], json!(true));
        assert_eq!(data["version"], json!(2));
        let stored = by_key(&app, "revenue").await;
        assert_eq!(stored["pin_config"], cards("", "2")["pin_config"]);
        assert_eq!(stored["version"], json!(2));
        assert_eq!(data["updated_at"].as_i64(), Some(iso_ms(&stored["updated_at"])), "epoch ms");

        // The same body again: nothing is written.
        let res = upsert(&app, "revenue", &with_key(cards("Revenue", "2"), "revenue")).await.expect(200);
        let data = res.data();
        assert_eq!(fields(data), ["changed", "created", "id", "updated_at", "version"], "{}", res.body);
        assert_eq!(data["created"], json!(false));
        assert_eq!(data["changed"], json!(false));
        assert_eq!(data["version"], json!(2));
        assert_eq!(data["updated_at"].as_i64(), Some(iso_ms(&stored["updated_at"])));
        // (Compared member by member: the push time of CONTRACT.md 15 moves even so.)
        let now = by_key(&app, "revenue").await;
        for member in ["version", "updated_at", "pin_config", "metadata"] {
            assert_eq!(now[member], stored[member], "{member} unchanged");
        }
        assert_eq!(past_versions(&app, &id).await, [json!(1)], "no version was kept for it");
        assert_eq!(all_pins(&app).await.len(), 1);
    }

    async fn upsert_replaces_type_and_config_and_keeps_what_is_not_given(app) {
        let provenance = json!({"run_id": "run-1", "updated_by": "etl"});
        let body = json!({
            "pin_type": "stat-cards", "pin_config": cards("", "1")["pin_config"],
            "pin_layout": "2x1", "is_public": true, "key": "ops",
            "metadata": {"title": "Ops", "tags": ["a"], "provenance": provenance}
        });
        let id = app.create_pin(&body).await["pin_id"].clone();

        let table = json!({"pin_type": "flexible-table", "pin_config": table_config(), "metadata": {"tags": ["b"]}});
        let res = upsert(&app, "ops", &table).await.expect(200);
        assert_eq!(res.data()["changed"], json!(true));
        let stored = by_key(&app, "ops").await;
        assert_eq!(stored["id"], id);
        assert_eq!(stored["pin_type"], json!("flexible-table"));
        assert_eq!(stored["pin_config"], table_config());
        assert_eq!(stored["pin_layout"], json!("2x1"), "kept: not given");
        assert_eq!(stored["is_public"], json!(true), "kept: not given");
        assert_eq!(stored["metadata"]["title"], json!("Ops"), "metadata merges: title kept");
        assert_eq!(stored["metadata"]["tags"], json!(["b"]));
        assert_eq!(stored["metadata"]["provenance"], provenance);
        assert_eq!(stored["key"], json!("ops"));

        let given = json!({
            "pin_type": "flexible-table", "pin_config": table_config(), "pin_layout": "3x3",
            "is_public": false, "metadata": {"title": "Ops 2", "provenance": null}
        });
        let res = upsert(&app, "ops", &given).await.expect(200);
        assert_eq!(res.data()["changed"], json!(true));
        assert_eq!(res.data()["version"], json!(3));
        let stored = by_key(&app, "ops").await;
        assert_eq!(stored["pin_layout"], json!("3x3"));
        assert_eq!(stored["is_public"], json!(false));
        assert_eq!(stored["metadata"]["title"], json!("Ops 2"));
        assert_eq!(stored["metadata"]["tags"], json!(["b"]));
        assert_eq!(stored["metadata"]["provenance"], Value::Null);
    }

    async fn keys_and_bodies_are_checked_and_refusals_write_nothing(app) {
        upsert(&app, "alpha", &with_key(cards("A", "1"), "beta")).await
            .expect_error(400, "VALIDATION_FAILED", Some("key"));
        let long = "k".repeat(129);
        for bad in ["-dash", "has%20space", "%C3%BCber", ".dot", long.as_str()] {
            upsert(&app, bad, &cards("A", "1")).await.expect_error(400, "VALIDATION_FAILED", Some("key"));
        }
        upsert(&app, "alpha", &bad_cards()).await
            .expect_error(400, "PIN_CONFIG_INVALID", Some("pin_config.cards[0].trend"));
        upsert(&app, "alpha", &json!({"pin_config": cards("", "1")["pin_config"]})).await
            .expect_error(400, "VALIDATION_FAILED", None);
        let reader = app.key_with("pins:read").await;
        let refused = call(&app, &reader, Method::PUT, "/v1/pins/by-key/alpha", Some(&cards("A", "1"))).await
            .expect_error(403, "SCOPE_REQUIRED", None);
        assert_eq!(refused.body["error"]["details"]["required_scope"], json!("pins:write"));
        assert!(all_pins(&app).await.is_empty(), "nothing created");

        upsert(&app, "alpha", &cards("A", "1")).await.expect(200);
        upsert(&app, "alpha", &bad_cards()).await.expect_error(400, "PIN_CONFIG_INVALID", None);
        upsert(&app, "alpha", &with_key(cards("A", "2"), "gamma")).await
            .expect_error(400, "VALIDATION_FAILED", Some("key"));
        call(&app, &reader, Method::PUT, "/v1/pins/by-key/alpha", Some(&cards("A", "2"))).await
            .expect_error(403, "SCOPE_REQUIRED", None);
        let stored = by_key(&app, "alpha").await;
        assert_eq!(stored["version"], json!(1));
        assert_eq!(stored["pin_config"], cards("", "1")["pin_config"]);
        assert_eq!(all_pins(&app).await.len(), 1);
    }

    async fn upserts_publish_created_and_updated_and_a_no_op_nothing(app) {
        let mut stream = event_stream(&app).await;
        let created = upsert(&app, "live", &cards("Live", "1")).await.expect(200);
        let id = created.data()["pin_id"].clone();
        let event = stream.next_event().await;
        assert_eq!(event.event.as_deref(), Some("pin.created"), "{event:?}");
        assert_eq!(event.data["id"], id);

        upsert(&app, "live", &cards("Live", "2")).await.expect(200);
        let event = stream.next_event().await;
        assert_eq!(event.event.as_deref(), Some("pin.updated"), "{event:?}");
        assert_eq!(event.data["id"], id);
        assert_eq!(event.data["data"], by_key(&app, "live").await);

        let res = upsert(&app, "live", &cards("Live", "2")).await.expect(200);
        assert_eq!(res.data()["changed"], json!(false));
        assert_no_event(&app, &mut stream).await;
    }

    async fn concurrent_upserts_of_one_new_key_create_exactly_one_pin(app) {
        let upserts = (0..32).map(|i| {
            let app = &app;
            async move { upsert(app, "race", &cards("Race", &i.to_string())).await }
        });
        let answers = futures::future::join_all(upserts).await;
        for answer in &answers {
            assert_eq!(answer.status, 200, "{}", answer.body);
            assert_eq!(answer.body["success"], json!(true));
        }
        let created: Vec<&Resp> = answers.iter().filter(|a| a.data()["created"] == json!(true)).collect();
        assert_eq!(created.len(), 1, "exactly one answer says created");
        let pins = pins_with_keys(&app, &["race"]).await;
        assert_eq!(pins.len(), 1, "exactly one pin has the key: {pins:?}");
        assert_eq!(pins[0]["id"], created[0].data()["pin_id"]);
        for answer in answers.iter().filter(|a| a.data()["created"] == json!(false)) {
            assert_eq!(answer.data()["id"], pins[0]["id"]);
            assert_eq!(answer.data()["changed"], json!(true), "each body differs from the last");
        }
        assert_eq!(pins[0]["version"], json!(32), "one version per update");
        assert_eq!(all_pins(&app).await.len(), 1);
    }

    async fn another_workspace_upserting_the_same_key_gets_its_own_pin(app) {
        let ours = upsert(&app, "shared", &cards("Ours", "1")).await.expect(200).data()["pin_id"].clone();
        let other = app.key_in("team-b", "*").await;
        let path = "/v1/pins/by-key/shared";
        let theirs = call(&app, &other, Method::PUT, path, Some(&cards("Theirs", "9"))).await.expect(200);
        assert_eq!(theirs.data()["created"], json!(true));
        assert_ne!(theirs.data()["pin_id"], ours);
        let again = call(&app, &other, Method::PUT, path, Some(&cards("Theirs", "10"))).await.expect(200);
        assert_eq!(again.data()["id"], theirs.data()["pin_id"]);
        let stored = by_key(&app, "shared").await;
        assert_eq!(stored["id"], ours);
        assert_eq!(stored["version"], json!(1));
        assert_eq!(stored["pin_config"], cards("", "1")["pin_config"]);
    }

    async fn batch_upsert_creates_and_updates_in_request_order(app) {
        let b = upsert(&app, "b", &cards("B", "1")).await.expect(200).data()["pin_id"].clone();
        let c = upsert(&app, "c", &cards("C", "1")).await.expect(200).data()["pin_id"].clone();
        let mut stream = event_stream(&app).await;
        let res = batch_upsert(&app, vec![
            with_key(cards("A", "1"), "a"),
            with_key(cards("B", "2"), "b"),
            with_key(cards("C", "1"), "c"),
        ]).await.expect(200);
        let items = res.data().as_array().expect("an array");
        assert_eq!(items.len(), 3);
        for item in items {
            assert_eq!(fields(item), ["changed", "created", "id", "key", "updated_at", "version"], "{item}");
            assert!(item["updated_at"].is_i64(), "epoch ms: {item}");
        }
        assert_eq!(items[0]["key"], json!("a"));
        assert_eq!(items[0]["created"], json!(true));
        assert_eq!(items[0]["changed"], json!(true));
        assert_eq!(items[0]["version"], json!(1));
        assert_eq!((&items[1]["key"], &items[1]["id"]), (&json!("b"), &b));
        assert_eq!((&items[1]["created"], &items[1]["changed"]), (&json!(false), &json!(true)));
        assert_eq!(items[1]["version"], json!(2));
        assert_eq!((&items[2]["key"], &items[2]["id"]), (&json!("c"), &c));
        assert_eq!((&items[2]["created"], &items[2]["changed"]), (&json!(false), &json!(false)));
        assert_eq!(items[2]["version"], json!(1));

        let a = by_key(&app, "a").await;
        assert_eq!(a["id"], items[0]["id"]);
        assert_eq!(a["metadata"]["title"], json!("A"));
        assert_eq!(by_key(&app, "b").await["pin_config"], cards("", "2")["pin_config"]);
        assert_eq!(by_key(&app, "c").await["version"], json!(1));

        // One event per pin written, none for the unchanged one.
        let events = stream.events(2).await;
        assert_eq!(events[0].event.as_deref(), Some("pin.created"));
        assert_eq!(events[0].data["id"], items[0]["id"]);
        assert_eq!(events[1].event.as_deref(), Some("pin.updated"));
        assert_eq!(events[1].data["id"], b);
        assert_no_event(&app, &mut stream).await;
    }

    async fn batch_upsert_is_all_or_nothing(app) {
        upsert(&app, "b", &cards("B", "1")).await.expect(200);
        let refused = batch_upsert(&app, vec![
            with_key(cards("X", "1"), "x"),
            with_key(cards("B", "2"), "b"),
            with_key(bad_cards(), "y"),
        ]).await.expect_error(400, "PIN_CONFIG_INVALID", Some("pins[2].pin_config.cards[0].trend"));
        assert_eq!(index(&refused), &json!(2));

        let twice = batch_upsert(&app, vec![
            with_key(cards("K1", "1"), "k1"),
            with_key(cards("K2", "1"), "k2"),
            with_key(cards("K1 again", "2"), "k1"),
        ]).await.expect_error(400, "VALIDATION_FAILED", Some("pins[2].key"));
        assert_eq!(index(&twice), &json!(2), "the second use of the key");

        let keyless = batch_upsert(&app, vec![with_key(cards("X", "1"), "x"), cards("No key", "1")]).await
            .expect_error(400, "VALIDATION_FAILED", Some("pins[1].key"));
        assert_eq!(index(&keyless), &json!(1));
        let bad_key = batch_upsert(&app, vec![with_key(cards("X", "1"), "-x")]).await
            .expect_error(400, "VALIDATION_FAILED", Some("pins[0].key"));
        assert_eq!(index(&bad_key), &json!(0));
        batch_upsert(&app, vec![]).await.expect_error(400, "VALIDATION_FAILED", None);
        let over: Vec<Value> = (0..101).map(|i| with_key(cards("many", "1"), &format!("m{i}"))).collect();
        batch_upsert(&app, over).await.expect_error(400, "VALIDATION_FAILED", None);
        let reader = app.key_with("pins:read").await;
        let body = json!({"pins": [with_key(cards("X", "1"), "x")]});
        call(&app, &reader, Method::POST, "/v1/pins/batch/upsert", Some(&body)).await
            .expect_error(403, "SCOPE_REQUIRED", None);

        let pins = all_pins(&app).await;
        assert_eq!(pins.len(), 1, "nothing created: {pins:?}");
        assert_eq!(pins[0]["key"], json!("b"));
        assert_eq!(pins[0]["version"], json!(1), "nothing changed");
        assert_eq!(pins[0]["pin_config"], cards("", "1")["pin_config"]);

        let hundred: Vec<Value> = (0..100).map(|i| with_key(cards("many", "1"), &format!("m{i}"))).collect();
        let res = batch_upsert(&app, hundred).await.expect(200);
        assert_eq!(res.data().as_array().map(Vec::len), Some(100));
        assert_eq!(res.data()[99]["key"], json!("m99"));
        assert_eq!(all_pins(&app).await.len(), 101);
    }
}
