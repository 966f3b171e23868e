//! `heatmap`: a grid of values, rows along y and columns along x.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::rules::{all_finite, max_chars, max_items};
use super::{ConfigError, PinConfig};

/// Most x labels (columns).
const MAX_X: usize = 1000;
/// Most y labels (rows).
const MAX_Y: usize = 100;
/// Longest label, in characters.
const MAX_LABEL: usize = 200;

/// A grid of values, one row per y label and one column per x label.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HeatmapConfig {
    /// Column labels, left to right: at most 1000, each at most 200 characters.
    #[schemars(length(max = MAX_X), inner(length(max = MAX_LABEL)))]
    pub x_labels: Vec<String>,
    /// Row labels, top to bottom: at most 100, each at most 200 characters.
    #[schemars(length(max = MAX_Y), inner(length(max = MAX_LABEL)))]
    pub y_labels: Vec<String>,
    /// The cells by row then column: exactly one row per y label, each with
    /// exactly one finite number (or `null`, an empty cell) per x label
    /// (checked by the service).
    #[schemars(length(max = MAX_Y), inner(length(max = MAX_X)))]
    pub values: Vec<Vec<Option<f64>>>,
}

/// The catalogue's example.
pub(super) fn example() -> Value {
    json!({
        "x_labels": ["00h", "06h", "12h", "18h"],
        "y_labels": ["Mon", "Tue"],
        "values": [[0, 3, 12.5, 7], [1, null, 15, 9]]
    })
}

fn labels(name: &str, labels: &[String], max: usize) -> Result<(), ConfigError> {
    max_items(|| name.to_owned(), labels.len(), max, "labels")?;
    for (i, label) in labels.iter().enumerate() {
        max_chars(|| format!("{name}[{i}]"), label, MAX_LABEL)?;
    }
    Ok(())
}

/// "3 values" / "1 value".
fn count(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

impl PinConfig for HeatmapConfig {
    fn check(&self) -> Result<(), ConfigError> {
        labels("x_labels", &self.x_labels, MAX_X)?;
        labels("y_labels", &self.y_labels, MAX_Y)?;
        let (width, height) = (self.x_labels.len(), self.y_labels.len());
        if self.values.len() != height {
            let expected = format!("{}, one per y label", count(height, "row"));
            return Err(ConfigError::new("values", expected));
        }
        for (i, row) in self.values.iter().enumerate() {
            let path = || format!("values[{i}]");
            if row.len() != width {
                let expected = format!("{}, one per x label", count(width, "value"));
                return Err(ConfigError::new(path(), expected));
            }
            all_finite(path, row.iter().copied())?;
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
    fn accepts_empty_grid() {
        let config = json!({"x_labels": [], "y_labels": ["a"], "values": [[]]});
        assert_eq!(validate(PinType::Heatmap, &config), Ok(()));
    }

    #[test]
    fn refusals() {
        assert_refusals(
            PinType::Heatmap,
            vec![
                ("/x_labels", None, "x_labels", "a JSON array (required)"),
                ("/y_labels/1", Some(json!(2)), "y_labels[1]", "a string"),
                (
                    "/y_labels/1",
                    Some(json!("x".repeat(201))),
                    "y_labels[1]",
                    "at most 200",
                ),
                ("/values/1/1", Some(json!("9")), "values[1][1]", "a number"),
                ("/values/1", Some(json!(5)), "values[1]", "a JSON array"),
                ("/values/1", None, "values", "2 rows, one per y label"),
                ("/y_labels/1", None, "values", "1 row, one per y label"),
                (
                    "/values/1/3",
                    None,
                    "values[1]",
                    "4 values, one per x label",
                ),
                (
                    "/x_labels/3",
                    None,
                    "values[0]",
                    "3 values, one per x label",
                ),
                ("/z_labels", Some(json!([])), "z_labels", "no such field"),
            ],
        );
    }

    #[test]
    fn caps_and_finite_numbers() {
        let rows = vec!["r"; MAX_Y + 1];
        let config = json!({"x_labels": [], "y_labels": rows, "values": []});
        let err = validate(PinType::Heatmap, &config).unwrap_err();
        assert_eq!(err, ConfigError::new("y_labels", "at most 100 labels"));
        let mut config: HeatmapConfig = crate::pin_types::parse(&example()).unwrap();
        config.values[1][2] = Some(f64::NAN);
        let err = config.check().unwrap_err();
        assert_eq!(err, ConfigError::new("values[1][2]", "a finite number"));
    }
}
