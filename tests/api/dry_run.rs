//! `?dry_run=true` (CONTRACT.md 14) on every pin write that takes it: the answer is
//! `{success, dry_run: true, data: <the record as it would be stored>}` (an array for
//! batches), nothing is written and nothing published, every check of the real call still
//! runs, and no write token is spent.

use reqwest::Method;
use serde_json::{json, Value};

use crate::{append::new_pin, both_stores, helpers::*};

/// `method path?dry_run=<flag>` with `body` as JSON (when given), by the `*` key.
async fn dry(app: &TestApp, method: Method, path: &str, flag: &str, body: Option<&Value>) -> Resp {
    dry_as(app, &app.key, method, path, flag, body).await
}

/// [`dry`] with `key`.
async fn dry_as(
    app: &TestApp,
    key: &str,
    method: Method,
    path: &str,
    flag: &str,
    body: Option<&Value>,
) -> Resp {
    call(app, key, method, &format!("{path}?dry_run={flag}"), body).await
}

/// The `data` of a dry run's answer, after checking its envelope.
#[track_caller]
fn record(res: Resp) -> Value {
    let res = res.expect(200);
    assert_eq!(res.body["dry_run"], json!(true), "{}", res.body);
    res.data().clone()
}

/// A stat-cards create body whose one card shows `value`.
fn cards(title: &str, value: &str) -> Value {
    json!({
        "pin_type": "stat-cards",
        "pin_config": {"cards": [{"title": "Revenue", "value": value, "trend": "up"}]},
        "metadata": {"title": title, "tags": ["kpi"]}
    })
}

/// Every pin of the workspace (up to 200).
async fn all_pins(app: &TestApp) -> Vec<Value> {
    let res = app.get("/v1/pins?limit=200").await.expect(200);
    res.data().as_array().unwrap().clone()
}

async fn read(app: &TestApp, id: &str) -> Value {
    app.get(&format!("/v1/pins/{id}"))
        .await
        .expect(200)
        .data()
        .clone()
}

/// What a write stores of a pin, without what the write itself decides (id and times).
fn content(record: &Value) -> Value {
    let members = [
        "pin_type",
        "pin_config",
        "pin_layout",
        "is_public",
        "key",
        "metadata",
        "version",
    ];
    members
        .iter()
        .map(|m| (m.to_string(), record[*m].clone()))
        .collect()
}

both_stores! {
    async fn dry_creates_answer_the_record_and_store_nothing(app) {
        let mut stream = event_stream(&app).await;
        let body = with_key(cards("Dry", "1"), "dry");
        let created = record(dry(&app, Method::POST, "/v1/pins", "true", Some(&body)).await);
        assert_eq!(created["pin_type"], json!("stat-cards"));
        assert_eq!(created["pin_config"], body["pin_config"]);
        assert_eq!(created["key"], json!("dry"));
        assert_eq!(created["version"], json!(1));
        assert_eq!(created["pin_layout"], json!("1x1"));
        assert_eq!(created["is_public"], json!(false));
        assert_eq!(created["metadata"]["title"], json!("Dry"));
        assert_eq!(created["metadata"]["tags"], json!(["kpi"]));

        let batch = json!({"pins": [cards("One", "1"), cards("Two", "2")]});
        let records = record(dry(&app, Method::POST, "/v1/pins/batch", "true", Some(&batch)).await);
        let titles: Vec<&Value> = records.as_array().expect("an array").iter().map(|r| &r["metadata"]["title"]).collect();
        assert_eq!(titles, [&json!("One"), &json!("Two")]);

        let upserted = record(dry(&app, Method::PUT, "/v1/pins/by-key/fresh", "true", Some(&cards("Fresh", "1"))).await);
        assert_eq!((&upserted["key"], &upserted["version"]), (&json!("fresh"), &json!(1)));
        let batch = json!({"pins": [with_key(cards("K1", "1"), "k1"), with_key(cards("K2", "2"), "k2")]});
        let records = record(dry(&app, Method::POST, "/v1/pins/batch/upsert", "true", Some(&batch)).await);
        let keys: Vec<&Value> = records.as_array().expect("an array").iter().map(|r| &r["key"]).collect();
        assert_eq!(keys, [&json!("k1"), &json!("k2")]);
        assert_eq!(records[1]["metadata"]["title"], json!("K2"));

        assert!(all_pins(&app).await.is_empty(), "nothing stored");
        app.get("/v1/pins/by-key/fresh").await.expect_error(404, "NOT_FOUND", None);
        assert_no_event(&app, &mut stream).await;

        // The real create stores what the dry run showed.
        let real = app.send(app.req(Method::POST, "/v1/pins?dry_run=false").json(&body)).await.expect(200);
        assert!(real.body.get("dry_run").is_none_or(|d| d == &json!(false)), "{}", real.body);
        let id = real.data()["pin_id"].as_str().unwrap().to_owned();
        assert_eq!(content(&read(&app, &id).await), content(&created));
    }

    async fn dry_updates_and_appends_answer_the_record_as_it_would_be_stored(app) {
        let id = app.create_pin(&with_key(cards("Sales", "1"), "sales")).await["pin_id"].as_str().unwrap().to_owned();
        let list = new_pin(&app, "list", json!({"items": [{"text": "one"}]}), Some("todo")).await;
        let before = read(&app, &id).await;
        let list_before = read(&app, &list).await;
        let mut stream = event_stream(&app).await;
        let path = format!("/v1/pins/{id}");

        let title = json!({"metadata": {"title": "Sales 2"}});
        let patched = record(dry(&app, Method::PATCH, &path, "true", Some(&title)).await);
        assert_eq!(patched["id"], json!(id));
        assert_eq!(patched["version"], json!(2));
        assert_eq!(patched["metadata"]["title"], json!("Sales 2"));
        assert_eq!(patched["metadata"]["tags"], json!(["kpi"]));
        assert_eq!(patched["pin_config"], before["pin_config"]);
        assert_eq!(patched["key"], json!("sales"));
        assert_eq!(patched["created_at"], before["created_at"]);

        let config = json!({"pin_config": cards("", "2")["pin_config"]});
        let put = record(dry(&app, Method::PUT, &path, "true", Some(&config)).await);
        assert_eq!((&put["version"], &put["pin_config"]), (&json!(2), &config["pin_config"]));
        let upserted = record(dry(&app, Method::PUT, "/v1/pins/by-key/sales", "true", Some(&cards("Sales", "3"))).await);
        assert_eq!(upserted["id"], json!(id));
        assert_eq!(upserted["version"], json!(2));
        assert_eq!(upserted["pin_config"], cards("", "3")["pin_config"]);
        let batch = json!({"pins": [with_key(cards("Sales", "4"), "sales")]});
        let records = record(dry(&app, Method::POST, "/v1/pins/batch/upsert", "true", Some(&batch)).await);
        assert_eq!(records[0]["id"], json!(id));
        assert_eq!(records[0]["pin_config"], cards("", "4")["pin_config"]);

        let item = json!({"items": [{"text": "two"}]});
        for path in [format!("/v1/pins/{list}/append"), "/v1/pins/by-key/todo/append".to_owned()] {
            let appended = record(dry(&app, Method::POST, &path, "true", Some(&item)).await);
            assert_eq!(appended["id"], json!(list));
            assert_eq!(appended["version"], json!(2));
            assert_eq!(appended["pin_config"], json!({"items": [{"text": "one"}, {"text": "two"}]}));
        }

        assert_eq!(read(&app, &id).await, before, "nothing written");
        assert_eq!(read(&app, &list).await, list_before, "nothing written");
        for pin in [&id, &list] {
            let past = app.get(&format!("/v1/pins/{pin}/versions")).await.expect(200);
            assert_eq!(past.data(), &json!([]), "no version kept");
        }
        assert_no_event(&app, &mut stream).await;

        // The real update stores what the dry run showed.
        app.patch(&path, &title).await.expect(200);
        let stored = read(&app, &id).await;
        assert_eq!(content(&stored), content(&patched));
        assert_eq!((&stored["id"], &stored["created_at"]), (&patched["id"], &patched["created_at"]));
    }

    async fn dry_runs_make_every_check_of_the_real_call(app) {
        let id = app.create_pin(&with_key(cards("Sales", "1"), "sales")).await["pin_id"].as_str().unwrap().to_owned();
        let other = app.create_pin(&with_key(cards("Other", "1"), "other")).await["pin_id"].as_str().unwrap().to_owned();
        let list = new_pin(&app, "list", json!({"items": []}), Some("todo")).await;
        let pins_before = all_pins(&app).await;
        let path = format!("/v1/pins/{id}");
        let mut bad = cards("Bad", "1");
        bad["pin_config"]["cards"][0]["trend"] = json!("sideways");

        dry(&app, Method::POST, "/v1/pins", "true", Some(&bad)).await
            .expect_error(400, "PIN_CONFIG_INVALID", Some("pin_config.cards[0].trend"));
        let batch = json!({"pins": [cards("ok", "1"), bad]});
        let res = dry(&app, Method::POST, "/v1/pins/batch", "true", Some(&batch)).await.expect_error(400, "PIN_CONFIG_INVALID", None);
        assert_eq!(res.body["error"]["details"]["index"], json!(1));
        let twice = json!({"pins": [with_key(cards("a", "1"), "x"), with_key(cards("b", "1"), "x")]});
        let res = dry(&app, Method::POST, "/v1/pins/batch/upsert", "true", Some(&twice)).await
            .expect_error(400, "VALIDATION_FAILED", Some("pins[1].key"));
        assert_eq!(res.body["error"]["details"]["index"], json!(1));
        dry(&app, Method::PUT, "/v1/pins/by-key/sales", "true", Some(&with_key(cards("S", "1"), "other"))).await
            .expect_error(400, "VALIDATION_FAILED", Some("key"));
        dry(&app, Method::PATCH, &path, "true", Some(&json!({}))).await.expect_error(400, "VALIDATION_FAILED", None);
        dry(&app, Method::POST, &format!("/v1/pins/{id}/append"), "true", Some(&json!({"items": [{"text": "x"}]}))).await
            .expect_error(400, "VALIDATION_FAILED", Some("pin_type"));
        dry(&app, Method::POST, &format!("/v1/pins/{list}/append"), "true", Some(&json!({"items": [{"text": 5}]}))).await
            .expect_error(400, "VALIDATION_FAILED", Some("items[0].text"));

        let reader = app.key_with("pins:read").await;
        let item = json!({"items": [{"text": "x"}]});
        let forbidden = [
            (Method::POST, "/v1/pins".to_owned(), cards("R", "1")),
            (Method::PATCH, path.clone(), json!({"metadata": {"title": "R"}})),
            (Method::PUT, "/v1/pins/by-key/reader".to_owned(), cards("R", "1")),
            (Method::POST, format!("/v1/pins/{list}/append"), item.clone()),
        ];
        for (method, at, body) in forbidden {
            dry_as(&app, &reader, method, &at, "true", Some(&body)).await.expect_error(403, "SCOPE_REQUIRED", None);
        }

        let unknown = "p-doesnotexist0000000000";
        dry(&app, Method::PATCH, &format!("/v1/pins/{unknown}"), "true", Some(&json!({"pin_layout": "2x2"}))).await
            .expect_error(404, "NOT_FOUND", None);
        dry(&app, Method::PUT, &format!("/v1/pins/{unknown}"), "true", Some(&json!({"pin_layout": "2x2"}))).await
            .expect_error(404, "NOT_FOUND", None);
        dry(&app, Method::POST, &format!("/v1/pins/{unknown}/append"), "true", Some(&item)).await
            .expect_error(404, "NOT_FOUND", None);
        dry(&app, Method::POST, "/v1/pins/by-key/nothing-here/append", "true", Some(&item)).await
            .expect_error(404, "NOT_FOUND", None);

        dry(&app, Method::POST, "/v1/pins", "true", Some(&with_key(cards("Taken", "1"), "sales"))).await
            .expect_error(409, "CONFLICT", Some("key"));
        dry(&app, Method::PATCH, &format!("/v1/pins/{other}"), "true", Some(&json!({"key": "sales"}))).await
            .expect_error(409, "CONFLICT", Some("key"));

        let stale = app.req(Method::PUT, &format!("{path}?dry_run=true")).header("if-match", "\"2\"");
        app.send(stale.json(&json!({"pin_layout": "2x2"}))).await.expect_error(412, "PRECONDITION_FAILED", None);
        let current = app.req(Method::PUT, &format!("{path}?dry_run=true")).header("if-match", "\"1\"");
        let shown = record(app.send(current.json(&json!({"pin_layout": "2x2"}))).await);
        assert_eq!(shown["pin_layout"], json!("2x2"));

        for (method, at, body) in [
            (Method::POST, "/v1/pins".to_owned(), cards("M", "1")),
            (Method::PATCH, path.clone(), json!({"pin_layout": "2x2"})),
            (Method::PUT, "/v1/pins/by-key/maybe".to_owned(), cards("M", "1")),
            (Method::POST, format!("/v1/pins/{list}/append"), item.clone()),
        ] {
            dry(&app, method, &at, "maybe", Some(&body)).await.expect_error(400, "VALIDATION_FAILED", Some("dry_run"));
        }
        assert_eq!(all_pins(&app).await, pins_before, "nothing written");
    }
}

/// With a write bucket of 2, three dry-run creates pass (a token each, none of the bucket),
/// then two real creates, and only the third real one is refused.
async fn check_dry_runs_spend_no_write_tokens(app: TestApp) {
    for i in 0..3 {
        let res = dry(
            &app,
            Method::POST,
            "/v1/pins",
            "true",
            Some(&cards(&format!("dry {i}"), "1")),
        )
        .await;
        assert_eq!(res.header("x-ratelimit-token-cost"), Some("1"));
        record(res);
    }
    app.create_pin(&cards("real 1", "1")).await;
    app.create_pin(&cards("real 2", "1")).await;
    let refused = app
        .post("/v1/pins", &cards("real 3", "1"))
        .await
        .expect_error(429, "RATE_LIMIT_EXCEEDED", None);
    assert_eq!(refused.body["error"]["details"]["window"], json!("write"));
    assert_eq!(refused.body["error"]["details"]["limit"], json!(2));
    assert_eq!(all_pins(&app).await.len(), 2);
}

mod dry_runs_spend_nothing_of_the_write_bucket {
    use super::*;

    const BUCKET_OF_TWO: &str = "[rate_limits.write_bucket]\ncapacity = 2\n";

    #[tokio::test]
    async fn sqlite() {
        check_dry_runs_spend_no_write_tokens(TestApp::sqlite_with(BUCKET_OF_TWO).await).await;
    }

    #[tokio::test]
    async fn postgres() {
        crate::skip_without_postgres!();
        check_dry_runs_spend_no_write_tokens(TestApp::postgres_with(BUCKET_OF_TWO).await).await;
    }
}
