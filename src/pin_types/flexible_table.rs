//! `flexible-table`: a table whose columns declare the type of their cells.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, NaiveDate};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::{ConfigError, PinConfig};

/// Configuration of a `flexible-table` pin.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlexibleTableConfig {
    /// The columns, 1 to 100, in display order.
    pub columns: Vec<Column>,
    /// The rows, at most 10000, in display order.
    pub rows: Vec<Row>,
}

/// One column of the table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Column {
    /// Non-empty id, unique among the columns; rows key their cells by it.
    pub id: String,
    /// Header shown to users.
    pub name: String,
    /// What the column's cells hold.
    #[serde(rename = "type")]
    pub kind: ColumnType,
}

/// What a column's cells hold; `null` is allowed in any column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Row {
    /// Id unique among the rows.
    pub id: String,
    /// Cells by column id; missing cells are empty.
    pub cells: Map<String, Value>,
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

fn is_date(s: &str) -> bool {
    let plain_date = s.len() == 10
        && s.bytes().enumerate().all(|(i, b)| match i {
            4 | 7 => b == b'-',
            _ => b.is_ascii_digit(),
        });
    DateTime::parse_from_rfc3339(s).is_ok()
        || (plain_date && NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok())
}

fn is_web_url(s: &str) -> bool {
    url::Url::parse(s).is_ok_and(|u| matches!(u.scheme(), "http" | "https"))
}

impl PinConfig for FlexibleTableConfig {
    fn check(&self) -> Result<(), ConfigError> {
        if !(1..=100).contains(&self.columns.len()) {
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
        if self.rows.len() > 10_000 {
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
    use crate::pin_types::{validate, ConfigError, PinType};
    use serde_json::{json, Value};

    fn table(rows: Value) -> Value {
        json!({
            "columns": [
                {"id": "name", "name": "Name", "type": "text"},
                {"id": "price", "name": "Price", "type": "number"},
                {"id": "since", "name": "Since", "type": "date"},
                {"id": "active", "name": "Active", "type": "boolean"},
                {"id": "site", "name": "Site", "type": "link"}
            ],
            "rows": rows
        })
    }

    fn refused(config: Value) -> ConfigError {
        validate(PinType::FlexibleTable, &config).unwrap_err()
    }

    fn refused_cell(column: &str, cell: Value) -> ConfigError {
        refused(table(
            json!([{"id": "r1", "cells": {}}, {"id": "r2", "cells": {column: cell}}]),
        ))
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
    fn structure_errors_point_at_the_field() {
        let mut config = table(json!([]));
        config["columns"][2]["type"] = json!("money");
        let err = refused(config.clone());
        assert_eq!(err.path, "columns[2].type");
        assert_eq!(err.expected, "one of text, number, date, boolean, link");
        config["columns"][2] = json!({"id": "since", "name": "Since"});
        let err = refused(config.clone());
        assert_eq!(err.path, "columns[2].type");
        assert_eq!(
            err.expected,
            "one of text, number, date, boolean, link (required)"
        );
        config["columns"][2] = json!({"id": "since", "name": "Since", "type": "date", "width": 3});
        let err = refused(config);
        assert_eq!(
            err,
            ConfigError::new(
                "columns[2].width",
                "no such field (allowed: id, name, type)"
            )
        );
        let err = refused(table(json!([{"id": "r1"}])));
        assert_eq!(
            err,
            ConfigError::new("rows[0].cells", "a JSON object (required)")
        );
        let err = refused(table(json!([{"id": 1, "cells": {}}])));
        assert_eq!(err, ConfigError::new("rows[0].id", "a string"));
    }

    #[test]
    fn ids_are_unique_and_non_empty() {
        let mut config = table(json!([]));
        config["columns"][3]["id"] = json!("name");
        let err = refused(config.clone());
        assert_eq!(
            err,
            ConfigError::new("columns[3].id", "a column id not used by an earlier column")
        );
        config["columns"][3]["id"] = json!("");
        assert_eq!(
            refused(config),
            ConfigError::new("columns[3].id", "a non-empty string")
        );
        let rows =
            json!([{"id": "a", "cells": {}}, {"id": "b", "cells": {}}, {"id": "a", "cells": {}}]);
        let err = refused(table(rows));
        assert_eq!(
            err,
            ConfigError::new("rows[2].id", "a row id not used by an earlier row")
        );
    }

    #[test]
    fn cells_must_use_declared_columns() {
        let err = refused_cell("nope", json!(1));
        assert_eq!(err.path, "rows[1].cells.nope");
        assert_eq!(
            err.expected,
            "a declared column id (one of: name, price, since, active, site)"
        );
    }

    #[test]
    fn cells_must_match_their_column_type() {
        let cases = [
            (
                "price",
                json!("12"),
                "a JSON number (column `price` has type number)",
            ),
            (
                "name",
                json!(12),
                "a JSON string (column `name` has type text)",
            ),
            (
                "active",
                json!("true"),
                "a JSON boolean (column `active` has type boolean)",
            ),
            (
                "since",
                json!("2024-02-30"),
                "(column `since` has type date)",
            ),
            ("since", json!("2024-1-05"), "date"),
            ("since", json!("yesterday"), "date"),
            ("since", json!(20240101), "date"),
            (
                "site",
                json!("javascript:alert(1)"),
                "an absolute http or https URL",
            ),
            ("site", json!("/relative/path"), "URL"),
            ("site", json!("ftp://example.com"), "URL"),
        ];
        for (column, cell, expected) in cases {
            let err = refused_cell(column, cell.clone());
            assert_eq!(err.path, format!("rows[1].cells.{column}"), "{cell}");
            assert!(err.expected.contains(expected), "{cell}: {}", err.expected);
        }
    }
}
