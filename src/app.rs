//! Application state, the router with its layers, and serving with graceful shutdown.

use std::{
    collections::HashMap,
    future::Future,
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc, Mutex,
    },
    time::{Duration, Instant},
};

use axum::{
    extract::{MatchedPath, Request},
    http::HeaderName,
    middleware::Next,
    response::Response,
    Router,
};
use tokio::net::TcpListener;
use tower::ServiceBuilder;
use tower_http::{
    catch_panic::CatchPanicLayer,
    request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer},
    trace::TraceLayer,
};
use tracing::{field::Empty, Level, Span};

use crate::{
    clock::{Clock, SystemClock},
    config::{Limits, Settings},
    error::{Error, Result},
    events::Hub,
    limits::{AddressGuard, Limiter, PasswordGuard},
    metrics::Metrics,
    pins::{known::KnownPins, records::RecordCache, rendered::RenderedCache},
    store::Store,
};

/// How often a key's `last_used_at` is written, at most, per process.
const TOUCH_INTERVAL: Duration = Duration::from_secs(60);

/// Shared by every request: the store and the settings.
#[derive(Clone)]
pub struct AppState {
    pub store: Store,
    pub settings: Arc<Settings>,
    public_base: Arc<str>,
    ready: Arc<AtomicBool>,
    pub metrics: Arc<Metrics>,
    /// Time as the rate limiter sees it.
    pub clock: Arc<dyn Clock>,
    pub limiter: Arc<Limiter>,
    pub auth_guard: Arc<AddressGuard>,
    /// Requests to pages per client address.
    pub share_guard: Arc<AddressGuard>,
    /// Requests to signed-in pages per user (`workspace/user`).
    pub user_page_guard: Arc<AddressGuard<String>>,
    /// Failed password sign-ins per address and per account.
    pub password_guard: Arc<PasswordGuard>,
    limiter_healthy: Arc<AtomicBool>,
    /// Checks ID tokens; `None` when sign-in with them is off.
    pub(crate) jwt: Option<Arc<crate::auth::JwtVerifier>>,
    /// Web sign-in; `None` when off (no client id).
    pub(crate) oidc: Option<Arc<crate::auth::Oidc>>,
    touched: Arc<Mutex<HashMap<String, Instant>>>,
    /// API keys' principals kept between requests (see [`crate::auth::KeyCache`]).
    pub(crate) keys: Arc<crate::auth::KeyCache>,
    /// Rendered pin records for the lists (see [`crate::pins::records`]).
    pub records: Arc<RecordCache>,
    /// Rendered (`?render=true`) list records (see [`crate::pins::rendered`]).
    pub rendered: Arc<RenderedCache>,
    /// The pins this replica last wrote, for their next update (see [`crate::pins::known`]).
    pub known_pins: Arc<KnownPins>,
    /// The live event streams of this replica.
    pub events: Arc<Hub>,
    /// Connections (behind a proxy: requests in flight) per client address.
    pub open_per_address: Arc<crate::limits::OpenPerAddress>,
    /// This replica's delivery of outbound webhooks.
    pub webhooks: Arc<crate::webhooks::Worker>,
}

impl AppState {
    /// Opens (and migrates) the configured store.
    pub async fn connect(settings: Settings) -> Result<Self> {
        let store = Store::open(
            &settings.store_url(),
            settings.max_connections,
            crate::events::Records::shared(&settings.public_base()),
        )
        .await?;
        Ok(Self::new(store, settings))
    }

    pub fn new(store: Store, settings: Settings) -> Self {
        let metrics = Arc::new(Metrics::new());
        let events = Hub::new(store.clone(), settings.events.clone(), metrics.clone());
        // The two record caches and the pins last written share `render.cache_bytes`.
        let cache_bytes = settings.render.cache_bytes / 3;
        events.prune_in_background();
        events.sweep_stale_in_background(settings.freshness.check_secs);
        events.sweep_statuses_in_background(
            settings.freshness.check_secs,
            settings.limits.version_retention,
        );
        let webhooks =
            crate::webhooks::Worker::start(store.clone(), &settings.webhooks, metrics.clone());
        AppState {
            webhooks,
            events,
            open_per_address: crate::limits::OpenPerAddress::new(
                settings.http.max_connections_per_address,
                metrics.clone(),
            ),
            limiter: Arc::new(Limiter::for_store(&store)),
            clock: Arc::new(SystemClock),
            auth_guard: Arc::default(),
            share_guard: Arc::default(),
            user_page_guard: Arc::default(),
            password_guard: Arc::default(),
            limiter_healthy: Arc::new(AtomicBool::new(true)),
            jwt: crate::auth::JwtVerifier::new(&settings.auth.jwt).map(Arc::new),
            oidc: crate::auth::Oidc::new(
                &settings.auth.oidc,
                &settings.auth.jwt.issuer,
                &settings.public_base(),
            )
            .map(Arc::new),
            store,
            public_base: settings.public_base().into(),
            settings: Arc::new(settings),
            ready: Arc::new(AtomicBool::new(true)),
            metrics,
            touched: Arc::default(),
            keys: Arc::default(),
            records: Arc::new(RecordCache::new(cache_bytes)),
            rendered: Arc::new(RenderedCache::new(cache_bytes)),
            known_pins: Arc::new(KnownPins::new(cache_bytes)),
        }
    }

    /// The same state reading time from `clock` (tests move it to cross rate-limit windows).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Whether people can sign in on the web: with the identity provider (a client id) or
    /// with a password (`auth.local.enabled`). Without either, the signed-in pages are 404.
    pub fn web_sign_in(&self) -> bool {
        self.oidc.is_some() || self.settings.auth.local.enabled
    }

    pub fn limiter_healthy(&self) -> bool {
        self.limiter_healthy.load(Ordering::Relaxed)
    }

    pub(crate) fn set_limiter_healthy(&self, healthy: bool) {
        self.limiter_healthy.store(healthy, Ordering::Relaxed);
    }

    pub fn limits(&self) -> &Limits {
        &self.settings.limits
    }

    /// Base of share links, without a trailing slash.
    pub fn public_base(&self) -> &str {
        &self.public_base
    }

    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Relaxed)
    }

    /// Records that a key was used, writing it to the store at most once a minute.
    pub(crate) fn note_key_used(&self, key_id: &str) {
        let now = Instant::now();
        {
            let Ok(mut touched) = self.touched.lock() else {
                return;
            };
            match touched.get(key_id) {
                Some(last) if now.duration_since(*last) < TOUCH_INTERVAL => return,
                _ => touched.insert(key_id.to_owned(), now),
            };
        }
        let store = self.store.clone();
        let key_id = key_id.to_owned();
        tokio::spawn(async move {
            if let Err(e) = store.touch_key(&key_id, crate::clock::now_ms()).await {
                tracing::debug!(error = %e, "could not record key use");
            }
        });
    }
}

static REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The whole HTTP surface with its layers.
pub fn router(state: AppState) -> Router {
    let trace = TraceLayer::new_for_http()
        .make_span_with(|req: &Request| {
            let route = req
                .extensions()
                .get::<MatchedPath>()
                .map_or("unmatched", |p| p.as_str());
            let request_id = req
                .headers()
                .get(&REQUEST_ID)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            // Probes and scrapes come every few seconds: their lines would drown the rest.
            if route.ends_with("healthz") || route.ends_with("readyz") || route.ends_with("metrics") {
                tracing::span!(Level::DEBUG, "request", method = %req.method(), route, request_id, key_id = Empty)
            } else {
                tracing::info_span!("request", method = %req.method(), route, request_id, key_id = Empty)
            }
        })
        .on_request(())
        .on_response(move |res: &Response<_>, latency: Duration, span: &Span| {
            let status = res.status().as_u16();
            // Microseconds as milliseconds: 0.155, not 0.15493700000000002.
            let latency_ms = latency.as_micros() as f64 / 1000.0;
            // A probe's span is a debug one (disabled below debug): so is its line.
            if span.is_disabled() || span.metadata().is_some_and(|m| *m.level() == Level::DEBUG) {
                tracing::debug!(status, latency_ms, "response");
            } else {
                tracing::info!(status, latency_ms, "response");
            }
        });
    let stall = Duration::from_secs(state.settings.http.body_stall_secs);
    let in_flight =
        axum::middleware::from_fn_with_state(state.clone(), crate::limits::count_in_flight);
    // Checked when the settings load (an origin list that can't be read stops the start).
    let count = crate::metrics::CountLayer(state.metrics.clone());
    let cors = crate::api::cors::layer(&state.settings.http.cors_origins)
        .ok()
        .flatten();
    crate::api::router(state).layer(
        ServiceBuilder::new()
            .map_request(move |req| crate::connections::stall_limited(req, stall))
            .layer(SetRequestIdLayer::new(REQUEST_ID.clone(), MakeRequestUuid))
            .layer(trace)
            .layer(count)
            .layer(PropagateRequestIdLayer::new(REQUEST_ID.clone()))
            .layer(in_flight)
            .layer(CatchPanicLayer::custom(|_| {
                axum::response::IntoResponse::into_response(Error::internal("handler panicked"))
            }))
            .layer(axum::middleware::from_fn(one_connection))
            // Around the router: a preflight is answered before routing (no route takes
            // OPTIONS), and every answer to a listed origin carries its headers.
            .option_layer(cors),
    )
}

/// Runs the request with one PostgreSQL connection for all its statements (see
/// [`crate::store::postgres::conn`]); it goes back to the pool once the response is ready.
async fn one_connection(req: Request, next: Next) -> Response {
    crate::store::postgres::conn::with_request_connection(next.run(req)).await
}

/// Serves `state` on `listener` until `shutdown` resolves, then lets in-flight requests
/// finish (bounded by `shutdown_grace_secs`) and closes the store.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let grace = Duration::from_secs(state.settings.shutdown_grace_secs);
    let ready = state.ready.clone();
    let store = state.store.clone();
    let events = state.events.clone();
    let webhooks = state.webhooks.clone();
    let (stopping_tx, stopping_rx) = tokio::sync::oneshot::channel::<()>();
    let http = state.settings.http.clone();
    // Without a proxy's header the address is the TCP peer: counted per connection.
    let per_peer = state
        .settings
        .rate_limits
        .auth_failures
        .client_ip_header
        .is_empty()
        .then(|| state.open_per_address.clone());
    let app = router(state);
    let server = crate::connections::serve(listener, app, http, per_peer, async move {
        shutdown.await;
        ready.store(false, Ordering::Relaxed);
        tracing::info!("shutting down: finishing in-flight requests");
        // Event streams never finish by themselves: end them, their clients reconnect.
        events.stop();
        // Deliveries under way are dropped unsaved: sent again by whoever leases next.
        webhooks.stop();
        let _ = stopping_tx.send(());
    });
    tokio::pin!(server);
    let served = tokio::select! {
        result = &mut server => result,
        _ = async {
            let _ = stopping_rx.await;
            tokio::time::sleep(grace).await;
        } => {
            tracing::warn!("grace period over; dropping remaining requests");
            Ok(())
        }
    };
    store.close().await;
    served
}

/// Resolves on SIGINT (Ctrl-C) or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
}
