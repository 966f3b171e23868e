//! Keys can't outlive their creator's role, and a workspace can't hoard keys or roles: a key
//! a user made over the API never does more than that user's current role allows; keys and
//! custom roles per workspace are capped (`limits.keys_per_workspace`,
//! `limits.roles_per_workspace`), and so is a scopes list's length.

use reqwest::Method;
use serde_json::json;

use crate::{
    both_stores,
    helpers::{stat_cards, TestApp},
    idp_stores,
};

idp_stores! {
    async fn a_users_key_follows_the_users_current_role(idp) {
        // An owner makes a key that writes pins.
        let body = json!({"name": "from olga", "scopes": ["pins:read", "pins:write"]});
        let made = idp
            .call(&idp.user("olga", "owner"), Method::POST, "/v1/api-keys", Some(&body))
            .await
            .expect(200);
        let key = made.data()["key"].as_str().unwrap().to_owned();
        idp.call(&key, Method::POST, "/v1/pins", Some(&stat_cards("while owner")))
            .await
            .expect(200);

        // Olga becomes a viewer (her next token names the role): her key may only read now.
        idp.call(&idp.user("olga", "viewer"), Method::GET, "/v1/pins", None)
            .await
            .expect(200);
        let refused = idp
            .call(&key, Method::POST, "/v1/pins", Some(&stat_cards("after demotion")))
            .await
            .expect_error(403, "SCOPE_REQUIRED", None);
        assert_eq!(refused.body["error"]["details"]["required_scope"], json!("pins:write"));
        let listed = idp.call(&key, Method::GET, "/v1/pins", None).await.expect(200);
        assert_eq!(listed.data().as_array().map(Vec::len), Some(1), "nothing written after");

        // Back to owner: the key's own scopes apply again.
        idp.call(&idp.user("olga", "owner"), Method::GET, "/v1/pins", None)
            .await
            .expect(200);
        idp.call(&key, Method::POST, "/v1/pins", Some(&stat_cards("owner again")))
            .await
            .expect(200);
    }

    async fn a_key_made_by_a_users_key_inherits_the_same_ceiling(idp) {
        let made = idp
            .call(&idp.user("pia", "owner"), Method::POST, "/v1/api-keys",
                  Some(&json!({"name": "star", "scopes": ["*"]})))
            .await
            .expect(200);
        let star = made.data()["key"].as_str().unwrap().to_owned();
        let child = idp
            .call(&star, Method::POST, "/v1/api-keys",
                  Some(&json!({"name": "child", "scopes": ["pins:write"]})))
            .await
            .expect(200);
        let child = child.data()["key"].as_str().unwrap().to_owned();
        idp.call(&idp.user("pia", "viewer"), Method::GET, "/v1/pins", None)
            .await
            .expect(200);
        for key in [&star, &child] {
            idp.call(key, Method::POST, "/v1/pins", Some(&stat_cards("demoted")))
                .await
                .expect_error(403, "SCOPE_REQUIRED", None);
        }
    }
}

/// Settings with small caps, for the cap tests.
const SMALL_CAPS: &str = "[limits]\nkeys_per_workspace = 3\nroles_per_workspace = 2\n";

async fn each_store() -> Vec<TestApp> {
    let mut apps = vec![TestApp::sqlite_with(SMALL_CAPS).await];
    if crate::helpers::postgres_available().await {
        apps.push(TestApp::postgres_with(SMALL_CAPS).await);
    }
    apps
}

#[tokio::test]
async fn keys_and_roles_per_workspace_are_capped() {
    for app in each_store().await {
        // The app's own key is one of the 3 live keys.
        let mut made = Vec::new();
        for i in 0..2 {
            let key = app
                .post(
                    "/v1/api-keys",
                    &json!({"name": format!("k{i}"), "scopes": ["pins:read"]}),
                )
                .await
                .expect(200);
            made.push(key.data()["id"].as_str().unwrap().to_owned());
        }
        let refused = app
            .post(
                "/v1/api-keys",
                &json!({"name": "one too many", "scopes": ["pins:read"]}),
            )
            .await
            .expect_error(409, "CONFLICT", None);
        assert!(refused.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains('3'));
        // A revoked key frees its place.
        app.delete(&format!("/v1/api-keys/{}", made[0]))
            .await
            .expect(200);
        app.post(
            "/v1/api-keys",
            &json!({"name": "room again", "scopes": ["pins:read"]}),
        )
        .await
        .expect(200);

        for name in ["analyst", "auditor"] {
            app.post(
                "/v1/roles",
                &json!({"name": name, "permissions": ["pins:read"]}),
            )
            .await
            .expect(200);
        }
        app.post(
            "/v1/roles",
            &json!({"name": "third", "permissions": ["pins:read"]}),
        )
        .await
        .expect_error(409, "CONFLICT", None);
    }
}

both_stores! {
    async fn a_scopes_list_is_bounded(app) {
        let long: Vec<&str> = std::iter::repeat_n("pins:read", 33).collect();
        app.post("/v1/api-keys", &json!({"name": "long", "scopes": long}))
            .await
            .expect_error(400, "VALIDATION_FAILED", Some("scopes"));
        app.post("/v1/roles", &json!({"name": "long", "permissions": long}))
            .await
            .expect_error(400, "VALIDATION_FAILED", Some("permissions"));
        let list = app.get("/v1/api-keys").await.expect(200);
        assert_eq!(list.data().as_array().map(Vec::len), Some(1), "nothing stored");
    }
}
