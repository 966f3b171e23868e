//! Live events (CONTRACT.md 10): the changes of a workspace as they commit, to any number of
//! viewers, over Server-Sent Events.
//!
//! The store appends every event to its log in the change's own transaction and then says
//! which workspace has news ([`crate::store::Commits`]: in process on SQLite, through
//! `LISTEN/NOTIFY` from every replica on PostgreSQL). Per watched workspace one [`Feed`]
//! reads the new events from the log, formats each once, and hands the same bytes to every
//! viewer through a bounded broadcast: writers never wait for viewers, and a viewer that
//! falls a whole buffer behind is ended and resumes with `Last-Event-ID`.

mod feed;
mod frame;
mod kind;
mod resume;
mod stream;
mod token;

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, Weak},
    time::Duration,
};

use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use crate::{
    datasets::DatasetRecord,
    error::{Error, Result},
    metrics::{Limit, Metrics, Sweep},
    pinboards::BoardWithPins,
    pins::PinRecord,
    store::{Dataset, Pin, Pinboard, PlacedPin, Render, Store},
};
pub(crate) use feed::{Delivery, Feed};
pub(crate) use frame::{data_json, Frame, FrameData};
pub use kind::{EventKind, Resource};
pub use stream::{Filter, Resume, RETRY_MS};

/// `[events]` settings.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct EventSettings {
    /// Open streams per credential (API key or user), per replica.
    pub max_streams_per_key: usize,
    /// Open streams per workspace, all its credentials together, per replica: a `*` key
    /// can mint keys, each with its own `max_streams_per_key`.
    pub max_streams_per_workspace: usize,
    /// Open share streams (`/share/{id}/events`) per client address, per replica.
    pub max_share_streams_per_address: usize,
    /// How long the log keeps events: the furthest back a client can resume.
    pub retention_secs: u64,
    /// Seconds between `: keep-alive` comments on every stream, whether or not events went
    /// out meanwhile (CONTRACT.md 10: at least this often).
    pub heartbeat_secs: u64,
    /// Events a viewer may have unread before it is ended (it resumes by its last id).
    pub buffer: usize,
}

/// The records events carry, as the API's GETs render them.
pub struct Records {
    public_base: String,
}

impl Records {
    /// The renderer the store is opened with.
    pub fn shared(public_base: &str) -> Arc<dyn Render> {
        Arc::new(Records {
            public_base: public_base.to_owned(),
        })
    }
}

impl Render for Records {
    fn pin(&self, pin: &Pin) -> Result<String> {
        serde_json::to_string(&PinRecord::new(pin, &self.public_base)?).map_err(Error::internal)
    }

    fn pin_status(&self, pin: &Pin, previous: Option<&str>) -> Result<String> {
        serde_json::to_string(&StatusChange {
            record: PinRecord::new(pin, &self.public_base)?,
            previous_status: previous,
        })
        .map_err(Error::internal)
    }

    fn board(&self, board: &Pinboard, pins: &[PlacedPin]) -> Result<String> {
        serde_json::to_string(&BoardWithPins::new(board, pins, &self.public_base)?)
            .map_err(Error::internal)
    }

    fn dataset(&self, dataset: &Dataset) -> Result<String> {
        serde_json::to_string(&DatasetRecord::new(dataset)?).map_err(Error::internal)
    }
}

/// What a `pin.status` event carries: the pin's record and the status it had before.
#[derive(Serialize)]
struct StatusChange<'a> {
    #[serde(flatten)]
    record: PinRecord,
    previous_status: Option<&'a str>,
}

/// One replica's live side: the feeds of the workspaces someone watches, the open streams
/// per credential, workspace and share viewer's address, and the switch that ends every
/// stream at shutdown.
pub struct Hub {
    store: Store,
    settings: EventSettings,
    feeds: Mutex<HashMap<String, Weak<Feed>>>,
    open: Mutex<HashMap<Counted, usize>>,
    stop: watch::Sender<bool>,
    /// The share streams' ids, once read from the store.
    share_ids: tokio::sync::OnceCell<token::ShareIds>,
    /// Where streams are counted: open, frames delivered, ended for lag, refused.
    metrics: Arc<Metrics>,
    /// Wakes the status sweep: a write has marked pins for it.
    statuses: tokio::sync::Notify,
}

impl Hub {
    pub fn new(store: Store, settings: EventSettings, metrics: Arc<Metrics>) -> Arc<Hub> {
        Arc::new(Hub {
            store,
            settings,
            feeds: Mutex::default(),
            open: Mutex::default(),
            stop: watch::channel(false).0,
            share_ids: tokio::sync::OnceCell::new(),
            metrics,
            statuses: tokio::sync::Notify::new(),
        })
    }

    pub fn settings(&self) -> &EventSettings {
        &self.settings
    }

    /// Ends every stream (clients reconnect elsewhere) and refuses new ones.
    pub fn stop(&self) {
        self.stop.send_replace(true);
    }

    /// The feed of workspace `ws`, started when nobody watched it yet.
    pub(crate) async fn feed(&self, ws: &str) -> Result<Arc<Feed>> {
        if let Some(feed) = self.live_feed(ws) {
            return Ok(feed);
        }
        let (_, newest) = self.store.event_bounds().await?;
        let mut feeds = self.feeds.lock().map_err(|_| poisoned())?;
        if let Some(feed) = feeds.get(ws).and_then(Weak::upgrade) {
            return Ok(feed);
        }
        let feed = Arc::new(Feed::start(
            self.store.clone(),
            ws,
            newest,
            self.settings.buffer.max(1),
            Duration::from_secs(self.settings.heartbeat_secs.max(1)),
            self.stop.subscribe(),
        ));
        feeds.retain(|_, f| f.strong_count() > 0);
        feeds.insert(ws.to_owned(), Arc::downgrade(&feed));
        Ok(feed)
    }

    fn live_feed(&self, ws: &str) -> Option<Arc<Feed>> {
        self.feeds.lock().ok()?.get(ws).and_then(Weak::upgrade)
    }

    /// Counts a stream of `subject` (an API key or user) in workspace `ws` against both
    /// `events.max_streams_per_key` and `events.max_streams_per_workspace`; the stream holds
    /// the [`Admission`] while it is open. 429 when either is reached.
    pub(crate) fn admit(self: &Arc<Self>, subject: &str, ws: &str) -> Result<Admission> {
        self.count(vec![
            Counted::Credential(subject.to_owned()),
            Counted::Workspace(ws.to_owned()),
        ])
    }

    /// Counts a share stream (no credential) against its client address's
    /// `events.max_share_streams_per_address`, and nothing else: anonymous viewers can't use
    /// up the places of the workspace's own keys and users. 429 beyond.
    pub(crate) fn admit_share(self: &Arc<Self>, address: &str) -> Result<Admission> {
        self.count(vec![Counted::ShareAddress(address.to_owned())])
    }

    /// One more stream for each of `counted`, when none is at its cap; otherwise none.
    fn count(self: &Arc<Self>, counted: Vec<Counted>) -> Result<Admission> {
        let mut open = self.open.lock().map_err(|_| poisoned())?;
        for place in &counted {
            let (limit, per) = place.cap(&self.settings);
            if open.get(place).copied().unwrap_or(0) >= limit {
                self.metrics.refused(Limit::Streams);
                return Err(Error::TooManyStreams {
                    limit: u32::try_from(limit).unwrap_or(u32::MAX),
                    per,
                });
            }
        }
        for place in &counted {
            *open.entry(place.clone()).or_default() += 1;
        }
        Ok(Admission {
            hub: self.clone(),
            counted,
        })
    }

    /// Logs the `pin.stale` events that are due, every `check_secs`, while the hub lives
    /// (CONTRACT.md 15). Each replica sweeps; the store hands each due pin to one of them.
    pub fn sweep_stale_in_background(self: &Arc<Self>, check_secs: u64) {
        /// Pins one sweep's transaction takes; a sweep goes on while it takes that many.
        const SWEEP: i64 = 500;
        let hub = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut every = tokio::time::interval(Duration::from_secs(check_secs));
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                every.tick().await;
                let Some(hub) = hub.upgrade() else { return };
                loop {
                    let started = std::time::Instant::now();
                    let swept = hub.store.sweep_stale(crate::clock::now_ms(), SWEEP).await;
                    hub.metrics.swept(Sweep::Stale, started.elapsed());
                    match swept {
                        Ok(swept) if swept == SWEEP => continue,
                        Ok(_) => break,
                        Err(e) => {
                            tracing::warn!(error = %e, "logging stale pins");
                            break;
                        }
                    }
                }
            }
        });
    }

    /// Asks the status sweep to run now: a dataset changed, or a templated pin with status
    /// rules was written (either marked pins for it).
    pub fn statuses_due(&self) {
        self.statuses.notify_one();
    }

    /// Reads the pins marked for it against their datasets ([`crate::pins::status::sweep`])
    /// when woken by [`Hub::statuses_due`], and every `check_secs` for the marks of other
    /// replicas' writes, while the hub lives.
    pub fn sweep_statuses_in_background(self: &Arc<Self>, check_secs: u64, retention: u32) {
        /// Marks one sweep reads; a sweep goes on while it reads that many.
        const SWEEP: i64 = 200;
        let hub = Arc::downgrade(self);
        tokio::spawn(async move {
            let every = Duration::from_secs(check_secs.max(1));
            loop {
                let Some(hub) = hub.upgrade() else { return };
                loop {
                    let started = std::time::Instant::now();
                    let swept = crate::pins::status::sweep(&hub.store, retention, SWEEP).await;
                    hub.metrics.swept(Sweep::Status, started.elapsed());
                    match swept {
                        Ok(read) if i64::try_from(read) == Ok(SWEEP) => continue,
                        Ok(_) => break,
                        Err(e) => {
                            tracing::warn!(error = %e, "reading statuses again");
                            break;
                        }
                    }
                }
                let _ = tokio::time::timeout(every, hub.statuses.notified()).await;
            }
        });
    }

    /// Removes events older than the retention, every minute, while the hub lives.
    pub fn prune_in_background(self: &Arc<Self>) {
        let hub = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut every = tokio::time::interval(Duration::from_secs(60));
            loop {
                every.tick().await;
                let Some(hub) = hub.upgrade() else { return };
                let retention = i64::try_from(hub.settings.retention_secs.saturating_mul(1000))
                    .unwrap_or(i64::MAX);
                let before = crate::clock::now_ms().saturating_sub(retention);
                if let Err(e) = hub.store.prune_events(before).await {
                    tracing::warn!(error = %e, "pruning the event log");
                }
            }
        });
    }
}

fn poisoned() -> Error {
    Error::internal("events hub lock poisoned")
}

/// What open streams are counted against, each with its cap.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Counted {
    Credential(String),
    Workspace(String),
    ShareAddress(String),
}

impl Counted {
    /// The cap, and what it is per (the 429's `details.per`).
    fn cap(&self, settings: &EventSettings) -> (usize, &'static str) {
        match self {
            Counted::Credential(_) => (settings.max_streams_per_key, "credential"),
            Counted::Workspace(_) => (settings.max_streams_per_workspace, "workspace"),
            Counted::ShareAddress(_) => (settings.max_share_streams_per_address, "address"),
        }
    }
}

/// An open stream, counted until dropped.
pub(crate) struct Admission {
    hub: Arc<Hub>,
    counted: Vec<Counted>,
}

impl Drop for Admission {
    fn drop(&mut self) {
        if let Ok(mut open) = self.hub.open.lock() {
            for place in &self.counted {
                if let Some(count) = open.get_mut(place) {
                    *count = count.saturating_sub(1);
                    if *count == 0 {
                        open.remove(place);
                    }
                }
            }
        }
    }
}
