//! Inbound hooks (CONTRACT.md 14): create, list and delete (the url shown once, 8 characters
//! of its token after), workspace isolation; calls to `/in/{token}` in each mode, the dataset
//! they create, one version and one event per call, templated pins showing the new value,
//! GitHub and Standard Webhooks signatures, unknown tokens, bodies that are not JSON or too
//! large, and each hook's minute.

use base64::{engine::general_purpose::STANDARD, Engine};
use corkboard::clock::Clock;
use hmac::{Hmac, Mac};
use reqwest::Method;
use serde_json::{json, Value};
use sha2::Sha256;

use crate::{
    both_stores,
    datasets::{id_of, new_dataset},
    helpers::*,
    live::Stream,
    openapi::{conforms, document},
};

/// Creates a hook (asserting 200) and returns its record and its url.
async fn new_hook(app: &TestApp, body: Value) -> (Value, String) {
    let created = app
        .post("/v1/hooks", &body)
        .await
        .expect(200)
        .data()
        .clone();
    let url = created["url"].as_str().expect("url").to_owned();
    (created, url)
}

/// `POST url` with `body` as it is and `headers`, no credential.
async fn call_hook(app: &TestApp, url: &str, body: &[u8], headers: &[(&str, String)]) -> Resp {
    let mut req = app
        .client
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_vec());
    for (name, value) in headers {
        req = req.header(*name, value);
    }
    app.send(req).await
}

/// `POST url` with `body` as JSON, unsigned.
async fn push(app: &TestApp, url: &str, body: &Value) -> Resp {
    call_hook(app, url, body.to_string().as_bytes(), &[]).await
}

/// The workspace's dataset named `name`, if any.
async fn dataset_named(app: &TestApp, name: &str) -> Option<Value> {
    let list = app.get("/v1/datasets?limit=200").await.expect(200);
    list.data()
        .as_array()
        .expect("a list")
        .iter()
        .find(|d| d["name"] == json!(name))
        .cloned()
}

fn hmac_of(key: &[u8], message: &[u8]) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("any key");
    mac.update(message);
    mac.finalize().into_bytes().to_vec()
}

both_stores! {
    async fn a_hook_is_shown_once_then_by_its_prefix_and_deleted(app) {
        let doc = document(&app).await;
        let res = app.post("/v1/hooks", &json!({"name": "  CI builds ", "dataset": "builds"})).await.expect(200);
        conforms(&doc, &res, "post", "/v1/hooks");
        let created = res.data().clone();
        let id = id_of(&created);
        assert!(id.starts_with("hk-"), "{id}");
        let url = created["url"].as_str().unwrap().to_owned();
        let token = url.strip_prefix(&format!("{}/in/", app.base)).expect("the url is <public_url>/in/<token>");
        assert_eq!(token.len(), 43, "256 random bits");
        assert_eq!(created["token_prefix"], json!(&token[..8]));
        assert_eq!(
            (&created["name"], &created["dataset"], &created["mode"], &created["max_items"], &created["signature"]),
            (&json!("CI builds"), &json!("builds"), &json!("replace"), &json!(1000), &Value::Null)
        );

        let listed = app.get("/hooks").await.expect(200);
        conforms(&doc, &listed, "get", "/v1/hooks");
        let mut record = created.clone();
        record.as_object_mut().unwrap().remove("url");
        assert_eq!(listed.data(), &json!([record]), "the record without its url");
        assert!(!listed.body.to_string().contains(token), "the token is never listed");
        let second = app.post("/v1/hooks", &json!({"name": "two", "dataset": "builds"})).await.expect(200);
        let page = app.get("/v1/hooks?limit=1").await.expect(200);
        assert_eq!(page.data()[0]["id"], second.data()["id"], "newest first");
        let cursor = page.body["pagination"]["next_cursor"].as_str().expect("a next page").to_owned();
        let next = app.get(&format!("/v1/hooks?limit=1&cursor={cursor}")).await.expect(200);
        assert_eq!(next.data(), &json!([record]));
        assert_eq!(next.body["pagination"]["has_more"], json!(false));

        let deleted = app.delete(&format!("/v1/hooks/{id}")).await.expect(200);
        conforms(&doc, &deleted, "delete", "/v1/hooks/{id}");
        assert_eq!(deleted.data(), &json!({"id": id, "deleted": true}));
        let gone = push(&app, &url, &json!({"a": 1})).await.expect_error(404, "NOT_FOUND", None);
        conforms(&doc, &gone, "post", "/in/{token}");
        app.delete(&format!("/v1/hooks/{id}")).await.expect_error(404, "NOT_FOUND", None);
        assert_eq!(app.get("/v1/hooks").await.expect(200).data().as_array().unwrap().len(), 1);
        assert!(dataset_named(&app, "builds").await.is_none(), "nothing written");
    }

    async fn hooks_need_dataset_scopes_and_stay_in_their_workspace(app) {
        let (created, url) = new_hook(&app, json!({"name": "mine", "dataset": "mine"})).await;
        let id = id_of(&created);
        let other = app.key_in("elsewhere", "*").await;
        assert_eq!(call(&app, &other, Method::GET, "/v1/hooks", None).await.expect(200).data(), &json!([]));
        call(&app, &other, Method::DELETE, &format!("/v1/hooks/{id}"), None).await.expect_error(404, "NOT_FOUND", None);
        // What the hook writes is its own workspace's.
        let sent = push(&app, &url, &json!({"n": 1})).await.expect(200);
        assert_eq!(call(&app, &other, Method::GET, "/v1/datasets", None).await.expect(200).data(), &json!([]));
        let path = format!("/v1/datasets/{}", sent.data()["dataset_id"].as_str().unwrap());
        call(&app, &other, Method::GET, &path, None).await.expect_error(404, "NOT_FOUND", None);

        let reader = app.key_with("datasets:read").await;
        assert_eq!(call(&app, &reader, Method::GET, "/v1/hooks", None).await.expect(200).data()[0]["id"], json!(id));
        let body = json!({"name": "x", "dataset": "x"});
        let refused = call(&app, &reader, Method::POST, "/v1/hooks", Some(&body)).await.expect_error(403, "SCOPE_REQUIRED", None);
        assert_eq!(refused.body["error"]["details"]["required_scope"], json!("datasets:write"));
        call(&app, &reader, Method::DELETE, &format!("/v1/hooks/{id}"), None).await.expect_error(403, "SCOPE_REQUIRED", None);
        let pins_only = app.key_with("pins:read").await;
        call(&app, &pins_only, Method::GET, "/v1/hooks", None).await.expect_error(403, "SCOPE_REQUIRED", None);
        app.send(app.client.get(format!("{}/v1/hooks", app.base))).await.expect_error(401, "UNAUTHORIZED", None);
        assert_eq!(app.get("/v1/hooks").await.expect(200).data().as_array().unwrap().len(), 1);
    }

    async fn every_input_is_checked(app) {
        let long = "x".repeat(101);
        let cases = [
            (json!({"name": " \t", "dataset": "d"}), "name"),
            (json!({"name": long, "dataset": "d"}), "name"),
            (json!({"dataset": "d"}), "name"),
            (json!({"name": "n", "dataset": "Not-A-Name"}), "dataset"),
            (json!({"name": "n", "dataset": ""}), "dataset"),
            (json!({"name": "n", "dataset": "d", "mode": "upsert"}), "mode"),
            (json!({"name": "n", "dataset": "d", "mode": null}), "mode"),
            (json!({"name": "n", "dataset": "d", "max_items": 0}), "max_items"),
            (json!({"name": "n", "dataset": "d", "max_items": 10001}), "max_items"),
            (json!({"name": "n", "dataset": "d", "max_items": 1.5}), "max_items"),
            (json!({"name": "n", "dataset": "d", "signature": {"scheme": "hmac", "secret": "s"}}), "signature"),
            (json!({"name": "n", "dataset": "d", "signature": {"scheme": "github"}}), "signature"),
            (json!({"name": "n", "dataset": "d", "signature": {"scheme": "github", "secret": ""}}), "signature.secret"),
            (json!({"name": "n", "dataset": "d", "signature": {"scheme": "github", "secret": "s".repeat(257)}}), "signature.secret"),
            (json!({"name": "n", "dataset": "d", "signature": {"scheme": "standard", "secret": "c2VjcmV0"}}), "signature.secret"),
            (json!({"name": "n", "dataset": "d", "signature": {"scheme": "standard", "secret": "whsec_not base64!"}}), "signature.secret"),
            (json!({"name": "n", "dataset": "d", "token": "mine"}), "token"),
        ];
        for (body, field) in cases {
            let res = app.post("/v1/hooks", &body).await;
            assert_eq!(res.status, 400, "{body}: {}", res.body);
            let got = res.body["error"]["details"]["field"].as_str().unwrap_or("");
            assert!(got.starts_with(field), "{body}: field {got}, expected {field}");
        }
        assert_eq!(app.get("/v1/hooks").await.expect(200).data(), &json!([]), "nothing stored");
        let (edges, _) = new_hook(&app, json!({"name": "x".repeat(100), "dataset": "d", "mode": "append", "max_items": 10000,
            "signature": {"scheme": "standard", "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}})).await;
        assert_eq!(edges["signature"], json!({"scheme": "standard"}), "the secret is never shown");
        assert_eq!(edges["max_items"], json!(10000));
        let (whole, _) = new_hook(&app, json!({"name": "n", "dataset": "d", "max_items": 213.0})).await;
        assert_eq!(whole["max_items"], json!(213), "an integer to JSON Schema is one here too");
    }

    async fn replace_creates_the_dataset_then_each_call_is_one_version_and_one_event(app) {
        let mut stream = Stream::open(&app, "/v1/events?type=dataset.created&type=dataset.updated", &app.key, &[]).await;
        assert_eq!(stream.status, 200);
        let (_, url) = new_hook(&app, json!({"name": "stripe", "dataset": "payments"})).await;
        let doc = document(&app).await;
        let first = push(&app, &url, &json!({"paid": 10, "currency": "EUR"})).await.expect(200);
        conforms(&doc, &first, "post", "/in/{token}");
        let id = first.data()["dataset_id"].as_str().expect("dataset_id").to_owned();
        assert_eq!(first.data(), &json!({"dataset_id": id, "version": 1}));
        let dataset = app.get(&format!("/v1/datasets/{id}")).await.expect(200).data().clone();
        assert_eq!((&dataset["name"], &dataset["format"], &dataset["data"]),
            (&json!("payments"), &json!("json"), &json!({"paid": 10, "currency": "EUR"})));
        let event = stream.next_event().await;
        assert_eq!((event.event.as_deref(), &event.data["id"]), (Some("dataset.created"), &json!(id)));
        assert_eq!(event.data["data"], dataset);

        for (version, body) in [(2, json!({"paid": 12})), (3, json!([1, 2])), (4, json!("plain"))] {
            let sent = push(&app, &url, &body).await.expect(200);
            assert_eq!(sent.data(), &json!({"dataset_id": id, "version": version}));
            let event = stream.next_event().await;
            assert_eq!(event.event.as_deref(), Some("dataset.updated"));
            assert_eq!((&event.data["version"], &event.data["data"]["data"]), (&json!(version), &body), "one event per call, in order");
        }
        let read = app.get(&format!("/v1/datasets/{id}")).await.expect(200);
        assert_eq!((&read.data()["version"], &read.data()["data"]), (&json!(4), &json!("plain")));
    }

    async fn merge_patches_an_existing_dataset(app) {
        let existing = new_dataset(&app, "status", "json", json!({"api": {"up": true, "ms": 80}, "db": "ok"})).await;
        let (_, url) = new_hook(&app, json!({"name": "uptime", "dataset": "status", "mode": "merge"})).await;
        let sent = push(&app, &url, &json!({"api": {"ms": 95, "region": "eu"}, "db": null})).await.expect(200);
        assert_eq!(sent.data(), &json!({"dataset_id": id_of(&existing), "version": 2}));
        let read = app.get(&format!("/v1/datasets/{}", id_of(&existing))).await.expect(200);
        assert_eq!(read.data()["data"], json!({"api": {"up": true, "ms": 95, "region": "eu"}}));
        // A merge into a dataset that doesn't exist yet starts from nothing (RFC 7396).
        let (_, fresh) = new_hook(&app, json!({"name": "fresh", "dataset": "fresh", "mode": "merge"})).await;
        push(&app, &fresh, &json!({"a": 1, "b": null})).await.expect(200);
        assert_eq!(dataset_named(&app, "fresh").await.expect("created")["data"], json!({"a": 1}));
    }

    async fn append_keeps_the_newest_max_items(app) {
        let (_, url) = new_hook(&app, json!({"name": "deploys", "dataset": "deploys", "mode": "append", "max_items": 3})).await;
        let mut versions = Vec::new();
        for body in [json!({"n": 1}), json!([{"n": 2}, {"n": 3}]), json!({"n": 4}), json!([])] {
            versions.push(push(&app, &url, &body).await.expect(200).data()["version"].clone());
        }
        assert_eq!(versions, [json!(1), json!(2), json!(3), json!(4)], "one version per call, an empty array too");
        let dataset = dataset_named(&app, "deploys").await.expect("created");
        assert_eq!(dataset["data"], json!([{"n": 2}, {"n": 3}, {"n": 4}]), "each element of an array body, oldest dropped");
        // Data that is no array is not appended to, and stays as it was.
        let object = new_dataset(&app, "config", "json", json!({"a": 1})).await;
        let (_, onto) = new_hook(&app, json!({"name": "c", "dataset": "config", "mode": "append"})).await;
        push(&app, &onto, &json!({"n": 1})).await.expect_error(409, "CONFLICT", None);
        let read = app.get(&format!("/v1/datasets/{}", id_of(&object))).await.expect(200);
        assert_eq!((&read.data()["version"], &read.data()["data"]), (&json!(1), &json!({"a": 1})));
    }

    async fn a_templated_pin_shows_what_the_hook_sent(app) {
        let (_, url) = new_hook(&app, json!({"name": "sales", "dataset": "sales"})).await;
        push(&app, &url, &json!({"total": "1,250", "region": "EU"})).await.expect(200);
        let pin = json!({"pin_type": "stat-cards", "pin_config": {"cards": [
            {"title": "Sales {{sales.region}}", "value": "{{sales.total}}"}]}});
        let id = app.create_pin(&pin).await["pin_id"].as_str().unwrap().to_owned();
        let card = |res: Resp| res.expect(200).data()["pin_config"]["cards"][0].clone();
        let before = card(app.get(&format!("/v1/pins/{id}?render=true")).await);
        assert_eq!((&before["title"], &before["value"]), (&json!("Sales EU"), &json!("1,250")));
        push(&app, &url, &json!({"total": "1,300", "region": "EU"})).await.expect(200);
        let after = card(app.get(&format!("/v1/pins/{id}?render=true")).await);
        assert_eq!(after["value"], json!("1,300"));
        assert_eq!(card(app.get(&format!("/v1/pins/{id}")).await)["value"], json!("{{sales.total}}"), "stored as written");
    }

    async fn github_signatures_are_required_when_set(app) {
        let secret = "It's a Secret to Everybody";
        let (created, url) = new_hook(&app, json!({"name": "gh", "dataset": "gh",
            "signature": {"scheme": "github", "secret": secret}})).await;
        assert_eq!(created["signature"], json!({"scheme": "github"}));
        let body = br#"{"ref": "refs/heads/main", "commits": 3}"#;
        let good = format!("sha256={}", hex::encode(hmac_of(secret.as_bytes(), body)));
        let doc = document(&app).await;
        let refused = call_hook(&app, &url, body, &[]).await.expect_error(401, "UNAUTHORIZED", None);
        conforms(&doc, &refused, "post", "/in/{token}");
        for bad in [
            format!("sha256={}", hex::encode(hmac_of(b"another secret", body))),
            good.replace("sha256=", ""),
            "sha256=not-hex".to_owned(),
        ] {
            call_hook(&app, &url, body, &[("x-hub-signature-256", bad)]).await.expect_error(401, "UNAUTHORIZED", None);
        }
        // Signed over the raw bytes: the same JSON spaced otherwise is another body.
        let respaced = br#"{"ref":"refs/heads/main","commits":3}"#;
        call_hook(&app, &url, respaced, &[("x-hub-signature-256", good.clone())]).await.expect_error(401, "UNAUTHORIZED", None);
        assert!(dataset_named(&app, "gh").await.is_none(), "nothing written");
        let sent = call_hook(&app, &url, body, &[("x-hub-signature-256", good)]).await.expect(200);
        assert_eq!(sent.data()["version"], json!(1));
        assert_eq!(dataset_named(&app, "gh").await.unwrap()["data"], json!({"ref": "refs/heads/main", "commits": 3}));
    }

    async fn standard_webhooks_signatures_are_required_when_set(app) {
        let key = b"a key of Standard Webhooks, 32 b";
        let secret = format!("whsec_{}", STANDARD.encode(key));
        let (_, url) = new_hook(&app, json!({"name": "svix", "dataset": "invoices",
            "signature": {"scheme": "standard", "secret": secret}})).await;
        let body = br#"{"type": "invoice.paid", "amount": 4200}"#;
        let now = app.clock.now_ms() / 1000;
        let signed = |id: &str, at: i64, key: &[u8]| {
            let message = [format!("{id}.{at}.").as_bytes(), body].concat();
            vec![
                ("webhook-id", id.to_owned()),
                ("webhook-timestamp", at.to_string()),
                ("webhook-signature", format!("v1,{}", STANDARD.encode(hmac_of(key, &message)))),
            ]
        };
        let refusals = [
            Vec::new(),
            signed("msg_1", now, b"another key"),
            signed("msg_1", now - 600, key),
            signed("msg_1", now + 600, key),
            signed("msg_1", now, key)[..2].to_vec(),
        ];
        for headers in refusals {
            call_hook(&app, &url, body, &headers).await.expect_error(401, "UNAUTHORIZED", None);
        }
        let mut relabelled = signed("msg_1", now, key);
        relabelled[0].1 = "msg_2".into();
        call_hook(&app, &url, body, &relabelled).await.expect_error(401, "UNAUTHORIZED", None);
        assert!(dataset_named(&app, "invoices").await.is_none(), "nothing written");

        // Several signatures (a key being rotated): one that matches is enough.
        let mut rotated = signed("msg_1", now - 120, key);
        let wrong = format!("v1,{}", STANDARD.encode(hmac_of(b"old key", body)));
        rotated[2].1 = format!("{wrong} {}", rotated[2].1);
        call_hook(&app, &url, body, &rotated).await.expect(200);
        assert_eq!(dataset_named(&app, "invoices").await.unwrap()["data"], json!({"type": "invoice.paid", "amount": 4200}));
    }

    async fn unknown_tokens_and_bodies_that_are_not_json_are_refused(app) {
        let (_, url) = new_hook(&app, json!({"name": "n", "dataset": "notes"})).await;
        let token = url.rsplit('/').next().unwrap().to_owned();
        let mut forged = token.clone().into_bytes();
        forged[40] = if forged[40] == b'A' { b'B' } else { b'A' };
        let forged = String::from_utf8(forged).unwrap();
        for path in [format!("/in/{forged}"), "/in/short".to_owned(), format!("/in/{}", "A".repeat(43))] {
            push(&app, &format!("{}{path}", app.base), &json!({})).await.expect_error(404, "NOT_FOUND", None);
        }
        let doc = document(&app).await;
        for body in [&b"not json"[..], b"", b"{\"a\": 1", b"{\"a\": \"\\u0000\"}"] {
            let res = call_hook(&app, &url, body, &[]).await.expect_error(400, "VALIDATION_FAILED", None);
            conforms(&doc, &res, "post", "/in/{token}");
        }
        assert!(dataset_named(&app, "notes").await.is_none(), "nothing written");
        // Any content type: a sender that can't set the header still gets through.
        let plain = app.client.post(&url).header("content-type", "text/plain").body("[1, 2]");
        app.send(plain).await.expect(200);
        assert_eq!(dataset_named(&app, "notes").await.unwrap()["data"], json!([1, 2]));
        // Only POST.
        app.send(app.client.get(&url)).await.expect_error(405, "METHOD_NOT_ALLOWED", None);
    }

    async fn bodies_over_one_mib_are_413(app) {
        let (_, url) = new_hook(&app, json!({"name": "big", "dataset": "big"})).await;
        let over = json!({"s": "x".repeat(1_048_576)});
        let res = push(&app, &url, &over).await.expect_error(413, "PAYLOAD_TOO_LARGE", None);
        assert_eq!(res.body["error"]["details"]["limit_bytes"], json!(1_048_576));
        assert!(dataset_named(&app, "big").await.is_none(), "nothing written");
        let fits = json!({"s": "x".repeat(1_048_576 - 8)});
        push(&app, &url, &fits).await.expect(200);
    }
}

/// Each hook takes `hooks.per_minute` calls a minute; beyond, 429 with `Retry-After`, and the
/// next minute it takes calls again. Other hooks count apart.
#[tokio::test]
async fn each_hook_takes_its_calls_per_minute() {
    let overrides = "[hooks]\nper_minute = 2\n";
    let mut apps = vec![TestApp::sqlite_with(overrides).await];
    if postgres_available().await {
        apps.push(TestApp::postgres_with(overrides).await);
    }
    for app in apps {
        let (_, url) = new_hook(&app, json!({"name": "busy", "dataset": "busy"})).await;
        let (_, other) = new_hook(&app, json!({"name": "quiet", "dataset": "quiet"})).await;
        for n in 1..=2 {
            push(&app, &url, &json!({"n": n})).await.expect(200);
        }
        let refused =
            push(&app, &url, &json!({"n": 3}))
                .await
                .expect_error(429, "RATE_LIMIT_EXCEEDED", None);
        let retry: u64 = refused
            .header("retry-after")
            .expect("Retry-After")
            .parse()
            .unwrap();
        assert!((1..=60).contains(&retry), "{retry}");
        assert_eq!(refused.body["error"]["details"]["limit"], json!(2));
        assert_eq!(refused.body["error"]["details"]["window"], json!("minute"));
        conforms(&document(&app).await, &refused, "post", "/in/{token}");
        assert_eq!(
            dataset_named(&app, "busy").await.unwrap()["data"],
            json!({"n": 2}),
            "the refused call wrote nothing"
        );
        push(&app, &other, &json!({"n": 1})).await.expect(200);
        app.clock.advance(60_000);
        push(&app, &url, &json!({"n": 4})).await.expect(200);
    }
}
