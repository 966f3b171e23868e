//! The event log (CONTRACT.md 10): every write appends one event per changed resource in its
//! own transaction ([`Backend::append_events`]), so a committed change can't lose its event
//! and a rolled-back one can't publish one. After the commit, [`Commits`] tells the live
//! streams which workspace has news; they read it back with [`EventStore::events_after`].

use std::sync::Arc;

use tokio::sync::broadcast;

use super::sql::{Backend, Record};
use super::{Dataset, JsonText, Pin, Pinboard, PlacedPin};
use crate::{
    error::{Error, Result},
    events::EventKind,
};

/// The records events carry: what a GET of the resource returns. The store asks for them
/// inside the write's transaction; the application renders them (its `shareable_url` base).
pub trait Render: Send + Sync {
    /// A pin's record, as `GET /pins/{id}` returns it.
    fn pin(&self, pin: &Pin) -> Result<String>;
    /// A pin's record and the status it had before (`previous_status`), for `pin.status`.
    fn pin_status(&self, pin: &Pin, previous: Option<&str>) -> Result<String>;
    /// A board's record with its placements, as `GET /pinboards/{id}` returns it.
    fn board(&self, board: &Pinboard, pins: &[PlacedPin]) -> Result<String>;
    /// A dataset's record, as `GET /datasets/{id}` returns it.
    fn dataset(&self, dataset: &Dataset) -> Result<String>;
}

/// An event to append in a write's transaction.
#[derive(Debug, Clone)]
pub struct NewEvent {
    pub workspace_id: String,
    /// Stored as its name, in the `event` column.
    pub kind: EventKind,
    pub resource_id: String,
    pub version: Option<i64>,
    /// The boards the change concerns: a board's own id, or the boards a pin is placed on.
    pub boards: Vec<String>,
    pub at: i64,
    /// The record after the change (JSON), or `{"id", "deleted": true}`.
    pub data: String,
}

impl NewEvent {
    pub(super) fn pin(
        ws: &str,
        kind: EventKind,
        pin: &Pin,
        boards: Vec<String>,
        render: &dyn Render,
    ) -> Result<Self> {
        Ok(NewEvent {
            workspace_id: ws.to_owned(),
            kind,
            resource_id: pin.id.clone(),
            version: Some(pin.version),
            boards,
            at: pin.updated_at,
            data: render.pin(pin)?,
        })
    }

    /// The [`EventKind::PinStatus`] event of a pin whose status was `previous` before this
    /// state (CONTRACT.md 15), or none when the status is the same.
    pub(super) fn status(
        ws: &str,
        previous: Option<&str>,
        pin: &Pin,
        boards: Vec<String>,
        render: &dyn Render,
    ) -> Result<Option<Self>> {
        if previous == pin.status.as_deref() {
            return Ok(None);
        }
        Ok(Some(NewEvent {
            workspace_id: ws.to_owned(),
            kind: EventKind::PinStatus,
            resource_id: pin.id.clone(),
            version: Some(pin.version),
            boards,
            at: pin.updated_at,
            data: render.pin_status(pin, previous)?,
        }))
    }

    pub(super) fn deleted(
        ws: &str,
        kind: EventKind,
        id: &str,
        boards: Vec<String>,
        at: i64,
    ) -> Self {
        NewEvent {
            workspace_id: ws.to_owned(),
            kind,
            resource_id: id.to_owned(),
            version: None,
            boards,
            at,
            data: serde_json::json!({"id": id, "deleted": true}).to_string(),
        }
    }
}

/// A stored event.
#[derive(Debug, Clone)]
pub struct Event {
    pub seq: i64,
    pub kind: EventKind,
    pub resource_id: String,
    pub version: Option<i64>,
    pub boards: Vec<String>,
    pub at: i64,
    /// The record (JSON) as [`NewEvent::data`] stored it.
    pub data: JsonText,
}

/// Which workspaces have new events: sent after each commit that appended some (SQLite), or
/// for each notification from PostgreSQL (any replica's commits). `None` means "anything
/// may have changed" (PostgreSQL's listener reconnected): every reader catches up.
#[derive(Clone)]
pub struct Commits(broadcast::Sender<Option<Arc<str>>>);

impl Default for Commits {
    fn default() -> Self {
        Commits(broadcast::channel(4096).0)
    }
}

impl Commits {
    pub fn subscribe(&self) -> broadcast::Receiver<Option<Arc<str>>> {
        self.0.subscribe()
    }

    pub(super) fn send(&self, ws: Option<&str>) {
        let _ = self.0.send(ws.map(Arc::from));
    }
}

/// SQLite's append of a commit's events, in order, from one JSON array (`$1`, an element
/// each: `sqlite::EventRow`). One statement for the group instead of one per event: each
/// statement is a round trip to the writer's thread while the group's transaction is open.
/// Each element becomes binary JSON once (`r`), so its seven fields don't each parse it.
pub(super) const APPEND_EVENTS: &str = "WITH r AS MATERIALIZED \
     (SELECT key AS n, jsonb(value) AS j FROM json_each($1)) \
     INSERT INTO events (workspace_id, event, resource_id, version, boards, at, data) \
     SELECT j ->> 'ws', j ->> 'event', j ->> 'id', j ->> 'version', j ->> 'boards', \
     j ->> 'at', j ->> 'data' FROM r ORDER BY n";

/// The [`EventKind::PinCreated`] events of new pins.
pub(super) fn created(ws: &str, pins: &[Pin], render: &dyn Render) -> Result<Vec<NewEvent>> {
    pins.iter()
        .map(|p| NewEvent::pin(ws, EventKind::PinCreated, p, Vec::new(), render))
        .collect()
}

/// A workspace's events after a point, in order: always the walk of `(workspace_id, seq)`
/// that stops after `limit` entries. The limit is a subquery so that PostgreSQL plans as if
/// it didn't know it. Knowing it, when it expects fewer rows than the limit (a table without
/// statistics yet: a new store, or a burst since autovacuum's last look) it reads every
/// event after the point through a bitmap and sorts them for the first hundred: 8.4 ms
/// instead of 0.09 ms a page at 15,000 events, and the webhook fan-out's reads took a third
/// of a core of PostgreSQL (bench/README, "Webhook fan-out"). SQLite reads the same either way.
const EVENTS_AFTER: &str = "SELECT seq, event, resource_id, version, boards, at, data FROM events \
     WHERE workspace_id = $1 AND seq > $2 ORDER BY seq LIMIT (SELECT $3)";
const LAST_SEQ: &str = "SELECT COALESCE(MAX(seq), 0) FROM events";
const OLDEST_SEQ: &str = "SELECT COALESCE(MIN(seq), 0) FROM events";
const NEWEST_OF: &str = "SELECT COALESCE(MAX(seq), 0) FROM events WHERE workspace_id = $1";
const OFFER_SHARE_KEY: &str =
    "INSERT INTO meta (key, value) VALUES ('share_event_key', $1) ON CONFLICT (key) DO NOTHING";
const SHARE_KEY: &str = "SELECT value FROM meta WHERE key = 'share_event_key'";
const PRUNE: &str = "DELETE FROM events WHERE at < $1";

/// Reading the log back.
pub(crate) trait EventStore {
    /// The workspace's events after `seq`, oldest first, at most `limit`.
    async fn events_after(&self, ws: &str, seq: i64, limit: i64) -> Result<Vec<Event>>;
    /// The oldest and the newest event ids still in the log (0 when it is empty).
    async fn event_bounds(&self) -> Result<(i64, i64)>;
    /// The newest event id of workspace `ws` still in the log (0 when it has none).
    async fn newest_event_of(&self, ws: &str) -> Result<i64>;
    /// The deployment's key for share streams' event ids: `offer` when none was kept yet,
    /// else the one kept (in `meta`, so every replica and every restart use the same).
    async fn share_event_key(&self, offer: &str) -> Result<String>;
    /// Removes the events older than `before` (ms); how many went.
    async fn prune_events(&self, before: i64) -> Result<u64>;
}

impl<B: Backend> EventStore for B {
    async fn events_after(&self, ws: &str, seq: i64, limit: i64) -> Result<Vec<Event>> {
        let rows = B::query(EVENTS_AFTER)
            .bind(ws)
            .bind(seq)
            .bind(limit)
            .fetch_all(&mut *self.reader().await?)
            .await?;
        rows.iter()
            .map(|r| {
                let name: String = r.get(1)?;
                Ok(Event {
                    seq: r.get(0)?,
                    kind: EventKind::parse(&name).ok_or_else(|| {
                        Error::internal(format!("stored event of unknown type `{name}`"))
                    })?,
                    resource_id: r.get(2)?,
                    version: r.get(3)?,
                    boards: r.list(4)?,
                    at: r.get(5)?,
                    data: JsonText::stored(r.get::<String>(6)?)?,
                })
            })
            .collect()
    }

    async fn event_bounds(&self) -> Result<(i64, i64)> {
        let mut conn = self.reader().await?;
        let mut bounds = [0; 2];
        for (bound, sql) in bounds.iter_mut().zip([OLDEST_SEQ, LAST_SEQ]) {
            if let Some(row) = B::query(sql).fetch_optional(&mut *conn).await? {
                *bound = row.get(0)?;
            }
        }
        Ok((bounds[0], bounds[1]))
    }

    async fn newest_event_of(&self, ws: &str) -> Result<i64> {
        let row = B::query(NEWEST_OF)
            .bind(ws)
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        Ok(row.map(|r| r.get(0)).transpose()?.unwrap_or(0))
    }

    async fn share_event_key(&self, offer: &str) -> Result<String> {
        let mut conn = self.writer().await?;
        B::query(OFFER_SHARE_KEY)
            .bind(offer)
            .execute(&mut *conn)
            .await?;
        let row = B::query(SHARE_KEY).fetch_optional(&mut *conn).await?;
        let row =
            row.ok_or_else(|| Error::internal("the share event key is missing after its insert"))?;
        Ok(row.get(0)?)
    }

    async fn prune_events(&self, before: i64) -> Result<u64> {
        Ok(B::query(PRUNE)
            .bind(before)
            .execute(&mut *self.writer().await?)
            .await?)
    }
}
