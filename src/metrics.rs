//! What `GET /metrics` shows (CONTRACT.md 18), in Prometheus text format.
//!
//! Each [`crate::app::AppState`] keeps its own [`Metrics`] (one registry of the `prometheus`
//! crate): a replica's numbers are its own, and so are each test server's. Families with a
//! fixed set of labels (stream kinds, limits, status classes) resolve their children once
//! here, so counting is one atomic add; only requests by route take the crate's lookup (a
//! hash and a read lock). Gauges that a scrape can read off something else (store pools, the
//! store answering) are set when rendering, not kept up to date by the code they describe.
//!
//! Labels never carry a workspace, key, pin, board or user id: routes are the matched
//! templates (`/v1/pins/{id}`), requests that matched none are `unmatched`, and methods
//! outside the standard ones are `other`.
//!
//! Webhook deliveries are counted by outcome (`delivered`, `failed`), never by webhook.

use std::{
    sync::{Arc, LazyLock},
    task::{ready, Context, Poll},
    time::{Duration, Instant},
};

use axum::{
    extract::MatchedPath,
    http::{Method, Request, Response, StatusCode},
};
use pin_project_lite::pin_project;
use prometheus::{
    core::Collector, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge,
    IntGaugeVec, Opts, Registry, TextEncoder,
};

/// Upper bounds of the latency histogram, seconds.
const BUCKETS: [f64; 10] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0];
/// Upper bounds of the webhook delivery histogram, seconds (a receiver has 10 s).
const WEBHOOK_BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];
const CLASSES: [&str; 5] = ["1xx", "2xx", "3xx", "4xx", "5xx"];
/// Methods counted by name; any other is `other`, so a client can't add label values.
const METHODS: [&str; 7] = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
/// Why the definitions below can't fail.
const CONSTANT: &str = "metric names, labels and buckets are constants, registered once each";

/// Events this process appended to the log. Process-wide, unlike the rest: appends happen
/// inside the stores' transactions ([`crate::store`]'s `append_events`), which hold a
/// connection but neither the store nor the application; every [`Metrics`] shows this one.
static EVENTS_LOGGED: LazyLock<IntCounter> = LazyLock::new(|| {
    IntCounter::new(
        "corkboard_events_logged_total",
        "Events appended to the event log by this process.",
    )
    .expect(CONSTANT)
});

/// Counts `n` events appended to the log, once their statement has run: before the commit,
/// so the rare transaction that fails after its append (it is the last statement) is
/// counted too.
pub(crate) fn logged(n: usize) {
    EVENTS_LOGGED.inc_by(n as u64);
}

/// The kinds of open event stream.
#[derive(Debug, Clone, Copy)]
pub enum StreamKind {
    /// `GET /v1/events`.
    Api,
    /// A share page's stream (`/share/{id}/events`).
    SharePage,
    /// A signed-in board page's stream.
    BoardPage,
}

impl StreamKind {
    const ALL: [StreamKind; 3] = [
        StreamKind::Api,
        StreamKind::SharePage,
        StreamKind::BoardPage,
    ];

    fn label(self) -> &'static str {
        match self {
            StreamKind::Api => "api",
            StreamKind::SharePage => "share_page",
            StreamKind::BoardPage => "board_page",
        }
    }
}

/// The limits a request or connection can be refused by, each by its own name.
#[derive(Debug, Clone, Copy)]
pub enum Limit {
    /// A key's tier minute, hour and write bucket (the 429's `details.window`).
    Minute,
    Hour,
    Write,
    /// A hook's minute (`hooks.per_minute`).
    Hook,
    /// An address's failed credentials (`rate_limits.auth_failures`).
    AuthFailures,
    /// Page requests per address or user (`rate_limits.share`).
    Share,
    /// Open event streams per credential, workspace or share viewer (`events.max_*`).
    Streams,
    /// Connections (or requests in flight) per address (`http.max_connections_per_address`).
    Connections,
}

impl Limit {
    const ALL: [Limit; 8] = [
        Limit::Minute,
        Limit::Hour,
        Limit::Write,
        Limit::Hook,
        Limit::AuthFailures,
        Limit::Share,
        Limit::Streams,
        Limit::Connections,
    ];

    /// The tier window a key's 429 names (`minute`, `hour`, `write`).
    pub fn of_window(window: &str) -> Limit {
        match window {
            "hour" => Limit::Hour,
            "write" => Limit::Write,
            _ => Limit::Minute,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Limit::Minute => "minute",
            Limit::Hour => "hour",
            Limit::Write => "write",
            Limit::Hook => "hook",
            Limit::AuthFailures => "auth_failures",
            Limit::Share => "share",
            Limit::Streams => "streams",
            Limit::Connections => "connections",
        }
    }
}

/// One connection pool of the store, as a scrape finds it.
pub struct PoolUse {
    /// `sqlite_writer`, `sqlite_reader` or `postgres`.
    pub pool: &'static str,
    /// Connections the pool holds open.
    pub open: u32,
    /// Of those, the ones a request or task is using.
    pub in_use: u32,
}

/// The background sweeps of the signals (CONTRACT.md 15), timed per run.
#[derive(Debug, Clone, Copy)]
pub enum Sweep {
    /// Pins whose expected push is overdue (`pin.stale`).
    Stale,
    /// Pins whose status must be read again (`pin.status`).
    Status,
}

impl Sweep {
    const ALL: [Sweep; 2] = [Sweep::Stale, Sweep::Status];

    fn label(self) -> &'static str {
        match self {
            Sweep::Stale => "stale",
            Sweep::Status => "status",
        }
    }
}

/// Upper bounds of the sweep histogram, seconds: a sweep that finds nothing is one indexed
/// read, well under a millisecond, once it has a connection (under load, waiting for one can
/// take far longer).
const SWEEP_BUCKETS: [f64; 12] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0,
];

/// The counters and gauges of one application.
pub struct Metrics {
    registry: Registry,
    by_class: [IntCounter; CLASSES.len()],
    latency: Histogram,
    by_route: IntCounterVec,
    streams: [IntGauge; StreamKind::ALL.len()],
    delivered: IntCounter,
    lagged: IntCounter,
    refused: [IntCounter; Limit::ALL.len()],
    /// Webhook delivery attempts: delivered, failed.
    webhook_deliveries: [IntCounter; 2],
    webhook_duration: Histogram,
    store_up: IntGaugeVec,
    pool_open: IntGaugeVec,
    pool_in_use: IntGaugeVec,
    sweeps: [Histogram; Sweep::ALL.len()],
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        let registry = Registry::new();
        let add = |collector: Box<dyn Collector>| registry.register(collector).expect(CONSTANT);
        let counters = |name: &str, help: &str, label: &str| {
            let family = IntCounterVec::new(Opts::new(name, help), &[label]).expect(CONSTANT);
            add(Box::new(family.clone()));
            family
        };
        let gauges = |name: &str, help: &str, label: &str| {
            let family = IntGaugeVec::new(Opts::new(name, help), &[label]).expect(CONSTANT);
            add(Box::new(family.clone()));
            family
        };
        let counter = |name: &str, help: &str| {
            let counter = IntCounter::new(name, help).expect(CONSTANT);
            add(Box::new(counter.clone()));
            counter
        };

        let by_class = counters(
            "corkboard_http_requests_total",
            "HTTP requests answered, by status class.",
            "class",
        );
        let latency = Histogram::with_opts(
            HistogramOpts::new(
                "corkboard_http_request_duration_seconds",
                "Time to answer a request.",
            )
            .buckets(BUCKETS.to_vec()),
        )
        .expect(CONSTANT);
        add(Box::new(latency.clone()));
        let by_route = IntCounterVec::new(
            Opts::new(
                "corkboard_http_requests_by_route_total",
                "HTTP requests answered, by method, matched route template and status.",
            ),
            &["method", "route", "status"],
        )
        .expect(CONSTANT);
        add(Box::new(by_route.clone()));
        let streams = gauges(
            "corkboard_event_streams_open",
            "Event streams open now, by kind.",
            "kind",
        );
        let refused = counters(
            "corkboard_rate_limit_refusals_total",
            "Requests or connections refused by a limit, by the limit.",
            "limit",
        );
        add(Box::new(EVENTS_LOGGED.clone()));
        let sweeps = HistogramVec::new(
            HistogramOpts::new(
                "corkboard_sweep_duration_seconds",
                "Time one run of a background sweep took (its store statements), by sweep.",
            )
            .buckets(SWEEP_BUCKETS.to_vec()),
            &["sweep"],
        )
        .expect(CONSTANT);
        add(Box::new(sweeps.clone()));
        let webhook_deliveries = counters(
            "corkboard_webhook_deliveries_total",
            "Attempts to deliver an event to a webhook, by outcome (delivered: a 2xx in time).",
            "outcome",
        );
        let webhook_duration = Histogram::with_opts(
            HistogramOpts::new(
                "corkboard_webhook_delivery_duration_seconds",
                "Time from sending an event to a webhook to its answer (or failure).",
            )
            .buckets(WEBHOOK_BUCKETS.to_vec()),
        )
        .expect(CONSTANT);
        add(Box::new(webhook_duration.clone()));
        Metrics {
            sweeps: Sweep::ALL.map(|sweep| sweeps.with_label_values(&[sweep.label()])),
            webhook_deliveries: ["delivered", "failed"]
                .map(|outcome| webhook_deliveries.with_label_values(&[outcome])),
            webhook_duration,
            by_class: CLASSES.map(|class| by_class.with_label_values(&[class])),
            latency,
            by_route,
            streams: StreamKind::ALL.map(|kind| streams.with_label_values(&[kind.label()])),
            delivered: counter(
                "corkboard_events_delivered_total",
                "Event frames written to viewers' streams.",
            ),
            lagged: counter(
                "corkboard_event_viewers_lagged_total",
                "Viewers ended for falling a whole buffer behind (they resume by their last id).",
            ),
            refused: Limit::ALL.map(|limit| refused.with_label_values(&[limit.label()])),
            store_up: gauges(
                "corkboard_store_up",
                "Whether the store answered a ping.",
                "backend",
            ),
            pool_open: gauges(
                "corkboard_store_connections_open",
                "Connections a store pool holds open.",
                "pool",
            ),
            pool_in_use: gauges(
                "corkboard_store_connections_in_use",
                "Connections of a store pool in use.",
                "pool",
            ),
            registry,
        }
    }

    /// Counts one answered request; `route` is its matched template or `unmatched`.
    pub fn record(&self, method: &Method, route: &str, status: StatusCode, latency: Duration) {
        let class = usize::from(status.as_u16() / 100).clamp(1, 5) - 1;
        self.by_class[class].inc();
        self.latency.observe(latency.as_secs_f64());
        let method = METHODS
            .into_iter()
            .find(|m| *m == method.as_str())
            .unwrap_or("other");
        if let Ok(counter) =
            self.by_route
                .get_metric_with_label_values(&[method, route, status.as_str()])
        {
            counter.inc();
        }
    }

    /// Counts a stream of `kind` as open until the returned guard is dropped.
    pub fn stream_opened(self: &Arc<Self>, kind: StreamKind) -> OpenStream {
        let open = self.streams[kind as usize].clone();
        open.inc();
        OpenStream {
            open,
            metrics: self.clone(),
        }
    }

    /// Times one run of `sweep`.
    pub fn swept(&self, sweep: Sweep, took: Duration) {
        self.sweeps[sweep as usize].observe(took.as_secs_f64());
    }

    /// Counts one attempt to deliver to a webhook, and how long it took.
    pub fn webhook_delivery(&self, delivered: bool, took: Duration) {
        self.webhook_deliveries[usize::from(!delivered)].inc();
        self.webhook_duration.observe(took.as_secs_f64());
    }

    /// Counts a refusal by `limit`.
    pub fn refused(&self, limit: Limit) {
        self.refused[limit as usize].inc();
    }

    /// The exposition text; `store_up` is whether the store answered just now, `pools` how
    /// its connection pools stand.
    pub fn render(&self, backend: &str, store_up: bool, pools: &[PoolUse]) -> String {
        self.store_up
            .with_label_values(&[backend])
            .set(i64::from(store_up));
        for pool in pools {
            let open = self.pool_open.with_label_values(&[pool.pool]);
            open.set(i64::from(pool.open));
            let in_use = self.pool_in_use.with_label_values(&[pool.pool]);
            in_use.set(i64::from(pool.in_use));
        }
        let mut out = String::with_capacity(8 * 1024);
        if let Err(e) = TextEncoder::new().encode_utf8(&self.registry.gather(), &mut out) {
            tracing::error!(error = %e, "encoding the metrics");
        }
        out
    }
}

/// An open event stream: counted in its kind's gauge until dropped, and where the stream
/// counts the frames it delivers and its end for lag.
pub struct OpenStream {
    open: IntGauge,
    metrics: Arc<Metrics>,
}

impl OpenStream {
    /// Counts one event frame handed to the viewer.
    pub fn delivered(&self) {
        self.metrics.delivered.inc();
    }

    /// Counts the viewer ended for falling a buffer behind.
    pub fn lagged(&self) {
        self.metrics.lagged.inc();
    }
}

impl Drop for OpenStream {
    fn drop(&mut self) {
        self.open.dec();
    }
}

/// Counts every response by method, route template and status, with its latency: a tower
/// layer of its own (no boxed future per request) inside the router's layers, where the
/// matched route is known.
#[derive(Clone)]
pub struct CountLayer(pub Arc<Metrics>);

impl<S> tower::Layer<S> for CountLayer {
    type Service = Count<S>;

    fn layer(&self, inner: S) -> Count<S> {
        Count {
            inner,
            metrics: self.0.clone(),
        }
    }
}

/// The service of [`CountLayer`].
#[derive(Clone)]
pub struct Count<S> {
    inner: S,
    metrics: Arc<Metrics>,
}

impl<S, In, Out> tower::Service<Request<In>> for Count<S>
where
    S: tower::Service<Request<In>, Response = Response<Out>>,
{
    type Response = Response<Out>;
    type Error = S::Error;
    type Future = Counted<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<In>) -> Self::Future {
        let method = req.method().clone();
        let route = req.extensions().get::<MatchedPath>().cloned();
        Counted {
            inner: self.inner.call(req),
            metrics: self.metrics.clone(),
            method,
            route,
            started: Instant::now(),
        }
    }
}

pin_project! {
    /// A request's response on its way, counted when it is ready.
    pub struct Counted<F> {
        #[pin]
        inner: F,
        metrics: Arc<Metrics>,
        method: Method,
        route: Option<MatchedPath>,
        started: Instant,
    }
}

impl<F, Out, E> std::future::Future for Counted<F>
where
    F: std::future::Future<Output = Result<Response<Out>, E>>,
{
    type Output = F::Output;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let result = ready!(this.inner.poll(cx));
        if let Ok(response) = &result {
            let route = this.route.as_ref().map_or("unmatched", MatchedPath::as_str);
            this.metrics.record(
                this.method,
                route,
                response.status(),
                this.started.elapsed(),
            );
        }
        Poll::Ready(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_class_route_and_bucket() {
        let m = Metrics::new();
        m.record(
            &Method::GET,
            "/v1/pins/{id}",
            StatusCode::OK,
            Duration::from_millis(2),
        );
        m.record(
            &Method::from_bytes(b"BREW").unwrap(),
            "unmatched",
            StatusCode::NOT_FOUND,
            Duration::from_millis(30),
        );
        let text = m.render("sqlite", true, &[]);
        assert!(text.contains("corkboard_http_requests_total{class=\"2xx\"} 1"));
        assert!(text.contains("corkboard_http_requests_total{class=\"4xx\"} 1"));
        assert!(text.contains(
            "corkboard_http_requests_by_route_total{method=\"GET\",route=\"/v1/pins/{id}\",status=\"200\"} 1"
        ));
        assert!(text.contains(
            "corkboard_http_requests_by_route_total{method=\"other\",route=\"unmatched\",status=\"404\"} 1"
        ));
        assert!(text.contains("corkboard_http_request_duration_seconds_bucket{le=\"0.0025\"} 1"));
        assert!(text.contains("corkboard_http_request_duration_seconds_bucket{le=\"0.05\"} 2"));
        assert!(text.contains("corkboard_http_request_duration_seconds_count 2"));
        assert!(text.contains("corkboard_store_up{backend=\"sqlite\"} 1"));
    }

    #[test]
    fn a_stream_is_open_until_its_guard_drops() {
        let m = Arc::new(Metrics::new());
        let stream = m.stream_opened(StreamKind::SharePage);
        stream.delivered();
        let text = m.render("sqlite", true, &[]);
        assert!(text.contains("corkboard_event_streams_open{kind=\"share_page\"} 1"));
        assert!(text.contains("corkboard_event_streams_open{kind=\"api\"} 0"));
        assert!(text.contains("corkboard_events_delivered_total 1"));
        drop(stream);
        let text = m.render("sqlite", true, &[]);
        assert!(text.contains("corkboard_event_streams_open{kind=\"share_page\"} 0"));
    }
}
