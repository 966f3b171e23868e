//! Delivering webhooks: one worker per replica, driven by the durable event log.
//!
//! The worker wakes when the store says a workspace has new events (`store::Commits`: in
//! process on SQLite, `LISTEN/NOTIFY` from every replica on PostgreSQL) of a workspace that
//! has a webhook ([`Watched`]), when an operation nudges it (a webhook created, enabled or
//! tested), and every `webhooks.poll_ms` (retries come due with time, and a notification can
//! be missed). Each time it looks for due webhooks (an
//! event after their cursor, no retry pending, no live lease) and leases up to its free
//! places in the store. Each leased webhook gets a task, on one of the replica's delivery
//! threads ([`Lane`]), that reads the log after the webhook's cursor and POSTs the matching
//! events one at a time, in log order: a failing webhook waits alone, others go on. Progress (the cursor and the attempts) is saved with
//! the lease's renewal at most every second or 10,000 deliveries (every 100 cost a tenth
//! of a delivery's CPU in writes; only the newest 100 attempts are kept anyway), so a
//! replica killed mid-way sends again, after the lease lapses, what it had not saved: at
//! least once. The tasks share the pages of the log they read ([`Pages`]).

use std::{
    collections::{HashMap, HashSet},
    sync::Arc,
    time::{Duration, Instant},
};

use axum::body::Bytes;
use reqwest::{
    header::{HeaderName, HeaderValue, CONTENT_TYPE},
    redirect, Url,
};
use tokio::{
    sync::{
        broadcast::error::{RecvError, TryRecvError},
        watch, Notify, OnceCell,
    },
    task::JoinSet,
    time::MissedTickBehavior,
};

use super::{target, WebhookSettings, ALL_EVENTS};
use crate::{
    clock,
    error::Result,
    events::{EventKind, Resource},
    hooks::StandardSigner,
    metrics::Metrics,
    store::{DeliveryRow, Event, Failure, NewEvent, Store, WebhookRow, KEPT_DELIVERIES},
};

/// Events read from the log at a time.
const PAGE: i64 = 100;
/// Full pages of the log kept for the delivery tasks (see [`Pages`]).
const KEPT_PAGES: usize = 4;
/// Progress is saved at least this often while delivering (it also renews the lease) ...
const SAVE_EVERY: Duration = Duration::from_secs(1);
/// ... and after this many deliveries: at most what a replica killed mid-way sends again
/// (a second's worth is less, unless a receiver takes more than 10,000 a second). A save is
/// a transaction (the cursor, the newest attempts, their prune): at one every 1,000, saves
/// took a tenth of PostgreSQL's machine during a fan-out, and at one a second it delivered
/// 9 % faster (three alternated pairs, bench/README "Webhook fan-out").
const SAVE_EVERY_ATTEMPTS: usize = 10_000;
/// The attempts a save records: the store keeps only the newest this many.
const KEPT: usize = KEPT_DELIVERIES as usize;
/// The pauses after the 1st, 2nd, ... failure, in units of `webhooks.retry_base_ms`: with
/// its default of 5 s, 5 s, 30 s, 2 min, 10 min, 1 h, then every 4 h.
const PAUSES: [i64; 6] = [1, 6, 24, 120, 720, 2880];
/// Bytes of a receiver's answer read (so the connection can be used again); the rest is
/// dropped with the connection.
const ANSWER_BYTES: usize = 64 * 1024;

/// This replica's delivery of webhooks. Stops when dropped (with the application state)
/// or told to ([`Worker::stop`]); what it had leased is taken over when the leases lapse.
pub struct Worker {
    nudge: Arc<Notify>,
    stop: watch::Sender<bool>,
}

impl Worker {
    /// Starts delivering, unless `webhooks.deliver` is off.
    pub fn start(store: Store, settings: &WebhookSettings, metrics: Arc<Metrics>) -> Arc<Worker> {
        let worker = Arc::new(Worker {
            nudge: Arc::new(Notify::new()),
            stop: watch::channel(false).0,
        });
        if !settings.deliver {
            return worker;
        }
        match lanes(settings, &worker.stop) {
            Ok(lanes) => {
                let first = lanes[0].runtime.clone();
                let ctx = Arc::new(Ctx {
                    store,
                    settings: settings.clone(),
                    lanes,
                    requests: tokio::runtime::Handle::current(),
                    metrics,
                    worker: crate::ids::new_id("wrk-"),
                    pages: Pages::default(),
                });
                first.spawn(run(ctx, worker.nudge.clone(), worker.stop.subscribe()));
            }
            Err(e) => tracing::error!(error = %e, "webhooks can't be delivered"),
        }
        worker
    }

    /// Says a webhook has work now (enabled, or a test logged).
    pub fn nudge(&self) {
        self.nudge.notify_one();
    }

    /// Stops delivering (at shutdown); attempts under way are dropped unrecorded.
    pub fn stop(&self) {
        self.stop.send_replace(true);
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.stop.send_replace(true);
    }
}

/// Where deliveries run: a thread with a single-threaded runtime and an HTTP client of its
/// own. A leased webhook's task, its requests and their connections all stay on one lane.
/// On the request runtime a delivery's request and its connection's task ran on whichever
/// worker was free, so buffers were made on one thread and freed on another (the
/// allocator's locks took 9 % of a fan-out's CPU) and a burst of deliveries competed with
/// the requests the replica serves; one lane per core (at most [`MAX_LANES`]) keeps the
/// cores busy when receivers answer fast.
struct Lane {
    runtime: tokio::runtime::Handle,
    client: reqwest::Client,
}

/// Most delivery threads: deliveries mostly wait on receivers.
const MAX_LANES: usize = 4;

/// Starts the lanes; each ends when `stop` says so or its sender is dropped.
fn lanes(settings: &WebhookSettings, stop: &watch::Sender<bool>) -> std::io::Result<Vec<Lane>> {
    let count = std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_LANES));
    (0..count)
        .map(|i| {
            let client = client(settings).map_err(std::io::Error::other)?;
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let handle = runtime.handle().clone();
            let mut stop = stop.subscribe();
            std::thread::Builder::new()
                .name(format!("webhooks-{i}"))
                .spawn(move || {
                    runtime.block_on(async move {
                        while !*stop.borrow_and_update() && stop.changed().await.is_ok() {}
                    });
                })?;
            Ok(Lane {
                runtime: handle,
                client,
            })
        })
        .collect()
}

/// The HTTP client deliveries use: redirects not followed (a 3xx is a failure, and a
/// redirect could lead to a refused address), `timeout_secs` for the whole exchange, no
/// proxy from the environment (it would bypass the address checks), and every name
/// resolved through [`target::CheckedResolver`], unless a proxy is configured.
fn client(settings: &WebhookSettings) -> reqwest::Result<reqwest::Client> {
    let builder = reqwest::Client::builder()
        .redirect(redirect::Policy::none())
        .timeout(Duration::from_secs(settings.timeout_secs))
        .user_agent(concat!("Corkboard-Webhooks/", env!("CARGO_PKG_VERSION")))
        .no_proxy();
    let builder = if settings.proxy.is_empty() {
        builder.dns_resolver(target::resolver(settings.allow_private_targets))
    } else {
        builder.proxy(reqwest::Proxy::all(&settings.proxy)?)
    };
    builder.build()
}

/// What every delivery task shares.
struct Ctx {
    store: Store,
    settings: WebhookSettings,
    /// At least one.
    lanes: Vec<Lane>,
    /// The runtime the replica serves requests on, where every store call of the worker
    /// runs ([`Ctx::on_requests`]). A PostgreSQL connection is watched by the runtime it was
    /// opened on: one opened on a lane would be served only between that lane's deliveries
    /// (a request that took it next would wait on them) and would break when the lane stops.
    requests: tokio::runtime::Handle,
    metrics: Arc<Metrics>,
    /// This worker's name in `leased_by`.
    worker: String,
    pages: Pages,
}

/// The newest pages of the log the delivery tasks read, each event with its body. The
/// webhooks of a workspace go through the same events at about the same pace, so ten
/// webhooks read and encode each event once rather than ten times. Only full pages are
/// kept: a logged event never changes, and none is logged later below a newer one (see
/// `store::events`), so a page of [`PAGE`] events after a cursor is final, where a shorter
/// one (the log's end) may still grow. Memory: [`KEPT_PAGES`] pages at most beyond those the
/// tasks are delivering, each of which held its own page before.
///
/// Webhooks that ask for a page while it is being read wait for that read rather than
/// making their own (on PostgreSQL each would also take a connection of its own: ten
/// webhooks enabled at once read their first pages ten times over, 10-40 ms each while the
/// pool opened connections). A page shared this way may have been read a moment before a
/// webhook asked for it; events logged meanwhile come with its next page, or its next lease.
#[derive(Default)]
struct Pages {
    kept: std::sync::Mutex<std::collections::VecDeque<Arc<Page>>>,
    reading: std::sync::Mutex<HashMap<(String, i64), Reading>>,
}

/// A page being read: its workspace's webhooks at that place wait for the same read.
type Reading = Arc<OnceCell<Arc<Page>>>;

/// The events of workspace `ws` after `after`, each with its body (the frame's JSON).
struct Page {
    ws: String,
    after: i64,
    events: Vec<(Event, Bytes)>,
}

impl Page {
    fn is_at(&self, ws: &str, cursor: i64) -> bool {
        self.after == cursor && self.ws == ws
    }
}

impl Pages {
    /// The page of `ws` after `cursor`, if it is kept.
    fn kept(&self, ws: &str, cursor: i64) -> Option<Arc<Page>> {
        let kept = self.kept.lock().ok()?;
        kept.iter().find(|page| page.is_at(ws, cursor)).cloned()
    }

    /// Whether the page of `ws` after `cursor` is kept or being read.
    fn has(&self, ws: &str, cursor: i64) -> bool {
        self.kept(ws, cursor).is_some()
            || self
                .reading
                .lock()
                .is_ok_and(|reading| reading.contains_key(&(ws.to_owned(), cursor)))
    }

    /// The page of `ws` after `cursor`: kept, being read (then waited for), or read (and
    /// kept when full).
    async fn after(&self, ctx: &Ctx, ws: &str, cursor: i64) -> Result<Arc<Page>> {
        if let Some(page) = self.kept(ws, cursor) {
            return Ok(page);
        }
        let place = (ws.to_owned(), cursor);
        let reading = match self.reading.lock() {
            Ok(mut reading) => reading.entry(place.clone()).or_default().clone(),
            Err(_) => Arc::default(),
        };
        let read = reading
            .get_or_try_init(|| read_page(ctx, ws, cursor))
            .await
            .cloned();
        if let Ok(page) = &read {
            self.keep(page);
        }
        if let Ok(mut under_way) = self.reading.lock() {
            // Unless a later read has taken the place since.
            if under_way
                .get(&place)
                .is_some_and(|cell| Arc::ptr_eq(cell, &reading))
            {
                under_way.remove(&place);
            }
        }
        read
    }

    /// Keeps `page` if it is full (final) and not kept yet, forgetting the oldest kept.
    fn keep(&self, page: &Arc<Page>) {
        if page.events.len() < PAGE as usize {
            return;
        }
        let Ok(mut kept) = self.kept.lock() else {
            return;
        };
        if kept.iter().any(|p| p.is_at(&page.ws, page.after)) {
            return;
        }
        if kept.len() == KEPT_PAGES {
            kept.pop_front();
        }
        kept.push_back(page.clone());
    }
}

/// Starts reading the page of `ws` after `cursor` unless it is kept or being read, so that
/// the webhooks going through the page before it don't all wait for the read when they get
/// there (on PostgreSQL a read takes a round trip or more: ten webhooks idle a millisecond
/// or two every hundred events).
fn read_ahead(ctx: &Arc<Ctx>, ws: &str, cursor: i64) {
    if ctx.pages.has(ws, cursor) {
        return;
    }
    let (ctx, ws) = (ctx.clone(), ws.to_owned());
    tokio::spawn(async move {
        if let Err(e) = ctx.pages.after(&ctx, &ws, cursor).await {
            tracing::debug!(error = %e, "reading ahead in the event log");
        }
    });
}

/// The events of `ws` after `cursor`, at most a page, each with its body.
async fn read_page(ctx: &Ctx, ws: &str, cursor: i64) -> Result<Arc<Page>> {
    let (store, owned) = (ctx.store.clone(), ws.to_owned());
    let events = ctx
        .on_requests(async move { store.events_after(&owned, cursor, PAGE).await })
        .await?
        .into_iter()
        .map(|event| {
            let body = Bytes::from(crate::events::data_json(&event)?);
            Ok((event, body))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Arc::new(Page {
        ws: ws.to_owned(),
        after: cursor,
        events,
    }))
}

impl Ctx {
    /// Runs `call` (the store's) on the request runtime and waits for it.
    async fn on_requests<T: Send + 'static>(
        &self,
        call: impl std::future::Future<Output = Result<T>> + Send + 'static,
    ) -> Result<T> {
        self.requests
            .spawn(call)
            .await
            .map_err(|e| crate::Error::internal_in("a store call of the webhook worker", e))?
    }

    fn lease_until(&self) -> i64 {
        let lease =
            i64::try_from(self.settings.lease_secs.saturating_mul(1000)).unwrap_or(i64::MAX);
        clock::now_ms().saturating_add(lease)
    }
}

async fn run(ctx: Arc<Ctx>, nudge: Arc<Notify>, mut stop: watch::Receiver<bool>) {
    let mut commits = ctx.store.commits().subscribe();
    let mut tick = tokio::time::interval(Duration::from_millis(ctx.settings.poll_ms));
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut tasks: JoinSet<()> = JoinSet::new();
    let mut next_lane = 0;
    let mut watched = Watched::default();
    loop {
        let mut look = tokio::select! {
            changed = stop.changed() => if changed.is_err() || *stop.borrow() { break } else { false },
            news = commits.recv() => watched.concerns(news),
            _ = tick.tick() => watched.refresh(&ctx).await,
            () = nudge.notified() => watched.refresh(&ctx).await,
            // A webhook given back: it may have new events already.
            Some(_) = tasks.join_next() => true,
        };
        while tasks.try_join_next().is_some() {}
        // One look serves every notification that came meanwhile.
        loop {
            let news = match commits.try_recv() {
                Ok(news) => Ok(news),
                Err(TryRecvError::Lagged(missed)) => Err(RecvError::Lagged(missed)),
                Err(TryRecvError::Empty | TryRecvError::Closed) => break,
            };
            look |= watched.concerns(news);
        }
        let free = ctx.settings.concurrency.saturating_sub(tasks.len());
        if !look || free == 0 {
            continue;
        }
        match claim(&ctx, free).await {
            Ok(hooks) => {
                for hook in hooks {
                    next_lane = (next_lane + 1) % ctx.lanes.len();
                    let lane = &ctx.lanes[next_lane];
                    let client = lane.client.clone();
                    tasks.spawn_on(serve(ctx.clone(), client, hook), &lane.runtime);
                }
            }
            Err(e) => tracing::warn!(error = %e, "looking for webhooks to deliver"),
        }
    }
}

/// The workspaces with an enabled webhook, as the store last said (every `poll_ms`, and when
/// an operation nudges the worker: a webhook created, enabled or tested here). A commit of
/// another workspace is no reason to look for due webhooks: with a look per commit group,
/// PATCH/s on PostgreSQL was 17-24 % lower with no webhook anywhere (bench/README "Updates",
/// session 39). A webhook created on another replica is seen here at the next refresh, and
/// that replica looks after the commits it hears of meanwhile.
#[derive(Default)]
struct Watched(HashSet<Arc<str>>);

impl Watched {
    /// Whether a notification from the store calls for a look: news of a watched
    /// workspace, a catch-up (`None`: notifications may have been missed), or lost ones.
    fn concerns(&self, news: Result<Option<Arc<str>>, RecvError>) -> bool {
        match news {
            Ok(Some(ws)) => self.0.contains(&ws),
            Ok(None) | Err(RecvError::Lagged(_)) => true,
            Err(RecvError::Closed) => false,
        }
    }

    /// Reads the watched workspaces again; always calls for a look. On a failure the set
    /// is kept (the look will fail too, and say so).
    async fn refresh(&mut self, ctx: &Ctx) -> bool {
        let store = ctx.store.clone();
        match ctx
            .on_requests(async move { store.webhook_workspaces().await })
            .await
        {
            Ok(workspaces) => self.0 = workspaces.into_iter().map(Arc::from).collect(),
            Err(e) => tracing::warn!(error = %e, "reading which workspaces have webhooks"),
        }
        true
    }
}

/// Leases up to `free` due webhooks. The look is a read (no write lock while nothing is
/// due, as after most commits); the lease is a compare-and-set in the store.
async fn claim(ctx: &Ctx, free: usize) -> Result<Vec<WebhookRow>> {
    let now = clock::now_ms();
    let limit = i64::try_from(free).unwrap_or(i64::MAX);
    let (store, worker, until) = (ctx.store.clone(), ctx.worker.clone(), ctx.lease_until());
    ctx.on_requests(async move {
        let due = store.due_webhooks(now, limit).await?;
        if due.is_empty() {
            return Ok(Vec::new());
        }
        store.claim_webhooks(&worker, &due, now, until).await
    })
    .await
}

/// One leased webhook's task: delivers until nothing is left, a delivery fails or the
/// lease is lost. After an error (the store unreachable, an event that can't be read) the
/// lease is kept until it lapses: the webhook is tried again `lease_secs` later, not at
/// once and again and again.
async fn serve(ctx: Arc<Ctx>, client: reqwest::Client, hook: WebhookRow) {
    let id = hook.id.clone();
    if let Err(e) = deliver(&ctx, client, hook).await {
        tracing::warn!(error = %e, webhook = %id, "delivering a webhook");
    }
}

/// Whether `event` goes to `hook`: a test only to the webhook it names; others by type,
/// and by pin and pinboard when the webhook names them.
fn wanted(hook: &WebhookRow, event: &Event) -> bool {
    if event.kind == EventKind::WebhookTest {
        return event.resource_id == hook.id;
    }
    let typed = hook
        .event_types
        .iter()
        .any(|t| t == ALL_EVENTS || t == event.kind.as_str());
    typed
        && hook
            .pin_id
            .as_ref()
            .is_none_or(|pin| event.kind.resource() == Resource::Pin && event.resource_id == *pin)
        && hook
            .pinboard_id
            .as_ref()
            .is_none_or(|board| event.boards.contains(board))
}

async fn deliver(ctx: &Arc<Ctx>, client: reqwest::Client, hook: WebhookRow) -> Result<()> {
    let (ws, id, worker) = (&hook.workspace_id, &hook.id, &ctx.worker);
    let mut cursor = hook.cursor_seq;
    let mut saved = cursor;
    // The attempts since the last save: the newest [`KEPT`] at least, at most twice that.
    let mut attempts: Vec<DeliveryRow> = Vec::new();
    let mut since_save = 0;
    let mut delivered_any = false;
    let mut saved_at = Instant::now();
    // The last save, under way while the deliveries after it go on.
    let mut saving: Option<Saving> = None;
    let target = target(ctx, client, &hook);
    loop {
        let page = ctx.pages.after(ctx, ws, cursor).await?;
        let last_page = page.events.len() < PAGE as usize;
        if let (false, Some((last, _))) = (last_page, page.events.last()) {
            read_ahead(ctx, ws, last.seq);
        }
        for (event, body) in &page.events {
            if wanted(&hook, event) {
                let attempt = send(ctx, &target, event, body.clone()).await?;
                if !delivered(&attempt) {
                    if !held(saving.take()).await? {
                        return Ok(());
                    }
                    let moved = cursor == saved
                        || held(Some(save(
                            ctx,
                            &hook,
                            std::mem::take(&mut attempts),
                            cursor,
                        )))
                        .await?;
                    if moved {
                        let failure = failure(ctx, &hook, delivered_any, &attempt);
                        let (store, ws, id) = (ctx.store.clone(), ws.clone(), id.clone());
                        let worker = worker.clone();
                        ctx.on_requests(async move {
                            store
                                .webhook_failed(&ws, &id, &worker, &attempt, &failure)
                                .await
                        })
                        .await?;
                    }
                    return Ok(());
                }
                if attempts.len() == 2 * KEPT {
                    attempts.drain(..KEPT);
                }
                attempts.push(attempt);
                since_save += 1;
                delivered_any = true;
            }
            cursor = event.seq;
            if since_save >= SAVE_EVERY_ATTEMPTS || saved_at.elapsed() >= SAVE_EVERY {
                if !held(saving.take()).await? {
                    return Ok(());
                }
                saving = Some(save(ctx, &hook, std::mem::take(&mut attempts), cursor));
                (saved, saved_at, since_save) = (cursor, Instant::now(), 0);
            }
        }
        if last_page {
            break;
        }
    }
    if !held(saving.take()).await? {
        return Ok(());
    }
    if cursor != saved && !held(Some(save(ctx, &hook, attempts, cursor))).await? {
        return Ok(());
    }
    let (store, ws, id, worker) = (ctx.store.clone(), ws.clone(), id.clone(), worker.clone());
    ctx.on_requests(async move { store.release_webhook(&ws, &id, &worker).await })
        .await
}

/// A save of a lease's progress under way: whether the lease was still held.
type Saving = tokio::task::JoinHandle<Result<bool>>;

/// Saves `attempts` and `cursor` (and renews the lease) while the task delivers on: a save
/// is a commit, an fsync, which on PostgreSQL stopped each webhook for 2-4 ms every 1,000
/// deliveries. One save at a time, in order: the next waits for it ([`held`]), and so do a
/// failure's records and the lease's release.
fn save(ctx: &Arc<Ctx>, hook: &WebhookRow, attempts: Vec<DeliveryRow>, cursor: i64) -> Saving {
    let (ctx, ws, id) = (ctx.clone(), hook.workspace_id.clone(), hook.id.clone());
    ctx.requests.clone().spawn(async move {
        let until = ctx.lease_until();
        ctx.store
            .webhook_progress(&ws, &id, &ctx.worker, &attempts, cursor, until)
            .await
    })
}

/// Whether the lease was still held when `saving` (if any) was saved.
async fn held(saving: Option<Saving>) -> Result<bool> {
    match saving {
        None => Ok(true),
        Some(saving) => saving
            .await
            .map_err(|e| crate::Error::internal_in("saving a webhook's progress", e))?,
    }
}

fn delivered(attempt: &DeliveryRow) -> bool {
    attempt.status_code.is_some_and(|s| (200..300).contains(&s))
}

/// The failure streak `attempt` leaves, and whether it has lasted long enough to disable
/// the webhook.
fn failure(ctx: &Ctx, hook: &WebhookRow, delivered_any: bool, attempt: &DeliveryRow) -> Failure {
    let now = attempt.at.saturating_add(attempt.duration_ms);
    let (attempts, since) = if delivered_any {
        (1, attempt.at)
    } else {
        (hook.attempts + 1, hook.failing_since.unwrap_or(attempt.at))
    };
    let base = i64::try_from(ctx.settings.retry_base_ms).unwrap_or(i64::MAX);
    let step = usize::try_from(attempts - 1)
        .unwrap_or(0)
        .min(PAUSES.len() - 1);
    let next_attempt_at = now.saturating_add(base.saturating_mul(PAUSES[step]));
    let disable_after =
        i64::try_from(ctx.settings.disable_after_secs.saturating_mul(1000)).unwrap_or(i64::MAX);
    let disabled = (now - since >= disable_after).then(|| {
        let last = match (attempt.status_code, &attempt.error) {
            (Some(status), _) => format!("answered {status}"),
            (None, Some(error)) => error.clone(),
            (None, None) => "no answer".to_owned(),
        };
        let reason = format!(
            "deliveries failed for {} s ({attempts} attempts since {}); the last: {last}",
            (now - since) / 1000,
            clock::iso(since)
        );
        let data = serde_json::json!({"id": hook.id, "enabled": false, "disabled_reason": reason});
        let event = NewEvent {
            workspace_id: hook.workspace_id.clone(),
            kind: EventKind::WebhookDisabled,
            resource_id: hook.id.clone(),
            version: None,
            boards: Vec::new(),
            at: now,
            data: data.to_string(),
        };
        (reason, event)
    });
    Failure {
        attempts,
        failing_since: since,
        next_attempt_at,
        disabled,
    }
}

/// Where a lease's deliveries go, how they are signed and by which lane's client, made once
/// for the lease rather than by each request: the webhook's url parsed and the HMAC keyed,
/// or why nothing can be sent (an address written in the url that is refused, a url or
/// secret that doesn't parse), which each attempt then records.
type Target = std::result::Result<(reqwest::Client, Url, StandardSigner), String>;

fn target(ctx: &Ctx, client: reqwest::Client, hook: &WebhookRow) -> Target {
    if let Some(refusal) = target::refused_literal(&hook.url, ctx.settings.allow_private_targets) {
        return Err(refusal);
    }
    let url = Url::parse(&hook.url).map_err(|e| format!("request failed: {e}"))?;
    let signer = StandardSigner::new(&hook.secret)
        .map_err(|_| "the webhook's secret can't sign".to_owned())?;
    Ok((client, url, signer))
}

/// One attempt: `body` (the event's frame JSON), signed, POSTed to the target.
async fn send(ctx: &Ctx, target: &Target, event: &Event, body: Bytes) -> Result<DeliveryRow> {
    let message_id = event.seq.to_string();
    let at = clock::now_ms();
    let started = Instant::now();
    let answer = match target {
        Ok((client, url, signer)) => post(client, url, signer, &message_id, body).await,
        Err(e) => Err(e.clone()),
    };
    let took = started.elapsed();
    let (status_code, error) = match answer {
        Ok(status) => (Some(i64::from(status)), None),
        Err(error) => (None, Some(error)),
    };
    let attempt = DeliveryRow {
        event_id: event.seq,
        event_type: event.kind.as_str().to_owned(),
        status_code,
        duration_ms: i64::try_from(took.as_millis()).unwrap_or(i64::MAX),
        error,
        at,
    };
    ctx.metrics.webhook_delivery(delivered(&attempt), took);
    Ok(attempt)
}

/// The headers of a delivery, named once rather than parsed from text by each request.
const JSON: HeaderValue = HeaderValue::from_static("application/json");
const WEBHOOK_ID: HeaderName = HeaderName::from_static("webhook-id");
const WEBHOOK_TIMESTAMP: HeaderName = HeaderName::from_static("webhook-timestamp");
const WEBHOOK_SIGNATURE: HeaderName = HeaderName::from_static("webhook-signature");

/// The receiver's status, or what went wrong (never the url: it may hold a token).
async fn post(
    client: &reqwest::Client,
    url: &Url,
    signer: &StandardSigner,
    message_id: &str,
    body: Bytes,
) -> std::result::Result<u16, String> {
    let timestamp = (clock::now_ms() / 1000).to_string();
    let signature = signer.sign(message_id, &timestamp, &body);
    let mut answer = client
        .post(url.clone())
        .header(CONTENT_TYPE, JSON)
        .header(WEBHOOK_ID, message_id)
        .header(WEBHOOK_TIMESTAMP, timestamp)
        .header(WEBHOOK_SIGNATURE, signature)
        .body(body)
        .send()
        .await
        .map_err(describe)?;
    let status = answer.status().as_u16();
    let mut read = 0;
    while let Ok(Some(chunk)) = answer.chunk().await {
        read += chunk.len();
        if read > ANSWER_BYTES {
            break;
        }
    }
    Ok(status)
}

/// A failed request in a few words, without its url.
fn describe(e: reqwest::Error) -> String {
    let what = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "could not connect"
    } else {
        "request failed"
    };
    let e = e.without_url();
    let mut cause: &dyn std::error::Error = &e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    format!("{what}: {cause}")
}
