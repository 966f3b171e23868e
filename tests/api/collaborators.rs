//! Board collaborators: a user, also of another workspace, given a role on one board.

use reqwest::Method;
use serde_json::json;

use crate::{
    helpers::stat_cards,
    idp::{self, claims},
    idp_stores,
    live::Stream,
};

/// A token of `sub` signed in to workspace `org` with role `role`.
fn member_of(org: &str, sub: &str, role: &str) -> String {
    let mut c = claims(sub);
    c["org"] = json!(org);
    c["role"] = json!(role);
    idp::rs256(&c)
}

idp_stores! {
    async fn a_collaborator_from_another_workspace_works_on_that_board_only(idp) {
        let pin = idp.app.create_pin(&stat_cards("on the board")).await;
        let pin_id = pin["id"].as_str().unwrap();
        let board = idp.app.post("/v1/pinboards", &json!({"title": "Q3"})).await.expect(200);
        let board_id = board.data()["id"].as_str().unwrap().to_owned();
        idp.app
            .post(&format!("/v1/pinboards/{board_id}/pins"), &json!({"pin_id": pin_id}))
            .await
            .expect(200);
        let other = idp.app.post("/v1/pinboards", &json!({"title": "private"})).await.expect(200);
        let other_id = other.data()["id"].as_str().unwrap();

        // Zed belongs to acme, where he is a viewer; he signs in once to exist.
        let zed = member_of("acme", "zed", "viewer");
        idp.call(&zed, Method::GET, "/v1/pins", None).await.expect(200);
        let board_path = format!("/v1/pinboards/{board_id}");
        idp.call(&zed, Method::GET, &board_path, None)
            .await
            .expect_error(404, "NOT_FOUND", None);

        let added = idp
            .app
            .post(&format!("{board_path}/collaborators"), &json!({"user": "zed@example.test", "role": "editor"}))
            .await
            .expect(200);
        let zed_id = added.data()["user_id"].as_str().unwrap().to_owned();
        assert!(zed_id.starts_with("usr-"));
        assert_eq!(added.data()["email"], json!("zed@example.test"));
        assert_eq!(added.data()["role"], json!("editor"));
        assert!(added.data()["added_at"].is_string());

        let read = idp.call(&zed, Method::GET, &board_path, None).await.expect(200);
        assert_eq!(read.data()["pins"][0]["pin"]["id"], json!(pin_id));
        idp.call(&zed, Method::PATCH, &board_path, Some(&json!({"title": "Q3 (edited)"})))
            .await
            .expect(200);
        // Only the board: the rest of the workspace stays out of reach.
        idp.call(&zed, Method::GET, &format!("/v1/pinboards/{other_id}"), None)
            .await
            .expect_error(404, "NOT_FOUND", None);
        idp.call(&zed, Method::GET, &format!("/v1/pins/{pin_id}"), None)
            .await
            .expect_error(404, "NOT_FOUND", None);

        let list = idp.app.get(&format!("{board_path}/collaborators")).await.expect(200);
        assert_eq!(list.data().as_array().unwrap().len(), 1);
        assert_eq!(list.data()[0]["user_id"], json!(zed_id));

        let member_path = format!("{board_path}/collaborators/{zed_id}");
        idp.app.patch(&member_path, &json!({"role": "viewer"})).await.expect(200);
        idp.call(&zed, Method::PATCH, &board_path, Some(&json!({"title": "no"})))
            .await
            .expect_error(403, "FORBIDDEN", None);
        idp.call(&zed, Method::GET, &board_path, None).await.expect(200);

        let removed = idp.app.delete(&member_path).await.expect(200);
        assert_eq!(removed.data(), &json!({"user_id": zed_id, "removed": true}));
        idp.call(&zed, Method::GET, &board_path, None)
            .await
            .expect_error(404, "NOT_FOUND", None);
        idp.app.delete(&member_path).await.expect_error(404, "NOT_FOUND", None);
    }

    async fn a_collaborator_from_another_workspace_places_only_pins_of_boards_they_edit(idp) {
        let on_board = idp.app.create_pin(&stat_cards("on the board")).await["id"].as_str().unwrap().to_owned();
        let elsewhere = idp.app.create_pin(&stat_cards("on a board zed can't edit")).await["id"].as_str().unwrap().to_owned();
        let secret = idp.app.create_pin(&stat_cards("secret, on no board")).await["id"].as_str().unwrap().to_owned();
        let mut boards = Vec::new();
        for title in ["edited", "target", "watched"] {
            let board = idp.app.post("/v1/pinboards", &json!({"title": title})).await.expect(200);
            boards.push(board.data()["id"].as_str().unwrap().to_owned());
        }
        let [edited, target, watched] = [&boards[0], &boards[1], &boards[2]];
        for (board, pin) in [(edited, &on_board), (watched, &elsewhere)] {
            idp.app.post(&format!("/v1/pinboards/{board}/pins"), &json!({"pin_id": pin})).await.expect(200);
        }
        let zed = member_of("acme", "zed", "viewer");
        idp.call(&zed, Method::GET, "/v1/pins", None).await.expect(200);
        for (board, role) in [(edited, "editor"), (target, "editor"), (watched, "viewer")] {
            idp.app.post(&format!("/v1/pinboards/{board}/collaborators"), &json!({"user": "zed@example.test", "role": role}))
                .await.expect(200);
        }
        let place = |pin: &str| json!({"pin_id": pin, "position": {"x": 0, "y": 0, "w": 3, "h": 2}});
        // A pin on no board zed may edit, or on none at all: as if it did not exist.
        for pin in [&secret, &elsewhere] {
            idp.call(&zed, Method::POST, &format!("/v1/pinboards/{target}/pins"), Some(&place(pin))).await
                .expect_error(404, "NOT_FOUND", None);
        }
        let target_path = format!("/v1/pinboards/{target}");
        let read = idp.app.get(&target_path).await.expect(200);
        assert_eq!(read.data()["pins"], json!([]), "nothing placed");
        // A pin already on a board zed edits: placed, moved, resized and taken off.
        idp.call(&zed, Method::POST, &format!("{target_path}/pins"), Some(&place(&on_board))).await.expect(200);
        let moved = idp.call(&zed, Method::PUT, &format!("{target_path}/pins/{on_board}"),
            Some(&json!({"position": {"x": 3, "w": 6}}))).await.expect(200);
        assert_eq!(moved.data()["position"], json!({"x": 3, "y": 0, "w": 6, "h": 2}));
        idp.call(&zed, Method::DELETE, &format!("{target_path}/pins/{on_board}"), None).await.expect(200);
        // A member of the workspace still places any of its pins.
        idp.app.post(&format!("{target_path}/pins"), &json!({"pin_id": secret})).await.expect(200);
    }

    async fn adding_collaborators_is_checked(idp) {
        let board = idp.app.post("/v1/pinboards", &json!({"title": "b"})).await.expect(200);
        let path = format!("/v1/pinboards/{}/collaborators", board.data()["id"].as_str().unwrap());
        let yan = idp.user("yan", "viewer");
        idp.call(&yan, Method::GET, "/v1/pins", None).await.expect(200);

        idp.app.post(&path, &json!({"user": "usr-nobody", "role": "viewer"}))
            .await
            .expect_error(404, "NOT_FOUND", None);
        // An email of nobody yet is kept pending (see invitations.rs).
        let pending = idp.app.post(&path, &json!({"user": "nobody@example.test", "role": "viewer"})).await.expect(200);
        assert_eq!(pending.data()["pending"], true);
        idp.app.post(&path, &json!({"user": "yan@example.test", "role": "admin"}))
            .await
            .expect_error(400, "VALIDATION_FAILED", Some("role"));
        idp.app.post(&path, &json!({"user": "yan@example.test", "role": "viewer", "x": 1}))
            .await
            .expect_error(400, "VALIDATION_FAILED", Some("x"));
        idp.app.post(&path, &json!({"user": "yan@example.test", "role": "viewer"})).await.expect(200);
        idp.app.post(&path, &json!({"user": "yan@example.test", "role": "editor"}))
            .await
            .expect_error(409, "CONFLICT", None);

        // Scope, escalation and isolation.
        let reader = idp.app.key_with("pinboards:read").await;
        idp.call(&reader, Method::GET, &path, None)
            .await
            .expect_error(403, "SCOPE_REQUIRED", None);
        let inviter = idp.app.key_with("pinboards:invite,pinboards:read").await;
        idp.call(&inviter, Method::POST, &path, Some(&json!({"user": "yan@example.test", "role": "owner"})))
            .await
            .expect_error(403, "FORBIDDEN", None);
        let stranger = idp.app.key_in("elsewhere", "*").await;
        idp.call(&stranger, Method::GET, &path, None)
            .await
            .expect_error(404, "NOT_FOUND", None);
        // An editor of the workspace may invite (pinboards:invite), but not make owners.
        let editor = idp.user("eve", "editor");
        idp.call(&editor, Method::GET, &path, None).await.expect(200);
        idp.call(&editor, Method::PATCH, &format!("{path}/{}", "usr-none"), Some(&json!({"role": "owner"})))
            .await
            .expect_error(403, "FORBIDDEN", None);
    }

    async fn an_unverified_email_names_nobody(idp) {
        let board = idp.app.post("/v1/pinboards", &json!({"title": "Finance"})).await.expect(200);
        let board_id = board.data()["id"].as_str().unwrap().to_owned();
        // Mallory signs up at the provider with the CFO's address, which it never verified.
        let mut mallory = claims("mallory");
        mallory["org"] = json!("acme");
        mallory["email"] = json!("cfo@example.test");
        mallory["email_verified"] = json!(false);
        let mallory = idp::rs256(&mallory);
        idp.call(&mallory, Method::GET, "/v1/pins", None).await.expect(200);
        // The address names no user: the invitation waits for a verified one.
        let added = idp.app
            .post(&format!("/v1/pinboards/{board_id}/collaborators"), &json!({"user": "cfo@example.test", "role": "editor"}))
            .await
            .expect(200);
        assert_eq!(added.data()["pending"], true);
        idp.call(&mallory, Method::GET, &format!("/v1/pinboards/{board_id}"), None)
            .await
            .expect_error(404, "NOT_FOUND", None);
    }

    async fn a_token_without_the_configured_workspace_claim_is_refused(idp) {
        let mut stray = claims("stray");
        stray.as_object_mut().unwrap().remove("org");
        idp.call(&idp::rs256(&stray), Method::GET, "/v1/pins", None)
            .await
            .expect_error(401, "UNAUTHORIZED", None);
    }

    async fn a_collaborator_cannot_demote_or_remove_a_stronger_one(idp) {
        let board = idp.app.post("/v1/pinboards", &json!({"title": "Shared"})).await.expect(200);
        let board_path = format!("/v1/pinboards/{}", board.data()["id"].as_str().unwrap());
        let zed = member_of("acme", "zed", "viewer");
        let yan = member_of("acme", "yan", "viewer");
        idp.call(&zed, Method::GET, "/v1/pins", None).await.expect(200);
        idp.call(&yan, Method::GET, "/v1/pins", None).await.expect(200);
        let collaborators = format!("{board_path}/collaborators");
        idp.app.post(&collaborators, &json!({"user": "zed@example.test", "role": "editor"})).await.expect(200);
        let owner = idp.app.post(&collaborators, &json!({"user": "yan@example.test", "role": "owner"})).await.expect(200);
        let yan_path = format!("{collaborators}/{}", owner.data()["user_id"].as_str().unwrap());
        idp.call(&zed, Method::PATCH, &yan_path, Some(&json!({"role": "viewer"})))
            .await
            .expect_error(403, "FORBIDDEN", None);
        idp.call(&zed, Method::DELETE, &yan_path, None)
            .await
            .expect_error(403, "FORBIDDEN", None);
        let list = idp.app.get(&collaborators).await.expect(200);
        assert_eq!(list.data()[1]["role"], json!("owner"), "unchanged: {}", list.body);
    }

    async fn a_collaborator_follows_their_board_with_only_its_pinboard_id(idp) {
        let board = idp.app.post("/v1/pinboards", &json!({"title": "Watched"})).await.expect(200);
        let board_id = board.data()["id"].as_str().unwrap().to_owned();
        let zed = member_of("acme", "zed", "viewer");
        idp.call(&zed, Method::GET, "/v1/pins", None).await.expect(200);
        let path = format!("/v1/events?pinboard_id={board_id}");
        // Not yet a collaborator: his own workspace's stream, where this board never shows.
        let mut before = Stream::open(&idp.app, &path, &zed, &[]).await;
        assert_eq!(before.status, 200);
        idp.app
            .post(&format!("/v1/pinboards/{board_id}/collaborators"), &json!({"user": "zed@example.test", "role": "viewer"}))
            .await
            .expect(200);
        let mut stream = Stream::open(&idp.app, &path, &zed, &[]).await;
        assert_eq!(stream.status, 200, "a viewer role on the board opens its stream");
        let pin = idp.app.create_pin(&stat_cards("placed")).await;
        idp.app
            .post(&format!("/v1/pinboards/{board_id}/pins"), &json!({"pin_id": pin["id"]}))
            .await
            .expect(200);
        let event = stream.next_event().await;
        assert_eq!(event.event.as_deref(), Some("pinboard.updated"));
        assert_eq!(event.data["id"], json!(board_id));
        assert!(before.next_frame(std::time::Duration::from_millis(500)).await.is_none_or(|f| f.event.is_none()));
        // Without the board filter, the grant opens nothing of the board's workspace.
        let mut own = Stream::open(&idp.app, "/v1/events", &zed, &[]).await;
        assert_eq!(own.status, 200);
        idp.app.patch(&format!("/v1/pinboards/{board_id}"), &json!({"title": "Watched 2"})).await.expect(200);
        assert!(own.next_frame(std::time::Duration::from_millis(500)).await.is_none_or(|f| f.event.is_none()));
        assert_eq!(stream.next_event().await.data["data"]["title"], json!("Watched 2"));
    }
}
