//! How requests use the database's connections: one per request, never held for a client.

use std::time::Duration;

use serde_json::Value;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

use crate::helpers::*;

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
            let created = app.create_pin(&stat_cards("meanwhile")).await;
            let id = created["pin_id"].as_str().unwrap().to_owned();
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
