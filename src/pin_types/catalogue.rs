//! The catalogue: for each [`PinType`], its wire name, description, example
//! and configuration type (which gives both validation and JSON Schema).

use schemars::{generate::SchemaSettings, JsonSchema, Schema, SchemaGenerator};
use serde_json::Value;

use super::{
    charts, code, flexible_table, gauge, heatmap, image, json, kpi, list, markdown, parse,
    pie_chart, progress, scatter_chart, stat_cards, status_grid, timeline, ConfigError, PinConfig,
    PinType,
};

/// What the catalogue knows about one pin type.
pub(super) struct Spec {
    pub(super) name: &'static str,
    pub(super) description: &'static str,
    pub(super) validate: fn(&Value) -> Result<(), ConfigError>,
    pub(super) schema: fn() -> Value,
    /// The schema as a subschema of a larger document (the OpenAPI description).
    pub(super) subschema: fn(&mut SchemaGenerator) -> Schema,
    pub(super) example: fn() -> Value,
}

impl Spec {
    fn of<T: PinConfig>(
        name: &'static str,
        description: &'static str,
        example: fn() -> Value,
    ) -> Spec {
        Spec {
            name,
            description,
            validate: validate_as::<T>,
            schema: schema_of::<T>,
            subschema: |generator| generator.subschema_for::<T>(),
            example,
        }
    }
}

fn validate_as<T: PinConfig>(config: &Value) -> Result<(), ConfigError> {
    parse::<T>(config)?.check()
}

fn schema_of<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12().into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    tidy_descriptions(&mut schema);
    schema
}

/// schemars copies doc comments line by line ("at most 200\n characters");
/// rejoin the lines of each paragraph with a space.
pub fn tidy_descriptions(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                match value {
                    Value::String(text) if key == "description" => {
                        let paragraphs: Vec<String> = text
                            .split("\n\n")
                            .map(|p| p.split('\n').map(str::trim).collect::<Vec<_>>().join(" "))
                            .collect();
                        *text = paragraphs.join("\n\n");
                    }
                    _ => tidy_descriptions(value),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(tidy_descriptions),
        _ => {}
    }
}

impl PinType {
    /// The catalogue entry of this type.
    pub(super) fn spec(self) -> Spec {
        use PinType as P;
        match self {
            P::StatCards => Spec::of::<stat_cards::StatCardsConfig>(
                "stat-cards",
                "A row of 1 to 12 headline numbers, each with an optional change and trend.",
                stat_cards::example,
            ),
            P::Kpi => Spec::of::<kpi::KpiConfig>(
                "kpi",
                "One key figure with optional unit, change, trend and sparkline.",
                kpi::example,
            ),
            P::LineChart => Spec::of::<charts::ChartConfig>(
                "line-chart",
                "Lines of one or more series over shared x-axis labels.",
                charts::line_example,
            ),
            P::AreaChart => Spec::of::<charts::ChartConfig>(
                "area-chart",
                "Filled areas of one or more series over shared x-axis labels.",
                charts::area_example,
            ),
            P::BarChart => Spec::of::<charts::BarChartConfig>(
                "bar-chart",
                "Bars of one or more series over shared labels, optionally stacked or horizontal.",
                charts::bar_example,
            ),
            P::PieChart => Spec::of::<pie_chart::PieChartConfig>(
                "pie-chart",
                "Non-negative slices of a whole, as a pie or a donut.",
                pie_chart::example,
            ),
            P::ScatterChart => Spec::of::<scatter_chart::ScatterChartConfig>(
                "scatter-chart",
                "Series of (x, y) points on two numeric axes.",
                scatter_chart::example,
            ),
            P::Heatmap => Spec::of::<heatmap::HeatmapConfig>(
                "heatmap",
                "A grid of values, one row per y label and one column per x label.",
                heatmap::example,
            ),
            P::Gauge => Spec::of::<gauge::GaugeConfig>(
                "gauge",
                "One value on a dial from min to max, with optional coloured thresholds.",
                gauge::example,
            ),
            P::Progress => Spec::of::<progress::ProgressConfig>(
                "progress",
                "Progress bars, each a value out of a positive max.",
                progress::example,
            ),
            P::FlexibleTable => Spec::of::<flexible_table::FlexibleTableConfig>(
                "flexible-table",
                "A table whose columns declare the type of their cells.",
                flexible_table::example,
            ),
            P::Markdown => Spec::of::<markdown::MarkdownConfig>(
                "markdown",
                "Markdown text, rendered sanitised (raw HTML never reaches a page).",
                markdown::example,
            ),
            P::Json => Spec::of::<json::JsonConfig>(
                "json",
                "Any JSON document under `data`, shown as a tree.",
                json::example,
            ),
            P::Code => Spec::of::<code::CodeConfig>(
                "code",
                "Source code with a language for highlighting.",
                code::example,
            ),
            P::Image => Spec::of::<image::ImageConfig>(
                "image",
                "A picture from an http(s) URL with optional alt text and caption.",
                image::example,
            ),
            P::List => Spec::of::<list::ListConfig>(
                "list",
                "A list of items, each optionally checked or linked.",
                list::example,
            ),
            P::Timeline => Spec::of::<timeline::TimelineConfig>(
                "timeline",
                "Dated events with title, description and status.",
                timeline::example,
            ),
            P::StatusGrid => Spec::of::<status_grid::StatusGridConfig>(
                "status-grid",
                "Named things, each with a status ok, warn, error or unknown.",
                status_grid::example,
            ),
        }
    }
}
