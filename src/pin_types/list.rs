//! `list`: items, each optionally checked or linked.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::rules::{max_chars, max_items, web_url, MAX_URL_CHARS, WEB_URL_PATTERN};
use super::{ConfigError, PinConfig};

/// Most items in one list.
pub(crate) const MAX_ITEMS: usize = 500;

/// A list of items, each optionally checked or linked.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListConfig {
    /// The items, at most 500, in order.
    #[schemars(length(max = MAX_ITEMS))]
    pub items: Vec<ListItem>,
}

/// One item of a list.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListItem {
    /// The item's text, at most 1000 characters.
    #[schemars(length(max = 1000))]
    pub text: String,
    /// Present: show a checkbox, ticked when true.
    pub checked: Option<bool>,
    /// Link target: an absolute `http` or `https` URL, at most 2048 characters (the
    /// pattern states the scheme; the service also checks that it parses, with a host).
    #[schemars(url, regex(pattern = WEB_URL_PATTERN), length(max = MAX_URL_CHARS))]
    pub url: Option<String>,
}

/// The catalogue's example.
pub(super) fn example() -> Value {
    json!({"items": [
        {"text": "Rotate API keys", "checked": true},
        {"text": "Update runbook", "checked": false, "url": "https://example.com/runbook"},
        {"text": "Plain note"}
    ]})
}

impl PinConfig for ListConfig {
    fn check(&self) -> Result<(), ConfigError> {
        max_items(|| "items".to_owned(), self.items.len(), MAX_ITEMS, "items")?;
        for (i, item) in self.items.iter().enumerate() {
            max_chars(|| format!("items[{i}].text"), &item.text, 1000)?;
            if let Some(url) = &item.url {
                web_url(|| format!("items[{i}].url"), url)?;
            }
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
        let many = vec![json!({"text": "x"}); MAX_ITEMS + 1];
        assert_refusals(
            PinType::List,
            vec![
                ("/items", None, "items", "a JSON array (required)"),
                ("/items", Some(json!(many)), "items", "at most 500 items"),
                (
                    "/items/2",
                    Some(json!("Plain note")),
                    "items[2]",
                    "a JSON object",
                ),
                (
                    "/items/2/text",
                    None,
                    "items[2].text",
                    "a string (required)",
                ),
                (
                    "/items/0/text",
                    Some(json!("x".repeat(1001))),
                    "items[0].text",
                    "at most",
                ),
                (
                    "/items/0/checked",
                    Some(json!("yes")),
                    "items[0].checked",
                    "a boolean",
                ),
                (
                    "/items/1/url",
                    Some(json!("javascript:x()")),
                    "items[1].url",
                    "http or https",
                ),
                (
                    "/items/1/url",
                    Some(json!("www.example.com")),
                    "items[1].url",
                    "absolute",
                ),
                (
                    "/items/1/href",
                    Some(json!("x")),
                    "items[1].href",
                    "no such field",
                ),
            ],
        );
    }
}
