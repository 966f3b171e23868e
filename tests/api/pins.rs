//! Single-pin CRUD: create (both shapes), read, update (PUT and PATCH, every place a
//! configuration may come from), If-Match, delete, and the version history.

use reqwest::Method;
use serde_json::{json, Value};

use crate::{both_stores, helpers::*};

/// A valid stat-cards configuration whose one card shows `value`.
fn cards(value: &str) -> Value {
    json!({"cards": [{"title": "Revenue", "value": value, "trend": "up"}]})
}

/// A stat-cards configuration whose trend is not one of up, down, flat.
fn bad_cards() -> Value {
    json!({"cards": [{"title": "Revenue", "value": "1", "trend": "sideways"}]})
}

/// Epoch milliseconds of an ISO 8601 string field.
fn iso_ms(value: &Value) -> i64 {
    let text = value
        .as_str()
        .unwrap_or_else(|| panic!("not a string: {value}"));
    chrono::DateTime::parse_from_rfc3339(text)
        .unwrap_or_else(|e| panic!("not ISO 8601 ({e}): {text}"))
        .timestamp_millis()
}

/// Creates `stat_cards("Sales")` and returns its id.
async fn new_pin(app: &TestApp) -> String {
    let created = app.create_pin(&stat_cards("Sales")).await;
    created["pin_id"].as_str().unwrap().to_owned()
}

/// The stored record (asserting 200).
async fn read(app: &TestApp, id: &str) -> Value {
    app.get(&format!("/v1/pins/{id}"))
        .await
        .expect(200)
        .data()
        .clone()
}

async fn update(app: &TestApp, method: Method, id: &str, body: &Value) -> Resp {
    app.send(app.req(method, &format!("/v1/pins/{id}")).json(body))
        .await
}

async fn update_if_match(app: &TestApp, id: &str, etag: &str, body: &Value) -> Resp {
    app.send(
        app.req(Method::PUT, &format!("/v1/pins/{id}"))
            .header("if-match", etag)
            .json(body),
    )
    .await
}

async fn versions(app: &TestApp, id: &str) -> Resp {
    app.get(&format!("/v1/pins/{id}/versions")).await
}

/// A malformed `If-Match` is the caller's mistake, not a stale version: 400, nothing written.
async fn malformed_if_match_is_refused(app: &TestApp, id: &str) {
    for bad in ["3", "\"three\"", "\"1\",", "W/3", "\"1\" \"2\"", "**"] {
        update_if_match(app, id, bad, &json!({"metadata": {"title": "no"}}))
            .await
            .expect_error(400, "VALIDATION_FAILED", Some("If-Match"));
        let path = format!("/v1/pins/{id}");
        app.send(app.req(Method::DELETE, &path).header("if-match", bad))
            .await
            .expect_error(400, "VALIDATION_FAILED", Some("If-Match"));
    }
    let read = app.get(&format!("/v1/pins/{id}")).await.expect(200);
    assert_eq!(read.data()["version"], json!(1), "nothing written");
}

/// The `version` of each entry of a versions list.
fn version_numbers(list: &Resp) -> Vec<i64> {
    list.data()
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_i64().unwrap())
        .collect()
}

both_stores! {
    async fn a_malformed_if_match_is_a_400(app) {
        let id = app.create_pin(&stat_cards("Guarded")).await["id"].as_str().unwrap().to_owned();
        malformed_if_match_is_refused(&app, &id).await;
        // A well-formed list of versions or `*` still works.
        update_if_match(&app, &id, "W/\"9\", \"1\"", &json!({"metadata": {"title": "yes"}})).await.expect(200);
        update_if_match(&app, &id, "*", &json!({"metadata": {"title": "yes again"}})).await.expect(200);
        // Bytes that are not text are malformed too.
        let raw = reqwest::header::HeaderValue::from_bytes(b"\xc2\x84").unwrap();
        let res = app.send(app.req(Method::PUT, &format!("/v1/pins/{id}")).header("if-match", raw).json(&json!({"metadata": {"title": "no"}}))).await;
        res.expect_error(400, "VALIDATION_FAILED", Some("If-Match"));
        // An empty value is an empty list of tags: it asks for nothing.
        update_if_match(&app, &id, "", &json!({"metadata": {"title": "unconditional"}})).await.expect(200);
    }

    async fn create_shape_a_returns_the_whole_record(app) {
        let body = stat_cards("Sales");
        let created = app.create_pin(&body).await;
        let id = created["pin_id"].as_str().unwrap();
        assert!(id.starts_with("p-"), "{created}");
        assert_eq!(created["id"], json!(id));
        let url = created["shareable_url"].as_str().unwrap();
        assert!(url.starts_with("http") && url.contains(id), "{url}");
        let created_at = created["created_at"].as_str().unwrap();
        assert!(created_at.ends_with('Z'), "UTC: {created_at}");
        iso_ms(&created["created_at"]);
        assert_eq!(created["updated_at"], created["created_at"]);
        assert_eq!(created["version"], json!(1));
        assert_eq!(created["pin_type"], json!("stat-cards"));
        assert_eq!(created["pin_config"], body["pin_config"]);
        assert_eq!(created["pin_layout"], json!("1x1"));
        assert_eq!(created["is_public"], json!(false));
        assert_eq!(created["metadata"]["title"], json!("Sales"));
        assert_eq!(created["metadata"]["tags"], json!(["kpi"]));
        assert_eq!(created["metadata"]["provenance"], Value::Null);
    }

    async fn create_shape_b_with_content(app) {
        let created = app
            .create_pin(&json!({
                "data_type": "pin-card",
                "pin_type": "stat-cards",
                "pin_layout": "2x1",
                "content": cards("42"),
                "metadata": {"title": "Quickstart"}
            }))
            .await;
        let id = created["pin_id"].as_str().unwrap();
        assert!(id.starts_with("p-"));
        iso_ms(&created["created_at"]);
        assert!(created["shareable_url"].is_string());
        let stored = read(&app, id).await;
        assert_eq!(stored["pin_config"], cards("42"));
        assert_eq!(stored["pin_layout"], json!("2x1"));
        assert_eq!(stored["metadata"]["title"], json!("Quickstart"));
    }

    async fn create_with_another_data_type_is_refused(app) {
        let body = json!({"data_type": "chart", "pin_type": "stat-cards", "content": cards("1")});
        app.post("/v1/pins", &body)
            .await
            .expect_error(400, "VALIDATION_FAILED", Some("data_type"));
    }

    async fn create_is_public_in_metadata_or_top_level(app) {
        let mut in_metadata = stat_cards("A");
        in_metadata["metadata"]["is_public"] = json!(true);
        assert_eq!(app.create_pin(&in_metadata).await["is_public"], json!(true));
        let mut top_level = stat_cards("B");
        top_level["is_public"] = json!(true);
        let id = app.create_pin(&top_level).await["pin_id"].as_str().unwrap().to_owned();
        assert_eq!(read(&app, &id).await["is_public"], json!(true));
    }

    async fn create_with_different_pin_config_and_content_is_refused(app) {
        let mut body = stat_cards("A");
        body["content"] = cards("other");
        app.post("/v1/pins", &body)
            .await
            .expect_error(400, "VALIDATION_FAILED", Some("content"));
        let list = app.get("/v1/pins").await.expect(200);
        assert_eq!(list.data(), &json!([]));
    }

    async fn read_returns_the_record_with_an_etag(app) {
        let mut created = app.create_pin(&stat_cards("Sales")).await;
        let id = created["pin_id"].as_str().unwrap().to_owned();
        let res = app.get(&format!("/v1/pins/{id}")).await.expect(200);
        assert_eq!(res.header("etag"), Some("\"1\""));
        created.as_object_mut().unwrap().remove("pin_id");
        assert_eq!(res.data(), &created, "read = create response without pin_id");
    }

    async fn read_unknown_pin_is_404(app) {
        app.get("/v1/pins/p-doesnotexist0000000000")
            .await
            .expect_error(404, "NOT_FOUND", None);
    }

    async fn update_response_is_id_updated_at_ms_and_version(app) {
        let id = new_pin(&app).await;
        let created_at = read(&app, &id).await["created_at"].clone();
        let res = update(&app, Method::PUT, &id, &json!({"pin_config": cards("B")}))
            .await
            .expect(200);
        let data = res.data().as_object().unwrap();
        let mut keys: Vec<&str> = data.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["id", "updated_at", "version"], "{}", res.body);
        assert_eq!(data["id"], json!(id));
        assert_eq!(data["version"], json!(2));
        let updated_at = data["updated_at"].as_i64().expect("updated_at is integer ms");
        assert!(updated_at >= iso_ms(&created_at));
        let stored = read(&app, &id).await;
        assert_eq!(iso_ms(&stored["updated_at"]), updated_at);
        assert_eq!(stored["created_at"], created_at);
        assert_eq!(stored["version"], json!(2));
    }

    async fn update_pin_config_via_put_and_patch(app) {
        let id = new_pin(&app).await;
        update(&app, Method::PUT, &id, &json!({"pin_config": cards("put")}))
            .await
            .expect(200);
        assert_eq!(read(&app, &id).await["pin_config"], cards("put"));
        let res = update(&app, Method::PATCH, &id, &json!({"pin_config": cards("patch")}))
            .await
            .expect(200);
        assert_eq!(res.data()["version"], json!(3));
        let stored = read(&app, &id).await;
        assert_eq!(stored["pin_config"], cards("patch"));
        assert_eq!(stored["version"], json!(3));
    }

    async fn update_content_via_put_and_patch(app) {
        let id = new_pin(&app).await;
        update(&app, Method::PUT, &id, &json!({"content": cards("put")}))
            .await
            .expect(200);
        assert_eq!(read(&app, &id).await["pin_config"], cards("put"));
        update(&app, Method::PATCH, &id, &json!({"content": cards("patch")}))
            .await
            .expect(200);
        assert_eq!(read(&app, &id).await["pin_config"], cards("patch"));
    }

    async fn update_metadata_pin_config_via_put_and_patch(app) {
        let id = new_pin(&app).await;
        update(&app, Method::PUT, &id, &json!({"metadata": {"pin_config": cards("put")}}))
            .await
            .expect(200);
        let stored = read(&app, &id).await;
        assert_eq!(stored["pin_config"], cards("put"));
        assert_eq!(stored["metadata"]["title"], json!("Sales"), "title kept");
        update(&app, Method::PATCH, &id, &json!({"metadata": {"pin_config": cards("patch")}}))
            .await
            .expect(200);
        assert_eq!(read(&app, &id).await["pin_config"], cards("patch"));
    }

    async fn update_invalid_config_names_its_location(app) {
        let id = new_pin(&app).await;
        update(&app, Method::PUT, &id, &json!({"pin_config": bad_cards()}))
            .await
            .expect_error(400, "PIN_CONFIG_INVALID", Some("pin_config.cards[0].trend"));
        update(&app, Method::PATCH, &id, &json!({"metadata": {"pin_config": bad_cards()}}))
            .await
            .expect_error(
                400,
                "PIN_CONFIG_INVALID",
                Some("metadata.pin_config.cards[0].trend"),
            );
        let stored = read(&app, &id).await;
        assert_eq!(stored["version"], json!(1));
        assert_eq!(stored["pin_config"], stat_cards("x")["pin_config"]);
    }

    async fn update_provenance_then_null_clears_it(app) {
        let id = new_pin(&app).await;
        let provenance = json!({
            "run_id": "run-7",
            "updated_by": "nightly-agent",
            "trace_pin_id": id,
            "sources": [{"type": "url", "ref": "https://example.com/report"}]
        });
        update(&app, Method::PUT, &id, &json!({"metadata": {"provenance": provenance}}))
            .await
            .expect(200);
        assert_eq!(read(&app, &id).await["metadata"]["provenance"], provenance);
        update(&app, Method::PATCH, &id, &json!({"metadata": {"provenance": null}}))
            .await
            .expect(200);
        let stored = read(&app, &id).await;
        assert_eq!(stored["metadata"]["provenance"], Value::Null);
        assert_eq!(stored["metadata"]["title"], json!("Sales"), "title kept");
        assert_eq!(stored["metadata"]["tags"], json!(["kpi"]), "tags kept");
        assert_eq!(stored["version"], json!(3));
    }

    async fn update_metadata_merges_key_by_key(app) {
        let id = new_pin(&app).await;
        update(&app, Method::PATCH, &id, &json!({"metadata": {"title": "Renamed"}}))
            .await
            .expect(200);
        let stored = read(&app, &id).await;
        assert_eq!(stored["metadata"]["title"], json!("Renamed"));
        assert_eq!(stored["metadata"]["tags"], json!(["kpi"]));
        assert_eq!(stored["pin_config"], stat_cards("x")["pin_config"]);
        update(&app, Method::PUT, &id, &json!({"metadata": {"tags": ["ops", "daily"]}}))
            .await
            .expect(200);
        let stored = read(&app, &id).await;
        assert_eq!(stored["metadata"]["title"], json!("Renamed"));
        assert_eq!(stored["metadata"]["tags"], json!(["ops", "daily"]));
    }

    async fn update_is_public_top_level_and_in_metadata(app) {
        let id = new_pin(&app).await;
        update(&app, Method::PUT, &id, &json!({"is_public": true}))
            .await
            .expect(200);
        assert_eq!(read(&app, &id).await["is_public"], json!(true));
        update(&app, Method::PATCH, &id, &json!({"metadata": {"is_public": false}}))
            .await
            .expect(200);
        let stored = read(&app, &id).await;
        assert_eq!(stored["is_public"], json!(false));
        assert_eq!(stored["metadata"]["title"], json!("Sales"));
    }

    async fn update_with_different_pin_config_and_content_is_refused(app) {
        let id = new_pin(&app).await;
        let body = json!({"pin_config": cards("one"), "content": cards("two")});
        update(&app, Method::PUT, &id, &body)
            .await
            .expect_error(400, "VALIDATION_FAILED", Some("content"));
        let stored = read(&app, &id).await;
        assert_eq!(stored["version"], json!(1));
        assert_eq!(stored["pin_config"], stat_cards("x")["pin_config"]);
    }

    async fn update_with_empty_body_is_refused(app) {
        let id = new_pin(&app).await;
        update(&app, Method::PUT, &id, &json!({}))
            .await
            .expect_error(400, "VALIDATION_FAILED", None);
        update(&app, Method::PATCH, &id, &json!({}))
            .await
            .expect_error(400, "VALIDATION_FAILED", None);
        assert_eq!(read(&app, &id).await["version"], json!(1));
    }

    async fn update_unknown_pin_is_404(app) {
        update(&app, Method::PUT, "p-doesnotexist0000000000", &json!({"is_public": true}))
            .await
            .expect_error(404, "NOT_FOUND", None);
    }

    async fn changing_pin_type_needs_a_config_valid_for_the_new_type(app) {
        let id = new_pin(&app).await;
        // The current stat-cards configuration is no flexible table.
        update(&app, Method::PATCH, &id, &json!({"pin_type": "flexible-table"}))
            .await
            .expect_error(400, "PIN_CONFIG_INVALID", None);
        // Nor is a new stat-cards configuration.
        let body = json!({"pin_type": "flexible-table", "pin_config": cards("1")});
        update(&app, Method::PUT, &id, &body)
            .await
            .expect_error(400, "PIN_CONFIG_INVALID", None);
        assert_eq!(read(&app, &id).await["pin_type"], json!("stat-cards"));

        let body = json!({"pin_type": "flexible-table", "pin_config": table_config()});
        update(&app, Method::PUT, &id, &body).await.expect(200);
        let stored = read(&app, &id).await;
        assert_eq!(stored["pin_type"], json!("flexible-table"));
        assert_eq!(stored["pin_config"], table_config());
        assert_eq!(stored["version"], json!(2));
    }

    async fn config_alone_is_checked_against_the_current_type(app) {
        let id = new_pin(&app).await;
        update(&app, Method::PUT, &id, &json!({"pin_config": table_config()}))
            .await
            .expect_error(400, "PIN_CONFIG_INVALID", None);
        assert_eq!(read(&app, &id).await["version"], json!(1));
    }

    async fn if_match_with_the_current_version_updates(app) {
        let id = new_pin(&app).await;
        let etag = app.get(&format!("/v1/pins/{id}")).await.expect(200);
        let etag = etag.header("etag").unwrap().to_owned();
        assert_eq!(etag, "\"1\"");
        update_if_match(&app, &id, &etag, &json!({"pin_config": cards("B")}))
            .await
            .expect(200);
        let after = app.get(&format!("/v1/pins/{id}")).await.expect(200);
        assert_eq!(after.header("etag"), Some("\"2\""));
        assert_eq!(after.data()["pin_config"], cards("B"));
    }

    async fn if_match_with_a_stale_version_is_412_and_changes_nothing(app) {
        let id = new_pin(&app).await;
        update(&app, Method::PUT, &id, &json!({"pin_config": cards("first writer")}))
            .await
            .expect(200);
        update_if_match(&app, &id, "\"1\"", &json!({"pin_config": cards("second writer")}))
            .await
            .expect_error(412, "PRECONDITION_FAILED", None);
        let res = app.send(
            app.req(Method::PATCH, &format!("/v1/pins/{id}"))
                .header("if-match", "\"1\"")
                .json(&json!({"metadata": {"title": "stale"}})),
        )
        .await;
        res.expect_error(412, "PRECONDITION_FAILED", None);
        let stored = read(&app, &id).await;
        assert_eq!(stored["version"], json!(2));
        assert_eq!(stored["pin_config"], cards("first writer"));
        assert_eq!(stored["metadata"]["title"], json!("Sales"));
    }

    async fn if_match_on_delete(app) {
        let id = new_pin(&app).await;
        let path = format!("/v1/pins/{id}");
        app.send(app.req(Method::DELETE, &path).header("if-match", "\"2\""))
            .await
            .expect_error(412, "PRECONDITION_FAILED", None);
        assert_eq!(read(&app, &id).await["version"], json!(1), "still there");
        let res = app
            .send(app.req(Method::DELETE, &path).header("if-match", "\"1\""))
            .await
            .expect(200);
        assert_eq!(res.data(), &json!({"id": id, "deleted": true}));
        app.get(&path).await.expect_error(404, "NOT_FOUND", None);
    }

    async fn delete_then_read_and_delete_again_are_404(app) {
        let id = new_pin(&app).await;
        let path = format!("/v1/pins/{id}");
        let res = app.delete(&path).await.expect(200);
        assert_eq!(res.data(), &json!({"id": id, "deleted": true}));
        app.get(&path).await.expect_error(404, "NOT_FOUND", None);
        app.delete(&path).await.expect_error(404, "NOT_FOUND", None);
        let list = app.get("/v1/pins").await.expect(200);
        assert_eq!(list.data(), &json!([]));
    }

    async fn versions_list_past_versions_newest_first(app) {
        let id = new_pin(&app).await;
        let list = versions(&app, &id).await.expect(200);
        assert_eq!(list.data(), &json!([]), "no past version yet");
        update(&app, Method::PUT, &id, &json!({"pin_config": cards("v2")}))
            .await
            .expect(200);
        let third = json!({"pin_config": cards("v3"), "metadata": {"title": "Third"}});
        update(&app, Method::PATCH, &id, &third)
            .await
            .expect(200);
        let list = versions(&app, &id).await.expect(200);
        assert_eq!(version_numbers(&list), [2, 1]);
        let past = list.data().as_array().unwrap();
        assert_eq!(past[0]["pin_config"], cards("v2"));
        assert_eq!(past[0]["metadata"]["title"], json!("Sales"));
        assert_eq!(past[1]["pin_config"], stat_cards("x")["pin_config"]);
        assert!(past.iter().all(|v| v["id"] == json!(id)), "{}", list.body);
        assert_eq!(list.body["pagination"]["has_more"], json!(false));
        assert_eq!(list.body["pagination"]["next_cursor"], Value::Null);
        assert_eq!(read(&app, &id).await["pin_config"], cards("v3"));
    }

    async fn versions_page_with_a_cursor(app) {
        let id = new_pin(&app).await;
        for n in 2..=4 {
            let body = json!({"pin_config": cards(&format!("v{n}"))});
            update(&app, Method::PUT, &id, &body).await.expect(200);
        }
        let path = format!("/v1/pins/{id}/versions");
        let first = app.get(&format!("{path}?limit=2")).await.expect(200);
        assert_eq!(version_numbers(&first), [3, 2]);
        assert_eq!(first.body["pagination"]["has_more"], json!(true));
        let cursor = first.body["pagination"]["next_cursor"].as_str().unwrap();
        let rest = app
            .send(app.req(Method::GET, &path).query(&[("limit", "2"), ("cursor", cursor)]))
            .await
            .expect(200);
        assert_eq!(version_numbers(&rest), [1]);
        assert_eq!(rest.body["pagination"], json!({"next_cursor": null, "has_more": false}));
    }

    async fn concurrent_writers_with_the_same_if_match_one_wins(app) {
        let id = new_pin(&app).await;
        let body_one = json!({"pin_config": cards("one")});
        let body_two = json!({"pin_config": cards("two")});
        let (one, two) = tokio::join!(
            update_if_match(&app, &id, "\"1\"", &body_one),
            update_if_match(&app, &id, "\"1\"", &body_two),
        );
        let mut statuses = [one.status, two.status];
        statuses.sort_unstable();
        assert_eq!(statuses, [200, 412], "one: {} two: {}", one.body, two.body);
        let winner = if one.status == 200 { "one" } else { "two" };
        let stored = read(&app, &id).await;
        assert_eq!(stored["version"], json!(2));
        assert_eq!(stored["pin_config"], cards(winner));
    }

    async fn concurrent_updates_each_make_a_version(app) {
        let id = new_pin(&app).await;
        let title = json!({"metadata": {"title": "one"}});
        let tags = json!({"metadata": {"tags": ["two"]}});
        let (one, two) = tokio::join!(
            update(&app, Method::PUT, &id, &title),
            update(&app, Method::PATCH, &id, &tags),
        );
        let mut versions_seen = [
            one.expect(200).data()["version"].as_i64().unwrap(),
            two.expect(200).data()["version"].as_i64().unwrap(),
        ];
        versions_seen.sort_unstable();
        assert_eq!(versions_seen, [2, 3]);
        let stored = read(&app, &id).await;
        assert_eq!(stored["version"], json!(3));
        assert_eq!(stored["metadata"]["title"], json!("one"), "no lost update");
        assert_eq!(stored["metadata"]["tags"], json!(["two"]), "no lost update");
        assert_eq!(version_numbers(&versions(&app, &id).await.expect(200)), [2, 1]);
    }

    async fn versions_of_unknown_pin_is_404(app) {
        versions(&app, "p-doesnotexist0000000000")
            .await
            .expect_error(404, "NOT_FOUND", None);
    }
}

/// With `version_retention = 2`, only the two newest past versions are listed, after every
/// write: a write prunes every few versions, but what it hasn't pruned yet is never shown.
async fn check_retention(app: TestApp) {
    let id = new_pin(&app).await;
    for n in 2..=20 {
        update(
            &app,
            Method::PUT,
            &id,
            &json!({"pin_config": cards(&format!("v{n}"))}),
        )
        .await
        .expect(200);
        let list = versions(&app, &id).await.expect(200);
        let kept: Vec<i64> = (1.max(n - 2)..n).rev().collect();
        assert_eq!(version_numbers(&list), kept, "after version {n}");
    }
    let list = versions(&app, &id).await.expect(200);
    assert_eq!(list.data()[0]["pin_config"], cards("v19"));
    assert_eq!(list.data()[1]["pin_config"], cards("v18"));
    assert_eq!(read(&app, &id).await["version"], json!(20));
}

mod version_retention_keeps_two {
    use super::*;

    const RETAIN_TWO: &str = "[limits]\nversion_retention = 2";

    #[tokio::test]
    async fn sqlite() {
        check_retention(TestApp::sqlite_with(RETAIN_TWO).await).await;
    }

    #[tokio::test]
    async fn postgres() {
        crate::skip_without_postgres!();
        check_retention(TestApp::postgres_with(RETAIN_TWO).await).await;
    }
}

/// The titles of the workspace's pins (up to 200), sorted.
async fn stored_titles(app: &TestApp) -> Vec<String> {
    let listed = app.get("/v1/pins?limit=200").await.expect(200);
    let mut titles: Vec<String> = listed
        .data()
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["metadata"]["title"].as_str().unwrap().to_owned())
        .collect();
    titles.sort();
    titles
}

/// A trigger that makes the database refuse any pin titled `poison`.
const POISON_SQLITE: &str =
    "CREATE TRIGGER poison BEFORE INSERT ON pins WHEN NEW.title = 'poison' \
     BEGIN SELECT RAISE(ABORT, 'poisoned'); END;";
const POISON_POSTGRES: &str = "CREATE FUNCTION poison() RETURNS trigger LANGUAGE plpgsql AS $$ \
     BEGIN IF NEW.title = 'poison' THEN RAISE EXCEPTION 'poisoned'; END IF; RETURN NEW; END $$; \
     CREATE TRIGGER poison BEFORE INSERT ON pins FOR EACH ROW EXECUTE FUNCTION poison();";

/// What a wave of concurrent creates sends: a single create, one with an Idempotency-Key,
/// or a batch of `n` pins; the first pin of one of them is titled `poison`.
#[derive(Clone, Copy)]
enum Send {
    Plain,
    Keyed,
    Batch(usize),
}

/// Sends `sends` at once; the one at `poisoned` carries a pin titled `poison`. Returns the
/// titles the others stored, after checking that only the poisoned request failed.
async fn wave(app: &TestApp, name: &str, sends: &[Send], poisoned: usize) -> Vec<String> {
    let titles = |i: usize, n: usize| -> Vec<String> {
        (0..n)
            .map(|j| match (i == poisoned, j) {
                (true, 0) => "poison".to_owned(),
                _ => format!("{name} {i}.{j}"),
            })
            .collect()
    };
    let requests = sends.iter().enumerate().map(|(i, send)| async move {
        match *send {
            Send::Plain => app.post("/v1/pins", &stat_cards(&titles(i, 1)[0])).await,
            Send::Keyed => {
                let req = app
                    .req(Method::POST, "/v1/pins")
                    .header("idempotency-key", format!("{name}-{i}"));
                app.send(req.json(&stat_cards(&titles(i, 1)[0]))).await
            }
            Send::Batch(n) => {
                let pins: Vec<Value> = titles(i, n).iter().map(|t| stat_cards(t)).collect();
                app.post("/v1/pins/batch", &json!({ "pins": pins })).await
            }
        }
    });
    let answers = futures::future::join_all(requests).await;
    let mut stored = Vec::new();
    for (i, (answer, send)) in answers.iter().zip(sends).enumerate() {
        if i == poisoned {
            assert_eq!(answer.status, 500, "{name} {i}: {:?}", answer.body);
            assert_eq!(answer.code(), "INTERNAL_ERROR");
            continue;
        }
        assert_eq!(answer.status, 200, "{name} {i}: {:?}", answer.body);
        stored.extend(titles(i, if let Send::Batch(n) = send { *n } else { 1 }));
    }
    stored
}

both_stores! {
    // A create the database refuses fails alone, wherever it sits. On SQLite concurrent
    // creates share a commit and are first written together (in one statement, or in one
    // transaction past 100 rows); when that fails they are written one by one.
    async fn a_create_the_database_refuses_fails_alone(app) {
        app.execute_sql(POISON_SQLITE, POISON_POSTGRES).await;
        let mut expected = wave(&app, "plain", &[Send::Plain; 16], 7).await;
        expected.extend(wave(&app, "batches", &[Send::Batch(17); 6], 3).await);
        let mixed: Vec<Send> = (0..18).map(|i| [Send::Plain, Send::Keyed, Send::Batch(2)][i % 3]).collect();
        // Whether creates share a commit depends on timing: several mixed waves, each with
        // a poisoned batch, make it likely that one is written with others; the last has a
        // poisoned keyed create.
        for name in ["mixed", "mixed-again", "mixed-third"] {
            expected.extend(wave(&app, name, &mixed, 8).await);
        }
        expected.extend(wave(&app, "keyed", &mixed, 10).await);
        let titles = stored_titles(&app).await;
        expected.sort();
        assert_eq!(titles, expected);
        // The refused keyed create left no claim behind: its retry is refused again, not
        // replayed.
        let retry = app.req(Method::POST, "/v1/pins").header("idempotency-key", "keyed-10");
        app.send(retry.json(&stat_cards("poison"))).await.expect_error(500, "INTERNAL_ERROR", None);
    }
}

both_stores! {
    // Concurrent creates (grouped into shared commits on SQLite) are each stored exactly
    // once, and an invalid one in the crowd is refused alone.
    async fn concurrent_creates_are_all_stored(app) {
        let creates = (0..48).map(|i| {
            let body = if i == 20 {
                json!({"pin_type": "stat-cards", "pin_config": {"cards": []}})
            } else {
                stat_cards(&format!("crowd {i}"))
            };
            let app = &app;
            async move { app.post("/v1/pins", &body).await }
        });
        let answers = futures::future::join_all(creates).await;
        let ok: Vec<_> = answers.iter().filter(|r| r.status == 200).collect();
        assert_eq!(ok.len(), 47);
        assert_eq!(answers[20].status, 400);
        let titles = stored_titles(&app).await;
        let mut expected: Vec<String> = (0..48).filter(|i| *i != 20).map(|i| format!("crowd {i}")).collect();
        expected.sort();
        assert_eq!(titles, expected);
    }
}
