//! The real `corkboard` binary: `keys create|list|revoke`, `config`, and `serve` (first-start
//! key, HTTP with that key, keys made and revoked by the CLI while it runs, SIGTERM).
//! Each test gets a fresh data directory (SQLite) or a fresh PostgreSQL database.

use std::{
    path::PathBuf,
    process::{Output, Stdio},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use serde_json::{json, Value};
use sqlx::{Connection, PgConnection};
use tokio::{
    io::{AsyncBufReadExt, BufReader},
    process::{Child, Command},
};

use crate::helpers::{drop_database, pg_admin_url, stat_cards};

/// A fresh store for the binary: a new data directory, and for PostgreSQL a new database.
pub(crate) struct Store {
    dir: PathBuf,
    pg_database: Option<String>,
}

impl Store {
    pub(crate) fn sqlite() -> Store {
        let dir = std::env::temp_dir().join(format!("corkboard-cli-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        Store {
            dir,
            pg_database: None,
        }
    }

    pub(crate) async fn postgres() -> Store {
        let name = format!("corkboard_cli_{}", uuid::Uuid::new_v4().simple());
        let mut admin = PgConnection::connect(&format!("{}/postgres", pg_admin_url()))
            .await
            .expect("PostgreSQL on 127.0.0.1:5432");
        sqlx::query(&format!("CREATE DATABASE {name}"))
            .execute(&mut admin)
            .await
            .expect("create database");
        let _ = admin.close().await;
        let mut store = Store::sqlite();
        store.pg_database = Some(name);
        store
    }

    /// `CORKBOARD_DATA_DIR` (not created in advance: the binary makes it).
    fn data_dir(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// The binary with a clean environment pointing at this store.
    pub(crate) fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_corkboard"));
        cmd.args(args)
            .env_clear()
            .env("CORKBOARD_DATA_DIR", self.data_dir())
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .kill_on_drop(true);
        if let Some(db) = &self.pg_database {
            cmd.env("DATABASE_URL", format!("{}/{db}", pg_admin_url()));
        }
        cmd
    }

    /// Runs a command to completion (bounded), capturing its output.
    async fn run(&self, args: &[&str]) -> Output {
        let output = self.command(args).output();
        tokio::time::timeout(Duration::from_secs(60), output)
            .await
            .unwrap_or_else(|_| panic!("corkboard {args:?} did not finish"))
            .expect("run corkboard")
    }

    /// Runs a command that must succeed; returns its stdout.
    pub(crate) async fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args).await;
        assert!(
            out.status.success(),
            "corkboard {args:?} failed: {}",
            describe(&out)
        );
        String::from_utf8(out.stdout).expect("UTF-8 stdout")
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
        let Some(name) = self.pg_database.take() else {
            return;
        };
        drop_database(name);
    }
}

fn describe(out: &Output) -> String {
    format!(
        "status {:?}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A port nobody listens on right now.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

/// The line of `keys list` that shows the key named `name`.
fn list_line<'a>(list: &'a str, name: &str) -> &'a str {
    list.lines()
        .find(|line| line.split_whitespace().nth(1) == Some(name))
        .unwrap_or_else(|| panic!("no key named {name} in:\n{list}"))
}

/// The id (first column) of the key named `name` in `keys list`.
fn key_id(list: &str, name: &str) -> String {
    let id = list_line(list, name).split_whitespace().next().unwrap();
    assert!(id.starts_with("key-"), "id {id}");
    id.to_owned()
}

/// Asserts `stdout` is one line holding one well-formed key, and returns it.
#[track_caller]
fn the_key(stdout: &str) -> String {
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "stdout: {stdout:?}");
    assert!(stdout.ends_with('\n'), "stdout: {stdout:?}");
    let key = lines[0];
    assert!(key.starts_with("cbk_"), "stdout: {stdout:?}");
    let random = &key[4..];
    // At least 128 random bits, URL-safe.
    assert!(random.len() >= 22, "key too short: {key}");
    assert!(
        random
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
        "{key}"
    );
    key.to_owned()
}

/// A running `corkboard serve`, its stdout collected line by line.
pub(crate) struct Server {
    child: Child,
    pub(crate) base: String,
    stdout: Arc<Mutex<Vec<String>>>,
    reader: tokio::task::JoinHandle<()>,
    stderr: PathBuf,
}

impl Server {
    pub(crate) async fn start(store: &Store) -> Server {
        let port = free_port();
        let stderr = store
            .dir
            .join(format!("serve-{}.log", uuid::Uuid::new_v4().simple()));
        let log = std::fs::File::create(&stderr).expect("log file");
        let mut child = store
            .command(&["serve"])
            .env("CORKBOARD_LISTEN", format!("127.0.0.1:{port}"))
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log))
            .spawn()
            .expect("spawn corkboard serve");
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let sink = stdout.clone();
        let reader = tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                sink.lock().unwrap().push(line);
            }
        });
        let mut server = Server {
            child,
            base: format!("http://127.0.0.1:{port}"),
            stdout,
            reader,
            stderr,
        };
        server.wait_ready().await;
        server
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    async fn wait_ready(&mut self) {
        let client = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("serve exited early ({status}): {}", self.log());
            }
            if let Ok(res) = client.get(format!("{}/readyz", self.base)).send().await {
                if res.status().as_u16() == 200 {
                    return;
                }
            }
            assert!(Instant::now() < deadline, "serve not ready: {}", self.log());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Lines printed so far that are a key alone (the first-start key).
    fn printed_keys(&self) -> Vec<String> {
        self.stdout
            .lock()
            .unwrap()
            .iter()
            .map(|l| l.trim())
            .filter(|l| l.starts_with("cbk_"))
            .map(str::to_owned)
            .collect()
    }

    /// Waits for a printed line that `pick` accepts, and returns it trimmed.
    pub(crate) async fn printed(&self, what: &str, pick: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let found = self
                .stdout
                .lock()
                .unwrap()
                .iter()
                .map(|l| l.trim())
                .find(|l| pick(l))
                .map(str::to_owned);
            if let Some(line) = found {
                return line;
            }
            assert!(
                Instant::now() < deadline,
                "no {what} printed; stdout: {:?}",
                self.stdout.lock().unwrap()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits for the first-start key on stdout.
    async fn first_key(&self) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let keys = self.printed_keys();
            if let Some(key) = keys.first() {
                assert_eq!(keys.len(), 1, "{keys:?}");
                return key.clone();
            }
            assert!(
                Instant::now() < deadline,
                "no key printed; stdout: {:?}",
                self.stdout.lock().unwrap()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// SIGTERM; asserts a clean exit within a few seconds and returns all of stdout.
    pub(crate) async fn stop(mut self) -> Vec<String> {
        let pid = self.child.id().expect("running");
        let status = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .expect("kill");
        assert!(status.success());
        let exit = tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await;
        let exit = match exit {
            Ok(exit) => exit.expect("wait"),
            Err(_) => panic!("serve still running 10 s after SIGTERM: {}", self.log()),
        };
        assert!(
            exit.success(),
            "serve exited with {exit} after SIGTERM: {}",
            self.log()
        );
        let _ = tokio::time::timeout(Duration::from_secs(5), &mut self.reader).await;
        let lines = self.stdout.lock().unwrap().clone();
        lines
    }
}

async fn keys_lifecycle(store: Store) {
    let stdout = store
        .ok(&[
            "keys",
            "create",
            "--name",
            "ci",
            "--scopes",
            "pins:read,pins:write",
            "--tier",
            "team",
        ])
        .await;
    let secret = the_key(&stdout);
    let other = the_key(
        &store
            .ok(&[
                "keys",
                "create",
                "--name",
                "other",
                "--scopes",
                "*",
                "--workspace",
                "team-x",
            ])
            .await,
    );
    assert_ne!(secret, other);

    let list = store.ok(&["keys", "list"]).await;
    assert!(!list.contains(&secret[4..]), "secret shown by keys list");
    assert!(!list.contains(&other[4..]), "secret shown by keys list");
    let line = list_line(&list, "ci");
    for shown in ["team", "pins:read,pins:write", "default", "active"] {
        assert!(line.contains(shown), "{shown} missing from {line:?}");
    }
    let other_line = list_line(&list, "other");
    assert!(other_line.contains("team-x"), "{other_line:?}");
    let id = key_id(&list, "ci");
    let other_id = key_id(&list, "other");
    assert_ne!(id, other_id);

    let revoked = store.run(&["keys", "revoke", &id]).await;
    assert!(revoked.status.success(), "{}", describe(&revoked));
    assert!(
        !String::from_utf8_lossy(&revoked.stdout).contains("cbk_"),
        "{}",
        describe(&revoked)
    );
    let again = store.run(&["keys", "revoke", &id]).await;
    assert!(
        !again.status.success(),
        "second revoke: {}",
        describe(&again)
    );
    let unknown = store.run(&["keys", "revoke", "key-doesnotexist"]).await;
    assert!(!unknown.status.success(), "{}", describe(&unknown));

    let list = store.ok(&["keys", "list"]).await;
    assert!(list_line(&list, "ci").contains("revoked"), "{list}");
    assert!(list_line(&list, "other").contains("active"), "{list}");
}

async fn refused_key_requests(store: Store) {
    let cases: [&[&str]; 5] = [
        &["keys", "create", "--name", "x", "--scopes", "pins:raed"],
        &[
            "keys",
            "create",
            "--name",
            "x",
            "--scopes",
            "pins:read,admin",
        ],
        &["keys", "create", "--name", "x", "--scopes", ""],
        &[
            "keys", "create", "--name", "x", "--scopes", "*", "--tier", "gold",
        ],
        &[
            "keys",
            "create",
            "--name",
            "x",
            "--scopes",
            "*",
            "--workspace",
            "Not_A_Name",
        ],
    ];
    for args in cases {
        let out = store.run(args).await;
        assert!(!out.status.success(), "{args:?}: {}", describe(&out));
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("cbk_"),
            "{args:?}: {}",
            describe(&out)
        );
        assert!(!out.stderr.is_empty(), "{args:?}: no explanation");
    }
    let out = store
        .run(&["keys", "create", "--name", "x", "--scopes", "pins:raed"])
        .await;
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("pins:raed"),
        "the unknown scope is named: {}",
        describe(&out)
    );
    // None of them made a key.
    let list = store.ok(&["keys", "list"]).await;
    assert!(!list.contains("key-"), "{list}");
}

async fn serve_scenario(store: Store) {
    let server = Server::start(&store).await;
    let key = server.first_key().await;
    assert!(key.starts_with("cbk_") && key.len() >= 26, "{key}");
    let client = reqwest::Client::new();

    // The printed key works over HTTP: create a pin and read it back.
    let res = client
        .post(format!("{}/v1/pins", server.base))
        .bearer_auth(&key)
        .json(&stat_cards("from serve"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    let created: Value = res.json().await.unwrap();
    let id = created["data"]["pin_id"].as_str().unwrap().to_owned();
    let res = client
        .get(format!("{}/v1/pins/{id}", server.base))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    let read: Value = res.json().await.unwrap();
    assert_eq!(read["data"]["metadata"]["title"], json!("from serve"));
    assert_eq!(read["data"]["pin_config"], stat_cards("x")["pin_config"]);

    // A key made by the CLI while the server runs counts at once, with its scopes...
    let reader = the_key(
        &store
            .ok(&[
                "keys",
                "create",
                "--name",
                "reader",
                "--scopes",
                "pins:read",
            ])
            .await,
    );
    let res = client
        .get(format!("{}/v1/pins/{id}", server.base))
        .bearer_auth(&reader)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    let res = client
        .post(format!("{}/v1/pins", server.base))
        .bearer_auth(&reader)
        .json(&stat_cards("nope"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 403);
    let denied: Value = res.json().await.unwrap();
    assert_eq!(denied["error"]["code"], json!("SCOPE_REQUIRED"));
    // ...and so does its revocation.
    let list = store.ok(&["keys", "list"]).await;
    assert!(!list.contains(&key[4..]) && !list.contains(&reader[4..]));
    store
        .ok(&["keys", "revoke", &key_id(&list, "reader")])
        .await;
    let res = client
        .get(format!("{}/v1/pins/{id}", server.base))
        .bearer_auth(&reader)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 401);

    let stdout = server.stop().await;
    let printed: Vec<&String> = stdout.iter().filter(|l| l.trim() == key).collect();
    assert_eq!(printed.len(), 1, "{stdout:?}");
    assert!(!stdout.iter().any(|l| l.contains(&reader)), "{stdout:?}");

    // A second start on the same store prints no key; the first key and the pin remain.
    let again = Server::start(&store).await;
    let res = client
        .get(format!("{}/v1/pins/{id}", again.base))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    let stdout = again.stop().await;
    assert!(!stdout.iter().any(|l| l.contains("cbk_")), "{stdout:?}");
}

/// What a new user sees in the log (CONTRACT.md 18): a healthy start and its probes say
/// nothing above INFO, the probes (health, readiness, metrics) nothing at all at the default
/// level, and a request's latency reads as milliseconds with at most 3 decimals.
async fn quiet_log_scenario(store: Store) {
    let server = Server::start(&store).await;
    let key = server.first_key().await;
    let client = reqwest::Client::new();
    for path in ["/healthz", "/readyz", "/metrics", "/healthz"] {
        let res = client
            .get(format!("{}{path}", server.base))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status().as_u16(), 200, "{path}");
    }
    let res = client
        .get(format!("{}/v1/pins", server.base))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    let log = server.log();
    server.stop().await;
    for line in log.lines() {
        assert!(
            !line.contains("ERROR") && !line.contains("WARN"),
            "{line}\n{log}"
        );
        for probe in ["healthz", "readyz", "metrics"] {
            assert!(
                !line.contains(probe),
                "a probe logged at the default level: {line}"
            );
        }
    }
    let latencies: Vec<&str> = log
        .lines()
        .filter_map(|l| l.split("latency_ms").nth(1))
        .map(|rest| {
            rest.trim_start_matches(|c: char| !c.is_ascii_digit())
                .split(|c: char| !(c.is_ascii_digit() || c == '.'))
                .next()
                .unwrap_or("")
        })
        .collect();
    assert_eq!(
        latencies.len(),
        1,
        "one response line, the request's: {log}"
    );
    for latency in latencies {
        let decimals = latency.split_once('.').map_or(0, |(_, d)| d.len());
        assert!(decimals <= 3, "latency_ms={latency}");
    }
}

#[tokio::test]
async fn a_healthy_start_logs_quietly_sqlite() {
    quiet_log_scenario(Store::sqlite()).await;
}

#[tokio::test]
async fn a_healthy_start_logs_quietly_postgres() {
    crate::skip_without_postgres!();
    quiet_log_scenario(Store::postgres().await).await;
}

#[tokio::test]
async fn keys_create_list_revoke_sqlite() {
    keys_lifecycle(Store::sqlite()).await;
}

#[tokio::test]
async fn keys_create_list_revoke_postgres() {
    crate::skip_without_postgres!();
    keys_lifecycle(Store::postgres().await).await;
}

#[tokio::test]
async fn keys_create_refuses_bad_input_sqlite() {
    refused_key_requests(Store::sqlite()).await;
}

#[tokio::test]
async fn keys_create_refuses_bad_input_postgres() {
    crate::skip_without_postgres!();
    refused_key_requests(Store::postgres().await).await;
}

#[tokio::test]
async fn serve_prints_first_key_once_and_stops_on_sigterm_sqlite() {
    serve_scenario(Store::sqlite()).await;
}

#[tokio::test]
async fn serve_prints_first_key_once_and_stops_on_sigterm_postgres() {
    crate::skip_without_postgres!();
    serve_scenario(Store::postgres().await).await;
}

#[tokio::test]
async fn config_prints_json_with_password_redacted() {
    let store = Store::sqlite();
    let out = store
        .command(&["config"])
        .env("DATABASE_URL", "postgres://u:hunter2@127.0.0.1:1/x")
        .env("CORKBOARD_LISTEN", "127.0.0.1:9999")
        .env("CORKBOARD_AUTH__JWT__HS256_SECRET", "jwt-signing-material")
        .output()
        .await
        .expect("run corkboard config");
    assert!(out.status.success(), "{}", describe(&out));
    let stdout = String::from_utf8(out.stdout.clone()).unwrap();
    assert!(!stdout.contains("hunter2"), "password shown: {stdout}");
    assert!(
        !stdout.contains("jwt-signing-material"),
        "secret shown: {stdout}"
    );
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("hunter2"),
        "{}",
        describe(&out)
    );
    let config: Value = serde_json::from_str(&stdout).expect("JSON");
    let url = config["database_url"].as_str().expect("database_url");
    assert!(url.starts_with("postgres://u:"), "{url}");
    assert!(url.contains("@127.0.0.1:1/x"), "{url}");
    assert_eq!(config["listen"], json!("127.0.0.1:9999"));
    assert_eq!(
        config["data_dir"],
        json!(store.data_dir().display().to_string())
    );
}

/// Two `corkboard serve` processes over one PostgreSQL database, with the default limits:
/// a professional key's minute limit (60) is shared, whichever process answers. Windows start
/// at a key's first request, so the 61 requests fall in one window however the clock runs.
#[tokio::test]
async fn two_server_processes_share_one_keys_limits() {
    crate::skip_without_postgres!();
    let store = Store::postgres().await;
    let one = Server::start(&store).await;
    let two = Server::start(&store).await;
    let key = the_key(
        &store
            .ok(&[
                "keys",
                "create",
                "--name",
                "shared",
                "--scopes",
                "pins:read",
                "--tier",
                "professional",
            ])
            .await,
    );
    let client = reqwest::Client::new();
    let get = |base: &str| {
        client
            .get(format!("{base}/v1/pins"))
            .bearer_auth(&key)
            .send()
    };
    for i in 0..60 {
        let server = if i % 2 == 0 { &one } else { &two };
        let res = get(&server.base).await.expect("request");
        assert_eq!(res.status().as_u16(), 200, "request {i}");
        let remaining = res.headers()["x-ratelimit-remaining-minute"]
            .to_str()
            .unwrap()
            .to_owned();
        assert_eq!(remaining, (59 - i).to_string(), "request {i}");
    }
    for server in [&one, &two] {
        let res = get(&server.base).await.expect("request");
        assert_eq!(res.status().as_u16(), 429);
        let body: Value = res.json().await.expect("json");
        assert_eq!(body["error"]["code"], json!("RATE_LIMIT_EXCEEDED"));
        assert_eq!(body["error"]["details"]["limit"], json!(60));
    }
    one.stop().await;
    two.stop().await;
}
