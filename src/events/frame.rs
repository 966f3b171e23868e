//! One event as the streams send it: its SSE frame, formatted once from [`FrameData`] (which
//! is also the API description's `Event` schema), and what share streams send instead.

use std::sync::OnceLock;

use axum::body::Bytes;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::kind::{EventKind, Resource};
use crate::{
    clock,
    error::{Error, Result},
    store::{Event, JsonText, Position},
};

/// What an event's `data:` line holds (one line of JSON).
// The frame around it: `id:` the event's id, `event:` its `type` ([`frame_bytes`]).
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "Event", deny_unknown_fields)]
pub(crate) struct FrameData<'a> {
    /// The event's name, as on its `event:` line.
    #[serde(rename = "type")]
    #[schemars(with = "String", extend("enum" = EventKind::NAMES))]
    kind: EventKind,
    /// The changed resource's id.
    id: &'a str,
    /// A pin's version after the change (pin events).
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<i64>,
    /// When the change was made (ISO 8601, UTC).
    at: String,
    /// The record as a GET returns it after the change; `{"id", "deleted": true}` for a
    /// delete; for `pinboard.*` the board with its placements.
    #[schemars(schema_with = "crate::wire::body::any_value")]
    data: &'a JsonText,
}

/// The `data:` line of event `e` as `/v1/events` sends it: the body a webhook POSTs.
pub(crate) fn data_json(e: &Event) -> Result<Vec<u8>> {
    let data = FrameData {
        kind: e.kind,
        id: &e.resource_id,
        version: e.version,
        at: clock::iso(e.at),
        data: &e.data,
    };
    serde_json::to_vec(&data).map_err(Error::internal)
}

/// What share streams and pages are sent of a dataset change: its type and time only.
#[derive(Serialize)]
struct Notice {
    #[serde(rename = "type")]
    kind: EventKind,
    at: String,
}

/// The SSE frame of an event: its id (`seq`, or a share stream's token of it), its name,
/// and `data` as one line of JSON.
fn frame_bytes(id: &str, kind: EventKind, data: &impl Serialize) -> Result<Bytes> {
    let mut frame = format!("id: {id}\nevent: {kind}\ndata: ").into_bytes();
    serde_json::to_writer(&mut frame, data).map_err(Error::internal)?;
    frame.extend_from_slice(b"\n\n");
    Ok(Bytes::from(frame))
}

/// One event, ready to send: its SSE bytes and what the filters look at.
#[derive(Debug)]
pub(crate) struct Frame {
    pub seq: i64,
    pub kind: EventKind,
    pub resource_id: String,
    pub boards: Vec<String>,
    pub bytes: Bytes,
    /// What share streams send instead: the same frame with only what the share page
    /// shows, and its id sealed (see [`Frame::share_bytes`]).
    share: OnceLock<Bytes>,
    /// What board streams send of a dataset change: its type and time (see
    /// [`Frame::notice_bytes`]).
    notice: OnceLock<Bytes>,
    /// The rest of the event, kept for the public frame.
    version: Option<i64>,
    at: i64,
    data: JsonText,
}

impl Frame {
    pub(crate) fn of(e: Event) -> Result<Frame> {
        let mut frame = Frame {
            seq: e.seq,
            kind: e.kind,
            resource_id: e.resource_id,
            boards: e.boards,
            bytes: Bytes::new(),
            share: OnceLock::new(),
            notice: OnceLock::new(),
            version: e.version,
            at: e.at,
            data: e.data,
        };
        let bytes = frame_bytes(&frame.seq.to_string(), frame.kind, &frame.with(&frame.data))?;
        frame.bytes = bytes;
        Ok(frame)
    }

    /// This event's `data:` line, carrying `record`.
    fn with<'a>(&'a self, record: &'a JsonText) -> FrameData<'a> {
        FrameData {
            kind: self.kind,
            id: &self.resource_id,
            version: self.version,
            at: clock::iso(self.at),
            data: record,
        }
    }

    pub(crate) fn is_dataset(&self) -> bool {
        self.kind.resource() == Resource::Dataset
    }

    /// The frame as share streams send it: a pin as its share page shows it (type,
    /// configuration, layout, title, version, time), a board with its title, description
    /// and placed pins so; never tags, provenance or share settings; of a dataset change only
    /// its type and time (the page refetches; the data may not be shown at all). Its id is
    /// `seal` of the event id (`events/token.rs`): a share stream never shows an event id.
    /// Built once per frame (a feed's frames are all of one workspace).
    pub(crate) fn share_bytes(&self, seal: impl FnOnce(i64) -> String) -> Result<Bytes> {
        if let Some(bytes) = self.share.get() {
            return Ok(bytes.clone());
        }
        let bytes = self.public_frame(&seal(self.seq))?;
        Ok(self.share.get_or_init(|| bytes).clone())
    }

    /// A dataset change as board streams send it: its id, type and time only (a board's
    /// collaborators may not read the dataset). Built once per frame.
    pub(crate) fn notice_bytes(&self) -> Result<Bytes> {
        if let Some(bytes) = self.notice.get() {
            return Ok(bytes.clone());
        }
        let bytes = self.public_frame(&self.seq.to_string())?;
        Ok(self.notice.get_or_init(|| bytes).clone())
    }

    /// The public form of this frame, under `id`.
    fn public_frame(&self, id: &str) -> Result<Bytes> {
        let stored = |e| Error::internal_in("an event's record", e);
        let public = match self.kind.resource() {
            // Share streams follow a pin or a board, so webhook events never pass their
            // filter; were one to, it would show only its type and time.
            Resource::Dataset | Resource::Webhook => {
                let notice = Notice {
                    kind: self.kind,
                    at: clock::iso(self.at),
                };
                return frame_bytes(id, self.kind, &notice);
            }
            Resource::Pinboard => serde_json::to_string(
                &serde_json::from_str::<PublicBoard>(self.data.as_str()).map_err(stored)?,
            ),
            Resource::Pin => serde_json::to_string(
                &serde_json::from_str::<PublicPin>(self.data.as_str()).map_err(stored)?,
            ),
        };
        let public = JsonText::stored(public.map_err(Error::internal)?)?;
        frame_bytes(id, self.kind, &self.with(&public))
    }
}

/// A pin as its share page shows it, read from the event's record (a pin record, or
/// `{"id", "deleted": true}`): what a share stream may send of a pin, and nothing else
/// (members of the record not named here are skipped when it is read).
#[derive(Serialize, Deserialize)]
struct PublicPin {
    id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    deleted: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pin_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pin_config: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pin_layout: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    metadata: Option<PublicMetadata>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    version: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    updated_at: Option<String>,
    /// Freshness shows on share pages: a wall should say when a feed has stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_pushed_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stale: Option<bool>,
    /// Status shows on share pages too, and a `pin.status` says what it was before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    previous_status: Option<String>,
}

/// Of a pin's metadata, the title alone (never tags or provenance).
#[derive(Serialize, Deserialize)]
struct PublicMetadata {
    title: Option<String>,
}

/// A board as its share page shows it: title, description and placed pins (never tags or
/// share settings); or `{"id", "deleted": true}`.
#[derive(Serialize, Deserialize)]
struct PublicBoard {
    id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    deleted: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    updated_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pins: Option<Vec<PublicPlacement>>,
}

#[derive(Serialize, Deserialize)]
struct PublicPlacement {
    pin_id: String,
    position: Position,
    pin: PublicPin,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: EventKind, version: Option<i64>, data: &str) -> Event {
        Event {
            seq: 7,
            kind,
            resource_id: "p-1\"x".into(),
            version,
            boards: Vec::new(),
            at: 0,
            data: JsonText::stored(data).expect("JSON"),
        }
    }

    #[test]
    fn frames_keep_their_bytes() {
        let pin = Frame::of(event(
            EventKind::PinUpdated,
            Some(2),
            r#"{"id":"p-1","tags":["a"],"pin_type":"kpi","metadata":{"title":"T","x":1}}"#,
        ))
        .expect("frame");
        assert_eq!(
            pin.bytes,
            "id: 7\nevent: pin.updated\ndata: {\"type\":\"pin.updated\",\"id\":\"p-1\\\"x\",\
             \"version\":2,\"at\":\"1970-01-01T00:00:00.000Z\",\"data\":{\"id\":\"p-1\",\
             \"tags\":[\"a\"],\"pin_type\":\"kpi\",\"metadata\":{\"title\":\"T\",\"x\":1}}}\n\n"
        );
        assert_eq!(
            pin.share_bytes(|seq| format!("t{seq}")).expect("public"),
            "id: t7\nevent: pin.updated\ndata: {\"type\":\"pin.updated\",\"id\":\"p-1\\\"x\",\
             \"version\":2,\"at\":\"1970-01-01T00:00:00.000Z\",\"data\":{\"id\":\"p-1\",\
             \"pin_type\":\"kpi\",\"metadata\":{\"title\":\"T\"}}}\n\n"
        );
        let status = Frame::of(event(
            EventKind::PinStatus,
            Some(3),
            r#"{"id":"p-1","tags":["a"],"status_rules":[],"status":"critical","previous_status":"ok"}"#,
        ))
        .expect("frame");
        assert_eq!(
            status.share_bytes(|seq| format!("t{seq}")).expect("public"),
            "id: t7\nevent: pin.status\ndata: {\"type\":\"pin.status\",\"id\":\"p-1\\\"x\",\
             \"version\":3,\"at\":\"1970-01-01T00:00:00.000Z\",\"data\":{\"id\":\"p-1\",\
             \"status\":\"critical\",\"previous_status\":\"ok\"}}\n\n",
            "a share stream shows the status and what it was, not the rules or tags"
        );
        let dataset =
            Frame::of(event(EventKind::DatasetDeleted, None, r#"{"id":"d-1"}"#)).expect("frame");
        assert_eq!(
            dataset.bytes,
            "id: 7\nevent: dataset.deleted\ndata: {\"type\":\"dataset.deleted\",\"id\":\"p-1\\\"x\",\
             \"at\":\"1970-01-01T00:00:00.000Z\",\"data\":{\"id\":\"d-1\"}}\n\n"
        );
        assert_eq!(
            dataset.notice_bytes().expect("notice"),
            "id: 7\nevent: dataset.deleted\ndata: {\"type\":\"dataset.deleted\",\
             \"at\":\"1970-01-01T00:00:00.000Z\"}\n\n"
        );
    }
}
