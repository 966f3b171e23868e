//! Batch operations (`/v1/pins/batch`, `/batch/get`, `/batch/update`, `/batch/delete`), all
//! or nothing, and `Idempotency-Key` on the two create routes.

use reqwest::Method;
use serde_json::{json, Value};

use crate::{both_stores, helpers::*};

/// A stat-cards configuration whose one card shows `value`.
fn cards(value: &str) -> Value {
    json!({"cards": [{"title": "Revenue", "value": value, "trend": "down"}]})
}

/// A create body whose first card has a trend that is not up, down or flat.
fn invalid_pin() -> Value {
    let mut body = stat_cards("bad");
    body["pin_config"]["cards"][0]["trend"] = json!("sideways");
    body
}

/// The ids of every pin of the workspace.
async fn stored_ids(app: &TestApp) -> Vec<String> {
    let res = app.get("/v1/pins?limit=200").await.expect(200);
    res.data()
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_owned())
        .collect()
}

async fn create(app: &TestApp, title: &str) -> String {
    app.create_pin(&stat_cards(title)).await["pin_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn read(app: &TestApp, id: &str) -> Value {
    app.get(&format!("/v1/pins/{id}"))
        .await
        .expect(200)
        .data()
        .clone()
}

/// `details.index` of an error response.
fn index(res: &Resp) -> &Value {
    &res.body["error"]["details"]["index"]
}

/// A POST of `body` with an `Idempotency-Key`.
async fn post_with_key(app: &TestApp, path: &str, key: &str, body: &Value) -> Resp {
    app.send(
        app.req(Method::POST, path)
            .header("idempotency-key", key)
            .json(body),
    )
    .await
}

both_stores! {
    async fn batch_create_returns_all_in_request_order(app) {
        let titles = ["first", "second", "third"];
        let pins: Vec<Value> = titles.iter().map(|t| stat_cards(t)).collect();
        let res = app.post("/v1/pins/batch", &json!({ "pins": pins })).await.expect(200);
        let created = res.data().as_array().expect("data is an array");
        assert_eq!(created.len(), 3);
        for (item, title) in created.iter().zip(titles) {
            let id = item["pin_id"].as_str().unwrap();
            assert!(id.starts_with("p-"));
            assert_eq!(item["metadata"]["title"], json!(title));
            assert_eq!(item["version"], json!(1));
            assert!(item["shareable_url"].is_string() && item["created_at"].is_string());
            assert_eq!(read(&app, id).await["metadata"]["title"], json!(title));
        }
        assert_eq!(stored_ids(&app).await.len(), 3);
    }

    async fn batch_create_accepts_both_shapes(app) {
        let shape_b = json!({
            "data_type": "pin-card",
            "pin_type": "flexible-table",
            "pin_layout": "2x2",
            "content": table_config(),
            "metadata": {"title": "table"}
        });
        let res = app
            .post("/v1/pins/batch", &json!({"pins": [stat_cards("a"), shape_b]}))
            .await
            .expect(200);
        let table = &res.data()[1];
        assert_eq!(table["pin_type"], json!("flexible-table"));
        assert_eq!(table["pin_config"], table_config());
        assert_eq!(table["pin_layout"], json!("2x2"));
    }

    async fn batch_create_with_one_invalid_item_stores_nothing(app) {
        let body = json!({"pins": [stat_cards("a"), stat_cards("b"), invalid_pin()]});
        let res = app
            .post("/v1/pins/batch", &body)
            .await
            .expect_error(400, "PIN_CONFIG_INVALID", Some("pins[2].pin_config.cards[0].trend"));
        assert_eq!(index(&res), &json!(2));
        assert_eq!(stored_ids(&app).await, Vec::<String>::new());
    }

    async fn batch_create_item_without_pin_type_names_it(app) {
        let body = json!({"pins": [stat_cards("a"), {"pin_config": cards("1")}]});
        let res = app
            .post("/v1/pins/batch", &body)
            .await
            .expect_error(400, "VALIDATION_FAILED", None);
        assert_eq!(index(&res), &json!(1));
        let field = res.body["error"]["details"]["field"].as_str().unwrap();
        assert!(field.starts_with("pins[1]"), "{field}");
        assert_eq!(stored_ids(&app).await, Vec::<String>::new());
    }

    async fn batch_create_of_0_or_101_items_is_400(app) {
        app.post("/v1/pins/batch", &json!({"pins": []}))
            .await
            .expect_error(400, "VALIDATION_FAILED", Some("pins"));
        let pins: Vec<Value> = (0..101).map(|i| stat_cards(&format!("pin {i}"))).collect();
        app.post("/v1/pins/batch", &json!({ "pins": pins }))
            .await
            .expect_error(400, "VALIDATION_FAILED", Some("pins"));
        assert_eq!(stored_ids(&app).await, Vec::<String>::new());
        let pins: Vec<Value> = (0..100).map(|i| stat_cards(&format!("pin {i}"))).collect();
        app.post("/v1/pins/batch", &json!({ "pins": pins })).await.expect(200);
        assert_eq!(stored_ids(&app).await.len(), 100);
    }

    async fn batch_get_update_delete_of_zero_items_are_400(app) {
        let a = create(&app, "a").await;
        app.post("/v1/pins/batch/get", &json!({"pin_ids": []}))
            .await
            .expect_error(400, "VALIDATION_FAILED", Some("pin_ids"));
        app.post("/v1/pins/batch/update", &json!({"pins": []}))
            .await
            .expect_error(400, "VALIDATION_FAILED", Some("pins"));
        app.post("/v1/pins/batch/delete", &json!({"pin_ids": []}))
            .await
            .expect_error(400, "VALIDATION_FAILED", Some("pin_ids"));
        assert_eq!(stored_ids(&app).await, [a]);
    }

    async fn batch_get_in_request_order_with_missing(app) {
        let a = create(&app, "a").await;
        let b = create(&app, "b").await;
        let unknown = "p-doesnotexist0000000000";
        let res = app
            .post("/v1/pins/batch/get", &json!({"pin_ids": [b, unknown, a]}))
            .await
            .expect(200);
        let found = res.data().as_array().unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(found[0], read(&app, &b).await);
        assert_eq!(found[1], read(&app, &a).await);
        assert_eq!(res.body["missing"], json!([unknown]), "{}", res.body);
    }

    async fn batch_get_with_nothing_found(app) {
        let res = app
            .post("/v1/pins/batch/get", &json!({"pin_ids": ["p-x", "p-y"]}))
            .await
            .expect(200);
        assert_eq!(res.data(), &json!([]));
        assert_eq!(res.body["missing"], json!(["p-x", "p-y"]));
    }

    async fn batch_update_changes_all(app) {
        let a = create(&app, "a").await;
        let b = create(&app, "b").await;
        let body = json!({"pins": [
            {"id": a, "metadata": {"title": "a2"}},
            {"id": b, "pin_config": cards("b2"), "is_public": true}
        ]});
        let res = app.post("/v1/pins/batch/update", &body).await.expect(200);
        let updated = res.data().as_array().unwrap();
        assert_eq!(updated.len(), 2);
        for (item, id) in updated.iter().zip([&a, &b]) {
            let mut keys: Vec<_> = item.as_object().unwrap().keys().map(String::as_str).collect();
            keys.sort_unstable();
            assert_eq!(keys, ["id", "updated_at", "version"], "{item}");
            assert_eq!(item["id"], json!(id));
            assert!(item["updated_at"].is_i64(), "{item}");
            assert_eq!(item["version"], json!(2));
        }
        let stored_a = read(&app, &a).await;
        assert_eq!(stored_a["metadata"]["title"], json!("a2"));
        assert_eq!(stored_a["metadata"]["tags"], json!(["kpi"]));
        let stored_b = read(&app, &b).await;
        assert_eq!(stored_b["pin_config"], cards("b2"));
        assert_eq!(stored_b["is_public"], json!(true));
    }

    async fn batch_update_with_a_bad_item_changes_nothing(app) {
        let a = create(&app, "a").await;
        let b = create(&app, "b").await;
        let mut bad = invalid_pin()["pin_config"].clone();
        bad["cards"][0]["value"] = json!("b2");
        let body = json!({"pins": [
            {"id": a, "metadata": {"title": "a2"}},
            {"id": b, "pin_config": bad}
        ]});
        let res = app
            .post("/v1/pins/batch/update", &body)
            .await
            .expect_error(400, "PIN_CONFIG_INVALID", Some("pins[1].pin_config.cards[0].trend"));
        assert_eq!(index(&res), &json!(1));
        for (id, title) in [(&a, "a"), (&b, "b")] {
            let stored = read(&app, id).await;
            assert_eq!(stored["version"], json!(1));
            assert_eq!(stored["metadata"]["title"], json!(title));
        }
    }

    async fn batch_update_with_an_empty_item_is_400(app) {
        let a = create(&app, "a").await;
        let b = create(&app, "b").await;
        let body = json!({"pins": [{"id": a, "is_public": true}, {"id": b}]});
        let res = app
            .post("/v1/pins/batch/update", &body)
            .await
            .expect_error(400, "VALIDATION_FAILED", None);
        assert_eq!(index(&res), &json!(1));
        assert_eq!(read(&app, &a).await["version"], json!(1));
    }

    async fn batch_update_with_an_unknown_id_changes_nothing(app) {
        let a = create(&app, "a").await;
        let body = json!({"pins": [
            {"id": a, "metadata": {"title": "a2"}},
            {"id": "p-doesnotexist0000000000", "metadata": {"title": "x"}}
        ]});
        let res = app
            .post("/v1/pins/batch/update", &body)
            .await
            .expect_error(404, "NOT_FOUND", None);
        assert_eq!(index(&res), &json!(1));
        let stored = read(&app, &a).await;
        assert_eq!(stored["version"], json!(1));
        assert_eq!(stored["metadata"]["title"], json!("a"));
        let versions = app.get(&format!("/v1/pins/{a}/versions")).await.expect(200);
        assert_eq!(versions.data(), &json!([]), "no version saved");
    }

    async fn batch_delete_removes_all(app) {
        let a = create(&app, "a").await;
        let b = create(&app, "b").await;
        let keep = create(&app, "keep").await;
        let res = app
            .post("/v1/pins/batch/delete", &json!({"pin_ids": [b, a]}))
            .await
            .expect(200);
        assert_eq!(
            res.data(),
            &json!([{"id": b, "deleted": true}, {"id": a, "deleted": true}])
        );
        assert_eq!(stored_ids(&app).await, [keep]);
        app.get(&format!("/v1/pins/{a}")).await.expect_error(404, "NOT_FOUND", None);
    }

    async fn batch_delete_with_an_unknown_id_deletes_nothing(app) {
        let a = create(&app, "a").await;
        let b = create(&app, "b").await;
        let body = json!({"pin_ids": [a, "p-doesnotexist0000000000", b]});
        let res = app
            .post("/v1/pins/batch/delete", &body)
            .await
            .expect_error(404, "NOT_FOUND", None);
        assert_eq!(index(&res), &json!(1));
        assert_eq!(stored_ids(&app).await, [b.clone(), a.clone()]);
        read(&app, &a).await;
        read(&app, &b).await;
    }

    async fn idempotent_create_replays_the_first_response(app) {
        let body = stat_cards("once");
        let first = post_with_key(&app, "/v1/pins", "create-once-1", &body).await.expect(200);
        assert_eq!(first.header("idempotent-replayed"), None);
        let again = post_with_key(&app, "/v1/pins", "create-once-1", &body).await.expect(200);
        assert_eq!(again.header("idempotent-replayed"), Some("true"));
        assert_eq!(again.data(), first.data(), "same response");
        let id = first.data()["pin_id"].as_str().unwrap().to_owned();
        assert_eq!(stored_ids(&app).await, [id]);
    }

    async fn idempotency_key_with_another_body_is_409(app) {
        post_with_key(&app, "/v1/pins", "key-2", &stat_cards("one")).await.expect(200);
        post_with_key(&app, "/v1/pins", "key-2", &stat_cards("two"))
            .await
            .expect_error(409, "CONFLICT", None);
        assert_eq!(stored_ids(&app).await.len(), 1);
    }

    async fn different_idempotency_keys_create_different_pins(app) {
        let body = stat_cards("same body");
        let one = post_with_key(&app, "/v1/pins", "key-a", &body).await.expect(200);
        let two = post_with_key(&app, "/v1/pins", "key-b", &body).await.expect(200);
        assert_ne!(one.data()["pin_id"], two.data()["pin_id"]);
        assert_eq!(stored_ids(&app).await.len(), 2);
    }

    async fn idempotent_batch_create_replays_the_first_response(app) {
        let body = json!({"pins": [stat_cards("a"), stat_cards("b")]});
        let first = post_with_key(&app, "/v1/pins/batch", "batch-1", &body).await.expect(200);
        assert_eq!(first.header("idempotent-replayed"), None);
        let again = post_with_key(&app, "/v1/pins/batch", "batch-1", &body).await.expect(200);
        assert_eq!(again.header("idempotent-replayed"), Some("true"));
        assert_eq!(again.data(), first.data());
        assert_eq!(stored_ids(&app).await.len(), 2);
        let other = json!({"pins": [stat_cards("a")]});
        post_with_key(&app, "/v1/pins/batch", "batch-1", &other)
            .await
            .expect_error(409, "CONFLICT", None);
        assert_eq!(stored_ids(&app).await.len(), 2);
    }

    async fn concurrent_requests_with_one_idempotency_key_create_one_pin(app) {
        let body = stat_cards("raced");
        let (one, two) = tokio::join!(
            post_with_key(&app, "/v1/pins", "race-1", &body),
            post_with_key(&app, "/v1/pins", "race-1", &body),
        );
        let (one, two) = (one.expect(200), two.expect(200));
        assert_eq!(one.data()["pin_id"], two.data()["pin_id"]);
        let replayed = [&one, &two]
            .iter()
            .filter(|r| r.header("idempotent-replayed") == Some("true"))
            .count();
        assert_eq!(replayed, 1, "exactly one is the replay");
        assert_eq!(stored_ids(&app).await.len(), 1);
    }

    async fn concurrent_batches_with_one_idempotency_key_create_once(app) {
        let body = json!({"pins": [stat_cards("a"), stat_cards("b")]});
        let (one, two) = tokio::join!(
            post_with_key(&app, "/v1/pins/batch", "race-batch", &body),
            post_with_key(&app, "/v1/pins/batch", "race-batch", &body),
        );
        let (one, two) = (one.expect(200), two.expect(200));
        assert_eq!(one.data(), two.data());
        assert_eq!(stored_ids(&app).await.len(), 2);
    }
}

/// With `idempotency_ttl_secs = 1`, a key no longer replays once a second has passed: the
/// same request then makes a new pin.
async fn check_idempotency_ttl(app: TestApp) {
    let body = stat_cards("expiring");
    let first = post_with_key(&app, "/v1/pins", "short-lived", &body)
        .await
        .expect(200);
    let replay = post_with_key(&app, "/v1/pins", "short-lived", &body)
        .await
        .expect(200);
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let later = post_with_key(&app, "/v1/pins", "short-lived", &body)
        .await
        .expect(200);
    assert_eq!(later.header("idempotent-replayed"), None, "{}", later.body);
    assert_ne!(later.data()["pin_id"], first.data()["pin_id"]);
    assert_eq!(stored_ids(&app).await.len(), 2);
}

mod idempotency_key_expires_after_the_configured_ttl {
    use super::*;

    const TTL_ONE_SECOND: &str = "[limits]\nidempotency_ttl_secs = 1";

    #[tokio::test]
    async fn sqlite() {
        check_idempotency_ttl(TestApp::sqlite_with(TTL_ONE_SECOND).await).await;
    }

    #[tokio::test]
    async fn postgres() {
        crate::skip_without_postgres!();
        check_idempotency_ttl(TestApp::postgres_with(TTL_ONE_SECOND).await).await;
    }
}
