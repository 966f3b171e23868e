//! Share pages at each `shareable_url`: public pins and boards render without a credential
//! (every pin type), anything else is one identical 404 page, content can't inject markup,
//! and the pages carry a strict Content-Security-Policy.

use base64::Engine;
use corkboard::pin_types::PinType;
use reqwest::header::HeaderMap;
use serde_json::{json, Value};
use sha2::Digest;

use crate::{
    both_stores,
    helpers::*,
    pinboards::{new_board, new_pin, place},
};

/// A fetched page: status, headers, body.
struct Page {
    status: u16,
    headers: HeaderMap,
    html: String,
}

impl Page {
    fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }
}

/// GETs `url` (absolute) with no credential.
async fn open(app: &TestApp, url: &str) -> Page {
    let res = app.client.get(url).send().await.expect("request");
    let status = res.status().as_u16();
    let headers = res.headers().clone();
    let html = res.text().await.expect("body");
    Page {
        status,
        headers,
        html,
    }
}

async fn open_id(app: &TestApp, id: &str) -> Page {
    open(app, &format!("{}/share/{id}", app.base)).await
}

/// The security headers every share page carries, and a CSP whose style hash is the one
/// `<style>` element of the page.
#[track_caller]
fn assert_locked_down(page: &Page) {
    assert_eq!(page.header("content-type"), "text/html; charset=utf-8");
    assert_eq!(page.header("x-content-type-options"), "nosniff");
    assert_eq!(page.header("referrer-policy"), "no-referrer");
    let csp = page.header("content-security-policy");
    assert!(csp.starts_with("default-src 'none';"), "{csp}");
    assert!(!csp.contains("unsafe"), "{csp}");
    // A live page (200) runs its one same-origin script; the 404 page runs none.
    if page.status == 200 {
        assert!(
            csp.contains("; script-src 'self'; connect-src 'self'; "),
            "{csp}"
        );
        let script = format!(
            "<script src=\"{}\" defer></script>",
            live_script(&page.html)
        );
        assert_eq!(page.html.matches("<script").count(), 1);
        assert!(page.html.contains(&script), "{}", page.html);
    } else {
        assert!(!csp.contains("script") && !csp.contains("connect"), "{csp}");
        assert!(!page.html.contains("<script"));
    }
    let style = page
        .html
        .split("<style>")
        .nth(1)
        .and_then(|s| s.split("</style>").next())
        .expect("a style element");
    let hash =
        base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(style.as_bytes()));
    assert!(csp.contains(&format!("style-src 'sha256-{hash}'")), "{csp}");
    assert_eq!(page.html.matches("<style>").count(), 1);
    assert!(
        !page.html.contains(" style=\""),
        "no inline style attributes"
    );
    assert!(
        page.header("x-ratelimit-limit-hour").is_empty(),
        "pages are outside the API limits"
    );
}

/// No element the page's own code didn't write: no script, no event handler attributes, no
/// script URLs. Escaped content may sit inside quoted attribute values; only what is outside
/// quotes (element and attribute names) can act.
#[track_caller]
fn assert_inert(html: &str) {
    // The page's own script element (checked by `assert_locked_down`), then nothing else.
    let script = format!("<script src=\"{}\" defer></script>", live_script(html));
    let lower = html.replacen(&script, "", 1).to_ascii_lowercase();
    assert!(!lower.contains("<script"), "a script element");
    for tag in lower
        .split('<')
        .skip(1)
        .filter_map(|rest| rest.split('>').next())
    {
        let parts: Vec<&str> = tag.split('"').collect();
        for (i, part) in parts.iter().enumerate() {
            if i % 2 == 0 {
                for name in part.split_whitespace().skip(usize::from(i == 0)) {
                    assert!(!name.starts_with("on"), "handler {name} in <{tag}>");
                }
            } else {
                assert!(
                    !part.trim_start().starts_with("javascript:"),
                    "script URL in <{tag}>"
                );
            }
        }
    }
}

/// The path of the page script a page names (`/assets/live-<hash>.js`), or "" when none.
fn live_script(html: &str) -> String {
    html.split("<script src=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or("")
        .to_owned()
}

async fn make_public_pin(app: &TestApp, body: &Value) -> String {
    let mut body = body.clone();
    body["is_public"] = json!(true);
    app.create_pin(&body).await["pin_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

const XSS_TITLE: &str = "<script>alert(1)</script>\"><img src=x onerror=alert(1)>";

both_stores! {
    async fn public_pin_page_renders_without_a_credential(app) {
        let created = app.create_pin(&{
            let mut b = stat_cards("Quarterly sales");
            b["is_public"] = json!(true);
            b
        }).await;
        let page = open(&app, created["shareable_url"].as_str().unwrap()).await;
        assert_eq!(page.status, 200, "{}", page.html);
        assert_locked_down(&page);
        assert!(page.html.starts_with("<!DOCTYPE html>"));
        assert!(page.html.contains("<title>Quarterly sales</title>"));
        assert!(page.html.contains("$1.2M") && page.html.contains("+4%"), "{}", page.html);
        assert_inert(&page.html);
    }

    async fn unsharing_takes_the_page_down_at_once(app) {
        let pin = make_public_pin(&app, &stat_cards("soon gone")).await;
        assert_eq!(open_id(&app, &pin).await.status, 200);
        app.put(&format!("/v1/pins/{pin}/share"), &json!({"is_public": false})).await.expect(200);
        let page = open_id(&app, &pin).await;
        assert_eq!(page.status, 404);
        assert_eq!(page.header("cache-control"), "no-store");
        app.patch(&format!("/v1/pins/{pin}"), &json!({"is_public": true})).await.expect(200);
        assert_eq!(open_id(&app, &pin).await.status, 200);
    }

    async fn public_board_shows_every_pin_type_in_grid_order(app) {
        let created = app.post("/v1/pinboards", &json!({"title": "Everything", "description": "All 18 types", "is_public": true})).await.expect(200);
        let board = created.data()["id"].as_str().unwrap().to_owned();
        let mut titles = Vec::new();
        for pin_type in PinType::ALL {
            let title = format!("Pin of {}", pin_type.as_str());
            // Private pins: the public board shows them all the same.
            let body = json!({"pin_type": pin_type.as_str(), "pin_config": pin_type.example(), "metadata": {"title": title}});
            let pin = app.create_pin(&body).await["pin_id"].as_str().unwrap().to_owned();
            place(&app, &board, &pin, None).await.expect(200);
            titles.push(title);
        }
        let page = open(&app, created.data()["shareable_url"].as_str().unwrap()).await;
        assert_eq!(page.status, 200);
        assert_locked_down(&page);
        assert_inert(&page.html);
        assert!(page.html.contains("<h1>Everything</h1>") && page.html.contains("All 18 types"));
        let mut at = 0;
        for title in &titles {
            let found = page.html[at..].find(&format!("<h2>{title}</h2>")).unwrap_or_else(|| panic!("{title} missing or out of order"));
            at += found;
        }
        assert_eq!(page.html.matches("<svg class=\"chart").count(), 7, "line, area, bar, pie, scatter, heatmap, gauge");
        assert!(page.html.contains("<table>") && page.html.contains("<progress"));
        assert!(!page.html.contains("can't be shown"), "every type renders");
        assert!(page.html.contains(".g0{grid-area:1/1/span 2/span 3}"), "placed by position");
        // Making the board private hides it, though its pins are unchanged.
        app.patch(&format!("/v1/pinboards/{board}"), &json!({"is_public": false})).await.expect(200);
        assert_eq!(open_id(&app, &board).await.status, 404);
    }

    async fn live_pages_name_their_script_event_id_and_fragment(app) {
        let created = app.post("/v1/pinboards", &json!({"title": "Live", "is_public": true})).await.expect(200);
        let board = created.data()["id"].as_str().unwrap().to_owned();
        let pin = new_pin(&app, "placed").await;
        place(&app, &board, &pin, Some(json!({"x": 2, "y": 1, "w": 4, "h": 3}))).await.expect(200);
        let page = open_id(&app, &board).await;
        assert_eq!(page.status, 200);
        assert_locked_down(&page);
        // The body names the stream to follow and where it resumes: a token of the point
        // the state was read at, never an event id.
        let body = page.html.split("<body").nth(1).unwrap();
        assert!(body.starts_with(&format!(" data-share=\"{board}\" data-since=\"")), "{body}");
        let since = body.split("data-since=\"").nth(1).unwrap().split('"').next().unwrap();
        assert_eq!(since.len(), 32, "{since}");
        assert!(since.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'), "{since}");
        assert!(page.html.contains(&format!(
            "<section class=\"pin g0\" data-pin=\"{pin}\" data-x=\"2\" data-y=\"1\" data-w=\"4\" data-h=\"3\">"
        )), "each cell carries its position");
        // The fragment is the page's body, by the same renderer, under the same headers.
        let fragment = open(&app, &format!("{}/share/{board}/fragment", app.base)).await;
        assert_eq!(fragment.status, 200);
        let inner = body.split_once('>').unwrap().1.strip_suffix("</body></html>").unwrap();
        assert_eq!(fragment.html, inner);
        assert!(fragment.html.starts_with("<header><h1>Live</h1></header><main data-title=\"Live\" data-version=\""));
        assert_eq!(fragment.header("content-security-policy"), page.header("content-security-policy"));
        assert_eq!(fragment.header("cache-control"), "no-store");
        // Kiosk mode is a class on the body; the fragment is the same.
        let kiosk = open(&app, &format!("{}/share/{board}?kiosk=1", app.base)).await;
        assert!(kiosk.html.contains(&format!("<body class=\"kiosk\" data-share=\"{board}\"")));
        // With its fitting script after the live one, and the seconds a page of it stays up.
        assert!(kiosk.html.starts_with("<!DOCTYPE html><html lang=\"en\" class=\"kiosk\" data-page-secs=\"15\">"));
        let fitting = kiosk.html.split("<script src=\"").nth(2).and_then(|s| s.split('"').next()).unwrap();
        assert!(fitting.starts_with("/assets/kiosk-") && !live_script(&page.html).contains("kiosk"), "{fitting}");
        // Kiosk mode's rules (assets/kiosk.css) and the account bar's go only to the pages
        // that use them: the plain page carries neither.
        assert!(kiosk.html.contains("html.fitted main{") && kiosk.html.contains("body.kiosk{--p0:"));
        assert!(!page.html.contains(".kiosk") && !page.html.contains(".account{"), "{}", page.html);
        let fitting = open(&app, &format!("{}{fitting}", app.base)).await;
        assert_eq!(fitting.status, 200);
        assert!(fitting.html.contains("corkboard:swapped") && !fitting.html.contains("eval("));
        // The script: its content hash in its name, cached for good; no other name.
        let path = live_script(&page.html);
        let hash = path.strip_prefix("/assets/live-").and_then(|p| p.strip_suffix(".js")).unwrap();
        assert!(hash.len() == 12 && hash.bytes().all(|b| b.is_ascii_hexdigit()), "{path}");
        let script = open(&app, &format!("{}{path}", app.base)).await;
        assert_eq!(script.status, 200);
        assert_eq!(script.header("content-type"), "text/javascript; charset=utf-8");
        assert_eq!(script.header("cache-control"), "public, max-age=31536000, immutable");
        assert_eq!(script.header("x-content-type-options"), "nosniff");
        assert!(script.html.contains("new EventSource(") && !script.html.contains("eval("));
        let digest = sha2::Sha256::digest(script.html.as_bytes());
        assert!(hash.starts_with(&format!("{:02x}{:02x}", digest[0], digest[1])), "named by its content");
        assert_eq!(open(&app, &format!("{}/assets/live-000000000000.js", app.base)).await.status, 404);
        // The icon a browser asks every site for: an ICO, so no page logs a 404 for it.
        let icon = app.client.get(format!("{}/favicon.ico", app.base)).send().await.unwrap();
        assert_eq!(icon.status().as_u16(), 200);
        assert_eq!(icon.headers()["content-type"], "image/x-icon");
        assert!(icon.bytes().await.unwrap().starts_with(&[0, 0, 1, 0]), "an ICO file");
        // A private board: the 404 page, no script, and the fragment is the 404 page's body.
        app.patch(&format!("/v1/pinboards/{board}"), &json!({"is_public": false})).await.expect(200);
        let gone = open(&app, &format!("{}/share/{board}/fragment", app.base)).await;
        assert_eq!(gone.status, 404);
        assert!(gone.html.starts_with("<header><h1>Not found</h1></header>"), "{}", gone.html);
        let page = open_id(&app, &board).await;
        assert_eq!(page.status, 404);
        assert!(!page.html.contains("data-share") && !page.html.contains("<script"));
    }

    async fn content_cannot_inject_markup(app) {
        let created = app.post("/v1/pinboards", &json!({"title": XSS_TITLE, "description": XSS_TITLE, "is_public": true})).await.expect(200);
        let board = created.data()["id"].as_str().unwrap().to_owned();
        let markdown = json!({
            "pin_type": "markdown",
            "pin_config": {"text": format!("# Notes\n\n{XSS_TITLE}\n\n[click](javascript:alert(1)) <a href=\"javascript:alert(2)\">a</a> <b onclick=\"x()\">b</b>")},
            "metadata": {"title": XSS_TITLE}
        });
        let table = json!({
            "pin_type": "flexible-table",
            "pin_config": {
                "columns": [{"id": "name", "name": XSS_TITLE, "type": "text"}, {"id": "site", "name": "Site", "type": "link"}],
                "rows": [{"id": "r1", "cells": {"name": XSS_TITLE, "site": "https://example.com/?q=\"><script>"}}]
            }
        });
        let list = json!({"pin_type": "list", "pin_config": {"items": [{"text": XSS_TITLE}]}});
        for body in [markdown, table, list] {
            let pin = make_public_pin(&app, &body).await;
            place(&app, &board, &pin, None).await.expect(200);
            let page = open_id(&app, &pin).await;
            assert_eq!(page.status, 200);
            assert_inert(&page.html);
            assert!(page.html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{}", page.html);
        }
        let page = open_id(&app, &board).await;
        assert_eq!(page.status, 200);
        assert_locked_down(&page);
        assert_inert(&page.html);
        let escaped = "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(1)&gt;";
        assert!(page.html.contains(&format!("<title>{escaped}</title>")));
        assert!(page.html.contains(&format!("<h1>{escaped}</h1>")));
        assert!(page.html.contains(&format!("<td>{escaped}</td>")), "table cell");
        assert!(page.html.contains(&format!("<th scope=\"col\">{escaped}</th>")), "column name");
        assert!(page.html.contains("<a href=\"https://example.com/?q=%22%3E%3Cscript%3E\""), "a link's URL normalised");
        assert!(page.html.contains("\">https://example.com/?q=&quot;&gt;&lt;script&gt;</a>"), "its text escaped");
        assert!(page.html.contains("<h1>Notes</h1>"), "markdown still renders");
    }
}

/// Share pages need no credential, so each client address gets `rate_limits.share.per_minute`
/// requests a minute (pages, their fragments and their streams together), as `client_ip_header` names it.
#[tokio::test]
async fn share_pages_are_limited_per_client_address() {
    let limits = "[rate_limits.share]\nper_minute = 4\n[rate_limits.auth_failures]\nclient_ip_header = \"x-forwarded-for\"\n";
    let mut apps = vec![TestApp::sqlite_with(limits).await];
    if postgres_available().await {
        apps.push(TestApp::postgres_with(limits).await);
    }
    for app in apps {
        let pin = make_public_pin(&app, &stat_cards("Shared")).await;
        let get = |from: &'static str, path: String| {
            let req = app
                .client
                .get(format!("{}{path}", app.base))
                .header("x-forwarded-for", from);
            app.send(req)
        };
        assert_eq!(get("10.0.0.1", format!("/share/{pin}")).await.status, 200);
        assert_eq!(get("10.0.0.1", "/share/p-missing".into()).await.status, 404);
        assert_eq!(
            get("10.0.0.1", format!("/share/{pin}/fragment"))
                .await
                .status,
            200
        );
        let stream = app
            .client
            .get(format!("{}/share/{pin}/events", app.base))
            .header("x-forwarded-for", "10.0.0.1")
            .send()
            .await
            .expect("stream");
        assert_eq!(stream.status(), 200);
        drop(stream);
        let refused = get("10.0.0.1", format!("/share/{pin}")).await;
        let retry = refused.header("retry-after").map(str::to_owned);
        let refused = refused.expect_error(429, "RATE_LIMIT_EXCEEDED", None);
        assert_eq!(refused.body["error"]["details"]["window"], json!("share"));
        assert!(retry.is_some_and(|s| s.parse::<u64>().is_ok_and(|s| (1..=60).contains(&s))));
        assert_eq!(
            get("10.0.0.2", format!("/share/{pin}")).await.status,
            200,
            "another address"
        );
        app.clock.advance(60_000);
        assert_eq!(
            get("10.0.0.1", format!("/share/{pin}")).await.status,
            200,
            "a new minute"
        );
    }
}

both_stores! {
    async fn share_pages_refuse_frames_like_every_page(app) {
        let pin = make_public_pin(&app, &stat_cards("Framed")).await;
        for path in [format!("/share/{pin}"), format!("/share/{pin}/fragment"), "/share/p-missing".to_owned()] {
            let page = open(&app, &format!("{}{path}", app.base)).await;
            assert_eq!(page.header("x-frame-options"), "DENY", "{path}");
            assert_eq!(page.header("x-robots-tag"), "noindex", "{path}");
            assert_eq!(page.header("cache-control"), "no-store", "{path}");
        }
    }
}

// Without web sign-in: what is shown only to signed-in visitors is one 404 page with the
// rest (with sign-in on, it goes to /login instead: tests/api/local_accounts.rs).
both_stores! {
    with SIGN_IN_OFF;

    async fn private_missing_and_sign_in_only_are_one_404_page(app) {
        let missing = open_id(&app, "p-doesnotexist0000000000").await;
        assert_eq!(missing.status, 404);
        assert_locked_down(&missing);
        let private_pin = new_pin(&app, "private").await;
        let private_board = new_board(&app, "private").await;
        let signed_pin = make_public_pin(&app, &stat_cards("members")).await;
        app.put(&format!("/v1/pins/{signed_pin}/share"), &json!({"require_sign_in": true})).await.expect(200);
        let signed_board = new_board(&app, "members").await;
        app.put(&format!("/v1/pinboards/{signed_board}/share"), &json!({"is_public": true, "require_sign_in": true})).await.expect(200);
        let ids = [private_pin.as_str(), private_board.as_str(), signed_pin.as_str(), signed_board.as_str(),
                   "pb-doesnotexist000000000", "nonsense", "p-", "%3Cscript%3E"];
        for id in ids {
            let page = open_id(&app, id).await;
            assert_eq!(page.status, 404, "{id}");
            assert_eq!(page.html, missing.html, "{id}: byte for byte the same page");
            assert_eq!(page.header("content-security-policy"), missing.header("content-security-policy"));
        }
        assert!(!missing.html.contains("private") && !missing.html.contains("members"));
        // Another workspace's public pin is public: the page doesn't depend on a workspace.
        let other = app.key_in("team-b", "*").await;
        let res = app.send(app.client.post(format!("{}/v1/pins", app.base)).bearer_auth(&other).json(&{
            let mut b = stat_cards("theirs");
            b["is_public"] = json!(true);
            b
        })).await.expect(200);
        assert_eq!(open_id(&app, res.data()["pin_id"].as_str().unwrap()).await.status, 200);
    }
}

both_stores! {
    async fn pages_and_their_scripts_are_gzipped_for_browsers_that_take_it(app) {
        let board = app.post("/v1/pinboards", &json!({"title": "Everything", "is_public": true})).await.expect(200);
        let board = board.data()["id"].as_str().unwrap().to_owned();
        for pin_type in PinType::ALL {
            let body = json!({"pin_type": pin_type.as_str(), "pin_config": pin_type.example()});
            let pin = app.create_pin(&body).await["pin_id"].as_str().unwrap().to_owned();
            place(&app, &board, &pin, None).await.expect(200);
        }
        let page = open_id(&app, &board).await;
        let script = live_script(&page.html);
        let gzipped = |path: String| {
            let app = &app;
            async move {
                let res = app.client.get(format!("{}{path}", app.base))
                    .header("accept-encoding", "gzip, deflate, br").send().await.expect("request");
                let headers = res.headers().clone();
                (res.status().as_u16(), headers, res.bytes().await.expect("body").to_vec())
            }
        };
        // The page, its fragment, its script and the documentation: gzip when asked, the
        // same bytes once decoded, under half the size; plain to a client that
        // doesn't ask.
        for path in [format!("/share/{board}"), format!("/share/{board}/fragment"), script, "/docs/pin-types".to_owned(), "/".to_owned()] {
            let (status, headers, body) = gzipped(path.clone()).await;
            assert_eq!(status, 200, "{path}");
            assert_eq!(headers["content-encoding"], "gzip", "{path}");
            assert_eq!(headers["vary"], "accept-encoding", "{path}");
            let mut decoded = String::new();
            std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&body[..]), &mut decoded).expect("gzip");
            let plain = open(&app, &format!("{}{path}", app.base)).await;
            assert_eq!(plain.header("content-encoding"), "", "{path}");
            assert_eq!(decoded, plain.html, "{path}");
            assert!(body.len() * 2 < decoded.len(), "{path}: {} of {}", body.len(), decoded.len());
        }
        // Never the stream (an event would wait in the encoder), the picture, the API's
        // JSON, nor a page that takes a password.
        for path in [format!("/share/{board}.png"), "/v1/pins?limit=50".to_owned(), "/login".to_owned()] {
            let mut req = app.client.get(format!("{}{path}", app.base)).header("accept-encoding", "gzip");
            if path.starts_with("/v1/") {
                req = req.bearer_auth(&app.key);
            }
            let res = req.send().await.expect("request");
            assert_eq!(res.status().as_u16(), 200, "{path}");
            assert!(res.headers().get("content-encoding").is_none(), "{path}");
            assert!(res.bytes().await.unwrap().len() > 1024, "{path}: big enough to be compressed");
        }
        // Signed in: the board's page and fragment are gzipped; the keys page, which shows a
        // new key once, never is.
        let browser = crate::invitations::Browser::default();
        let owner = browser.owner(&app).await;
        for (path, gzip) in [(format!("/boards/{board}"), true), (format!("/boards/{board}/fragment"), true), ("/settings/keys".to_owned(), false)] {
            let res = browser.client.get(format!("{}{path}", app.base)).header("cookie", &owner)
                .header("accept-encoding", "gzip").send().await.expect("request");
            assert_eq!(res.status().as_u16(), 200, "{path}");
            let encoding = res.headers().get("content-encoding").map(|v| v.to_str().unwrap().to_owned());
            assert_eq!(encoding.as_deref(), gzip.then_some("gzip"), "{path}");
            assert!(res.bytes().await.unwrap().len() > if gzip { 0 } else { 1024 }, "{path}");
        }
        let mut stream = app.client.get(format!("{}/share/{board}/events", app.base))
            .header("accept-encoding", "gzip").send().await.expect("stream");
        assert_eq!(stream.headers()["content-type"], "text/event-stream");
        assert!(stream.headers().get("content-encoding").is_none());
        let pin = new_pin(&app, "moved").await;
        place(&app, &board, &pin, None).await.expect(200);
        let first = tokio::time::timeout(std::time::Duration::from_secs(5), stream.chunk()).await;
        assert!(matches!(first, Ok(Ok(Some(_)))), "the change arrives at once: {first:?}");
    }
}
