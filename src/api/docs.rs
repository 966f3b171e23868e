//! The OpenAPI 3.1 description of the API, generated from the code with aide: each
//! extractor says what a request carries ([`Auth`]: credential and scope, [`ApiPath`],
//! query, [`ApiJson`] body), each handler's return type says what comes back
//! ([`Envelope`] of a body type, [`Error`] responses). Served at `GET /v1/openapi.json`.

use aide::{
    generate::GenContext,
    openapi::{
        HeaderStyle, MediaType, Operation, Parameter, ParameterData, ParameterSchemaOrContent,
        ReferenceOr, RequestBody, Response, SchemaObject,
    },
    operation::{add_parameters, parameters_from_schema, set_body, ParamLocation},
    transform::TransformOperation,
    OperationInput, OperationOutput,
};
use indexmap::IndexMap;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};

use super::{ApiJson, ApiPath, ApiQuery, Envelope, PatchBody};
use crate::{
    auth::{Auth, BoardAuth, RequiredScope},
    error::Error,
    wire::IdempotencyKey,
};

/// Name of the bearer security scheme in the document.
pub const BEARER: &str = "bearer";

/// `{"success": true, "data": T}`.
#[derive(JsonSchema)]
#[schemars(inline, deny_unknown_fields)]
pub struct One<T> {
    #[schemars(extend("const" = true))]
    pub success: bool,
    pub data: T,
}

/// `{"success": true, "dry_run": true, "data": P}`: what a write with `?dry_run=true` would
/// store (CONTRACT.md 14).
#[derive(JsonSchema)]
#[schemars(inline, deny_unknown_fields)]
pub struct DryRun<P> {
    #[schemars(extend("const" = true))]
    pub success: bool,
    #[schemars(extend("const" = true))]
    pub dry_run: bool,
    pub data: P,
}

/// A write's answer ([`One`]), or with `?dry_run=true` its [`DryRun`].
#[derive(JsonSchema)]
#[schemars(inline, untagged)]
pub enum OrDryRun<T, P> {
    Done(One<T>),
    DryRun(DryRun<P>),
}

/// `{"success": true, "data": [T], "pagination": {...}}`: a page of a list, newest first.
#[derive(JsonSchema)]
#[schemars(inline, deny_unknown_fields)]
pub struct Page<T> {
    #[schemars(extend("const" = true))]
    pub success: bool,
    pub data: Vec<T>,
    pub pagination: crate::wire::Pagination,
}

/// `{"success": true, "data": [T], "missing": [id]}`: a batch read.
#[derive(JsonSchema)]
#[schemars(inline, deny_unknown_fields)]
pub struct Found<T> {
    #[schemars(extend("const" = true))]
    pub success: bool,
    /// The records found, in request order.
    pub data: Vec<T>,
    /// The requested ids that name no pin of this workspace.
    pub missing: Vec<String>,
}

pub(super) fn json_content(schema: Schema) -> IndexMap<String, MediaType> {
    IndexMap::from_iter([(
        "application/json".to_owned(),
        MediaType {
            schema: Some(SchemaObject {
                json_schema: schema,
                example: None,
                external_docs: None,
            }),
            ..Default::default()
        },
    )])
}

pub(super) fn response(description: &str, content: IndexMap<String, MediaType>) -> Response {
    Response {
        description: description.to_owned(),
        content,
        ..Default::default()
    }
}

impl<B: JsonSchema> OperationOutput for Envelope<B> {
    type Inner = B;

    fn operation_response(ctx: &mut GenContext, _: &mut Operation) -> Option<Response> {
        let schema = ctx.schema.subschema_for::<B>();
        Some(response("Success", json_content(schema)))
    }

    fn inferred_responses(
        ctx: &mut GenContext,
        operation: &mut Operation,
    ) -> Vec<(Option<u16>, Response)> {
        Self::operation_response(ctx, operation)
            .map(|r| vec![(Some(200), r)])
            .unwrap_or_default()
    }
}

/// The error envelope of CONTRACT.md 1, as a schema component named `Error`.
struct ErrorBody;

impl JsonSchema for ErrorBody {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Error".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "Every failure: a stable code, a readable message and, where useful, details (`field` and `expected` for invalid input, `required_scope`, `limit`/`used`/`window`/`resetAt` for rate limits).",
            "type": "object",
            "required": ["success", "error"],
            "additionalProperties": false,
            "properties": {
                "success": { "const": false },
                "error": {
                    "type": "object",
                    "required": ["code", "message"],
                    "additionalProperties": false,
                    "properties": {
                        "code": { "type": "string", "enum": Error::CODES },
                        "message": { "type": "string" },
                        "details": { "type": "object" }
                    }
                }
            }
        })
    }
}

/// An error response with the envelope.
pub(super) fn error_response(ctx: &mut GenContext, description: &str) -> Response {
    let schema = ctx.schema.subschema_for::<ErrorBody>();
    response(description, json_content(schema))
}

/// The failures any API operation can answer with; extractors and routes add their own.
const COMMON_ERRORS: [(u16, &str); 7] = [
    (
        400,
        "Invalid input: `VALIDATION_FAILED` (or `PIN_CONFIG_INVALID`) naming the field",
    ),
    (401, "Missing or invalid credential: `UNAUTHORIZED`"),
    (
        403,
        "The credential lacks the scope: `SCOPE_REQUIRED` (or `FORBIDDEN`)",
    ),
    (404, "No such resource in this workspace: `NOT_FOUND`"),
    (
        429,
        "Rate limit exceeded: `RATE_LIMIT_EXCEEDED`, with `Retry-After`",
    ),
    (500, INTERNAL),
    (503, UNAVAILABLE),
];

pub(super) const INTERNAL: &str =
    "Unexpected failure: `INTERNAL_ERROR` (the cause is logged, not sent)";
pub(super) const UNAVAILABLE: &str =
    "The store or rate limiter is unavailable: `SERVICE_UNAVAILABLE`, with `Retry-After`";

impl OperationOutput for Error {
    type Inner = Self;

    fn inferred_responses(ctx: &mut GenContext, _: &mut Operation) -> Vec<(Option<u16>, Response)> {
        COMMON_ERRORS
            .iter()
            .map(|&(status, text)| (Some(status), error_response(ctx, text)))
            .collect()
    }
}

/// The bearer credential and the scope an operation needs.
fn requires(operation: &mut Operation, scope: &str, note: &str) {
    operation.security.push(IndexMap::from_iter([(
        BEARER.to_owned(),
        vec![scope.to_owned()],
    )]));
    let needs = format!("Requires scope `{scope}`{note}.");
    operation.description = Some(match operation.description.take() {
        Some(text) => format!("{text}\n\n{needs}"),
        None => needs,
    });
}

/// The credential and scope of an operation whose handler checks them itself.
pub(super) fn requires_scope<'a>(
    op: TransformOperation<'a>,
    scope: &str,
    note: &str,
) -> TransformOperation<'a> {
    op.with(|mut op| {
        requires(op.inner_mut(), scope, note);
        op
    })
}

impl<S: RequiredScope> OperationInput for Auth<S> {
    fn operation_input(_: &mut GenContext, operation: &mut Operation) {
        requires(operation, S::SCOPE.as_str(), "");
    }
}

impl<S: RequiredScope> OperationInput for BoardAuth<S> {
    fn operation_input(_: &mut GenContext, operation: &mut Operation) {
        requires(
            operation,
            S::SCOPE.as_str(),
            " in the workspace, or from a role on this pinboard (a collaborator)",
        );
    }
}

impl<T: JsonSchema> OperationInput for ApiJson<T> {
    fn operation_input(ctx: &mut GenContext, operation: &mut Operation) {
        let schema = ctx.schema.subschema_for::<T>();
        set_body(
            ctx,
            operation,
            RequestBody {
                description: None,
                content: json_content(schema),
                required: true,
                extensions: IndexMap::default(),
            },
        );
    }

    fn inferred_early_responses(
        ctx: &mut GenContext,
        _: &mut Operation,
    ) -> Vec<(Option<u16>, Response)> {
        vec![
            (
                Some(413),
                error_response(ctx, "Body over the size limit: `PAYLOAD_TOO_LARGE`"),
            ),
            (
                Some(415),
                error_response(ctx, "Body not sent as JSON: `UNSUPPORTED_MEDIA_TYPE`"),
            ),
            (
                Some(408),
                error_response(
                    ctx,
                    "Body stalled (no byte for `http.body_stall_secs`): `REQUEST_TIMEOUT`",
                ),
            ),
        ]
    }
}

impl<T: JsonSchema> OperationInput for PatchBody<T> {
    fn operation_input(ctx: &mut GenContext, operation: &mut Operation) {
        let update = ctx.schema.subschema_for::<T>();
        let merge = ctx
            .schema
            .subschema_for::<crate::pins::merge::MergePatchBody>();
        let mut content = json_content(update);
        content.extend(
            json_content(merge)
                .into_values()
                .map(|media| (crate::pins::merge::MEDIA_TYPE.to_owned(), media)),
        );
        set_body(
            ctx,
            operation,
            RequestBody {
                description: Some(
                    "`application/json`: the fields sent change. \
                     `application/merge-patch+json`: RFC 7396 over the pin's document."
                        .to_owned(),
                ),
                content,
                required: true,
                extensions: IndexMap::default(),
            },
        );
    }

    fn inferred_early_responses(
        ctx: &mut GenContext,
        operation: &mut Operation,
    ) -> Vec<(Option<u16>, Response)> {
        ApiJson::<T>::inferred_early_responses(ctx, operation)
    }
}

impl<T: JsonSchema> OperationInput for ApiQuery<T> {
    fn operation_input(ctx: &mut GenContext, operation: &mut Operation) {
        axum::extract::Query::<T>::operation_input(ctx, operation);
    }
}

impl<T: JsonSchema> OperationInput for ApiPath<T> {
    fn operation_input(ctx: &mut GenContext, operation: &mut Operation) {
        let schema = ctx.schema.subschema_for::<T>();
        let params = parameters_from_schema(ctx, schema, ParamLocation::Path);
        add_parameters(ctx, operation, params);
    }
}

/// A documented request header (`If-Match`, `Idempotency-Key`) whose value matches
/// `pattern`.
fn header<'a>(
    op: TransformOperation<'a>,
    name: &str,
    description: &str,
    pattern: &str,
) -> TransformOperation<'a> {
    op.with(|mut op| {
        let schema = json_schema!({ "type": "string", "pattern": pattern });
        add_header(op.inner_mut(), name, description, schema);
        op
    })
}

/// Adds an optional request header of `schema` to `operation`.
pub(super) fn add_header(operation: &mut Operation, name: &str, description: &str, schema: Schema) {
    let parameter = Parameter::Header {
        parameter_data: ParameterData {
            name: name.to_owned(),
            description: Some(description.to_owned()),
            required: false,
            format: ParameterSchemaOrContent::Schema(SchemaObject {
                json_schema: schema,
                example: None,
                external_docs: None,
            }),
            extensions: IndexMap::default(),
            deprecated: None,
            example: None,
            examples: IndexMap::default(),
            explode: None,
        },
        style: HeaderStyle::Simple,
    };
    operation.parameters.push(ReferenceOr::Item(parameter));
}

/// An extra error status of one operation.
fn status<'a>(op: TransformOperation<'a>, code: u16, description: &str) -> TransformOperation<'a> {
    let description = description.to_owned();
    op.with(|mut op| {
        let response = aide::generate::in_context(|ctx| error_response(ctx, &description));
        op.inner_mut()
            .responses
            .get_or_insert_with(Default::default)
            .responses
            .insert(
                aide::openapi::StatusCode::Code(code),
                ReferenceOr::Item(response),
            );
        op
    })
}

/// What `If-Match` may be: `*`, or a list of `"<version>"` entity tags (weak ones too),
/// possibly empty (RFC 9110 `#entity-tag`: no condition).
pub const IF_MATCH_PATTERN: &str =
    r#"^[ \t]*(\*|(W/)?"[0-9]{1,18}"([ \t]*,[ \t]*(W/)?"[0-9]{1,18}")*)?[ \t]*$"#;

/// `If-Match` on a write of one versioned pin: 412 when it names another version.
pub fn if_match(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = header(
        op,
        "If-Match",
        "`\"<version>\"` (the ETag of a read), a list of them, or `*`: the write happens only if the record is still at one of those versions (else 412). An empty value asks for nothing; a value of another form is a 400.",
        IF_MATCH_PATTERN,
    );
    status(
        op,
        412,
        "The pin is no longer at the version in `If-Match`: `PRECONDITION_FAILED` with `details.current_version`",
    )
}

/// `Idempotency-Key` on a create: a retry with the same key and body replays the first answer.
pub fn idempotency_key(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = header(
        op,
        "Idempotency-Key",
        "1 to 255 visible ASCII characters. A retry with the same key and the same body, within the retention window, replays the first response (with `Idempotent-Replayed: true`) and writes nothing.",
        IdempotencyKey::PATTERN,
    );
    conflict(
        op,
        "The `Idempotency-Key` was used with another body, or is in use by a concurrent request: `CONFLICT`",
    )
}

/// The operation's 429, described in its own words.
pub fn rate_limited<'a>(op: TransformOperation<'a>, description: &str) -> TransformOperation<'a> {
    status(op, 429, description)
}

/// A 409 `CONFLICT` the operation can answer.
pub fn conflict<'a>(op: TransformOperation<'a>, description: &str) -> TransformOperation<'a> {
    status(op, 409, description)
}
