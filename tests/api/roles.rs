//! Roles: the built-in ones, custom roles (`/v1/roles`), and what each lets a signed-in
//! user do.

use reqwest::Method;
use serde_json::{json, Value};

use crate::{both_stores, helpers::stat_cards, idp::IdpApp, idp_stores};

both_stores! {
    async fn custom_roles_are_created_listed_and_checked(app) {
        let made = app
            .post("/v1/roles", &json!({"name": "publisher", "permissions": ["pins:write", "pins:read"]}))
            .await
            .expect(200);
        assert_eq!(made.data()["name"], json!("publisher"));
        assert_eq!(made.data()["permissions"], json!(["pins:read", "pins:write"]));
        assert_eq!(made.data()["builtin"], json!(false));
        let list = app.get("/v1/roles").await.expect(200);
        let names: Vec<&str> = list.data().as_array().unwrap().iter()
            .map(|r| r["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["owner", "editor", "viewer", "publisher"]);
        assert_eq!(list.data()[0]["permissions"], json!(["*"]));
        assert_eq!(list.data()[2]["permissions"], json!(["datasets:read", "pins:read", "pinboards:read"]));

        let again = json!({"name": "publisher", "permissions": ["pins:read"]});
        app.post("/v1/roles", &again).await.expect_error(409, "CONFLICT", None);
        app.post("/v1/roles", &json!({"name": "owner", "permissions": ["pins:read"]}))
            .await
            .expect_error(409, "CONFLICT", None);
        for (body, field) in [
            (json!({"name": "Bad Name", "permissions": ["pins:read"]}), "name"),
            (json!({"name": "r", "permissions": []}), "permissions"),
            (json!({"name": "r", "permissions": ["pins:read", "nope"]}), "permissions[1]"),
        ] {
            app.post("/v1/roles", &body).await.expect_error(400, "VALIDATION_FAILED", Some(field));
        }
        // Another workspace doesn't see the role.
        let other = app.key_in("other", "pinboards:invite").await;
        let res = app
            .send(app.client.get(format!("{}/v1/roles", app.base)).bearer_auth(&other))
            .await
            .expect(200);
        assert_eq!(res.data().as_array().unwrap().len(), 3);
    }

    async fn roles_need_pinboards_invite_and_grant_nothing_beyond_it(app) {
        let reader = app.key_with("pins:read").await;
        let res = app
            .send(app.client.get(format!("{}/v1/roles", app.base)).bearer_auth(&reader))
            .await
            .expect_error(403, "SCOPE_REQUIRED", None);
        assert_eq!(res.body["error"]["details"]["required_scope"], json!("pinboards:invite"));
        let inviter = app.key_with("pinboards:invite,pins:read").await;
        let body = json!({"name": "writer", "permissions": ["pins:write"]});
        app.send(
            app.client.post(format!("{}/v1/roles", app.base)).bearer_auth(&inviter).json(&body),
        )
        .await
        .expect_error(403, "FORBIDDEN", None);
    }
}

idp_stores! {
    async fn a_custom_role_named_by_the_token_gives_its_scopes(idp) {
        idp.app
            .post("/v1/roles", &json!({"name": "publisher", "permissions": ["pins:read", "pins:write"]}))
            .await
            .expect(200);
        let token = idp.user("pat", "publisher");
        idp.call(&token, Method::POST, "/v1/pins", Some(&stat_cards("x"))).await.expect(200);
        idp.call(&token, Method::GET, "/v1/pinboards", None)
            .await
            .expect_error(403, "FORBIDDEN", None);
        // A role nobody created grants nothing.
        let ghost = idp.user("gus", "ghost");
        idp.call(&ghost, Method::GET, "/v1/pins", None)
            .await
            .expect_error(403, "FORBIDDEN", None);
    }
}

/// What each built-in role may do, route by route: 200 or 403 `FORBIDDEN`.
#[tokio::test]
async fn the_role_matrix_holds_on_every_kind_of_route() {
    let idp = IdpApp::start(false, "RS256", "").await;
    let pin = idp.app.create_pin(&stat_cards("shared")).await;
    let board = idp
        .app
        .post("/v1/pinboards", &json!({"title": "b"}))
        .await
        .expect(200);
    let (pin_id, board_id) = (
        pin["id"].as_str().unwrap(),
        board.data()["id"].as_str().unwrap(),
    );
    let routes: Vec<(Method, String, Option<Value>, [u16; 3])> = vec![
        (Method::GET, "/v1/pins".into(), None, [200, 200, 200]),
        (
            Method::GET,
            format!("/v1/pins/{pin_id}"),
            None,
            [200, 200, 200],
        ),
        (
            Method::POST,
            "/v1/pins".into(),
            Some(stat_cards("x")),
            [200, 200, 403],
        ),
        (
            Method::PATCH,
            format!("/v1/pins/{pin_id}"),
            Some(json!({"metadata": {"title": "t"}})),
            [200, 200, 403],
        ),
        (
            Method::GET,
            format!("/v1/pins/{pin_id}/share"),
            None,
            [200, 200, 403],
        ),
        (Method::GET, "/v1/pinboards".into(), None, [200, 200, 200]),
        (
            Method::GET,
            format!("/v1/pinboards/{board_id}"),
            None,
            [200, 200, 200],
        ),
        (
            Method::POST,
            "/v1/pinboards".into(),
            Some(json!({"title": "n"})),
            [200, 200, 403],
        ),
        (Method::GET, "/v1/roles".into(), None, [200, 200, 403]),
        (Method::GET, "/v1/api-keys".into(), None, [200, 403, 403]),
    ];
    for (role_index, role) in ["owner", "editor", "viewer"].into_iter().enumerate() {
        let token = idp.user(&format!("{role}-user"), role);
        for (method, path, body, expected) in &routes {
            let res = idp.call(&token, method.clone(), path, body.as_ref()).await;
            let want = expected[role_index];
            assert_eq!(res.status, want, "{role} {method} {path}: {}", res.body);
            if want == 403 {
                assert_eq!(res.code(), "FORBIDDEN", "{role} {method} {path}");
            }
        }
    }
}
