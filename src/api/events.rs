//! `GET /events`: the caller's workspace's changes as they commit, over Server-Sent Events
//! (CONTRACT.md 10). Scope `pins:read`; a collaborator may follow their board with only
//! `pinboard_id`. Opening a stream costs one token (the rate-limit layer's price of any
//! request); at most `events.max_streams_per_key` are open per credential, and
//! `events.max_streams_per_workspace` per workspace, all its credentials together.

use aide::{
    axum::{routing::get_with, ApiRouter},
    generate::GenContext,
    openapi::{MediaType, Operation, Response as AideResponse},
    operation::{add_parameters, parameters_from_schema, ParamLocation},
    OperationInput, OperationOutput,
};
use axum::{
    extract::{FromRequestParts, State},
    http::{header, request::Parts, HeaderMap, HeaderValue},
    response::{IntoResponse, Response},
    Extension,
};
use schemars::JsonSchema;

use super::docs;

use crate::{
    app::AppState,
    auth::{authorize, Access, Principal, Scope},
    error::{Error, Result},
    events::{EventKind, Filter, FrameData, Resume, RETRY_MS},
    wire::body::{non_null, NO_NUL},
};

/// Every event name a stream can carry (the `type` filter's values).
pub const EVENT_TYPES: [&str; EventKind::ALL.len()] = EventKind::NAMES;

pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new().api_route(
        "/events",
        get_with(events, |op| {
            let op = docs::requires_scope(
                op.summary("Follow the workspace's changes as they commit (Server-Sent Events)")
                    .tag("events")
                    .id("followEvents"),
                "pins:read",
                " (or, with only `pinboard_id`, a collaborator role on that board)",
            );
            // Replaces the common 429's description (a response per status).
            docs::rate_limited(
                op,
                "Rate limited, or the credential's (`events.max_streams_per_key`) or the workspace's (`events.max_streams_per_workspace`) streams already open: `RATE_LIMIT_EXCEEDED`, `details.per` naming which",
            )
        }),
    )
}

async fn events(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    EventsQuery(filter, last_id): EventsQuery,
    headers: HeaderMap,
) -> Result<EventStream> {
    // A stream of one board's events acts on that board, where a collaborator's role counts.
    let board = match (filter.pinboard_ids.as_slice(), filter.pin_ids.is_empty()) {
        ([board], true) => Some(board.as_str()),
        _ => None,
    };
    let principal = authorize(&state, principal, Access::board(Scope::PinsRead), board).await?;
    let resume = Resume::requested(&headers, last_id);
    let hub = &state.events;
    let admission = hub.admit(principal.subject.id(), &principal.workspace_id)?;
    let body = hub
        .stream(&principal.workspace_id, filter, resume, admission)
        .await?;
    Ok(EventStream(body))
}

/// A stream's response: the event-stream headers around its body.
pub(crate) struct EventStream(axum::body::Body);

impl EventStream {
    pub(crate) fn new(body: axum::body::Body) -> Self {
        EventStream(body)
    }
}

impl IntoResponse for EventStream {
    fn into_response(self) -> Response {
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
            self.0,
        )
            .into_response()
    }
}

impl OperationOutput for EventStream {
    type Inner = Self;

    fn inferred_responses(
        ctx: &mut GenContext,
        _: &mut Operation,
    ) -> Vec<(Option<u16>, AideResponse)> {
        let frames = frames_schema(ctx);
        let stream = AideResponse {
            description: "`text/event-stream`: a `retry:` hint, then one frame per event \
                (`id:` increasing, `event:` its name, `data:` one line of JSON, the `Event` \
                schema), `: keep-alive` comments when idle, and `event: reset` first when \
                `Last-Event-ID` is unknown or older than the log keeps. The schema is that \
                of one frame, its fields named as in the SSE format (`data` parsed as JSON)."
                .to_owned(),
            content: [(
                "text/event-stream".to_owned(),
                MediaType {
                    schema: Some(aide::openapi::SchemaObject {
                        json_schema: frames,
                        example: None,
                        external_docs: None,
                    }),
                    ..Default::default()
                },
            )]
            .into_iter()
            .collect(),
            ..Default::default()
        };
        vec![(Some(200), stream)]
    }
}

/// The frames of a stream, one variant each: the `retry:` hint, an event, the `reset`
/// that replaces a backlog it can't send, and the `: keep-alive` comment of an idle
/// stream.
fn frames_schema(ctx: &mut GenContext) -> schemars::Schema {
    let event = ctx.schema.subschema_for::<FrameData<'static>>();
    schemars::json_schema!({
        "oneOf": [
            {
                "title": "retry",
                "description": "First: how long to wait before reconnecting, in milliseconds.",
                "type": "object",
                "additionalProperties": false,
                "required": ["retry"],
                "properties": { "retry": { "const": RETRY_MS } },
            },
            {
                "title": "event",
                "description": "A change: `id:` the event's id (send it back as `Last-Event-ID`), `event:` its name, `data:` the `Event`.",
                "type": "object",
                "additionalProperties": false,
                "required": ["id", "event", "data"],
                "properties": {
                    "id": { "type": "string", "pattern": "^[0-9]{1,19}$" },
                    "event": { "enum": EventKind::NAMES },
                    "data": event,
                },
            },
            {
                "title": "reset",
                "description": "Sent first when `Last-Event-ID` is unknown or older than the log keeps (no id): read the state again, then follow the stream.",
                "type": "object",
                "additionalProperties": false,
                "required": ["event", "data"],
                "properties": {
                    "event": { "const": "reset" },
                    "data": {
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["reason"],
                        "properties": { "reason": { "type": "string", "pattern": NO_NUL } },
                    },
                },
            },
            {
                "title": "keep-alive",
                "description": "A comment line, `: keep-alive`, every `events.heartbeat_secs` of an idle stream.",
                "type": "object",
                "additionalProperties": false,
                "required": ["comment"],
                "properties": { "comment": { "const": "keep-alive" } },
            },
        ],
    })
}

/// The stream's query: `pin_id`, `pinboard_id` and `type` (each repeatable; a list means
/// any of them) and `last_event_id`.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct EventsQueryDoc {
    /// Only this pin's events.
    #[schemars(transform = non_null)]
    pin_id: Option<Vec<String>>,
    /// Only this board's events and those of the pins placed on it.
    #[schemars(transform = non_null)]
    pinboard_id: Option<Vec<String>>,
    /// Only events of this name.
    #[schemars(extend("items" = {"enum": EVENT_TYPES}), transform = non_null)]
    r#type: Option<Vec<String>>,
    /// Resume after this event id (as the `Last-Event-ID` header).
    #[schemars(transform = non_null)]
    last_event_id: Option<String>,
}

/// The filters and the id to resume after, from the query (400 for an unknown parameter or
/// event name).
struct EventsQuery(Filter, Option<String>);

impl FromRequestParts<AppState> for EventsQuery {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, _: &AppState) -> Result<Self> {
        let (filter, last_id) = parse_query(parts.uri.query().unwrap_or(""))?;
        Ok(EventsQuery(filter, last_id))
    }
}

impl OperationInput for EventsQuery {
    fn operation_input(ctx: &mut GenContext, operation: &mut Operation) {
        let schema = ctx.schema.subschema_for::<EventsQueryDoc>();
        let params = parameters_from_schema(ctx, schema, ParamLocation::Query);
        add_parameters(ctx, operation, params);
        docs::add_header(
            operation,
            "Last-Event-ID",
            "Resume after this event id: exactly the events missed, then the live ones",
            schemars::json_schema!({ "type": "string" }),
        );
    }
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
            "type" => match EventKind::parse(&value) {
                Some(kind) => filter.types.push(kind),
                None => {
                    return Err(Error::validation(
                        "type",
                        format!("one of {}", EVENT_TYPES.join(", ")),
                    ))
                }
            },
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
