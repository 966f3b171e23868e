//! `GET /v1/openapi.json`: the description covers exactly the routes the router serves, and
//! real responses (successes and errors) match the schemas it documents for them.

use reqwest::Method;
use serde_json::{json, Value};

use crate::{
    both_stores,
    helpers::{stat_cards, Resp, TestApp},
};

const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

/// The operations SPEC.md 4 and CONTRACT.md 1-6 and 16 promise, as `METHOD /path`.
const CONTRACT_ROUTES: [&str; 54] = [
    "GET /v1/events",
    "GET /v1/export",
    "GET /v1/pins",
    "POST /v1/pins",
    "GET /v1/pins/{id}",
    "PATCH /v1/pins/{id}",
    "PUT /v1/pins/{id}",
    "DELETE /v1/pins/{id}",
    "GET /v1/pins/{id}/versions",
    "POST /v1/pins/batch",
    "POST /v1/pins/batch/get",
    "POST /v1/pins/batch/update",
    "POST /v1/pins/batch/delete",
    "GET /v1/pins/{id}/share",
    "PUT /v1/pins/{id}/share",
    "GET /v1/pinboards",
    "POST /v1/pinboards",
    "GET /v1/pinboards/{id}",
    "PUT /v1/pinboards/{id}",
    "PATCH /v1/pinboards/{id}",
    "DELETE /v1/pinboards/{id}",
    "POST /v1/pinboards/{id}/pins",
    "PUT /v1/pinboards/{id}/pins/{pin_id}",
    "DELETE /v1/pinboards/{id}/pins/{pin_id}",
    "GET /v1/pinboards/{id}/share",
    "PUT /v1/pinboards/{id}/share",
    "GET /v1/pinboards/{id}/collaborators",
    "POST /v1/pinboards/{id}/collaborators",
    "PATCH /v1/pinboards/{id}/collaborators/{user_id}",
    "DELETE /v1/pinboards/{id}/collaborators/{user_id}",
    "GET /v1/roles",
    "POST /v1/roles",
    "GET /v1/api-keys",
    "POST /v1/api-keys",
    "DELETE /v1/api-keys/{id}",
    "GET /v1/invitations",
    "POST /v1/invitations",
    "DELETE /v1/invitations/{id}",
    "GET /v1/pin-types",
    "GET /v1/openapi.json",
    "GET /share/{id}",
    "GET /healthz",
    "GET /v1/datasets",
    "POST /v1/datasets",
    "GET /v1/datasets/{id}",
    "PUT /v1/datasets/{id}",
    "PATCH /v1/datasets/{id}",
    "DELETE /v1/datasets/{id}",
    "GET /v1/pins/{id}/blocks",
    "POST /v1/pins/{id}/blocks",
    "PUT /v1/pins/{id}/blocks/order",
    "GET /v1/pins/{id}/blocks/{block_id}",
    "PUT /v1/pins/{id}/blocks/{block_id}",
    "DELETE /v1/pins/{id}/blocks/{block_id}",
];

/// Operation ids clients are generated with: stable names, checked so none changes unseen.
const OPERATION_IDS: [(&str, &str); 12] = [
    ("POST /v1/pins", "createPin"),
    ("GET /v1/pins/{id}", "getPin"),
    ("GET /v1/pins", "listPins"),
    ("POST /v1/pins/batch", "createPins"),
    ("PATCH /v1/pins/{id}", "patchPin"),
    ("POST /v1/pinboards", "createPinboard"),
    ("GET /v1/pinboards/{id}", "getPinboard"),
    ("POST /v1/pinboards/{id}/pins", "placePin"),
    ("POST /v1/datasets", "createDataset"),
    ("POST /v1/pins/{id}/blocks", "createBlock"),
    ("POST /v1/api-keys", "createApiKey"),
    ("GET /v1/pin-types", "listPinTypes"),
];

pub async fn document(app: &TestApp) -> Value {
    let res = app
        .send(app.client.get(format!("{}/v1/openapi.json", app.base)))
        .await;
    assert_eq!(res.status, 200, "the document needs no credential");
    assert_eq!(res.header("content-type"), Some("application/json"));
    assert_eq!(res.body["openapi"], json!("3.1.0"));
    res.body
}

/// `(METHOD, path)` of every documented operation.
fn operations(doc: &Value) -> Vec<(String, String)> {
    let paths = doc["paths"].as_object().expect("paths");
    let mut all = Vec::new();
    for (path, item) in paths {
        for method in METHODS {
            if item.get(method).is_some() {
                all.push((method.to_uppercase(), path.clone()));
            }
        }
    }
    all
}

/// A concrete URL for a templated path (`{id}` -> an id that names nothing).
fn concrete(path: &str) -> String {
    path.replace("{id}", "p-nothing")
        .replace("{pin_id}", "p-nothing")
        .replace("{user_id}", "u-nothing")
}

/// Whether the router has a handler for this method and path: its fallbacks answer 405, or
/// 404 naming the route (every resource 404 names its resource instead).
async fn routed(app: &TestApp, method: &str, path: &str) -> bool {
    let method = Method::from_bytes(method.to_uppercase().as_bytes()).expect("method");
    let req = app.req(method, path).json(&json!({}));
    let res = req
        .try_clone()
        .expect("request")
        .send()
        .await
        .expect("request");
    if res.headers()["content-type"] == "text/event-stream" {
        // An event stream never ends: its headers are the answer.
        return true;
    }
    let res = app.send(req).await;
    let route_missing =
        res.status == 404 && res.body["error"]["message"] == json!("route not found");
    !(res.status == 405 || route_missing)
}

both_stores! {
    async fn document_and_router_agree(app) {
        let doc = document(&app).await;
        let documented = operations(&doc);
        for route in CONTRACT_ROUTES {
            let (method, path) = route.split_once(' ').expect("route");
            assert!(
                documented.iter().any(|(m, p)| m == method && p == path),
                "{route} is not documented"
            );
        }
        for (path, item) in doc["paths"].as_object().expect("paths") {
            let url = concrete(path);
            for method in METHODS {
                let documented = item.get(method).is_some();
                assert_eq!(
                    routed(&app, method, &url).await,
                    documented,
                    "{} {path}: documented {documented}",
                    method.to_uppercase()
                );
                if let Some(unprefixed) = url.strip_prefix("/v1") {
                    assert_eq!(
                        routed(&app, method, unprefixed).await,
                        documented,
                        "{} {unprefixed} must mirror /v1",
                        method.to_uppercase()
                    );
                }
            }
        }
    }

    async fn responses_match_their_documented_schemas(app) {
        let doc = document(&app).await;
        let check = |res: &Resp, method: &str, path: &str| {
            conforms(&doc, res, method, path);
        };

        let created = app.post("/v1/pins", &stat_cards("Revenue")).await.expect(200);
        check(&created, "post", "/v1/pins");
        let mut tampered = Resp { status: 200, headers: created.headers.clone(), body: created.body.clone() };
        tampered.body["data"]["surprise"] = json!(1);
        assert!(!violations(&doc, &tampered, "post", "/v1/pins").is_empty(), "undocumented fields are caught");
        tampered.body["data"] = json!({"pin_id": 1});
        assert!(!violations(&doc, &tampered, "post", "/v1/pins").is_empty(), "wrong types are caught");
        tampered.body = created.body.clone();
        tampered.headers.remove("x-ratelimit-remaining-minute");
        assert!(!violations(&doc, &tampered, "post", "/v1/pins").is_empty(), "missing headers are caught");
        let id = created.data()["id"].as_str().expect("id").to_owned();
        let provenance = json!({
            "pin_type": "markdown",
            "pin_config": {"text": "# Hi"},
            "metadata": {"provenance": {"run_id": "r1", "sources": [{"type": "url", "ref": "https://example.com"}]}}
        });
        check(&app.post("/v1/pins", &provenance).await.expect(200), "post", "/v1/pins");
        check(&app.get(&format!("/v1/pins/{id}")).await.expect(200), "get", "/v1/pins/{id}");
        check(&app.get("/v1/pins?limit=1").await.expect(200), "get", "/v1/pins");
        let update = json!({"metadata": {"title": "New"}});
        check(&app.patch(&format!("/v1/pins/{id}"), &update).await.expect(200), "patch", "/v1/pins/{id}");
        check(&app.get(&format!("/v1/pins/{id}/versions")).await.expect(200), "get", "/v1/pins/{id}/versions");
        let batch = json!({"pins": [stat_cards("a"), stat_cards("b")]});
        check(&app.post("/v1/pins/batch", &batch).await.expect(200), "post", "/v1/pins/batch");
        let get_batch = json!({"pin_ids": [id, "p-missing"]});
        check(&app.post("/v1/pins/batch/get", &get_batch).await.expect(200), "post", "/v1/pins/batch/get");
        let update_batch = json!({"pins": [{"id": id, "pin_layout": "2x2"}]});
        check(&app.post("/v1/pins/batch/update", &update_batch).await.expect(200), "post", "/v1/pins/batch/update");
        check(&app.put(&format!("/v1/pins/{id}/share"), &json!({"allow_comments": true})).await.expect(200), "put", "/v1/pins/{id}/share");

        let board = app.post("/v1/pinboards", &json!({"title": "Ops", "tags": ["a"]})).await.expect(200);
        check(&board, "post", "/v1/pinboards");
        let board_id = board.data()["id"].as_str().expect("id").to_owned();
        let placed = app.post(&format!("/v1/pinboards/{board_id}/pins"), &json!({"pin_id": id})).await.expect(200);
        check(&placed, "post", "/v1/pinboards/{id}/pins");
        check(&app.get(&format!("/v1/pinboards/{board_id}")).await.expect(200), "get", "/v1/pinboards/{id}");
        check(&app.get("/v1/pinboards").await.expect(200), "get", "/v1/pinboards");
        check(&app.get(&format!("/v1/pinboards/{board_id}/share")).await.expect(200), "get", "/v1/pinboards/{id}/share");
        let moved = app.put(&format!("/v1/pinboards/{board_id}/pins/{id}"), &json!({"position": {"x": 3}})).await.expect(200);
        check(&moved, "put", "/v1/pinboards/{id}/pins/{pin_id}");
        check(&app.delete(&format!("/v1/pinboards/{board_id}/pins/{id}")).await.expect(200), "delete", "/v1/pinboards/{id}/pins/{pin_id}");
        check(&app.delete(&format!("/v1/pinboards/{board_id}")).await.expect(200), "delete", "/v1/pinboards/{id}");
        check(&app.get("/v1/pin-types").await.expect(200), "get", "/v1/pin-types");
        let key = app.post("/v1/api-keys", &json!({"name": "export", "scopes": ["pins:read"]})).await.expect(200);
        check(&key, "post", "/v1/api-keys");
        check(&app.get("/v1/api-keys").await.expect(200), "get", "/v1/api-keys");
        let key_id = key.data()["id"].as_str().expect("id").to_owned();
        check(&app.delete(&format!("/v1/api-keys/{key_id}")).await.expect(200), "delete", "/v1/api-keys/{id}");
        check(&app.delete(&format!("/v1/api-keys/{key_id}")).await.expect(404), "delete", "/v1/api-keys/{id}");
        let role = json!({"name": "publisher", "permissions": ["pins:read", "pins:write"]});
        check(&app.post("/v1/roles", &role).await.expect(200), "post", "/v1/roles");
        check(&app.post("/v1/roles", &role).await.expect(409), "post", "/v1/roles");
        check(&app.get("/v1/roles").await.expect(200), "get", "/v1/roles");

        // Errors: each documented for its operation, each the envelope.
        check(&app.post("/v1/pins", &json!({"pin_type": "nope"})).await.expect(400), "post", "/v1/pins");
        check(&app.get("/v1/pins/p-missing").await.expect(404), "get", "/v1/pins/{id}");
        let stale = app.send(app.req(Method::DELETE, &format!("/v1/pins/{id}")).header("if-match", "\"1\"")).await.expect(412);
        check(&stale, "delete", "/v1/pins/{id}");
        let text = app.send(app.req(Method::POST, "/v1/pins").body("x")).await.expect(415);
        check(&text, "post", "/v1/pins");
        let anonymous = app.send(app.client.get(format!("{}/v1/pins", app.base))).await.expect(401);
        check(&anonymous, "get", "/v1/pins");
        let reader = app.key_with("pins:read").await;
        let refused = app.send(app.client.post(format!("{}/v1/pins", app.base)).bearer_auth(reader).json(&stat_cards("x"))).await.expect(403);
        check(&refused, "post", "/v1/pins");
        check(&app.delete(&format!("/v1/pins/{id}")).await.expect(200), "delete", "/v1/pins/{id}");
        check(&app.post("/v1/pins/batch/delete", &json!({"pin_ids": [created.data()["id"]]})).await.expect(404), "post", "/v1/pins/batch/delete");
        let health = app.send(app.client.get(format!("{}/readyz", app.base))).await.expect(200);
        check(&health, "get", "/readyz");
    }
}

#[tokio::test]
async fn every_operation_has_a_stable_operation_id() {
    let app = TestApp::sqlite().await;
    let doc = document(&app).await;
    let mut seen = std::collections::HashSet::new();
    for (method, path) in operations(&doc) {
        let id = doc["paths"][&path][method.to_lowercase()]["operationId"].as_str();
        let id = id.unwrap_or_else(|| panic!("{method} {path} has no operationId"));
        assert!(seen.insert(id.to_owned()), "operationId {id} is used twice");
        assert!(
            id.chars().all(|c| c.is_ascii_alphanumeric()),
            "{id} is camelCase"
        );
    }
    for (route, id) in OPERATION_IDS {
        let (method, path) = route.split_once(' ').expect("route");
        assert_eq!(
            doc["paths"][path][method.to_lowercase()]["operationId"],
            json!(id),
            "{route}"
        );
    }
}

/// Every place a schema goes, in the document.
fn schemas(value: &Value, found: &mut Vec<Value>) {
    match value {
        Value::Object(map) => {
            for (key, item) in map {
                match key.as_str() {
                    "schema" | "items" | "not" | "if" | "then" | "else" => found.push(item.clone()),
                    "properties" | "$defs" | "schemas" => found.extend(
                        item.as_object()
                            .into_iter()
                            .flat_map(|m| m.values().cloned()),
                    ),
                    "anyOf" | "oneOf" | "allOf" => {
                        found.extend(item.as_array().into_iter().flatten().cloned())
                    }
                    _ => {}
                }
                schemas(item, found);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| schemas(item, found)),
        _ => {}
    }
}

#[tokio::test]
async fn generators_can_read_the_document() {
    let app = TestApp::sqlite().await;
    let doc = document(&app).await;
    let mut found = Vec::new();
    schemas(&doc, &mut found);
    assert!(found.len() > 100, "schemas found: {}", found.len());
    for schema in &found {
        assert!(
            schema.is_object(),
            "a schema that is not an object (`{{}}` for any value): {schema}"
        );
    }
    for (method, path) in operations(&doc) {
        let operation = &doc["paths"][&path][method.to_lowercase()];
        for parameter in operation["parameters"].as_array().into_iter().flatten() {
            if parameter["in"] != "path" {
                assert_ne!(
                    parameter["required"],
                    json!(true),
                    "{method} {path}: {parameter} is optional"
                );
                let kind = &parameter["schema"]["type"];
                assert!(
                    kind.is_string(),
                    "{method} {path}: {} has one type, not null",
                    parameter["name"]
                );
            }
        }
    }
}

/// The schema at `pointer` of the document (under `/components/schemas/`).
fn bound(doc: &Value, pointer: &str) -> usize {
    let value = doc.pointer(&format!("/components/schemas/{pointer}"));
    let value = value
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("no bound at {pointer}"));
    usize::try_from(value).expect("bound")
}

fn text(chars: usize) -> String {
    "é".repeat(chars)
}

/// Each bound the description states is the one the server enforces: a value at the bound
/// passes, one past it is refused, and the default equals the validator's constant.
async fn check_bounds(app: &TestApp, doc: &Value) {
    let title = bound(doc, "MetadataBody/properties/title/maxLength");
    let pin = |title: String| json!({"pin_type": "markdown", "pin_config": {"text": "x"}, "metadata": {"title": title}});
    app.post("/v1/pins", &pin(text(title))).await.expect(200);
    app.post("/v1/pins", &pin(text(title + 1)))
        .await
        .expect_error(400, "VALIDATION_FAILED", Some("metadata.title"));
    let board_title = bound(doc, "CreateBoardBody/properties/title/maxLength");
    assert_eq!(board_title, title);
    app.post("/v1/pinboards", &json!({"title": text(title)}))
        .await
        .expect(200);
    app.post("/v1/pinboards", &json!({"title": text(title + 1)}))
        .await
        .expect(400);
    app.post("/v1/pinboards", &json!({"title": " \t"}))
        .await
        .expect(400);
    let tags = bound(doc, "MetadataBody/properties/tags/maxItems");
    let tag = bound(doc, "MetadataBody/properties/tags/items/maxLength");
    let tagged = |tags: Vec<String>| json!({"pin_type": "markdown", "pin_config": {"text": "x"}, "metadata": {"tags": tags}});
    app.post("/v1/pins", &tagged(vec![text(tag); tags]))
        .await
        .expect(200);
    app.post("/v1/pins", &tagged(vec![text(tag + 1)]))
        .await
        .expect(400);
    app.post("/v1/pins", &tagged(vec!["a".into(); tags + 1]))
        .await
        .expect(400);
    app.post("/v1/pins", &tagged(vec![String::new()]))
        .await
        .expect(400);
    let batch = bound(doc, "BatchGetBody/properties/pin_ids/maxItems");
    assert_eq!(bound(doc, "BatchGetBody/properties/pin_ids/minItems"), 1);
    let ids = |n: usize| json!({"pin_ids": (0..n).map(|i| format!("p-{i}")).collect::<Vec<_>>()});
    app.post("/v1/pins/batch/get", &ids(batch))
        .await
        .expect(200);
    app.post("/v1/pins/batch/get", &ids(batch + 1))
        .await
        .expect(400);
    app.post("/v1/pins/batch/get", &ids(0)).await.expect(400);
    for (list, max) in [
        ("BatchCreateBody/properties/pins", batch),
        ("BatchUpdateBody/properties/pins", batch),
        ("BatchDeleteBody/properties/pin_ids", batch),
    ] {
        assert_eq!(bound(doc, &format!("{list}/maxItems")), max, "{list}");
    }
}

both_stores! {
    async fn schema_bounds_are_the_validators_bounds(app) {
        let doc = document(&app).await;
        check_bounds(&app, &doc).await;
        // The defaults are the validators' constants.
        assert_eq!(bound(&doc, "MetadataBody/properties/title/maxLength"), corkboard::pins::TITLE_CHARS);
        assert_eq!(bound(&doc, "MetadataBody/properties/tags/maxItems"), corkboard::pins::TAGS);
        assert_eq!(bound(&doc, "MetadataBody/properties/tags/items/maxLength"), corkboard::pins::TAG_CHARS);
        assert_eq!(bound(&doc, "BatchCreateBody/properties/pins/maxItems"), corkboard::pins::BATCH_ITEMS);
        let settings = corkboard::config::Settings::with_overrides(&[]).expect("defaults");
        assert_eq!(settings.limits.title_chars, corkboard::pins::TITLE_CHARS);
        assert_eq!(settings.limits.tags, corkboard::pins::TAGS);
        assert_eq!(settings.limits.tag_chars, corkboard::pins::TAG_CHARS);
        assert_eq!(settings.limits.batch_items, corkboard::pins::BATCH_ITEMS);

        // Fixed bounds, each at and past its limit.
        let page = bound(&doc, "PageParams/properties/limit/maximum");
        app.get(&format!("/v1/pinboards?limit={page}")).await.expect(200);
        app.get(&format!("/v1/pinboards?limit={}", page + 1)).await.expect(400);
        let y = bound(&doc, "PositionInput/properties/y/maximum");
        let pin = app.create_pin(&stat_cards("p")).await;
        let board = app.post("/v1/pinboards", &json!({"title": "b"})).await.expect(200);
        let board = board.data()["id"].as_str().expect("id").to_owned();
        let place = |y: usize| json!({"pin_id": pin["id"], "position": {"x": 0, "y": y}});
        app.post(&format!("/v1/pinboards/{board}/pins"), &place(y + 1)).await.expect(400);
        app.post(&format!("/v1/pinboards/{board}/pins"), &place(y)).await.expect(200);
        let description = bound(&doc, "CreateJsonDataset/properties/description/maxLength");
        let dataset = |name: &str, chars: usize| json!({"name": name, "format": "json", "data": 1, "description": text(chars)});
        app.post("/v1/datasets", &dataset("a", description)).await.expect(200);
        app.post("/v1/datasets", &dataset("b", description + 1)).await.expect(400);
        let name = bound(&doc, "CreateKeyBody/properties/name/maxLength");
        let key = |chars: usize| json!({"name": text(chars), "scopes": ["pins:read"]});
        app.post("/v1/api-keys", &key(name)).await.expect(200);
        app.post("/v1/api-keys", &key(name + 1)).await.expect(400);
        app.post("/v1/api-keys", &json!({"name": "k", "scopes": []})).await.expect(400);
        for body in ["ShareBody", "UpdateBoardBody", "UpdateDatasetBody", "UpdateBlockBody", "UpdateBody"] {
            assert_eq!(bound(&doc, &format!("{body}/minProperties")), 1, "{body}");
        }
        app.put(&format!("/v1/pinboards/{board}/share"), &json!({})).await.expect(400);
        app.put(&format!("/v1/pinboards/{board}/share"), &json!({"is_public": null})).await.expect(400);

        // A cursor the server hands out matches the documented pattern; others don't pass.
        for _ in 0..3 {
            app.post("/v1/pinboards", &json!({"title": "more"})).await.expect(200);
        }
        let page = app.get("/v1/pinboards?limit=1").await.expect(200);
        let cursor = page.body["pagination"]["next_cursor"].as_str().expect("cursor").to_owned();
        let pattern = doc.pointer("/components/schemas/PageParams/properties/cursor").expect("cursor").clone();
        let validator = jsonschema::validator_for(&pattern).expect("pattern");
        assert!(validator.is_valid(&json!(cursor)), "{cursor}");
        for refused in ["", "0", "YzEu", "YzEuLTE"] {
            assert!(!validator.is_valid(&json!(refused)), "{refused}");
            app.get(&format!("/v1/pinboards?cursor={refused}")).await.expect(400);
        }
        app.get(&format!("/v1/pinboards?cursor={cursor}")).await.expect(200);
    }
}

#[tokio::test]
async fn a_server_with_other_limits_describes_them() {
    let app = TestApp::sqlite_with(
        "[limits]\ntitle_chars = 50\ntags = 3\ntag_chars = 10\nbatch_items = 7\n",
    )
    .await;
    let doc = document(&app).await;
    for (body, _) in [
        ("MetadataBody", 0),
        ("CreateBoardBody", 0),
        ("UpdateBoardBody", 0),
    ] {
        assert_eq!(
            bound(&doc, &format!("{body}/properties/title/maxLength")),
            50,
            "{body}"
        );
        assert_eq!(
            bound(&doc, &format!("{body}/properties/tags/maxItems")),
            3,
            "{body}"
        );
        assert_eq!(
            bound(&doc, &format!("{body}/properties/tags/items/maxLength")),
            10,
            "{body}"
        );
    }
    check_bounds(&app, &doc).await;
}

/// Asserts that `res` is documented for the operation (status and content type) and that
/// its body validates against the documented schema.
#[track_caller]
pub fn conforms(doc: &Value, res: &Resp, method: &str, path: &str) {
    let errors = violations(doc, res, method, path);
    assert!(
        errors.is_empty(),
        "{method} {path} {} breaks its schema: {errors:?}\nbody: {}",
        res.status,
        res.body
    );
}

/// How `res`'s body breaks the schema documented for its status.
#[track_caller]
fn violations(doc: &Value, res: &Resp, method: &str, path: &str) -> Vec<String> {
    let status = res.status.to_string();
    let pointer = format!(
        "/paths/{}/{method}/responses/{status}/content/application~1json/schema",
        path.replace('~', "~0").replace('/', "~1")
    );
    assert!(
        doc.pointer(&pointer).is_some(),
        "{method} {path} does not document a JSON {status}"
    );
    let mut root = doc.clone();
    let reference = format!("#{}", pointer.replace('{', "%7B").replace('}', "%7D"));
    root["$ref"] = json!(reference);
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(&root)
        .expect("the documented schema compiles");
    let mut errors: Vec<String> = validator
        .iter_errors(&res.body)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    let response = format!(
        "/paths/{}/{method}/responses/{status}/headers",
        path.replace('~', "~0").replace('/', "~1")
    );
    let headers = doc.pointer(&response).and_then(Value::as_object);
    for name in headers.into_iter().flat_map(|h| h.keys()) {
        if res.header(name).is_none() {
            errors.push(format!("documented header {name} is missing"));
        }
    }
    errors
}

/// Whether `instance` is valid against the schema at `pointer` of the document.
fn valid(doc: &Value, pointer: &str, instance: &Value) -> bool {
    let mut root = doc.clone();
    root["$ref"] = json!(format!("#{pointer}"));
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(&root)
        .expect("the documented schema compiles");
    validator.is_valid(instance)
}

/// Whether a match of `pattern` is always a whole text without U+0000: anchored at both
/// ends, and no literal or class in it admits U+0000.
fn refuses_nul(pattern: &str) -> bool {
    use regex_syntax::hir::{Class, HirKind, Look};
    fn admits_nul(hir: &regex_syntax::hir::Hir) -> bool {
        match hir.kind() {
            HirKind::Literal(literal) => literal.0.contains(&0),
            HirKind::Class(Class::Unicode(class)) => {
                class.ranges().iter().any(|r| r.start() == '\0')
            }
            HirKind::Class(Class::Bytes(class)) => class.ranges().iter().any(|r| r.start() == 0),
            HirKind::Repetition(repetition) => admits_nul(&repetition.sub),
            HirKind::Capture(capture) => admits_nul(&capture.sub),
            HirKind::Concat(items) | HirKind::Alternation(items) => items.iter().any(admits_nul),
            HirKind::Empty | HirKind::Look(_) => false,
        }
    }
    let hir = regex_syntax::parse(pattern).expect("a pattern the regex crate reads");
    let HirKind::Concat(items) = hir.kind() else {
        return false;
    };
    let anchored = matches!(
        items.first().map(|h| h.kind()),
        Some(HirKind::Look(Look::Start))
    ) && matches!(
        items.last().map(|h| h.kind()),
        Some(HirKind::Look(Look::End))
    );
    anchored && !admits_nul(&hir)
}

#[tokio::test]
async fn every_text_schema_refuses_nul() {
    let app = TestApp::sqlite().await;
    let doc = document(&app).await;
    // The error envelope echoes the refused text as sent (a key holding U+0000 included).
    let mut requests = doc.clone();
    let echoes = requests["components"]["schemas"]
        .as_object_mut()
        .and_then(|s| s.remove("Error"));
    assert!(echoes.is_some(), "the Error schema");
    let mut found = Vec::new();
    schemas(&requests, &mut found);
    let mut strings = 0;
    for schema in &found {
        let kind = &schema["type"];
        let text = kind == "string"
            || kind
                .as_array()
                .is_some_and(|k| k.contains(&json!("string")));
        if text {
            strings += 1;
            let pattern = schema["pattern"].as_str();
            let pattern =
                pattern.unwrap_or_else(|| panic!("a string schema without a pattern: {schema}"));
            assert!(
                refuses_nul(pattern),
                "{pattern} admits U+0000 or is not anchored"
            );
        }
    }
    assert!(strings > 100, "string schemas found: {strings}");
    assert!(
        !refuses_nul("[^ \\t]"),
        "an unanchored pattern admits U+0000 around its match"
    );
    assert!(!refuses_nul("^[^a]*$"), "a negated class admits U+0000");

    // Any JSON value: no U+0000 in a string or a key, at any depth.
    let any = "/components/schemas/JsonValue";
    assert!(valid(&doc, any, &json!({"a": [1, "b", {"c": null}]})));
    assert!(!valid(&doc, any, &json!({"a": [1, "b\u{0}"]})));
    assert!(!valid(&doc, any, &json!([{"k\u{0}": 1}])));
    let dataset = "/components/schemas/CreateDatasetBody";
    let nul = json!({"name": "d", "format": "json", "data": {"deep": ["x\u{0}"]}});
    assert!(!valid(&doc, dataset, &nul));
    app.post("/v1/datasets", &nul)
        .await
        .expect_error(400, "VALIDATION_FAILED", None);
    let board = json!({"title": "a\u{0}"});
    assert!(!valid(&doc, "/components/schemas/CreateBoardBody", &board));
    app.post("/v1/pinboards", &board)
        .await
        .expect_error(400, "VALIDATION_FAILED", None);
}

both_stores! {
    async fn discriminated_bodies_agree_with_the_server(app) {
        let doc = document(&app).await;
        let schemas = &doc["components"]["schemas"];
        let mapping = |name: &str| schemas[name]["discriminator"]["mapping"].clone();
        assert_eq!(schemas["CreateDatasetBody"]["discriminator"]["propertyName"], json!("format"));
        assert_eq!(mapping("CreateDatasetBody")["markdown"], json!("#/components/schemas/CreateMarkdownDataset"));
        assert_eq!(schemas["CreateBlockBody"]["discriminator"]["propertyName"], json!("block_type"));
        assert_eq!(mapping("CreateBlockBody")["image"], json!("#/components/schemas/ImageBlockCreate"));
        assert_eq!(mapping("BlockBody")["conditional"], json!("#/components/schemas/ConditionalBlock"));

        let dataset = "/components/schemas/CreateDatasetBody";
        let cases = [
            (json!({"name": "a", "format": "markdown", "data": "# Hi"}), true),
            (json!({"name": "b", "format": "json", "data": "# Hi"}), true),
            (json!({"name": "c", "format": "markdown", "data": {"text": "# Hi"}}), false),
            (json!({"name": "d", "format": "markdown", "data": null}), false),
        ];
        for (body, ok) in cases {
            assert_eq!(valid(&doc, dataset, &body), ok, "{body}");
            let res = app.post("/v1/datasets", &body).await;
            assert_eq!(res.status, if ok { 200 } else { 400 }, "{body}: {}", res.body);
        }
        let created = app.post("/v1/datasets", &json!({"name": "e", "format": "json", "data": 1})).await.expect(200);
        let update = "/components/schemas/UpdateDatasetBody";
        let to_markdown = json!({"format": "markdown", "data": {"text": "x"}});
        assert!(!valid(&doc, update, &to_markdown));
        let path = format!("/v1/datasets/{}", created.data()["id"].as_str().expect("id"));
        app.put(&path, &to_markdown).await.expect_error(400, "VALIDATION_FAILED", Some("data"));
        assert!(valid(&doc, update, &json!({"format": "markdown", "data": "x"})));

        let pin = app.post("/v1/pins", &stat_cards("P")).await.expect(200);
        let blocks = format!("/v1/pins/{}/blocks", pin.data()["id"].as_str().expect("id"));
        let block = "/components/schemas/CreateBlockBody";
        let cases = [
            (json!({"block_type": "markdown", "config": {"text": "hi"}, "position": 0}), true),
            (json!({"block_type": "code", "config": {"language": "rust", "code": "fn main() {}"}}), true),
            (json!({"block_type": "image", "config": {"text": "hi"}}), false),
            (json!({"block_type": "conditional", "config": {"if": {"var": "a", "op": "exists"},
                "then": [{"block_type": "code", "config": {"text": "hi"}}]}}), false),
        ];
        for (body, ok) in cases {
            assert_eq!(valid(&doc, block, &body), ok, "{body}");
            let res = app.post(&blocks, &body).await;
            assert_eq!(res.status, if ok { 200 } else { 400 }, "{body}: {}", res.body);
        }
        // Conditionals nest at most 4 deep: the schema says so, and agrees with the server.
        let nested = |depth: usize| {
            let mut body = json!({"block_type": "markdown", "config": {"text": "hi"}});
            for _ in 0..depth {
                body = json!({"block_type": "conditional",
                    "config": {"if": {"var": "a", "op": "exists"}, "then": [body]}});
            }
            body
        };
        for (depth, ok) in [(1, true), (4, true), (5, false)] {
            let body = nested(depth);
            assert_eq!(valid(&doc, block, &body), ok, "depth {depth}");
            let res = app.post(&blocks, &body).await;
            assert_eq!(res.status, if ok { 200 } else { 400 }, "depth {depth}: {}", res.body);
        }
        let update = "/components/schemas/UpdateBlockBody";
        assert!(!valid(&doc, update, &json!({"block_type": "code", "config": {"text": "hi"}})));
        assert!(valid(&doc, update, &json!({"config": {"text": "hi"}})));
    }

    async fn web_urls_and_update_bodies_agree_with_the_server(app) {
        let doc = document(&app).await;
        let create = "/components/schemas/CreateBody";
        let cards = json!({"cards": [{"title": "Revenue", "value": "1"}]});
        let gauge = json!({"value": 3, "min": 0, "max": 10});
        let cases = [
            (json!({"pin_type": "stat-cards", "pin_config": cards}), true),
            (json!({"pin_type": "gauge", "pin_config": gauge}), true),
            (json!({"pin_type": "image", "pin_config": {"url": "https://example.com/a.png"}}), true),
            (json!({"pin_type": "image", "pin_config": {"url": "HTTP://example.com/a.png"}}), true),
            (json!({"pin_type": "image", "pin_config": {"url": "ftp://example.com/a.png"}}), false),
            (json!({"pin_type": "image", "pin_config": {"url": "javascript:alert(1)"}}), false),
            (json!({"pin_type": "list", "pin_config": {"items": [{"text": "a", "url": "data:,x"}]}}), false),
        ];
        for (body, ok) in cases {
            assert_eq!(valid(&doc, create, &body), ok, "{body}");
            let res = app.post("/v1/pins", &body).await;
            assert_eq!(res.status, if ok { 200 } else { 400 }, "{body}: {}", res.body);
        }
        // Which type's configuration goes with `pin_type` is the server's check (400): stated
        // as a choice per type, code generators made a model per pair and failed.
        assert!(valid(&doc, create, &json!({"pin_type": "gauge", "pin_config": cards})));
        app.post("/v1/pins", &json!({"pin_type": "gauge", "pin_config": cards}))
            .await
            .expect_error(400, "PIN_CONFIG_INVALID", None);
        let update = "/components/schemas/UpdateBody";
        // An empty `metadata` beside a change is schema-valid and accepted (alone, it changes
        // nothing: a 400 the schema leaves to the description).
        let pin = app.post("/v1/pins", &stat_cards("P")).await.expect(200);
        let path = format!("/v1/pins/{}", pin.data()["id"].as_str().expect("id"));
        let beside = json!({"metadata": {}, "pin_layout": "2x1"});
        assert!(valid(&doc, update, &beside));
        app.patch(&path, &beside).await.expect(200);
        app.patch(&path, &json!({"metadata": {}})).await.expect_error(400, "VALIDATION_FAILED", None);
        let block = "/components/schemas/CreateBlockBody";
        let picture = |url: &str| json!({"block_type": "image", "config": {"url": url}});
        assert!(valid(&doc, block, &picture("https://example.com/a.png")));
        assert!(!valid(&doc, block, &picture("file:///etc/passwd")));
    }

    async fn placement_rules_are_in_the_schemas(app) {
        let doc = document(&app).await;
        let board = app.post("/v1/pinboards", &json!({"title": "B"})).await.expect(200);
        let board = board.data()["id"].as_str().expect("id").to_owned();
        let place = "/components/schemas/PlaceBody";
        let cases = [
            (json!({"x": 1}), false),
            (json!({"y": 4}), false),
            (json!({"x": 10, "y": 0}), false),
            (json!({"x": 10, "y": 0, "w": 3}), false),
            (json!({"x": 10, "y": 0, "w": 2}), true),
            (json!({"x": 9, "y": 2}), true),
            (json!({"w": 12}), true),
        ];
        for (position, ok) in cases {
            let pin = app.post("/v1/pins", &stat_cards("P")).await.expect(200);
            let body = json!({"pin_id": pin.data()["id"], "position": position});
            assert_eq!(valid(&doc, place, &body), ok, "{body}");
            let res = app.post(&format!("/v1/pinboards/{board}/pins"), &body).await;
            assert_eq!(res.status, if ok { 200 } else { 400 }, "{body}: {}", res.body);
        }
        let moved = "/components/schemas/MoveBody";
        assert!(!valid(&doc, moved, &json!({"position": {}})));
        assert!(!valid(&doc, moved, &json!({"position": {"x": 11, "w": 2}})));
        assert!(valid(&doc, moved, &json!({"position": {"x": 11}})));
    }
}

#[tokio::test]
async fn the_event_stream_documents_every_frame() {
    let app = TestApp::sqlite().await;
    let doc = document(&app).await;
    let pointer = "/paths/~1v1~1events/get/responses/200/content/text~1event-stream/schema";
    let frames = doc
        .pointer(&format!("{pointer}/oneOf"))
        .and_then(Value::as_array)
        .expect("frames");
    let titles: Vec<&str> = frames.iter().filter_map(|f| f["title"].as_str()).collect();
    assert_eq!(titles, ["retry", "event", "reset", "keep-alive"]);
    let reset = json!({"event": "reset", "data": {"reason": "the last event id is unknown"}});
    assert!(valid(&doc, pointer, &reset));
    assert!(valid(&doc, pointer, &json!({"comment": "keep-alive"})));
    assert!(valid(&doc, pointer, &json!({"retry": 2000})));
    assert!(!valid(
        &doc,
        pointer,
        &json!({"event": "pin.created", "data": {}})
    ));
}
