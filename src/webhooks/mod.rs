//! Outbound webhooks (CONTRACT.md 15): a workspace's events POSTed to a URL as they commit,
//! signed the Standard Webhooks way, retried with growing pauses, at least once, in order.
//!
//! This module parses the bodies into [`WebhookRow`]s and shapes the records; `target.rs`
//! decides which addresses a webhook may reach (at create, and again for every address a
//! name resolves to at delivery); `ops.rs` has the operations; `worker.rs` delivers, from
//! the durable event log, holding a lease per webhook in the store.

pub mod ops;
mod target;
mod worker;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use worker::Worker;

use crate::{
    clock,
    error::{Error, Result},
    events::EventKind,
    store::{DeliveryRow, WebhookRow},
    wire::body::{non_empty, nullable, present},
};

/// `[webhooks]` settings.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct WebhookSettings {
    /// Seconds of failures (since the last delivered event) after which a webhook is
    /// disabled.
    pub disable_after_secs: u64,
    /// Whether webhooks may target loopback, private, link-local and unique-local
    /// addresses (a development setting: on a server it lets API users reach its network).
    pub allow_private_targets: bool,
    /// The first pause after a failure, ms; the later ones grow in the same proportions as
    /// 5 s, 30 s, 2 min, 10 min, 1 h, then every 4 h.
    pub retry_base_ms: u64,
    /// How often each replica looks for retries that are due (new events wake it at once).
    pub poll_ms: u64,
    /// Seconds a receiver has to answer.
    pub timeout_secs: u64,
    /// Seconds a replica's lease on a webhook lasts, renewed as it delivers: how long
    /// another replica waits before taking over from one that died. More than
    /// `timeout_secs`.
    pub lease_secs: u64,
    /// Webhooks per workspace (409 beyond).
    pub max_per_workspace: u32,
    /// Webhooks one replica delivers to at once.
    pub concurrency: usize,
    /// Whether this replica delivers at all (API-only replicas may leave it to others).
    pub deliver: bool,
    /// An HTTP proxy every delivery goes through (e.g. an egress filter); empty: direct.
    /// Through a proxy, the proxy connects, so refusing private addresses is its job.
    pub proxy: String,
}

impl WebhookSettings {
    /// What can't be used, as a message naming the key.
    pub(crate) fn check(&self) -> std::result::Result<(), String> {
        if self.retry_base_ms == 0 || self.poll_ms == 0 || self.timeout_secs == 0 {
            return Err(
                "webhooks.retry_base_ms, poll_ms and timeout_secs must be at least 1".into(),
            );
        }
        if self.lease_secs <= self.timeout_secs {
            return Err("webhooks.lease_secs must be more than webhooks.timeout_secs".into());
        }
        if self.concurrency == 0 || self.max_per_workspace == 0 {
            return Err(
                "webhooks.concurrency and webhooks.max_per_workspace must be at least 1".into(),
            );
        }
        if !self.proxy.is_empty() && reqwest::Proxy::all(&self.proxy).is_err() {
            return Err("webhooks.proxy must be empty or a proxy URL".into());
        }
        Ok(())
    }
}

/// Longest url, in characters.
pub const URL_CHARS: usize = 2048;
/// Longest description, in characters.
pub const DESCRIPTION_CHARS: usize = 500;
/// Most entries in `events`.
pub const EVENTS_MAX: usize = 50;
/// What a url looks like (the rest of the rules are in the operation's description).
pub const URL_PATTERN: &str = "^[Hh][Tt][Tt][Pp][Ss]?://[^\\x00]+$";
/// Every event: the one entry that stands for all types.
pub const ALL_EVENTS: &str = "*";

/// `events` entries: every event type name, and `*`.
fn event_names() -> Vec<&'static str> {
    let mut names = EventKind::NAMES.to_vec();
    names.push(ALL_EVENTS);
    names
}

fn events_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "array",
        "minItems": 1,
        "maxItems": EVENTS_MAX,
        "items": {"type": "string", "enum": event_names()},
    })
}

/// `POST /webhooks` body.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(example = serde_json::json!({"url": "https://example.com/hooks/corkboard", "events": ["pin.stale", "pin.updated"], "description": "alerts"}))]
pub struct CreateWebhookBody {
    /// Where events are POSTed: http or https, at most 2048 characters; not a loopback,
    /// private, link-local or unique-local address (unless the server allows private
    /// targets).
    #[schemars(length(max = URL_CHARS), regex(pattern = URL_PATTERN))]
    pub url: String,
    /// The event types to send (as `/v1/events` names them), or `["*"]` for all.
    #[schemars(schema_with = "events_schema")]
    pub events: Vec<String>,
    /// Only events whose `boards` include this pinboard of the workspace.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "String")]
    pub pinboard_id: Option<String>,
    /// Only events about this pin of the workspace.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "String")]
    pub pin_id: Option<String>,
    #[serde(default)]
    #[schemars(length(max = DESCRIPTION_CHARS))]
    pub description: Option<String>,
}

/// `PATCH /webhooks/{id}` body: only the fields sent change. `enabled: true` resumes a
/// disabled webhook from the event it stopped at; `null` clears `pinboard_id`, `pin_id`
/// and `description`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(example = serde_json::json!({"enabled": true}), transform = non_empty)]
pub struct UpdateWebhookBody {
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "String", length(max = URL_CHARS), regex(pattern = URL_PATTERN))]
    pub url: Option<String>,
    #[serde(default, deserialize_with = "present")]
    #[schemars(schema_with = "events_schema")]
    pub events: Option<Vec<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schemars(with = "Option<String>")]
    pub pinboard_id: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schemars(with = "Option<String>")]
    pub pin_id: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schemars(with = "Option<String>", length(max = DESCRIPTION_CHARS))]
    pub description: Option<Option<String>>,
    /// `false` stops deliveries; `true` resumes them where they stopped.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "bool")]
    pub enabled: Option<bool>,
}

/// The checked `events` list: each a known type name or `*`, duplicates dropped, and
/// `["*"]` when `*` is among them.
fn event_types(events: &[String]) -> Result<Vec<String>> {
    if events.is_empty() || events.len() > EVENTS_MAX {
        return Err(Error::validation(
            "events",
            format!("1 to {EVENTS_MAX} event types, or [\"*\"]"),
        ));
    }
    let mut types: Vec<String> = Vec::with_capacity(events.len());
    for name in events {
        if name == ALL_EVENTS {
            return Ok(vec![ALL_EVENTS.to_owned()]);
        }
        if EventKind::parse(name).is_none() {
            return Err(Error::validation(
                "events",
                format!("event types among `*`, {}", EventKind::NAMES.join(", ")),
            ));
        }
        if !types.contains(name) {
            types.push(name.clone());
        }
    }
    Ok(types)
}

fn check_description(description: &str) -> Result<()> {
    if description.chars().count() > DESCRIPTION_CHARS {
        return Err(Error::validation(
            "description",
            format!("at most {DESCRIPTION_CHARS} characters"),
        ));
    }
    Ok(())
}

impl CreateWebhookBody {
    /// Checks everything that needs no store and builds the webhook of workspace `ws`
    /// with a new secret.
    fn into_row(self, ws: &str, allow_private: bool, now: i64) -> Result<WebhookRow> {
        let url = target::checked_url(&self.url, allow_private)?;
        let event_types = event_types(&self.events)?;
        if let Some(description) = &self.description {
            check_description(description)?;
        }
        Ok(WebhookRow {
            id: crate::ids::new_id("wh-"),
            workspace_id: ws.to_owned(),
            url,
            event_types,
            pinboard_id: self.pinboard_id,
            pin_id: self.pin_id,
            description: self.description,
            secret: crate::hooks::new_standard_secret(),
            enabled: true,
            disabled_reason: None,
            cursor_seq: 0,
            attempts: 0,
            failing_since: None,
            next_attempt_at: 0,
            created_at: now,
            updated_at: now,
        })
    }
}

/// A checked PATCH, applied to the locked row.
#[derive(Debug)]
pub(crate) struct WebhookUpdate {
    url: Option<String>,
    event_types: Option<Vec<String>>,
    body: UpdateWebhookBody,
}

impl UpdateWebhookBody {
    fn into_update(self, allow_private: bool) -> Result<WebhookUpdate> {
        if self.url.is_none()
            && self.events.is_none()
            && self.pinboard_id.is_none()
            && self.pin_id.is_none()
            && self.description.is_none()
            && self.enabled.is_none()
        {
            return Err(Error::validation(
                "body",
                "at least one of url, events, pinboard_id, pin_id, description, enabled",
            ));
        }
        let url = self
            .url
            .as_deref()
            .map(|url| target::checked_url(url, allow_private))
            .transpose()?;
        let event_types = self.events.as_deref().map(event_types).transpose()?;
        if let Some(Some(description)) = &self.description {
            check_description(description)?;
        }
        Ok(WebhookUpdate {
            url,
            event_types,
            body: self,
        })
    }
}

impl WebhookUpdate {
    /// The webhook after the update, at `now`. Enabling a webhook clears its failures, so
    /// it is tried at once, from its cursor.
    fn apply(&self, mut row: WebhookRow, now: i64) -> WebhookRow {
        if let Some(url) = &self.url {
            row.url = url.clone();
        }
        if let Some(types) = &self.event_types {
            row.event_types = types.clone();
        }
        if let Some(board) = &self.body.pinboard_id {
            row.pinboard_id = board.clone();
        }
        if let Some(pin) = &self.body.pin_id {
            row.pin_id = pin.clone();
        }
        if let Some(description) = &self.body.description {
            row.description = description.clone();
        }
        if let Some(enabled) = self.body.enabled {
            if enabled && !row.enabled {
                row.attempts = 0;
                row.failing_since = None;
                row.next_attempt_at = 0;
            }
            if enabled != row.enabled {
                row.disabled_reason = None;
            }
            row.enabled = enabled;
        }
        row.updated_at = now;
        row
    }
}

/// A webhook as its GETs show it: never its secret.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "Webhook", deny_unknown_fields)]
pub struct WebhookRecord {
    pub id: String,
    #[schemars(extend("format" = "uri"))]
    pub url: String,
    /// The event types it is sent, or `["*"]`.
    pub events: Vec<String>,
    pub pinboard_id: Option<String>,
    pub pin_id: Option<String>,
    pub description: Option<String>,
    /// False once disabled (after failing for `webhooks.disable_after_secs`, or by a PATCH).
    pub enabled: bool,
    /// Why it was disabled by the server; `null` otherwise.
    pub disabled_reason: Option<String>,
    /// When its current streak of failed deliveries began; `null` when the last attempt
    /// was delivered.
    #[schemars(extend("format" = "date-time"))]
    pub failing_since: Option<String>,
    #[schemars(extend("format" = "date-time"))]
    pub created_at: String,
    #[schemars(extend("format" = "date-time"))]
    pub updated_at: String,
}

impl WebhookRecord {
    pub(crate) fn new(row: &WebhookRow) -> Self {
        WebhookRecord {
            id: row.id.clone(),
            url: row.url.clone(),
            events: row.event_types.clone(),
            pinboard_id: row.pinboard_id.clone(),
            pin_id: row.pin_id.clone(),
            description: row.description.clone(),
            enabled: row.enabled,
            disabled_reason: row.disabled_reason.clone(),
            failing_since: row.failing_since.map(clock::iso),
            created_at: clock::iso(row.created_at),
            updated_at: clock::iso(row.updated_at),
        }
    }
}

/// The answer to a create: the record and, this once, the signing secret.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "CreatedWebhook", deny_unknown_fields)]
pub struct CreatedWebhook {
    #[serde(flatten)]
    pub record: WebhookRecord,
    /// `whsec_` and the signing key in base64: each delivery's `webhook-signature` is
    /// `v1,<base64 HMAC-SHA256(key, "{webhook-id}.{webhook-timestamp}.{body}")>`. Shown
    /// only here.
    pub secret: String,
}

/// One attempt to deliver an event.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "WebhookDelivery", deny_unknown_fields)]
pub struct DeliveryRecord {
    /// The event's id, as its `webhook-id` header and `/v1/events` give it.
    pub event_id: String,
    pub event_type: String,
    /// Whether the receiver answered 2xx in time.
    pub delivered: bool,
    /// The receiver's status; `null` when none came (refused, timed out, address refused).
    pub status_code: Option<u16>,
    pub duration_ms: u64,
    /// What went wrong when no status came; `null` otherwise.
    pub error: Option<String>,
    #[schemars(extend("format" = "date-time"))]
    pub at: String,
}

impl DeliveryRecord {
    fn new(row: &DeliveryRow) -> Self {
        let status_code = row.status_code.and_then(|s| u16::try_from(s).ok());
        DeliveryRecord {
            event_id: row.event_id.to_string(),
            event_type: row.event_type.clone(),
            delivered: status_code.is_some_and(|s| (200..300).contains(&s)),
            status_code,
            duration_ms: u64::try_from(row.duration_ms).unwrap_or(0),
            error: row.error.clone(),
            at: clock::iso(row.at),
        }
    }
}

/// The answer to `POST /webhooks/{id}/test`.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TestQueued {
    pub webhook_id: String,
    /// `webhook.test`: the type of the event logged for it, delivered to it alone.
    pub event_type: String,
}
