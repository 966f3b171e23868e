//! One watched workspace: reads its new events from the log when the store says it has
//! some, formats each once as an SSE frame ([`Frame`]), and broadcasts the shared bytes.

use std::{sync::Arc, time::Duration};

use tokio::sync::{
    broadcast::{self, error::RecvError},
    watch,
};

use super::Frame;
use crate::store::Store;

/// Events read from the log at a time.
const PAGE: i64 = 500;

/// What a feed broadcasts to its viewers.
#[derive(Clone)]
pub(crate) enum Delivery {
    Frame(Arc<Frame>),
    /// The server is shutting down: every viewer ends. Said once by the feed rather than
    /// watched by each viewer, so a frame's delivery doesn't register a thousand viewers in
    /// one shared shutdown `Notify` (its lock taken twice a viewer a frame, on both threads).
    Stop,
}

/// The broadcast of one workspace's events; its reading task stops with the last viewer.
pub(crate) struct Feed {
    frames: broadcast::Sender<Delivery>,
    task: tokio::task::JoinHandle<()>,
}

impl Feed {
    /// Starts reading workspace `ws`'s events after `after`. `buffer` is each viewer's
    /// allowance of unread frames; the log is also read every `every`, in case a
    /// notification was missed. When `stop` turns true the feed says [`Delivery::Stop`] and
    /// ends.
    pub(crate) fn start(
        store: Store,
        ws: &str,
        after: i64,
        buffer: usize,
        every: Duration,
        stop: watch::Receiver<bool>,
    ) -> Feed {
        let (frames, _) = broadcast::channel(buffer);
        let feeding = run(store, ws.to_owned(), after, frames.clone(), every);
        let task = tokio::spawn(stopping(feeding, frames.clone(), stop));
        Feed { frames, task }
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Delivery> {
        self.frames.subscribe()
    }
}

impl Drop for Feed {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Runs `feeding` until `stop` turns true (or its sender is gone), then tells the viewers.
/// `feeding` doesn't end first: it holds the store whose notifications it waits on.
async fn stopping(
    feeding: impl std::future::Future<Output = ()>,
    frames: broadcast::Sender<Delivery>,
    mut stop: watch::Receiver<bool>,
) {
    tokio::select! {
        () = feeding => {}
        _ = stop.wait_for(|stopped| *stopped) => {
            let _ = frames.send(Delivery::Stop);
        }
    }
}

async fn run(
    store: Store,
    ws: String,
    mut after: i64,
    frames: broadcast::Sender<Delivery>,
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
                match Frame::of(event) {
                    Ok(frame) => {
                        let _ = frames.send(Delivery::Frame(Arc::new(frame)));
                    }
                    Err(e) => tracing::warn!(error = %e, seq = after, "formatting an event"),
                }
            }
            if !full {
                break;
            }
        }
    }
}
