//! The board editor of the web app (CONTRACT.md 16): "New board" on `/boards`, the layout,
//! settings, sharing and collaborators of `/boards/{id}`, each a same-origin POST with the
//! session cookie that lands in the same operations as the API (what the API reads after,
//! the board's version and its events), and every refusal: a viewer's edit, another
//! workspace's board, a missing or foreign `Origin`, a stale version, no session. Users sign
//! in through the test's identity provider once (so they exist with their role) and get a
//! web session; each scenario on both stores.

use reqwest::{header, Method};
use serde_json::{json, Value};

use crate::{
    helpers::{event_stream, stat_cards},
    idp::{self, claims, IdpApp},
    pages::{browser_client, inline_code, Page},
};

/// A server with the provider's tokens, and a browser-like client that follows no redirects.
struct Web {
    idp: IdpApp,
    client: reqwest::Client,
}

/// How a POST is sent: as the page's form (a browser's navigation) or by its script.
#[derive(Clone, Copy)]
enum Sent<'a> {
    Form,
    Script,
    Origin(Option<&'a str>),
}

impl Web {
    async fn start(postgres: bool) -> Web {
        let idp = IdpApp::start(postgres, "RS256", "").await;
        Web {
            idp,
            client: browser_client(),
        }
    }

    fn base(&self) -> &str {
        &self.idp.app.base
    }

    /// A web session of `sub` (`sub@example.test`), member of `org` with `role`: they sign in
    /// to the API once (so they exist), then get a session as a sign-in gives one.
    async fn session(&self, sub: &str, org: &str, role: &str) -> String {
        let mut c = claims(sub);
        c["org"] = json!(org);
        c["role"] = json!(role);
        self.idp
            .call(&idp::rs256(&c), Method::GET, "/v1/pin-types", None)
            .await
            .expect(200);
        let id = corkboard::auth::sessions::create(&self.idp.app.state, sub, org, 3_600_000)
            .await
            .unwrap();
        format!("corkboard_session={}", id.as_str())
    }

    async fn get(&self, path: &str, cookie: &str) -> Page {
        let req = self.client.get(format!("{}{path}", self.base()));
        Page::read(req.header(header::COOKIE, cookie).send().await.unwrap()).await
    }

    async fn post(
        &self,
        path: &str,
        cookie: Option<&str>,
        form: &[(&str, &str)],
        how: Sent<'_>,
    ) -> Page {
        let mut req = self
            .client
            .post(format!("{}{path}", self.base()))
            .form(form);
        if let Some(cookie) = cookie {
            req = req.header(header::COOKIE, cookie);
        }
        let origin = match how {
            Sent::Form | Sent::Script => Some(self.base()),
            Sent::Origin(origin) => origin,
        };
        if let Some(origin) = origin {
            req = req.header(header::ORIGIN, origin);
        }
        if let Sent::Script = how {
            req = req.header(header::ACCEPT, "application/json");
        }
        Page::read(req.send().await.unwrap()).await
    }

    /// The board as the API reads it (the `*` key).
    async fn board(&self, id: &str) -> Value {
        self.idp
            .app
            .get(&format!("/v1/pinboards/{id}"))
            .await
            .expect(200)
            .data()
            .clone()
    }

    /// `{pin_id: [x, y, w, h]}` of the board as the API reads it.
    async fn layout(&self, id: &str) -> Vec<(String, [i64; 4])> {
        let board = self.board(id).await;
        board["pins"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                let at = &p["position"];
                let n = |k: &str| at[k].as_i64().unwrap();
                (
                    p["pin_id"].as_str().unwrap().to_owned(),
                    [n("x"), n("y"), n("w"), n("h")],
                )
            })
            .collect()
    }

    async fn new_board(&self, title: &str) -> String {
        let board = self
            .idp
            .app
            .post("/v1/pinboards", &json!({ "title": title }))
            .await
            .expect(200);
        board.data()["id"].as_str().unwrap().to_owned()
    }

    async fn pin(&self, title: &str, tags: &[&str]) -> String {
        let mut body = stat_cards(title);
        body["metadata"]["tags"] = json!(tags);
        self.idp.app.create_pin(&body).await["id"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    async fn place(&self, board: &str, pin: &str) {
        self.idp
            .app
            .post(
                &format!("/v1/pinboards/{board}/pins"),
                &json!({ "pin_id": pin }),
            )
            .await
            .expect(200);
    }
}

/// The start tag of the element whose attributes include `marker`.
fn start_tag<'a>(html: &'a str, marker: &str) -> &'a str {
    let at = html.find(marker).unwrap_or_else(|| panic!("no {marker}"));
    let open = html[..at].rfind('<').unwrap();
    let close = at + html[at..].find('>').unwrap();
    &html[open..=close]
}

macro_rules! web_stores {
    ($(async fn $name:ident($web:ident) $body:block)*) => {$(
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            #[tokio::test]
            async fn sqlite() {
                let $web = Web::start(false).await;
                $body
            }
            #[tokio::test]
            async fn postgres() {
                $crate::skip_without_postgres!();
                let $web = Web::start(true).await;
                $body
            }
        }
    )*};
}

web_stores! {
    async fn new_board_from_the_boards_page(web) {
        let owner = web.session("olga", "default", "owner").await;
        let empty = web.get("/boards", &owner).await;
        assert_eq!(empty.status, 200);
        assert!(empty.body.contains("No boards yet"), "{}", empty.body);
        assert!(empty.body.contains("action=\"/boards\"") && empty.body.contains("New board"));
        assert!(!inline_code(&empty.body));
        let csp = empty.headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
        assert!(csp.contains("form-action 'self'") && csp.contains("style-src 'self'"), "{csp}");

        let form = [("title", "Operations"), ("description", "Nightly jobs")];
        for how in [Sent::Origin(None), Sent::Origin(Some("https://evil.test"))] {
            let refused = web.post("/boards", Some(&owner), &form, how).await;
            assert_eq!(refused.status, 403);
        }
        let blank = web.post("/boards", Some(&owner), &[("title", "  ")], Sent::Form).await;
        assert_eq!(blank.status, 400);
        assert!(blank.is_html() && blank.body.contains("characters"), "{}", blank.body);
        let listed = web.idp.app.get("/v1/pinboards").await.expect(200);
        assert_eq!(listed.data().as_array().unwrap().len(), 0, "nothing made by a refused form");

        let made = web.post("/boards", Some(&owner), &form, Sent::Form).await;
        assert_eq!(made.status, 303, "{}", made.body);
        let to = made.location().to_owned();
        let id = to.strip_prefix("/boards/").unwrap().strip_suffix("?edit=1").unwrap();
        let board = web.board(id).await;
        assert_eq!(board["title"], json!("Operations"));
        assert_eq!(board["description"], json!("Nightly jobs"));
        let page = web.get(&to, &owner).await;
        assert_eq!(page.status, 200);
        assert!(page.body.contains("id=\"add-pins\"") && page.body.contains("Board settings"));
        let list = web.get("/boards", &owner).await;
        assert!(list.body.contains(&format!("href=\"/boards/{id}\"")) && !list.body.contains("No boards yet"));

        // A viewer makes no board: no form, and the route refuses.
        let viewer = web.session("vic", "default", "viewer").await;
        assert!(!web.get("/boards", &viewer).await.body.contains("action=\"/boards\""));
        let refused = web.post("/boards", Some(&viewer), &form, Sent::Form).await;
        assert_eq!(refused.status, 403);
        let scripted = web.post("/boards", Some(&viewer), &form, Sent::Script).await;
        assert_eq!(scripted.status, 403);
        assert_eq!(scripted.json()["error"]["code"], json!("FORBIDDEN"));
        assert_eq!(web.idp.app.get("/v1/pinboards").await.expect(200).data().as_array().unwrap().len(), 1);
    }

    async fn the_layout_changes_through_the_placement_operations(web) {
        let id = web.new_board("Layout").await;
        let first = web.pin("Revenue", &["finance"]).await;
        let second = web.pin("Latency", &["ops"]).await;
        let third = web.pin("Signups", &["growth"]).await;
        web.place(&id, &first).await;
        web.place(&id, &second).await;
        let editor = web.session("eddie", "default", "editor").await;

        let page = web.get(&format!("/boards/{id}"), &editor).await;
        assert_eq!(page.status, 200);
        assert!(page.body.contains("id=\"tools\"") && page.body.contains("Edit board"));
        assert!(page.body.contains("/assets/editor-") && !inline_code(&page.body));
        let script = page.body.split("src=\"/assets/editor-").nth(1).unwrap().split('"').next().unwrap();
        let asset = web.get(&format!("/assets/editor-{script}"), &editor).await;
        assert_eq!(asset.status, 200);
        assert!(asset.body.contains("corkboard:refresh"));

        // The picker: the workspace's pins not on the board, by title or tag.
        let editing = web.get(&format!("/boards/{id}?edit=1&q=sign"), &editor).await;
        assert!(editing.body.contains(&format!("value=\"{third}\"")), "{}", editing.body);
        assert!(!editing.body.contains(&format!("value=\"{first}\"")));
        let by_tag = web.get(&format!("/boards/{id}/picker?q=GROWTH"), &editor).await;
        assert_eq!(by_tag.status, 200);
        assert!(by_tag.body.contains("Signups") && !by_tag.body.contains("Latency"), "{}", by_tag.body);

        let mut events = event_stream(&web.idp.app).await;
        let version = web.board(&id).await["updated_at"].as_str().unwrap().to_owned();
        assert!(page.body.contains(&format!("data-version=\"{version}\"")));
        let added = web
            .post(&format!("/boards/{id}/pins"), Some(&editor), &[("pin_id", &third), ("version", &version)], Sent::Script)
            .await;
        assert_eq!(added.status, 200, "{}", added.body);
        let after_add = added.json()["version"].as_str().unwrap().to_owned();
        assert_eq!(web.board(&id).await["updated_at"], json!(after_add));
        assert!(after_add > version, "{after_add} after {version}");
        let layout = web.layout(&id).await;
        assert_eq!(layout.len(), 3);
        assert!(layout.iter().any(|(pin, _)| *pin == third));
        let event = events.next_event().await;
        assert_eq!(event.event.as_deref(), Some("pinboard.updated"), "{event:?}");
        assert_eq!(event.data["id"], json!(id));

        // Moved and resized, as `PUT /v1/pinboards/{id}/pins/{pin}` does.
        let moved = web
            .post(
                &format!("/boards/{id}/pins/{first}"),
                Some(&editor),
                &[("x", "6"), ("y", "4"), ("w", "4"), ("h", "3"), ("version", &after_add)],
                Sent::Script,
            )
            .await;
        assert_eq!(moved.status, 200, "{}", moved.body);
        let after_move = moved.json()["version"].as_str().unwrap().to_owned();
        assert!(web.layout(&id).await.contains(&(first.clone(), [6, 4, 4, 3])));
        let event = events.next_event().await;
        assert_eq!(event.event.as_deref(), Some("pinboard.updated"), "{event:?}");

        // A change made on a layout someone else has changed since: the conflict answer,
        // nothing changed.
        let stale = web
            .post(&format!("/boards/{id}/pins/{first}"), Some(&editor), &[("x", "0"), ("version", &version)], Sent::Script)
            .await;
        assert_eq!(stale.status, 409);
        assert_eq!(stale.json()["error"]["code"], json!("CONFLICT"));
        let stale_form = web
            .post(&format!("/boards/{id}/pins/{first}"), Some(&editor), &[("x", "0"), ("version", &version)], Sent::Form)
            .await;
        assert_eq!(stale_form.status, 409);
        assert!(stale_form.is_html() && stale_form.body.contains("Someone else changed this board"));
        assert!(web.layout(&id).await.contains(&(first.clone(), [6, 4, 4, 3])));
        // Onto another pin: the operation's own conflict.
        let (_, [x, y, _, _]) = web.layout(&id).await.into_iter().find(|(p, _)| *p == second).unwrap();
        let onto = web
            .post(
                &format!("/boards/{id}/pins/{first}"),
                Some(&editor),
                &[("x", &x.to_string()), ("y", &y.to_string()), ("version", &after_move)],
                Sent::Script,
            )
            .await;
        assert_eq!(onto.status, 409, "{}", onto.body);
        let outside = web
            .post(&format!("/boards/{id}/pins/{first}"), Some(&editor), &[("x", "10"), ("version", &after_move)], Sent::Script)
            .await;
        assert_eq!(outside.status, 400);
        assert_eq!(outside.json()["error"]["details"]["field"], json!("position.x"), "{}", outside.body);

        // Taken off: the pin stays.
        let off = web
            .post(&format!("/boards/{id}/pins/{second}/remove"), Some(&editor), &[("version", &after_move)], Sent::Form)
            .await;
        assert_eq!(off.status, 303);
        assert_eq!(off.location(), format!("/boards/{id}?edit=1"));
        assert!(!web.layout(&id).await.iter().any(|(p, _)| *p == second));
        web.idp.app.get(&format!("/v1/pins/{second}")).await.expect(200);

        // Renamed and described, then deleted after the confirmation.
        let version = web.board(&id).await["updated_at"].as_str().unwrap().to_owned();
        let renamed = web
            .post(
                &format!("/boards/{id}/settings"),
                Some(&editor),
                &[("title", "Layout v2"), ("description", "Moved <around>"), ("version", &version)],
                Sent::Form,
            )
            .await;
        assert_eq!(renamed.status, 303);
        let board = web.board(&id).await;
        assert_eq!((board["title"].as_str(), board["description"].as_str()), (Some("Layout v2"), Some("Moved <around>")));
        let shown = web.get(&format!("/boards/{id}"), &editor).await;
        assert!(shown.body.contains("Moved &lt;around&gt;") && !shown.body.contains("<around>"));
        let version = board["updated_at"].as_str().unwrap().to_owned();
        let unconfirmed = web.post(&format!("/boards/{id}/delete"), Some(&editor), &[("version", &version)], Sent::Form).await;
        assert_eq!(unconfirmed.status, 400);
        web.board(&id).await;
        let deleted = web
            .post(&format!("/boards/{id}/delete"), Some(&editor), &[("confirm", "yes"), ("version", &version)], Sent::Script)
            .await;
        assert_eq!(deleted.status, 200);
        assert_eq!(deleted.json()["go"], json!("/boards"));
        web.idp.app.get(&format!("/v1/pinboards/{id}")).await.expect(404);
        web.idp.app.get(&format!("/v1/pins/{first}")).await.expect(200);
    }

    async fn edits_from_one_version_make_one_change(web) {
        // Editors whose pages show the same version race: the board takes exactly one of
        // their changes, the rest are told it changed (the version is compared inside the
        // write, not read before it).
        let id = web.new_board("Raced").await;
        let pins = [web.pin("A", &[]).await, web.pin("B", &[]).await, web.pin("C", &[]).await];
        for pin in &pins {
            web.place(&id, pin).await;
        }
        let editor = web.session("eddie", "default", "editor").await;
        let version = web.board(&id).await["updated_at"].as_str().unwrap().to_owned();
        let moves = (0..8).map(|i| {
            let path = format!("/boards/{id}/pins/{}/remove", pins[i % 3]);
            let (web, editor, version) = (&web, &editor, &version);
            async move {
                web.post(&path, Some(editor), &[("version", version)], Sent::Script).await
            }
        });
        let renames = (0..4).map(|i| {
            let path = format!("/boards/{id}/settings");
            let title = format!("Raced {i}");
            let (web, editor, version) = (&web, &editor, &version);
            async move {
                web.post(&path, Some(editor), &[("title", &title), ("version", version)], Sent::Script)
                    .await
            }
        });
        let (moved, renamed) =
            tokio::join!(futures::future::join_all(moves), futures::future::join_all(renames));
        let answers: Vec<&Page> = moved.iter().chain(&renamed).collect();
        let won: Vec<&&Page> = answers.iter().filter(|a| a.status == 200).collect();
        assert_eq!(won.len(), 1, "{:?}", answers.iter().map(|a| (a.status, &a.body)).collect::<Vec<_>>());
        for lost in answers.iter().filter(|a| a.status != 200) {
            assert_eq!(lost.status, 409, "{}", lost.body);
            assert_eq!(lost.json()["error"]["code"], json!("CONFLICT"));
        }
        let board = web.board(&id).await;
        assert_eq!(board["updated_at"], won[0].json()["version"], "the winner's version is the board's");
        let changed = usize::from(board["title"] != json!("Raced")) + (3 - board["pins"].as_array().unwrap().len());
        assert_eq!(changed, 1, "one change landed: {board}");

        // Back to back, each change gets a version of its own (never the one before it,
        // even within a millisecond), and a delete from an old one deletes nothing.
        let mut version = board["updated_at"].as_str().unwrap().to_owned();
        let first = web.board(&id).await["pins"][0]["pin_id"].as_str().unwrap().to_owned();
        let old = version.clone();
        for y in [10, 12, 14, 16] {
            let path = format!("/boards/{id}/pins/{first}");
            let moved = web.post(&path, Some(&editor), &[("y", &y.to_string()), ("version", &version)], Sent::Script).await;
            assert_eq!(moved.status, 200, "{}", moved.body);
            let next = moved.json()["version"].as_str().unwrap().to_owned();
            assert!(next > version, "{next} after {version}");
            version = next;
        }
        let path = format!("/boards/{id}/delete");
        let stale = web.post(&path, Some(&editor), &[("confirm", "yes"), ("version", &old)], Sent::Script).await;
        assert_eq!(stale.status, 409, "{}", stale.body);
        web.idp.app.get(&format!("/v1/pinboards/{id}")).await.expect(200);
    }

    async fn viewers_strangers_and_other_sites_change_nothing(web) {
        let id = web.new_board("Guarded").await;
        let pin = web.pin("Revenue", &[]).await;
        web.place(&id, &pin).await;
        let version = web.board(&id).await["updated_at"].as_str().unwrap().to_owned();
        let before = web.layout(&id).await;
        let moved = [("x", "5"), ("version", version.as_str())];
        let move_path = format!("/boards/{id}/pins/{pin}");

        // A viewer sees the board, no edit controls, and is refused.
        let viewer = web.session("vic", "default", "viewer").await;
        let page = web.get(&format!("/boards/{id}?edit=1"), &viewer).await;
        assert_eq!(page.status, 200);
        assert!(!page.body.contains("id=\"tools\"") && !page.body.contains("/assets/editor-"));
        assert!(!page.body.contains("Edit board") && !page.body.contains("Add pins"));
        let renamed = [("title", "Mine"), ("version", version.as_str())];
        let confirmed = [("confirm", "yes"), ("version", version.as_str())];
        let tries: [(String, &[(&str, &str)]); 4] = [
            (move_path.clone(), &moved),
            (format!("/boards/{id}/settings"), &renamed),
            (format!("/boards/{id}/share"), &[("is_public", "on")]),
            (format!("/boards/{id}/delete"), &confirmed),
        ];
        for (path, form) in tries {
            let refused = web.post(&path, Some(&viewer), form, Sent::Form).await;
            assert_eq!(refused.status, 403, "{path}");
            assert!(refused.is_html());
        }
        assert_eq!(web.get(&format!("/boards/{id}/picker"), &viewer).await.status, 404);

        // Another workspace's owner: the 404 page, as for a board that doesn't exist.
        let stranger = web.session("otto", "elsewhere", "owner").await;
        let missing = web.get("/boards/pb-missing", &stranger).await;
        let tries: [(String, &[(&str, &str)]); 3] = [
            (move_path.clone(), &moved),
            (format!("/boards/{id}/settings"), &renamed),
            (format!("/boards/{id}/delete"), &confirmed),
        ];
        for (path, form) in tries {
            let refused = web.post(&path, Some(&stranger), form, Sent::Form).await;
            assert_eq!(refused.status, 404, "{path}");
            assert_eq!(refused.body, missing.body);
        }
        assert_eq!(web.get(&format!("/boards/{id}"), &stranger).await.status, 404);

        // The owner, but not from this site; and nobody signed in.
        let owner = web.session("olga", "default", "owner").await;
        for origin in [None, Some("https://evil.test"), Some("null")] {
            let refused = web.post(&move_path, Some(&owner), &moved, Sent::Origin(origin)).await;
            assert_eq!(refused.status, 403, "{origin:?}");
        }
        let anonymous = web.post(&move_path, None, &moved, Sent::Form).await;
        assert_eq!(anonymous.status, 303);
        assert!(anonymous.location().starts_with("/login?next="), "{}", anonymous.location());
        let forged = web.post(&move_path, Some("corkboard_session=forged"), &moved, Sent::Form).await;
        assert_eq!(forged.status, 303);
        // The API stays bearer-only: the session cookie opens none of it.
        let api = web
            .client
            .put(format!("{}/v1/pinboards/{id}/pins/{pin}", web.base()))
            .header(header::COOKIE, &owner)
            .json(&json!({"position": {"x": 5}}))
            .send()
            .await
            .unwrap();
        assert_eq!(api.status(), 401);
        assert_eq!(web.layout(&id).await, before, "nothing moved");
        assert_eq!(web.board(&id).await["updated_at"], json!(version));

        // Unreadable forms are a clear 400, never a 500.
        let huge = "x".repeat(40_000);
        let big = web.post(&move_path, Some(&owner), &[("version", &huge)], Sent::Script).await;
        assert_eq!(big.status, 400);
        let bad = web.post(&move_path, Some(&owner), &[("x", "left"), ("version", &version)], Sent::Script).await;
        assert_eq!(bad.status, 400);
        let long = web.post(&move_path, Some(&owner), &[("x", "1"), ("version", &"9".repeat(100))], Sent::Script).await;
        assert_eq!(long.status, 400);
    }

    async fn sharing_and_collaborators_from_the_board_page(web) {
        let id = web.new_board("Shared").await;
        let pin = web.pin("Revenue", &[]).await;
        web.place(&id, &pin).await;
        let owner = web.session("olga", "default", "owner").await;

        let page = web.get(&format!("/boards/{id}?share=1"), &owner).await;
        assert!(start_tag(&page.body, "id=\"share\"").contains(" open"), "{}", page.body);
        assert!(page.body.contains(&format!("value=\"{}/share/{id}\"", web.base())));
        assert!(page.body.contains("No collaborators yet"));
        let private = web.client.get(format!("{}/share/{id}", web.base())).send().await.unwrap();
        assert_eq!(private.status(), 404);

        let shared = web
            .post(&format!("/boards/{id}/share"), Some(&owner), &[("is_public", "on"), ("allow_comments", "on")], Sent::Form)
            .await;
        assert_eq!(shared.status, 303);
        assert_eq!(shared.location(), format!("/boards/{id}?share=1"));
        let settings = web.idp.app.get(&format!("/v1/pinboards/{id}/share")).await.expect(200);
        assert_eq!(
            (settings.data()["is_public"].clone(), settings.data()["allow_edit"].clone(),
             settings.data()["require_sign_in"].clone(), settings.data()["allow_comments"].clone()),
            (json!(true), json!(false), json!(false), json!(true))
        );
        let public = web.client.get(format!("{}/share/{id}", web.base())).send().await.unwrap();
        assert_eq!(public.status(), 200);
        let page = web.get(&format!("/boards/{id}?share=1"), &owner).await;
        assert!(page.body.contains("name=\"is_public\" checked") && page.body.contains("name=\"allow_edit\">"));

        // A collaborator from another workspace, invited by email as an editor.
        let judy = web.session("judy", "other", "viewer").await;
        assert_eq!(web.get(&format!("/boards/{id}"), &judy).await.status, 404);
        let invited = web
            .post(&format!("/boards/{id}/collaborators"), Some(&owner), &[("email", "judy@example.test"), ("role", "editor")], Sent::Form)
            .await;
        assert_eq!(invited.status, 303, "{}", invited.body);
        let listed = web.idp.app.get(&format!("/v1/pinboards/{id}/collaborators")).await.expect(200);
        let judy_id = listed.data()[0]["user_id"].as_str().unwrap().to_owned();
        assert_eq!(listed.data()[0]["role"], json!("editor"));
        assert!(web.get(&format!("/boards/{id}?share=1"), &owner).await.body.contains("judy@example.test"));
        let bad_email = web
            .post(&format!("/boards/{id}/collaborators"), Some(&owner), &[("email", "judy"), ("role", "editor")], Sent::Script)
            .await;
        assert_eq!(bad_email.status, 400);

        // As an editor of this board she moves its pin; as a viewer she can't.
        let theirs = web.get(&format!("/boards/{id}"), &judy).await;
        assert!(theirs.body.contains("Edit board"));
        let version = web.board(&id).await["updated_at"].as_str().unwrap().to_owned();
        let moved = web
            .post(&format!("/boards/{id}/pins/{pin}"), Some(&judy), &[("x", "4"), ("version", &version)], Sent::Script)
            .await;
        assert_eq!(moved.status, 200, "{}", moved.body);
        assert_eq!(web.layout(&id).await[0].1[0], 4);
        let demoted = web
            .post(&format!("/boards/{id}/collaborators/{judy_id}"), Some(&owner), &[("role", "viewer")], Sent::Form)
            .await;
        assert_eq!(demoted.status, 303);
        let listed = web.idp.app.get(&format!("/v1/pinboards/{id}/collaborators")).await.expect(200);
        assert_eq!(listed.data()[0]["role"], json!("viewer"));
        let version = web.board(&id).await["updated_at"].as_str().unwrap().to_owned();
        let refused = web
            .post(&format!("/boards/{id}/pins/{pin}"), Some(&judy), &[("x", "0"), ("version", &version)], Sent::Script)
            .await;
        assert_eq!(refused.status, 403);
        assert!(!web.get(&format!("/boards/{id}"), &judy).await.body.contains("id=\"tools\""));

        let removed = web
            .post(&format!("/boards/{id}/collaborators/{judy_id}/remove"), Some(&owner), &[], Sent::Form)
            .await;
        assert_eq!(removed.status, 303);
        let listed = web.idp.app.get(&format!("/v1/pinboards/{id}/collaborators")).await.expect(200);
        assert_eq!(listed.data().as_array().unwrap().len(), 0);
        assert_eq!(web.get(&format!("/boards/{id}"), &judy).await.status, 404);
    }
}
