//! `status-grid`: named things, each with a status.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::rules::{max_chars_each, max_items};
use super::{ConfigError, PinConfig};

/// Most items in one grid.
const MAX_ITEMS: usize = 500;

/// Named things, each with a status ok, warn, error or unknown.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusGridConfig {
    /// The items, at most 500, in order.
    #[schemars(length(max = MAX_ITEMS))]
    pub items: Vec<StatusItem>,
}

/// One named thing and its status.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusItem {
    /// What it is, at most 200 characters.
    #[schemars(length(max = 200))]
    pub name: String,
    /// How it is.
    pub status: Status,
    /// More about the status, at most 1000 characters.
    #[schemars(length(max = 1000))]
    pub detail: Option<String>,
}

/// A health status (`status-grid` items, `timeline` events).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Healthy.
    Ok,
    /// Degraded.
    Warn,
    /// Failing.
    Error,
    /// Not known.
    Unknown,
}

/// The catalogue's example.
pub(super) fn example() -> Value {
    json!({"items": [
        {"name": "api", "status": "ok"},
        {"name": "worker", "status": "warn", "detail": "Queue at 80%"},
        {"name": "billing", "status": "error", "detail": "Provider timeout"},
        {"name": "backup", "status": "unknown"}
    ]})
}

impl PinConfig for StatusGridConfig {
    fn check(&self) -> Result<(), ConfigError> {
        max_items(|| "items".to_owned(), self.items.len(), MAX_ITEMS, "items")?;
        for (i, item) in self.items.iter().enumerate() {
            let texts = [
                ("name", Some(item.name.as_str()), 200),
                ("detail", item.detail.as_deref(), 1000),
            ];
            max_chars_each(&format!("items[{i}]"), texts)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pin_types::tests::assert_refusals;
    use crate::pin_types::PinType;

    #[test]
    fn refusals() {
        let many = vec![json!({"name": "x", "status": "ok"}); MAX_ITEMS + 1];
        let statuses = "one of ok, warn, error, unknown";
        assert_refusals(
            PinType::StatusGrid,
            vec![
                ("/items", Some(json!({})), "items", "a JSON array"),
                ("/items", Some(json!(many)), "items", "at most 500 items"),
                (
                    "/items/1/status",
                    Some(json!("degraded")),
                    "items[1].status",
                    statuses,
                ),
                (
                    "/items/1/status",
                    Some(json!("OK")),
                    "items[1].status",
                    statuses,
                ),
                ("/items/1/status", None, "items[1].status", "(required)"),
                ("/items/0/name", Some(json!(7)), "items[0].name", "a string"),
                (
                    "/items/2/detail",
                    Some(json!("x".repeat(1001))),
                    "items[2].detail",
                    "at most",
                ),
                (
                    "/items/3/color",
                    Some(json!("red")),
                    "items[3].color",
                    "no such field",
                ),
            ],
        );
    }
}
