//! Inbound hooks: `/hooks` (create and delete need `datasets:write`, the list
//! `datasets:read`) and the hooks' urls, `POST /in/{token}` at the server root, which need no
//! credential and take any JSON body. Thin handlers over [`crate::hooks::ops`].

use aide::{
    axum::{
        routing::{delete_with, get_with, post_with},
        ApiRouter,
    },
    generate::GenContext,
    openapi::{Operation, RequestBody, Response},
    operation::set_body,
    transform::TransformOperation,
    OperationInput,
};
use axum::{
    body::Bytes,
    extract::{FromRequest, Request, State},
    http::HeaderMap,
};
use indexmap::IndexMap;
use schemars::{json_schema, JsonSchema};
use serde::Deserialize;

use super::{
    docs::{self, One, Page},
    json::parse_value,
    ApiJson, ApiPath, ApiQuery, Envelope, HookPath,
};
use crate::{
    app::AppState,
    auth::{Auth, DatasetsRead, DatasetsWrite},
    error::{Error, Result},
    hooks::{ops, CreateHookBody, CreatedHook, Delivered, HookRecord, HookToken, SignedHeaders},
    wire::{Deleted, PageParams},
};

fn doc<'a>(op: TransformOperation<'a>, summary: &str) -> TransformOperation<'a> {
    op.summary(summary).tag("hooks")
}

/// `/hooks`, part of the authenticated API.
pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new()
        .api_route(
            "/hooks",
            get_with(list, |op| {
                doc(op, "List inbound hooks, newest first (never their urls: only the first 8 characters of each token)")
                    .id("listHooks")
            })
            .post_with(create, |op| {
                doc(op, "Create an inbound hook: its url, shown only in this answer, writes one dataset")
                    .id("createHook")
            }),
        )
        .api_route(
            "/hooks/{id}",
            delete_with(delete, |op| {
                doc(op, "Delete an inbound hook: its url answers 404 from then on")
                    .id("deleteHook")
            }),
        )
}

/// The hooks' urls, at the server root, outside the API's credentials and rate limits (each
/// hook has its own minute).
pub fn urls() -> ApiRouter<AppState> {
    ApiRouter::new().api_route(
        "/in/{token}",
        post_with(call, |op| {
            let op = doc(
                op,
                "Send to an inbound hook (no credential; any JSON of at most 1 MiB)",
            )
            .id("sendToHook")
            .description(CALL_RULES)
            .with(|mut op| {
                for (name, text) in SIGNATURE_HEADERS {
                    let schema = json_schema!({"type": "string"});
                    docs::add_header(op.inner_mut(), name, text, schema);
                }
                op
            });
            docs::conflict(
                op,
                "An `append` hook's dataset holds data that is no array: `CONFLICT`",
            )
        }),
    )
}

const CALL_RULES: &str = "The token in the path is the hook's credential: a token that names no hook (or a \
deleted one) is a 404. The body, any JSON (`Content-Type` is not looked at; a body that is not JSON is a 400), \
becomes the hook's dataset's data (`replace`), is merged into it as a JSON Merge Patch (`merge`), or is \
appended to its array, each element of an array body in turn, the oldest dropped beyond the hook's \
`max_items` or the dataset's 1 MiB (`append`; data that is no array is a 409). A missing dataset is created \
(format json) by the call. A hook with a signature scheme refuses a call whose signature is missing, wrong or \
(`standard`) more than 5 minutes from now with 401, and writes nothing. Each hook takes `hooks.per_minute` \
calls a minute (60 by default), 429 with `Retry-After` beyond. Each accepted call is one dataset version and \
one `dataset.updated` event (`dataset.created` for the call that creates it).";

const SIGNATURE_HEADERS: [(&str, &str); 4] = [
    (
        "X-Hub-Signature-256",
        "`github` scheme: `sha256=` and the hex HMAC-SHA256 of the raw body with the secret",
    ),
    (
        "webhook-id",
        "`standard` scheme (Standard Webhooks): the message id",
    ),
    (
        "webhook-timestamp",
        "`standard` scheme: seconds since the epoch, within 5 minutes of the server's time",
    ),
    (
        "webhook-signature",
        "`standard` scheme: one or more space-separated `v1,<base64 HMAC-SHA256(key, \"{id}.{timestamp}.{body}\")>`",
    ),
];

async fn create(
    State(state): State<AppState>,
    auth: Auth<DatasetsWrite>,
    ApiJson(body, _): ApiJson<CreateHookBody>,
) -> Result<Envelope<One<CreatedHook>>> {
    Envelope::of(&ops::create(&state, &auth.principal, body).await?)
}

async fn list(
    State(state): State<AppState>,
    auth: Auth<DatasetsRead>,
    ApiQuery(params): ApiQuery<PageParams>,
) -> Result<Envelope<Page<HookRecord>>> {
    Envelope::page(&ops::list(&state, &auth.principal, &params).await?)
}

async fn delete(
    State(state): State<AppState>,
    auth: Auth<DatasetsWrite>,
    ApiPath(HookPath { id }): ApiPath<HookPath>,
) -> Result<Envelope<One<Deleted>>> {
    Envelope::of(&ops::delete(&state, &auth.principal, &id).await?)
}

/// `{token}` of `/in/{token}`.
#[derive(Deserialize, JsonSchema)]
struct TokenPath {
    /// The last segment of the hook's url.
    #[schemars(regex(pattern = HookToken::PATTERN))]
    token: String,
}

/// `POST /in/{token}`: the hook admits the call (token, minute, signature), then the body
/// is read as JSON and written.
async fn call(
    State(state): State<AppState>,
    ApiPath(TokenPath { token }): ApiPath<TokenPath>,
    headers: HeaderMap,
    AnyJson(body): AnyJson,
) -> Result<Envelope<One<Delivered>>> {
    let admitted = ops::admit(&state, &token, &signed_headers(&headers), &body).await?;
    let value = parse_value(&body, state.limits().json_depth)?;
    Envelope::of(&ops::deliver(&state, admitted, value).await?)
}

/// The signature headers sent as text.
fn signed_headers(headers: &HeaderMap) -> SignedHeaders {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    SignedHeaders {
        hub_signature_256: text("x-hub-signature-256"),
        webhook_id: text("webhook-id"),
        webhook_timestamp: text("webhook-timestamp"),
        webhook_signature: text("webhook-signature"),
    }
}

/// A body of any content type, read whole up to `limits.body_bytes` (413 beyond, 408 when
/// it stalls): a hook's sender may not be able to set a header, so the body's bytes are
/// what is signed and then read as JSON.
struct AnyJson(Bytes);

impl FromRequest<AppState> for AnyJson {
    type Rejection = Error;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Error> {
        let limit = state.limits().body_bytes;
        axum::body::to_bytes(req.into_body(), limit)
            .await
            .map(AnyJson)
            .map_err(|e| crate::limits::body_error(e, limit))
    }
}

impl OperationInput for AnyJson {
    fn operation_input(ctx: &mut GenContext, operation: &mut Operation) {
        set_body(
            ctx,
            operation,
            RequestBody {
                description: Some("Any JSON value".into()),
                content: docs::json_content(json_schema!({})),
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
                docs::error_response(ctx, "Body over the size limit: `PAYLOAD_TOO_LARGE`"),
            ),
            (
                Some(408),
                docs::error_response(
                    ctx,
                    "Body stalled (no byte for `http.body_stall_secs`): `REQUEST_TIMEOUT`",
                ),
            ),
        ]
    }
}
