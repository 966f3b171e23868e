//! Datasets (CONTRACT.md 7): the record, validation, the 1 MiB data limit, unique names per
//! workspace, list paging, PUT and PATCH (JSON Merge Patch), If-Match, delete, scopes,
//! workspace isolation and their events. Also the helpers the template and block tests share.

use std::time::Duration;

use reqwest::Method;
use serde_json::{json, Value};

use crate::{both_stores, helpers::*, live::Stream};

/// Creates a dataset (asserting 200) and returns its record.
pub async fn new_dataset(app: &TestApp, name: &str, format: &str, data: Value) -> Value {
    let body = json!({"name": name, "format": format, "data": data});
    app.post("/v1/datasets", &body)
        .await
        .expect(200)
        .data()
        .clone()
}

/// The `id` of a record.
pub fn id_of(record: &Value) -> String {
    record["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no id: {record}"))
        .to_owned()
}

/// Epoch milliseconds of an ISO 8601 UTC string field.
pub fn iso_ms(value: &Value) -> i64 {
    let text = value
        .as_str()
        .unwrap_or_else(|| panic!("not a string: {value}"));
    assert!(text.ends_with('Z'), "not UTC: {text}");
    chrono::DateTime::parse_from_rfc3339(text)
        .unwrap_or_else(|e| panic!("not ISO 8601 ({e}): {text}"))
        .timestamp_millis()
}

/// Long enough that a write made after it has a later millisecond timestamp.
pub async fn tick() {
    tokio::time::sleep(Duration::from_millis(5)).await;
}

#[track_caller]
fn invalid(res: Resp, field: &str) {
    res.expect_error(400, "VALIDATION_FAILED", Some(field));
}

/// A 400 `VALIDATION_FAILED` whose `details.field` names something.
#[track_caller]
fn invalid_somewhere(res: Resp) {
    let res = res.expect_error(400, "VALIDATION_FAILED", None);
    assert!(
        res.body["error"]["details"]["field"]
            .as_str()
            .is_some_and(|f| !f.is_empty()),
        "details.field: {}",
        res.body
    );
}

fn ids(res: &Resp) -> Vec<String> {
    res.data()
        .as_array()
        .unwrap_or_else(|| panic!("no array: {}", res.body))
        .iter()
        .map(id_of)
        .collect()
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

both_stores! {
    async fn create_returns_the_record_and_a_read_returns_it_with_an_etag(app) {
        let body = json!({"name": "sales_q3", "format": "json", "description": "Q3 numbers",
            "data": {"total": 42, "regions": [{"name": "EU", "total": 7.5}], "ok": true}});
        let created = app.post("/v1/datasets", &body).await.expect(200);
        let ds = created.data().clone();
        let id = id_of(&ds);
        assert!(id.starts_with("ds-") && id.len() > 18, "{id}");
        let mut keys: Vec<&str> = ds.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["created_at", "data", "description", "format", "id", "name", "updated_at", "version"]);
        assert_eq!(ds["name"], json!("sales_q3"));
        assert_eq!(ds["format"], json!("json"));
        assert_eq!(ds["data"], body["data"]);
        assert_eq!(ds["description"], json!("Q3 numbers"));
        assert_eq!(ds["version"], json!(1));
        iso_ms(&ds["created_at"]);
        assert_eq!(ds["created_at"], ds["updated_at"]);

        let read = app.get(&format!("/v1/datasets/{id}")).await.expect(200);
        assert_eq!(read.header("etag"), Some("\"1\""));
        assert_eq!(read.data(), &ds);
        // The unprefixed alias serves the same.
        assert_eq!(app.get(&format!("/datasets/{id}")).await.expect(200).data(), &ds);

        let md = app.post("/datasets", &json!({"name": "notes", "format": "markdown", "data": "# Notes\n\n*hi*"})).await.expect(200);
        assert_eq!(md.data()["format"], json!("markdown"));
        assert_eq!(md.data()["data"], json!("# Notes\n\n*hi*"));
        assert_eq!(md.data()["description"], Value::Null);
        assert!(id_of(md.data()) != id);

        // A json dataset holds any JSON value, not only objects.
        for (i, data) in [json!(5), json!("text"), json!([1, {"a": null}]), json!(false)].into_iter().enumerate() {
            let res = app.post("/v1/datasets", &json!({"name": format!("any_{i}"), "format": "json", "data": data})).await.expect(200);
            assert_eq!(res.data()["data"], data);
        }
        app.get("/v1/datasets/ds-doesnotexist000000000").await.expect_error(404, "NOT_FOUND", None);
    }

    async fn create_validation_names_the_field_and_stores_nothing(app) {
        let named = |name: Value| json!({"name": name, "format": "json", "data": {}});
        let long = "a".repeat(65);
        for name in ["", "Sales", "sales-q3", "sales q3", "sälès", "sales.q3", long.as_str()] {
            invalid(app.post("/v1/datasets", &named(json!(name))).await, "name");
        }
        invalid(app.post("/v1/datasets", &named(json!(5))).await, "name");
        invalid(app.post("/v1/datasets", &json!({"format": "json", "data": {}})).await, "name");
        invalid(app.post("/v1/datasets", &json!({"name": "x", "format": "csv", "data": {}})).await, "format");
        invalid(app.post("/v1/datasets", &json!({"name": "x", "data": {}})).await, "format");
        invalid(app.post("/v1/datasets", &json!({"name": "x", "format": "markdown", "data": {"a": 1}})).await, "data");
        invalid(app.post("/v1/datasets", &json!({"name": "x", "format": "markdown", "data": 5})).await, "data");
        invalid(app.post("/v1/datasets", &json!({"name": "x", "format": "json"})).await, "data");
        invalid(app.post("/v1/datasets", &json!({"name": "x", "format": "json", "data": {}, "description": 5})).await, "description");
        invalid_somewhere(app.post("/v1/datasets", &json!({"name": "x", "format": "json", "data": {}, "colour": "red"})).await);
        assert_eq!(app.get("/v1/datasets").await.expect(200).data(), &json!([]), "nothing stored");

        app.post("/v1/datasets", &named(json!("a".repeat(64)))).await.expect(200);
        app.post("/v1/datasets", &named(json!("sales_2024_q3"))).await.expect(200);
        assert_eq!(app.get("/v1/datasets").await.expect(200).data().as_array().map(Vec::len), Some(2));
    }

    async fn names_are_unique_per_workspace(app) {
        let sales = new_dataset(&app, "sales", "json", json!({"v": 1})).await;
        let costs = new_dataset(&app, "costs", "json", json!({"v": 2})).await;
        let costs_path = format!("/v1/datasets/{}", id_of(&costs));
        app.post("/v1/datasets", &json!({"name": "sales", "format": "markdown", "data": "x"})).await
            .expect_error(409, "CONFLICT", None);
        app.put(&costs_path, &json!({"name": "sales"})).await.expect_error(409, "CONFLICT", None);
        app.patch(&costs_path, &json!({"name": "sales"})).await.expect_error(409, "CONFLICT", None);
        let read = app.get(&costs_path).await.expect(200);
        assert_eq!(read.data()["name"], json!("costs"));
        assert_eq!(read.data()["version"], json!(1), "refused renames change nothing");
        assert_eq!(ids(&app.get("/v1/datasets").await.expect(200)), [id_of(&costs), id_of(&sales)]);

        // Another workspace has its own names.
        let other = app.key_in("team-b", "*").await;
        let theirs = call(&app, &other, Method::POST, "/v1/datasets",
            Some(&json!({"name": "sales", "format": "json", "data": {"v": 9}}))).await.expect(200);
        assert!(id_of(theirs.data()) != id_of(&sales));
        // Keeping one's own name is no conflict; a deleted dataset's name is free again.
        app.put(&costs_path, &json!({"name": "costs", "description": "same name"})).await.expect(200);
        app.delete(&format!("/v1/datasets/{}", id_of(&sales))).await.expect(200);
        new_dataset(&app, "sales", "markdown", json!("again")).await;
    }

    async fn list_pages_newest_first_without_duplicates_or_gaps(app) {
        let mut made = Vec::new();
        for i in 0..5 {
            made.push(id_of(&new_dataset(&app, &format!("d{i}"), "json", json!({"i": i})).await));
        }
        made.reverse();
        let mut seen = Vec::new();
        let mut cursor: Option<String> = None;
        let mut pages = 0;
        loop {
            let mut query = vec![("limit", "2".to_owned())];
            if let Some(c) = &cursor {
                query.push(("cursor", c.clone()));
            }
            let res = app.send(app.req(Method::GET, "/v1/datasets").query(&query)).await.expect(200);
            let page = ids(&res);
            assert!(page.len() <= 2);
            seen.extend(page);
            pages += 1;
            if pages == 1 {
                // Inserted while paging: newer than every row, so no later page shows it.
                new_dataset(&app, "late", "json", json!({})).await;
            }
            let pagination = &res.body["pagination"];
            if pagination["has_more"] == json!(false) {
                assert_eq!(pagination["next_cursor"], Value::Null);
                break;
            }
            cursor = Some(pagination["next_cursor"].as_str().expect("next_cursor").to_owned());
            assert!(pages < 10, "pages never end");
        }
        assert_eq!(seen, made);
        let all = app.get("/datasets").await.expect(200);
        assert_eq!(all.data().as_array().map(Vec::len), Some(6));
        assert_eq!(all.data()[0]["name"], json!("late"));
        assert_eq!(all.body["pagination"], json!({"next_cursor": null, "has_more": false}));
        let read = app.get(&format!("/v1/datasets/{}", made[0])).await.expect(200);
        assert_eq!(all.data()[1], *read.data(), "a listed record is the record a read returns");
        let first = app.get("/v1/datasets?limit=1").await.expect(200);
        assert_eq!(first.data().as_array().map(Vec::len), Some(1));
        assert_eq!(first.body["pagination"]["has_more"], json!(true));
        invalid(app.get("/v1/datasets?limit=0").await, "limit");
        invalid(app.get("/v1/datasets?limit=201").await, "limit");
        invalid(app.get("/v1/datasets?cursor=nope").await, "cursor");
    }

    async fn put_replaces_only_the_fields_sent(app) {
        let body = json!({"name": "sales", "format": "json", "data": {"total": 1, "keep": true}, "description": "d"});
        let created = app.post("/v1/datasets", &body).await.expect(200).data().clone();
        let path = format!("/v1/datasets/{}", id_of(&created));
        tick().await;
        let res = app.put(&path, &json!({"data": {"total": 2}})).await.expect(200);
        let updated = res.data().clone();
        assert_eq!(updated["data"], json!({"total": 2}), "PUT replaces data whole");
        assert_eq!(updated["name"], json!("sales"));
        assert_eq!(updated["description"], json!("d"));
        assert_eq!(updated["format"], json!("json"));
        assert_eq!(updated["version"], json!(2));
        assert_eq!(updated["created_at"], created["created_at"]);
        assert!(iso_ms(&updated["updated_at"]) > iso_ms(&created["updated_at"]), "{updated}");
        let read = app.get(&path).await.expect(200);
        assert_eq!(read.data(), &updated, "the response is the updated record");
        assert_eq!(read.header("etag"), Some("\"2\""));

        let res = app.put(&path, &json!({"description": null})).await.expect(200);
        assert_eq!(res.data()["description"], Value::Null);
        assert_eq!(res.data()["data"], json!({"total": 2}));
        assert_eq!(res.data()["version"], json!(3));
        let res = app.put(&path, &json!({"name": "sales_v2", "description": "again"})).await.expect(200);
        assert_eq!(res.data()["name"], json!("sales_v2"));
        assert_eq!(res.data()["description"], json!("again"));

        // A format change needs data valid for the new format.
        invalid(app.put(&path, &json!({"format": "markdown"})).await, "data");
        invalid(app.put(&path, &json!({"format": "markdown", "data": {"a": 1}})).await, "data");
        invalid(app.put(&path, &json!({"name": "Bad Name"})).await, "name");
        invalid(app.put(&path, &json!({"format": "yaml"})).await, "format");
        invalid_somewhere(app.put(&path, &json!({})).await);
        invalid_somewhere(app.patch(&path, &json!({})).await);
        invalid_somewhere(app.put(&path, &json!({"data": {}, "colour": "red"})).await);
        assert_eq!(app.get(&path).await.expect(200).data()["version"], json!(4), "refused writes change nothing");
        let res = app.put(&path, &json!({"format": "markdown", "data": "# now text"})).await.expect(200);
        assert_eq!(res.data()["format"], json!("markdown"));
        assert_eq!(res.data()["data"], json!("# now text"));
        assert_eq!(res.data()["version"], json!(5));
        app.put("/v1/datasets/ds-doesnotexist000000000", &json!({"data": 1})).await.expect_error(404, "NOT_FOUND", None);
        app.patch("/v1/datasets/ds-doesnotexist000000000", &json!({"data": 1})).await.expect_error(404, "NOT_FOUND", None);
    }

    async fn patch_is_a_json_merge_patch_for_json_and_replaces_markdown(app) {
        let original = json!({"a": {"b": 1, "c": 2, "deep": {"x": 1, "y": 2}}, "list": [1, 2, 3], "drop": "x", "n": 1});
        let created = new_dataset(&app, "merge", "json", original).await;
        let path = format!("/v1/datasets/{}", id_of(&created));
        tick().await;
        let patch = json!({"data": {"a": {"c": null, "d": 4, "deep": {"y": null, "z": 3}}, "list": [9], "drop": null, "new": {"x": null, "y": 1}}});
        let res = app.patch(&path, &patch).await.expect(200);
        let merged = json!({"a": {"b": 1, "d": 4, "deep": {"x": 1, "z": 3}}, "list": [9], "n": 1, "new": {"y": 1}});
        assert_eq!(res.data()["data"], merged);
        assert_eq!(res.data()["version"], json!(2));
        assert_eq!(res.data()["name"], json!("merge"));
        assert!(iso_ms(&res.data()["updated_at"]) > iso_ms(&created["updated_at"]));
        assert_eq!(app.get(&path).await.expect(200).data(), res.data());

        // A patch that is not an object replaces the value; an object patch over a non-object
        // starts from an empty object.
        assert_eq!(app.patch(&path, &json!({"data": [1, 2]})).await.expect(200).data()["data"], json!([1, 2]));
        assert_eq!(app.patch(&path, &json!({"data": {"k": 1, "gone": null}})).await.expect(200).data()["data"], json!({"k": 1}));
        assert_eq!(app.patch(&path, &json!({"data": "s"})).await.expect(200).data()["data"], json!("s"));
        assert_eq!(app.get(&path).await.expect(200).data()["version"], json!(5));

        let md = new_dataset(&app, "notes", "markdown", json!("first")).await;
        let md_path = format!("/v1/datasets/{}", id_of(&md));
        let res = app.patch(&md_path, &json!({"data": "second"})).await.expect(200);
        assert_eq!(res.data()["data"], json!("second"));
        assert_eq!(res.data()["version"], json!(2));
        invalid(app.patch(&md_path, &json!({"data": {"a": 1}})).await, "data");
        assert_eq!(app.get(&md_path).await.expect(200).data()["data"], json!("second"));
    }

    async fn if_match_guards_updates_and_deletes(app) {
        let created = new_dataset(&app, "guarded", "json", json!({"v": 1})).await;
        let path = format!("/v1/datasets/{}", id_of(&created));
        if_match(&app, Method::PUT, &path, "\"1\"", Some(&json!({"data": {"v": 2}}))).await.expect(200);
        for method in [Method::PUT, Method::PATCH] {
            if_match(&app, method, &path, "\"1\"", Some(&json!({"data": {"v": 3}}))).await
                .expect_error(412, "PRECONDITION_FAILED", None);
        }
        if_match(&app, Method::DELETE, &path, "\"1\"", None).await.expect_error(412, "PRECONDITION_FAILED", None);
        let read = app.get(&path).await.expect(200);
        assert_eq!(read.header("etag"), Some("\"2\""));
        assert_eq!(read.data()["data"], json!({"v": 2}));
        if_match(&app, Method::PATCH, &path, "\"2\"", Some(&json!({"data": {"w": 1}}))).await.expect(200);
        let res = if_match(&app, Method::DELETE, &path, "\"3\"", None).await.expect(200);
        assert_eq!(res.data(), &json!({"id": id_of(&created), "deleted": true}));
    }

    async fn delete_removes_the_dataset(app) {
        let kept = new_dataset(&app, "kept", "json", json!({})).await;
        let gone = new_dataset(&app, "gone", "markdown", json!("bye")).await;
        let path = format!("/v1/datasets/{}", id_of(&gone));
        let res = app.delete(&path).await.expect(200);
        assert_eq!(res.data(), &json!({"id": id_of(&gone), "deleted": true}));
        app.get(&path).await.expect_error(404, "NOT_FOUND", None);
        app.delete(&path).await.expect_error(404, "NOT_FOUND", None);
        app.patch(&path, &json!({"data": "back"})).await.expect_error(404, "NOT_FOUND", None);
        assert_eq!(ids(&app.get("/v1/datasets").await.expect(200)), [id_of(&kept)]);
    }

    async fn scopes_guard_reads_and_writes_and_refusals_write_nothing(app) {
        let created = new_dataset(&app, "sales", "json", json!({"v": 1})).await;
        let path = format!("/v1/datasets/{}", id_of(&created));
        let reader = app.key_with("datasets:read").await;
        call(&app, &reader, Method::GET, "/v1/datasets", None).await.expect(200);
        assert_eq!(call(&app, &reader, Method::GET, &path, None).await.expect(200).data(), &created);
        let writes = [
            (Method::POST, "/v1/datasets", Some(json!({"name": "new_one", "format": "json", "data": {}}))),
            (Method::PUT, path.as_str(), Some(json!({"data": {"v": 2}}))),
            (Method::PATCH, path.as_str(), Some(json!({"data": {"v": 3}}))),
            (Method::DELETE, path.as_str(), None),
        ];
        for (method, route, body) in &writes {
            let res = call(&app, &reader, method.clone(), route, body.as_ref()).await;
            let res = res.expect_error(403, "SCOPE_REQUIRED", None);
            assert_eq!(res.body["error"]["details"]["required_scope"], json!("datasets:write"), "{method} {route}");
            assert!(res.body["error"]["message"].as_str().unwrap().contains("datasets:write"));
        }
        let pins_only = app.key_with("pins:read,pins:write").await;
        for route in ["/v1/datasets", path.as_str()] {
            let res = call(&app, &pins_only, Method::GET, route, None).await.expect_error(403, "SCOPE_REQUIRED", None);
            assert_eq!(res.body["error"]["details"]["required_scope"], json!("datasets:read"));
        }
        let res = call(&app, &pins_only, Method::POST, "/v1/datasets", writes[0].2.as_ref()).await;
        assert_eq!(res.expect_error(403, "SCOPE_REQUIRED", None).body["error"]["details"]["required_scope"], json!("datasets:write"));
        // Nothing was written.
        assert_eq!(app.get(&path).await.expect(200).data(), &created);
        assert_eq!(ids(&app.get("/v1/datasets").await.expect(200)), [id_of(&created)]);

        let writer = app.key_with("datasets:write").await;
        call(&app, &writer, Method::PATCH, &path, Some(&json!({"data": {"v": 4}}))).await.expect(200);
        call(&app, &writer, Method::GET, &path, None).await.expect_error(403, "SCOPE_REQUIRED", None);
        assert_eq!(app.get(&path).await.expect(200).data()["data"], json!({"v": 4}));
    }

    async fn other_workspaces_datasets_are_404(app) {
        let a = app.key_in("team-a", "*").await;
        let b = app.key_in("team-b", "*").await;
        let res = call(&app, &a, Method::POST, "/v1/datasets",
            Some(&json!({"name": "secret", "format": "json", "data": {"v": 1}}))).await.expect(200);
        let created = res.data().clone();
        let path = format!("/v1/datasets/{}", id_of(&created));
        let cases = [
            (Method::GET, None),
            (Method::PUT, Some(json!({"data": {"v": 2}}))),
            (Method::PATCH, Some(json!({"data": {"v": 3}}))),
            (Method::DELETE, None),
        ];
        for (method, body) in &cases {
            call(&app, &b, method.clone(), &path, body.as_ref()).await.expect_error(404, "NOT_FOUND", None);
        }
        assert_eq!(call(&app, &b, Method::GET, "/v1/datasets", None).await.expect(200).data(), &json!([]));
        assert_eq!(app.get("/v1/datasets").await.expect(200).data(), &json!([]), "nor the default workspace");
        assert_eq!(call(&app, &a, Method::GET, &path, None).await.expect(200).data(), &created);
    }

    async fn each_dataset_change_gives_one_event_equal_to_a_get(app) {
        let mut stream = Stream::open(&app, "/v1/events", &app.key, &[]).await;
        assert_eq!(stream.status, 200);
        let mut updates = Stream::open(&app, "/v1/events?type=dataset.updated", &app.key, &[]).await;
        assert_eq!(updates.status, 200);

        let created = new_dataset(&app, "live", "json", json!({"v": 1})).await;
        let id = id_of(&created);
        let path = format!("/v1/datasets/{id}");
        let event = stream.next_event().await;
        assert_eq!(event.event.as_deref(), Some("dataset.created"));
        assert_eq!(event.data["type"], json!("dataset.created"));
        assert_eq!(event.data["id"], json!(id));
        assert_eq!(event.data["data"], *app.get(&path).await.expect(200).data());

        app.patch(&path, &json!({"data": {"w": 2}})).await.expect(200);
        let event = stream.next_event().await;
        assert_eq!(event.event.as_deref(), Some("dataset.updated"));
        assert_eq!(event.data["data"], *app.get(&path).await.expect(200).data());
        assert_eq!(event.data["data"]["data"], json!({"v": 1, "w": 2}));

        // Refused writes give no event.
        app.post("/v1/datasets", &json!({"name": "live", "format": "json", "data": {}})).await.expect(409);
        if_match(&app, Method::PUT, &path, "\"1\"", Some(&json!({"data": 0}))).await.expect(412);
        app.put(&path, &json!({"format": "markdown"})).await.expect(400);

        app.put(&path, &json!({"description": "third"})).await.expect(200);
        let event = stream.next_event().await;
        assert_eq!(event.event.as_deref(), Some("dataset.updated"));
        assert_eq!(event.data["data"]["version"], json!(3));
        assert_eq!(event.data["data"], *app.get(&path).await.expect(200).data());

        app.delete(&path).await.expect(200);
        let event = stream.next_event().await;
        assert_eq!(event.event.as_deref(), Some("dataset.deleted"));
        assert_eq!(event.data["id"], json!(id));
        assert_eq!(event.data["data"], json!({"id": id, "deleted": true}));

        let versions: Vec<Value> = updates.events(2).await.iter().map(|e| e.data["data"]["version"].clone()).collect();
        assert_eq!(versions, [json!(2), json!(3)], "the type filter knows dataset events");
    }
}

/// A dataset's serialised `data` is at most 1 MiB, whether it comes whole or by a merge
/// (with a body limit raised past it, so the data limit itself answers).
#[tokio::test]
async fn data_over_one_mib_is_refused() {
    let overrides = "[limits]\nbody_bytes = 4194304\n";
    let mut apps = vec![TestApp::sqlite_with(overrides).await];
    if postgres_available().await {
        apps.push(TestApp::postgres_with(overrides).await);
    }
    for app in apps {
        // `{"s":"…"}` serialises to the string's length plus 8 bytes.
        let exactly = json!({"s": "x".repeat(1_048_576 - 8)});
        assert_eq!(serde_json::to_vec(&exactly).unwrap().len(), 1_048_576);
        let fits = new_dataset(&app, "fits", "json", exactly).await;
        assert_eq!(fits["version"], json!(1));
        let over =
            json!({"name": "over", "format": "json", "data": {"s": "x".repeat(1_048_576 - 7)}});
        invalid(app.post("/v1/datasets", &over).await, "data");
        let text = json!({"name": "text", "format": "markdown", "data": "y".repeat(1_048_600)});
        invalid(app.post("/v1/datasets", &text).await, "data");
        // Two halves that fit alone but not merged.
        let half = new_dataset(&app, "half", "json", json!({"a": "x".repeat(600_000)})).await;
        let path = format!("/v1/datasets/{}", id_of(&half));
        invalid(
            app.patch(&path, &json!({"data": {"b": "y".repeat(600_000)}}))
                .await,
            "data",
        );
        let read = app.get(&path).await.expect(200);
        assert_eq!(read.data()["version"], json!(1));
        assert!(read.data()["data"].get("b").is_none());
        let listed = app.get("/v1/datasets").await.expect(200);
        let names: Vec<&str> = listed
            .data()
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["half", "fits"]);
    }
}
