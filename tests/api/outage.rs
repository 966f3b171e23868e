//! A PostgreSQL outage under write load, on a throwaway cluster the test owns (initdb and
//! pg_ctl in a temporary directory on a spare port), never the machine's shared server:
//! while the database is down every request gets a fast 503 with `Retry-After` and
//! `/readyz` says 503 within a second; once it is back, writes succeed within 5 s and every
//! acknowledged write is there.

use std::{
    path::{Path, PathBuf},
    process::Command,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use reqwest::Method;

use crate::helpers::*;

/// A PostgreSQL cluster of the test's own.
struct Cluster {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
}

/// The newest installed PostgreSQL's programs (Debian's layout, or `pg_config --bindir`).
fn postgres_bin() -> Option<PathBuf> {
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|bin| bin.join("initdb").exists())
        .collect();
    versions.sort();
    versions.pop().or_else(|| {
        let out = Command::new("pg_config").arg("--bindir").output().ok()?;
        let bin = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        bin.join("initdb").exists().then_some(bin)
    })
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Runs a PostgreSQL program (as `postgres` when we are root: PostgreSQL refuses root).
fn run(bin: &Path, program: &str, args: &[&str]) {
    let path = bin.join(program);
    let status = if is_root() {
        Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(&path)
            .args(args)
            .status()
    } else {
        Command::new(&path).args(args).status()
    }
    .unwrap_or_else(|e| panic!("run {program}: {e}"));
    assert!(status.success(), "{program} {args:?} failed");
}

impl Cluster {
    fn new(bin: PathBuf) -> Cluster {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let dir = std::env::temp_dir().join(format!("corkboard-pg-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).expect("cluster dir");
        if is_root() {
            let owned = Command::new("chown")
                .args(["postgres:postgres"])
                .arg(&dir)
                .status();
            assert!(owned.is_ok_and(|s| s.success()), "chown the cluster dir");
        }
        let data = dir.join("data");
        let data = data.to_string_lossy();
        run(
            &bin,
            "initdb",
            &[
                "-D",
                &data,
                "-U",
                "postgres",
                "--auth=trust",
                "-N",
                "-E",
                "UTF8",
            ],
        );
        let cluster = Cluster { bin, dir, port };
        cluster.start();
        cluster
    }

    fn data(&self) -> String {
        self.dir.join("data").to_string_lossy().into_owned()
    }

    fn start(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.dir.display()
        );
        let log = self.dir.join("log").to_string_lossy().into_owned();
        run(
            &self.bin,
            "pg_ctl",
            &[
                "-D",
                &self.data(),
                "-o",
                &options,
                "-l",
                &log,
                "-w",
                "start",
            ],
        );
    }

    fn stop(&self) {
        run(
            &self.bin,
            "pg_ctl",
            &["-D", &self.data(), "-m", "fast", "-w", "stop"],
        );
    }

    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(self.bin.join("pg_ctl"))
            .args(["-D", &self.data(), "-m", "immediate", "stop"])
            .output();
        if is_root() {
            let _ = Command::new("runuser")
                .args(["-u", "postgres", "--"])
                .arg(self.bin.join("pg_ctl"))
                .args(["-D", &self.data(), "-m", "immediate", "stop"])
                .output();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[derive(Default)]
struct Seen {
    acknowledged: Vec<String>,
    /// Statuses other than 200 and 503 (500s, dropped connections as 0).
    wrong: Vec<(u16, String)>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_outage_gets_fast_503s_and_loses_no_acknowledged_write() {
    let Some(bin) = postgres_bin() else {
        if std::env::var_os("CI").is_some() {
            panic!("PostgreSQL's programs (initdb, pg_ctl) are not installed");
        }
        eprintln!("outage test left out: PostgreSQL's programs (initdb, pg_ctl) are not installed");
        return;
    };
    let cluster = Cluster::new(bin);
    let app = Arc::new(TestApp::on_database(&cluster.url(), "max_connections = 8").await);
    let seen = Arc::new(Mutex::new(Seen::default()));
    let running = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let mut writers = Vec::new();
    for w in 0..8 {
        let (app, seen, running) = (app.clone(), seen.clone(), running.clone());
        writers.push(tokio::spawn(async move {
            let mut i = 0;
            while running.load(std::sync::atomic::Ordering::Relaxed) {
                i += 1;
                let res = app
                    .send(
                        app.req(Method::POST, "/v1/pins")
                            .json(&stat_cards(&format!("w{w}-{i}"))),
                    )
                    .await;
                {
                    let mut seen = seen.lock().unwrap();
                    match res.status {
                        200 => seen
                            .acknowledged
                            .push(res.data()["id"].as_str().unwrap().to_owned()),
                        503 if res.header("retry-after").is_some() => {}
                        other => seen.wrong.push((other, res.body.to_string())),
                    }
                }
                if res.status != 200 {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        !seen.lock().unwrap().acknowledged.is_empty(),
        "writes before the outage"
    );

    cluster.stop();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    // Known to be down: each answer is a 503 with Retry-After, within a second.
    for _ in 0..5 {
        let started = Instant::now();
        let res = app.post("/v1/pins", &stat_cards("during")).await;
        assert_eq!(res.status, 503, "{}", res.body);
        assert_eq!(res.code(), "SERVICE_UNAVAILABLE");
        assert!(res.header("retry-after").is_some());
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "{:?}",
            started.elapsed()
        );
        let started = Instant::now();
        let ready = app.get("/readyz").await;
        assert_eq!(ready.status, 503);
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "readyz took {:?}",
            started.elapsed()
        );
    }

    cluster.start();
    let back = Instant::now();
    loop {
        let res = app.post("/v1/pins", &stat_cards("after")).await;
        if res.status == 200 {
            break;
        }
        assert!(
            back.elapsed() < Duration::from_secs(5),
            "writes failing 5 s after the restart: {}",
            res.body
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let started = Instant::now();
    assert_eq!(app.get("/readyz").await.status, 200);
    assert!(started.elapsed() < Duration::from_secs(1));
    tokio::time::sleep(Duration::from_millis(500)).await;
    running.store(false, std::sync::atomic::Ordering::Relaxed);
    for writer in writers {
        writer.await.unwrap();
    }

    let seen = std::mem::take(&mut *seen.lock().unwrap());
    assert!(
        seen.wrong.is_empty(),
        "only 200s and 503s with Retry-After: {:?}",
        seen.wrong
    );
    for chunk in seen.acknowledged.chunks(100) {
        let res = app
            .post(
                "/v1/pins/batch/get",
                &serde_json::json!({ "pin_ids": chunk }),
            )
            .await
            .expect(200);
        assert_eq!(
            res.body["missing"],
            serde_json::json!([]),
            "acknowledged writes lost"
        );
    }
}
