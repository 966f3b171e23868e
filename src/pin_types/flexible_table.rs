//! `flexible-table`: a table whose columns declare the type of their cells.

use std::collections::{HashMap, HashSet};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::rules::{is_date, is_web_url};
use super::{ConfigError, PinConfig};

/// Most columns in one table.
const MAX_COLUMNS: usize = 100;
/// Most rows in one table.
pub(crate) const MAX_ROWS: usize = 10_000;

/// A table whose columns declare the type of their cells.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlexibleTableConfig {
    /// The columns, 1 to 100, in display order; their ids must be unique
    /// (checked by the service).
    #[schemars(length(min = 1, max = MAX_COLUMNS))]
    pub columns: Vec<Column>,
    /// The rows, at most 10000, in display order; their ids must be unique
    /// (checked by the service).
    #[schemars(length(max = MAX_ROWS))]
    pub rows: Vec<Row>,
}

/// One column of the table.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Column {
    /// Non-empty id, unique among the columns; rows key their cells by it.
    #[schemars(length(min = 1))]
    pub id: String,
    /// Header shown to users.
    pub name: String,
    /// What the column's cells hold.
    #[serde(rename = "type")]
    pub kind: ColumnType,
}

/// What a column's cells hold; `null` is allowed in any column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ColumnType {
    /// A JSON string.
    Text,
    /// A JSON number.
    Number,
    /// An RFC 3339 date-time or a `YYYY-MM-DD` date.
    Date,
    /// A JSON boolean.
    Boolean,
    /// An absolute `http` or `https` URL.
    Link,
}

/// One row of the table.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Row {
    /// Id unique among the rows.
    pub id: String,
    /// Cells by column id; missing cells are empty. Each key must be a declared
    /// column id and each value `null` or of its column's type (checked by the
    /// service).
    pub cells: Map<String, Value>,
}

/// The catalogue's example.
pub(super) fn example() -> Value {
    json!({
        "columns": [
            {"id": "name", "name": "Name", "type": "text"},
            {"id": "price", "name": "Price", "type": "number"},
            {"id": "since", "name": "Since", "type": "date"},
            {"id": "active", "name": "Active", "type": "boolean"},
            {"id": "site", "name": "Site", "type": "link"}
        ],
        "rows": [
            {"id": "r1", "cells": {"name": "Ada", "price": 9.5, "since": "2024-02-29",
                                   "active": true, "site": "https://example.com"}},
            {"id": "r2", "cells": {"name": "Grace", "price": null}}
        ]
    })
}

impl ColumnType {
    /// Wire name and the description of an accepted cell.
    fn describe(self) -> (&'static str, &'static str) {
        match self {
            ColumnType::Text => ("text", "a JSON string"),
            ColumnType::Number => ("number", "a JSON number"),
            ColumnType::Date => ("date", "an RFC 3339 date-time or YYYY-MM-DD date"),
            ColumnType::Boolean => ("boolean", "a JSON boolean"),
            ColumnType::Link => ("link", "an absolute http or https URL"),
        }
    }

    fn accepts(self, cell: &Value) -> bool {
        match (self, cell) {
            (_, Value::Null) => true,
            (ColumnType::Text, Value::String(_))
            | (ColumnType::Number, Value::Number(_))
            | (ColumnType::Boolean, Value::Bool(_)) => true,
            (ColumnType::Date, Value::String(s)) => is_date(s),
            (ColumnType::Link, Value::String(s)) => is_web_url(s),
            _ => false,
        }
    }
}

impl PinConfig for FlexibleTableConfig {
    fn check(&self) -> Result<(), ConfigError> {
        if !(1..=MAX_COLUMNS).contains(&self.columns.len()) {
            return Err(ConfigError::new("columns", "1 to 100 columns"));
        }
        let mut kinds = HashMap::new();
        for (i, column) in self.columns.iter().enumerate() {
            let path = || format!("columns[{i}].id");
            if column.id.is_empty() {
                return Err(ConfigError::new(path(), "a non-empty string"));
            }
            if kinds.insert(column.id.as_str(), column.kind).is_some() {
                let expected = "a column id not used by an earlier column";
                return Err(ConfigError::new(path(), expected));
            }
        }
        if self.rows.len() > MAX_ROWS {
            return Err(ConfigError::new("rows", "at most 10000 rows"));
        }
        let mut row_ids = HashSet::new();
        for (i, row) in self.rows.iter().enumerate() {
            if !row_ids.insert(row.id.as_str()) {
                let expected = "a row id not used by an earlier row";
                return Err(ConfigError::new(format!("rows[{i}].id"), expected));
            }
            for (id, cell) in &row.cells {
                let path = || format!("rows[{i}].cells.{id}");
                let Some(kind) = kinds.get(id.as_str()) else {
                    let ids: Vec<&str> = self.columns.iter().map(|c| c.id.as_str()).collect();
                    let expected = format!("a declared column id (one of: {})", ids.join(", "));
                    return Err(ConfigError::new(path(), expected));
                };
                if !kind.accepts(cell) {
                    let (name, accepted) = kind.describe();
                    let expected = format!("{accepted} (column `{id}` has type {name})");
                    return Err(ConfigError::new(path(), expected));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::pin_types::tests::{assert_refusals, Case};
    use crate::pin_types::{validate, ConfigError, PinType};
    use serde_json::{json, Value};

    fn table(rows: Value) -> Value {
        let mut config = super::example();
        config["rows"] = rows;
        config
    }

    fn refused(config: Value) -> ConfigError {
        validate(PinType::FlexibleTable, &config).unwrap_err()
    }

    #[test]
    fn accepts_valid_config() {
        let config = table(json!([
            {"id": "r1", "cells": {"name": "Ada", "price": 9.5, "since": "2024-02-29",
                                   "active": true, "site": "https://example.com/a?b=c"}},
            {"id": "r2", "cells": {"since": "2024-03-01T10:00:00+02:00", "site": "http://x.org"}},
            {"id": "r3", "cells": {"name": null, "price": null, "since": null,
                                   "active": null, "site": null}}
        ]));
        assert_eq!(validate(PinType::FlexibleTable, &config), Ok(()));
        assert_eq!(validate(PinType::FlexibleTable, &table(json!([]))), Ok(()));
    }

    #[test]
    fn counts_are_limited() {
        let mut config = table(json!([]));
        config["columns"] = json!([]);
        assert_eq!(
            refused(config),
            ConfigError::new("columns", "1 to 100 columns")
        );
        let columns: Vec<Value> = (0..101)
            .map(|i| json!({"id": format!("c{i}"), "name": "C", "type": "text"}))
            .collect();
        let err = refused(json!({"columns": columns, "rows": []}));
        assert_eq!(err, ConfigError::new("columns", "1 to 100 columns"));
        let rows: Vec<Value> = (0..10_001)
            .map(|i| json!({"id": i.to_string(), "cells": {}}))
            .collect();
        let err = refused(table(Value::Array(rows.clone())));
        assert_eq!(err, ConfigError::new("rows", "at most 10000 rows"));
        assert_eq!(
            validate(PinType::FlexibleTable, &table(rows[..10_000].into())),
            Ok(())
        );
    }

    #[test]
    fn refusals() {
        let types = "one of text, number, date, boolean, link";
        let declared = "a declared column id (one of: name, price, since, active, site)";
        let mut cases: Vec<Case> = vec![
            (
                "/columns/2/type",
                Some(json!("money")),
                "columns[2].type",
                types,
            ),
            (
                "/columns/2/type",
                None,
                "columns[2].type",
                "link (required)",
            ),
            (
                "/columns/2/width",
                Some(json!(3)),
                "columns[2].width",
                "(allowed: id, name, type)",
            ),
            (
                "/columns/1",
                Some(json!(["price", "Price", "number"])),
                "columns[1]",
                "a JSON object",
            ),
            (
                "/rows/0/cells",
                None,
                "rows[0].cells",
                "a JSON object (required)",
            ),
            ("/rows/0/id", Some(json!(1)), "rows[0].id", "a string"),
            (
                "/columns/3/id",
                Some(json!("name")),
                "columns[3].id",
                "not used by an earlier column",
            ),
            (
                "/columns/3/id",
                Some(json!("")),
                "columns[3].id",
                "a non-empty string",
            ),
            (
                "/rows/1/id",
                Some(json!("r1")),
                "rows[1].id",
                "a row id not used by an earlier row",
            ),
            (
                "/rows/1/cells/nope",
                Some(json!(1)),
                "rows[1].cells.nope",
                declared,
            ),
        ];
        let price = ("/rows/1/cells/price", "rows[1].cells.price");
        let since = ("/rows/1/cells/since", "rows[1].cells.since");
        let site = ("/rows/1/cells/site", "rows[1].cells.site");
        let cells = [
            (
                price,
                json!("12"),
                "a JSON number (column `price` has type number)",
            ),
            (
                ("/rows/1/cells/name", "rows[1].cells.name"),
                json!(12),
                "a JSON string (column",
            ),
            (
                ("/rows/1/cells/active", "rows[1].cells.active"),
                json!("true"),
                "a JSON boolean",
            ),
            (since, json!("2024-02-30"), "(column `since` has type date)"),
            (since, json!("2024-1-05"), "date"),
            (since, json!("yesterday"), "date"),
            (since, json!(20240101), "date"),
            (
                site,
                json!("javascript:alert(1)"),
                "an absolute http or https URL",
            ),
            (site, json!("/relative/path"), "URL"),
            (site, json!("ftp://example.com"), "URL"),
        ];
        for ((pointer, path), cell, expected) in cells {
            cases.push((pointer, Some(cell), path, expected));
        }
        assert_refusals(PinType::FlexibleTable, cases);
    }
}
