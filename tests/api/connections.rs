//! How requests use the database's connections: one per request, never held for a client.

use std::time::Duration;

use serde_json::Value;
use sqlx::Connection;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

use crate::{both_stores, helpers::*, live::each_store, pinboards::new_pin};

macro_rules! one_connection {
    ($(async fn $name:ident($app:ident) $body:block)*) => {$(
        mod $name {
            use super::*;
            #[tokio::test]
            async fn sqlite() {
                let $app = TestApp::sqlite_with("max_connections = 1").await;
                $body
            }
            #[tokio::test]
            async fn postgres() {
                $crate::skip_without_postgres!();
                let $app = TestApp::postgres_with("max_connections = 1").await;
                $body
            }
        }
    )*};
}

one_connection! {
    // With a pool of one, a client that is slow to send its body must not keep everyone
    // else waiting for the database: its request gives the connection back while it waits.
    async fn a_slow_body_does_not_hold_the_database(app) {
        let body = serde_json::to_string(&stat_cards("slow")).unwrap();
        let (head, tail) = body.split_at(body.len() / 2);
        let mut slow = TcpStream::connect(app.base.trim_start_matches("http://"))
            .await
            .unwrap();
        let request = format!(
            "POST /v1/pins HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{head}",
            app.key,
            body.len()
        );
        slow.write_all(request.as_bytes()).await.unwrap();
        // Long enough for the server to authenticate the slow request and wait on its body.
        tokio::time::sleep(Duration::from_millis(300)).await;

        let others = async {
            let id = new_pin(&app, "meanwhile").await;
            app.get(&format!("/v1/pins/{id}")).await.expect(200);
        };
        // The pool's acquire timeout is 5 s: a held connection would fail this.
        tokio::time::timeout(Duration::from_secs(3), others)
            .await
            .expect("requests answered while another client was slow to send its body");

        slow.write_all(tail.as_bytes()).await.unwrap();
        let mut answer = String::new();
        slow.read_to_string(&mut answer).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        let list = app.get("/v1/pins").await.expect(200);
        let titles: Vec<&Value> = list.data().as_array().unwrap().iter().map(|p| &p["metadata"]["title"]).collect();
        assert_eq!(titles, ["slow", "meanwhile"], "both pins stored, newest first");
    }
}

/// PostgreSQL ends the server's connections (a restart, a failover, an operator): each
/// broken connection fails at most one request with a 503, and is then replaced rather than
/// handed to the next request. That includes the group-commit loop's own connection, which
/// the first create opened: creates fail at most once and then are stored again.
#[tokio::test]
async fn requests_recover_when_postgres_drops_the_connections() {
    crate::skip_without_postgres!();
    let app = TestApp::postgres().await;
    let id = new_pin(&app, "before").await;
    let path = format!("/v1/pins/{id}");
    let warm_up = (0..8).map(|_| app.get(&path));
    for answer in futures::future::join_all(warm_up).await {
        answer.expect(200);
    }

    let db = app
        .state
        .settings
        .database_url
        .rsplit('/')
        .next()
        .unwrap()
        .to_owned();
    let mut admin = sqlx::PgConnection::connect(&format!("{}/postgres", pg_admin_url()))
        .await
        .unwrap();
    let ended: Vec<bool> = sqlx::query_scalar(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'corkboard'",
    )
    .bind(&db)
    .fetch_all(&mut admin)
    .await
    .unwrap();
    assert!(!ended.is_empty(), "the server had connections to end");

    let mut failed = 0;
    for i in 0..20 {
        let answer = if i % 2 == 0 {
            app.get(&path).await
        } else {
            app.post("/v1/pins", &stat_cards("after")).await
        };
        match answer.status {
            200 => {}
            503 => {
                assert_eq!(answer.code(), "SERVICE_UNAVAILABLE");
                failed += 1;
            }
            other => panic!("unexpected {other}: {:?}", answer.body),
        }
    }
    assert!(
        failed <= ended.len(),
        "{failed} failures for {} ended connections",
        ended.len()
    );
    for _ in 0..10 {
        app.get(&path).await.expect(200);
        new_pin(&app, "later").await;
    }
}

both_stores! {
    // Shutting down closes the store, which waits for every connection to come back: the
    // ones the last requests left warm included.
    async fn shutting_down_returns_every_connection(app) {
        let path = format!("/v1/pins/{}", new_pin(&app, "before shutdown").await);
        // More at once than the pool has connections (4): the last ones to finish stay warm.
        let reads = (0..8).map(|_| app.get(&path));
        for answer in futures::future::join_all(reads).await {
            answer.expect(200);
        }
        // Alone: nothing waits for the pool, so its connection surely stays warm.
        app.get(&path).await.expect(200);
        // Something else still holding the store (as the rate limiter holds the connections)
        // must not keep the warm connections from coming back.
        let still_held = app.state.store.clone();
        tokio::time::timeout(Duration::from_secs(10), app.shut_down())
            .await
            .expect("serve returned, the store closed")
            .expect("served without error");
        drop(still_held);
    }
}

/// A request that fails inside a transaction (a batch update whose second item is bad, after
/// both rows were locked) leaves no lock behind on the connection it finished with: another
/// client can update the row at once.
#[tokio::test]
async fn a_failed_transaction_leaves_no_locks() {
    crate::skip_without_postgres!();
    let app = TestApp::postgres().await;
    let pin = new_pin(&app, "locked?").await;
    app.get(&format!("/v1/pins/{pin}")).await.expect(200);
    let body = serde_json::json!({"pins": [
        {"id": pin, "metadata": {"title": "changed"}},
        {"id": "p-doesnotexist0000000000", "metadata": {"title": "x"}}
    ]});
    app.post("/v1/pins/batch/update", &body).await.expect(404);

    let mut other = sqlx::PgConnection::connect(&app.state.settings.database_url)
        .await
        .unwrap();
    sqlx::query("SET lock_timeout = '2s'")
        .execute(&mut other)
        .await
        .unwrap();
    let updated = sqlx::query("UPDATE pins SET title = 'elsewhere' WHERE id = $1")
        .bind(&pin)
        .execute(&mut other)
        .await
        .expect("the row is not locked by the failed request");
    assert_eq!(updated.rows_affected(), 1);
}

/// Five connections from one address, idle ones included: a sixth is closed before a byte is
/// read, and closing one frees its place.
#[tokio::test]
async fn each_address_may_hold_only_so_many_connections() {
    for app in each_store("[http]\nmax_connections_per_address = 5\n").await {
        let addr = app.base.trim_start_matches("http://").to_owned();
        let mut held = Vec::new();
        for _ in 0..5 {
            held.push(TcpStream::connect(&addr).await.unwrap());
        }
        // The held ones are accepted before the sixth: each answers a request.
        for conn in &mut held {
            assert!(health(conn, true).await.starts_with("HTTP/1.1 200"));
        }
        let mut sixth = TcpStream::connect(&addr).await.unwrap();
        let mut byte = [0u8; 1];
        let closed = tokio::time::timeout(Duration::from_secs(5), sixth.read(&mut byte))
            .await
            .expect("closed at once, not left waiting");
        assert!(
            matches!(closed, Ok(0) | Err(_)),
            "the sixth is closed: {closed:?}"
        );

        held.pop();
        let mut answered = String::new();
        for _ in 0..50 {
            let mut again = TcpStream::connect(&addr).await.unwrap();
            answered = health(&mut again, false).await;
            if answered.starts_with("HTTP/1.1 200") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(
            answered.starts_with("HTTP/1.1 200"),
            "a closed connection frees its place: {answered:?}"
        );
    }
}

/// Behind a proxy every connection comes from the proxy: requests in flight (an event stream
/// until it ends) count against the address the header names, 429 beyond.
#[tokio::test]
async fn behind_a_proxy_each_named_address_may_hold_only_so_many_requests() {
    let config = "[http]\nmax_connections_per_address = 2\n[events]\nheartbeat_secs = 1\n\
                  [rate_limits.auth_failures]\nclient_ip_header = \"x-forwarded-for\"\n";
    for app in each_store(config).await {
        let stream = |from: &'static str| {
            app.client
                .get(format!("{}/v1/events", app.base))
                .bearer_auth(&app.key)
                .header("x-forwarded-for", from)
                .send()
        };
        let first = stream("203.0.113.7").await.unwrap();
        let _second = stream("203.0.113.7").await.unwrap();
        assert_eq!(first.status(), 200);
        let third = stream("203.0.113.7").await.unwrap();
        assert_eq!(
            third.status(),
            429,
            "a third request in flight from the address"
        );
        assert_eq!(third.headers()["retry-after"], "1");
        let body: Value = third.json().await.unwrap();
        assert_eq!(body["error"]["code"], "RATE_LIMIT_EXCEEDED");
        assert_eq!(
            body["error"]["details"],
            serde_json::json!({"limit": 2, "window": "connections", "per": "address"})
        );
        // The proxy's own address (the TCP peer of all of them) isn't what is capped.
        for other in ["203.0.113.8", "203.0.113.9"] {
            assert_eq!(stream(other).await.unwrap().status(), 200);
        }

        drop(first);
        // The server notices the closed stream at its next write (a heartbeat at most).
        let mut status = 0;
        for _ in 0..50 {
            let again = app
                .client
                .get(format!("{}/healthz", app.base))
                .header("x-forwarded-for", "203.0.113.7")
                .send()
                .await
                .unwrap();
            status = again.status().as_u16();
            if status == 200 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        assert_eq!(status, 200, "a closed stream frees its place");
    }
}

/// `GET /healthz` on `conn`, kept alive or not; the answer's head.
async fn health(conn: &mut TcpStream, keep_alive: bool) -> String {
    let connection = if keep_alive { "keep-alive" } else { "close" };
    let request =
        format!("GET /healthz HTTP/1.1\r\nHost: test\r\nConnection: {connection}\r\n\r\n");
    if conn.write_all(request.as_bytes()).await.is_err() {
        return String::new();
    }
    let mut buf = vec![0u8; 4096];
    match tokio::time::timeout(Duration::from_secs(5), conn.read(&mut buf)).await {
        Ok(Ok(n)) => String::from_utf8_lossy(&buf[..n]).into_owned(),
        _ => String::new(),
    }
}
