//! Webhook fan-out: how fast a running Corkboard delivers N events to W webhooks, against
//! the same number of plain POSTs of the same body made by a Rust client (reqwest, W
//! sequential senders at once, as the server's W webhooks deliver each in order; a process
//! of its own, as the server is) to the same local receiver. The server must allow private targets
//! (`CORKBOARD_WEBHOOKS__ALLOW_PRIVATE_TARGETS=true`).
//!
//! In each of R rounds, N events are logged while the webhooks are disabled, then the
//! webhooks are enabled and the clock runs until the receiver has every delivery (what is
//! measured is delivering, not writing pins); the webhooks are disabled again and the baseline
//! sends as many POSTs. Ours and the baseline alternate because this machine's speed drifts by
//! a third within minutes: a round's two figures are a second apart. Prints per round
//! `round K timeline_ms: enabled=... tenths=...` (when the last webhook was enabled, and when
//! the first delivery and each further tenth of them arrived: a slow start or a straggling end
//! shows there) and `round K: delivered_per_s=... baseline_per_s=... ratio=...`, then
//! `same_process_posts_per_s=...` (the same POSTs sent from the receiver's own process), then
//! `delivered_per_s=... baseline_per_s=...` of the round with the median ratio.
//!
//! `webhook_fanout <base url> <key> [events, default 1000] [webhooks, default 10] [rounds,
//! default 5]`

use std::{
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc, Mutex,
    },
    time::{Duration, Instant},
};

use axum::{
    body::Bytes,
    extract::State,
    http::{HeaderMap, StatusCode},
};
use serde_json::{json, Value};

/// What the receiver has counted, the last body it got (the baseline sends it), and the
/// `webhook-id` of the last delivery it got.
#[derive(Default)]
struct Received {
    count: AtomicUsize,
    sample: Mutex<Bytes>,
    last_id: Mutex<String>,
}

async fn receive(
    State(received): State<Arc<Received>>,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    if let Ok(mut sample) = received.sample.lock() {
        *sample = body;
    }
    if let (Some(id), Ok(mut last)) = (headers.get("webhook-id"), received.last_id.lock()) {
        *last = String::from_utf8_lossy(id.as_bytes()).into_owned();
    }
    received.count.fetch_add(1, Ordering::Relaxed);
    StatusCode::OK
}

async fn wait_for(received: &Received, n: usize, within: Duration) -> Result<(), String> {
    let deadline = Instant::now() + within;
    while received.count.load(Ordering::Relaxed) < n {
        if Instant::now() > deadline {
            return Err(format!(
                "{} of {n} deliveries within {within:?}",
                received.count.load(Ordering::Relaxed)
            ));
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    Ok(())
}

/// When the receiver had the first delivery and each further tenth of `total`, from
/// `started` (sampled every millisecond): a slow start shows as a first tenth that takes
/// longer than the others.
async fn timeline(received: Arc<Received>, total: usize, started: Instant) -> Vec<Duration> {
    let mut marks = Vec::with_capacity(11);
    while marks.len() < 11 {
        let count = received.count.load(Ordering::Relaxed);
        while marks.len() < 11 && count >= (marks.len() * total / 10).max(1) {
            marks.push(started.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    marks
}

struct Api {
    client: reqwest::Client,
    base: String,
    key: String,
}

impl Api {
    async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: &Value,
    ) -> Result<Value, String> {
        let res = self
            .client
            .request(method, format!("{}/v1{path}", self.base))
            .bearer_auth(&self.key)
            .json(body)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        let status = res.status();
        let body: Value = res.json().await.map_err(|e| e.to_string())?;
        if !status.is_success() {
            return Err(format!("{path}: {status} {body}"));
        }
        Ok(body["data"].clone())
    }
}

#[tokio::main]
async fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--senders") {
        return senders(&args[2..]).await;
    }
    let (Some(base), Some(key)) = (args.get(1), args.get(2)) else {
        return Err("usage: webhook_fanout <base url> <key> [events] [webhooks] [rounds]".into());
    };
    let number =
        |i: usize, default: usize| args.get(i).and_then(|n| n.parse().ok()).unwrap_or(default);
    let (events, webhooks, rounds) = (number(3, 1000), number(4, 10), number(5, 5).max(1));
    let total = events * webhooks;

    let received = Arc::new(Received::default());
    let app = axum::Router::new()
        .fallback(axum::routing::post(receive))
        .with_state(received.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    let receiver = format!(
        "http://{}",
        listener.local_addr().map_err(|e| e.to_string())?
    );
    tokio::spawn(async move { axum::serve(listener, app).await });

    let api = Api {
        client: reqwest::Client::new(),
        base: base.trim_end_matches('/').to_owned(),
        key: key.clone(),
    };
    let mut ids = Vec::new();
    for w in 0..webhooks {
        let hook = api
            .send(
                reqwest::Method::POST,
                "/webhooks",
                &json!({"url": format!("{receiver}/w{w}"), "events": ["pin.created"]}),
            )
            .await?;
        let id = hook["id"].as_str().ok_or("no webhook id")?.to_owned();
        ids.push(id);
    }
    api.enable(&ids, false).await?;

    // Rounds, each ours then the baseline: the machine's speed drifts within a run, and a
    // round's two figures are measured a second apart.
    let mut results = Vec::with_capacity(rounds);
    for round in 1..=rounds {
        api.log_events(events).await?;
        received.count.store(0, Ordering::Relaxed);
        let started = Instant::now();
        let timeline = tokio::spawn(timeline(received.clone(), total, started));
        api.enable(&ids, true).await?;
        let enabled = started.elapsed();
        wait_for(&received, total, Duration::from_secs(300)).await?;
        let ours = total as f64 / started.elapsed().as_secs_f64();
        let tenths = timeline.await.map_err(|e| e.to_string())?;
        println!(
            "round {round} timeline_ms: enabled={} tenths={}",
            enabled.as_millis(),
            tenths
                .iter()
                .map(|t| t.as_millis().to_string())
                .collect::<Vec<_>>()
                .join(",")
        );
        // Each webhook's progress saved before it is disabled (a webhook disabled first is
        // sent again, when enabled, what its lease had not saved: the next round would count
        // those).
        let last = received.last_id.lock().map_err(|_| "lock")?.clone();
        api.wait_saved(&ids, &last).await?;
        api.enable(&ids, false).await?;
        let body = received.sample.lock().map_err(|_| "lock")?.clone();
        let baseline =
            total as f64 / own_process(&received, &receiver, &body, events, webhooks).await?;
        println!(
            "round {round}: delivered_per_s={ours:.0} baseline_per_s={baseline:.0} ratio={:.3}",
            ours / baseline
        );
        results.push((ours, baseline));
    }
    for id in &ids {
        api.send(
            reqwest::Method::DELETE,
            &format!("/webhooks/{id}"),
            &json!({}),
        )
        .await?;
    }

    // Beside the baseline, the same POSTs sent from inside this process (the receiver's):
    // there a request and its answer cross no process boundary, which a server delivering to
    // someone else's receiver never gets.
    let body = received.sample.lock().map_err(|_| "lock")?.clone();
    received.count.store(0, Ordering::Relaxed);
    let same_process = total as f64 / send_all(&receiver, body, events, webhooks).await?;
    println!("same_process_posts_per_s={same_process:.0}");
    // The round of the median ratio.
    results.sort_by(|a, b| (a.0 / a.1).total_cmp(&(b.0 / b.1)));
    let (ours, baseline) = results[results.len() / 2];
    println!("delivered_per_s={ours:.0} baseline_per_s={baseline:.0}");
    Ok(())
}

impl Api {
    /// Logs `events` `pin.created` events (pins created in batches of 100).
    async fn log_events(&self, events: usize) -> Result<(), String> {
        let pin = json!({"pin_type": "stat-cards", "pin_config": {"cards": [{"title": "Revenue", "value": "$1.2M", "change": "+4%", "trend": "up"}]}, "metadata": {"title": "fan-out", "tags": ["bench"]}});
        for chunk in (0..events).collect::<Vec<_>>().chunks(100) {
            let pins: Vec<Value> = chunk.iter().map(|_| pin.clone()).collect();
            self.send(reqwest::Method::POST, "/pins/batch", &json!({"pins": pins}))
                .await?;
        }
        Ok(())
    }

    /// Waits until every webhook of `ids` has saved its attempt at event `last` (all were
    /// delivered every event: the last of the log is the last each delivered).
    async fn wait_saved(&self, ids: &[String], last: &str) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(30);
        for id in ids {
            loop {
                let newest = self
                    .send(
                        reqwest::Method::GET,
                        &format!("/webhooks/{id}/deliveries"),
                        &json!({}),
                    )
                    .await?;
                if newest[0]["event_id"].as_str() == Some(last) {
                    break;
                }
                if Instant::now() > deadline {
                    return Err(format!("webhook {id} did not save its deliveries"));
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
        Ok(())
    }

    /// Enables or disables every webhook of `ids`, all at once (as the baseline's senders
    /// start at once: one after another, the last was enabled 20-30 ms after the first).
    async fn enable(&self, ids: &[String], enabled: bool) -> Result<(), String> {
        let body = json!({ "enabled": enabled });
        let calls = ids.iter().map(|id| {
            let path = format!("/webhooks/{id}");
            let body = &body;
            async move { self.send(reqwest::Method::PATCH, &path, body).await }
        });
        futures::future::try_join_all(calls).await?;
        Ok(())
    }
}

/// The baseline: the same number of POSTs of `body`, W senders at once, each one request
/// after another (a webhook delivers in order), by a plain client in a process of its own
/// (this program again, `--senders`), as the server is; how long they took, in seconds.
async fn own_process(
    received: &Received,
    receiver: &str,
    body: &Bytes,
    events: usize,
    webhooks: usize,
) -> Result<f64, String> {
    received.count.store(0, Ordering::Relaxed);
    let body_file =
        std::env::temp_dir().join(format!("webhook_fanout_{}.json", std::process::id()));
    std::fs::write(&body_file, body).map_err(|e| e.to_string())?;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let child = tokio::process::Command::new(exe)
        .args([
            "--senders",
            receiver,
            &events.to_string(),
            &webhooks.to_string(),
        ])
        .arg(&body_file)
        .output()
        .await
        .map_err(|e| e.to_string())?;
    let _ = std::fs::remove_file(&body_file);
    let printed = String::from_utf8_lossy(&child.stdout);
    let secs: f64 = printed
        .trim()
        .strip_prefix("elapsed_s=")
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| {
            format!(
                "the senders' process: {printed} {}",
                String::from_utf8_lossy(&child.stderr)
            )
        })?;
    if received.count.load(Ordering::Relaxed) != events * webhooks {
        return Err("the senders' process did not deliver every POST".into());
    }
    Ok(secs)
}

/// W senders at once, each POSTing `body` `events` times in order to its own path of
/// `receiver`; how long they took, in seconds.
async fn send_all(
    receiver: &str,
    body: Bytes,
    events: usize,
    webhooks: usize,
) -> Result<f64, String> {
    let client = reqwest::Client::new();
    let started = Instant::now();
    let mut senders = Vec::new();
    for w in 0..webhooks {
        let (client, body, url) = (client.clone(), body.clone(), format!("{receiver}/p{w}"));
        senders.push(tokio::spawn(async move {
            for _ in 0..events {
                let res = client
                    .post(&url)
                    .header("content-type", "application/json")
                    .body(body.clone())
                    .send()
                    .await
                    .map_err(|e| e.to_string())?;
                if !res.status().is_success() {
                    return Err(format!("baseline POST: {}", res.status()));
                }
            }
            Ok::<(), String>(())
        }));
    }
    for sender in senders {
        sender.await.map_err(|e| e.to_string())??;
    }
    Ok(started.elapsed().as_secs_f64())
}

/// `--senders <receiver> <events> <webhooks> <body file>`: the baseline's plain client, in a
/// process of its own; prints `elapsed_s=`.
async fn senders(args: &[String]) -> Result<(), String> {
    let [receiver, events, webhooks, body_file] = args else {
        return Err(
            "usage: webhook_fanout --senders <receiver> <events> <webhooks> <body file>".into(),
        );
    };
    let events = events.parse().map_err(|_| "events: a number")?;
    let webhooks = webhooks.parse().map_err(|_| "webhooks: a number")?;
    let body = Bytes::from(std::fs::read(body_file).map_err(|e| e.to_string())?);
    let secs = send_all(receiver, body, events, webhooks).await?;
    println!("elapsed_s={secs}");
    Ok(())
}
