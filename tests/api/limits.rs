//! Rate limits (SPEC.md 8, CONTRACT.md 9) with their real default values, on both stores.
//! Windows are crossed by moving the server's clock, never by sleeping.

use corkboard::{auth::Tier, clock::Clock};
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::*;

/// SPEC.md 8 as configured by default (TestApp raises limits for every other test).
const SPEC_LIMITS: &str = "
[rate_limits.tiers.starter]
per_minute = 1
per_hour = 16
[rate_limits.tiers.professional]
per_minute = 60
per_hour = 1000
[rate_limits.tiers.team]
per_minute = 300
per_hour = 5000
[rate_limits.write_bucket]
capacity = 90
window_secs = 60
[rate_limits.auth_failures]
per_minute = 5
";

/// `mod $name { sqlite(), postgres() }` with the SPEC limits in force.
macro_rules! limited {
    ($(async fn $name:ident($app:ident) $body:block)*) => {$(
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            #[tokio::test]
            async fn sqlite() {
                let $app = TestApp::sqlite_with(SPEC_LIMITS).await;
                $body
            }
            #[tokio::test]
            async fn postgres() {
                $crate::skip_without_postgres!();
                let $app = TestApp::postgres_with(SPEC_LIMITS).await;
                $body
            }
        }
    )*};
}

const HEADERS: [&str; 7] = [
    "x-ratelimit-limit-hour",
    "x-ratelimit-remaining-hour",
    "x-ratelimit-reset-hour",
    "x-ratelimit-limit-minute",
    "x-ratelimit-remaining-minute",
    "x-ratelimit-reset-minute",
    "x-ratelimit-token-cost",
];

fn num(resp: &Resp, header: &str) -> i64 {
    resp.header(header)
        .unwrap_or_else(|| panic!("missing {header}: {:?}", resp.headers))
        .parse()
        .expect("integer header")
}

fn iso_in(app: &TestApp, ms: i64) -> String {
    corkboard::clock::iso(app.clock.now_ms() + ms)
}

fn pins(n: usize) -> Value {
    json!({ "pins": (0..n).map(|i| stat_cards(&format!("p{i}"))).collect::<Vec<_>>() })
}

/// With `spent` tokens of `key` (Professional: 60 a minute) spent this minute, sends 44 reads
/// and 11 batches of 15 pins at once, and checks that the answers are what checking them one
/// by one would give: granted answers' headers chain exactly, each 429 was due, and the next
/// request agrees. Returns the batches stored.
async fn charged_one_by_one(app: &TestApp, key: &str, spent: i64) -> i64 {
    let batch = pins(15);
    let requests = (0..55).map(|i| {
        let batch = &batch;
        async move {
            if i % 5 == 2 {
                call(app, key, Method::POST, "/v1/pins/batch", Some(batch)).await
            } else {
                call(app, key, Method::GET, "/v1/pins?limit=1", None).await
            }
        }
    });
    let answers = futures::future::join_all(requests).await;
    let mut granted = Vec::new();
    let (mut refused_reads, mut batches) = (0, 0);
    for answer in &answers {
        let cost = num(answer, "x-ratelimit-token-cost");
        match answer.status {
            200 => {
                let remaining = num(answer, "x-ratelimit-remaining-minute");
                assert_eq!(
                    num(answer, "x-ratelimit-remaining-hour"),
                    1000 - 60 + remaining
                );
                batches += i64::from(cost == 2);
                granted.push((remaining, cost));
            }
            429 => {
                let details = &answer.body["error"]["details"];
                assert_eq!(details["window"], json!("minute"), "{details}");
                assert!(details["used"].as_i64().unwrap() + cost > 60, "{details}");
                refused_reads += i64::from(cost == 1);
            }
            other => panic!("unexpected status {other}: {}", answer.body),
        }
    }
    granted.sort_by_key(|&(remaining, _)| std::cmp::Reverse(remaining));
    let mut left = 60 - spent;
    for (remaining, cost) in &granted {
        left -= cost;
        assert_eq!(*remaining, left, "granted (remaining, cost): {granted:?}");
    }
    assert!(
        left == 0 || (left == 1 && refused_reads == 0),
        "{left} left, {granted:?}"
    );
    let next = call(app, key, Method::GET, "/v1/pins?limit=1", None).await;
    if left == 0 {
        next.expect_error(429, "RATE_LIMIT_EXCEEDED", None);
    } else {
        assert_eq!(num(&next.expect(200), "x-ratelimit-remaining-minute"), 0);
    }
    batches
}

/// The pins of the default workspace, counted page by page.
async fn stored_pins(app: &TestApp) -> i64 {
    let mut path = "/v1/pins?limit=200".to_owned();
    let mut count = 0;
    loop {
        let page = app.get(&path).await.expect(200);
        count += page.data().as_array().unwrap().len() as i64;
        match page.body["pagination"]["next_cursor"].as_str() {
            Some(cursor) => path = format!("/v1/pins?limit=200&cursor={cursor}"),
            None => return count,
        }
    }
}

limited! {
    async fn all_seven_headers_on_success_with_truthful_values(app) {
        let key = app.key_of_tier(Tier::Professional).await;
        let start = app.clock.now_ms();
        let r = call(&app, &key, Method::GET, "/v1/pins", None).await.expect(200);
        for h in HEADERS {
            assert!(r.header(h).is_some(), "missing {h}");
        }
        assert_eq!(num(&r, "x-ratelimit-limit-minute"), 60);
        assert_eq!(num(&r, "x-ratelimit-remaining-minute"), 59);
        assert_eq!(num(&r, "x-ratelimit-limit-hour"), 1000);
        assert_eq!(num(&r, "x-ratelimit-remaining-hour"), 999);
        assert_eq!(num(&r, "x-ratelimit-token-cost"), 1);
        assert_eq!(r.header("x-ratelimit-reset-minute"), Some(corkboard::clock::iso(start + 60_000).as_str()));
        assert_eq!(r.header("x-ratelimit-reset-hour"), Some(corkboard::clock::iso(start + 3_600_000).as_str()));
    }

    async fn headers_on_client_errors_and_not_without_a_credential(app) {
        let key = app.key_of_tier(Tier::Professional).await;
        let missing = call(&app, &key, Method::GET, "/v1/pins/p-nope", None).await.expect(404);
        assert_eq!(num(&missing, "x-ratelimit-remaining-minute"), 59);
        let invalid = call(&app, &key, Method::POST, "/v1/pins", Some(&json!({"pin_type": "nope"}))).await.expect(400);
        assert_eq!(num(&invalid, "x-ratelimit-remaining-minute"), 58);
        let anonymous = app.send(app.client.get(format!("{}/v1/pins", app.base))).await.expect(401);
        assert!(anonymous.header("x-ratelimit-limit-minute").is_none());
    }

    async fn starter_minute_limit_then_reset_with_the_clock(app) {
        let key = app.key_of_tier(Tier::Starter).await;
        call(&app, &key, Method::GET, "/v1/pins", None).await.expect(200);
        let refused = call(&app, &key, Method::GET, "/v1/pins", None)
            .await
            .expect_error(429, "RATE_LIMIT_EXCEEDED", None);
        let details = &refused.body["error"]["details"];
        assert_eq!(details["limit"], json!(1));
        assert_eq!(details["used"], json!(1));
        assert_eq!(details["window"], json!("minute"));
        assert_eq!(details["tier"], json!("starter"));
        assert_eq!(details["resetAt"], json!(iso_in(&app, 60_000)));
        let upgrade = details["upgrade_url"].as_str().unwrap();
        assert!(upgrade.starts_with("http"));
        // It leads somewhere on a self-hosted server: this server's limits and who raises them.
        let page = app.client.get(upgrade).send().await.unwrap();
        assert_eq!(page.status(), 200, "{upgrade}");
        assert!(page.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
        let text = page.text().await.unwrap();
        assert!(text.contains("Rate limits on this server"), "{text}");
        assert!(text.contains("<td>starter</td><td class=\"num\">1</td>"), "the starter tier's minute: {text}");
        assert!(text.contains("corkboard keys create --tier team"), "{text}");
        assert_eq!(refused.header("retry-after"), Some("60"));
        assert!(refused.body["error"]["message"].as_str().unwrap().contains("1 of 1"));
        for h in HEADERS {
            assert!(refused.header(h).is_some(), "429 lacks {h}");
        }
        assert_eq!(num(&refused, "x-ratelimit-remaining-minute"), 0);

        app.clock.advance(30_000);
        let later = call(&app, &key, Method::GET, "/v1/pins", None).await.expect_error(429, "RATE_LIMIT_EXCEEDED", None);
        assert_eq!(later.header("retry-after"), Some("30"));
        app.clock.advance(30_000);
        call(&app, &key, Method::GET, "/v1/pins", None).await.expect(200);
    }

    async fn starter_hour_limit_holds_across_minutes(app) {
        let key = app.key_of_tier(Tier::Starter).await;
        for i in 0..16 {
            let r = call(&app, &key, Method::GET, "/v1/pins", None).await.expect(200);
            assert_eq!(num(&r, "x-ratelimit-remaining-hour"), 15 - i);
            app.clock.advance(60_000);
        }
        let refused = call(&app, &key, Method::GET, "/v1/pins", None).await.expect_error(429, "RATE_LIMIT_EXCEEDED", None);
        assert_eq!(refused.body["error"]["details"]["window"], json!("hour"));
        assert_eq!(refused.body["error"]["details"]["used"], json!(16));
        app.clock.advance(3_600_000);
        call(&app, &key, Method::GET, "/v1/pins", None).await.expect(200);
    }

    async fn professional_minute_limit_is_exact_and_headers_never_lie(app) {
        let key = app.key_of_tier(Tier::Professional).await;
        for i in 0..60 {
            let r = call(&app, &key, Method::GET, "/v1/pins", None).await.expect(200);
            assert_eq!(num(&r, "x-ratelimit-remaining-minute"), 59 - i);
        }
        call(&app, &key, Method::GET, "/v1/pins", None).await.expect_error(429, "RATE_LIMIT_EXCEEDED", None);
    }

    async fn team_minute_limit_is_300(app) {
        let key = app.key_of_tier(Tier::Team).await;
        for _ in 0..300 {
            call(&app, &key, Method::GET, "/v1/pins", None).await.expect(200);
        }
        let refused = call(&app, &key, Method::GET, "/v1/pins", None).await.expect_error(429, "RATE_LIMIT_EXCEEDED", None);
        assert_eq!(refused.body["error"]["details"]["limit"], json!(300));
        assert_eq!(refused.body["error"]["details"]["tier"], json!("team"));
    }

    async fn writes_draw_on_the_bucket_of_90_whatever_the_method(app) {
        let key = app.key_of_tier(Tier::Team).await;
        let id = call(&app, &key, Method::POST, "/v1/pins", Some(&stat_cards("w"))).await.expect(200).data()["pin_id"]
            .as_str()
            .unwrap()
            .to_owned();
        let path = format!("/v1/pins/{id}");
        let update = json!({"metadata": {"title": "t"}});
        for i in 1..90 {
            let method = if i % 2 == 0 { Method::PUT } else { Method::PATCH };
            let r = call(&app, &key, method, &path, Some(&update)).await.expect(200);
            // For writes the minute headers show the write bucket: it binds first.
            assert_eq!(num(&r, "x-ratelimit-limit-minute"), 90);
            assert_eq!(num(&r, "x-ratelimit-remaining-minute"), 89 - i);
        }
        let refused = call(&app, &key, Method::PATCH, &path, Some(&update)).await.expect_error(429, "RATE_LIMIT_EXCEEDED", None);
        assert_eq!(refused.body["error"]["details"]["window"], json!("write"));
        assert_eq!(refused.body["error"]["details"]["limit"], json!(90));
        call(&app, &key, Method::PUT, &path, Some(&update)).await.expect(429);
        call(&app, &key, Method::DELETE, &path, None).await.expect(429);
        call(&app, &key, Method::POST, "/v1/pins/batch", Some(&pins(1))).await.expect(429);
        // Reads are not writes.
        let read = call(&app, &key, Method::GET, &path, None).await.expect(200);
        assert_eq!(read.data()["version"], json!(90));
        call(&app, &key, Method::POST, "/v1/pins/batch/get", Some(&json!({"pin_ids": [id]}))).await.expect(200);
        app.clock.advance(60_000);
        call(&app, &key, Method::PATCH, &path, Some(&update)).await.expect(200);
    }

    async fn batches_cost_a_token_per_ten_items(app) {
        let key = app.key_of_tier(Tier::Team).await;
        let r = call(&app, &key, Method::POST, "/v1/pins/batch", Some(&pins(25))).await.expect(200);
        assert_eq!(num(&r, "x-ratelimit-token-cost"), 3);
        assert_eq!(num(&r, "x-ratelimit-remaining-hour"), 5000 - 3);
        let ids: Vec<Value> = r.data().as_array().unwrap().iter().map(|p| p["pin_id"].clone()).collect();
        let got = call(&app, &key, Method::POST, "/v1/pins/batch/get", Some(&json!({"pin_ids": ids}))).await.expect(200);
        assert_eq!(num(&got, "x-ratelimit-token-cost"), 3);
        let r = call(&app, &key, Method::POST, "/v1/pins/batch", Some(&pins(100))).await.expect(200);
        assert_eq!(num(&r, "x-ratelimit-token-cost"), 10);
        let r = call(&app, &key, Method::POST, "/v1/pins/batch", Some(&pins(1))).await.expect(200);
        assert_eq!(num(&r, "x-ratelimit-token-cost"), 1);
        // 3 + 3 + 10 + 1 tokens so far: the hour says so.
        assert_eq!(num(&r, "x-ratelimit-remaining-hour"), 5000 - 17);
    }

    async fn batches_cannot_bypass_the_bucket(app) {
        let key = app.key_of_tier(Tier::Team).await;
        for _ in 0..8 {
            call(&app, &key, Method::POST, "/v1/pins/batch", Some(&pins(100))).await.expect(200);
        }
        // 80 of 90 used: a batch of 11 (2 tokens) fits, then 9 singles, then nothing.
        call(&app, &key, Method::POST, "/v1/pins/batch", Some(&pins(11))).await.expect(200);
        for _ in 0..8 {
            call(&app, &key, Method::POST, "/v1/pins", Some(&stat_cards("s"))).await.expect(200);
        }
        call(&app, &key, Method::POST, "/v1/pins/batch", Some(&pins(20))).await.expect(429);
        call(&app, &key, Method::POST, "/v1/pins", Some(&stat_cards("s"))).await.expect(429);
    }

    async fn a_refused_request_changes_nothing(app) {
        let key = app.key_of_tier(Tier::Starter).await;
        call(&app, &key, Method::POST, "/v1/pins", Some(&stat_cards("first"))).await.expect(200);
        call(&app, &key, Method::POST, "/v1/pins", Some(&stat_cards("second"))).await.expect(429);
        let all = app.get("/v1/pins").await.expect(200);
        assert_eq!(all.data().as_array().unwrap().len(), 1);
        assert_eq!(all.data()[0]["metadata"]["title"], json!("first"));
    }

    // 44 reads and 11 batches of 15 (2 tokens each) at once against 60 a minute: the granted
    // answers' headers chain exactly as if they had come one by one (each one's remaining is
    // the one before less its cost), each refusal was due when it was made, the refused
    // batches stored nothing, and the next request finds the minute where the last left it.
    async fn concurrent_requests_of_one_key_are_charged_one_by_one(app) {
        let key = app.key_of_tier(Tier::Professional).await;
        let batches = charged_one_by_one(&app, &key, 0).await;
        assert_eq!(stored_pins(&app).await, batches * 15);
    }

    // PostgreSQL charges several keys' concurrent checks in one statement: each key still
    // comes out as if its requests had been checked one by one. The keys start from different
    // windows, so one key's answer given another's would show. (How often the timing puts
    // several keys in one group here varies; `limits::postgres`'s unit test makes one.)
    async fn concurrent_requests_of_several_keys_are_charged_each_one_by_one(app) {
        let mut keys = Vec::new();
        for _ in 0..3 {
            keys.push(app.key_of_tier(Tier::Professional).await);
        }
        let spent = [0, 7, 19];
        for (key, spent) in keys.iter().zip(spent) {
            for _ in 0..spent {
                call(&app, key, Method::GET, "/v1/pins?limit=1", None).await.expect(200);
            }
        }
        let runs = keys.iter().zip(spent).map(|(key, spent)| charged_one_by_one(&app, key, spent));
        let batches: i64 = futures::future::join_all(runs)
            .await
            .into_iter()
            .sum();
        assert_eq!(stored_pins(&app).await, batches * 15);
    }

    async fn limits_are_per_key(app) {
        let a = app.key_of_tier(Tier::Starter).await;
        let b = app.key_of_tier(Tier::Starter).await;
        call(&app, &a, Method::GET, "/v1/pins", None).await.expect(200);
        call(&app, &a, Method::GET, "/v1/pins", None).await.expect(429);
        call(&app, &b, Method::GET, "/v1/pins", None).await.expect(200);
    }

    async fn failed_authentications_are_limited_per_address(app) {
        let good = app.key_of_tier(Tier::Team).await;
        // Successful requests never count towards the guard.
        for _ in 0..10 {
            call(&app, &good, Method::GET, "/v1/pins", None).await.expect(200);
        }
        let guess = "cbk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
        for _ in 0..5 {
            call(&app, guess, Method::GET, "/v1/pins", None).await.expect_error(401, "UNAUTHORIZED", None);
        }
        let blocked = call(&app, guess, Method::GET, "/v1/pins", None).await.expect_error(429, "RATE_LIMIT_EXCEEDED", None);
        assert_eq!(blocked.header("retry-after"), Some("60"));
        // While blocked, failing credentials from this address are refused with 429, and
        // a request without one too; a valid key still passes (one broken script behind a
        // NAT must not lock out its team).
        call(&app, "cbk_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB", Method::GET, "/v1/pins", None)
            .await
            .expect_error(429, "RATE_LIMIT_EXCEEDED", None);
        call(&app, "", Method::GET, "/v1/pins", None).await.expect_error(429, "RATE_LIMIT_EXCEEDED", None);
        call(&app, &good, Method::GET, "/v1/pins", None).await.expect(200);
        app.clock.advance(60_000);
        call(&app, guess, Method::GET, "/v1/pins", None).await.expect_error(401, "UNAUTHORIZED", None);
    }
}

mod replicas {
    use super::*;

    /// Two servers over one PostgreSQL database share every key's limits.
    #[tokio::test]
    async fn the_61st_request_is_refused_whichever_replica_gets_it() {
        crate::skip_without_postgres!();
        let one = TestApp::postgres_with(SPEC_LIMITS).await;
        let two = one.replica(SPEC_LIMITS).await;
        let key = one.key_of_tier(Tier::Professional).await;
        for i in 0..60 {
            let server = if i % 2 == 0 { &one } else { &two };
            let r = call(server, &key, Method::GET, "/v1/pins", None)
                .await
                .expect(200);
            assert_eq!(num(&r, "x-ratelimit-remaining-minute"), 59 - i);
        }
        call(&one, &key, Method::GET, "/v1/pins", None)
            .await
            .expect(429);
        call(&two, &key, Method::GET, "/v1/pins", None)
            .await
            .expect(429);
    }

    /// Two replicas checking several keys at once (each replica charges its concurrent checks
    /// of all keys in one statement): every key grants exactly its 60 a minute between them,
    /// and no check fails (rows are locked in key order, so two statements never deadlock).
    #[tokio::test]
    async fn several_keys_at_once_on_two_replicas_grant_each_exactly_its_limit() {
        crate::skip_without_postgres!();
        let one = TestApp::postgres_with(SPEC_LIMITS).await;
        let two = one.replica(SPEC_LIMITS).await;
        let mut keys = Vec::new();
        for _ in 0..4 {
            keys.push(one.key_of_tier(Tier::Professional).await);
        }
        let requests = (0..4 * 70).map(|i| {
            let server = if i % 2 == 0 { &one } else { &two };
            let key = (i / 2) % 4;
            let keys = &keys;
            async move {
                let r = call(server, &keys[key], Method::GET, "/v1/pins?limit=1", None).await;
                (key, r.status)
            }
        });
        let mut granted = [0; 4];
        for (key, status) in futures::future::join_all(requests).await {
            match status {
                200 => granted[key] += 1,
                429 => {}
                other => panic!("unexpected status {other}"),
            }
        }
        assert_eq!(granted, [60; 4]);
    }

    /// The limiter's table gone: `closed` refuses with 503 and `/readyz` says so; `open`
    /// lets the request through, and a key it kept is read again first (no rate-limit
    /// statement confirms it): revoked by hand meanwhile, it is refused.
    #[tokio::test]
    async fn limiter_failure_follows_the_failure_mode() {
        crate::skip_without_postgres!();
        let closed = TestApp::postgres_with(SPEC_LIMITS).await;
        let open = closed
            .replica(&format!(
                "{SPEC_LIMITS}\n[rate_limits]\nfailure_mode = \"open\""
            ))
            .await;
        let key = closed.key.clone();
        call(&open, &key, Method::GET, "/v1/pins", None)
            .await
            .expect(200);
        let pool = closed.state.store.pg_connections().unwrap().pool().clone();
        sqlx::query("DROP TABLE rate_limit_windows")
            .execute(&pool)
            .await
            .unwrap();
        let refused = call(&closed, &key, Method::GET, "/v1/pins", None).await;
        assert_eq!(refused.status, 503);
        assert_eq!(refused.code(), "SERVICE_UNAVAILABLE");
        assert!(refused.header("retry-after").is_some());
        let ready = closed
            .send(closed.client.get(format!("{}/readyz", closed.base)))
            .await
            .expect(200);
        assert_eq!(ready.data()["rate_limiter"], json!("degraded"));
        call(&open, &key, Method::GET, "/v1/pins", None)
            .await
            .expect(200);
        sqlx::query("UPDATE api_keys SET revoked_at = 1 WHERE lookup = $1")
            .bind(&key[4..16])
            .execute(&pool)
            .await
            .unwrap();
        call(&open, &key, Method::GET, "/v1/pins", None)
            .await
            .expect_error(401, "UNAUTHORIZED", None);
    }
}

/// Behind a proxy, the guard counts the address the proxy names, not the proxy's own.
mod proxied_guard {
    use super::*;

    async fn scenario(app: TestApp) {
        let good = app.key_of_tier(Tier::Team).await;
        let guess = "cbk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
        let from = |ip: &'static str, key: &str| {
            app.client
                .get(format!("{}/v1/pins", app.base))
                .bearer_auth(key)
                .header("x-forwarded-for", format!("{ip}, 10.0.0.1"))
        };
        for _ in 0..5 {
            app.send(from("203.0.113.7", guess)).await.expect(401);
        }
        app.send(from("203.0.113.7", guess))
            .await
            .expect_error(429, "RATE_LIMIT_EXCEEDED", None);
        // A valid key from the blocked address still passes.
        app.send(from("203.0.113.7", &good)).await.expect(200);
        // Another client behind the same proxy is not affected.
        app.send(from("198.51.100.2", &good)).await.expect(200);
        app.send(from("198.51.100.2", guess)).await.expect(401);
    }

    /// SPEC_LIMITS ends inside `[rate_limits.auth_failures]`; the proxy header joins it.
    const PROXIED: &str = "client_ip_header = \"x-forwarded-for\"\n";

    #[tokio::test]
    async fn sqlite() {
        scenario(TestApp::sqlite_with(&format!("{SPEC_LIMITS}{PROXIED}")).await).await;
    }

    #[tokio::test]
    async fn postgres() {
        crate::skip_without_postgres!();
        scenario(TestApp::postgres_with(&format!("{SPEC_LIMITS}{PROXIED}")).await).await;
    }
}
