//! `kpi`: one key figure with optional unit, change, trend and sparkline.

use std::fmt;

use schemars::JsonSchema;
use serde::de::{Deserializer, Error, Visitor};
use serde::Deserialize;
use serde_json::{json, Value};

use super::rules::{all_finite, finite, max_chars_each, max_items};
use super::stat_cards::{Trend, TrendGood};
use super::{ConfigError, PinConfig};

/// Most points of a sparkline.
const MAX_SPARKLINE: usize = 1000;

/// One key figure with optional unit, change, trend and sparkline.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KpiConfig {
    /// What the figure is, at most 200 characters.
    #[schemars(length(max = 200))]
    pub label: String,
    /// The figure: a finite number, or a string already formatted (at most 200
    /// characters).
    pub value: KpiValue,
    /// Unit shown after a numeric value (e.g. "ms"), at most 50 characters.
    #[schemars(length(max = 50))]
    pub unit: Option<String>,
    /// Change against a previous period (e.g. "+4%"), at most 50 characters.
    #[schemars(length(max = 50))]
    pub change: Option<String>,
    /// Direction of the change.
    pub trend: Option<Trend>,
    /// Which direction of the change is good, drawn green (default up; down for a
    /// latency or an error count).
    pub trend_good: Option<TrendGood>,
    /// Recent values, oldest first, at most 1000 finite numbers.
    #[schemars(length(max = MAX_SPARKLINE))]
    pub sparkline: Option<Vec<f64>>,
}

/// A KPI's figure: a number or preformatted text.
#[derive(Debug, Clone, PartialEq, JsonSchema)]
#[schemars(untagged)]
pub enum KpiValue {
    /// A number, formatted by the page.
    Number(f64),
    /// Text shown as is (e.g. "€1.2M").
    Text(#[schemars(length(max = 200))] String),
}

impl<'de> Deserialize<'de> for KpiValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KpiValueVisitor;

        impl Visitor<'_> for KpiValueVisitor {
            type Value = KpiValue;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number or a string")
            }

            fn visit_i64<E: Error>(self, v: i64) -> Result<KpiValue, E> {
                Ok(KpiValue::Number(v as f64))
            }

            fn visit_u64<E: Error>(self, v: u64) -> Result<KpiValue, E> {
                Ok(KpiValue::Number(v as f64))
            }

            fn visit_f64<E: Error>(self, v: f64) -> Result<KpiValue, E> {
                Ok(KpiValue::Number(v))
            }

            fn visit_str<E: Error>(self, v: &str) -> Result<KpiValue, E> {
                Ok(KpiValue::Text(v.to_owned()))
            }
        }

        deserializer.deserialize_any(KpiValueVisitor)
    }
}

/// The catalogue's example.
pub(super) fn example() -> Value {
    json!({"label": "p95 latency", "value": 182.5, "unit": "ms", "change": "-12%",
           "trend": "down", "trend_good": "down", "sparkline": [240, 221, 198, 190, 182.5]})
}

impl PinConfig for KpiConfig {
    fn check(&self) -> Result<(), ConfigError> {
        let text = match &self.value {
            KpiValue::Number(number) => {
                finite(|| "value".to_owned(), *number)?;
                None
            }
            KpiValue::Text(text) => Some(text.as_str()),
        };
        max_chars_each(
            "",
            [
                ("label", Some(&*self.label), 200),
                ("value", text, 200),
                ("unit", self.unit.as_deref(), 50),
                ("change", self.change.as_deref(), 50),
            ],
        )?;
        if let Some(points) = &self.sparkline {
            let path = || "sparkline".to_owned();
            max_items(path, points.len(), MAX_SPARKLINE, "points")?;
            all_finite(path, points.iter().copied().map(Some))?;
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
    fn accepts_minimal_and_text_values() {
        for config in [
            json!({"label": "Users", "value": 42}),
            json!({"label": "Revenue", "value": "€1.2M", "trend": "flat", "sparkline": []}),
            json!({"label": "Big", "value": u64::MAX, "unit": null}),
        ] {
            assert_eq!(validate(PinType::Kpi, &config), Ok(()), "{config}");
        }
    }

    #[test]
    fn refusals() {
        let long = |n: usize| Some(json!("x".repeat(n)));
        assert_refusals(
            PinType::Kpi,
            vec![
                ("/label", Some(json!(5)), "label", "a string"),
                ("/label", None, "label", "a string (required)"),
                ("/value", None, "value", "a number or a string (required)"),
                ("/value", Some(json!(true)), "value", "a number or a string"),
                ("/value", Some(json!([1])), "value", "a number or a string"),
                ("/value", long(201), "value", "at most 200 characters"),
                ("/unit", long(51), "unit", "at most 50 characters"),
                (
                    "/trend",
                    Some(json!("sideways")),
                    "trend",
                    "one of up, down, flat",
                ),
                (
                    "/trend_good",
                    Some(json!("flat")),
                    "trend_good",
                    "up or down",
                ),
                ("/sparkline/1", Some(json!("x")), "sparkline[1]", "a number"),
                (
                    "/sparkline/1",
                    Some(json!(null)),
                    "sparkline[1]",
                    "a number",
                ),
                ("/sparkline", Some(json!({})), "sparkline", "a JSON array"),
                (
                    "/sparkline",
                    Some(json!(vec![0; 1001])),
                    "sparkline",
                    "at most 1000 points",
                ),
                ("/extra", Some(json!(1)), "extra", "no such field"),
            ],
        );
    }

    #[test]
    fn numbers_must_be_finite() {
        let mut config: KpiConfig = crate::pin_types::parse(&example()).unwrap();
        config.value = KpiValue::Number(f64::NAN);
        assert_eq!(config.check().unwrap_err().path, "value");
        config.value = KpiValue::Number(1.0);
        config.sparkline = Some(vec![1.0, f64::INFINITY]);
        assert_eq!(config.check().unwrap_err().path, "sparkline[1]");
    }
}
