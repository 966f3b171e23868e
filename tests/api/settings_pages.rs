//! The owners' settings pages (CONTRACT.md 16): `/settings/keys` (generate a key shown
//! once, bound to its maker's role; revoke it) and `/settings/people` (members, pending
//! invitations, invite, revoke). Owners only: anyone else gets the 404 page, and a visitor
//! without a session goes to sign-in. Each scenario on both stores.

use reqwest::{header, Method};
use serde_json::json;

use crate::{
    both_stores,
    helpers::call,
    invitations::{invite, Browser, OWNER},
    pages::inline_code,
};

both_stores! {
    async fn owners_generate_a_key_that_works_until_revoked(app) {
        let browser = Browser::default();
        let owner = browser.owner(&app).await;
        let page = browser.get(&app, "/settings/keys", Some(&owner)).await;
        assert_eq!(page.status, 200, "{}", page.body);
        let csp = page.headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap().to_owned();
        assert!(csp.contains("script-src 'self'") && csp.contains("form-action 'self'") && !csp.contains("unsafe"), "{csp}");
        assert_eq!(csp.matches("frame-ancestors").count(), 1, "one directive, or a browser complains: {csp}");
        assert_eq!(page.headers["x-frame-options"], "DENY");
        assert!(!inline_code(&page.body), "{}", page.body);
        for scope in ["pins:read", "pins:write", "pinboards:invite", "datasets:write", "*"] {
            assert!(page.body.contains(&format!("name=\"scopes\" value=\"{scope}\"")), "{scope}: {}", page.body);
        }
        assert!(page.body.contains("href=\"/settings/people\"") && page.body.contains("action=\"/logout\""), "{}", page.body);
        // The page's script is served from this site.
        let at = page.body.find("src=\"/assets/settings-").unwrap() + 5;
        let src = &page.body[at..at + page.body[at..].find('"').unwrap()];
        let script = app.client.get(format!("{}{src}", app.base)).send().await.unwrap();
        assert_eq!(script.status(), 200);
        assert!(script.headers()[header::CONTENT_TYPE].to_str().unwrap().starts_with("text/javascript"));

        // Cross-site, or without Origin: refused.
        let fields = [("name", "<b>CI</b>"), ("scopes", "pins:read"), ("scopes", "pins:write"), ("tier", "professional")];
        assert_eq!(browser.post_from(&app, "/settings/keys", &fields, Some(&owner), Some("https://evil.test")).await.status, 403);
        assert_eq!(browser.post_from(&app, "/settings/keys", &fields, Some(&owner), None).await.status, 403);
        // What to fix, the form kept.
        let no_scope = browser.post(&app, "/settings/keys", &[("name", "CI"), ("tier", "starter")], Some(&owner)).await;
        assert_eq!(no_scope.status, 422);
        assert!(no_scope.body.contains("at least one scope") && no_scope.body.contains("value=\"CI\""), "{}", no_scope.body);
        let no_name = browser.post(&app, "/settings/keys", &[("name", " "), ("scopes", "pins:read"), ("tier", "starter")], Some(&owner)).await;
        assert_eq!(no_name.status, 422);
        let bad_scope = browser.post(&app, "/settings/keys", &[("name", "CI"), ("scopes", "pins:raed"), ("tier", "starter")], Some(&owner)).await;
        assert_eq!(bad_scope.status, 422);
        // Above the owner's own tier (the configured default): refused.
        let above = browser.post(&app, "/settings/keys", &[("name", "CI"), ("scopes", "pins:read"), ("tier", "team")], Some(&owner)).await;
        assert_eq!(above.status, 403, "{}", above.body);

        // Made: shown once, escaped, in a read-only field.
        let made = browser.post(&app, "/settings/keys", &fields, Some(&owner)).await;
        assert_eq!(made.status, 200, "{}", made.body);
        let key = made.field("key-secret");
        assert!(key.starts_with("cbk_") && key.len() >= 40, "{key}");
        assert!(made.body.contains("&lt;b&gt;CI&lt;/b&gt;") && !made.body.contains("<b>CI"), "{}", made.body);
        assert!(made.body.contains("readonly"), "{}", made.body);
        // It works for what its scopes allow, and nothing else.
        call(&app, &key, Method::GET, "/v1/pins", None).await.expect(200);
        call(&app, &key, Method::POST, "/v1/pinboards", Some(&json!({"title": "x"}))).await.expect_error(403, "SCOPE_REQUIRED", None);
        // Listed as the API lists it, without the secret; bound to its maker.
        let listed = app.get("/v1/api-keys").await.expect(200);
        let record = listed.data().as_array().unwrap().iter().find(|k| k["name"] == "<b>CI</b>").unwrap().clone();
        assert_eq!(record["scopes"], json!(["pins:read", "pins:write"]));
        assert_eq!(record["tier"], "professional");
        assert!(key.starts_with(record["prefix"].as_str().unwrap()), "{record}");
        let ws = app.state.store.ensure_workspace("default").await.unwrap();
        let owner_id = app.state.store.find_users(OWNER).await.unwrap()[0].id.clone();
        let row = app.state.store.workspace_keys(&ws).await.unwrap().into_iter().find(|k| k.name == "<b>CI</b>").unwrap();
        assert_eq!(row.created_by.as_deref(), Some(owner_id.as_str()));
        let page = browser.get(&app, "/settings/keys", Some(&owner)).await;
        assert!(page.body.contains(record["prefix"].as_str().unwrap()) && !page.body.contains(&key), "{}", page.body);
        let id = record["id"].as_str().unwrap();
        assert!(page.body.contains(&format!("action=\"/settings/keys/{id}/revoke\"")), "{}", page.body);
        // Demoted, its maker takes the key's power with them. By hand here (no page demotes
        // an owner): PostgreSQL's triggers tell the server at once; a SQLite file edited by
        // another program is read again once a kept key is a second old.
        app.execute_sql(
            &format!("UPDATE memberships SET role = 'viewer' WHERE user_id = '{owner_id}'"),
            &format!("UPDATE memberships SET role = 'viewer' WHERE user_id = '{owner_id}'"),
        ).await;
        if app.state.store.backend_name() == "sqlite" {
            app.clock.advance(corkboard::auth::KEPT_FOR_MS);
        }
        call(&app, &key, Method::GET, "/v1/pins", None).await.expect(200);
        call(&app, &key, Method::POST, "/v1/pins", Some(&crate::helpers::stat_cards("x"))).await.expect_error(403, "SCOPE_REQUIRED", None);
        app.execute_sql(
            &format!("UPDATE memberships SET role = 'owner' WHERE user_id = '{owner_id}'"),
            &format!("UPDATE memberships SET role = 'owner' WHERE user_id = '{owner_id}'"),
        ).await;

        // Revoked after the confirmation's post: refused at once.
        let revoke = format!("/settings/keys/{id}/revoke");
        assert_eq!(browser.post_from(&app, &revoke, &[], Some(&owner), Some("https://evil.test")).await.status, 403);
        call(&app, &key, Method::GET, "/v1/pins", None).await.expect(200);
        let done = browser.post(&app, &revoke, &[], Some(&owner), ).await;
        assert_eq!(done.status, 303);
        assert_eq!(done.location(), "/settings/keys?revoked=1");
        call(&app, &key, Method::GET, "/v1/pins", None).await.expect_error(401, "UNAUTHORIZED", None);
        let page = browser.get(&app, done.location(), Some(&owner)).await;
        assert!(page.body.contains("Key revoked") && page.body.contains("revoked"), "{}", page.body);
        assert_eq!(browser.post(&app, &revoke, &[], Some(&owner)).await.status, 404);
        // Another workspace's key: the 404 page, and it stays live.
        let theirs = app.key_in("elsewhere", "*").await;
        let their_id = call(&app, &theirs, Method::GET, "/v1/api-keys", None).await.data()[0]["id"].as_str().unwrap().to_owned();
        assert_eq!(browser.post(&app, &format!("/settings/keys/{their_id}/revoke"), &[], Some(&owner)).await.status, 404);
        call(&app, &theirs, Method::GET, "/v1/pins", None).await.expect(200);
    }

    async fn owners_invite_on_the_people_page(app) {
        let browser = Browser::default();
        let owner = browser.owner(&app).await;
        let page = browser.get(&app, "/settings/people", Some(&owner)).await;
        assert_eq!(page.status, 200);
        assert!(page.body.contains("No pending invitations") && page.body.contains(OWNER), "{}", page.body);
        assert!(!inline_code(&page.body), "{}", page.body);
        let fields = [("email", "Vic@Example.test"), ("role", "viewer")];
        assert_eq!(browser.post_from(&app, "/settings/people", &fields, Some(&owner), Some("https://evil.test")).await.status, 403);
        let bad = browser.post(&app, "/settings/people", &[("email", "<not an email>"), ("role", "viewer")], Some(&owner)).await;
        assert_eq!(bad.status, 422);
        assert!(bad.body.contains("value=\"&lt;not an email&gt;\""), "{}", bad.body);
        let member = browser.post(&app, "/settings/people", &[("email", OWNER), ("role", "viewer")], Some(&owner)).await;
        assert_eq!(member.status, 409, "{}", member.body);

        let made = browser.post(&app, "/settings/people", &fields, Some(&owner)).await;
        assert_eq!(made.status, 200, "{}", made.body);
        let url = made.field("invite-link");
        assert!(url.starts_with(&format!("{}/invite/", app.base)), "{url}");
        let page = browser.get(&app, "/settings/people", Some(&owner)).await;
        assert!(page.body.contains("vic@example.test") && !page.body.contains(&url), "{}", page.body);
        let listed = app.get("/v1/invitations").await.expect(200);
        let id = listed.data()[0]["id"].as_str().unwrap().to_owned();
        assert!(page.body.contains(&format!("action=\"/settings/people/invitations/{id}/revoke\"")), "{}", page.body);

        // Revoked: its link is the 404 page.
        let revoke = format!("/settings/people/invitations/{id}/revoke");
        let done = browser.post(&app, &revoke, &[], Some(&owner)).await;
        assert_eq!(done.status, 303);
        let path = url.strip_prefix(&app.base).unwrap().to_owned();
        assert_eq!(browser.get(&app, &path, None).await.status, 404);
        assert_eq!(browser.post(&app, &revoke, &[], Some(&owner)).await.status, 404);

        // A new one is accepted: the member is listed with their role and name.
        let made = browser.post(&app, "/settings/people", &fields, Some(&owner)).await;
        browser.join(&app, &made.field("invite-link"), "Vic Viewer").await;
        let page = browser.get(&app, "/settings/people", Some(&owner)).await;
        assert!(page.body.contains("Vic Viewer") && page.body.contains("No pending invitations"), "{}", page.body);
    }

    async fn settings_are_the_404_page_to_anyone_but_owners(app) {
        let browser = Browser::default();
        let owner = browser.owner(&app).await;
        // Without a session: to sign-in, and back.
        let anonymous = browser.get(&app, "/settings/keys", None).await;
        assert_eq!(anonymous.status, 303);
        assert_eq!(anonymous.location(), "/login?next=%2Fsettings%2Fkeys");
        assert_eq!(browser.get(&app, "/settings/people", None).await.location(), "/login?next=%2Fsettings%2Fpeople");
        // An editor (who may invite over the API) is not an owner.
        let (_, url) = invite(&app, &app.key, "ed@example.test", "editor").await;
        let editor = browser.join(&app, &url, "Ed").await;
        let not_found = browser.get(&app, "/settings/keys", Some(&editor)).await;
        assert_eq!(not_found.status, 404);
        assert!(not_found.headers[header::CONTENT_TYPE].to_str().unwrap().starts_with("text/html"));
        assert_eq!(browser.get(&app, "/settings/people", Some(&editor)).await.status, 404);
        let fields = [("name", "Mine"), ("scopes", "pins:read"), ("tier", "starter")];
        assert_eq!(browser.post(&app, "/settings/keys", &fields, Some(&editor)).await.status, 404);
        assert_eq!(browser.post(&app, "/settings/people", &[("email", "x@example.test"), ("role", "viewer")], Some(&editor)).await.status, 404);
        let ws = app.state.store.ensure_workspace("default").await.unwrap();
        let keys = app.state.store.workspace_keys(&ws).await.unwrap();
        assert_eq!(keys.len(), 1, "only the test's own key");
        let first = keys[0].id.clone();
        assert_eq!(browser.post(&app, &format!("/settings/keys/{first}/revoke"), &[], Some(&editor)).await.status, 404);
        call(&app, &app.key, Method::GET, "/v1/pins", None).await.expect(200);
        // The editor's bar offers no owners' sections; the owner's does.
        let boards = browser.get(&app, "/boards", Some(&editor)).await;
        assert_eq!(boards.status, 200);
        let owners = browser.get(&app, "/settings/people", Some(&owner)).await;
        assert!(owners.body.contains("href=\"/settings/keys\""), "{}", owners.body);
    }
}
