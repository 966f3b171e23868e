//! `/metrics` after real traffic (CONTRACT.md 18): requests by route template and status,
//! open event streams by kind, events logged and delivered, viewers ended for lag, refusals
//! by limit, the store's pools; and no id of anything created in the text.

use std::time::Duration;

use serde_json::{json, Value};

use crate::{helpers::*, live::Stream};

/// A low tier minute, one stream per key, a buffer of one event, a heartbeat every second
/// (so a closed stream is noticed quickly).
const SETTINGS: &str = "
[rate_limits.tiers.team]
per_minute = 60
[events]
max_streams_per_key = 1
buffer = 1
heartbeat_secs = 1
";

/// The `/metrics` text, fetched without a credential.
async fn scrape(app: &TestApp) -> String {
    let resp = app
        .client
        .get(format!("{}/metrics", app.base))
        .send()
        .await
        .expect("scrape");
    assert_eq!(resp.status().as_u16(), 200);
    resp.text().await.expect("text")
}

/// The value of the sample `series` (`name{labels}` exactly as exposed), if it is there.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

#[track_caller]
fn value(text: &str, series: &str) -> f64 {
    sample(text, series).unwrap_or_else(|| panic!("no sample {series} in:\n{text}"))
}

fn route(method: &str, route: &str, status: u16) -> String {
    format!("corkboard_http_requests_by_route_total{{method=\"{method}\",route=\"{route}\",status=\"{status}\"}}")
}

fn open_streams(kind: &str) -> String {
    format!("corkboard_event_streams_open{{kind=\"{kind}\"}}")
}

fn refusals(limit: &str) -> String {
    format!("corkboard_rate_limit_refusals_total{{limit=\"{limit}\"}}")
}

/// Scrapes until `series` has the value `want` (what a server does when a client goes is
/// seen at its next write), or fails after 10 s.
async fn until(app: &TestApp, series: &str, want: f64) -> String {
    for _ in 0..50 {
        let text = scrape(app).await;
        if sample(&text, series) == Some(want) {
            return text;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("{series} never became {want}:\n{}", scrape(app).await);
}

/// Four pins of 200 KB each (a batch within the 1 MiB body limit).
fn big_batch() -> Value {
    let pin = json!({"pin_type": "json", "pin_config": {"data": {"pad": "x".repeat(200_000)}}});
    json!({"pins": [pin, pin, pin, pin]})
}

async fn traffic_shows_in_every_family(app: TestApp) {
    let logged_before = value(&scrape(&app).await, "corkboard_events_logged_total");
    let mut ids = Vec::new();

    let mut first = Stream::open(&app, "/v1/events", &app.key, &[]).await;
    assert_eq!(first.status, 200);
    let text = scrape(&app).await;
    assert_eq!(value(&text, &open_streams("api")), 1.0);
    assert_eq!(value(&text, &open_streams("share_page")), 0.0);
    assert_eq!(value(&text, &open_streams("board_page")), 0.0);

    let created = app
        .post("/v1/pins", &stat_cards("watched"))
        .await
        .expect(200);
    let id = created.data()["pin_id"].as_str().unwrap().to_owned();
    assert_eq!(first.next_event().await.data["id"], json!(id));
    app.get(&format!("/v1/pins/{id}")).await.expect(200);
    app.get("/v1/pins/p-00000000000000000000").await.expect(404);
    let unmatched = app
        .client
        .get(format!("{}/v1/no-such-route/{id}", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(unmatched.status().as_u16(), 404);
    // One stream per key: a second is refused while the first is open.
    app.get("/v1/events")
        .await
        .expect_error(429, "RATE_LIMIT_EXCEEDED", None);
    ids.push(id);

    let text = scrape(&app).await;
    assert_eq!(value(&text, "corkboard_events_delivered_total"), 1.0);
    assert_eq!(value(&text, &refusals("streams")), 1.0);
    assert!(
        value(&text, "corkboard_events_logged_total") >= logged_before + 1.0,
        "{text}"
    );

    // The client goes: the stream is counted closed once the server notices.
    drop(first);
    until(&app, &open_streams("api"), 0.0).await;

    // A viewer that reads nothing while writes overflow its one-event buffer (and the
    // socket's, at the latest) is ended when it reads again.
    let mut stalled = Stream::open(&app, "/v1/events", &app.key, &[]).await;
    assert_eq!(stalled.status, 200);
    for _ in 0..20 {
        let made = app.post("/v1/pins/batch", &big_batch()).await.expect(200);
        ids.extend(
            made.data()
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["pin_id"].as_str().unwrap().to_owned()),
        );
        if value(&scrape(&app).await, "corkboard_event_viewers_lagged_total") == 1.0 {
            break;
        }
    }
    while stalled.next_frame(Duration::from_secs(10)).await.is_some() {}
    let text = until(&app, &open_streams("api"), 0.0).await;
    assert_eq!(value(&text, "corkboard_event_viewers_lagged_total"), 1.0);
    drop(stalled);

    // The tier's minute runs out.
    let mut refused = false;
    for _ in 0..70 {
        let resp = app.get("/v1/pins?limit=1").await;
        if resp.status == 429 {
            assert_eq!(resp.body["error"]["details"]["window"], json!("minute"));
            refused = true;
            break;
        }
        resp.expect(200);
    }
    assert!(refused, "the minute never ran out");

    let text = scrape(&app).await;
    assert_eq!(value(&text, &route("POST", "/v1/pins", 200)), 1.0);
    assert_eq!(value(&text, &route("GET", "/v1/pins/{id}", 200)), 1.0);
    assert_eq!(value(&text, &route("GET", "/v1/pins/{id}", 404)), 1.0);
    assert_eq!(value(&text, &route("GET", "unmatched", 404)), 1.0);
    assert_eq!(value(&text, &route("GET", "/v1/events", 200)), 2.0);
    assert_eq!(value(&text, &route("GET", "/v1/events", 429)), 1.0);
    assert_eq!(value(&text, &route("GET", "/v1/pins", 429)), 1.0);
    assert!(value(&text, &route("POST", "/v1/pins/batch", 200)) >= 1.0);
    assert!(value(&text, "corkboard_http_requests_total{class=\"4xx\"}") >= 4.0);
    assert!(value(&text, "corkboard_http_request_duration_seconds_count") >= 10.0);

    assert_eq!(value(&text, &refusals("minute")), 1.0);
    assert_eq!(value(&text, &refusals("streams")), 1.0);
    for limit in [
        "hour",
        "write",
        "hook",
        "auth_failures",
        "share",
        "connections",
    ] {
        assert_eq!(value(&text, &refusals(limit)), 0.0, "{limit}");
    }
    assert_eq!(value(&text, &open_streams("api")), 0.0);
    assert!(value(&text, "corkboard_events_delivered_total") >= 1.0);
    assert_eq!(value(&text, "corkboard_event_viewers_lagged_total"), 1.0);
    // This process may run other servers: their appends count too.
    let logged = value(&text, "corkboard_events_logged_total");
    assert!(
        logged >= logged_before + ids.len() as f64,
        "{logged} after {logged_before}"
    );

    let backend = app.state.store.backend_name();
    assert_eq!(
        value(
            &text,
            &format!("corkboard_store_up{{backend=\"{backend}\"}}")
        ),
        1.0
    );
    let pools: &[&str] = if backend == "sqlite" {
        &["sqlite_writer", "sqlite_reader"]
    } else {
        &["postgres"]
    };
    for pool in pools {
        let open = value(
            &text,
            &format!("corkboard_store_connections_open{{pool=\"{pool}\"}}"),
        );
        let in_use = value(
            &text,
            &format!("corkboard_store_connections_in_use{{pool=\"{pool}\"}}"),
        );
        assert!(
            open >= 1.0 && in_use <= open,
            "{pool}: {in_use} in use of {open}"
        );
    }

    // Labels name templates and fixed values, never what was created or who asked.
    for id in &ids {
        assert!(!text.contains(id.as_str()), "{id} in:\n{text}");
    }
    assert!(!text.contains(&app.key), "the key in:\n{text}");
    assert!(!text.contains("p-00000000000000000000"), "{text}");
}

#[tokio::test]
async fn sqlite() {
    traffic_shows_in_every_family(TestApp::sqlite_with(SETTINGS).await).await;
}

#[tokio::test]
async fn postgres() {
    crate::skip_without_postgres!();
    traffic_shows_in_every_family(TestApp::postgres_with(SETTINGS).await).await;
}
