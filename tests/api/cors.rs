//! CORS (CONTRACT.md 18): the origins of `http.cors_origins` may call the API from a browser;
//! without the setting no CORS header is sent.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{stat_cards, TestApp};

const DASHBOARD: &str = "https://dash.example.com";
const SETTINGS: &str = "[http]\ncors_origins = [\"https://dash.example.com\"]\n";

fn header<'a>(res: &'a reqwest::Response, name: &str) -> &'a str {
    res.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

async fn preflight(app: &TestApp, origin: &str, headers: &str) -> reqwest::Response {
    app.client
        .request(Method::OPTIONS, format!("{}/v1/pins", app.base))
        .header("Origin", origin)
        .header("Access-Control-Request-Method", "PATCH")
        .header("Access-Control-Request-Headers", headers)
        .send()
        .await
        .expect("preflight")
}

async fn scenario(app: TestApp) {
    let res = preflight(
        &app,
        DASHBOARD,
        "authorization, content-type, if-match, idempotency-key",
    )
    .await;
    assert!(res.status().is_success(), "{}", res.status());
    assert_eq!(header(&res, "access-control-allow-origin"), DASHBOARD);
    let allowed = header(&res, "access-control-allow-headers").to_ascii_lowercase();
    for name in [
        "authorization",
        "content-type",
        "if-match",
        "idempotency-key",
    ] {
        assert!(allowed.contains(name), "{name} allowed: {allowed}");
    }
    assert!(header(&res, "access-control-allow-methods").contains("PATCH"));

    // A real request from the page: its answer names the origin and exposes what scripts read.
    let pin = app.create_pin(&stat_cards("From the browser")).await;
    let id = pin["id"].as_str().unwrap();
    let res = app
        .client
        .get(format!("{}/v1/pins/{id}", app.base))
        .header("Origin", DASHBOARD)
        .bearer_auth(&app.key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(header(&res, "access-control-allow-origin"), DASHBOARD);
    let exposed = header(&res, "access-control-expose-headers").to_ascii_lowercase();
    for name in [
        "etag",
        "retry-after",
        "x-request-id",
        "x-ratelimit-remaining-minute",
        "x-ratelimit-reset-hour",
    ] {
        assert!(exposed.contains(name), "{name} exposed: {exposed}");
    }
    // The unprefixed API too.
    let res = app
        .client
        .get(format!("{}/pins/{id}", app.base))
        .header("Origin", DASHBOARD)
        .bearer_auth(&app.key)
        .send()
        .await
        .unwrap();
    assert_eq!(header(&res, "access-control-allow-origin"), DASHBOARD);

    // Another origin gets no grant.
    let res = preflight(&app, "https://evil.example", "authorization").await;
    assert_eq!(header(&res, "access-control-allow-origin"), "");
}

#[tokio::test]
async fn a_listed_origin_gets_cors_on_the_api_sqlite() {
    scenario(TestApp::sqlite_with(SETTINGS).await).await;
}

#[tokio::test]
async fn a_listed_origin_gets_cors_on_the_api_postgres() {
    crate::skip_without_postgres!();
    scenario(TestApp::postgres_with(SETTINGS).await).await;
}

#[tokio::test]
async fn without_the_setting_no_cors_header_is_sent() {
    let app = TestApp::sqlite().await;
    let res = preflight(&app, DASHBOARD, "authorization").await;
    assert_eq!(header(&res, "access-control-allow-origin"), "");
    let res = app
        .client
        .get(format!("{}/v1/pins", app.base))
        .header("Origin", DASHBOARD)
        .bearer_auth(&app.key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(header(&res, "access-control-allow-origin"), "");
    assert_eq!(app.get("/v1/pins").await.expect(200).data(), &json!([]));
}
