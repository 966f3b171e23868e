//! `TestApp`: the real router on 127.0.0.1:0 over a fresh store (a temporary SQLite file, or
//! a new PostgreSQL database on 127.0.0.1:5432), with typed helpers for requests.

use std::{io::Write, path::PathBuf};

use std::sync::Arc;

use corkboard::{
    auth::{self, NewKey, Scopes, Tier},
    clock::ManualClock,
    AppState, Settings,
};
use reqwest::{header::HeaderMap, Method, RequestBuilder};
use serde_json::{json, Value};
use sqlx::{Connection, PgConnection};
use tokio::sync::oneshot;

/// PostgreSQL server the tests create their databases on (override with TEST_PG_URL).
pub fn pg_admin_url() -> String {
    std::env::var("TEST_PG_URL")
        .ok()
        .filter(|url| !url.is_empty())
        .unwrap_or_else(|| "postgres://postgres@127.0.0.1:5432".into())
}

/// Whether the PostgreSQL half runs. On a machine with no server at the default address, and
/// neither `TEST_PG_URL` nor `CI` set, it is left out, said once on stderr; when either is set,
/// an unreachable server fails the tests instead, so CI can never skip it silently.
pub async fn postgres_available() -> bool {
    static CHECKED: tokio::sync::OnceCell<bool> = tokio::sync::OnceCell::const_new();
    *CHECKED
        .get_or_init(|| async {
            let url = format!("{}/postgres", pg_admin_url());
            let connect = PgConnection::connect(&url);
            if let Ok(Ok(conn)) = tokio::time::timeout(std::time::Duration::from_secs(5), connect).await {
                let _ = conn.close().await;
                return true;
            }
            let required = ["TEST_PG_URL", "CI"]
                .iter()
                .any(|name| std::env::var(name).is_ok_and(|v| !v.is_empty()));
            assert!(!required, "PostgreSQL at {} is unreachable (TEST_PG_URL or CI is set)", pg_admin_url());
            // Straight to the process's stderr: the test harness captures `eprintln!`.
            let _ = writeln!(
                std::io::stderr().lock(),
                "\nPostgreSQL is not running on 127.0.0.1:5432: the PostgreSQL half of the tests was \
                 left out. Start PostgreSQL there, or set TEST_PG_URL=postgres://user@host:port, to run it.\n"
            );
            false
        })
        .await
}

/// Ends a PostgreSQL test early when [`postgres_available`] says its half is left out.
#[macro_export]
macro_rules! skip_without_postgres {
    () => {
        if !$crate::helpers::postgres_available().await {
            return;
        }
    };
}

/// Settings of a server without web sign-in: no identity provider (the default) and local
/// accounts off. Sign-in-only pages are then the 404 page to everyone without a credential.
pub const SIGN_IN_OFF: &str = "[auth.local]\nenabled = false\n";

/// Limits high enough that only the rate-limit tests, which set their own, ever meet them.
const GENEROUS_LIMITS: &str = "
[rate_limits.tiers.team]
per_minute = 1000000
per_hour = 1000000
[rate_limits.write_bucket]
capacity = 1000000
[rate_limits.auth_failures]
per_minute = 1000000
[rate_limits.share]
per_minute = 1000000
";

enum Fresh {
    Sqlite(PathBuf),
    Postgres(String),
    /// A replica's: the store belongs to another TestApp.
    Shared,
}

/// A running server over its own store. Dropping it stops the server and removes the store.
pub struct TestApp {
    /// e.g. `http://127.0.0.1:40123`
    pub base: String,
    /// A `*` key of the default workspace.
    pub key: String,
    pub state: AppState,
    /// The rate limiter's clock: `app.clock.advance(60_000)` crosses a minute window.
    pub clock: ManualClock,
    pub client: reqwest::Client,
    fresh: Fresh,
    stop: Option<oneshot::Sender<()>>,
    server: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

/// A response, read whole.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Resp {
    /// `data` of a success envelope.
    pub fn data(&self) -> &Value {
        &self.body["data"]
    }

    /// `error.code` of an error envelope.
    pub fn code(&self) -> &str {
        self.body["error"]["code"].as_str().unwrap_or("")
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts the status and the envelope shape that goes with it, then returns self.
    #[track_caller]
    pub fn expect(self, status: u16) -> Self {
        assert_eq!(
            self.status, status,
            "unexpected status; body: {}",
            self.body
        );
        if status < 400 {
            assert_eq!(self.body["success"], json!(true), "body: {}", self.body);
        } else {
            assert_eq!(self.body["success"], json!(false), "body: {}", self.body);
            assert!(
                self.body["error"]["code"].is_string(),
                "body: {}",
                self.body
            );
            assert!(
                self.body["error"]["message"].is_string(),
                "body: {}",
                self.body
            );
        }
        self
    }

    /// Asserts an error status, code, and (when given) `details.field`.
    #[track_caller]
    pub fn expect_error(self, status: u16, code: &str, field: Option<&str>) -> Self {
        let this = self.expect(status);
        assert_eq!(this.code(), code, "body: {}", this.body);
        if let Some(field) = field {
            assert_eq!(
                this.body["error"]["details"]["field"],
                json!(field),
                "body: {}",
                this.body
            );
        }
        this
    }
}

impl TestApp {
    pub async fn sqlite() -> TestApp {
        let dir = std::env::temp_dir().join(format!("corkboard-test-{}", uuid::Uuid::new_v4()));
        let url = format!("sqlite://{}", dir.join("corkboard.db").display());
        Self::start(&url, Fresh::Sqlite(dir), "").await
    }

    pub async fn postgres() -> TestApp {
        Self::postgres_with("").await
    }

    pub async fn sqlite_with(overrides: &str) -> TestApp {
        let dir = std::env::temp_dir().join(format!("corkboard-test-{}", uuid::Uuid::new_v4()));
        let url = format!("sqlite://{}", dir.join("corkboard.db").display());
        Self::start(&url, Fresh::Sqlite(dir), overrides).await
    }

    pub async fn postgres_with(overrides: &str) -> TestApp {
        let name = format!("corkboard_test_{}", uuid::Uuid::new_v4().simple());
        let mut admin = PgConnection::connect(&format!("{}/postgres", pg_admin_url()))
            .await
            .expect("PostgreSQL on 127.0.0.1:5432 (see README: Running the tests)");
        sqlx::query(&format!("CREATE DATABASE {name}"))
            .execute(&mut admin)
            .await
            .expect("create test database");
        let _ = admin.close().await;
        let url = format!("{}/{name}", pg_admin_url());
        Self::start(&url, Fresh::Postgres(name), overrides).await
    }

    /// Starts a server on `url` with extra settings (TOML) over the defaults.
    async fn start(url: &str, fresh: Fresh, overrides: &str) -> TestApp {
        let clock = ManualClock::new(corkboard::clock::now_ms());
        Self::serve_store(url, fresh, overrides, clock, true).await
    }

    /// A server over the PostgreSQL database at `url`, which the caller owns (it stays).
    pub async fn on_database(url: &str, overrides: &str) -> TestApp {
        let clock = ManualClock::new(corkboard::clock::now_ms());
        Self::serve_store(url, Fresh::Shared, overrides, clock, true).await
    }

    /// Another server ("replica") over this app's store, with its own process state (pool,
    /// limiter, guard) and the same clock. Dropping it leaves the store in place.
    pub async fn replica(&self, overrides: &str) -> TestApp {
        let url = self.state.settings.database_url.clone();
        Self::serve_store(&url, Fresh::Shared, overrides, self.clock.clone(), false).await
    }

    async fn serve_store(
        url: &str,
        fresh: Fresh,
        overrides: &str,
        clock: ManualClock,
        with_key: bool,
    ) -> TestApp {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let store = format!("database_url = \"{url}\"\nlisten = \"{addr}\"\nmax_connections = 4\n");
        let settings =
            Settings::with_overrides(&[&store, GENEROUS_LIMITS, overrides]).expect("settings");
        let state = AppState::connect(settings)
            .await
            .expect("open store")
            .with_clock(Arc::new(clock.clone()));
        let key = if with_key {
            Self::make_key(&state, "default", "*", Tier::Team).await
        } else {
            String::new()
        };
        let (stop, stopped) = oneshot::channel::<()>();
        let server = tokio::spawn(corkboard::serve(listener, state.clone(), async {
            let _ = stopped.await;
        }));
        TestApp {
            base: format!("http://{addr}"),
            key,
            state,
            clock,
            client: reqwest::Client::new(),
            fresh,
            stop: Some(stop),
            server: Some(server),
        }
    }

    async fn make_key(state: &AppState, workspace: &str, scopes: &str, tier: Tier) -> String {
        let key = auth::create_key(
            &state.store,
            NewKey {
                workspace: workspace.into(),
                name: "test".into(),
                scopes: Scopes::parse_list(scopes).expect("scopes"),
                tier,
            },
        )
        .await
        .expect("create key");
        key.secret.expose().to_owned()
    }

    /// A new key of the default workspace with these comma-separated scopes.
    pub async fn key_with(&self, scopes: &str) -> String {
        Self::make_key(&self.state, "default", scopes, Tier::Team).await
    }

    /// A new `*` key of the default workspace with this rate-limit tier.
    pub async fn key_of_tier(&self, tier: Tier) -> String {
        Self::make_key(&self.state, "default", "*", tier).await
    }

    /// A new key of `workspace` (created when new).
    pub async fn key_in(&self, workspace: &str, scopes: &str) -> String {
        Self::make_key(&self.state, workspace, scopes, Tier::Team).await
    }

    /// A request to `path` (e.g. `/v1/pins`) authenticated with the `*` key.
    pub fn req(&self, method: Method, path: &str) -> RequestBuilder {
        self.client
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.key)
    }

    /// Sends and reads the whole response (the body parsed as JSON; `null` if it isn't).
    pub async fn send(&self, req: RequestBuilder) -> Resp {
        let res = req.send().await.expect("request");
        let status = res.status().as_u16();
        let headers = res.headers().clone();
        let bytes = res.bytes().await.expect("body");
        let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        Resp {
            status,
            headers,
            body,
        }
    }

    pub async fn get(&self, path: &str) -> Resp {
        self.send(self.req(Method::GET, path)).await
    }

    pub async fn post(&self, path: &str, body: &Value) -> Resp {
        self.send(self.req(Method::POST, path).json(body)).await
    }

    pub async fn put(&self, path: &str, body: &Value) -> Resp {
        self.send(self.req(Method::PUT, path).json(body)).await
    }

    pub async fn patch(&self, path: &str, body: &Value) -> Resp {
        self.send(self.req(Method::PATCH, path).json(body)).await
    }

    pub async fn delete(&self, path: &str) -> Resp {
        self.send(self.req(Method::DELETE, path)).await
    }

    /// Runs SQL on the store from outside the server (`sqlite` or `postgres`, whichever this
    /// app's store is): for tests that make the database itself misbehave.
    pub async fn execute_sql(&self, sqlite: &str, postgres: &str) {
        let url = &self.state.settings.database_url;
        if url.starts_with("sqlite:") {
            let mut conn = sqlx::SqliteConnection::connect(url)
                .await
                .expect("open SQLite");
            sqlx::raw_sql(sqlite)
                .execute(&mut conn)
                .await
                .expect("run SQL");
            let _ = conn.close().await;
        } else {
            let mut conn = PgConnection::connect(url).await.expect("connect");
            sqlx::raw_sql(postgres)
                .execute(&mut conn)
                .await
                .expect("run SQL");
            let _ = conn.close().await;
        }
    }

    /// Stops the server as a signal would and waits for `serve` to return: in-flight requests
    /// finished, the store closed.
    pub async fn shut_down(mut self) -> std::io::Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let server = self.server.take().expect("server running");
        server.await.expect("server task")
    }

    /// Creates a pin (asserting 200) and returns the create response's `data`.
    pub async fn create_pin(&self, body: &Value) -> Value {
        self.post("/v1/pins", body).await.expect(200).data().clone()
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(server) = self.server.take() {
            server.abort();
        }
        match &self.fresh {
            Fresh::Shared => {}
            Fresh::Sqlite(dir) => {
                let _ = std::fs::remove_dir_all(dir);
            }
            Fresh::Postgres(name) => drop_database(name.clone()),
        }
    }
}

/// Sends `method path` (with `body` as JSON when given) authenticated by `key`.
pub async fn call(
    app: &TestApp,
    key: &str,
    method: Method,
    path: &str,
    body: Option<&Value>,
) -> Resp {
    let mut req = app
        .client
        .request(method, format!("{}{path}", app.base))
        .bearer_auth(key);
    if let Some(body) = body {
        req = req.json(body);
    }
    app.send(req).await
}

/// A valid stat-cards create body (shape A).
pub fn stat_cards(title: &str) -> Value {
    json!({
        "pin_type": "stat-cards",
        "pin_config": {"cards": [{"title": "Revenue", "value": "$1.2M", "change": "+4%", "trend": "up"}]},
        "metadata": {"title": title, "tags": ["kpi"]}
    })
}

/// A valid flexible-table configuration.
pub fn table_config() -> Value {
    json!({
        "columns": [{"id": "name", "name": "Name", "type": "text"}, {"id": "n", "name": "N", "type": "number"}],
        "rows": [{"id": "r1", "cells": {"name": "a", "n": 1}}]
    })
}

/// Defines `mod $name { sqlite(), postgres() }`: one scenario, both stores; with
/// `with CONFIG;` first, on servers with those settings (TOML) over the tests' own.
#[macro_export]
macro_rules! both_stores {
    (with $config:expr; $(async fn $name:ident($app:ident) $body:block)*) => {$(
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            #[tokio::test]
            async fn sqlite() {
                let $app = $crate::helpers::TestApp::sqlite_with($config).await;
                $body
            }
            #[tokio::test]
            async fn postgres() {
                $crate::skip_without_postgres!();
                let $app = $crate::helpers::TestApp::postgres_with($config).await;
                $body
            }
        }
    )*};
    ($(async fn $name:ident($app:ident) $body:block)*) => {$(
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            #[tokio::test]
            async fn sqlite() {
                let $app = $crate::helpers::TestApp::sqlite().await;
                $body
            }
            #[tokio::test]
            async fn postgres() {
                $crate::skip_without_postgres!();
                let $app = $crate::helpers::TestApp::postgres().await;
                $body
            }
        }
    )*};
}

/// Drops a test database. Drop can't await, so this runs on a thread with its own runtime.
pub fn drop_database(name: String) {
    let _ = std::thread::spawn(move || {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return;
        };
        rt.block_on(async {
            if let Ok(mut admin) =
                PgConnection::connect(&format!("{}/postgres", pg_admin_url())).await
            {
                let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                    .execute(&mut admin)
                    .await;
            }
        });
    })
    .join();
}

/// `body` with a top-level pin `key`.
pub fn with_key(mut body: Value, key: &str) -> Value {
    body["key"] = json!(key);
    body
}

/// `GET /v1/pins?key=..&key=..` (asserting 200): the pins holding these keys.
pub async fn pins_with_keys(app: &TestApp, keys: &[&str]) -> Vec<Value> {
    let query: Vec<(&str, &str)> = keys.iter().map(|k| ("key", *k)).collect();
    let res = app
        .send(app.req(Method::GET, "/v1/pins").query(&query))
        .await
        .expect(200);
    res.data()
        .as_array()
        .unwrap_or_else(|| panic!("no array: {}", res.body))
        .clone()
}

/// The default workspace's event stream, read with the `*` key (asserting 200).
pub async fn event_stream(app: &TestApp) -> crate::live::Stream {
    let stream = crate::live::Stream::open(app, "/v1/events", &app.key, &[]).await;
    assert_eq!(stream.status, 200);
    stream
}

/// Asserts that nothing was published on `stream` since it was last read: a marker pin is
/// created, and its `pin.created` must be the stream's next event. The marker stays.
pub async fn assert_no_event(app: &TestApp, stream: &mut crate::live::Stream) {
    let marker = app.create_pin(&stat_cards("marker")).await;
    let next = stream.next_event().await;
    assert_eq!(next.event.as_deref(), Some("pin.created"), "{next:?}");
    assert_eq!(next.data["id"], marker["pin_id"], "{next:?}");
}
