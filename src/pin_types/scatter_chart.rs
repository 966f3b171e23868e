//! `scatter-chart`: series of (x, y) points.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::rules::{finite, max_chars, max_items};
use super::{ConfigError, PinConfig};

/// Most series in one chart.
const MAX_SERIES: usize = 50;
/// Most points in one series.
pub(crate) const MAX_POINTS: usize = 1000;

/// Series of (x, y) points on two numeric axes.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScatterChartConfig {
    /// The series, at most 50.
    #[schemars(length(max = MAX_SERIES))]
    pub series: Vec<ScatterSeries>,
}

/// One named set of points.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScatterSeries {
    /// Name shown in the legend, at most 200 characters.
    #[schemars(length(max = 200))]
    pub name: String,
    /// The points, at most 1000.
    #[schemars(length(max = MAX_POINTS))]
    pub points: Vec<Point>,
}

/// One point; both coordinates are finite numbers.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Point {
    /// Horizontal coordinate.
    pub x: f64,
    /// Vertical coordinate.
    pub y: f64,
}

/// The catalogue's example.
pub(super) fn example() -> Value {
    json!({"series": [
        {"name": "Requests", "points": [{"x": 1.5, "y": 120}, {"x": 2, "y": 180}]},
        {"name": "Errors", "points": [{"x": 1.5, "y": 3}]}
    ]})
}

impl PinConfig for ScatterChartConfig {
    fn check(&self) -> Result<(), ConfigError> {
        max_items(
            || "series".to_owned(),
            self.series.len(),
            MAX_SERIES,
            "series",
        )?;
        for (i, series) in self.series.iter().enumerate() {
            max_chars(|| format!("series[{i}].name"), &series.name, 200)?;
            let path = || format!("series[{i}].points");
            max_items(path, series.points.len(), MAX_POINTS, "points")?;
            for (j, point) in series.points.iter().enumerate() {
                finite(|| format!("{}[{j}].x", path()), point.x)?;
                finite(|| format!("{}[{j}].y", path()), point.y)?;
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
        let many = vec![json!({"x": 0, "y": 0}); MAX_POINTS + 1];
        assert_refusals(
            PinType::ScatterChart,
            vec![
                ("/series", None, "series", "a JSON array (required)"),
                (
                    "/series/0/points",
                    Some(json!(many)),
                    "series[0].points",
                    "at most 1000",
                ),
                (
                    "/series/0/points/1/y",
                    Some(json!("1")),
                    "series[0].points[1].y",
                    "a number",
                ),
                (
                    "/series/0/points/1/x",
                    None,
                    "series[0].points[1].x",
                    "a number (required)",
                ),
                (
                    "/series/0/points/1",
                    Some(json!([1, 2])),
                    "series[0].points[1]",
                    "object",
                ),
                (
                    "/series/1/points/0/z",
                    Some(json!(1)),
                    "series[1].points[0].z",
                    "no such",
                ),
                (
                    "/series/1/name",
                    Some(json!(1)),
                    "series[1].name",
                    "a string",
                ),
                (
                    "/series/1/name",
                    Some(json!("x".repeat(201))),
                    "series[1].name",
                    "at most",
                ),
            ],
        );
    }

    #[test]
    fn caps_and_finite_numbers() {
        let mut config: ScatterChartConfig = crate::pin_types::parse(&example()).unwrap();
        config.series[0].points[1].x = f64::NAN;
        let err = config.check().unwrap_err();
        assert_eq!(
            err,
            ConfigError::new("series[0].points[1].x", "a finite number")
        );
        config.series = vec![config.series[1].clone(); MAX_SERIES + 1];
        let err = config.check().unwrap_err();
        assert_eq!(err, ConfigError::new("series", "at most 50 series"));
    }
}
