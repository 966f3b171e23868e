//! `GET /v1/pins`: order, `limit`, keyset `cursor` paging (also while pins are being
//! inserted), and the `pin_type`, `tag` and `updated_since` filters.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, FixedOffset, SecondsFormat, Utc};
use reqwest::Method;
use serde_json::{json, Value};

use crate::{both_stores, helpers::*};

async fn list(app: &TestApp, query: &[(&str, &str)]) -> Resp {
    app.send(app.req(Method::GET, "/v1/pins").query(query))
        .await
}

/// The ids of a list response's `data`, in order.
fn ids(res: &Resp) -> Vec<String> {
    res.data()
        .as_array()
        .unwrap_or_else(|| panic!("data is no array: {}", res.body))
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_owned())
        .collect()
}

/// Creates one pin and returns its id.
async fn create(app: &TestApp, body: &Value) -> String {
    app.create_pin(body).await["pin_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Creates `n` pins with batch requests of at most 100; returns their ids.
async fn create_many(app: &TestApp, n: usize) -> Vec<String> {
    let mut ids = Vec::with_capacity(n);
    let mut left = n;
    while left > 0 {
        let take = left.min(100);
        let pins: Vec<Value> = (0..take).map(|i| stat_cards(&format!("pin {i}"))).collect();
        let res = app
            .post("/v1/pins/batch", &json!({ "pins": pins }))
            .await
            .expect(200);
        ids.extend(
            res.data()
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["pin_id"].as_str().unwrap().to_owned()),
        );
        left -= take;
    }
    ids
}

/// One page: its ids, `next_cursor` and `has_more` (also checking they agree).
async fn page(
    app: &TestApp,
    limit: &str,
    cursor: Option<&str>,
    filters: &[(&str, &str)],
) -> (Vec<String>, Option<String>) {
    let mut query = vec![("limit", limit)];
    if let Some(cursor) = cursor {
        query.push(("cursor", cursor));
    }
    query.extend_from_slice(filters);
    let res = list(app, &query).await.expect(200);
    let pagination = &res.body["pagination"];
    let next = pagination["next_cursor"].as_str().map(str::to_owned);
    assert_eq!(
        pagination["has_more"],
        json!(next.is_some()),
        "has_more goes with next_cursor: {}",
        res.body
    );
    (ids(&res), next)
}

/// Follows `next_cursor` to the end; `between` runs after every page but the last.
async fn walk<F, Fut>(
    app: &TestApp,
    limit: &str,
    filters: &[(&str, &str)],
    mut between: F,
) -> Vec<String>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..1000 {
        let (ids, next) = page(app, limit, cursor.as_deref(), filters).await;
        seen.extend(ids);
        match next {
            Some(next) => {
                between().await;
                cursor = Some(next);
            }
            None => return seen,
        }
    }
    panic!("paging did not end after 1000 pages");
}

/// Every id of `expected` appears in `seen` exactly once, and `seen` has no duplicates.
fn assert_each_once(seen: &[String], expected: &[String]) {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for id in seen {
        *counts.entry(id).or_default() += 1;
    }
    let duplicates: Vec<_> = counts.iter().filter(|(_, n)| **n > 1).collect();
    assert!(duplicates.is_empty(), "duplicates: {duplicates:?}");
    let missing: Vec<_> = expected
        .iter()
        .filter(|id| !counts.contains_key(id.as_str()))
        .collect();
    assert!(missing.is_empty(), "gaps: {missing:?}");
}

fn iso(ms: i64) -> String {
    DateTime::<Utc>::from_timestamp_millis(ms)
        .unwrap()
        .to_rfc3339_opts(SecondsFormat::Millis, true)
}

both_stores! {
    async fn list_is_newest_first_with_whole_records(app) {
        let a = create(&app, &stat_cards("a")).await;
        let b = create(&app, &stat_cards("b")).await;
        let c = create(&app, &stat_cards("c")).await;
        let res = list(&app, &[]).await.expect(200);
        assert_eq!(ids(&res), [c.clone(), b, a]);
        assert_eq!(res.body["pagination"], json!({"next_cursor": null, "has_more": false}));
        let newest = &res.data()[0];
        assert_eq!(newest["pin_type"], json!("stat-cards"));
        assert_eq!(newest["pin_config"], stat_cards("x")["pin_config"]);
        assert_eq!(newest["metadata"]["title"], json!("c"));
        assert_eq!(newest["version"], json!(1));
        let shared = newest["shareable_url"].as_str().unwrap();
        assert!(shared.contains(&c), "{shared}");
    }

    async fn list_of_an_empty_workspace(app) {
        let res = list(&app, &[]).await.expect(200);
        assert_eq!(res.data(), &json!([]));
        assert_eq!(res.body["pagination"], json!({"next_cursor": null, "has_more": false}));
    }

    async fn default_limit_is_50(app) {
        create_many(&app, 51).await;
        let res = list(&app, &[]).await.expect(200);
        assert_eq!(ids(&res).len(), 50);
        assert_eq!(res.body["pagination"]["has_more"], json!(true));
        assert!(res.body["pagination"]["next_cursor"].is_string());
        let cursor = res.body["pagination"]["next_cursor"].as_str();
        let (rest, next) = page(&app, "50", cursor, &[]).await;
        assert_eq!(rest.len(), 1);
        assert_eq!(next, None);
    }

    async fn limit_200_is_the_largest_page(app) {
        create_many(&app, 201).await;
        let (first, next) = page(&app, "200", None, &[]).await;
        assert_eq!(first.len(), 200);
        assert!(next.is_some());
    }

    async fn limit_outside_1_to_200_or_not_a_number_is_400(app) {
        create_many(&app, 2).await;
        for limit in ["201", "0", "-1", "abc", "1.5", ""] {
            list(&app, &[("limit", limit)])
                .await
                .expect_error(400, "VALIDATION_FAILED", Some("limit"));
        }
    }

    async fn exact_page_sizes_end_with_no_cursor(app) {
        create_many(&app, 4).await;
        let (first, next) = page(&app, "2", None, &[]).await;
        assert_eq!(first.len(), 2);
        let (second, last) = page(&app, "2", next.as_deref(), &[]).await;
        assert_eq!(second.len(), 2);
        assert_eq!(last, None, "no empty page after an exactly full one");
    }

    async fn cursor_walks_every_pin_once_in_order(app) {
        let mut created = Vec::new();
        for i in 0..7 {
            created.push(create(&app, &stat_cards(&format!("pin {i}"))).await);
        }
        let seen = walk(&app, "3", &[], || async {}).await;
        created.reverse();
        assert_eq!(seen, created, "newest first, each once");
    }

    async fn cursor_walk_is_stable_while_pins_are_inserted_between_pages(app) {
        let before = create_many(&app, 10).await;
        let mut inserted = 0;
        let seen = walk(&app, "3", &[], || {
            inserted += 1;
            let app = &app;
            async move {
                create(app, &stat_cards("new")).await;
                create(app, &stat_cards("new")).await;
            }
        })
        .await;
        assert!(inserted >= 3, "inserted between {inserted} pages");
        assert_each_once(&seen, &before);
        let total = ids(&list(&app, &[("limit", "200")]).await.expect(200)).len();
        assert_eq!(total, 10 + 2 * inserted);
    }

    async fn cursor_walk_is_stable_while_pins_are_inserted_concurrently(app) {
        let before = create_many(&app, 30).await;
        let (client, base, key) = (app.client.clone(), app.base.clone(), app.key.clone());
        let writer = tokio::spawn(async move {
            for i in 0..30 {
                let res = client
                    .post(format!("{base}/v1/pins"))
                    .bearer_auth(&key)
                    .json(&stat_cards(&format!("concurrent {i}")))
                    .send()
                    .await
                    .expect("request");
                assert_eq!(res.status().as_u16(), 200);
            }
        });
        let seen = walk(&app, "2", &[], || async { tokio::task::yield_now().await }).await;
        writer.await.expect("writer task");
        assert_each_once(&seen, &before);
        let all = ids(&list(&app, &[("limit", "200")]).await.expect(200));
        assert_eq!(all.len(), 60);
        let all: HashSet<&String> = all.iter().collect();
        assert!(seen.iter().all(|id| all.contains(id)), "only real pins listed");
    }

    async fn garbage_cursor_is_400(app) {
        create_many(&app, 3).await;
        for cursor in ["garbage", "!!!", "YzEuYWJj"] {
            list(&app, &[("cursor", cursor)])
                .await
                .expect_error(400, "VALIDATION_FAILED", Some("cursor"));
        }
    }

    async fn filter_by_pin_type(app) {
        let cards = create(&app, &stat_cards("cards")).await;
        let table = json!({"pin_type": "flexible-table", "pin_config": table_config()});
        let table = create(&app, &table).await;
        let res = list(&app, &[("pin_type", "flexible-table")]).await.expect(200);
        assert_eq!(ids(&res), [table]);
        let res = list(&app, &[("pin_type", "stat-cards")]).await.expect(200);
        assert_eq!(ids(&res), [cards]);
    }

    async fn unknown_pin_type_filter_is_400(app) {
        list(&app, &[("pin_type", "no-such-type")])
            .await
            .expect_error(400, "VALIDATION_FAILED", Some("pin_type"));
    }

    async fn filter_by_tag(app) {
        let tagged = |title: &str, tags: Value| {
            let mut body = stat_cards(title);
            body["metadata"]["tags"] = tags;
            body
        };
        let kpi = create(&app, &tagged("kpi", json!(["kpi"]))).await;
        let ops = create(&app, &tagged("ops", json!(["ops"]))).await;
        let both = create(&app, &tagged("both", json!(["kpi", "ops"]))).await;
        let res = list(&app, &[("tag", "ops")]).await.expect(200);
        assert_eq!(ids(&res), [both.clone(), ops]);
        let res = list(&app, &[("tag", "kpi")]).await.expect(200);
        assert_eq!(ids(&res), [both, kpi]);
        let res = list(&app, &[("tag", "op")]).await.expect(200);
        assert_eq!(ids(&res), Vec::<String>::new(), "whole tags only");
    }

    async fn filters_hold_across_pages(app) {
        let mut tagged = Vec::new();
        for i in 0..5 {
            let mut body = stat_cards(&format!("pin {i}"));
            if i % 2 == 0 {
                body["metadata"]["tags"] = json!(["even"]);
                tagged.push(create(&app, &body).await);
            } else {
                create(&app, &body).await;
            }
        }
        let seen = walk(&app, "1", &[("tag", "even")], || async {}).await;
        tagged.reverse();
        assert_eq!(seen, tagged);
    }

    async fn filter_by_updated_since(app) {
        let old = create(&app, &stat_cards("old")).await;
        let touched = create(&app, &stat_cards("touched")).await;
        // Let the clock pass the creations' millisecond.
        tokio::time::sleep(std::time::Duration::from_millis(3)).await;
        let res = app
            .put(&format!("/v1/pins/{touched}"), &json!({"metadata": {"title": "touched again"}}))
            .await
            .expect(200);
        let since = res.data()["updated_at"].as_i64().unwrap();
        let res = list(&app, &[("updated_since", &iso(since))]).await.expect(200);
        assert_eq!(ids(&res), std::slice::from_ref(&touched));
        // The same instant with another offset.
        let offset = DateTime::<Utc>::from_timestamp_millis(since)
            .unwrap()
            .with_timezone(&FixedOffset::east_opt(2 * 3600).unwrap())
            .to_rfc3339_opts(SecondsFormat::Millis, false);
        let res = list(&app, &[("updated_since", &offset)]).await.expect(200);
        assert_eq!(ids(&res), std::slice::from_ref(&touched), "{offset}");
        let res = list(&app, &[("updated_since", &iso(since + 1))]).await.expect(200);
        assert_eq!(ids(&res), Vec::<String>::new());
        let res = list(&app, &[("updated_since", "2000-01-01T00:00:00Z")]).await.expect(200);
        assert_eq!(ids(&res), [touched, old]);
    }

    async fn bad_updated_since_is_400(app) {
        for since in ["yesterday", "2026-13-01T00:00:00Z", "1700000000000"] {
            list(&app, &[("updated_since", since)])
                .await
                .expect_error(400, "VALIDATION_FAILED", Some("updated_since"));
        }
    }
}

// Lists keep each pin's rendered record by its version: every write shows in the next list,
// whichever replica made it, and a listed record is the record a read returns.
both_stores! {
    async fn a_listed_pin_shows_its_latest_state(app) {
        let other = app.replica("").await;
        // A pin with every stored JSON column and text that needs escaping, listed beside
        // another: a first list reads several pins at once (on SQLite, as one JSON page).
        let mut rich = stat_cards("quote \" and ünïcode\n");
        rich["metadata"]["tags"] = json!(["a\"b", "ü"]);
        rich["metadata"]["provenance"] = json!({"run_id": "r\"1"});
        let rich = create(&app, &rich).await;
        let id = create(&app, &stat_cards("one")).await;
        let path = format!("/v1/pins/{id}");
        let first = list(&app, &[]).await.expect(200);
        assert_eq!(first.data()[0], *app.get(&path).await.expect(200).data());
        let read = app.get(&format!("/v1/pins/{rich}")).await.expect(200);
        assert_eq!(first.data()[1], *read.data(), "the listed record is the record a read returns");
        assert_eq!(read.data()["metadata"]["provenance"]["run_id"], "r\"1");

        let retitle = json!({"metadata": {"title": "two"}});
        call(&other, &app.key, Method::PATCH, &path, Some(&retitle)).await.expect(200);
        let listed = list(&app, &[]).await.expect(200);
        assert_eq!(listed.data()[0]["metadata"]["title"], "two");
        assert_eq!(listed.data()[0]["version"], 2);

        let share = json!({"is_public": true});
        call(&other, &app.key, Method::PUT, &format!("{path}/share"), Some(&share)).await.expect(200);
        let listed = list(&app, &[]).await.expect(200);
        assert_eq!(listed.data()[0]["is_public"], true);
        assert_eq!(listed.data()[0], *app.get(&path).await.expect(200).data());

        call(&other, &app.key, Method::DELETE, &path, None).await.expect(200);
        assert_eq!(ids(&list(&app, &[]).await.expect(200)), [rich]);
    }
}

// Rendered records are kept for the whole process, by pin id; a list still shows only its
// own workspace's pins, with the records already kept for another workspace's list.
both_stores! {
    async fn a_list_shows_only_its_workspace(app) {
        let ours = create(&app, &stat_cards("ours")).await;
        assert_eq!(ids(&list(&app, &[]).await.expect(200)), [ours.as_str()]);
        let acme = app.key_in("acme", "*").await;
        let made = call(&app, &acme, Method::POST, "/v1/pins", Some(&stat_cards("theirs")))
            .await
            .expect(200);
        let theirs = made.data()["id"].as_str().unwrap();
        let listed = call(&app, &acme, Method::GET, "/v1/pins", None).await.expect(200);
        assert_eq!(ids(&listed), [theirs]);
        assert_eq!(listed.data()[0]["metadata"]["title"], "theirs");
        let listed = list(&app, &[]).await.expect(200);
        assert_eq!(ids(&listed), [ours]);
        assert_eq!(listed.data()[0]["metadata"]["title"], "ours");
    }
}
