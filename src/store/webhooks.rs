//! Outbound webhooks in the store (CONTRACT.md 15): the stored shape, the delivery log and
//! [`WebhookStore`], written once for both databases.
//!
//! Delivery state lives on the webhook's row: `cursor_seq` (the last event id it is done
//! with), the failure streak (`attempts`, `failing_since`, `next_attempt_at`) and the lease
//! (`lease_until`, `leased_by`) that gives one replica at a time the right to deliver for
//! it. Every write of a delivering replica is conditional on `leased_by` still naming it,
//! so a replica that lost its lease (it expired and another took it, or a PATCH or a
//! delete revoked it) changes nothing and stops.

use super::sql::Begin as _;

use super::events::NewEvent;
use super::sql::{Backend, Record};
use crate::error::{Error, Result};

/// A stored webhook.
#[derive(Debug, Clone)]
pub struct WebhookRow {
    pub id: String,
    pub workspace_id: String,
    pub url: String,
    /// Event type names, or `["*"]`.
    pub event_types: Vec<String>,
    pub pinboard_id: Option<String>,
    pub pin_id: Option<String>,
    pub description: Option<String>,
    /// `whsec_<base64 key>`: kept as made, since signing needs it. Never shown after the
    /// create answer, never logged.
    pub secret: String,
    pub enabled: bool,
    pub disabled_reason: Option<String>,
    /// The last event id this webhook is done with (delivered, or not its to deliver).
    pub cursor_seq: i64,
    /// Failed attempts at the event after the cursor.
    pub attempts: i64,
    /// When the current streak of failures began (ms).
    pub failing_since: Option<i64>,
    /// No attempt before this (ms): the pause after a failure.
    pub next_attempt_at: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

/// One attempt to deliver an event, as `GET /webhooks/{id}/deliveries` shows it.
#[derive(Debug, Clone)]
pub struct DeliveryRow {
    pub event_id: i64,
    pub event_type: String,
    /// The receiver's status; `None` when no answer came (refused, timed out, ...).
    pub status_code: Option<i64>,
    pub duration_ms: i64,
    pub error: Option<String>,
    pub at: i64,
}

/// Position of one page of `GET /webhooks`, newest first.
#[derive(Debug, Clone, Default)]
pub struct WebhookQuery {
    /// Rows to fetch (one more than shown, to learn `has_more`).
    pub limit: i64,
    /// Only webhooks created before this position (from the cursor).
    pub before_seq: Option<i64>,
}

/// Decides a PATCH from the locked row: the row to store, or the error to answer.
pub type WebhookChange<'a> = dyn FnMut(WebhookRow) -> Result<WebhookRow> + Send + 'a;

/// What a failed attempt leaves on the webhook.
#[derive(Debug, Clone)]
pub struct Failure {
    pub attempts: i64,
    pub failing_since: i64,
    pub next_attempt_at: i64,
    /// Set when the failures have lasted long enough: the reason, and the
    /// `webhook.disabled` event logged in the same transaction.
    pub disabled: Option<(String, NewEvent)>,
}

/// Webhooks in the store. Every method takes the workspace id, except
/// [`WebhookStore::claim_webhooks`]: the delivery worker looks for due webhooks of every
/// workspace at once (see its doc).
pub(crate) trait WebhookStore {
    /// Stores a new webhook, its cursor at the workspace's newest event (it delivers what
    /// commits from now on); false when the workspace already has `cap` webhooks.
    async fn insert_webhook(&self, hook: &WebhookRow, cap: i64) -> Result<bool>;
    async fn get_webhook(&self, ws: &str, id: &str) -> Result<Option<WebhookRow>>;
    async fn list_webhooks(&self, ws: &str, query: &WebhookQuery)
        -> Result<Vec<(i64, WebhookRow)>>;
    /// Applies `change` to the locked webhook; `None` when the workspace has none of that
    /// id. A change of what or where it delivers (url, filters, enabled) revokes the lease,
    /// so the replica delivering with the old settings stops at its next write.
    async fn update_webhook(
        &self,
        ws: &str,
        id: &str,
        change: &mut WebhookChange<'_>,
    ) -> Result<Option<WebhookRow>>;
    /// False when the workspace has no webhook of that id.
    async fn delete_webhook(&self, ws: &str, id: &str) -> Result<bool>;
    /// The webhook's newest `limit` attempts, newest first.
    async fn webhook_deliveries(&self, ws: &str, id: &str, limit: i64) -> Result<Vec<DeliveryRow>>;
    /// Appends `event` (a `webhook.test`) to the log of workspace `ws`.
    async fn log_webhook_event(&self, ws: &str, event: &NewEvent) -> Result<()>;
    /// Up to `limit` webhooks that have work at `now`: enabled, no retry pending, no live
    /// lease, and an event after their cursor. With [`WebhookStore::claim_webhooks`], the
    /// queries over every workspace: the delivery worker serves them all, and a webhook's
    /// row names its workspace, which every later statement names.
    async fn due_webhooks(&self, now: i64, limit: i64) -> Result<Vec<String>>;
    /// The workspaces that have an enabled webhook.
    async fn webhook_workspaces(&self) -> Result<Vec<String>>;
    /// Leases to `worker` until `lease_until` those of `ids` that are still due at `now`
    /// (another replica may have taken some meanwhile): the rows leased.
    async fn claim_webhooks(
        &self,
        worker: &str,
        ids: &[String],
        now: i64,
        lease_until: i64,
    ) -> Result<Vec<WebhookRow>>;
    /// Records `attempts` (delivered) and moves the cursor to `cursor`, clearing any
    /// failure streak and extending the lease; false when `worker` no longer holds it
    /// (nothing is written then: whoever holds it now sends those events again).
    async fn webhook_progress(
        &self,
        ws: &str,
        id: &str,
        worker: &str,
        attempts: &[DeliveryRow],
        cursor: i64,
        lease_until: i64,
    ) -> Result<bool>;
    /// Records the failed `attempt` and the streak it leaves (`failure`), disabling the
    /// webhook when `failure.disabled` says so, and gives the lease back.
    async fn webhook_failed(
        &self,
        ws: &str,
        id: &str,
        worker: &str,
        attempt: &DeliveryRow,
        failure: &Failure,
    ) -> Result<bool>;
    /// Gives the lease back when `worker` still holds it.
    async fn release_webhook(&self, ws: &str, id: &str, worker: &str) -> Result<()>;
}

/// The columns of a webhook, in the order [`webhook_at`] reads them.
macro_rules! webhook_columns {
    () => {
        "id, workspace_id, url, event_types, pinboard_id, pin_id, description, secret, \
         enabled, disabled_reason, cursor_seq, attempts, failing_since, next_attempt_at, \
         created_at, updated_at"
    };
}

/// The cap is checked in the insert itself, so two creates can't both pass it.
const INSERT_WEBHOOK: &str = concat!(
    "INSERT INTO webhooks (",
    webhook_columns!(),
    ") SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, NULL, \
     (SELECT COALESCE(MAX(seq), 0) FROM events WHERE workspace_id = $2), 0, NULL, 0, $10, $10 \
     WHERE (SELECT COUNT(*) FROM webhooks WHERE workspace_id = $2) < $11"
);
const GET_WEBHOOK: &str = concat!(
    "SELECT ",
    webhook_columns!(),
    " FROM webhooks WHERE workspace_id = $1 AND id = $2"
);
const LIST_WEBHOOKS: &str = concat!(
    "SELECT seq, ",
    webhook_columns!(),
    " FROM webhooks WHERE workspace_id = $1 AND ($2 IS NULL OR seq < $2) ORDER BY seq DESC LIMIT $3"
);
const UPDATE_WEBHOOK: &str = "UPDATE webhooks SET url = $3, event_types = $4, pinboard_id = $5, \
     pin_id = $6, description = $7, enabled = $8, disabled_reason = $9, attempts = $10, \
     failing_since = $11, next_attempt_at = $12, updated_at = $13, \
     lease_until = CASE WHEN $14 THEN 0 ELSE lease_until END, \
     leased_by = CASE WHEN $14 THEN NULL ELSE leased_by END \
     WHERE workspace_id = $1 AND id = $2";
const DELETE_WEBHOOK: &str = "DELETE FROM webhooks WHERE workspace_id = $1 AND id = $2";
const DELIVERIES: &str = "SELECT d.event_id, d.event_type, d.status_code, d.duration_ms, d.error, \
     d.at FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id \
     WHERE w.workspace_id = $1 AND d.webhook_id = $2 ORDER BY d.seq DESC LIMIT $3";
/// An attempt, kept only while its webhook exists (a delete may have come meanwhile).
const INSERT_DELIVERY: &str = "INSERT INTO webhook_deliveries (webhook_id, event_id, event_type, \
     status_code, duration_ms, error, at) SELECT $2, $3, $4, $5, $6, $7, $8 \
     WHERE EXISTS (SELECT 1 FROM webhooks WHERE workspace_id = $1 AND id = $2)";
/// Keeps a webhook's newest [`KEPT_DELIVERIES`] attempts: removes those older than the
/// oldest of them (`$3` is one less).
const PRUNE_DELIVERIES: &str = "DELETE FROM webhook_deliveries WHERE webhook_id = $2 \
     AND webhook_id IN (SELECT id FROM webhooks WHERE workspace_id = $1) \
     AND seq < (SELECT seq FROM webhook_deliveries WHERE webhook_id = $2 \
     ORDER BY seq DESC LIMIT 1 OFFSET $3)";
const PROGRESS: &str = "UPDATE webhooks SET cursor_seq = $4, attempts = 0, failing_since = NULL, \
     next_attempt_at = 0, lease_until = $5 \
     WHERE workspace_id = $1 AND id = $2 AND leased_by = $3";
const FAILED: &str =
    "UPDATE webhooks SET attempts = $4, failing_since = $5, next_attempt_at = $6, \
     enabled = $7, disabled_reason = $8, lease_until = 0, leased_by = NULL \
     WHERE workspace_id = $1 AND id = $2 AND leased_by = $3";
const RELEASE: &str = "UPDATE webhooks SET lease_until = 0, leased_by = NULL \
     WHERE workspace_id = $1 AND id = $2 AND leased_by = $3";

const DUE_WEBHOOKS: &str = "SELECT id FROM webhooks w WHERE enabled AND next_attempt_at <= $1 \
     AND lease_until < $1 AND EXISTS (SELECT 1 FROM events e \
     WHERE e.workspace_id = w.workspace_id AND e.seq > w.cursor_seq) \
     ORDER BY next_attempt_at LIMIT $2";

const WEBHOOK_WORKSPACES: &str = "SELECT DISTINCT workspace_id FROM webhooks WHERE enabled";

/// Attempts kept per webhook (`GET /webhooks/{id}/deliveries` shows them all).
pub const KEPT_DELIVERIES: i64 = 100;

/// A webhook from the webhook columns at column `first` on.
fn webhook_at(row: &impl Record, first: usize) -> Result<WebhookRow> {
    Ok(WebhookRow {
        id: row.get(first)?,
        workspace_id: row.get(first + 1)?,
        url: row.get(first + 2)?,
        event_types: row.list(first + 3)?,
        pinboard_id: row.get(first + 4)?,
        pin_id: row.get(first + 5)?,
        description: row.get(first + 6)?,
        secret: row.get(first + 7)?,
        enabled: row.get(first + 8)?,
        disabled_reason: row.get(first + 9)?,
        cursor_seq: row.get(first + 10)?,
        attempts: row.get(first + 11)?,
        failing_since: row.get(first + 12)?,
        next_attempt_at: row.get(first + 13)?,
        created_at: row.get(first + 14)?,
        updated_at: row.get(first + 15)?,
    })
}

/// Records one attempt of webhook `id` and keeps its newest [`KEPT_DELIVERIES`].
async fn insert_delivery<B: Backend>(
    tx: &mut B::Db,
    ws: &str,
    id: &str,
    attempt: &DeliveryRow,
) -> Result<()> {
    B::query(INSERT_DELIVERY)
        .bind(ws)
        .bind(id)
        .bind(attempt.event_id)
        .bind(&attempt.event_type)
        .bind(attempt.status_code)
        .bind(attempt.duration_ms)
        .bind(&attempt.error)
        .bind(attempt.at)
        .execute(tx)
        .await?;
    Ok(())
}

async fn prune_deliveries<B: Backend>(tx: &mut B::Db, ws: &str, id: &str) -> Result<()> {
    B::query(PRUNE_DELIVERIES)
        .bind(ws)
        .bind(id)
        .bind(KEPT_DELIVERIES - 1)
        .execute(tx)
        .await?;
    Ok(())
}

impl<B: Backend> WebhookStore for B {
    async fn insert_webhook(&self, hook: &WebhookRow, cap: i64) -> Result<bool> {
        let done = B::query(INSERT_WEBHOOK)
            .bind(&hook.id)
            .bind(&hook.workspace_id)
            .bind(&hook.url)
            .bind_list(&hook.event_types)
            .bind(&hook.pinboard_id)
            .bind(&hook.pin_id)
            .bind(&hook.description)
            .bind(&hook.secret)
            .bind(hook.enabled)
            .bind(hook.created_at)
            .bind(cap)
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(done == 1)
    }

    async fn get_webhook(&self, ws: &str, id: &str) -> Result<Option<WebhookRow>> {
        B::query(GET_WEBHOOK)
            .bind(ws)
            .bind(id)
            .fetch_optional(&mut *self.reader().await?)
            .await?
            .map(|row| webhook_at(&row, 0))
            .transpose()
    }

    async fn list_webhooks(
        &self,
        ws: &str,
        query: &WebhookQuery,
    ) -> Result<Vec<(i64, WebhookRow)>> {
        let rows = B::query(LIST_WEBHOOKS)
            .bind(ws)
            .bind(query.before_seq)
            .bind(query.limit)
            .fetch_all(&mut *self.reader().await?)
            .await?;
        rows.iter()
            .map(|row| Ok((row.get(0)?, webhook_at(row, 1)?)))
            .collect()
    }

    async fn update_webhook(
        &self,
        ws: &str,
        id: &str,
        change: &mut WebhookChange<'_>,
    ) -> Result<Option<WebhookRow>> {
        let mut conn = self.writer().await?;
        let mut tx = conn.begin().await?;
        let locked = format!("{GET_WEBHOOK}{}", B::FOR_UPDATE);
        let Some(row) = B::query(&locked)
            .bind(ws)
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?
        else {
            return Ok(None);
        };
        let old = webhook_at(&row, 0)?;
        let new = change(old.clone())?;
        let revoke = old.url != new.url
            || old.event_types != new.event_types
            || old.pinboard_id != new.pinboard_id
            || old.pin_id != new.pin_id
            || old.enabled != new.enabled;
        B::query(UPDATE_WEBHOOK)
            .bind(ws)
            .bind(id)
            .bind(&new.url)
            .bind_list(&new.event_types)
            .bind(&new.pinboard_id)
            .bind(&new.pin_id)
            .bind(&new.description)
            .bind(new.enabled)
            .bind(&new.disabled_reason)
            .bind(new.attempts)
            .bind(new.failing_since)
            .bind(new.next_attempt_at)
            .bind(new.updated_at)
            .bind(revoke)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(Some(new))
    }

    async fn delete_webhook(&self, ws: &str, id: &str) -> Result<bool> {
        let done = B::query(DELETE_WEBHOOK)
            .bind(ws)
            .bind(id)
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(done == 1)
    }

    async fn webhook_deliveries(&self, ws: &str, id: &str, limit: i64) -> Result<Vec<DeliveryRow>> {
        let rows = B::query(DELIVERIES)
            .bind(ws)
            .bind(id)
            .bind(limit)
            .fetch_all(&mut *self.reader().await?)
            .await?;
        rows.iter()
            .map(|row| {
                Ok(DeliveryRow {
                    event_id: row.get(0)?,
                    event_type: row.get(1)?,
                    status_code: row.get(2)?,
                    duration_ms: row.get(3)?,
                    error: row.get(4)?,
                    at: row.get(5)?,
                })
            })
            .collect()
    }

    async fn log_webhook_event(&self, ws: &str, event: &NewEvent) -> Result<()> {
        let mut conn = self.writer().await?;
        let mut tx = conn.begin().await?;
        B::append_events(&mut *tx, std::slice::from_ref(event)).await?;
        tx.commit().await?;
        self.committed(ws);
        Ok(())
    }

    async fn due_webhooks(&self, now: i64, limit: i64) -> Result<Vec<String>> {
        let rows = B::query(DUE_WEBHOOKS)
            .bind(now)
            .bind(limit)
            .fetch_all(&mut *self.reader().await?)
            .await?;
        rows.iter().map(|row| Ok(row.get(0)?)).collect()
    }

    async fn webhook_workspaces(&self) -> Result<Vec<String>> {
        let rows = B::query(WEBHOOK_WORKSPACES)
            .fetch_all(&mut *self.reader().await?)
            .await?;
        rows.iter().map(|row| Ok(row.get(0)?)).collect()
    }

    async fn claim_webhooks(
        &self,
        worker: &str,
        ids: &[String],
        now: i64,
        lease_until: i64,
    ) -> Result<Vec<WebhookRow>> {
        // PostgreSQL: replicas claiming at once skip each other's rows instead of waiting
        // (so they can't deadlock either), and the lease is checked again on each row as
        // it is updated: a webhook another replica leased meanwhile is never taken twice.
        let sql = format!(
            "UPDATE webhooks SET lease_until = $1, leased_by = $2 WHERE id IN (SELECT id \
             FROM webhooks WHERE {} AND enabled AND next_attempt_at <= $4 \
             AND lease_until < $4 ORDER BY id{}) AND enabled AND lease_until < $4 \
             RETURNING {}",
            B::in_list("id", 3),
            B::SKIP_LOCKED,
            webhook_columns!()
        );
        let rows = B::query(&sql)
            .bind(lease_until)
            .bind(worker)
            .bind_list(ids)
            .bind(now)
            .fetch_all(&mut *self.writer().await?)
            .await?;
        rows.iter().map(|row| webhook_at(row, 0)).collect()
    }

    async fn webhook_progress(
        &self,
        ws: &str,
        id: &str,
        worker: &str,
        attempts: &[DeliveryRow],
        cursor: i64,
        lease_until: i64,
    ) -> Result<bool> {
        let mut conn = self.writer().await?;
        let mut tx = conn.begin().await?;
        let held = B::query(PROGRESS)
            .bind(ws)
            .bind(id)
            .bind(worker)
            .bind(cursor)
            .bind(lease_until)
            .execute(&mut *tx)
            .await?
            == 1;
        if held && !attempts.is_empty() {
            // The lease is held (so the webhook exists): the attempts in one statement, of
            // which only the newest [`KEPT_DELIVERIES`] would be kept anyway.
            let kept = usize::try_from(KEPT_DELIVERIES).unwrap_or(usize::MAX);
            let attempts = &attempts[attempts.len().saturating_sub(kept)..];
            let rows: Vec<_> = attempts
                .iter()
                .map(|a| {
                    (
                        a.event_id,
                        &a.event_type,
                        a.status_code,
                        a.duration_ms,
                        &a.error,
                        a.at,
                    )
                })
                .collect();
            let rows = serde_json::to_string(&rows).map_err(Error::internal)?;
            B::query(B::INSERT_DELIVERIES)
                .bind(id)
                .bind(rows)
                .execute(&mut *tx)
                .await?;
            prune_deliveries::<B>(&mut *tx, ws, id).await?;
        }
        tx.commit().await?;
        Ok(held)
    }

    async fn webhook_failed(
        &self,
        ws: &str,
        id: &str,
        worker: &str,
        attempt: &DeliveryRow,
        failure: &Failure,
    ) -> Result<bool> {
        let mut conn = self.writer().await?;
        let mut tx = conn.begin().await?;
        insert_delivery::<B>(&mut *tx, ws, id, attempt).await?;
        prune_deliveries::<B>(&mut *tx, ws, id).await?;
        let reason = failure.disabled.as_ref().map(|(reason, _)| reason.as_str());
        let held = B::query(FAILED)
            .bind(ws)
            .bind(id)
            .bind(worker)
            .bind(failure.attempts)
            .bind(failure.failing_since)
            .bind(failure.next_attempt_at)
            .bind(reason.is_none())
            .bind(reason)
            .execute(&mut *tx)
            .await?
            == 1;
        let disabled = match &failure.disabled {
            Some((_, event)) if held => {
                B::append_events(&mut *tx, std::slice::from_ref(event)).await?;
                true
            }
            _ => false,
        };
        tx.commit().await?;
        if disabled {
            self.committed(ws);
        }
        Ok(held)
    }

    async fn release_webhook(&self, ws: &str, id: &str, worker: &str) -> Result<()> {
        B::query(RELEASE)
            .bind(ws)
            .bind(id)
            .bind(worker)
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(())
    }
}
