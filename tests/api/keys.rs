//! Pin keys (CONTRACT.md 14): `key` on create, update and every record, its pattern, one pin
//! per key in a workspace (409 naming the field), `GET /pins?key=`, and the
//! `GET|PATCH|DELETE /pins/by-key/{key}` routes, which act like the by-id ones.

use reqwest::Method;
use serde_json::{json, Value};

use crate::{both_stores, helpers::*};

/// Values the pattern `^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$` refuses (or that are no string).
fn bad_keys() -> Vec<Value> {
    vec![
        json!(""),
        json!("-leading-dash"),
        json!(".hidden"),
        json!("has space"),
        json!("a/b"),
        json!("über"),
        json!("k".repeat(129)),
        json!(5),
        json!(["a"]),
    ]
}

/// The `id` of a pin record or create answer.
fn id_of(pin: &Value) -> String {
    pin["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no id: {pin}"))
        .to_owned()
}

/// Creates `stat_cards(title)` carrying `key` and returns its id.
async fn keyed(app: &TestApp, title: &str, key: &str) -> String {
    id_of(&app.create_pin(&with_key(stat_cards(title), key)).await)
}

async fn read(app: &TestApp, id: &str) -> Value {
    app.get(&format!("/v1/pins/{id}"))
        .await
        .expect(200)
        .data()
        .clone()
}

/// The ids of the pins `GET /pins?key=..` lists, sorted.
async fn ids_with_keys(app: &TestApp, keys: &[&str]) -> Vec<String> {
    let mut ids: Vec<String> = pins_with_keys(app, keys).await.iter().map(id_of).collect();
    ids.sort();
    ids
}

/// Every pin of the workspace (up to 200).
async fn all_pins(app: &TestApp) -> Vec<Value> {
    let res = app.get("/v1/pins?limit=200").await.expect(200);
    res.data().as_array().unwrap().clone()
}

/// `method path` with an `If-Match` header (and `body` as JSON when given).
async fn if_match(
    app: &TestApp,
    method: Method,
    path: &str,
    etag: &str,
    body: Option<&Value>,
) -> Resp {
    let mut req = app.req(method, path).header("if-match", etag);
    if let Some(body) = body {
        req = req.json(body);
    }
    app.send(req).await
}

fn sorted(mut ids: Vec<String>) -> Vec<String> {
    ids.sort();
    ids
}

both_stores! {
    async fn every_record_carries_its_key_or_null(app) {
        let shape_a = with_key(stat_cards("Orders"), "orders.daily:eu-1");
        let created = app.create_pin(&shape_a).await;
        assert_eq!(created["key"], json!("orders.daily:eu-1"), "{created}");
        let a = id_of(&created);
        let shape_b = json!({
            "data_type": "pin-card", "pin_type": "flexible-table", "content": table_config(),
            "key": "9_lives", "metadata": {"title": "Table"}
        });
        let b = id_of(&app.create_pin(&shape_b).await);
        let plain = app.create_pin(&stat_cards("No key")).await;
        assert_eq!(plain.get("key"), Some(&Value::Null), "key is present and null: {plain}");
        let plain = id_of(&plain);

        assert_eq!(read(&app, &a).await["key"], json!("orders.daily:eu-1"));
        assert_eq!(read(&app, &b).await["key"], json!("9_lives"));
        assert_eq!(read(&app, &plain).await.get("key"), Some(&Value::Null));
        for pin in all_pins(&app).await {
            let expected = match id_of(&pin) {
                id if id == a => json!("orders.daily:eu-1"),
                id if id == b => json!("9_lives"),
                _ => Value::Null,
            };
            assert_eq!(pin.get("key"), Some(&expected), "{pin}");
        }
        let got = app.post("/v1/pins/batch/get", &json!({"pin_ids": [a, plain]})).await.expect(200);
        assert_eq!(got.data()[0]["key"], json!("orders.daily:eu-1"));
        assert_eq!(got.data()[1].get("key"), Some(&Value::Null));

        // A past version keeps the key it had.
        app.patch(&format!("/v1/pins/{a}"), &json!({"key": "orders.weekly"})).await.expect(200);
        let versions = app.get(&format!("/v1/pins/{a}/versions")).await.expect(200);
        assert_eq!(versions.data()[0]["version"], json!(1));
        assert_eq!(versions.data()[0]["key"], json!("orders.daily:eu-1"));
        assert_eq!(read(&app, &a).await["key"], json!("orders.weekly"));
        app.patch(&format!("/v1/pins/{plain}"), &json!({"metadata": {"title": "t"}})).await.expect(200);
        let versions = app.get(&format!("/v1/pins/{plain}/versions")).await.expect(200);
        assert_eq!(versions.data()[0].get("key"), Some(&Value::Null));
    }

    async fn a_key_must_match_the_pattern_everywhere(app) {
        let target = id_of(&app.create_pin(&stat_cards("Target")).await);
        let path = format!("/v1/pins/{target}");
        for bad in bad_keys() {
            let mut body = stat_cards("Bad");
            body["key"] = bad.clone();
            app.post("/v1/pins", &body).await.expect_error(400, "VALIDATION_FAILED", Some("key"));
            app.put(&path, &json!({"key": bad})).await.expect_error(400, "VALIDATION_FAILED", Some("key"));
            app.patch(&path, &json!({"key": bad})).await.expect_error(400, "VALIDATION_FAILED", Some("key"));
            let batch = json!({"pins": [with_key(stat_cards("ok"), "fine"), body]});
            let res = app.post("/v1/pins/batch", &batch).await
                .expect_error(400, "VALIDATION_FAILED", Some("pins[1].key"));
            assert_eq!(res.body["error"]["details"]["index"], json!(1), "{}", res.body);
        }
        let pins = all_pins(&app).await;
        assert_eq!(pins.len(), 1, "nothing stored: {pins:?}");
        assert_eq!(pins[0]["version"], json!(1), "nothing changed");
        assert_eq!(pins[0]["key"], Value::Null);

        // The longest key and every allowed character.
        let longest = "k".repeat(128);
        for key in [longest.as_str(), "A.b_c:d-9", "7"] {
            let created = app.create_pin(&with_key(stat_cards(key), key)).await;
            assert_eq!(created["key"], json!(key));
        }
    }

    async fn a_taken_key_is_a_conflict_naming_the_field(app) {
        let orders = keyed(&app, "Orders", "orders").await;
        app.post("/v1/pins", &with_key(stat_cards("Again"), "orders")).await
            .expect_error(409, "CONFLICT", Some("key"));

        let shipping = keyed(&app, "Shipping", "shipping").await;
        let path = format!("/v1/pins/{shipping}");
        app.put(&path, &json!({"key": "orders"})).await.expect_error(409, "CONFLICT", Some("key"));
        let res = app.patch(&path, &json!({"key": "orders", "metadata": {"title": "x"}})).await;
        res.expect_error(409, "CONFLICT", Some("key"));
        let stored = read(&app, &shipping).await;
        assert_eq!(stored["key"], json!("shipping"));
        assert_eq!(stored["metadata"]["title"], json!("Shipping"), "a refused update writes nothing");
        assert_eq!(stored["version"], json!(1));

        let batch = json!({"pins": [with_key(stat_cards("fresh"), "fresh"), with_key(stat_cards("dup"), "orders")]});
        let res = app.post("/v1/pins/batch", &batch).await.expect_error(409, "CONFLICT", Some("key"));
        assert_eq!(res.body["error"]["details"]["index"], json!(1), "{}", res.body);
        assert_eq!(ids_with_keys(&app, &["fresh"]).await, Vec::<String>::new(), "all or nothing");
        let batch = json!({"pins": [{"id": orders, "metadata": {"title": "o"}}, {"id": shipping, "key": "orders"}]});
        let res = app.post("/v1/pins/batch/update", &batch).await.expect_error(409, "CONFLICT", Some("key"));
        assert_eq!(res.body["error"]["details"]["index"], json!(1), "{}", res.body);
        assert_eq!(read(&app, &shipping).await["version"], json!(1), "a refused batch writes nothing");
        assert_eq!(all_pins(&app).await.len(), 2);

        // A pin keeping its own key is no conflict.
        let res = app.put(&format!("/v1/pins/{orders}"), &json!({"key": "orders", "metadata": {"title": "Orders 2"}})).await;
        assert_eq!(res.expect(200).data()["version"], json!(2));
        assert_eq!(ids_with_keys(&app, &["orders"]).await, [orders]);
    }

    async fn key_null_removes_the_key_and_a_freed_key_can_be_taken(app) {
        let first = keyed(&app, "First", "nightly").await;
        let res = app.patch(&format!("/v1/pins/{first}"), &json!({"key": null})).await.expect(200);
        assert_eq!(res.data()["version"], json!(2));
        let stored = read(&app, &first).await;
        assert_eq!(stored.get("key"), Some(&Value::Null), "{stored}");
        assert_eq!(stored["metadata"]["title"], json!("First"), "only the key changed");
        assert_eq!(ids_with_keys(&app, &["nightly"]).await, Vec::<String>::new());
        app.get("/v1/pins/by-key/nightly").await.expect_error(404, "NOT_FOUND", None);

        let second = keyed(&app, "Second", "nightly").await;
        assert_eq!(ids_with_keys(&app, &["nightly"]).await, [second.as_str()]);
        // Renaming frees the old key too, and so does deleting.
        app.put(&format!("/v1/pins/{second}"), &json!({"key": "hourly"})).await.expect(200);
        let third = keyed(&app, "Third", "nightly").await;
        app.delete(&format!("/v1/pins/{third}")).await.expect(200);
        let fourth = keyed(&app, "Fourth", "nightly").await;
        assert_eq!(ids_with_keys(&app, &["nightly"]).await, [fourth]);
        assert_eq!(ids_with_keys(&app, &["hourly"]).await, [second]);
    }

    async fn list_filters_by_one_or_several_keys(app) {
        let a = keyed(&app, "A", "alpha").await;
        let b = keyed(&app, "B", "beta").await;
        let c = keyed(&app, "C", "gamma").await;
        app.create_pin(&stat_cards("no key")).await;
        assert_eq!(ids_with_keys(&app, &["alpha", "gamma"]).await, sorted(vec![a.clone(), c.clone()]));
        assert_eq!(ids_with_keys(&app, &["beta"]).await, [b.as_str()]);
        assert_eq!(ids_with_keys(&app, &["alpha", "unknown"]).await, [a.as_str()]);
        assert_eq!(ids_with_keys(&app, &["unknown"]).await, Vec::<String>::new());
        let res = app.get("/v1/pins?key=beta").await.expect(200);
        assert_eq!(res.body["pagination"]["has_more"], json!(false));
        assert_eq!(res.data()[0]["key"], json!("beta"));
        // Unprefixed, as every API path.
        let res = app.get("/pins?key=alpha&key=beta").await.expect(200);
        let mut ids: Vec<String> = res.data().as_array().unwrap().iter().map(id_of).collect();
        ids.sort();
        assert_eq!(ids, sorted(vec![a, b]));
        assert_eq!(all_pins(&app).await.len(), 4);
    }

    async fn keys_belong_to_their_workspace(app) {
        let ours = keyed(&app, "Ours", "shared").await;
        let other = app.key_in("team-b", "*").await;
        let by_key = "/v1/pins/by-key/shared";
        call(&app, &other, Method::GET, by_key, None).await.expect_error(404, "NOT_FOUND", None);
        let title = json!({"metadata": {"title": "Stolen"}});
        call(&app, &other, Method::PATCH, by_key, Some(&title)).await.expect_error(404, "NOT_FOUND", None);
        call(&app, &other, Method::DELETE, by_key, None).await.expect_error(404, "NOT_FOUND", None);
        let listed = call(&app, &other, Method::GET, "/v1/pins?key=shared", None).await.expect(200);
        assert_eq!(listed.data(), &json!([]));

        // The same key in another workspace is no conflict, and each sees its own pin.
        let created = call(&app, &other, Method::POST, "/v1/pins", Some(&with_key(stat_cards("Theirs"), "shared"))).await;
        let theirs = id_of(created.expect(200).data());
        assert_ne!(theirs, ours);
        let read_theirs = call(&app, &other, Method::GET, by_key, None).await.expect(200);
        assert_eq!(id_of(read_theirs.data()), theirs);
        assert_eq!(read_theirs.data()["metadata"]["title"], json!("Theirs"));
        let listed = call(&app, &other, Method::GET, "/v1/pins?key=shared", None).await.expect(200);
        let ids: Vec<String> = listed.data().as_array().unwrap().iter().map(id_of).collect();
        assert_eq!(ids, [theirs.as_str()]);
        call(&app, &other, Method::DELETE, by_key, None).await.expect(200);

        let stored = app.get(by_key).await.expect(200);
        assert_eq!(id_of(stored.data()), ours);
        assert_eq!(stored.data()["metadata"]["title"], json!("Ours"));
        assert_eq!(stored.data()["version"], json!(1));
        assert_eq!(ids_with_keys(&app, &["shared"]).await, [ours]);
    }

    async fn read_by_key_is_the_read_by_id_with_its_etag(app) {
        let id = keyed(&app, "Sales", "sales").await;
        let by_id = app.get(&format!("/v1/pins/{id}")).await.expect(200);
        let res = app.get("/v1/pins/by-key/sales").await.expect(200);
        assert_eq!(res.header("etag"), Some("\"1\""));
        assert_eq!(res.data(), by_id.data());
        assert_eq!(app.get("/pins/by-key/sales").await.expect(200).data(), by_id.data());
        app.get("/v1/pins/by-key/nothing-here").await.expect_error(404, "NOT_FOUND", None);
        app.patch(&format!("/v1/pins/{id}"), &json!({"metadata": {"title": "Sales 2"}})).await.expect(200);
        let res = app.get("/v1/pins/by-key/sales").await.expect(200);
        assert_eq!(res.header("etag"), Some("\"2\""));
        assert_eq!(res.data()["metadata"]["title"], json!("Sales 2"));
    }

    async fn patch_by_key_updates_and_honours_if_match(app) {
        let id = keyed(&app, "Ops", "ops").await;
        let path = "/v1/pins/by-key/ops";
        let res = app.patch(path, &json!({"metadata": {"title": "Ops 2"}})).await.expect(200);
        let data = res.data().as_object().unwrap();
        let mut fields: Vec<&str> = data.keys().map(String::as_str).collect();
        fields.sort_unstable();
        assert_eq!(fields, ["id", "updated_at", "version"], "{}", res.body);
        assert_eq!(data["id"], json!(id));
        assert_eq!(data["version"], json!(2));
        assert!(data["updated_at"].is_i64(), "epoch ms: {}", res.body);

        let stale = json!({"metadata": {"title": "stale"}});
        if_match(&app, Method::PATCH, path, "\"1\"", Some(&stale)).await
            .expect_error(412, "PRECONDITION_FAILED", None);
        let stored = read(&app, &id).await;
        assert_eq!(stored["metadata"]["title"], json!("Ops 2"), "nothing written");
        assert_eq!(stored["version"], json!(2));
        let res = if_match(&app, Method::PATCH, path, "\"2\"", Some(&json!({"pin_layout": "2x2"}))).await;
        assert_eq!(res.expect(200).data()["version"], json!(3));
        assert_eq!(read(&app, &id).await["pin_layout"], json!("2x2"));

        // A new key moves the pin to its new address.
        app.patch(path, &json!({"key": "ops-renamed"})).await.expect(200);
        app.get(path).await.expect_error(404, "NOT_FOUND", None);
        assert_eq!(id_of(app.get("/v1/pins/by-key/ops-renamed").await.expect(200).data()), id);
        app.patch("/v1/pins/by-key/nothing-here", &json!({"pin_layout": "2x2"})).await
            .expect_error(404, "NOT_FOUND", None);
    }

    async fn delete_by_key_honours_if_match(app) {
        let id = keyed(&app, "Doomed", "doomed").await;
        let path = "/v1/pins/by-key/doomed";
        if_match(&app, Method::DELETE, path, "\"2\"", None).await
            .expect_error(412, "PRECONDITION_FAILED", None);
        assert_eq!(read(&app, &id).await["version"], json!(1), "still there");
        let res = if_match(&app, Method::DELETE, path, "\"1\"", None).await.expect(200);
        assert_eq!(res.data(), &json!({"id": id, "deleted": true}));
        app.get(path).await.expect_error(404, "NOT_FOUND", None);
        app.get(&format!("/v1/pins/{id}")).await.expect_error(404, "NOT_FOUND", None);
        app.delete(path).await.expect_error(404, "NOT_FOUND", None);
        assert!(all_pins(&app).await.is_empty());
    }
}
