//! Playlists (CONTRACT.md 17): `/v1/playlists` (reads `pinboards:read`, writes
//! `pinboards:write`), their limits and field paths, workspace isolation, what deleting a
//! board does to them, and their pages: `/play/{id}` for a signed-in reader and
//! `/share/playlist/{id}` while every board of it is shared with anyone. Each scenario on
//! both stores.

use reqwest::{header, Method};
use serde_json::{json, Value};

use crate::{
    both_stores,
    helpers::{call, stat_cards, TestApp},
    invitations::{invite, Browser},
    pinboards::{new_board, place},
};

/// `POST /v1/playlists` with the `*` key; the record.
async fn new_playlist(app: &TestApp, name: &str, items: Value) -> Value {
    app.post("/v1/playlists", &json!({"name": name, "items": items}))
        .await
        .expect(200)
        .data()
        .clone()
}

fn item(board: &str, seconds: i64) -> Value {
    json!({"pinboard_id": board, "seconds": seconds})
}

/// Makes board `id` shared with anyone (or not).
async fn share(app: &TestApp, id: &str, settings: Value) {
    app.put(&format!("/v1/pinboards/{id}/share"), &settings)
        .await
        .expect(200);
}

/// GETs a page (no redirect followed): status, `data-next` of its body, and the HTML.
async fn page(app: &TestApp, path: &str, cookie: Option<&str>) -> (u16, Option<String>, String) {
    let got = Browser::default().get(app, path, cookie).await;
    let next = got
        .body
        .split("data-next=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .map(str::to_owned);
    (got.status.as_u16(), next, got.body)
}

both_stores! {
    async fn create_read_list_update_and_delete(app) {
        let ops = new_board(&app, "Ops").await;
        let sales = new_board(&app, "Sales").await;
        let made = new_playlist(&app, "Lobby", json!([item(&ops, 30), item(&sales, 3600)])).await;
        let id = made["id"].as_str().unwrap().to_owned();
        assert!(id.starts_with("pl-"), "{made}");
        assert_eq!(made["name"], "Lobby");
        assert_eq!(made["items"], json!([item(&ops, 30), item(&sales, 3600)]));
        assert_eq!(made["play_url"], format!("{}/play/{id}", app.base));
        assert_eq!(made["share_url"], format!("{}/share/playlist/{id}", app.base));
        assert_eq!(made["created_at"], made["updated_at"]);

        let read = app.get(&format!("/v1/playlists/{id}")).await.expect(200);
        assert_eq!(read.data(), &made);
        // Unprefixed too (CONTRACT.md 1).
        assert_eq!(app.get(&format!("/playlists/{id}")).await.expect(200).data(), &made);

        // Lists: newest first, paged with a cursor like every list.
        let second = new_playlist(&app, "Wall", json!([item(&sales, 5)])).await;
        let first_page = app.get("/v1/playlists?limit=1").await.expect(200);
        assert_eq!(first_page.data(), &json!([second]));
        assert_eq!(first_page.body["pagination"]["has_more"], true);
        let cursor = first_page.body["pagination"]["next_cursor"].as_str().unwrap().to_owned();
        let next_page = app.get(&format!("/v1/playlists?limit=1&cursor={cursor}")).await.expect(200);
        assert_eq!(next_page.data(), &json!([made]));
        assert_eq!(next_page.body["pagination"], json!({"next_cursor": null, "has_more": false}));

        // PUT: the parts sent replace the stored ones.
        let renamed = app.put(&format!("/v1/playlists/{id}"), &json!({"name": "Lobby TV"})).await.expect(200);
        assert_eq!(renamed.data()["name"], "Lobby TV");
        assert_eq!(renamed.data()["items"], made["items"]);
        let reordered = app
            .put(&format!("/v1/playlists/{id}"), &json!({"items": [item(&sales, 10), item(&ops, 20), item(&sales, 5)]}))
            .await
            .expect(200);
        assert_eq!(reordered.data()["name"], "Lobby TV");
        assert_eq!(reordered.data()["items"], json!([item(&sales, 10), item(&ops, 20), item(&sales, 5)]));
        assert_eq!(app.get(&format!("/v1/playlists/{id}")).await.expect(200).data(), reordered.data());

        let gone = app.delete(&format!("/v1/playlists/{id}")).await.expect(200);
        assert_eq!(gone.data(), &json!({"id": id, "deleted": true}));
        app.get(&format!("/v1/playlists/{id}")).await.expect_error(404, "NOT_FOUND", None);
        app.delete(&format!("/v1/playlists/{id}")).await.expect_error(404, "NOT_FOUND", None);
        app.put(&format!("/v1/playlists/{id}"), &json!({"name": "x"})).await.expect_error(404, "NOT_FOUND", None);
        // Its boards stay.
        app.get(&format!("/v1/pinboards/{ops}")).await.expect(200);
    }

    async fn bodies_are_checked_at_their_field_paths(app) {
        let board = new_board(&app, "Ops").await;
        let other_key = app.key_in("elsewhere", "*").await;
        let theirs = call(&app, &other_key, Method::POST, "/v1/pinboards", Some(&json!({"title": "Theirs"})))
            .await
            .expect(200)
            .data()["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let cases = [
            (json!({"name": " \n", "items": [item(&board, 5)]}), "name"),
            (json!({"name": "x".repeat(201), "items": [item(&board, 5)]}), "name"),
            (json!({"name": "A", "items": []}), "items"),
            (json!({"name": "A", "items": vec![item(&board, 5); 101]}), "items"),
            (json!({"name": "A", "items": [item(&board, 5), item(&board, 4)]}), "items[1].seconds"),
            (json!({"name": "A", "items": [item(&board, 3601)]}), "items[0].seconds"),
            (json!({"name": "A", "items": [item(&board, 5), item(&board, 5), item(&board, 5), item("pb-nothing", 5)]}), "items[3].pinboard_id"),
            // Another workspace's board looks like no board at all.
            (json!({"name": "A", "items": [item(&board, 5), item(&theirs, 5)]}), "items[1].pinboard_id"),
            (json!({"name": "A", "items": [{"pinboard_id": board, "seconds": 5, "extra": 1}]}), "items[0].extra"),
            (json!({"name": "A", "items": [{"pinboard_id": board, "seconds": "5"}]}), "items[0].seconds"),
            (json!({"items": [item(&board, 5)]}), "name"),
        ];
        for (body, field) in cases {
            let res = app.post("/v1/playlists", &body).await;
            assert_eq!(res.body["error"]["details"]["field"], json!(field), "{body}: {}", res.body);
            res.expect_error(400, "VALIDATION_FAILED", Some(field));
        }
        // Exactly 100 items of 5 s and 3600 s are fine.
        let mut many = vec![item(&board, 5); 99];
        many.push(item(&board, 3600));
        new_playlist(&app, "Long", json!(many)).await;

        let made = new_playlist(&app, "Lobby", json!([item(&board, 5)])).await;
        let path = format!("/v1/playlists/{}", made["id"].as_str().unwrap());
        app.put(&path, &json!({})).await.expect_error(400, "VALIDATION_FAILED", Some("body"));
        app.put(&path, &json!({"items": [item(&board, 5), item(&theirs, 5)]}))
            .await
            .expect_error(400, "VALIDATION_FAILED", Some("items[1].pinboard_id"));
        app.put(&path, &json!({"name": null})).await.expect_error(400, "VALIDATION_FAILED", Some("name"));
        // A refused change changed nothing.
        assert_eq!(app.get(&path).await.expect(200).data(), &made);
    }

    async fn reads_need_pinboards_read_and_writes_pinboards_write(app) {
        let board = new_board(&app, "Ops").await;
        let made = new_playlist(&app, "Lobby", json!([item(&board, 5)])).await;
        let path = format!("/v1/playlists/{}", made["id"].as_str().unwrap());
        let reader = app.key_with("pinboards:read").await;
        call(&app, &reader, Method::GET, "/v1/playlists", None).await.expect(200);
        call(&app, &reader, Method::GET, &path, None).await.expect(200);
        for (method, url, body) in [
            (Method::POST, "/v1/playlists", Some(json!({"name": "A", "items": [item(&board, 5)]}))),
            (Method::PUT, path.as_str(), Some(json!({"name": "B"}))),
            (Method::DELETE, path.as_str(), None),
        ] {
            let res = call(&app, &reader, method, url, body.as_ref()).await;
            assert_eq!(res.body["error"]["details"]["required_scope"], "pinboards:write", "{}", res.body);
            res.expect_error(403, "SCOPE_REQUIRED", None);
        }
        let pins_only = app.key_with("pins:read,pins:write").await;
        for url in ["/v1/playlists", path.as_str()] {
            let res = call(&app, &pins_only, Method::GET, url, None).await;
            assert_eq!(res.body["error"]["details"]["required_scope"], "pinboards:read", "{}", res.body);
            res.expect_error(403, "SCOPE_REQUIRED", None);
        }
        assert_eq!(app.get(&path).await.expect(200).data(), &made);
    }

    async fn another_workspace_sees_nothing(app) {
        let board = new_board(&app, "Ops").await;
        let made = new_playlist(&app, "Lobby", json!([item(&board, 5)])).await;
        let path = format!("/v1/playlists/{}", made["id"].as_str().unwrap());
        let theirs = app.key_in("elsewhere", "*").await;
        call(&app, &theirs, Method::GET, &path, None).await.expect_error(404, "NOT_FOUND", None);
        call(&app, &theirs, Method::PUT, &path, Some(&json!({"name": "Mine now"}))).await.expect_error(404, "NOT_FOUND", None);
        call(&app, &theirs, Method::DELETE, &path, None).await.expect_error(404, "NOT_FOUND", None);
        let listed = call(&app, &theirs, Method::GET, "/v1/playlists", None).await.expect(200);
        assert_eq!(listed.data(), &json!([]));
        assert_eq!(app.get(&path).await.expect(200).data(), &made);
    }

    async fn deleting_a_board_drops_its_items(app) {
        let ops = new_board(&app, "Ops").await;
        let sales = new_board(&app, "Sales").await;
        let made = new_playlist(&app, "Lobby", json!([item(&ops, 5), item(&sales, 10), item(&ops, 15)])).await;
        let path = format!("/v1/playlists/{}", made["id"].as_str().unwrap());
        app.delete(&format!("/v1/pinboards/{ops}")).await.expect(200);
        let left = app.get(&path).await.expect(200);
        assert_eq!(left.data()["items"], json!([item(&sales, 10)]));
        app.delete(&format!("/v1/pinboards/{sales}")).await.expect(200);
        assert_eq!(app.get(&path).await.expect(200).data()["items"], json!([]));
    }

    async fn the_share_page_plays_only_while_every_board_is_public(app) {
        let ops = new_board(&app, "Ops wall").await;
        let sales = new_board(&app, "Sales wall").await;
        let pin = app.create_pin(&stat_cards("Signups")).await["id"].as_str().unwrap().to_owned();
        place(&app, &sales, &pin, None).await.expect(200);
        let made = new_playlist(&app, "Lobby", json!([item(&ops, 5), item(&sales, 7)])).await;
        let id = made["id"].as_str().unwrap().to_owned();
        let url = format!("/share/playlist/{id}");

        share(&app, &ops, json!({"is_public": true})).await;
        let (status, next, html) = page(&app, &url, None).await;
        assert_eq!(status, 404, "one board is private");
        assert!(html.contains("Not found") && !html.contains("Ops wall"), "{html}");
        assert!(next.is_none());

        share(&app, &sales, json!({"is_public": true})).await;
        let got = Browser::default().get(&app, &url, None).await;
        assert_eq!(got.status.as_u16(), 200);
        let html = &got.body;
        assert!(html.contains("<h1>Ops wall</h1>"), "{html}");
        assert!(html.contains("class=\"kiosk\""), "kiosk mode: {html}");
        assert!(html.contains(&format!("data-share=\"{ops}\"")), "live as its share page: {html}");
        assert!(html.contains(&format!("data-next=\"/share/playlist/{id}?at=1\" data-seconds=\"5\"")), "{html}");
        assert!(html.contains("<script src=\"/assets/live-") && html.contains("<script src=\"/assets/play-"), "{html}");
        let csp = got.headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
        assert!(csp.contains("script-src 'self'") && !csp.contains("unsafe"), "{csp}");
        assert!(csp.ends_with("; frame-ancestors 'none'"), "{csp}");
        assert_eq!(got.headers[header::X_FRAME_OPTIONS], "DENY");

        let (status, next, html) = page(&app, &format!("{url}?at=1"), None).await;
        assert_eq!(status, 200);
        assert!(html.contains("<h1>Sales wall</h1>") && html.contains("Signups"), "{html}");
        assert_eq!(next.as_deref(), Some(format!("/share/playlist/{id}?at=0").as_str()));
        assert!(html.contains("data-seconds=\"7\""), "{html}");
        // Any turn is taken around the playlist; anything else is the first.
        assert!(page(&app, &format!("{url}?at=3"), None).await.2.contains("<h1>Sales wall</h1>"));
        assert!(page(&app, &format!("{url}?at=x"), None).await.2.contains("<h1>Ops wall</h1>"));

        // The play script is served under its hashed name, for good.
        let script = html.split("<script src=\"").find(|s| s.starts_with("/assets/play-")).unwrap();
        let script = script.split('"').next().unwrap();
        let res = app.client.get(format!("{}{script}", app.base)).send().await.unwrap();
        assert_eq!(res.status().as_u16(), 200);
        assert_eq!(res.headers()[header::CONTENT_TYPE], "text/javascript; charset=utf-8");
        assert!(res.headers()[header::CACHE_CONTROL].to_str().unwrap().contains("immutable"));

        // Shared only after sign-in is not shared with anyone.
        share(&app, &sales, json!({"require_sign_in": true})).await;
        assert_eq!(page(&app, &url, None).await.0, 404);
        share(&app, &sales, json!({"require_sign_in": false})).await;
        assert_eq!(page(&app, &url, None).await.0, 200);
        // A missing playlist, a board's id and a playlist emptied by deletes: the 404 page.
        assert_eq!(page(&app, "/share/playlist/pl-nothing", None).await.0, 404);
        assert_eq!(page(&app, &format!("/share/playlist/{ops}"), None).await.0, 404);
        app.delete(&format!("/v1/pinboards/{ops}")).await.expect(200);
        app.delete(&format!("/v1/pinboards/{sales}")).await.expect(200);
        assert_eq!(page(&app, &url, None).await.0, 404);
    }

    async fn the_play_page_needs_a_signed_in_reader(app) {
        let ops = new_board(&app, "Ops wall").await;
        let sales = new_board(&app, "Sales wall").await;
        let made = new_playlist(&app, "Lobby", json!([item(&ops, 5), item(&sales, 60)])).await;
        let id = made["id"].as_str().unwrap().to_owned();
        let url = format!("/play/{id}");
        let browser = Browser::default();

        // Not signed in: sign in first, and back here.
        let anonymous = browser.get(&app, &url, None).await;
        assert_eq!(anonymous.status.as_u16(), 303);
        assert_eq!(anonymous.location(), format!("/login?next=%2Fplay%2F{id}"));

        // The workspace's owner: the first board, private as it is, live on its board routes.
        let owner = browser.owner(&app).await;
        let (status, next, html) = page(&app, &url, Some(&owner)).await;
        assert_eq!(status, 200, "{html}");
        assert!(html.contains("<h1>Ops wall</h1>") && html.contains("class=\"kiosk\""), "{html}");
        assert!(html.contains(&format!("data-base=\"/boards/{ops}\"")), "{html}");
        assert_eq!(next.as_deref(), Some(format!("/play/{id}?at=1").as_str()));
        let (status, next, html) = page(&app, &format!("{url}?at=1"), Some(&owner)).await;
        assert_eq!(status, 200);
        assert!(html.contains("<h1>Sales wall</h1>") && html.contains("data-seconds=\"60\""), "{html}");
        assert_eq!(next.as_deref(), Some(format!("/play/{id}?at=0").as_str()));

        // A member whose role reads no boards, and a member of another workspace: the 404 page.
        app.post("/v1/roles", &json!({"name": "pins-only", "permissions": ["pins:read"]})).await.expect(200);
        let (_, link) = invite(&app, &app.key, "pia@example.test", "pins-only").await;
        let pia = browser.join(&app, &link, "Pia").await;
        let refused = browser.get(&app, &url, Some(&pia)).await;
        assert_eq!(refused.status.as_u16(), 404);
        assert!(refused.body.contains("Not found") && !refused.body.contains("Ops wall"));
        let theirs = app.key_in("elsewhere", "*").await;
        let (_, link) = invite(&app, &theirs, "otto@example.test", "owner").await;
        let otto = browser.join(&app, &link, "Otto").await;
        let refused = browser.get(&app, &url, Some(&otto)).await;
        assert_eq!(refused.status.as_u16(), 404);
        assert!(!refused.body.contains("Ops wall"));

        // A playlist whose boards were all deleted says there is nothing to play.
        app.delete(&format!("/v1/pinboards/{ops}")).await.expect(200);
        app.delete(&format!("/v1/pinboards/{sales}")).await.expect(200);
        let (status, next, html) = page(&app, &url, Some(&owner)).await;
        assert_eq!(status, 200);
        assert!(html.contains("Nothing to play") && next.is_none(), "{html}");
    }
}

both_stores! {
    with "[kiosk]\npage_secs = 7\n";

    async fn a_playlist_turns_a_long_boards_pages_as_the_kiosk_setting_says(app) {
        let wall = new_board(&app, "Wall").await;
        share(&app, &wall, json!({"is_public": true})).await;
        let made = new_playlist(&app, "Lobby", json!([item(&wall, 60)])).await;
        let id = made["id"].as_str().unwrap();
        let (status, _, html) = page(&app, &format!("/share/playlist/{id}"), None).await;
        assert_eq!(status, 200);
        assert!(html.contains("class=\"kiosk\" data-page-secs=\"7\""), "{html}");
        let (_, _, kiosk) = page(&app, &format!("/share/{wall}?kiosk=1"), None).await;
        assert!(kiosk.contains("class=\"kiosk\" data-page-secs=\"7\""), "{kiosk}");
    }
}
