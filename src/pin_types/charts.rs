//! `line-chart`, `area-chart` and `bar-chart`: series of values over shared labels.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::rules::{all_finite, max_chars, max_chars_each, max_items};
use super::{ConfigError, PinConfig};

/// Most labels, hence values per series.
pub(crate) const MAX_LABELS: usize = 1000;
/// Most series in one chart.
const MAX_SERIES: usize = 50;
/// Longest label, series name or axis title, in characters.
const MAX_NAME: usize = 200;

/// Series of values over shared x-axis labels (`line-chart`, `area-chart`).
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChartConfig {
    /// The x-axis labels, at most 1000, each at most 200 characters.
    #[schemars(length(max = MAX_LABELS), inner(length(max = MAX_NAME)))]
    pub labels: Vec<String>,
    /// The series, at most 50; each `data` has exactly one value per label
    /// (checked by the service).
    #[schemars(length(max = MAX_SERIES))]
    pub series: Vec<Series>,
    /// Title of the x axis, at most 200 characters.
    #[schemars(length(max = MAX_NAME))]
    pub x_label: Option<String>,
    /// Title of the y axis, at most 200 characters.
    #[schemars(length(max = MAX_NAME))]
    pub y_label: Option<String>,
}

/// Series of values over shared labels, drawn as bars.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BarChartConfig {
    /// The category labels, at most 1000, each at most 200 characters.
    #[schemars(length(max = MAX_LABELS), inner(length(max = MAX_NAME)))]
    pub labels: Vec<String>,
    /// The series, at most 50; each `data` has exactly one value per label
    /// (checked by the service).
    #[schemars(length(max = MAX_SERIES))]
    pub series: Vec<Series>,
    /// Title of the category axis, at most 200 characters.
    #[schemars(length(max = MAX_NAME))]
    pub x_label: Option<String>,
    /// Title of the value axis, at most 200 characters.
    #[schemars(length(max = MAX_NAME))]
    pub y_label: Option<String>,
    /// Stack the series' bars instead of placing them side by side (default false).
    pub stacked: Option<bool>,
    /// Draw bars horizontally (default false).
    pub horizontal: Option<bool>,
}

/// One named series of a chart.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Series {
    /// Name shown in the legend, at most 200 characters.
    #[schemars(length(max = MAX_NAME))]
    pub name: String,
    /// One finite number per label, in label order; `null` leaves a gap. Its
    /// length must equal that of `labels` (checked by the service).
    #[schemars(length(max = MAX_LABELS))]
    pub data: Vec<Option<f64>>,
}

/// Checks what all three charts share.
fn check_chart(
    labels: &[String],
    series: &[Series],
    x_label: Option<&str>,
    y_label: Option<&str>,
) -> Result<(), ConfigError> {
    max_items(|| "labels".to_owned(), labels.len(), MAX_LABELS, "labels")?;
    for (i, label) in labels.iter().enumerate() {
        max_chars(|| format!("labels[{i}]"), label, MAX_NAME)?;
    }
    max_items(|| "series".to_owned(), series.len(), MAX_SERIES, "series")?;
    for (i, one) in series.iter().enumerate() {
        max_chars_each(
            &format!("series[{i}]"),
            [("name", Some(&*one.name), MAX_NAME)],
        )?;
        let path = || format!("series[{i}].data");
        if one.data.len() != labels.len() {
            return Err(ConfigError::new(path(), per_label(labels.len())));
        }
        all_finite(path, one.data.iter().copied())?;
    }
    max_chars_each(
        "",
        [
            ("x_label", x_label, MAX_NAME),
            ("y_label", y_label, MAX_NAME),
        ],
    )
}

/// "3 values, one per label".
fn per_label(count: usize) -> String {
    let values = if count == 1 { "value" } else { "values" };
    format!("{count} {values}, one per label")
}

impl PinConfig for ChartConfig {
    fn check(&self) -> Result<(), ConfigError> {
        let (x, y) = (self.x_label.as_deref(), self.y_label.as_deref());
        check_chart(&self.labels, &self.series, x, y)
    }
}

impl PinConfig for BarChartConfig {
    fn check(&self) -> Result<(), ConfigError> {
        let (x, y) = (self.x_label.as_deref(), self.y_label.as_deref());
        check_chart(&self.labels, &self.series, x, y)
    }
}

/// The catalogue's `line-chart` example.
pub(super) fn line_example() -> Value {
    json!({
        "labels": ["Mon", "Tue", "Wed"],
        "series": [
            {"name": "p50", "data": [120, 131, null]},
            {"name": "p95", "data": [310, 290.5, 305]}
        ],
        "x_label": "Day",
        "y_label": "Latency (ms)"
    })
}

/// The catalogue's `area-chart` example.
pub(super) fn area_example() -> Value {
    json!({
        "labels": ["Q1", "Q2", "Q3"],
        "series": [{"name": "Free", "data": [900, 1100, 1350]},
                   {"name": "Paid", "data": [120, 180, 260]}],
        "y_label": "Users"
    })
}

/// The catalogue's `bar-chart` example.
pub(super) fn bar_example() -> Value {
    json!({
        "labels": ["EU", "US", "APAC"],
        "series": [{"name": "2024", "data": [40, 55, 21]}, {"name": "2025", "data": [48, 60, 30]}],
        "stacked": true,
        "horizontal": false
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pin_types::tests::{assert_refusals, Case};
    use crate::pin_types::{parse, validate, PinType};

    const CHARTS: [PinType; 3] = [PinType::LineChart, PinType::AreaChart, PinType::BarChart];

    #[test]
    fn accepts_empty_and_full_charts() {
        let labels: Vec<String> = (0..MAX_LABELS).map(|i| i.to_string()).collect();
        let series = json!({"name": "s", "data": vec![1.5; MAX_LABELS]});
        let full = json!({"labels": labels, "series": vec![series; MAX_SERIES]});
        for t in CHARTS {
            assert_eq!(validate(t, &json!({"labels": [], "series": []})), Ok(()));
            assert_eq!(validate(t, &full), Ok(()));
        }
    }

    fn common_refusals() -> Vec<Case> {
        vec![
            ("/labels", Some(json!("Mon")), "labels", "a JSON array"),
            ("/labels/0", Some(json!(1)), "labels[0]", "a string"),
            (
                "/labels/1",
                Some(json!("x".repeat(201))),
                "labels[1]",
                "at most 200",
            ),
            (
                "/labels/2",
                None,
                "series[0].data",
                "2 values, one per label",
            ),
            (
                "/labels",
                Some(json!(["a"])),
                "series[0].data",
                "1 value, one per label",
            ),
            ("/series", None, "series", "a JSON array (required)"),
            (
                "/series/1/name",
                None,
                "series[1].name",
                "a string (required)",
            ),
            (
                "/series/1/data/0",
                Some(json!("1")),
                "series[1].data[0]",
                "a number",
            ),
            (
                "/series/1/data/0",
                None,
                "series[1].data",
                "3 values, one per label",
            ),
            (
                "/series/1/data",
                Some(json!(null)),
                "series[1].data",
                "a JSON array",
            ),
            (
                "/series/0/colour",
                Some(json!(1)),
                "series[0].colour",
                "no such field",
            ),
            ("/x_label", Some(json!(5)), "x_label", "a string"),
            (
                "/y_label",
                Some(json!("x".repeat(201))),
                "y_label",
                "at most 200",
            ),
        ]
    }

    #[test]
    fn refusals() {
        for t in CHARTS {
            assert_refusals(t, common_refusals());
        }
        let stacked = ("/stacked", Some(json!(true)), "stacked", "no such field");
        assert_refusals(PinType::LineChart, vec![stacked.clone()]);
        assert_refusals(PinType::AreaChart, vec![stacked]);
        assert_refusals(
            PinType::BarChart,
            vec![
                ("/stacked", Some(json!("yes")), "stacked", "a boolean"),
                ("/horizontal", Some(json!(1)), "horizontal", "a boolean"),
            ],
        );
    }

    #[test]
    fn caps_and_finite_numbers() {
        let labels = vec!["l"; MAX_LABELS + 1];
        let err = validate(PinType::BarChart, &json!({"labels": labels, "series": []}));
        assert_eq!(err, Err(ConfigError::new("labels", "at most 1000 labels")));
        let series = vec![json!({"name": "s", "data": []}); MAX_SERIES + 1];
        let err = validate(PinType::AreaChart, &json!({"labels": [], "series": series}));
        assert_eq!(err, Err(ConfigError::new("series", "at most 50 series")));
        let mut config: ChartConfig = parse(&line_example()).unwrap();
        config.series[1].data[2] = Some(f64::NEG_INFINITY);
        let err = config.check().unwrap_err();
        assert_eq!(
            err,
            ConfigError::new("series[1].data[2]", "a finite number")
        );
    }
}
