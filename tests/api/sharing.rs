//! Share settings of pins and boards: round trips, agreement with `is_public` on the
//! records, validation, the `pins:share` scope, and isolation.

use reqwest::Method;
use serde_json::{json, Value};

use crate::{
    both_stores,
    helpers::*,
    pinboards::{new_board, new_pin},
};

fn settings(
    is_public: bool,
    allow_edit: bool,
    require_sign_in: bool,
    allow_comments: bool,
) -> Value {
    json!({
        "is_public": is_public,
        "allow_edit": allow_edit,
        "require_sign_in": require_sign_in,
        "allow_comments": allow_comments,
    })
}

/// The four settings of a share response (without `shareable_url`).
/// The four boolean settings of a share answer (`embed_origins` is `tests/api/embeds.rs`'s).
fn four(res: &Resp) -> Value {
    let mut data = res.data().clone();
    let data_map = data.as_object_mut().unwrap();
    data_map.remove("shareable_url");
    data_map.remove("embed_origins");
    data
}

both_stores! {
    async fn pin_share_settings_round_trip(app) {
        let pin = new_pin(&app, "Sales").await;
        let path = format!("/v1/pins/{pin}/share");
        let res = app.get(&path).await.expect(200);
        assert_eq!(four(&res), settings(false, false, false, false));
        assert_eq!(res.data()["shareable_url"], json!(format!("{}/share/{pin}", app.base)));
        let res = app.put(&path, &json!({"is_public": true, "allow_comments": true})).await.expect(200);
        assert_eq!(four(&res), settings(true, false, false, true));
        let res = app.put(&path, &json!({"allow_edit": true})).await.expect(200);
        assert_eq!(four(&res), settings(true, true, false, true), "only the supplied one changed");
        let res = app.put(&path, &json!({"require_sign_in": true, "allow_comments": false})).await.expect(200);
        assert_eq!(four(&res), settings(true, true, true, false));
        assert_eq!(four(&app.get(&path).await.expect(200)), settings(true, true, true, false));
        // The unprefixed alias, too.
        assert_eq!(four(&app.get(&format!("/pins/{pin}/share")).await.expect(200)), settings(true, true, true, false));
    }

    async fn pin_is_public_agrees_with_share_settings(app) {
        let mut body = stat_cards("public");
        body["metadata"]["is_public"] = json!(true);
        let pin = app.create_pin(&body).await["pin_id"].as_str().unwrap().to_owned();
        let share = format!("/v1/pins/{pin}/share");
        assert_eq!(app.get(&share).await.expect(200).data()["is_public"], json!(true));
        app.patch(&format!("/v1/pins/{pin}"), &json!({"is_public": false})).await.expect(200);
        assert_eq!(app.get(&share).await.expect(200).data()["is_public"], json!(false));
        let res = app.put(&share, &json!({"is_public": true})).await.expect(200);
        assert_eq!(res.data()["is_public"], json!(true));
        let record = app.get(&format!("/v1/pins/{pin}")).await.expect(200);
        assert_eq!(record.data()["is_public"], json!(true));
        // A share change is a write of the pin: a new version, the old one kept.
        assert_eq!(record.data()["version"], json!(3));
        assert_eq!(record.header("etag"), Some("\"3\""));
        let versions = app.get(&format!("/v1/pins/{pin}/versions")).await.expect(200);
        assert_eq!(versions.data()[0]["is_public"], json!(false));
        // Other pin updates keep the other settings.
        app.put(&share, &json!({"allow_comments": true})).await.expect(200);
        app.patch(&format!("/v1/pins/{pin}"), &json!({"metadata": {"title": "renamed"}})).await.expect(200);
        assert_eq!(four(&app.get(&share).await.expect(200)), settings(true, false, false, true));
    }

    async fn board_share_settings_round_trip_and_agree(app) {
        let created = app.post("/v1/pinboards", &json!({"title": "Ops", "is_public": true})).await.expect(200);
        let board = created.data()["id"].as_str().unwrap().to_owned();
        let share = format!("/v1/pinboards/{board}/share");
        let res = app.get(&share).await.expect(200);
        assert_eq!(four(&res), settings(true, false, false, false));
        assert_eq!(res.data()["shareable_url"], created.data()["shareable_url"]);
        let res = app.put(&share, &json!({"require_sign_in": true, "allow_edit": true})).await.expect(200);
        assert_eq!(four(&res), settings(true, true, true, false));
        app.patch(&format!("/v1/pinboards/{board}"), &json!({"is_public": false})).await.expect(200);
        assert_eq!(four(&app.get(&share).await.expect(200)), settings(false, true, true, false));
        app.put(&share, &json!({"is_public": true})).await.expect(200);
        let read = app.get(&format!("/v1/pinboards/{board}")).await.expect(200);
        assert_eq!(read.data()["is_public"], json!(true));
        assert!(read.data().get("allow_edit").is_none(), "the record shows is_public only");
    }

    async fn share_bodies_are_checked(app) {
        let pin = new_pin(&app, "p").await;
        let board = new_board(&app, "b").await;
        for path in [format!("/v1/pins/{pin}/share"), format!("/v1/pinboards/{board}/share")] {
            app.put(&path, &json!({})).await.expect_error(400, "VALIDATION_FAILED", Some("body"));
            app.put(&path, &json!({"public": true})).await.expect_error(400, "VALIDATION_FAILED", Some("public"));
            app.put(&path, &json!({"is_public": "yes"})).await.expect_error(400, "VALIDATION_FAILED", Some("is_public"));
            app.put(&path, &json!({"allow_edit": 1})).await.expect_error(400, "VALIDATION_FAILED", Some("allow_edit"));
            let text = app.send(app.req(Method::PUT, &path).header("content-type", "text/plain").body("{}")).await;
            text.expect_error(415, "UNSUPPORTED_MEDIA_TYPE", None);
            assert_eq!(four(&app.get(&path).await.expect(200)), settings(false, false, false, false));
        }
        for path in ["/v1/pins/p-doesnotexist0000000000/share", "/v1/pinboards/pb-doesnotexist000000000/share"] {
            app.get(path).await.expect_error(404, "NOT_FOUND", None);
            app.put(path, &json!({"is_public": true})).await.expect_error(404, "NOT_FOUND", None);
        }
        app.send(app.req(Method::PATCH, &format!("/v1/pins/{pin}/share")).json(&json!({"is_public": true})))
            .await
            .expect_error(405, "METHOD_NOT_ALLOWED", None);
    }

    async fn share_settings_need_pins_share(app) {
        let pin = new_pin(&app, "p").await;
        let board = new_board(&app, "b").await;
        let paths = [format!("/v1/pins/{pin}/share"), format!("/v1/pinboards/{board}/share")];
        let others = app.key_with("pins:read,pins:write,pinboards:read,pinboards:write,pinboards:invite").await;
        let sharer = app.key_with("pins:share").await;
        for path in &paths {
            for (method, body) in [(Method::GET, None), (Method::PUT, Some(json!({"is_public": true})))] {
                let res = call(&app, &others, method.clone(), path, body.as_ref()).await;
                let res = res.expect_error(403, "SCOPE_REQUIRED", None);
                assert_eq!(res.body["error"]["details"]["required_scope"], json!("pins:share"));
                assert!(res.body["error"]["message"].as_str().unwrap().contains("pins:share"));
                call(&app, &sharer, method, path, body.as_ref()).await.expect(200);
            }
        }
        // A share change is a write: priced and reported like one.
        let res = call(&app, &sharer, Method::PUT, &paths[0], Some(&json!({"allow_edit": true}))).await.expect(200);
        assert_eq!(res.header("x-ratelimit-token-cost"), Some("1"));
        assert!(res.header("x-ratelimit-remaining-minute").is_some());
    }

    async fn other_workspaces_share_settings_are_404(app) {
        let pin = new_pin(&app, "p").await;
        let board = new_board(&app, "b").await;
        let stranger = app.key_in("team-z", "*").await;
        for path in [format!("/v1/pins/{pin}/share"), format!("/v1/pinboards/{board}/share")] {
            call(&app, &stranger, Method::GET, &path, None).await.expect_error(404, "NOT_FOUND", None);
            let body = json!({"is_public": true});
            call(&app, &stranger, Method::PUT, &path, Some(&body)).await.expect_error(404, "NOT_FOUND", None);
            assert_eq!(app.get(&path).await.expect(200).data()["is_public"], json!(false));
        }
    }
}
