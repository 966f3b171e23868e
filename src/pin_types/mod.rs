//! Pin types and the validation of their configurations.
//!
//! The catalogue is CONTRACT.md 5: the types listed in [`PinType::ALL`]. Each
//! lives in its own file (`line-chart`, `area-chart` and `bar-chart` share
//! `charts.rs`) as plain serde structs with `#[serde(deny_unknown_fields)]`
//! that also derive [`schemars::JsonSchema`], plus a `PinConfig::check` for
//! the rules serde cannot express (equal lengths, `min < max`, URL schemes,
//! dates, finite numbers, size caps). The same types thus give both
//! [`validate`] and the published JSON Schema ([`PinType::schema`]); caps that
//! JSON Schema can state appear there as `maxItems`/`maxLength`, and the rules
//! only `check` enforces are named in the fields' descriptions.
//!
//! Structs must be JSON objects: serde would also take an array of their
//! fields in order, which `strict.rs` refuses. Every cap is documented on its
//! field; the serialised size and nesting of a configuration are limited
//! separately by the pins API (CONTRACT.md 3).
//!
//! Adding a type means adding a file, a [`PinType`] variant in
//! [`PinType::ALL`] and its entry in `catalogue.rs`.

mod catalogue;
pub mod charts;
pub mod code;
mod config_error;
pub mod flexible_table;
pub mod gauge;
pub mod heatmap;
pub mod image;
pub mod json;
pub mod kpi;
pub mod list;
pub mod markdown;
pub mod pie_chart;
pub mod progress;
pub(crate) mod rules;
pub mod scatter_chart;
pub mod stat_cards;
pub mod status_grid;
mod strict;
pub mod timeline;

pub use catalogue::tidy_descriptions;
pub(crate) use config_error::parse;
pub use config_error::ConfigError;
pub use rules::parse_web_url;
pub(crate) use strict::deserialize_owned;

use std::sync::OnceLock;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{de::DeserializeOwned, Serialize};
use serde_json::Value;

/// A known pin type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PinType {
    /// Row of headline numbers (`stat-cards`).
    StatCards,
    /// One key figure with unit, trend and sparkline (`kpi`).
    Kpi,
    /// Lines over shared labels (`line-chart`).
    LineChart,
    /// Filled lines over shared labels (`area-chart`).
    AreaChart,
    /// Bars over shared labels (`bar-chart`).
    BarChart,
    /// Shares of a whole (`pie-chart`).
    PieChart,
    /// Points on two numeric axes (`scatter-chart`).
    ScatterChart,
    /// Grid of values coloured by size (`heatmap`).
    Heatmap,
    /// One value on a dial (`gauge`).
    Gauge,
    /// Progress bars (`progress`).
    Progress,
    /// Table with typed columns (`flexible-table`).
    FlexibleTable,
    /// Markdown text (`markdown`).
    Markdown,
    /// Any JSON document (`json`).
    Json,
    /// Source code (`code`).
    Code,
    /// A picture by URL (`image`).
    Image,
    /// Items, optionally checkable or linked (`list`).
    List,
    /// Dated events (`timeline`).
    Timeline,
    /// Named things with a status each (`status-grid`).
    StatusGrid,
}

impl PinType {
    /// Every known pin type, in the order they are listed to users (CONTRACT.md 5).
    pub const ALL: &'static [PinType] = &[
        PinType::StatCards,
        PinType::Kpi,
        PinType::LineChart,
        PinType::AreaChart,
        PinType::BarChart,
        PinType::PieChart,
        PinType::ScatterChart,
        PinType::Heatmap,
        PinType::Gauge,
        PinType::Progress,
        PinType::FlexibleTable,
        PinType::Markdown,
        PinType::Json,
        PinType::Code,
        PinType::Image,
        PinType::List,
        PinType::Timeline,
        PinType::StatusGrid,
    ];

    /// The wire name, e.g. `"stat-cards"`.
    pub fn as_str(self) -> &'static str {
        self.spec().name
    }

    /// Looks a pin type up by its exact wire name.
    pub fn parse(s: &str) -> Option<PinType> {
        Self::ALL.iter().copied().find(|t| t.as_str() == s)
    }

    /// Human list of accepted names for error messages: "stat-cards, kpi, ...".
    pub fn expected_list() -> String {
        let names: Vec<&str> = Self::ALL.iter().map(|t| t.as_str()).collect();
        names.join(", ")
    }

    /// One line saying what the pin shows.
    pub fn description(self) -> &'static str {
        self.spec().description
    }

    /// A configuration that [`validate`]s, showing most optional fields.
    pub fn example(self) -> Value {
        (self.spec().example)()
    }

    /// The JSON Schema (draft 2020-12) of the configuration, generated from the
    /// Rust types that [`validate`] uses; its `title` is the wire name. Rules
    /// only [`validate`] enforces (equal lengths, `min < max`, URL schemes,
    /// dates) are stated in the fields' `description`s.
    pub fn schema(self) -> Value {
        let spec = self.spec();
        let mut schema = (spec.schema)();
        if let Value::Object(root) = &mut schema {
            root.insert("title".to_owned(), spec.name.into());
        }
        schema
    }
}

/// The schema of a `pin_type`: one of the wire names.
pub fn pin_type_schema(_: &mut SchemaGenerator) -> Schema {
    let names: Vec<&str> = PinType::ALL.iter().map(|t| t.as_str()).collect();
    json_schema!({ "type": "string", "enum": names })
}

/// The schema of a `pin_config` of any type, for a larger document: one of the types'
/// schemas (each a component of its own). Which one applies is given by `pin_type`.
pub fn config_schema(generator: &mut SchemaGenerator) -> Schema {
    let any_of: Vec<Schema> = PinType::ALL
        .iter()
        .map(|t| (t.spec().subschema)(generator))
        .collect();
    json_schema!({
        "description": "The configuration of the pin's `pin_type`: the schema of that type (see GET /v1/pin-types).",
        "anyOf": any_of,
    })
}

/// Parses and checks a configuration for `pin_type`. Ok means it is fully valid.
pub fn validate(pin_type: PinType, config: &Value) -> Result<(), ConfigError> {
    (pin_type.spec().validate)(config)
}

/// A pin type's configuration: its serde structure plus the remaining rules.
trait PinConfig: DeserializeOwned + JsonSchema {
    /// Checks the rules the serde structure cannot express, in document order.
    fn check(&self) -> Result<(), ConfigError>;
}

/// One pin type of the catalogue (`GET /pin-types`, the MCP tool `list_pin_types`).
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "PinTypeEntry", deny_unknown_fields)]
pub struct Entry {
    #[schemars(schema_with = "pin_type_schema")]
    pin_type: &'static str,
    description: &'static str,
    /// The JSON Schema of the type's configuration.
    #[schemars(schema_with = "crate::wire::body::any_value")]
    schema: Value,
    /// A valid configuration.
    #[schemars(schema_with = "crate::wire::body::any_value")]
    example: Value,
}

/// The catalogue, built once: it can't change while the process runs.
pub fn entries() -> &'static [Entry] {
    static ENTRIES: OnceLock<Vec<Entry>> = OnceLock::new();
    ENTRIES.get_or_init(|| {
        PinType::ALL
            .iter()
            .map(|&t| Entry {
                pin_type: t.as_str(),
                description: t.description(),
                schema: t.schema(),
                example: t.example(),
            })
            .collect()
    })
}

#[cfg(test)]
mod tests;
