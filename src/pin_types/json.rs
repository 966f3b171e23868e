//! `json`: any JSON document under `data`.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{ConfigError, PinConfig};

/// Any JSON document under `data`, shown as a tree. Its size and nesting are
/// limited only by the limits on a whole configuration (256 KiB, depth 32).
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JsonConfig {
    /// The document: any JSON value, `null` included. Required.
    pub data: Value,
}

/// The catalogue's example.
pub(super) fn example() -> Value {
    json!({"data": {"build": 1842, "ok": true, "tags": ["prod", "eu"], "owner": null}})
}

impl PinConfig for JsonConfig {
    fn check(&self) -> Result<(), ConfigError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pin_types::tests::assert_refusals;
    use crate::pin_types::{validate, PinType};

    #[test]
    fn accepts_any_data() {
        for data in [
            json!(null),
            json!(1.5),
            json!("x"),
            json!([[{}]]),
            json!({"a": {"b": []}}),
        ] {
            assert_eq!(validate(PinType::Json, &json!({ "data": data })), Ok(()));
        }
    }

    #[test]
    fn schema_leaves_data_unconstrained() {
        let schema = PinType::Json.schema();
        let data = schema["properties"]["data"].as_object().unwrap();
        assert_eq!(data.keys().collect::<Vec<_>>(), ["description"]);
        assert_eq!(schema["required"], json!(["data"]));
    }

    #[test]
    fn refusals() {
        assert_refusals(
            PinType::Json,
            vec![
                ("/data", None, "data", "any JSON value (required)"),
                (
                    "/title",
                    Some(json!("x")),
                    "title",
                    "no such field (allowed: data)",
                ),
            ],
        );
    }
}
