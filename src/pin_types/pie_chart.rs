//! `pie-chart`: non-negative slices of a whole.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::rules::{finite, max_chars, max_items};
use super::{ConfigError, PinConfig};

/// Most slices in one pie.
const MAX_SLICES: usize = 100;

/// Non-negative slices of a whole, as a pie or a donut.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PieChartConfig {
    /// The slices, at most 100, clockwise.
    #[schemars(length(max = MAX_SLICES))]
    pub slices: Vec<Slice>,
    /// Draw a ring instead of a full disc (default false).
    pub donut: Option<bool>,
}

/// One slice of a pie.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Slice {
    /// Name shown in the legend, at most 200 characters.
    #[schemars(length(max = 200))]
    pub label: String,
    /// Size of the slice: a finite number, 0 or more.
    #[schemars(range(min = 0))]
    pub value: f64,
}

/// The catalogue's example.
pub(super) fn example() -> Value {
    json!({"slices": [{"label": "Chrome", "value": 64.5}, {"label": "Safari", "value": 19},
                      {"label": "Other", "value": 16.5}],
           "donut": true})
}

impl PinConfig for PieChartConfig {
    fn check(&self) -> Result<(), ConfigError> {
        max_items(
            || "slices".to_owned(),
            self.slices.len(),
            MAX_SLICES,
            "slices",
        )?;
        for (i, slice) in self.slices.iter().enumerate() {
            max_chars(|| format!("slices[{i}].label"), &slice.label, 200)?;
            let path = || format!("slices[{i}].value");
            finite(path, slice.value)?;
            if slice.value < 0.0 {
                return Err(ConfigError::new(path(), "a number >= 0"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pin_types::tests::assert_refusals;
    use crate::pin_types::{validate, PinType};

    #[test]
    fn accepts_zero_and_empty() {
        let config = json!({"slices": [{"label": "None yet", "value": 0}]});
        assert_eq!(validate(PinType::PieChart, &config), Ok(()));
        assert_eq!(validate(PinType::PieChart, &json!({"slices": []})), Ok(()));
    }

    #[test]
    fn refusals() {
        let many = vec![json!({"label": "s", "value": 1}); MAX_SLICES + 1];
        assert_refusals(
            PinType::PieChart,
            vec![
                ("/slices", None, "slices", "a JSON array (required)"),
                ("/slices", Some(json!(many)), "slices", "at most 100 slices"),
                (
                    "/slices/1/value",
                    Some(json!("19")),
                    "slices[1].value",
                    "a number",
                ),
                (
                    "/slices/1/value",
                    None,
                    "slices[1].value",
                    "a number (required)",
                ),
                (
                    "/slices/1/value",
                    Some(json!(-0.5)),
                    "slices[1].value",
                    "a number >= 0",
                ),
                (
                    "/slices/2/label",
                    Some(json!(null)),
                    "slices[2].label",
                    "a string",
                ),
                (
                    "/slices/2/label",
                    Some(json!("x".repeat(201))),
                    "slices[2].label",
                    "at most",
                ),
                (
                    "/slices/0/color",
                    Some(json!("red")),
                    "slices[0].color",
                    "no such field",
                ),
                ("/donut", Some(json!("yes")), "donut", "a boolean"),
            ],
        );
    }

    #[test]
    fn values_must_be_finite() {
        let mut config: PieChartConfig = crate::pin_types::parse(&example()).unwrap();
        config.slices[2].value = f64::INFINITY;
        let err = config.check().unwrap_err();
        assert_eq!(err, ConfigError::new("slices[2].value", "a finite number"));
    }
}
