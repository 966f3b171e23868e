//! Placements on the 12-column grid: validation edges, overlaps, auto placement, moves,
//! removal, what deleting a pin does, board reads in position order, isolation, and the
//! `pinboard_id` filter of `GET /pins`.

use reqwest::Method;
use serde_json::{json, Value};

use crate::{
    both_stores,
    helpers::*,
    pinboards::{new_board, new_pin, place},
};

fn pos(x: i64, y: i64, w: i64, h: i64) -> Value {
    json!({"x": x, "y": y, "w": w, "h": h})
}

/// The `(pin_id, position)` of each placement of a board read, in the order returned.
async fn layout(app: &TestApp, board: &str) -> Vec<(String, Value)> {
    let res = app.get(&format!("/v1/pinboards/{board}")).await.expect(200);
    res.data()["pins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["pin_id"].as_str().unwrap().to_owned(),
                p["position"].clone(),
            )
        })
        .collect()
}

async fn move_to(app: &TestApp, board: &str, pin: &str, position: Value) -> Resp {
    app.put(
        &format!("/v1/pinboards/{board}/pins/{pin}"),
        &json!({"position": position}),
    )
    .await
}

fn invalid(res: Resp, field: &str) {
    res.expect_error(400, "VALIDATION_FAILED", Some(field));
}

both_stores! {
    async fn place_at_a_position(app) {
        let board = new_board(&app, "Ops").await;
        let pin = new_pin(&app, "Sales").await;
        let res = place(&app, &board, &pin, Some(pos(2, 1, 4, 3))).await.expect(200);
        assert_eq!(res.data(), &json!({"pinboard_id": board, "pin_id": pin, "position": pos(2, 1, 4, 3)}));
        let read = app.get(&format!("/v1/pinboards/{board}")).await.expect(200);
        let placed = &read.data()["pins"][0];
        assert_eq!(placed["pin_id"], json!(pin));
        assert_eq!(placed["position"], pos(2, 1, 4, 3));
        let record = app.get(&format!("/v1/pins/{pin}")).await.expect(200);
        assert_eq!(&placed["pin"], record.data(), "the full pin record");
    }

    async fn grid_edges(app) {
        let board = new_board(&app, "Grid").await;
        let pin = new_pin(&app, "p").await;
        let cases = [
            (pos(10, 0, 3, 1), "position.w"),
            (pos(12, 0, 1, 1), "position.x"),
            (pos(-1, 0, 1, 1), "position.x"),
            (pos(0, -1, 1, 1), "position.y"),
            (pos(0, 0, 0, 1), "position.w"),
            (pos(0, 0, 13, 1), "position.w"),
            (pos(0, 0, 1, 0), "position.h"),
            (json!({"x": 1.5, "y": 0, "w": 1, "h": 1}), "position.x"),
            (json!({"x": 0, "y": 0.5, "w": 1, "h": 1}), "position.y"),
            (json!({"x": 0, "y": 0, "w": 2.25, "h": 1}), "position.w"),
            (json!({"x": 0, "y": "1", "w": 1, "h": 1}), "position.y"),
            (json!({"x": 0, "y": 0, "w": 1, "h": "2"}), "position.h"),
            (json!({"x": true, "y": 0}), "position.x"),
            (json!({"x": 0, "y": 0, "z": 1}), "position.z"),
            (json!({"x": 3}), "position.y"),
            (json!({"y": 3}), "position.x"),
            (json!([0, 0, 1, 1]), "position"),
            (json!("0,0"), "position"),
        ];
        for (position, field) in cases {
            let res = place(&app, &board, &pin, Some(position.clone())).await;
            assert_eq!(res.status, 400, "{position}: {}", res.body);
            invalid(res, field);
        }
        assert!(layout(&app, &board).await.is_empty(), "nothing placed");
        // x + w = 12 is the right edge: allowed.
        let res = place(&app, &board, &pin, Some(pos(9, 0, 3, 1))).await.expect(200);
        assert_eq!(res.data()["position"], pos(9, 0, 3, 1));
        let wide = new_pin(&app, "wide").await;
        place(&app, &board, &wide, Some(pos(0, 1, 12, 1))).await.expect(200);
        invalid(app.post(&format!("/v1/pinboards/{board}/pins"), &json!({"position": pos(0, 0, 1, 1)})).await, "pin_id");
        invalid(app.post(&format!("/v1/pinboards/{board}/pins"), &json!({"pin_id": wide, "extra": 1})).await, "extra");
    }

    async fn overlaps_are_conflicts(app) {
        let board = new_board(&app, "Ops").await;
        let a = new_pin(&app, "a").await;
        let b = new_pin(&app, "b").await;
        place(&app, &board, &a, Some(pos(0, 0, 4, 2))).await.expect(200);
        let res = place(&app, &board, &b, Some(pos(3, 1, 2, 2))).await.expect_error(409, "CONFLICT", None);
        assert!(res.body["error"]["message"].as_str().unwrap().contains(&a), "{}", res.body);
        // Touching edges is not overlapping.
        place(&app, &board, &b, Some(pos(4, 0, 2, 2))).await.expect(200);
        // The same pin twice on a board.
        place(&app, &board, &a, Some(pos(0, 5, 1, 1))).await.expect_error(409, "CONFLICT", None);
        place(&app, &board, &a, None).await.expect_error(409, "CONFLICT", None);
        assert_eq!(layout(&app, &board).await.len(), 2);
    }

    async fn auto_placement_fills_rows_then_goes_below(app) {
        let board = new_board(&app, "Auto").await;
        let mut got = Vec::new();
        for i in 0..5 {
            let pin = new_pin(&app, &format!("p{i}")).await;
            let res = place(&app, &board, &pin, None).await.expect(200);
            got.push(res.data()["position"].clone());
        }
        assert_eq!(got, [pos(0, 0, 3, 2), pos(3, 0, 3, 2), pos(6, 0, 3, 2), pos(9, 0, 3, 2), pos(0, 2, 3, 2)]);
        // A size without coordinates: the first slot it fits in.
        let wide = new_pin(&app, "wide").await;
        let res = place(&app, &board, &wide, Some(json!({"w": 12, "h": 1}))).await.expect(200);
        assert_eq!(res.data()["position"], pos(0, 4, 12, 1));
        let small = new_pin(&app, "small").await;
        let res = place(&app, &board, &small, Some(json!(null))).await.expect(200);
        assert_eq!(res.data()["position"], pos(3, 2, 3, 2), "a gap is filled first");
    }

    async fn missing_or_foreign_pins_and_boards_are_404(app) {
        let board = new_board(&app, "Ops").await;
        let pin = new_pin(&app, "mine").await;
        place(&app, &board, "p-doesnotexist0000000000", None).await.expect_error(404, "NOT_FOUND", None);
        place(&app, "pb-doesnotexist000000000", &pin, None).await.expect_error(404, "NOT_FOUND", None);
        let other = app.key_in("team-b", "*").await;
        let theirs = call(&app, &other, Method::POST, "/v1/pins", Some(&stat_cards("theirs"))).await.expect(200);
        let theirs = theirs.data()["pin_id"].as_str().unwrap().to_owned();
        place(&app, &board, &theirs, None).await.expect_error(404, "NOT_FOUND", None);
        let body = json!({"pin_id": pin});
        call(&app, &other, Method::POST, &format!("/v1/pinboards/{board}/pins"), Some(&body)).await.expect_error(404, "NOT_FOUND", None);
        place(&app, &board, &pin, None).await.expect(200);
        let moved = json!({"position": {"x": 6}});
        call(&app, &other, Method::PUT, &format!("/v1/pinboards/{board}/pins/{pin}"), Some(&moved)).await.expect_error(404, "NOT_FOUND", None);
        call(&app, &other, Method::DELETE, &format!("/v1/pinboards/{board}/pins/{pin}"), None).await.expect_error(404, "NOT_FOUND", None);
        assert_eq!(layout(&app, &board).await, [(pin, pos(0, 0, 3, 2))]);
    }

    async fn moves_and_resizes(app) {
        let board = new_board(&app, "Ops").await;
        let a = new_pin(&app, "a").await;
        let b = new_pin(&app, "b").await;
        place(&app, &board, &a, Some(pos(0, 0, 3, 2))).await.expect(200);
        place(&app, &board, &b, Some(pos(6, 0, 3, 2))).await.expect(200);
        // Overlapping its own old place is fine; only supplied coordinates change.
        let res = move_to(&app, &board, &a, json!({"x": 1})).await.expect(200);
        assert_eq!(res.data()["position"], pos(1, 0, 3, 2));
        move_to(&app, &board, &a, json!({"x": 4})).await.expect_error(409, "CONFLICT", None);
        let res = move_to(&app, &board, &a, json!({"w": 5})).await.expect(200);
        assert_eq!(res.data()["position"], pos(1, 0, 5, 2));
        move_to(&app, &board, &b, json!({"x": 10})).await.expect_error(400, "VALIDATION_FAILED", Some("position.x"));
        move_to(&app, &board, &b, json!({"w": 7})).await.expect_error(400, "VALIDATION_FAILED", Some("position.w"));
        move_to(&app, &board, &b, json!({"x": 1.5})).await.expect_error(400, "VALIDATION_FAILED", Some("position.x"));
        invalid(move_to(&app, &board, &b, json!({})).await, "position");
        invalid(app.put(&format!("/v1/pinboards/{board}/pins/{b}"), &json!({})).await, "position");
        let res = move_to(&app, &board, &b, pos(0, 2, 12, 1)).await.expect(200);
        assert_eq!(res.data(), &json!({"pinboard_id": board, "pin_id": b, "position": pos(0, 2, 12, 1)}));
        let unplaced = new_pin(&app, "c").await;
        move_to(&app, &board, &unplaced, json!({"x": 0})).await.expect_error(404, "NOT_FOUND", None);
        assert_eq!(layout(&app, &board).await, [(a, pos(1, 0, 5, 2)), (b, pos(0, 2, 12, 1))]);
    }

    async fn remove_takes_the_pin_off_the_board_only(app) {
        let board = new_board(&app, "Ops").await;
        let pin = new_pin(&app, "a").await;
        place(&app, &board, &pin, None).await.expect(200);
        let path = format!("/v1/pinboards/{board}/pins/{pin}");
        let res = app.delete(&path).await.expect(200);
        assert_eq!(res.data(), &json!({"pinboard_id": board, "pin_id": pin, "deleted": true}));
        app.delete(&path).await.expect_error(404, "NOT_FOUND", None);
        app.get(&format!("/v1/pins/{pin}")).await.expect(200);
        assert!(layout(&app, &board).await.is_empty());
        // Its slot is free again.
        let other = new_pin(&app, "b").await;
        assert_eq!(place(&app, &board, &other, None).await.expect(200).data()["position"], pos(0, 0, 3, 2));
    }

    async fn deleting_a_pin_removes_its_placements(app) {
        let one = new_board(&app, "one").await;
        let two = new_board(&app, "two").await;
        let pin = new_pin(&app, "doomed").await;
        let stays = new_pin(&app, "stays").await;
        place(&app, &one, &pin, None).await.expect(200);
        place(&app, &two, &pin, None).await.expect(200);
        place(&app, &two, &stays, None).await.expect(200);
        app.delete(&format!("/v1/pins/{pin}")).await.expect(200);
        assert!(layout(&app, &one).await.is_empty());
        assert_eq!(layout(&app, &two).await, [(stays.clone(), pos(3, 0, 3, 2))]);
        // A batch delete too.
        app.post("/v1/pins/batch/delete", &json!({"pin_ids": [stays]})).await.expect(200);
        assert!(layout(&app, &two).await.is_empty());
        // The freed slot takes a new pin.
        let fresh = new_pin(&app, "fresh").await;
        assert_eq!(place(&app, &one, &fresh, None).await.expect(200).data()["position"], pos(0, 0, 3, 2));
    }

    async fn board_read_orders_pins_by_row_then_column(app) {
        let board = new_board(&app, "Ops").await;
        let spots = [pos(6, 2, 2, 1), pos(0, 0, 2, 1), pos(9, 0, 3, 1), pos(0, 2, 2, 1), pos(3, 0, 2, 1)];
        let mut pins = Vec::new();
        for (i, spot) in spots.iter().enumerate() {
            let pin = new_pin(&app, &format!("p{i}")).await;
            place(&app, &board, &pin, Some(spot.clone())).await.expect(200);
            pins.push(pin);
        }
        let got = layout(&app, &board).await;
        let order = [1, 4, 2, 3, 0];
        let expected: Vec<(String, Value)> = order.iter().map(|&i| (pins[i].clone(), spots[i].clone())).collect();
        assert_eq!(got, expected);
        let read = app.get(&format!("/v1/pinboards/{board}")).await.expect(200);
        for (placed, &i) in read.data()["pins"].as_array().unwrap().iter().zip(&order) {
            assert_eq!(placed["pin"]["metadata"]["title"], json!(format!("p{i}")));
            assert_eq!(placed["pin"]["id"], json!(pins[i]));
        }
    }

    async fn pins_list_filters_by_pinboard(app) {
        let board = new_board(&app, "Ops").await;
        let empty = new_board(&app, "Empty").await;
        let a = new_pin(&app, "a").await;
        let _loose = new_pin(&app, "loose").await;
        let c = new_pin(&app, "c").await;
        place(&app, &board, &a, None).await.expect(200);
        place(&app, &board, &c, None).await.expect(200);
        let list = |q: Vec<(&'static str, String)>| {
            let req = app.req(Method::GET, "/v1/pins").query(&q);
            app.send(req)
        };
        let res = list(vec![("pinboard_id", board.clone())]).await.expect(200);
        let ids: Vec<&str> = res.data().as_array().unwrap().iter().map(|p| p["id"].as_str().unwrap()).collect();
        assert_eq!(ids, [c.as_str(), a.as_str()], "newest first");
        let first = list(vec![("pinboard_id", board.clone()), ("limit", "1".into())]).await.expect(200);
        assert_eq!(first.body["pagination"]["has_more"], json!(true));
        let cursor = first.body["pagination"]["next_cursor"].as_str().unwrap().to_owned();
        let second = list(vec![("pinboard_id", board.clone()), ("limit", "1".into()), ("cursor", cursor)]).await.expect(200);
        assert_eq!(second.data()[0]["id"], json!(a));
        assert_eq!(second.body["pagination"]["has_more"], json!(false));
        let with_type = list(vec![("pinboard_id", board.clone()), ("pin_type", "kpi".into())]).await.expect(200);
        assert_eq!(with_type.data(), &json!([]));
        assert_eq!(list(vec![("pinboard_id", empty)]).await.expect(200).data(), &json!([]));
        list(vec![("pinboard_id", "pb-doesnotexist000000000".into())]).await.expect_error(404, "NOT_FOUND", None);
    }

    async fn placements_touch_the_board(app) {
        let created = app.post("/v1/pinboards", &json!({"title": "Ops"})).await.expect(200);
        let board = created.data()["id"].as_str().unwrap().to_owned();
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        let pin = new_pin(&app, "a").await;
        place(&app, &board, &pin, None).await.expect(200);
        let read = app.get(&format!("/v1/pinboards/{board}")).await.expect(200);
        assert_ne!(read.data()["updated_at"], created.data()["updated_at"]);
        assert_eq!(read.data()["created_at"], created.data()["created_at"]);
    }

    async fn concurrent_auto_placements_never_overlap(app) {
        let board = new_board(&app, "Busy").await;
        let mut tasks = tokio::task::JoinSet::new();
        for i in 0..12 {
            let pin = new_pin(&app, &format!("p{i}")).await;
            let req = app.req(Method::POST, &format!("/v1/pinboards/{board}/pins")).json(&json!({"pin_id": pin}));
            tasks.spawn(async move {
                let res = req.send().await.expect("request");
                assert_eq!(res.status().as_u16(), 200);
                let body: Value = res.json().await.expect("JSON");
                body["data"]["position"].clone()
            });
        }
        let mut spots: Vec<Value> = tasks.join_all().await;
        spots.sort_by_key(|p| (p["y"].as_i64(), p["x"].as_i64()));
        let expected: Vec<Value> = (0..12).map(|i| pos(i % 4 * 3, i / 4 * 2, 3, 2)).collect();
        assert_eq!(spots, expected, "twelve distinct slots, rows filled in turn");
    }
}
