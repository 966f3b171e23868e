//! Freshness (CONTRACT.md 15): a pin may expect a push every `expected_every_secs`; records
//! carry `last_pushed_at` and `stale`, lists filter by `?stale=`, and a lapse logs one
//! `pin.stale` within `freshness.check_secs`. Time is moved by moving the pin's last push
//! back in the store (the sweep and the records read the wall clock).

use std::time::Duration;

use serde_json::{json, Value};

use crate::{both_stores, datasets::iso_ms, helpers::*};

const SWEEP_EVERY_SECOND: &str = "[freshness]\ncheck_secs = 1\n";

/// Moves every pin's last push (and so its due time) `secs` into the past.
async fn age_pins(app: &TestApp, secs: i64) {
    let sql = format!(
        "UPDATE pins SET last_pushed_at = last_pushed_at - {ms}, \
         stale_due_at = stale_due_at - {ms}",
        ms = secs * 1000
    );
    app.execute_sql(&sql, &sql).await;
}

fn watched(key: &str, every: Value) -> Value {
    let mut body = with_key(stat_cards("feed"), key);
    body["expected_every_secs"] = every;
    body
}

async fn stale_ids(app: &TestApp, stale: bool) -> Vec<Value> {
    let res = app
        .get(&format!("/v1/pins?stale={stale}"))
        .await
        .expect(200);
    res.data()
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].clone())
        .collect()
}

async fn scenario(app: TestApp) {
    let created = app
        .post("/v1/pins", &watched("feed", json!(10)))
        .await
        .expect(200);
    let pin = created.data().clone();
    let id = pin["pin_id"].as_str().unwrap().to_owned();
    assert_eq!(pin["expected_every_secs"], 10);
    assert_eq!(pin["stale"], false);
    assert_eq!(pin["last_pushed_at"], pin["created_at"]);
    let quiet = app.create_pin(&stat_cards("no expectation")).await;
    assert_eq!(quiet["expected_every_secs"], Value::Null);

    let mut stream = event_stream(&app).await;
    age_pins(&app, 60).await;
    let stale = stream
        .next_of("pin.stale", Duration::from_secs(5))
        .await
        .data;
    assert_eq!(stale["id"], id.as_str(), "{stale}");
    assert_eq!(stale["data"]["stale"], true, "{stale}");
    assert_eq!(stale["version"], 1, "no new version: {stale}");
    let read = app.get(&format!("/v1/pins/{id}")).await.expect(200);
    assert_eq!(read.data()["stale"], true);
    assert_eq!(read.data()["version"], 1);
    assert_eq!(stale_ids(&app, true).await, vec![json!(id)]);
    assert!(!stale_ids(&app, false).await.contains(&json!(id)));
    assert!(stale_ids(&app, false).await.contains(&quiet["pin_id"]));
    // Once per lapse: two more sweeps log nothing.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_no_event(&app, &mut stream).await;

    // An upsert that changes nothing is still a push: fresh again, no event, no version.
    let before = iso_ms(&read.data()["last_pushed_at"]);
    app.put("/v1/pins/by-key/feed", &watched("feed", json!(10)))
        .await
        .expect(200);
    let read = app.get(&format!("/v1/pins/{id}")).await.expect(200);
    assert_eq!(read.data()["stale"], false);
    assert_eq!(read.data()["version"], 1);
    assert!(iso_ms(&read.data()["last_pushed_at"]) > before);
    assert_no_event(&app, &mut stream).await;

    // A later lapse logs again.
    age_pins(&app, 60).await;
    assert_eq!(
        stream
            .next_of("pin.stale", Duration::from_secs(5))
            .await
            .data["id"],
        id.as_str()
    );

    // A PATCH is a push (its usual event), and `null` removes the expectation.
    let patched = app
        .patch(
            &format!("/v1/pins/{id}"),
            &json!({"expected_every_secs": null}),
        )
        .await
        .expect(200);
    assert_eq!(patched.data()["version"], 2);
    let read = app.get(&format!("/v1/pins/{id}")).await.expect(200);
    assert_eq!(read.data()["expected_every_secs"], Value::Null);
    assert_eq!(read.data()["stale"], false);
    age_pins(&app, 3600).await;
    assert!(stale_ids(&app, true).await.is_empty());
}

#[tokio::test]
async fn a_lapse_is_logged_once_and_a_push_makes_the_pin_fresh_sqlite() {
    scenario(TestApp::sqlite_with(SWEEP_EVERY_SECOND).await).await;
}

#[tokio::test]
async fn a_lapse_is_logged_once_and_a_push_makes_the_pin_fresh_postgres() {
    crate::skip_without_postgres!();
    scenario(TestApp::postgres_with(SWEEP_EVERY_SECOND).await).await;
}

/// Two replicas sweep one PostgreSQL database: each lapse is logged once, not once per
/// replica.
#[tokio::test]
async fn replicas_log_each_lapse_once() {
    crate::skip_without_postgres!();
    let app = TestApp::postgres_with(SWEEP_EVERY_SECOND).await;
    let replicas = [
        app.replica(SWEEP_EVERY_SECOND).await,
        app.replica(SWEEP_EVERY_SECOND).await,
    ];
    let mut ids = Vec::new();
    for i in 0..20 {
        let created = app
            .post("/v1/pins", &watched(&format!("feed-{i}"), json!(10)))
            .await
            .expect(200);
        ids.push(created.data()["pin_id"].clone());
    }
    let mut stream = event_stream(&app).await;
    age_pins(&app, 60).await;
    let mut seen = Vec::new();
    for _ in 0..ids.len() {
        seen.push(
            stream
                .next_of("pin.stale", Duration::from_secs(5))
                .await
                .data["id"]
                .clone(),
        );
    }
    seen.sort_by_key(|v| v.to_string());
    ids.sort_by_key(|v| v.to_string());
    assert_eq!(seen, ids, "each pin once");
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_no_event(&app, &mut stream).await;
    drop(replicas);
}

both_stores! {
    async fn expected_every_secs_is_checked(app) {
        for bad in [json!(9), json!(2_592_001), json!("10"), json!(1.5)] {
            let res = app.post("/v1/pins", &watched("k", bad.clone())).await;
            assert_eq!(res.status, 400, "{bad}: {}", res.body);
            assert_eq!(res.body["error"]["details"]["field"], "expected_every_secs", "{bad}: {}", res.body);
        }
        let pin = app.create_pin(&stat_cards("p")).await;
        let id = pin["pin_id"].as_str().unwrap();
        app.patch(&format!("/v1/pins/{id}"), &json!({"expected_every_secs": 5}))
            .await
            .expect_error(400, "VALIDATION_FAILED", Some("expected_every_secs"));
        let res = app
            .patch(&format!("/v1/pins/{id}"), &json!({"expected_every_secs": 2_592_000}))
            .await
            .expect(200);
        assert_eq!(res.data()["version"], 2);
        app.get("/v1/pins?stale=maybe")
            .await
            .expect_error(400, "VALIDATION_FAILED", Some("stale"));
    }
}
