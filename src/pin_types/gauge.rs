//! `gauge`: one value on a dial from `min` to `max`.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::rules::{finite, max_chars_each, max_items};
use super::{ConfigError, PinConfig};

/// Most thresholds on one dial.
const MAX_THRESHOLDS: usize = 20;
/// What a threshold's colour may be (also the schema's `pattern`).
const COLOR_PATTERN: &str = "^(#[0-9A-Fa-f]{3}|#[0-9A-Fa-f]{6}|[A-Za-z]{1,30})$";

/// One value on a dial from min to max, with optional coloured thresholds.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GaugeConfig {
    /// The value shown; it may lie outside min..max (the needle then stops at
    /// the end of the dial).
    pub value: f64,
    /// Start of the dial.
    pub min: f64,
    /// End of the dial; must be greater than `min` (checked by the service).
    pub max: f64,
    /// What the value is, at most 200 characters.
    #[schemars(length(max = 200))]
    pub label: Option<String>,
    /// Unit shown after the value (e.g. "%"), at most 50 characters.
    #[schemars(length(max = 50))]
    pub unit: Option<String>,
    /// Colour bands, at most 20: each colours the dial from its value on.
    #[schemars(length(max = MAX_THRESHOLDS))]
    pub thresholds: Option<Vec<Threshold>>,
}

/// Where a colour band starts.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Threshold {
    /// Value from which the band starts.
    pub value: f64,
    /// A CSS colour: `#rgb`, `#rrggbb`, or a name of 1 to 30 ASCII letters
    /// (e.g. "orange").
    #[schemars(regex(pattern = COLOR_PATTERN))]
    pub color: String,
}

/// True for `#rgb`, `#rrggbb` or 1 to 30 ASCII letters: nothing that could
/// break out of a style attribute.
fn is_color(color: &str) -> bool {
    match color.strip_prefix('#') {
        Some(hex) => matches!(hex.len(), 3 | 6) && hex.bytes().all(|b| b.is_ascii_hexdigit()),
        None => (1..=30).contains(&color.len()) && color.bytes().all(|b| b.is_ascii_alphabetic()),
    }
}

/// The catalogue's example.
pub(super) fn example() -> Value {
    json!({"value": 72.5, "min": 0, "max": 100, "label": "Disk used", "unit": "%",
           "thresholds": [{"value": 0, "color": "green"}, {"value": 70, "color": "#f90"},
                          {"value": 90, "color": "#d32f2f"}]})
}

impl PinConfig for GaugeConfig {
    fn check(&self) -> Result<(), ConfigError> {
        finite(|| "value".to_owned(), self.value)?;
        finite(|| "min".to_owned(), self.min)?;
        finite(|| "max".to_owned(), self.max)?;
        if self.max <= self.min {
            let expected = format!("a number greater than min ({})", self.min);
            return Err(ConfigError::new("max", expected));
        }
        let texts = [
            ("label", self.label.as_deref(), 200),
            ("unit", self.unit.as_deref(), 50),
        ];
        max_chars_each("", texts)?;
        let thresholds = self.thresholds.as_deref().unwrap_or_default();
        let path = || "thresholds".to_owned();
        max_items(path, thresholds.len(), MAX_THRESHOLDS, "thresholds")?;
        for (i, threshold) in thresholds.iter().enumerate() {
            finite(|| format!("thresholds[{i}].value"), threshold.value)?;
            if !is_color(&threshold.color) {
                let expected = "a CSS colour: #rgb, #rrggbb or 1 to 30 ASCII letters";
                return Err(ConfigError::new(format!("thresholds[{i}].color"), expected));
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
    fn accepts_minimal_and_out_of_range_values() {
        let config = json!({"value": -5, "min": -1.5, "max": -1});
        assert_eq!(validate(PinType::Gauge, &config), Ok(()));
    }

    #[test]
    fn refusals() {
        let many = vec![json!({"value": 1, "color": "red"}); MAX_THRESHOLDS + 1];
        assert_refusals(
            PinType::Gauge,
            vec![
                ("/value", Some(json!("72")), "value", "a number"),
                ("/min", None, "min", "a number (required)"),
                (
                    "/max",
                    Some(json!(0)),
                    "max",
                    "a number greater than min (0)",
                ),
                ("/max", Some(json!(-3)), "max", "greater than min"),
                (
                    "/label",
                    Some(json!("x".repeat(201))),
                    "label",
                    "at most 200 characters",
                ),
                ("/unit", Some(json!(["%"])), "unit", "a string"),
                (
                    "/thresholds",
                    Some(json!(many)),
                    "thresholds",
                    "at most 20 thresholds",
                ),
                (
                    "/thresholds/1/color",
                    None,
                    "thresholds[1].color",
                    "a string (required)",
                ),
                (
                    "/thresholds/2/value",
                    Some(json!(null)),
                    "thresholds[2].value",
                    "a number",
                ),
                (
                    "/thresholds/0/label",
                    Some(json!("ok")),
                    "thresholds[0].label",
                    "no such",
                ),
                ("/needle", Some(json!(1)), "needle", "no such field"),
            ],
        );
        for color in ["red;x:y", "#ff", "#ggg", "", "url(x)", "#ff00001", "é"] {
            let color = Some(json!(color));
            let case = (
                "/thresholds/1/color",
                color,
                "thresholds[1].color",
                "a CSS colour",
            );
            assert_refusals(PinType::Gauge, vec![case]);
        }
    }

    #[test]
    fn numbers_must_be_finite() {
        let mut config: GaugeConfig = crate::pin_types::parse(&example()).unwrap();
        config.max = f64::INFINITY;
        let err = config.check().unwrap_err();
        assert_eq!(err, ConfigError::new("max", "a finite number"));
    }
}
