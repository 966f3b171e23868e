//! Slow and idle clients can't hold connections (and their file descriptors): a request
//! head must arrive within `http.header_timeout_secs`, an idle keep-alive connection closes
//! after `http.idle_timeout_secs`, a stalled body ends its request with 408. Requests in
//! flight, event streams included, are never cut. Connection handling is the same on both
//! stores, so these run on SQLite.

use std::time::{Duration, Instant};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

use crate::{helpers::*, live::Stream};

const FAST: &str = "[http]\nheader_timeout_secs = 1\nidle_timeout_secs = 2\nbody_stall_secs = 1\n";

async fn connect(app: &TestApp) -> TcpStream {
    TcpStream::connect(app.base.trim_start_matches("http://"))
        .await
        .expect("connect")
}

/// Reads until the server closes the connection or `within` passes; what was read, and
/// whether it closed.
async fn read_until_closed(stream: &mut TcpStream, within: Duration) -> (String, bool) {
    let deadline = tokio::time::Instant::now() + within;
    let mut read = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Ok(Ok(0) | Err(_)) => return (String::from_utf8_lossy(&read).into_owned(), true),
            Ok(Ok(n)) => read.extend_from_slice(&buf[..n]),
            Err(_) => return (String::from_utf8_lossy(&read).into_owned(), false),
        }
    }
}

#[tokio::test]
async fn half_sent_heads_are_cut_while_requests_and_streams_go_on() {
    let app = TestApp::sqlite_with(FAST).await;
    let mut stream = Stream::open(&app, "/v1/events", &app.key, &[]).await;
    assert_eq!(stream.status, 200);
    let mut slow = Vec::new();
    for _ in 0..50 {
        let mut c = connect(&app).await;
        c.write_all(b"GET /v1/pins HTTP/1.1\r\nHost: test\r\nAuthor")
            .await
            .unwrap();
        slow.push(c);
    }
    let started = Instant::now();
    // Meanwhile the service answers as usual, for longer than the header timeout.
    for _ in 0..6 {
        app.get("/v1/pins").await.expect(200);
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    for c in &mut slow {
        let (answer, closed) = read_until_closed(c, Duration::from_secs(3)).await;
        assert!(closed, "a half-sent head was held open");
        assert!(
            answer.is_empty(),
            "no response to a half-sent head: {answer}"
        );
    }
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "closed within the timeout (took {:?})",
        started.elapsed()
    );
    // The event stream, open all along, still delivers.
    let id = app.create_pin(&stat_cards("after")).await["pin_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let event = stream.next_event().await;
    assert_eq!(event.event.as_deref(), Some("pin.created"));
    assert_eq!(event.data["id"], id.as_str());
}

#[tokio::test]
async fn an_idle_keep_alive_connection_is_closed_and_a_busy_one_is_not() {
    let app = TestApp::sqlite_with(FAST).await;
    let request = format!(
        "GET /v1/pins HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {}\r\n\r\n",
        app.key
    );
    // A connection in use stays: a request every second for longer than the idle timeout.
    let mut busy = connect(&app).await;
    let mut buf = vec![0u8; 64 * 1024];
    for i in 0..4 {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(1000)).await;
        }
        busy.write_all(request.as_bytes()).await.unwrap();
        let n = tokio::time::timeout(Duration::from_secs(2), busy.read(&mut buf))
            .await
            .expect("an answer")
            .unwrap();
        assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
    }
    // Left idle, it is closed after the idle timeout (2 s), not before.
    let started = Instant::now();
    let (_, closed) = read_until_closed(&mut busy, Duration::from_secs(5)).await;
    assert!(closed, "an idle keep-alive connection was held open");
    let idle = started.elapsed();
    assert!(
        idle >= Duration::from_millis(1500) && idle < Duration::from_secs(4),
        "closed after the idle timeout, took {idle:?}"
    );
}

#[tokio::test]
async fn a_stalled_body_ends_its_request_with_408_and_stores_nothing() {
    let app = TestApp::sqlite_with(FAST).await;
    let mut c = connect(&app).await;
    let head = format!(
        "POST /v1/pins HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{{",
        app.key
    );
    c.write_all(head.as_bytes()).await.unwrap();
    let started = Instant::now();
    let (answer, closed) = read_until_closed(&mut c, Duration::from_secs(5)).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("\"code\":\"REQUEST_TIMEOUT\""), "{answer}");
    assert!(closed, "the connection of a stalled body is closed");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    let list = app.get("/v1/pins").await.expect(200);
    assert_eq!(
        list.data().as_array().map(Vec::len),
        Some(0),
        "nothing stored"
    );
}
