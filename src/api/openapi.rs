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

use super::docs;
use crate::app::AppState;

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
authenticated response carries the `X-RateLimit-*` headers.";

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
    .tag(tag("sharing", "Share settings and public share pages"))
    .tag(tag(
        "identity",
        "API keys, roles and pinboard collaborators",
    ))
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

/// Finishes `router`'s documentation into `document`; returns the router to serve.
pub fn describe(router: ApiRouter<AppState>, document: &Document) -> Router<AppState> {
    let mut api = OpenApi::default();
    let router = router.finish_api_with(&mut api, about);
    let mut value = serde_json::to_value(&api).unwrap_or_default();
    crate::pin_types::tidy_descriptions(&mut value);
    let _ = document.set(Bytes::from(value.to_string()));
    router
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
