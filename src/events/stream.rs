//! One viewer's stream: the missed events (when it resumes), then the live ones that pass its
//! filters, with a heartbeat, until it falls a buffer behind, the client goes, or the
//! server shuts down.
//!
//! The missed events are read from the log a page at a time as the client takes them, so a
//! viewer resuming far back holds one page, not its whole backlog; while it reads the log,
//! the live frames it would have missed are in the log too, so falling behind the broadcast
//! then costs nothing (it subscribes again), and only a viewer already on the live frames is
//! ended for falling a buffer behind.

use std::{collections::VecDeque, convert::Infallible, sync::Arc, time::Duration};

use axum::body::{Body, Bytes};
use tokio::sync::{broadcast, watch};

use super::{token::ShareIds, Admission, Delivery, EventKind, Feed, Frame, Hub, Resource};
use crate::{
    error::Result,
    metrics::{OpenStream, StreamKind},
    store::Store,
};

/// The reconnection delay offered to clients (`retry:`), ms.
pub const RETRY_MS: u32 = 2000;
/// Events of the log read at a time while catching up.
const BACKLOG_PAGE: i64 = 500;

/// Which events a viewer wants: each list empty means any; a frame must pass all three.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub pin_ids: Vec<String>,
    pub pinboard_ids: Vec<String>,
    pub types: Vec<EventKind>,
    /// Also pass a data-less notice (`{"type","at"}`) of every dataset change of the
    /// workspace: what a page whose templates may name a dataset needs to redraw, without
    /// showing the dataset (a board's collaborators may not read it).
    pub dataset_notices: bool,
}

impl Filter {
    fn passes(&self, frame: &Frame) -> bool {
        (self.types.is_empty() || self.types.contains(&frame.kind))
            && (self.pin_ids.is_empty()
                || (frame.kind.resource() == Resource::Pin
                    && self.pin_ids.contains(&frame.resource_id)))
            && (self.pinboard_ids.is_empty()
                || frame.boards.iter().any(|b| self.pinboard_ids.contains(b)))
    }
}

/// Where a viewer starts.
#[derive(Debug, Clone)]
pub enum Resume {
    /// Only what commits from now on.
    Live,
    /// Everything after this id (the client's `Last-Event-ID`): an event id, or on a share
    /// stream the token of one (`events/token.rs`).
    After(String),
}

/// What a share stream follows: its item, which must stay public, and its workspace, whose
/// ids it seals.
struct Shared {
    item: String,
    ws: String,
    store: Store,
    ids: ShareIds,
}

struct Viewer {
    /// Held so the feed runs while someone watches (it stops with its last viewer).
    _feed: Arc<Feed>,
    frames: broadcast::Receiver<Delivery>,
    filter: Filter,
    /// To send before anything else.
    queued: VecDeque<Bytes>,
    /// The last id delivered: live frames up to it came through the backlog.
    delivered: i64,
    /// While the viewer catches up: the workspace whose log it reads after `delivered`.
    backlog: Option<(String, Store)>,
    /// Ticks every `events.heartbeat_secs` whether or not frames went out: CONTRACT.md 10's
    /// comment "at least every" that often, without a timer reset per frame.
    heartbeat: tokio::time::Interval,
    /// Read before waiting on `frames`; once waiting, the feed's [`Delivery::Stop`] ends it.
    stop: watch::Receiver<bool>,
    /// Whether `stop` was read since `frames` was (re)subscribed: a stop said before the
    /// subscription is not in it.
    stop_read: bool,
    /// A share stream's item: frames carry what its page shows under sealed ids, and the
    /// stream ends when the item stops being public.
    share: Option<Shared>,
    _admission: Admission,
    /// Counted open until the stream ends; counts its frames and an end for lag.
    counted: OpenStream,
}

impl Hub {
    /// The body of a stream of workspace `ws`'s events for an admitted viewer.
    pub(crate) async fn stream(
        self: &Arc<Self>,
        ws: &str,
        filter: Filter,
        resume: Resume,
        admission: Admission,
    ) -> Result<Body> {
        self.open(ws, filter, resume, admission, None).await
    }

    /// The body of the share stream of public item `id` (a pin, or a board and the pins
    /// placed on it) of workspace `ws`.
    pub(crate) async fn share_stream(
        self: &Arc<Self>,
        ws: &str,
        id: &str,
        resume: Resume,
        admission: Admission,
    ) -> Result<Body> {
        let mut filter = Filter::default();
        if id.starts_with("pb-") {
            filter.pinboard_ids.push(id.to_owned());
        } else {
            filter.pin_ids.push(id.to_owned());
        }
        let share = Shared {
            item: id.to_owned(),
            ws: ws.to_owned(),
            store: self.store.clone(),
            ids: self.share_ids().await?.clone(),
        };
        self.open(ws, filter, resume, admission, Some(share)).await
    }

    async fn open(
        self: &Arc<Self>,
        ws: &str,
        filter: Filter,
        resume: Resume,
        admission: Admission,
        share: Option<Shared>,
    ) -> Result<Body> {
        let feed = self.feed(ws).await?;
        // Subscribed before the log is read: whatever commits meanwhile is in one or both,
        // and the ids keep it from being sent twice.
        let frames = feed.subscribe();
        let mut queued = VecDeque::from([Bytes::from(format!("retry: {RETRY_MS}\n\n"))]);
        let mut delivered = 0;
        let mut backlog = None;
        if let Resume::After(last) = resume {
            let last = match &share {
                Some(shared) => shared.ids.open(ws, &last),
                None => last.trim().parse::<i64>().ok(),
            };
            match self.resumable(last).await? {
                Some(after) => {
                    delivered = after;
                    backlog = Some((ws.to_owned(), self.store.clone()));
                }
                None => queued.push_back(Bytes::from(
                    "event: reset\ndata: {\"reason\":\"the last event id is unknown or older than \
                     the log keeps: read the state again, then follow the stream\"}\n\n",
                )),
            }
        }
        let every = Duration::from_secs(self.settings.heartbeat_secs.max(1));
        let mut heartbeat = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let kind = match (&share, filter.dataset_notices) {
            (Some(_), _) => StreamKind::SharePage,
            (None, true) => StreamKind::BoardPage,
            (None, false) => StreamKind::Api,
        };
        let viewer = Viewer {
            counted: self.metrics.stream_opened(kind),
            _feed: feed,
            frames,
            filter,
            queued,
            delivered,
            backlog,
            heartbeat,
            stop: self.stop.subscribe(),
            stop_read: false,
            share,
            _admission: admission,
        };
        Ok(Body::from_stream(futures_util::stream::unfold(
            viewer,
            |mut viewer| async move {
                viewer
                    .next()
                    .await
                    .map(|bytes| (Ok::<_, Infallible>(bytes), viewer))
            },
        )))
    }

    /// The id after which a resuming viewer continues, or `None` when it is unknown (not an
    /// id, or not a token of this share stream's workspace), newer than the newest, or older
    /// than the log keeps (the viewer is sent `reset`).
    async fn resumable(&self, last: Option<i64>) -> Result<Option<i64>> {
        let Some(last) = last else {
            return Ok(None);
        };
        let (oldest, newest) = self.store.event_bounds().await?;
        let pruned = oldest > 0 && last < oldest - 1;
        Ok((last >= 0 && last <= newest && !pruned).then_some(last))
    }
}

impl Viewer {
    /// The next bytes to send; `None` ends the stream.
    async fn next(&mut self) -> Option<Bytes> {
        loop {
            if let Some(bytes) = self.queued.pop_front() {
                return Some(bytes);
            }
            if !self.stop_read {
                if *self.stop.borrow() {
                    return None;
                }
                self.stop_read = self.backlog.is_none();
            }
            if self.backlog.is_none() {
                return self.live().await;
            }
            self.read_backlog().await?;
        }
    }

    /// Queues the next page of the log after `delivered`; when it is the last, the viewer
    /// goes on with the live frames. `None` when the log can't be read (the client resumes).
    async fn read_backlog(&mut self) -> Option<()> {
        let (ws, store) = self.backlog.as_ref()?;
        // What the broadcast holds is in the log as well, after `delivered`: start it afresh,
        // so a long catch-up never falls a buffer behind.
        self.frames = self.frames.resubscribe();
        self.stop_read = false;
        let events = match store.events_after(ws, self.delivered, BACKLOG_PAGE).await {
            Ok(events) => events,
            Err(e) => {
                tracing::warn!(error = %e, "reading the event log for a resuming viewer");
                return None;
            }
        };
        if (events.len() as i64) < BACKLOG_PAGE {
            self.backlog = None;
        }
        for event in events {
            self.delivered = event.seq;
            let frame = match Frame::of(event) {
                Ok(frame) => frame,
                Err(e) => {
                    tracing::warn!(error = %e, seq = self.delivered, "formatting an event");
                    continue;
                }
            };
            if let Some(bytes) = self.bytes_of(&frame) {
                self.counted.delivered();
                self.queued.push_back(bytes);
            }
        }
        Some(())
    }

    /// What this viewer is sent of `frame`, if anything.
    fn bytes_of(&self, frame: &Frame) -> Option<Bytes> {
        // Share streams and pages also pass a data-less notice of their workspace's dataset
        // changes: a page's templates may name the dataset.
        let notice = frame.is_dataset() && self.for_page();
        if !(self.filter.passes(frame) || notice) {
            return None;
        }
        let bytes = match &self.share {
            Some(shared) => frame.share_bytes(|seq| shared.ids.seal(&shared.ws, seq)),
            None if notice => frame.notice_bytes(),
            None => return Some(frame.bytes.clone()),
        };
        bytes
            .inspect_err(
                |e| tracing::warn!(error = %e, seq = frame.seq, "formatting a public event"),
            )
            .ok()
    }

    /// Whether a page's script follows this stream (a share page's, or a signed-in board
    /// page's): it gets dataset notices and named heartbeats.
    fn for_page(&self) -> bool {
        self.share.is_some() || self.filter.dataset_notices
    }

    /// The next live frame for this viewer (or a heartbeat); `None` ends the stream.
    async fn live(&mut self) -> Option<Bytes> {
        loop {
            tokio::select! {
                biased;
                frame = self.frames.recv() => match frame {
                    Ok(Delivery::Frame(frame)) if frame.seq > self.delivered => {
                        self.delivered = frame.seq;
                        let Some(bytes) = self.bytes_of(&frame) else { continue };
                        // The shared item itself changed: it may have stopped being public.
                        if let Some(Shared { item, store, .. }) = &self.share {
                            if frame.resource_id == *item
                                && !matches!(store.shared_workspace(item).await, Ok(Some(_)))
                            {
                                return None;
                            }
                        }
                        self.counted.delivered();
                        return Some(bytes);
                    }
                    Ok(Delivery::Frame(_)) => {}
                    Ok(Delivery::Stop) => return None,
                    // A buffer behind (or the feed is gone): end; the client resumes.
                    Err(lag) => {
                        if matches!(lag, broadcast::error::RecvError::Lagged(_)) {
                            self.counted.lagged();
                        }
                        return None;
                    }
                },
                _ = self.heartbeat.tick() => return Some(if self.for_page() {
                    // Pages' scripts see a named event (EventSource hides comments), which
                    // tells them the connection is alive.
                    Bytes::from_static(b": keep-alive\n\nevent: heartbeat\ndata: {}\n\n")
                } else {
                    Bytes::from_static(b": keep-alive\n\n")
                }),
            }
        }
    }
}
