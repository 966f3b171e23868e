//! Live events over `GET /v1/events` (CONTRACT.md 10): each change gives exactly one event
//! whose data equals a GET after it, in commit order; filters; isolation; resume and reset;
//! heartbeat; the stream cap; writers never wait for a viewer; across replicas; shutdown.

use std::time::Duration;

use reqwest::Method;
use serde_json::{json, Value};

use crate::{
    both_stores,
    helpers::*,
    pinboards::{new_board, new_pin, place},
};

/// Long enough for a loaded 2-core CI machine; events come within milliseconds.
const WAIT: Duration = Duration::from_secs(10);

/// One parsed server-sent frame.
#[derive(Debug, Clone)]
pub struct Frame {
    pub id: Option<String>,
    pub event: Option<String>,
    pub data: Value,
    pub comment: Option<String>,
    pub retry: Option<String>,
}

/// An open event stream, read frame by frame.
pub struct Stream {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    response: reqwest::Response,
    buffer: String,
}

impl Stream {
    /// Opens `GET path` (e.g. `/v1/events?type=pin.created`) with `key` and `headers`.
    pub async fn open(app: &TestApp, path: &str, key: &str, headers: &[(&str, &str)]) -> Stream {
        let mut req = app
            .client
            .get(format!("{}{path}", app.base))
            .bearer_auth(key);
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        let response = req.send().await.expect("open stream");
        Stream {
            status: response.status().as_u16(),
            headers: response.headers().clone(),
            response,
            buffer: String::new(),
        }
    }

    /// The next frame of any kind, or `None` when the stream ended or `within` passed.
    pub async fn next_frame(&mut self, within: Duration) -> Option<Frame> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                return Some(parse(&block));
            }
            let chunk = tokio::time::timeout_at(deadline, self.response.chunk()).await;
            match chunk {
                Ok(Ok(Some(bytes))) => self.buffer.push_str(&String::from_utf8_lossy(&bytes)),
                _ => return None,
            }
        }
    }

    /// The next frame whose event is `name`, others skipped; panics when none comes within
    /// `within`.
    pub async fn next_of(&mut self, name: &str, within: Duration) -> Frame {
        loop {
            let frame = self
                .next_frame(within)
                .await
                .unwrap_or_else(|| panic!("a {name} within {within:?}"));
            if frame.event.as_deref() == Some(name) {
                return frame;
            }
        }
    }

    /// Whether the server ends the stream within `within`; what came before the end must
    /// hold no event.
    pub async fn ends_within(&mut self, within: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            match tokio::time::timeout_at(deadline, self.response.chunk()).await {
                Ok(Ok(Some(bytes))) => self.buffer.push_str(&String::from_utf8_lossy(&bytes)),
                Ok(Ok(None) | Err(_)) => {
                    assert!(
                        !self.buffer.contains("event:"),
                        "an event before the end: {}",
                        self.buffer
                    );
                    return true;
                }
                Err(_) => return false,
            }
        }
    }

    /// The next event (skipping comments and the retry hint).
    pub async fn next_event(&mut self) -> Frame {
        loop {
            let frame = self.next_frame(WAIT).await.expect("an event within 10 s");
            if frame.event.is_some() {
                return frame;
            }
        }
    }

    /// The next `n` events.
    pub async fn events(&mut self, n: usize) -> Vec<Frame> {
        let mut events = Vec::with_capacity(n);
        while events.len() < n {
            events.push(self.next_event().await);
        }
        events
    }
}

fn parse(block: &str) -> Frame {
    let mut frame = Frame {
        id: None,
        event: None,
        data: Value::Null,
        comment: None,
        retry: None,
    };
    for line in block.lines() {
        if let Some(rest) = line.strip_prefix(':') {
            frame.comment = Some(rest.trim().to_owned());
        } else if let Some((field, value)) = line.split_once(": ") {
            match field {
                "id" => frame.id = Some(value.to_owned()),
                "event" => frame.event = Some(value.to_owned()),
                "data" => frame.data = serde_json::from_str(value).expect("one line of JSON"),
                "retry" => frame.retry = Some(value.to_owned()),
                other => panic!("unexpected field {other}"),
            }
        }
    }
    frame
}

/// A stream of the default workspace with the `*` key.
async fn watch(app: &TestApp, query: &str) -> Stream {
    let stream = Stream::open(app, &format!("/v1/events{query}"), &app.key, &[]).await;
    assert_eq!(stream.status, 200);
    stream
}

fn id_of(frame: &Frame) -> i64 {
    frame
        .id
        .as_deref()
        .expect("an id")
        .parse()
        .expect("a number")
}

/// Asserts the event's name and resource, and that its data equals `GET get_path` now.
async fn assert_event(app: &TestApp, frame: &Frame, event: &str, id: &str, get_path: Option<&str>) {
    assert_eq!(frame.event.as_deref(), Some(event), "{frame:?}");
    assert_eq!(frame.data["type"], json!(event));
    assert_eq!(frame.data["id"], json!(id));
    assert!(frame.data["at"]
        .as_str()
        .is_some_and(|at| at.ends_with('Z')));
    match get_path {
        Some(path) => {
            let now = app.get(path).await.expect(200);
            assert_eq!(frame.data["data"], *now.data(), "{event} data is the GET");
        }
        None => assert_eq!(frame.data["data"], json!({"id": id, "deleted": true})),
    }
}

both_stores! {
    async fn a_stream_has_its_headers_and_each_pin_change_one_event_equal_to_a_get(app) {
        let mut stream = watch(&app, "").await;
        assert_eq!(stream.headers["content-type"], "text/event-stream");
        assert_eq!(stream.headers["cache-control"], "no-cache");
        assert_eq!(stream.headers["x-accel-buffering"], "no");
        assert!(stream.headers.contains_key("x-ratelimit-remaining-minute"));
        let first = stream.next_frame(WAIT).await.expect("the retry hint");
        assert!(first.retry.is_some(), "{first:?}");

        let pin = new_pin(&app, "Sales").await;
        let path = format!("/v1/pins/{pin}");
        let created = stream.next_event().await;
        assert_event(&app, &created, "pin.created", &pin, Some(&path)).await;
        assert_eq!(created.data["version"], json!(1));

        app.patch(&path, &json!({"metadata": {"title": "Sales (EU)"}})).await.expect(200);
        let updated = stream.next_event().await;
        assert_event(&app, &updated, "pin.updated", &pin, Some(&path)).await;
        assert_eq!(updated.data["version"], json!(2));

        app.put(&format!("{path}/share"), &json!({"is_public": true})).await.expect(200);
        let shared = stream.next_event().await;
        assert_event(&app, &shared, "pin.updated", &pin, Some(&path)).await;
        assert_eq!(shared.data["data"]["is_public"], json!(true));

        app.delete(&path).await.expect(200);
        let deleted = stream.next_event().await;
        assert_event(&app, &deleted, "pin.deleted", &pin, None).await;
        assert!(id_of(&created) < id_of(&updated));
        assert!(id_of(&updated) < id_of(&shared));
        assert!(id_of(&shared) < id_of(&deleted));
    }

    async fn each_board_change_gives_one_event_with_its_placements(app) {
        let mut stream = watch(&app, "").await;
        let board = new_board(&app, "Ops").await;
        let path = format!("/v1/pinboards/{board}");
        assert_event(&app, &stream.next_event().await, "pinboard.created", &board, Some(&path)).await;
        let pin = new_pin(&app, "Latency").await;
        assert_eq!(stream.next_event().await.event.as_deref(), Some("pin.created"));

        place(&app, &board, &pin, None).await.expect(200);
        let placed = stream.next_event().await;
        assert_event(&app, &placed, "pinboard.updated", &board, Some(&path)).await;
        assert_eq!(placed.data["data"]["pins"][0]["pin_id"], json!(pin));

        let moved = json!({"position": {"x": 6, "y": 1, "w": 3, "h": 2}});
        app.put(&format!("{path}/pins/{pin}"), &moved).await.expect(200);
        let moved = stream.next_event().await;
        assert_event(&app, &moved, "pinboard.updated", &board, Some(&path)).await;
        assert_eq!(moved.data["data"]["pins"][0]["position"]["x"], json!(6));

        app.patch(&path, &json!({"title": "Ops overview"})).await.expect(200);
        assert_event(&app, &stream.next_event().await, "pinboard.updated", &board, Some(&path)).await;

        app.delete(&format!("{path}/pins/{pin}")).await.expect(200);
        let removed = stream.next_event().await;
        assert_event(&app, &removed, "pinboard.updated", &board, Some(&path)).await;
        assert_eq!(removed.data["data"]["pins"], json!([]));

        app.delete(&path).await.expect(200);
        assert_event(&app, &stream.next_event().await, "pinboard.deleted", &board, None).await;
    }

    async fn a_batch_of_n_gives_n_events_and_refused_writes_give_none(app) {
        let mut stream = watch(&app, "").await;
        let batch = json!({"pins": [stat_cards("a"), stat_cards("b"), stat_cards("c")]});
        let created = app.post("/v1/pins/batch", &batch).await.expect(200);
        let ids: Vec<Value> = created.data().as_array().unwrap().iter().map(|p| p["pin_id"].clone()).collect();
        let events = stream.events(3).await;
        let got: Vec<Value> = events.iter().map(|e| e.data["id"].clone()).collect();
        assert_eq!(got, ids, "one event per pin, in request order");

        // Refused: an invalid create, a batch with one invalid item, a stale If-Match, an
        // update of a missing pin, an overlapping placement.
        app.post("/v1/pins", &json!({"pin_type": "kpi", "pin_config": {}})).await.expect(400);
        let bad_batch = json!({"pins": [stat_cards("ok"), {"pin_type": "nope"}]});
        app.post("/v1/pins/batch", &bad_batch).await.expect(400);
        let first = ids[0].as_str().unwrap();
        let stale = app.req(Method::PATCH, &format!("/v1/pins/{first}")).header("If-Match", "\"9\"").json(&json!({"metadata": {"title": "x"}}));
        app.send(stale).await.expect(412);
        app.patch("/v1/pins/p-missing", &json!({"metadata": {"title": "x"}})).await.expect(404);
        let board = new_board(&app, "B").await;
        let at = json!({"x": 0, "y": 0, "w": 3, "h": 2});
        place(&app, &board, first, Some(at.clone())).await.expect(200);
        place(&app, &board, ids[1].as_str().unwrap(), Some(at)).await.expect(409);
        let marker = new_pin(&app, "marker").await;
        let rest = stream.events(3).await;
        let names: Vec<_> = rest.iter().map(|e| e.event.clone().unwrap()).collect();
        assert_eq!(names, ["pinboard.created", "pinboard.updated", "pin.created"]);
        assert_eq!(rest[2].data["id"], json!(marker));
    }

    async fn a_batchs_events_keep_every_character_of_their_records_in_request_order(app) {
        // One batch is one commit: its events are appended together (one statement on each
        // store), each record carried inside that statement's arguments.
        let titles = ["a \"quote\" and a back\\slash \\\"", "Ünïcödé 🚀 日本語", "<b>&amp;</b> \\u0041 %s $1 ?"];
        let mut stream = watch(&app, "").await;
        let batch = json!({"pins": titles.iter().map(|t| stat_cards(t)).collect::<Vec<_>>()});
        let created = app.post("/v1/pins/batch", &batch).await.expect(200);
        let ids: Vec<String> = created.data().as_array().unwrap().iter().map(|p| p["pin_id"].as_str().unwrap().to_owned()).collect();
        let events = stream.events(3).await;
        for ((frame, id), title) in events.iter().zip(&ids).zip(titles) {
            assert_event(&app, frame, "pin.created", id, Some(&format!("/v1/pins/{id}"))).await;
            assert_eq!(frame.data["data"]["metadata"]["title"], json!(title));
        }
    }

    async fn filters_select_by_pin_board_and_type_and_combine(app) {
        let board = new_board(&app, "Filtered").await;
        let on_board = new_pin(&app, "on board").await;
        let elsewhere = new_pin(&app, "elsewhere").await;
        place(&app, &board, &on_board, None).await.expect(200);
        let mut by_pin = watch(&app, &format!("?pin_id={elsewhere}")).await;
        let mut by_board = watch(&app, &format!("?pinboard_id={board}")).await;
        let mut by_type = watch(&app, "?type=pin.deleted&type=pinboard.updated").await;
        let mut both = watch(&app, &format!("?pinboard_id={board}&type=pin.updated")).await;

        app.patch(&format!("/v1/pins/{elsewhere}"), &json!({"metadata": {"title": "e2"}})).await.expect(200);
        app.patch(&format!("/v1/pins/{on_board}"), &json!({"metadata": {"title": "b2"}})).await.expect(200);
        app.patch(&format!("/v1/pinboards/{board}"), &json!({"title": "Filtered 2"})).await.expect(200);
        app.delete(&format!("/v1/pins/{on_board}")).await.expect(200);
        app.delete(&format!("/v1/pins/{elsewhere}")).await.expect(200);

        let seen = |frames: Vec<Frame>| -> Vec<(String, String)> {
            frames.into_iter().map(|f| (f.event.unwrap(), f.data["id"].as_str().unwrap().to_owned())).collect()
        };
        let pair = |e: &str, id: &str| (e.to_owned(), id.to_owned());
        assert_eq!(seen(by_pin.events(2).await), [pair("pin.updated", &elsewhere), pair("pin.deleted", &elsewhere)]);
        assert_eq!(
            seen(by_board.events(3).await),
            [pair("pin.updated", &on_board), pair("pinboard.updated", &board), pair("pin.deleted", &on_board)]
        );
        assert_eq!(
            seen(by_type.events(3).await),
            [pair("pinboard.updated", &board), pair("pin.deleted", &on_board), pair("pin.deleted", &elsewhere)]
        );
        assert_eq!(seen(both.events(1).await), [pair("pin.updated", &on_board)]);
        // Nothing else came for the combined filter: the next event is a later one it wants.
        let later = new_pin(&app, "later").await;
        place(&app, &board, &later, None).await.expect(200);
        app.patch(&format!("/v1/pins/{later}"), &json!({"metadata": {"title": "l2"}})).await.expect(200);
        assert_eq!(seen(both.events(1).await), [pair("pin.updated", &later)]);
    }

    async fn a_stream_carries_only_its_own_workspace(app) {
        let other = app.key_in("other", "*").await;
        let mut theirs = Stream::open(&app, "/v1/events", &other, &[]).await;
        assert_eq!(theirs.status, 200);
        new_pin(&app, "ours").await;
        let res = call(&app, &other, Method::POST, "/v1/pins", Some(&stat_cards("theirs"))).await.expect(200);
        let event = theirs.next_event().await;
        assert_eq!(event.data["id"], res.data()["pin_id"], "the other workspace's pin never shows");
    }

    async fn resuming_delivers_exactly_the_missed_events_then_live_ones(app) {
        let mut stream = watch(&app, "").await;
        let mut pins = Vec::new();
        for i in 0..4 {
            pins.push(new_pin(&app, &format!("p{i}")).await);
        }
        let seen = stream.events(4).await;
        drop(stream);
        let after = seen[1].id.clone().unwrap();
        // Header, then the query parameter: each gives exactly the events after p1, once,
        // then the live ones.
        let mut expected: Vec<Value> = seen[2..].iter().map(|e| e.data["id"].clone()).collect();
        for how in ["header", "query"] {
            let mut resumed = match how {
                "header" => Stream::open(&app, "/v1/events", &app.key, &[("Last-Event-ID", &after)]).await,
                _ => Stream::open(&app, &format!("/v1/events?last_event_id={after}"), &app.key, &[]).await,
            };
            assert_eq!(resumed.status, 200);
            expected.push(json!(new_pin(&app, how).await));
            let got: Vec<Value> = resumed.events(expected.len()).await.iter().map(|e| e.data["id"].clone()).collect();
            assert_eq!(got, expected);
            assert!(resumed.next_frame(Duration::from_millis(300)).await.is_none_or(|f| f.event.is_none()));
        }
    }

    async fn the_last_event_id_header_comes_before_the_query(app) {
        let mut stream = watch(&app, "").await;
        for i in 0..3 {
            new_pin(&app, &format!("p{i}")).await;
        }
        let seen = stream.events(3).await;
        drop(stream);
        let (query, header) = (seen[0].id.clone().unwrap(), seen[1].id.clone().unwrap());
        let mut resumed = Stream::open(&app, &format!("/v1/events?last_event_id={query}"), &app.key, &[("Last-Event-ID", &header)]).await;
        assert_eq!(resumed.status, 200);
        assert_eq!(resumed.next_event().await.data["id"], seen[2].data["id"], "after the header's id");
    }

    async fn an_unknown_last_event_id_starts_with_reset(app) {
        for last in ["nonsense", "999999999999"] {
            let mut stream = Stream::open(&app, "/v1/events", &app.key, &[("Last-Event-ID", last)]).await;
            assert_eq!(stream.status, 200);
            let reset = stream.next_event().await;
            assert_eq!(reset.event.as_deref(), Some("reset"));
            assert!(reset.data["reason"].is_string());
            let pin = new_pin(&app, last).await;
            assert_eq!(stream.next_event().await.data["id"], json!(pin));
        }
    }

    async fn opening_needs_pins_read_and_a_credential(app) {
        let boards_only = app.key_with("pinboards:read").await;
        let refused = Stream::open(&app, "/v1/events", &boards_only, &[]).await;
        assert_eq!(refused.status, 403);
        let res = app.send(app.client.get(format!("{}/v1/events", app.base))).await;
        res.expect_error(401, "UNAUTHORIZED", None);
        app.get("/v1/events?type=pin.exploded").await.expect_error(400, "VALIDATION_FAILED", Some("type"));
        app.get("/v1/events?colour=red").await.expect_error(400, "VALIDATION_FAILED", Some("colour"));
        let reader = app.key_with("pins:read").await;
        let mut stream = Stream::open(&app, "/events", &reader, &[]).await;
        assert_eq!(stream.status, 200, "the unprefixed alias too");
        let pin = new_pin(&app, "seen").await;
        assert_eq!(stream.next_event().await.data["id"], json!(pin));
    }
}

/// A `json` pin of about 200 kB: 100 of them (20 MB) overflow the sockets' buffers.
fn big_json_pin(i: usize) -> Value {
    json!({"pin_type": "json", "pin_config": {"data": {"i": i, "pad": "x".repeat(200_000)}}})
}

/// A stream with `overrides` settings on a store of each kind.
/// A server with `overrides` on each store there is.
pub async fn each_store(overrides: &str) -> Vec<TestApp> {
    let mut apps = vec![TestApp::sqlite_with(overrides).await];
    if postgres_available().await {
        apps.push(TestApp::postgres_with(overrides).await);
    }
    apps
}

/// Writers don't wait for a viewer that stopped reading: its socket fills, its buffer of 16
/// events overflows, and when it reads again its stream ends after what was already sent;
/// resuming by its last id then delivers every other event, once.
#[tokio::test]
async fn a_viewer_that_never_reads_is_ended_and_resumes_without_slowing_writers() {
    for app in each_store("[events]\nbuffer = 16\n").await {
        let mut stalled = watch(&app, "").await;
        let started = std::time::Instant::now();
        let mut made = Vec::new();
        for i in 0..100 {
            let res = app.post("/v1/pins", &big_json_pin(i)).await.expect(200);
            made.push(res.data()["pin_id"].clone());
        }
        let took = started.elapsed();
        assert!(took < Duration::from_secs(60), "100 creates took {took:?}");
        let mut got = Vec::new();
        let mut last = None;
        while let Some(frame) = stalled.next_frame(WAIT).await {
            if frame.event.is_some() {
                got.push(frame.data["id"].clone());
                last = frame.id;
            }
        }
        assert!(
            got.len() < made.len(),
            "the stream ended early ({} events)",
            got.len()
        );
        assert_eq!(got[..], made[..got.len()]);
        let last = last.expect("some events came before the end");
        let mut resumed =
            Stream::open(&app, "/v1/events", &app.key, &[("Last-Event-ID", &last)]).await;
        let rest: Vec<Value> = resumed
            .events(made.len() - got.len())
            .await
            .iter()
            .map(|e| e.data["id"].clone())
            .collect();
        assert_eq!(rest[..], made[got.len()..]);
    }
}

/// A viewer resuming 1,120 events (22 MB, more than sockets buffer) back reads them from
/// the log page by page: while its client has read none of them, 40 more writes overflow its
/// buffer of 16 live events, yet it gets every event once, in order, then the live ones.
#[tokio::test]
async fn a_viewer_resuming_far_back_catches_up_from_the_log_while_writes_go_on() {
    let padded = |i: usize| json!({"pin_type": "json", "pin_config": {"data": {"i": i, "pad": "x".repeat(20_000)}}});
    for app in each_store("[events]\nbuffer = 16\n").await {
        let mut stream = watch(&app, "").await;
        let first = new_pin(&app, "first").await;
        let from = stream.next_event().await;
        assert_eq!(from.data["id"], json!(first));
        drop(stream);
        let mut resumed = None;
        let mut made = Vec::new();
        for b in 0..29 {
            let pins: Vec<Value> = (0..40).map(|i| padded(b * 40 + i)).collect();
            if b == 28 {
                // The first 1,120 are in the log: resume, and read nothing until the last
                // 40 are in too.
                let last = from.id.clone().unwrap();
                let opened =
                    Stream::open(&app, "/v1/events", &app.key, &[("Last-Event-ID", &last)]).await;
                assert_eq!(opened.status, 200);
                resumed = Some(opened);
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            let created = app
                .post("/v1/pins/batch", &json!({"pins": pins}))
                .await
                .expect(200);
            made.extend(
                created
                    .data()
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| p["pin_id"].clone()),
            );
        }
        let mut stream = resumed.expect("resumed");
        let events = stream.events(made.len()).await;
        let ids: Vec<i64> = events.iter().map(id_of).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids increase");
        let got: Vec<Value> = events.iter().map(|e| e.data["id"].clone()).collect();
        assert_eq!(got, made, "every event once, in order");
        let after = new_pin(&app, "after").await;
        assert_eq!(
            stream.next_event().await.data["id"],
            json!(after),
            "then the live ones"
        );
    }
}

#[tokio::test]
async fn an_idle_stream_sends_a_heartbeat() {
    for app in each_store("[events]\nheartbeat_secs = 1\n").await {
        let mut stream = watch(&app, "").await;
        let mut comment = None;
        while comment.is_none() {
            let frame = stream
                .next_frame(Duration::from_secs(5))
                .await
                .expect("a heartbeat within 5 s");
            comment = frame.comment;
        }
        assert_eq!(comment.as_deref(), Some("keep-alive"));
    }
}

/// CONTRACT.md 10: a comment at least every `heartbeat_secs`, also while events flow (a
/// proxy that times out on its own clock sees the stream alive either way).
#[tokio::test]
async fn a_busy_stream_sends_a_heartbeat_too() {
    for app in each_store("[events]\nheartbeat_secs = 1\n").await {
        let mut stream = watch(&app, "").await;
        let (mut events, mut comments) = (0, 0);
        let started = tokio::time::Instant::now();
        while comments == 0 && started.elapsed() < Duration::from_secs(4) {
            new_pin(&app, "busy").await;
            while let Some(frame) = stream.next_frame(Duration::from_millis(250)).await {
                events += usize::from(frame.event.is_some());
                comments += usize::from(frame.comment.as_deref() == Some("keep-alive"));
            }
        }
        assert!(events > 0, "the pins' events came");
        assert!(
            comments > 0,
            "a keep-alive within 4 s among {events} events"
        );
    }
}

#[tokio::test]
async fn each_credential_may_hold_only_so_many_streams() {
    for app in each_store("[events]\nmax_streams_per_key = 2\nheartbeat_secs = 1\n").await {
        let first = watch(&app, "").await;
        let _second = watch(&app, "").await;
        let third = app.get("/v1/events").await;
        assert_eq!(third.header("retry-after"), Some("1"));
        let third = third.expect_error(429, "RATE_LIMIT_EXCEEDED", None);
        assert_eq!(
            third.body["error"]["details"],
            json!({"limit": 2, "window": "streams", "per": "credential"})
        );
        let other = app.key_with("pins:read").await;
        assert_eq!(
            Stream::open(&app, "/v1/events", &other, &[]).await.status,
            200,
            "per credential"
        );
        drop(first);
        // The server notices the closed stream at its next write (a heartbeat at most).
        let mut status = 0;
        for _ in 0..50 {
            status = Stream::open(&app, "/v1/events", &app.key, &[]).await.status;
            if status == 200 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        assert_eq!(status, 200);
    }
}

/// A `*` key can mint keys, each with its own per-key cap: the workspace's streams are
/// capped together. Another workspace, and anonymous viewers of a public pin (counted per
/// address), keep their places.
#[tokio::test]
async fn each_workspace_may_hold_only_so_many_streams() {
    for app in each_store("[events]\nmax_streams_per_workspace = 3\nheartbeat_secs = 1\n").await {
        let mut minted = Vec::new();
        for i in 0..4 {
            let made = app
                .post(
                    "/v1/api-keys",
                    &json!({"name": format!("minted {i}"), "scopes": ["pins:read"]}),
                )
                .await
                .expect(200);
            minted.push(made.data()["key"].as_str().expect("a key").to_owned());
        }
        let mut open = Vec::new();
        for key in &minted[..3] {
            let stream = Stream::open(&app, "/v1/events", key, &[]).await;
            assert_eq!(stream.status, 200);
            open.push(stream);
        }
        let refused = Stream::open(&app, "/v1/events", &minted[3], &[]).await;
        assert_eq!(refused.status, 429, "a fourth stream in the workspace");
        assert_eq!(
            refused.headers.get("retry-after").map(|v| v.as_bytes()),
            Some(&b"1"[..])
        );
        let refused = refused.response.json::<Value>().await.expect("an envelope");
        assert_eq!(refused["error"]["code"], json!("RATE_LIMIT_EXCEEDED"));
        assert_eq!(
            refused["error"]["details"],
            json!({"limit": 3, "window": "streams", "per": "workspace"})
        );
        let elsewhere = app.key_in("ws-other", "pins:read").await;
        assert_eq!(
            Stream::open(&app, "/v1/events", &elsewhere, &[])
                .await
                .status,
            200
        );
        let pin = new_pin(&app, "public").await;
        app.put(
            &format!("/v1/pins/{pin}/share"),
            &json!({"is_public": true}),
        )
        .await
        .expect(200);
        assert_eq!(
            share_stream(&app, &pin).await.status,
            200,
            "share streams count apart"
        );

        open.remove(0);
        // The server notices the closed stream at its next write (a heartbeat at most).
        let mut status = 0;
        for _ in 0..50 {
            status = Stream::open(&app, "/v1/events", &minted[3], &[])
                .await
                .status;
            if status == 200 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        assert_eq!(status, 200, "a closed stream frees its place");
    }
}

#[tokio::test]
async fn a_viewer_on_one_replica_sees_every_replicas_changes_in_one_order() {
    crate::skip_without_postgres!();
    let a = TestApp::postgres().await;
    let b = a.replica("").await;
    let mut on_b = Stream::open(&b, "/v1/events", &a.key, &[]).await;
    assert_eq!(on_b.status, 200);
    let mut on_a = Stream::open(&a, "/v1/events", &a.key, &[]).await;
    let mut made = Vec::new();
    for i in 0..6 {
        let app = if i % 2 == 0 { &a } else { &b };
        let body = stat_cards(&format!("r{i}"));
        let res = call(app, &a.key, Method::POST, "/v1/pins", Some(&body))
            .await
            .expect(200);
        made.push(res.data()["pin_id"].clone());
    }
    let from_b: Vec<Value> = on_b
        .events(6)
        .await
        .iter()
        .map(|e| e.data["id"].clone())
        .collect();
    let from_a_frames = on_a.events(6).await;
    let third_id = from_a_frames[2].id.clone().unwrap();
    let from_a: Vec<Value> = from_a_frames.iter().map(|e| e.data["id"].clone()).collect();
    assert_eq!(from_b, made);
    assert_eq!(from_a, made);
    // Resuming on the other replica continues where this one stopped.
    drop(on_b);
    let mut resumed = Stream::open(&b, "/v1/events", &a.key, &[("Last-Event-ID", &third_id)]).await;
    let rest: Vec<Value> = resumed
        .events(3)
        .await
        .iter()
        .map(|e| e.data["id"].clone())
        .collect();
    assert_eq!(rest, made[3..]);
    // A batch (its own transaction, not the commit loop's), then an update from the other
    // replica, each seen on both before the next: a later write's news can't stand in.
    let names = |frames: Vec<Frame>| -> Vec<(String, Value)> {
        frames
            .into_iter()
            .map(|e| (e.event.unwrap_or_default(), e.data["id"].clone()))
            .collect()
    };
    let batch = json!({"pins": [stat_cards("b0"), stat_cards("b1")]});
    let res = call(&a, &a.key, Method::POST, "/v1/pins/batch", Some(&batch))
        .await
        .expect(200);
    let created: Vec<(String, Value)> = res
        .data()
        .as_array()
        .expect("items")
        .iter()
        .map(|p| ("pin.created".to_owned(), p["pin_id"].clone()))
        .collect();
    assert_eq!(names(resumed.events(2).await), created);
    assert_eq!(names(on_a.events(2).await), created);
    let first = made[0].as_str().expect("an id");
    let patch = json!({"metadata": {"title": "moved"}});
    call(
        &b,
        &a.key,
        Method::PATCH,
        &format!("/v1/pins/{first}"),
        Some(&patch),
    )
    .await
    .expect(200);
    let updated = vec![("pin.updated".to_owned(), made[0].clone())];
    assert_eq!(names(resumed.events(1).await), updated);
    assert_eq!(names(on_a.events(1).await), updated);
}

/// Event streams are pushed by threads of their own at the niceness `http.stream_nice`
/// (what `ps -L -o ni,comm` shows), so a machine short of CPU serves requests first.
#[tokio::test]
async fn streams_are_pushed_by_threads_at_the_configured_niceness() {
    let niceness = |comm: &str| -> Vec<i64> {
        let tasks = std::fs::read_dir("/proc/self/task").expect("/proc");
        tasks
            .filter_map(|task| {
                let path = task.ok()?.path();
                let name = std::fs::read_to_string(path.join("comm")).ok()?;
                let stat = std::fs::read_to_string(path.join("stat")).ok()?;
                // Field 19 is the nice value; the fields after the `(comm)` are plain.
                let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
                (name.trim() == comm).then(|| fields[16].parse().ok())?
            })
            .collect()
    };
    let app = TestApp::sqlite_with("[http]\nstream_nice = 7\n").await;
    let mut stream = watch(&app, "").await;
    let pin = new_pin(&app, "seen").await;
    assert_eq!(stream.next_event().await.data["id"], json!(pin));
    assert!(
        niceness("corkboard-strea").contains(&7),
        "{:?}",
        niceness("corkboard-strea")
    );
}

#[tokio::test]
async fn shutting_down_ends_the_streams() {
    for app in each_store("").await {
        let mut stream = watch(&app, "").await;
        stream.next_frame(WAIT).await.expect("the retry hint");
        let stopped = tokio::spawn(app.shut_down());
        assert!(stream.next_frame(WAIT).await.is_none(), "the stream ends");
        tokio::time::timeout(WAIT, stopped)
            .await
            .expect("shutdown does not wait for streams")
            .expect("task")
            .expect("serve");
    }
}

/// A share stream, opened without a credential.
async fn share_stream(app: &TestApp, id: &str) -> Stream {
    share_stream_at(app, &format!("/share/{id}/events")).await
}

/// A share stream at `path` (with its query), opened without a credential.
async fn share_stream_at(app: &TestApp, path: &str) -> Stream {
    share_stream_with(app, path, &[]).await
}

/// A share stream at `path`, opened without a credential, sending `headers`.
async fn share_stream_with(app: &TestApp, path: &str, headers: &[(&str, &str)]) -> Stream {
    let mut req = app.client.get(format!("{}{path}", app.base));
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    let response = req.send().await.expect("open share stream");
    Stream {
        status: response.status().as_u16(),
        headers: response.headers().clone(),
        response,
        buffer: String::new(),
    }
}

/// The resume point share page `/share/{id}` carries (`data-since`).
async fn page_since(app: &TestApp, id: &str) -> String {
    let html = app
        .client
        .get(format!("{}/share/{id}", app.base))
        .send()
        .await
        .expect("share page")
        .text()
        .await
        .expect("body");
    let since = html.split("data-since=\"").nth(1).expect("a live page");
    since.split('"').next().unwrap_or_default().to_owned()
}

/// What a share stream may show of a pin record.
fn assert_public_pin(pin: &Value) {
    let keys: Vec<&str> = pin
        .as_object()
        .expect("a pin")
        .keys()
        .map(String::as_str)
        .collect();
    for key in &keys {
        assert!(
            [
                "id",
                "pin_type",
                "pin_config",
                "pin_layout",
                "version",
                "updated_at",
                "last_pushed_at",
                "stale",
                "metadata"
            ]
            .contains(key),
            "{key} is not on the share page: {pin}"
        );
    }
    assert_eq!(
        pin["metadata"].as_object().map(|m| m.len()),
        Some(1),
        "only the title: {pin}"
    );
}

both_stores! {
    async fn a_public_pins_share_stream_shows_what_its_page_shows_and_ends_when_private(app) {
        let body = json!({"pin_type": "markdown", "pin_config": {"text": "v1"},
            "metadata": {"title": "Public", "tags": ["secret-tag"], "provenance": {"run_id": "r-secret"}}});
        let pin = app.create_pin(&body).await["pin_id"].as_str().unwrap().to_owned();
        let private = share_stream(&app, &pin).await;
        assert_eq!(private.status, 404, "like the page while private");
        assert!(private.headers["content-type"].to_str().unwrap().starts_with("text/html"));

        app.put(&format!("/v1/pins/{pin}/share"), &json!({"is_public": true})).await.expect(200);
        let mut stream = share_stream(&app, &pin).await;
        assert_eq!(stream.status, 200);
        assert_eq!(stream.headers["content-type"], "text/event-stream");
        app.patch(&format!("/v1/pins/{pin}"), &json!({"pin_config": {"text": "v2"}})).await.expect(200);
        let other = new_pin(&app, "another item").await;
        app.patch(&format!("/v1/pins/{other}"), &json!({"metadata": {"title": "x"}})).await.expect(200);
        let event = stream.next_event().await;
        assert_eq!(event.event.as_deref(), Some("pin.updated"));
        assert_eq!(event.data["id"], json!(pin));
        assert_eq!(event.data["data"]["pin_config"], json!({"text": "v2"}));
        assert_eq!(event.data["data"]["metadata"]["title"], json!("Public"));
        assert_public_pin(&event.data["data"]);
        let text = event.data.to_string();
        assert!(!text.contains("secret") && !text.contains(&app.key), "{text}");

        app.put(&format!("/v1/pins/{pin}/share"), &json!({"is_public": false})).await.expect(200);
        assert!(stream.ends_within(WAIT).await, "the stream ends when the pin stops being public");
        assert_eq!(share_stream(&app, &pin).await.status, 404);
    }

    async fn a_public_boards_share_stream_follows_the_board_and_its_pins(app) {
        let board = new_board(&app, "Wall").await;
        app.put(&format!("/v1/pinboards/{board}/share"), &json!({"is_public": true})).await.expect(200);
        let placed = new_pin(&app, "placed").await;
        let elsewhere = new_pin(&app, "elsewhere").await;
        let mut stream = share_stream(&app, &board).await;
        assert_eq!(stream.status, 200);
        place(&app, &board, &placed, None).await.expect(200);
        app.patch(&format!("/v1/pins/{elsewhere}"), &json!({"metadata": {"title": "e2"}})).await.expect(200);
        app.patch(&format!("/v1/pins/{placed}"), &json!({"metadata": {"title": "p2"}})).await.expect(200);
        let events = stream.events(2).await;
        assert_eq!(events[0].event.as_deref(), Some("pinboard.updated"));
        let shown = &events[0].data["data"];
        assert_eq!(shown["title"], json!("Wall"));
        assert!(shown.get("shareable_url").is_none() && shown.get("is_public").is_none(), "{shown}");
        assert_eq!(shown["pins"][0]["pin_id"], json!(placed));
        assert_public_pin(&shown["pins"][0]["pin"]);
        assert_eq!(events[1].event.as_deref(), Some("pin.updated"));
        assert_eq!(events[1].data["id"], json!(placed), "not the pin that isn't on the board");
    }

    async fn a_hooks_call_reaches_share_pages_so_templated_pins_redraw(app) {
        // CONTRACT.md 14: a hook's write is one dataset version and one event, which pages
        // showing the workspace's pins get as the notice that makes them redraw.
        let pin = new_pin(&app, "deploys").await;
        app.put(&format!("/v1/pins/{pin}/share"), &json!({"is_public": true})).await.expect(200);
        let hook = app.post("/v1/hooks", &json!({"name": "ci", "dataset": "deploys"})).await.expect(200);
        let url = hook.data()["url"].as_str().unwrap().to_owned();
        let path = url.split_once("/in/").map(|(_, token)| format!("/in/{token}")).unwrap();
        let mut stream = share_stream(&app, &pin).await;
        for version in [1, 2] {
            let res = app.send(app.client.post(format!("{}{path}", app.base)).json(&json!({"v": version}))).await;
            assert_eq!(res.expect(200).data()["version"], json!(version));
        }
        let events = stream.events(2).await;
        assert_eq!(events[0].event.as_deref(), Some("dataset.created"));
        assert_eq!(events[1].event.as_deref(), Some("dataset.updated"));
        assert_eq!(events[1].data["type"], json!("dataset.updated"));
    }

    async fn a_share_stream_passes_its_workspaces_dataset_changes_as_bare_notices(app) {
        // A page's templates may name any dataset of its workspace: its script refetches on
        // the notice, which carries nothing of the dataset.
        let pin = new_pin(&app, "uses data").await;
        app.put(&format!("/v1/pins/{pin}/share"), &json!({"is_public": true})).await.expect(200);
        let before = page_since(&app, &pin).await;
        let mut stream = share_stream(&app, &pin).await;
        let created = app.post("/v1/datasets", &json!({"name": "secret_numbers", "format": "json",
            "data": {"total": 4242}})).await.expect(200);
        let dataset = created.data()["id"].as_str().unwrap().to_owned();
        app.patch(&format!("/v1/pins/{pin}"), &json!({"metadata": {"title": "after"}})).await.expect(200);
        let events = stream.events(2).await;
        assert_eq!(events[0].event.as_deref(), Some("dataset.created"));
        assert!(events[0].id.is_some(), "resumable like any event");
        let keys: Vec<&String> = events[0].data.as_object().expect("an object").keys().collect();
        assert_eq!(keys, ["at", "type"], "{}", events[0].data);
        assert_eq!(events[0].data["type"], json!("dataset.created"));
        let text = events[0].data.to_string();
        assert!(!text.contains("secret") && !text.contains("4242") && !text.contains(&dataset), "{text}");
        assert_eq!(events[1].event.as_deref(), Some("pin.updated"));
        // Resuming before the notice (where the page was drawn) replays it the same way.
        let mut resumed = share_stream_at(&app, &format!("/share/{pin}/events?last_event_id={before}")).await;
        let again = resumed.next_event().await;
        assert_eq!((again.id, again.data), (events[0].id.clone(), events[0].data.clone()));
    }

    async fn share_resume_points_say_nothing_of_other_workspaces(app) {
        // Event ids count every workspace's writes: a share page and its stream carry
        // tokens of their own workspace's points instead, which other workspaces' writes
        // don't move, and resume by them (the header or the page's query).
        let pin = new_pin(&app, "watched").await;
        app.put(&format!("/v1/pins/{pin}/share"), &json!({"is_public": true})).await.expect(200);
        let other = app.key_in("elsewhere", "*").await;
        let others_write = |n: usize| {
            let (app, other) = (&app, &other);
            async move {
                for i in 0..n {
                    call(app, other, Method::POST, "/v1/pins", Some(&stat_cards(&format!("other {i}")))).await.expect(200);
                }
            }
        };
        let drawn = page_since(&app, &pin).await;
        let mut stream = share_stream_at(&app, &format!("/share/{pin}/events?last_event_id={drawn}")).await;
        others_write(3).await;
        assert_eq!(page_since(&app, &pin).await, drawn, "other workspaces' writes don't move it");
        app.patch(&format!("/v1/pins/{pin}"), &json!({"metadata": {"title": "first"}})).await.expect(200);
        let first = stream.next_event().await;
        let first_id = first.id.clone().expect("an id");
        assert_eq!(page_since(&app, &pin).await, first_id, "a page resumes where its stream is");
        others_write(2).await;
        assert_eq!(page_since(&app, &pin).await, first_id);
        app.patch(&format!("/v1/pins/{pin}"), &json!({"metadata": {"title": "second"}})).await.expect(200);
        let second = stream.next_event().await;
        let second_id = second.id.clone().expect("an id");
        assert_ne!(first_id, second_id);
        for id in [&drawn, &first_id, &second_id] {
            assert!(id.parse::<i64>().is_err(), "a token, not an event id: {id}");
        }
        // Resuming by the stream's own ids, as a browser sends them, or by the page's query.
        let events = format!("/share/{pin}/events");
        let by_header = share_stream_with(&app, &events, &[("Last-Event-ID", first_id.as_str())]).await;
        let by_query = share_stream_at(&app, &format!("{events}?last_event_id={first_id}")).await;
        for mut resumed in [by_header, by_query] {
            let again = resumed.next_event().await;
            assert_eq!((again.id, again.data), (Some(second_id.clone()), second.data.clone()));
        }
        // Another replica over the same database (or this one restarted) reads the same
        // tokens: the key is the database's.
        let replica = app.replica("").await;
        assert_eq!(page_since(&replica, &pin).await, second_id);
        let mut there = share_stream_with(&replica, &events, &[("Last-Event-ID", first_id.as_str())]).await;
        assert_eq!(there.next_event().await.id, Some(second_id.clone()));
        // Anything else resumes nowhere: `reset` first, then the live events. An event id,
        // garbage, a token changed by a character, another workspace's token.
        let theirs = call(&app, &other, Method::POST, "/v1/pins", Some(&stat_cards("theirs"))).await.expect(200);
        let theirs = theirs.data()["id"].as_str().unwrap().to_owned();
        call(&app, &other, Method::PUT, &format!("/v1/pins/{theirs}/share"), Some(&json!({"is_public": true}))).await.expect(200);
        let their_token = page_since(&app, &theirs).await;
        let mut changed = first_id.clone().into_bytes();
        changed[5] = if changed[5] == b'A' { b'B' } else { b'A' };
        let changed = String::from_utf8(changed).unwrap();
        for last in ["1", "garbage", changed.as_str(), their_token.as_str()] {
            let mut resumed = share_stream_with(&app, &events, &[("Last-Event-ID", last)]).await;
            assert_eq!(resumed.status, 200, "{last}");
            assert_eq!(resumed.next_event().await.event.as_deref(), Some("reset"), "{last}");
        }
    }
}

/// Share streams name their heartbeat (`event: heartbeat`, after the comment), which a
/// page's EventSource can see: how its script tells a live connection from a silent one.
#[tokio::test]
async fn an_idle_share_stream_sends_a_named_heartbeat() {
    for app in each_store("[events]\nheartbeat_secs = 1\n").await {
        let pin = new_pin(&app, "quiet").await;
        app.put(
            &format!("/v1/pins/{pin}/share"),
            &json!({"is_public": true}),
        )
        .await
        .expect(200);
        let mut stream = share_stream(&app, &pin).await;
        let mut comment = None;
        let beat = loop {
            let frame = stream
                .next_frame(Duration::from_secs(5))
                .await
                .expect("a heartbeat within 5 s");
            comment = comment.or(frame.comment.clone());
            if frame.event.is_some() {
                break frame;
            }
        };
        assert_eq!(comment.as_deref(), Some("keep-alive"));
        assert_eq!(beat.event.as_deref(), Some("heartbeat"));
        assert_eq!((beat.id, beat.data), (None, json!({})));
    }
}

#[tokio::test]
async fn each_address_may_hold_only_so_many_share_streams() {
    for app in each_store("[events]\nmax_share_streams_per_address = 1\n").await {
        let pin = new_pin(&app, "shared").await;
        app.put(
            &format!("/v1/pins/{pin}/share"),
            &json!({"is_public": true}),
        )
        .await
        .expect(200);
        let first = share_stream(&app, &pin).await;
        assert_eq!(first.status, 200);
        let second = app
            .send(app.client.get(format!("{}/share/{pin}/events", app.base)))
            .await;
        second.expect_error(429, "RATE_LIMIT_EXCEEDED", None);
    }
}
