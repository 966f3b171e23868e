//! `/webhooks` routes (scope `*`): outbound webhooks, thin handlers over
//! [`crate::webhooks::ops`].

use aide::{
    axum::{
        routing::{get_with, post_with},
        ApiRouter,
    },
    transform::TransformOperation,
};
use axum::extract::State;

use super::{
    docs::{self, One, Page},
    ApiJson, ApiPath, ApiQuery, Envelope, WebhookPath,
};
use crate::{
    app::AppState,
    auth::{AllScopes, Auth},
    error::Result,
    webhooks::{
        ops, CreateWebhookBody, CreatedWebhook, DeliveryRecord, TestQueued, UpdateWebhookBody,
        WebhookRecord,
    },
    wire::{Deleted, PageParams},
};

fn doc<'a>(op: TransformOperation<'a>, summary: &str) -> TransformOperation<'a> {
    op.summary(summary).tag("webhooks")
}

const URL_RULES: &str = "`url` is http or https; an address written in it that is loopback, \
private (10/8, 172.16/12, 192.168/16, 100.64/10), link-local, unique-local (fc00::/7), \
unspecified or an IPv4-mapped IPv6 of those, or `localhost`, is a 400 at `url` (unless the \
server sets `webhooks.allow_private_targets`); a name is resolved at each delivery, and one \
that resolves to such an address is not sent to. An unknown event type is a 400 at \
`events`. A `pinboard_id` or `pin_id` that is not the workspace's is a 404.";

const DELIVERY_RULES: &str = "Each matching event is POSTed as its `/v1/events` frame's JSON \
(`Content-Type: application/json`) with `webhook-id` (the event id, the same on every retry), \
`webhook-timestamp` (seconds) and `webhook-signature: v1,<base64 HMAC-SHA256(key, \
\"{id}.{timestamp}.{body}\")>`, the key being the base64 after `whsec_` in the secret. A 2xx \
within 10 s is delivered; anything else is retried after about 5 s, 30 s, 2 min, 10 min, 1 h, \
then every 4 h, in event order (the webhook's later events wait). After \
`webhooks.disable_after_secs` (a day) of failures the webhook is disabled and a \
`webhook.disabled` event is logged.";

pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new()
        .api_route(
            "/webhooks",
            get_with(list, |op| {
                doc(op, "List the workspace's outbound webhooks, newest first (never their secrets)")
                    .id("listWebhooks")
            })
            .post_with(create, |op| {
                let op = doc(
                    op,
                    "Create an outbound webhook: the workspace's events, POSTed and signed; its secret is shown only in this answer",
                )
                .id("createWebhook")
                .description(&format!("{URL_RULES} {DELIVERY_RULES}"));
                docs::conflict(
                    op,
                    "The workspace has `webhooks.max_per_workspace` webhooks: `CONFLICT`",
                )
            }),
        )
        .api_route(
            "/webhooks/{id}",
            get_with(read, |op| doc(op, "Read an outbound webhook").id("getWebhook"))
                .patch_with(update, |op| {
                    doc(
                        op,
                        "Update an outbound webhook: the fields sent; `enabled: true` resumes a disabled one where it stopped",
                    )
                    .id("patchWebhook")
                    .description(URL_RULES)
                })
                .delete_with(delete, |op| {
                    doc(op, "Delete an outbound webhook: nothing more is sent")
                        .id("deleteWebhook")
                }),
        )
        .api_route(
            "/webhooks/{id}/deliveries",
            get_with(deliveries, |op| {
                doc(
                    op,
                    "The webhook's last 100 delivery attempts, newest first",
                )
                .id("listWebhookDeliveries")
            }),
        )
        .api_route(
            "/webhooks/{id}/test",
            post_with(test, |op| {
                docs::conflict(
                    doc(
                        op,
                        "Send a `webhook.test` event to this webhook alone (after the events before it)",
                    )
                    .id("testWebhook"),
                    "The webhook is disabled: `CONFLICT`",
                )
            }),
        )
}

async fn create(
    State(state): State<AppState>,
    auth: Auth<AllScopes>,
    ApiJson(body, _): ApiJson<CreateWebhookBody>,
) -> Result<Envelope<One<CreatedWebhook>>> {
    Envelope::of(&ops::create(&state, &auth.principal, body).await?)
}

async fn list(
    State(state): State<AppState>,
    auth: Auth<AllScopes>,
    ApiQuery(params): ApiQuery<PageParams>,
) -> Result<Envelope<Page<WebhookRecord>>> {
    Envelope::page(&ops::list(&state, &auth.principal, &params).await?)
}

async fn read(
    State(state): State<AppState>,
    auth: Auth<AllScopes>,
    ApiPath(WebhookPath { id }): ApiPath<WebhookPath>,
) -> Result<Envelope<One<WebhookRecord>>> {
    Envelope::of(&ops::get(&state, &auth.principal, &id).await?)
}

async fn update(
    State(state): State<AppState>,
    auth: Auth<AllScopes>,
    ApiPath(WebhookPath { id }): ApiPath<WebhookPath>,
    ApiJson(body, _): ApiJson<UpdateWebhookBody>,
) -> Result<Envelope<One<WebhookRecord>>> {
    Envelope::of(&ops::update(&state, &auth.principal, &id, body).await?)
}

async fn delete(
    State(state): State<AppState>,
    auth: Auth<AllScopes>,
    ApiPath(WebhookPath { id }): ApiPath<WebhookPath>,
) -> Result<Envelope<One<Deleted>>> {
    Envelope::of(&ops::delete(&state, &auth.principal, &id).await?)
}

async fn deliveries(
    State(state): State<AppState>,
    auth: Auth<AllScopes>,
    ApiPath(WebhookPath { id }): ApiPath<WebhookPath>,
) -> Result<Envelope<One<Vec<DeliveryRecord>>>> {
    Envelope::of(&ops::deliveries(&state, &auth.principal, &id).await?)
}

async fn test(
    State(state): State<AppState>,
    auth: Auth<AllScopes>,
    ApiPath(WebhookPath { id }): ApiPath<WebhookPath>,
) -> Result<Envelope<One<TestQueued>>> {
    Envelope::of(&ops::test(&state, &auth.principal, &id).await?)
}
