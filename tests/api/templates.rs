//! Templates (CONTRACT.md 7): `{{name.path}}` in a pin's configuration, resolved on reads with
//! `?render=true` (pin get, batch get, list) and on share pages; warnings for what doesn't
//! resolve; no recursion; the 1 MiB growth cap; workspace isolation; datasets changing.

use reqwest::Method;
use serde_json::{json, Value};

use crate::{
    both_stores,
    datasets::{id_of, new_dataset},
    helpers::*,
};

/// A markdown pin whose text is `text`.
fn markdown_pin(text: &str) -> Value {
    json!({"pin_type": "markdown", "pin_config": {"text": text}, "metadata": {"title": "Notes"}})
}

/// A stat-cards pin with these cards.
fn cards_pin(cards: Value) -> Value {
    json!({"pin_type": "stat-cards", "pin_config": {"cards": cards}, "metadata": {"title": "Cards"}})
}

async fn new_pin(app: &TestApp, body: &Value) -> String {
    app.create_pin(body).await["pin_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// `GET /v1/pins/{id}?render=true` (asserting 200): the rendered record.
async fn rendered(app: &TestApp, id: &str) -> Value {
    app.get(&format!("/v1/pins/{id}?render=true"))
        .await
        .expect(200)
        .data()
        .clone()
}

/// `GET /v1/pins/{id}` (asserting 200): the stored record.
async fn plain(app: &TestApp, id: &str) -> Value {
    app.get(&format!("/v1/pins/{id}"))
        .await
        .expect(200)
        .data()
        .clone()
}

/// A record's `render.warnings` as sorted `(field, variable, reason)` triples.
#[track_caller]
fn warnings(record: &Value) -> Vec<(String, String, String)> {
    let list = record["render"]["warnings"]
        .as_array()
        .unwrap_or_else(|| panic!("no render.warnings: {record}"));
    let mut out: Vec<(String, String, String)> = list
        .iter()
        .map(|w| {
            let mut keys: Vec<&str> = w.as_object().unwrap().keys().map(String::as_str).collect();
            keys.sort_unstable();
            assert_eq!(keys, ["field", "reason", "variable"], "{w}");
            let text = |k: &str| w[k].as_str().unwrap_or_else(|| panic!("{w}")).to_owned();
            (text("field"), text("variable"), text("reason"))
        })
        .collect();
    out.sort();
    out
}

fn warning(field: &str, variable: &str, reason: &str) -> (String, String, String) {
    (field.to_owned(), variable.to_owned(), reason.to_owned())
}

/// The record without the keys rendering adds or changes.
fn without_rendering(record: &Value) -> Value {
    let mut record = record.clone();
    let map = record.as_object_mut().unwrap();
    for key in ["render", "blocks", "pin_config"] {
        map.remove(key);
    }
    record
}

/// The rendered record of `id` in a `GET /v1/pins?render=true` list.
async fn listed(app: &TestApp, id: &str) -> Value {
    let res = app.get("/v1/pins?render=true&limit=200").await.expect(200);
    res.data()
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == json!(id))
        .unwrap_or_else(|| panic!("{id} not listed: {}", res.body))
        .clone()
}

/// The record of `id` from `POST /v1/pins/batch/get?render=true`.
async fn batch_got(app: &TestApp, id: &str) -> Value {
    let res = app
        .post("/v1/pins/batch/get?render=true", &json!({"pin_ids": [id]}))
        .await
        .expect(200);
    res.data()[0].clone()
}

/// GETs a share page with no credential: status and HTML.
async fn share_page(app: &TestApp, id: &str) -> (u16, String) {
    let res = app
        .client
        .get(format!("{}/share/{id}", app.base))
        .send()
        .await
        .expect("request");
    let status = res.status().as_u16();
    (status, res.text().await.expect("body"))
}

both_stores! {
    async fn render_resolves_each_value_in_json_form_and_leaves_the_stored_pin_alone(app) {
        new_dataset(&app, "sales", "json", json!({"total": 42, "ok": true, "none": null, "name": "EU", "ratio": 0.5,
            "regions": [{"total": 7}, {"total": 9}], "obj": {"a": 1, "b": [true]}, "list": [1, "x"]})).await;
        new_dataset(&app, "notes", "markdown", json!("# Notes\nhello")).await;
        let text = "t={{sales.total}} b={{ sales.ok }} n={{sales.none}} s={{sales.name}} f={{sales.ratio}} \
                    r={{sales.regions[1].total}} o={{sales.obj}} l={{sales.list}} m={{notes}}";
        let id = new_pin(&app, &markdown_pin(text)).await;
        let stored = plain(&app, &id).await;
        assert_eq!(stored["pin_config"], json!({"text": text}), "stored as written");
        assert!(stored.get("render").is_none() && stored.get("blocks").is_none(), "{stored}");

        let record = rendered(&app, &id).await;
        assert_eq!(
            record["pin_config"],
            json!({"text": "t=42 b=true n=null s=EU f=0.5 r=9 o={\"a\":1,\"b\":[true]} l=[1,\"x\"] m=# Notes\nhello"})
        );
        assert_eq!(record["render"], json!({"warnings": []}));
        assert_eq!(record["blocks"], json!([]));
        assert_eq!(without_rendering(&record), without_rendering(&stored), "only the configuration changes");
        assert_eq!(plain(&app, &id).await, stored, "rendering changes nothing stored, not the version");

        // A string that is exactly one variable stays a string, whatever the value's type.
        let cards = json!([
            {"title": "{{sales.name}} revenue", "value": "{{sales.total}}", "change": "{{ sales.ok }}", "description": "{{sales.obj}}"},
            {"title": "Ratio", "value": "{{sales.ratio}}", "description": "{{sales.none}}"}
        ]);
        let id = new_pin(&app, &cards_pin(cards.clone())).await;
        let record = rendered(&app, &id).await;
        assert_eq!(record["pin_config"], json!({"cards": [
            {"title": "EU revenue", "value": "42", "change": "true", "description": "{\"a\":1,\"b\":[true]}"},
            {"title": "Ratio", "value": "0.5", "description": "null"}
        ]}));
        assert_eq!(record["render"]["warnings"], json!([]));
        assert_eq!(plain(&app, &id).await["pin_config"], json!({"cards": cards}));
    }

    async fn unresolved_variables_become_empty_and_are_warned(app) {
        new_dataset(&app, "sales", "json", json!({"total": 42, "regions": [{"total": 7}]})).await;
        let id = new_pin(&app, &markdown_pin("a{{sales.missing}}b{{ nope.x }}c{{sales.regions[5].total}}d{{sales.total.deeper}}e")).await;
        let record = rendered(&app, &id).await;
        assert_eq!(record["pin_config"]["text"], json!("abcde"));
        assert_eq!(warnings(&record), [
            warning("pin_config.text", "nope.x", "dataset_not_found"),
            warning("pin_config.text", "sales.missing", "path_not_found"),
            warning("pin_config.text", "sales.regions[5].total", "path_not_found"),
            warning("pin_config.text", "sales.total.deeper", "path_not_found"),
        ]);

        let cards = json!([
            {"title": "Fine", "value": "{{sales.total}}"},
            {"title": "T {{nope}}", "value": "{{sales.gone}}"}
        ]);
        let id = new_pin(&app, &cards_pin(cards)).await;
        let record = rendered(&app, &id).await;
        assert_eq!(record["pin_config"]["cards"][0]["value"], json!("42"));
        assert_eq!(record["pin_config"]["cards"][1]["title"], json!("T "));
        assert_eq!(record["pin_config"]["cards"][1]["value"], json!(""), "still a string");
        assert_eq!(warnings(&record), [
            warning("pin_config.cards[1].title", "nope", "dataset_not_found"),
            warning("pin_config.cards[1].value", "sales.gone", "path_not_found"),
        ]);
        assert_eq!(plain(&app, &id).await["version"], json!(1));
    }

    async fn resolved_values_are_not_resolved_again(app) {
        new_dataset(&app, "a", "json", json!({"x": "{{b.y}}", "obj": {"t": "{{b.y}}"}})).await;
        new_dataset(&app, "b", "json", json!({"y": "secret"})).await;
        new_dataset(&app, "c", "markdown", json!("see {{b.y}}")).await;
        let id = new_pin(&app, &markdown_pin("1:{{a.x}} 2:{{c}} 3:{{a.obj}} 4:{{b.y}}")).await;
        let record = rendered(&app, &id).await;
        assert_eq!(record["pin_config"]["text"], json!("1:{{b.y}} 2:see {{b.y}} 3:{\"t\":\"{{b.y}}\"} 4:secret"));
        assert_eq!(record["render"]["warnings"], json!([]));
    }

    async fn a_dataset_change_shows_in_every_rendered_read_without_a_new_pin_version(app) {
        let ds = new_dataset(&app, "sales", "json", json!({"total": 42})).await;
        let ds_path = format!("/v1/datasets/{}", id_of(&ds));
        let id = new_pin(&app, &cards_pin(json!([{"title": "Total", "value": "{{sales.total}}"}]))).await;
        let value = |record: Value| record["pin_config"]["cards"][0]["value"].clone();
        assert_eq!(value(rendered(&app, &id).await), json!("42"));
        assert_eq!(value(listed(&app, &id).await), json!("42"));
        assert_eq!(value(batch_got(&app, &id).await), json!("42"));

        app.patch(&ds_path, &json!({"data": {"total": 43}})).await.expect(200);
        let record = rendered(&app, &id).await;
        assert_eq!(value(record.clone()), json!("43"));
        assert_eq!(record["version"], json!(1), "the pin itself did not change");
        assert_eq!(value(listed(&app, &id).await), json!("43"), "lists don't show a stale rendering");
        assert_eq!(value(batch_got(&app, &id).await), json!("43"));
        assert_eq!(value(plain(&app, &id).await), json!("{{sales.total}}"));

        app.delete(&ds_path).await.expect(200);
        let record = rendered(&app, &id).await;
        assert_eq!(value(record.clone()), json!(""));
        assert_eq!(warnings(&record), [warning("pin_config.cards[0].value", "sales.total", "dataset_not_found")]);
        assert_eq!(value(listed(&app, &id).await), json!(""));

        new_dataset(&app, "sales", "markdown", json!("7 units")).await;
        // `sales.total` has no path into a markdown dataset; `sales` is its text.
        app.patch(&format!("/v1/pins/{id}"), &json!({"pin_config": {"cards": [{"title": "Total", "value": "{{sales}}"}]}})).await.expect(200);
        let record = rendered(&app, &id).await;
        assert_eq!(value(record.clone()), json!("7 units"));
        assert_eq!(record["version"], json!(2));
        assert_eq!(record["render"]["warnings"], json!([]));
    }

    async fn batch_get_and_list_render_each_record(app) {
        new_dataset(&app, "sales", "json", json!({"total": 42})).await;
        let a = new_pin(&app, &markdown_pin("A {{sales.total}}")).await;
        let b = new_pin(&app, &cards_pin(json!([{"title": "B", "value": "{{sales.missing}}"}]))).await;
        let unknown = "p-doesnotexist0000000000";
        let res = app.post("/v1/pins/batch/get?render=true", &json!({"pin_ids": [b, unknown, a]})).await.expect(200);
        assert_eq!(res.body["missing"], json!([unknown]));
        let found = res.data().as_array().unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(found[0], rendered(&app, &b).await, "a batch record is the rendered read");
        assert_eq!(found[1], rendered(&app, &a).await);
        assert_eq!(found[1]["pin_config"]["text"], json!("A 42"));
        assert_eq!(found[1]["blocks"], json!([]));
        assert_eq!(warnings(&found[0]), [warning("pin_config.cards[0].value", "sales.missing", "path_not_found")]);

        let list = app.get("/v1/pins?render=true").await.expect(200);
        let records = list.data().as_array().unwrap();
        assert_eq!(records.len(), 2);
        assert_eq!(records[0], rendered(&app, &b).await, "newest first, each the rendered read");
        assert_eq!(records[1], rendered(&app, &a).await);

        // Without render=true, reads are as stored.
        let list = app.get("/v1/pins").await.expect(200);
        assert_eq!(list.data()[1]["pin_config"]["text"], json!("A {{sales.total}}"));
        let res = app.post("/v1/pins/batch/get", &json!({"pin_ids": [a]})).await.expect(200);
        assert_eq!(res.data()[0], plain(&app, &a).await);
        for record in [&list.data()[0], &list.data()[1], &res.data()[0]] {
            assert!(record.get("render").is_none() && record.get("blocks").is_none(), "{record}");
        }
    }

    async fn another_workspaces_dataset_is_never_used(app) {
        let theirs = app.key_in("team-b", "*").await;
        call(&app, &theirs, Method::POST, "/v1/datasets",
            Some(&json!({"name": "sales", "format": "json", "data": {"total": 99}}))).await.expect(200);
        let body = cards_pin(json!([{"title": "Total", "value": "{{sales.total}}"}]));
        let ours = new_pin(&app, &body).await;
        let record = rendered(&app, &ours).await;
        assert_eq!(record["pin_config"]["cards"][0]["value"], json!(""));
        assert_eq!(warnings(&record), [warning("pin_config.cards[0].value", "sales.total", "dataset_not_found")]);

        let res = call(&app, &theirs, Method::POST, "/v1/pins", Some(&body)).await.expect(200);
        let their_pin = res.data()["pin_id"].as_str().unwrap().to_owned();
        let path = format!("/v1/pins/{their_pin}?render=true");
        let value = |res: Resp| res.data()["pin_config"]["cards"][0]["value"].clone();
        assert_eq!(value(call(&app, &theirs, Method::GET, &path, None).await.expect(200)), json!("99"));

        new_dataset(&app, "sales", "json", json!({"total": 1})).await;
        assert_eq!(rendered(&app, &ours).await["pin_config"]["cards"][0]["value"], json!("1"));
        assert_eq!(value(call(&app, &theirs, Method::GET, &path, None).await.expect(200)), json!("99"));
    }

    async fn substitutions_are_capped_at_one_mib(app) {
        new_dataset(&app, "big", "markdown", json!("x".repeat(600_000))).await;
        let id = new_pin(&app, &markdown_pin("{{big}}|{{ big }}|{{big}}")).await;
        let res = app.get(&format!("/v1/pins/{id}?render=true")).await.expect(200);
        let size = serde_json::to_vec(&res.body).unwrap().len();
        assert!(size < 2 * 1_048_576, "response of {size} bytes");
        let text = res.data()["pin_config"]["text"].as_str().unwrap();
        assert!(text.len() >= 600_002 && text.len() <= 1_048_576 + 2, "rendered text of {} bytes", text.len());
        assert_eq!(text.matches('|').count(), 2, "the literal text stays");
        assert!(text.starts_with(&"x".repeat(600_000)), "the first use fits");
        let found = warnings(res.data());
        assert!(!found.is_empty());
        for w in &found {
            assert_eq!(w, &warning("pin_config.text", "big", "size_limit"));
        }
        assert_eq!(plain(&app, &id).await["version"], json!(1));
    }

    async fn a_share_page_shows_resolved_values_escaped(app) {
        let ds = new_dataset(&app, "web", "json", json!({"v": "1.5M", "x": "<script>alert(1)</script>"})).await;
        let mut cards = cards_pin(json!([{"title": "Visitors", "value": "{{web.v}}", "description": "{{web.x}}"}]));
        cards["metadata"]["is_public"] = json!(true);
        let mut md = markdown_pin("Visitors: {{web.v}} {{web.x}}");
        md["metadata"]["is_public"] = json!(true);
        let ids = [new_pin(&app, &cards).await, new_pin(&app, &md).await];
        for id in &ids {
            let (status, html) = share_page(&app, id).await;
            assert_eq!(status, 200, "{html}");
            assert!(html.contains("1.5M"), "{html}");
            assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{html}");
            assert!(!html.contains("<script>alert(1)"), "{html}");
            assert!(!html.contains("{{web"), "{html}");
        }
        app.patch(&format!("/v1/datasets/{}", id_of(&ds)), &json!({"data": {"v": "2.0M"}})).await.expect(200);
        for id in &ids {
            let (_, html) = share_page(&app, id).await;
            assert!(html.contains("2.0M") && !html.contains("1.5M"), "{html}");
        }
    }

    // A template is a read of a dataset: rendering, or writing one, needs `datasets:read`
    // (CONTRACT.md 7); without it nothing tells which dataset names exist.
    async fn templates_need_datasets_read(app) {
        new_dataset(&app, "secret", "json", json!({"x": "s3cr3t"})).await;
        let owned = new_pin(&app, &markdown_pin("Value: {{secret.x}}")).await;
        let pins = app.key_with("pins:read,pins:write").await;
        let both = app.key_with("pins:read,pins:write,datasets:read").await;

        // Writing a pin that names a dataset: refused, nothing written.
        let leak = json!({"pin_type": "json", "pin_config": {"data": {"x": "{{secret}}"}}});
        let refused = call(&app, &pins, Method::POST, "/v1/pins", Some(&leak)).await
            .expect_error(403, "SCOPE_REQUIRED", None);
        assert_eq!(refused.body["error"]["details"]["required_scope"], json!("datasets:read"));
        call(&app, &pins, Method::POST, "/v1/pins/batch", Some(&json!({"pins": [markdown_pin("ok"), leak.clone()]}))).await
            .expect_error(403, "SCOPE_REQUIRED", None);
        call(&app, &pins, Method::PATCH, &format!("/v1/pins/{owned}"), Some(&json!({"pin_config": {"text": "{{secret.x}}!"}}))).await
            .expect_error(403, "SCOPE_REQUIRED", None);
        call(&app, &pins, Method::POST, "/v1/pins/batch/update", Some(&json!({"pins": [{"id": owned, "pin_config": {"text": "{{nope}}"}}]}))).await
            .expect_error(403, "SCOPE_REQUIRED", None);
        for block in [json!({"block_type": "markdown", "config": {"text": "{{secret.x}}"}}),
                      json!({"block_type": "conditional", "config": {"if": {"var": "secret.x", "op": "exists"}, "then": []}})] {
            call(&app, &pins, Method::POST, &format!("/v1/pins/{owned}/blocks"), Some(&block)).await
                .expect_error(403, "SCOPE_REQUIRED", None);
        }
        let listed = app.get("/v1/pins?limit=200").await.expect(200);
        assert_eq!(listed.data().as_array().unwrap().len(), 1, "nothing written");
        assert_eq!(plain(&app, &owned).await["version"], json!(1));

        // Reading rendered: refused; the stored record (braces and all) stays readable.
        for path in [format!("/v1/pins/{owned}?render=true"), "/v1/pins?render=true".into(),
                     format!("/v1/pins/{owned}/blocks?render=true")] {
            call(&app, &pins, Method::GET, &path, None).await.expect_error(403, "SCOPE_REQUIRED", None);
        }
        call(&app, &pins, Method::POST, "/v1/pins/batch/get?render=true", Some(&json!({"pin_ids": [owned]}))).await
            .expect_error(403, "SCOPE_REQUIRED", None);
        let stored = call(&app, &pins, Method::GET, &format!("/v1/pins/{owned}"), None).await.expect(200);
        assert_eq!(stored.data()["pin_config"]["text"], json!("Value: {{secret.x}}"));

        // A write without a template needs no more than before; with datasets:read, both pass.
        call(&app, &pins, Method::POST, "/v1/pins", Some(&markdown_pin("plain {not a template}"))).await.expect(200);
        call(&app, &both, Method::POST, "/v1/pins", Some(&leak)).await.expect(200);
        let read = call(&app, &both, Method::GET, &format!("/v1/pins/{owned}?render=true"), None).await.expect(200);
        assert_eq!(read.data()["pin_config"]["text"], json!("Value: s3cr3t"));
    }
}

/// One response's substitutions share `render.max_response_bytes`: past it, values are empty
/// with `size_limit` warnings, whether the pins were rendered now or kept from before.
mod response_budget {
    use super::*;
    use crate::helpers::TestApp;

    async fn scenario(app: TestApp) {
        new_dataset(&app, "big", "json", json!({"s": "y".repeat(600)})).await;
        for i in 0..3 {
            let mut pin = markdown_pin("{{big.s}}");
            pin["metadata"]["title"] = json!(format!("p{i}"));
            pin["metadata"]["tags"] = json!(["big"]);
            new_pin(&app, &pin).await;
        }
        // Twice: the second page comes from the kept rendered records.
        for round in 0..2 {
            let page = app.get("/v1/pins?tag=big&render=true").await.expect(200);
            let texts: Vec<&str> = page
                .data()
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["pin_config"]["text"].as_str().unwrap())
                .collect();
            let whole = texts.iter().filter(|t| t.len() == 600).count();
            assert_eq!(
                whole, 1,
                "round {round}: one pin fits 1,000 bytes: {texts:?}"
            );
            assert_eq!(
                texts.iter().filter(|t| t.is_empty()).count(),
                2,
                "round {round}"
            );
            for record in page
                .data()
                .as_array()
                .unwrap()
                .iter()
                .filter(|p| p["pin_config"]["text"] == "")
            {
                assert_eq!(
                    warnings(record),
                    vec![warning("pin_config.text", "big.s", "size_limit")]
                );
            }
        }
        // Each pin listed on a page of its own is rendered whole and kept; listed together
        // again, the kept records that no longer fit what is left are rendered within it.
        let mut cursor = String::new();
        for _ in 0..3 {
            let page = app
                .get(&format!("/v1/pins?tag=big&render=true&limit=1{cursor}"))
                .await
                .expect(200);
            assert_eq!(
                page.data()[0]["pin_config"]["text"].as_str().unwrap().len(),
                600
            );
            if let Some(next) = page.body["pagination"]["next_cursor"].as_str() {
                cursor = format!("&cursor={next}");
            }
        }
        let page = app.get("/v1/pins?tag=big&render=true").await.expect(200);
        let texts: Vec<usize> = page
            .data()
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["pin_config"]["text"].as_str().unwrap().len())
            .collect();
        assert_eq!(
            texts,
            [600, 0, 0],
            "kept records count against the response too"
        );
        // A single read has the whole budget to itself.
        let one = app.get("/v1/pins?tag=big&limit=1").await.expect(200);
        let id = one.data()[0]["id"].as_str().unwrap().to_owned();
        assert_eq!(
            rendered(&app, &id).await["pin_config"]["text"]
                .as_str()
                .unwrap()
                .len(),
            600
        );
    }

    const SMALL: &str = "[render]\nmax_response_bytes = 1000\n";

    #[tokio::test]
    async fn sqlite() {
        scenario(TestApp::sqlite_with(SMALL).await).await;
    }

    #[tokio::test]
    async fn postgres() {
        crate::skip_without_postgres!();
        scenario(TestApp::postgres_with(SMALL).await).await;
    }
}
