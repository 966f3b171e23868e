//! Web sign-in (CONTRACT.md 13) against a small OpenID Connect provider run by the test:
//! discovery, an authorize endpoint that signs in the user the test chose, a token endpoint
//! checking PKCE (S256) and single-use codes, and a JWKS. Cookies are carried by hand.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use axum::{
    extract::{Form, Query, State},
    response::{IntoResponse, Redirect, Response},
    routing::{get, post},
    Json, Router,
};
use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine};
use reqwest::{header, redirect::Policy, Method};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::{
    helpers::{call, TestApp},
    idp,
};

const CLIENT_ID: &str = "corkboard-web";

#[derive(Default)]
struct Provider {
    /// `(sub, org)` of the user the next authorization signs in.
    user: (String, String),
    /// Sign the next ID token with a nonce of its own.
    wrong_nonce: bool,
    /// Sign the next ID token for another audience.
    wrong_audience: bool,
    /// Sign the next ID token already expired.
    expired: bool,
    /// Name endpoints over plain http on a host that is not loopback in discovery.
    insecure_endpoints: bool,
    /// code -> (challenge, nonce, sub, org)
    codes: HashMap<String, (String, String, String, String)>,
}

#[derive(Clone)]
struct Idp {
    issuer: String,
    state: Arc<Mutex<Provider>>,
}

async fn discovery(State(idp): State<Idp>) -> Json<Value> {
    let base = if idp.state.lock().unwrap().insecure_endpoints {
        "http://idp.example.com".to_owned()
    } else {
        idp.issuer.clone()
    };
    Json(json!({
        "issuer": idp.issuer,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "jwks_uri": format!("{}/jwks", idp.issuer),
    }))
}

async fn authorize(State(idp): State<Idp>, Query(q): Query<HashMap<String, String>>) -> Response {
    assert_eq!(q["response_type"], "code");
    assert_eq!(q["client_id"], CLIENT_ID);
    assert_eq!(q["code_challenge_method"], "S256");
    assert!(q["scope"].split(' ').any(|s| s == "openid"));
    let code = uuid::Uuid::new_v4().to_string();
    let mut p = idp.state.lock().unwrap();
    let (sub, org) = p.user.clone();
    p.codes.insert(
        code.clone(),
        (q["code_challenge"].clone(), q["nonce"].clone(), sub, org),
    );
    Redirect::to(&format!(
        "{}?code={code}&state={}",
        q["redirect_uri"],
        urlencode(&q["state"])
    ))
    .into_response()
}

async fn token(State(idp): State<Idp>, Form(f): Form<HashMap<String, String>>) -> Response {
    let bad = || {
        (
            reqwest::StatusCode::BAD_REQUEST,
            Json(json!({"error": "invalid_grant"})),
        )
            .into_response()
    };
    let mut p = idp.state.lock().unwrap();
    // Single use: a code is gone once presented.
    let Some((challenge, nonce, sub, org)) = p.codes.remove(&f["code"]) else {
        return bad();
    };
    let verifier = f.get("code_verifier").cloned().unwrap_or_default();
    if URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes())) != challenge {
        return bad();
    }
    let mut claims = idp::claims(&sub);
    claims["iss"] = json!(idp.issuer);
    claims["aud"] = json!(if p.wrong_audience {
        "someone-else"
    } else {
        CLIENT_ID
    });
    claims["org"] = json!(org);
    claims["nonce"] = json!(if p.wrong_nonce { "other".into() } else { nonce });
    if p.expired {
        claims["exp"] = json!(idp::now_secs() - 3600);
    }
    Json(json!({"access_token": "at", "token_type": "Bearer", "id_token": idp::rs256(&claims)}))
        .into_response()
}

fn urlencode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// A provider on a port of its own and a server signing in with it.
struct Web {
    app: TestApp,
    idp: Idp,
    client: reqwest::Client,
}

impl Web {
    async fn start(postgres: bool, sign_in_on: bool) -> Web {
        Web::start_with(postgres, sign_in_on, "").await
    }

    /// [`Web::start`] with `extra` configuration appended.
    async fn start_with(postgres: bool, sign_in_on: bool, extra: &str) -> Web {
        Web::build(postgres, sign_in_on, false, extra).await
    }

    /// A server with the provider (when `sign_in_on`) and local accounts (when `local`; the
    /// other tests here leave them off: `/login` then goes straight to the provider).
    async fn build(postgres: bool, sign_in_on: bool, local: bool, extra: &str) -> Web {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let issuer = format!("http://{}", listener.local_addr().unwrap());
        let idp = Idp {
            issuer: issuer.clone(),
            state: Arc::default(),
        };
        let jwks = idp::jwks(&["k1"]);
        let router = Router::new()
            .route("/.well-known/openid-configuration", get(discovery))
            .route("/authorize", get(authorize))
            .route("/token", post(token))
            .route("/jwks", get(move || async move { jwks }))
            .with_state(idp.clone());
        tokio::spawn(async move { axum::serve(listener, router).await });
        let client_id = if sign_in_on { CLIENT_ID } else { "" };
        let config = format!(
            "[auth.jwt]\nissuer = \"{issuer}\"\naudience = \"{}\"\nalgorithms = \"RS256\"\n\
             jwks = \"{issuer}/jwks\"\nworkspace_claim = \"org\"\n\
             [auth.oidc]\nclient_id = \"{client_id}\"\n[auth.local]\nenabled = {local}\n\
             [events]\nheartbeat_secs = 1\n{extra}",
            idp::AUDIENCE
        );
        let app = if postgres {
            TestApp::postgres_with(&config).await
        } else {
            TestApp::sqlite_with(&config).await
        };
        let client = reqwest::Client::builder()
            .redirect(Policy::none())
            .build()
            .unwrap();
        Web { app, idp, client }
    }

    fn choose(&self, sub: &str, org: &str) {
        self.idp.state.lock().unwrap().user = (sub.into(), org.into());
    }

    async fn get(&self, url: &str, cookie: Option<&str>) -> reqwest::Response {
        let url = if url.starts_with("http") {
            url.to_owned()
        } else {
            format!("{}{url}", self.app.base)
        };
        let mut req = self.client.get(url);
        if let Some(cookie) = cookie {
            req = req.header(header::COOKIE, cookie);
        }
        req.send().await.unwrap()
    }

    /// `/login?next=`, then the provider: the callback URL and the login cookie.
    async fn start_login(&self, next: &str) -> (String, String) {
        let login = self
            .get(&format!("/login?next={}", urlencode(next)), None)
            .await;
        assert_eq!(login.status(), 303);
        let cookie = set_cookie(&login, "corkboard_login").expect("login cookie");
        let at_idp = location(&login);
        let back = self.get(&at_idp, None).await;
        (location(&back), cookie)
    }

    /// A whole sign-in: the session cookie (`name=value`) and where it went.
    async fn sign_in(&self, sub: &str, org: &str, next: &str) -> (String, String) {
        self.choose(sub, org);
        let (callback, login_cookie) = self.start_login(next).await;
        let done = self.get(&callback, Some(&login_cookie)).await;
        assert_eq!(done.status(), 303, "{:?}", done.text().await);
        let header = done
            .headers()
            .get_all(header::SET_COOKIE)
            .iter()
            .map(|v| v.to_str().unwrap().to_owned())
            .find(|v| v.starts_with("corkboard_session=") && !v.starts_with("corkboard_session=;"))
            .expect("session cookie");
        for part in ["HttpOnly", "SameSite=Lax", "Path=/"] {
            assert!(header.contains(part), "{header}");
        }
        assert!(!header.contains("Secure"), "http: no Secure: {header}");
        (
            header.split(';').next().unwrap().to_owned(),
            location(&done),
        )
    }
}

fn location(r: &reqwest::Response) -> String {
    r.headers()[header::LOCATION].to_str().unwrap().to_owned()
}

fn set_cookie(r: &reqwest::Response, name: &str) -> Option<String> {
    r.headers()
        .get_all(header::SET_COOKIE)
        .iter()
        .map(|v| v.to_str().unwrap())
        .find(|v| v.starts_with(&format!("{name}=")))
        .map(|v| v.split(';').next().unwrap().to_owned())
}

macro_rules! web_stores {
    ($(async fn $name:ident($web:ident) $body:block)*) => {$(
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            #[tokio::test]
            async fn sqlite() {
                let $web = Web::start(false, true).await;
                $body
            }
            #[tokio::test]
            async fn postgres() {
                $crate::skip_without_postgres!();
                let $web = Web::start(true, true).await;
                $body
            }
        }
    )*};
}

web_stores! {
    async fn login_redirect_carries_pkce_state_and_nonce(web) {
        let login = web.get("/login?next=/boards", None).await;
        assert_eq!(login.status(), 303);
        let to = url::Url::parse(&location(&login)).unwrap();
        assert_eq!(format!("{}/authorize", web.idp.issuer), format!("{}{}", to.origin().ascii_serialization(), to.path()));
        let q: HashMap<String, String> = to.query_pairs().into_owned().collect();
        assert_eq!(q["redirect_uri"], format!("{}/auth/callback", web.app.base));
        assert_eq!(q["code_challenge_method"], "S256");
        assert_eq!(q["scope"], "openid email profile");
        for p in ["state", "nonce", "code_challenge"] {
            assert!(q[p].len() >= 22, "{p}");
        }
        let cookie = login.headers()[header::SET_COOKIE].to_str().unwrap();
        assert!(cookie.contains("HttpOnly") && cookie.contains("Path=/auth/callback"), "{cookie}");
    }

    async fn full_sign_in_lists_boards_and_opens_them(web) {
        let board = call(&web.app, &web.app.key, Method::POST, "/v1/pinboards", Some(&json!({"title": "Ops <b>"}))).await;
        let id = board.body["data"]["id"].as_str().unwrap().to_owned();
        // Without a session: to sign-in, and back.
        let r = web.get(&format!("/boards/{id}?kiosk=1"), None).await;
        assert_eq!(r.status(), 303);
        assert_eq!(location(&r), format!("/login?next={}", urlencode(&format!("/boards/{id}?kiosk=1"))));
        assert_eq!(location(&web.get("/boards", None).await), "/login?next=%2Fboards");
        let (cookie, went) = web.sign_in("alice", "default", &format!("/boards/{id}?kiosk=1")).await;
        assert_eq!(went, format!("/boards/{id}?kiosk=1"));
        let list = web.get("/boards", Some(&cookie)).await;
        assert_eq!(list.status(), 200);
        let csp = list.headers()[header::CONTENT_SECURITY_POLICY].to_str().unwrap().to_owned();
        assert!(csp.contains("form-action 'self'"), "{csp}");
        let html = list.text().await.unwrap();
        assert!(html.contains(&format!("href=\"/boards/{id}\"")) && html.contains("Ops &lt;b&gt;"), "{html}");
        assert!(html.contains("alice@example.test") && html.contains("action=\"/logout\""), "{html}");
        let page = web.get(&format!("/boards/{id}?kiosk=1"), Some(&cookie)).await;
        assert_eq!(page.status(), 200);
        assert!(page.text().await.unwrap().contains("class=\"kiosk\""));
        // The cookie is no credential for the API.
        let api = web.client.get(format!("{}/v1/pinboards", web.app.base)).header(header::COOKIE, &cookie).send().await.unwrap();
        assert_eq!(api.status(), 401);
        // Another workspace's user sees the 404 page.
        let (other, _) = web.sign_in("bob", "other", "/boards").await;
        assert_eq!(web.get(&format!("/boards/{id}"), Some(&other)).await.status(), 404);
        let theirs = web.get("/boards", Some(&other)).await.text().await.unwrap();
        assert!(!theirs.contains(&id));
        assert_eq!(web.get("/boards/pb-missing", Some(&cookie)).await.status(), 404);
    }

    async fn board_pages_are_live_for_those_who_may_read_them(web) {
        let board = call(&web.app, &web.app.key, Method::POST, "/v1/pinboards", Some(&json!({"title": "Live"}))).await;
        let id = board.body["data"]["id"].as_str().unwrap().to_owned();
        let (cookie, _) = web.sign_in("frank", "default", "/boards").await;
        let page = web.get(&format!("/boards/{id}"), Some(&cookie)).await;
        let csp = page.headers()[header::CONTENT_SECURITY_POLICY].to_str().unwrap().to_owned();
        assert!(csp.contains("script-src 'self'") && csp.contains("connect-src 'self'"), "{csp}");
        let html = page.text().await.unwrap();
        assert!(html.contains(&format!("data-base=\"/boards/{id}\"")) && html.contains("/assets/live-"), "{html}");
        let fragment = web.get(&format!("/boards/{id}/fragment"), Some(&cookie)).await;
        assert_eq!(fragment.status(), 200);
        assert!(fragment.text().await.unwrap().starts_with("<nav class=\"account\">"));
        // Without a session, or for another workspace: the 404 page, no stream.
        assert_eq!(web.get(&format!("/boards/{id}/events"), None).await.status(), 404);
        assert_eq!(web.get(&format!("/boards/{id}/fragment"), None).await.status(), 404);
        let (other, _) = web.sign_in("grace", "other", "/boards").await;
        assert_eq!(web.get(&format!("/boards/{id}/events"), Some(&other)).await.status(), 404);
        // The user's stream carries the board's changes.
        let mut stream = web.get(&format!("/boards/{id}/events"), Some(&cookie)).await;
        assert_eq!(stream.status(), 200);
        assert!(stream.headers()[header::CONTENT_TYPE].to_str().unwrap().starts_with("text/event-stream"));
        call(&web.app, &web.app.key, Method::PATCH, &format!("/v1/pinboards/{id}"), Some(&json!({"title": "Live 2"}))).await;
        let mut seen = String::new();
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
        while !seen.contains("pinboard.updated") {
            let chunk = tokio::time::timeout_at(deadline, stream.chunk()).await.expect("event in time").unwrap().unwrap();
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
    }

    async fn sign_in_only_share_links_go_through_sign_in(web) {
        let board = call(&web.app, &web.app.key, Method::POST, "/v1/pinboards", Some(&json!({"title": "Members"}))).await;
        let id = board.body["data"]["id"].as_str().unwrap().to_owned();
        let private = call(&web.app, &web.app.key, Method::POST, "/v1/pinboards", Some(&json!({"title": "Private"}))).await;
        let private = private.body["data"]["id"].as_str().unwrap().to_owned();
        let share = json!({"is_public": true, "require_sign_in": true});
        call(&web.app, &web.app.key, Method::PUT, &format!("/v1/pinboards/{id}/share"), Some(&share)).await.expect(200);
        let r = web.get(&format!("/share/{id}?kiosk=1"), None).await;
        assert_eq!(r.status(), 303);
        assert_eq!(location(&r), format!("/login?next={}", urlencode(&format!("/share/{id}?kiosk=1"))));
        // A private board or a missing id stays the 404 page.
        assert_eq!(web.get(&format!("/share/{private}"), None).await.status(), 404);
        assert_eq!(web.get("/share/pb-missing", None).await.status(), 404);
        let (cookie, went) = web.sign_in("heidi", "default", &format!("/share/{id}")).await;
        assert_eq!(went, format!("/share/{id}"));
        let page = web.get(&format!("/share/{id}"), Some(&cookie)).await;
        assert_eq!(page.status(), 200);
        assert!(page.text().await.unwrap().contains("Members"));
        // Another workspace's user: the 404 page, not another sign-in.
        let (other, _) = web.sign_in("ivan", "other", "/boards").await;
        assert_eq!(web.get(&format!("/share/{id}"), Some(&other)).await.status(), 404);
    }

    async fn collaborators_see_the_boards_shared_with_them(web) {
        let board = call(&web.app, &web.app.key, Method::POST, "/v1/pinboards", Some(&json!({"title": "Shared with Judy"}))).await;
        let id = board.body["data"]["id"].as_str().unwrap().to_owned();
        // Judy, of another workspace, signs in once, then is given a role on the board.
        let (cookie, _) = web.sign_in("judy", "other", "/boards").await;
        assert_eq!(web.get(&format!("/boards/{id}"), Some(&cookie)).await.status(), 404);
        let added = call(&web.app, &web.app.key, Method::POST, &format!("/v1/pinboards/{id}/collaborators"), Some(&json!({"user": "judy@example.test", "role": "viewer"}))).await;
        assert!(added.status < 300, "{}", added.body);
        let list = web.get("/boards", Some(&cookie)).await.text().await.unwrap();
        assert!(list.contains(&format!("href=\"/boards/{id}\"")), "{list}");
        assert_eq!(web.get(&format!("/boards/{id}"), Some(&cookie)).await.status(), 200);
        assert_eq!(web.get(&format!("/boards/{id}/events"), Some(&cookie)).await.status(), 200);
    }

    async fn endpoints_over_plain_http_elsewhere_than_loopback_are_refused(web) {
        web.idp.state.lock().unwrap().insecure_endpoints = true;
        let login = web.get("/login?next=/boards", None).await;
        assert_eq!(login.status(), 503, "the provider is unusable, not followed");
        assert!(login.headers().get(header::LOCATION).is_none());
    }

    async fn next_never_leaves_the_site(web) {
        for next in ["https://evil.test/", "//evil.test/", "/\\evil.test"] {
            let (_, went) = web.sign_in("carol", "default", next).await;
            assert_eq!(went, "/boards", "{next}");
        }
    }

    async fn refused_callbacks(web) {
        web.choose("dave", "default");
        // A state of another sign-in.
        let (callback, cookie) = web.start_login("/boards").await;
        let forged = callback.replace("state=", "state=x");
        assert_eq!(web.get(&forged, Some(&cookie)).await.status(), 401);
        // No login cookie: not this browser's sign-in.
        let (callback, _) = web.start_login("/boards").await;
        assert_eq!(web.get(&callback, None).await.status(), 401);
        // A code used once is refused the second time.
        let (callback, cookie) = web.start_login("/boards").await;
        assert_eq!(web.get(&callback, Some(&cookie)).await.status(), 303);
        assert_eq!(web.get(&callback, Some(&cookie)).await.status(), 401);
        // Wrong nonce, audience, expiry.
        for flag in 0..3 {
            {
                let mut p = web.idp.state.lock().unwrap();
                p.wrong_nonce = flag == 0;
                p.wrong_audience = flag == 1;
                p.expired = flag == 2;
            }
            let (callback, cookie) = web.start_login("/boards").await;
            let r = web.get(&callback, Some(&cookie)).await;
            assert_eq!(r.status(), 401, "case {flag}");
            assert!(set_cookie(&r, "corkboard_session").is_none());
        }
    }

    async fn logout_ends_the_session_and_checks_origin(web) {
        let (cookie, _) = web.sign_in("erin", "default", "/boards").await;
        let cross = web.client.post(format!("{}/logout", web.app.base)).header(header::COOKIE, &cookie).header(header::ORIGIN, "https://evil.test").send().await.unwrap();
        assert_eq!(cross.status(), 403);
        assert_eq!(web.get("/boards", Some(&cookie)).await.status(), 200);
        let out = web.client.post(format!("{}/logout", web.app.base)).header(header::COOKIE, &cookie).header(header::ORIGIN, &web.app.base).send().await.unwrap();
        assert_eq!(out.status(), 303);
        assert_eq!(location(&out), "/");
        // Server-side: the same cookie no longer works.
        assert_eq!(web.get("/boards", Some(&cookie)).await.status(), 303);
        // Where sign-out lands: a way to sign in again.
        let home = web.get("/", Some(&cookie)).await;
        assert_eq!(home.status(), 200);
        assert!(home.text().await.unwrap().contains("href=\"/login\""));
    }

    async fn a_board_stream_carries_data_less_dataset_notices(web) {
        let board = call(&web.app, &web.app.key, Method::POST, "/v1/pinboards", Some(&json!({"title": "Sales"}))).await;
        let id = board.body["data"]["id"].as_str().unwrap().to_owned();
        let (cookie, _) = web.sign_in("judy", "default", "/boards").await;
        let mut stream = web.get(&format!("/boards/{id}/events"), Some(&cookie)).await;
        assert_eq!(stream.status(), 200);
        call(&web.app, &web.app.key, Method::POST, "/v1/datasets", Some(&json!({"name": "secret_numbers", "format": "json", "data": {"total": 4242}}))).await;
        let mut seen = String::new();
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
        while !seen.contains("dataset.created") {
            let chunk = tokio::time::timeout_at(deadline, stream.chunk()).await.expect("a notice in time").unwrap().unwrap();
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
        assert!(!seen.contains("secret_numbers") && !seen.contains("4242"), "no dataset data: {seen}");
    }

    // A board page's script follows the same named heartbeat as a share page's: without it
    // a quiet board would look stale and reconnect every 45 s.
    async fn an_idle_board_stream_sends_a_named_heartbeat(web) {
        let board = call(&web.app, &web.app.key, Method::POST, "/v1/pinboards", Some(&json!({"title": "Quiet"}))).await;
        let id = board.body["data"]["id"].as_str().unwrap().to_owned();
        let (cookie, _) = web.sign_in("judy", "default", "/boards").await;
        let mut stream = web.get(&format!("/boards/{id}/events"), Some(&cookie)).await;
        assert_eq!(stream.status(), 200);
        let mut seen = String::new();
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
        while !seen.contains("event: heartbeat\ndata: {}\n\n") {
            let chunk = tokio::time::timeout_at(deadline, stream.chunk()).await.expect("a heartbeat in time").unwrap().unwrap();
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
        assert!(seen.contains(": keep-alive\n\n"), "{seen}");
    }

    async fn a_board_stream_resumes_from_the_event_id_its_page_was_drawn_at(web) {
        let board = call(&web.app, &web.app.key, Method::POST, "/v1/pinboards", Some(&json!({"title": "Before"}))).await;
        let id = board.body["data"]["id"].as_str().unwrap().to_owned();
        let (cookie, _) = web.sign_in("kim", "default", "/boards").await;
        let page = web.get(&format!("/boards/{id}"), Some(&cookie)).await;
        assert_eq!(page.headers()["x-frame-options"], "DENY");
        assert_eq!(page.headers()["referrer-policy"], "same-origin");
        let html = page.text().await.unwrap();
        let since = html.split("data-since=\"").nth(1).and_then(|s| s.split('"').next()).expect("data-since").to_owned();
        // A change committed after the page was drawn and before its script connects.
        call(&web.app, &web.app.key, Method::PATCH, &format!("/v1/pinboards/{id}"), Some(&json!({"title": "After"}))).await;
        let mut stream = web.get(&format!("/boards/{id}/events?last_event_id={since}"), Some(&cookie)).await;
        assert_eq!(stream.status(), 200);
        let mut seen = String::new();
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
        while !seen.contains("pinboard.updated") {
            let chunk = tokio::time::timeout_at(deadline, stream.chunk()).await.expect("the missed event").unwrap().unwrap();
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
    }

    async fn signing_out_ends_the_open_board_streams(web) {
        let board = call(&web.app, &web.app.key, Method::POST, "/v1/pinboards", Some(&json!({"title": "Wall"}))).await;
        let id = board.body["data"]["id"].as_str().unwrap().to_owned();
        let (cookie, _) = web.sign_in("ivan", "default", "/boards").await;
        let mut stream = web.get(&format!("/boards/{id}/events"), Some(&cookie)).await;
        assert_eq!(stream.status(), 200);
        let out = web.client.post(format!("{}/logout", web.app.base)).header(header::COOKIE, &cookie).header(header::ORIGIN, &web.app.base).send().await.unwrap();
        assert_eq!(out.status(), 303);
        // The stream ends by itself: it checks its session every 5 s.
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(8);
        let mut seen = String::new();
        loop {
            match tokio::time::timeout_at(deadline, stream.chunk()).await {
                Ok(Ok(Some(chunk))) => seen.push_str(&String::from_utf8_lossy(&chunk)),
                Ok(_) => break,
                Err(_) => panic!("the stream outlived its session: {seen}"),
            }
        }
        assert_eq!(web.get(&format!("/boards/{id}/events"), Some(&cookie)).await.status(), 404);
    }
}

/// With local accounts on as well, `/login` is the sign-in page with both ways in: the
/// password form and the provider's button, which starts the provider's sign-in.
#[tokio::test]
async fn with_local_accounts_too_login_offers_both() {
    let web = Web::build(false, true, true, "").await;
    web.choose("lena", "default");
    let page = web.get("/login?next=/boards/pb-1", None).await;
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    assert!(
        html.contains("action=\"/login\"") && html.contains("value=\"/boards/pb-1\""),
        "{html}"
    );
    assert!(
        html.contains("href=\"/login/provider?next=%2Fboards%2Fpb-1\""),
        "{html}"
    );
    let start = web.get("/login/provider?next=/boards/pb-1", None).await;
    assert_eq!(start.status(), 303);
    assert!(location(&start).starts_with(&format!("{}/authorize?", web.idp.issuer)));
    let cookie = set_cookie(&start, "corkboard_login").expect("login cookie");
    let back = web.get(&location(&start), None).await;
    let done = web.get(&location(&back), Some(&cookie)).await;
    assert_eq!(done.status(), 303);
    assert_eq!(location(&done), "/boards/pb-1");
}

#[tokio::test]
async fn sign_in_is_off_without_a_client_id() {
    let web = Web::start(false, false).await;
    assert_eq!(web.get("/login?next=/boards", None).await.status(), 404);
    assert_eq!(web.get("/boards", None).await.status(), 404);
}

/// Signed-in pages, their fragments and streams count like share pages: per client address
/// (before any session is looked up) and per user (every address and session together),
/// with the share pages' 429.
mod signed_in_pages_are_rate_limited {
    use super::*;

    const LIMITS: &str = "[rate_limits.share]\nper_minute = 4\n\
                          [rate_limits.auth_failures]\nclient_ip_header = \"x-forwarded-for\"\n";

    async fn get_from(
        web: &Web,
        address: &str,
        path: &str,
        cookie: Option<&str>,
    ) -> reqwest::Response {
        let mut req = web
            .client
            .get(format!("{}{path}", web.app.base))
            .header("x-forwarded-for", address);
        if let Some(cookie) = cookie {
            req = req.header(header::COOKIE, cookie);
        }
        req.send().await.unwrap()
    }

    async fn assert_limited(res: reqwest::Response) {
        assert_eq!(res.status(), 429);
        assert!(res.headers().contains_key(header::RETRY_AFTER));
        let body: Value = res.json().await.unwrap();
        assert_eq!(
            body["error"]["code"],
            json!("RATE_LIMIT_EXCEEDED"),
            "{body}"
        );
        assert_eq!(body["error"]["details"]["window"], json!("share"), "{body}");
    }

    async fn check(web: Web) {
        let board = call(
            &web.app,
            &web.app.key,
            Method::POST,
            "/v1/pinboards",
            Some(&json!({"title": "Busy"})),
        )
        .await;
        let id = board.body["data"]["id"].as_str().unwrap().to_owned();
        let (cookie, _) = web.sign_in("ivan", "default", "/boards").await;
        let paths = [
            format!("/boards/{id}"),
            format!("/boards/{id}/fragment"),
            format!("/boards/{id}/events"),
            "/boards".to_owned(),
        ];
        // Per address: the pages and the script's routes share its minute.
        for path in &paths {
            assert_ne!(
                get_from(&web, "10.0.0.1", path, None).await.status(),
                429,
                "{path}"
            );
        }
        for path in &paths {
            assert_limited(get_from(&web, "10.0.0.1", path, None).await).await;
        }
        // Per user: from four addresses, the fifth request is refused wherever it comes from.
        for (i, path) in paths.iter().enumerate() {
            let res = get_from(&web, &format!("10.0.1.{i}"), path, Some(&cookie)).await;
            assert_eq!(res.status(), 200, "{path}");
        }
        assert_limited(get_from(&web, "10.0.2.1", &paths[0], Some(&cookie)).await).await;
        // Another user, from a fresh address, is not held back by either.
        let (other, _) = web.sign_in("judy", "default", "/boards").await;
        assert_eq!(
            get_from(&web, "10.0.3.1", &paths[0], Some(&other))
                .await
                .status(),
            200
        );
    }

    #[tokio::test]
    async fn sqlite() {
        check(Web::start_with(false, true, LIMITS).await).await;
    }

    #[tokio::test]
    async fn postgres() {
        crate::skip_without_postgres!();
        check(Web::start_with(true, true, LIMITS).await).await;
    }
}

// CONTRACT.md 16: an invitation's link, with local accounts off, offers the provider; a
// provider's user whose verified email is the invitation's joins with its role.
web_stores! {
    async fn an_invitation_joins_the_providers_user_of_its_email(web) {
        let (_, url) = crate::invitations::invite(&web.app, &web.app.key, "otto@example.test", "editor").await;
        let path = url.strip_prefix(&web.app.base).unwrap().to_owned();
        let page = web.get(&path, None).await.text().await.unwrap();
        assert!(page.contains(&format!("/login/provider?next={}", urlencode(&path))), "{page}");
        assert!(!page.contains("name=\"password\""), "no local accounts: {page}");
        let join = |cookie: String| {
            web.client
                .post(&url)
                .header(header::ORIGIN, &web.app.base)
                .header(header::COOKIE, cookie)
                .form(&[("join", "1")])
                .send()
        };
        // Mia (another email) is refused; the link still works.
        let (mia, _) = web.sign_in("mia", "elsewhere", &path).await;
        assert_eq!(join(mia).await.unwrap().status(), 403);
        // Otto, of another workspace, comes back to the link and joins `default` as an editor.
        let (otto, went) = web.sign_in("otto", "elsewhere", &path).await;
        assert_eq!(went, path);
        let page = web.get(&path, Some(&otto)).await.text().await.unwrap();
        assert!(page.contains("name=\"join\""), "{page}");
        let joined = join(otto).await.unwrap();
        assert_eq!(joined.status(), 303);
        let cookie = set_cookie(&joined, "corkboard_session").expect("session");
        let board = web.app.post("/v1/pinboards", &json!({"title": "Default board"})).await.expect(200);
        let board = board.data()["id"].as_str().unwrap().to_owned();
        assert_eq!(web.get(&format!("/boards/{board}"), Some(&cookie)).await.status(), 200);
        let store = &web.app.state.store;
        let otto_id = store.find_users("otto@example.test").await.unwrap()[0].id.clone();
        let ws = store.ensure_workspace("default").await.unwrap();
        assert_eq!(store.member_role(&ws, &otto_id).await.unwrap().as_deref(), Some("editor"));
        assert_eq!(web.get(&path, None).await.status(), 404, "used");
    }
}
