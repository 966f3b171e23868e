//! What every operation shares on the wire, whatever its resource: pages and cursors
//! ([`page`]), `If-Match` preconditions ([`Precondition`]), idempotency keys and replays
//! ([`idempotency`]), the answer of a delete ([`Deleted`]), and the helpers request bodies
//! are parsed with ([`body`]). HTTP, MCP and pages all speak these types; the JSON text of
//! an answer kept for speed is a [`crate::store::Serialized`], owned by the store.

pub mod body;
pub mod idempotency;
pub mod page;
mod precondition;

pub use body::parse_body;
pub use idempotency::{IdempotencyKey, Outcome};
pub use page::{Page, PageParams, Pagination};
pub use precondition::Precondition;

use schemars::JsonSchema;
use serde::Serialize;

/// A batch read's answer: the records found, in request order, and the ids not found.
#[derive(Debug, Serialize)]
pub struct Found<T> {
    pub data: Vec<T>,
    pub missing: Vec<String>,
}

/// The answer of a delete: `{"id": ..., "deleted": true}`.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Deleted {
    pub id: String,
    #[schemars(extend("const" = true))]
    pub deleted: bool,
}

impl Deleted {
    pub fn new(id: impl Into<String>) -> Self {
        Deleted {
            id: id.into(),
            deleted: true,
        }
    }
}
