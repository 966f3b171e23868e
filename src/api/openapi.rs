//! Builds the OpenAPI document from the documented router and serves it at
//! `GET /v1/openapi.json` (and `/openapi.json`), without a credential: the description of
//! the API is public, like the page that documents it.

use std::sync::{Arc, OnceLock};

use aide::{
    axum::{routing::get_with, ApiRouter},
    generate::{self, GenContext},
    openapi::{Info, OpenApi, Operation, Response as AideResponse, SecurityScheme, Tag},
    transform::TransformOpenApi,
    OperationOutput,
};
use axum::{
    body::Bytes,
    http::{header, HeaderValue},
    response::{IntoResponse, Response},
    Router,
};
use schemars::{generate::SchemaSettings, json_schema, SchemaGenerator};
use serde_json::{json, Value};

use super::docs;
use crate::{app::AppState, config::Limits};

/// Every route added after this call is described with JSON Schema draft 2020-12 (the
/// dialect of OpenAPI 3.1, and of `GET /v1/pin-types`), its types under
/// `#/components/schemas/`.
pub fn prepare() {
    generate::in_context(|ctx| {
        ctx.schema = SchemaGenerator::new(SchemaSettings::draft2020_12().with(|s| {
            s.definitions_path = "#/components/schemas/".into();
        }));
    });
    generate::on_error(|error| tracing::error!(%error, "API description"));
}

const DESCRIPTION: &str = "Automation tools, webhooks and agents push typed pins onto \
pinboards. Every `/v1` path is also served without the prefix. Authenticate with \
`Authorization: Bearer <API key or ID token>`; each operation names the scope it needs. \
Every error is the envelope `{success: false, error: {code, message, details?}}`; every \
authenticated response carries the `X-RateLimit-*` headers. The schemas state every rule \
JSON Schema can; the rules it can't (between fields, or on stored state) are in the \
descriptions, with the status they answer. No text anywhere in a request may contain \
U+0000 (400 `VALIDATION_FAILED`): every string schema states it as a `pattern`, and \
`JsonValue` (any JSON value) at every depth.";

fn about(doc: TransformOpenApi<'_>) -> TransformOpenApi<'_> {
    doc.info(Info {
        title: "Corkboard".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        description: Some(DESCRIPTION.into()),
        ..Default::default()
    })
    .security_scheme(
        docs::BEARER,
        SecurityScheme::Http {
            scheme: "bearer".into(),
            bearer_format: Some("cbk_... API key, or a JWT ID token".into()),
            description: None,
            extensions: Default::default(),
        },
    )
    .tag(tag(
        "pins",
        "Typed pins: create, read, list, update, delete, batches",
    ))
    .tag(tag("pinboards", "Dashboards and the pins placed on them"))
    .tag(tag("playlists", "Boards shown in turn on a screen"))
    .tag(tag("sharing", "Share settings and public share pages"))
    .tag(tag(
        "identity",
        "API keys, roles, pinboard collaborators and invitations",
    ))
    .tag(tag("events", "Live changes over Server-Sent Events"))
    .tag(tag("catalogue", "The pin types and this description"))
    .tag(tag("operations", "Health, readiness and metrics"))
}

fn tag(name: &str, description: &str) -> Tag {
    Tag {
        name: name.into(),
        description: Some(description.into()),
        ..Default::default()
    }
}

/// The document, written once the router is finished (it describes its own route too).
pub type Document = Arc<OnceLock<Bytes>>;

/// Finishes `router`'s documentation into `document`, with the bounds of `limits`;
/// returns the router to serve.
pub fn describe(
    router: ApiRouter<AppState>,
    document: &Document,
    limits: &Limits,
) -> Router<AppState> {
    let mut api = OpenApi::default();
    let router = router.finish_api_with(&mut api, about);
    let mut value = serde_json::to_value(&api).unwrap_or_default();
    crate::pin_types::tidy_descriptions(&mut value);
    add_response_headers(&mut value);
    super::text_rule::state(&mut value);
    state_limits(&mut value, limits);
    let _ = document.set(Bytes::from(value.to_string()));
    router
}

/// Where the document states a bound that is a configurable limit, and its value. The
/// schemas carry the defaults (`pins::TITLE_CHARS`, ...); a server configured otherwise
/// states its own, so the document always says what this server enforces.
fn configured_bounds(limits: &Limits) -> Vec<(String, usize)> {
    let boards = ["MetadataBody", "CreateBoardBody", "UpdateBoardBody"];
    let batches = [
        "BatchCreateBody/properties/pins",
        "BatchUpdateBody/properties/pins",
        "BatchGetBody/properties/pin_ids",
        "BatchDeleteBody/properties/pin_ids",
    ];
    let at = |rest: String| format!("/components/schemas/{rest}");
    let mut bounds = Vec::new();
    for body in boards {
        bounds.push((
            at(format!("{body}/properties/title/maxLength")),
            limits.title_chars,
        ));
        bounds.push((at(format!("{body}/properties/tags/maxItems")), limits.tags));
        bounds.push((
            at(format!("{body}/properties/tags/items/maxLength")),
            limits.tag_chars,
        ));
    }
    for list in batches {
        bounds.push((at(format!("{list}/maxItems")), limits.batch_items));
    }
    for body in ["CreatePlaylistBody", "UpdatePlaylistBody"] {
        bounds.push((
            at(format!("{body}/properties/name/maxLength")),
            limits.title_chars,
        ));
    }
    bounds
}

/// Writes the configured limits into the document ([`configured_bounds`]).
fn state_limits(doc: &mut Value, limits: &Limits) {
    for (pointer, bound) in configured_bounds(limits) {
        match doc.pointer_mut(&pointer) {
            Some(slot) => *slot = bound.into(),
            None => tracing::error!(%pointer, "API description: no such bound"),
        }
    }
}

/// The rate-limit headers of SPEC.md 8.3: on every response to an authenticated request.
const RATE_LIMIT_HEADERS: [(&str, &str, &str); 7] = [
    (
        "X-RateLimit-Limit-Hour",
        "integer",
        "Tokens in this key's hour window",
    ),
    (
        "X-RateLimit-Remaining-Hour",
        "integer",
        "Tokens left in the hour window",
    ),
    (
        "X-RateLimit-Reset-Hour",
        "string",
        "When the hour window starts again (RFC 3339)",
    ),
    (
        "X-RateLimit-Limit-Minute",
        "integer",
        "Tokens in this key's minute window (or write bucket, whichever has less left)",
    ),
    (
        "X-RateLimit-Remaining-Minute",
        "integer",
        "Tokens left in the minute window (or write bucket)",
    ),
    (
        "X-RateLimit-Reset-Minute",
        "string",
        "When that window starts again (RFC 3339)",
    ),
    (
        "X-RateLimit-Token-Cost",
        "integer",
        "Tokens this request cost: 1, or ceil(n / 10) for a batch of n",
    ),
];

/// Documents the response headers the middleware adds, once under `components/headers`:
/// `X-Request-Id` on every response, the rate-limit headers on every response to a credential
/// that authenticated (not 401, nor a 503 of the limiter), `Retry-After` on 429 and 503,
/// `WWW-Authenticate` on 401.
fn add_response_headers(doc: &mut Value) {
    let header = |kind: &str, description: &str| json!({ "description": description, "schema": { "type": kind } });
    let mut components = serde_json::Map::new();
    components.insert(
        "X-Request-Id".into(),
        header(
            "string",
            "This request's id (the one sent, or a new UUID), also in the logs",
        ),
    );
    components.insert(
        "Retry-After".into(),
        header("integer", "Seconds to wait before retrying"),
    );
    components.insert(
        "WWW-Authenticate".into(),
        header(
            "string",
            "`Bearer` (RFC 6750), with `error=\"invalid_token\"` when a credential was sent and refused",
        ),
    );
    for (name, kind, description) in RATE_LIMIT_HEADERS {
        components.insert(name.into(), header(kind, description));
    }
    let refer = |name: &str| json!({ "$ref": format!("#/components/headers/{name}") });
    if let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) {
        for operation in paths
            .values_mut()
            .filter_map(Value::as_object_mut)
            .flat_map(|item| item.values_mut())
        {
            let authenticated = operation.get("security").is_some();
            let Some(responses) = operation
                .get_mut("responses")
                .and_then(Value::as_object_mut)
            else {
                continue;
            };
            for (status, response) in responses.iter_mut() {
                let mut headers = serde_json::Map::new();
                headers.insert("X-Request-Id".into(), refer("X-Request-Id"));
                if authenticated && status != "401" && status != "503" {
                    for (name, ..) in RATE_LIMIT_HEADERS {
                        headers.insert(name.into(), refer(name));
                    }
                }
                if status == "429" || status == "503" {
                    headers.insert("Retry-After".into(), refer("Retry-After"));
                }
                if status == "401" {
                    headers.insert("WWW-Authenticate".into(), refer("WWW-Authenticate"));
                }
                response["headers"] = Value::Object(headers);
            }
        }
    }
    doc["components"]["headers"] = Value::Object(components);
}

/// `GET /openapi.json`.
pub fn routes(document: Document) -> ApiRouter<AppState> {
    let serve = move || {
        let document = document.get().cloned().unwrap_or_default();
        async move { OpenApiJson(document) }
    };
    ApiRouter::new().api_route(
        "/openapi.json",
        get_with(serve, |op| {
            op.summary("This API description (OpenAPI 3.1), public")
                .tag("catalogue")
                .id("getOpenApi")
        }),
    )
}

/// The served document.
struct OpenApiJson(Bytes);

impl IntoResponse for OpenApiJson {
    fn into_response(self) -> Response {
        (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            self.0,
        )
            .into_response()
    }
}

impl OperationOutput for OpenApiJson {
    type Inner = ();

    fn inferred_responses(
        _: &mut GenContext,
        _: &mut Operation,
    ) -> Vec<(Option<u16>, AideResponse)> {
        let schema = json_schema!({ "type": "object", "required": ["openapi", "info", "paths"] });
        vec![(
            Some(200),
            docs::response("The OpenAPI 3.1 document", docs::json_content(schema)),
        )]
    }
}
