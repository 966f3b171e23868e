//! ID tokens: what the server accepts and refuses, and who a signed-in user becomes.

use std::sync::{
    atomic::{AtomicUsize, Ordering},
    Arc,
};

use reqwest::Method;
use serde_json::json;

use crate::{
    helpers::stat_cards,
    idp::{self, claims, IdpApp},
    idp_stores,
};

idp_stores! {
    async fn a_valid_rs256_token_signs_in_a_viewer_of_the_default_workspace(idp) {
        let pin = idp.app.create_pin(&stat_cards("by key")).await;
        let token = idp::rs256(&claims("alice"));
        let read = idp
            .call(&token, Method::GET, &format!("/v1/pins/{}", pin["id"].as_str().unwrap()), None)
            .await
            .expect(200);
        assert_eq!(read.data()["metadata"]["title"], json!("by key"));
        assert!(read.header("x-ratelimit-remaining-minute").is_some());
        idp.call(&token, Method::POST, "/v1/pins", Some(&stat_cards("x")))
            .await
            .expect_error(403, "FORBIDDEN", None);
    }

    async fn the_workspace_claim_places_the_user_and_isolates_them(idp) {
        let pin = idp.app.create_pin(&stat_cards("default only")).await;
        let mut acme = claims("bob");
        acme["org"] = json!("acme");
        acme["role"] = json!("editor");
        let token = idp::rs256(&acme);
        idp.call(&token, Method::GET, &format!("/v1/pins/{}", pin["id"].as_str().unwrap()), None)
            .await
            .expect_error(404, "NOT_FOUND", None);
        let made = idp
            .call(&token, Method::POST, "/v1/pins", Some(&stat_cards("acme pin")))
            .await
            .expect(200);
        let acme_key = idp.app.key_in("acme", "pins:read").await;
        idp.call(&acme_key, Method::GET, &format!("/v1/pins/{}", made.data()["id"].as_str().unwrap()), None)
            .await
            .expect(200);
        idp.app
            .get(&format!("/v1/pins/{}", made.data()["id"].as_str().unwrap()))
            .await
            .expect_error(404, "NOT_FOUND", None);
    }

    async fn the_role_claim_changes_the_role_on_the_next_token(idp) {
        let viewer = idp.user("carol", "viewer");
        idp.call(&viewer, Method::POST, "/v1/pins", Some(&stat_cards("x")))
            .await
            .expect_error(403, "FORBIDDEN", None);
        let editor = idp.user("carol", "editor");
        idp.call(&editor, Method::POST, "/v1/pins", Some(&stat_cards("x")))
            .await
            .expect(200);
    }
}

/// Every way a token can be wrong is a 401 `UNAUTHORIZED`, never a 500 or a pass.
#[tokio::test]
async fn invalid_tokens_are_refused() {
    let idp = IdpApp::start(false, "RS256", "").await;
    let now = idp::now_secs();
    let with = |change: &dyn Fn(&mut serde_json::Value)| {
        let mut c = claims("mallory");
        change(&mut c);
        c
    };
    let cases = [
        (
            "expired",
            idp::rs256(&with(&|c| c["exp"] = json!(now - 120))),
        ),
        (
            "not yet valid",
            idp::rs256(&with(&|c| c["nbf"] = json!(now + 300))),
        ),
        (
            "wrong issuer",
            idp::rs256(&with(&|c| c["iss"] = json!("https://evil.test/"))),
        ),
        (
            "wrong audience",
            idp::rs256(&with(&|c| c["aud"] = json!("someone-else"))),
        ),
        (
            "no subject",
            idp::rs256(&with(&|c| {
                c.as_object_mut().unwrap().remove("sub");
            })),
        ),
        (
            "no expiry",
            idp::rs256(&with(&|c| {
                c.as_object_mut().unwrap().remove("exp");
            })),
        ),
        ("wrong key", idp::rs256_wrong_key(&claims("mallory"))),
        (
            "unknown kid",
            idp::sign_rsa(idp::provider_key(), "k9", &claims("mallory")),
        ),
        ("alg none", idp::unsigned(&claims("mallory"))),
        (
            "HS256 not pinned",
            idp::hs256(idp::HS256_SECRET.as_bytes(), &claims("mallory")),
        ),
        (
            "key confusion",
            idp::hs256(idp::public_pem().as_bytes(), &claims("mallory")),
        ),
        (
            "bad workspace claim",
            idp::rs256(&with(&|c| c["org"] = json!("Not A Name"))),
        ),
        ("not a JWT", "hello.world".to_owned()),
    ];
    for (case, token) in cases {
        let res = idp.call(&token, Method::GET, "/v1/pins", None).await;
        assert_eq!(res.status, 401, "{case}: {}", res.body);
        assert_eq!(res.code(), "UNAUTHORIZED", "{case}");
    }
    // Within the leeway, a just-expired token still passes.
    let lenient = idp::rs256(&with(&|c| c["exp"] = json!(now - 5)));
    idp.call(&lenient, Method::GET, "/v1/pins", None)
        .await
        .expect(200);
}

#[tokio::test]
async fn hs256_tokens_pass_with_the_secret_and_only_with_it() {
    let idp = IdpApp::start(false, "RS256,HS256", "").await;
    let good = idp::hs256(idp::HS256_SECRET.as_bytes(), &claims("dave"));
    idp.call(&good, Method::GET, "/v1/pins", None)
        .await
        .expect(200);
    let confused = idp::hs256(idp::public_pem().as_bytes(), &claims("dave"));
    let refused = idp
        .call(&confused, Method::GET, "/v1/pins", None)
        .await
        .expect_error(401, "UNAUTHORIZED", None);
    assert_eq!(
        refused.header("www-authenticate"),
        Some("Bearer error=\"invalid_token\""),
        "a refused ID token names it"
    );
    let rsa = idp::rs256(&claims("dave"));
    idp.call(&rsa, Method::GET, "/v1/pins", None)
        .await
        .expect(200);
}

#[tokio::test]
async fn es256_tokens_pass_only_when_es256_is_configured() {
    let both = IdpApp::start(false, "RS256,ES256", "").await;
    let token = idp::es256(&claims("ivy"));
    both.call(&token, Method::GET, "/v1/pins", None)
        .await
        .expect(200);
    let rsa_only = IdpApp::start(false, "RS256", "").await;
    rsa_only
        .call(&token, Method::GET, "/v1/pins", None)
        .await
        .expect_error(401, "UNAUTHORIZED", None);
}

#[tokio::test]
async fn a_rotated_key_is_picked_up_from_the_jwks_file() {
    let idp = IdpApp::start(false, "RS256", "").await;
    idp.call(&idp::rs256(&claims("erin")), Method::GET, "/v1/pins", None)
        .await
        .expect(200);
    let rotated = idp::sign_rsa(idp::provider_key(), "k2", &claims("erin"));
    idp.call(&rotated, Method::GET, "/v1/pins", None)
        .await
        .expect_error(401, "UNAUTHORIZED", None);
    std::fs::write(&idp.jwks_path, idp::jwks(&["k1", "k2"])).expect("rotate");
    idp.call(&rotated, Method::GET, "/v1/pins", None)
        .await
        .expect(200);
}

#[tokio::test]
async fn tokens_are_refused_when_sign_in_is_off() {
    let app = crate::helpers::TestApp::sqlite().await;
    let token = idp::rs256(&claims("frank"));
    app.send(
        app.client
            .get(format!("{}/v1/pins", app.base))
            .bearer_auth(token),
    )
    .await
    .expect_error(401, "UNAUTHORIZED", None);
}

#[tokio::test]
async fn the_jwks_can_come_from_a_url_fetched_again_at_most_every_10_s() {
    let (url, fetches) = jwks_url(idp::jwks(&["k1"])).await;
    let app = crate::helpers::TestApp::sqlite_with(&idp::config("RS256", &url, "")).await;
    let call = |token: String| {
        app.send(
            app.client
                .get(format!("{}/v1/pins", app.base))
                .bearer_auth(token),
        )
    };
    call(idp::rs256(&claims("gina"))).await.expect(200);
    call(idp::rs256(&claims("gina"))).await.expect(200);
    call(idp::rs256_wrong_key(&claims("gina")))
        .await
        .expect_error(401, "UNAUTHORIZED", None);
    for _ in 0..3 {
        let unknown = idp::sign_rsa(idp::provider_key(), "k9", &claims("gina"));
        call(unknown).await.expect_error(401, "UNAUTHORIZED", None);
    }
    assert_eq!(fetches.load(Ordering::SeqCst), 1);
}

/// Serves `jwks` at a URL of its own and counts the fetches (a slow provider: 200 ms each).
async fn jwks_url(jwks: String) -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/jwks.json", listener.local_addr().expect("addr"));
    let fetches = Arc::new(AtomicUsize::new(0));
    let counter = fetches.clone();
    let provider = axum::Router::new().route(
        "/jwks.json",
        axum::routing::get(move || {
            let jwks = jwks.clone();
            let counter = counter.clone();
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                jwks
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, provider).await });
    (url, fetches)
}

#[tokio::test]
async fn concurrent_first_tokens_share_one_jwks_load_and_all_pass() {
    let (url, fetches) = jwks_url(idp::jwks(&["k1"])).await;
    let app = crate::helpers::TestApp::sqlite_with(&idp::config("RS256", &url, "")).await;
    let calls = (0..20).map(|i| {
        app.send(
            app.client
                .get(format!("{}/v1/pins", app.base))
                .bearer_auth(idp::rs256(&claims(&format!("user{i}")))),
        )
    });
    for answer in futures::future::join_all(calls).await {
        answer.expect(200);
    }
    assert_eq!(
        fetches.load(Ordering::SeqCst),
        1,
        "one load for all of them"
    );
}

#[tokio::test]
async fn a_jwk_for_encryption_or_another_algorithm_verifies_nothing() {
    let set: serde_json::Value = serde_json::from_str(&idp::jwks(&["k1", "k2"])).unwrap();
    let mut keys = set["keys"].as_array().unwrap().clone();
    keys[0]["use"] = serde_json::json!("enc");
    keys[1]["alg"] = serde_json::json!("PS256");
    let (url, _) = jwks_url(serde_json::json!({ "keys": keys }).to_string()).await;
    let app = crate::helpers::TestApp::sqlite_with(&idp::config("RS256", &url, "")).await;
    for kid in ["k1", "k2"] {
        let token = idp::sign_rsa(idp::provider_key(), kid, &claims("hana"));
        app.send(
            app.client
                .get(format!("{}/v1/pins", app.base))
                .bearer_auth(token),
        )
        .await
        .expect_error(401, "UNAUTHORIZED", None);
    }
}
