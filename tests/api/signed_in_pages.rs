//! Share pages with `require_sign_in`: shown to a signed-in visitor who may see the pin or
//! board, and the same 404 page to everyone else.

use serde_json::json;

use crate::{
    helpers::stat_cards,
    helpers::SIGN_IN_OFF,
    idp::{self, claims},
};

/// GETs a share page with an optional bearer credential: (status, html).
async fn open(idp: &crate::idp::IdpApp, url: &str, credential: Option<&str>) -> (u16, String) {
    let mut req = idp.app.client.get(url);
    if let Some(credential) = credential {
        req = req.bearer_auth(credential);
    }
    let res = req.send().await.expect("request");
    (res.status().as_u16(), res.text().await.expect("body"))
}

/// Bearer credentials only: web sign-in is off, so a page no credential opens is the 404
/// page, not a way to sign in.
mod sign_in_only_pages_open_for_those_who_may_see_them {
    use super::*;

    #[tokio::test]
    async fn sqlite() {
        check(crate::idp::IdpApp::start(false, "RS256", SIGN_IN_OFF).await).await;
    }

    #[tokio::test]
    async fn postgres() {
        crate::skip_without_postgres!();
        check(crate::idp::IdpApp::start(true, "RS256", SIGN_IN_OFF).await).await;
    }

    async fn check(idp: crate::idp::IdpApp) {
        let pin = idp.app.create_pin(&stat_cards("Members only")).await;
        let pin_id = pin["id"].as_str().unwrap();
        idp.app
            .put(
                &format!("/v1/pins/{pin_id}/share"),
                &json!({"is_public": true, "require_sign_in": true}),
            )
            .await
            .expect(200);
        let board = idp
            .app
            .post("/v1/pinboards", &json!({"title": "Team board"}))
            .await
            .expect(200);
        let board_id = board.data()["id"].as_str().unwrap().to_owned();
        idp.app
            .put(
                &format!("/v1/pinboards/{board_id}/share"),
                &json!({"is_public": true, "require_sign_in": true}),
            )
            .await
            .expect(200);
        let pin_url = pin["shareable_url"].as_str().unwrap().to_owned();
        let board_url = board.data()["shareable_url"].as_str().unwrap().to_owned();

        let member = idp.user("mia", "viewer");
        let mut outsider_claims = claims("otto");
        outsider_claims["org"] = json!("elsewhere");
        let outsider = idp::rs256(&outsider_claims);
        let (anonymous, not_found) = open(&idp, &pin_url, None).await;
        assert_eq!(anonymous, 404);
        let (status, html) = open(&idp, &pin_url, Some(&member)).await;
        assert_eq!(status, 200);
        assert!(html.contains("Members only"));
        let (status, html) = open(&idp, &board_url, Some(&member)).await;
        assert_eq!(status, 200);
        assert!(html.contains("Team board"));
        for credential in [Some(outsider.as_str()), Some("not-a-token"), None] {
            for url in [&pin_url, &board_url] {
                assert_eq!(open(&idp, url, credential).await, (404, not_found.clone()));
            }
        }

        // A collaborator from another workspace may see that board's page.
        idp.call(&outsider, reqwest::Method::GET, "/v1/pins", None)
            .await
            .expect(200);
        idp.app
            .post(
                &format!("/v1/pinboards/{board_id}/collaborators"),
                &json!({"user": "otto@example.test", "role": "viewer"}),
            )
            .await
            .expect(200);
        assert_eq!(open(&idp, &board_url, Some(&outsider)).await.0, 200);
        assert_eq!(open(&idp, &pin_url, Some(&outsider)).await.0, 404);

        // Without require_sign_in, a private page stays hidden from members too.
        idp.app
            .put(
                &format!("/v1/pins/{pin_id}/share"),
                &json!({"is_public": false}),
            )
            .await
            .expect(200);
        assert_eq!(open(&idp, &pin_url, Some(&member)).await.0, 404);
    }
}
