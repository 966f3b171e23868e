//! Credentials, scopes and workspace isolation, seen from a client.

use corkboard::auth::{self, NewKey, Scopes, Tier};
use reqwest::{header::AUTHORIZATION, Method};
use serde_json::{json, Value};

use crate::{
    both_stores,
    helpers::{call, stat_cards, Resp, TestApp},
};

/// Sends `method path` with a JSON body and the raw `Authorization` value (none if `None`).
async fn with_authorization(
    app: &TestApp,
    authorization: Option<&str>,
    method: Method,
    path: &str,
    body: Option<&Value>,
) -> Resp {
    let mut req = app.client.request(method, format!("{}{path}", app.base));
    if let Some(value) = authorization {
        req = req.header(AUTHORIZATION, value);
    }
    if let Some(body) = body {
        req = req.json(body);
    }
    app.send(req).await
}

/// Creates a key with the library (to learn its id) and returns `(id, secret)`.
async fn key_with_id(app: &TestApp, workspace: &str, scopes: &str) -> (String, String) {
    let key = auth::create_key(
        &app.state.store,
        NewKey {
            workspace: workspace.into(),
            name: "auth-test".into(),
            scopes: Scopes::parse_list(scopes).unwrap(),
            tier: Tier::Team,
        },
    )
    .await
    .expect("create key");
    (key.id, key.secret.expose().to_owned())
}

/// Every pin route, with a body that would be valid for it, given one existing pin id.
fn every_route(id: &str) -> Vec<(Method, String, Option<Value>)> {
    vec![
        (Method::GET, "/v1/pins".into(), None),
        (Method::POST, "/v1/pins".into(), Some(stat_cards("x"))),
        (Method::GET, format!("/v1/pins/{id}"), None),
        (
            Method::PUT,
            format!("/v1/pins/{id}"),
            Some(json!({"metadata": {"title": "changed"}})),
        ),
        (
            Method::PATCH,
            format!("/v1/pins/{id}"),
            Some(json!({"metadata": {"title": "changed"}})),
        ),
        (Method::DELETE, format!("/v1/pins/{id}"), None),
        (Method::GET, format!("/v1/pins/{id}/versions"), None),
        (
            Method::POST,
            "/v1/pins/batch".into(),
            Some(json!({"pins": [stat_cards("x")]})),
        ),
        (
            Method::POST,
            "/v1/pins/batch/get".into(),
            Some(json!({"pin_ids": [id]})),
        ),
        (
            Method::POST,
            "/v1/pins/batch/update".into(),
            Some(json!({"pins": [{"id": id, "metadata": {"title": "changed"}}]})),
        ),
        (
            Method::POST,
            "/v1/pins/batch/delete".into(),
            Some(json!({"pin_ids": [id]})),
        ),
    ]
}

/// The routes that need `pins:write`.
fn write_routes(id: &str) -> Vec<(Method, String, Option<Value>)> {
    every_route(id)
        .into_iter()
        .filter(|(m, p, _)| *m != Method::GET && p != "/v1/pins/batch/get")
        .collect()
}

/// The routes that need `pins:read`.
fn read_routes(id: &str) -> Vec<(Method, String, Option<Value>)> {
    every_route(id)
        .into_iter()
        .filter(|(m, p, _)| *m == Method::GET || p == "/v1/pins/batch/get")
        .collect()
}

/// 401 with the RFC 6750 challenge: `Bearer` when no bearer credential came,
/// `Bearer error="invalid_token"` when one came and was refused.
#[track_caller]
fn assert_unauthorized(resp: Resp, what: &str) {
    assert_eq!(resp.status, 401, "{what}: {}", resp.body);
    assert_eq!(
        resp.header("www-authenticate"),
        Some("Bearer error=\"invalid_token\""),
        "{what}"
    );
    resp.expect_error(401, "UNAUTHORIZED", None);
}

#[track_caller]
fn assert_no_credential(resp: Resp, what: &str) {
    assert_eq!(resp.status, 401, "{what}: {}", resp.body);
    assert_eq!(resp.header("www-authenticate"), Some("Bearer"), "{what}");
    resp.expect_error(401, "UNAUTHORIZED", None);
}

#[track_caller]
fn assert_scope_required(resp: Resp, scope: &str, what: &str) {
    assert_eq!(resp.status, 403, "{what}: {}", resp.body);
    let resp = resp.expect_error(403, "SCOPE_REQUIRED", None);
    assert_eq!(
        resp.body["error"]["details"]["required_scope"],
        json!(scope),
        "{what}: {}",
        resp.body
    );
    let message = resp.body["error"]["message"].as_str().unwrap_or("");
    assert!(message.contains(scope), "{what}: {message}");
}

/// The pin as the `*` key reads it.
async fn read_pin(app: &TestApp, id: &str) -> Value {
    app.get(&format!("/v1/pins/{id}"))
        .await
        .expect(200)
        .data()
        .clone()
}

both_stores! {
    async fn missing_or_foreign_schemes_are_401(app) {
        let id = app.create_pin(&stat_cards("x")).await["pin_id"].as_str().unwrap().to_owned();
        let basic = "Basic dXNlcjpwYXNz".to_owned();
        let as_basic = format!("Basic {}", app.key);
        let bare = app.key.clone();
        for (method, path, body) in every_route(&id) {
            for authorization in [None, Some(basic.as_str()), Some(as_basic.as_str()), Some(bare.as_str()), Some("Bearer"), Some("Bearer ")] {
                let resp = with_authorization(&app, authorization, method.clone(), &path, body.as_ref()).await;
                assert_no_credential(resp, &format!("{method} {path} with {authorization:?}"));
            }
        }
        // Nothing changed or was created.
        let list = app.get("/v1/pins").await.expect(200);
        assert_eq!(list.data().as_array().map(Vec::len), Some(1));
        assert_eq!(read_pin(&app, &id).await["version"], json!(1));
    }

    async fn unknown_and_malformed_keys_are_401(app) {
        let mut tampered = app.key.clone();
        let last = tampered.pop().unwrap();
        tampered.push(if last == 'A' { 'B' } else { 'A' });
        let unknown = format!("cbk_{}", uuid::Uuid::new_v4().simple());
        let cases = [
            unknown.as_str(),
            tampered.as_str(),
            "cbk_short",
            "cbk_",
            "cbk_not*a*valid*key*at*all",
            "not-a-key-at-all-0123456789",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl",
        ];
        for key in cases {
            let resp = call(&app, key, Method::GET, "/v1/pins", None).await;
            assert_unauthorized(resp, key);
            let resp = call(&app, key, Method::POST, "/v1/pins", Some(&stat_cards("x"))).await;
            assert_unauthorized(resp, key);
        }
        let list = app.get("/v1/pins").await.expect(200);
        assert_eq!(list.data(), &json!([]));
    }

    async fn bearer_scheme_is_case_insensitive(app) {
        for scheme in ["Bearer", "bearer", "BEARER"] {
            let resp = with_authorization(&app, Some(&format!("{scheme} {}", app.key)), Method::GET, "/v1/pins", None).await;
            assert_eq!(resp.status, 200, "{scheme}: {}", resp.body);
        }
    }

    async fn revoked_key_is_401_at_once(app) {
        let (id, secret) = key_with_id(&app, "default", "pins:read,pins:write").await;
        let created = call(&app, &secret, Method::POST, "/v1/pins", Some(&stat_cards("before"))).await.expect(200);
        let pin = created.data()["pin_id"].as_str().unwrap().to_owned();
        call(&app, &secret, Method::GET, &format!("/v1/pins/{pin}"), None).await.expect(200);
        auth::revoke_key(&app.state.store, &id).await.expect("revoke");
        assert_unauthorized(call(&app, &secret, Method::GET, "/v1/pins", None).await, "list");
        assert_unauthorized(call(&app, &secret, Method::GET, &format!("/v1/pins/{pin}"), None).await, "get");
        let resp = call(&app, &secret, Method::POST, "/v1/pins", Some(&stat_cards("after"))).await;
        assert_unauthorized(resp, "create");
        let resp = call(&app, &secret, Method::DELETE, &format!("/v1/pins/{pin}"), None).await;
        assert_unauthorized(resp, "delete");
        // The pin made before revocation is intact, and nothing was made after.
        let list = app.get("/v1/pins").await.expect(200);
        let titles: Vec<&Value> = list.data().as_array().unwrap().iter().map(|p| &p["metadata"]["title"]).collect();
        assert_eq!(titles, [&json!("before")]);
        // Other keys keep working; revoking twice reports the key as gone.
        app.get("/v1/pins").await.expect(200);
        assert!(auth::revoke_key(&app.state.store, &id).await.is_err());
    }

    async fn read_only_key_cannot_write(app) {
        let id = app.create_pin(&stat_cards("x")).await["pin_id"].as_str().unwrap().to_owned();
        let reader = app.key_with("pins:read").await;
        for (method, path, body) in write_routes(&id) {
            let resp = call(&app, &reader, method.clone(), &path, body.as_ref()).await;
            assert_scope_required(resp, "pins:write", &format!("{method} {path}"));
        }
        // It can read, and nothing was written.
        for (method, path, body) in read_routes(&id) {
            let resp = call(&app, &reader, method.clone(), &path, body.as_ref()).await;
            assert_eq!(resp.status, 200, "{method} {path}: {}", resp.body);
        }
        let pin = read_pin(&app, &id).await;
        assert_eq!(pin["version"], json!(1));
        assert_eq!(pin["metadata"]["title"], json!("x"));
        assert_eq!(app.get("/v1/pins").await.expect(200).data().as_array().map(Vec::len), Some(1));
    }

    async fn write_only_key_cannot_read(app) {
        let id = app.create_pin(&stat_cards("x")).await["pin_id"].as_str().unwrap().to_owned();
        let writer = app.key_with("pins:write").await;
        for (method, path, body) in read_routes(&id) {
            let resp = call(&app, &writer, method.clone(), &path, body.as_ref()).await;
            assert_scope_required(resp, "pins:read", &format!("{method} {path}"));
        }
        // It can write.
        let resp = call(&app, &writer, Method::PATCH, &format!("/v1/pins/{id}"), Some(&json!({"metadata": {"title": "w"}}))).await;
        assert_eq!(resp.expect(200).data()["version"], json!(2));
        call(&app, &writer, Method::POST, "/v1/pins", Some(&stat_cards("y"))).await.expect(200);
        assert_eq!(app.get("/v1/pins").await.expect(200).data().as_array().map(Vec::len), Some(2));
    }

    async fn unrelated_scopes_grant_nothing(app) {
        let id = app.create_pin(&stat_cards("x")).await["pin_id"].as_str().unwrap().to_owned();
        let other = app.key_with("pinboards:read,pinboards:write,datasets:read,pins:share").await;
        for (method, path, body) in every_route(&id) {
            let resp = call(&app, &other, method.clone(), &path, body.as_ref()).await;
            let needed = if read_routes(&id).iter().any(|(m, p, _)| *m == method && *p == path) {
                "pins:read"
            } else {
                "pins:write"
            };
            assert_scope_required(resp, needed, &format!("{method} {path}"));
        }
        assert_eq!(read_pin(&app, &id).await["version"], json!(1));
    }

    async fn scope_is_checked_before_the_body(app) {
        let id = app.create_pin(&stat_cards("x")).await["pin_id"].as_str().unwrap().to_owned();
        let reader = app.key_with("pins:read").await;
        let invalid = json!({"pin_type": "nope", "colour": 1});
        for (method, path, _) in write_routes(&id) {
            let mut req = app.client.request(method.clone(), format!("{}{path}", app.base)).bearer_auth(&reader);
            if method != Method::DELETE {
                req = req.json(&invalid);
            }
            assert_scope_required(app.send(req).await, "pins:write", &format!("{method} {path}"));
            // Not even malformed JSON or a wrong content type is looked at.
            let req = app.client.request(method.clone(), format!("{}{path}", app.base)).bearer_auth(&reader).header("content-type", "text/plain").body("{");
            assert_scope_required(app.send(req).await, "pins:write", &format!("{method} {path} (text)"));
        }
        let writer = app.key_with("pins:write").await;
        let resp = call(&app, &writer, Method::POST, "/v1/pins/batch/get", Some(&json!({"pin_ids": 5}))).await;
        assert_scope_required(resp, "pins:read", "batch get");
    }

    async fn other_workspace_pins_are_404(app) {
        let a = app.key_in("team-a", "*").await;
        let b = app.key_in("team-b", "*").await;
        let created = call(&app, &a, Method::POST, "/v1/pins", Some(&stat_cards("secret"))).await.expect(200);
        let id = created.data()["pin_id"].as_str().unwrap().to_owned();
        let mine = call(&app, &b, Method::POST, "/v1/pins", Some(&stat_cards("mine"))).await.expect(200);
        let mine = mine.data()["pin_id"].as_str().unwrap().to_owned();
        let missing = call(&app, &b, Method::GET, "/v1/pins/p-doesnotexist", None).await.expect_error(404, "NOT_FOUND", None);

        let update = json!({"metadata": {"title": "stolen"}});
        let cases = [
            (Method::GET, format!("/v1/pins/{id}"), None),
            (Method::PUT, format!("/v1/pins/{id}"), Some(&update)),
            (Method::PATCH, format!("/v1/pins/{id}"), Some(&update)),
            (Method::DELETE, format!("/v1/pins/{id}"), None),
            (Method::GET, format!("/v1/pins/{id}/versions"), None),
        ];
        for (method, path, body) in cases {
            let resp = call(&app, &b, method.clone(), &path, body).await;
            assert_eq!(resp.status, 404, "{method} {path}: {}", resp.body);
            let resp = resp.expect_error(404, "NOT_FOUND", None);
            // Indistinguishable from a pin that doesn't exist.
            assert_eq!(resp.body["error"]["message"], missing.body["error"]["message"]);
        }

        let list = call(&app, &b, Method::GET, "/v1/pins", None).await.expect(200);
        let ids: Vec<&Value> = list.data().as_array().unwrap().iter().map(|p| &p["id"]).collect();
        assert_eq!(ids, [&json!(mine)]);

        let got = call(&app, &b, Method::POST, "/v1/pins/batch/get", Some(&json!({"pin_ids": [mine, id]}))).await.expect(200);
        assert_eq!(got.data().as_array().unwrap().len(), 1);
        assert_eq!(got.data()[0]["id"], json!(mine));
        assert_eq!(got.body["missing"], json!([id]));

        let batch_update = json!({"pins": [{"id": mine, "metadata": {"title": "mine2"}}, {"id": id, "metadata": {"title": "stolen"}}]});
        let resp = call(&app, &b, Method::POST, "/v1/pins/batch/update", Some(&batch_update)).await;
        assert_eq!(resp.status, 404, "batch update: {}", resp.body);
        resp.expect_error(404, "NOT_FOUND", None);
        let resp = call(&app, &b, Method::POST, "/v1/pins/batch/delete", Some(&json!({"pin_ids": [mine, id]}))).await;
        assert_eq!(resp.status, 404, "batch delete: {}", resp.body);
        resp.expect_error(404, "NOT_FOUND", None);

        // A's pin is untouched, and so is B's own (all or nothing).
        let pin = call(&app, &a, Method::GET, &format!("/v1/pins/{id}"), None).await.expect(200);
        assert_eq!(pin.data()["metadata"]["title"], json!("secret"));
        assert_eq!(pin.data()["version"], json!(1));
        let own = call(&app, &b, Method::GET, &format!("/v1/pins/{mine}"), None).await.expect(200);
        assert_eq!(own.data()["metadata"]["title"], json!("mine"));
        assert_eq!(own.data()["version"], json!(1));
        // Neither sees the other's pins in a list; the default workspace sees none of them.
        let list = call(&app, &a, Method::GET, "/v1/pins", None).await.expect(200);
        let ids: Vec<&Value> = list.data().as_array().unwrap().iter().map(|p| &p["id"]).collect();
        assert_eq!(ids, [&json!(id)]);
        assert_eq!(app.get("/v1/pins").await.expect(200).data(), &json!([]));
    }
}
