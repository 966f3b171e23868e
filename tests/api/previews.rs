//! Link previews (CONTRACT.md 17): a page shared with anyone carries Open Graph tags naming
//! `/share/{id}.png`, a 1200x630 PNG of the board drawn by the server; whatever is not shown
//! to anyone (private, missing, sign-in only, another workspace's) has neither.

use corkboard::pin_types::PinType;
use reqwest::header::HeaderMap;
use serde_json::json;

use crate::{
    both_stores,
    helpers::*,
    pinboards::{new_board, place},
};

/// GETs `path` with no credential (or with `key`): status, headers, body bytes.
async fn fetch(app: &TestApp, path: &str, key: Option<&str>) -> (u16, HeaderMap, Vec<u8>) {
    let mut req = app.client.get(format!("{}{path}", app.base));
    if let Some(key) = key {
        req = req.bearer_auth(key);
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

/// Width and height of a PNG, from its IHDR chunk (the first, right after the signature).
fn png_size(png: &[u8]) -> (u32, u32) {
    assert!(png.len() > 24, "too short for a PNG");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    assert_eq!(&png[12..16], b"IHDR");
    let at = |i: usize| u32::from_be_bytes([png[i], png[i + 1], png[i + 2], png[i + 3]]);
    (at(16), at(20))
}

/// The `content` of `<meta property|name="{name}">` in `html`.
fn meta<'a>(html: &'a str, name: &str) -> Option<&'a str> {
    ["property", "name"].iter().find_map(|attr| {
        let open = format!("<meta {attr}=\"{name}\" content=\"");
        let at = html.find(&open)? + open.len();
        html[at..].split('"').next()
    })
}

/// A public board with a pin of every type, 3 columns wide, 4 to a row.
async fn public_board_of_every_type(app: &TestApp, title: &str) -> String {
    let created = app
        .post(
            "/v1/pinboards",
            &json!({"title": title, "description": "Every type", "is_public": true}),
        )
        .await
        .expect(200);
    let board = created.data()["id"].as_str().unwrap().to_owned();
    for (i, pin_type) in PinType::ALL.iter().enumerate() {
        let body = json!({"pin_type": pin_type.as_str(), "pin_config": pin_type.example(), "metadata": {"title": format!("Pin of {}", pin_type.as_str())}});
        let pin = app.create_pin(&body).await["pin_id"]
            .as_str()
            .unwrap()
            .to_owned();
        let position = json!({"x": (i % 4) * 3, "y": (i / 4) * 2, "w": 3, "h": 2});
        place(app, &board, &pin, Some(position)).await.expect(200);
    }
    board
}

/// The picture of `id` is the 404 page, as its share page is.
async fn assert_no_picture(app: &TestApp, id: &str, key: Option<&str>) {
    let (status, headers, body) = fetch(app, &format!("/share/{id}.png"), key).await;
    assert_eq!(status, 404, "{id}");
    assert_eq!(
        header(&headers, "content-type"),
        "text/html; charset=utf-8",
        "{id}"
    );
    let html = String::from_utf8(body).unwrap();
    assert!(html.contains("<h1>Not found</h1>"), "{id}: {html}");
}

both_stores! {
    async fn a_public_board_has_its_tags_and_its_picture(app) {
        let board = public_board_of_every_type(&app, "Ops <wall> & \"more\"").await;
        let (status, _, body) = fetch(&app, &format!("/share/{board}"), None).await;
        let html = String::from_utf8(body).unwrap();
        assert_eq!(status, 200);
        assert_eq!(meta(&html, "og:title"), Some("Ops &lt;wall&gt; &amp; &quot;more&quot;"), "escaped");
        assert_eq!(meta(&html, "og:description"), Some("Every type"));
        assert_eq!(meta(&html, "og:type"), Some("website"));
        // No public URL configured: the picture's path, and no og:url.
        assert_eq!(meta(&html, "og:image"), Some(format!("/share/{board}.png").as_str()));
        assert_eq!(meta(&html, "og:url"), None);
        assert_eq!(meta(&html, "twitter:card"), Some("summary_large_image"));
        assert_eq!(meta(&html, "og:image:width"), Some("1200"));
        assert_eq!(meta(&html, "og:image:height"), Some("630"));
        let head = html.split("</head>").next().unwrap();
        assert!(head.contains("og:image"), "the tags are in the head");
        // The fragment the page script swaps in has no head, so no tags.
        let (_, _, fragment) = fetch(&app, &format!("/share/{board}/fragment"), None).await;
        assert!(!String::from_utf8(fragment).unwrap().contains("og:image"));

        let (status, headers, png) = fetch(&app, &format!("/share/{board}.png"), None).await;
        assert_eq!(status, 200);
        assert_eq!(header(&headers, "content-type"), "image/png");
        assert_eq!(header(&headers, "cache-control"), "public, max-age=60");
        assert_eq!(header(&headers, "x-content-type-options"), "nosniff");
        assert_eq!(png_size(&png), (1200, 630));
        assert!(png.len() > 10_000, "a drawn board, not a blank: {} bytes", png.len());
        // An empty board is a picture too.
        let empty = app.post("/v1/pinboards", &json!({"title": "Empty", "is_public": true})).await.expect(200);
        let empty = empty.data()["id"].as_str().unwrap().to_owned();
        let (status, _, png) = fetch(&app, &format!("/share/{empty}.png"), None).await;
        assert_eq!((status, png_size(&png)), (200, (1200, 630)));
    }

    async fn a_public_pin_has_its_picture(app) {
        let mut body = stat_cards("Quarterly sales");
        body["is_public"] = json!(true);
        let pin = app.create_pin(&body).await["pin_id"].as_str().unwrap().to_owned();
        let (_, _, page) = fetch(&app, &format!("/share/{pin}"), None).await;
        let page = String::from_utf8(page).unwrap();
        assert_eq!(meta(&page, "og:title"), Some("Quarterly sales"));
        assert_eq!(meta(&page, "og:image"), Some(format!("/share/{pin}.png").as_str()));
        let (status, headers, png) = fetch(&app, &format!("/share/{pin}.png"), None).await;
        assert_eq!((status, header(&headers, "content-type")), (200, "image/png"));
        assert_eq!(png_size(&png), (1200, 630));
    }

    async fn what_is_not_shown_to_anyone_has_no_tags_and_no_picture(app) {
        let private = new_board(&app, "private").await;
        let (status, _, page) = fetch(&app, &format!("/share/{private}"), None).await;
        assert_eq!(status, 404);
        assert!(!String::from_utf8(page).unwrap().contains("og:image"), "the 404 page has no tags");
        assert_no_picture(&app, &private, None).await;
        assert_no_picture(&app, &private, Some(&app.key)).await;
        let private_pin = app.create_pin(&stat_cards("secret")).await["pin_id"].as_str().unwrap().to_owned();
        assert_no_picture(&app, &private_pin, None).await;
        for id in ["pb-doesnotexist000000000", "p-", "nonsense", "%3Cscript%3E"] {
            assert_no_picture(&app, id, None).await;
        }
        // Shared for signed-in visitors only: the page is theirs, the picture no one's.
        let members = new_board(&app, "members").await;
        app.put(&format!("/v1/pinboards/{members}/share"), &json!({"is_public": true, "require_sign_in": true})).await.expect(200);
        let (status, _, page) = fetch(&app, &format!("/share/{members}"), Some(&app.key)).await;
        assert_eq!(status, 200, "a reader with a credential sees the page");
        assert!(!String::from_utf8(page).unwrap().contains("og:image"), "but no tags");
        assert_no_picture(&app, &members, None).await;
        assert_no_picture(&app, &members, Some(&app.key)).await;
        // Another workspace's private board, asked for with this workspace's key.
        let theirs = app.key_in("team-b", "*").await;
        let res = app.send(app.client.post(format!("{}/v1/pinboards", app.base)).bearer_auth(&theirs).json(&json!({"title": "theirs"}))).await.expect(200);
        let their_board = res.data()["id"].as_str().unwrap().to_owned();
        assert_no_picture(&app, &their_board, Some(&app.key)).await;
        assert_no_picture(&app, &their_board, Some(&theirs)).await;
        // Made public, it has one; made private again, none at once.
        app.send(app.client.patch(format!("{}/v1/pinboards/{their_board}", app.base)).bearer_auth(&theirs).json(&json!({"is_public": true}))).await.expect(200);
        assert_eq!(fetch(&app, &format!("/share/{their_board}.png"), None).await.0, 200);
        app.send(app.client.patch(format!("{}/v1/pinboards/{their_board}", app.base)).bearer_auth(&theirs).json(&json!({"is_public": false}))).await.expect(200);
        assert_no_picture(&app, &their_board, None).await;
    }
}

both_stores! {
    with "public_url = \"https://cork.example/\"\n";

    async fn under_a_public_url_the_tags_are_absolute(app) {
        let created = app.post("/v1/pinboards", &json!({"title": "Sales", "is_public": true})).await.expect(200);
        let board = created.data()["id"].as_str().unwrap().to_owned();
        let (_, _, page) = fetch(&app, &format!("/share/{board}"), None).await;
        let page = String::from_utf8(page).unwrap();
        assert_eq!(meta(&page, "og:url"), Some(format!("https://cork.example/share/{board}").as_str()));
        assert_eq!(meta(&page, "og:image"), Some(format!("https://cork.example/share/{board}.png").as_str()));
        assert_eq!(meta(&page, "og:description"), Some("A live board on Corkboard: 0 pins"));
    }
}
