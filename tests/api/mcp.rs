//! `/mcp` (CONTRACT.md 10): the Model Context Protocol endpoint for agents, driven as a
//! client would, with JSON-RPC over `POST /mcp`: initialize, the 20 tools and their schemas,
//! every tool's result checked against the REST view, refusals as tool errors (config, not
//! found, scope, another workspace), the rate limits shared with REST, 401s, and events.

use std::collections::BTreeSet;

use reqwest::Method;
use serde_json::{json, Value};

use crate::{both_stores, helpers::*, live::Stream};

const PROTOCOL: &str = "2025-06-18";

/// The tools of CONTRACT.md 10, names exact.
const TOOLS: [&str; 20] = [
    "list_pin_types",
    "create_pin",
    "create_pins",
    "upsert_pin",
    "append_to_pin",
    "get_pin",
    "list_pins",
    "update_pin",
    "delete_pin",
    "share_pin",
    "create_pinboard",
    "list_pinboards",
    "get_pinboard",
    "update_pinboard",
    "place_pin",
    "create_dataset",
    "list_datasets",
    "get_dataset",
    "update_dataset",
    "delete_dataset",
];

/// The tools whose REST route has a path id, taken as argument `id`.
const WITH_ID: [&str; 10] = [
    "get_pin",
    "update_pin",
    "delete_pin",
    "share_pin",
    "get_pinboard",
    "update_pinboard",
    "place_pin",
    "get_dataset",
    "update_dataset",
    "delete_dataset",
];

/// Sends one JSON-RPC message to `/mcp` with `key` (no credential when `None`) and the
/// headers a Streamable HTTP client sends.
async fn rpc(app: &TestApp, key: Option<&str>, message: &Value) -> Resp {
    let mut req = app
        .client
        .post(format!("{}/mcp", app.base))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(message.to_string());
    if message["method"] != json!("initialize") {
        req = req.header("mcp-protocol-version", PROTOCOL);
    }
    if let Some(key) = key {
        req = req.bearer_auth(key);
    }
    app.send(req).await
}

/// A tool call that went through: HTTP 200 with a result that is not an error.
#[track_caller]
fn refused_not(res: &Resp) {
    assert_eq!(res.status, 200, "{}", res.body);
    assert_ne!(res.body["result"]["isError"], json!(true), "{}", res.body);
}

/// A JSON-RPC request's answer: HTTP 200 with a JSON-RPC response to the same id.
#[track_caller]
fn answered(res: &Resp, id: i64) -> &Value {
    assert_eq!(res.status, 200, "body: {}", res.body);
    assert_eq!(res.body["jsonrpc"], json!("2.0"), "body: {}", res.body);
    assert_eq!(res.body["id"], json!(id), "body: {}", res.body);
    assert!(
        res.body.get("error").is_none(),
        "JSON-RPC error: {}",
        res.body
    );
    &res.body["result"]
}

async fn initialize(app: &TestApp, key: &str) -> Resp {
    let message = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "corkboard-tests", "version": "1"}
        }
    });
    rpc(app, Some(key), &message).await
}

async fn list_tools(app: &TestApp, key: &str) -> Resp {
    rpc(
        app,
        Some(key),
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .await
}

/// `tools/call name(arguments)` with `key`: the HTTP response (for its headers) and the
/// tool result.
async fn call_tool(app: &TestApp, key: &str, name: &str, arguments: Value) -> (Resp, Value) {
    let message = json!({
        "jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": name, "arguments": arguments}
    });
    let res = rpc(app, Some(key), &message).await;
    let result = answered(&res, 3).clone();
    (res, result)
}

/// A successful tool call's `structuredContent`, after checking the result's shape.
async fn ok(app: &TestApp, key: &str, name: &str, arguments: Value) -> Value {
    let (_, result) = call_tool(app, key, name, arguments).await;
    assert_eq!(result["isError"], json!(false), "{name}: {result}");
    let text = result["content"][0]["text"].as_str();
    assert!(
        text.is_some_and(|t| !t.is_empty()),
        "{name}: a text summary: {result}"
    );
    assert!(result["structuredContent"].is_object(), "{name}: {result}");
    result["structuredContent"].clone()
}

/// A refused tool call's error object (`{code, message, details?}`), after checking it is a
/// tool result with `isError` and the code is `code`.
#[track_caller]
fn refused(result: &Value, code: &str) -> Value {
    assert_eq!(result["isError"], json!(true), "{result}");
    let error = &result["structuredContent"];
    assert_eq!(error["code"], json!(code), "{result}");
    assert!(
        error["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{result}"
    );
    error.clone()
}

/// A tool call that must be refused with `code`: its error object.
async fn fails(app: &TestApp, key: &str, name: &str, arguments: Value, code: &str) -> Value {
    let (_, result) = call_tool(app, key, name, arguments).await;
    refused(&result, code)
}

fn id_of(value: &Value, field: &str) -> String {
    value[field]
        .as_str()
        .unwrap_or_else(|| panic!("no {field}: {value}"))
        .to_owned()
}

fn num(res: &Resp, header: &str) -> i64 {
    res.header(header)
        .unwrap_or_else(|| panic!("missing {header}: {:?}", res.headers))
        .parse()
        .expect("integer header")
}

/// REST `GET path` with the `*` key: its whole body (`data`, and `pagination` for lists).
async fn rest_list(app: &TestApp, path: &str) -> Value {
    let body = app.get(path).await.expect(200).body;
    json!({"data": body["data"], "pagination": body["pagination"]})
}

/// How many pins the default workspace holds, as REST lists them.
async fn pin_count(app: &TestApp) -> usize {
    app.get("/v1/pins?limit=100")
        .await
        .expect(200)
        .data()
        .as_array()
        .expect("a list")
        .len()
}

const RATE_LIMITS_HEADERS: [&str; 7] = [
    "x-ratelimit-limit-hour",
    "x-ratelimit-remaining-hour",
    "x-ratelimit-reset-hour",
    "x-ratelimit-limit-minute",
    "x-ratelimit-remaining-minute",
    "x-ratelimit-reset-minute",
    "x-ratelimit-token-cost",
];

/// A write bucket of 3 per 60 s and a team minute of 100: small enough to exhaust.
const SMALL_BUCKET: &str = "
[rate_limits.tiers.team]
per_minute = 100
per_hour = 1000
[rate_limits.write_bucket]
capacity = 3
window_secs = 60
";

/// `mod $name { sqlite(), postgres() }` with [`SMALL_BUCKET`] in force.
macro_rules! small_bucket {
    ($(async fn $name:ident($app:ident) $body:block)*) => {$(
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            #[tokio::test]
            async fn sqlite() {
                let $app = TestApp::sqlite_with(SMALL_BUCKET).await;
                $body
            }
            #[tokio::test]
            async fn postgres() {
                $crate::skip_without_postgres!();
                let $app = TestApp::postgres_with(SMALL_BUCKET).await;
                $body
            }
        }
    )*};
}

both_stores! {
    async fn initialize_names_corkboard_and_offers_tools(app) {
        let res = initialize(&app, &app.key).await;
        let result = answered(&res, 1);
        assert_eq!(result["serverInfo"]["name"], json!("corkboard"), "{result}");
        assert!(result["serverInfo"]["version"].is_string(), "{result}");
        assert!(result["capabilities"]["tools"].is_object(), "{result}");
        assert_eq!(result["protocolVersion"], json!(PROTOCOL), "{result}");
        assert!(res.header("content-type").is_some_and(|t| t.starts_with("application/json")));
        // Stateless: no session to carry, and the next request stands alone.
        assert!(res.header("mcp-session-id").is_none(), "{:?}", res.headers);
        let initialized = rpc(&app, Some(&app.key), &json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        assert!((200..300).contains(&initialized.status), "{}", initialized.status);
        let listed = list_tools(&app, &app.key).await;
        assert_eq!(answered(&listed, 2)["tools"].as_array().map(Vec::len), Some(20));
    }

    async fn tools_list_has_the_twenty_with_their_schemas(app) {
        let res = list_tools(&app, &app.key).await;
        let tools = answered(&res, 2)["tools"].as_array().expect("tools").clone();
        let names: BTreeSet<&str> = tools.iter().map(|t| t["name"].as_str().expect("a name")).collect();
        assert_eq!(names, TOOLS.into_iter().collect::<BTreeSet<_>>());
        assert_eq!(tools.len(), 20, "no tool twice");

        let catalogue = app.get("/v1/pin-types").await.expect(200);
        let types: Vec<String> = catalogue.data().as_array().unwrap().iter().map(|e| id_of(e, "pin_type")).collect();
        assert_eq!(types.len(), 18);
        for tool in &tools {
            let name = tool["name"].as_str().unwrap();
            let schema = &tool["inputSchema"];
            assert_eq!(schema["type"], json!("object"), "{name}: {schema}");
            assert!(
                tool["description"].as_str().is_some_and(|d| !d.is_empty()),
                "{name} has a description"
            );
            let required: Vec<&str> = schema["required"]
                .as_array()
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if WITH_ID.contains(&name) {
                assert!(required.contains(&"id"), "{name} requires id: {schema}");
                assert_eq!(schema["properties"]["id"]["type"], json!("string"), "{name}: {schema}");
            } else {
                assert!(!required.contains(&"id"), "{name} takes no id: {schema}");
            }
        }
        let create_pin = tools.iter().find(|t| t["name"] == json!("create_pin")).unwrap();
        let text = create_pin["inputSchema"].to_string();
        for pin_type in &types {
            assert!(text.contains(&format!("\"{pin_type}\"")), "create_pin's schema lacks {pin_type}");
        }
        let required = create_pin["inputSchema"]["required"].to_string();
        assert!(required.contains("pin_type"), "create_pin requires pin_type: {required}");
        let place = tools.iter().find(|t| t["name"] == json!("place_pin")).unwrap();
        assert!(place["inputSchema"]["properties"]["pin_id"].is_object(), "{}", place["inputSchema"]);
    }

    // Each tool asks the scope its REST route asks (read from the served description, the
    // route named at the end of the tool's description): one `Access` stated at two doors
    // must agree. A key with every scope but that one is refused naming it.
    async fn each_tool_asks_its_rest_routes_scope(app) {
        let document = app.send(app.client.get(format!("{}/v1/openapi.json", app.base))).await.body;
        let res = list_tools(&app, &app.key).await;
        let tools = answered(&res, 2)["tools"].as_array().expect("tools").clone();
        let mut checked = 0;
        let every = ["pins:read", "pins:write", "pins:share", "pinboards:read", "pinboards:write",
                     "pinboards:invite", "datasets:read", "datasets:write"];
        for tool in &tools {
            let name = tool["name"].as_str().unwrap();
            let description = tool["description"].as_str().unwrap();
            let route = description.rsplit_once('(').and_then(|(_, r)| r.strip_suffix(").")).expect(description);
            let (method, path) = route.split_once(' ').expect(route);
            let operation = &document["paths"][path][method.to_lowercase()];
            assert!(operation.is_object(), "{name}: {method} {path} is described");
            let Some(scope) = operation["security"][0]["bearer"][0].as_str() else {
                continue; // any valid credential (the catalogue)
            };
            let others: Vec<&str> = every.iter().copied().filter(|s| *s != scope).collect();
            let key = app.key_with(&others.join(",")).await;
            let mut arguments = json!({});
            if WITH_ID.contains(&name) {
                arguments["id"] = json!("x-unknown");
            }
            let (_, result) = call_tool(&app, &key, name, arguments).await;
            let error = refused(&result, "SCOPE_REQUIRED");
            assert_eq!(error["details"]["required_scope"], json!(scope), "{name}: {result}");
            checked += 1;
        }
        assert_eq!(checked, 19, "every tool but the catalogue needs a scope");
    }

    async fn list_pin_types_is_the_rest_catalogue(app) {
        let data = ok(&app, &app.key, "list_pin_types", json!({})).await;
        let rest = app.get("/v1/pin-types").await.expect(200);
        assert_eq!(data, json!({"data": rest.data()}));
        // Any valid credential reads the catalogue, as over REST.
        let narrow = app.key_with("datasets:read").await;
        assert_eq!(ok(&app, &narrow, "list_pin_types", json!({})).await, data);
    }

    async fn pin_tools_agree_with_rest(app) {
        let mut revenue = stat_cards("Revenue");
        revenue["status_rules"] = json!([
            {"path": "pin_config.cards[0].value", "op": "gte", "value": 1, "status": "critical"}
        ]);
        revenue["expected_every_secs"] = json!(60);
        let created = ok(&app, &app.key, "create_pin", revenue).await;
        let id = id_of(&created, "pin_id");
        assert!(id.starts_with("p-"), "{id}");
        // The signals' fields, as on REST: an agent sees the status its rules give.
        assert_eq!(created["status"], "critical", "{created}");
        assert_eq!(created["stale"], false, "{created}");
        assert!(created["shareable_url"].is_string(), "{created}");
        let path = format!("/v1/pins/{id}");
        let read = app.get(&path).await.expect(200);
        let mut expected = created.clone();
        expected.as_object_mut().unwrap().remove("pin_id");
        assert_eq!(read.data(), &expected, "REST read = create result without pin_id");
        assert_eq!(read.data()["version"], json!(1));

        let got = ok(&app, &app.key, "get_pin", json!({"id": id})).await;
        assert_eq!(&got, read.data(), "get_pin = GET /v1/pins/{{id}}");

        let other = ok(&app, &app.key, "create_pin", json!({"pin_type": "markdown", "pin_config": {"text": "# Notes"}, "metadata": {"title": "Notes", "tags": ["docs"]}})).await;
        let listed = ok(&app, &app.key, "list_pins", json!({})).await;
        assert_eq!(listed, rest_list(&app, "/v1/pins").await, "list_pins = GET /v1/pins");
        assert_eq!(listed["data"].as_array().unwrap().len(), 2);
        let page = ok(&app, &app.key, "list_pins", json!({"limit": 1})).await;
        assert_eq!(page, rest_list(&app, "/v1/pins?limit=1").await);
        assert_eq!(page["pagination"]["has_more"], json!(true), "{page}");
        let tagged = ok(&app, &app.key, "list_pins", json!({"tag": "docs"})).await;
        assert_eq!(tagged, rest_list(&app, "/v1/pins?tag=docs").await);

        let updated = ok(&app, &app.key, "update_pin", json!({"id": id, "metadata": {"title": "Revenue (EU)"}})).await;
        assert_eq!(updated["id"], json!(id));
        assert_eq!(updated["version"], json!(2));
        assert!(updated["updated_at"].is_i64(), "epoch ms as over REST: {updated}");
        let read = app.get(&path).await.expect(200);
        assert_eq!(read.data()["version"], json!(2));
        assert_eq!(read.data()["metadata"]["title"], json!("Revenue (EU)"));
        assert_eq!(read.data()["pin_config"], stat_cards("x")["pin_config"], "only the sent fields change");
        assert_eq!(read.header("etag"), Some("\"2\""));

        let deleted = ok(&app, &app.key, "delete_pin", json!({"id": id})).await;
        assert_eq!(deleted["id"], json!(id), "{deleted}");
        app.get(&path).await.expect_error(404, "NOT_FOUND", None);
        app.get(&format!("/v1/pins/{}", id_of(&other, "pin_id"))).await.expect(200);
    }

    async fn create_pins_creates_every_pin(app) {
        let body = json!({"pins": (0..12).map(|i| stat_cards(&format!("b{i}"))).collect::<Vec<_>>()});
        let (res, result) = call_tool(&app, &app.key, "create_pins", body).await;
        assert_eq!(result["isError"], json!(false), "{result}");
        assert_eq!(num(&res, "x-ratelimit-token-cost"), 2, "12 items cost ceil(12/10)");
        let items = result["structuredContent"]["data"].as_array().expect("data: [...]").clone();
        assert_eq!(items.len(), 12);
        for (i, item) in items.iter().enumerate() {
            let id = id_of(item, "pin_id");
            let read = app.get(&format!("/v1/pins/{id}")).await.expect(200);
            assert_eq!(read.data()["metadata"]["title"], json!(format!("b{i}")));
        }
        assert_eq!(pin_count(&app).await, 12);
        // All or none, as over REST.
        let mut bad = json!({"pins": [stat_cards("fine"), stat_cards("broken")]});
        bad["pins"][1]["pin_config"]["cards"][0]["trend"] = json!("sideways");
        let error = fails(&app, &app.key, "create_pins", bad, "PIN_CONFIG_INVALID").await;
        assert_eq!(error["details"]["index"], json!(1), "{error}");
        assert_eq!(pin_count(&app).await, 12);
    }

    async fn share_pin_makes_the_share_page_public(app) {
        let id = id_of(&ok(&app, &app.key, "create_pin", stat_cards("Shared")).await, "pin_id");
        let page = format!("{}/share/{id}", app.base);
        assert_eq!(app.client.get(&page).send().await.unwrap().status().as_u16(), 404);

        let shared = ok(&app, &app.key, "share_pin", json!({"id": id, "is_public": true})).await;
        assert_eq!(shared["is_public"], json!(true), "{shared}");
        let rest = app.get(&format!("/v1/pins/{id}/share")).await.expect(200);
        assert_eq!(&shared, rest.data(), "share_pin = GET /v1/pins/{{id}}/share");
        assert_eq!(app.get(&format!("/v1/pins/{id}")).await.expect(200).data()["is_public"], json!(true));
        let res = app.client.get(&page).send().await.unwrap();
        assert_eq!(res.status().as_u16(), 200);
        assert!(res.text().await.unwrap().contains("Shared"));

        ok(&app, &app.key, "share_pin", json!({"id": id, "is_public": false})).await;
        assert_eq!(app.client.get(&page).send().await.unwrap().status().as_u16(), 404);
    }

    async fn pinboard_tools_agree_with_rest(app) {
        let board = ok(&app, &app.key, "create_pinboard", json!({"title": "Ops", "tags": ["ops"]})).await;
        let board_id = id_of(&board, "id");
        assert!(board_id.starts_with("pb-"), "{board_id}");
        let path = format!("/v1/pinboards/{board_id}");
        let read = app.get(&path).await.expect(200);
        for (field, value) in board.as_object().unwrap() {
            assert_eq!(&read.data()[field], value, "create result's {field} = REST read");
        }
        assert_eq!(read.data()["pins"], json!([]));

        let pin = id_of(&ok(&app, &app.key, "create_pin", stat_cards("On board")).await, "pin_id");
        let placed = ok(&app, &app.key, "place_pin", json!({"id": board_id, "pin_id": pin, "position": {"x": 0, "y": 0, "w": 6, "h": 4}})).await;
        let got = ok(&app, &app.key, "get_pinboard", json!({"id": board_id})).await;
        let read = app.get(&path).await.expect(200);
        assert_eq!(&got, read.data(), "get_pinboard = GET /v1/pinboards/{{id}}");
        let placements = read.data()["pins"].as_array().unwrap();
        assert_eq!(placements.len(), 1);
        assert_eq!(placements[0]["pin_id"], json!(pin));
        assert_eq!(placements[0]["position"], json!({"x": 0, "y": 0, "w": 6, "h": 4}));
        assert_eq!(placed["pin_id"], json!(pin), "{placed}");
        // An overlapping placement is refused as over REST.
        let other = id_of(&ok(&app, &app.key, "create_pin", stat_cards("Other")).await, "pin_id");
        fails(&app, &app.key, "place_pin", json!({"id": board_id, "pin_id": other, "position": {"x": 2, "y": 1, "w": 2, "h": 2}}), "CONFLICT").await;
        assert_eq!(app.get(&path).await.expect(200).data()["pins"].as_array().unwrap().len(), 1);

        let updated = ok(&app, &app.key, "update_pinboard", json!({"id": board_id, "title": "Ops (live)"})).await;
        assert_eq!(updated["title"], json!("Ops (live)"));
        let read = app.get(&path).await.expect(200);
        assert_eq!(read.data()["title"], json!("Ops (live)"));
        assert_eq!(read.data()["tags"], json!(["ops"]), "only the sent fields change");

        app.post("/v1/pinboards", &json!({"title": "Second"})).await.expect(200);
        let listed = ok(&app, &app.key, "list_pinboards", json!({})).await;
        assert_eq!(listed, rest_list(&app, "/v1/pinboards").await, "list_pinboards = GET /v1/pinboards");
        assert_eq!(listed["data"].as_array().unwrap().len(), 2);
    }

    async fn dataset_tools_agree_with_rest(app) {
        let created = ok(&app, &app.key, "create_dataset", json!({"name": "sales", "format": "json", "data": {"total": 10, "regions": {"eu": 4, "us": 6}}, "description": "Q3"})).await;
        let id = id_of(&created, "id");
        assert!(id.starts_with("ds-"), "{id}");
        let path = format!("/v1/datasets/{id}");
        let read = app.get(&path).await.expect(200);
        assert_eq!(read.data(), &created, "create result = REST read");
        assert_eq!(ok(&app, &app.key, "get_dataset", json!({"id": id})).await, created);

        // A name taken is CONFLICT, as over REST.
        fails(&app, &app.key, "create_dataset", json!({"name": "sales", "format": "markdown", "data": "x"}), "CONFLICT").await;
        app.post("/v1/datasets", &json!({"name": "notes", "format": "markdown", "data": "# hi"})).await.expect(200);
        let listed = ok(&app, &app.key, "list_datasets", json!({})).await;
        assert_eq!(listed, rest_list(&app, "/v1/datasets").await, "list_datasets = GET /v1/datasets");
        assert_eq!(listed["data"].as_array().unwrap().len(), 2);

        // update_dataset is PATCH: a JSON Merge Patch of the data.
        let updated = ok(&app, &app.key, "update_dataset", json!({"id": id, "data": {"regions": {"us": null, "apac": 1}}})).await;
        let read = app.get(&path).await.expect(200);
        assert_eq!(read.data()["data"], json!({"total": 10, "regions": {"eu": 4, "apac": 1}}));
        assert_eq!(read.data()["version"], json!(2));
        assert_eq!(read.data()["description"], json!("Q3"));
        assert_eq!(&updated, read.data(), "update result = REST read");

        // get_pin with render resolves templates as REST's ?render=true does.
        let body = json!({"pin_type": "markdown", "pin_config": {"text": "Total: {{sales.total}}, EU {{sales.regions.eu}}"}});
        let pin = id_of(&ok(&app, &app.key, "create_pin", body).await, "pin_id");
        let rendered = ok(&app, &app.key, "get_pin", json!({"id": pin, "render": true})).await;
        let rest = app.get(&format!("/v1/pins/{pin}?render=true")).await.expect(200);
        assert_eq!(&rendered, rest.data());
        assert_eq!(rendered["pin_config"]["text"], json!("Total: 10, EU 4"));
        let stored = ok(&app, &app.key, "get_pin", json!({"id": pin})).await;
        assert_eq!(stored["pin_config"]["text"], json!("Total: {{sales.total}}, EU {{sales.regions.eu}}"));

        let deleted = ok(&app, &app.key, "delete_dataset", json!({"id": id})).await;
        assert_eq!(deleted["id"], json!(id), "{deleted}");
        app.get(&path).await.expect_error(404, "NOT_FOUND", None);
        fails(&app, &app.key, "get_dataset", json!({"id": id}), "NOT_FOUND").await;
    }

    async fn a_refused_config_names_its_field_and_writes_nothing(app) {
        let mut body = stat_cards("Bad");
        body["pin_config"]["cards"][0]["trend"] = json!("sideways");
        let error = fails(&app, &app.key, "create_pin", body, "PIN_CONFIG_INVALID").await;
        assert_eq!(error["details"]["field"], json!("pin_config.cards[0].trend"), "{error}");
        assert!(error["details"]["expected"].as_str().is_some_and(|e| !e.is_empty()), "{error}");
        // The same object REST gives for the same body.
        let mut body = stat_cards("Bad");
        body["pin_config"]["cards"][0]["trend"] = json!("sideways");
        let rest = app.post("/v1/pins", &body).await.expect_error(400, "PIN_CONFIG_INVALID", None);
        assert_eq!(error, rest.body["error"]);
        assert_eq!(pin_count(&app).await, 0);

        let error = fails(&app, &app.key, "create_pin", json!({"pin_type": "sparkle", "pin_config": {}}), "VALIDATION_FAILED").await;
        assert_eq!(error["details"]["field"], json!("pin_type"), "{error}");

        // A tool with a path id needs one.
        let id = id_of(&ok(&app, &app.key, "create_pin", stat_cards("Good")).await, "pin_id");
        let error = fails(&app, &app.key, "update_pin", json!({"metadata": {"title": "x"}}), "VALIDATION_FAILED").await;
        assert_eq!(error["details"]["field"], json!("id"), "{error}");
        let error = fails(&app, &app.key, "update_pin", json!({"id": id, "pin_config": {"cards": [{"title": "a", "value": "1", "trend": "sideways"}]}}), "PIN_CONFIG_INVALID").await;
        assert_eq!(error["details"]["field"], json!("pin_config.cards[0].trend"), "{error}");
        let read = app.get(&format!("/v1/pins/{id}")).await.expect(200);
        assert_eq!(read.data()["version"], json!(1), "a refused update writes nothing");
        assert_eq!(pin_count(&app).await, 1);
    }

    async fn unknown_ids_are_not_found(app) {
        for (tool, id) in [
            ("get_pin", "p-nope"),
            ("delete_pin", "p-nope"),
            ("get_pinboard", "pb-nope"),
            ("get_dataset", "ds-nope"),
            ("delete_dataset", "ds-nope"),
        ] {
            fails(&app, &app.key, tool, json!({"id": id}), "NOT_FOUND").await;
        }
        fails(&app, &app.key, "update_pin", json!({"id": "p-nope", "metadata": {"title": "x"}}), "NOT_FOUND").await;
        fails(&app, &app.key, "share_pin", json!({"id": "p-nope", "is_public": true}), "NOT_FOUND").await;
        fails(&app, &app.key, "update_pinboard", json!({"id": "pb-nope", "title": "x"}), "NOT_FOUND").await;
        fails(&app, &app.key, "update_dataset", json!({"id": "ds-nope", "data": {}}), "NOT_FOUND").await;
        let pin = id_of(&ok(&app, &app.key, "create_pin", stat_cards("Real")).await, "pin_id");
        fails(&app, &app.key, "place_pin", json!({"id": "pb-nope", "pin_id": pin}), "NOT_FOUND").await;
        let board = id_of(&ok(&app, &app.key, "create_pinboard", json!({"title": "B"})).await, "id");
        fails(&app, &app.key, "place_pin", json!({"id": board, "pin_id": "p-nope"}), "NOT_FOUND").await;
    }

    async fn templates_need_datasets_read_through_the_tools_too(app) {
        let writer = app.key_with("pins:read,pins:write").await;
        let templated = json!({"pin_type": "markdown", "pin_config": {"text": "{{secret.x}}"}});
        let error = fails(&app, &writer, "create_pin", templated.clone(), "SCOPE_REQUIRED").await;
        assert_eq!(error["details"]["required_scope"], json!("datasets:read"), "{error}");
        fails(&app, &writer, "create_pins", json!({"pins": [templated]}), "SCOPE_REQUIRED").await;
        assert_eq!(pin_count(&app).await, 0, "nothing written");
        let id = new_pin_via_rest(&app).await;
        fails(&app, &writer, "update_pin", json!({"id": id, "pin_config": {"text": "{{secret}}"}}), "SCOPE_REQUIRED").await;
        fails(&app, &writer, "get_pin", json!({"id": id, "render": true}), "SCOPE_REQUIRED").await;
        fails(&app, &writer, "list_pins", json!({"render": "true"}), "SCOPE_REQUIRED").await;
        let read = ok(&app, &writer, "get_pin", json!({"id": id})).await;
        assert_eq!(read["version"], json!(1));
    }

    async fn a_missing_scope_is_scope_required_and_writes_nothing(app) {
        let reader = app.key_with("pins:read,pinboards:read,datasets:read").await;
        let error = fails(&app, &reader, "create_pin", stat_cards("No"), "SCOPE_REQUIRED").await;
        assert_eq!(error["details"]["required_scope"], json!("pins:write"), "{error}");
        assert!(error["message"].as_str().unwrap().contains("pins:write"), "{error}");
        let error = fails(&app, &reader, "create_pins", json!({"pins": [stat_cards("No")]}), "SCOPE_REQUIRED").await;
        assert_eq!(error["details"]["required_scope"], json!("pins:write"));
        assert_eq!(pin_count(&app).await, 0, "nothing written");

        let id = new_pin_via_rest(&app).await;
        let error = fails(&app, &reader, "update_pin", json!({"id": id, "metadata": {"title": "x"}}), "SCOPE_REQUIRED").await;
        assert_eq!(error["details"]["required_scope"], json!("pins:write"));
        fails(&app, &reader, "delete_pin", json!({"id": id}), "SCOPE_REQUIRED").await;
        let writer = app.key_with("pins:read,pins:write").await;
        let error = fails(&app, &writer, "share_pin", json!({"id": id, "is_public": true}), "SCOPE_REQUIRED").await;
        assert_eq!(error["details"]["required_scope"], json!("pins:share"));
        let read = app.get(&format!("/v1/pins/{id}")).await.expect(200);
        assert_eq!(read.data()["version"], json!(1));
        assert_eq!(read.data()["is_public"], json!(false));
        assert_eq!(read.data()["metadata"]["title"], json!("Kept"));

        let error = fails(&app, &reader, "create_pinboard", json!({"title": "No"}), "SCOPE_REQUIRED").await;
        assert_eq!(error["details"]["required_scope"], json!("pinboards:write"));
        assert_eq!(app.get("/v1/pinboards").await.expect(200).data(), &json!([]));
        let error = fails(&app, &reader, "create_dataset", json!({"name": "no", "format": "markdown", "data": "x"}), "SCOPE_REQUIRED").await;
        assert_eq!(error["details"]["required_scope"], json!("datasets:write"));
        assert_eq!(app.get("/v1/datasets").await.expect(200).data(), &json!([]));

        let pins_only = app.key_with("pins:read").await;
        let error = fails(&app, &pins_only, "list_pinboards", json!({}), "SCOPE_REQUIRED").await;
        assert_eq!(error["details"]["required_scope"], json!("pinboards:read"));
        let error = fails(&app, &pins_only, "list_datasets", json!({}), "SCOPE_REQUIRED").await;
        assert_eq!(error["details"]["required_scope"], json!("datasets:read"));
        // What the scope allows, it allows.
        assert_eq!(ok(&app, &reader, "get_pin", json!({"id": id})).await["id"], json!(id));
    }

    async fn another_workspaces_pin_is_not_found(app) {
        let id = new_pin_via_rest(&app).await;
        let board = id_of(&ok(&app, &app.key, "create_pinboard", json!({"title": "Mine"})).await, "id");
        let dataset = id_of(&ok(&app, &app.key, "create_dataset", json!({"name": "mine", "format": "markdown", "data": "x"})).await, "id");
        let stranger = app.key_in("elsewhere", "*").await;
        fails(&app, &stranger, "get_pin", json!({"id": id}), "NOT_FOUND").await;
        fails(&app, &stranger, "update_pin", json!({"id": id, "metadata": {"title": "Stolen"}}), "NOT_FOUND").await;
        fails(&app, &stranger, "share_pin", json!({"id": id, "is_public": true}), "NOT_FOUND").await;
        fails(&app, &stranger, "delete_pin", json!({"id": id}), "NOT_FOUND").await;
        fails(&app, &stranger, "get_pinboard", json!({"id": board}), "NOT_FOUND").await;
        fails(&app, &stranger, "get_dataset", json!({"id": dataset}), "NOT_FOUND").await;
        let theirs = id_of(&ok(&app, &stranger, "create_pinboard", json!({"title": "Theirs"})).await, "id");
        fails(&app, &stranger, "place_pin", json!({"id": theirs, "pin_id": id}), "NOT_FOUND").await;
        assert_eq!(ok(&app, &stranger, "list_pins", json!({})).await["data"], json!([]));

        let read = app.get(&format!("/v1/pins/{id}")).await.expect(200);
        assert_eq!(read.data()["version"], json!(1));
        assert_eq!(read.data()["metadata"]["title"], json!("Kept"));
        assert_eq!(read.data()["is_public"], json!(false));
    }

    async fn a_page_of_another_origin_is_refused(app) {
        let message = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "create_pin", "arguments": stat_cards("x")}});
        let from = |origin: &str| {
            app.client
                .post(format!("{}/mcp", app.base))
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", PROTOCOL)
                .header("origin", origin)
                .bearer_auth(&app.key)
                .body(message.to_string())
        };
        // DNS rebinding: a page of another site whose name now points here.
        for origin in ["http://evil.example:8080", "null", "https://127.0.0.1.evil.example"] {
            let res = app.send(from(origin)).await.expect_error(403, "FORBIDDEN", None);
            assert!(res.header("x-ratelimit-limit-minute").is_none(), "refused before it is priced");
        }
        assert_eq!(pin_count(&app).await, 0, "nothing written");
        // The server's own origin (its public URL) and no Origin at all (agents) pass.
        let own = app.state.public_base().to_owned();
        let res = app.send(from(&own)).await;
        refused_not(&res);
        let (_, result) = call_tool(&app, &app.key, "create_pin", stat_cards("y")).await;
        assert_ne!(result["isError"], json!(true), "{result}");
        assert_eq!(pin_count(&app).await, 2);
    }

    async fn no_or_a_bad_credential_is_401(app) {
        let message = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "create_pin", "arguments": stat_cards("x")}});
        for key in [None, Some("cbk_not-a-real-key"), Some("")] {
            let res = rpc(&app, key, &message).await.expect_error(401, "UNAUTHORIZED", None);
            assert!(res.header("www-authenticate").is_some_and(|v| v.starts_with("Bearer")), "{key:?}: {:?}", res.headers);
            assert!(res.header("x-ratelimit-limit-minute").is_none());
        }
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
        let res = rpc(&app, None, &init).await.expect_error(401, "UNAUTHORIZED", None);
        assert_eq!(res.header("www-authenticate"), Some("Bearer"));
        assert_eq!(pin_count(&app).await, 0, "nothing written");
    }

    async fn an_mcp_create_gives_the_same_event_as_rest(app) {
        let mut stream = Stream::open(&app, "/v1/events?type=pin.created", &app.key, &[]).await;
        assert_eq!(stream.status, 200);
        let rest_id = new_pin_via_rest(&app).await;
        let rest_event = stream.next_event().await;
        let mcp_id = id_of(&ok(&app, &app.key, "create_pin", stat_cards("Kept")).await, "pin_id");
        let mcp_event = stream.next_event().await;
        assert_eq!(mcp_event.event.as_deref(), Some("pin.created"));
        assert_eq!(mcp_event.data["type"], json!("pin.created"));
        assert_eq!(mcp_event.data["id"], json!(mcp_id));
        assert_eq!(mcp_event.data["version"], json!(1));
        let read = app.get(&format!("/v1/pins/{mcp_id}")).await.expect(200);
        assert_eq!(mcp_event.data["data"], *read.data(), "the event's data is the GET");
        assert_eq!(rest_event.data["id"], json!(rest_id));
        let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(&mcp_event.data), keys(&rest_event.data), "same event shape as REST's");
        assert_eq!(mcp_event.data["data"]["pin_config"], rest_event.data["data"]["pin_config"]);
        assert_eq!(mcp_event.data["data"]["metadata"], rest_event.data["data"]["metadata"]);
        // A refused MCP write gives no event.
        let mut bad = stat_cards("Bad");
        bad["pin_config"]["cards"][0]["trend"] = json!("sideways");
        fails(&app, &app.key, "create_pin", bad, "PIN_CONFIG_INVALID").await;
        let last = new_pin_via_rest(&app).await;
        assert_eq!(stream.next_event().await.data["id"], json!(last), "no event in between");
    }
}

/// Creates `stat_cards("Kept")` over REST and returns its id.
async fn new_pin_via_rest(app: &TestApp) -> String {
    id_of(&app.create_pin(&stat_cards("Kept")).await, "pin_id")
}

small_bucket! {
    async fn an_exhausted_write_bucket_refuses_the_tool_call_and_writes_nothing(app) {
        for i in 0..3 {
            let (res, result) = call_tool(&app, &app.key, "create_pin", stat_cards(&format!("w{i}"))).await;
            assert_eq!(result["isError"], json!(false), "{result}");
            assert_eq!(num(&res, "x-ratelimit-token-cost"), 1);
            assert_eq!(num(&res, "x-ratelimit-limit-minute"), 3, "the write bucket binds first");
            assert_eq!(num(&res, "x-ratelimit-remaining-minute"), 2 - i);
        }
        let (res, result) = call_tool(&app, &app.key, "create_pin", stat_cards("refused")).await;
        let error = refused(&result, "RATE_LIMIT_EXCEEDED");
        assert_eq!(error["details"]["window"], json!("write"), "{error}");
        assert_eq!(error["details"]["limit"], json!(3), "{error}");
        assert_eq!(error["details"]["tier"], json!("team"), "{error}");
        assert!(error["details"]["resetAt"].is_string(), "{error}");
        for h in RATE_LIMITS_HEADERS {
            assert!(res.header(h).is_some(), "refused call lacks {h}");
        }
        assert_eq!(num(&res, "x-ratelimit-remaining-minute"), 0);
        assert_eq!(pin_count(&app).await, 3, "the refused call wrote nothing");
        let titles: Vec<Value> = app.get("/v1/pins").await.expect(200).data().as_array().unwrap().iter().map(|p| p["metadata"]["title"].clone()).collect();
        assert!(!titles.contains(&json!("refused")), "{titles:?}");

        // Every write tool is refused; reads still answer.
        let id = id_of(&app.get("/v1/pins").await.data()[0], "id");
        for (tool, args) in [
            ("update_pin", json!({"id": id, "metadata": {"title": "no"}})),
            ("delete_pin", json!({"id": id})),
            ("share_pin", json!({"id": id, "is_public": true})),
            ("create_pins", json!({"pins": [stat_cards("no")]})),
            ("create_pinboard", json!({"title": "no"})),
            ("create_dataset", json!({"name": "no", "format": "markdown", "data": "x"})),
        ] {
            let error = fails(&app, &app.key, tool, args, "RATE_LIMIT_EXCEEDED").await;
            assert_eq!(error["details"]["window"], json!("write"), "{tool}: {error}");
        }
        let read = app.get(&format!("/v1/pins/{id}")).await.expect(200);
        assert_eq!(read.data()["version"], json!(1));
        assert_eq!(read.data()["is_public"], json!(false));
        assert_eq!(pin_count(&app).await, 3);
        assert_eq!(app.get("/v1/pinboards").await.expect(200).data(), &json!([]));
        assert_eq!(app.get("/v1/datasets").await.expect(200).data(), &json!([]));
        assert_eq!(ok(&app, &app.key, "get_pin", json!({"id": id})).await["id"], json!(id));

        // The bucket refills with its window.
        app.clock.advance(60_000);
        ok(&app, &app.key, "create_pin", stat_cards("later")).await;
        assert_eq!(pin_count(&app).await, 4);
    }

    async fn the_write_bucket_is_shared_with_rest(app) {
        // REST writes, then an MCP write is refused.
        app.post("/v1/pins", &stat_cards("rest 1")).await.expect(200);
        app.post("/v1/pins", &stat_cards("rest 2")).await.expect(200);
        ok(&app, &app.key, "create_pin", stat_cards("mcp 1")).await;
        let error = fails(&app, &app.key, "create_pin", stat_cards("mcp 2"), "RATE_LIMIT_EXCEEDED").await;
        assert_eq!(error["details"]["window"], json!("write"));
        assert_eq!(error["details"]["used"], json!(3), "{error}");
        let rest = app.post("/v1/pins", &stat_cards("rest 3")).await.expect_error(429, "RATE_LIMIT_EXCEEDED", None);
        assert_eq!(rest.body["error"]["details"]["window"], json!("write"));
        assert_eq!(pin_count(&app).await, 3);

        // MCP writes, then a REST write is refused.
        app.clock.advance(60_000);
        ok(&app, &app.key, "create_pin", stat_cards("mcp 3")).await;
        let (res, result) = call_tool(&app, &app.key, "create_pins", json!({"pins": (0..11).map(|i| stat_cards(&format!("b{i}"))).collect::<Vec<_>>()})).await;
        assert_eq!(result["isError"], json!(false), "{result}");
        assert_eq!(num(&res, "x-ratelimit-token-cost"), 2, "a batch of 11 costs 2");
        assert_eq!(num(&res, "x-ratelimit-remaining-minute"), 0);
        let rest = app.post("/v1/pins", &stat_cards("rest 4")).await.expect_error(429, "RATE_LIMIT_EXCEEDED", None);
        assert_eq!(rest.body["error"]["details"]["window"], json!("write"));
        assert_eq!(rest.body["error"]["details"]["used"], json!(3));
        assert_eq!(pin_count(&app).await, 3 + 1 + 11);

        // A batch too big for what is left is refused whole.
        app.clock.advance(60_000);
        app.post("/v1/pins", &stat_cards("rest 5")).await.expect(200);
        let big = json!({"pins": (0..21).map(|i| stat_cards(&format!("c{i}"))).collect::<Vec<_>>()});
        fails(&app, &app.key, "create_pins", big, "RATE_LIMIT_EXCEEDED").await;
        assert_eq!(pin_count(&app).await, 16);
    }

    async fn mcp_responses_carry_truthful_rate_limit_headers(app) {
        let init = initialize(&app, &app.key).await;
        answered(&init, 1);
        for h in RATE_LIMITS_HEADERS {
            assert!(init.header(h).is_some(), "initialize lacks {h}");
        }
        assert_eq!(num(&init, "x-ratelimit-token-cost"), 0);
        assert!(init.header("x-request-id").is_some_and(|v| !v.is_empty()), "{:?}", init.headers);
        assert_eq!(num(&init, "x-ratelimit-limit-minute"), 100);
        assert_eq!(num(&init, "x-ratelimit-remaining-minute"), 100, "initialize is free");
        let listed = list_tools(&app, &app.key).await;
        assert_eq!(num(&listed, "x-ratelimit-token-cost"), 0);
        assert_eq!(num(&listed, "x-ratelimit-remaining-hour"), 1000, "tools/list is free");

        let (res, _) = call_tool(&app, &app.key, "list_pins", json!({})).await;
        for h in RATE_LIMITS_HEADERS {
            assert!(res.header(h).is_some(), "tools/call lacks {h}");
        }
        assert_eq!(num(&res, "x-ratelimit-token-cost"), 1);
        assert_eq!(num(&res, "x-ratelimit-remaining-minute"), 99);
        assert_eq!(num(&res, "x-ratelimit-remaining-hour"), 999);
        // A REST read and an MCP read draw on the same minute.
        let rest = app.get("/v1/pins").await.expect(200);
        assert_eq!(num(&rest, "x-ratelimit-remaining-minute"), 98);
        let (res, _) = call_tool(&app, &app.key, "list_pin_types", json!({})).await;
        assert_eq!(num(&res, "x-ratelimit-remaining-minute"), 97);
        // A write shows the write bucket, which binds first.
        let (res, _) = call_tool(&app, &app.key, "create_pin", stat_cards("w")).await;
        assert_eq!(num(&res, "x-ratelimit-limit-minute"), 3);
        assert_eq!(num(&res, "x-ratelimit-remaining-minute"), 2);
        assert_eq!(num(&res, "x-ratelimit-remaining-hour"), 996);
    }

    async fn the_minute_window_is_shared_too(app) {
        // 100 a minute: use 99 over REST, one over MCP, then both are refused.
        for _ in 0..99 {
            call(&app, &app.key, Method::GET, "/v1/pin-types", None).await.expect(200);
        }
        ok(&app, &app.key, "list_pin_types", json!({})).await;
        let error = fails(&app, &app.key, "list_pins", json!({}), "RATE_LIMIT_EXCEEDED").await;
        assert_eq!(error["details"]["window"], json!("minute"), "{error}");
        assert_eq!(error["details"]["limit"], json!(100), "{error}");
        app.get("/v1/pins").await.expect_error(429, "RATE_LIMIT_EXCEEDED", None);
        // The protocol's own messages stay free and answered.
        answered(&initialize(&app, &app.key).await, 1);
        answered(&list_tools(&app, &app.key).await, 2);
        app.clock.advance(60_000);
        ok(&app, &app.key, "list_pins", json!({})).await;
    }
}
