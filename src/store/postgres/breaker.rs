//! A circuit breaker for PostgreSQL outages. Without one, every request during an outage
//! waits out the pool's whole acquire timeout (5 s) before its 503, clients pile up, and
//! `/readyz` can't answer in time for a load balancer to notice.
//!
//! A request that waits on the pool for longer than [`SUSPECT_AFTER`] asks whether the
//! database accepts connections at all (one probe at a time, its answer shared for
//! [`PROBE_FRESH`]). If it doesn't, the breaker opens: the waiting request and every request
//! after it get their 503 at once, and a background task probes every [`RETRY_EVERY`] until a
//! connection succeeds, which closes the breaker. The pool then opens new connections as
//! requests need them. A pool that is merely busy answers the probe, so its requests keep
//! waiting as before.

use std::{
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

use sqlx::{postgres::PgConnectOptions, Connection, PgConnection};
use tokio::sync::Mutex;

/// How long a request waits on the pool before the database's reachability is checked.
pub(super) const SUSPECT_AFTER: Duration = Duration::from_millis(250);
/// How long a probe may take to connect.
const PROBE_TIMEOUT: Duration = Duration::from_millis(800);
/// How long a probe's answer stands for the other waiting requests.
const PROBE_FRESH: Duration = Duration::from_millis(500);
/// Time between probes while the breaker is open.
const RETRY_EVERY: Duration = Duration::from_millis(250);

#[derive(Default)]
pub(super) struct Breaker {
    open: AtomicBool,
    recovering: AtomicBool,
    last_probe: Mutex<Option<(Instant, bool)>>,
}

impl Breaker {
    /// Whether the database is known to be unreachable (requests fail at once).
    pub(super) fn is_open(&self) -> bool {
        self.open.load(Ordering::Acquire)
    }

    /// Whether the database accepts a connection, probed at most once per [`PROBE_FRESH`]
    /// however many requests ask; opens the breaker when it doesn't.
    pub(super) async fn reachable(self: &Arc<Self>, options: &PgConnectOptions) -> bool {
        let mut last = self.last_probe.lock().await;
        if let Some((at, reachable)) = *last {
            if at.elapsed() < PROBE_FRESH {
                return reachable;
            }
        }
        let reachable = probe(options).await;
        *last = Some((Instant::now(), reachable));
        drop(last);
        if !reachable {
            self.trip(options.clone());
        }
        reachable
    }

    /// Opens the breaker and starts the task that closes it once the database is back.
    fn trip(self: &Arc<Self>, options: PgConnectOptions) {
        self.open.store(true, Ordering::Release);
        if self.recovering.swap(true, Ordering::AcqRel) {
            return;
        }
        tracing::warn!("PostgreSQL unreachable: answering 503 until it accepts connections");
        let breaker = Arc::clone(self);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(RETRY_EVERY).await;
                if probe(&options).await {
                    break;
                }
            }
            *breaker.last_probe.lock().await = None;
            breaker.open.store(false, Ordering::Release);
            breaker.recovering.store(false, Ordering::Release);
            tracing::info!("PostgreSQL reachable again");
        });
    }
}

/// Whether a new connection to the database succeeds within [`PROBE_TIMEOUT`].
async fn probe(options: &PgConnectOptions) -> bool {
    match tokio::time::timeout(PROBE_TIMEOUT, PgConnection::connect_with(options)).await {
        Ok(Ok(conn)) => {
            let _ = conn.close().await;
            true
        }
        _ => false,
    }
}
