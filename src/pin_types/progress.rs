//! `progress`: progress bars, each a value out of a positive max.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::rules::{finite, max_chars, max_items};
use super::{ConfigError, PinConfig};

/// Most bars in one pin.
const MAX_ITEMS: usize = 100;

/// Progress bars, each a value out of a positive max.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProgressConfig {
    /// The bars, at most 100, top to bottom.
    #[schemars(length(max = MAX_ITEMS))]
    pub items: Vec<ProgressItem>,
}

/// One progress bar.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProgressItem {
    /// What is progressing, at most 200 characters.
    #[schemars(length(max = 200))]
    pub label: String,
    /// Progress so far; may exceed `max` (shown as over 100 %).
    pub value: f64,
    /// The value meaning done; greater than 0.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub max: f64,
}

/// The catalogue's example.
pub(super) fn example() -> Value {
    json!({"items": [{"label": "Migration", "value": 640, "max": 1000},
                     {"label": "Sprint", "value": 0.8, "max": 1}]})
}

impl PinConfig for ProgressConfig {
    fn check(&self) -> Result<(), ConfigError> {
        max_items(|| "items".to_owned(), self.items.len(), MAX_ITEMS, "items")?;
        for (i, item) in self.items.iter().enumerate() {
            max_chars(|| format!("items[{i}].label"), &item.label, 200)?;
            finite(|| format!("items[{i}].value"), item.value)?;
            let path = || format!("items[{i}].max");
            finite(path, item.max)?;
            if item.max <= 0.0 {
                return Err(ConfigError::new(path(), "a number greater than 0"));
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
        let many = vec![json!({"label": "x", "value": 1, "max": 2}); MAX_ITEMS + 1];
        assert_refusals(
            PinType::Progress,
            vec![
                ("/items", Some(json!({})), "items", "a JSON array"),
                ("/items", Some(json!(many)), "items", "at most 100 items"),
                (
                    "/items/0/max",
                    Some(json!(0)),
                    "items[0].max",
                    "a number greater than 0",
                ),
                (
                    "/items/1/max",
                    Some(json!(-1)),
                    "items[1].max",
                    "a number greater than 0",
                ),
                ("/items/1/max", None, "items[1].max", "a number (required)"),
                (
                    "/items/1/value",
                    Some(json!("80%")),
                    "items[1].value",
                    "a number",
                ),
                (
                    "/items/0/label",
                    Some(json!("x".repeat(201))),
                    "items[0].label",
                    "at most",
                ),
                (
                    "/items/0/done",
                    Some(json!(true)),
                    "items[0].done",
                    "no such field",
                ),
            ],
        );
    }

    #[test]
    fn numbers_must_be_finite() {
        let mut config: ProgressConfig = crate::pin_types::parse(&example()).unwrap();
        config.items[1].value = f64::NAN;
        let err = config.check().unwrap_err();
        assert_eq!(err, ConfigError::new("items[1].value", "a finite number"));
    }
}
