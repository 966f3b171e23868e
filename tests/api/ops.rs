//! Operational surface: request ids, health and metrics, and the unversioned alias of the API.

use reqwest::Method;
use serde_json::{json, Value};

use crate::{
    both_stores,
    helpers::{stat_cards, Resp, TestApp},
};

/// `GET path` with no credential at all.
async fn anonymous(app: &TestApp, path: &str) -> reqwest::Response {
    app.client
        .get(format!("{}{path}", app.base))
        .send()
        .await
        .expect("request")
}

#[track_caller]
fn request_id(resp: &Resp) -> String {
    let id = resp.header("x-request-id").unwrap_or("");
    assert!(!id.is_empty(), "no X-Request-Id: {:?}", resp.headers);
    id.to_owned()
}

both_stores! {
    async fn every_response_has_a_request_id(app) {
        let ok = app.create_pin(&stat_cards("x")).await;
        let id = ok["pin_id"].as_str().unwrap();
        let mut seen = Vec::new();
        let read = app.get(&format!("/v1/pins/{id}")).await.expect(200);
        seen.push(request_id(&read));
        let list = app.get("/v1/pins").await.expect(200);
        seen.push(request_id(&list));
        let not_found = app.get("/v1/pins/p-missing").await.expect_error(404, "NOT_FOUND", None);
        seen.push(request_id(&not_found));
        let no_route = app.get("/v1/nowhere").await.expect_error(404, "NOT_FOUND", None);
        seen.push(request_id(&no_route));
        let invalid = app.post("/v1/pins", &json!({"pin_type": "nope"})).await.expect(400);
        seen.push(request_id(&invalid));
        let unauthorized = app
            .send(app.client.get(format!("{}/v1/pins", app.base)))
            .await
            .expect_error(401, "UNAUTHORIZED", None);
        seen.push(request_id(&unauthorized));
        let method = app.send(app.req(Method::DELETE, "/v1/pins")).await.expect(405);
        seen.push(request_id(&method));
        let media = app.send(app.req(Method::POST, "/v1/pins").body("{}")).await.expect(415);
        seen.push(request_id(&media));
        for path in ["/healthz", "/readyz", "/metrics"] {
            let resp = anonymous(&app, path).await;
            let id = resp.headers().get("x-request-id").and_then(|v| v.to_str().ok()).unwrap_or("");
            assert!(!id.is_empty(), "{path}: no X-Request-Id");
            seen.push(id.to_owned());
        }
        // Generated ids differ per request.
        let mut unique = seen.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), seen.len(), "{seen:?}");
    }

    async fn client_request_id_is_echoed(app) {
        let sent = format!("trace-{}", uuid::Uuid::new_v4());
        let ok = app.send(app.req(Method::POST, "/v1/pins").header("x-request-id", &sent).json(&stat_cards("x"))).await.expect(200);
        assert_eq!(ok.header("x-request-id"), Some(sent.as_str()));
        let id = ok.data()["pin_id"].as_str().unwrap();
        let read = app.send(app.req(Method::GET, &format!("/v1/pins/{id}")).header("X-Request-Id", "abc-123")).await.expect(200);
        assert_eq!(read.header("x-request-id"), Some("abc-123"));
        let unauthorized = app
            .send(app.client.get(format!("{}/v1/pins", app.base)).header("x-request-id", &sent))
            .await
            .expect(401);
        assert_eq!(unauthorized.header("x-request-id"), Some(sent.as_str()));
        let missing = app.send(app.req(Method::GET, "/v1/pins/p-missing").header("x-request-id", "r-404")).await.expect(404);
        assert_eq!(missing.header("x-request-id"), Some("r-404"));
        let invalid = app.send(app.req(Method::POST, "/v1/pins").header("x-request-id", "r-400").json(&json!({}))).await.expect(400);
        assert_eq!(invalid.header("x-request-id"), Some("r-400"));
    }

    async fn health_endpoints_need_no_credential(app) {
        for path in ["/healthz", "/readyz"] {
            let resp = anonymous(&app, path).await;
            assert_eq!(resp.status().as_u16(), 200, "{path}");
            let body: Value = resp.json().await.expect("JSON");
            assert_eq!(body["success"], json!(true), "{path}: {body}");
        }
        // A bad credential doesn't matter there either.
        let resp = app.client.get(format!("{}/readyz", app.base)).bearer_auth("cbk_wrongwrongwrongwrong").send().await.unwrap();
        assert_eq!(resp.status().as_u16(), 200);
    }

    async fn metrics_are_prometheus_text(app) {
        let resp = anonymous(&app, "/metrics").await;
        assert_eq!(resp.status().as_u16(), 200);
        let content_type = resp.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
        assert!(content_type.starts_with("text/plain"), "content-type: {content_type}");
        let text = resp.text().await.unwrap();
        assert!(text.lines().any(|l| l.starts_with("# TYPE ")), "{text}");
        // Every sample line is `name{labels} value` with a numeric value.
        let samples: Vec<&str> = text.lines().filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
        assert!(!samples.is_empty(), "{text}");
        for line in samples {
            let value = line.rsplit(' ').next().unwrap();
            assert!(value.parse::<f64>().is_ok(), "not a sample: {line}");
        }
    }

    async fn api_answers_identically_without_v1(app) {
        let created = app.post("/pins", &stat_cards("alias")).await.expect(200);
        let id = created.data()["pin_id"].as_str().unwrap().to_owned();
        let v1 = app.get(&format!("/v1/pins/{id}")).await.expect(200);
        let bare = app.get(&format!("/pins/{id}")).await.expect(200);
        assert_eq!(v1.body, bare.body);
        assert_eq!(v1.header("etag"), bare.header("etag"));
        assert_eq!(v1.data()["metadata"]["title"], json!("alias"));
        assert_eq!(app.get("/pins").await.expect(200).body, app.get("/v1/pins").await.expect(200).body);

        let updated = app.put(&format!("/pins/{id}"), &json!({"metadata": {"title": "put"}})).await.expect(200);
        assert_eq!(updated.data()["version"], json!(2));
        let patched = app.patch(&format!("/pins/{id}"), &json!({"metadata": {"title": "patch"}})).await.expect(200);
        assert_eq!(patched.data()["version"], json!(3));
        assert_eq!(app.get(&format!("/v1/pins/{id}")).await.expect(200).data()["metadata"]["title"], json!("patch"));
        assert_eq!(
            app.get(&format!("/pins/{id}/versions")).await.expect(200).body,
            app.get(&format!("/v1/pins/{id}/versions")).await.expect(200).body
        );

        let batch = app.post("/pins/batch", &json!({"pins": [stat_cards("b1"), stat_cards("b2")]})).await.expect(200);
        let ids: Vec<String> = batch.data().as_array().unwrap().iter().map(|p| p["pin_id"].as_str().unwrap().to_owned()).collect();
        let get_body = json!({"pin_ids": [ids[0], "p-none", ids[1]]});
        let got = app.post("/pins/batch/get", &get_body).await.expect(200);
        assert_eq!(got.body, app.post("/v1/pins/batch/get", &get_body).await.expect(200).body);
        assert_eq!(got.body["missing"], json!(["p-none"]));
        let upd = app.post("/pins/batch/update", &json!({"pins": [{"id": ids[0], "pin_layout": "2x2"}]})).await.expect(200);
        assert_eq!(upd.data()[0]["version"], json!(2));
        assert_eq!(app.get(&format!("/v1/pins/{}", ids[0])).await.expect(200).data()["pin_layout"], json!("2x2"));
        app.post("/pins/batch/delete", &json!({"pin_ids": [ids[1]]})).await.expect(200);
        app.get(&format!("/v1/pins/{}", ids[1])).await.expect_error(404, "NOT_FOUND", None);

        let deleted = app.delete(&format!("/pins/{id}")).await.expect(200);
        assert_eq!(deleted.data(), &json!({"id": id, "deleted": true}));
        let gone_v1 = app.get(&format!("/v1/pins/{id}")).await.expect_error(404, "NOT_FOUND", None);
        let gone_bare = app.get(&format!("/pins/{id}")).await.expect_error(404, "NOT_FOUND", None);
        assert_eq!(gone_v1.body, gone_bare.body);

        // Errors are the same too.
        let bad = json!({"pin_type": "stat-cards", "pin_config": {"cards": []}});
        let e1 = app.post("/pins", &bad).await.expect_error(400, "PIN_CONFIG_INVALID", Some("pin_config.cards"));
        let e2 = app.post("/v1/pins", &bad).await.expect_error(400, "PIN_CONFIG_INVALID", Some("pin_config.cards"));
        assert_eq!(e1.body, e2.body);
        let anon = app.send(app.client.get(format!("{}/pins", app.base))).await.expect_error(401, "UNAUTHORIZED", None);
        let anon_v1 = app.send(app.client.get(format!("{}/v1/pins", app.base))).await.expect_error(401, "UNAUTHORIZED", None);
        assert_eq!(anon.body, anon_v1.body);
        let reader = app.key_with("pins:read").await;
        let denied = app.send(app.client.post(format!("{}/pins", app.base)).bearer_auth(&reader).json(&stat_cards("x"))).await;
        let denied = denied.expect_error(403, "SCOPE_REQUIRED", None);
        assert_eq!(denied.body["error"]["details"]["required_scope"], json!("pins:write"));
        // Pins made through either address are the same pins.
        let listed = app.get("/pins").await.expect(200);
        let listed: Vec<&Value> = listed.data().as_array().unwrap().iter().map(|p| &p["id"]).collect();
        assert_eq!(listed, [&json!(ids[0])]);
    }
}
