//! The documentation pages (CONTRACT.md 17): `/docs` is the API reference drawn by the
//! embedded Redoc under a strict policy, its scripts served from the binary; `/docs/pin-types`
//! draws every pin type's example beside its schema; the front door links both.

use corkboard::pin_types::PinType;
use reqwest::header::HeaderMap;

use crate::{both_stores, helpers::*};

/// GETs `path` with no credential: status, headers, body bytes.
async fn fetch(app: &TestApp, path: &str, accept_gzip: bool) -> (u16, HeaderMap, Vec<u8>) {
    let mut req = app.client.get(format!("{}{path}", app.base));
    if accept_gzip {
        req = req.header("accept-encoding", "gzip, deflate, br");
    }
    let res = req.send().await.expect("request");
    let status = res.status().as_u16();
    let headers = res.headers().clone();
    (status, headers, res.bytes().await.expect("body").to_vec())
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

/// The `src` of each `<script>` of `html`.
fn scripts(html: &str) -> Vec<String> {
    html.split("<script src=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .map(str::to_owned)
        .collect()
}

both_stores! {
    async fn the_reference_is_a_page_under_a_strict_policy_with_its_scripts_served(app) {
        let (status, headers, body) = fetch(&app, "/docs", false).await;
        let html = String::from_utf8(body).unwrap();
        assert_eq!(status, 200, "{html}");
        assert_eq!(header(&headers, "content-type"), "text/html; charset=utf-8");
        assert_eq!(header(&headers, "x-frame-options"), "DENY");
        let csp = header(&headers, "content-security-policy");
        assert!(csp.starts_with("default-src 'none'; script-src 'self'; style-src 'sha256-"), "{csp}");
        assert!(!csp.contains("unsafe") && !csp.contains("http"), "no inline script, eval or other site: {csp}");
        assert!(csp.contains("connect-src 'self'") && csp.contains("frame-ancestors 'none'"), "{csp}");
        assert_eq!(csp.matches("frame-ancestors").count(), 1, "{csp}");
        assert!(html.contains("data-spec=\"/v1/openapi.json\""), "{html}");
        assert!(html.contains("href=\"/docs/pin-types\""));
        assert!(!html.contains("<script>"), "no inline script");
        let srcs = scripts(&html);
        assert_eq!(srcs.len(), 2, "{srcs:?}");
        for src in &srcs {
            assert!(src.starts_with("/assets/") && src.ends_with(".js"), "{src}");
            let (status, headers, body) = fetch(&app, src, false).await;
            assert_eq!(status, 200, "{src}");
            assert_eq!(header(&headers, "content-type"), "text/javascript; charset=utf-8");
            assert_eq!(header(&headers, "cache-control"), "public, max-age=31536000, immutable");
            assert_eq!(header(&headers, "x-content-type-options"), "nosniff");
            assert!(body.len() > 200, "{src}");
        }
        let redoc = srcs.iter().find(|s| s.starts_with("/assets/redoc-")).expect("redoc bundle");
        let (_, plain_headers, plain) = fetch(&app, redoc, false).await;
        let plain = String::from_utf8(plain).unwrap();
        assert!(plain.contains("ReDoc") && !plain.contains("cdn.redoc.ly"), "asks no other site");
        assert_eq!(header(&plain_headers, "content-encoding"), "");
        let (_, gzip_headers, gzip) = fetch(&app, redoc, true).await;
        assert_eq!(header(&gzip_headers, "content-encoding"), "gzip");
        assert_eq!(header(&gzip_headers, "vary"), "accept-encoding");
        assert_eq!(&gzip[..2], b"\x1f\x8b");
        assert!(gzip.len() * 2 < plain.len(), "{} of {}", gzip.len(), plain.len());
        // The document it draws is there, and an asset of another name is not.
        assert_eq!(fetch(&app, "/v1/openapi.json", false).await.0, 200);
        assert_eq!(fetch(&app, "/assets/redoc-000000000000.js", false).await.0, 404);
    }

    async fn pin_types_draws_every_type_beside_its_schema(app) {
        let (status, headers, body) = fetch(&app, "/docs/pin-types", false).await;
        let html = String::from_utf8(body).unwrap();
        assert_eq!(status, 200);
        let csp = header(&headers, "content-security-policy");
        assert!(csp.starts_with("default-src 'none';") && !csp.contains("script") && !csp.contains("unsafe"), "{csp}");
        assert!(!html.contains("<script"), "a page that runs nothing");
        assert!(html.contains("<h1>Pin types</h1>") && html.contains("href=\"/docs\""));
        for pin_type in PinType::ALL {
            let name = pin_type.as_str();
            let at = html.find(&format!("<section class=\"type\" id=\"{name}\">")).unwrap_or_else(|| panic!("{name} missing"));
            let section = &html[at..];
            let section = &section[..section[1..].find("<section class=\"type\"").map_or(section.len(), |end| end + 1)];
            // The schema, pretty-printed and escaped: its title is the type's name.
            assert!(section.contains(&format!("&quot;title&quot;: &quot;{name}&quot;")), "{name}: {section}");
            assert!(section.contains("<section class=\"pin\""), "{name}: drawn");
        }
        assert_eq!(html.matches("<section class=\"type\"").count(), 18);
        assert!(!html.contains("can't be shown"), "every example renders");
        assert_eq!(html.matches("<svg class=\"chart").count(), 7, "line, area, bar, pie, scatter, heatmap, gauge");
    }

    async fn the_front_door_links_the_documentation(app) {
        let (status, _, body) = fetch(&app, "/", false).await;
        let html = String::from_utf8(body).unwrap();
        assert_eq!(status, 200);
        assert!(html.contains("href=\"/docs\"") && html.contains("href=\"/docs/pin-types\""), "{html}");
        assert!(html.contains("href=\"/login\""), "sign-in on: a way in");
    }
}

both_stores! {
    with SIGN_IN_OFF;

    async fn without_sign_in_the_front_door_still_links_the_documentation(app) {
        let (status, _, body) = fetch(&app, "/", false).await;
        let html = String::from_utf8(body).unwrap();
        assert_eq!(status, 200);
        assert!(html.contains("href=\"/docs\"") && !html.contains("href=\"/login\""), "{html}");
    }
}
