//! Outbound webhooks (CONTRACT.md 15): CRUD with the secret shown once, the address rules,
//! signed deliveries of the events' frames to a receiver this test runs on 127.0.0.1,
//! retries in order, disabling and resuming, a replica stopped mid-delivery, and replicas
//! sharing the work. Pauses are shortened by settings (`retry_base_ms`, `poll_ms`, ...).

use std::{
    collections::{HashMap, VecDeque},
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{
    body::Bytes,
    extract::State,
    http::{HeaderMap, StatusCode, Uri},
};
use base64::{engine::general_purpose::STANDARD, Engine};
use hmac::{Hmac, Mac};
use reqwest::Method;
use serde_json::{json, Value};
use sha2::Sha256;

use crate::{
    both_stores,
    helpers::*,
    openapi::{conforms, document},
};

/// Deliveries to loopback receivers, quickly retried and looked for.
const FAST: &str = "[webhooks]
allow_private_targets = true
retry_base_ms = 200
poll_ms = 100
timeout_secs = 2
lease_secs = 3
";

/// [`FAST`], and a webhook is disabled after a second of failures.
const DISABLES_FAST: &str = "[webhooks]
allow_private_targets = true
retry_base_ms = 200
poll_ms = 100
timeout_secs = 2
lease_secs = 3
disable_after_secs = 1
";

/// A replica that serves the API and leaves delivering to others.
const NO_DELIVERY: &str = "[webhooks]
allow_private_targets = true
deliver = false
";

/// Deliveries to loopback receivers with a poll too slow to matter: what goes out comes from
/// the commits' news and the operations' nudges alone.
const SLOW_POLL: &str = "[webhooks]
allow_private_targets = true
poll_ms = 60000
";

/// [`FAST`] without private targets: a replica that refuses to deliver to them.
const STRICT_FAST: &str = "[webhooks]
retry_base_ms = 200
poll_ms = 100
timeout_secs = 2
lease_secs = 3
";

/// How a receiver answers one request.
#[derive(Clone, Copy)]
enum Answer {
    Status(u16),
    /// Never answers (until the sender gives up).
    Hang,
}

/// One request a receiver got.
#[derive(Debug, Clone)]
struct Got {
    headers: HeaderMap,
    body: Bytes,
}

impl Got {
    fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }
}

#[derive(Default)]
struct Inbox {
    got: HashMap<String, Vec<Got>>,
    /// Answers to give per path, in turn; 200 when none is left.
    plans: HashMap<String, VecDeque<Answer>>,
}

/// An HTTP server on 127.0.0.1 that records what is POSTed to each path.
struct Receiver {
    base: String,
    inbox: Arc<Mutex<Inbox>>,
    _server: tokio::task::JoinHandle<()>,
}

async fn receive(
    State(inbox): State<Arc<Mutex<Inbox>>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let answer = {
        let mut inbox = inbox.lock().unwrap();
        let path = uri.path().to_owned();
        inbox
            .got
            .entry(path.clone())
            .or_default()
            .push(Got { headers, body });
        inbox
            .plans
            .get_mut(&path)
            .and_then(VecDeque::pop_front)
            .unwrap_or(Answer::Status(200))
    };
    match answer {
        Answer::Status(code) => StatusCode::from_u16(code).unwrap(),
        Answer::Hang => {
            tokio::time::sleep(Duration::from_secs(600)).await;
            StatusCode::OK
        }
    }
}

impl Receiver {
    async fn start() -> Receiver {
        let inbox = Arc::new(Mutex::new(Inbox::default()));
        let app = axum::Router::new()
            .fallback(axum::routing::post(receive))
            .with_state(inbox.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Receiver {
            base,
            inbox,
            _server: server,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Answers the next requests to `path` so, in turn.
    fn plan(&self, path: &str, answers: &[Answer]) {
        let mut inbox = self.inbox.lock().unwrap();
        inbox
            .plans
            .entry(path.to_owned())
            .or_default()
            .extend(answers.iter().copied());
    }

    fn got(&self, path: &str) -> Vec<Got> {
        let inbox = self.inbox.lock().unwrap();
        inbox.got.get(path).cloned().unwrap_or_default()
    }

    /// The requests to `path` once there are at least `n` (panics after `within`).
    async fn wait_for(&self, path: &str, n: usize, within: Duration) -> Vec<Got> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let got = self.got(path);
            if got.len() >= n {
                return got;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{path}: {} of {n} requests within {within:?}",
                got.len()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// The `webhook-id`s `path` got, in order.
fn ids(got: &[Got]) -> Vec<String> {
    got.iter()
        .map(|g| g.header("webhook-id").to_owned())
        .collect()
}

/// Creates `n` stat-card pins in batches of 100 (one `pin.created` event each); their ids,
/// in the order of their events.
async fn create_pins(app: &TestApp, n: usize) -> Vec<String> {
    let mut ids = Vec::new();
    for start in (0..n).step_by(100) {
        let pins: Vec<Value> = (start..n.min(start + 100))
            .map(|i| stat_cards(&format!("pin {i}")))
            .collect();
        let res = app
            .post("/v1/pins/batch", &json!({ "pins": pins }))
            .await
            .expect(200);
        for pin in res.data().as_array().unwrap() {
            ids.push(pin["pin_id"].as_str().unwrap().to_owned());
        }
    }
    ids
}

/// Creates a webhook (asserting 200) and returns the answer's `data`.
async fn create_webhook(app: &TestApp, body: Value) -> Value {
    app.post("/v1/webhooks", &body)
        .await
        .expect(200)
        .data()
        .clone()
}

fn id_of(webhook: &Value) -> String {
    webhook["id"].as_str().expect("an id").to_owned()
}

/// `GET /v1/webhooks/{id}/deliveries` once it shows `n` attempts (they are saved up to a
/// second after they are made).
async fn attempts(app: &TestApp, key: &str, id: &str, n: usize) -> Resp {
    let path = format!("/v1/webhooks/{id}/deliveries");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let log = call(app, key, Method::GET, &path, None).await.expect(200);
        if log.data().as_array().is_some_and(|a| a.len() >= n) {
            return log;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{n} attempts of {id}: {}",
            log.body
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Checks a request as a Standard Webhooks receiver would, with the secret's key.
fn assert_signed(got: &Got, secret: &str) {
    let key = STANDARD
        .decode(secret.strip_prefix("whsec_").expect("whsec_ secret"))
        .expect("base64 key");
    let (id, timestamp) = (got.header("webhook-id"), got.header("webhook-timestamp"));
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(&got.body);
    let expected = format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()));
    assert_eq!(got.header("webhook-signature"), expected);
    let sent_at: i64 = timestamp.parse().expect("seconds");
    let now = corkboard::clock::now_ms() / 1000;
    assert!(
        (now - sent_at).abs() <= 10,
        "timestamp {sent_at}, now {now}"
    );
    assert_eq!(got.header("content-type"), "application/json");
}

both_stores! {
    async fn webhooks_are_managed_with_scope_star_and_their_secret_is_shown_once(app) {
        let doc = document(&app).await;
        let created = app
            .post(
                "/v1/webhooks",
                &json!({"url": "https://example.com/hook", "events": ["pin.created", "pin.created"], "description": "alerts"}),
            )
            .await
            .expect(200);
        conforms(&doc, &created, "post", "/v1/webhooks");
        let hook = created.data().clone();
        let id = id_of(&hook);
        assert!(id.starts_with("wh-"), "{hook}");
        let secret = hook["secret"].as_str().expect("the secret, once");
        let key = STANDARD.decode(secret.strip_prefix("whsec_").expect("whsec_")).unwrap();
        assert!(key.len() >= 24, "{} bytes", key.len());
        assert_eq!(hook["url"], "https://example.com/hook");
        assert_eq!(hook["events"], json!(["pin.created"]), "duplicates dropped");
        assert_eq!(hook["enabled"], true);
        assert_eq!(hook["disabled_reason"], Value::Null);

        let read = app.get(&format!("/v1/webhooks/{id}")).await.expect(200);
        conforms(&doc, &read, "get", "/v1/webhooks/{id}");
        assert_eq!(read.data()["secret"], Value::Null, "never shown again");
        assert!(!read.body.to_string().contains(secret));
        let listed = app.get("/v1/webhooks").await.expect(200);
        conforms(&doc, &listed, "get", "/v1/webhooks");
        assert_eq!(listed.data()[0]["id"], id.as_str());
        assert!(!listed.body.to_string().contains(secret));
        assert_eq!(listed.body["pagination"]["has_more"], false);

        let patched = app
            .patch(&format!("/v1/webhooks/{id}"), &json!({"events": ["*"], "description": null}))
            .await
            .expect(200);
        conforms(&doc, &patched, "patch", "/v1/webhooks/{id}");
        assert_eq!(patched.data()["events"], json!(["*"]));
        assert_eq!(patched.data()["description"], Value::Null);
        let none = app.get(&format!("/v1/webhooks/{id}/deliveries")).await.expect(200);
        conforms(&doc, &none, "get", "/v1/webhooks/{id}/deliveries");
        assert_eq!(none.data(), &json!([]));

        // Bad input: clear 4xx at the field.
        for (body, field) in [
            (json!({"url": "ftp://example.com/x", "events": ["*"]}), "url"),
            (json!({"url": "not a url", "events": ["*"]}), "url"),
            (json!({"url": "http://127.0.0.1:8080/x", "events": ["*"]}), "url"),
            (json!({"url": "http://192.168.1.10/x", "events": ["*"]}), "url"),
            (json!({"url": "http://100.64.0.1/x", "events": ["*"]}), "url"),
            (json!({"url": "http://[fd00::1]/x", "events": ["*"]}), "url"),
            (json!({"url": "http://[::ffff:10.0.0.1]/x", "events": ["*"]}), "url"),
            (json!({"url": "http://localhost:9/x", "events": ["*"]}), "url"),
            (json!({"url": "https://example.com/x", "events": ["pin.moved"]}), "events"),
            (json!({"url": "https://example.com/x", "events": []}), "events"),
        ] {
            let refused = app.post("/v1/webhooks", &body).await;
            conforms(&doc, &refused, "post", "/v1/webhooks");
            refused.expect_error(400, "VALIDATION_FAILED", Some(field));
        }
        app.patch(&format!("/v1/webhooks/{id}"), &json!({"url": "http://10.1.2.3/"}))
            .await
            .expect_error(400, "VALIDATION_FAILED", Some("url"));
        app.patch(&format!("/v1/webhooks/{id}"), &json!({}))
            .await
            .expect_error(400, "VALIDATION_FAILED", Some("body"));
        app.post("/v1/webhooks", &json!({"url": "https://example.com/x", "events": ["*"], "pinboard_id": "pb-none"}))
            .await
            .expect_error(404, "NOT_FOUND", None);

        // Another workspace's webhook is a 404; without `*`, a 403.
        let other = app.key_in("elsewhere", "*").await;
        for (method, path) in [
            (Method::GET, format!("/v1/webhooks/{id}")),
            (Method::PATCH, format!("/v1/webhooks/{id}")),
            (Method::DELETE, format!("/v1/webhooks/{id}")),
            (Method::GET, format!("/v1/webhooks/{id}/deliveries")),
            (Method::POST, format!("/v1/webhooks/{id}/test")),
        ] {
            call(&app, &other, method, &path, Some(&json!({"enabled": false})))
                .await
                .expect_error(404, "NOT_FOUND", None);
        }
        let theirs = call(&app, &other, Method::GET, "/v1/webhooks", None).await.expect(200);
        assert_eq!(theirs.data(), &json!([]));
        let writer = app.key_with("pins:read,pins:write,datasets:write,pinboards:write").await;
        for (method, path) in [
            (Method::GET, "/v1/webhooks".to_owned()),
            (Method::POST, "/v1/webhooks".to_owned()),
            (Method::GET, format!("/v1/webhooks/{id}")),
            (Method::POST, format!("/v1/webhooks/{id}/test")),
        ] {
            let refused = call(&app, &writer, method, &path, Some(&json!({"url": "https://example.com/x", "events": ["*"]}))).await;
            refused.expect_error(403, "SCOPE_REQUIRED", None);
        }

        let deleted = app.delete(&format!("/v1/webhooks/{id}")).await.expect(200);
        conforms(&doc, &deleted, "delete", "/v1/webhooks/{id}");
        assert_eq!(deleted.data(), &json!({"id": id, "deleted": true}));
        app.get(&format!("/v1/webhooks/{id}")).await.expect_error(404, "NOT_FOUND", None);
    }
}

both_stores! {
    with FAST;

    async fn matching_events_arrive_signed_as_their_frames(app) {
        let receiver = Receiver::start().await;
        let all = create_webhook(&app, json!({"url": receiver.url("/all"), "events": ["*"]})).await;
        let pin = app.create_pin(&stat_cards("watched")).await;
        let pin_id = pin["pin_id"].as_str().unwrap().to_owned();
        let one = create_webhook(
            &app,
            json!({"url": receiver.url("/one"), "events": ["pin.updated"], "pin_id": pin_id}),
        )
        .await;
        let mut stream = event_stream(&app).await;
        let other = app.create_pin(&stat_cards("other")).await;
        let other_id = other["pin_id"].as_str().unwrap();
        app.patch(&format!("/v1/pins/{other_id}"), &json!({"metadata": {"title": "not this one"}}))
            .await
            .expect(200);
        app.patch(&format!("/v1/pins/{pin_id}"), &json!({"metadata": {"title": "this one"}}))
            .await
            .expect(200);
        let frames = [
            stream.next_of("pin.created", Duration::from_secs(10)).await,
            stream.next_of("pin.updated", Duration::from_secs(10)).await,
            stream.next_of("pin.updated", Duration::from_secs(10)).await,
        ];

        // `*`: every event since its creation, the first pin's too.
        let got = receiver.wait_for("/all", 4, Duration::from_secs(10)).await;
        let last_three = &got[got.len() - 3..];
        for (got, frame) in last_three.iter().zip(&frames) {
            assert_signed(got, all["secret"].as_str().unwrap());
            assert_eq!(got.header("webhook-id"), frame.id.as_deref().unwrap(), "the event id");
            assert_eq!(got.json(), frame.data, "the frame's JSON");
        }
        assert_eq!(got[0].json()["type"], "pin.created");
        assert_eq!(got[0].json()["id"], pin_id.as_str());

        // One pin's updates only.
        let got = receiver.wait_for("/one", 1, Duration::from_secs(10)).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let got_now = receiver.got("/one");
        assert_eq!(got_now.len(), 1, "only the watched pin's update: {:?}", ids(&got_now));
        assert_signed(&got[0], one["secret"].as_str().unwrap());
        assert_eq!(got[0].json(), frames[2].data);

        let doc = document(&app).await;
        let log = attempts(&app, &app.key, &id_of(&one), 1).await;
        conforms(&doc, &log, "get", "/v1/webhooks/{id}/deliveries");
        let attempt = &log.data()[0];
        assert_eq!(attempt["event_id"], frames[2].id.as_deref().unwrap());
        assert_eq!(attempt["event_type"], "pin.updated");
        assert_eq!((attempt["delivered"].clone(), attempt["status_code"].clone()), (json!(true), json!(200)));
        assert_eq!(attempt["error"], Value::Null);
        assert!(attempt["duration_ms"].is_u64());

        let scrape = app.client.get(format!("{}/metrics", app.base)).send().await.unwrap().text().await.unwrap();
        assert!(scrape.contains("corkboard_webhook_deliveries_total{outcome=\"delivered\"}"), "{scrape}");
        assert!(scrape.contains("corkboard_webhook_delivery_duration_seconds_count"));
    }

    async fn webhooks_sharing_a_long_log_each_get_every_event_once_in_order(app) {
        let receiver = Receiver::start().await;
        let all = create_webhook(&app, json!({"url": receiver.url("/all"), "events": ["*"]})).await;
        let created = create_webhook(
            &app,
            json!({"url": receiver.url("/created"), "events": ["pin.created"]}),
        )
        .await;
        // 250 creates and 5 updates: the webhooks read two full pages of the log (which the
        // worker keeps and they share) and a last, shorter one.
        let pin_ids = create_pins(&app, 250).await;
        for id in &pin_ids[..5] {
            app.patch(&format!("/v1/pins/{id}"), &json!({"metadata": {"title": "moved on"}}))
                .await
                .expect(200);
        }

        let got_all = receiver.wait_for("/all", 255, Duration::from_secs(20)).await;
        let got_created = receiver.wait_for("/created", 250, Duration::from_secs(20)).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        for (path, got, n) in [("/all", got_all, 255), ("/created", got_created, 250)] {
            assert_eq!(receiver.got(path).len(), n, "{path}: each event once");
            let seqs: Vec<i64> = ids(&got).iter().map(|id| id.parse().unwrap()).collect();
            assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{path}: in log order: {seqs:?}");
            let created: Vec<String> = got
                .iter()
                .map(Got::json)
                .filter(|frame| frame["type"] == "pin.created")
                .map(|frame| frame["id"].as_str().unwrap().to_owned())
                .collect();
            assert_eq!(created, pin_ids, "{path}: every pin, in order");
        }
        let updates: Vec<Value> = receiver.got("/all")[250..].iter().map(|g| g.json()["type"].clone()).collect();
        assert_eq!(updates, vec![json!("pin.updated"); 5]);
        assert_signed(&receiver.got("/all")[120], all["secret"].as_str().unwrap());
        assert_signed(&receiver.got("/created")[249], created["secret"].as_str().unwrap());

        // The log of attempts keeps the newest 100, the last delivery first.
        let log = attempts(&app, &app.key, &id_of(&all), 100).await;
        let log = log.data().as_array().unwrap().clone();
        assert_eq!(log.len(), 100);
        let newest = receiver.got("/all")[254].header("webhook-id").to_owned();
        assert_eq!(log[0]["event_id"], newest.as_str());
        assert!(log.iter().all(|a| a["delivered"] == true));
    }

    async fn webhooks_enabled_together_on_a_long_log_each_get_every_event_once_in_order(app) {
        // Five webhooks start from the same place at the same moment: they wait on each
        // other's reads of the log's pages and read ahead of each other.
        let receiver = Receiver::start().await;
        let mut hooks = Vec::new();
        for w in 0..5 {
            let hook = create_webhook(
                &app,
                json!({"url": receiver.url(&format!("/w{w}")), "events": ["pin.created"]}),
            )
            .await;
            app.patch(&format!("/v1/webhooks/{}", id_of(&hook)), &json!({"enabled": false}))
                .await
                .expect(200);
            hooks.push(hook);
        }
        let pin_ids = create_pins(&app, 330).await;
        for hook in &hooks {
            app.patch(&format!("/v1/webhooks/{}", id_of(hook)), &json!({"enabled": true}))
                .await
                .expect(200);
        }
        for (w, hook) in hooks.iter().enumerate() {
            let path = format!("/w{w}");
            receiver.wait_for(&path, 330, Duration::from_secs(20)).await;
            tokio::time::sleep(Duration::from_millis(100)).await;
            let got = receiver.got(&path);
            let pins: Vec<String> = got
                .iter()
                .map(|g| g.json()["id"].as_str().unwrap().to_owned())
                .collect();
            assert_eq!(pins, pin_ids, "{path}: every pin once, in order");
            assert_signed(&got[329], hook["secret"].as_str().unwrap());
            // 330 attempts in one lease, of which the worker holds at most 200 between saves:
            // the log keeps exactly the newest 100, newest first.
            let log = attempts(&app, &app.key, &id_of(hook), 100).await;
            let logged: Vec<String> = log.data().as_array().unwrap().iter().map(|a| a["event_id"].as_str().unwrap().to_owned()).collect();
            let newest: Vec<String> = got[230..].iter().rev().map(|g| g.header("webhook-id").to_owned()).collect();
            assert_eq!(logged, newest, "{path}: the newest 100 attempts");
        }
    }

    async fn requests_keep_working_after_the_worker_stops(app) {
        // The worker delivers on threads of its own, which end when it stops; the store
        // connections it used must not end with them for the requests that take them next.
        let receiver = Receiver::start().await;
        let mut hooks = Vec::new();
        for w in 0..5 {
            hooks.push(create_webhook(&app, json!({"url": receiver.url(&format!("/w{w}")), "events": ["*"]})).await);
        }
        for round in 1..=3 {
            let paths: Vec<String> = hooks.iter().map(|hook| format!("/v1/webhooks/{}/test", id_of(hook))).collect();
            let empty = json!({});
            let tests = paths.iter().map(|path| app.post(path, &empty));
            for answer in futures::future::join_all(tests).await {
                answer.expect(200);
            }
            for w in 0..5 {
                receiver.wait_for(&format!("/w{w}"), round, Duration::from_secs(10)).await;
            }
        }
        app.state.webhooks.stop();
        tokio::time::sleep(Duration::from_millis(200)).await;
        // At once, so that they take every connection the store has.
        let pins: Vec<Value> = (0..12).map(|i| stat_cards(&format!("after {i}"))).collect();
        for _ in 0..3 {
            let posts = pins.iter().map(|pin| app.post("/v1/pins", pin));
            for answer in futures::future::join_all(posts).await {
                answer.expect(200);
            }
        }
    }

    async fn a_failed_delivery_is_retried_in_order_and_holds_back_only_its_webhook(app) {
        let receiver = Receiver::start().await;
        receiver.plan("/flaky", &[Answer::Status(500), Answer::Status(503)]);
        let flaky = create_webhook(&app, json!({"url": receiver.url("/flaky"), "events": ["pin.created"]})).await;
        create_webhook(&app, json!({"url": receiver.url("/steady"), "events": ["pin.created"]})).await;
        for n in 0..3 {
            app.create_pin(&stat_cards(&format!("pin {n}"))).await;
        }
        // The steady webhook has all three while the flaky one still waits on its first.
        let steady = receiver.wait_for("/steady", 3, Duration::from_secs(5)).await;
        let first = &ids(&steady)[0];
        let got = receiver.wait_for("/flaky", 5, Duration::from_secs(10)).await;
        let flaky_ids = ids(&got);
        assert_eq!(&flaky_ids[..3], &[first.clone(), first.clone(), first.clone()], "the same webhook-id on each retry");
        assert_eq!(flaky_ids[2..], ids(&steady)[..], "then in event order");
        assert_eq!(got[0].body, got[2].body, "the same body");

        let log = attempts(&app, &app.key, &id_of(&flaky), 5).await;
        let attempts = log.data().as_array().unwrap();
        assert_eq!(attempts.len(), 5, "{attempts:?}");
        let statuses: Vec<Value> = attempts.iter().rev().map(|a| a["status_code"].clone()).collect();
        assert_eq!(statuses, [json!(500), json!(503), json!(200), json!(200), json!(200)]);
        assert_eq!(attempts[4]["delivered"], false);
        let hook = app.get(&format!("/v1/webhooks/{}", id_of(&flaky))).await.expect(200);
        assert_eq!(hook.data()["failing_since"], Value::Null, "delivered since");
    }

    async fn the_test_event_goes_to_its_webhook_alone(app) {
        let receiver = Receiver::start().await;
        let tested = create_webhook(&app, json!({"url": receiver.url("/tested"), "events": ["pin.created"]})).await;
        create_webhook(&app, json!({"url": receiver.url("/everything"), "events": ["*"]})).await;
        let id = id_of(&tested);
        let doc = document(&app).await;
        let sent = app.post(&format!("/v1/webhooks/{id}/test"), &json!({})).await.expect(200);
        conforms(&doc, &sent, "post", "/v1/webhooks/{id}/test");
        assert_eq!(sent.data(), &json!({"webhook_id": id, "event_type": "webhook.test"}));
        let got = receiver.wait_for("/tested", 1, Duration::from_secs(5)).await;
        let body = got[0].json();
        assert_eq!(body["type"], "webhook.test");
        assert_eq!(body["id"], id.as_str());
        assert_signed(&got[0], tested["secret"].as_str().unwrap());
        let log = attempts(&app, &app.key, &id, 1).await;
        assert_eq!(log.data()[0]["event_type"], "webhook.test");
        assert_eq!(log.data()[0]["event_id"], got[0].header("webhook-id"));
        app.create_pin(&stat_cards("after the test")).await;
        let everything = receiver.wait_for("/everything", 1, Duration::from_secs(5)).await;
        assert_eq!(everything[0].json()["type"], "pin.created", "no test event for the others");

        app.patch(&format!("/v1/webhooks/{id}"), &json!({"enabled": false})).await.expect(200);
        app.post(&format!("/v1/webhooks/{id}/test"), &json!({}))
            .await
            .expect_error(409, "CONFLICT", None);
    }

    async fn addresses_are_checked_again_at_delivery(app) {
        // Created where private targets are allowed (whose worker is stopped), delivered by a
        // replica where they are not.
        let receiver = Receiver::start().await;
        app.state.webhooks.stop();
        let strict = app.replica(STRICT_FAST).await;
        let port = receiver.base.rsplit(':').next().unwrap().to_owned();
        let named = create_webhook(&app, json!({"url": format!("http://localhost:{port}/named"), "events": ["webhook.test"]})).await;
        let literal = create_webhook(&app, json!({"url": receiver.url("/literal"), "events": ["webhook.test"]})).await;
        for hook in [&named, &literal] {
            app.post(&format!("/v1/webhooks/{}/test", id_of(hook)), &json!({})).await.expect(200);
        }
        for (hook, refusal) in [(&named, "resolves to a loopback address"), (&literal, "the url's address is loopback")] {
            let log = attempts(&strict, &app.key, &id_of(hook), 1).await;
            let attempt = log.data()[0].clone();
            assert_eq!(attempt["delivered"], false, "{attempt}");
            assert_eq!(attempt["status_code"], Value::Null, "{attempt}");
            let error = attempt["error"].as_str().unwrap_or("");
            assert!(error.contains(refusal), "{error}");
            assert!(!error.contains(&port), "no url in the error: {error}");
        }
        assert!(receiver.got("/named").is_empty() && receiver.got("/literal").is_empty());
    }
}

both_stores! {
    with DISABLES_FAST;

    async fn a_webhook_failing_long_enough_is_disabled_and_resumes_where_it_stopped(app) {
        let receiver = Receiver::start().await;
        receiver.plan("/down", &[Answer::Status(503); 50]);
        let hook = create_webhook(&app, json!({"url": receiver.url("/down"), "events": ["pin.created"]})).await;
        let id = id_of(&hook);
        let mut stream = event_stream(&app).await;
        let first = app.create_pin(&stat_cards("first")).await;
        let disabled = stream.next_of("webhook.disabled", Duration::from_secs(10)).await;
        assert_eq!(disabled.data["id"], id.as_str());
        assert_eq!(disabled.data["data"]["enabled"], false);
        let read = app.get(&format!("/v1/webhooks/{id}")).await.expect(200);
        assert_eq!(read.data()["enabled"], false);
        let reason = read.data()["disabled_reason"].as_str().expect("a reason");
        assert!(reason.contains("503"), "{reason}");
        assert_eq!(disabled.data["data"]["disabled_reason"], reason);
        let tries = receiver.got("/down").len();
        assert!(tries >= 2, "retried before disabling: {tries}");

        // Held while disabled; the receiver is back; enabling sends both, in order.
        let second = app.create_pin(&stat_cards("second")).await;
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert_eq!(receiver.got("/down").len(), tries, "nothing sent while disabled");
        receiver.inbox.lock().unwrap().plans.clear();
        let resumed = app.patch(&format!("/v1/webhooks/{id}"), &json!({"enabled": true})).await.expect(200);
        assert_eq!(resumed.data()["enabled"], true);
        assert_eq!(resumed.data()["disabled_reason"], Value::Null);
        let got = receiver.wait_for("/down", tries + 2, Duration::from_secs(5)).await;
        let pins: Vec<Value> = got[tries..].iter().map(|g| g.json()["id"].clone()).collect();
        assert_eq!(pins, [first["pin_id"].clone(), second["pin_id"].clone()]);
        assert_eq!(got[tries].header("webhook-id"), got[0].header("webhook-id"), "the held event, same id");
    }
}

both_stores! {
    with NO_DELIVERY;

    async fn a_replica_stopped_mid_delivery_is_taken_over_after_its_lease(app) {
        let receiver = Receiver::start().await;
        receiver.plan("/slow", &[Answer::Hang]);
        create_webhook(&app, json!({"url": receiver.url("/slow"), "events": ["pin.created"]})).await;
        let first = app.replica(FAST).await;
        let pin = app.create_pin(&stat_cards("in flight")).await;
        let got = receiver.wait_for("/slow", 1, Duration::from_secs(5)).await;
        assert_eq!(got[0].json()["id"], pin["pin_id"]);
        drop(first); // stopped mid-delivery: nothing saved, its lease held
        let second = app.replica(FAST).await;
        let got = receiver.wait_for("/slow", 2, Duration::from_secs(10)).await;
        assert_eq!(got[1].header("webhook-id"), got[0].header("webhook-id"));
        assert_eq!(got[1].body, got[0].body);
        // Delivered now: nothing more comes.
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(receiver.got("/slow").len(), 2);
        drop(second);
    }

    async fn replicas_on_one_store_deliver_each_event_once_per_webhook(app) {
        let receiver = Receiver::start().await;
        let replicas = [app.replica(FAST).await, app.replica(FAST).await, app.replica(FAST).await];
        for path in ["/a", "/b", "/c"] {
            create_webhook(&app, json!({"url": receiver.url(path), "events": ["pin.created"]})).await;
        }
        for n in 0..30 {
            let body = stat_cards(&format!("pin {n}"));
            call(&replicas[n % 3], &app.key, Method::POST, "/v1/pins", Some(&body)).await.expect(200);
        }
        for path in ["/a", "/b", "/c"] {
            receiver.wait_for(path, 30, Duration::from_secs(15)).await;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        let first = ids(&receiver.got("/a"));
        for path in ["/a", "/b", "/c"] {
            let got = ids(&receiver.got(path));
            assert_eq!(got.len(), 30, "{path}: each event once: {got:?}");
            assert_eq!(got, first, "{path}: in event order");
        }
    }
}

both_stores! {
    with SLOW_POLL;

    // The worker looks after the commits of workspaces it knows to have a webhook: creating
    // one tells it, so the next write goes out at once, not at the next poll.
    async fn a_new_webhook_gets_the_next_write_without_waiting_for_a_poll(app) {
        let receiver = Receiver::start().await;
        // A write before any webhook: its news is no reason to look.
        app.create_pin(&stat_cards("before")).await;
        create_webhook(&app, json!({"url": receiver.url("/new"), "events": ["pin.created"]})).await;
        let pin = app.create_pin(&stat_cards("after")).await;
        let got = receiver.wait_for("/new", 1, Duration::from_secs(5)).await;
        assert_eq!(got[0].json()["id"], pin["pin_id"]);
    }
}
