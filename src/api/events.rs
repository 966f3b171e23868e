//! `GET /events`: the caller's workspace's changes as they commit, over Server-Sent Events
//! (CONTRACT.md 10). Scope `pins:read`; a collaborator may follow their board with only
//! `pinboard_id`. Opening a stream costs one token (the rate-limit layer's price of any
//! request); at most `events.max_streams_per_key` are open per credential.

use aide::axum::ApiRouter;
use axum::{
    extract::{RawQuery, State},
    http::{header, HeaderMap, HeaderValue},
    response::{IntoResponse, Response},
    Extension,
};

use crate::{
    app::AppState,
    auth::{on_board, require, Principal, Scope},
    error::{Error, Result},
    events::{Filter, Resume},
};

/// Every event name a stream can carry (the `type` filter's values).
pub const EVENT_TYPES: [&str; 9] = [
    "pin.created",
    "pin.updated",
    "pin.deleted",
    "pinboard.created",
    "pinboard.updated",
    "pinboard.deleted",
    "dataset.created",
    "dataset.updated",
    "dataset.deleted",
];

pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new().route("/events", axum::routing::get(events))
}

async fn events(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Result<Response> {
    let (filter, last_id) = parse_query(query.as_deref().unwrap_or(""))?;
    let principal = match (filter.pinboard_ids.as_slice(), filter.pin_ids.is_empty()) {
        ([board], true) => on_board(&state, principal, board).await?,
        _ => principal,
    };
    let principal = require(principal, Scope::PinsRead)?;
    let last_id = last_id.or_else(|| {
        headers
            .get("last-event-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    });
    let resume = last_id.map_or(Resume::Live, Resume::After);
    let hub = &state.events;
    let admission = hub.admit(
        format!("credential:{}", principal.subject.id()),
        hub.settings().max_streams_per_key,
    )?;
    let body = hub
        .stream(&principal.workspace_id, filter, resume, admission)
        .await?;
    Ok(sse(body))
}

/// A stream's response: the event-stream headers around `body`.
pub(crate) fn sse(body: axum::body::Body) -> Response {
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
            (
                header::HeaderName::from_static("x-accel-buffering"),
                HeaderValue::from_static("no"),
            ),
        ],
        body,
    )
        .into_response()
}

/// The filters (each may repeat) and `last_event_id`; anything else is a 400 naming it.
fn parse_query(query: &str) -> Result<(Filter, Option<String>)> {
    let mut filter = Filter::default();
    let mut last_id = None;
    for (name, value) in url::form_urlencoded::parse(query.as_bytes()) {
        let value = value.into_owned();
        match name.as_ref() {
            "pin_id" => filter.pin_ids.push(value),
            "pinboard_id" => filter.pinboard_ids.push(value),
            "type" if EVENT_TYPES.contains(&value.as_str()) => filter.types.push(value),
            "type" => {
                return Err(Error::validation(
                    "type",
                    format!("one of {}", EVENT_TYPES.join(", ")),
                ))
            }
            "last_event_id" => last_id = Some(value),
            other => {
                return Err(Error::validation(
                    other,
                    "pin_id, pinboard_id, type or last_event_id",
                ))
            }
        }
    }
    Ok((filter, last_id))
}
