//! Rate limiter overhead: the cost of one check against the cost of one whole request
//! (`GET /v1/pins/{id}` over HTTP on the same store), measured side by side in one run.
//!
//! `cargo run --release --example limiter_bench [-- --pg postgres://postgres@127.0.0.1:5432]`
//! prints one line per figure: `name: ours=... baseline=... ratio=...`.

use std::time::{Duration, Instant};

use corkboard::{
    auth::{self, NewKey, Scopes, Tier},
    limits::{Cost, Limiter, Quota},
    store::Store,
    AppState, Settings,
};
use sqlx::{Connection, PgConnection};

const GENEROUS: &str = "
[rate_limits.tiers.team]
per_minute = 1000000000
per_hour = 1000000000
[rate_limits.write_bucket]
capacity = 1000000000
";

const QUOTA: Quota = Quota {
    per_minute: u32::MAX / 2,
    per_hour: u32::MAX / 2,
    write_capacity: u32::MAX / 2,
    write_window_ms: 60_000,
};

/// Mean time of `n` sequential runs of `f`, after `n / 10` unmeasured ones.
async fn mean<F, Fut>(n: u32, mut f: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    for _ in 0..n / 10 {
        f().await;
    }
    let start = Instant::now();
    for _ in 0..n {
        f().await;
    }
    start.elapsed() / n
}

/// Mean time of one `GET /v1/pins/{id}` on a server over `url`.
async fn request_cost(url: &str, n: u32) -> Duration {
    let settings = Settings::with_overrides(&[
        &format!("database_url = \"{url}\"\nmax_connections = 8\n"),
        GENEROUS,
    ])
    .expect("settings");
    let state = AppState::connect(settings).await.expect("store");
    let key = auth::create_key(
        &state.store,
        NewKey {
            workspace: "default".into(),
            name: "bench".into(),
            scopes: Scopes::parse_list("*").expect("scopes"),
            tier: Tier::Team,
        },
    )
    .await
    .expect("key");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(corkboard::serve(listener, state, std::future::pending()));
    let client = reqwest::Client::new();
    let created: serde_json::Value = client
        .post(format!("{base}/v1/pins"))
        .bearer_auth(key.secret.expose())
        .json(&serde_json::json!({"pin_type": "stat-cards", "pin_config": {"cards": [{"title": "a", "value": "1"}]}}))
        .send()
        .await
        .expect("create")
        .json()
        .await
        .expect("json");
    let url = format!(
        "{base}/v1/pins/{}",
        created["data"]["pin_id"].as_str().expect("pin id")
    );
    let secret = key.secret.expose().to_owned();
    mean(n, || {
        let req = client.get(&url).bearer_auth(&secret);
        async move {
            let res = req.send().await.expect("get");
            assert!(res.status().is_success());
            let _ = res.bytes().await;
        }
    })
    .await
}

async fn check_cost(limiter: &Limiter, n: u32) -> Duration {
    let cost = Cost {
        tokens: 1,
        write: false,
    };
    mean(n, || async {
        let usage = limiter
            .check(
                "key-bench",
                corkboard::clock::now_ms(),
                cost,
                &QUOTA,
                Duration::from_secs(2),
            )
            .await
            .expect("check");
        assert!(usage.granted);
    })
    .await
}

fn line(name: &str, ours: Duration, baseline: Duration) {
    println!(
        "{name}: ours={:.2}us/check baseline={:.2}us/request ratio={:.4}",
        ours.as_secs_f64() * 1e6,
        baseline.as_secs_f64() * 1e6,
        ours.as_secs_f64() / baseline.as_secs_f64()
    );
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let pg = args
        .iter()
        .position(|a| a == "--pg")
        .and_then(|i| args.get(i + 1))
        .cloned();
    let quick = args.iter().any(|a| a == "--smoke");
    let n = if quick { 200 } else { 5_000 };

    let dir = std::env::temp_dir().join(format!("corkboard-limiter-bench-{}", std::process::id()));
    let sqlite_url = format!("sqlite://{}", dir.join("bench.db").display());
    let memory = Limiter::Memory(Default::default());
    let ours = check_cost(&memory, n * 20).await;
    let baseline = request_cost(&sqlite_url, n).await;
    line("limiter_memory_vs_sqlite_get", ours, baseline);
    let _ = std::fs::remove_dir_all(&dir);

    if let Some(admin) = pg {
        let name = format!("corkboard_limiter_bench_{}", std::process::id());
        let mut conn = PgConnection::connect(&format!("{admin}/postgres"))
            .await
            .expect("postgres");
        sqlx::query(&format!("CREATE DATABASE {name}"))
            .execute(&mut conn)
            .await
            .expect("create db");
        let url = format!("{admin}/{name}");
        let baseline = request_cost(&url, n).await;
        let store = Store::open(&url, 8, corkboard::events::Records::shared("http://bench"))
            .await
            .expect("store");
        let limiter = Limiter::for_store(&store);
        let ours = check_cost(&limiter, n).await;
        line("limiter_postgres_vs_postgres_get", ours, baseline);
        store.close().await;
        let _ = sqlx::query(&format!("DROP DATABASE {name} WITH (FORCE)"))
            .execute(&mut conn)
            .await;
    }
}
