//! Local accounts (CONTRACT.md 16): the setup link printed at the first start and by
//! `corkboard setup-link`, the owner's setup page, password sign-in on `/login` and its
//! guard (10 failures in 15 minutes per client address or per account). Each scenario on
//! both stores; forms are posted as a browser posts them, with this site's `Origin`.

use reqwest::header;
use serde_json::json;

use crate::{
    cli,
    helpers::{call, TestApp},
    pages::{browser_client, inline_code, Page},
};

const PASSWORD: &str = "correct horse battery";
const EMAIL: &str = "owner@example.test";
/// The client address as a trusted proxy names it, so tests can come from many.
const PROXIED: &str = "[rate_limits.auth_failures]\nclient_ip_header = \"x-forwarded-for\"\n";

/// A server, and a browser-like client that follows no redirects.
struct Local {
    app: TestApp,
    client: reqwest::Client,
}

impl Local {
    async fn start(postgres: bool, config: &str) -> Local {
        let app = if postgres {
            TestApp::postgres_with(config).await
        } else {
            TestApp::sqlite_with(config).await
        };
        Local {
            app,
            client: browser_client(),
        }
    }

    async fn get(&self, path: &str, cookie: Option<&str>) -> Page {
        let mut req = self.client.get(format!("{}{path}", self.app.base));
        if let Some(cookie) = cookie {
            req = req.header(header::COOKIE, cookie);
        }
        Page::read(req.send().await.unwrap()).await
    }

    /// Posts `form` to `path` from `origin`, as the client `address`.
    async fn post_from(
        &self,
        path: &str,
        form: &[(&str, &str)],
        origin: &str,
        address: &str,
    ) -> Page {
        let res = self
            .client
            .post(format!("{}{path}", self.app.base))
            .header(header::ORIGIN, origin)
            .header("x-forwarded-for", address)
            .form(form)
            .send()
            .await
            .unwrap();
        Page::read(res).await
    }

    /// Posts `form` to `path` from this site.
    async fn post(&self, path: &str, form: &[(&str, &str)]) -> Page {
        self.post_from(path, form, &self.app.base, "10.9.9.9").await
    }

    /// A new setup link's path, `/setup/<token>`.
    async fn setup_path(&self) -> String {
        let link = corkboard::auth::local::new_setup_link(&self.app.state.store, &self.app.base)
            .await
            .unwrap();
        let path = link
            .expose()
            .strip_prefix(&self.app.base)
            .unwrap()
            .to_owned();
        assert!(path.starts_with("/setup/"), "{path}");
        path
    }

    /// Sets up the owner `EMAIL` with `PASSWORD`; their session cookie.
    async fn owner(&self) -> String {
        let path = self.setup_path().await;
        let done = self
            .post(
                &path,
                &[
                    ("name", "Olga Owner"),
                    ("email", EMAIL),
                    ("password", PASSWORD),
                    ("confirm", PASSWORD),
                ],
            )
            .await;
        assert_eq!(done.status, 303, "{}", done.body);
        assert_eq!(done.location(), "/boards");
        done.session()
    }

    async fn sign_in_from(&self, address: &str, email: &str, password: &str) -> Page {
        let form = [
            ("email", email),
            ("password", password),
            ("next", "/boards"),
        ];
        self.post_from("/login", &form, &self.app.base, address)
            .await
    }
}

macro_rules! local_stores {
    ($(async fn $name:ident($local:ident) $body:block)*) => {$(
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            #[tokio::test]
            async fn sqlite() {
                let $local = Local::start(false, PROXIED).await;
                $body
            }
            #[tokio::test]
            async fn postgres() {
                $crate::skip_without_postgres!();
                let $local = Local::start(true, PROXIED).await;
                $body
            }
        }
    )*};
}

local_stores! {
    async fn a_setup_link_makes_one_signed_in_owner(local) {
        let board = call(&local.app, &local.app.key, reqwest::Method::POST, "/v1/pinboards", Some(&json!({"title": "Ops"}))).await;
        let board = board.body["data"]["id"].as_str().unwrap().to_owned();
        let path = local.setup_path().await;
        let form = local.get(&path, None).await;
        assert_eq!(form.status, 200);
        let csp = form.headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap().to_owned();
        assert_eq!(csp.matches("frame-ancestors").count(), 1, "{csp}");
        assert!(csp.contains("script-src 'self'") && csp.contains("form-action 'self'"), "{csp}");
        assert_eq!(form.headers[header::REFERRER_POLICY], "same-origin");
        assert_eq!(form.headers["x-frame-options"], "DENY");
        assert!(form.body.contains(&format!("action=\"{path}\"")) && form.body.contains("name=\"confirm\""), "{}", form.body);
        assert!(!form.body.contains("<script") && !inline_code(&form.body), "{}", form.body);

        // A cross-site post is refused, and the link still works.
        let fields = [("name", "Mallory"), ("email", "m@evil.test"), ("password", PASSWORD), ("confirm", PASSWORD)];
        let cross = local.post_from(&path, &fields, "https://evil.test", "10.9.9.9").await;
        assert_eq!(cross.status, 403);
        let no_origin = local.client.post(format!("{}{path}", local.app.base)).form(&fields).send().await.unwrap();
        assert_eq!(no_origin.status(), 403);
        assert_eq!(local.get(&path, None).await.status, 200);

        // Password rules: the form again, with what to fix and what was typed (escaped).
        let short = "eleven char";
        let long = "x".repeat(129);
        for (password, confirm, says) in [
            (short, short, "12 to 128 characters"),
            (long.as_str(), long.as_str(), "12 to 128 characters"),
            (PASSWORD, "correct horse battery!", "differ"),
        ] {
            let again = local.post(&path, &[("name", "<Olga>"), ("email", EMAIL), ("password", password), ("confirm", confirm)]).await;
            assert_eq!(again.status, 422, "{}", again.body);
            assert!(again.body.contains(says), "{}", again.body);
            assert!(again.body.contains("value=\"&lt;Olga&gt;\"") && !again.body.contains(password), "{}", again.body);
            assert!(again.headers.get(header::SET_COOKIE).is_none());
        }
        let bad_email = local.post(&path, &[("name", "Olga"), ("email", "not an email"), ("password", PASSWORD), ("confirm", PASSWORD)]).await;
        assert_eq!(bad_email.status, 422);
        assert!(bad_email.body.contains("valid email"), "{}", bad_email.body);
        let garbage = local.client.post(format!("{}{path}", local.app.base)).header(header::ORIGIN, &local.app.base).body(vec![0xff, 0xfe, b'=', b'%']).send().await.unwrap();
        assert!([400, 422].contains(&garbage.status().as_u16()), "{}", garbage.status());
        assert!(garbage.text().await.unwrap().contains("action=\"/setup/"));

        // The setup itself: the owner, signed in, on the boards of the default workspace.
        let done = local.post(&path, &[("name", "Olga Owner"), ("email", "Owner@Example.test"), ("password", PASSWORD), ("confirm", PASSWORD)]).await;
        assert_eq!(done.status, 303, "{}", done.body);
        assert_eq!(done.location(), "/boards");
        let set = done.session_set();
        for part in ["HttpOnly", "SameSite=Lax", "Path=/", "Max-Age=43200"] {
            assert!(set.contains(part), "{set}");
        }
        let cookie = done.session();
        let boards = local.get("/boards", Some(&cookie)).await;
        assert_eq!(boards.status, 200);
        assert!(boards.body.contains(EMAIL) && boards.body.contains(&format!("href=\"/boards/{board}\"")), "{}", boards.body);
        let store = &local.app.state.store;
        let users = store.find_users(EMAIL).await.unwrap();
        assert_eq!(users.len(), 1);
        let ws = store.ensure_workspace("default").await.unwrap();
        assert_eq!(store.member_role(&ws, &users[0].id).await.unwrap().as_deref(), Some("owner"));

        // Used: the 404 page, for a look and for a second setup alike.
        let used = local.get(&path, None).await;
        assert_eq!(used.status, 404);
        assert!(used.headers[header::CONTENT_TYPE].to_str().unwrap().starts_with("text/html"));
        assert_eq!(local.post(&path, &fields).await.status, 404);
        assert_eq!(local.get("/setup/not-a-token", None).await.status, 404);
        assert_eq!(local.get(&format!("/setup/{}", "a".repeat(43)), None).await.status, 404);
    }

    async fn a_new_link_replaces_the_old_and_links_expire(local) {
        let old = local.setup_path().await;
        let new = local.setup_path().await;
        assert_ne!(old, new);
        assert_eq!(local.get(&old, None).await.status, 404);
        assert_eq!(local.get(&new, None).await.status, 200);
        // 24 hours on, it is gone too.
        local.app.execute_sql(
            "UPDATE setup_tokens SET expires_at = created_at",
            "UPDATE setup_tokens SET expires_at = created_at",
        ).await;
        assert_eq!(local.get(&new, None).await.status, 404);
        let form = [("name", "Late"), ("email", EMAIL), ("password", PASSWORD), ("confirm", PASSWORD)];
        assert_eq!(local.post(&new, &form).await.status, 404);
        // The store holds only a hash of the token.
        let token = new.trim_start_matches("/setup/").to_owned();
        assert!(token.len() >= 22, "at least 128 bits: {token}");
        local.app.execute_sql(
            &format!("DELETE FROM setup_tokens WHERE token_hash = '{token}'"),
            &format!("DELETE FROM setup_tokens WHERE token_hash = '{token}'"),
        ).await;
        local.app.execute_sql(
            "UPDATE setup_tokens SET expires_at = created_at + 86400000",
            "UPDATE setup_tokens SET expires_at = created_at + 86400000",
        ).await;
        assert_eq!(local.get(&new, None).await.status, 200, "no row holds the token itself");
    }

    async fn password_sign_in_and_sign_out(local) {
        let first = local.owner().await;
        let page = local.get("/login?next=/boards", None).await;
        assert_eq!(page.status, 200);
        assert!(page.body.contains("action=\"/login\"") && page.body.contains("type=\"password\""), "{}", page.body);
        assert!(!page.body.contains("/login/provider"), "no provider: no button");
        // Wrong password, unknown email: the same answer.
        let wrong = local.sign_in_from("10.0.0.1", EMAIL, "not the password!").await;
        let unknown = local.sign_in_from("10.0.0.1", "nobody@example.test", "not the password!").await;
        assert_eq!(wrong.status, 401);
        assert_eq!((wrong.status, &wrong.body), (unknown.status, &unknown.body));
        assert!(wrong.body.contains("Wrong email or password"), "{}", wrong.body);
        assert!(wrong.headers.get(header::SET_COOKIE).is_none() && unknown.headers.get(header::SET_COOKIE).is_none());
        // Right: a new session, on to `next` (this site's only).
        let form = [("email", " OWNER@example.test"), ("password", PASSWORD), ("next", "/boards?kiosk=1")];
        let right = local.post("/login", &form).await;
        assert_eq!(right.status, 303, "{}", right.body);
        assert_eq!(right.location(), "/boards?kiosk=1");
        let cookie = right.session();
        assert_ne!(cookie, first);
        let away = local.post("/login", &[("email", EMAIL), ("password", PASSWORD), ("next", "https://evil.test/")]).await;
        assert_eq!(away.location(), "/boards");
        assert_eq!(local.get("/boards", Some(&cookie)).await.status, 200);
        // A cross-site sign-in is refused.
        let cross = local.post_from("/login", &[("email", EMAIL), ("password", PASSWORD)], "https://evil.test", "10.0.0.2").await;
        assert_eq!(cross.status, 403);
        // The cookie is no credential for the API.
        let api = local.client.get(format!("{}/v1/pins", local.app.base)).header(header::COOKIE, &cookie).send().await.unwrap();
        assert_eq!(api.status(), 401);
        // Sign-out ends this session, server-side; the other one stays.
        let out = local.client.post(format!("{}/logout", local.app.base)).header(header::COOKIE, &cookie).header(header::ORIGIN, &local.app.base).send().await.unwrap();
        assert_eq!(out.status(), 303);
        assert_eq!(local.get("/boards", Some(&cookie)).await.location(), "/login?next=%2Fboards");
        assert_eq!(local.get("/boards", Some(&first)).await.status, 200);
    }

    async fn sign_in_only_share_links_go_through_password_sign_in(local) {
        let board = call(&local.app, &local.app.key, reqwest::Method::POST, "/v1/pinboards", Some(&json!({"title": "Members"}))).await;
        let id = board.body["data"]["id"].as_str().unwrap().to_owned();
        let share = json!({"is_public": true, "require_sign_in": true});
        call(&local.app, &local.app.key, reqwest::Method::PUT, &format!("/v1/pinboards/{id}/share"), Some(&share)).await.expect(200);
        let anonymous = local.get(&format!("/share/{id}"), None).await;
        assert_eq!(anonymous.status, 303);
        assert_eq!(anonymous.location(), format!("/login?next=%2Fshare%2F{id}"));
        let login = local.get(anonymous.location(), None).await;
        assert!(login.body.contains(&format!("name=\"next\" value=\"/share/{id}\"")), "{}", login.body);
        local.owner().await;
        let next = format!("/share/{id}");
        let signed = local.post("/login", &[("email", EMAIL), ("password", PASSWORD), ("next", &next)]).await;
        assert_eq!(signed.location(), next);
        let page = local.get(&next, Some(&signed.session())).await;
        assert_eq!(page.status, 200);
        assert!(page.body.contains("Members"));
        // Where sign-out lands: a way to sign in.
        assert!(local.get("/", None).await.body.contains("href=\"/login\""));
    }

    async fn ten_failures_per_address_hold_its_tries_for_fifteen_minutes(local) {
        local.owner().await;
        for i in 0..10 {
            let email = format!("guess{i}@example.test");
            assert_eq!(local.sign_in_from("10.0.0.1", &email, "wrong password!").await.status, 401, "try {i}");
        }
        // The 11th, even with the right password: the 429 page.
        let held = local.sign_in_from("10.0.0.1", EMAIL, PASSWORD).await;
        assert_eq!(held.status, 429, "{}", held.body);
        assert!(held.headers[header::CONTENT_TYPE].to_str().unwrap().starts_with("text/html"));
        let retry: u64 = held.headers[header::RETRY_AFTER].to_str().unwrap().parse().unwrap();
        assert!((1..=900).contains(&retry), "{retry}");
        assert!(held.body.contains("Too many failed sign-ins") && held.headers.get(header::SET_COOKIE).is_none(), "{}", held.body);
        // Another address is not held.
        assert_eq!(local.sign_in_from("10.0.0.2", EMAIL, PASSWORD).await.status, 303);
        // Past the window, the address may try again.
        local.app.clock.advance(15 * 60_000);
        assert_eq!(local.sign_in_from("10.0.0.1", EMAIL, PASSWORD).await.status, 303);
    }

    async fn ten_failures_per_account_hold_it_from_every_address(local) {
        local.owner().await;
        for i in 0..10 {
            let address = format!("10.0.1.{i}");
            assert_eq!(local.sign_in_from(&address, EMAIL, "wrong password!").await.status, 401, "try {i}");
        }
        let held = local.sign_in_from("10.0.2.1", EMAIL, PASSWORD).await;
        assert_eq!(held.status, 429);
        // An unknown email is held the same way: no telling which emails have accounts.
        for i in 0..10 {
            let address = format!("10.0.3.{i}");
            assert_eq!(local.sign_in_from(&address, "nobody@example.test", "wrong password!").await.status, 401);
        }
        assert_eq!(local.sign_in_from("10.0.2.2", "nobody@example.test", PASSWORD).await.status, 429);
        local.app.clock.advance(15 * 60_000);
        assert_eq!(local.sign_in_from("10.0.2.1", EMAIL, PASSWORD).await.status, 303);
    }
}

#[tokio::test]
async fn without_local_accounts_or_a_provider_sign_in_is_off() {
    let local = Local::start(false, "[auth.local]\nenabled = false\n").await;
    assert_eq!(local.get("/login", None).await.status, 404);
    assert_eq!(local.get("/boards", None).await.status, 404);
    let path = local.setup_path().await;
    assert_eq!(local.get(&path, None).await.status, 404);
    let form = [
        ("name", "Olga"),
        ("email", EMAIL),
        ("password", PASSWORD),
        ("confirm", PASSWORD),
    ];
    assert_eq!(local.post(&path, &form).await.status, 404);
    let login = [("email", EMAIL), ("password", PASSWORD)];
    assert_eq!(local.post("/login", &login).await.status, 404);
}

/// The real binary: the first start prints a setup link besides the first key;
/// `corkboard setup-link` prints a new one and the old one stops working.
async fn printed_links(store: cli::Store) {
    let server = cli::Server::start(&store).await;
    let base = server.base.clone();
    let first = server
        .printed("setup link", |l| l.starts_with(&format!("{base}/setup/")))
        .await;
    let client = browser_client();
    let status = |url: String| {
        let client = client.clone();
        async move { client.get(url).send().await.unwrap().status().as_u16() }
    };
    assert_eq!(status(first.clone()).await, 200);
    // With the server's own settings, as its operator would run it.
    let out = store
        .command(&["setup-link"])
        .env("CORKBOARD_PUBLIC_URL", &base)
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "the link alone: {stdout:?}");
    let second = lines[0].to_owned();
    assert!(second.starts_with(&format!("{base}/setup/")), "{second}");
    assert_ne!(second, first);
    assert_eq!(status(first).await, 404);
    assert_eq!(status(second).await, 200);
    let printed = server.stop().await;
    assert_eq!(
        printed.iter().filter(|l| l.contains("/setup/")).count(),
        1,
        "{printed:?}"
    );
}

#[tokio::test]
async fn the_first_start_prints_a_setup_link_sqlite() {
    printed_links(cli::Store::sqlite()).await;
}

#[tokio::test]
async fn the_first_start_prints_a_setup_link_postgres() {
    crate::skip_without_postgres!();
    printed_links(cli::Store::postgres().await).await;
}
