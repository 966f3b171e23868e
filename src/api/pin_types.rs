//! `GET /pin-types`: the catalogue, each type with its JSON Schema, a description and an
//! example configuration, all derived from the types in [`crate::pin_types`].

use aide::axum::{routing::get_with, ApiRouter};

use super::{docs::One, Envelope};
use crate::{
    app::AppState,
    error::Result,
    pin_types::{self, Entry},
};

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

/// Any valid credential may read the catalogue (the middleware has authenticated it).
async fn list() -> Result<Envelope<One<Vec<Entry>>>> {
    Envelope::of(pin_types::entries())
}
