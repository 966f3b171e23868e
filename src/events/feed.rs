//! One watched workspace: reads its new events from the log when the store says it has
//! some, formats each once as an SSE frame ([`Frame`]), and broadcasts the shared bytes.

use std::{sync::Arc, time::Duration};

use tokio::sync::broadcast::{self, error::RecvError};

use super::Frame;
use crate::store::Store;

/// Events read from the log at a time.
const PAGE: i64 = 500;

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
                match Frame::of(event) {
                    Ok(frame) => {
                        let _ = frames.send(Arc::new(frame));
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
