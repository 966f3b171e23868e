//! Invitations (CONTRACT.md 16): `/v1/invitations` (scope `pinboards:invite`), the link's
//! page `/invite/{token}` (a password, or a signed-in user of that email, joins with the
//! role), and board collaborators invited by an email that has no user yet, bound at that
//! user's first sign-in. Each scenario on both stores; forms are posted as a browser posts
//! them, with this site's `Origin`.

use reqwest::{header, Method};
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::{
    both_stores,
    helpers::{call, TestApp},
    idp,
    pages::{browser_client, inline_code, Page},
};

pub const PASSWORD: &str = "correct horse battery";
pub const OWNER: &str = "owner@example.test";

/// A browser-like client (no redirects followed) of a server.
pub struct Browser {
    pub client: reqwest::Client,
}

impl Default for Browser {
    fn default() -> Self {
        Browser {
            client: browser_client(),
        }
    }
}

impl Browser {
    pub async fn get(&self, app: &TestApp, path: &str, cookie: Option<&str>) -> Page {
        let mut req = self.client.get(format!("{}{path}", app.base));
        if let Some(cookie) = cookie {
            req = req.header(header::COOKIE, cookie);
        }
        Page::read(req.send().await.unwrap()).await
    }

    /// Posts `form` to `path` from `origin` (none: no `Origin` header).
    pub async fn post_from(
        &self,
        app: &TestApp,
        path: &str,
        form: &[(&str, &str)],
        cookie: Option<&str>,
        origin: Option<&str>,
    ) -> Page {
        let mut req = self
            .client
            .post(format!("{}{path}", app.base))
            .header("x-forwarded-for", "10.7.7.7")
            .form(form);
        if let Some(origin) = origin {
            req = req.header(header::ORIGIN, origin);
        }
        if let Some(cookie) = cookie {
            req = req.header(header::COOKIE, cookie);
        }
        Page::read(req.send().await.unwrap()).await
    }

    /// Posts `form` to `path` from this site.
    pub async fn post(
        &self,
        app: &TestApp,
        path: &str,
        form: &[(&str, &str)],
        cookie: Option<&str>,
    ) -> Page {
        self.post_from(app, path, form, cookie, Some(&app.base))
            .await
    }

    /// Sets up the owner of the default workspace ([`OWNER`]); their session cookie.
    pub async fn owner(&self, app: &TestApp) -> String {
        let link = corkboard::auth::local::new_setup_link(&app.state.store, &app.base)
            .await
            .unwrap();
        let path = link.expose().strip_prefix(&app.base).unwrap().to_owned();
        let form = [
            ("name", "Olga Owner"),
            ("email", OWNER),
            ("password", PASSWORD),
            ("confirm", PASSWORD),
        ];
        let done = self.post(app, &path, &form, None).await;
        assert_eq!(done.status, 303, "{}", done.body);
        done.session()
    }

    /// Accepts the invitation at `url` with a name and [`PASSWORD`]; the new session.
    pub async fn join(&self, app: &TestApp, url: &str, name: &str) -> String {
        let path = url.strip_prefix(&app.base).unwrap();
        let form = [
            ("name", name),
            ("password", PASSWORD),
            ("confirm", PASSWORD),
        ];
        let done = self.post(app, path, &form, None).await;
        assert_eq!(done.status, 303, "{}", done.body);
        assert_eq!(done.location(), "/boards");
        done.session()
    }
}

/// Invites `email` as `role` with the `*` key: (id, url).
pub async fn invite(app: &TestApp, key: &str, email: &str, role: &str) -> (String, String) {
    let made = call(
        app,
        key,
        Method::POST,
        "/v1/invitations",
        Some(&json!({"email": email, "role": role})),
    )
    .await
    .expect(200);
    let data = made.data();
    (
        data["id"].as_str().unwrap().to_owned(),
        data["url"].as_str().unwrap().to_owned(),
    )
}

both_stores! {
    async fn invitations_over_the_api(app) {
        let made = app.post("/v1/invitations", &json!({"email": " Ann@Example.test ", "role": "viewer"})).await.expect(200);
        let data = made.data().clone();
        let id = data["id"].as_str().unwrap().to_owned();
        assert!(id.starts_with("inv-"), "{data}");
        assert_eq!(data["email"], "ann@example.test");
        assert_eq!(data["role"], "viewer");
        let url = data["url"].as_str().unwrap();
        let token = url.strip_prefix(&format!("{}/invite/", app.base)).unwrap();
        assert!(token.len() >= 43, "256 bits: {token}");
        let created = chrono::DateTime::parse_from_rfc3339(data["created_at"].as_str().unwrap()).unwrap();
        let expires = chrono::DateTime::parse_from_rfc3339(data["expires_at"].as_str().unwrap()).unwrap();
        assert_eq!((expires - created).num_days(), 7);

        // Listed without the link; the store holds only its hash.
        let listed = app.get("/v1/invitations").await.expect(200);
        assert_eq!(listed.data().as_array().unwrap().len(), 1);
        assert_eq!(listed.data()[0]["id"], json!(id));
        assert!(listed.data()[0].get("url").is_none() && !listed.body.to_string().contains(token));
        let ws = app.state.store.ensure_workspace("default").await.unwrap();
        let stored = app.state.store.invitations(&ws, corkboard::clock::now_ms()).await.unwrap();
        assert_eq!(stored[0].token_hash, hex::encode(Sha256::digest(token.as_bytes())));

        // Refusals.
        app.post("/v1/invitations", &json!({"email": "ann@example.test", "role": "editor"})).await.expect_error(409, "CONFLICT", None);
        app.post("/v1/invitations", &json!({"email": "not an email", "role": "viewer"})).await.expect_error(400, "VALIDATION_FAILED", Some("email"));
        app.post("/v1/invitations", &json!({"email": "bo@example.test", "role": "boss"})).await.expect_error(400, "VALIDATION_FAILED", Some("role"));
        app.post("/v1/invitations", &json!({"email": "bo@example.test"})).await.expect_error(400, "VALIDATION_FAILED", None);
        let reader = app.key_with("pins:read").await;
        for (method, path) in [(Method::GET, "/v1/invitations".to_owned()), (Method::POST, "/v1/invitations".to_owned()), (Method::DELETE, format!("/v1/invitations/{id}"))] {
            let body = json!({"email": "bo@example.test", "role": "viewer"});
            let res = call(&app, &reader, method, &path, Some(&body)).await.expect_error(403, "SCOPE_REQUIRED", None);
            assert_eq!(res.body["error"]["details"]["required_scope"], "pinboards:invite");
        }
        // An inviter without `*` can't invite an owner; a viewer or editor, yes.
        let inviter = app.key_with("pinboards:invite,pins:read,pinboards:read,datasets:read").await;
        call(&app, &inviter, Method::POST, "/v1/invitations", Some(&json!({"email": "bo@example.test", "role": "owner"}))).await.expect_error(403, "FORBIDDEN", None);
        call(&app, &inviter, Method::POST, "/v1/invitations", Some(&json!({"email": "bo@example.test", "role": "viewer"}))).await.expect(200);

        // Another workspace sees none of them, and can't revoke them.
        let other = app.key_in("elsewhere", "*").await;
        let theirs = call(&app, &other, Method::GET, "/v1/invitations", None).await.expect(200);
        assert_eq!(theirs.data(), &json!([]));
        call(&app, &other, Method::DELETE, &format!("/v1/invitations/{id}"), None).await.expect_error(404, "NOT_FOUND", None);
        // The same email may be invited into another workspace.
        invite(&app, &other, "ann@example.test", "viewer").await;

        // Revoked: the link is the 404 page at once; a second revoke is a 404.
        let browser = Browser::default();
        let path = url.strip_prefix(&app.base).unwrap().to_owned();
        assert_eq!(browser.get(&app, &path, None).await.status, 200);
        let revoked = app.delete(&format!("/v1/invitations/{id}")).await.expect(200);
        assert_eq!(revoked.data(), &json!({"id": id, "revoked": true}));
        let gone = browser.get(&app, &path, None).await;
        assert_eq!(gone.status, 404);
        assert!(gone.headers[header::CONTENT_TYPE].to_str().unwrap().starts_with("text/html"));
        app.delete(&format!("/v1/invitations/{id}")).await.expect_error(404, "NOT_FOUND", None);
        // Revoked, the email may be invited again.
        invite(&app, &app.key, "ann@example.test", "editor").await;
    }

    async fn an_invited_person_sets_a_password_and_joins_signed_in(app) {
        let browser = Browser::default();
        let (_, url) = invite(&app, &app.key, "Eve@Example.test", "editor").await;
        let path = url.strip_prefix(&app.base).unwrap().to_owned();
        let form = browser.get(&app, &path, None).await;
        assert_eq!(form.status, 200);
        let csp = form.headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap().to_owned();
        assert!(csp.contains("script-src 'self'") && csp.contains("form-action 'self'"), "{csp}");
        assert_eq!(form.headers[header::REFERRER_POLICY], "same-origin");
        assert!(form.body.contains("eve@example.test") && form.body.contains("editor"), "{}", form.body);
        assert!(form.body.contains(&format!("action=\"{path}\"")) && form.body.contains("name=\"confirm\""), "{}", form.body);
        assert!(!inline_code(&form.body), "{}", form.body);

        // Cross-site or without Origin: refused, and the link still works.
        let fields = [("name", "Eve"), ("password", PASSWORD), ("confirm", PASSWORD)];
        assert_eq!(browser.post_from(&app, &path, &fields, None, Some("https://evil.test")).await.status, 403);
        assert_eq!(browser.post_from(&app, &path, &fields, None, None).await.status, 403);
        // Password rules: the form again, what was typed escaped, never the password.
        for (password, confirm, says) in [("eleven char", "eleven char", "12 to 128"), (PASSWORD, "correct horse battery!", "differ")] {
            let again = browser.post(&app, &path, &[("name", "<Eve>"), ("password", password), ("confirm", confirm)], None).await;
            assert_eq!(again.status, 422, "{}", again.body);
            assert!(again.body.contains(says) && again.body.contains("value=\"&lt;Eve&gt;\""), "{}", again.body);
            assert!(!again.body.contains(password) && again.headers.get(header::SET_COOKIE).is_none());
        }
        assert_eq!(browser.get(&app, &path, None).await.status, 200);

        let cookie = browser.join(&app, &url, "Eve").await;
        let boards = browser.get(&app, "/boards", Some(&cookie)).await;
        assert_eq!(boards.status, 200);
        assert!(boards.body.contains("eve@example.test"), "{}", boards.body);
        let store = &app.state.store;
        let users = store.find_users("eve@example.test").await.unwrap();
        assert_eq!(users.len(), 1);
        let ws = store.ensure_workspace("default").await.unwrap();
        assert_eq!(store.member_role(&ws, &users[0].id).await.unwrap().as_deref(), Some("editor"));
        // No longer pending; the link is used up.
        assert_eq!(app.get("/v1/invitations").await.expect(200).data(), &json!([]));
        assert_eq!(browser.get(&app, &path, None).await.status, 404);
        assert_eq!(browser.post(&app, &path, &fields, None).await.status, 404);
        // The password signs in.
        let signed = browser.post(&app, "/login", &[("email", "eve@example.test"), ("password", PASSWORD), ("next", "/boards")], None).await;
        assert_eq!(signed.status, 303, "{}", signed.body);
        // Unknown links are the 404 page too.
        assert_eq!(browser.get(&app, "/invite/not-a-token", None).await.status, 404);
        assert_eq!(browser.get(&app, &format!("/invite/{}", "a".repeat(300)), None).await.status, 404);
    }

    async fn expired_links_are_gone(app) {
        let browser = Browser::default();
        let (_, url) = invite(&app, &app.key, "late@example.test", "viewer").await;
        let path = url.strip_prefix(&app.base).unwrap().to_owned();
        app.execute_sql(
            "UPDATE invitations SET expires_at = created_at",
            "UPDATE invitations SET expires_at = created_at",
        ).await;
        assert_eq!(browser.get(&app, &path, None).await.status, 404);
        let fields = [("name", "Late"), ("password", PASSWORD), ("confirm", PASSWORD)];
        assert_eq!(browser.post(&app, &path, &fields, None).await.status, 404);
        assert_eq!(app.get("/v1/invitations").await.expect(200).data(), &json!([]));
        assert!(app.state.store.find_users("late@example.test").await.unwrap().is_empty());
        // Expired, the email may be invited again.
        invite(&app, &app.key, "late@example.test", "viewer").await;
    }

    async fn a_signed_in_user_of_the_email_joins_with_a_button(app) {
        let browser = Browser::default();
        let owner = browser.owner(&app).await;
        // The owner of `default` is invited into another workspace.
        let team = app.key_in("team-b", "*").await;
        let (_, url) = invite(&app, &team, OWNER, "viewer").await;
        let path = url.strip_prefix(&app.base).unwrap().to_owned();
        // Signed out: a password for an email that has an account is refused (409), the
        // link still works.
        let fields = [("name", "Olga"), ("password", PASSWORD), ("confirm", PASSWORD)];
        let taken = browser.post(&app, &path, &fields, None).await;
        assert_eq!(taken.status, 409, "{}", taken.body);
        assert!(taken.body.contains("sign in"), "{}", taken.body);
        // Another signed-in user: told, and refused.
        let (_, eve_url) = invite(&app, &app.key, "eve@example.test", "viewer").await;
        let eve = browser.join(&app, &eve_url, "Eve").await;
        let page = browser.get(&app, &path, Some(&eve)).await;
        assert!(page.body.contains("signed in as eve@example.test") && !page.body.contains("name=\"join\""), "{}", page.body);
        let refused = browser.post(&app, &path, &[("join", "1")], Some(&eve)).await;
        assert_eq!(refused.status, 403, "{}", refused.body);
        // The owner: one button.
        let page = browser.get(&app, &path, Some(&owner)).await;
        assert_eq!(page.status, 200);
        assert!(page.body.contains("name=\"join\"") && !page.body.contains("name=\"password\""), "{}", page.body);
        let joined = browser.post(&app, &path, &[("join", "1")], Some(&owner)).await;
        assert_eq!(joined.status, 303, "{}", joined.body);
        let cookie = joined.session();
        assert_ne!(cookie, owner);
        // The new session is in team-b: its boards, as a viewer (no settings).
        let board = call(&app, &team, Method::POST, "/v1/pinboards", Some(&json!({"title": "Team B board"}))).await.expect(200);
        let boards = browser.get(&app, "/boards", Some(&cookie)).await;
        assert!(boards.body.contains("Team B board"), "{}", boards.body);
        assert_eq!(browser.get(&app, &format!("/boards/{}", board.data()["id"].as_str().unwrap()), Some(&cookie)).await.status, 200);
        assert_eq!(browser.get(&app, "/settings/keys", Some(&cookie)).await.status, 404);
        // The old session ended with the join; the link is used.
        assert_eq!(browser.get(&app, "/boards", Some(&owner)).await.status, 303);
        assert_eq!(browser.get(&app, &path, Some(&cookie)).await.status, 404);
    }

    async fn a_board_invites_an_email_with_no_user_yet(app) {
        let browser = Browser::default();
        let board = app.post("/v1/pinboards", &json!({"title": "Ops"})).await.expect(200);
        let board = board.data()["id"].as_str().unwrap().to_owned();
        let path = format!("/v1/pinboards/{board}/collaborators");
        let pending = app.post(&path, &json!({"user": "New@Example.test", "role": "viewer"})).await.expect(200);
        assert_eq!(pending.data()["pending"], true);
        assert_eq!(pending.data()["user_id"], "new@example.test");
        assert_eq!(pending.data()["email"], "new@example.test");
        app.post(&path, &json!({"user": "new@example.test", "role": "editor"})).await.expect_error(409, "CONFLICT", None);
        // An unknown id (not an email) is still a 404.
        app.post(&path, &json!({"user": "usr-nobody", "role": "viewer"})).await.expect_error(404, "NOT_FOUND", None);
        // Changed and listed while pending; another board of another workspace is a 404.
        let changed = app.patch(&format!("{path}/new@example.test"), &json!({"role": "editor"})).await.expect(200);
        assert_eq!((changed.data()["role"].as_str(), changed.data()["pending"].as_bool()), (Some("editor"), Some(true)));
        let listed = app.get(&path).await.expect(200);
        assert_eq!(listed.data().as_array().unwrap().len(), 1);
        let other = app.key_in("elsewhere", "*").await;
        call(&app, &other, Method::POST, &path, Some(&json!({"user": "x@example.test", "role": "viewer"}))).await.expect_error(404, "NOT_FOUND", None);
        call(&app, &other, Method::DELETE, &format!("{path}/new@example.test"), None).await.expect_error(404, "NOT_FOUND", None);
        // A collaborator can't hand out more than they hold, pending or not.
        let invite_only = app.key_with("pinboards:invite,pins:read,pinboards:read,datasets:read").await;
        call(&app, &invite_only, Method::POST, &path, Some(&json!({"user": "y@example.test", "role": "editor"}))).await.expect_error(403, "FORBIDDEN", None);
        call(&app, &invite_only, Method::DELETE, &format!("{path}/new@example.test"), None).await.expect_error(403, "FORBIDDEN", None);
        // Removed while pending.
        app.post(&path, &json!({"user": "gone@example.test", "role": "viewer"})).await.expect(200);
        let removed = app.delete(&format!("{path}/gone@example.test")).await.expect(200);
        assert_eq!(removed.data()["removed"], true);
        app.delete(&format!("{path}/gone@example.test")).await.expect_error(404, "NOT_FOUND", None);

        // The person joins another workspace by an invitation: at that first sign-in the
        // pending role binds to their new user.
        let (_, url) = invite(&app, &other, "new@example.test", "viewer").await;
        let cookie = browser.join(&app, &url, "Nia").await;
        let listed = app.get(&path).await.expect(200);
        let all = listed.data().as_array().unwrap();
        assert_eq!(all.len(), 1, "{}", listed.body);
        assert_eq!(all[0]["pending"], false);
        assert_eq!(all[0]["role"], "editor");
        assert_eq!(all[0]["email"], "new@example.test");
        assert!(all[0]["user_id"].as_str().unwrap().starts_with("usr-"), "{}", listed.body);
        // Their session opens the board they were invited to.
        let page = browser.get(&app, &format!("/boards/{board}"), Some(&cookie)).await;
        assert_eq!(page.status, 200);
        assert!(page.body.contains("Ops"));
    }
}

/// A pending collaborator binds at the first sign-in of an identity provider's user with
/// that (verified) email.
mod pending_collaborators_bind_at_a_providers_first_sign_in {
    use super::*;

    #[tokio::test]
    async fn sqlite() {
        check(idp::IdpApp::start(false, "RS256", "").await).await;
    }

    #[tokio::test]
    async fn postgres() {
        crate::skip_without_postgres!();
        check(idp::IdpApp::start(true, "RS256", "").await).await;
    }

    async fn check(idp: idp::IdpApp) {
        let app = &idp.app;
        let board = app
            .post("/v1/pinboards", &json!({"title": "Shared"}))
            .await
            .expect(200);
        let board = board.data()["id"].as_str().unwrap().to_owned();
        let path = format!("/v1/pinboards/{board}/collaborators");
        app.post(
            &path,
            &json!({"user": "otto@example.test", "role": "viewer"}),
        )
        .await
        .expect(200);
        app.post(
            &path,
            &json!({"user": "ulla@example.test", "role": "viewer"}),
        )
        .await
        .expect(200);
        // Otto, of another workspace, signs in for the first time: he reads the board.
        let mut otto = idp::claims("otto");
        otto["org"] = json!("elsewhere");
        let otto = idp::rs256(&otto);
        idp.call(&otto, Method::GET, &format!("/v1/pinboards/{board}"), None)
            .await
            .expect(200);
        // Ulla's provider did not verify her email: nothing binds.
        let mut ulla = idp::claims("ulla");
        ulla["org"] = json!("elsewhere");
        ulla["email_verified"] = json!(false);
        let ulla = idp::rs256(&ulla);
        idp.call(&ulla, Method::GET, &format!("/v1/pinboards/{board}"), None)
            .await
            .expect_error(404, "NOT_FOUND", None);
        let listed = app.get(&path).await.expect(200);
        let by_email = |email: &str| {
            listed
                .data()
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["email"] == email)
                .cloned()
                .unwrap()
        };
        assert_eq!(by_email("otto@example.test")["pending"], false);
        assert_eq!(by_email("ulla@example.test")["pending"], true);
    }
}

/// The invite routes count per client address, like sign-in and setup.
#[tokio::test]
async fn invite_pages_count_per_address() {
    let app = TestApp::sqlite_with(
        "[rate_limits.share]\nper_minute = 3\n[rate_limits.auth_failures]\nclient_ip_header = \"x-forwarded-for\"\n",
    )
    .await;
    let (_, url) = invite(&app, &app.key, "ann@example.test", "viewer").await;
    let get = |address: &'static str| {
        let req = app.client.get(&url).header("x-forwarded-for", address);
        async move { req.send().await.unwrap().status().as_u16() }
    };
    for _ in 0..3 {
        assert_eq!(get("10.1.1.1").await, 200);
    }
    assert_eq!(get("10.1.1.1").await, 429);
    assert_eq!(get("10.1.1.2").await, 200);
}
