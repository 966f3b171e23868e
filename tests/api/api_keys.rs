//! `/v1/api-keys`: keys made, listed and revoked over HTTP.

use corkboard::auth::Tier;
use reqwest::Method;
use serde_json::{json, Value};

use crate::{
    both_stores,
    helpers::{call, stat_cards, TestApp},
    idp::IdpApp,
};

both_stores! {
    async fn a_key_is_shown_once_listed_without_secrets_and_works_with_its_scopes(app) {
        let made = app
            .post("/v1/api-keys", &json!({"name": "ci reader", "scopes": ["pins:read"]}))
            .await
            .expect(200);
        let data = made.data();
        let secret = data["key"].as_str().unwrap().to_owned();
        assert!(secret.starts_with("cbk_"));
        assert_eq!(data["name"], json!("ci reader"));
        assert_eq!(data["scopes"], json!(["pins:read"]));
        assert_eq!(data["tier"], json!("professional"));
        assert_eq!(data["expires_at"], Value::Null);
        assert_eq!(data["last_used_at"], Value::Null);
        let id = data["id"].as_str().unwrap().to_owned();
        assert!(id.starts_with("key-"));

        call(&app, &secret, Method::GET, "/v1/pins", None).await.expect(200);
        let refused = call(&app, &secret, Method::POST, "/v1/pins", Some(&stat_cards("x")))
            .await
            .expect_error(403, "SCOPE_REQUIRED", None);
        assert_eq!(refused.body["error"]["details"]["required_scope"], json!("pins:write"));

        let list = app.get("/v1/api-keys").await.expect(200);
        let text = list.body.to_string();
        assert!(!text.contains(&secret), "a secret leaked: {text}");
        assert!(!text.contains("secret_hash") && !text.contains("\"key\""), "{text}");
        let listed = list.data().as_array().unwrap();
        let mine = listed.iter().find(|k| k["id"] == json!(id)).expect("listed");
        assert_eq!(mine["scopes"], json!(["pins:read"]));
        assert_eq!(mine["revoked_at"], Value::Null);
        // The first use is recorded before it is answered.
        assert!(mine["last_used_at"].is_string(), "{mine}");
    }

    async fn revocation_is_immediate_and_404s_after(app) {
        let made = app
            .post("/v1/api-keys", &json!({"name": "temp", "scopes": ["pins:read"]}))
            .await
            .expect(200);
        let (id, secret) = (made.data()["id"].as_str().unwrap(), made.data()["key"].as_str().unwrap());
        call(&app, secret, Method::GET, "/v1/pins", None).await.expect(200);
        let gone = app.delete(&format!("/v1/api-keys/{id}")).await.expect(200);
        assert_eq!(gone.data(), &json!({"id": id, "revoked": true}));
        call(&app, secret, Method::GET, "/v1/pins", None)
            .await
            .expect_error(401, "UNAUTHORIZED", None);
        app.delete(&format!("/v1/api-keys/{id}")).await.expect_error(404, "NOT_FOUND", None);
        let listed = app.get("/v1/api-keys").await.expect(200);
        let row = listed.data().as_array().unwrap().iter().find(|k| k["id"] == json!(id)).cloned().unwrap();
        assert!(row["revoked_at"].is_string());
    }

    async fn another_workspaces_keys_are_invisible(app) {
        let other = app.key_in("other", "*").await;
        let made = call(&app, &other, Method::POST, "/v1/api-keys", Some(&json!({"name": "o", "scopes": ["pins:read"]})))
            .await
            .expect(200);
        let id = made.data()["id"].as_str().unwrap();
        let mine = app.get("/v1/api-keys").await.expect(200);
        assert!(mine.data().as_array().unwrap().iter().all(|k| k["id"] != json!(id)));
        app.delete(&format!("/v1/api-keys/{id}")).await.expect_error(404, "NOT_FOUND", None);
    }

    async fn only_star_manages_keys_and_nobody_escalates(app) {
        let writer = app.key_with("pins:read,pins:write,pinboards:invite").await;
        let body = json!({"name": "x", "scopes": ["pins:read"]});
        let refused = call(&app, &writer, Method::POST, "/v1/api-keys", Some(&body))
            .await
            .expect_error(403, "SCOPE_REQUIRED", None);
        assert_eq!(refused.body["error"]["details"]["required_scope"], json!("*"));
        call(&app, &writer, Method::GET, "/v1/api-keys", None)
            .await
            .expect_error(403, "SCOPE_REQUIRED", None);
        let starter = app.key_of_tier(Tier::Starter).await;
        call(&app, &starter, Method::POST, "/v1/api-keys", Some(&json!({"name": "big", "scopes": ["*"], "tier": "team"})))
            .await
            .expect_error(403, "FORBIDDEN", None);
        // A starter key may make one request a minute.
        app.clock.advance(61_000);
        let capped = call(&app, &starter, Method::POST, "/v1/api-keys", Some(&json!({"name": "small", "scopes": ["*"]})))
            .await
            .expect(200);
        assert_eq!(capped.data()["tier"], json!("starter"));
    }

    async fn bodies_are_checked(app) {
        for (body, field) in [
            (json!({"name": "x", "scopes": []}), "scopes"),
            (json!({"name": "x", "scopes": ["pins:read", "pins:raed"]}), "scopes[1]"),
            (json!({"name": "", "scopes": ["pins:read"]}), "name"),
            (json!({"name": "x", "scopes": ["pins:read"], "expires_at": "2001-01-01T00:00:00Z"}), "expires_at"),
            (json!({"name": "x", "scopes": ["pins:read"], "expires_at": "tomorrow"}), "expires_at"),
            (json!({"name": "x", "scopes": ["pins:read"], "tier": "gold"}), "tier"),
            (json!({"name": "x", "scopes": ["pins:read"], "owner": "me"}), "owner"),
        ] {
            app.post("/v1/api-keys", &body).await.expect_error(400, "VALIDATION_FAILED", Some(field));
        }
    }

    async fn an_expired_key_is_refused(app) {
        let in_an_hour = corkboard::clock::iso(corkboard::clock::now_ms() + 3_600_000);
        let made = app
            .post("/v1/api-keys", &json!({"name": "short", "scopes": ["pins:read"], "expires_at": in_an_hour}))
            .await
            .expect(200);
        assert_eq!(made.data()["expires_at"], json!(in_an_hour));
        let secret = made.data()["key"].as_str().unwrap();
        call(&app, secret, Method::GET, "/v1/pins", None).await.expect(200);
        app.clock.advance(2 * 3_600_000);
        call(&app, secret, Method::GET, "/v1/pins", None)
            .await
            .expect_error(401, "UNAUTHORIZED", None);
    }
}

/// Each replica keeps keys it has seen (`auth/key_cache.rs`): a revocation on one must
/// still count on the other by the next request, every time.
#[tokio::test]
async fn a_revoked_key_fails_at_once_on_another_replica() {
    crate::skip_without_postgres!();
    let app = TestApp::postgres().await;
    let replica = app.replica("").await;
    for round in 0..20 {
        let made = app
            .post(
                "/v1/api-keys",
                &json!({"name": format!("shared {round}"), "scopes": ["pins:read"]}),
            )
            .await
            .expect(200);
        let (id, secret) = (
            made.data()["id"].as_str().unwrap(),
            made.data()["key"].as_str().unwrap(),
        );
        for _ in 0..2 {
            call(&replica, secret, Method::GET, "/v1/pins", None)
                .await
                .expect(200);
        }
        app.delete(&format!("/v1/api-keys/{id}")).await.expect(200);
        call(&replica, secret, Method::GET, "/v1/pins", None)
            .await
            .expect_error(401, "UNAUTHORIZED", None);
    }
}

/// A change made outside any server (psql, another tool) reaches every replica through
/// PostgreSQL's triggers: a key's creator demoted by hand takes its power at once.
#[tokio::test]
async fn a_demotion_by_hand_counts_at_once_on_every_replica() {
    crate::skip_without_postgres!();
    let idp = IdpApp::start(true, "RS256", "").await;
    let replica = idp.app.replica("").await;
    let made = idp
        .call(
            &idp.user("rita", "owner"),
            Method::POST,
            "/v1/api-keys",
            Some(&json!({"name": "rita's", "scopes": ["pins:read", "pins:write"]})),
        )
        .await
        .expect(200);
    let key = made.data()["key"].as_str().unwrap().to_owned();
    for _ in 0..10 {
        for server in [&idp.app, &replica] {
            call(
                server,
                &key,
                Method::POST,
                "/v1/pins",
                Some(&stat_cards("owner")),
            )
            .await
            .expect(200);
        }
        idp.app
            .execute_sql("", "UPDATE memberships SET role = 'viewer'")
            .await;
        for server in [&idp.app, &replica] {
            call(
                server,
                &key,
                Method::POST,
                "/v1/pins",
                Some(&stat_cards("viewer")),
            )
            .await
            .expect_error(403, "SCOPE_REQUIRED", None);
            call(server, &key, Method::GET, "/v1/pins", None)
                .await
                .expect(200);
        }
        idp.app
            .execute_sql("", "UPDATE memberships SET role = 'owner'")
            .await;
    }
}

#[tokio::test]
async fn an_owner_token_manages_keys_and_an_editor_token_does_not() {
    let idp = IdpApp::start(false, "RS256", "").await;
    let body = json!({"name": "from the dashboard", "scopes": ["pins:read", "pins:write"]});
    let made = idp
        .call(
            &idp.user("olga", "owner"),
            Method::POST,
            "/v1/api-keys",
            Some(&body),
        )
        .await
        .expect(200);
    assert_eq!(made.data()["tier"], json!("professional"));
    idp.call(
        &idp.user("ed", "editor"),
        Method::POST,
        "/v1/api-keys",
        Some(&body),
    )
    .await
    .expect_error(403, "FORBIDDEN", None);
    idp.call(&idp.user("ed", "editor"), Method::GET, "/v1/api-keys", None)
        .await
        .expect_error(403, "FORBIDDEN", None);
}
