//! Pinboard CRUD: the record, validation, list paging, updates, deletes, scopes and
//! workspace isolation. Also the helpers the other pinboard test files share.

use reqwest::Method;
use serde_json::{json, Value};

use crate::{both_stores, helpers::*};

/// Creates a board titled `title` and returns its id.
pub async fn new_board(app: &TestApp, title: &str) -> String {
    let res = app
        .post("/v1/pinboards", &json!({"title": title}))
        .await
        .expect(200);
    res.data()["id"].as_str().unwrap().to_owned()
}

/// Creates `stat_cards(title)` and returns its id.
pub async fn new_pin(app: &TestApp, title: &str) -> String {
    app.create_pin(&stat_cards(title)).await["pin_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// `POST /v1/pinboards/{board}/pins` with `pin_id` and, when given, `position`.
pub async fn place(app: &TestApp, board: &str, pin: &str, position: Option<Value>) -> Resp {
    let mut body = json!({"pin_id": pin});
    if let Some(position) = position {
        body["position"] = position;
    }
    app.post(&format!("/v1/pinboards/{board}/pins"), &body)
        .await
}

fn ids(res: &Resp) -> Vec<String> {
    res.data()
        .as_array()
        .unwrap_or_else(|| panic!("no array: {}", res.body))
        .iter()
        .map(|b| b["id"].as_str().unwrap().to_owned())
        .collect()
}

fn iso_ms(value: &Value) -> i64 {
    chrono::DateTime::parse_from_rfc3339(value.as_str().unwrap())
        .unwrap_or_else(|e| panic!("not ISO 8601 ({e}): {value}"))
        .timestamp_millis()
}

fn invalid(res: Resp, field: &str) {
    res.expect_error(400, "VALIDATION_FAILED", Some(field));
}

both_stores! {
    async fn create_returns_the_record(app) {
        let body = json!({"title": "Ops", "description": "Live numbers", "tags": ["ops", "prod"], "is_public": true});
        let res = app.post("/v1/pinboards", &body).await.expect(200);
        let board = res.data();
        let id = board["id"].as_str().unwrap();
        assert!(id.starts_with("pb-") && id.len() > 20, "{id}");
        let mut keys: Vec<&str> = board.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["created_at", "description", "id", "is_public", "shareable_url", "tags", "title", "updated_at"]);
        assert_eq!(board["title"], json!("Ops"));
        assert_eq!(board["description"], json!("Live numbers"));
        assert_eq!(board["tags"], json!(["ops", "prod"]));
        assert_eq!(board["is_public"], json!(true));
        assert_eq!(board["shareable_url"], json!(format!("{}/share/{id}", app.base)));
        iso_ms(&board["created_at"]);
        assert_eq!(board["created_at"], board["updated_at"]);

        let minimal = app.post("/v1/pinboards", &json!({"title": "Bare"})).await.expect(200);
        assert_eq!(minimal.data()["description"], Value::Null);
        assert_eq!(minimal.data()["tags"], json!([]));
        assert_eq!(minimal.data()["is_public"], json!(false));
    }

    async fn create_validation_names_the_field(app) {
        invalid(app.post("/v1/pinboards", &json!({})).await, "title");
        invalid(app.post("/v1/pinboards", &json!({"title": ""})).await, "title");
        invalid(app.post("/v1/pinboards", &json!({"title": "   "})).await, "title");
        invalid(app.post("/v1/pinboards", &json!({"title": "x".repeat(201)})).await, "title");
        app.post("/v1/pinboards", &json!({"title": "é".repeat(200)})).await.expect(200);
        invalid(app.post("/v1/pinboards", &json!({"title": 5})).await, "title");
        invalid(app.post("/v1/pinboards", &json!({"title": "t", "description": "d".repeat(2001)})).await, "description");
        app.post("/v1/pinboards", &json!({"title": "t", "description": "d".repeat(2000)})).await.expect(200);
        let many: Vec<String> = (0..21).map(|i| format!("t{i}")).collect();
        invalid(app.post("/v1/pinboards", &json!({"title": "t", "tags": many})).await, "tags");
        invalid(app.post("/v1/pinboards", &json!({"title": "t", "tags": ["ok", ""]})).await, "tags[1]");
        invalid(app.post("/v1/pinboards", &json!({"title": "t", "is_public": "yes"})).await, "is_public");
        invalid(app.post("/v1/pinboards", &json!({"title": "t", "colour": "red"})).await, "colour");
        let list = app.get("/v1/pinboards").await.expect(200);
        assert_eq!(list.data().as_array().map(Vec::len), Some(2), "only the valid ones: {}", list.body);
    }

    async fn read_returns_the_record_with_no_pins(app) {
        let created = app.post("/v1/pinboards", &json!({"title": "Ops"})).await.expect(200);
        let id = created.data()["id"].as_str().unwrap();
        let read = app.get(&format!("/v1/pinboards/{id}")).await.expect(200);
        let mut expected = created.data().clone();
        expected["pins"] = json!([]);
        assert_eq!(read.data(), &expected);
        // The unprefixed alias serves the same.
        assert_eq!(app.get(&format!("/pinboards/{id}")).await.expect(200).data(), &expected);
        app.get("/v1/pinboards/pb-doesnotexist0000000000").await.expect_error(404, "NOT_FOUND", None);
    }

    async fn list_pages_newest_first(app) {
        let mut made = Vec::new();
        for i in 0..5 {
            made.push(new_board(&app, &format!("b{i}")).await);
        }
        made.reverse();
        let mut seen = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let mut query = vec![("limit", "2".to_owned())];
            if let Some(c) = &cursor {
                query.push(("cursor", c.clone()));
            }
            let res = app.send(app.req(Method::GET, "/v1/pinboards").query(&query)).await.expect(200);
            seen.extend(ids(&res));
            let pagination = &res.body["pagination"];
            if pagination["has_more"] == json!(false) {
                assert_eq!(pagination["next_cursor"], Value::Null);
                break;
            }
            cursor = Some(pagination["next_cursor"].as_str().unwrap().to_owned());
        }
        assert_eq!(seen, made);
        let all = app.get("/v1/pinboards").await.expect(200);
        assert_eq!(ids(&all), made);
        assert!(all.data()[0].get("pins").is_none(), "lists carry no placements");
        invalid(app.get("/v1/pinboards?limit=0").await, "limit");
        invalid(app.get("/v1/pinboards?limit=201").await, "limit");
        invalid(app.get("/v1/pinboards?cursor=nope").await, "cursor");
    }

    async fn put_and_patch_change_only_what_is_sent(app) {
        let created = app.post("/v1/pinboards", &json!({"title": "Ops", "description": "d", "tags": ["a"]})).await.expect(200);
        let id = created.data()["id"].as_str().unwrap().to_owned();
        let path = format!("/v1/pinboards/{id}");
        let res = app.put(&path, &json!({"title": "Ops 2"})).await.expect(200);
        assert_eq!(res.data()["title"], json!("Ops 2"));
        assert_eq!(res.data()["description"], json!("d"));
        assert_eq!(res.data()["tags"], json!(["a"]));
        assert!(iso_ms(&res.data()["updated_at"]) >= iso_ms(&created.data()["updated_at"]));
        assert_eq!(res.data()["created_at"], created.data()["created_at"]);
        let res = app.patch(&path, &json!({"description": null, "tags": ["b", "c"], "is_public": true})).await.expect(200);
        assert_eq!(res.data()["title"], json!("Ops 2"));
        assert_eq!(res.data()["description"], Value::Null);
        assert_eq!(res.data()["tags"], json!(["b", "c"]));
        assert_eq!(res.data()["is_public"], json!(true));
        app.patch(&path, &json!({"tags": null})).await.expect(200);
        let read = app.get(&path).await.expect(200);
        assert_eq!(read.data()["tags"], json!([]));
        assert_eq!(read.data()["title"], json!("Ops 2"));

        invalid(app.put(&path, &json!({})).await, "body");
        invalid(app.patch(&path, &json!({"title": null})).await, "title");
        invalid(app.patch(&path, &json!({"title": ""})).await, "title");
        invalid(app.patch(&path, &json!({"id": "pb-other"})).await, "id");
        app.put("/v1/pinboards/pb-missing", &json!({"title": "x"})).await.expect_error(404, "NOT_FOUND", None);
    }

    async fn delete_removes_the_board_but_keeps_its_pins(app) {
        let board = new_board(&app, "Ops").await;
        let pin = new_pin(&app, "kept").await;
        place(&app, &board, &pin, None).await.expect(200);
        let res = app.delete(&format!("/v1/pinboards/{board}")).await.expect(200);
        assert_eq!(res.data(), &json!({"id": board, "deleted": true}));
        app.get(&format!("/v1/pinboards/{board}")).await.expect_error(404, "NOT_FOUND", None);
        app.delete(&format!("/v1/pinboards/{board}")).await.expect_error(404, "NOT_FOUND", None);
        app.get(&format!("/v1/pins/{pin}")).await.expect(200);
        assert_eq!(app.get("/v1/pinboards").await.expect(200).data(), &json!([]));
    }

    async fn scopes_guard_reads_and_writes(app) {
        let board = new_board(&app, "Ops").await;
        let path = format!("/v1/pinboards/{board}");
        let reader = app.key_with("pinboards:read").await;
        call(&app, &reader, Method::GET, "/v1/pinboards", None).await.expect(200);
        call(&app, &reader, Method::GET, &path, None).await.expect(200);
        let writes = [
            (Method::POST, "/v1/pinboards".to_owned(), Some(json!({"title": "x"}))),
            (Method::PUT, path.clone(), Some(json!({"title": "x"}))),
            (Method::PATCH, path.clone(), Some(json!({"title": "x"}))),
            (Method::DELETE, path.clone(), None),
            (Method::POST, format!("{path}/pins"), Some(json!({"pin_id": "p-x"}))),
            (Method::PUT, format!("{path}/pins/p-x"), Some(json!({"position": {"x": 1}}))),
            (Method::DELETE, format!("{path}/pins/p-x"), None),
        ];
        for (method, route, body) in &writes {
            let res = call(&app, &reader, method.clone(), route, body.as_ref()).await;
            let res = res.expect_error(403, "SCOPE_REQUIRED", None);
            assert_eq!(res.body["error"]["details"]["required_scope"], json!("pinboards:write"), "{method} {route}");
        }
        let pins_only = app.key_with("pins:read,pins:write,pins:share").await;
        for route in ["/v1/pinboards", path.as_str()] {
            let res = call(&app, &pins_only, Method::GET, route, None).await.expect_error(403, "SCOPE_REQUIRED", None);
            assert_eq!(res.body["error"]["details"]["required_scope"], json!("pinboards:read"));
        }
        let writer = app.key_with("pinboards:write").await;
        call(&app, &writer, Method::PATCH, &path, Some(&json!({"title": "w"}))).await.expect(200);
        call(&app, &writer, Method::GET, &path, None).await.expect_error(403, "SCOPE_REQUIRED", None);
        // Writes are priced like any other write.
        let res = call(&app, &writer, Method::POST, "/v1/pinboards", Some(&json!({"title": "y"}))).await.expect(200);
        assert_eq!(res.header("x-ratelimit-token-cost"), Some("1"));
    }

    async fn other_workspaces_boards_are_404(app) {
        let a = app.key_in("team-a", "*").await;
        let b = app.key_in("team-b", "*").await;
        let res = call(&app, &a, Method::POST, "/v1/pinboards", Some(&json!({"title": "secret"}))).await.expect(200);
        let board = res.data()["id"].as_str().unwrap().to_owned();
        let path = format!("/v1/pinboards/{board}");
        let pin_b = call(&app, &b, Method::POST, "/v1/pins", Some(&stat_cards("b"))).await.expect(200);
        let pin_b = pin_b.data()["pin_id"].as_str().unwrap().to_owned();
        let cases = [
            (Method::GET, path.clone(), None),
            (Method::PUT, path.clone(), Some(json!({"title": "stolen"}))),
            (Method::PATCH, path.clone(), Some(json!({"title": "stolen"}))),
            (Method::DELETE, path.clone(), None),
            (Method::POST, format!("{path}/pins"), Some(json!({"pin_id": pin_b}))),
            (Method::GET, format!("{path}/share"), None),
            (Method::PUT, format!("{path}/share"), Some(json!({"is_public": true}))),
            (Method::GET, format!("/v1/pins?pinboard_id={board}"), None),
        ];
        for (method, route, body) in &cases {
            call(&app, &b, method.clone(), route, body.as_ref()).await.expect_error(404, "NOT_FOUND", None);
        }
        let listed = call(&app, &b, Method::GET, "/v1/pinboards", None).await.expect(200);
        assert_eq!(listed.data(), &json!([]));
        let own = call(&app, &a, Method::GET, &path, None).await.expect(200);
        assert_eq!(own.data()["title"], json!("secret"));
        assert_eq!(own.data()["is_public"], json!(false));
        assert_eq!(own.data()["pins"], json!([]));
    }
}
