//! Single-pin updates under concurrency (issue 35): updates are decided from a read and stored
//! in group commits by compare-and-set, so these press on what that must keep: no lost update
//! of one pin written by many clients at once (every version and event, in order), a refused
//! update refused alone among others, If-Match decided against the version replaced, and
//! workspaces writing at once each seeing only their own events, and replicas taking turns on
//! one pin, each deciding first from the state it last wrote.

use std::collections::{BTreeMap, HashSet};

use futures::future::join_all;
use reqwest::Method;
use serde_json::{json, Value};

use crate::{both_stores, helpers::*, live::Stream};

/// More past versions than the tests below make (the default keeps 20).
const KEEP_ALL_VERSIONS: &str = "[limits]\nversion_retention = 40";

/// Creates `stat_cards(title)` in the workspace of `key_of_ws` and returns its id.
async fn new_pin(app: &TestApp, key_of_ws: &str, title: &str) -> String {
    let body = stat_cards(title);
    let res = call(app, key_of_ws, Method::POST, "/v1/pins", Some(&body)).await;
    res.expect(200).data()["pin_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// PATCH `/v1/pins/{id}` with `body` (and `If-Match`, when given) using `key`.
async fn patch(app: &TestApp, key: &str, id: &str, body: &Value, if_match: Option<&str>) -> Resp {
    let mut req = app
        .client
        .patch(format!("{}/v1/pins/{id}", app.base))
        .bearer_auth(key)
        .json(body);
    if let Some(tag) = if_match {
        req = req.header("if-match", tag);
    }
    app.send(req).await
}

/// PUT `/v1/pins/by-key/feed` on `server` with stat cards titled `title`: the answer's data.
async fn put_feed(server: &TestApp, key: &str, title: &str) -> Value {
    let req = server
        .client
        .put(format!("{}/v1/pins/by-key/feed", server.base))
        .bearer_auth(key)
        .json(&stat_cards(title));
    server.send(req).await.expect(200).data().clone()
}

fn title(body: &Value) -> Value {
    json!({"metadata": {"title": body}})
}

/// The stored pin (asserting 200), read with `key`.
async fn read(app: &TestApp, key: &str, id: &str) -> Value {
    let res = call(app, key, Method::GET, &format!("/v1/pins/{id}"), None).await;
    res.expect(200).data().clone()
}

/// The id of the next event on a stream of the default workspace opened now, after `write`
/// (which must make exactly one event): a resume point before what follows.
async fn resume_point_after(
    app: &TestApp,
    write: impl std::future::Future<Output = String>,
) -> (String, String) {
    let mut stream = event_stream(app).await;
    let made = write.await;
    let event = stream.next_event().await;
    assert_eq!(event.data["id"], json!(made), "{event:?}");
    (made, event.id.expect("an event id"))
}

/// 24 clients PATCH one pin at once, each with its own title: every one is answered 200 with
/// its own version (2..=25), the version history holds each title once at the version its
/// writer was answered, and the pin's events, read back from its creation, are 24
/// `pin.updated` with versions 2..=25 in event order.
async fn many_writers_of_one_pin(app: TestApp) {
    const WRITERS: i64 = 24;
    let (id, created) = resume_point_after(&app, new_pin(&app, &app.key, "start")).await;
    let titles: Vec<String> = (0..WRITERS).map(|i| format!("writer {i}")).collect();
    let bodies: Vec<Value> = titles.iter().map(|t| title(&json!(t))).collect();
    let answers = join_all(
        bodies
            .iter()
            .map(|body| patch(&app, &app.key, &id, body, None)),
    )
    .await;
    let mut title_at: BTreeMap<i64, &str> = BTreeMap::new();
    for (answer, sent) in answers.into_iter().zip(&titles) {
        let answer = answer.expect(200);
        let version = answer.data()["version"].as_i64().expect("a version");
        let earlier = title_at.insert(version, sent);
        assert!(
            earlier.is_none(),
            "version {version} answered twice ({earlier:?}, {sent})"
        );
    }
    let expected: Vec<i64> = (2..=WRITERS + 1).collect();
    assert_eq!(title_at.keys().copied().collect::<Vec<_>>(), expected);

    let stored = read(&app, &app.key, &id).await;
    assert_eq!(stored["version"], json!(WRITERS + 1));
    assert_eq!(stored["metadata"]["title"], json!(title_at[&(WRITERS + 1)]));
    let listed = app
        .get(&format!("/v1/pins/{id}/versions?limit=100"))
        .await
        .expect(200);
    let past: Vec<(i64, &str)> = listed
        .data()
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let title = v["metadata"]["title"].as_str().unwrap_or_default();
            (v["version"].as_i64().unwrap_or_default(), title)
        })
        .collect();
    let mut expected_past: Vec<(i64, &str)> = vec![(1, "start")];
    expected_past.extend(
        title_at
            .iter()
            .filter(|(v, _)| **v <= WRITERS)
            .map(|(v, t)| (*v, *t)),
    );
    expected_past.reverse();
    assert_eq!(
        past, expected_past,
        "each title once, at the version its writer was answered"
    );

    let mut resumed = Stream::open(
        &app,
        &format!("/v1/events?pin_id={id}"),
        &app.key,
        &[("Last-Event-ID", &created)],
    )
    .await;
    assert_eq!(resumed.status, 200);
    let events = resumed.events(titles.len()).await;
    let kinds: HashSet<&str> = events.iter().filter_map(|e| e.event.as_deref()).collect();
    assert_eq!(kinds, HashSet::from(["pin.updated"]), "{events:?}");
    let versions: Vec<i64> = events
        .iter()
        .map(|e| e.data["version"].as_i64().expect("a version"))
        .collect();
    assert_eq!(versions, expected, "events in version order");
    for event in &events {
        let version = event.data["version"].as_i64().unwrap_or_default();
        assert_eq!(
            event.data["data"]["metadata"]["title"],
            json!(title_at[&version])
        );
    }
    assert_no_event(
        &app,
        &mut resumed_all(&app, events.last().and_then(|e| e.id.clone())).await,
    )
    .await;
}

/// A stream of the default workspace resumed after `last`.
async fn resumed_all(app: &TestApp, last: Option<String>) -> Stream {
    let last = last.expect("an event id");
    let stream = Stream::open(app, "/v1/events", &app.key, &[("Last-Event-ID", &last)]).await;
    assert_eq!(stream.status, 200);
    stream
}

mod many_writers_of_one_pin_keep_every_version_and_event {
    use super::*;

    #[tokio::test]
    async fn sqlite() {
        many_writers_of_one_pin(TestApp::sqlite_with(KEEP_ALL_VERSIONS).await).await;
    }

    #[tokio::test]
    async fn postgres() {
        crate::skip_without_postgres!();
        many_writers_of_one_pin(TestApp::postgres_with(KEEP_ALL_VERSIONS).await).await;
    }
}

both_stores! {
    // Updates grouped into one commit carry their text exactly: quotes, backslashes, escapes,
    // control characters, non-ASCII and astral characters, in the configuration and the title.
    async fn grouped_updates_store_every_character_as_sent(app) {
        const PINS: usize = 16;
        let mut ids = Vec::new();
        for i in 0..PINS {
            ids.push(new_pin(&app, &app.key, &format!("pin {i}")).await);
        }
        let text = |i: usize| format!("q\"uote\\ back\\\"slash \\u0041 tab\tnew\nline \u{1} é ünï 漢字 🚀 {i}");
        let bodies: Vec<Value> = (0..PINS)
            .map(|i| json!({
                "pin_config": {"cards": [{"title": text(i), "value": format!("{}", 9_007_199_254_740_993_i64 + i as i64)}]},
                "metadata": {"title": text(i), "tags": [text(i)]}
            }))
            .collect();
        let answers = join_all(ids.iter().zip(&bodies).map(|(id, body)| patch(&app, &app.key, id, body, None))).await;
        for (i, answer) in answers.into_iter().enumerate() {
            assert_eq!(answer.expect(200).data()["version"], json!(2), "pin {i}");
        }
        for (i, id) in ids.iter().enumerate() {
            let stored = read(&app, &app.key, id).await;
            assert_eq!(stored["pin_config"], bodies[i]["pin_config"], "pin {i}");
            assert_eq!(stored["metadata"]["title"], json!(text(i)), "pin {i}");
            assert_eq!(stored["metadata"]["tags"], json!([text(i)]), "pin {i}");
        }
    }

    // Updates grouped into commits, a few changing their pin's type among many that don't
    // (SQLite's loop names `pin_type` in its UPDATE only for a group with a change of type):
    // afterwards each pin is listed under its own type, and only there.
    async fn grouped_updates_keep_each_pin_listed_under_its_type(app) {
        const PINS: usize = 24;
        let mut ids = Vec::new();
        for i in 0..PINS {
            ids.push(new_pin(&app, &app.key, &format!("pin {i}")).await);
        }
        let becomes_table = |i: usize| i % 6 == 0;
        let bodies: Vec<Value> = (0..PINS)
            .map(|i| if becomes_table(i) {
                json!({"pin_type": "flexible-table", "pin_config": table_config()})
            } else {
                json!({"pin_config": {"cards": [{"title": "Revenue", "value": format!("{i}")}]}})
            })
            .collect();
        for _ in 0..2 {
            let answers = join_all(ids.iter().zip(&bodies).map(|(id, body)| patch(&app, &app.key, id, body, None))).await;
            for answer in answers {
                answer.expect(200);
            }
        }
        for (pin_type, table) in [("flexible-table", true), ("stat-cards", false)] {
            let res = app.get(&format!("/v1/pins?limit=200&pin_type={pin_type}")).await.expect(200);
            let mut listed: Vec<&str> = res.data().as_array().unwrap().iter().map(|pin| pin["id"].as_str().unwrap()).collect();
            listed.sort_unstable();
            let mut expected: Vec<&str> = (0..PINS).filter(|i| becomes_table(*i) == table).map(|i| ids[i].as_str()).collect();
            expected.sort_unstable();
            assert_eq!(listed, expected, "{pin_type}");
        }
        for (i, id) in ids.iter().enumerate() {
            let stored = read(&app, &app.key, id).await;
            assert_eq!(stored["version"], json!(3), "pin {i}");
            let pin_type = if becomes_table(i) { "flexible-table" } else { "stat-cards" };
            assert_eq!(stored["pin_type"], json!(pin_type), "pin {i}");
        }
    }

    async fn a_taken_key_fails_alone_among_concurrent_updates(app) {
        const PINS: usize = 30;
        // Pin 0 holds the key; pin 7 asks for it while every pin (0 too) gets a new title.
        let holder = call(&app, &app.key, Method::POST, "/v1/pins", Some(&with_key(stat_cards("pin 0"), "held")))
            .await
            .expect(200)
            .data()["pin_id"]
            .as_str()
            .unwrap()
            .to_owned();
        let mut ids = vec![holder.clone()];
        for i in 1..PINS {
            ids.push(new_pin(&app, &app.key, &format!("pin {i}")).await);
        }
        let (_, before) = resume_point_after(&app, new_pin(&app, &app.key, "marker")).await;
        let bodies: Vec<Value> = (0..PINS)
            .map(|i| match i {
                7 => json!({"key": "held", "metadata": {"title": "took the key"}}),
                _ => title(&json!(format!("pin {i} renamed"))),
            })
            .collect();
        let answers = join_all(ids.iter().zip(&bodies).map(|(id, body)| patch(&app, &app.key, id, body, None))).await;
        for (i, answer) in answers.into_iter().enumerate() {
            if i == 7 {
                answer.expect_error(409, "CONFLICT", Some("key"));
            } else {
                assert_eq!(answer.expect(200).data()["version"], json!(2), "pin {i}");
            }
        }
        for (i, id) in ids.iter().enumerate() {
            let stored = read(&app, &app.key, id).await;
            if i == 7 {
                assert_eq!(stored["version"], json!(1), "nothing written");
                assert_eq!(stored["metadata"]["title"], json!("pin 7"));
                assert_eq!(stored["key"], Value::Null);
            } else {
                assert_eq!(stored["version"], json!(2), "pin {i}");
                assert_eq!(stored["metadata"]["title"], json!(format!("pin {i} renamed")));
            }
        }
        assert_eq!(read(&app, &app.key, &holder).await["key"], json!("held"));
        // One event for each stored update, none for the refused one.
        let mut resumed = resumed_all(&app, Some(before)).await;
        let events = resumed.events(PINS - 1).await;
        let mut updated: Vec<&str> = events.iter().filter_map(|e| e.data["id"].as_str()).collect();
        updated.sort_unstable();
        let mut expected: Vec<&str> = ids.iter().enumerate().filter(|(i, _)| *i != 7).map(|(_, id)| id.as_str()).collect();
        expected.sort_unstable();
        assert_eq!(updated, expected);
        assert_no_event(&app, &mut resumed).await;
    }

    async fn two_updates_taking_one_free_key_at_once_one_wins(app) {
        let one = new_pin(&app, &app.key, "one").await;
        let two = new_pin(&app, &app.key, "two").await;
        let body = json!({"key": "fresh"});
        let (a, b) = tokio::join!(patch(&app, &app.key, &one, &body, None), patch(&app, &app.key, &two, &body, None));
        let mut statuses = [a.status, b.status];
        statuses.sort_unstable();
        assert_eq!(statuses, [200, 409], "one: {} two: {}", a.body, b.body);
        let (winner, loser, refused) = if a.status == 200 { (&one, &two, b) } else { (&two, &one, a) };
        refused.expect_error(409, "CONFLICT", Some("key"));
        assert_eq!(pins_with_keys(&app, &["fresh"]).await[0]["id"], json!(winner));
        assert_eq!(read(&app, &app.key, loser).await["version"], json!(1));
    }

    async fn concurrent_updates_with_one_if_match_one_wins(app) {
        const WRITERS: usize = 10;
        let id = new_pin(&app, &app.key, "start").await;
        let bodies: Vec<Value> = (0..WRITERS).map(|i| title(&json!(format!("writer {i}")))).collect();
        let answers = join_all(bodies.iter().map(|body| patch(&app, &app.key, &id, body, Some("\"1\"")))).await;
        let mut winners = Vec::new();
        for (i, answer) in answers.into_iter().enumerate() {
            if answer.status == 200 {
                assert_eq!(answer.expect(200).data()["version"], json!(2));
                winners.push(i);
            } else {
                answer.expect_error(412, "PRECONDITION_FAILED", None);
            }
        }
        assert_eq!(winners.len(), 1, "exactly one 200: {winners:?}");
        let stored = read(&app, &app.key, &id).await;
        assert_eq!(stored["version"], json!(2));
        assert_eq!(stored["metadata"]["title"], json!(format!("writer {}", winners[0])));
    }

    async fn workspaces_updating_at_once_store_all_and_see_only_their_own_events(app) {
        const WORKSPACES: usize = 8;
        const PINS: usize = 3;
        const ROUNDS: usize = 4;
        let app = &app;
        let mut keys = Vec::new();
        for w in 0..WORKSPACES {
            keys.push(app.key_in(&format!("grouped-{w}"), "*").await);
        }
        let mut streams = Vec::new();
        for key in &keys {
            let stream = Stream::open(app, "/v1/events", key, &[]).await;
            assert_eq!(stream.status, 200);
            streams.push(stream);
        }
        // Every pin of every workspace is written at once; each pin's own writes in turn.
        let pins: Vec<Vec<String>> = join_all(keys.iter().enumerate().map(|(w, key)| async move {
            let mut ids = Vec::new();
            for p in 0..PINS {
                ids.push(new_pin(app, key, &format!("ws {w} pin {p}")).await);
            }
            ids
        }))
        .await;
        let writes = pins.iter().zip(&keys).enumerate().flat_map(|(w, (ids, key))| {
            ids.iter().enumerate().map(move |(p, id)| {
                async move {
                    for round in 1..=ROUNDS {
                        let body = title(&json!(format!("ws {w} pin {p} round {round}")));
                        let answer = patch(app, key, id, &body, None).await.expect(200);
                        assert_eq!(answer.data()["version"], json!(round + 1));
                    }
                }
            })
        });
        join_all(writes).await;
        for (w, (ids, key)) in pins.iter().zip(&keys).enumerate() {
            for (p, id) in ids.iter().enumerate() {
                let stored = read(app, key, id).await;
                assert_eq!(stored["version"], json!(ROUNDS + 1));
                assert_eq!(stored["metadata"]["title"], json!(format!("ws {w} pin {p} round {ROUNDS}")));
                // Another workspace's key doesn't see it.
                let other = &keys[(w + 1) % WORKSPACES];
                call(app, other, Method::GET, &format!("/v1/pins/{id}"), None).await.expect_error(404, "NOT_FOUND", None);
            }
        }
        for ((stream, ids), key) in streams.iter_mut().zip(&pins).zip(&keys) {
            let events = stream.events(PINS * (ROUNDS + 1)).await;
            for event in &events {
                assert!(ids.iter().any(|id| event.data["id"] == json!(id)), "another workspace's event: {event:?}");
            }
            for id in ids {
                let versions: Vec<i64> = events
                    .iter()
                    .filter(|e| e.data["id"] == json!(id))
                    .filter_map(|e| e.data["version"].as_i64())
                    .collect();
                let expected: Vec<i64> = (1..=i64::try_from(ROUNDS).unwrap() + 1).collect();
                assert_eq!(versions, expected, "{id}: created, then each update in order");
            }
            // Nothing else came before a marker of the workspace's own.
            let marker = call(app, key, Method::POST, "/v1/pins", Some(&stat_cards("marker"))).await.expect(200);
            let next = stream.next_event().await;
            assert_eq!(next.data["id"], marker.data()["pin_id"], "{next:?}");
        }
    }

    // Upserts too start from the state the replica last wrote, but "unchanged" is only ever
    // decided from a read: replica A upserts X, B upserts Y, A upserts X again. A's copy says
    // X, yet the pin says Y, so the third is a change (version 3, `changed: true`).
    async fn an_upsert_after_another_replicas_change_is_a_change(app) {
        let other = app.replica("").await;
        let first = put_feed(&app, &app.key, "x").await;
        assert_eq!((first["created"].clone(), first["version"].clone()), (json!(true), json!(1)));
        let second = put_feed(&other, &app.key, "y").await;
        assert_eq!((second["changed"].clone(), second["version"].clone()), (json!(true), json!(2)));
        let third = put_feed(&app, &app.key, "x").await;
        assert_eq!((third["changed"].clone(), third["version"].clone()), (json!(true), json!(3)));
        let again = put_feed(&app, &app.key, "x").await;
        assert_eq!((again["changed"].clone(), again["version"].clone()), (json!(false), json!(3)));
        let stored = call(&other, &app.key, Method::GET, "/v1/pins/by-key/feed", None).await;
        assert_eq!(stored.expect(200).data()["metadata"]["title"], json!("x"));
    }

    // A replica decides a pin's next update from the state it last wrote of it, not from a
    // read (`pins::known`): two replicas taking turns on one pin, one changing its title
    // and the other its configuration, must each see the other's change. An update decided
    // from a stale state would write back the other replica's field as it was; a 412 from
    // an If-Match that names the version the other replica wrote would be decided from it.
    async fn replicas_taking_turns_on_one_pin_keep_each_others_changes(app) {
        const ROUNDS: usize = 4;
        let other = app.replica("").await;
        let id = new_pin(&app, &app.key, "start").await;
        let config = |round: usize| json!({"pin_config": {"cards": [{"title": "Revenue", "value": format!("round {round}")}]}});
        for round in 1..=ROUNDS {
            let titled = patch(&app, &app.key, &id, &title(&json!(format!("title {round}"))), None).await;
            assert_eq!(titled.expect(200).data()["version"], json!(2 * round));
            let version = format!("\"{}\"", 2 * round);
            let configured = patch(&other, &app.key, &id, &config(round), Some(&version)).await;
            assert_eq!(configured.expect(200).data()["version"], json!(2 * round + 1));
        }
        let version = format!("\"{}\"", 2 * ROUNDS + 1);
        let last = patch(&app, &app.key, &id, &title(&json!("last")), Some(&version)).await;
        assert_eq!(last.expect(200).data()["version"], json!(2 * ROUNDS + 2));
        for server in [&app, &other] {
            let stored = read(server, &app.key, &id).await;
            assert_eq!(stored["version"], json!(2 * ROUNDS + 2));
            assert_eq!(stored["metadata"]["title"], json!("last"));
            assert_eq!(stored["pin_config"]["cards"][0]["value"], json!(format!("round {ROUNDS}")));
        }
        // Each past version holds what was written at it: the other field as the other
        // replica left it.
        let versions = call(&app, &app.key, Method::GET, &format!("/v1/pins/{id}/versions?limit=100"), None).await;
        let versions = versions.expect(200);
        let by_version: BTreeMap<i64, &Value> = versions.body["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| (v["version"].as_i64().unwrap(), v))
            .collect();
        for round in 1..=ROUNDS {
            let titled = by_version[&i64::try_from(2 * round).unwrap()];
            assert_eq!(titled["metadata"]["title"], json!(format!("title {round}")));
            let value = if round == 1 { "$1.2M".to_owned() } else { format!("round {}", round - 1) };
            assert_eq!(titled["pin_config"]["cards"][0]["value"], json!(value), "version {}", 2 * round);
        }
    }
}

/// The versions numbers of pin `id`'s stored past versions on `server`, newest first.
async fn kept_versions(server: &TestApp, key: &str, id: &str) -> Vec<i64> {
    let path = format!("/v1/pins/{id}/versions?limit=100");
    let listed = call(server, key, Method::GET, &path, None)
        .await
        .expect(200);
    listed.body["data"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|v| v["version"].as_i64().expect("a version number"))
        .collect()
}

/// A write prunes only the version its own step drops (a range from the pin's first version
/// walked every deleted one PostgreSQL still holds), and every 64th version of a pin all
/// beyond the retention: the setting lowered (a replica started with it), each write from
/// then on keeps the newest versions it should, and what the higher setting kept is gone by
/// version 64, both for updates the group commit writes (PATCH) and for those it writes alone
/// (PUT by key, an upsert).
async fn a_lowered_retention_prunes_the_rest_within_64_versions(app: TestApp) {
    const KEEP_FOUR: &str = "[limits]\nversion_retention = 4";
    const KEEP_TWO: &str = "[limits]\nversion_retention = 2";
    let four = app.replica(KEEP_FOUR).await;
    let id = new_pin(&four, &app.key, "v1").await;
    for n in 2..=10 {
        patch(&four, &app.key, &id, &title(&json!(format!("v{n}"))), None)
            .await
            .expect(200);
    }
    assert_eq!(kept_versions(&four, &app.key, &id).await, [9, 8, 7, 6]);
    let two = app.replica(KEEP_TWO).await;
    for n in 11..=63 {
        patch(&two, &app.key, &id, &title(&json!(format!("v{n}"))), None)
            .await
            .expect(200);
        let kept = kept_versions(&two, &app.key, &id).await;
        assert_eq!(kept[..2], [n - 1, n - 2], "after version {n}: {kept:?}");
        assert!(kept.len() <= 4, "after version {n}: {kept:?}");
    }
    patch(&two, &app.key, &id, &title(&json!("v64")), None)
        .await
        .expect(200);
    assert_eq!(kept_versions(&two, &app.key, &id).await, [63, 62]);

    let keyed = put_feed(&four, &app.key, "k1").await;
    let keyed = keyed["pin_id"]
        .as_str()
        .expect("the upserted pin's id")
        .to_owned();
    for n in 2..=10 {
        put_feed(&four, &app.key, &format!("k{n}")).await;
    }
    assert_eq!(kept_versions(&four, &app.key, &keyed).await, [9, 8, 7, 6]);
    for n in 11..=64 {
        put_feed(&two, &app.key, &format!("k{n}")).await;
    }
    assert_eq!(kept_versions(&two, &app.key, &keyed).await, [63, 62]);
}

mod a_lowered_retention_prunes_the_rest_within_64_versions {
    use super::*;

    #[tokio::test]
    async fn sqlite() {
        a_lowered_retention_prunes_the_rest_within_64_versions(TestApp::sqlite().await).await;
    }

    #[tokio::test]
    async fn postgres() {
        crate::skip_without_postgres!();
        a_lowered_retention_prunes_the_rest_within_64_versions(TestApp::postgres().await).await;
    }
}
