//! A pin's blocks (CONTRACT.md 7): the record, positions (insert, close gaps, reorder),
//! validation of each type and of conditionals, the 100-block limit, the pin's version and
//! events, scopes, workspace isolation, deletion with the pin, and `?render=true`.

use reqwest::Method;
use serde_json::{json, Value};
use sqlx::Connection;

use crate::{
    both_stores,
    datasets::{id_of, iso_ms, new_dataset, tick},
    helpers::*,
    live::Stream,
    pinboards::new_pin,
};

/// A markdown block body.
fn md(text: &str) -> Value {
    json!({"block_type": "markdown", "config": {"text": text}})
}

/// A conditional block body.
fn conditional(condition: Value, then: Vec<Value>, otherwise: Option<Vec<Value>>) -> Value {
    let mut config = json!({"if": condition, "then": then});
    if let Some(otherwise) = otherwise {
        config["else"] = json!(otherwise);
    }
    json!({"block_type": "conditional", "config": config})
}

fn blocks_path(pin: &str) -> String {
    format!("/v1/pins/{pin}/blocks")
}

/// Adds a block (asserting 200) and returns its record.
async fn add(app: &TestApp, pin: &str, body: &Value) -> Value {
    app.post(&blocks_path(pin), body)
        .await
        .expect(200)
        .data()
        .clone()
}

/// The pin's blocks as listed (asserting 200).
async fn list(app: &TestApp, pin: &str) -> Vec<Value> {
    let res = app.get(&blocks_path(pin)).await.expect(200);
    assert!(res.body.get("pagination").is_none(), "{}", res.body);
    res.data()
        .as_array()
        .unwrap_or_else(|| panic!("no array: {}", res.body))
        .clone()
}

fn ids(records: &[Value]) -> Vec<String> {
    records.iter().map(id_of).collect()
}

fn positions(records: &[Value]) -> Vec<i64> {
    records
        .iter()
        .map(|b| b["position"].as_i64().unwrap_or_else(|| panic!("{b}")))
        .collect()
}

async fn pin_record(app: &TestApp, pin: &str) -> Value {
    app.get(&format!("/v1/pins/{pin}"))
        .await
        .expect(200)
        .data()
        .clone()
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

/// Rows of the `blocks` table for `pin`, read from the store directly.
async fn stored_blocks(app: &TestApp, pin: &str) -> i64 {
    let url = app.state.settings.database_url.clone();
    if url.starts_with("sqlite:") {
        let mut conn = sqlx::SqliteConnection::connect(&url)
            .await
            .expect("open SQLite");
        let n = sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM blocks WHERE pin_id = ?")
            .bind(pin)
            .fetch_one(&mut conn)
            .await
            .expect("count");
        let _ = conn.close().await;
        n
    } else {
        let mut conn = sqlx::PgConnection::connect(&url).await.expect("connect");
        let n = sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM blocks WHERE pin_id = $1")
            .bind(pin)
            .fetch_one(&mut conn)
            .await
            .expect("count");
        let _ = conn.close().await;
        n
    }
}

/// `GET /v1/pins/{pin}/blocks?render=true` (asserting 200): the evaluated list.
async fn rendered_blocks(app: &TestApp, pin: &str) -> Value {
    app.get(&format!("{}?render=true", blocks_path(pin)))
        .await
        .expect(200)
        .data()
        .clone()
}

/// A conditional nested `depth` deep through `branch` ("then" or "else").
fn nested(depth: usize, branch: &str) -> Value {
    let condition = json!({"var": "sales.total", "op": "exists"});
    let inner = if depth == 1 {
        md("leaf")
    } else {
        nested(depth - 1, branch)
    };
    if branch == "then" {
        conditional(condition, vec![inner], None)
    } else {
        conditional(condition, vec![md("then")], Some(vec![inner]))
    }
}

both_stores! {
    async fn create_inserts_at_a_position_and_lists_in_order(app) {
        let pin = new_pin(&app, "Blocks").await;
        let a = add(&app, &pin, &md("A")).await;
        let id = id_of(&a);
        assert!(id.starts_with("blk-") && id.len() > 19, "{id}");
        let mut keys: Vec<&str> = a.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["block_type", "config", "created_at", "id", "pin_id", "position", "updated_at"]);
        assert_eq!(a["pin_id"], json!(pin));
        assert_eq!(a["block_type"], json!("markdown"));
        assert_eq!(a["config"], json!({"text": "A"}));
        assert_eq!(a["position"], json!(0));
        iso_ms(&a["created_at"]);
        assert_eq!(a["created_at"], a["updated_at"]);

        let image = json!({"block_type": "image", "config": {"url": "https://example.com/a.png", "alt": "chart"}});
        let b = add(&app, &pin, &image).await;
        assert_eq!(b["position"], json!(1));
        assert_eq!(b["config"], image["config"]);
        let code = json!({"block_type": "code", "config": {"language": "sql", "code": "select 1"}});
        let c = add(&app, &pin, &code).await;
        assert_eq!(c["position"], json!(2));
        let mut inserted = md("D");
        inserted["position"] = json!(1);
        let d = add(&app, &pin, &inserted).await;
        assert_eq!(d["position"], json!(1));

        let listed = list(&app, &pin).await;
        assert_eq!(ids(&listed), [id_of(&a), id_of(&d), id_of(&b), id_of(&c)]);
        assert_eq!(positions(&listed), [0, 1, 2, 3]);
        assert_eq!(listed[1], d);
        assert_eq!(listed[2]["config"], image["config"], "shifted, otherwise unchanged");
        let one = app.get(&format!("{}/{}", blocks_path(&pin), id_of(&b))).await.expect(200);
        assert_eq!(one.data(), &listed[2]);

        let mut first = md("E");
        first["position"] = json!(0);
        let e = add(&app, &pin, &first).await;
        let listed = list(&app, &pin).await;
        assert_eq!(ids(&listed), [id_of(&e), id_of(&a), id_of(&d), id_of(&b), id_of(&c)]);
        assert_eq!(positions(&listed), [0, 1, 2, 3, 4]);

        // Every type: an http image without alt, a conditional echoed as sent.
        add(&app, &pin, &json!({"block_type": "image", "config": {"url": "http://example.com/b.png"}})).await;
        let cond = conditional(json!({"var": "sales.total", "op": "gt", "value": 10}), vec![md("big"), code], Some(vec![md("small")]));
        let made = add(&app, &pin, &cond).await;
        assert_eq!(made["config"], cond["config"]);
        assert_eq!(made["position"], json!(6));
        // The unprefixed alias serves the same list.
        let alias = app.get(&format!("/pins/{pin}/blocks")).await.expect(200);
        assert_eq!(alias.data(), &json!(list(&app, &pin).await));
    }

    async fn a_position_is_an_index_up_to_the_count(app) {
        let pin = new_pin(&app, "Blocks").await;
        add(&app, &pin, &md("A")).await;
        add(&app, &pin, &md("B")).await;
        for position in [json!(3), json!(100), json!(-1), json!("1"), json!(1.5)] {
            let mut body = md("X");
            body["position"] = position.clone();
            invalid(app.post(&blocks_path(&pin), &body).await, "position");
        }
        assert_eq!(list(&app, &pin).await.len(), 2, "nothing stored");
        let mut body = md("C");
        body["position"] = json!(2);
        assert_eq!(add(&app, &pin, &body).await["position"], json!(2), "the count itself appends");
        let texts: Vec<Value> = list(&app, &pin).await.iter().map(|b| b["config"]["text"].clone()).collect();
        assert_eq!(texts, [json!("A"), json!("B"), json!("C")]);
    }

    async fn invalid_blocks_name_the_field_and_store_nothing(app) {
        let pin = new_pin(&app, "Blocks").await;
        let path = blocks_path(&pin);
        let cond = json!({"var": "sales.total", "op": "eq", "value": 1});
        let named = [
            (json!({"block_type": "video", "config": {}}), "block_type"),
            (json!({"config": {"text": "x"}}), "block_type"),
            (json!({"block_type": 5, "config": {"text": "x"}}), "block_type"),
            (json!({"block_type": "image", "config": {"url": "javascript:alert(1)"}}), "config.url"),
            (json!({"block_type": "image", "config": {"url": "ftp://x"}}), "config.url"),
            (json!({"block_type": "image", "config": {"url": "data:image/png;base64,AAAA"}}), "config.url"),
            (json!({"block_type": "image", "config": {"url": "not a url"}}), "config.url"),
            (json!({"block_type": "conditional", "config": {"if": {"var": "sales.total", "op": "approx", "value": 1}, "then": []}}), "config.if.op"),
            (conditional(cond.clone(), vec![json!({"block_type": "image", "config": {"url": "javascript:x"}})], None), "config.then[0].config.url"),
            (conditional(cond.clone(), vec![md("ok"), md("ok")], Some(vec![md("ok"), json!({"block_type": "image", "config": {"url": "ftp://x"}})])), "config.else[1].config.url"),
        ];
        for (body, field) in &named {
            let res = app.post(&path, body).await;
            assert_eq!(res.status, 400, "{body}: {}", res.body);
            invalid(res, field);
        }
        let unnamed = [
            json!({"block_type": "markdown", "config": {"text": "x", "colour": "red"}}),
            json!({"block_type": "markdown", "config": {}}),
            json!({"block_type": "markdown", "config": {"text": 5}}),
            json!({"block_type": "markdown"}),
            json!({"block_type": "markdown", "config": {"text": "x"}, "colour": "red"}),
            json!({"block_type": "image", "config": {"alt": "no url"}}),
            json!({"block_type": "code", "config": {"code": "x"}}),
            json!({"block_type": "code", "config": {"language": "sql", "code": "x", "theme": "dark"}}),
            json!({"block_type": "conditional", "config": {"then": [md("x")]}}),
            json!({"block_type": "conditional", "config": {"if": {"op": "exists"}, "then": [md("x")]}}),
            json!({"block_type": "conditional", "config": {"if": {"var": "s.x", "op": "exists", "extra": 1}, "then": [md("x")]}}),
            conditional(cond.clone(), vec![json!({"block_type": "markdown", "config": {"text": "x", "colour": "red"}})], None),
            conditional(cond, vec![json!({"block_type": "video", "config": {}})], None),
        ];
        for body in &unnamed {
            let res = app.post(&path, body).await;
            assert_eq!(res.status, 400, "{body}: {}", res.body);
            invalid_somewhere(res);
        }
        assert_eq!(list(&app, &pin).await, Vec::<Value>::new(), "nothing stored");
        assert_eq!(pin_record(&app, &pin).await["version"], json!(1), "nor the pin changed");
    }

    async fn conditionals_nest_at_most_four_deep(app) {
        let pin = new_pin(&app, "Blocks").await;
        for branch in ["then", "else"] {
            let four = add(&app, &pin, &nested(4, branch)).await;
            assert_eq!(four["config"], nested(4, branch)["config"]);
            let res = app.post(&blocks_path(&pin), &nested(5, branch)).await;
            assert_eq!(res.status, 400, "five deep through {branch}: {}", res.body);
            invalid_somewhere(res);
        }
        assert_eq!(list(&app, &pin).await.len(), 2);
    }

    async fn put_and_patch_change_only_what_is_sent(app) {
        let pin = new_pin(&app, "Blocks").await;
        let a = add(&app, &pin, &md("A")).await;
        let b = add(&app, &pin, &json!({"block_type": "code", "config": {"language": "sql", "code": "select 1"}})).await;
        let path = format!("{}/{}", blocks_path(&pin), id_of(&a));
        tick().await;
        let res = app.put(&path, &json!({"config": {"text": "A2"}})).await.expect(200);
        let updated = res.data().clone();
        assert_eq!(updated["id"], a["id"]);
        assert_eq!(updated["pin_id"], json!(pin));
        assert_eq!(updated["block_type"], json!("markdown"));
        assert_eq!(updated["config"], json!({"text": "A2"}));
        assert_eq!(updated["position"], json!(0));
        assert_eq!(updated["created_at"], a["created_at"]);
        assert!(iso_ms(&updated["updated_at"]) > iso_ms(&a["updated_at"]), "{updated}");
        assert_eq!(app.get(&path).await.expect(200).data(), &updated);

        let image = json!({"url": "https://example.com/i.png"});
        let res = app.patch(&path, &json!({"block_type": "image", "config": image})).await.expect(200);
        assert_eq!(res.data()["block_type"], json!("image"));
        assert_eq!(res.data()["config"], image, "config replaces the config whole");
        // Refused: a type the config doesn't fit, a config the type doesn't take, a bad url.
        invalid_somewhere(app.patch(&path, &json!({"block_type": "code"})).await);
        invalid_somewhere(app.put(&path, &json!({"config": {"text": "x"}})).await);
        invalid(app.patch(&path, &json!({"config": {"url": "javascript:alert(1)"}})).await, "config.url");
        invalid(app.patch(&path, &json!({"block_type": "video", "config": {}})).await, "block_type");
        invalid_somewhere(app.put(&path, &json!({})).await);
        invalid_somewhere(app.patch(&path, &json!({})).await);
        invalid_somewhere(app.patch(&path, &json!({"config": image, "colour": "red"})).await);
        let read = app.get(&path).await.expect(200);
        assert_eq!(read.data(), res.data(), "refused updates change nothing");
        assert_eq!(ids(&list(&app, &pin).await), [id_of(&a), id_of(&b)]);

        let missing = format!("{}/blk-doesnotexist00000000000", blocks_path(&pin));
        app.get(&missing).await.expect_error(404, "NOT_FOUND", None);
        app.put(&missing, &json!({"config": {"text": "x"}})).await.expect_error(404, "NOT_FOUND", None);
        app.patch(&missing, &json!({"config": {"text": "x"}})).await.expect_error(404, "NOT_FOUND", None);
        app.delete(&missing).await.expect_error(404, "NOT_FOUND", None);
        // A block is found only under its own pin.
        let other = new_pin(&app, "Other").await;
        let wrong = format!("{}/{}", blocks_path(&other), id_of(&a));
        app.get(&wrong).await.expect_error(404, "NOT_FOUND", None);
        app.patch(&wrong, &json!({"config": {"text": "x"}})).await.expect_error(404, "NOT_FOUND", None);
        app.delete(&wrong).await.expect_error(404, "NOT_FOUND", None);
        assert_eq!(app.get(&path).await.expect(200).data()["config"], image);
    }

    async fn delete_closes_the_gap(app) {
        let pin = new_pin(&app, "Blocks").await;
        let a = add(&app, &pin, &md("A")).await;
        let b = add(&app, &pin, &md("B")).await;
        let c = add(&app, &pin, &md("C")).await;
        let path = format!("{}/{}", blocks_path(&pin), id_of(&b));
        let res = app.delete(&path).await.expect(200);
        assert_eq!(res.data(), &json!({"id": id_of(&b), "deleted": true}));
        let listed = list(&app, &pin).await;
        assert_eq!(ids(&listed), [id_of(&a), id_of(&c)]);
        assert_eq!(positions(&listed), [0, 1]);
        app.get(&path).await.expect_error(404, "NOT_FOUND", None);
        app.delete(&path).await.expect_error(404, "NOT_FOUND", None);
        let d = add(&app, &pin, &md("D")).await;
        assert_eq!(d["position"], json!(2));
        app.delete(&format!("{}/{}", blocks_path(&pin), id_of(&a))).await.expect(200);
        let listed = list(&app, &pin).await;
        assert_eq!(ids(&listed), [id_of(&c), id_of(&d)]);
        assert_eq!(positions(&listed), [0, 1]);
    }

    async fn reorder_must_name_every_block_once(app) {
        let pin = new_pin(&app, "Blocks").await;
        let a = id_of(&add(&app, &pin, &md("A")).await);
        let b = id_of(&add(&app, &pin, &md("B")).await);
        let c = id_of(&add(&app, &pin, &md("C")).await);
        let order = format!("{}/order", blocks_path(&pin));
        let res = app.put(&order, &json!({"block_ids": [c, a, b]})).await.expect(200);
        let records = res.data().as_array().unwrap().clone();
        assert_eq!(ids(&records), [c.clone(), a.clone(), b.clone()]);
        assert_eq!(positions(&records), [0, 1, 2]);
        assert_eq!(records[0]["config"], json!({"text": "C"}), "whole records");
        assert_eq!(list(&app, &pin).await, records);

        let elsewhere = new_pin(&app, "Other").await;
        let foreign = id_of(&add(&app, &elsewhere, &md("F")).await);
        let refused = [
            json!([c, a]),
            json!([c, a, b, b]),
            json!([c, a, a]),
            json!([c, a, "blk-doesnotexist00000000000"]),
            json!([c, a, b, "blk-doesnotexist00000000000"]),
            json!([c, a, foreign]),
            json!([]),
            json!("c,a,b"),
        ];
        for block_ids in refused {
            let res = app.put(&order, &json!({"block_ids": block_ids})).await;
            assert_eq!(res.status, 400, "{block_ids}: {}", res.body);
            invalid(res, "block_ids");
        }
        invalid_somewhere(app.put(&order, &json!({})).await);
        assert_eq!(ids(&list(&app, &pin).await), [c.clone(), a.clone(), b.clone()], "refusals change nothing");
        assert_eq!(ids(&list(&app, &elsewhere).await), [foreign]);
        let res = app.put(&format!("/pins/{pin}/blocks/order"), &json!({"block_ids": [a, b, c]})).await.expect(200);
        assert_eq!(ids(res.data().as_array().unwrap()), [a, b, c]);
    }

    async fn a_pin_holds_at_most_100_blocks(app) {
        let pin = new_pin(&app, "Blocks").await;
        for i in 0..100 {
            add(&app, &pin, &md(&format!("block {i}"))).await;
        }
        invalid(app.post(&blocks_path(&pin), &md("one too many")).await, "blocks");
        let mut at_front = md("one too many");
        at_front["position"] = json!(0);
        invalid(app.post(&blocks_path(&pin), &at_front).await, "blocks");
        let listed = list(&app, &pin).await;
        assert_eq!(listed.len(), 100);
        assert_eq!(listed[99]["config"], json!({"text": "block 99"}));
        assert_eq!(pin_record(&app, &pin).await["version"], json!(101));
        app.delete(&format!("{}/{}", blocks_path(&pin), id_of(&listed[0]))).await.expect(200);
        assert_eq!(add(&app, &pin, &md("fits again")).await["position"], json!(99));
    }

    async fn block_writes_bump_the_pin_and_give_one_event_each(app) {
        let pin = new_pin(&app, "Blocks").await;
        let before = pin_record(&app, &pin).await;
        let mut stream = Stream::open(&app, &format!("/v1/events?pin_id={pin}"), &app.key, &[]).await;
        assert_eq!(stream.status, 200);
        let blocks = blocks_path(&pin);
        tick().await;
        let a = id_of(&add(&app, &pin, &md("A")).await);
        let a_path = format!("{blocks}/{a}");
        app.patch(&a_path, &json!({"config": {"text": "A2"}})).await.expect(200);
        let b = id_of(&add(&app, &pin, &md("B")).await);
        app.put(&format!("{blocks}/order"), &json!({"block_ids": [b, a]})).await.expect(200);
        app.put(&a_path, &json!({"config": {"text": "A3"}})).await.expect(200);
        app.delete(&a_path).await.expect(200);
        let after = pin_record(&app, &pin).await;
        assert_eq!(after["version"], json!(7));
        assert!(iso_ms(&after["updated_at"]) > iso_ms(&before["updated_at"]), "{after}");
        assert_eq!(after["pin_config"], before["pin_config"]);
        let events = stream.events(6).await;
        for (i, event) in events.iter().enumerate() {
            assert_eq!(event.event.as_deref(), Some("pin.updated"), "{event:?}");
            assert_eq!(event.data["id"], json!(pin));
            assert_eq!(event.data["data"]["version"], json!(i + 2), "one event per block write");
        }
        assert_eq!(events[5].data["data"], after, "the event carries the pin as a GET shows it");

        // Refused block writes change nothing and give no event.
        invalid(app.post(&blocks, &json!({"block_type": "image", "config": {"url": "ftp://x"}})).await, "config.url");
        invalid(app.put(&format!("{blocks}/order"), &json!({"block_ids": []})).await, "block_ids");
        app.patch(&a_path, &json!({"config": {"text": "gone"}})).await.expect_error(404, "NOT_FOUND", None);
        app.patch(&format!("/v1/pins/{pin}"), &json!({"metadata": {"title": "marker"}})).await.expect(200);
        let marker = stream.next_event().await;
        assert_eq!(marker.data["data"]["version"], json!(8));
        assert_eq!(marker.data["data"]["metadata"]["title"], json!("marker"));
    }

    async fn scopes_guard_block_reads_and_writes(app) {
        let pin = new_pin(&app, "Blocks").await;
        let a = add(&app, &pin, &md("A")).await;
        let blocks = blocks_path(&pin);
        let one = format!("{blocks}/{}", id_of(&a));
        let reader = app.key_with("pins:read").await;
        call(&app, &reader, Method::GET, &blocks, None).await.expect(200);
        assert_eq!(call(&app, &reader, Method::GET, &one, None).await.expect(200).data(), &a);
        let datasets_only = app.key_with("datasets:read,datasets:write").await;
        let writes = [
            (Method::POST, blocks.clone(), Some(md("B"))),
            (Method::PUT, one.clone(), Some(json!({"config": {"text": "x"}}))),
            (Method::PATCH, one.clone(), Some(json!({"config": {"text": "x"}}))),
            (Method::DELETE, one.clone(), None),
            (Method::PUT, format!("{blocks}/order"), Some(json!({"block_ids": [id_of(&a)]}))),
        ];
        for key in [&reader, &datasets_only] {
            for (method, route, body) in &writes {
                let res = call(&app, key, method.clone(), route, body.as_ref()).await;
                let res = res.expect_error(403, "SCOPE_REQUIRED", None);
                assert_eq!(res.body["error"]["details"]["required_scope"], json!("pins:write"), "{method} {route}");
            }
        }
        let writer = app.key_with("pins:write").await;
        for route in [&blocks, &one] {
            for key in [&writer, &datasets_only] {
                let res = call(&app, key, Method::GET, route, None).await.expect_error(403, "SCOPE_REQUIRED", None);
                assert_eq!(res.body["error"]["details"]["required_scope"], json!("pins:read"));
            }
        }
        assert_eq!(list(&app, &pin).await, vec![a], "nothing written");
        assert_eq!(pin_record(&app, &pin).await["version"], json!(2));
        call(&app, &writer, Method::POST, &blocks, Some(&md("B"))).await.expect(200);
        assert_eq!(list(&app, &pin).await.len(), 2);
    }

    async fn another_workspaces_pin_and_blocks_are_404(app) {
        let theirs = app.key_in("team-b", "*").await;
        let res = call(&app, &theirs, Method::POST, "/v1/pins", Some(&stat_cards("theirs"))).await.expect(200);
        let pin = res.data()["pin_id"].as_str().unwrap().to_owned();
        let blocks = blocks_path(&pin);
        let res = call(&app, &theirs, Method::POST, &blocks, Some(&md("secret"))).await.expect(200);
        let block = res.data().clone();
        let one = format!("{blocks}/{}", id_of(&block));
        let cases = [
            (Method::GET, blocks.clone(), None),
            (Method::POST, blocks.clone(), Some(md("x"))),
            (Method::GET, one.clone(), None),
            (Method::PUT, one.clone(), Some(json!({"config": {"text": "x"}}))),
            (Method::PATCH, one.clone(), Some(json!({"config": {"text": "x"}}))),
            (Method::DELETE, one.clone(), None),
            (Method::PUT, format!("{blocks}/order"), Some(json!({"block_ids": [id_of(&block)]}))),
            (Method::GET, format!("{blocks}?render=true"), None),
        ];
        for (method, route, body) in &cases {
            call(&app, &app.key, method.clone(), route, body.as_ref()).await.expect_error(404, "NOT_FOUND", None);
        }
        app.get(&blocks_path("p-doesnotexist0000000000")).await.expect_error(404, "NOT_FOUND", None);
        app.post(&blocks_path("p-doesnotexist0000000000"), &md("x")).await.expect_error(404, "NOT_FOUND", None);
        let listed = call(&app, &theirs, Method::GET, &blocks, None).await.expect(200);
        assert_eq!(listed.data(), &json!([block]));
        let pin_now = call(&app, &theirs, Method::GET, &format!("/v1/pins/{pin}"), None).await.expect(200);
        assert_eq!(pin_now.data()["version"], json!(2));
    }

    async fn deleting_the_pin_deletes_its_blocks(app) {
        let pin = new_pin(&app, "Blocks").await;
        let kept = new_pin(&app, "Kept").await;
        for text in ["A", "B", "C"] {
            add(&app, &pin, &md(text)).await;
        }
        let survivor = add(&app, &kept, &md("K")).await;
        assert_eq!(stored_blocks(&app, &pin).await, 3);
        app.delete(&format!("/v1/pins/{pin}")).await.expect(200);
        app.get(&blocks_path(&pin)).await.expect_error(404, "NOT_FOUND", None);
        assert_eq!(stored_blocks(&app, &pin).await, 0, "no block outlives its pin");
        assert_eq!(list(&app, &kept).await, [survivor]);
        assert_eq!(stored_blocks(&app, &kept).await, 1);
    }

    async fn render_takes_each_condition_both_ways(app) {
        new_dataset(&app, "sales", "json", json!({"total": 42, "zero": 0, "ok": true, "none": null, "name": "north",
            "tags": ["a", "b"], "nums": [1, 2], "obj": {"k": 1}, "regions": [{"total": 7}]})).await;
        new_dataset(&app, "notes", "markdown", json!("We launch on Monday")).await;
        let pin = new_pin(&app, "Conditions").await;
        // (var, op, value, whether `then` is chosen)
        let cases: Vec<(&str, &str, Option<Value>, bool)> = vec![
            ("sales.total", "eq", Some(json!(42)), true),
            ("sales.total", "eq", Some(json!(42.0)), true),
            ("sales.total", "eq", Some(json!(41)), false),
            ("sales.name", "eq", Some(json!("north")), true),
            ("sales.name", "eq", Some(json!("North")), false),
            ("sales.ok", "eq", Some(json!(true)), true),
            ("sales.regions[0].total", "eq", Some(json!(7)), true),
            ("sales.name", "ne", Some(json!("south")), true),
            ("sales.name", "ne", Some(json!("north")), false),
            ("sales.total", "gt", Some(json!(9)), true),
            ("sales.total", "gt", Some(json!(42)), false),
            ("sales.total", "gte", Some(json!(42)), true),
            ("sales.total", "gte", Some(json!(43)), false),
            ("sales.total", "lt", Some(json!(100)), true),
            ("sales.total", "lt", Some(json!(42)), false),
            ("sales.total", "lte", Some(json!(42)), true),
            ("sales.total", "lte", Some(json!(41.5)), false),
            ("sales.name", "gt", Some(json!("apple")), true),
            ("sales.name", "gt", Some(json!("zebra")), false),
            ("sales.name", "lt", Some(json!("zebra")), true),
            ("sales.name", "lt", Some(json!("apple")), false),
            ("sales.name", "contains", Some(json!("ort")), true),
            ("sales.name", "contains", Some(json!("xyz")), false),
            ("sales.tags", "contains", Some(json!("b")), true),
            ("sales.tags", "contains", Some(json!("c")), false),
            ("sales.nums", "contains", Some(json!(2)), true),
            ("sales.obj", "contains", Some(json!("k")), true),
            ("sales.obj", "contains", Some(json!("z")), false),
            ("notes", "contains", Some(json!("launch")), true),
            ("sales.total", "exists", None, true),
            ("sales.zero", "exists", None, true),
            ("sales.none", "exists", None, false),
            ("sales.missing", "exists", None, false),
            ("nope.x", "exists", None, false),
            ("sales.missing", "eq", Some(json!(1)), false),
            ("sales.missing", "ne", Some(json!(1)), true),
        ];
        let mut expected = Vec::new();
        for (i, (var, op, value, then)) in cases.iter().enumerate() {
            let mut condition = json!({"var": var, "op": op});
            if let Some(value) = value {
                condition["value"] = value.clone();
            }
            let body = conditional(condition, vec![md(&format!("{i} then"))], Some(vec![md(&format!("{i} else"))]));
            add(&app, &pin, &body).await;
            let branch = if *then { "then" } else { "else" };
            expected.push(format!("{i} {branch}: {var} {op} {}", value.clone().unwrap_or(Value::Null)));
        }
        let res = app.get(&format!("{}?render=true", blocks_path(&pin))).await.expect(200);
        let got: Vec<String> = res.data().as_array().unwrap().iter().map(|b| {
            let text = b["config"]["text"].as_str().unwrap_or_else(|| panic!("{b}"));
            let (i, branch) = text.split_once(' ').unwrap();
            let (var, op, value, _) = &cases[i.parse::<usize>().unwrap()];
            format!("{i} {branch}: {var} {op} {}", value.clone().unwrap_or(Value::Null))
        }).collect();
        assert_eq!(got, expected);
    }

    async fn render_replaces_each_conditional_by_its_branch_and_resolves_templates(app) {
        let ds = new_dataset(&app, "sales", "json", json!({"total": 42, "name": "north"})).await;
        let pin = new_pin(&app, "Rendered").await;
        let intro = add(&app, &pin, &md("Total: {{sales.total}} in {{ sales.name }}")).await;
        let big = add(&app, &pin, &conditional(
            json!({"var": "sales.total", "op": "gt", "value": 10}),
            vec![md("big {{sales.name}}"), json!({"block_type": "image", "config": {"url": "https://example.com/{{sales.name}}.png", "alt": "{{sales.name}}"}})],
            Some(vec![md("small")]),
        )).await;
        let never = add(&app, &pin, &conditional(json!({"var": "sales.total", "op": "lt", "value": 10}), vec![md("under ten")], None)).await;
        let code = add(&app, &pin, &json!({"block_type": "code", "config": {"language": "sql", "code": "select {{sales.total}}"}})).await;
        let nest = add(&app, &pin, &conditional(
            json!({"var": "sales.total", "op": "exists"}),
            vec![conditional(json!({"var": "sales.name", "op": "eq", "value": "north"}), vec![md("nested north")], Some(vec![md("nested other")]))],
            None,
        )).await;

        let stored = list(&app, &pin).await;
        assert_eq!(stored[0]["config"]["text"], json!("Total: {{sales.total}} in {{ sales.name }}"), "stored as written");
        assert_eq!(stored[1]["block_type"], json!("conditional"));

        let shown = rendered_blocks(&app, &pin).await;
        let summary = |shown: &Value| -> Vec<(Value, Value, Value, Value)> {
            shown.as_array().unwrap().iter().map(|b| {
                assert_eq!(b["pin_id"], json!(pin), "{b}");
                (b["id"].clone(), b["position"].clone(), b["block_type"].clone(), b["config"].clone())
            }).collect()
        };
        assert_eq!(summary(&shown), [
            (intro["id"].clone(), json!(0), json!("markdown"), json!({"text": "Total: 42 in north"})),
            (big["id"].clone(), json!(1), json!("markdown"), json!({"text": "big north"})),
            (big["id"].clone(), json!(1), json!("image"), json!({"url": "https://example.com/north.png", "alt": "north"})),
            (code["id"].clone(), json!(3), json!("code"), json!({"language": "sql", "code": "select 42"})),
            (nest["id"].clone(), json!(4), json!("markdown"), json!({"text": "nested north"})),
        ]);

        // The pin's rendered reads carry the same evaluated blocks; the plain read none.
        let version = pin_record(&app, &pin).await["version"].clone();
        let record = app.get(&format!("/v1/pins/{pin}?render=true")).await.expect(200);
        assert_eq!(record.data()["blocks"], shown);
        assert_eq!(record.data()["version"], version);
        let batch = app.post("/v1/pins/batch/get?render=true", &json!({"pin_ids": [pin]})).await.expect(200);
        assert_eq!(batch.data()[0]["blocks"], shown);
        let listed = app.get("/v1/pins?render=true").await.expect(200);
        assert_eq!(listed.data()[0]["blocks"], shown);
        assert!(pin_record(&app, &pin).await.get("blocks").is_none());

        // Another dataset value takes the other branches.
        app.put(&format!("/v1/datasets/{}", id_of(&ds)), &json!({"data": {"total": 5, "name": "south"}})).await.expect(200);
        let shown = rendered_blocks(&app, &pin).await;
        assert_eq!(summary(&shown), [
            (intro["id"].clone(), json!(0), json!("markdown"), json!({"text": "Total: 5 in south"})),
            (big["id"].clone(), json!(1), json!("markdown"), json!({"text": "small"})),
            (never["id"].clone(), json!(2), json!("markdown"), json!({"text": "under ten"})),
            (code["id"].clone(), json!(3), json!("code"), json!({"language": "sql", "code": "select 5"})),
            (nest["id"].clone(), json!(4), json!("markdown"), json!({"text": "nested other"})),
        ]);
        assert_eq!(app.get(&format!("/v1/pins/{pin}?render=true")).await.expect(200).data()["blocks"], shown);
        assert_eq!(pin_record(&app, &pin).await["version"], version, "a dataset change is no pin write");
    }
}
