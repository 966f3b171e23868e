//! The webhook operations (CONTRACT.md 15), all needing scope `*` (stated by their routes):
//! a webhook sends the workspace's events, whatever scopes its maker holds, to a URL of
//! their choosing, so it is as strong as an owner's key.

use super::{
    CreateWebhookBody, CreatedWebhook, DeliveryRecord, TestQueued, UpdateWebhookBody, WebhookRecord,
};
use crate::{
    app::AppState,
    auth::Principal,
    clock,
    error::{Error, Result},
    events::EventKind,
    store::{NewEvent, WebhookQuery, WebhookRow, KEPT_DELIVERIES},
    wire::{Deleted, Page, PageParams},
};

fn webhook_missing() -> Error {
    Error::NotFound {
        what: "webhook",
        index: None,
    }
}

/// The pinboard and pin a webhook is limited to must be the workspace's (404 otherwise, as
/// for `GET /pins?pinboard_id=`): a mistyped id would otherwise deliver nothing, silently.
async fn check_filters(
    state: &AppState,
    ws: &str,
    pinboard_id: Option<&str>,
    pin_id: Option<&str>,
) -> Result<()> {
    if let Some(board) = pinboard_id {
        if state.store.get_pinboard(ws, board).await?.is_none() {
            return Err(Error::NotFound {
                what: "pinboard",
                index: None,
            });
        }
    }
    if let Some(pin) = pin_id {
        let ids = [pin.to_owned()];
        if state.store.get_pins(ws, &ids).await?.is_empty() {
            return Err(Error::NotFound {
                what: "pin",
                index: None,
            });
        }
    }
    Ok(())
}

/// `POST /webhooks`: the webhook with its secret, the only time it is shown. It is sent
/// the events that commit from now on.
pub async fn create(
    state: &AppState,
    who: &Principal,
    body: CreateWebhookBody,
) -> Result<CreatedWebhook> {
    let settings = &state.settings.webhooks;
    let row = body.into_row(
        &who.workspace_id,
        settings.allow_private_targets,
        clock::now_ms(),
    )?;
    check_filters(
        state,
        &who.workspace_id,
        row.pinboard_id.as_deref(),
        row.pin_id.as_deref(),
    )
    .await?;
    let cap = settings.max_per_workspace;
    if !state.store.insert_webhook(&row, i64::from(cap)).await? {
        return Err(Error::Conflict(format!(
            "the workspace has {cap} webhooks, the most it may have (webhooks.max_per_workspace)"
        )));
    }
    // The worker looks after commits only of workspaces it knows to have a webhook.
    state.webhooks.nudge();
    Ok(CreatedWebhook {
        record: WebhookRecord::new(&row),
        secret: row.secret,
    })
}

/// `GET /webhooks`: newest first, keyset-paginated like the other lists.
pub async fn list(
    state: &AppState,
    who: &Principal,
    params: &PageParams,
) -> Result<Page<WebhookRecord>> {
    let (limit, before_seq) = params.window()?;
    let query = WebhookQuery {
        limit: limit + 1,
        before_seq,
    };
    let rows = state.store.list_webhooks(&who.workspace_id, &query).await?;
    Ok(Page::of(rows, limit, |(seq, _)| *seq).map(|(_, row)| WebhookRecord::new(&row)))
}

async fn find(state: &AppState, who: &Principal, id: &str) -> Result<WebhookRow> {
    state
        .store
        .get_webhook(&who.workspace_id, id)
        .await?
        .ok_or_else(webhook_missing)
}

/// `GET /webhooks/{id}`.
pub async fn get(state: &AppState, who: &Principal, id: &str) -> Result<WebhookRecord> {
    Ok(WebhookRecord::new(&find(state, who, id).await?))
}

/// `PATCH /webhooks/{id}`: the fields sent change; `enabled: true` resumes a disabled
/// webhook from its cursor, at once.
pub async fn update(
    state: &AppState,
    who: &Principal,
    id: &str,
    body: UpdateWebhookBody,
) -> Result<WebhookRecord> {
    let update = body.into_update(state.settings.webhooks.allow_private_targets)?;
    let board = update.body.pinboard_id.as_ref().and_then(Option::as_deref);
    let pin = update.body.pin_id.as_ref().and_then(Option::as_deref);
    check_filters(state, &who.workspace_id, board, pin).await?;
    let now = clock::now_ms();
    let mut change = |row: WebhookRow| Ok(update.apply(row, now));
    let row = state
        .store
        .update_webhook(&who.workspace_id, id, &mut change)
        .await?
        .ok_or_else(webhook_missing)?;
    if row.enabled {
        state.webhooks.nudge();
    }
    Ok(WebhookRecord::new(&row))
}

/// `DELETE /webhooks/{id}`: nothing more is sent (an attempt under way ends unrecorded).
pub async fn delete(state: &AppState, who: &Principal, id: &str) -> Result<Deleted> {
    if state.store.delete_webhook(&who.workspace_id, id).await? {
        Ok(Deleted::new(id))
    } else {
        Err(webhook_missing())
    }
}

/// `GET /webhooks/{id}/deliveries`: its newest attempts (at most 100), newest first.
pub async fn deliveries(
    state: &AppState,
    who: &Principal,
    id: &str,
) -> Result<Vec<DeliveryRecord>> {
    find(state, who, id).await?;
    let rows = state
        .store
        .webhook_deliveries(&who.workspace_id, id, KEPT_DELIVERIES)
        .await?;
    Ok(rows.iter().map(DeliveryRecord::new).collect())
}

/// `POST /webhooks/{id}/test`: logs a `webhook.test` event, which goes to this webhook
/// alone, in its turn after the events before it (409 while the webhook is disabled:
/// nothing would be sent).
pub async fn test(state: &AppState, who: &Principal, id: &str) -> Result<TestQueued> {
    let row = find(state, who, id).await?;
    if !row.enabled {
        return Err(Error::Conflict(
            "the webhook is disabled: enable it (PATCH {\"enabled\": true}) to test it".into(),
        ));
    }
    let data = serde_json::json!({
        "id": row.id,
        "test": true,
        "message": "a test event from Corkboard",
    });
    let event = NewEvent {
        workspace_id: who.workspace_id.clone(),
        kind: EventKind::WebhookTest,
        resource_id: row.id.clone(),
        version: None,
        boards: Vec::new(),
        at: clock::now_ms(),
        data: data.to_string(),
    };
    state
        .store
        .log_webhook_event(&who.workspace_id, &event)
        .await?;
    state.webhooks.nudge();
    Ok(TestQueued {
        webhook_id: row.id,
        event_type: EventKind::WebhookTest.as_str().to_owned(),
    })
}
