//! One watched workspace: reads its new events from the log when the store says it has
//! some, formats each once as an SSE frame, and broadcasts the shared bytes.

use std::{
    sync::{Arc, OnceLock},
    time::Duration,
};

use axum::body::Bytes;
use tokio::sync::broadcast::{self, error::RecvError};

use crate::store::{Event, Store};

/// Events read from the log at a time.
const PAGE: i64 = 500;

/// One event, ready to send: its SSE bytes and what the filters look at.
#[derive(Debug)]
pub(crate) struct Frame {
    pub seq: i64,
    pub event: String,
    pub resource_id: String,
    pub boards: Vec<String>,
    pub bytes: Bytes,
    /// What share streams send instead: the same frame with only what the share page
    /// shows (see [`Frame::public_bytes`]).
    public: OnceLock<Bytes>,
    /// The event without its record, and the record, kept for the public frame.
    head: String,
    at: i64,
    data: String,
}

impl Frame {
    pub(crate) fn of(e: Event) -> Frame {
        let mut head = format!(
            "{{\"type\":{},\"id\":{}",
            serde_json::Value::from(e.event.as_str()),
            serde_json::Value::from(e.resource_id.as_str())
        );
        if let Some(version) = e.version {
            head.push_str(&format!(",\"version\":{version}"));
        }
        head.push_str(&format!(",\"at\":\"{}\"", crate::clock::iso(e.at)));
        let bytes = frame_bytes(e.seq, &e.event, &head, &e.data);
        Frame {
            seq: e.seq,
            event: e.event,
            resource_id: e.resource_id,
            boards: e.boards,
            bytes,
            public: OnceLock::new(),
            head,
            at: e.at,
            data: e.data,
        }
    }

    pub(crate) fn is_dataset(&self) -> bool {
        self.event.starts_with("dataset.")
    }

    /// The frame as share streams send it: a pin as its share page shows it (type,
    /// configuration, layout, title, version, time), a board with its title, description
    /// and placed pins so; never tags, provenance or share settings; of a dataset change only
    /// its type and time (the page refetches; the data may not be shown at all). Built once
    /// per frame.
    pub(crate) fn public_bytes(&self) -> Bytes {
        self.public
            .get_or_init(|| {
                if self.is_dataset() {
                    return Bytes::from(format!(
                        "id: {}\nevent: {}\ndata: {{\"type\":{},\"at\":\"{}\"}}\n\n",
                        self.seq,
                        self.event,
                        serde_json::Value::from(self.event.as_str()),
                        crate::clock::iso(self.at)
                    ));
                }
                let record: serde_json::Value =
                    serde_json::from_str(&self.data).unwrap_or_default();
                let public = if self.event.starts_with("pinboard.") {
                    public_board(&record)
                } else {
                    public_pin(&record)
                };
                frame_bytes(self.seq, &self.event, &self.head, &public.to_string())
            })
            .clone()
    }
}

fn frame_bytes(seq: i64, event: &str, head: &str, data: &str) -> Bytes {
    Bytes::from(format!(
        "id: {seq}\nevent: {event}\ndata: {head},\"data\":{data}}}\n\n"
    ))
}

/// Only the keys of `record` named in `keys`.
fn pick(record: &serde_json::Value, keys: &[&str]) -> serde_json::Value {
    let picked = keys
        .iter()
        .filter_map(|k| record.get(*k).map(|v| ((*k).to_owned(), v.clone())))
        .collect();
    serde_json::Value::Object(picked)
}

fn public_pin(record: &serde_json::Value) -> serde_json::Value {
    let mut pin = pick(
        record,
        &[
            "id",
            "deleted",
            "pin_type",
            "pin_config",
            "pin_layout",
            "version",
            "updated_at",
        ],
    );
    if let Some(title) = record.pointer("/metadata/title") {
        pin["metadata"] = serde_json::json!({ "title": title });
    }
    pin
}

fn public_board(record: &serde_json::Value) -> serde_json::Value {
    let mut board = pick(
        record,
        &["id", "deleted", "title", "description", "updated_at"],
    );
    if let Some(pins) = record.get("pins").and_then(|p| p.as_array()) {
        board["pins"] = pins
            .iter()
            .map(|placed| {
                let mut placed_public = pick(placed, &["pin_id", "position"]);
                if let Some(pin) = placed.get("pin") {
                    placed_public["pin"] = public_pin(pin);
                }
                placed_public
            })
            .collect();
    }
    board
}

/// The broadcast of one workspace's events; its reading task stops with the last viewer.
pub(crate) struct Feed {
    frames: broadcast::Sender<Arc<Frame>>,
    task: tokio::task::JoinHandle<()>,
}

impl Feed {
    /// Starts reading workspace `ws`'s events after `after`. `buffer` is each viewer's
    /// allowance of unread frames; the log is also read every `every`, in case a
    /// notification was missed.
    pub(crate) fn start(
        store: Store,
        ws: &str,
        after: i64,
        buffer: usize,
        every: Duration,
    ) -> Feed {
        let (frames, _) = broadcast::channel(buffer);
        let task = tokio::spawn(run(store, ws.to_owned(), after, frames.clone(), every));
        Feed { frames, task }
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Arc<Frame>> {
        self.frames.subscribe()
    }
}

impl Drop for Feed {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn run(
    store: Store,
    ws: String,
    mut after: i64,
    frames: broadcast::Sender<Arc<Frame>>,
    every: Duration,
) {
    let mut commits = store.commits().subscribe();
    let mut tick = tokio::time::interval(every);
    loop {
        tokio::select! {
            note = commits.recv() => match note {
                Ok(Some(changed)) if *changed != *ws => continue,
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return,
            },
            _ = tick.tick() => {}
        }
        loop {
            let events = match store.events_after(&ws, after, PAGE).await {
                Ok(events) => events,
                Err(e) => {
                    tracing::warn!(error = %e, "reading the event log");
                    break;
                }
            };
            let full = events.len() as i64 == PAGE;
            for event in events {
                after = event.seq;
                let _ = frames.send(Arc::new(Frame::of(event)));
            }
            if !full {
                break;
            }
        }
    }
}
