//! Status rules (CONTRACT.md 15): a pin's `status_rules` give it a `status` read on its
//! rendered configuration; each change logs one `pin.status` with `previous_status`, also
//! when a dataset the pin names caused it, and also with two replicas.

use std::time::Duration;

use serde_json::{json, Value};

use crate::{
    both_stores,
    datasets::{id_of, new_dataset},
    helpers::*,
    live::Stream,
};

/// The status sweep wakes on every dataset write; its fallback poll every second.
const SWEEP_EVERY_SECOND: &str = "[freshness]\ncheck_secs = 1\n";

/// Critical at 90 or more, warning above 75, read from the first card's value.
fn cpu_rules() -> Value {
    json!([
        {"path": "pin_config.cards[0].value", "op": "gte", "value": 90, "status": "critical"},
        {"path": "pin_config.cards[0].value", "op": "gt", "value": 75, "status": "warning"}
    ])
}

fn cpu_card(value: Value) -> Value {
    json!({"cards": [{"title": "CPU", "value": value}]})
}

fn cpu_pin(value: Value) -> Value {
    json!({
        "pin_type": "stat-cards",
        "pin_config": cpu_card(value),
        "metadata": {"title": "CPU"},
        "status_rules": cpu_rules()
    })
}

/// The next event on `stream` that is not a `pin.created` marker or `dataset.*`.
async fn next_pin_event(stream: &mut Stream) -> crate::live::Frame {
    loop {
        let frame = stream.next_event().await;
        match frame.event.as_deref() {
            Some("pin.updated" | "pin.status" | "pin.deleted") => return frame,
            _ => continue,
        }
    }
}

both_stores! {
    async fn a_status_change_is_logged_once_with_what_it_was(app) {
        let created = app.post("/v1/pins", &cpu_pin(json!("42 %"))).await.expect(200);
        let pin = created.data().clone();
        let id = pin["pin_id"].as_str().unwrap().to_owned();
        assert_eq!(pin["status"], "ok", "{pin}");
        assert_eq!(pin["status_rules"], cpu_rules());
        let plain = app.create_pin(&stat_cards("no rules")).await;
        assert_eq!(plain["status"], Value::Null);
        assert_eq!(plain["status_rules"], Value::Null);

        let mut stream = event_stream(&app).await;
        let path = format!("/v1/pins/{id}");
        app.patch(&path, &json!({"pin_config": cpu_card(json!("80.5 %"))})).await.expect(200);
        let updated = next_pin_event(&mut stream).await;
        assert_eq!(updated.event.as_deref(), Some("pin.updated"));
        assert_eq!(updated.data["data"]["status"], "warning", "{:?}", updated.data);
        let status = next_pin_event(&mut stream).await;
        assert_eq!(status.event.as_deref(), Some("pin.status"), "{status:?}");
        assert_eq!(status.data["id"], id.as_str());
        assert_eq!(status.data["version"], 2);
        assert_eq!(status.data["data"]["status"], "warning");
        assert_eq!(status.data["data"]["previous_status"], "ok");
        assert_eq!(app.get(&path).await.expect(200).data()["status"], "warning");

        // The same status again: pin.updated alone.
        app.patch(&path, &json!({"pin_config": cpu_card(json!("81"))})).await.expect(200);
        assert_eq!(next_pin_event(&mut stream).await.event.as_deref(), Some("pin.updated"));
        assert_no_event(&app, &mut stream).await;

        // A number past the first rule: critical (the first matching rule decides).
        app.put(&path, &json!({"pin_config": cpu_card(json!("1,250"))})).await.expect(200);
        next_pin_event(&mut stream).await;
        let status = next_pin_event(&mut stream).await;
        assert_eq!(status.data["data"]["status"], "critical");
        assert_eq!(status.data["data"]["previous_status"], "warning");

        // A merge patch keeps the rules; no rules left: no status, logged as a change.
        let merged = app
            .send(
                app.req(reqwest::Method::PATCH, &path)
                    .header("content-type", "application/merge-patch+json")
                    .body(json!({"status_rules": null}).to_string()),
            )
            .await
            .expect(200);
        assert_eq!(merged.data()["version"], 5);
        next_pin_event(&mut stream).await;
        let status = next_pin_event(&mut stream).await;
        assert_eq!(status.data["data"]["status"], Value::Null);
        assert_eq!(status.data["data"]["previous_status"], "critical");
        let read = app.get(&path).await.expect(200);
        assert_eq!(read.data()["status"], Value::Null);
        assert_eq!(read.data()["status_rules"], Value::Null);

        // Past versions keep their rules and status.
        let versions = app.get(&format!("{path}/versions")).await.expect(200);
        let statuses: Vec<Value> = versions.data().as_array().unwrap().iter()
            .map(|v| json!([v["version"], v["status"]]))
            .collect();
        assert_eq!(
            statuses,
            vec![json!([4, "critical"]), json!([3, "warning"]), json!([2, "warning"]), json!([1, "ok"])]
        );
    }

    async fn status_rules_are_checked(app) {
        let mut too_many = Vec::new();
        for _ in 0..21 {
            too_many.push(json!({"path": "pin_config.cards[0].value", "op": "gt", "value": 1, "status": "ok"}));
        }
        let cases = [
            (json!(too_many), "status_rules"),
            (json!([{"path": "cards[0].value", "op": "gt", "value": 1, "status": "ok"}]), "status_rules[0].path"),
            (json!([{"path": "pin_config.cards[", "op": "gt", "value": 1, "status": "ok"}]), "status_rules[0].path"),
            (json!([{"path": "pin_config.v", "op": "above", "value": 1, "status": "ok"}]), "status_rules[0].op"),
            (json!([{"path": "pin_config.v", "op": "gt", "value": "1", "status": "ok"}]), "status_rules[0].value"),
            (json!([{"path": "pin_config.v", "op": "gt", "value": 1, "status": "red"}]), "status_rules[0].status"),
            (json!([{"path": "pin_config.v", "op": "gt", "value": 1, "status": "ok", "colour": "red"}]), "status_rules[0]"),
            (json!({"path": "pin_config.v"}), "status_rules"),
        ];
        for (rules, field) in &cases {
            let mut body = stat_cards("rules");
            body["status_rules"] = rules.clone();
            let res = app.post("/v1/pins", &body).await;
            assert_eq!(res.status, 400, "{rules}: {}", res.body);
            let at = res.body["error"]["details"]["field"].as_str().unwrap_or_default();
            assert!(at.starts_with(field), "{rules}: {} (want {field})", res.body);
        }
        // An empty list is no rules.
        let mut body = stat_cards("none");
        body["status_rules"] = json!([]);
        let pin = app.post("/v1/pins", &body).await.expect(200).data().clone();
        assert_eq!(pin["status"], Value::Null);
        assert_eq!(pin["status_rules"], Value::Null);
        let id = pin["pin_id"].as_str().unwrap();
        app.patch(&format!("/v1/pins/{id}"), &json!({"status_rules": [{"path": "x", "op": "gt", "value": 1, "status": "ok"}]}))
            .await
            .expect_error(400, "VALIDATION_FAILED", Some("status_rules[0].path"));
        // Rules that read nothing give `ok`.
        let res = app
            .patch(&format!("/v1/pins/{id}"), &json!({"status_rules": [{"path": "pin_config.missing", "op": "lt", "value": 1, "status": "critical"}]}))
            .await
            .expect(200);
        assert_eq!(res.data()["version"], 2);
        assert_eq!(app.get(&format!("/v1/pins/{id}")).await.expect(200).data()["status"], "ok");
        // A batch names the item.
        let mut bad = stat_cards("bad");
        bad["status_rules"] = json!([{"path": "pin_config.v", "op": "gt", "value": 1, "status": "red"}]);
        let res = app.post("/v1/pins/batch", &json!({"pins": [stat_cards("fine"), bad]})).await;
        assert_eq!(res.status, 400, "{}", res.body);
        assert_eq!(res.body["error"]["details"]["index"], 1, "{}", res.body);
    }
}

/// The data of the next `pin.status` on `stream` (within the sweep's time).
async fn next_status(stream: &mut Stream) -> Value {
    stream
        .next_of("pin.status", Duration::from_secs(8))
        .await
        .data
}

/// Writes pin `id`'s card value as `template`.
async fn set_card(app: &TestApp, id: &str, template: &str) {
    app.patch(
        &format!("/v1/pins/{id}"),
        &json!({"pin_config": cpu_card(json!(template))}),
    )
    .await
    .expect(200);
}

/// A templated pin's status follows its dataset: a dataset write that changes it logs one
/// `pin.status`; one that doesn't, none.
async fn dataset_scenario(app: TestApp) {
    let dataset = new_dataset(&app, "cpu", "json", json!({"load": 50})).await;
    let created = app
        .post("/v1/pins", &cpu_pin(json!("{{cpu.load}} %")))
        .await
        .expect(200);
    let id = created.data()["pin_id"].as_str().unwrap().to_owned();
    assert_eq!(
        created.data()["status"],
        "ok",
        "read against the dataset at create"
    );
    let mut stream = event_stream(&app).await;
    let ds_path = format!("/v1/datasets/{}", id_of(&dataset));

    app.patch(&ds_path, &json!({"data": {"load": 95}}))
        .await
        .expect(200);
    let status = next_status(&mut stream).await;
    assert_eq!(status["id"], id.as_str());
    assert_eq!(status["data"]["status"], "critical", "{status}");
    assert_eq!(status["data"]["previous_status"], "ok");
    assert_eq!(status["version"], 2, "a status is a new version: {status}");
    let read = app.get(&format!("/v1/pins/{id}")).await.expect(200);
    assert_eq!(read.data()["status"], "critical");
    assert_eq!(
        read.data()["pin_config"]["cards"][0]["value"],
        "{{cpu.load}} %",
        "the stored configuration keeps its template"
    );

    // Still critical: nothing logged for the pin.
    app.patch(&ds_path, &json!({"data": {"load": 97}}))
        .await
        .expect(200);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let marker = app.create_pin(&stat_cards("marker")).await;
    loop {
        let frame = stream.next_event().await;
        assert_ne!(frame.event.as_deref(), Some("pin.status"), "{frame:?}");
        if frame.data["id"] == marker["pin_id"] {
            break;
        }
    }

    // A dataset gone renders the template empty: no number, `ok`.
    app.delete(&ds_path).await.expect(200);
    let status = next_status(&mut stream).await;
    assert_eq!(status["data"]["status"], "ok");
    assert_eq!(status["data"]["previous_status"], "critical");
}

#[tokio::test]
async fn a_dataset_change_changes_the_status_of_the_pins_naming_it_sqlite() {
    dataset_scenario(TestApp::sqlite_with(SWEEP_EVERY_SECOND).await).await;
}

#[tokio::test]
async fn a_dataset_change_changes_the_status_of_the_pins_naming_it_postgres() {
    crate::skip_without_postgres!();
    dataset_scenario(TestApp::postgres_with(SWEEP_EVERY_SECOND).await).await;
}

/// A templated pin's own write that changes what its template reads changes its status
/// through the same sweep: the write answers with the status it had, then one `pin.status`.
/// A rename of the dataset it names changes it too (the old name marks it).
async fn own_write_scenario(app: TestApp) {
    let dataset = new_dataset(&app, "cpu", "json", json!({"load": 95, "idle": 5})).await;
    let created = app
        .post("/v1/pins", &cpu_pin(json!("{{cpu.load}} %")))
        .await
        .expect(200);
    let id = created.data()["pin_id"].as_str().unwrap().to_owned();
    assert_eq!(created.data()["status"], "critical");
    let mut stream = event_stream(&app).await;

    set_card(&app, &id, "{{cpu.idle}} %").await;
    let status = next_status(&mut stream).await;
    assert_eq!(status["id"], id.as_str());
    assert_eq!(status["data"]["status"], "ok", "{status}");
    assert_eq!(status["data"]["previous_status"], "critical");
    let read = app.get(&format!("/v1/pins/{id}")).await.expect(200);
    assert_eq!(read.data()["status"], "ok");

    // Back on the load (critical), then the dataset renamed: the pin's template reads
    // nothing any more (its old name is what marks it), so it is `ok` again.
    set_card(&app, &id, "{{cpu.load}} %").await;
    let status = next_status(&mut stream).await;
    assert_eq!(status["data"]["status"], "critical", "{status}");
    app.patch(
        &format!("/v1/datasets/{}", id_of(&dataset)),
        &json!({"name": "cpu2"}),
    )
    .await
    .expect(200);
    let status = next_status(&mut stream).await;
    assert_eq!(status["data"]["status"], "ok", "{status}");
    assert_eq!(status["data"]["previous_status"], "critical");
}

#[tokio::test]
async fn a_templated_pins_own_write_changes_its_status_sqlite() {
    own_write_scenario(TestApp::sqlite_with(SWEEP_EVERY_SECOND).await).await;
}

#[tokio::test]
async fn a_templated_pins_own_write_changes_its_status_postgres() {
    crate::skip_without_postgres!();
    own_write_scenario(TestApp::postgres_with(SWEEP_EVERY_SECOND).await).await;
}

/// Three replicas on one PostgreSQL database: each dataset-caused change is logged once.
#[tokio::test]
async fn replicas_log_each_status_change_once() {
    crate::skip_without_postgres!();
    let app = TestApp::postgres_with(SWEEP_EVERY_SECOND).await;
    let replicas = [
        app.replica(SWEEP_EVERY_SECOND).await,
        app.replica(SWEEP_EVERY_SECOND).await,
    ];
    let dataset = new_dataset(&app, "cpu", "json", json!({"load": 10})).await;
    let mut ids = Vec::new();
    for i in 0..10 {
        let mut body = cpu_pin(json!(format!("{{{{cpu.load}}}} #{i}")));
        body["metadata"]["title"] = json!(format!("cpu {i}"));
        ids.push(app.post("/v1/pins", &body).await.expect(200).data()["pin_id"].clone());
    }
    let mut stream = event_stream(&app).await;
    let ds_path = format!("/v1/datasets/{}", id_of(&dataset));
    // Each replica's own write wakes its own sweep.
    let replica = &replicas[0];
    let write = replica
        .client
        .patch(format!("{}{ds_path}", replica.base))
        .bearer_auth(&app.key)
        .json(&json!({"data": {"load": 80}}));
    replica.send(write).await.expect(200);
    let mut seen = Vec::new();
    for _ in 0..ids.len() {
        let status = next_status(&mut stream).await;
        assert_eq!(status["data"]["status"], "warning", "{status}");
        seen.push(status["id"].clone());
    }
    seen.sort_by_key(|v| v.to_string());
    ids.sort_by_key(|v| v.to_string());
    assert_eq!(seen, ids, "each pin once");
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_no_event(&app, &mut stream).await;
    drop(replicas);
}
