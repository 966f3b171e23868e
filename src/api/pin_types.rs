//! `GET /pin-types`: the catalogue, each type with its JSON Schema, a description and an
//! example configuration, all derived from the types in [`crate::pin_types`].

use std::sync::OnceLock;

use aide::axum::{routing::get_with, ApiRouter};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{value::RawValue, Value};

use super::{docs::One, Envelope};
use crate::{app::AppState, error::Result, pin_types::PinType};

pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new().api_route(
        "/pin-types",
        get_with(list, |op| {
            op.summary("Every pin type with its JSON Schema, description and example")
                .description("Any valid credential; no scope.")
                .tag("catalogue")
                .id("listPinTypes")
                .security_requirement(super::docs::BEARER)
        }),
    )
}

/// One pin type of the catalogue.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "PinTypeEntry", deny_unknown_fields)]
pub struct Entry {
    #[schemars(schema_with = "crate::pin_types::pin_type_schema")]
    pin_type: &'static str,
    description: &'static str,
    /// The JSON Schema of the type's configuration.
    #[schemars(schema_with = "crate::pins::any_value")]
    schema: Value,
    /// A valid configuration.
    #[schemars(schema_with = "crate::pins::any_value")]
    example: Value,
}

/// Built once: the catalogue can't change while the process runs.
pub(crate) fn catalogue() -> &'static str {
    static CATALOGUE: OnceLock<String> = OnceLock::new();
    CATALOGUE.get_or_init(|| {
        let entries: Vec<Entry> = PinType::ALL
            .iter()
            .map(|&t| Entry {
                pin_type: t.as_str(),
                description: t.description(),
                schema: t.schema(),
                example: t.example(),
            })
            .collect();
        serde_json::to_string(&entries).unwrap_or_else(|_| "[]".into())
    })
}

/// Any valid credential may read the catalogue (the middleware has authenticated it).
async fn list() -> Result<Envelope<One<Vec<Entry>>>> {
    let data = RawValue::from_string(catalogue().to_owned()).map_err(crate::Error::internal)?;
    Ok(Envelope::new(data))
}
