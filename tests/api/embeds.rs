//! Embedding (CONTRACT.md 17): the share setting `embed_origins` (checked at its field
//! paths, kept with the other settings) and `/embed/{id}`, the live share page without
//! header or footer that only those origins may frame (`frame-ancestors`, no
//! `X-Frame-Options`), while every other page keeps refusing frames. Each scenario on both
//! stores.

use reqwest::header;
use serde_json::json;

use crate::{
    both_stores,
    helpers::{stat_cards, TestApp},
    pinboards::{new_board, place},
};

/// GETs `path` with no credential: status, the CSP, `X-Frame-Options`, the HTML.
async fn open(app: &TestApp, path: &str) -> (u16, String, Option<String>, String) {
    let res = app
        .client
        .get(format!("{}{path}", app.base))
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    let text = |name| {
        res.headers()
            .get(name)
            .map(|v: &header::HeaderValue| v.to_str().unwrap().to_owned())
    };
    let csp = text(header::CONTENT_SECURITY_POLICY).unwrap_or_default();
    let frames = text(header::X_FRAME_OPTIONS);
    (status, csp, frames, res.text().await.unwrap())
}

both_stores! {
    async fn embed_origins_are_share_settings(app) {
        let board = new_board(&app, "Ops").await;
        let path = format!("/v1/pinboards/{board}/share");
        let none = app.get(&path).await.expect(200);
        assert_eq!(none.data()["embed_origins"], json!([]));

        let origins = json!(["https://intranet.example.com", "http://localhost:3000", "https://wiki.example.org:8443"]);
        let set = app.put(&path, &json!({"embed_origins": origins})).await.expect(200);
        assert_eq!(set.data()["embed_origins"], origins);
        assert_eq!(set.data()["is_public"], false);
        // Kept when other settings change, and read back.
        let public = app.put(&path, &json!({"is_public": true})).await.expect(200);
        assert_eq!(public.data()["embed_origins"], origins);
        assert_eq!(app.get(&path).await.expect(200).data(), public.data());
        // Changing them is a change of the board's settings like any other.
        let board_before = app.get(&format!("/v1/pinboards/{board}")).await.expect(200);
        std::thread::sleep(std::time::Duration::from_millis(2));
        app.put(&path, &json!({"embed_origins": ["https://intranet.example.com"]})).await.expect(200);
        let board_after = app.get(&format!("/v1/pinboards/{board}")).await.expect(200);
        assert_ne!(board_after.data()["updated_at"], board_before.data()["updated_at"]);

        for (i, bad) in [
            "https://intranet.example.com/",
            "ftp://files.example.com",
            "https://Intranet.example.com",
            "https://*.example.com",
            "https://example.com/path",
            "https://user@example.com",
            "https://[::1]",
            "https://example.com:",
            "https://example.com:123456",
            "javascript:alert(1)",
            "https://a.com https://b.com",
            "'self'",
            "",
        ]
        .iter()
        .enumerate()
        {
            let body = json!({"embed_origins": ["https://ok.example.com", "http://ok.example.com:81", bad]});
            let refused = app.put(&path, &body).await;
            assert_eq!(refused.body["error"]["details"]["field"], "embed_origins[2]", "case {i} `{bad}`: {}", refused.body);
            refused.expect_error(400, "VALIDATION_FAILED", Some("embed_origins[2]"));
        }
        let too_many: Vec<String> = (0..21).map(|i| format!("https://s{i}.example.com")).collect();
        app.put(&path, &json!({"embed_origins": too_many})).await.expect_error(400, "VALIDATION_FAILED", Some("embed_origins"));
        let twenty: Vec<String> = (0..20).map(|i| format!("https://s{i}.example.com")).collect();
        assert_eq!(app.put(&path, &json!({"embed_origins": twenty})).await.expect(200).data()["embed_origins"], json!(twenty));
        app.put(&path, &json!({"embed_origins": null})).await.expect_error(400, "VALIDATION_FAILED", Some("embed_origins"));
        // A refused change changed nothing; `[]` clears them.
        assert_eq!(app.get(&path).await.expect(200).data()["embed_origins"], json!(twenty));
        assert_eq!(app.put(&path, &json!({"embed_origins": []})).await.expect(200).data()["embed_origins"], json!([]));

        // Pins have them too; a missing pin or another workspace's is a 404.
        let pin = app.create_pin(&stat_cards("Revenue")).await["id"].as_str().unwrap().to_owned();
        let pin_path = format!("/v1/pins/{pin}/share");
        let set = app.put(&pin_path, &json!({"embed_origins": ["https://intranet.example.com"]})).await.expect(200);
        assert_eq!(set.data()["embed_origins"], json!(["https://intranet.example.com"]));
        assert_eq!(app.get(&pin_path).await.expect(200).data()["embed_origins"], json!(["https://intranet.example.com"]));
        app.put("/v1/pins/p-nothing/share", &json!({"embed_origins": []})).await.expect_error(404, "NOT_FOUND", None);
        let theirs = app.key_in("elsewhere", "*").await;
        let res = crate::helpers::call(&app, &theirs, reqwest::Method::PUT, &pin_path, Some(&json!({"embed_origins": ["https://evil.example"]}))).await;
        res.expect_error(404, "NOT_FOUND", None);
        assert_eq!(app.get(&pin_path).await.expect(200).data()["embed_origins"], json!(["https://intranet.example.com"]));
    }

    async fn only_the_embed_page_may_be_framed_and_only_by_its_origins(app) {
        let board = new_board(&app, "Ops wall").await;
        let pin = app.create_pin(&stat_cards("Revenue")).await["id"].as_str().unwrap().to_owned();
        place(&app, &board, &pin, None).await.expect(200);
        let share = format!("/v1/pinboards/{board}/share");

        // Not shared: the 404 page, which no one may frame.
        let (status, csp, frames, _) = open(&app, &format!("/embed/{board}")).await;
        assert_eq!(status, 404);
        assert!(csp.ends_with("; frame-ancestors 'none'"), "{csp}");
        assert_eq!(frames.as_deref(), Some("DENY"));

        // Public without origins: the page, framable by no one (but without X-Frame-Options).
        app.put(&share, &json!({"is_public": true})).await.expect(200);
        let (status, csp, frames, html) = open(&app, &format!("/embed/{board}")).await;
        assert_eq!(status, 200, "{html}");
        assert!(csp.ends_with("; frame-ancestors 'none'"), "{csp}");
        assert_eq!(frames, None);

        app.put(&share, &json!({"embed_origins": ["https://intranet.example.com", "http://localhost:3000"]})).await.expect(200);
        let (status, csp, frames, html) = open(&app, &format!("/embed/{board}")).await;
        assert_eq!(status, 200);
        assert_eq!(frames, None, "no X-Frame-Options on /embed");
        assert!(csp.ends_with("; frame-ancestors https://intranet.example.com http://localhost:3000"), "{csp}");
        assert_eq!(csp.matches("frame-ancestors").count(), 1, "{csp}");
        assert!(csp.starts_with("default-src 'none';") && csp.contains("script-src 'self'") && !csp.contains("unsafe"), "{csp}");
        // The live share page without header or footer: the board's pins, its live script.
        assert!(html.contains("Revenue") && html.contains(&format!("data-share=\"{board}\"")), "{html}");
        assert!(html.contains("<script src=\"/assets/live-"), "{html}");
        assert!(!html.contains("<header") && !html.contains("<footer"), "{html}");
        assert!(html.contains("<main"), "{html}");
        // Kiosk on request.
        let (_, _, _, kiosk) = open(&app, &format!("/embed/{board}?kiosk=1")).await;
        assert!(kiosk.contains("class=\"kiosk\""), "{kiosk}");

        // Every other page keeps refusing frames: the share page, its fragment, the 404 page.
        for path in [format!("/share/{board}"), format!("/share/{board}/fragment"), "/share/pb-nothing".to_owned(), "/embed/pb-nothing".to_owned()] {
            let (_, csp, frames, _) = open(&app, &path).await;
            assert_eq!(frames.as_deref(), Some("DENY"), "{path}");
            assert!(csp.ends_with("; frame-ancestors 'none'"), "{path}: {csp}");
        }

        // A pin's embed page, by its own origins.
        app.put(&format!("/v1/pins/{pin}/share"), &json!({"is_public": true, "embed_origins": ["https://blog.example.net"]})).await.expect(200);
        let (status, csp, frames, html) = open(&app, &format!("/embed/{pin}")).await;
        assert_eq!(status, 200);
        assert!(csp.ends_with("; frame-ancestors https://blog.example.net"), "{csp}");
        assert_eq!(frames, None);
        assert!(html.contains("Revenue") && !html.contains("<footer"), "{html}");

        // Shared only after sign-in, or no longer shared: the 404 page again.
        app.put(&share, &json!({"require_sign_in": true})).await.expect(200);
        assert_eq!(open(&app, &format!("/embed/{board}")).await.0, 404);
        app.put(&format!("/v1/pins/{pin}/share"), &json!({"is_public": false})).await.expect(200);
        let (status, _, frames, _) = open(&app, &format!("/embed/{pin}")).await;
        assert_eq!((status, frames.as_deref()), (404, Some("DENY")));
    }

    async fn embed_origins_go_with_their_item(app) {
        let board = new_board(&app, "Ops").await;
        app.put(&format!("/v1/pinboards/{board}/share"), &json!({"is_public": true, "embed_origins": ["https://intranet.example.com"]})).await.expect(200);
        app.delete(&format!("/v1/pinboards/{board}")).await.expect(200);
        assert_eq!(open(&app, &format!("/embed/{board}")).await.0, 404);
        app.get(&format!("/v1/pinboards/{board}/share")).await.expect_error(404, "NOT_FOUND", None);
        let pin = app.create_pin(&stat_cards("Revenue")).await["id"].as_str().unwrap().to_owned();
        app.put(&format!("/v1/pins/{pin}/share"), &json!({"embed_origins": ["https://intranet.example.com"]})).await.expect(200);
        app.delete(&format!("/v1/pins/{pin}")).await.expect(200);
        app.get(&format!("/v1/pins/{pin}/share")).await.expect_error(404, "NOT_FOUND", None);
    }
}
